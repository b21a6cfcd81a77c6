"""Prints how long each report format takes to render, and how big it is, for a large report:
a real quick check of this host plus 8 GPUs x 40 per-GPU measurements, a full doubling sweep
of 4 collectives (8 B .. 8 GiB, 31 sizes each) and a repro trace of 8 ranks x 20,000 ranges.
The bar: junit, prometheus and html under 1 s each, the HTML under 5 MB (its timeline draws
5,000 ranges at most); console and json are printed for comparison (json carries the whole trace).

    python benchmarks/bench_render.py
"""

from __future__ import annotations

import dataclasses
import io
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the test helpers are the package tests.helpers

from pgdoctor.knowledge.collectives import make_row
from pgdoctor.model import Measurement, Report, Scope
from pgdoctor.render import FORMATS, get_renderer
from tests.helpers.render_reports import collective_measurements, gpu_finding, live_report, with_measurements


def big_report() -> Report:
    gpus = [
        Measurement(
            f"gpu.metric_{k:02d}", 100.0 + k + i, unit="W", scope=Scope(gpu_index=i, gpu_uuid=f"GPU-{i}")
        )
        for i in range(8)
        for k in range(40)
    ]
    rows = []
    for op in ("all_reduce", "all_gather", "reduce_scatter", "broadcast"):
        for e in range(3, 34):
            t = 30.0 + (1 << e) / 300e3
            rows.append(make_row(op, 1 << e, [{"times_us": [t], "wrong": None}] * 8).to_json())
    events = [
        {
            "name": ("step", "fwd", "bwd", "comm.all_reduce")[i % 4],
            "ph": "X",
            "ts": float(i * 10),
            "dur": 8.0,
            "pid": r,
            "tid": 1,
        }
        for r in range(8)
        for i in range(20_000)
    ]
    rep = live_report()
    rep = with_measurements(rep, "gpu", "gpu", gpus, [gpu_finding()])
    rep = with_measurements(rep, "collectives", "collectives", collective_measurements(rows))
    return dataclasses.replace(rep, extra={"trace_events": events})


def main() -> None:
    report = big_report()
    print(
        f"report: {len(report.findings)} findings, {len(report.checks)} checks, "
        f"{sum(1 for _ in report.snapshot.measurements()) if report.snapshot else 0} measurements, "
        f"{len(report.extra['trace_events'])} trace events"
    )
    for fmt in sorted(FORMATS):
        render = get_renderer(fmt)
        times, size = [], 0
        for _ in range(5):
            buf = io.StringIO()
            start = time.perf_counter()
            render(report, buf, False)
            times.append(time.perf_counter() - start)
            size = len(buf.getvalue().encode())
        med = statistics.median(times)
        ok = med < 1.0 and (fmt != "html" or size < 5_000_000)
        verdict = ("OK" if ok else "OVER") if fmt in ("junit", "prometheus", "html") else "(no bar)"
        print(
            f"{fmt:<11} median {med * 1000:7.1f} ms  min {min(times) * 1000:7.1f} ms  "
            f"size {size / 1024:8.1f} KiB  {verdict}"
        )


if __name__ == "__main__":
    main()
