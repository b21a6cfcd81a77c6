"""pgdoctor's per-rank profiler trace analysis against Holistic Trace Analysis 0.5.0 on the same
trace sets: figures side by side, wall time and peak RSS of both, the JSON readers compared,
and memory on a 128-rank synthetic set.

    python benchmarks/bench_traces.py [--record] [--synthetic-ranks 128] [--synthetic-mb 8]

HTA needs pandas and torch, so it runs in its own venv, created on first use:
    python3.11 -m venv /tmp/hta-venv
    /tmp/hta-venv/bin/pip install holistictraceanalysis==0.5.0 torch==2.13.0 ijson
(HTA_VENV=... chooses another place). Each analysis runs in a fresh child process that reports
its own wall time (imports included) and peak RSS. Trace sets are ../shared/traces/gpu_* (read
in place, never copied). --record writes HTA's per-rank figures to
tests/fixtures/traces/hta_0.5.0_figures.json, which tests/diagnose/test_profile_traces_hta.py compares with.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "traces"
FIXTURE = ROOT / "tests" / "fixtures" / "traces" / "hta_0.5.0_figures.json"
VENV = Path(os.environ.get("HTA_VENV", "/tmp/hta-venv"))
HERE = Path(__file__).resolve().parent
KEYS = ("compute_pct", "non_compute_pct", "idle_pct", "comm_comp_overlap_pct")


def ensure_venv() -> Path:
    py = VENV / "bin" / "python"
    if not py.exists():
        print(f"creating {VENV} (HolisticTraceAnalysis 0.5.0, torch 2.13.0, ijson) ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, timeout=300)
        subprocess.run(
            [str(py), "-m", "pip", "install", "-q", "holistictraceanalysis==0.5.0", "torch==2.13.0", "ijson"],
            check=True,
            timeout=1800,
        )
    return py


def child(cmd: list[str], timeout: float = 900) -> Optional[dict[str, Any]]:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        print(f"  timed out: {' '.join(cmd[:3])}")
        return None
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        print(f"  failed ({p.returncode}): {p.stderr.strip().splitlines()[-1:] if p.stderr else ''}")
        return None
    return json.loads(lines[-1])  # type: ignore[no-any-return]


def pgdoctor(trace_dir: Path) -> Optional[dict[str, Any]]:
    return child([sys.executable, str(HERE / "pgdoctor_traces_child.py"), str(trace_dir)])


def compare_sets(hta_py: Path, record: bool) -> None:
    sets = sorted(p for p in SHARED.glob("gpu_*") if p.is_dir())
    if not sets:
        print(f"no trace sets under {SHARED}")
        return
    recorded: dict[str, Any] = {}
    tot_hta = tot_pg = 0.0
    print(
        f"{'set':34} {'rank':>4}  {'compute pg/hta':>16} {'non-comp pg/hta':>16} {'idle pg/hta':>16} "
        f"{'overlap pg/hta':>16}  max diff"
    )
    for d in sets:
        h = child([str(hta_py), str(HERE / "hta_child.py"), str(d)])
        g = pgdoctor(d)
        if not h or not g:
            continue
        tot_hta += h["wall_s"]
        tot_pg += g["wall_s"]
        recorded[d.name] = {
            "ranks": h["ranks"],
            "stragglers": h.get("stragglers"),
            "errors": h.get("errors", {}),
        }
        for rank, hr in sorted(h["ranks"].items(), key=lambda kv: int(kv[0])):
            gr = g["ranks"].get(rank, {})
            cells, worst = [], 0.0
            for k in KEYS:
                a, b = gr.get(k), hr.get(k)
                cells.append(f"{a if a is not None else '-':>7}/{b if b is not None else '-':<8}")
                if a is not None and b is not None:
                    worst = max(worst, abs(a - b))
            print(f"{d.name:34} {rank:>4}  {' '.join(cells)}  {worst:.2f}")
        s = g.get("straggler")
        print(
            f"{'':34} straggler: pgdoctor {s['rank'] if s else None} ({s['cause'] if s else '-'}), "
            f"HTA candidates {h.get('stragglers')}; wall pgdoctor {g['wall_s']:.2f} s vs HTA "
            f"{h['wall_s']:.2f} s "
            f"({h['wall_s'] / max(g['wall_s'], 1e-3):.1f}x), peak RSS {g['peak_rss_mb']:.0f} vs "
            f"{h['peak_rss_mb']:.0f} MB"
        )
    if tot_pg:
        print(f"\nall sets: pgdoctor {tot_pg:.2f} s, HTA {tot_hta:.2f} s: {tot_hta / tot_pg:.1f}x faster")
    if record and recorded:
        version = child(
            [
                str(hta_py),
                "-c",
                "import json; from importlib.metadata import version; "
                "print(json.dumps({'v': version('HolisticTraceAnalysis')}))",
            ]
        )
        doc = {
            "about": "Per-rank figures of Holistic Trace Analysis on ../shared/traces "
            "(get_temporal_breakdown, "
            "get_comm_comp_overlap, get_potential_stragglers(num_candidates=1)), written by "
            "benchmarks/bench_traces.py --record",
            "hta_version": (version or {}).get("v"),
            "sets": recorded,
        }
        FIXTURE.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        print(f"recorded {FIXTURE.relative_to(ROOT)}")


def parsers(hta_py: Path) -> None:
    big = sorted((p for p in SHARED.glob("gpu_*/*") if p.is_file()), key=lambda p: -p.stat().st_size)[:3]
    print("\nreading traceEvents (s): json.load vs ijson vs pgdoctor's streaming reader")
    p = subprocess.run(
        [
            str(hta_py),
            str(HERE / "parse_child.py"),
            str(ROOT / "doctor/diagnose/profile/reader.py"),
            *map(str, big),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    for line in p.stdout.splitlines():
        r = json.loads(line)
        print(
            f"  {Path(r['file']).name[:40]:40} events {r['events'][0]:>7}  json.load {r['json_load_s']:.3f}  "
            f"ijson[{r['ijson_backend']}] {r['ijson_s']:.3f}  pgdoctor {r['pgdoctor_scan_s']:.3f}"
        )


def synthetic(hta_py: Path, ranks: int, mb: float) -> None:
    sys.path.insert(0, str(ROOT))
    from tests.helpers import kineto_synth

    # A padding kernel and its launch call are ~350 bytes of JSON; four steps per rank.
    pad = max(int(mb * 1e6 / 4 / 350), 0)
    with tempfile.TemporaryDirectory(prefix="pgdoctor-synth-") as tmp:
        for n in sorted({min(16, ranks), ranks}):
            d = Path(tmp) / f"r{n}"
            # the slow rank starts each step late by 30% of a step: a straggler well above noise
            kineto_synth.write_set(
                str(d), n, slow_rank=n // 2, delay_us=0.3 * (10150.0 + 3.0 * pad), pad_kernels=pad
            )
            size = sum(p.stat().st_size for p in d.iterdir())
            raw = sum(1 for _ in d.iterdir())
            g = pgdoctor(d)
            if not g:
                continue
            s = g["straggler"]
            print(
                f"\nsynthetic {n} ranks ({raw} files, {size / 1e6:.0f} MB gzip, ~{mb:g} MB JSON each): "
                f"pgdoctor "
                f"{g['wall_s']:.1f} s, peak RSS {g['peak_rss_mb']:.0f} MB, straggler {s and s['rank']} "
                f"({s and s['cause']}) [truth {n // 2}]"
            )
            if n <= 16:
                h = child([str(hta_py), str(HERE / "hta_child.py"), str(d)], timeout=1800)
                if h:
                    print(
                        f"  HTA on the same {n} ranks: {h['wall_s']:.1f} s "
                        f"({h['wall_s'] / max(g['wall_s'], 1e-3):.1f}x), "
                        f"peak RSS {h['peak_rss_mb']:.0f} MB, read {len(h['ranks'])} ranks, "
                        f"straggler candidates {h.get('stragglers')}"
                    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--record", action="store_true", help="write HTA's figures to the test fixture")
    ap.add_argument("--synthetic-ranks", type=int, default=128)
    ap.add_argument("--synthetic-mb", type=float, default=8.0, help="uncompressed JSON per rank")
    ap.add_argument("--skip-synthetic", action="store_true")
    args = ap.parse_args()
    hta_py = ensure_venv()
    compare_sets(hta_py, args.record)
    parsers(hta_py)
    if not args.skip_synthetic:
        synthetic(hta_py, args.synthetic_ranks, args.synthetic_mb)


if __name__ == "__main__":
    main()
