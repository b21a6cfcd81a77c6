"""Predicted vs measured DDP all-reduce time of a real 2-rank gloo DDP step (bar: within 30%).

Each rank measures gloo's all-reduce bus bandwidth (a 64 MiB buffer, median over rounds that
interleave it with the DDP steps) and per-message latency (a 4-byte all-reduce, divided by the
2(n-1) ring steps).
The planner's own DDP traffic model (pgdoctor.plan.comm.traffic, zero=0, 25 MiB buckets)
turns those two numbers and the model's gradient bytes into a predicted all-reduce time.

Then real DDP steps run (MLP, fp32, DDP's default 25 MiB buckets) with a comm hook that
all-reduces each bucket while the backward waits for it, and times it from the moment both
ranks have reached it (a barrier first, so a lagging peer's compute is not counted). The measured
all-reduce time of the step is the sum over its buckets, median over steps and averaged over
the two ranks. Blocking is deliberate: on a CPU machine gloo's reduction runs on the same
cores as backward, so an overlapped all-reduce is slowed by compute, which a GPU (NCCL on its
own SMs and DMA engines) does not suffer. Also printed: with DDP's own overlapped
all-reduce, step time minus step time under no_sync(), i.e. what synchronisation costs the step.

Usage: python benchmarks/bench_plan_ddp_allreduce.py [--width 1024] [--layers 12] [--steps 7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Any

BAR = 0.30


def worker(args: argparse.Namespace) -> None:
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch import nn

    torch.set_num_threads(1)  # two ranks share the cores; no oversubscription
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()

    def timed_all_reduce(t: torch.Tensor) -> float:
        dist.barrier()
        t0 = time.perf_counter()
        dist.all_reduce(t)
        return time.perf_counter() - t0

    probe = torch.ones(args.probe_mib * 2**18)  # fp32
    tiny = torch.ones(1)
    for _ in range(3):
        timed_all_reduce(probe)
    latency_us = statistics.median(timed_all_reduce(tiny) for _ in range(50)) / (2 * (world - 1)) * 1e6

    def build() -> Any:
        torch.manual_seed(0)
        layers: list[nn.Module] = []
        for _ in range(args.layers):
            layers += [nn.Linear(args.width, args.width), nn.ReLU()]
        return nn.parallel.DistributedDataParallel(nn.Sequential(*layers))

    x = torch.randn(args.batch, args.width)
    y = torch.randn(args.batch, args.width)

    def step(ddp: Any, sync: bool) -> float:
        dist.barrier()
        t0 = time.perf_counter()
        if sync:
            F.mse_loss(ddp(x), y).backward()
        else:
            with ddp.no_sync():
                F.mse_loss(ddp(x), y).backward()
        ddp.zero_grad(set_to_none=True)
        return time.perf_counter() - t0

    # A: every bucket's all-reduce timed while the backward waits for it (no overlap), so
    # its duration is the all-reduce's alone, not shared with compute on the same cores.
    blocking = build()
    numel = sum(p.numel() for p in blocking.parameters())
    durations: list[float] = []

    # Unannotated: DDP rejects a hook whose annotations are not the real GradBucket/Future
    # classes, and postponed annotations are strings.
    def hook(state, bucket):  # type: ignore[no-untyped-def]
        buf = bucket.buffer().div_(world)
        dist.barrier()  # the peer's backward may lag: waiting for it is not communication
        t0 = time.perf_counter()
        dist.all_reduce(buf)
        durations.append(time.perf_counter() - t0)
        fut = torch.futures.Future()
        fut.set_result(buf)
        return fut

    blocking.register_comm_hook(None, hook)
    # B: DDP as shipped (async all-reduce overlapping backward): what synchronisation costs the step.
    overlapped = build()
    # Rounds interleave the bandwidth probe with the steps, so that load from other processes
    # on the machine affects both alike; medians over rounds.
    probe_s, comm, synced, unsynced, n_buckets = [], [], [], [], 0
    for i in range(args.steps + 2):
        t_big = timed_all_reduce(probe)
        durations.clear()
        step(blocking, True)
        s, u = step(overlapped, True), step(overlapped, False)
        if i >= 2:  # warm-up: DDP rebuilds its buckets after the first step
            probe_s.append(t_big)
            comm.append(sum(durations))
            n_buckets = len(durations)
            synced.append(s)
            unsynced.append(u)
    busbw_gbps = 2 * (world - 1) / world * probe.numel() * 4 / statistics.median(probe_s) / 1e9
    result = {
        "rank": rank,
        "numel": numel,
        "grad_bytes": numel * 4,
        "busbw_gbps": busbw_gbps,
        "latency_us": latency_us,
        "comm_s": statistics.median(comm),
        "sync_s": statistics.median(synced),
        "nosync_s": statistics.median(unsynced),
        "buckets": n_buckets,
    }
    print("RESULT " + json.dumps(result), flush=True)
    dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--probe-mib", type=int, default=64, help="Buffer of the bandwidth measurement.")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return

    from pgdoctor.knowledge.interconnects import get, measured
    from pgdoctor.plan.comm import Fabric, TrafficInput, traffic
    from pgdoctor.probes.processes import WaitPolicy, free_port, run_children

    port = free_port()
    argv = [
        sys.executable,
        os.path.abspath(__file__),
        "--worker",
        "--width",
        str(args.width),
        "--layers",
        str(args.layers),
        "--batch",
        str(args.batch),
        "--steps",
        str(args.steps),
        "--probe-mib",
        str(args.probe_mib),
    ]
    envs = [
        dict(
            os.environ,
            RANK=str(r),
            WORLD_SIZE="2",
            LOCAL_RANK=str(r),
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(port),
        )
        for r in range(2)
    ]
    outcomes = run_children([argv, argv], envs, WaitPolicy(args.timeout, grace_s=10.0))
    results = []
    for o in outcomes:
        if not o.ok:
            sys.exit(
                f"rank {o.index} failed (rc={o.returncode}, timed out={o.timed_out}):\n{o.stderr[-2000:]}"
            )
        results.append(json.loads(next(ln for ln in o.stdout.splitlines() if ln.startswith("RESULT "))[7:]))

    busbw = statistics.mean(r["busbw_gbps"] for r in results)
    latency = statistics.mean(r["latency_us"] for r in results)
    numel = results[0]["numel"]
    link = measured("gloo-loopback", busbw, latency, "intra", "measured in this run")
    fabric = Fabric(gpus_per_node=2, nodes=1, intra=link, inter=get("eth-1g"))
    predicted = traffic(
        TrafficInput(
            numel=numel,
            layers=args.layers,
            grad_bytes=4,
            param_bytes=4,
            act_bytes=4,
            seq_len=1,
            micro_batch=args.batch,
            hidden=args.width,
            micro_batches=1,
        ),
        fabric,
        dp=2,
        tp=1,
        pp=1,
        zero=0,
    ).dp_s
    measured_s = statistics.mean(r["comm_s"] for r in results)
    exposed = statistics.mean(r["sync_s"] - r["nosync_s"] for r in results)
    ratio = predicted / measured_s
    print(
        f"model: {args.layers} x Linear({args.width}, {args.width}), {numel:,} params, "
        f"{numel * 4 / 1e6:.1f} MB of fp32 gradients, {results[0]['buckets']} DDP buckets, 2 gloo ranks"
    )
    print(
        f"measured gloo all-reduce: busbw {busbw:.3f} GB/s ({args.probe_mib} MiB buffer), "
        f"latency {latency:.1f} us per ring step"
    )
    print(f"predicted DDP all-reduce time per step: {predicted * 1e3:8.1f} ms")
    print(
        f"measured  DDP all-reduce time per step: {measured_s * 1e3:8.1f} ms  (sum of its bucket all-reduces)"
    )
    print(f"overlapped DDP: step - no_sync() step:  {exposed * 1e3:8.1f} ms  (what it costs after overlap)")
    print(
        f"predicted / measured = {ratio:.2f}  bar: within {BAR:.0%}  "
        f"{'OK' if abs(ratio - 1) <= BAR else 'OUTSIDE'}"
    )


if __name__ == "__main__":
    main()
