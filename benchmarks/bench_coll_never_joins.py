"""Wall time of `pgdoctor bench collectives --nproc 2 --timeout 5` when one rank never joins:
rank 1 imports torch, then never enters the rendezvous (`hang:1:init`), or never finishes its
imports at all (`hang:1:import`, named by the parent after the import allowance). Prints, per
case, the wall time, the exit status and whether rank 1 was named.

    python benchmarks/bench_coll_never_joins.py [--repeat N]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

ARGV = [
    sys.executable,
    "-m",
    "pgdoctor",
    "bench",
    "collectives",
    "--nproc",
    "2",
    "--backend",
    "gloo",
    "--ops",
    "all_reduce",
    "--max-bytes",
    "1K",
    "--timeout",
    "5",
    "--json",
]


def one(fault: str) -> tuple[float, int, bool]:
    t0 = time.monotonic()
    p = subprocess.run(
        ARGV, env={**os.environ, "PGDOCTOR_COLL_FAULT": fault}, capture_output=True, text=True, timeout=120
    )
    took = time.monotonic() - t0
    try:
        findings = json.loads(p.stdout)["findings"]
    except (ValueError, KeyError):
        findings = []
    named = any(1 in (f.get("facts") or {}).get("ranks", []) for f in findings)
    return took, p.returncode, named


def main() -> None:
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 1
    for fault in ("hang:1:init", "hang:1:import"):
        for _ in range(repeat):
            took, code, named = one(fault)
            print(f"{fault:<14} --timeout 5: {took:6.2f} s  exit {code}  rank 1 named: {named}")


if __name__ == "__main__":
    main()
