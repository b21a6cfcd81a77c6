"""The training step the lab's DDP and TP jobs share: random regression data, forward,
backward, optimizer step, each phase under pgdoctor's NVTX ranges (the model's hooks add
fwd/bwd/optim; the data range is opened here)."""

from __future__ import annotations

from typing import Any

import torch

from pgdoctor.trace import instrument as ins


def regression_step(model: Any, opt: Any, gen: torch.Generator, batch: int, width: int, device: str) -> None:
    with ins.range("data"):
        x = torch.randn(batch, width, generator=gen).to(device)
        y = torch.randn(batch, width, generator=gen).to(device)
    loss = model(x, y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
