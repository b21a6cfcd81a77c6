"""Tensor parallel, Megatron-style: each block is a column-parallel linear (each rank holds a
slice of the output features), a GELU, and a row-parallel linear (each rank holds the matching
slice of the input features) whose partial outputs are summed by an all-reduce. The input
enters through an identity whose backward all-reduces the input gradient (Megatron's f), and
the output leaves through an all-reduce whose backward is the identity (Megatron's g).

Ranges: `tp.all_reduce layer=L` in the forward (inside `fwd`) and in the backward (inside
`bwd`), waiting inside the range, so the range holds the time spent waiting for the slowest
shard. Under the imbalance fault the faulty rank's shard is `factor` times wider.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

from pgdoctor.lab.ddp import WithLoss
from pgdoctor.lab.faults import Fault
from pgdoctor.lab.spec import LabSpec
from pgdoctor.lab.steps import regression_step
from pgdoctor.trace import instrument as ins

BLOCKS = 2


def _all_reduce(t: torch.Tensor, layer: int, fault: Fault) -> torch.Tensor:
    with ins.range("tp.all_reduce", layer=layer):
        fault.before_collective()
        dist.all_reduce(t)
    return t


class _CopyToShards(torch.autograd.Function):
    """f: identity forward, all-reduce of the input gradient backward."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, layer: int, fault: Fault) -> torch.Tensor:
        ctx.layer, ctx.fault = layer, fault
        return x.view_as(x)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Any:
        return _all_reduce(grad.contiguous(), ctx.layer, ctx.fault), None, None


class _ReduceFromShards(torch.autograd.Function):
    """g: all-reduce forward, identity backward."""

    @staticmethod
    def forward(ctx: Any, y: torch.Tensor, layer: int, fault: Fault) -> torch.Tensor:
        ctx.mark_dirty(y)  # reduced in place, as Megatron does
        return _all_reduce(y, layer, fault)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Any:
        return grad, None, None


class TpBlock(nn.Module):
    def __init__(self, width: int, shard: int, layer: int, fault: Fault, gen: torch.Generator):
        super().__init__()
        self.layer, self.fault = layer, fault
        bound = 1 / math.sqrt(width)
        self.w1 = nn.Parameter(torch.empty(shard, width).uniform_(-bound, bound, generator=gen))
        self.b1 = nn.Parameter(torch.zeros(shard))
        self.w2 = nn.Parameter(torch.empty(width, shard).uniform_(-bound, bound, generator=gen))
        self.b2 = nn.Parameter(torch.zeros(width))  # replicated: added after the reduction

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = _CopyToShards.apply(x, self.layer, self.fault)
        h = F.gelu(F.linear(h, self.w1, self.b1))
        y = _ReduceFromShards.apply(F.linear(h, self.w2), self.layer, self.fault)
        return x + y + self.b2


def shard_widths(spec: LabSpec) -> list[int]:
    """Hidden features per rank: `width` each, `factor` times that on the faulty rank."""
    return [
        max(1, round(spec.width * (spec.factor if spec.fault == "imbalance" and r == spec.bad_rank else 1.0)))
        for r in range(spec.nproc)
    ]


class TpRun:
    def __init__(self, spec: LabSpec, rank: int, world: int, device: str, fault: Fault):
        self.spec, self.rank, self.device, self.fault = spec, rank, device, fault
        self.shards = shard_widths(spec)
        gen = torch.Generator().manual_seed(10 + rank)
        self.model = WithLoss(
            nn.Sequential(
                *[TpBlock(spec.width, self.shards[rank], layer, fault, gen) for layer in range(BLOCKS)]
            )
        ).to(device)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=1e-3)
        self.handles = ins.instrument(self.model, self.opt)
        self.gen = torch.Generator().manual_seed(99)  # same data on every shard

    def describe(self) -> dict[str, Any]:
        return {"blocks": BLOCKS, "shard_widths": self.shards, "width": self.spec.width}

    def step(self, n: int) -> None:
        regression_step(self.model, self.opt, self.gen, self.fault.batch(n), self.spec.width, self.device)
