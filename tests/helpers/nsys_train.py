"""A user's training script, as the docs show it, for the tests that profile it under Nsight
Systems: DDP on gloo, `pgdoctor.instrument(model, optimizer)`, `pgdoctor.step`, a `data`
range and a user range with fields nested in the step. Run with torchrun (2 ranks)."""

from __future__ import annotations

import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

import pgdoctor

STEPS = int(os.environ.get("NSYS_TRAIN_STEPS", "3"))


def main() -> None:
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(
        nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 8)), bucket_cap_mb=0.1
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    pgdoctor.instrument(model, opt)
    for n in range(STEPS):
        with pgdoctor.step(n):
            with pgdoctor.range("data"):
                x, y = torch.randn(64, 256), torch.randn(64, 8)
            F.mse_loss(model(x), y).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            with pgdoctor.range("user.eval", split="val"), torch.no_grad():
                model.module(x).sum().item()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
