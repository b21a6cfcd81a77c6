"""`pgdoctor bench scaling` of a small model over gloo on this host: the measured speedup at 2
ranks, the communication share, and the planner's prediction beside it.

    python benchmarks/bench_scaling.py [--entry pgdoctor.verify.examples:small_mlp] [--steps 5]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entry", default="pgdoctor.verify.examples:small_mlp")
    ap.add_argument("--nproc", default="1,2")
    ap.add_argument("--steps", default="5")
    args = ap.parse_args()
    t0 = time.monotonic()
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "pgdoctor",
            "bench",
            "scaling",
            args.entry,
            "--nproc",
            args.nproc,
            "--steps",
            args.steps,
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    wall = time.monotonic() - t0
    doc = json.loads(res.stdout)
    rows = doc["scaling"]["rows"]
    print(
        f"{args.entry}: gradients {doc['scaling']['grad_bytes'] / 2**20:.2f} MiB, weak scaling, gloo; "
        f"{wall:.1f} s"
    )
    print(
        f"{'ranks':>5} {'step ms':>8} {'comm ms':>8} {'comm %':>7} {'speedup':>8} {'eff':>5} {'pred ms':>8} "
        f"{'pred x':>7} {'meas/pred':>9} {'busbw GB/s':>10}"
    )
    for r in rows:
        pred = r.get("predicted_step_s") or 0.0
        print(
            f"{r['nproc']:5} {r['step_s'] * 1e3:8.2f} {r['comm_s'] * 1e3:8.2f} {r['comm_share']:7.0%} "
            f"{r['speedup']:8.2f} {r['efficiency']:5.0%} {pred * 1e3:8.2f} "
            f"{r.get('predicted_speedup') or 0:7.2f} "
            f"{(r['step_s'] / pred if pred else 0):9.2f} {r.get('busbw_gbps') or 0:10.2f}"
        )
    for f in doc["findings"]:
        print(f"{f['code']} {f['message']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
