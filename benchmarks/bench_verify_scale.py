"""`pgdoctor verify` on GPT-style models of 1M, 10M, 124M (GPT-2 small's shape) and 350M
(GPT-2 medium's) parameters, fp32, 2 ranks on gloo, 2 steps, plain SGD: for each size a clean
entry (must be equivalent) and the same model with a sum loss (must be VER103, and name the
same first divergent parameter at every size). Prints per run the size, the wall time of the
whole verify, the peak RSS of each process (rank 0's includes the one-process reference, which
runs first in the same process; the parent is this process) and the verdict.

    python benchmarks/bench_verify_scale.py [--sizes 1m,10m,124m,350m] [--strategy ddp|fsdp] [--clean-only]

The bar: every process within about 3x the model's training state (parameters + gradients,
8 bytes a parameter under SGD), the 350M run within the host's memory (24 GiB).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

import pgdoctor
from pgdoctor.verify.examples import GPT_SIZES

STEPS = 2
NPROC = 2


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default=",".join(GPT_SIZES))
    ap.add_argument("--strategy", default="ddp", choices=("ddp", "fsdp"))
    ap.add_argument("--clean-only", action="store_true")
    ap.add_argument("--timeout", type=float, default=3600.0)
    args = ap.parse_args()
    print(
        f"{'entry':28} {'params':>8} {'state':>8} {'wall s':>7} {'rank0 MiB':>10} {'rank1 MiB':>10} "
        f"{'x state':>7} {'parent MiB':>10}  verdict",
        flush=True,
    )
    ok = True
    first_of_bug: set[str] = set()
    for size in args.sizes.split(","):
        variants = [("", True)] if args.clean_only else [("", True), ("_sum_loss", False)]
        for suffix, clean in variants:
            entry = f"pgdoctor.verify.examples:gpt_{size}{suffix}"
            t0 = time.monotonic()
            res = pgdoctor.verify(
                entry,
                nproc=NPROC,
                steps=STEPS,
                strategy=args.strategy,
                timeout_s=args.timeout,
                pg_timeout_s=args.timeout,
            )
            wall = time.monotonic() - t0
            params = _params(size)
            state_mib = params * 8 / 2**20  # fp32 parameters + gradients (SGD without momentum)
            rss = res.peak_rss_mib
            worst = max(rss.values(), default=0.0)
            parent = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            first = (res.first_divergent or {}).get("param")
            verdict = "equivalent" if res.equivalent else f"NOT equivalent: {res.cause}, first {first}"
            good = res.equivalent if clean else (res.cause == "loss_reduction_sum")
            if not clean and first:
                first_of_bug.add(first)
            ok = ok and good
            print(
                f"{entry.split(':')[1]:28} {params / 1e6:7.1f}M {state_mib:7.0f}M {wall:7.1f} "
                f"{rss.get('rank0', 0):10.0f} {rss.get('rank1', 0):10.0f} {worst / state_mib:7.2f} "
                f"{parent:10.0f}"
                f"  {verdict}{'' if good else '  <-- WRONG'}",
                flush=True,
            )
    if len(first_of_bug) > 1:
        print(f"the buggy entries name different first divergent parameters: {sorted(first_of_bug)}")
        ok = False
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"largest child process peak RSS (getrusage RUSAGE_CHILDREN): {children:.0f} MiB")
    return 0 if ok else 1


def _params(size: str) -> int:
    layers, width, _, vocab = GPT_SIZES[size]
    block = 12 * width * width + 13 * width  # attention (4 d^2 + 4 d), MLP (8 d^2 + 5 d), 2 LayerNorms (4 d)
    return layers * block + vocab * width + 1024 * width + 2 * width


if __name__ == "__main__":
    sys.exit(main())
