"""Fine-tuning bytes of the failure lab's own models (pgdoctor.lab: DDP, pipeline, tensor
parallel), measured on real torch modules on CPU: with a frozen subset of the parameters, and
with LoRA adapters attached to every weight matrix (torch.nn.utils.parametrize: W + B A), the
planner's parameters, gradients and Adam state equal torch's allocations to the byte."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from pgdoctor.plan.finetune import lora_linear_tensors
from pgdoctor.plan.memory import OPTIMIZERS, PRECISIONS, finetune_state_bytes
from pgdoctor.plan.model import linear_stack_tensors, tp_mlp_tensors

RANK = 4

LAB_FINETUNE = r"""
import inspect, json, os, sys
import torch, torch.distributed as dist
from torch import nn
from torch.nn.utils import parametrize
from pgdoctor.lab import ddp, pp, tp
from pgdoctor.lab.faults import Fault
from pgdoctor.lab.spec import LabSpec

torch.set_num_threads(1)
RANK = int(sys.argv[2])


class LoRA(nn.Module):
    def __init__(self, d_out, d_in):
        super().__init__()
        self.A = nn.Parameter(torch.randn(RANK, d_in) * 0.01)
        self.B = nn.Parameter(torch.zeros(d_out, RANK))

    def forward(self, w):
        return w + self.B @ self.A


def loss_of(module, x):
    if len(inspect.signature(module.forward).parameters) >= 2:
        return module(x, torch.randn_like(x))
    return module(x).square().mean()


def nbytes(ts):
    return sum(t.numel() * t.element_size() for t in ts)


store = dist.FileStore(os.path.join(sys.argv[1], "store"), 1)
dist.init_process_group("gloo", store=store, rank=0, world_size=1)
out = []
for strategy, cls in (("ddp", ddp.DdpRun), ("pp", pp.PpRun), ("tp", tp.TpRun)):
    for mode in ("frozen", "lora"):
        for opt_name in ("adam", "adamw"):
            spec = LabSpec(
                fault="imbalance", strategy=strategy, nproc=2, run_dir=sys.argv[1], width=64, batch=4
            )
            for rank in range(spec.nproc):
                run = cls(spec, rank, 1, "cpu", Fault(spec, rank, "cpu"))
                module = getattr(run, "model", None) or run.stage
                module = getattr(module, "module", module)  # the lab's model under DDP's wrapper
                base = list(module.parameters())
                if mode == "frozen":
                    # Every third tensor (in the module's order) is frozen.
                    for i, p in enumerate(base):
                        p.requires_grad_(i % 3 != 0)
                else:
                    for p in base:
                        p.requires_grad_(False)
                    for sub in list(module.modules()):
                        for name, p in list(sub.named_parameters(recurse=False)):
                            if p.dim() == 2:
                                parametrize.register_parametrization(sub, name, LoRA(*p.shape))
                params = list(module.parameters())
                trained = [p for p in params if p.requires_grad]
                opt = (torch.optim.Adam if opt_name == "adam" else torch.optim.AdamW)(trained, lr=1e-3)
                for _ in range(2):
                    loss_of(module, torch.randn(4, spec.width)).backward()
                    opt.step()
                assert all(p.grad is None for p in params if not p.requires_grad)
                state = [t for st in opt.state.values() for t in st.values() if isinstance(t, torch.Tensor)]
                row = {"strategy": strategy, "mode": mode, "optimizer": opt_name, "rank": rank,
                       "width": spec.width, "params": nbytes(params),
                       "grads": nbytes(p.grad for p in trained), "optimizer_bytes": nbytes(state)}
                if strategy == "ddp":
                    row["layers"] = ddp.LAYERS
                elif strategy == "pp":
                    row["layers"] = pp.stage_layers(spec)[rank]
                else:
                    row["blocks"], row["shard"] = tp.BLOCKS, tp.shard_widths(spec)[rank]
                out.append(row)
dist.destroy_process_group()
print(json.dumps(out), flush=True)
os._exit(0)
"""


def _matrices(r: dict[str, Any]) -> tuple[list[tuple[str, int]], dict[str, tuple[int, int]]]:
    """The planner's tensors of a lab model and (d_in, d_out) of its weight matrices as the rank holds
    them."""
    w = r["width"]
    if r["strategy"] == "tp":
        tensors = tp_mlp_tensors(w, r["shard"], r["blocks"])
        dims = {
            name: ((w, r["shard"]) if name.endswith("w1") else (r["shard"], w))
            for name, _ in tensors
            if name.endswith(("w1", "w2"))
        }
    else:
        tensors = linear_stack_tensors(w, r["layers"])
        dims = {name: (w, w) for name, _ in tensors if name.endswith("weight")}
    return tensors, dims


def predicted(r: dict[str, Any]) -> tuple[int, int, int, int]:
    tensors, dims = _matrices(r)
    fp32, opt = PRECISIONS["fp32"], OPTIMIZERS[r["optimizer"]]
    if r["mode"] == "frozen":
        frozen = [n for i, (_, n) in enumerate(tensors) if i % 3 == 0]
        trained = [n for i, (_, n) in enumerate(tensors) if i % 3 != 0]
        s = finetune_state_bytes(sum(frozen) * fp32.param_bytes, sum(trained), len(trained), fp32, opt)
    else:
        adapters = [
            t for name, (d_in, d_out) in dims.items() for t in lora_linear_tensors(name, d_in, d_out, RANK)
        ]
        s = finetune_state_bytes(
            sum(n for _, n in tensors) * fp32.param_bytes,
            sum(n for _, n in adapters),
            len(adapters),
            fp32,
            opt,
        )
    return s.params, s.grads, s.master, s.optimizer


@pytest.mark.slow
def test_lab_models_with_frozen_parameters_and_lora_match_torch_to_the_byte(tmp_path: Any) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", LAB_FINETUNE, str(tmp_path), str(RANK)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(proc.stdout.strip().splitlines()[-1])
    assert {(r["strategy"], r["mode"]) for r in rows} == {
        (s, m) for s in ("ddp", "pp", "tp") for m in ("frozen", "lora")
    }
    for r in rows:
        where = f"lab {r['strategy']} {r['mode']} {r['optimizer']} rank={r['rank']}"
        assert predicted(r) == (r["params"], r["grads"], 0, r["optimizer_bytes"]), where
