"""Slow-node isolation on 4 namespace hosts: one host's link throttled to about a tenth.

Each run makes 4 network namespaces on a private bridge (tests/helpers/netns.py), rate-limits every host
with tc tbf (host S at a tenth of the others' rate; S changes from run to run), starts
`pgdoctor check --only net --json` once per host and reads which host rank 0's report names in
NET115. Prints one line per run (throttled host, named hosts, measured ratio, seconds including
namespace setup and teardown) and the tally. Bar: the throttled host named in 5 of 5 runs, each
run under 60 s. Needs root.

    python benchmarks/bench_netns_slow_node.py [--runs 5] [--fast-mbit 400] [--slow-mbit 40]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(
    0, str(Path(__file__).resolve().parent.parent)
)  # the test helpers are the package tests.helpers

from tests.helpers.netns import NetnsLab, run_pgdoctor_check, unavailable_reason

BAR_S = 60.0


def one_run(slow: int, fast_mbit: float, slow_mbit: float) -> tuple[list[str], float, float, int]:
    start = time.monotonic()
    with NetnsLab(4) as lab:
        for i in range(4):
            lab.throttle(i, slow_mbit if i == slow else fast_mbit)
        outs = run_pgdoctor_check(lab, ["--only", "net", "--json", "--timeout", "50"], 58)
    seconds = time.monotonic() - start
    try:
        report = json.loads(outs[0].stdout)
    except json.JSONDecodeError:
        print(f"  rank 0 printed no report (rc {outs[0].returncode}): {outs[0].stderr[-300:]}")
        return [], 0.0, seconds, 0
    named = [f for f in report["findings"] if f["code"] == "NET115"]
    bw = next((m["value"] for m in report["measurements"] if m["key"] == "cluster.bandwidth"), {})
    pairs = bw.get("pairs", []) if isinstance(bw, dict) else []
    return (
        [f["scope"]["host"] for f in named],
        named[0]["facts"]["ratio"] if named else 0.0,
        seconds,
        len(pairs),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--fast-mbit", type=float, default=400.0)
    ap.add_argument("--slow-mbit", type=float, default=40.0)
    args = ap.parse_args()
    reason = unavailable_reason()
    if reason:
        sys.exit(f"cannot run: {reason}")
    hits, times = 0, []
    print(
        f"4 namespace hosts, tbf {args.fast_mbit:g} Mbit/s, one host at {args.slow_mbit:g} Mbit/s "
        f"({args.slow_mbit / args.fast_mbit:.2f}x)"
    )
    for run in range(args.runs):
        slow = 1 + run % 3  # hosts 1..3 in turn (host 0 is MASTER_ADDR)
        named, ratio, seconds, npairs = one_run(slow, args.fast_mbit, args.slow_mbit)
        ok = named == [f"nshost{slow}"]
        hits += ok
        times.append(seconds)
        print(
            f"run {run + 1}: throttled nshost{slow}  named {','.join(named) or '-'}  "
            f"ratio {ratio:.2f}  pairs {npairs}  {seconds:5.1f} s  {'OK' if ok else 'MISS'}"
        )
    worst = max(times)
    verdict = "OK" if hits == args.runs and worst < BAR_S else "FAIL"
    print(
        f"named the throttled host in {hits}/{args.runs} runs; seconds per run: min {min(times):.1f} "
        f"mean {sum(times) / len(times):.1f} max {worst:.1f} (bar {BAR_S:.0f} s)  {verdict}"
    )


if __name__ == "__main__":
    main()
