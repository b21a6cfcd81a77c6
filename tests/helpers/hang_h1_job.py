"""Hung gloo jobs for tests/hang/test_h1_jobs.py, one scenario per argv[1]; every rank writes
$HANG_READY_DIR/ready-<rank> right before the call where it stays, and nothing blocks past
$HANG_LIFE_S. Run by torchrun (RANK in the environment) or by `spawn N PORT SCENARIO` (mp.spawn; each
rank gets its rank as an argument, as the tutorials do, and /proc shows no RANK).

    ring        every rank sends a 16 MiB tensor to the next before it receives: a send/send cycle
    queue R     rank R waits on a queue.Queue nobody fills; the others wait in all_reduce
    regex R     rank R backtracks in re's C engine holding the GIL (its socket cannot answer; it
                runs until the test kills it); the others wait in all_reduce
    subgroup R  ranks 0..R of a subgroup: the members but R wait in its all_reduce, R and the
                ranks outside it wait on a queue (only R holds the subgroup)
With PGDOCTOR_TEST_LIVE=1 every rank opts into pgdoctor's live socket first.
"""

import datetime
import os
import queue
import re
import sys

import torch
import torch.distributed as dist

LIFE_S = float(os.environ.get("HANG_LIFE_S", "60"))


def ready(rank: int) -> None:
    with open(os.path.join(os.environ["HANG_READY_DIR"], f"ready-{rank}"), "w") as fh:
        fh.write(str(os.getpid()))


def wait_on_queue() -> None:
    queue.Queue().get(timeout=LIFE_S)  # nobody puts


def body(rank: int, world: int, scenario: str, args: list[int]) -> None:
    if os.environ.get("PGDOCTOR_TEST_LIVE") == "1":
        import pgdoctor

        pgdoctor.live()
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=LIFE_S))
    t = torch.ones(4)
    dist.all_reduce(t)
    if scenario == "ring":
        big = torch.ones(1 << 22)  # past gloo's eager size: a send waits for its receive
        ready(rank)
        dist.send(big, (rank + 1) % world)  # every rank is here
        dist.recv(big, (rank - 1) % world)
    elif scenario == "queue":
        ready(rank)
        if rank == args[0]:
            wait_on_queue()
        else:
            dist.all_reduce(t)  # the others wait here
    elif scenario == "regex":
        ready(rank)
        if rank == args[0]:
            re.match(r"(a*)*b", "a" * 64)  # exponential backtracking in C
        else:
            dist.all_reduce(t)
    elif scenario == "subgroup":
        sub = dist.new_group(list(range(args[0] + 1)))  # every rank creates it
        ready(rank)
        if rank < args[0]:
            dist.all_reduce(t, group=sub)  # the members wait here
        else:
            wait_on_queue()
    dist.destroy_process_group()


def spawned(index: int, world: int, port: str, scenario: str, args: list[int]) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
    body(index, world, scenario, args)


if __name__ == "__main__":
    if sys.argv[1] == "spawn":
        import torch.multiprocessing as mp

        n = int(sys.argv[2])
        port, scenario = sys.argv[3], sys.argv[4]
        mp.spawn(spawned, args=(n, port, scenario, [int(a) for a in sys.argv[5:]]), nprocs=n)
    else:
        body(
            int(os.environ["RANK"]),
            int(os.environ["WORLD_SIZE"]),
            sys.argv[1],
            [int(a) for a in sys.argv[2:]],
        )
