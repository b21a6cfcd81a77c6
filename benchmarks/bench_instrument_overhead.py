"""Cost of pgdoctor's instrumentation with no tool attached: a plain training step against the
same step under pgdoctor.instrument(model, optimizer) plus `step` and `data` ranges.

Prints per-step medians of both, their ratio (the goal is within 3%), the cost of one range on
its own, and, for information, the instrumented step with tracing on. Blocks of plain and
instrumented steps alternate so that drift on a shared host hits both alike.

    python benchmarks/bench_instrument_overhead.py [--width 512] [--batch 256] [--steps 400]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import torch
import torch.nn.functional as F
from torch import nn

import pgdoctor
from pgdoctor.trace import instrument as ins


def make(width: int, layers: int) -> tuple[nn.Module, torch.optim.Optimizer]:
    torch.manual_seed(0)
    mods: list[nn.Module] = []
    for _ in range(layers):
        mods += [nn.Linear(width, width), nn.ReLU()]
    model = nn.Sequential(*mods)
    return model, torch.optim.SGD(model.parameters(), lr=1e-4)


def plain_step(
    model: nn.Module, opt: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor, n: int
) -> None:
    xb, yb = x.clone(), y.clone()
    F.mse_loss(model(xb), yb).backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


def instrumented_step(
    model: nn.Module, opt: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor, n: int
) -> None:
    with pgdoctor.step(n):
        with pgdoctor.range("data"):
            xb, yb = x.clone(), y.clone()
        F.mse_loss(model(xb), yb).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)


def timed(fn, model, opt, x, y, count: int, start: int) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for i in range(count):
        t0 = time.perf_counter_ns()
        fn(model, opt, x, y, start + i)
        out.append((time.perf_counter_ns() - t0) / 1e3)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--width", type=int, default=512)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--block", type=int, default=20)
    args = ap.parse_args()
    if ins.tool_attached():
        # Then pgdoctor pushes to a real domain even where the nvtx package hands out its dummy
        # (Nsight Systems 2022.4): the figures below are the cost under the tool.
        print(
            f"an NVTX tool is named ({', '.join(k for k in ins.TOOL_ENV if os.environ.get(k))}): "
            "this measures with a tool attached",
            file=sys.stderr,
        )
    torch.set_num_threads(1)
    x, y = torch.randn(args.batch, args.width), torch.randn(args.batch, args.width)
    plain_m, plain_o = make(args.width, args.layers)
    inst_m, inst_o = make(args.width, args.layers)
    handles = pgdoctor.instrument(inst_m, inst_o)
    print(
        f"torch {torch.__version__}, 1 thread, MLP {args.layers}x{args.width}, batch {args.batch}; "
        f"NVTX tool attached: {ins.nvtx_enabled()}"
    )
    for fn, m, o in ((plain_step, plain_m, plain_o), (instrumented_step, inst_m, inst_o)):
        timed(fn, m, o, x, y, 20, 0)  # warm-up
    plain: list[float] = []
    inst: list[float] = []
    traced: list[float] = []
    ratios: list[float] = []
    traced_ratios: list[float] = []
    with tempfile.TemporaryDirectory() as d:
        for b in range(args.steps // args.block):
            base = b * args.block
            pb = timed(plain_step, plain_m, plain_o, x, y, args.block, base)
            ib = timed(instrumented_step, inst_m, inst_o, x, y, args.block, base)
            ins.enable_trace(d, 0)
            tb = timed(instrumented_step, inst_m, inst_o, x, y, args.block, base)
            ins.disable_trace()
            plain += pb
            inst += ib
            traced += tb
            ratios.append(statistics.median(ib) / statistics.median(pb))
            traced_ratios.append(statistics.median(tb) / statistics.median(pb))
    p, i, t = statistics.median(plain), statistics.median(inst), statistics.median(traced)
    r, rt = statistics.median(ratios), statistics.median(traced_ratios)
    print(f"plain step        median {p:9.1f} us  (n={len(plain)})")
    print(
        f"instrumented step median {i:9.1f} us  block-paired ratio {r:.4f} ({(r - 1) * 100:+.2f}%, goal "
        f"within 3%)"
    )
    print(
        f"  with tracing on median {t:9.1f} us  block-paired ratio {rt:.4f} ({(rt - 1) * 100:+.2f}%, "
        f"information)"
    )

    n = 100_000
    t0 = time.perf_counter_ns()
    for k in range(n):
        with pgdoctor.range("comm.all_reduce", bucket=k, bytes=4):
            pass
    per_range = (time.perf_counter_ns() - t0) / n / 1e3
    ranges_per_step = 5  # step, data, fwd, bwd, optim
    print(
        f"one range, no tool, no trace: {per_range:.2f} us; {ranges_per_step} ranges per step = "
        f"{ranges_per_step * per_range / p * 100:.3f}% of the plain step"
    )
    handles.remove()
    return 0


if __name__ == "__main__":
    sys.exit(main())
