"""Peak memory of `pgdoctor diagnose` on Nsight Systems SQLite exports of growing size: the issue's
bar is that it stays flat (the tables are streamed and aggregated, never held whole).

    python benchmarks/bench_nsys_memory.py [EXPORT.sqlite] [--factors 1,8,32]

The larger exports are made from a copy of a real one (default: the largest in
tests/fixtures/nsys) by repeating its activity rows (CUPTI kernels, memcpy, memset, runtime
calls and NVTX events) K times, each copy shifted past the previous one in time and in
correlation id, so the result is the same job recorded K times as long. Prints, per factor, the
rows, the file's size, the child's peak RSS (getrusage of that child alone) and its wall time.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
from pathlib import Path

from bench_nsys import timed  # this folder is on sys.path when a benchmark runs

ROOT = Path(__file__).resolve().parents[1]
ACTIVITY = (
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "NVTX_EVENTS",
)


def grow(src: Path, dst: Path, factor: int) -> int:
    """Copy `src` to `dst` with its activity rows repeated `factor` times; the activity row count."""
    dst.write_bytes(src.read_bytes())
    con = sqlite3.connect(dst)
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        present = [t for t in ACTIVITY if t in tables]
        spans = [
            r
            for r in con.execute(
                " UNION ALL ".join(f"SELECT min(start), max(coalesce(end, start)) FROM {t}" for t in present)
            )
            if r[0] is not None
        ]
        lo, hi = min(r[0] for r in spans), max(r[1] for r in spans)
        shift = hi - lo + 1_000_000  # each copy starts 1 ms after the previous one ended
        corr = [
            con.execute(f"SELECT max(correlationId) FROM {t}").fetchone()[0] or 0
            for t in present
            if "correlationId" in {c[1] for c in con.execute(f"PRAGMA table_info({t})")}
        ]
        corr_shift = max(corr, default=0) + 1
        for t in present:
            cols = [c[1] for c in con.execute(f"PRAGMA table_info({t})")]
            exprs = []
            for c in cols:
                if c in ("start", "end"):
                    exprs.append(f"{c} + :k * {shift}")
                elif c == "correlationId":
                    exprs.append(f"{c} + :k * {corr_shift}")
                else:
                    exprs.append(c)
            # Only the original rows are copied (rowid at most the original count).
            n = con.execute(f"SELECT max(rowid) FROM {t}").fetchone()[0] or 0
            sel = f"SELECT {', '.join(exprs)} FROM {t} WHERE rowid <= {n}"
            if t == "NVTX_EVENTS":  # domain and registration events once, ranges repeated
                sel += " AND eventType IN (59, 60)"
            for k in range(1, factor):
                con.execute(f"INSERT INTO {t} ({', '.join(cols)}) {sel}", {"k": k})
        con.commit()
        return sum(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in present)
    finally:
        con.close()


def measure(db: Path, cwd: str) -> tuple[float, float]:
    """(peak RSS in MB, wall seconds) of one `pgdoctor diagnose --json` child."""
    wall, _, rss_mb = timed(
        [sys.executable, "-m", "pgdoctor", "diagnose", "--json", str(db)], cwd, dict(os.environ)
    )
    return rss_mb, wall


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("export", nargs="?")
    ap.add_argument("--factors", default="1,8,32")
    args = ap.parse_args()
    src = (
        Path(args.export)
        if args.export
        else max((ROOT / "tests/fixtures/nsys").glob("*.sqlite"), key=lambda p: p.stat().st_size)
    )
    factors = [int(f) for f in args.factors.split(",") if f.strip()]
    print(f"{src.name} with its activity rows repeated K times (copies shifted in time)")
    print(f"{'K':>4} {'rows':>10} {'file MB':>8} {'peak RSS MB':>12} {'wall s':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for k in factors:
            db = Path(tmp) / f"x{k}_{src.name}"
            rows = grow(src, db, k)
            rss, wall = measure(db, tmp)
            print(f"{k:>4} {rows:>10} {db.stat().st_size / 1e6:>8.1f} {rss:>12.1f} {wall:>7.2f}")
            db.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
