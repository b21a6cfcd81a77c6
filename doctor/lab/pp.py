"""Pipeline parallel: an MLP split into one stage per rank, activations and gradients passed
with send/recv, micro-batches scheduled GPipe-style (all forwards, then all backwards) or 1F1B
(warm-up forwards, then one forward one backward, then cool-down backwards).

Ranges: `pp.fwd stage=S mb=M` and `pp.bwd stage=S mb=M` hold the compute of one micro-batch,
with the `pp.recv peer=P mb=M` that waits for its input and the `pp.send peer=P mb=M` of its
output nested inside; the analysis subtracts the nested communication to get compute time.
Sends are asynchronous (isend, completed at the end of the step) and receives block, which
keeps both schedules free of deadlock.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

from pgdoctor.lab.faults import Fault
from pgdoctor.lab.imbalance import ideal_bubble
from pgdoctor.lab.spec import LabSpec
from pgdoctor.trace import instrument as ins

BASE_LAYERS = 2  # layers per stage; the slow stage of the imbalance fault has factor times more


def stage_layers(spec: LabSpec) -> list[int]:
    """Layers of each stage: an even split, except the faulty stage under the imbalance fault."""
    out = []
    for s in range(spec.nproc):
        f = spec.factor if spec.fault == "imbalance" and s == spec.bad_rank else 1.0
        out.append(max(1, round(BASE_LAYERS * f)))
    return out


def schedule(kind: str, stages: int, stage: int, microbatches: int) -> list[tuple[str, int]]:
    """The order of ("F", mb) and ("B", mb) on one stage."""
    m = microbatches
    if kind == "gpipe":
        return [("F", i) for i in range(m)] + [("B", i) for i in range(m)]
    warmup = min(stages - stage - 1, m)
    ops = [("F", i) for i in range(warmup)]
    for i in range(m - warmup):
        ops += [("F", warmup + i), ("B", i)]
    ops += [("B", i) for i in range(m - warmup, m)]
    return ops


class PpRun:
    def __init__(self, spec: LabSpec, rank: int, world: int, device: str, fault: Fault):
        self.spec, self.rank, self.world, self.device, self.fault = spec, rank, world, device, fault
        self.first, self.last = rank == 0, rank == world - 1
        self.layers = stage_layers(spec)
        torch.manual_seed(rank)
        mods: list[nn.Module] = []
        for _ in range(self.layers[rank]):
            mods += [nn.Linear(spec.width, spec.width), nn.ReLU()]
        self.stage = nn.Sequential(*mods).to(device)
        self.opt = torch.optim.SGD(self.stage.parameters(), lr=1e-3)
        self.handles = ins.instrument(None, self.opt)
        self.gen = torch.Generator().manual_seed(77)
        # gloo sends and receives CPU tensors only: ranks sharing GPUs through gloo stage there.
        self.wire = "cpu" if dist.get_backend() == "gloo" else device

    def _recv(self, shape: torch.Size, src: int) -> torch.Tensor:
        buf = torch.empty(shape, device=self.wire)
        dist.recv(buf, src=src)
        return buf.to(self.device)

    def _isend(self, t: torch.Tensor, dst: int) -> Any:
        t = t.to(self.wire)
        return t, dist.isend(t, dst=dst)  # the tensor must outlive the send

    def describe(self) -> dict[str, Any]:
        return {
            "stage_layers": self.layers,
            "microbatches": self.spec.microbatches,
            "schedule": self.spec.schedule,
            "ideal_bubble": round(ideal_bubble(self.world, self.spec.microbatches), 4),
        }

    def step(self, n: int) -> None:
        m, w = self.spec.microbatches, self.spec.width
        mb = max(1, self.fault.batch(n) // m)
        with ins.range("data"):
            # Every stage draws the same numbers; stage 0 uses the inputs, the last the targets.
            xs = [torch.randn(mb, w, generator=self.gen).to(self.device) for _ in range(m)]
            ys = [torch.randn(mb, w, generator=self.gen).to(self.device) for _ in range(m)]
        inputs: dict[int, torch.Tensor] = {}
        outputs: dict[int, torch.Tensor] = {}
        pending: list[Any] = []
        for op, i in schedule(self.spec.schedule, self.world, self.rank, m):
            if op == "F":
                self._forward(i, xs[i], ys[i], inputs, outputs, pending)
            else:
                self._backward(i, inputs, outputs, pending)
        for _, work in pending:
            work.wait()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)

    def _forward(self, i: int, x0: Any, y: Any, inputs: dict, outputs: dict, pending: list) -> None:
        s = self.rank
        with ins.range("pp.fwd", stage=s, mb=i):
            if self.first:
                x = x0
            else:
                with ins.range("pp.recv", peer=s - 1, mb=i):
                    x = self._recv(x0.shape, s - 1)
                x.requires_grad_()
            out = self.stage(x)
            if self.last:
                out = F.mse_loss(out, y) / self.spec.microbatches
            inputs[i], outputs[i] = x, out
            if not self.last:
                with ins.range("pp.send", peer=s + 1, mb=i):
                    self.fault.before_collective()
                    pending.append(self._isend(out.detach(), s + 1))

    def _backward(self, i: int, inputs: dict, outputs: dict, pending: list) -> None:
        s = self.rank
        with ins.range("pp.bwd", stage=s, mb=i):
            out = outputs.pop(i)
            if self.last:
                out.backward()
            else:
                with ins.range("pp.recv", peer=s + 1, mb=i):
                    grad = self._recv(out.shape, s + 1)
                out.backward(grad)
            x = inputs.pop(i)
            if not self.first:
                with ins.range("pp.send", peer=s - 1, mb=i):
                    self.fault.before_collective()
                    pending.append(self._isend(x.grad, s - 1))
