"""Write synthetic per-rank Kineto GPU traces in torch.profiler's exact JSON layout (header keys,
distributedInfo, ProfilerStep#N cpu_op ranges, cudaLaunchKernel cuda_runtime calls and kernel
events tied by args.correlation, NCCL kernels on their own stream), streamed to gzip.

A CPU host cannot record a GPU trace, so tests of the GPU-only findings (RUN406, RUN408,
RUN409) and the benchmark's 128-rank scale set use these; every figure they check is
computable from the layout given here.

    write_rank(path, rank, world, steps=4, compute_us=..., gap_us=..., comm_us=..., delay_us=...)
"""

from __future__ import annotations

import gzip
import json
from typing import Any, Optional


def write_rank(
    path: str,
    rank: int,
    world: int,
    steps: int = 4,
    kernels: int = 20,
    compute_us: float = 400.0,
    gap_us: float = 20.0,
    launch_us: float = 8.0,
    comm_us: float = 1500.0,
    delay_us: float = 0.0,
    memcpy_us: float = 50.0,
    overlap: bool = False,
    pad_kernels: int = 0,
    world_delay_us: float = 0.0,
    t0: float = 1_700_000_000_000.0,
    name_bytes: int = 0,
) -> dict[str, Any]:
    """One rank. Each step: a memcpy, `kernels` compute kernels of compute_us separated by gap_us,
    then an all-reduce that ends when the latest rank (world_delay_us late) has joined; this rank
    starts its work delay_us late. `pad_kernels`
    adds that many tiny kernels per step (to make big files). Returns the expected figures."""
    enc = json.JSONEncoder(separators=(", ", ": "))  # as Kineto writes (HTA finds the rank by `"rank": N`)
    corr = 1_000_000  # Kineto's correlation ids are large; small ones make HTA's int downcast overflow
    pid, tid = 1000 + rank, 1000 + rank
    step_len = (
        memcpy_us + kernels * (compute_us + gap_us) + comm_us + world_delay_us + pad_kernels * 3.0 + 200.0
    )
    pad_name = "void pad_kernel_" + "x" * name_bytes
    with gzip.open(path, "wt", compresslevel=1) as f:
        f.write(
            '{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "Synthetic GPU"}], '
            '"distributedInfo": '
        )
        f.write(enc.encode({"backend": "nccl", "rank": rank, "world_size": world}))
        f.write(', "traceEvents": [')
        first = True

        def emit(ev: dict[str, Any]) -> None:
            nonlocal first
            f.write(("" if first else ",\n") + enc.encode(ev))
            first = False

        for s in range(steps):
            base = t0 + s * step_len
            emit(
                {
                    "ph": "X",
                    "cat": "user_annotation",
                    "name": f"ProfilerStep#{s}",
                    "pid": pid,
                    "tid": tid,
                    "ts": base,
                    "dur": step_len - 10.0,
                    "args": {},
                }
            )
            t = base + 5.0 + delay_us  # a late rank starts its work late

            def launch(name: str, start: float, dur: float, stream: int, cat: str = "kernel") -> None:
                nonlocal corr
                emit(
                    {
                        "ph": "X",
                        "cat": "cuda_runtime",
                        "name": "cudaLaunchKernel",
                        "pid": pid,
                        "tid": tid,
                        "ts": start - launch_us - 1.0,
                        "dur": launch_us,
                        "args": {"correlation": corr},
                    }
                )
                emit(
                    {
                        "ph": "X",
                        "cat": cat,
                        "name": name,
                        "pid": 0,
                        "tid": stream,
                        "ts": start,
                        "dur": dur,
                        "args": {"correlation": corr, "stream": stream, "device": 0},
                    }
                )
                corr += 1

            launch("Memcpy HtoD (Pageable -> Device)", t, memcpy_us, 7, "gpu_memcpy")
            t += memcpy_us + gap_us
            comm_start = None
            for k in range(kernels):
                if overlap and k == kernels // 2:
                    comm_start = t
                launch(f"void gemm_kernel_{k % 4}<float>(float*)", t, compute_us, 7)
                t += compute_us + gap_us
            for _ in range(pad_kernels):
                launch(pad_name, t, 1.0, 7)
                t += 3.0
            # NCCL: the kernel starts at launch and runs until every rank has arrived.
            start = comm_start if comm_start is not None else t
            end = (
                base
                + 5.0
                + memcpy_us
                + gap_us
                + kernels * (compute_us + gap_us)
                + pad_kernels * 3.0
                + comm_us
            )
            end += world_delay_us  # everyone's all-reduce ends when the latest rank has joined
            launch(
                "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
                start,
                end - start,
                20,
            )
        f.write("],\n")
        f.write('"traceName": ' + enc.encode(path.rsplit("/", 1)[-1]) + "}")
    return {"step_len_us": step_len}


def write_set(
    directory: str, world: int, slow_rank: Optional[int] = None, delay_us: float = 0.0, **kw: Any
) -> list[str]:
    """A world of ranks; `slow_rank` starts each step `delay_us` late (the others' all-reduce waits)."""
    import os

    os.makedirs(directory, exist_ok=True)
    paths = []
    for r in range(world):
        p = os.path.join(directory, f"rank{r}.pt.trace.json.gz")
        write_rank(
            p,
            r,
            world,
            delay_us=delay_us if r == slow_rank else 0.0,
            world_delay_us=delay_us if slow_rank is not None else 0.0,
            **kw,
        )
        paths.append(p)
    return paths


# The GPU-only findings' fixtures (tests/fixtures/codes/RUN406, RUN408, RUN409): one rank each,
# bad and good differ in the one thing the code is about.
CODE_FIXTURES: dict[str, dict[str, dict[str, Any]]] = {
    "RUN406": {"bad": {"comm_us": 6000.0}, "good": {"comm_us": 10.0, "overlap": True}},
    "RUN408": {"bad": {"gap_us": 600.0}, "good": {"gap_us": 5.0}},
    "RUN409": {
        "bad": {"compute_us": 5.0, "launch_us": 12.0, "gap_us": 15.0, "kernels": 200, "comm_us": 10.0},
        "good": {"compute_us": 400.0, "launch_us": 8.0, "gap_us": 5.0, "comm_us": 10.0},
    },
}


def write_code_fixtures(root: str) -> list[str]:
    import os

    out = []
    for code, pair in CODE_FIXTURES.items():
        for which, kw in pair.items():
            path = os.path.join(root, code, f"{which}.pt.trace.json.gz")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            write_rank(path, 0, 1, t0=1_700_000_000_000.0, **kw)
            out.append(path)
    return out


if __name__ == "__main__":
    import os
    import sys

    print(
        "\n".join(
            write_code_fixtures(
                sys.argv[1]
                if len(sys.argv) > 1
                else os.path.join(
                    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "codes"
                )
            )
        )
    )
