"""Flight-recorder scenarios with their ground truth, shared by tests/diagnose/test_fr_scenarios.py and
benchmarks/bench_frtrace.py.

GLOO: real 4-rank gloo jobs (tests/helpers/fr_workload.py), dumped once by tests/helpers/make_fr_fixtures.py
into
tests/fixtures/fr/<name>.tar (rank<N>.pkl from _dump_fr_trace(), rank<N>.json from
_dump_fr_trace_json()). NCCL: states, send/recv and coalesced groups, which only NCCL's recorder
writes, are written here in the recorder's exact formats: `style="2.13"` gives every field with the
types of a real torch 2.13 dump (int sequence ids, dtype lists such as ["Float"], process_group a
tuple, pg_config/pg_status as torch writes them); `style="test"` the entry dicts of torch's own
analyzer tests (test/distributed/flight_recorder/test_fr_analysis.py: sequence ids as strings,
dtypes as one string "float32"). Scale scenarios are generated at 8 to 1024 ranks. Scenarios of shapes
the first set did not hold (all_to_all splits, a subgroup's first collective, coalesced groups in
the recorder's exact format, numbers as strings, a missing dump that explains the rest) are
written by tests/helpers/fr_unseen.py.
A third set (jobs laid out as TP x DP and pipelines at 8 to 64 ranks, simulated so each fault
cascades as in a job; real 8-rank gloo jobs; older recorders' field sets; one name for several
groups; onlyActive dumps) is tests/helpers/fr_unseen2.py, tested by tests/diagnose/test_fr_unseen2.py.
"""

from __future__ import annotations

import io
import os
import pickle
import tarfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")
FR_DIR = os.path.join(FIXTURES, "fr")


@dataclass(frozen=True)
class Truth:
    code: Optional[str]  # the root cause's code; None: a clean job (no fail finding)
    ranks: tuple[int, ...] = ()  # its culprit ranks
    pg: Optional[str] = None
    seq: Optional[int] = None
    also: tuple[tuple[str, tuple[int, ...]], ...] = ()  # other faults that must be reported too


@dataclass
class Scenario:
    name: str
    source: str  # "gloo" (real dumps) or "nccl-format" (written) or "scale"
    truth: Truth
    write: Callable[[str, bool], None] = field(repr=False)  # (dir, with_json) -> dump files in dir
    world: int = 4

    def dumps_in(self, d: Path, with_json: bool = False) -> Path:
        """Writes the scenario's dumps into directory `d` (made if missing) and returns it."""
        d.mkdir(parents=True, exist_ok=True)
        self.write(str(d), with_json)
        return d


# --- real gloo dumps --------------------------------------------------------------------------

# name -> (truth, TORCH_FR_BUFFER_SIZE)
GLOO: dict[str, tuple[Truth, int]] = {
    "clean_legal": (Truth(None), 200),
    "monitored_barrier_clean": (Truth(None), 200),
    "monitored_barrier": (Truth("RUN281", (2,), "0", 8), 200),
    "skip_last": (Truth("RUN281", (3,), "0", 5), 200),
    "culprit_rank0": (Truth("RUN282", (0,), "0", 5), 200),
    "size_mismatch": (Truth("RUN284", (1,), "0", 5, (("RUN290", (3,)),)), 200),
    "size_mismatch_aborted": (Truth("RUN290", (1,), "0", 5), 200),
    "subgroups_clean": (Truth(None), 200),
    "dtype_mismatch": (Truth("RUN285", (3,), "0", 5), 200),
    "subgroup_never_issued": (Truth("RUN281", (1,), "1", 1), 200),
    "subgroup_died": (Truth("RUN290", (3,), "0", 6), 200),
    "died": (Truth("RUN290", (2,), "0", 5), 200),
    "died_after": (Truth("RUN290", (2,)), 200),
    "cross_group_deadlock": (Truth("RUN281", (1,), "1", 1, (("RUN281", (0, 2, 3)),)), 200),
    "two_faults": (Truth("RUN282", (3,), "2", 1, (("RUN281", (1,)),)), 200),
    "ring_wrap": (Truth("RUN281", (2,), "0", 1001), 64),
    # Unseen shapes of known faults (issue: the flight recorder on scenarios not seen before).
    "alltoall_splits": (Truth("RUN284", (2,), "0", 5), 200),
    "subgroup3_never_issued": (Truth("RUN281", (3,), "1", 1), 200),
    "strided_never_issued": (Truth("RUN281", (2,), "1", 1), 200),
}
# The 3-rank real dumps of the RUN28x code fixtures.
CODE_TARS = {
    "ok_3ranks": ("RUN281/good.tar", Truth(None)),
    "skip_3ranks": ("RUN281/bad.tar", Truth("RUN281", (1,), "0", 5)),
    "mismatch_3ranks": ("RUN282/bad.tar", Truth("RUN282", (1,), "0", 5)),
}


def _from_tar(path: str, names: Callable[[str], Optional[str]]) -> Callable[[str, bool], None]:
    def write(dest: str, with_json: bool) -> None:
        with tarfile.open(path) as tf:
            for m in tf.getmembers():
                if m.name.endswith(".json") and not with_json:
                    continue
                new = names(m.name)
                fh = tf.extractfile(m)
                if new and fh is not None:
                    with open(os.path.join(dest, new), "wb") as out:
                        out.write(fh.read())

    return write


def _torch_name(member: str) -> Optional[str]:
    """rank3.pkl -> nccl_trace_rank_3 (torch's name; its analyzer needs names ending in the rank)."""
    base = os.path.basename(member)
    digits = "".join(c for c in base.split(".")[0] if c.isdigit())
    if not digits:
        return None
    return f"nccl_trace_rank_{digits}" + (".json" if base.endswith(".json") else "")


# --- dumps written in the recorder's format ---------------------------------------------------

FRAME = [
    {"name": "train_step", "filename": "/job/train.py", "line": 88},
    {"name": "main", "filename": "/job/train.py", "line": 120},
]


class Writer:
    """One rank's recorder, as FlightRecorder.cpp fills it. time_created_ns comes from one clock
    shared by all ranks (the order the scenario issues ops in), as a job's wall clock would."""

    clock = 1_700_000_000_000_000_000

    def __init__(self, rank: int, style: str = "2.13") -> None:
        self.rank, self.style = rank, style
        self.entries: list[dict[str, Any]] = []
        self.seq: dict[str, int] = {}
        self.p2p_seq: dict[str, int] = {}
        self.op_id = 0
        self.record_id = 0

    def add(
        self,
        op: str,
        ins: Sequence[Sequence[int]],
        outs: Sequence[Sequence[int]],
        *,
        pg: str = "0",
        desc: str = "default_pg",
        state: str = "completed",
        dtype: str = "Float",
        out_dtype: Optional[str] = None,
        p2p: bool = False,
        same_seq: bool = False,
        marker: bool = False,
    ) -> None:
        if p2p:
            if not same_seq:
                self.p2p_seq[pg] = self.p2p_seq.get(pg, 0) + 1
        elif not same_seq:
            self.seq[pg] = self.seq.get(pg, 0) + 1
        self.op_id += 1
        cseq, pseq = self.seq.get(pg, 0) if not p2p else 0, self.p2p_seq.get(pg, 0) if p2p else 0
        od = dtype if out_dtype is None else out_dtype
        test = self.style == "test"
        e: dict[str, Any] = {
            "record_id": self.record_id,
            "pg_id": int(pg),
            "process_group": (pg, desc),
            "collective_seq_id": str(cseq) if test else cseq,
            "p2p_seq_id": str(pseq) if test else pseq,
            "op_id": self.op_id,
            "profiling_name": f"nccl:{op}",
            "time_created_ns": Writer.clock,
            "input_sizes": [list(s) for s in ins],
            "output_sizes": [list(s) for s in outs],
            "input_dtypes": (dtype.lower() if test else [dtype] * len(ins))
            if not marker
            else ([] if not test else ""),
            "output_dtypes": (od.lower() if test else [od] * len(outs))
            if not marker
            else ([] if not test else ""),
            "state": state,
            "is_p2p": p2p,
            "frames": [] if test else list(FRAME),
        }
        if not test:
            e.update(
                thread_name="pt_nccl_watchdg",
                thread_id="140000000000000",
                retired=state == "completed",
                timeout_ms=600000,
                time_discovered_started_ns=None if state == "scheduled" else 1,
                time_discovered_completed_ns=1 if state == "completed" else None,
            )
        self.entries.append(e)
        self.record_id += 1
        Writer.clock += 1000

    def dump(self, groups: dict[str, tuple[str, list[int]]], ring: int = 0) -> bytes:
        entries = self.entries[-ring:] if ring else self.entries
        status = {}
        for pg in groups:
            done = [
                int(e["collective_seq_id"])
                for e in self.entries
                if e["process_group"][0] == pg and e["state"] == "completed" and not e["is_p2p"]
            ]
            status[pg] = {
                "last_enqueued_collective": self.seq.get(pg, 0),
                "last_started_collective": self.seq.get(pg, 0),
                "last_completed_collective": max(done) if done else -1,
            }
        cfg = {
            pg: {"name": pg, "desc": desc, "ranks": str(list(ranks))} for pg, (desc, ranks) in groups.items()
        }
        data: dict[str, Any] = {
            "version": "2.8" if self.style == "test" else "2.10",
            "pg_config": cfg,
            "entries": entries,
        }
        if self.style != "test":
            data.update(comm_lib_version="2.21.5", pg_status=status)
        return pickle.dumps(data, protocol=2)


def _nccl(
    build: Callable[[list[Writer]], None],
    world: int = 4,
    style: str = "2.13",
    ring: int = 0,
    groups: Optional[dict[str, tuple[str, list[int]]]] = None,
    dumped: Optional[Sequence[int]] = None,
) -> Callable[[str, bool], None]:
    def write(dest: str, with_json: bool) -> None:
        ws = [Writer(r, style) for r in range(world)]
        build(ws)
        g = groups or {"0": ("default_pg", list(range(world)))}
        for w in ws:
            if dumped is None or w.rank in dumped:
                with open(os.path.join(dest, f"nccl_trace_rank_{w.rank}"), "wb") as fh:
                    fh.write(w.dump(g, ring))

    return write


def _warm(ws: list[Writer], n: int = 5) -> None:
    for w in ws:
        for _ in range(n):
            w.add("all_reduce", [[4, 4]], [[4, 4]])


def _last(
    ws: list[Writer],
    per_rank: Callable[[Writer], Optional[dict[str, Any]]],
    op: str = "all_reduce",
    ins: Sequence[Sequence[int]] = ((4, 4),),
    outs: Sequence[Sequence[int]] = ((4, 4),),
) -> None:
    for w in ws:
        kw = per_rank(w)
        if kw is None:
            continue
        w.add(kw.pop("op", op), kw.pop("ins", ins), kw.pop("outs", outs), **kw)


def _state_not_started(ws: list[Writer]) -> None:
    _warm(ws)
    _last(ws, lambda w: {"state": "scheduled" if w.rank == 2 else "started"})


def _not_completed(ws: list[Writer]) -> None:
    _warm(ws)
    _last(ws, lambda w: {"state": "started"})


def _output_f16(ws: list[Writer]) -> None:
    _warm(ws)
    _last(ws, lambda w: {"state": "started", "out_dtype": "Half" if w.rank == 1 else "Float"})


def _input_dtype(ws: list[Writer]) -> None:
    _warm(ws)
    _last(ws, lambda w: {"state": "started", "dtype": "BFloat16" if w.rank == 2 else "Float"})


def _input_size(ws: list[Writer]) -> None:
    _warm(ws)
    _last(
        ws,
        lambda w: {
            "state": "started",
            "ins": [[5, 4]] if w.rank == 3 else [[4, 4]],
            "outs": [[5, 4]] if w.rank == 3 else [[4, 4]],
        },
    )


def _output_size(ws: list[Writer]) -> None:
    _warm(ws)
    _last(
        ws,
        lambda w: {
            "state": "started",
            "op": "all_gather",
            "ins": [[4, 4]],
            "outs": [[12, 4]] if w.rank == 1 else [[16, 4]],
        },
    )


def _op_type(ws: list[Writer]) -> None:
    _warm(ws)
    _last(
        ws,
        lambda w: {
            "state": "started",
            "op": "all_gather" if w.rank == 0 else "all_reduce",
            "outs": [[16, 4]] if w.rank == 0 else [[4, 4]],
        },
    )


def _legal(ws: list[Writer]) -> None:
    """Per-rank differences that are legal: scatter, gather, uneven all_to_all, reduce_scatter."""
    _warm(ws, 2)
    n = len(ws)
    for w in ws:
        w.add("scatter", [[n, 4]] if w.rank == 0 else [], [[4]])
        w.add("gather", [[4]], [[n, 4]] if w.rank == 1 else [])
        w.add("all_to_all", [[n * (w.rank + 1)]], [[sum(r + 1 for r in range(n))]])
        w.add("_reduce_scatter_base", [[n * 8]], [[8]])
        w.add("_all_gather_base", [[8]], [[n * 8]])
        w.add("all_reduce", [[4, 4]], [[4, 4]])


def _p2p_unmatched(ws: list[Writer]) -> None:
    _warm(ws)
    ws[0].add("send 0->1", [[4, 8]], [[4, 8]], p2p=True, state="started")


def _p2p_size(ws: list[Writer]) -> None:
    _warm(ws)
    ws[0].add("send 0->1", [[4, 8]], [[4, 8]], p2p=True, state="started")
    ws[1].add("recv 1<-0", [[4, 16]], [[4, 16]], p2p=True, state="started")


def _ring(ws: list[Writer], state: Callable[[int, str], str]) -> None:
    n = len(ws)
    for w in ws:
        nxt, prv = (w.rank + 1) % n, (w.rank - 1) % n
        ops = [(f"send {w.rank}->{nxt}", "send"), (f"recv {w.rank}<-{prv}", "recv")]
        first = True
        for name, kind in ops:
            st = state(w.rank, kind)
            if st == "absent":
                continue
            w.add(name, [[64]], [[64]], p2p=True, state=st, same_seq=not first)
            first = False
        w.add(
            "coalesced",
            [],
            [],
            p2p=True,
            same_seq=True,
            marker=True,
            state="completed" if all(state(w.rank, k) == "completed" for _, k in ops) else "started",
        )


def _batched_clean(ws: list[Writer]) -> None:
    _warm(ws)
    _ring(ws, lambda r, k: "completed")


def _batched_broken(ws: list[Writer]) -> None:
    _warm(ws)
    _ring(ws, lambda r, k: "absent" if (r == 2 and k == "recv") else "started")


def _coalesced(
    ws: list[Writer], inner: Callable[[Writer], Optional[list[tuple[str, list[list[int]]]]]], marker: str
) -> None:
    _warm(ws)
    for w in ws:
        ops = inner(w)
        if ops is None:
            continue
        for i, (op, size) in enumerate(ops):
            w.add(op, size, size, same_seq=i > 0)
        w.add(marker, [[]], [[]], same_seq=True, marker=True)


def _coalesced_uneven(ws: list[Writer]) -> None:
    _coalesced(
        ws,
        lambda w: [("_broadcast_oop", [[4, 4]]), ("_broadcast_oop", [[5, 5]] if w.rank == 3 else [[4, 4]])],
        "ALLGATHER_coalesced",
    )


def _coalesced_clean(ws: list[Writer]) -> None:
    _coalesced(
        ws, lambda w: [("_reduce_oop", [[4, 4]]), ("_reduce_oop", [[4, 4]])], "REDUCE_SCATTER_coalesced"
    )


def _coalesced_absent(ws: list[Writer]) -> None:
    _coalesced(
        ws,
        lambda w: None if w.rank == 0 else [("_reduce_oop", [[4, 4]]), ("_reduce_oop", [[4, 4]])],
        "REDUCE_SCATTER_coalesced",
    )


def _send_beside_hang(ws: list[Writer]) -> None:
    _warm(ws)
    _last(ws, lambda w: None if w.rank == 3 else {"state": "started"})
    ws[0].add("send 0->1", [[4, 8]], [[4, 8]], p2p=True, state="started", pg="1", desc="pp")


def _wrap_out_of_step(ws: list[Writer]) -> None:
    for w in ws:
        for _ in range(9 if w.rank < 2 else 2):
            w.add("all_reduce", [[2]], [[2]], pg="1" if w.rank < 2 else "2", desc="tp")
    _warm(ws, 1000)
    _last(ws, lambda w: None if w.rank == 2 else {"state": "started"})


def _scale_missing(ws: list[Writer]) -> None:
    _warm(ws, 20)
    bad = len(ws) * 3 // 4 + 1
    _last(ws, lambda w: None if w.rank == bad else {"state": "started"})


def _scale_not_started(ws: list[Writer]) -> None:
    _warm(ws, 20)
    bad = len(ws) // 2 + 9
    _last(ws, lambda w: {"state": "scheduled" if w.rank == bad else "started"})


def _clean(ws: list[Writer]) -> None:
    _warm(ws, 20)


def _wrapped_past_subgroup(ws: list[Writer]) -> None:
    """Ranks 0,1 ran 3 collectives in their TP group long ago; rank 1 has since run 80 in its
    other group [1,2], so its ring buffer no longer holds them: nothing is missing."""
    for w in ws[:2]:
        for _ in range(3):
            w.add("all_reduce", [[2]], [[2]], pg="1", desc="tp")
    _warm(ws, 10)
    for w in ws[1:3]:
        for _ in range(80):
            w.add("all_reduce", [[2]], [[2]], pg="2", desc="pp")


W4 = {"0": ("default_pg", [0, 1, 2, 3])}
PP = {**W4, "1": ("pp", [0, 1])}
TP = {**W4, "1": ("tp", [0, 1]), "2": ("tp", [2, 3])}


def nccl_scenarios() -> list[Scenario]:
    out = [
        Scenario("nccl_clean_legal", "nccl-format", Truth(None), _nccl(_legal)),
        Scenario(
            "nccl_state_not_started", "nccl-format", Truth("RUN286", (2,), "0", 6), _nccl(_state_not_started)
        ),
        Scenario(
            "nccl_not_completed", "nccl-format", Truth("RUN283", (0, 1, 2, 3), "0", 6), _nccl(_not_completed)
        ),
        Scenario("nccl_output_dtype_f16", "nccl-format", Truth("RUN285", (1,), "0", 6), _nccl(_output_f16)),
        Scenario("nccl_input_dtype", "nccl-format", Truth("RUN285", (2,), "0", 6), _nccl(_input_dtype)),
        Scenario("nccl_input_size", "nccl-format", Truth("RUN284", (3,), "0", 6), _nccl(_input_size)),
        Scenario("nccl_output_size", "nccl-format", Truth("RUN284", (1,), "0", 6), _nccl(_output_size)),
        Scenario("nccl_op_type_rank0", "nccl-format", Truth("RUN282", (0,), "0", 6), _nccl(_op_type)),
        Scenario(
            "test_style_input_size",
            "nccl-format",
            Truth("RUN284", (3,), "0", 6),
            _nccl(_input_size, style="test"),
        ),
        Scenario("test_style_clean", "nccl-format", Truth(None), _nccl(_clean, style="test")),
        Scenario("nccl_p2p_unmatched", "nccl-format", Truth("RUN287", (1,)), _nccl(_p2p_unmatched)),
        Scenario("nccl_p2p_size", "nccl-format", Truth("RUN288", (0, 1)), _nccl(_p2p_size)),
        Scenario("nccl_batched_p2p_clean", "nccl-format", Truth(None), _nccl(_batched_clean)),
        Scenario("nccl_batched_p2p_broken", "nccl-format", Truth("RUN287", (2,)), _nccl(_batched_broken)),
        Scenario(
            "nccl_coalesced_uneven", "nccl-format", Truth("RUN289", (3,), "0", 6), _nccl(_coalesced_uneven)
        ),
        Scenario("nccl_coalesced_clean", "nccl-format", Truth(None), _nccl(_coalesced_clean)),
        Scenario(
            "nccl_coalesced_absent", "nccl-format", Truth("RUN289", (0,), "0", 6), _nccl(_coalesced_absent)
        ),
        Scenario(
            "nccl_send_beside_hang",
            "nccl-format",
            Truth("RUN281", (3,), "0", 6, (("RUN287", (1,)),)),
            _nccl(_send_beside_hang, groups=PP),
        ),
        Scenario(
            "nccl_wrapped_past_subgroup",
            "nccl-format",
            Truth(None),
            _nccl(_wrapped_past_subgroup, ring=60, groups={**W4, "1": ("tp", [0, 1]), "2": ("pp", [1, 2])}),
        ),
        Scenario(
            "nccl_wrap_out_of_step",
            "nccl-format",
            Truth("RUN281", (2,), "0", 1001),
            _nccl(_wrap_out_of_step, ring=50, groups=TP),
        ),
    ]
    # Unseen shapes of known faults (tests/helpers/fr_unseen.py, which builds on this module).
    from tests.helpers.fr_unseen import unseen_scenarios

    out += unseen_scenarios()
    for n in (8, 64, 1024):
        g = {"0": ("default_pg", list(range(n)))}
        out.append(
            Scenario(
                f"scale_{n}_missing",
                "scale",
                Truth("RUN281", (n * 3 // 4 + 1,), "0", 21),
                _nccl(_scale_missing, world=n, groups=g),
                n,
            )
        )
    out.append(
        Scenario(
            "scale_1024_not_started",
            "scale",
            Truth("RUN286", (1024 // 2 + 9,), "0", 21),
            _nccl(_scale_not_started, world=1024, groups={"0": ("default_pg", list(range(1024)))}),
            1024,
        )
    )
    out.append(
        Scenario(
            "scale_64_clean",
            "scale",
            Truth(None),
            _nccl(_clean, world=64, groups={"0": ("default_pg", list(range(64)))}),
            64,
        )
    )
    return out


def partial_dumps() -> Scenario:
    """The user gave the dumps of 2 ranks of 8: they agree, and that says nothing about the rest."""
    return Scenario(
        "nccl_partial_dumps",
        "nccl-format",
        Truth(None),
        _nccl(_clean, world=8, dumped=[0, 1], groups={"0": ("default_pg", list(range(8)))}),
        8,
    )


def gloo_scenarios() -> list[Scenario]:
    out = [
        Scenario(name, "gloo", truth, _from_tar(os.path.join(FR_DIR, f"{name}.tar"), _torch_name))
        for name, (truth, _) in GLOO.items()
    ]
    out += [
        Scenario(name, "gloo", truth, _from_tar(os.path.join(FIXTURES, "codes", tar), _torch_name), 3)
        for name, (tar, truth) in CODE_TARS.items()
    ]
    return out


def all_scenarios() -> list[Scenario]:
    return gloo_scenarios() + nccl_scenarios()


def tar_bytes(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def verdict(findings: Sequence[Any]) -> str:
    """One line for a table: the root finding's code, culprit ranks, group and seq."""
    fails = [f for f in findings if getattr(f, "severity", None) is None or str(f.severity.value) == "fail"]
    if not fails:
        return "clean"
    f = fails[0]
    ranks = f.facts.get("culprit_ranks", f.facts.get("ranks", []))
    pg = f.facts.get("pg", f.facts.get("fr_pg"))
    seq = f.facts.get("seq", f.facts.get("fr_seq"))
    return f"{f.code} {_short(ranks)} pg={pg} seq={seq}"


def _short(ranks: Sequence[int]) -> str:
    rs = list(ranks)
    return str(rs) if len(rs) <= 6 else f"[{rs[0]}..{rs[-1]}] ({len(rs)})"


def truth_text(t: Truth) -> str:
    if t.code is None:
        return "clean"
    return f"{t.code} {_short(t.ranks)} pg={t.pg} seq={t.seq}"


def judge(findings: Sequence[Any], t: Truth) -> tuple[bool, str]:
    """Right when the root cause has the truth's code and culprits (and group and seq where the
    truth gives them) and every other fault of the truth is reported; a clean job has no fail."""
    fails = [f for f in findings if str(f.severity.value) == "fail"]
    if t.code is None:
        return not fails, "clean" if not fails else f"false alarm: {verdict(fails)}"
    if not fails:
        return False, "nothing found"
    root = fails[0]
    got = tuple(root.facts.get("culprit_ranks", root.facts.get("ranks", [])))
    if root.code != t.code or got != t.ranks:
        return False, f"root {root.code} {list(got)}"
    if t.pg is not None and str(root.facts.get("pg")) != t.pg:
        return False, f"pg {root.facts.get('pg')}"
    if t.seq is not None and root.facts.get("seq") != t.seq:
        return False, f"seq {root.facts.get('seq')}"
    for code, ranks in t.also:
        if not any(f.code == code and tuple(f.facts.get("culprit_ranks", ())) == ranks for f in fails[1:]):
            return False, f"missing {code} {list(ranks)}"
    return True, "ok"
