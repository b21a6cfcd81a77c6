"""A fourth, frozen set of flight-recorder scenarios (tests/fixtures/fr_unseen3/), written before
pgdoctor ran on any of them. Each scenario is a folder of dumps plus expected.json: the culprit
rank(s), group, sequence number, op and class, from the scenario's construction.

This writer is independent of tests/helpers/fr_scenarios.py's: a small job simulator (every rank
runs its program; a collective completes when every member of its group issued it with the same
op, sizes and dtypes; a send when its peer posted the matching recv; what cannot complete stays
"started"; a rank given a stop index never issues that op or any after it), and an emitter per
recorder release, with the fields each one writes (read at their source,
torch/csrc/distributed/c10d/TraceUtils.h, NCCLUtils.hpp, FlightRecorder.hpp / FlightRecorderDetail.hpp):

  "2.2"  torch 2.2: version "1.5"; seq_id; no process_group, pg_config, dtypes, is_p2p, timeout_ms
  "2.3"  torch 2.3: version "2.1"; process_group, collective_seq_id, p2p_seq_id, op_id, dtypes,
         duration_ms; pg_config {name: {name, desc, ranks "[..]"}}; no pg_status, is_p2p, timeout_ms
  "2.4"  torch 2.4: version "2.3"; + pg_status (ints), timeout_ms, is_p2p
  "2.5"  torch 2.5-2.7: version "2.4" / "2.7"; + thread_name, thread_id, nccl_version
  "2.10" torch 2.8+: version "2.10"; comm_lib_version instead of nccl_version
  "json" _dump_fr_trace_json (2.10): pg_status values as strings, time_discovered_* 0 when absent,
         no frames, no entries key when the buffer is empty

    python -m tests.helpers.fr_unseen3 [OUT]   writes every NCCL-format scenario of
                                               tests/helpers/fr_unseen3_cases.py (default: the
                                               fixture folder; the gloo ones: fr_unseen3_gloo)
"""

from __future__ import annotations

import json
import os
import pickle
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from tests.helpers.paths import FIXTURES

OUT = os.path.join(FIXTURES, "fr_unseen3")
Groups = dict[str, tuple[str, list[int]]]  # name -> (desc, global ranks)
FRAMES = [
    {"name": "forward_backward_step", "filename": "/workspace/megatron/schedules.py", "line": 412},
    {"name": "train_step", "filename": "/workspace/pretrain.py", "line": 233},
]


@dataclass
class Op:
    pg: str
    name: str  # all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, send, recv, ...
    ins: Sequence[Sequence[int]] = ((1024,),)
    outs: Optional[Sequence[Sequence[int]]] = None
    dtype: str = "Float"
    out_dtype: Optional[str] = None
    peer: int = -1  # send/recv: the peer's global rank
    coalesced: int = 0  # >0: this op and the next coalesced-1 form one coalesced group

    def key(self) -> tuple[Any, ...]:
        outs = self.outs if self.outs is not None else self.ins
        return (self.name, tuple(map(tuple, self.ins)), tuple(map(tuple, outs)), self.dtype, self.out_dtype)


@dataclass
class Rank:
    rank: int
    groups: Groups
    entries: list[dict[str, Any]] = field(default_factory=list)
    seq: dict[str, int] = field(default_factory=dict)
    p2p: dict[str, int] = field(default_factory=dict)
    op_id: int = 0
    record_id: int = 0
    clock: int = 1_712_000_000_000_000_000

    def pg_id(self, pg: str) -> int:
        mine = [n for n, (_, rs) in self.groups.items() if self.rank in rs]
        return mine.index(pg)

    def record(self, op: Op, seq: int, pseq: int, when: int, name: Optional[str] = None) -> dict[str, Any]:
        self.op_id += 1
        outs = op.outs if op.outs is not None else op.ins
        od = op.out_dtype or op.dtype
        e = {
            "record_id": self.record_id,
            "pg_id": self.pg_id(op.pg),
            "process_group": (op.pg, self.groups[op.pg][0]),
            "collective_seq_id": seq,
            "p2p_seq_id": pseq,
            "op_id": self.op_id,
            "profiling_name": "nccl:" + (name or op.name),
            "time_created_ns": when,
            "input_sizes": [list(s) for s in op.ins],
            "input_dtypes": [op.dtype] * len(op.ins),
            "output_sizes": [list(s) for s in outs],
            "output_dtypes": [od] * len(outs),
            "state": "started",
            "time_discovered_started_ns": when + 5000,
            "time_discovered_completed_ns": None,
            "retired": False,
            "timeout_ms": 600000,
            "is_p2p": op.name in ("send", "recv"),
            "thread_name": "pt_main_thread",
            "thread_id": str(139_900_000_000_000 + self.rank),
            "frames": list(FRAMES),
        }
        self.record_id += 1
        self.entries.append(e)
        return e


def simulate(
    groups: Groups,
    programs: dict[int, list[Op]],
    stop: Optional[dict[int, int]] = None,
    clock_step: int = 2_000_000,
) -> dict[int, Rank]:
    """Runs every rank's program (see the module docstring); returns the recorders."""
    stop = stop or {}
    ranks = {r: Rank(r, groups) for r in programs}
    ptr = {r: 0 for r in programs}
    pending: dict[int, list[dict[str, Any]]] = {}
    issued: dict[tuple[str, int], dict[int, tuple[Any, ...]]] = {}  # (pg, seq) -> rank -> key
    p2p_q: dict[tuple[int, int, str], list[tuple[int, Op, dict[str, Any]]]] = {}
    now = [Rank.clock]

    def tick() -> int:
        now[0] += clock_step
        return now[0]

    def issue(r: int) -> bool:
        i = ptr[r]
        if r in pending or i >= len(programs[r]) or stop.get(r, 1 << 30) <= i:
            return False
        rk, op = ranks[r], programs[r][i]
        if op.name in ("send", "recv"):
            rk.p2p[op.pg] = rk.p2p.get(op.pg, 0) + 1
            members = sorted(groups[op.pg][1])
            me, peer = members.index(r), members.index(op.peer)
            arrow = "->" if op.name == "send" else "<-"
            e = rk.record(op, rk.seq.get(op.pg, 0), rk.p2p[op.pg], tick(), f"{op.name} {me}{arrow}{peer}")
            pending[r] = [e]
            ptr[r] += 1
            p2p_q.setdefault((r, op.peer, op.name), []).append((r, op, e))
            return True
        n = max(op.coalesced, 1)
        batch = programs[r][i : i + n]
        rk.seq[op.pg] = rk.seq.get(op.pg, 0) + 1
        s = rk.seq[op.pg]
        es = [rk.record(b, s, rk.p2p.get(op.pg, 0), tick()) for b in batch]
        if op.coalesced:
            marker = Op(op.pg, "coalesced", ins=(), outs=(), dtype="Float")
            m = rk.record(marker, s, rk.p2p.get(op.pg, 0), tick())
            m["input_dtypes"], m["output_dtypes"] = [], []
            es.append(m)
        pending[r] = es
        ptr[r] += n
        issued.setdefault((op.pg, s), {})[r] = tuple(b.key() for b in batch)
        return True

    def done(r: int) -> None:
        t = tick()
        for e in pending.pop(r):
            e.update(state="completed", retired=True, time_discovered_completed_ns=t, duration_ms=0.8)

    def settle() -> bool:
        moved = False
        for (pg, _s), keys in list(issued.items()):
            members = groups[pg][1]
            agreed = set(keys) == set(members) and len(set(keys.values())) == 1
            if agreed and all(r in pending and pending[r][0]["process_group"][0] == pg for r in members):
                for r in members:
                    done(r)
                del issued[(pg, _s)]
                moved = True
        for (src, dst, kind), q in list(p2p_q.items()):
            if kind != "send" or not q:
                continue
            back = p2p_q.get((dst, src, "recv"), [])
            if back:
                (r1, op1, e1), (r2, op2, e2) = q[0], back[0]
                if op1.key()[1:] == op2.key()[1:] and pending.get(r1) == [e1] and pending.get(r2) == [e2]:
                    q.pop(0)
                    back.pop(0)
                    done(r1)
                    done(r2)
                    moved = True
        return moved

    progress = True
    while progress:
        progress = False
        for r in sorted(programs):
            progress |= issue(r)
        progress |= settle()
    return ranks


# --- emitters, one per recorder release --------------------------------------------------------

VERSION = {
    "2.2": "1.5",
    "2.3": "2.1",
    "2.4": "2.3",
    "2.5": "2.4",
    "2.7": "2.7",
    "2.10": "2.10",
    "json": "2.10",
}


def _status(rk: Rank, as_text: bool) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for pg, (_, members) in rk.groups.items():
        if rk.rank not in members:
            continue
        mine = [e for e in rk.entries if e["process_group"][0] == pg and not e["is_p2p"]]
        started = [e["collective_seq_id"] for e in mine if e["state"] != "scheduled"]
        completed = [e["collective_seq_id"] for e in mine if e["state"] == "completed"]
        vals = {
            "last_enqueued_collective": rk.seq.get(pg, -1) if mine else -1,
            "last_started_collective": max(started) if started else -1,
            "last_completed_collective": max(completed) if completed else -1,
        }
        out[str(rk.pg_id(pg))] = {k: str(v) if as_text else v for k, v in vals.items()}
    return out


def emit(rk: Rank, style: str, ring: int = 0, frames: bool = True, with_entries: bool = True) -> bytes:
    """One rank's dump in the release's shape: pickle bytes, or JSON for style "json"."""
    entries = rk.entries[-ring:] if ring else list(rk.entries)
    cfg = {
        pg: {"name": pg, "desc": desc, "ranks": str(sorted(members))}
        for pg, (desc, members) in rk.groups.items()
        if rk.rank in members
    }
    out_entries = []
    for e in entries:
        e = dict(e)
        if style == "2.2":
            e = {
                "record_id": e["record_id"],
                "pg_id": e["pg_id"],
                "seq_id": e["collective_seq_id"] if not e["is_p2p"] else e["p2p_seq_id"],
                "profiling_name": e["profiling_name"],
                "time_created_ns": e["time_created_ns"],
                "input_sizes": e["input_sizes"],
                "output_sizes": e["output_sizes"],
                "state": e["state"],
                "time_discovered_started_ns": e["time_discovered_started_ns"],
                "time_discovered_completed_ns": e["time_discovered_completed_ns"],
                "retired": e["retired"],
                "frames": e["frames"],
            }
        else:
            if style in ("2.3",):
                for k in ("is_p2p", "timeout_ms"):
                    e.pop(k)
            if style in ("2.3", "2.4"):
                e.pop("thread_name")
                e.pop("thread_id")
            if style == "json":
                e.pop("frames")
                e["process_group"] = list(e["process_group"])
                for k in ("time_discovered_started_ns", "time_discovered_completed_ns"):
                    e[k] = e[k] or 0
            elif not frames:
                e["frames"] = []
        if e.get("state") != "completed":
            e.pop("duration_ms", None)
        out_entries.append(e)
    data: dict[str, Any] = {"version": VERSION[style]}
    if style != "2.2":
        data["pg_config"] = cfg
    if style in ("2.5", "2.7"):
        data["nccl_version"] = "2.20.5"
    if style in ("2.10", "json"):
        data["comm_lib_version"] = "2.26.2"
    if style not in ("2.2", "2.3"):
        data["pg_status"] = _status(rk, style == "json")
    if with_entries and (out_entries or style != "json"):
        data["entries"] = out_entries
    if style == "json":
        return json.dumps(data).encode()
    return pickle.dumps(data, protocol=2)


# --- layouts and programs ---------------------------------------------------------------------


def world(n: int) -> Groups:
    return {"0": ("default_pg", list(range(n)))}


def tp_dp(n: int, tp: int) -> Groups:
    g = world(n)
    k = 1
    for s in range(0, n, tp):
        g[str(k)] = ("tp", list(range(s, s + tp)))
        k += 1
    for j in range(tp):
        g[str(k)] = ("dp", list(range(j, n, tp)))
        k += 1
    return g


def group_of(g: Groups, desc: str, r: int) -> str:
    return next(n for n, (d, rs) in g.items() if d == desc and r in rs)


def pp_program(n: int, micro: int, size: int = 4096, sizes: Optional[dict[tuple[int, int], int]] = None):
    """1F1B-free GPipe on the default group: forward sends down, backward sends up, then a world
    all_reduce of the gradients. sizes[(rank, micro)] overrides one rank's forward send size."""
    sizes = sizes or {}

    def prog(r: int) -> list[Op]:
        ops: list[Op] = []
        for m in range(micro):
            if r > 0:
                ops.append(Op("0", "recv", ((size,),), peer=r - 1))
            if r < n - 1:
                ops.append(Op("0", "send", ((sizes.get((r, m), size),),), peer=r + 1))
        for _ in range(micro):
            if r < n - 1:
                ops.append(Op("0", "recv", ((size,),), peer=r + 1))
            if r > 0:
                ops.append(Op("0", "send", ((size,),), peer=r - 1))
        ops.append(Op("0", "all_reduce", ((2048,),)))
        return ops

    return prog


def tp_dp_program(g: Groups, steps: int, odd: Optional[Callable[[int, int, Op], Op]] = None):
    def prog(r: int) -> list[Op]:
        ops: list[Op] = []
        for s in range(steps):
            for op in (
                Op(group_of(g, "tp", r), "all_reduce", ((8, 1024),)),
                Op(
                    group_of(g, "tp", r), "all_gather", ((512,),), ((512 * len(g[group_of(g, "tp", r)][1]),),)
                ),
                Op(group_of(g, "dp", r), "all_reduce", ((65536,),)),
            ):
                ops.append(odd(r, s, op) if odd else op)
        return ops

    return prog


def world_steps(n: int, steps: int, odd: Optional[Callable[[int, int], Optional[Op]]] = None):
    def prog(r: int) -> list[Op]:
        ops: list[Op] = []
        for s in range(steps):
            got = odd(r, s) if odd else None
            ops.append(got or Op("0", "all_reduce", ((4096,),)))
        return ops

    return prog


def fsdp_program(n: int, steps: int):
    def prog(r: int) -> list[Op]:
        ops: list[Op] = []
        for _ in range(steps):
            ops.append(Op("0", "_allgather_base", ((2048,),), ((2048 * n,),), dtype="BFloat16"))
            ops.append(Op("0", "_reduce_scatter_base", ((2048 * n,),), ((2048,),), dtype="BFloat16"))
        return ops

    return prog


def run(g: Groups, prog: Callable[[int], list[Op]], stop: Optional[dict[int, int]] = None) -> dict[int, Rank]:
    n = len(g["0"][1])
    return simulate(g, {r: prog(r) for r in range(n)}, stop)


# --- the scenarios ------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    ranks: dict[int, Rank]
    style: str
    expected: dict[str, Any]
    ring: int = 0
    frames: bool = True
    drop: Sequence[int] = ()  # ranks whose dump is missing
    empty: Sequence[int] = ()  # ranks whose buffer holds nothing
    header_only: bool = False
    zero_times: bool = False
    edit: Optional[Callable[[dict[int, Rank]], None]] = None

    def write(self, dest: str) -> None:
        os.makedirs(dest, exist_ok=True)
        if self.edit:
            self.edit(self.ranks)
        for r, rk in sorted(self.ranks.items()):
            if r in self.drop:
                continue
            if r in self.empty:
                rk.entries = []
            if self.zero_times:
                for e in rk.entries:
                    e["time_created_ns"] = 0
                    if e["state"] != "completed":
                        e["time_discovered_started_ns"] = 0
            data = emit(rk, self.style, self.ring, self.frames, not self.header_only)
            suffix = ".json" if self.style == "json" else ""
            with open(os.path.join(dest, f"nccl_trace_rank_{r}{suffix}"), "wb") as fh:
                fh.write(data)
        with open(os.path.join(dest, "expected.json"), "w") as fh:
            json.dump(self.expected, fh, indent=1, sort_keys=True)
            fh.write("\n")


def exp(
    code: Optional[str],
    ranks: Sequence[int] = (),
    pg: Optional[str] = None,
    seq: Optional[int] = None,
    op: Optional[str] = None,
    kind: Optional[str] = None,
    why: str = "",
    also: Sequence[Any] = (),
) -> dict:
    return {
        "code": code,
        "ranks": list(ranks),
        "pg": pg,
        "seq": seq,
        "op": op,
        "class": kind,
        "why": why,
        "also": [list(a) for a in also],
    }


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else OUT
    from tests.helpers.fr_unseen3_cases import cases

    for case in cases():
        case.write(os.path.join(out, case.name))


if __name__ == "__main__":
    main()
