"""Ready-made entries for trying `pgdoctor verify` and `pgdoctor bench scaling` without writing
one: `pgdoctor verify pgdoctor.verify.examples:mlp`. Each returns the entry mapping."""

from __future__ import annotations

from typing import Any


def _data(batch: int, features: int, outputs: int) -> Any:
    import torch

    def data(rank: int, world: int, step: int) -> tuple[Any, Any]:
        g = torch.Generator().manual_seed(1000 * step + rank)
        return torch.randn(batch, features, generator=g), torch.randn(batch, outputs, generator=g)

    return data


def mlp() -> dict[str, Any]:
    """A 3-layer MLP with Adam: equivalent under DDP, pp (nn.Sequential) and tp."""
    import torch
    from torch import nn

    model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 4))
    return {"model": model, "loss": nn.MSELoss(), "data": _data(8, 16, 4),
            "optimizer": lambda params: torch.optim.Adam(params, lr=1e-3)}


def mlp_sum_loss() -> dict[str, Any]:
    """The same MLP with a loss that sums over samples: DDP's gradients are 1/N of one process's."""
    from torch import nn

    return {**mlp(), "loss": nn.MSELoss(reduction="sum")}


def batchnorm_mlp() -> dict[str, Any]:
    """An MLP with BatchNorm1d and no SyncBatchNorm."""
    from torch import nn

    model = nn.Sequential(nn.Linear(16, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 4))
    return {**mlp(), "model": model}


def small_mlp() -> dict[str, Any]:
    """A small MLP (0.66 M parameters, micro-batch 32) for `bench scaling`: over gloo its
    all-reduce outgrows its computation."""
    from torch import nn

    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 512),
                          nn.ReLU(), nn.Linear(512, 10))
    return {"model": model, "loss": nn.MSELoss(), "data": _data(32, 256, 10)}
