"""Wall time of `pgdoctor verify` of 2-rank cases, the whole CLI invocation (the goal: under
30 s on a 2-core CPU host), and what each named.

    python benchmarks/bench_verify.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

CASES = (
    ("pgdoctor.verify.examples:mlp", "ddp"),
    ("pgdoctor.verify.examples:mlp_sum_loss", "ddp"),
    ("pgdoctor.verify.examples:batchnorm_mlp", "ddp"),
    ("pgdoctor.verify.examples:mlp", "pp"),
    ("pgdoctor.verify.examples:mlp", "tp"),
)
BAR_S = 30.0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    print(f"{'entry':42} {'strategy':8} {'cli s':>6}  rc  cause")
    worst = 0.0
    for _ in range(args.repeat):
        for entry, strategy in CASES:
            t0 = time.monotonic()
            res = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pgdoctor",
                    "verify",
                    entry,
                    "--nproc",
                    "2",
                    "--strategy",
                    strategy,
                    "--json",
                ],
                capture_output=True,
                text=True,
                timeout=300,
            )
            wall = time.monotonic() - t0
            worst = max(worst, wall)
            try:
                cause = json.loads(res.stdout)["verify"]["cause"]
            except (ValueError, KeyError):
                cause = "no report: " + res.stderr.strip()[-200:]
            print(f"{entry:42} {strategy:8} {wall:6.1f}  {res.returncode:2}  {cause}")
    print(f"slowest: {worst:.1f} s (bar {BAR_S:.0f} s): {'ok' if worst < BAR_S else 'OVER'}")
    return 0 if worst < BAR_S else 1


if __name__ == "__main__":
    sys.exit(main())
