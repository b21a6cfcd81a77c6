"""A rank of `--strategy ddp` / `fsdp`: trains the user's model under DDP or fully_shard and,
as it goes, compares what it holds against the reference instead of writing it out.

Rank 0 ran the reference in this same process just before (worker.main), which saved each
step's gradients, parameters and buffers (records.tensor_file). After backward, and again after
the optimizer step, rank 0 maps that step's file of each kind, compares tensor by tensor (a
byte-equality test first, the exact element comparison only where it fails, tensors.diff),
records a TensorDiff per tensor and deletes the file. Under FSDP every rank gathers each full
tensor in the same order (a collective); only rank 0 keeps it long enough to compare. Buffers
are compared across ranks over the process group: digests gathered, and where one differs
from rank 0's, rank 0's tensor broadcast and diffed (`peer_diffs`). Memory: the model's
training state, one reference file and one full tensor at a time; no step is kept."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pgdoctor.verify.common import (
    SEED,
    batch_size,
    buffers_of,
    counted_targets,
    device_of,
    error_record,
    fetch,
    forward,
    make_optimizer,
    optimizer_settings,
    output_parts,
    output_shape,
    probe_with_loss,
    refuse_gpu_only_modules,
    sample_hash,
    scalar,
    setup_facts,
)
from pgdoctor.verify.entry import EntryError, Verdict
from pgdoctor.verify.records import RankRecord, StepRecord, TensorDiff
from pgdoctor.verify.reference import Reference
from pgdoctor.verify.step_evidence import ScaledInStep
from pgdoctor.verify.tensors import dense, diff, digest, full


def _each(named: Iterator[tuple[str, Any]], gather: bool) -> Iterator[tuple[str, Any]]:
    """(name, tensor) with DTensors made whole and sparse gradients dense, one at a time."""
    for name, t in named:
        yield name, dense(full(t) if gather else t)


def _drain(it: Iterator[Any]) -> None:
    for _ in it:  # the other ranks' share of FSDP's gathers
        pass


def run_data_parallel(
    cfg: dict[str, Any], spec: dict[str, Any], result: RankRecord, rank: int, world: int
) -> None:
    import torch

    model, loss_fn = spec["model"], spec["loss"]
    device = device_of(cfg, rank)
    fsdp = cfg["strategy"] == "fsdp"
    result["setup"] = setup_facts(model, loss_fn)
    if fsdp:
        # DDP broadcasts rank 0's weights when it wraps the model; fully_shard keeps each rank's
        # shard of its own initialisation, so ranks that initialise differently train different models.
        result["setup"]["init_digests"] = {n: digest([p]) for n, p in model.named_parameters()}
    refuse_gpu_only_modules(model, device)
    model.to(device)
    result["probe"], result["loss_batch_ratio"] = probe_with_loss(model, spec, world, device)
    # Every rank checks its samples against the reference's; rank 0 alone compares tensors.
    samples = Reference.of(cfg)
    ref = samples if rank == 0 else None
    try:
        if fsdp:
            from torch.distributed.fsdp import fully_shard

            fully_shard(model)
            wrapped = model
        else:
            from torch.nn.parallel import DistributedDataParallel as DDP

            wrapped = DDP(model, device_ids=[rank] if device != "cpu" else None)
    except Exception as exc:
        result["error"] = error_record(exc, -1, "wrap")
        return
    opt = make_optimizer(spec, model.parameters())
    result["setup"]["optimizer"] = optimizer_settings(opt)
    wrapped.train(not cfg.get("eval"))
    batches: list[int] = []
    result["batches"] = batches
    for step in range(cfg["steps"]):
        phase = "data"
        try:
            x, y = fetch(spec, rank, world, step, device)
            batches.append(batch_size(x))
            rec: StepRecord = {"step": step, "batch": batches[-1], "hash": sample_hash(x, y)}
            counted = counted_targets(loss_fn, y)
            if counted is not None:
                rec["counted"] = counted
            if samples is not None:
                samples.check_samples(rank, world, step, rec["hash"])
            opt.zero_grad(set_to_none=True)
            torch.manual_seed(SEED + 17 * step)
            phase = "forward"
            out = forward(wrapped, x)
            loss = scalar(loss_fn(out, y))
            phase = "backward"
            loss.backward()
            rec["loss"] = float(loss.detach())
            if step == 0:
                # against the reference's rows of this rank's samples: equal, the forward is the
                # same per sample on both sides (loss_weights.py reads them)
                rec["output_part"] = next(iter(output_parts(out, [batches[-1]])), [])
                rec["output_shape"] = output_shape(out)
            del out, loss, x, y
            phase = "compare"
            rec["no_grad"] = [n for n, p in model.named_parameters() if p.requires_grad and p.grad is None]
            result["steps"].append(rec)  # filled in below; an error later in the step is in result["error"]
            if rec["no_grad"] and not fsdp and world > 1:
                # DDP's reduction of this step cannot finish (the other ranks wait for these
                # gradients' bucket); DDP itself raises at the next step. Leave now, before any
                # collective of ours pairs with the bucket's all-reduce.
                raise Verdict(
                    f"{len(rec['no_grad'])} parameter(s) got no gradient on this rank "
                    f"({', '.join(rec['no_grad'][:4])}): DDP without find_unused_parameters "
                    "cannot finish the step's reduction"
                )
            grads = _each(((n, p.grad) for n, p in model.named_parameters() if p.grad is not None), fsdp)
            if ref is not None:
                ref.compare(step, "grads", grads, rec)
            elif fsdp:
                _drain(grads)
            phase = "optimizer"
            scaled = ScaledInStep(model)  # a clipping inside step(): one factor, the same on every rank
            opt.step()
            scaled.record(rec)
            phase = "compare"
            params = _each(((n, p.detach()) for n, p in model.named_parameters()), fsdp)
            if ref is not None:
                ref.compare(step, "params", params, rec)
            elif fsdp:
                _drain(params)
            buffers = {n: full(b) for n, b in buffers_of(model).items()}
            if ref is not None:
                ref.compare(step, "buffers", iter(buffers.items()), rec)
            if world > 1:
                rec["peer_diffs"] = peer_diffs(buffers, rank, world, device)
            del buffers
        except EntryError:
            raise  # the entry broke its contract: the run ends as the entry's error
        except Exception as exc:
            result["error"] = error_record(exc, step, phase)
            return


def peer_diffs(tensors: dict[str, Any], rank: int, world: int, device: str = "cpu") -> dict[str, TensorDiff]:
    """This rank's tensors against rank 0's, for those whose digest differs. Digests travel as
    int64 tensors (all_gather_object needs NumPy); first a digest of the names and shapes, so
    that ranks whose buffers are not the same set never pair up mismatched broadcasts."""
    import torch
    import torch.distributed as dist

    names = sorted(tensors)

    def gather(values: list[int]) -> list[list[int]]:
        mine = torch.tensor(values, dtype=torch.int64, device=device)  # NCCL gathers device tensors only
        got = [torch.empty_like(mine) for _ in range(world)]
        dist.all_gather(got, mine)
        return [g.cpu().tolist() for g in got]

    layout = _as_int(
        digest(
            [torch.tensor(list(t.shape) or [0]) for t in (tensors[n] for n in names)]
            + [torch.tensor(list(",".join(names).encode()) or [0], dtype=torch.uint8)]
        )
    )
    if len({v[0] for v in gather([layout])}) > 1:
        return {}  # the models differ (detectors.models_differ says so from the setups)
    every = gather([_as_int(digest([tensors[n]])) for n in names]) if names else []
    out: dict[str, TensorDiff] = {}
    for i, n in enumerate(names):
        if all(g[i] == every[0][i] for g in every):
            continue
        t = tensors[n].detach().clone()
        dist.broadcast(t, 0)
        if rank != 0:
            d = diff(tensors[n], t.cpu())
            if d["abs"] > 0:
                out[n] = d
    return out


def _as_int(hexdigest: str) -> int:
    return int(hexdigest[:15], 16)  # fits an int64
