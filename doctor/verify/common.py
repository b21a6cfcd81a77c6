"""What every kind of rank of `pgdoctor verify` / `bench scaling` shares: seeding, the entry's
micro-batches, the forward call, the contract checks of the user's optimizer and loss, the
setup facts of the records (records.py), and the one-process reference, which saves its tensors
for the ranks to compare against (`run_reference`)."""

from __future__ import annotations

import contextlib
import copy
import json
import math
import os
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

from pgdoctor.verify.compare import least_precise, listed
from pgdoctor.verify.entry import EntryError
from pgdoctor.verify.records import ErrorRecord, RankRecord, Setup, StepRecord, tensor_file
from pgdoctor.verify.tensors import digest, output_tensors

SEED = 1234
PROBE_SEED = 4321
PROBE_VALUES = 4096
PART_VALUES = 1024


def write_json(path: Path, data: Any) -> None:
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


def counted_targets(loss_fn: Any, target: Any) -> Optional[int]:
    """How many targets a mean loss with `ignore_index` (torch's CrossEntropyLoss, NLLLoss) averages
    over: a language model's micro-batches of equal size weigh their tokens unequally once the
    padding differs across ranks. None for other losses."""
    ignore = getattr(loss_fn, "ignore_index", None)
    if not isinstance(ignore, int) or getattr(loss_fn, "reduction", "mean") != "mean":
        return None
    if getattr(target, "is_floating_point", lambda: True)():
        return None  # class probabilities: nothing is ignored
    return int((target != ignore).sum())


def sample_hash(x: Any, y: Any) -> str:
    return digest([*tensors_of(x), *tensors_of(y)])


def flat(t: Any) -> list[float]:
    return [float(v) for v in t.detach().cpu().double().flatten().tolist()]


def first_tensor(out: Any) -> Any:
    """The tensor that stands for a model's output: the output itself, or its first tensor
    (output_tensors: loss when labels were given to a ModelOutput, else logits); None when the output
    holds no tensor."""
    return next(output_tensors(out), None)


def output_values(out: Any) -> list[float]:
    """The first PROBE_VALUES values of the output: a fingerprint, never the whole of a model's logits."""
    t = first_tensor(out)
    return [] if t is None else flat(t.detach().reshape(-1)[:PROBE_VALUES])


def output_shape(out: Any) -> list[int]:
    """The shape of the output that is compared (step_evidence.py: a dimension that follows the batch)."""
    t = first_tensor(out)
    return [] if t is None else [int(d) for d in t.shape]


def refuse_lazy(model: Any) -> None:
    """nn.LazyLinear and its kin have no shape until a first forward; DDP and fully_shard refuse
    such a model and torch's own error (about load_state_dict) names neither the module nor the
    remedy, so the entry is refused with both before anything reads a parameter."""
    from torch.nn.parameter import is_lazy

    lazy = [n for n, t in (*model.named_parameters(), *model.named_buffers()) if is_lazy(t)]
    if lazy:
        raise EntryError(
            f"the model has uninitialized (lazy) parameters ({listed(lazy, 6)}): DDP and fully_shard "
            "cannot wrap them; run one forward on a sample batch in build() before returning the model, "
            "as the training script must before wrapping it"
        )


def output_parts(out: Any, sizes: list[int]) -> list[list[float]]:
    """The first PART_VALUES values of each micro-batch's rows of the output (split along the batch
    dimension by `sizes`); none when the output's first dimension is not the batch."""
    t = first_tensor(out)
    if t is None or not getattr(t, "ndim", 0) or t.shape[0] != sum(sizes):
        return []
    return [flat(p.detach().reshape(-1)[:PART_VALUES]) for p in t.split(sizes)]


def setup_facts(model: Any, loss: Any) -> Setup:
    import torch

    refuse_lazy(model)
    bn = [
        n
        for n, m in model.named_modules()
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and not isinstance(m, torch.nn.SyncBatchNorm)
    ]
    dropout = [
        n
        for n, m in model.named_modules()
        if isinstance(m, torch.nn.modules.dropout._DropoutNd)
        or (isinstance(m, torch.nn.MultiheadAttention) and m.dropout > 0)
    ]
    params = list(model.named_parameters())
    return {
        "params": [n for n, _ in params],
        "requires_grad": {n: bool(p.requires_grad) for n, p in params},
        "shapes": {n: list(p.shape) for n, p in params},
        "dtype": str(params[0][1].dtype).replace("torch.", "") if params else "float32",
        "numel": sum(p.numel() for _, p in params),
        "buffers": [n for n, _ in model.named_buffers()],
        "batchnorm": bn,
        "dropout": dropout,
        "reduction": getattr(loss, "reduction", None),
    }


def refuse_gpu_only_modules(model: Any, device: str) -> None:
    """SyncBatchNorm trains on GPUs only (torch raises for CPU tensors whenever a process group is
    up), so ranks on the CPU (gloo) cannot run a model that holds it: say so as the entry's error
    before any rank starts training, instead of a rank failing at step 0 and an unexplained VER101."""
    import torch

    if device != "cpu":
        return
    sync = [n or "(the model)" for n, m in model.named_modules() if isinstance(m, torch.nn.SyncBatchNorm)]
    if sync:
        raise EntryError(
            f"the model holds SyncBatchNorm ({listed(sync, 6)}), which torch runs on GPUs only: gloo "
            "ranks on the CPU cannot train it, so this model cannot be verified here; run with --backend "
            "nccl on GPUs"
        )


def make_optimizer(spec: dict[str, Any], params: Any) -> Any:
    import torch

    params = [p for p in params if p.requires_grad]
    if spec.get("optimizer") is None:
        return torch.optim.SGD(params, lr=0.1)
    opt = spec["optimizer"](params)
    if not isinstance(opt, torch.optim.Optimizer):
        raise EntryError(f"optimizer(params) returned {type(opt).__name__}, not a torch.optim.Optimizer")
    return opt


def optimizer_settings(opt: Any) -> dict[str, Any]:
    """The optimizer's class and each param group's settings as the factory made them (lr, momentum,
    betas, weight decay...), numbers only: the reference and the ranks must get the same, and a
    factory that reads the world size (the linear scaling rule) gives the ranks others."""

    def plain(v: Any) -> Any:
        if hasattr(v, "ndim") and getattr(v, "ndim", 1) == 0:
            return float(v)
        if isinstance(v, (bool, int, float, str)) or v is None:
            return v
        if isinstance(v, (tuple, list)) and all(isinstance(x, (bool, int, float)) for x in v):
            return list(v)
        return None

    groups = [
        {k: pv for k, v in g.items() if k != "params" and (pv := plain(v)) is not None}
        for g in opt.param_groups
    ]
    return {"type": type(opt).__name__, "groups": groups}


def scalar(loss: Any) -> Any:
    """The user's loss, which must be one number to call backward() on."""
    import torch

    if not isinstance(loss, torch.Tensor):
        raise EntryError(f"loss(output, target) returned {type(loss).__name__}, not a tensor")
    if loss.numel() != 1:
        raise EntryError(
            f"loss(output, target) returned a tensor of shape {list(loss.shape)}, not a scalar "
            "(a loss with reduction='none'?)"
        )
    return loss


def probe(model: Any, spec: dict[str, Any], world: int, device: str = "cpu") -> list[float]:
    """A forward of the initial model (`untouched` by it) on one fixed micro-batch with torch's RNG
    seeded the same everywhere: identical on every rank unless forward depends on the rank."""
    return probe_with_loss(model, spec, world, device)[0]


def probe_with_loss(
    model: Any, spec: dict[str, Any], world: int, device: str = "cpu"
) -> tuple[list[float], Optional[float]]:
    """The probe's output values and, from the same forward, loss_batch_ratio of the user's loss."""
    import torch

    x, y = fetch(spec, 0, world, 0, device)
    with untouched(model):
        torch.manual_seed(PROBE_SEED)
        with torch.no_grad():
            out = forward(model, x)
            return output_values(out), loss_batch_ratio(spec["loss"], out, y)


@contextlib.contextmanager
def untouched(model: Any) -> Iterator[None]:
    """The model as it was before the block, whatever its forward changed: the values of its
    parameters and buffers (BatchNorm's running statistics, a counter), which tensors those are,
    whether they require grad, their grads and hooks, and every module's attributes (copied
    deeply, sharing only the modules, parameters and buffers themselves; a dict, list or set put
    back in place, so a hook's handle still removes it). What a deep copy of the whole model
    protected the probe's forward against, for a copy of the tensors alone: copying a
    124M-parameter model cost more than the forward."""
    import torch

    tensors = [t for _, t in model.named_parameters()] + [t for _, t in model.named_buffers()]
    saved = [(t, t.detach().clone(), t.requires_grad, t.grad, _tensor_hooks(t)) for t in tensors]
    modules = list(model.modules())
    # Modules, tensors and the modules' dicts, lists and sets (their hooks among them) stay
    # themselves; a dict, list or set is given back what it held, copied deeply.
    kept = [v for m in modules for v in m.__dict__.values() if isinstance(v, (dict, list, set))]
    memo: dict[int, Any] = {id(o): o for o in [*modules, *tensors, *kept]}
    attrs = [(m, [(k, v, copy.deepcopy(_held(v), memo)) for k, v in m.__dict__.items()]) for m in modules]
    try:
        yield
    finally:
        for m, state in attrs:
            m.__dict__.clear()
            for k, v, held in state:
                m.__dict__[k] = _refill(v, held) if isinstance(v, (dict, list, set)) else held
        with torch.no_grad():
            for t, value, requires_grad, grad, hooks in saved:
                if (t.shape, t.dtype, t.device, t.layout) == (
                    value.shape,
                    value.dtype,
                    value.device,
                    value.layout,
                ):
                    t.data.copy_(value)
                else:
                    t.data = value
                t.requires_grad_(requires_grad)
                t.grad = grad
                for name, (obj, items) in hooks.items():
                    if getattr(t, name, None) is not obj:
                        setattr(t, name, obj)
                    if obj is not None:
                        obj.clear()
                        obj.update(items)


def _tensor_hooks(t: Any) -> dict[str, tuple[Any, Any]]:
    """A tensor's hook dicts (register_hook, register_post_accumulate_grad_hook): each the dict
    itself (its handles point at it) and what it held."""
    out = {}
    for name in ("_backward_hooks", "_post_accumulate_grad_hooks"):
        hooks = getattr(t, name, None)
        out[name] = (hooks, dict(hooks) if hooks is not None else None)
    return out


def _held(v: Any) -> Any:
    """What a dict (its items), list or set holds, or the value itself."""
    if isinstance(v, dict):
        return list(v.items())
    return list(v) if isinstance(v, (list, set)) else v


def _refill(obj: Any, held: list[Any]) -> Any:
    """`obj` (a dict, list or set) holding `held` again, in place."""
    if isinstance(obj, list):
        obj[:] = held
    else:
        obj.clear()
        obj.update(held)
    return obj


def loss_batch_ratio(loss_fn: Any, out: Any, target: Any) -> Optional[float]:
    """loss(the batch twice over) / loss(the batch), as this process computes it: 2 for a loss
    that sums over samples, 1 for a mean. A ratio of gradients equal to the world size is either a
    sum over samples or a mean divided by the world size (by hand, on top of DDP's average); the
    two give the same gradients and losses, and only this tells them apart. None when the loss
    cannot be called so (outputs or targets that are not tensors) or is zero."""
    import torch

    if not isinstance(out, torch.Tensor) or not isinstance(target, torch.Tensor) or out.ndim == 0:
        return None
    try:
        one = float(loss_fn(out, target))
        two = float(loss_fn(torch.cat([out, out]), torch.cat([target, target])))
    except Exception:  # any loss that refuses a doubled batch simply gives no ratio
        return None
    if not (math.isfinite(one) and math.isfinite(two)) or one == 0.0:
        return None
    return two / one


def error_record(exc: BaseException, step: int, phase: str) -> ErrorRecord:
    from pgdoctor.verify.entry import internal_record, raised_by_pgdoctor

    rec: ErrorRecord = {
        "type": type(exc).__name__,
        "message": str(exc)[:4000],
        "step": step,
        "phase": phase,
        "traceback": traceback.format_exc()[-6000:],
        "at": time.monotonic(),
    }
    if raised_by_pgdoctor(exc):
        bug = internal_record(exc)
        rec["bug"] = {"message": bug["message"], "traceback": bug["traceback"]}
    return rec


def grads_of(model: Any) -> dict[str, Any]:
    return {n: p.grad for n, p in model.named_parameters() if p.grad is not None}


def buffers_of(model: Any) -> dict[str, Any]:
    return {n: b for n, b in model.named_buffers() if b.is_floating_point()}


@contextlib.contextmanager
def activation_dtypes(seen: set[str]) -> Iterator[None]:
    """The floating dtypes the modules' outputs come in during the block: a forward under
    torch.autocast computes in bfloat16 or float16 while every parameter stays float32, and its
    gradients carry that rounding, so the tolerance must follow it (compare.least_precise)."""
    import torch

    def hook(_module: Any, _args: Any, out: Any) -> None:
        for t in output_tensors(out):  # nested too: an LSTM's (out, (h, c)), a cache of (k, v)
            if t.is_floating_point():
                seen.add(str(t.dtype).replace("torch.", ""))

    handle = torch.nn.modules.module.register_module_forward_hook(hook)
    try:
        yield
    finally:
        handle.remove()


def run_reference(cfg: dict[str, Any], spec: dict[str, Any], result: RankRecord) -> None:
    """One process on the concatenation of every rank's micro-batch (pp / tp: on data(0, 1,
    step)). Each step's gradients, parameters and buffers go to tensor files that the ranks
    compare against (records.tensor_file); the record keeps their names and scales."""
    import torch

    from pgdoctor.verify.step_evidence import ScaledInStep, loss_coupling

    model, loss_fn = spec["model"], spec["loss"]
    world, steps = cfg["data_world"], cfg["steps"]
    device = device_of(cfg, 0)
    result["setup"] = setup_facts(model, loss_fn)
    model.to(device)
    result["probe"] = probe(model, spec, world, device)
    opt = make_optimizer(spec, model.parameters())
    result["setup"]["optimizer"] = optimizer_settings(opt)
    model.train(not cfg.get("eval"))
    for step in range(steps):
        batches = [fetch(spec, r, world, step, device) for r in range(world)]
        hashes = [sample_hash(bx, by) for bx, by in batches]
        sizes = [batch_size(bx) for bx, _ in batches]
        x, y = concat([b[0] for b in batches]), concat([b[1] for b in batches])
        del batches
        opt.zero_grad(set_to_none=True)
        torch.manual_seed(SEED + 17 * step)
        seen: set[str] = set()
        with activation_dtypes(seen) if step == 0 else contextlib.nullcontext():
            out = forward(model, x)
        result["setup"]["dtype"] = least_precise([result["setup"]["dtype"], *seen])
        loss = scalar(loss_fn(out, y))
        loss.backward()
        rec: StepRecord = {
            "step": step,
            "loss": float(loss.detach()),
            "output": output_values(out),
            "hashes": hashes,
        }
        if step == 0:
            rec["output_parts"] = output_parts(out, sizes)
            rec["output_shape"] = output_shape(out)
            coupling = loss_coupling(loss_fn, out, y, sizes)
            if coupling is not None:
                rec["loss_coupling"] = coupling
        del out, loss, x, y
        grads = grads_of(model)
        rec["names"] = {
            "grads": list(grads),
            "params": [n for n, _ in model.named_parameters()],
            "buffers": list(buffers_of(model)),
        }
        rec["scale"] = {"grads": save_kind(cfg, step, "grads", grads)}
        del grads
        scaled = ScaledInStep(model)
        opt.step()
        scaled.record(rec)
        rec["scale"]["params"] = save_kind(cfg, step, "params", dict(model.named_parameters()))
        rec["scale"]["buffers"] = save_kind(cfg, step, "buffers", buffers_of(model))
        result["steps"].append(rec)


def save_kind(cfg: dict[str, Any], step: int, kind: str, tensors: dict[str, Any]) -> float:
    from pgdoctor.verify.tensors import save

    return save(tensors, tensor_file(cfg["out_dir"], step, kind))
