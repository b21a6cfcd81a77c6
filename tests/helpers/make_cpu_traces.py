"""Make the CPU ground-truth trace sets in tests/fixtures/traces/ from real gloo DDP runs.

    python -m tests.helpers.make_cpu_traces            # every set
    python -m tests.helpers.make_cpu_traces balanced   # one

Each set is a 4-rank DDP training loop on CPU (gloo) recorded with torch.profiler and
`tensorboard_trace_handler(..., use_gzip=True)`, one trace per rank, as a user would record it:

- cpu_balanced_4rank: every rank does the same work; no straggler.
- cpu_compute_rank2_4rank: rank 2 runs extra matrix multiplications in its forward pass
  (inside `record_function("extra_compute")`), so the others wait for it in the gradient
  all-reduce: straggler rank 2, cause compute.
- cpu_data_rank1_4rank: rank 1's dataset sleeps in __getitem__, so its DataLoader's __next__
  stalls every step: straggler rank 1, cause data.
- cpu_host_rank2_4rank: rank 2 sleeps 30 ms per step between its DataLoader and its forward, in
  no profiled op (Python work on the host): straggler rank 2, cause host.
- cpu_stop_rank2_4rank: rank 2 leaves its loop at the fourth active step (its profiler writes
  the trace) and never reaches the all-reduce; the others wait in it until gloo's 6 s timeout,
  then write theirs: rank 2's trace ends ~6 s before the others'.

Run once; the tests read the committed files and never run this script.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
WORLD = 4
SCENARIOS = {
    "balanced": ("cpu_balanced_4rank", None),
    "compute": ("cpu_compute_rank2_4rank", 2),
    "data": ("cpu_data_rank1_4rank", 1),
    "host": ("cpu_host_rank2_4rank", 2),
    "stop": ("cpu_stop_rank2_4rank", 2),
}


def _worker(rank: int, scenario: str, port: int, out: str) -> None:
    import datetime

    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.profiler import ProfilerActivity, profile, record_function, schedule, tensorboard_trace_handler
    from torch.utils.data import DataLoader, Dataset

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    # A short timeout: the ranks that wait for a stopped rank give up and write their traces.
    timeout = datetime.timedelta(seconds=6 if scenario == "stop" else 1800)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD, timeout=timeout)
    torch.manual_seed(0)
    slow = SCENARIOS[scenario][1]

    class Samples(Dataset):
        def __len__(self) -> int:
            return 10_000

        def __getitem__(self, i: int):
            if scenario == "data" and rank == slow:
                time.sleep(0.0025)  # a slow file system or decoder on this rank only
            return torch.randn(256), torch.randn(16)

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = torch.nn.Sequential(
                torch.nn.Linear(256, 512),
                torch.nn.ReLU(),
                torch.nn.Linear(512, 512),
                torch.nn.ReLU(),
                torch.nn.Linear(512, 16),
            )

        def forward(self, x):
            y = self.body(x)
            if scenario == "compute" and rank == slow:
                with record_function("extra_compute"):
                    a = torch.randn(384, 384)
                    for _ in range(12):
                        a = torch.tanh(a @ a)
                    y = y + 0 * a.sum()
            return y

    model = DDP(Net())
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = iter(DataLoader(Samples(), batch_size=16, num_workers=0))
    prof = profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=1, warmup=2, active=6, repeat=1),
        on_trace_ready=tensorboard_trace_handler(out, worker_name=f"rank{rank}", use_gzip=True),
    )
    try:
        with prof:
            for step in range(10):
                x, t = next(loader)
                if scenario == "host" and rank == slow:
                    time.sleep(0.03)  # host-side work outside every profiled op
                if scenario == "stop" and rank == slow and step == 6:
                    raise StopIteration  # leaves the loop: the profiler's exit writes the trace
                loss = torch.nn.functional.mse_loss(model(x), t)
                opt.zero_grad()
                loss.backward()
                opt.step()
                prof.step()
    except (StopIteration, RuntimeError):  # RuntimeError: gloo's timeout waiting for the stopped rank
        if scenario != "stop":
            raise
    if scenario == "stop":  # the stopped rank outlives the others' timeout, so spawn does not kill them
        time.sleep(12 if rank == slow else 0)
        os._exit(0)
    dist.barrier()
    dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def make(scenario: str) -> Path:
    import torch.multiprocessing as mp

    out = OUT / SCENARIOS[scenario][0]
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    ctx = mp.start_processes(
        _worker, args=(scenario, _free_port(), str(out)), nprocs=WORLD, join=False, start_method="spawn"
    )
    deadline = time.monotonic() + 180
    while not ctx.join(timeout=1):
        if time.monotonic() > deadline:
            for p in ctx.processes:
                p.kill()
            raise SystemExit(f"{scenario}: ranks did not finish within 180 s")
    return out


if __name__ == "__main__":
    for name in sys.argv[1:] or list(SCENARIOS):
        print(make(name))
