"""Pure arithmetic of a collective sweep: which ops, which sizes, and how a time becomes a bandwidth.

The conventions are nccl-tests' so numbers can be compared with theirs line by line:
`size` is the bytes of the whole buffer one rank sees (SIZE_CONVENTION), algbw = size / time,
busbw = algbw x a per-op factor that makes every op comparable with the link's line rate,
and GB means 1e9 bytes. No torch here: workers, probes, checks and tests share it.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from pgdoctor.knowledge.ranks import MAX_RANK
from pgdoctor.model import Measurement, Snapshot, numbers

# Default order of a sweep; `reduce` is measured only when asked for (--ops), as in nccl-tests
# it says little that all_reduce does not.
DEFAULT_OPS = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all", "send_recv")
ALL_OPS = (*DEFAULT_OPS, "reduce")

DTYPE_BYTES = 4  # float32: sums of small integers stay exact, so results are checked to the bit

SIZE_CONVENTION = (
    "size = bytes of the full buffer as in nccl-tests: all_reduce/broadcast/reduce/send_recv the "
    "buffer; all_gather the gathered output (n x per-rank input); reduce_scatter the input "
    "(n x per-rank output); all_to_all the bytes each rank sends. algbw = size/time, "
    "busbw = algbw x factor (all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n; "
    "broadcast, reduce, send_recv 1); GB = 1e9 bytes; time = median of back-to-back timed iterations "
    "per rank, averaged over ranks; per-rank times = median of iterations started together after a barrier."
)

# Ops whose buffer is cut into one chunk per rank, so sizes must be a multiple of n elements.
CHUNKED = frozenset({"all_gather", "reduce_scatter", "all_to_all"})


def bus_factor(op: str, world_size: int) -> float:
    """nccl-tests' factor from algbw to busbw (0 on one rank for ops that move nothing)."""
    n = world_size
    if op == "all_reduce":
        return 2.0 * (n - 1) / n
    if op in CHUNKED:
        return (n - 1) / n
    if op in ("broadcast", "reduce", "send_recv"):
        return 1.0
    raise ValueError(f"unknown collective {op!r} (known: {', '.join(ALL_OPS)})")


def parse_ops(text: str) -> tuple[str, ...]:
    """`all_reduce,all-gather` -> ('all_reduce', 'all_gather'); 'all' is every op."""
    names = [n.strip().replace("-", "_") for n in text.split(",") if n.strip()]
    if names == ["all"]:
        return ALL_OPS
    unknown = [n for n in names if n not in ALL_OPS]
    if unknown or not names:
        raise ValueError(
            f"unknown collective {', '.join(unknown) or '(none)'} (known: {', '.join(ALL_OPS)}, all)"
        )
    return tuple(dict.fromkeys(names))


def sizes(min_bytes: int, max_bytes: int, factor: int = 2) -> list[int]:
    """min, min*factor, ... up to max (inclusive when it lands on it)."""
    if min_bytes <= 0 or max_bytes < min_bytes or factor < 2:
        raise ValueError(f"bad size range {min_bytes}..{max_bytes} (factor {factor})")
    out, s = [], min_bytes
    while s <= max_bytes:
        out.append(s)
        s *= factor
    return out


def aligned_bytes(op: str, nbytes: int, world_size: int) -> int:
    """The size actually run: whole float32 elements, and for chunked ops a multiple of n
    elements (rounded down, at least one element per rank), as nccl-tests rounds its counts."""
    unit = DTYPE_BYTES * (world_size if op in CHUNKED else 1)
    return max(unit, nbytes // unit * unit)


@dataclass(frozen=True)
class SweepSpec:
    """What every rank runs; serialised to JSON for spawned workers."""

    ops: tuple[str, ...] = DEFAULT_OPS
    min_bytes: int = 8
    max_bytes: int = 64 << 20
    factor: int = 2
    iters: int = 20
    warmup: int = 5
    backend: str = "gloo"
    op_timeout_s: float = 30.0  # a stage (one op at one size, or a gather) longer than this is a hang
    # The rendezvous. Spawned ranks start it once every rank has imported torch and reported
    # ready (probes/collectives/worker.py), so their import is not part of it.
    init_timeout_s: float = 60.0
    # Seconds of timed iterations per size; slow sizes run fewer iterations (>= 5). 0: always --iters.
    step_budget_s: float = 1.0
    memcpy_probe: bool = True  # rank 0 measures host memory-copy bandwidth (gloo's yardstick)
    progress_path: str = ""  # rank 0 appends one line per finished step (parent draws a bar)
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.iters < 1 or self.warmup < 0:
            raise ValueError("iters must be >= 1 and warmup >= 0")
        if self.backend not in ("gloo", "nccl"):
            raise ValueError(f"backend must be gloo or nccl, not {self.backend!r}")
        for op in self.ops:
            bus_factor(op, 2)
        sizes(self.min_bytes, self.max_bytes, self.factor)

    def steps(self, world_size: int) -> list[tuple[str, int]]:
        """(op, bytes) in run order; duplicates from alignment dropped; send_recv needs a peer."""
        out: list[tuple[str, int]] = []
        for op in self.ops:
            if op == "send_recv" and world_size < 2:
                continue
            seen: set[int] = set()
            for s in sizes(self.min_bytes, self.max_bytes, self.factor):
                b = aligned_bytes(op, s, world_size)
                if b not in seen:
                    seen.add(b)
                    out.append((op, b))
        return out

    def to_json(self) -> str:
        d = asdict(self)
        d["ops"] = list(self.ops)
        d["extra"] = dict(self.extra)
        return json.dumps(d)

    @classmethod
    def from_json(cls, text: str) -> SweepSpec:
        d = json.loads(text)
        d["ops"] = tuple(d["ops"])
        return cls(**d)


def preset(level: str, gpu: bool) -> SweepSpec | None:
    """The sweep `pgdoctor check` runs at a level: none at quick, a short one at standard
    (every 8th size, few iterations), the full doubling sweep at full."""
    top = (256 << 20) if gpu else (64 << 20)
    backend = "nccl" if gpu else "gloo"
    if level == "quick":
        return None
    if level == "standard":
        # 8 B x 8^k: up to 128 MiB on GPU (the size COL102 needs), 2 MiB on CPU.
        return SweepSpec(
            min_bytes=8,
            max_bytes=(128 << 20) if gpu else (2 << 20),
            factor=8,
            iters=5,
            warmup=2,
            backend=backend,
        )
    return SweepSpec(min_bytes=8, max_bytes=top, factor=2, iters=20, warmup=5, backend=backend)


@dataclass(frozen=True)
class Row:
    """One (op, size) of a sweep, all ranks merged: the unit every table, plot and check reads."""

    op: str
    bytes: int
    world_size: int
    time_us: float
    time_min_us: float
    time_max_us: float
    algbw_gbps: float
    busbw_gbps: float
    correct: bool
    rank_time_us: tuple[float, ...]
    wrong: tuple[Mapping[str, Any], ...] = ()  # per wrong rank: rank, wrong_elements, index, expected, got
    iters: int = 0  # timed iterations behind each rank's median

    def to_json(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "bytes": self.bytes,
            "world_size": self.world_size,
            "time_us": round(self.time_us, 3),
            "time_min_us": round(self.time_min_us, 3),
            "time_max_us": round(self.time_max_us, 3),
            "algbw_gbps": round(self.algbw_gbps, 6),
            "busbw_gbps": round(self.busbw_gbps, 6),
            "correct": self.correct,
            "rank_time_us": [round(t, 3) for t in self.rank_time_us],
            "wrong": [dict(w) for w in self.wrong],
            "iters": self.iters,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Row:
        """A row as the sweep wrote it; a snapshot from elsewhere with a world of 0, a size of
        "1e400", `"false"` for correct or a boolean time is a ValueError (numbers.NumberError)."""

        def t(key: str) -> float:
            return float(numbers.number(d[key], key, lo=0))

        correct = d["correct"]
        if not isinstance(correct, bool):
            raise numbers.NumberError(f"correct: {correct!r} is not true or false")
        return cls(
            op=str(d["op"]),
            bytes=int(numbers.number(d["bytes"], "bytes", integer=True, lo=0)),
            world_size=int(
                numbers.number(d["world_size"], "world_size", integer=True, lo=1, hi=MAX_RANK + 1)
            ),
            time_us=t("time_us"),
            time_min_us=t("time_min_us"),
            time_max_us=t("time_max_us"),
            algbw_gbps=t("algbw_gbps"),
            busbw_gbps=t("busbw_gbps"),
            correct=correct,
            rank_time_us=tuple(float(numbers.number(x, "rank_time_us", lo=0)) for x in d["rank_time_us"]),
            wrong=tuple(dict(w) for w in d.get("wrong", ())),
            iters=int(numbers.number(d.get("iters", 0), "iters", integer=True, lo=0)),
        )


def make_row(op: str, nbytes: int, per_rank: Sequence[Mapping[str, Any]]) -> Row:
    """Merge what each rank measured for one step. `per_rank[r]` holds `times_us` (rank r's
    back-to-back timed iterations), optionally `sync_times_us` (iterations started together
    after a barrier, for per-rank attribution) and `wrong` (None when every element was right).
    time_us averages the ranks' medians (nccl-tests averages ranks too); rank_time_us are the
    per-rank medians of the synchronised iterations."""
    n = len(per_rank)
    medians = [statistics.median(r["times_us"]) for r in per_rank]
    rank_times = [statistics.median(r.get("sync_times_us") or r["times_us"]) for r in per_rank]
    every = [t for r in per_rank for t in r["times_us"]]
    time_us = statistics.fmean(medians)
    algbw = nbytes / (time_us * 1e-6) / 1e9 if time_us > 0 else 0.0
    wrong = tuple(dict(r["wrong"], rank=i) for i, r in enumerate(per_rank) if r.get("wrong"))
    return Row(
        op,
        nbytes,
        n,
        time_us,
        min(every),
        max(every),
        algbw,
        algbw * bus_factor(op, n),
        not wrong,
        tuple(rank_times),
        wrong,
        min(len(r["times_us"]) for r in per_rank),
    )


def plateau(rows: Sequence[Row], op: str) -> Row | None:
    """The row with the highest busbw for an op (nccl-tests' 'average busbw' is not a plateau)."""
    mine = [r for r in rows if r.op == op]
    return max(mine, key=lambda r: r.busbw_gbps, default=None)


# Sizes up to this are small messages: their time is latency, not bandwidth (the default of the
# check's collectives.latency_max_bytes).
SMALL_BYTES = 4096


def small_rows(rows: Sequence[Row], op: str) -> list[Row]:
    """An op's small-message rows by size; the smallest row when no size is small."""
    mine = sorted((r for r in rows if r.op == op), key=lambda r: r.bytes)
    return [r for r in mine if r.bytes <= SMALL_BYTES] or mine[:1]


def latency(rows: Sequence[Row], op: str) -> Row | None:
    """The op's latency as nccl-tests users read it: the small-message plateau, i.e. the row of
    median time among the sizes up to SMALL_BYTES (with three or more of them), else the fastest
    of them. Not the first size's time: it carries the warm-up of the first collectives on fresh
    connections (one gloo run: 789 us at 8 B against about 300 us from 16 B to 1 KiB)."""
    small = small_rows(rows, op)
    if not small:
        return None
    if len(small) >= 3:
        return sorted(small, key=lambda r: (r.time_us, r.bytes))[(len(small) - 1) // 2]
    return min(small, key=lambda r: (r.time_us, r.bytes))


def rows_of(snap: Snapshot) -> list[tuple[Row, Measurement]]:
    """Every (op, size) row the probe recorded, with its measurement for evidence."""
    out = []
    for m in snap.with_prefix("collectives."):
        if isinstance(m.value, dict) and "busbw_gbps" in m.value and "op" in m.value:
            try:
                out.append((Row.from_json(m.value), m))
            except (KeyError, TypeError, ValueError):
                continue  # not a row the sweep could have written (a world of 0, "1e400"): no measurement
    return out
