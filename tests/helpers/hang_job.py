"""A small gloo job run under torchrun by the hang tests, one scenario per argv[1]. Every rank
writes $HANG_READY_DIR/ready-<rank> right before the call where it stays, so a test knows when
the job is in place; nothing blocks longer than $HANG_LIFE_S (the job ends by itself).

    sleep RANKS       those ranks sleep in hang_culprit.nap, the others wait in all_reduce
    lock R            rank R blocks on a lock, the others wait in all_reduce
    dataloader R      rank R waits for its DataLoader worker (stuck in hang_culprit.SlowData)
    mixed L D         8-rank case: rank L on a lock, rank D on its DataLoader worker
    collective R      rank R waits in a barrier of a subgroup, the others in all_reduce
    healthy           every rank steps (all_reduce + a little compute) until its life ends
    raise R           rank R raises after the first step
    spin R            rank R sleeps in hang_culprit.nap, the others spin on their all_reduce's
                      work handle (a busy-wait: a core each, no step)
With PGDOCTOR_TEST_LIVE=1 every rank opts into pgdoctor's live socket first; with
TORCH_WORKER_SERVER_SOCKET=BASE every rank serves torch's worker server on BASE-rank<R>.sock.
"""

import datetime
import os
import sys
import threading
import time

import torch
import torch.distributed as dist

from tests.helpers import hang_culprit

LIFE_S = float(os.environ.get("HANG_LIFE_S", "60"))
scenario, args = sys.argv[1], [int(a) for a in sys.argv[2:]]
rank = int(os.environ["RANK"])
if os.environ.get("PGDOCTOR_TEST_LIVE") == "1":
    import pgdoctor

    pgdoctor.live()
if os.environ.get("TORCH_WORKER_SERVER_SOCKET"):
    from torch.distributed.elastic.control_plane import worker_main

    # torchrun gives every rank one value, and two ranks cannot serve one path: one per rank.
    os.environ["TORCH_WORKER_SERVER_SOCKET"] += f"-rank{rank}.sock"
    SERVER = worker_main()  # kept: the server shuts down when this is collected
    SERVER.__enter__()
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=LIFE_S))
t = torch.ones(8)
dist.all_reduce(t)  # everyone is up
print(f"rank {rank} step 0", flush=True)


def ready() -> None:
    d = os.environ.get("HANG_READY_DIR")
    if d:
        with open(os.path.join(d, f"ready-{rank}"), "w") as fh:
            fh.write(str(os.getpid()))


def spin_all_reduce(x: torch.Tensor) -> None:
    """An all_reduce waited for by polling its work handle: the frame stays on the loop while the
    rank burns a core (as a rank does in NCCL's spin or in hand-made overlap code)."""
    work = dist.all_reduce(x, async_op=True)
    while not work.is_completed():
        pass


def wait_for_peers() -> None:
    ready()
    dist.all_reduce(t)  # the others wait here


if scenario == "sleep":
    if rank in args:
        ready()
        hang_culprit.nap(LIFE_S)
    else:
        wait_for_peers()
elif scenario in ("lock", "mixed", "dataloader"):
    lock_rank = args[0] if scenario in ("lock", "mixed") else -1
    data_rank = args[-1] if scenario in ("dataloader", "mixed") else -1
    if rank == lock_rank:
        lock = threading.Lock()
        lock.acquire()
        ready()
        lock.acquire(timeout=LIFE_S)  # nobody releases it
    elif rank == data_rank:
        loader = torch.utils.data.DataLoader(hang_culprit.SlowData(LIFE_S), num_workers=1)
        it = iter(loader)
        time.sleep(0.5)  # the worker process is up
        ready()
        next(it)
    else:
        wait_for_peers()
elif scenario == "collective":
    sub = dist.new_group([0, args[0]])
    if rank == args[0]:
        ready()
        dist.barrier(group=sub)
    else:
        wait_for_peers()
elif scenario == "spin":
    if rank == args[0]:
        ready()
        hang_culprit.nap(LIFE_S)
    else:
        ready()
        spin_all_reduce(t)
elif scenario == "healthy":
    end = time.monotonic() + LIFE_S
    ready()
    n = 0
    while True:  # rank 0 says when to stop, so every rank leaves after the same step
        x = torch.randn(256, 256)
        for _ in range(10):  # a few ms of compute: the CPU time grows
            x = x @ x.T / 256
        time.sleep(0.005)  # the data wait of a step: the frame moves between these lines
        stop = torch.tensor([1.0 if rank == 0 and time.monotonic() > end else 0.0])
        dist.all_reduce(stop)
        n += 1
        if stop.item() > 0:
            break
    print(f"rank {rank} did {n} steps", flush=True)
elif scenario == "raise":
    if rank == args[0]:
        # The group stays alive: torch 2.13 on gloo then sometimes aborts in a static destructor
        # after the uncaught exception (exit -6 instead of 1), and diagnose must still name the
        # exception, not the abort.
        raise RuntimeError(f"rank {rank}: sample 17 has 0 tokens")
    wait_for_peers()
dist.destroy_process_group()
