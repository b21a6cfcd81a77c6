"""Run Holistic Trace Analysis on one trace set and print its per-rank figures as one JSON line.

Runs inside the benchmark's own venv (benchmarks/bench_traces.py creates it): HTA needs pandas,
which pgdoctor does not. Usage: /tmp/hta-venv/bin/python benchmarks/hta_child.py TRACE_DIR
"""

from __future__ import annotations

import json
import logging
import resource
import sys
import time
import warnings


def main(trace_dir: str) -> None:
    warnings.filterwarnings("ignore")
    logging.disable(logging.CRITICAL)
    t0 = time.perf_counter()
    from importlib.metadata import version

    from hta.trace_analysis import TraceAnalysis

    out: dict = {"hta_version": version("HolisticTraceAnalysis"), "ranks": {}, "errors": {}}
    analysis = TraceAnalysis(trace_dir=trace_dir)
    ranks = out["ranks"]
    try:
        tb = analysis.get_temporal_breakdown(visualize=False)
        for row in tb.to_dict("records"):
            ranks.setdefault(str(int(row["rank"])), {}).update(
                compute_pct=float(row["compute_time_pctg"]),
                non_compute_pct=float(row["non_compute_time_pctg"]),
                idle_pct=float(row["idle_time_pctg"]),
                kernel_time_us=float(row["kernel_time(us)"]),
            )
    except Exception as exc:  # HTA's own failure is a result of the comparison, not a crash
        out["errors"]["temporal_breakdown"] = f"{type(exc).__name__}: {exc}"[:300]
    try:
        ov = analysis.get_comm_comp_overlap(visualize=False)
        for row in ov.to_dict("records"):
            v = float(row["comp_comm_overlap_pctg"])
            ranks.setdefault(str(int(row["rank"])), {})["comm_comp_overlap_pct"] = v if v == v else None
    except Exception as exc:
        out["errors"]["comm_comp_overlap"] = f"{type(exc).__name__}: {exc}"[:300]
    try:
        idle = analysis.get_idle_time_breakdown(visualize=False)
        df = idle[0] if isinstance(idle, tuple) else idle
        out["idle_rows"] = len(df)
    except Exception as exc:
        out["errors"]["idle_time_breakdown"] = f"{type(exc).__name__}: {exc}"[:300]
    try:
        out["stragglers"] = [int(r) for r in analysis.get_potential_stragglers(num_candidates=1)]
    except Exception as exc:
        out["errors"]["potential_stragglers"] = f"{type(exc).__name__}: {exc}"[:300]
    out["wall_s"] = round(time.perf_counter() - t0, 3)
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
