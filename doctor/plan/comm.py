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

from pgdoctor.knowledge.interconnects import Link


def ring_all_reduce_s(nbytes: float, n: int, busbw_gbps: float, latency_us: float = 0.0, messages: int = 1) -> float:
    """Seconds for a ring all-reduce of `nbytes` over n ranks (in `messages` pieces)."""
    if n <= 1 or nbytes <= 0:
        return 0.0
    return 2 * (n - 1) / n * nbytes / (busbw_gbps * 1e9) + messages * 2 * (n - 1) * latency_us * 1e-6


def ring_gather_s(nbytes: float, n: int, busbw_gbps: float, latency_us: float = 0.0, messages: int = 1) -> float:
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


def traffic(inp: TrafficInput, fabric: Fabric, dp: int, tp: int, pp: int, zero: int) -> Traffic:
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

    grads = inp.numel * inp.grad_bytes
    params = inp.numel * inp.param_bytes
    if dp <= 1:
        dp_s, dp_bytes = 0.0, 0.0
    elif zero == 0:
        buckets = max(1, math.ceil(grads / inp.ddp_bucket_bytes))
        dp_s = ring_all_reduce_s(grads, dp, dp_bw, dp_lat, buckets)
        dp_bytes = 2 * (dp - 1) / dp * grads
    elif zero in (1, 2):
        rs_times = m if zero == 2 else 1
        buckets = max(1, math.ceil(grads / inp.ddp_bucket_bytes))
        dp_s = rs_times * ring_gather_s(grads, dp, dp_bw, dp_lat, buckets) + ring_gather_s(params, dp, dp_bw, dp_lat)
        dp_bytes = (dp - 1) / dp * (rs_times * grads + params)
    else:
        per_layer = max(1, inp.layers)
        dp_s = m * (2 * ring_gather_s(params, dp, dp_bw, dp_lat, per_layer)
                    + ring_gather_s(grads, dp, dp_bw, dp_lat, per_layer))
        dp_bytes = m * (dp - 1) / dp * (2 * params + grads)

    act = inp.seq_len * inp.micro_batch * inp.hidden * inp.act_bytes
    if tp > 1:
        n_ar = 6 if inp.recompute == "full" else 4
        count = m * inp.layers * n_ar
        tp_s = count * ring_all_reduce_s(act, tp, tp_bw, tp_lat)
        tp_bytes = count * 2 * (tp - 1) / tp * act
    else:
        tp_s, tp_bytes = 0.0, 0.0
    if pp > 1:
        msg = act / tp
        pp_s = 2 * m * p2p_s(msg, pp_bw, pp_lat)
        pp_bytes = 2 * m * msg
    else:
        pp_s, pp_bytes = 0.0, 0.0
    return Traffic(dp_bytes, dp_s, dp_bw if dp > 1 else 0.0, tp_bytes, tp_s, tp_bw if tp > 1 else 0.0,
                   pp_bytes, pp_s, pp_bw if pp > 1 else 0.0, tp_cross and tp > 1, dp_cross and dp > 1,
                   pp_cross)


def bubble_fraction(pp: int, micro_batches: int) -> float:
    """1F1B pipeline bubble: (p-1)/(m+p-1) of the step is idle (Narayanan et al. 2021)."""
    if pp <= 1:
        return 0.0
    return (pp - 1) / (max(1, micro_batches) + pp - 1)


def flops_per_step(params: int, layers: int, hidden: int, seq_len: int, tokens: int, recompute: str) -> float:
    """Training FLOPs: 3 passes (forward, 2x backward), 4 with full recomputation, each of
    2 FLOPs per parameter per token plus 4 x s x h per layer per token for attention scores."""
    passes = 4 if recompute == "full" else 3
    return passes * (2.0 * params + 4.0 * layers * seq_len * hidden) * tokens
