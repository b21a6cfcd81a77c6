"""The ranks of `--strategy pp` and `--strategy tp`: the user's model split into pipeline
stages (one per rank, activations and gradients through send/recv) or its linear layers split
Megatron-style (column-parallel: output features sharded; row-parallel: input features
sharded, partial outputs summed by an all-reduce). Every rank trains on the whole batch
(data(0, 1, step)), as the reference does."""

from __future__ import annotations

from typing import Any

from pgdoctor.verify.common import (
    SEED,
    buffers_of,
    error_record,
    fetch,
    make_optimizer,
    output_values,
    setup_facts,
)
from pgdoctor.verify.entry import EntryError
from pgdoctor.verify.records import StepRecord
from pgdoctor.verify.reference import Reference

DTYPES = ("float32", "float64", "float16", "bfloat16")


def stage_children(model: Any, spec: dict[str, Any], world: int) -> list[list[str]]:
    """The top-level children of each stage, in order."""
    import torch

    names = [n for n, _ in model.named_children()]
    prefixes = spec.get("stages")
    if prefixes:
        prefixes = [str(p) for p in prefixes]
        if len(prefixes) != world:
            raise EntryError(
                f"stages names {len(prefixes)} stages, but --nproc is {world} (one stage per rank)"
            )
        starts = []
        for p in prefixes:
            hit = [i for i, n in enumerate(names) if n == p or n.startswith(p)]
            if not hit:
                raise EntryError(
                    f"stage prefix {p!r} matches no child module of the model ({', '.join(names)})"
                )
            starts.append(hit[0])
        if starts[0] != 0:
            starts[0] = 0
        bounds = [*starts, len(names)]
        return [names[bounds[s] : bounds[s + 1]] for s in range(world)]
    if not isinstance(model, torch.nn.Sequential):
        raise EntryError(
            "--strategy pp needs an nn.Sequential model or a 'stages' list of module-name prefixes"
        )
    if len(names) < world:
        raise EntryError(f"the model has {len(names)} children, fewer than {world} stages")
    q, r = divmod(len(names), world)
    out, at = [], 0
    for s in range(world):
        n = q + (1 if s < r else 0)
        out.append(names[at : at + n])
        at += n
    return out


def _send(t: Any, dst: int) -> None:
    import torch
    import torch.distributed as dist

    head = torch.zeros(10, dtype=torch.int64)
    head[0], head[1] = t.ndim, DTYPES.index(str(t.dtype).replace("torch.", ""))
    head[2 : 2 + t.ndim] = torch.tensor(list(t.shape), dtype=torch.int64)
    dist.send(head, dst)
    dist.send(t.detach().contiguous(), dst)


def _recv(src: int) -> Any:
    import torch
    import torch.distributed as dist

    head = torch.zeros(10, dtype=torch.int64)
    dist.recv(head, src)
    ndim, dt = int(head[0]), getattr(torch, DTYPES[int(head[1])])
    t = torch.empty([int(x) for x in head[2 : 2 + ndim]], dtype=dt)
    dist.recv(t, src)
    return t


def run_pipeline(
    cfg: dict[str, Any], spec: dict[str, Any], result: dict[str, Any], rank: int, world: int
) -> None:
    import torch

    model, loss_fn = spec["model"], spec["loss"]
    result["setup"] = setup_facts(model, loss_fn)
    stages = stage_children(model, spec, world)
    mine = stages[rank]
    result["stages"] = stages
    modules = [model._modules[n] for n in mine]
    prefixes = tuple(f"{n}." for n in mine)
    params = [(n, p) for n, p in model.named_parameters() if n.startswith(prefixes)]
    ref = Reference.of(cfg)
    opt = make_optimizer(spec, [p for _, p in params])
    for m in modules:
        m.train(not cfg.get("eval"))
    for step in range(cfg["steps"]):
        phase = "forward"
        try:
            x, y = fetch(spec, 0, 1, step)
            opt.zero_grad(set_to_none=True)
            torch.manual_seed(SEED + 17 * step)
            act = x if rank == 0 else _recv(rank - 1).requires_grad_()
            out = act
            for m in modules:
                out = m(out)
            rec: StepRecord = {"step": step}
            phase = "backward"
            if rank == world - 1:
                loss = loss_fn(out, y)
                loss.backward()
                rec["loss"], rec["output"] = float(loss.detach()), output_values(out)
            else:
                _send(out, rank + 1)
                out.backward(_recv(rank + 1))
            if rank > 0:
                _send(act.grad, rank - 1)
            phase = "compare"
            if ref is not None:  # this stage's tensors against the reference's
                ref.compare(
                    step, "grads", ((n, p.grad) for n, p in params if p.grad is not None), rec, delete=False
                )
            phase = "optimizer"
            opt.step()
            phase = "compare"
            if ref is not None:
                ref.compare(step, "params", ((n, p.detach()) for n, p in params), rec, delete=False)
                ref.compare(
                    step,
                    "buffers",
                    ((n, b) for n, b in buffers_of(model).items() if n.startswith(prefixes)),
                    rec,
                    delete=False,
                )
            result["steps"].append(rec)
        except EntryError:
            raise
        except Exception as exc:
            result["error"] = error_record(exc, step, phase)
            return


def tp_plan(model: Any, spec: dict[str, Any]) -> dict[str, str]:
    """Module name -> column | row: the entry's `tp` mapping, else the linear layers in order,
    in pairs of column, row (Megatron's MLP: column, elementwise, row); an odd last one stays
    dense."""
    import torch

    if spec.get("tp"):
        plan = {str(k): str(v) for k, v in dict(spec["tp"]).items()}
        bad = [v for v in plan.values() if v not in ("column", "row")]
        if bad:
            raise EntryError(f"tp values must be 'column' or 'row', not {bad[0]!r}")
        return plan
    linears = [n for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
    # In pairs; an odd last layer stays dense (replicated): it reads the row layer's full output.
    paired = linears[: len(linears) // 2 * 2]
    if not paired:
        # Nothing would be split: the shards would be the whole model and "equivalent" would say
        # nothing about tensor parallelism.
        named = f" ({linears[0]})" if linears else ""
        raise EntryError(
            f"--strategy tp splits nn.Linear layers in (column, row) pairs, and this model has "
            f"{len(linears)}{named}: nothing would be split, so there is nothing to verify; give the "
            "entry a 'tp' mapping of module names to 'column' / 'row', or verify it with --strategy ddp"
        )
    return {n: ("column" if i % 2 == 0 else "row") for i, n in enumerate(paired)}


def _tp_functions() -> tuple[Any, Any]:
    import torch
    import torch.distributed as dist

    class CopyToTP(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x.view_as(x)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            g = g.contiguous().clone()
            dist.all_reduce(g)
            return g

    class ReduceFromTP(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            x = x.contiguous().clone()
            dist.all_reduce(x)
            return x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g

    return CopyToTP, ReduceFromTP


def shard_model(model: Any, plan: dict[str, str], rank: int, world: int) -> dict[str, int]:
    """Replace the planned nn.Linear modules by their shard; returns parameter name -> the
    dimension it is sharded along."""
    import torch

    copy_to, reduce_from = _tp_functions()

    class Column(torch.nn.Module):
        def __init__(self, lin: Any):
            super().__init__()
            o = lin.out_features // world
            self.weight = torch.nn.Parameter(lin.weight.detach()[rank * o : (rank + 1) * o].clone())
            self.bias = (
                torch.nn.Parameter(lin.bias.detach()[rank * o : (rank + 1) * o].clone())
                if lin.bias is not None
                else None
            )

        def forward(self, x: Any) -> Any:
            return torch.nn.functional.linear(copy_to.apply(x), self.weight, self.bias)

    class Row(torch.nn.Module):
        def __init__(self, lin: Any):
            super().__init__()
            i = lin.in_features // world
            self.weight = torch.nn.Parameter(lin.weight.detach()[:, rank * i : (rank + 1) * i].clone())
            self.bias = torch.nn.Parameter(lin.bias.detach().clone()) if lin.bias is not None else None

        def forward(self, x: Any) -> Any:
            y = reduce_from.apply(torch.nn.functional.linear(x, self.weight))
            return y + self.bias if self.bias is not None else y

    shards: dict[str, int] = {}
    modules = dict(model.named_modules())
    for name, kind in plan.items():
        lin = modules.get(name)
        if not isinstance(lin, torch.nn.Linear):
            raise EntryError(f"tp names {name!r}, which is not an nn.Linear of the model")
        size = lin.out_features if kind == "column" else lin.in_features
        if size % world:
            raise EntryError(
                f"{name}: {size} {'output' if kind == 'column' else 'input'} features do not split "
                f"into {world} shards"
            )
        parent_name, _, attr = name.rpartition(".")
        parent = modules[parent_name] if parent_name else model
        setattr(parent, attr, Column(lin) if kind == "column" else Row(lin))
        shards[f"{name}.weight"] = 0 if kind == "column" else 1
        if lin.bias is not None and kind == "column":
            shards[f"{name}.bias"] = 0
    return shards


def run_tensor_parallel(
    cfg: dict[str, Any], spec: dict[str, Any], result: dict[str, Any], rank: int, world: int
) -> None:
    import torch

    model, loss_fn = spec["model"], spec["loss"]
    result["setup"] = setup_facts(model, loss_fn)
    plan = tp_plan(model, spec)
    full_shapes = {n: list(p.shape) for n, p in model.named_parameters()}
    result["tp_plan"] = plan
    result["shards"] = shard_model(model, plan, rank, world)
    result["shapes"] = full_shapes
    shards = result["shards"]
    ref = Reference.of(cfg)

    def part(name: str, t: Any) -> Any:
        dim = shards.get(name)
        return t if dim is None else t.chunk(world, dim)[rank]

    opt = make_optimizer(spec, model.parameters())
    model.train(not cfg.get("eval"))
    for step in range(cfg["steps"]):
        phase = "forward"
        try:
            x, y = fetch(spec, 0, 1, step)
            opt.zero_grad(set_to_none=True)
            torch.manual_seed(SEED + 17 * step)
            out = model(x)
            loss = loss_fn(out, y)
            phase = "backward"
            loss.backward()
            rec: StepRecord = {"step": step, "loss": float(loss.detach()), "output": output_values(out)}
            phase = "compare"
            if ref is not None:  # this rank's shards against the same slices of the reference's tensors
                ref.compare(
                    step,
                    "grads",
                    ((n, p.grad) for n, p in model.named_parameters() if p.grad is not None),
                    rec,
                    delete=False,
                    part=part,
                )
            phase = "optimizer"
            opt.step()
            phase = "compare"
            if ref is not None:
                ref.compare(
                    step,
                    "params",
                    ((n, p.detach()) for n, p in model.named_parameters()),
                    rec,
                    delete=False,
                    part=part,
                )
                ref.compare(step, "buffers", iter(buffers_of(model).items()), rec, delete=False)
            result["steps"].append(rec)
        except EntryError:
            raise
        except Exception as exc:
            result["error"] = error_record(exc, step, phase)
            return
