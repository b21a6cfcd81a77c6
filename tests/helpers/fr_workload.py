"""A real gloo job whose ranks leave flight-recorder dumps (pickle and JSON) in OUT.

    python -m tests.helpers.fr_workload SCENARIO OUT   (run per rank, with RANK/WORLD_SIZE/MASTER_* set)

Scenarios ok, skip, mismatch are the 3-rank jobs of the RUN28x code fixtures (every rank runs the
same collectives / rank 1 skips an all_reduce the others enter / rank 1 calls all_gather where the
others call all_reduce). The 4-rank scenarios of tests/helpers/fr_scenarios.py GLOO are the functions
below, named sc_<scenario>. The process-group timeout is short (FR_TIMEOUT_S, default 3 s) so
hung ranks fail fast with gloo's real "Timed out waiting ...ms for recv operation to complete";
a rank that "dies" leaves with os._exit before dumping.
"""

from __future__ import annotations

import datetime
import os
import sys
import time
from typing import Any


class Died(Exception):
    """This rank leaves without a dump (as a rank killed by the OOM killer would)."""


def _warmup(dist: Any, torch: Any, n: int = 3) -> Any:
    t = torch.ones(256)
    for _ in range(n):
        dist.all_reduce(t)
    dist.broadcast(t, 0)
    return t


def sc_ok(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    t = _warmup(dist, torch)
    dist.all_reduce(t)
    dist.barrier()


def sc_skip(rank: int, world: int, dist: Any, torch: Any, timeout: float, bad: int = 1) -> None:
    t = _warmup(dist, torch)
    if rank == bad:
        time.sleep(timeout + 1.5)  # never enters the all_reduce below
    else:
        dist.all_reduce(t)


def sc_mismatch(rank: int, world: int, dist: Any, torch: Any, timeout: float, bad: int = 1) -> None:
    t = _warmup(dist, torch)
    if rank == bad:
        dist.all_gather([torch.zeros(256) for _ in range(world)], t)
    else:
        dist.all_reduce(t)


def sc_clean_legal(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    """Collectives whose inputs differ per rank, legally."""
    t = _warmup(dist, torch)
    dist.all_gather([torch.zeros(256) for _ in range(world)], t)
    out = torch.zeros(16)
    dist.scatter(out, [torch.ones(16) for _ in range(world)] if rank == 0 else None, src=0)
    dist.gather(out, [torch.zeros(16) for _ in range(world)] if rank == 1 else None, dst=1)
    # Uneven all_to_all_single: rank r sends r+1 elements to every peer.
    dist.all_to_all_single(
        torch.zeros(sum(r + 1 for r in range(world))),
        torch.ones(world * (rank + 1)),
        output_split_sizes=[r + 1 for r in range(world)],
        input_split_sizes=[rank + 1] * world,
    )
    ops = [
        dist.P2POp(dist.isend, t, (rank + 1) % world),
        dist.P2POp(dist.irecv, torch.zeros(256), (rank - 1) % world),
    ]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    dist.all_gather_into_tensor(torch.zeros(256 * world), t)
    dist.reduce_scatter_tensor(torch.zeros(4), torch.ones(4 * world))
    dist.reduce(t, dst=2)
    dist.barrier()


def sc_monitored_barrier(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    """monitored_barrier consumes sequence numbers nobody records; then rank 2 skips an all_reduce."""
    t = _warmup(dist, torch)
    dist.monitored_barrier(timeout=datetime.timedelta(seconds=timeout))
    dist.all_reduce(t)
    if rank == 2:
        time.sleep(timeout + 1.5)
    else:
        dist.all_reduce(t)


def sc_monitored_barrier_clean(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    t = _warmup(dist, torch)
    dist.monitored_barrier(timeout=datetime.timedelta(seconds=timeout))
    dist.all_reduce(t)
    dist.monitored_barrier(timeout=datetime.timedelta(seconds=timeout))
    dist.all_reduce(t)


def sc_skip_last(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    sc_skip(rank, world, dist, torch, timeout, bad=world - 1)


def sc_culprit_rank0(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    sc_mismatch(rank, world, dist, torch, timeout, bad=0)


def sc_size_mismatch(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    """Rank 1 broadcasts into a larger buffer than its peers (gloo accepts the short message; a
    smaller buffer would make gloo abort that rank before it can dump)."""
    _warmup(dist, torch)
    dist.broadcast(torch.ones(512 if rank == 1 else 256), 0)
    dist.barrier()


def sc_size_mismatch_aborted(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    """Rank 1 all_reduces half the elements of its peers; gloo aborts rank 1 itself before it can dump."""
    _warmup(dist, torch)
    dist.all_reduce(torch.ones(128 if rank == 1 else 256))


def sc_subgroups_clean(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    """Subgroups side by side, only [0,1] used, plus a group over every rank: nothing is wrong."""
    t = _warmup(dist, torch)
    groups = _pairs(dist, world, timeout)
    every = dist.new_group(list(range(world)), timeout=datetime.timedelta(seconds=timeout))
    if rank < 2:
        for _ in range(3):
            dist.all_reduce(t, group=groups[0])
    dist.all_reduce(t, group=every)
    dist.barrier()


def sc_dtype_mismatch(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    _warmup(dist, torch)
    dist.broadcast(torch.ones(256, dtype=torch.float64 if rank == 3 else torch.float32), 0)


def _pairs(dist: Any, world: int, timeout: float) -> list[Any]:
    """Subgroups side by side, as TP groups are: [0,1], [2,3], ..."""
    return [
        dist.new_group(list(range(i, i + 2)), timeout=datetime.timedelta(seconds=timeout))
        for i in range(0, world, 2)
    ]


def sc_subgroup_never_issued(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    """Rank 1 never issues its subgroup's first collective; its dump has no trace of the group."""
    t = _warmup(dist, torch)
    groups = _pairs(dist, world, timeout)
    mine = groups[rank // 2]
    if rank == 1:
        time.sleep(timeout + 1.5)
        return
    dist.all_reduce(t, group=mine)


def sc_subgroup_died(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    """Subgroups exist; rank 3 dies without a dump before a world all_reduce."""
    t = _warmup(dist, torch)
    groups = _pairs(dist, world, timeout)
    dist.all_gather_into_tensor(torch.zeros(256 * world), t)
    dist.all_reduce(t, group=groups[rank // 2])
    if rank == 3:
        raise Died()
    dist.all_reduce(t)


def sc_died(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    t = _warmup(dist, torch)
    if rank == 2:
        raise Died()
    dist.all_reduce(t)


def sc_died_after(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    """Rank 2 dies after the last collective: the dumps that exist agree; only its dump is missing."""
    sc_ok(rank, world, dist, torch, timeout)
    if rank == 2:
        raise Died()


def sc_cross_group_deadlock(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    """Ranks 0,2,3 enter group B then the world group; rank 1 the other way round."""
    t = _warmup(dist, torch)
    b = dist.new_group(list(range(world)), timeout=datetime.timedelta(seconds=timeout))
    if rank == 1:
        dist.all_reduce(t)
        dist.all_reduce(t, group=b)
    else:
        dist.all_reduce(t, group=b)
        dist.all_reduce(t)


def sc_two_faults(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    """Independent faults in two subgroups: rank 1 skips in [0,1]; rank 3 calls the wrong op in [2,3]."""
    t = _warmup(dist, torch)
    groups = _pairs(dist, world, timeout)
    mine = groups[rank // 2]
    if rank == 1:
        time.sleep(timeout + 1.5)
    elif rank == 3:
        dist.all_gather([torch.zeros(256) for _ in range(2)], t, group=mine)
    else:
        dist.all_reduce(t, group=mine)


def sc_ring_wrap(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    """Record ids out of step (the subgroups ran different numbers of collectives), then 1000 good
    world all_reduces wrap the ring buffer, then rank 2 skips one."""
    t = torch.ones(4)
    groups = _pairs(dist, world, timeout)
    for _ in range(7 if rank < 2 else 2):
        dist.all_reduce(t, group=groups[rank // 2])
    for _ in range(1000):
        dist.all_reduce(t)
    if rank == 2:
        time.sleep(timeout + 1.5)
    else:
        dist.all_reduce(t)


def sc_alltoall_splits(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    """all_to_all_single with even splits of 2 elements per peer, except that rank 2 believes it
    sends 3 to each: splits that cannot agree (gloo aborts rank 2 on its own check, the others
    time out; every rank recorded the collective first)."""
    _warmup(dist, torch)
    mine = 3 if rank == 2 else 2
    dist.all_to_all_single(
        torch.zeros(2 * world),
        torch.ones(world * mine),
        output_split_sizes=[2] * world,
        input_split_sizes=[mine] * world,
    )
    dist.barrier()


def sc_subgroup3_never_issued(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    """One subgroup of three ranks [1,2,3]; rank 3 never issues its first collective."""
    t = _warmup(dist, torch)
    g = dist.new_group([1, 2, 3], timeout=datetime.timedelta(seconds=timeout))
    if rank == 3:
        time.sleep(timeout + 1.5)
        return
    if rank in (1, 2):
        dist.all_reduce(t, group=g)
    dist.barrier()


def sc_strided_never_issued(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    """Strided subgroups [0,2] and [1,3] (data-parallel groups across tensor-parallel pairs); rank 2
    never issues the first collective of [0,2] while [1,3] runs its own."""
    t = _warmup(dist, torch)
    groups = [
        dist.new_group([0, 2], timeout=datetime.timedelta(seconds=timeout)),
        dist.new_group([1, 3], timeout=datetime.timedelta(seconds=timeout)),
    ]
    if rank == 2:
        time.sleep(timeout + 1.5)
        return
    dist.all_reduce(t, group=groups[rank % 2])


def _tp_dp(dist: Any, rank: int, world: int, timeout: float, tp: int = 2) -> tuple[Any, Any]:
    """TP groups of `tp` consecutive ranks, then DP groups across them (strided), every rank
    creating every group in one order as new_group requires; this rank's TP and DP group."""
    td = datetime.timedelta(seconds=timeout)
    tps = [dist.new_group(list(range(i, i + tp)), timeout=td) for i in range(0, world, tp)]
    dps = [dist.new_group(list(range(j, world, tp)), timeout=td) for j in range(tp)]
    return tps[rank // tp], dps[rank % tp]


def _tp_dp_steps(
    rank: int, world: int, dist: Any, torch: Any, timeout: float, odd: Any = None, steps: int = 4
) -> None:
    """Each step an all_reduce in the TP group, then one in the DP group. odd(rank, step, tp_group)
    returns True when it did that step's TP op itself (the fault)."""
    t = _warmup(dist, torch, 1)
    tp, dp = _tp_dp(dist, rank, world, timeout)
    for step in range(steps):
        if not (odd and odd(rank, step, tp)):
            dist.all_reduce(t, group=tp)
        dist.all_reduce(torch.ones(64), group=dp)


def sc_tp_dp_clean(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    _tp_dp_steps(rank, world, dist, torch, timeout)


def sc_tp_dp_straggler(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    """Rank 5 is stuck in its own code before step 2's TP all_reduce (then leaves, and dumps)."""

    def odd(r: int, step: int, tp: Any) -> bool:
        if r == 5 and step == 2:
            time.sleep(timeout + 1.5)
            raise RuntimeError("rank 5 gave up")
        return False

    _tp_dp_steps(rank, world, dist, torch, timeout, odd)


def sc_tp_dp_first_straggler(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    """Rank 5 is stuck before its very first TP all_reduce: its dump has no trace of its TP or DP
    group, and gloo's pg_config does not list their ranks."""

    def odd(r: int, step: int, tp: Any) -> bool:
        if r == 5 and step == 0:
            time.sleep(timeout + 1.5)
            raise RuntimeError("rank 5 gave up")
        return False

    _tp_dp_steps(rank, world, dist, torch, timeout, odd)


def sc_tp_dp_op_mismatch(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    """Rank 6 calls all_gather where its TP partner (rank 7) and every other pair all_reduce, at
    step 1: a pair disagrees one against one."""

    def odd(r: int, step: int, tp: Any) -> bool:
        if r == 6 and step == 1:
            dist.all_gather([torch.zeros(256) for _ in range(2)], torch.ones(256), group=tp)
            return True
        return False

    _tp_dp_steps(rank, world, dist, torch, timeout, odd)


def main() -> None:
    scenario, out = sys.argv[1], sys.argv[2]
    import torch
    import torch.distributed as dist

    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    timeout = float(os.environ.get("FR_TIMEOUT_S", "3"))
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=timeout))
    failed = False
    try:
        globals()[f"sc_{scenario}"](rank, world, dist, torch, timeout)
    except Died:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(9)
    except RuntimeError as exc:
        failed = True
        print(f"[rank{rank}]: RuntimeError: {exc}", file=sys.stderr, flush=True)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, f"rank{rank}.pkl"), "wb") as fh:
        fh.write(torch._C._distributed_c10d._dump_fr_trace())
    data = torch._C._distributed_c10d._dump_fr_trace_json()
    with open(os.path.join(out, f"rank{rank}.json"), "wb" if isinstance(data, bytes) else "w") as fh:
        fh.write(data)
    # torch's header-only dumps (includeCollectives=False: pg_config and pg_status, no entries),
    # where FR_STATUS_DIR asks for them.
    status = os.environ.get("FR_STATUS_DIR")
    if status:
        os.makedirs(status, exist_ok=True)
        with open(os.path.join(status, f"rank{rank}.pkl"), "wb") as fh:
            fh.write(torch._C._distributed_c10d._dump_fr_trace(includeCollectives=False))
        data = torch._C._distributed_c10d._dump_fr_trace_json(includeCollectives=False)
        with open(os.path.join(status, f"rank{rank}.json"), "wb" if isinstance(data, bytes) else "w") as fh:
            fh.write(data)
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: destroying a gloo group whose peers timed out can block for
    # many seconds, and the dumps are already written.
    os._exit(1 if failed else 0)


if __name__ == "__main__":
    main()
