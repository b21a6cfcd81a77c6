"""What every kind of rank of `pgdoctor verify` / `bench scaling` shares: seeding, the entry's
micro-batches, the forward call, and the records (flat float lists, JSON-ready) of gradients,
parameters, buffers and setup facts."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import traceback
from pathlib import Path
from typing import Any

from pgdoctor.verify.entry import EntryError

SEED = 1234
PROBE_SEED = 4321
PROBE_VALUES = 4096


def write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    os.replace(tmp, path)


def data_seed(rank: int, step: int) -> int:
    return SEED + 1 + 7919 * step + rank


def device_of(cfg: dict[str, Any], rank: int) -> str:
    """Where a process trains: its GPU under NCCL, else the CPU."""
    return f"cuda:{rank}" if cfg.get("backend") == "nccl" else "cpu"


def to_device(x: Any, device: str) -> Any:
    if device == "cpu":
        return x
    if isinstance(x, dict):
        return {k: to_device(v, device) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return type(x)(to_device(v, device) for v in x)
    return x.to(device) if hasattr(x, "to") else x


def fetch(spec: dict[str, Any], rank: int, world: int, step: int, device: str = "cpu") -> tuple[Any, Any]:
    """The entry's micro-batch, with the global RNG seeded per (rank, step), so a loader that
    draws from torch's RNG hands the reference and the rank the same samples."""
    import torch

    torch.manual_seed(data_seed(rank, step))
    out = spec["data"](rank, world, step)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise EntryError(f"data({rank}, {world}, {step}) returned {type(out).__name__}, not (inputs, target)")
    return to_device(out[0], device), to_device(out[1], device)


def tensors_of(x: Any) -> list[Any]:
    if isinstance(x, dict):
        return [v for _, v in sorted(x.items())]
    if isinstance(x, (tuple, list)):
        return list(x)
    return [x]


def concat(parts: list[Any]) -> Any:
    import torch

    first = parts[0]
    if isinstance(first, dict):
        return {k: torch.cat([p[k] for p in parts]) for k in first}
    if isinstance(first, (tuple, list)):
        return type(first)(torch.cat([p[i] for p in parts]) for i in range(len(first)))
    return torch.cat(parts)


def forward(model: Any, x: Any) -> Any:
    if isinstance(x, dict):
        return model(**x)
    if isinstance(x, (tuple, list)):
        return model(*x)
    return model(x)


def batch_size(x: Any) -> int:
    t = tensors_of(x)[0]
    return int(t.shape[0]) if getattr(t, "ndim", 0) else 1


def sample_hash(x: Any, y: Any) -> str:
    import torch

    h = hashlib.sha1()
    for t in [*tensors_of(x), *tensors_of(y)]:
        h.update(bytes(t.detach().cpu().contiguous().flatten().view(torch.uint8).tolist()))
    return h.hexdigest()[:16]


def flat(t: Any) -> list[float]:
    return [float(v) for v in t.detach().cpu().double().flatten().tolist()]


def output_values(out: Any) -> list[float]:
    t = out[0] if isinstance(out, (tuple, list)) else out
    return flat(t)[:PROBE_VALUES]


def setup_facts(model: Any, loss: Any) -> dict[str, Any]:
    import torch

    bn = [n for n, m in model.named_modules()
          if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and not isinstance(m, torch.nn.SyncBatchNorm)]
    dropout = [n for n, m in model.named_modules() if isinstance(m, torch.nn.modules.dropout._DropoutNd)
               or (isinstance(m, torch.nn.MultiheadAttention) and m.dropout > 0)]
    params = list(model.named_parameters())
    return {
        "params": [n for n, _ in params],
        "requires_grad": {n: bool(p.requires_grad) for n, p in params},
        "dtype": str(params[0][1].dtype).replace("torch.", "") if params else "float32",
        "numel": sum(p.numel() for _, p in params),
        "buffers": [n for n, _ in model.named_buffers()],
        "batchnorm": bn,
        "dropout": dropout,
        "reduction": getattr(loss, "reduction", None),
    }


def make_optimizer(spec: dict[str, Any], params: Any) -> Any:
    import torch

    params = [p for p in params if p.requires_grad]
    if spec.get("optimizer") is not None:
        return spec["optimizer"](params)
    return torch.optim.SGD(params, lr=0.1)


def probe(model: Any, spec: dict[str, Any], world: int, device: str = "cpu") -> list[float]:
    """A forward of a copy of the initial model on one fixed micro-batch with torch's RNG
    seeded the same everywhere: identical on every rank unless forward depends on the rank."""
    import torch

    x, _ = fetch(spec, 0, world, 0, device)
    twin = copy.deepcopy(model)
    torch.manual_seed(PROBE_SEED)
    with torch.no_grad():
        return output_values(forward(twin, x))


def record_step(model: Any, grads: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if grads:
        out["grads"] = {n: flat(p.grad) for n, p in model.named_parameters() if p.grad is not None}
        out["no_grad"] = [n for n, p in model.named_parameters() if p.requires_grad and p.grad is None]
    return out


def after_step(model: Any) -> dict[str, Any]:
    return {"params": {n: flat(p) for n, p in model.named_parameters()},
            "buffers": {n: flat(b) for n, b in model.named_buffers() if b.is_floating_point()}}


def error_record(exc: BaseException, step: int, phase: str) -> dict[str, Any]:
    return {"type": type(exc).__name__, "message": str(exc)[:4000], "step": step, "phase": phase,
            "traceback": traceback.format_exc()[-6000:]}


def run_reference(cfg: dict[str, Any], spec: dict[str, Any], result: dict[str, Any]) -> None:
    import torch

    model, loss_fn = spec["model"], spec["loss"]
    world, steps = cfg["data_world"], cfg["steps"]
    device = device_of(cfg, 0)
    result["setup"] = setup_facts(model, loss_fn)
    model.to(device)
    result["probe"] = probe(model, spec, world, device)
    opt = make_optimizer(spec, model.parameters())
    model.train(not cfg.get("eval"))
    for step in range(steps):
        batches = [fetch(spec, r, world, step, device) for r in range(world)]
        x, y = concat([b[0] for b in batches]), concat([b[1] for b in batches])
        opt.zero_grad(set_to_none=True)
        torch.manual_seed(SEED + 17 * step)
        out = forward(model, x)
        loss = loss_fn(out, y)
        loss.backward()
        rec: dict[str, Any] = {"step": step, "loss": float(loss.detach()), "output": output_values(out),
                               **record_step(model)}
        opt.step()
        rec.update(after_step(model))
        result["steps"].append(rec)


def run_data_parallel(cfg: dict[str, Any], spec: dict[str, Any], result: dict[str, Any], rank: int, world: int) -> None:
    import torch

    model, loss_fn = spec["model"], spec["loss"]
    device = device_of(cfg, rank)
    result["setup"] = setup_facts(model, loss_fn)
    model.to(device)
    result["probe"] = probe(model, spec, world, device)
    phase = "wrap"
    try:
        if cfg["strategy"] == "fsdp":
            from torch.distributed.fsdp import fully_shard

            fully_shard(model)
            wrapped, inner = model, model
        else:
            from torch.nn.parallel import DistributedDataParallel as DDP

            wrapped = DDP(model, device_ids=[rank] if device != "cpu" else None)
            inner = model
    except Exception as exc:
        result["error"] = error_record(exc, -1, phase)
        return
    opt = make_optimizer(spec, inner.parameters())
    wrapped.train(not cfg.get("eval"))
    for step in range(cfg["steps"]):
        phase = "data"
        try:
            x, y = fetch(spec, rank, world, step, device)
            rec: dict[str, Any] = {"step": step, "batch": batch_size(x), "hash": sample_hash(x, y)}
            opt.zero_grad(set_to_none=True)
            torch.manual_seed(SEED + 17 * step)
            phase = "forward"
            out = forward(wrapped, x)
            loss = loss_fn(out, y)
            phase = "backward"
            loss.backward()
            rec["loss"] = float(loss.detach())
            rec.update(full_record(inner) if cfg["strategy"] == "fsdp" else record_step(inner))
            phase = "optimizer"
            opt.step()
            rec.update(full_after(inner) if cfg["strategy"] == "fsdp" else after_step(inner))
            result["steps"].append(rec)
        except Exception as exc:
            result["error"] = error_record(exc, step, phase)
            return


def _full(t: Any) -> Any:
    return t.full_tensor() if hasattr(t, "full_tensor") else t


def full_record(model: Any) -> dict[str, Any]:
    grads = {n: flat(_full(p.grad)) for n, p in model.named_parameters() if p.grad is not None}
    return {"grads": grads, "no_grad": [n for n, p in model.named_parameters() if p.requires_grad and p.grad is None]}


def full_after(model: Any) -> dict[str, Any]:
    return {"params": {n: flat(_full(p)) for n, p in model.named_parameters()},
            "buffers": {n: flat(_full(b)) for n, b in model.named_buffers() if b.is_floating_point()}}


