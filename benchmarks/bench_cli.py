"""Prints how long `pgdoctor --help` (bar: 0.3 s) and `pgdoctor check` (bar: 5 s on a machine
without a GPU) take, as the median of several runs of the installed console script."""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time


def timed(argv: list[str], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    exe = shutil.which("pgdoctor") or sys.exit("pgdoctor is not on PATH: pip install -e . first")
    for argv, runs, bar in (
        ([exe, "--help"], 15, 0.3),
        ([exe, "check", "--level", "quick"], 5, 5.0),
        ([exe, "check"], 5, 5.0),
    ):
        times = timed(argv, runs)
        med = statistics.median(times)
        name = " ".join(["pgdoctor", *argv[1:]])
        print(
            f"{name:<32} median {med * 1000:7.0f} ms  min {min(times) * 1000:7.0f} ms  "
            f"max {max(times) * 1000:7.0f} ms  bar {bar * 1000:.0f} ms  {'OK' if med < bar else 'OVER'}"
        )


if __name__ == "__main__":
    main()
