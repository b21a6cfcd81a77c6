"""A 2-rank gloo job run under real torchrun by tests/helpers/make_real_torchrun_logs.py: rank 1 fails in
the named way (exception, sigkill, segfault) or hangs past the 3 s process-group timeout."""

import ctypes
import datetime
import os
import signal
import sys
import time

import torch
import torch.distributed as dist

mode = sys.argv[1]
rank = int(os.environ["RANK"])
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=3))
t = torch.ones(16)
dist.all_reduce(t)
print(f"step 1 loss 2.31 on rank {rank}", flush=True)
if rank == 1:
    if mode == "exception":
        raise ValueError("sample 17 has 0 tokens")
    if mode == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "segfault":
        ctypes.string_at(0)
    if mode == "hang":
        time.sleep(8)
dist.all_reduce(t)
dist.destroy_process_group()
