"""Candidate layouts dp x tp x pp x ZeRO stage for a number of GPUs: evaluate, rank, recommend.

A layout is valid when tp and pp divide the GPUs, the heads and MLP width divide over tp, and
tp either fits in a node or spans whole nodes. ZeRO-2/3 are not combined with pipeline
parallelism (DeepSpeed refuses it: gradients would be resharded every micro-batch).

Ranking: layouts that fit before those that do not; among those that fit, the ones whose
global batch divides into dp x micro-batch first, then those with at least 5% of the GPU's
memory free (a tighter fit is left to the allocator's luck), then the shortest estimated step
per token (compute / (1 - bubble) + exposed communication, at 1% resolution), then the least model
parallelism, the lowest ZeRO stage and the least memory, so that equal speeds prefer the
simpler layout. Layouts that do not fit are ordered by how far over they are.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Optional

from pgdoctor.knowledge.interconnects import Link
from pgdoctor.knowledge.interconnects import get as get_link
from pgdoctor.plan.comm import Fabric, Traffic, TrafficInput, bubble_fraction, flops_per_step, traffic
from pgdoctor.plan.memory import MemoryInput, StageMemory, worst_stage
from pgdoctor.plan.model import ModelShape, check_divisible, stage_layers
from pgdoctor.plan.offload import CPU_ADAM_PARAMS_PER_S, cpu_step_s, host_per_node, pcie_bytes

DEFAULT_TFLOPS = 400.0
# A layout with less free memory than this share of the GPU "fits" on paper only: allocator
# fragmentation and a longer sequence in the data take more than that. Ranked after the others.
TIGHT_FRACTION = 0.05


@dataclass(frozen=True)
class PlanInput:
    memory: MemoryInput
    fabric: Fabric
    gpu_memory_bytes: int
    global_batch: Optional[int] = None
    tflops: float = DEFAULT_TFLOPS  # achieved per GPU, not peak
    tp: Optional[int] = None
    pp: Optional[int] = None
    zero: Optional[int] = None
    # Search: recomputation and micro-batch sizes tried for every layout (empty: the memory
    # input's own), and the free share a layout needs to be recommended.
    recompute_options: tuple[str, ...] = ()
    micro_batch_options: tuple[int, ...] = ()
    headroom: float = TIGHT_FRACTION
    host_memory_bytes: Optional[int] = None  # per node, checked when states are offloaded
    pcie: Link = field(default_factory=lambda: get_link("pcie5"))  # GPU <-> host
    offload_device: str = "cpu"
    nvme_gbps: float = 25.0  # per node, read or write (ZeRO-Infinity's DGX-2 figure)
    ep: Optional[int] = None  # mixture of experts: only this expert parallelism
    hybrid: bool = True  # also try hybrid sharding (ZeRO-3 inside a node, replicas across nodes)
    cp: Optional[int] = None  # context parallelism: only this (None: searched for long sequences)
    cpu_optimizer_rate: float = CPU_ADAM_PARAMS_PER_S  # offload: host optimizer step, parameters/s per node


@dataclass(frozen=True)
class Layout:
    dp: int
    tp: int
    pp: int
    zero: int
    micro_batches: int
    micro_batches_assumed: bool
    batch_divisible: bool
    memory: StageMemory
    gpu_memory_bytes: int
    traffic: Traffic
    tokens_per_step: int
    compute_s: float
    bubble: float
    exposed_comm_s: float
    notes: tuple[str, ...] = field(default=())
    recompute: str = "none"
    micro_batch: int = 1
    headroom_fraction: float = TIGHT_FRACTION
    host_node_bytes: int = 0  # offloaded states per node, with DeepSpeed's 1.5x buffers
    host_memory_bytes: Optional[int] = None
    offload_s: float = 0.0  # PCIe (and NVMe) transfers and the CPU optimizer step per step, exposed
    ep: int = 1
    a2a_bytes: float = 0.0  # MoE all-to-all bytes sent per step
    a2a_s: float = 0.0  # exposed
    shard: int = 0  # hybrid sharding: ZeRO-3 inside groups of this many dp ranks (0: all of dp)
    cp: int = 1  # context parallelism (ring attention): ranks that split each sequence
    cp_bytes: float = 0.0
    cp_s: float = 0.0
    offload_cpu_s: float = 0.0  # the host's optimizer step, part of offload_s

    @property
    def gpus(self) -> int:
        return self.dp * self.tp * self.pp * self.cp

    @property
    def zero_label(self) -> str:
        return f"{self.zero}h" if self.shard else str(self.zero)

    @property
    def host_fits(self) -> bool:
        return self.host_memory_bytes is None or self.host_node_bytes <= self.host_memory_bytes

    @property
    def fits(self) -> bool:
        return self.memory.total <= self.gpu_memory_bytes and self.host_fits

    @property
    def headroom_bytes(self) -> int:
        """Free bytes per GPU; negative: by how much it does not fit."""
        return self.gpu_memory_bytes - self.memory.total

    @property
    def tight(self) -> bool:
        return self.fits and self.headroom_bytes < self.headroom_fraction * self.gpu_memory_bytes

    @property
    def step_s(self) -> float:
        return self.compute_s / (1.0 - self.bubble) + self.exposed_comm_s

    @property
    def compute_fraction(self) -> float:
        """Share of the step spent computing (1.0: no bubble, no exposed communication)."""
        return self.compute_s / self.step_s if self.step_s > 0 else 1.0

    @property
    def label(self) -> str:
        return (
            f"dp={self.dp} tp={self.tp} pp={self.pp} zero={self.zero}"
            + (f" shard={self.shard}" if self.shard else "")
            + (f" ep={self.ep}" if self.ep > 1 else "")
            + (f" cp={self.cp}" if self.cp > 1 else "")
        )

    @property
    def settings(self) -> str:
        return f"micro-batch {self.micro_batch} x {self.micro_batches}, recompute {self.recompute}"

    @property
    def tokens_per_s(self) -> float:
        return self.tokens_per_step / self.step_s if self.step_s > 0 else 0.0

    def to_json(self) -> dict[str, object]:
        return {
            "dp": self.dp,
            "tp": self.tp,
            "pp": self.pp,
            "zero": self.zero,
            "micro_batches": self.micro_batches,
            "micro_batches_assumed": self.micro_batches_assumed,
            "batch_divisible": self.batch_divisible,
            "fits": self.fits,
            "tight": self.tight,
            "headroom_bytes": self.headroom_bytes,
            "memory": self.memory.to_json(),
            "communication": self.traffic.to_json(),
            "tokens_per_step": self.tokens_per_step,
            "compute_s": self.compute_s,
            "bubble": self.bubble,
            "exposed_comm_s": self.exposed_comm_s,
            "step_s": self.step_s,
            "compute_fraction": self.compute_fraction,
            "recompute": self.recompute,
            "micro_batch": self.micro_batch,
            "tokens_per_s": self.tokens_per_s,
            "host_node_bytes": self.host_node_bytes,
            "host_fits": self.host_fits,
            "offload_s": self.offload_s,
            "offload_cpu_step_s": self.offload_cpu_s,
            "ep": self.ep,
            "all_to_all_bytes": self.a2a_bytes,
            "all_to_all_s": self.a2a_s,
            "hybrid_shard": self.shard,
            "dp_inter_node_s": self.traffic.dp_inter_s,
            "cp": self.cp,
            "cp_bytes": self.cp_bytes,
            "cp_s": self.cp_s,
            "notes": list(self.notes) + list(self.memory.notes),
        }


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def candidates(inp: PlanInput) -> list[tuple[int, int, int, int]]:
    """(dp, tp, pp, zero) of every valid layout under the user's constraints."""
    n = inp.fabric.gpus
    g = inp.fabric.gpus_per_node
    shape = inp.memory.shape
    out = []
    for tp in _divisors(n):
        if inp.tp is not None and tp != inp.tp:
            continue
        if g % tp and tp % g:
            continue
        for pp in _divisors(n // tp):
            if inp.pp is not None and pp != inp.pp:
                continue
            if check_divisible(shape, tp, pp):
                continue
            if (
                pp > 1
                and inp.memory.schedule == "interleaved"
                and shape.layers % (pp * inp.memory.virtual_stages)
            ):
                continue  # Megatron needs whole layers per model chunk
            dp = n // (tp * pp)
            stages: tuple[int, ...] = (0,) if dp == 1 else ((0, 1) if pp > 1 else (0, 1, 2, 3))
            if inp.memory.offload != "none":
                # ZeRO-Offload needs ZeRO-2/3 (any dp, one GPU too); parameter offload ZeRO-3.
                # With pp > 1: optimizer offload over ZeRO-1 (Megatron-Core's optimizer CPU offload).
                stages = (
                    ((1,) if inp.memory.offload == "optimizer" else ())
                    if pp > 1
                    else ((3,) if inp.memory.offload == "optimizer+params" else (2, 3))
                )
            for zero in stages:
                if inp.zero is not None and zero != inp.zero:
                    continue
                out.append((dp, tp, pp, zero))
    return out


def micro_batches(inp: PlanInput, dp: int, pp: int, mb: Optional[int] = None) -> tuple[int, bool, bool]:
    """(m, assumed, divisible): micro-batches per step per pipeline (gradient accumulation)."""
    mb = mb or inp.memory.micro_batch
    per_step = dp * mb
    if inp.global_batch is None:
        # Without a global batch every layout gets the same one: a micro-batch per GPU (pure DP
        # without accumulation), so that all layouts are compared on the same tokens per step.
        return inp.fabric.gpus * mb // per_step, True, True
    return max(1, inp.global_batch // per_step), False, inp.global_batch % per_step == 0


def expert_parallel(inp: PlanInput, dp: int) -> list[int]:
    """Expert-parallel sizes for a data-parallel size: divisors of dp that divide the experts."""
    moe = inp.memory.moe
    if moe is None:
        return [1]
    return [e for e in _divisors(dp) if moe.experts % e == 0 and (inp.ep is None or e == inp.ep)]


def hybrid_shards(inp: PlanInput, dp: int, tp: int, zero: int) -> list[int]:
    """0 (shard over all of dp), plus, for ZeRO-3 whose dp group spans nodes, the dp ranks of one
    node: hybrid sharding (FSDP HYBRID_SHARD, HSDP)."""
    per_node = inp.fabric.gpus_per_node // tp if tp <= inp.fabric.gpus_per_node else 0
    if zero != 3 or per_node < 2 or dp <= per_node or dp % per_node or not inp.hybrid:
        return [0]
    return [0, per_node]


def context_parallel(inp: PlanInput, dp: int, tp: int) -> list[int]:
    """Context-parallel sizes tried for dp x cp = `dp` ranks: --cp when given; else, for
    sequences of 16K tokens or more, the powers of two that divide dp and fit in a node with tp."""
    if inp.cp is not None:
        return [inp.cp] if dp % inp.cp == 0 else []
    if inp.memory.seq_len < CP_MIN_SEQ or inp.memory.moe is not None:
        return [1]
    per_node = max(1, inp.fabric.gpus_per_node // tp)
    return [
        c for c in (1, 2, 4, 8, 16, 32) if c <= per_node and dp % c == 0 and inp.memory.seq_len % (2 * c) == 0
    ]


CP_MIN_SEQ = 16384


def evaluate(
    inp: PlanInput,
    dp: int,
    tp: int,
    pp: int,
    zero: int,
    recompute: Optional[str] = None,
    micro_batch: Optional[int] = None,
    ep: int = 1,
    shard: int = 0,
    cp: int = 1,
) -> Layout:
    """`dp` data-parallel ranks (without the cp ranks: dp x tp x pp x cp GPUs)."""
    mi = inp.memory
    if (recompute or mi.recompute) != mi.recompute or (micro_batch or mi.micro_batch) != mi.micro_batch:
        mi = replace(mi, recompute=recompute or mi.recompute, micro_batch=micro_batch or mi.micro_batch)
    full_seq = mi.seq_len
    if cp > 1:
        # Each cp rank holds s/cp tokens of every sequence; states are sharded over dp x cp.
        mi = replace(mi, seq_len=full_seq // cp)
    shape = mi.shape
    m, assumed, divisible = micro_batches(inp, dp, pp, mi.micro_batch)
    dp_group = dp * cp
    mem = worst_stage(mi, tp, pp, shard or dp_group, zero, m, ep)
    first = stage_layers(shape.layers, pp)[0]
    act_bytes = 4 if mi.precision.name == "fp32" else 2
    tr = traffic(
        TrafficInput(
            numel=mem.numel,
            layers=first,
            grad_bytes=mi.precision.grad_bytes,
            param_bytes=mi.precision.param_bytes,
            act_bytes=act_bytes,
            seq_len=mi.seq_len,
            micro_batch=mi.micro_batch,
            hidden=shape.hidden,
            micro_batches=m,
            recompute=mi.recompute,
            trained_numel=None if mi.finetune is None else mem.trained,
            pp_chunks=mi.virtual_stages if mi.schedule == "interleaved" else 1,
            cross_layers=_cross_layers(shape, pp),
        ),
        inp.fabric,
        dp_group,
        tp,
        pp,
        zero,
        shard,
    )
    tokens = m * dp * mi.micro_batch * full_seq
    cp_bytes, cp_s = 0.0, 0.0
    if cp > 1:
        from pgdoctor.plan.comm import ring_attention_bytes

        # Ring attention passes K and V around the cp ring per layer and micro-batch; the cp
        # group is consecutive after tp (Megatron's order tp, cp, dp, pp).
        cp_bytes = (
            m
            * first
            * ring_attention_bytes(
                mi.seq_len, mi.micro_batch, shape.kv_heads * shape.head_dim // tp, act_bytes, cp
            )
        )
        bw, lat, _ = inp.fabric.group_link(cp, max(1, min(cp, inp.fabric.gpus_per_node // tp)))
        cp_s = cp_bytes / (bw * 1e9) + 3 * m * first * (cp - 1) * lat * 1e-6
    frac = mem.trained / mem.numel if mem.numel else 1.0
    flop_params = shape.params
    a2a_bytes, a2a_s = 0.0, 0.0
    if mi.moe is not None:
        from pgdoctor.plan.moe import active_params, all_to_all_bytes

        flop_params = active_params(shape, mi.moe)
        moe_layers = max(0, first - max(0, mi.moe.dense_layers)) if pp == 1 else first
        per = all_to_all_bytes(mi.seq_len, mi.micro_batch, shape.hidden, act_bytes, mi.moe, ep) / tp
        a2a_bytes = per * moe_layers * m
        # The ep group is consecutive inside the dp group: inside a node while tp x ep fits one.
        bw, lat, _ = inp.fabric.group_link(ep, max(1, min(ep, inp.fabric.gpus_per_node // tp)))
        a2a_s = a2a_bytes / (bw * 1e9) + 4 * moe_layers * m * (ep - 1) * lat * 1e-6 if ep > 1 else 0.0
    flops = flops_per_step(flop_params, shape.layers, shape.hidden, full_seq, tokens, mi.recompute, frac)
    compute = flops / (inp.fabric.gpus * inp.tflops * 1e12)
    offload_s, host_node, cpu_s = 0.0, 0, 0.0
    if mi.offload != "none":
        ranks = min(inp.fabric.gpus_per_node, inp.fabric.gpus)
        host_node = host_per_node(mem.host_bytes, ranks)
        owned = -(-mem.trained // dp)
        moved = pcie_bytes(mi.offload, owned * mi.precision.grad_bytes, owned * mi.precision.param_bytes, m)
        cpu_s = cpu_step_s(owned, ranks, inp.cpu_optimizer_rate)
        offload_s = moved / (inp.pcie.busbw_gbps * 1e9) + cpu_s
        if inp.offload_device == "nvme":
            # Read and written once per step by all the node's ranks; host memory keeps buffers only.
            offload_s += 2 * mem.host_bytes * ranks / (inp.nvme_gbps * 1e9)
            host_node = 0
    # The DP traffic can hide behind backward: only the last micro-batch's for DDP and ZeRO-1
    # (they sync once, at the end), every backward for ZeRO-2, all of compute for ZeRO-3.
    window = {0: compute * 2 / 3 / m, 1: compute * 2 / 3 / m, 2: compute * 2 / 3, 3: compute}[zero]
    # Ring attention overlaps its sends with the attention blocks' compute (4 s h FLOPs per
    # token and layer per pass): only the excess is exposed.
    attention = (
        (4 if mi.recompute == "full" else 3)
        * 4.0
        * shape.layers
        * full_seq
        * shape.hidden
        * tokens
        / (inp.fabric.gpus * inp.tflops * 1e12)
    )
    exposed = tr.tp_s + tr.pp_s + max(0.0, tr.dp_s - window) + offload_s + a2a_s + max(0.0, cp_s - attention)
    notes = []
    if assumed:
        notes.append(
            f"global batch assumed {m * dp * mi.micro_batch} (a micro-batch per GPU; set --global-batch)"
        )
    return Layout(
        dp,
        tp,
        pp,
        zero,
        m,
        assumed,
        divisible,
        mem,
        inp.gpu_memory_bytes,
        tr,
        tokens,
        compute,
        bubble_fraction(pp, m, mi.schedule, mi.virtual_stages),
        exposed,
        tuple(notes),
        mi.recompute,
        mi.micro_batch,
        inp.headroom,
        host_node,
        inp.host_memory_bytes,
        offload_s,
        ep,
        a2a_bytes,
        a2a_s,
        shard,
        cp,
        cp_bytes,
        cp_s,
        offload_cpu_s=cpu_s,
    )


def _cross_layers(shape: ModelShape, pp: int) -> int:
    """Decoder layers (with cross-attention) on the stage that has most of them; 0 decoder-only."""
    if not shape.decoder_layers:
        return 0
    from pgdoctor.plan.encdec import decoder_layers_on_stage

    return max(decoder_layers_on_stage(shape, pp, s) for s in range(pp))


def _rank_key(lay: Layout) -> tuple[object, ...]:
    if not lay.fits:
        host_over = lay.host_node_bytes - (lay.host_memory_bytes or 0) if not lay.host_fits else 0
        return (1, max(-lay.headroom_bytes, host_over))
    # Layouts process different numbers of tokens per step, so they are compared per token;
    # within 1% of each other they count as equal, so the simpler layout wins.
    per_token = lay.step_s / lay.tokens_per_step
    bucket = math.floor(math.log(per_token) / math.log(1.01)) if per_token > 0 else 0
    return (
        0,
        not lay.batch_divisible,
        lay.tight,
        bucket,
        lay.tp * lay.pp,
        lay.zero,
        RECOMPUTE_COST[lay.recompute],
        -lay.micro_batch,
        lay.memory.total,
    )


RECOMPUTE_COST = {"none": 0, "selective": 1, "full": 2}


def settings(inp: PlanInput) -> list[tuple[str, int]]:
    """(recompute, micro-batch) pairs the search tries; micro-batches must divide the global batch."""
    rcs = inp.recompute_options or (inp.memory.recompute,)
    mbs = inp.micro_batch_options or (inp.memory.micro_batch,)
    if inp.global_batch is not None and inp.micro_batch_options:
        mbs = tuple(b for b in mbs if inp.global_batch % b == 0) or (inp.memory.micro_batch,)
    return [(rc, mb) for rc in rcs for mb in mbs]


def plan(inp: PlanInput) -> list[Layout]:
    """Every valid layout under every searched setting, best first."""
    out = []
    for dp, tp, pp, zero in candidates(inp):
        for cp in context_parallel(inp, dp, tp):
            for ep in expert_parallel(inp, dp) if cp == 1 else [1]:
                for sh in hybrid_shards(inp, dp, tp, zero) if cp == 1 else [0]:
                    out += [
                        evaluate(inp, dp // cp, tp, pp, zero, rc, mb, ep, sh, cp) for rc, mb in settings(inp)
                    ]
    return sorted(out, key=_rank_key)


def best_per_layout(layouts: Sequence[Layout]) -> list[Layout]:
    """The first (best) setting of each dp x tp x pp x zero, in rank order: the table's rows."""
    seen: set[tuple[int, ...]] = set()
    out = []
    for lay in layouts:
        key = (lay.dp, lay.tp, lay.pp, lay.zero, lay.ep, lay.shard, lay.cp)
        if key not in seen:
            seen.add(key)
            out.append(lay)
    return out


def smallest_fit(inp: PlanInput, max_nodes: int = 1024) -> Optional[Layout]:
    """The best layout on the fewest whole nodes (same node size) on which one fits with at
    least 5% to spare, or None up to max_nodes. Doubling, then bisection: fitting is monotonic
    in the node count for ZeRO-3 (states divide by dp), which every multi-GPU candidate set
    includes."""

    def best(nodes: int, search: bool = False) -> Optional[Layout]:
        # Whether anything fits is decided by the least memory: the bisection tries full
        # recomputation only (when searched), the answer is then searched in full.
        rcs = inp.recompute_options if search or not inp.recompute_options else ("full",)
        trial = replace(
            inp,
            fabric=replace(inp.fabric, nodes=nodes),
            global_batch=None,
            micro_batch_options=(),
            recompute_options=rcs,
        )
        fitting = [lay for lay in plan(trial) if lay.fits and not lay.tight]
        return fitting[0] if fitting else None

    hi = inp.fabric.nodes
    while best(hi) is None:
        if hi >= max_nodes:
            return None
        hi = min(max_nodes, hi * 2)
    lo = max(inp.fabric.nodes, hi // 2)
    while lo < hi:
        mid = (lo + hi) // 2
        if best(mid) is None:
            lo = mid + 1
        else:
            hi = mid
    return best(hi, search=True)


def recommended(layouts: Sequence[Layout]) -> Optional[Layout]:
    return layouts[0] if layouts and layouts[0].fits else None
