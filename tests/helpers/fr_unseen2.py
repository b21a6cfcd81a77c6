"""Flight-recorder scenarios of a third set, with their ground truth: jobs laid out as real ones are
(TP x DP groups at 8 to 64 ranks, pipeline stages talking by send/recv), and dumps with the field
sets of older recorders. The dumps come from a small simulator of the job rather than from entries
written one by one: every rank runs its program of collectives and p2p ops; a collective completes
when every member of its group has issued it with the same op, sizes and dtype, a send when its
peer posted the matching recv; what cannot complete is left "started" (entered, waiting), as
NCCL's recorder shows a hang. A rank given a stop index never issues that op or any after it (it
is stuck in its own code). So the culprit is known by construction, and the cascade each fault
causes in the other groups is what a real job would show.

Recorder versions (`restyled`): "1.4" (TraceUtils.h of torch 2.2: `seq_id`, no process_group, no
dtypes, no is_p2p, pg_config {pg_id: [ranks]}), "2.0" (no pg_status, timeout_ms or thread fields;
`duration_ms` on completed entries), "2.3" (pg_config ranks as "[0, 1]", no pg_status), and
hashed group names (split_group / new_group(use_local_synchronization) name groups by a hash, which
is not the pg_id that pg_status is keyed by).
"""

from __future__ import annotations

import json
import os
import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from tests.helpers.fr_scenarios import FR_DIR, PP, Scenario, Truth, Writer, _from_tar, _nccl, _torch_name

Groups = dict[str, tuple[str, list[int]]]


@dataclass
class Op:
    pg: str
    name: str  # all_reduce, all_gather, send, recv
    ins: Sequence[Sequence[int]] = ((8, 8),)
    outs: Optional[Sequence[Sequence[int]]] = None
    dtype: str = "Float"
    peer: int = -1  # send/recv: the peer's global rank


def simulate(
    ws: list[Writer], groups: Groups, programs: dict[int, list[Op]], stop: Optional[dict[int, int]] = None
) -> None:
    """Run every rank's program as the job would (see the module docstring)."""
    stop = stop or {}
    ptr = {r: 0 for r in programs}
    pending: dict[int, dict[str, Any]] = {}

    def group_rank(pg: str, r: int) -> int:
        return sorted(groups[pg][1]).index(r)

    def issue(r: int) -> bool:
        i = ptr[r]
        if r in pending or i >= len(programs[r]) or stop.get(r) == i:
            return False
        op = programs[r][i]
        desc = groups[op.pg][0]
        outs = op.outs if op.outs is not None else op.ins
        if op.name in ("send", "recv"):
            me, peer = group_rank(op.pg, r), group_rank(op.pg, op.peer)
            arrow = "->" if op.name == "send" else "<-"
            name = f"{op.name} {me}{arrow}{peer}"
            ws[r].add(name, op.ins, outs, pg=op.pg, desc=desc, state="started", dtype=op.dtype, p2p=True)
        else:
            ws[r].add(op.name, op.ins, outs, pg=op.pg, desc=desc, state="started", dtype=op.dtype)
        pending[r] = ws[r].entries[-1]
        return True

    def key(r: int) -> tuple[Any, ...]:
        op = programs[r][ptr[r]]
        return (op.pg, op.name, [list(s) for s in op.ins], op.dtype)

    def complete(ranks: Sequence[int]) -> None:
        for r in ranks:
            e = pending.pop(r)
            e.update(state="completed", retired=True, time_discovered_completed_ns=1)
            e["time_discovered_started_ns"] = 1
            ptr[r] += 1

    progress = True
    while progress:
        progress = False
        for r in sorted(programs):
            progress |= issue(r)
        for r in sorted(programs):
            if r not in pending:
                continue
            op = programs[r][ptr[r]]
            if op.name == "send":
                p = op.peer
                if p in pending:
                    other = programs[p][ptr[p]]
                    if other.name == "recv" and other.peer == r and other.pg == op.pg:
                        complete([r, p])
                        progress = True
            elif op.name != "recv":
                members = groups[op.pg][1]
                if all(m in pending and key(m) == key(r) for m in members):
                    complete(members)
                    progress = True


def _sim(
    world: int,
    groups: Groups,
    program: Callable[[int], list[Op]],
    stop: Optional[dict[int, int]] = None,
    ring: int = 0,
    dumped: Optional[Sequence[int]] = None,
) -> Callable[[str, bool], None]:
    def build(ws: list[Writer]) -> None:
        simulate(ws, groups, {r: program(r) for r in range(world)}, stop)

    return _nccl(build, world=world, ring=ring, groups=groups, dumped=dumped)


def _late(
    world: int, groups: Groups, program: Callable[[int], list[Op]], rank: int, index: int, delay_s: float
) -> Callable[[str, bool], None]:
    """`rank` is stuck before op `index` (its peers wait in it) and issues it `delay_s` later, after
    its peers' timeout ran out, then dumps: as ranks dump each on their own timeout, its dump shows
    it in the collective too, entered late."""

    def build(ws: list[Writer]) -> None:
        simulate(ws, groups, {r: program(r) for r in range(world)}, {rank: index})
        Writer.clock += int(delay_s * 1e9)
        op = program(rank)[index]
        ws[rank].add(op.name, op.ins, op.ins, pg=op.pg, desc=groups[op.pg][0], state="started")

    return _nccl(build, world=world, groups=groups)


# --- layouts ----------------------------------------------------------------------------------


def tp_dp(world: int, tp: int) -> Groups:
    """World "0"; TP groups "1".."world/tp" of consecutive ranks; DP groups after them, strided."""
    g: Groups = {"0": ("default_pg", list(range(world)))}
    ntp = world // tp
    for i in range(ntp):
        g[str(1 + i)] = ("tp", list(range(i * tp, (i + 1) * tp)))
    for j in range(tp):
        g[str(1 + ntp + j)] = ("dp", list(range(j, world, tp)))
    return g


def pg_of(groups: Groups, desc: str, rank: int) -> str:
    return next(pg for pg, (d, ranks) in groups.items() if d == desc and rank in ranks)


def tp_dp_program(
    groups: Groups, steps: int, odd: Optional[tuple[int, int, Op]] = None
) -> Callable[[int], list[Op]]:
    """Each step: an all_reduce in the rank's TP group, then one in its DP group. odd=(rank, step,
    op) replaces that rank's TP op of that step."""

    def program(r: int) -> list[Op]:
        tp, dp = pg_of(groups, "tp", r), pg_of(groups, "dp", r)
        out = []
        for s in range(1, steps + 1):
            op = Op(tp, "all_reduce", ((8, 8),))
            if odd and odd[0] == r and odd[1] == s:
                op = odd[2]
            out += [op, Op(dp, "all_reduce", ((64,),))]
        return out

    return program


def pp(world: int, stages: int) -> Groups:
    """World "0"; pipelines "1".. of `stages` consecutive ranks; DP groups across pipelines."""
    g: Groups = {"0": ("default_pg", list(range(world)))}
    npp = world // stages
    for i in range(npp):
        g[str(1 + i)] = ("pp", list(range(i * stages, (i + 1) * stages)))
    if npp > 1:
        for j in range(stages):
            g[str(1 + npp + j)] = ("dp", list(range(j, world, stages)))
    return g


def tp_pp(world: int, tp: int) -> Groups:
    """TP groups of `tp` consecutive ranks ("1"..), pipelines across them, strided (the p2p names
    carry group ranks: rank 6 is stage 3 of [0,2,4,6])."""
    g: Groups = {"0": ("default_pg", list(range(world)))}
    for i in range(0, world, tp):
        g[str(len(g))] = ("tp", list(range(i, i + tp)))
    for j in range(tp):
        g[str(len(g))] = ("pp", list(range(j, world, tp)))
    return g


def tp_pp_program(groups: Groups, micro: int) -> Callable[[int], list[Op]]:
    """Each microbatch: recv from the stage before, a TP all_reduce, send to the stage after."""

    def program(r: int) -> list[Op]:
        pipe, tp = pg_of(groups, "pp", r), pg_of(groups, "tp", r)
        ranks = groups[pipe][1]
        s = ranks.index(r)
        out: list[Op] = []
        for _ in range(micro):
            if s > 0:
                out.append(Op(pipe, "recv", ((4, 16),), peer=ranks[s - 1]))
            out.append(Op(tp, "all_reduce", ((4, 16),)))
            if s < len(ranks) - 1:
                out.append(Op(pipe, "send", ((4, 16),), peer=ranks[s + 1]))
        return out

    return program


def send_send_program(groups: Groups, micro: int) -> Callable[[int], list[Op]]:
    """A 4-stage pipeline where stages 1 and 2 (ranks 1, 2) both send to the other before they
    receive, at the third microbatch (1F1B's backward meeting the forward, ordered alike)."""
    ranks = groups["1"][1]

    def program(r: int) -> list[Op]:
        s = ranks.index(r)
        out: list[Op] = []
        for m in range(micro):
            if m == 2 and s in (1, 2):
                peer = ranks[3 - s]
                out += [Op("1", "send", ((4, 16),), peer=peer), Op("1", "recv", ((4, 16),), peer=peer)]
                continue
            if s > 0:
                out.append(Op("1", "recv", ((4, 16),), peer=ranks[s - 1]))
            if s < len(ranks) - 1:
                out.append(Op("1", "send", ((4, 16),), peer=ranks[s + 1]))
        return out

    return program


def pp_program(groups: Groups, stages: int, steps: int, micro: int) -> Callable[[int], list[Op]]:
    """Each step: every microbatch received from the stage before, sent to the stage after (forward
    only, as a pipeline's first half does), then the gradient all_reduce across pipelines."""

    def program(r: int) -> list[Op]:
        pipe = pg_of(groups, "pp", r)
        ranks = groups[pipe][1]
        s = ranks.index(r)
        dp = pg_of(groups, "dp", r) if any(d == "dp" for d, _ in groups.values()) else None
        out: list[Op] = []
        for _ in range(steps):
            for _ in range(micro):
                if s > 0:
                    out.append(Op(pipe, "recv", ((4, 16),), peer=ranks[s - 1]))
                if s < stages - 1:
                    out.append(Op(pipe, "send", ((4, 16),), peer=ranks[s + 1]))
            if dp:
                out.append(Op(dp, "all_reduce", ((128,),)))
        return out

    return program


def world_program(steps: int) -> Callable[[int], list[Op]]:
    return lambda r: [Op("0", "all_reduce", ((4, 4),)) for _ in range(steps)]


# --- older recorders ---------------------------------------------------------------------------

_V14_DROP = ("process_group", "input_dtypes", "output_dtypes", "is_p2p", "p2p_seq_id", "timeout_ms")


def _restyle_one(data: dict[str, Any], version: str, names: dict[str, str]) -> dict[str, Any]:
    old = version != "hashed"
    for k in ("pg_status", "comm_lib_version") if old else ():
        data.pop(k, None)
    for e in data["entries"]:
        for k in ("thread_id", "thread_name") if old else ():
            e.pop(k, None)
        if version in ("1.4", "2.0"):
            e.pop("timeout_ms", None)
            if e["state"] == "completed":
                e["duration_ms"] = 0.25
        if version == "1.4":
            e["seq_id"] = e.pop("collective_seq_id") if not e["is_p2p"] else e.pop("p2p_seq_id")
            for k in _V14_DROP:
                e.pop(k, None)
        if version == "hashed":
            pg, desc = e["process_group"]
            e["process_group"] = (names.get(pg, pg), desc)
    cfg = data["pg_config"]
    if version == "1.4":
        data["pg_config"] = {int(k): json.loads(v["ranks"]) for k, v in cfg.items()}
    elif version == "hashed":
        data["pg_config"] = {names.get(k, k): {**v, "name": names.get(k, k)} for k, v in cfg.items()}
    data["version"] = {"hashed": "2.10"}.get(version, version)
    return data


def split_named(write: Callable[[str, bool], None], names: dict[str, str]) -> Callable[[str, bool], None]:
    """The same dumps as split_group / DeviceMesh name their groups: every TP group has one name
    (and uid) on every rank, whatever its ranks; a rank's pg_config and pg_status hold only its own
    groups. names: pg -> the shared name."""

    def write_split(dest: str, with_json: bool) -> None:
        write(dest, False)
        for name in sorted(os.listdir(dest)):
            path = os.path.join(dest, name)
            rank = int(name.rsplit("_", 1)[1])
            with open(path, "rb") as fh:
                data = pickle.loads(fh.read())  # the writer's own output, not user input
            mine = {k for k, v in data["pg_config"].items() if rank in json.loads(v["ranks"])}
            data["pg_config"] = {
                names.get(k, k): {**v, "name": names.get(k, k)}
                for k, v in data["pg_config"].items()
                if k in mine
            }
            data["pg_status"] = {names.get(k, k): v for k, v in data["pg_status"].items() if k in mine}
            for e in data["entries"]:
                pg, desc = e["process_group"]
                e["process_group"] = (names.get(pg, pg), desc)
                e["pg_id"] = int(names.get(pg, pg))
            with open(path, "wb") as fh:
                fh.write(pickle.dumps(data, protocol=2))

    return write_split


def restyled(
    write: Callable[[str, bool], None], version: str, names: Optional[dict[str, str]] = None
) -> Callable[[str, bool], None]:
    """The same dumps as an older recorder writes them (version "1.4", "2.0", "2.3"), or with the
    groups named by hashes ("hashed", names: pg name -> hash; pg_id and pg_status keep the uid)."""

    def write_restyled(dest: str, with_json: bool) -> None:
        write(dest, False)
        for name in sorted(os.listdir(dest)):
            path = os.path.join(dest, name)
            with open(path, "rb") as fh:
                data = pickle.loads(fh.read())  # the writer's own output, not user input
            with open(path, "wb") as fh:
                fh.write(pickle.dumps(_restyle_one(data, version, names or {}), protocol=2))

    return write_restyled


def _manual(build: Callable[[list[Writer]], None], world: int, groups: Groups) -> Callable[[str, bool], None]:
    return _nccl(build, world=world, groups=groups)


def _scheduled_in_subgroup(ws: list[Writer]) -> None:
    """TP group [4..7] of 8: rank 6 enqueued the step's all_reduce but its kernel never started
    (its stream is blocked behind its own work); its peers started it and wait."""
    g = tp_dp(8, 4)
    for w in ws:
        for _ in range(4):
            w.add("all_reduce", [[8, 8]], [[8, 8]], pg=pg_of(g, "tp", w.rank), desc="tp")
            w.add("all_reduce", [[64]], [[64]], pg=pg_of(g, "dp", w.rank), desc="dp")
    for w in ws[4:]:
        w.add(
            "all_reduce",
            [[8, 8]],
            [[8, 8]],
            pg="2",
            desc="tp",
            state="scheduled" if w.rank == 6 else "started",
        )
    for w in ws[:4]:
        w.add("all_reduce", [[8, 8]], [[8, 8]], pg="1", desc="tp")
        dp = pg_of(g, "dp", w.rank)
        w.add("all_reduce", [[64]], [[64]], pg=dp, desc="dp", state="started")


def _wrapped_extra(
    world: int, tp: int, steps: int, busy: Sequence[int], per_step: int = 2
) -> Callable[[int], list[Op]]:
    """tp_dp_program where the ranks in `busy` also run an all_reduce of their own group every
    step: their ring buffers hold fewer steps than the others'."""
    g = tp_dp(world, tp)
    base = tp_dp_program(g, steps)
    extra = str(len(g))

    def program(r: int) -> list[Op]:
        ops = base(r)
        if r not in busy:
            return ops
        out: list[Op] = []
        for i, op in enumerate(ops):
            out.append(op)
            if i % 2 == 1:
                out += [Op(extra, "all_reduce", ((2,),)) for _ in range(per_step)]
        return out

    return program


def _async_buckets(ws: list[Writer]) -> None:
    """DDP's gradient buckets: three all_reduces issued back to back each step, not waited on one by
    one; the first runs ("started"), the others queue behind it ("scheduled"). Rank 3 never issued
    step 5's buckets (stuck in its backward)."""
    for step in range(1, 6):
        for w in ws:
            if step == 5 and w.rank == 3:
                continue
            for b in range(3):
                st = "completed" if step < 5 else ("started" if b == 0 else "scheduled")
                w.add("all_reduce", [[1024 * (b + 1)]], [[1024 * (b + 1)]], state=st)


def fsdp_program(world: int, steps: int, odd: Optional[tuple[int, int]] = None) -> Callable[[int], list[Op]]:
    """FSDP over the world: each step all_gather_into_tensor of the shard (recorded as
    _all_gather_base), a coalesced all_gather of two shards, then reduce_scatter_tensor (recorded
    as _reduce_scatter_base). odd=(rank, step): that rank's reduce_scatter input is a few elements
    longer (it sharded differently)."""

    def program(r: int) -> list[Op]:
        out: list[Op] = []
        for s in range(1, steps + 1):
            rs_in = 8 * world + (8 if odd == (r, s) else 0)
            out += [
                Op("0", "_all_gather_base", ((64,),), ((64 * world,),)),
                Op("0", "all_gather_into_tensor_coalesced", ((64,), (32,)), ((64 * world,), (32 * world,))),
                Op("0", "_reduce_scatter_base", ((rs_in,),), ((8,),)),
            ]
        return out

    return program


def _coalesced_wrap(hang: bool) -> Callable[[list[Writer]], None]:
    """FSDP's prefetch through the coalescing manager (torch >= 2.7 records every op of the group,
    then the "nccl:coalesced" marker, under one sequence number), 30 steps; ranks 0 and 1 also run
    all_reduces in their own group, so their ring buffers (ring=23) start in the middle of a
    coalesced group, later than ranks 2 and 3 do. With `hang`, rank 2 never issues the
    last step's group."""

    def build(ws: list[Writer]) -> None:
        for step in range(30):
            last = step == 29
            for w in ws:
                if hang and last and w.rank == 2:
                    continue
                st = "started" if hang and last else "completed"
                for i in range(3):
                    w.add(
                        "_all_gather_base",
                        [[64]],
                        [[256]],
                        state="scheduled" if st != "completed" else st,
                        same_seq=i > 0,
                    )
                w.add("coalesced", [], [], same_seq=True, marker=True, state=st)
                if w.rank < 2 and not last:
                    w.add("all_reduce", [[2]], [[2]], pg="1", desc="tp")

    return build


def _pp_recv_scheduled(ws: list[Writer]) -> None:
    """A 4-stage pipeline: stage 2 (rank 2) posted its recv from stage 1 for the third microbatch,
    but its kernel never started (its stream is blocked behind its own compute); rank 1's send runs
    and waits; rank 3 waits in its recv from rank 2, which never got as far as its send."""
    last = {1: ("completed", "started"), 2: ("scheduled", None), 3: ("started", None)}
    for mb in range(3):
        for w in ws:
            recv, send = last.get(w.rank, (None, "completed")) if mb == 2 else ("completed", "completed")
            if w.rank > 0 and recv:
                name = f"recv {w.rank}<-{w.rank - 1}"
                w.add(name, [[4, 16]], [[4, 16]], pg="1", desc="pp", p2p=True, state=recv)
            if w.rank < 3 and send:
                name = f"send {w.rank}->{w.rank + 1}"
                w.add(name, [[4, 16]], [[4, 16]], pg="1", desc="pp", p2p=True, state=send)


def emptied(write: Callable[[str, bool], None], ranks: Sequence[int]) -> Callable[[str, bool], None]:
    """The same dumps where `ranks` recorded nothing (their TORCH_NCCL_TRACE_BUFFER_SIZE unset: the
    dump exists, with no entries), as a job whose nodes differ in environment leaves them."""

    def write_emptied(dest: str, with_json: bool) -> None:
        write(dest, False)
        for r in ranks:
            path = os.path.join(dest, f"nccl_trace_rank_{r}")
            with open(path, "rb") as fh:
                data = pickle.loads(fh.read())  # the writer's own output, not user input
            data["entries"] = []
            with open(path, "wb") as fh:
                fh.write(pickle.dumps(data, protocol=2))

    return write_emptied


SPLIT16 = {"1": "1", "2": "1", "3": "1", "4": "1", "5": "5", "6": "5", "7": "5", "8": "5"}


def fsdp_tp_program(groups: Groups, steps: int) -> Callable[[int], list[Op]]:
    """FSDP over DP groups (all_gather, reduce_scatter) beside TP all_reduces: sizes that depend on
    the group's size, so a group read as bigger than it is would disagree."""

    def program(r: int) -> list[Op]:
        tp, dp = pg_of(groups, "tp", r), pg_of(groups, "dp", r)
        n = len(groups[dp][1])
        out: list[Op] = []
        for _ in range(steps):
            out += [
                Op(dp, "_all_gather_base", ((64,),), ((64 * n,),)),
                Op(tp, "all_reduce", ((8, 8),)),
                Op(dp, "_reduce_scatter_base", ((8 * n,),), ((8,),)),
            ]
        return out

    return program


def only_active(write: Callable[[str, bool], None]) -> Callable[[str, bool], None]:
    """The same dumps as _dump_nccl_trace(onlyActive=True) writes them: completed entries left out."""

    def write_active(dest: str, with_json: bool) -> None:
        write(dest, False)
        for name in sorted(os.listdir(dest)):
            path = os.path.join(dest, name)
            with open(path, "rb") as fh:
                data = pickle.loads(fh.read())  # the writer's own output, not user input
            data["entries"] = [e for e in data["entries"] if e["state"] != "completed"]
            with open(path, "wb") as fh:
                fh.write(pickle.dumps(data, protocol=2))

    return write_active


def _with_extra(g: Groups, busy: Sequence[int]) -> Groups:
    return {**g, str(len(g)): ("mp", list(busy))}


# Real 8-rank gloo jobs of tests/helpers/fr_workload.py (TP pairs x DP groups of four), dumped
# once by `python -m tests.helpers.fr_unseen2` into tests/fixtures/fr/<name>.tar.
GLOO8: dict[str, Truth] = {
    "tp_dp_clean": Truth(None),
    "tp_dp_straggler": Truth("RUN281", (5,), "3", 3),
    "tp_dp_op_mismatch": Truth("RUN282", (6,), "4", 2),
    "tp_dp_first_straggler": Truth("RUN281", (5,), "3", 1),
}


def gloo8_scenarios() -> list[Scenario]:
    return [
        Scenario(name, "gloo", truth, _from_tar(os.path.join(FR_DIR, f"{name}.tar"), _torch_name), 8)
        for name, truth in GLOO8.items()
    ]


def make_gloo8(only: Sequence[str] = ()) -> None:
    import tempfile

    from tests.helpers import fr_lab
    from tests.helpers.fr_scenarios import tar_bytes

    with tempfile.TemporaryDirectory() as tmp:
        for name in GLOO8:
            if only and name not in only:
                continue
            out = os.path.join(tmp, name)
            run = fr_lab.run(name, out, world=8, timeout_s=120, pg_timeout_s=2)
            print(name, [o.returncode for o in run.outcomes], flush=True)
            files = {}
            for n in sorted(os.listdir(out)):
                with open(os.path.join(out, n), "rb") as fh:
                    files[n] = fh.read()
            with open(os.path.join(FR_DIR, f"{name}.tar"), "wb") as fh:
                fh.write(tar_bytes(files))


HASHES = {str(i): f"{(0x9E3779B1 * (i + 7)) & 0xFFFFFFFFFFFF:012x}" for i in range(1, 17)}


def unseen2_scenarios() -> list[Scenario]:
    g8, g16, g64, g8x2 = tp_dp(8, 4), tp_dp(16, 4), tp_dp(64, 8), tp_dp(8, 2)
    bf16 = Op("2", "all_reduce", ((8, 8),), dtype="BFloat16")
    gather = Op("2", "all_gather", ((8, 8),), ((32, 8),))
    pp4 = pp(4, 4)
    pp8 = pp(8, 4)
    wrap_g = _with_extra(g16, [0, 1, 2, 3])
    out = [
        # A mismatch at one sequence number of a TP group, in a TP x DP job.
        Scenario(
            "sim_tp_dtype_mismatch",
            "nccl-format",
            Truth("RUN285", (6,), "2", 3, (("RUN281", (4,)),)),
            _sim(8, g8, tp_dp_program(g8, 5, (6, 3, bf16))),
            8,
        ),
        Scenario(
            "sim_tp_op_type_mismatch",
            "nccl-format",
            Truth("RUN282", (5,), "2", 3),
            _sim(8, g8, tp_dp_program(g8, 5, (5, 3, gather))),
            8,
        ),
        # Two-rank TP groups: the pair disagrees one against one; the other pairs show which is odd.
        Scenario(
            "sim_tp2_op_type_mismatch",
            "nccl-format",
            Truth("RUN282", (6,), "4", 3),
            _sim(8, g8x2, tp_dp_program(g8x2, 5, (6, 3, Op("4", "all_gather", ((8, 8),), ((16, 8),))))),
            8,
        ),
        Scenario(
            "sim_tp2_dtype_mismatch",
            "nccl-format",
            Truth("RUN285", (2,), "2", 4),
            _sim(8, g8x2, tp_dp_program(g8x2, 5, (2, 4, Op("2", "all_reduce", ((8, 8),), dtype="Half")))),
            8,
        ),
        Scenario(
            "sim_tp2_size_mismatch",
            "nccl-format",
            Truth("RUN284", (4,), "3", 2),
            _sim(8, g8x2, tp_dp_program(g8x2, 5, (4, 2, Op("3", "all_reduce", ((8, 16),))))),
            8,
        ),
        # A straggler: one rank stuck in its own code before a step's TP all_reduce.
        Scenario(
            "sim_straggler_16",
            "nccl-format",
            Truth("RUN281", (5,), "2", 6),
            _sim(16, g16, tp_dp_program(g16, 8), stop={5: 10}),
            16,
        ),
        Scenario(
            "sim_straggler_64",
            "nccl-format",
            Truth("RUN281", (37,), "5", 4),
            _sim(64, g64, tp_dp_program(g64, 6), stop={37: 6}),
            64,
        ),
        Scenario(
            "sim_straggler_64_dp_side",
            "nccl-format",
            Truth("RUN281", (58,), "11", 4),
            _sim(64, g64, tp_dp_program(g64, 6), stop={58: 7}),
            64,
        ),
        Scenario("sim_tp_dp_clean_64", "nccl-format", Truth(None), _sim(64, g64, tp_dp_program(g64, 6)), 64),
        # Pipelines: a stage that never posts its recv / its send.
        Scenario(
            "sim_pp_recv_never_posted",
            "nccl-format",
            Truth("RUN287", (2,)),
            _sim(4, pp4, pp_program(pp4, 4, 2, 4), stop={2: 10}),
        ),
        Scenario(
            "sim_pp_send_never_posted",
            "nccl-format",
            Truth("RUN287", (1,)),
            _sim(4, pp4, pp_program(pp4, 4, 2, 4), stop={1: 11}),
        ),
        Scenario(
            "sim_pp_dp_recv_never_posted",
            "nccl-format",
            Truth("RUN287", (6,), "2"),
            _sim(8, pp8, pp_program(pp8, 4, 3, 4), stop={6: 18}),
            8,
        ),
        Scenario("sim_pp_dp_clean", "nccl-format", Truth(None), _sim(8, pp8, pp_program(pp8, 4, 3, 4)), 8),
        Scenario(
            "sim_tp_pp_strided_send_never_posted",
            "nccl-format",
            Truth("RUN287", (4,)),
            _sim(8, tp_pp(8, 2), tp_pp_program(tp_pp(8, 2), 4), stop={4: 8}),
            8,
        ),
        Scenario(
            "sim_tp_pp_clean",
            "nccl-format",
            Truth(None),
            _sim(8, tp_pp(8, 2), tp_pp_program(tp_pp(8, 2), 4)),
            8,
        ),
        Scenario(
            "sim_pp_send_send_deadlock",
            "nccl-format",
            Truth("RUN287", (1, 2)),
            _sim(4, pp4, send_send_program(pp4, 4)),
        ),
        # Ring buffers that wrapped, more on the ranks busy in a group of their own.
        Scenario(
            "sim_wrapped_straggler_16",
            "nccl-format",
            Truth("RUN281", (9,)),
            _sim(16, wrap_g, _wrapped_extra(16, 4, 40, [0, 1, 2, 3]), stop={9: 70}, ring=24),
            16,
        ),
        Scenario(
            "sim_wrapped_clean_16",
            "nccl-format",
            Truth(None),
            _sim(16, wrap_g, _wrapped_extra(16, 4, 40, [0, 1, 2, 3]), ring=24),
            16,
        ),
        Scenario(
            "sim_wrapped_busy_straggler_16",
            "nccl-format",
            Truth("RUN281", (1,)),
            _sim(16, wrap_g, _wrapped_extra(16, 4, 40, [0, 1, 2, 3]), stop={1: 140}, ring=24),
            16,
        ),
        Scenario(
            "sim_wrapped_deep_straggler_16",
            "nccl-format",
            Truth("RUN281", (9,), "3", 36),
            _sim(16, wrap_g, _wrapped_extra(16, 4, 40, [0, 1, 2, 3], 12), stop={9: 70}, ring=16),
            16,
        ),
        Scenario(
            "sim_wrapped_deep_clean_16",
            "nccl-format",
            Truth(None),
            _sim(16, wrap_g, _wrapped_extra(16, 4, 40, [0, 1, 2, 3], 12), ring=16),
            16,
        ),
        # A rank died (no dump); only some ranks' dumps given.
        Scenario(
            "sim_no_dump_16",
            "nccl-format",
            Truth("RUN290", (9,)),
            _sim(16, g16, tp_dp_program(g16, 8), stop={9: 10}, dumped=[r for r in range(16) if r != 9]),
            16,
        ),
        Scenario(
            "sim_partial_tp_group_straggler",
            "nccl-format",
            Truth("RUN281", (5,), "2", 6),
            _sim(16, g16, tp_dp_program(g16, 8), stop={5: 10}, dumped=[4, 5, 6, 7]),
            16,
        ),
        Scenario(
            "sim_partial_tp_group_clean",
            "nccl-format",
            Truth(None),
            _sim(16, g16, tp_dp_program(g16, 8), dumped=[4, 5, 6, 7]),
            16,
        ),
        # DDP buckets in flight; FSDP's gathers and reduce_scatters.
        Scenario(
            "async_buckets_straggler",
            "nccl-format",
            Truth("RUN281", (3,), "0", 13),
            _manual(_async_buckets, 8, {"0": ("default_pg", list(range(8)))}),
            8,
        ),
        Scenario(
            "sim_fsdp_reduce_scatter_size",
            "nccl-format",
            Truth("RUN284", (3,), "0", 6),
            _sim(8, {"0": ("default_pg", list(range(8)))}, fsdp_program(8, 3, (3, 2))),
            8,
        ),
        Scenario(
            "sim_fsdp_clean",
            "nccl-format",
            Truth(None),
            _sim(8, {"0": ("default_pg", list(range(8)))}, fsdp_program(8, 3)),
            8,
        ),
        # The straggler's own dump, written on its own timeout, shows it in the collective, late.
        Scenario(
            "sim_late_straggler_16",
            "nccl-format",
            Truth("RUN281", (5,), "2", 6),
            _late(16, g16, tp_dp_program(g16, 8), 5, 10, 660),
            16,
        ),
        Scenario(
            "v20_late_straggler_16",
            "nccl-format",
            Truth("RUN281", (5,), "2", 6),
            restyled(_late(16, g16, tp_dp_program(g16, 8), 5, 10, 300), "2.0"),
            16,
        ),
        Scenario(
            "sim_slow_but_in_time_16",
            "nccl-format",
            Truth("RUN283", (4, 5, 6, 7), "2", 6),
            _late(16, g16, tp_dp_program(g16, 8), 5, 10, 30),
            16,
        ),
        Scenario(
            "nccl_pp_recv_posted_not_started",
            "nccl-format",
            Truth("RUN286", (2,)),
            _nccl(_pp_recv_scheduled, groups={"0": ("default_pg", [0, 1, 2, 3]), "1": ("pp", [0, 1, 2, 3])}),
        ),
        # Groups named as split_group names them: one name for every TP group, one for every DP group.
        Scenario(
            "split_named_straggler_16",
            "nccl-format",
            Truth("RUN281", (5,), "1", 6),
            split_named(_sim(16, g16, tp_dp_program(g16, 8), stop={5: 10}), SPLIT16),
            16,
        ),
        Scenario(
            "split_named_clean_16",
            "nccl-format",
            Truth(None),
            split_named(_sim(16, g16, fsdp_tp_program(g16, 4)), SPLIT16),
            16,
        ),
        Scenario(
            "split_named_dtype_8",
            "nccl-format",
            Truth("RUN285", (2,), "1", 4),
            split_named(
                _sim(8, g8x2, tp_dp_program(g8x2, 5, (2, 4, Op("2", "all_reduce", ((8, 8),), dtype="Half")))),
                {"1": "1", "2": "1", "3": "1", "4": "1", "5": "5", "6": "5"},
            ),
            8,
        ),
        # Dumps of active entries only (onlyActive=True).
        Scenario(
            "only_active_straggler_16",
            "nccl-format",
            Truth("RUN281", (5,), "2", 6),
            only_active(_sim(16, g16, tp_dp_program(g16, 8), stop={5: 10})),
            16,
        ),
        Scenario(
            "only_active_dtype_8",
            "nccl-format",
            Truth("RUN285", (6,), "2", 3),
            only_active(_sim(8, g8, tp_dp_program(g8, 5, (6, 3, bf16)))),
            8,
        ),
        Scenario(
            "only_active_pp_send_never_posted",
            "nccl-format",
            Truth("RUN287", (1,)),
            only_active(_sim(4, pp4, pp_program(pp4, 4, 2, 4), stop={1: 11})),
        ),
        # A TP pair disagreeing one against one, where onlyActive dropped what the sibling pairs
        # recorded at that number (they completed it): no side can be told odd, so both are named.
        Scenario(
            "only_active_tp2_size_tie",
            "nccl-format",
            Truth("RUN284", (6, 7), "4", 3),
            only_active(_sim(8, g8x2, tp_dp_program(g8x2, 5, (6, 3, Op("4", "all_reduce", ((8, 4),)))))),
            8,
        ),
        Scenario(
            "only_active_clean_16",
            "nccl-format",
            Truth(None),
            only_active(_sim(16, g16, tp_dp_program(g16, 8))),
            16,
        ),
        # A rank whose recorder was off: its dump has no entries, which says nothing.
        Scenario(
            "sim_empty_dump_straggler_16",
            "nccl-format",
            Truth("RUN281", (5,), "2", 6),
            emptied(_sim(16, g16, tp_dp_program(g16, 8), stop={5: 10}), [6]),
            16,
        ),
        Scenario(
            "sim_empty_dump_clean_16",
            "nccl-format",
            Truth(None),
            emptied(_sim(16, g16, tp_dp_program(g16, 8)), [11]),
            16,
        ),
        # A ring buffer that begins inside a coalesced group.
        Scenario(
            "nccl_wrap_cuts_coalesced_clean",
            "nccl-format",
            Truth(None),
            _nccl(_coalesced_wrap(False), ring=23, groups=PP),
        ),
        Scenario(
            "nccl_wrap_cuts_coalesced_missing",
            "nccl-format",
            Truth("RUN289", (2,), "0", 30),
            _nccl(_coalesced_wrap(True), ring=23, groups=PP),
        ),
        # Older recorders' field sets.
        Scenario(
            "v14_straggler",
            "nccl-format",
            Truth("RUN281", (2,), "0", 6),
            restyled(_sim(4, {"0": ("default_pg", [0, 1, 2, 3])}, world_program(8), stop={2: 5}), "1.4"),
        ),
        Scenario(
            "v14_clean",
            "nccl-format",
            Truth(None),
            restyled(_sim(4, {"0": ("default_pg", [0, 1, 2, 3])}, world_program(8)), "1.4"),
        ),
        Scenario(
            "v14_tp_op_type",
            "nccl-format",
            Truth("RUN282", (5,), "2", 3),
            restyled(_sim(8, g8, tp_dp_program(g8, 5, (5, 3, gather))), "1.4"),
            8,
        ),
        Scenario(
            "v14_pp_send_never_posted",
            "nccl-format",
            Truth("RUN287", (1,)),
            restyled(_sim(4, pp4, pp_program(pp4, 4, 2, 4), stop={1: 11}), "1.4"),
        ),
        Scenario(
            "v20_straggler_16",
            "nccl-format",
            Truth("RUN281", (5,), "2", 6),
            restyled(_sim(16, g16, tp_dp_program(g16, 8), stop={5: 10}), "2.0"),
            16,
        ),
        Scenario(
            "v23_scheduled_in_subgroup",
            "nccl-format",
            Truth("RUN286", (6,), "2", 5),
            restyled(_manual(_scheduled_in_subgroup, 8, g8), "2.3"),
            8,
        ),
        Scenario(
            "v23_pp_send_never_posted",
            "nccl-format",
            Truth("RUN287", (1,)),
            restyled(_sim(4, pp4, pp_program(pp4, 4, 2, 4), stop={1: 11}), "2.3"),
        ),
        Scenario(
            "hashed_straggler_16",
            "nccl-format",
            Truth("RUN281", (5,)),
            restyled(_sim(16, g16, tp_dp_program(g16, 8), stop={5: 10}), "hashed", HASHES),
            16,
        ),
        Scenario(
            "hashed_clean_16",
            "nccl-format",
            Truth(None),
            restyled(_sim(16, g16, tp_dp_program(g16, 8)), "hashed", HASHES),
            16,
        ),
        Scenario(
            "hashed_pp_dp_recv_never_posted",
            "nccl-format",
            Truth("RUN287", (6,)),
            restyled(_sim(8, pp8, pp_program(pp8, 4, 3, 4), stop={6: 18}), "hashed", HASHES),
            8,
        ),
    ]
    return out + gloo8_scenarios()


if __name__ == "__main__":
    import sys

    make_gloo8(sys.argv[1:])
