"""Analyse one trace set with pgdoctor in a fresh process; print figures, wall time and peak RSS
as one JSON line (the benchmark compares it with benchmarks/hta_child.py on the same set)."""

from __future__ import annotations

import glob
import json
import os
import resource
import sys
import time


def main(trace_dir: str) -> None:
    t0 = time.perf_counter()
    from pgdoctor.diagnose.profile.analyze import analyze_traces

    paths = sorted(p for p in glob.glob(os.path.join(trace_dir, "*")) if os.path.isfile(p))
    traces, findings = analyze_traces(paths)
    keys = ("compute_pct", "non_compute_pct", "idle_pct", "comm_comp_overlap_pct", "step_ms", "steps")
    out = {
        "ranks": {r: {k: s.get(k) for k in keys} for r, s in traces["ranks"].items()},
        "straggler": traces["straggler"],
        "codes": [f.code for f in findings],
        "wall_s": round(time.perf_counter() - t0, 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
