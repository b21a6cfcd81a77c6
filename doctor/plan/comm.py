"""Communication time per training step, in the α-β model: bytes / bandwidth + hops x latency.

Collective volumes are those of ring algorithms, with nccl-tests' bus-bandwidth factors: an
all-reduce moves 2(n-1)/n of the buffer through every rank's link, a reduce-scatter or an
all-gather (n-1)/n, a point-to-point send 1. A ring all-reduce also pays 2(n-1) message
latencies, a reduce-scatter or all-gather n-1.

What each layout sends (per optimizer step, m micro-batches of b sequences of s tokens):
  DDP       one all-reduce of the gradients (in DDP's 25 MiB buckets), after the last micro-batch
  ZeRO-1    reduce-scatter of the gradients + all-gather of the updated parameters, once
  ZeRO-2    a reduce-scatter per micro-batch (gradients are sharded as they are produced)
            + the all-gather, once
  ZeRO-3    per micro-batch: all-gather of the parameters in forward and again in backward
            (one per layer), and a reduce-scatter of the gradients
  TP        per layer and micro-batch: 2 all-reduces of s x b x h activations in forward, 2 in
            backward (Megatron; the same volume as all-gather + reduce-scatter with sequence
            parallelism), 2 more when full recomputation reruns the forward
  PP        per micro-batch: each stage sends its s x b x h / t output forward and receives the
            gradient back (Megatron's scatter-gather split over the t ranks)

Overlap assumption: the times below are communication times, not exposed times. DDP and ZeRO
traffic is launched during backward (and ZeRO-3's gathers are prefetched during forward), so
it can hide behind compute; TP all-reduces sit on the critical path between matrix products
and are counted as exposed; PP sends are counted as exposed.

Placement: ranks are numbered with tp fastest, then dp, then pp (Megatron's order), nodes are
filled in rank order. A group whose members sit on several nodes shares the node's NICs with
the other groups of its kind on that node.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from pgdoctor.knowledge.interconnects import Link


def ring_all_reduce_s(
    nbytes: float, n: int, busbw_gbps: float, latency_us: float = 0.0, messages: int = 1
) -> float:
    """Seconds for a ring all-reduce of `nbytes` over n ranks (in `messages` pieces)."""
    if n <= 1 or nbytes <= 0:
        return 0.0
    return 2 * (n - 1) / n * nbytes / (busbw_gbps * 1e9) + messages * 2 * (n - 1) * latency_us * 1e-6


def ring_gather_s(
    nbytes: float, n: int, busbw_gbps: float, latency_us: float = 0.0, messages: int = 1
) -> float:
    """Seconds for a ring reduce-scatter or all-gather whose full (unsharded) buffer is `nbytes`."""
    if n <= 1 or nbytes <= 0:
        return 0.0
    return (n - 1) / n * nbytes / (busbw_gbps * 1e9) + messages * (n - 1) * latency_us * 1e-6


def p2p_s(nbytes: float, busbw_gbps: float, latency_us: float = 0.0) -> float:
    return nbytes / (busbw_gbps * 1e9) + latency_us * 1e-6


@dataclass(frozen=True)
class Fabric:
    gpus_per_node: int
    nodes: int
    intra: Link
    inter: Link
    nics_per_node: int = 1

    @property
    def gpus(self) -> int:
        return self.gpus_per_node * self.nodes

    def group_link(self, size: int, per_node: int) -> tuple[float, float, bool]:
        """(busbw GB/s, latency us, crosses nodes) for a group of `size` ranks with `per_node`
        of them on each node, all groups of that kind communicating at once."""
        per_node = max(1, min(per_node, size))
        if per_node >= size:
            return self.intra.busbw_gbps, self.intra.latency_us, False
        concurrent = max(1, self.gpus_per_node // per_node)
        inter_bw = self.inter.busbw_gbps * self.nics_per_node / concurrent
        # Inside the node the group still rides the intra-node links.
        bw = min(self.intra.busbw_gbps, inter_bw) if per_node > 1 else inter_bw
        return bw, max(self.intra.latency_us, self.inter.latency_us), True


@dataclass(frozen=True)
class Traffic:
    """What one rank sends per step, and how long it takes."""

    dp_bytes: float
    dp_s: float
    dp_busbw_gbps: float
    tp_bytes: float
    tp_s: float
    tp_busbw_gbps: float
    pp_bytes: float
    pp_s: float
    pp_busbw_gbps: float
    tp_crosses_nodes: bool
    dp_crosses_nodes: bool
    pp_crosses_nodes: bool
    dp_inter_s: float = 0.0  # hybrid sharding: the part of dp_s on the links between nodes

    @property
    def total_s(self) -> float:
        return self.dp_s + self.tp_s + self.pp_s

    def to_json(self) -> dict[str, object]:
        return dict(self.__dict__, total_s=self.total_s)


@dataclass(frozen=True)
class TrafficInput:
    numel: int  # parameters on this rank before ZeRO sharding
    layers: int  # layers on this rank's stage
    grad_bytes: int
    param_bytes: int
    act_bytes: int
    seq_len: int
    micro_batch: int
    hidden: int
    micro_batches: int
    recompute: str = "none"
    ddp_bucket_bytes: int = 25 * 2**20
    trained_numel: Optional[int] = None  # fine-tuning: only these have gradients (None: all)
    param_total_bytes: Optional[int] = (
        None  # bytes ZeRO-3 gathers (quantized bases; None: numel x param_bytes)
    )
    pp_chunks: int = 1  # interleaved schedule: each micro-batch crosses every stage v times
    cross_layers: int = 0  # encoder-decoder: decoder layers whose cross-attention adds TP all-reduces


def traffic(
    inp: TrafficInput, fabric: Fabric, dp: int, tp: int, pp: int, zero: int, shard: int = 0
) -> Traffic:
    """`shard`: hybrid sharding (FSDP HYBRID_SHARD / HSDP) of ZeRO-3 over groups of this many
    data-parallel ranks inside a node, replicated across nodes (0: over all dp ranks)."""
    g = fabric.gpus_per_node
    m = max(1, inp.micro_batches)
    # Placement (tp fastest, then dp, then pp).
    tp_bw, tp_lat, tp_cross = fabric.group_link(tp, min(tp, g))
    dp_per_node = 1 if tp >= g else min(dp, g // tp)
    dp_bw, dp_lat, dp_cross = fabric.group_link(dp, dp_per_node)
    if pp > 1 and fabric.nodes > 1 and tp * dp * pp > g:
        senders = min(g, tp * dp)
        pp_bw = min(fabric.intra.busbw_gbps, fabric.inter.busbw_gbps * fabric.nics_per_node / senders)
        pp_lat, pp_cross = fabric.inter.latency_us, True
    else:
        pp_bw, pp_lat, pp_cross = fabric.intra.busbw_gbps, fabric.intra.latency_us, False

    trained = inp.numel if inp.trained_numel is None else inp.trained_numel
    grads = trained * inp.grad_bytes
    params = inp.numel * inp.param_bytes if inp.param_total_bytes is None else inp.param_total_bytes
    updated = trained * inp.param_bytes  # what ZeRO-1/2 all-gather after the step
    dp_inter = 0.0
    if dp <= 1:
        dp_s, dp_bytes = 0.0, 0.0
    elif zero == 0:
        buckets = max(1, math.ceil(grads / inp.ddp_bucket_bytes))
        dp_s = ring_all_reduce_s(grads, dp, dp_bw, dp_lat, buckets)
        dp_bytes = 2 * (dp - 1) / dp * grads
    elif zero in (1, 2):
        rs_times = m if zero == 2 else 1
        buckets = max(1, math.ceil(grads / inp.ddp_bucket_bytes))
        dp_s = rs_times * ring_gather_s(grads, dp, dp_bw, dp_lat, buckets) + ring_gather_s(
            updated, dp, dp_bw, dp_lat
        )
        dp_bytes = (dp - 1) / dp * (rs_times * grads + updated)
    elif 0 < shard < dp:
        # Gathers and reduce-scatters inside the node's shard group, per micro-batch; then one
        # all-reduce of each rank's gradient shard across the dp / shard replicas (between nodes).
        per_layer = max(1, inp.layers)
        s_bw, s_lat, _ = fabric.group_link(shard, shard)
        replicas = dp // shard
        r_bw, r_lat, _ = fabric.group_link(replicas, 1)
        dp_inter = ring_all_reduce_s(grads / shard, replicas, r_bw, r_lat)
        dp_s = (
            m
            * (
                2 * ring_gather_s(params, shard, s_bw, s_lat, per_layer)
                + ring_gather_s(grads, shard, s_bw, s_lat, per_layer)
            )
            + dp_inter
        )
        dp_bytes = (
            m * (shard - 1) / shard * (2 * params + grads) + 2 * (replicas - 1) / replicas * grads / shard
        )
        dp_bw = s_bw
    else:
        per_layer = max(1, inp.layers)
        dp_s = m * (
            2 * ring_gather_s(params, dp, dp_bw, dp_lat, per_layer)
            + ring_gather_s(grads, dp, dp_bw, dp_lat, per_layer)
        )
        dp_bytes = m * (dp - 1) / dp * (2 * params + grads)

    act = inp.seq_len * inp.micro_batch * inp.hidden * inp.act_bytes
    if tp > 1:
        n_ar = 6 if inp.recompute == "full" else 4
        # Cross-attention adds one all-reduce forward and one backward (+1 recomputed) per decoder layer.
        count = m * n_ar * (inp.layers + inp.cross_layers / 2)
        tp_s = count * ring_all_reduce_s(act, tp, tp_bw, tp_lat)
        tp_bytes = count * 2 * (tp - 1) / tp * act
    else:
        tp_s, tp_bytes = 0.0, 0.0
    if pp > 1:
        msg = act / tp
        pp_s = 2 * m * inp.pp_chunks * p2p_s(msg, pp_bw, pp_lat)
        pp_bytes = 2 * m * inp.pp_chunks * msg
    else:
        pp_s, pp_bytes = 0.0, 0.0
    return Traffic(
        dp_bytes,
        dp_s,
        dp_bw if dp > 1 else 0.0,
        tp_bytes,
        tp_s,
        tp_bw if tp > 1 else 0.0,
        pp_bytes,
        pp_s,
        pp_bw if pp > 1 else 0.0,
        tp_cross and tp > 1,
        dp_cross and dp > 1,
        pp_cross,
        dp_inter if 0 < shard < dp and zero == 3 else (dp_s if dp_cross and dp > 1 else 0.0),
    )


def ring_attention_bytes(local_seq: int, micro_batch: int, kv_dim: int, act_bytes: int, cp: int) -> float:
    """Bytes one rank sends per layer and micro-batch under context parallelism (ring
    attention, Liu et al. 2023; Megatron-Core's CP): its K and V chunk of s/cp tokens goes
    around the ring in cp-1 steps in forward; backward sends K and V again and their gradients
    back (3 passes in all)."""
    if cp <= 1:
        return 0.0
    return 3.0 * (cp - 1) * 2 * local_seq * micro_batch * kv_dim * act_bytes


SCHEDULES = ("1f1b", "interleaved", "zb-h1", "zb-h2")


def bubble_fraction(pp: int, micro_batches: int, schedule: str = "1f1b", virtual_stages: int = 1) -> float:
    """Share of the step a pipeline stage is idle. Bubble time over ideal compute time:
      1f1b         (p-1)/m                    (Narayanan et al. 2021, section 2.2)
      interleaved  (p-1)/(v m), v model chunks per stage (the same paper, section 2.2.2)
      zb-h1        (p-1)/(3m): the backward's weight-gradient half fills the bubble, a third
                   of 1F1B's at the same activation memory (Qi et al. 2024, "Zero Bubble
                   Pipeline Parallelism", with forward, input-gradient and weight-gradient
                   passes of equal time)
      zb-h2        0 once m >= 2p-1 (the same paper; twice 1F1B's activations in flight)
    returned as a fraction of the step: ratio / (1 + ratio)."""
    if pp <= 1:
        return 0.0
    m = max(1, micro_batches)
    if schedule == "interleaved":
        ratio = (pp - 1) / (max(1, virtual_stages) * m)
    elif schedule == "zb-h1":
        ratio = (pp - 1) / (3 * m)
    elif schedule == "zb-h2":
        ratio = 0.0 if m >= 2 * pp - 1 else (pp - 1) / (3 * m)
    elif schedule == "1f1b":
        ratio = (pp - 1) / m
    else:
        raise ValueError(f"schedule {schedule!r} is not one of {SCHEDULES}")
    return ratio / (1 + ratio)


def activations_in_flight(
    pp: int, stage: int, micro_batches: int, schedule: str = "1f1b", virtual_stages: int = 1
) -> float:
    """Micro-batches of activations stage `stage` holds at its peak: min(p - i, m) under 1F1B
    and ZB-H1; interleaving multiplies it by 1 + (p-1)/(p v) (Korthikanti et al. 2022, section
    4.2.3); ZB-H2 keeps up to twice 1F1B's."""
    base = float(min(pp - stage, max(1, micro_batches)))
    if pp <= 1:
        return base
    if schedule == "interleaved":
        return base * (1 + (pp - 1) / (pp * max(1, virtual_stages)))
    if schedule == "zb-h2":
        return float(min(2 * (pp - stage) - 1, max(1, micro_batches)))
    return base


def flops_per_step(
    params: int,
    layers: int,
    hidden: int,
    seq_len: int,
    tokens: int,
    recompute: str,
    trained_fraction: float = 1.0,
) -> float:
    """Training FLOPs: 3 passes (forward, 2x backward), 4 with full recomputation, each of
    2 FLOPs per parameter per token plus 4 x s x h per layer per token for attention scores.
    Frozen weights skip their weight-gradient product: 2 + 2 + 2f per parameter, f trained."""
    passes = 4 if recompute == "full" else 3
    weight_passes = passes - 1 + min(1.0, max(0.0, trained_fraction))
    return (weight_passes * 2.0 * params + passes * 4.0 * layers * seq_len * hidden) * tokens
