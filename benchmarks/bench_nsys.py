"""`pgdoctor diagnose` on an Nsight Systems export against `nsys stats` producing its kernel and
NVTX summaries (gpukernsum, nvtxsum: the 2022.4 names) on the same file: median wall and CPU
time of each as a command, the ratio, and the peak RSS of each.

diagnose is timed twice: with Python's bytecode cache (as an installed package has it: pip
compiles the modules at install; here a warm-up run fills a cache in the temporary directory)
and without one (PYTHONDONTWRITEBYTECODE=1, as in a source checkout that cannot write
__pycache__: every module is compiled again at each start).

    python benchmarks/bench_nsys.py [EXPORT.sqlite] [--repeat 5] [--nsys PATH]

Default export: the largest in tests/fixtures/nsys; default nsys: the one scripts/nsys-setup.sh
unpacks (~/.cache/pgdoctor/nsys).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(argv: list[str], cwd: str, env: dict[str, str]) -> tuple[float, float, float]:
    """(wall s, CPU s of the child, its peak RSS in MB). The child's stderr goes to a file (a pipe
    nobody reads could fill and stall it) and its tail is shown when the child fails."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:  # an interrupt: the child goes too
            proc.kill()
            proc.wait()
            raise
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        if proc.returncode not in (0, 1):
            err.seek(0)
            tail = err.read().decode(errors="replace").strip()[-500:]
            raise SystemExit(f"{' '.join(argv[:4])} exited {proc.returncode}: {tail}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _line(label: str, runs: list[tuple[float, float, float]]) -> tuple[float, float]:
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    print(f"{label:<44} wall {wall:.3f} s  cpu {cpu:.3f} s  peak RSS {max(r[2] for r in runs):.0f} MB")
    return wall, cpu


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
        # TMPDIR: nsys's lock files (TMPDIR/nvidia) go with the temporary directory.
        base = dict(os.environ, TMPDIR=tmp)
        cached = {k: v for k, v in base.items() if k != "PYTHONDONTWRITEBYTECODE"}
        cached["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        uncached = dict(base, PYTHONDONTWRITEBYTECODE="1")
        uncached.pop("PYTHONPYCACHEPREFIX", None)
        ours = [sys.executable, "-m", "pgdoctor", "diagnose", "--json", str(db)]
        theirs = [
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
        ]
        timed(ours, tmp, cached)  # warm-up: fills the bytecode cache
        timed(theirs, tmp, base)  # and the page cache for nsys
        runs_cached, runs_uncached, runs_nsys = [], [], []
        for _ in range(args.repeat):  # interleaved: a change of load hits all three alike
            runs_cached.append(timed(ours, tmp, cached))
            runs_uncached.append(timed(ours, tmp, uncached))
            runs_nsys.append(timed(theirs, tmp, base))
    print(f"{src.name}: {src.stat().st_size / 1e6:.1f} MB, {args.repeat} runs each, medians")
    o_wall, o_cpu = _line("pgdoctor diagnose --json (bytecode cached)", runs_cached)
    u_wall, u_cpu = _line("pgdoctor diagnose --json (no bytecode cache)", runs_uncached)
    t_wall, t_cpu = _line("nsys stats --report gpukernsum,nvtxsum", runs_nsys)
    print(
        f"ratio diagnose / nsys stats, wall: {o_wall / t_wall:.2f} cached, {u_wall / t_wall:.2f} uncached; "
        f"cpu: {o_cpu / t_cpu:.2f} cached, {u_cpu / t_cpu:.2f} uncached (below 1: diagnose is faster)"
    )
    print("(both include their start-up: the Python interpreter and pgdoctor's imports, nsys's launcher)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
