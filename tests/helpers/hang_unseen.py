"""A frozen set of hung gloo jobs `pgdoctor hang` was not written against (tests/hang/test_hang_unseen.py
scores it; tests/helpers/hang_unseen.md lists the expected answers). Written before pgdoctor was
run on any of them; the expectations in EXPECTED are not to be edited to match pgdoctor.

A rank runs `python -m tests.helpers.hang_unseen SCENARIO` with RANK, WORLD_SIZE, MASTER_ADDR and
MASTER_PORT in its environment (torchrun, or `plain` below), or is started by mp.spawn through
`spawn N PORT SCENARIO`. Launchers:

    plain N PORT SCENARIO [WORLD]   N rank processes started with `python` each (env://, no
                                    torchrun), WORLD_SIZE=WORLD (default N); waits for them
    spawn N PORT SCENARIO           torch.multiprocessing.spawn (ranks carry no RANK in /proc)

Every rank writes $HANG_READY_DIR/ready-<rank> right before the call where it stays, and every
rank process ends itself after $HANG_LIFE_S (+5 s) whatever it is blocked in (a timer thread
calls os._exit), so nothing outlives a test even if the test's own cleanup never runs. The
launchers import no torch (only their ranks do).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Optional

LIFE_S = float(os.environ.get("HANG_LIFE_S", "60"))


@dataclass(frozen=True)
class Expected:
    """What a correct `pgdoctor hang` says of the scenario's job."""

    world: int  # WORLD_SIZE of the job
    started: int  # rank processes started (fewer than world: the others never came)
    code: str  # the fail finding: HNG101 (a culprit), HNG102 (all wait: missing ranks or p2p)
    culprits: tuple[int, ...]  # hang.jobs[].culprits
    frame: str  # marker comment on the culprit's line in this file ('' for HNG102: the waiters' line)
    wait_in: str  # the torch.distributed call the waiting ranks wait in
    missing: tuple[int, ...] = ()  # HNG102: the ranks not seen
    note: str = ""


EXPECTED: dict[str, Expected] = {
    "ckpt": Expected(2, 2, "HNG101", (0,), "U:slow-write", "barrier",
                     note="rank 0 inside torch.save writing to a slow sink; rank 1 in barrier"),
    "fifo": Expected(2, 2, "HNG101", (1,), "U:fifo-open", "all_reduce",
                     note="rank 1 blocked in open() of a FIFO with no writer: in the kernel"),
    "desync": Expected(3, 3, "HNG101", (2,), "U:desync-gather", "all_reduce",
                       note="ranks 0-1 in all_reduce, rank 2 in all_gather: the odd one out is the culprit"),
    "early-end": Expected(3, 3, "HNG101", (2,), "U:final-barrier", "all_reduce",
                          note="rank 2 ran out of batches and waits in the script's final barrier while 0-1 "
                          "wait in the next step's all_reduce (a rank that returned outright is no hang on "
                          "gloo: its peers fail at once with 'Connection closed by peer')"),
    "norendezvous": Expected(3, 2, "HNG102", (), "U:init", "init_process_group", missing=(2,),
                             note="world 3, rank 2 never started: 0-1 wait in init_process_group's store"),
    "subgroup": Expected(3, 3, "HNG101", (2,), "U:sub-nap", "all_reduce",
                         note="rank 0 steps forever in its own group {0}; rank 1 waits in all_reduce of "
                         "{1, 2}; rank 2 naps: the job is hung for group {1, 2} though rank 0 moves"),
    "deadlock": Expected(2, 2, "HNG101", (1,), "U:deadlock-main", "all_reduce",
                         note="rank 1's main thread and a worker thread hold crossed locks"),
    "subprocess": Expected(2, 2, "HNG101", (0,), "U:subprocess", "all_reduce",
                           note="rank 0 in subprocess.run of a child that sleeps (the child inherits RANK=0; "
                           "it is not a rank)"),
    "busy": Expected(2, 2, "HNG101", (1,), "U:busy", "all_reduce",
                     note="rank 1 polls for a file that never comes, in a pure-Python loop (a core busy, "
                     "no collective); rank 0 waits in all_reduce"),
    "spawn-deadlock": Expected(2, 2, "HNG101", (1,), "U:deadlock-main", "all_reduce",
                               note="deadlock, started by mp.spawn : no RANK in /proc"),
    "torchrun-fifo": Expected(2, 2, "HNG101", (1,), "U:fifo-open", "all_reduce",
                              note="fifo under torchrun; also under `pgdoctor run --stall-after`"),
    "two-jobs": Expected(2, 2, "HNG101", (0,), "U:slow-write", "barrier",
                         note="ckpt and fifo run at once on the host: `pgdoctor hang` with no PID keeps two "
                         "jobs, each with its own world size 2 and culprit (ckpt: 0, fifo: 1)"),
}  # fmt: skip


def ready(rank: int) -> None:
    d = os.environ.get("HANG_READY_DIR")
    if d:
        with open(os.path.join(d, f"ready-{rank}"), "w") as fh:
            fh.write(str(os.getpid()))


def life_bound() -> None:
    """End this process after its life whatever the main thread is blocked in (a FIFO's open, a
    deadlock): os._exit from a daemon timer, so no test can leave a rank behind."""
    t = threading.Timer(LIFE_S + 5.0, os._exit, (0,))
    t.daemon = True
    t.start()


class SlowSink:
    """A file-like object torch.save writes a checkpoint to, on a slow disk that never finishes."""

    def __init__(self) -> None:
        self.n = 0

    def write(self, data: Any) -> int:
        time.sleep(LIFE_S)  # U:slow-write
        self.n += len(data)
        return len(data)

    def flush(self) -> None:
        pass


def take_lock_then(
    first: threading.Lock, second: threading.Lock, got: tuple[threading.Event, threading.Event]
) -> None:
    with first:
        got[0].set()
        got[1].wait(timeout=LIFE_S)  # the main thread holds `second` now: the lock order is crossed
        second.acquire(timeout=LIFE_S)  # U:deadlock-thread


def body(rank: int, world: int, scenario: str) -> None:
    import datetime

    import torch
    import torch.distributed as dist

    life_bound()
    timeout = datetime.timedelta(seconds=LIFE_S)
    ready_dir = os.environ.get("HANG_READY_DIR", "/tmp")
    if scenario == "norendezvous":
        ready(rank)
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timeout)  # U:init
    t = torch.ones(4)
    dist.all_reduce(t)  # everyone is up
    print(f"rank {rank} step 0", flush=True)

    def wait() -> None:
        ready(rank)
        dist.all_reduce(t)  # U:wait

    if scenario == "ckpt":
        ready(rank)
        if rank == 0:
            torch.save({"w": torch.zeros(1024)}, SlowSink())
        dist.barrier()  # U:barrier
    elif scenario == "fifo":
        if rank == 1:
            path = os.path.join(ready_dir, f"fifo-{os.getpid()}")
            os.mkfifo(path)
            ready(rank)
            with open(path, "rb") as fh:  # U:fifo-open
                fh.read()
        else:
            wait()
    elif scenario == "desync":
        ready(rank)
        if rank == 2:
            out = [torch.empty(4) for _ in range(world)]
            dist.all_gather(out, t)  # U:desync-gather
        else:
            dist.all_reduce(t)  # U:desync-reduce
    elif scenario == "early-end":
        if rank == 2:
            ready(rank)
            dist.barrier()  # U:final-barrier
        else:
            wait()
    elif scenario == "subgroup":
        alone = dist.new_group([0])  # every rank creates every group
        pair = dist.new_group([1, 2])
        ready(rank)
        if rank == 0:
            x = torch.ones(4)
            end = time.monotonic() + LIFE_S
            while time.monotonic() < end:
                dist.all_reduce(x, group=alone)  # U:sub-step
                time.sleep(0.02)
        elif rank == 1:
            dist.all_reduce(t, group=pair)  # U:sub-wait
        else:
            time.sleep(LIFE_S)  # U:sub-nap
    elif scenario in ("deadlock", "spawn-deadlock"):
        if rank == 1:
            a, b = threading.Lock(), threading.Lock()
            got = (threading.Event(), threading.Event())
            threading.Thread(target=take_lock_then, args=(a, b, got), daemon=True).start()
            got[0].wait(timeout=LIFE_S)
            with b:
                got[1].set()
                ready(rank)
                a.acquire(timeout=LIFE_S)  # U:deadlock-main
        else:
            wait()
    elif scenario == "subprocess":
        if rank == 0:
            ready(rank)
            child = [sys.executable, "-c", f"import time; time.sleep({LIFE_S})"]
            subprocess.run(child, check=False)  # U:subprocess
        else:
            wait()
    elif scenario == "busy":
        if rank == 1:
            ready(rank)
            flag = os.path.join(ready_dir, "never-written")
            end = time.monotonic() + LIFE_S
            while not os.path.exists(flag) and time.monotonic() < end:  # U:busy
                pass
        else:
            wait()
    else:
        raise SystemExit(f"unknown scenario {scenario!r}")


def spawned(index: int, world: int, port: str, scenario: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
    body(index, world, scenario)


def plain(n: int, port: str, scenario: str, world: Optional[int]) -> int:
    """N ranks started with `python` each, as a shell loop would; waits for them all and, like a
    driver that swallows failures (a shell's bare `wait`), exits 0 whatever they did."""
    procs = []
    for r in range(n):
        env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(world or n), LOCAL_RANK=str(r),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=port)  # fmt: skip
        procs.append(subprocess.Popen([sys.executable, "-m", "tests.helpers.hang_unseen", scenario], env=env))
    end = time.monotonic() + LIFE_S + 10
    for p in procs:
        try:
            p.wait(timeout=max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "plain":
        sys.exit(
            plain(int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]) if len(sys.argv) > 5 else None)
        )
    elif sys.argv[1] == "spawn":
        import torch.multiprocessing as mp

        n = int(sys.argv[2])
        mp.spawn(spawned, args=(n, sys.argv[3], sys.argv[4]), nprocs=n)
    else:
        body(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), sys.argv[1])
