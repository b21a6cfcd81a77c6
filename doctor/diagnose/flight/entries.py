"""Flight-recorder entries in one shape, whatever wrote them.

Dumps differ in field types: torch 2.13's recorder writes `collective_seq_id` as an int and
dtypes as lists (`["Float"]`); torch's own analyzer tests write seq ids as strings ("1") and
dtypes as one string ("float32"); gloo leaves scatter's input and gather's output empty on the
ranks that are not the root. NCCL closes a coalesced group (several entries under one sequence
number) with a marker entry (`nccl:coalesced`, `nccl:ALLGATHER_coalesced`, ...).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pgdoctor.diagnose.flight.clocks import clock_offsets
from pgdoctor.diagnose.flight.dump import FlightReport, aliases, int_of, pg_desc, pg_key

# Names of the marker that ends a coalesced group (torch/csrc/distributed/c10d/FlightRecorder).
COALESCED_MARKERS = ("coalesced", "ALLGATHER_coalesced", "REDUCE_SCATTER_coalesced")


def _sizes(v: Any) -> list[list[int]]:
    if not isinstance(v, list):
        return []
    out = []
    for s in v:
        if isinstance(s, (list, tuple)):
            out.append([int_of(x, 0) for x in s])
    return out


def _dtypes(v: Any) -> list[str]:
    if isinstance(v, str):
        return [v] if v else []
    if isinstance(v, (list, tuple)):
        return [str(x) for x in v if x not in (None, "")]
    return []


def numel(sizes: list[list[int]]) -> int:
    return sum(math.prod(s) for s in sizes)


@dataclass
class Entry:
    rank: int
    pg: str
    desc: str
    seq: int
    op: str  # "all_reduce", without the backend prefix
    name: str  # profiling_name as recorded ("gloo:all_reduce")
    in_sizes: list[list[int]]
    out_sizes: list[list[int]]
    in_dtypes: list[str]
    out_dtypes: list[str]
    state: str
    record_id: int
    raw: Mapping[str, Any] = field(repr=False, default_factory=dict)

    @property
    def marker(self) -> bool:
        return self.op in COALESCED_MARKERS

    @property
    def coalesced(self) -> bool:
        """Part of a coalesced group: its closing marker, or one entry standing for the whole group
        (ProcessGroupNCCL's *_coalesced collectives: allreduce_coalesced,
        reduce_scatter_tensor_coalesced, allgather_into_tensor_coalesced)."""
        return self.marker or self.op.endswith("_coalesced")


def entry_of(rank: int, e: Mapping[str, Any]) -> Entry:
    name = str(e.get("profiling_name") or "")
    op = name.split(":", 1)[-1].split(" ", 1)[0]
    return Entry(
        rank,
        pg_key(e),
        pg_desc(e),
        int_of(e.get("collective_seq_id")),
        op,
        name,
        _sizes(e.get("input_sizes")),
        _sizes(e.get("output_sizes")),
        _dtypes(e.get("input_dtypes")),
        _dtypes(e.get("output_dtypes")),
        str(e.get("state") or ""),
        int_of(e.get("record_id")),
        e,
    )


@dataclass
class Table:
    """Collective entries by group, rank and sequence number (a list: coalesced groups share one)."""

    by_pg: dict[str, dict[int, dict[int, list[Entry]]]] = field(default_factory=dict)
    desc: dict[str, str] = field(default_factory=dict)
    tracks_state: dict[int, bool] = field(default_factory=dict)
    wrapped: dict[int, bool] = field(default_factory=dict)
    first_ns: dict[int, int] = field(default_factory=dict)  # time_created_ns of a rank's oldest entry
    last: dict[int, Entry] = field(default_factory=dict)  # each rank's last collective entry
    # (pg, seq) of a wrapped ring's oldest entry: the buffer may begin inside that coalesced group.
    cut: dict[int, tuple[str, int]] = field(default_factory=dict)
    offset_ns: dict[int, int] = field(default_factory=dict)  # each rank's clock offset (clocks.py)

    def ns(self, rank: int, raw_ns: int) -> int:
        """A time the rank's dump wrote, on its peers' clock (0 stays 0: not known)."""
        return raw_ns - self.offset_ns.get(rank, 0) if raw_ns > 0 else raw_ns


def table_of(rep: FlightReport) -> Table:
    t = Table()
    alias = aliases(rep)
    for d in rep.dumps:
        entries = [e for e in d.data["entries"] if isinstance(e, Mapping) and not e.get("is_p2p")]
        t.tracks_state[d.rank] = any(e.get("state") in ("started", "completed") for e in d.data["entries"])
        ids = [int_of(e.get("record_id")) for e in d.data["entries"]]
        t.wrapped[d.rank] = bool(ids) and min(ids) > 0
        if t.wrapped[d.rank]:
            oldest = entry_of(d.rank, d.data["entries"][ids.index(min(ids))])
            t.cut[d.rank] = (alias.get((d.rank, oldest.pg), oldest.pg), oldest.seq)
        times = [int_of(e.get("time_created_ns"), 0) for e in d.data["entries"]]
        if times and min(times) > 0:
            t.first_ns[d.rank] = min(times)
        for raw in entries:
            en = entry_of(d.rank, raw)
            if en.seq < 0:
                continue
            en.pg = alias.get((d.rank, en.pg), en.pg)
            t.desc.setdefault(en.pg, en.desc)
            t.by_pg.setdefault(en.pg, {}).setdefault(d.rank, {}).setdefault(en.seq, []).append(en)
            if not en.marker:
                t.last[d.rank] = en
    t.offset_ns = clock_offsets(t.by_pg)
    if t.offset_ns:
        t.first_ns = {r: t.ns(r, ns) for r, ns in t.first_ns.items()}
    return t
