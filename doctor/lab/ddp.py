"""Data parallel: an MLP under DistributedDataParallel, every bucket's all-reduce in a
`comm.all_reduce` range. The comm hook waits inside its range (overlap=False), so the range
holds the time this rank waited for the slowest one."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from pgdoctor.lab.faults import Fault
from pgdoctor.lab.spec import LabSpec
from pgdoctor.lab.steps import regression_step
from pgdoctor.trace import instrument as ins

LAYERS = 4
BUCKET_CAP_MB = 0.5  # small, so a 4-layer MLP spans several buckets


class WithLoss(nn.Module):
    """The model and its loss in one forward, as many training codes have it (the `fwd` range
    then covers the loss too)."""

    def __init__(self, body: nn.Module):
        super().__init__()
        self.body = body

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return F.mse_loss(self.body(x), y)


class DdpRun:
    def __init__(self, spec: LabSpec, rank: int, world: int, device: str, fault: Fault):
        self.spec, self.rank, self.device, self.fault = spec, rank, device, fault
        torch.manual_seed(0)
        w = spec.width
        layers: list[nn.Module] = []
        for _ in range(LAYERS):
            layers += [nn.Linear(w, w), nn.ReLU()]
        model = WithLoss(nn.Sequential(*layers)).to(device)
        ids = [torch.device(device).index] if device.startswith("cuda") else None
        self.model = nn.parallel.DistributedDataParallel(model, device_ids=ids, bucket_cap_mb=BUCKET_CAP_MB)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=1e-3)
        self.handles = ins.instrument(self.model, self.opt, comm_hook=False)
        hook = ins.ddp_comm_hook(overlap=False)

        def lab_hook(state: Any, bucket: Any) -> Any:
            fault.before_collective()
            return hook(state, bucket)

        lab_hook.__annotations__ = {}  # DDP checks hook annotations; see ddp_comm_hook
        self.model.register_comm_hook(None, lab_hook)
        self.gen = torch.Generator().manual_seed(1000 + rank)
        self.param_bytes = sum(p.numel() * p.element_size() for p in model.parameters())

    def describe(self) -> dict[str, Any]:
        return {
            "layers": LAYERS,
            "width": self.spec.width,
            "param_bytes": self.param_bytes,
            "local_batch": self.local_batch(0),
        }

    def local_batch(self, step: int) -> int:
        return max(1, round(self.fault.batch(step) * self.fault.work_factor(self.rank)))

    def step(self, n: int) -> None:
        regression_step(self.model, self.opt, self.gen, self.local_batch(n), self.spec.width, self.device)
