"""Wall time of every `pgdoctor repro FAULT --parallel STRATEGY` combination on this host, and
what each diagnosis named (the goal: each under 60 s on 2-4 ranks of a 2-core CPU machine),
with whether the root cause (findings[0]) is the injected rank and the rest its cascade.

    python benchmarks/bench_repro.py [--nproc N] [--pg-timeout S]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

FAULTS = ("oom", "timeout", "imbalance")
STRATEGIES = ("ddp", "pp", "tp")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--pg-timeout", default="5")
    args = ap.parse_args()
    print(f"{'fault':10} {'strategy':8} {'ranks':>5} {'run s':>6} {'cli s':>6}  rc  root  named")
    worst = 0.0
    right = 0
    for fault in FAULTS:
        for strategy in STRATEGIES:
            t0 = time.monotonic()
            res = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pgdoctor",
                    "repro",
                    fault,
                    "--parallel",
                    strategy,
                    "--nproc",
                    str(args.nproc),
                    "--pg-timeout",
                    args.pg_timeout,
                    "--json",
                ],
                capture_output=True,
                text=True,
                timeout=300,
            )
            cli_s = time.monotonic() - t0
            worst = max(worst, cli_s)
            try:
                report = json.loads(res.stdout)
            except json.JSONDecodeError:
                print(
                    f"{fault:10} {strategy:8} {args.nproc:5} {'-':>6} {cli_s:6.1f}  {res.returncode:2}  no "
                    f"report: "
                    f"{res.stderr.strip()[-200:]}"
                )
                continue
            named = "; ".join(
                f"{f['code']} {f['category']} rank={f['scope'].get('rank')}"
                + (
                    f" phase={f['facts'].get('lab_phase') or f['facts'].get('phase')}"
                    if f["facts"].get("lab_phase") or f["facts"].get("phase")
                    else ""
                )
                + (f" seq={f['facts']['seq']}" if "seq" in f["facts"] else "")
                + (f" ratio={f['facts']['ratio']}" if "ratio" in f["facts"] else "")
                for f in report["findings"][:3]
            )
            if report["incomplete"]:
                named += f"  INCOMPLETE: {report['incomplete']}"
            fs = report["findings"]
            ok = (
                bool(fs)
                and fs[0]["facts"].get("root_cause") is True
                and fs[0]["scope"].get("rank") == report["meta"]["faulty_rank"]
                and all(f["facts"].get("cascade_of") == fs[0]["code"] for f in fs[1:])
            )
            right += ok
            print(
                f"{fault:10} {strategy:8} {args.nproc:5} {report['meta']['wall_s']:6.1f} {cli_s:6.1f}  "
                f"{res.returncode:2}  "
                f"{'ok' if ok else 'NO':4}  {named}"
            )
    print(
        f"slowest: {worst:.1f} s (goal: under 60 s); root cause = the injected rank in {right}/"
        f"{len(FAULTS) * len(STRATEGIES)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
