"""The real gloo jobs behind tests/fixtures/fr/f1_*.tar (torch 2.13.0 CPU, TORCH_FR_BUFFER_SIZE=200).

    python -m tests.helpers.f1_fr_workload SCENARIO WORLD OUT [FR_TIMEOUT_S=3 [BUFFER=200]]

starts WORLD ranks on loopback, each running sc_<SCENARIO>, and leaves in OUT each rank's
`_dump_fr_trace()` pickle as rank<N>.pkl, its `_dump_fr_trace_json()` as rank<N>.json and its
output as rank<N>.log. A rank that aborts (gloo's own size check) leaves no dump.

- interleave (4 ranks): groups A=[0,1,2] and B=[1,2,3]; rank 2 enters B before A, the others A
  before B: a deadlock between two overlapping groups (gloo's pg_config lists no subgroup ranks).
- hang_one (16 ranks, FR_TIMEOUT_S=8): rank 11 never enters the third all_gather_into_tensor.
- far_wrapped (4 ranks, BUFFER=64): ranks 0-2 queue 300 async all_reduces, rank 3 five and
  stops: the peers' ring buffers wrapped past the sequence number rank 3 never reached.
- tp_dp_skip (8 ranks, FR_TIMEOUT_S=6): TP pairs and two DP groups of 4; rank 6 stops before its
  third DP all_reduce. f1_tp_dp_no_dump6.tar holds every dump but rank 6's (as if it had died).
- pp_size (4 ranks): a pipeline of send/recv (gloo records none); stage 2 sends 512 elements
  where stage 3 receives 256: gloo aborts rank 3, rank 2's send fails, ranks 0-1 wait in a barrier.
"""

from __future__ import annotations

import datetime
import os
import socket
import subprocess
import sys
import time
from typing import Any


def _warm(dist: Any, torch: Any) -> Any:
    t = torch.ones(256)
    for _ in range(3):
        dist.all_reduce(t)
    return t


def sc_interleave(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    t = _warm(dist, torch)
    td = datetime.timedelta(seconds=timeout)
    a = dist.new_group([0, 1, 2], timeout=td)
    b = dist.new_group([1, 2, 3], timeout=td)
    for g in [b, a] if rank == 2 else [a, b]:
        if rank in dist.get_process_group_ranks(g):
            dist.all_reduce(t, group=g)
    dist.barrier()


def sc_hang_one(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    t = _warm(dist, torch)
    for step in range(3):
        if rank == 11 and step == 2:
            time.sleep(timeout + 1.5)
            return
        dist.all_gather_into_tensor(torch.zeros(256 * world), t)


def sc_pp_size(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    _warm(dist, torch)
    for mb in range(3):
        x = torch.zeros(256)
        if rank > 0:
            dist.recv(x, rank - 1)
        if rank < world - 1:
            dist.send(torch.ones(512 if (rank == 2 and mb == 1) else 256), rank + 1)
    dist.barrier()


def sc_far_wrapped(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    _warm(dist, torch)
    works = [dist.all_reduce(torch.ones(8), async_op=True) for _ in range(5 if rank == 3 else 300)]
    if rank == 3:
        time.sleep(timeout + 1.5)
        return
    for w in works:
        w.wait()


def sc_tp_dp_skip(rank: int, world: int, dist: Any, torch: Any, timeout: float) -> None:
    t = torch.ones(256)
    dist.all_reduce(t)
    td = datetime.timedelta(seconds=timeout)
    tps = [dist.new_group(list(range(i, i + 2)), timeout=td) for i in range(0, world, 2)]
    dps = [dist.new_group(list(range(j, world, 2)), timeout=td) for j in range(2)]
    for step in range(4):
        dist.all_reduce(t, group=tps[rank // 2])
        if rank == 6 and step == 2:
            time.sleep(timeout + 1.5)
            raise RuntimeError("rank 6 gave up")
        dist.all_reduce(torch.ones(64), group=dps[rank % 2])


def rank_main(scenario: str, out: str) -> None:
    import torch
    import torch.distributed as dist

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    timeout = float(os.environ.get("FR_TIMEOUT_S", "3"))
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=timeout))
    failed = False
    try:
        globals()[f"sc_{scenario}"](rank, world, dist, torch, timeout)
    except RuntimeError as exc:
        failed = True
        print(f"[rank{rank}]: RuntimeError: {exc}", file=sys.stderr, flush=True)
    with open(os.path.join(out, f"rank{rank}.pkl"), "wb") as fh:
        fh.write(torch._C._distributed_c10d._dump_fr_trace())
    data = torch._C._distributed_c10d._dump_fr_trace_json()
    with open(os.path.join(out, f"rank{rank}.json"), "wb" if isinstance(data, bytes) else "w") as fh:
        fh.write(data)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(1 if failed else 0)  # a gloo group whose peers timed out can block teardown


def launch(scenario: str, world: int, out: str, timeout: str = "3", buffer: str = "200") -> list[int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.makedirs(out, exist_ok=True)
    procs = []
    for r in range(world):
        env = dict(
            os.environ,
            RANK=str(r),
            WORLD_SIZE=str(world),
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(port),
            TORCH_FR_BUFFER_SIZE=buffer,
            FR_TIMEOUT_S=timeout,
            OMP_NUM_THREADS="1",
        )
        with open(os.path.join(out, f"rank{r}.log"), "w") as log:
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "tests.helpers.f1_fr_workload", "--rank", scenario, out],
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
    deadline = time.monotonic() + 150
    for p in procs:
        try:
            p.wait(max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, 9)
            p.wait()
    return [p.returncode for p in procs]


if __name__ == "__main__":
    if sys.argv[1] == "--rank":
        rank_main(sys.argv[2], sys.argv[3])
    else:
        print(launch(sys.argv[1], int(sys.argv[2]), sys.argv[3], *sys.argv[4:6]))
