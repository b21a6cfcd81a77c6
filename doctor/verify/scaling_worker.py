"""A rank of `pgdoctor bench scaling`: trains the entry and times each step's phases inside
pgdoctor's instrumentation ranges (data, fwd, bwd, optim, comm.all_reduce); at more than one
rank it also measures the all-reduce of the gradients' size on its own, the link the planner's
prediction divides by."""

from __future__ import annotations

import statistics
import time
from typing import Any

from pgdoctor.trace import instrument as rng
from pgdoctor.verify.common import SEED, batch_size, fetch, forward, make_optimizer

WARMUP = 1


def _link(numel: int, world: int) -> tuple[float, float]:
    """(busbw GB/s, one-message latency in us) of a gloo all-reduce here, nccl-tests' busbw."""
    import torch
    import torch.distributed as dist

    buf = torch.zeros(max(numel, 1))
    for _ in range(2):
        dist.all_reduce(buf)
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        dist.all_reduce(buf)
        times.append(time.perf_counter() - t0)
    one = torch.zeros(1)
    lat = []
    for _ in range(10):
        t0 = time.perf_counter()
        dist.all_reduce(one)
        lat.append(time.perf_counter() - t0)
    t = statistics.median(times)
    busbw = 2 * (world - 1) / world * buf.numel() * 4 / t / 1e9
    return busbw, statistics.median(lat) / (2 * (world - 1)) * 1e6


def run_scaling(
    cfg: dict[str, Any], spec: dict[str, Any], result: dict[str, Any], rank: int, world: int
) -> None:
    import torch
    import torch.distributed as dist

    model, loss_fn = spec["model"], spec["loss"]
    numel = sum(p.numel() for p in model.parameters() if p.requires_grad)
    result["grad_bytes"] = numel * 4
    comm: list[float] = []
    if world > 1:
        result["busbw_gbps"], result["latency_us"] = _link(numel, world)
        from torch.nn.parallel import DistributedDataParallel as DDP

        def hook(state: Any, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
            t0 = time.perf_counter()
            rng.push("comm.all_reduce", {"bucket": bucket.index(), "bytes": bucket.buffer().numel() * 4})
            buf = bucket.buffer().div_(world)
            fut = dist.all_reduce(buf, async_op=True).get_future()
            rng.pop("comm.all_reduce")

            def done(f: Any) -> Any:
                comm.append(time.perf_counter() - t0)
                return f.value()[0]

            return fut.then(done)

        # DDP compares the annotations with the classes; this module's are strings (future import).
        hook.__annotations__ = {
            "state": object,
            "bucket": dist.GradBucket,
            "return": torch.futures.Future[torch.Tensor],
        }

        wrapped = DDP(model)
        wrapped.register_comm_hook(None, hook)
        result["buckets"] = None
    else:
        wrapped = model
    opt = make_optimizer(spec, model.parameters())
    wrapped.train()
    strong = bool(cfg.get("strong"))
    for step in range(cfg["steps"] + WARMUP):
        comm.clear()
        t0 = time.perf_counter()
        with rng.step(step):
            with rng.range("data"):
                # Weak scaling: every rank gets the one-process micro-batch; strong: the entry's share.
                x, y = fetch(spec, rank, world, step) if strong else fetch(spec, 0, 1, step)
            t1 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            torch.manual_seed(SEED + 17 * step)
            with rng.range("fwd"):
                loss = loss_fn(forward(wrapped, x), y)
            t2 = time.perf_counter()
            with rng.range("bwd"):
                loss.backward()
            t3 = time.perf_counter()
            with rng.range("optim"):
                opt.step()
            t4 = time.perf_counter()
        if step >= WARMUP:
            result["steps"].append(
                {
                    "step": step,
                    "batch": batch_size(x),
                    "step_s": t4 - t0,
                    "data_s": t1 - t0,
                    "fwd_s": t2 - t1,
                    "bwd_s": t3 - t2,
                    "optim_s": t4 - t3,
                    "comm_s": sum(comm),
                    "buckets": len(comm),
                }
            )
