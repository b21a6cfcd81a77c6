"""`pgdoctor diagnose` on an Nsight Systems export against `nsys stats` producing its kernel and
NVTX summaries (gpukernsum, nvtxsum: the 2022.4 names) on the same file: median wall time of
each as a command, the ratio, and the peak RSS of diagnose.

    python benchmarks/bench_nsys.py [EXPORT.sqlite] [--repeat 5] [--nsys PATH]

Default export: the largest in tests/fixtures/nsys; default nsys: the one scripts/nsys-setup.sh
unpacks (~/.cache/pgdoctor/nsys).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(argv: list[str], cwd: str) -> float:
    t0 = time.perf_counter()
    # TMPDIR: nsys's lock files (TMPDIR/nvidia) go with the temporary directory.
    subprocess.run(
        argv, check=True, capture_output=True, timeout=600, cwd=cwd, env=dict(os.environ, TMPDIR=cwd)
    )
    return time.perf_counter() - t0


def main() -> int:
    default_nsys = (
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pgdoctor/nsys/tree/usr/bin/nsys"
    )
    ap = argparse.ArgumentParser()
    ap.add_argument("export", nargs="?")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--nsys", default=str(default_nsys))
    args = ap.parse_args()
    src = (
        Path(args.export)
        if args.export
        else max((ROOT / "tests/fixtures/nsys").glob("*.sqlite"), key=lambda p: p.stat().st_size)
    )
    if not Path(args.nsys).exists():
        print(f"no nsys at {args.nsys}: run scripts/nsys-setup.sh", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / src.name
        shutil.copy(src, db)
        ours = [
            timed([sys.executable, "-m", "pgdoctor", "diagnose", "--json", str(db)], tmp)
            for _ in range(args.repeat)
        ]
        theirs = [
            timed(
                [
                    args.nsys,
                    "stats",
                    "--report",
                    "gpukernsum,nvtxsum",
                    "--format",
                    "csv",
                    "--force-export=false",
                    "--force-overwrite=true",
                    "-o",
                    str(Path(tmp) / "s"),
                    str(db),
                ],
                tmp,
            )
            for _ in range(args.repeat)
        ]
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    o, t = statistics.median(ours), statistics.median(theirs)
    print(f"{src.name}: {src.stat().st_size / 1e6:.1f} MB")
    print(f"pgdoctor diagnose --json   median {o:.3f} s  (n={len(ours)})")
    print(f"nsys stats gpukernsum,nvtxsum median {t:.3f} s  (n={len(theirs)})")
    print(f"ratio diagnose / nsys stats: {o / t:.2f} (below 1: diagnose is faster)")
    print("(both include their start-up: the Python interpreter and pgdoctor's imports, nsys's launcher)")
    print(f"peak RSS of the largest child: {rss_mb:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
