"""Flight-recorder scenarios of shapes the first set did not hold, with their ground truth (part
of tests/helpers/fr_scenarios.py's set): all_to_all splits that cannot agree, a subgroup's first
collective that one member never issued, coalesced groups in the recorder's exact format (as
torch.distributed writes reduce_scatter coalesced), numbers written as strings, a dump missing
whose rank explains what the other dumps show. The real gloo jobs of the same classes are in
fr_scenarios.GLOO (alltoall_splits, subgroup3_never_issued, strided_never_issued).
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from typing import Any, Optional

from tests.helpers.fr_scenarios import (
    TP,
    W4,
    Scenario,
    Truth,
    Writer,
    _input_size,
    _last,
    _nccl,
    _p2p_unmatched,
    _state_not_started,
    _warm,
    _wrap_out_of_step,
)


def _alltoall_list(
    bad: Optional[int], sends: Callable[[int], int], state: str = "started"
) -> Callable[[list[Writer]], None]:
    """all_to_all over tensor lists, as ProcessGroupNCCL::alltoall records it: one input and one
    output shape per peer. Rank r sends sends(r) elements to every peer; `bad` sends one more."""

    def build(ws: list[Writer]) -> None:
        _warm(ws)
        n = len(ws)
        for w in ws:
            mine = sends(w.rank) + (1 if w.rank == bad else 0)
            w.add("all_to_all", [[mine]] * n, [[sends(r)] for r in range(n)], state=state)

    return build


def _alltoall_list_count(ws: list[Writer]) -> None:
    """all_to_all over tensor lists where rank 1 passes three tensors to a group of four."""
    _warm(ws)
    n = len(ws)
    for w in ws:
        k = n - 1 if w.rank == 1 else n
        w.add("all_to_all", [[2]] * k, [[2]] * k, state="started")


def _alltoall_expert_groups(ws: list[Writer]) -> None:
    """Expert-parallel groups [0,2] and [1,3] (strided): in [0,2], rank 2 sends 3 elements to each
    peer where they expect 2; [1,3] exchanges cleanly."""
    _warm(ws)
    for w in ws:
        pg = "1" if w.rank % 2 == 0 else "2"
        mine = 3 if w.rank == 2 else 2
        w.add(
            "all_to_all",
            [[mine]] * 2,
            [[2]] * 2,
            pg=pg,
            desc="ep",
            state="completed" if pg == "2" else "started",
        )


def _alltoall_single(ws: list[Writer]) -> None:
    """all_to_all_single with even splits (8 elements each way) except rank 3, whose input holds 12:
    only the tensors' shapes are recorded, and three ranks agree."""
    _warm(ws)
    _last(
        ws,
        lambda w: {
            "state": "started",
            "op": "all_to_all",
            "ins": [[12]] if w.rank == 3 else [[8]],
            "outs": [[8]],
        },
    )


def _rs_fast(missing: Optional[int], state: str = "started") -> Callable[[list[Writer]], None]:
    """reduce_scatter coalesced as the coalescing manager issues it when every op is a
    reduce_scatter_tensor: ProcessGroupNCCL::reduce_scatter_tensor_coalesced records one entry,
    "nccl:reduce_scatter_tensor_coalesced", with every input and output shape of the group."""

    def build(ws: list[Writer]) -> None:
        _warm(ws)
        n = len(ws)
        _last(
            ws,
            lambda w: (
                None
                if w.rank == missing
                else {
                    "op": "reduce_scatter_tensor_coalesced",
                    "ins": [[4 * n], [2 * n]],
                    "outs": [[4], [2]],
                    "state": state,
                }
            ),
        )

    return build


def _rs_slow(missing: Optional[int], state: str = "started") -> Callable[[list[Writer]], None]:
    """reduce_scatter coalesced through the slow path (ops of mixed kinds in one coalescing
    manager): startCoalescing takes the sequence number, each op is recorded under it, and
    endCoalescing records "nccl:coalesced" with no tensors (initWork(..., "nccl:coalesced", {}, {}))."""

    def build(ws: list[Writer]) -> None:
        _warm(ws)
        n = len(ws)
        for w in ws:
            if w.rank == missing:
                continue
            w.add("_reduce_scatter_base", [[4 * n]], [[4]], state="scheduled")
            w.add("_all_gather_base", [[4]], [[4 * n]], state="scheduled", same_seq=True)
            w.add("coalesced", [], [], same_seq=True, marker=True, state=state)

    return build


def _subgroup_first(ws: list[Writer]) -> None:
    """TP groups [0,1] and [2,3]: [0,1] ran three all_reduces; rank 2 waits in the first collective
    of [2,3], which rank 3 never issued (no entry of that group in its dump)."""
    _warm(ws)
    for w in ws[:2]:
        for _ in range(3):
            w.add("all_reduce", [[2]], [[2]], pg="1", desc="tp")
    ws[2].add("all_reduce", [[2]], [[2]], pg="2", desc="tp", state="started")


def _subgroup_first_marker_only(ws: list[Writer]) -> None:
    """As _subgroup_first, where [2,3]'s first operation is a coalesced group that rank 2 began."""
    _warm(ws)
    ws[2].add("_all_gather_base", [[2]], [[4]], pg="2", desc="tp", state="scheduled")
    ws[2].add("coalesced", [], [], pg="2", desc="tp", same_seq=True, marker=True, state="started")


def _no_dump_stall(ws: list[Writer]) -> None:
    """Every dumped rank entered the last all_reduce and none completed it: the rank that left no
    dump (it died) is the one they wait for."""
    _warm(ws)
    _last(ws, lambda w: {"state": "started"})


def _no_dump_chain(ws: list[Writer]) -> None:
    """Rank 3 died without a dump; rank 2 waits for it in their TP group, so rank 2 never enters the
    world all_reduce that ranks 0 and 1 wait in."""
    _warm(ws)
    ws[2].add("all_reduce", [[2]], [[2]], pg="2", desc="tp", state="started")
    for w in ws[:2]:
        w.add("all_reduce", [[4, 4]], [[4, 4]], state="started")


_NUMBERS = (
    "record_id",
    "pg_id",
    "collective_seq_id",
    "p2p_seq_id",
    "op_id",
    "time_created_ns",
    "timeout_ms",
    "time_discovered_started_ns",
    "time_discovered_completed_ns",
)


def _as_strings(value: Any, bools: bool) -> Any:
    if isinstance(value, bool):
        return ("true" if value else "false") if bools else value
    return str(value) if isinstance(value, int) else value


def retyped(
    write: Callable[[str, bool], None], bools: bool = False, as_json: bool = True
) -> Callable[[str, bool], None]:
    """The same dumps with numbers written as strings (record and sequence ids, pg ids, times, and
    pg_status counters), as some JSON writers and hand-edited dumps have them; with `bools`, is_p2p
    and retired as "true"/"false" too. Written as JSON (as_json) or pickle."""

    def write_retyped(dest: str, with_json: bool) -> None:
        import json

        write(dest, False)
        for name in sorted(os.listdir(dest)):
            path = os.path.join(dest, name)
            with open(path, "rb") as fh:
                data = pickle.loads(fh.read())  # the writer's own output, not user input
            for e in data["entries"]:
                for k in _NUMBERS:
                    if k in e and e[k] is not None:
                        e[k] = _as_strings(e[k], bools)
                for k in ("is_p2p", "retired"):
                    if k in e:
                        e[k] = _as_strings(e[k], bools)
            for st in (data.get("pg_status") or {}).values():
                for k in list(st):
                    st[k] = _as_strings(st[k], bools)
            os.unlink(path)
            if as_json:
                with open(path + ".json", "w") as fh:
                    json.dump(data, fh)
            else:
                with open(path, "wb") as fh:
                    fh.write(pickle.dumps(data, protocol=2))

    return write_retyped


def unseen_scenarios() -> list[Scenario]:
    return [
        Scenario(
            "nccl_alltoall_list_splits",
            "nccl-format",
            Truth("RUN284", (1,), "0", 6),
            _nccl(_alltoall_list(1, lambda r: 2)),
        ),
        Scenario(
            "nccl_alltoall_list_uneven_splits",
            "nccl-format",
            Truth("RUN284", (2,), "0", 6),
            _nccl(_alltoall_list(2, lambda r: r + 1)),
        ),
        Scenario(
            "nccl_alltoall_list_uneven_clean",
            "nccl-format",
            Truth(None),
            _nccl(_alltoall_list(None, lambda r: r + 1, state="completed")),
        ),
        Scenario(
            "nccl_alltoall_list_count",
            "nccl-format",
            Truth("RUN284", (1,), "0", 6),
            _nccl(_alltoall_list_count),
        ),
        Scenario(
            "nccl_alltoall_expert_groups",
            "nccl-format",
            Truth("RUN284", (2,), "1", 1),
            _nccl(_alltoall_expert_groups, groups={**W4, "1": ("ep", [0, 2]), "2": ("ep", [1, 3])}),
        ),
        Scenario(
            "nccl_alltoall_single_splits",
            "nccl-format",
            Truth("RUN284", (3,), "0", 6),
            _nccl(_alltoall_single),
        ),
        Scenario(
            "nccl_rs_coalesced_missing", "nccl-format", Truth("RUN289", (2,), "0", 6), _nccl(_rs_fast(2))
        ),
        Scenario("nccl_rs_coalesced_clean", "nccl-format", Truth(None), _nccl(_rs_fast(None, "completed"))),
        Scenario(
            "nccl_rs_coalesced_slow_missing", "nccl-format", Truth("RUN289", (1,), "0", 6), _nccl(_rs_slow(1))
        ),
        Scenario(
            "nccl_rs_coalesced_slow_clean", "nccl-format", Truth(None), _nccl(_rs_slow(None, "completed"))
        ),
        Scenario(
            "nccl_subgroup_first_never_issued",
            "nccl-format",
            Truth("RUN281", (3,), "2", 1),
            _nccl(_subgroup_first, groups=TP),
        ),
        Scenario(
            "nccl_subgroup_first_coalesced",
            "nccl-format",
            Truth("RUN289", (3,), "2", 1),
            _nccl(_subgroup_first_marker_only, groups=TP),
        ),
        Scenario(
            "nccl_no_dump_stall",
            "nccl-format",
            Truth("RUN290", (3,), "0", 6),
            _nccl(_no_dump_stall, dumped=[0, 1, 2]),
        ),
        Scenario(
            "nccl_no_dump_chain",
            "nccl-format",
            Truth("RUN290", (3,)),
            _nccl(_no_dump_chain, groups=TP, dumped=[0, 1, 2]),
        ),
        Scenario(
            "strings_input_size", "nccl-format", Truth("RUN284", (3,), "0", 6), retyped(_nccl(_input_size))
        ),
        Scenario(
            "strings_state_not_started",
            "nccl-format",
            Truth("RUN286", (2,), "0", 6),
            retyped(_nccl(_state_not_started), bools=True),
        ),
        Scenario(
            "strings_p2p_unmatched",
            "nccl-format",
            Truth("RUN287", (1,)),
            retyped(_nccl(_p2p_unmatched), bools=True, as_json=False),
        ),
        Scenario(
            "strings_coalesced_missing",
            "nccl-format",
            Truth("RUN289", (2,), "0", 6),
            retyped(_nccl(_rs_fast(2)), as_json=False),
        ),
        Scenario(
            "strings_wrap_out_of_step",
            "nccl-format",
            Truth("RUN281", (2,), "0", 1001),
            retyped(_nccl(_wrap_out_of_step, ring=50, groups=TP)),
        ),
    ]
