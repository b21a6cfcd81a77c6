"""Prints the wall time of `pgdoctor check --level quick` (median of several runs of the installed
console script) and, in process, of each quick probe that gathers the support bundle (system,
libraries), so a change to those probes shows what it costs the quick pre-flight."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time


def cli_runs(exe: str, runs: int) -> list[float]:
    out = []
    argv = [exe, "check", "--level", "quick"]
    # One unmeasured run first: after a change the first run compiles the changed modules.
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        out.append(time.perf_counter() - start)
    return out


def probe_runs(name: str, runs: int) -> list[float] | None:
    from pgdoctor.probes import load_all
    from pgdoctor.probes.base import PROBES, ProbeContext

    load_all()
    spec = PROBES.get(name)
    if spec is None:
        return None
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        spec.fn(ProbeContext(env=dict(os.environ), level="quick"))
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    exe = shutil.which("pgdoctor") or sys.exit("pgdoctor is not on PATH: pip install -e . first")
    times = cli_runs(exe, 7)
    print(
        f"pgdoctor check --level quick   median {statistics.median(times) * 1000:6.0f} ms  "
        f"min {min(times) * 1000:6.0f} ms  max {max(times) * 1000:6.0f} ms"
    )
    for name in ("system", "libraries"):
        t = probe_runs(name, 7)
        if t is None:
            print(f"probe {name:<24} not registered")
        else:
            print(
                f"probe {name:<24} median {statistics.median(t) * 1000:6.1f} ms  (first {t[0] * 1000:.1f} ms)"
            )


if __name__ == "__main__":
    main()
