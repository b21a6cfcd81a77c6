"""Trace files of one job -> {"ranks": {...}, "straggler": ... or None, "notes": [...]} and findings.

    analyze_traces(paths, all_steps=False, config=None) -> (traces, findings)

Rank by rank: each file is streamed once and reduced to its summary before the next is opened,
so memory is one rank's kernel intervals at a time, whatever the number of ranks.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from pgdoctor.diagnose.profile import arrival, runs, straggler
from pgdoctor.diagnose.profile import findings as trace_findings
from pgdoctor.diagnose.profile.nsight import is_sqlite
from pgdoctor.diagnose.profile.rank import MergedTrace, summarize, summarize_nsight
from pgdoctor.diagnose.profile.reader import TraceError
from pgdoctor.model import Finding


def is_sqlite_file(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return is_sqlite(fh.read(16))
    except OSError:
        return False


def analyze_traces(
    paths: Sequence[str], all_steps: bool = False, config: Optional[Mapping[str, Any]] = None
) -> tuple[dict[str, Any], list[Finding]]:
    ranks: dict[int, dict[str, Any]] = {}
    notes: list[str] = []
    skipped: list[str] = []
    merged: list[str] = []  # beside the rank files they were merged from: not an error
    summaries: list[dict[str, Any]] = []
    every: list[dict[str, Any]] = []  # all files' summaries: split into runs before ranks are keyed
    position = 0
    for path in sorted(paths):
        try:
            if is_sqlite_file(path):
                summaries = summarize_nsight(path, position, all_steps=all_steps)
            else:
                summaries = [summarize(path, position, all_steps=all_steps)]
            position += len(summaries)
        except MergedTrace as exc:
            merged.append(f"{path}: {exc}")
            continue
        except (TraceError, OSError, EOFError, UnicodeDecodeError) as exc:
            skipped.append(f"{path}: {exc}")
            continue
        except RecursionError:  # the C scanner's own limit: no profiler nests its events so deep
            skipped.append(f"{path}: JSON nested too deeply to be a profiler trace")
            continue
        except zlib.error as exc:  # a damaged deflate stream inside the gzip member (not an OSError)
            skipped.append(f"{path}: a damaged gzip stream ({exc})")
            continue
        every.extend(summaries)
    kept, other_runs = runs.pick_run(every)
    if other_runs:
        notes.append(other_runs)
    for s in kept:
        rank = s["rank"]
        if rank in ranks:
            skipped.append(f"{s['file']}: rank {rank} again (first in {ranks[rank]['file']}); kept the first")
            continue
        ranks[rank] = s
    dropped = sum(1 for s in ranks.values() if s.get("last_step_left_out"))
    if dropped:
        notes.append(
            f"the last ProfilerStep of {dropped} trace(s) is left out, as Holistic Trace Analysis does "
            f"(it is often cut short by the profiler's stop); --all-steps keeps it"
        )
    if any(s.get("steps_in_trace") == 0 for s in ranks.values()):
        # A CPU trace's window is its step thread's first to last range, a GPU trace's its GPU events'.
        notes.append("some traces have no ProfilerStep: their whole window is one step")
    absent = runs.missing_ranks(ranks)
    if absent:
        notes.append(absent)
    stop = runs.stopped(ranks)
    for s in ranks.values():
        s.pop("_clock_us", None)  # wall-clock times stay out of the report
    found = straggler.find(ranks)
    # Arrival times stay out of the report: only their skew across ranks is kept.
    late = arrival.skew({r: s.pop("_arrivals") for r, s in ranks.items() if "_arrivals" in s})
    out: dict[str, Any] = {
        "ranks": {str(r): ranks[r] for r in sorted(ranks)},
        "straggler": found,
        "all_steps": all_steps,
    }
    if late:
        out["arrival"] = late
    if stop:
        out["stopped"] = {**stop, "story": runs.stop_story(stop)}  # worded once for every renderer
    if merged:
        notes.append(f"left out {len(merged)} merged multi-rank trace(s): {merged[0]}")
    if notes:
        out["notes"] = notes
    if skipped:
        out["skipped"] = skipped
    return out, trace_findings.findings(ranks, found, config)
