"""Which traces belong together, which ranks are missing, and which rank stopped early.

    pick_run(summaries) -> (the summaries of one run, a note or None)
    missing_ranks(ranks) -> a note or None
    stopped(ranks) -> {"ranks", "others", "early_s", "others_last_step_ms", "step_ms"} or None

A profiler directory often holds more than one job's traces (a re-run into the same
`tensorboard_trace_handler` directory, a `repeat` schedule that writes one file per rank per
cycle, or files gathered from two jobs). Comparing rank 0 of one run with rank 2 of another
names a straggler that never ran beside the others, so the traces are first split by their
wall-clock windows (Kineto's `baseTimeNanoseconds` + the events' `ts`; older traces hold epoch
microseconds in `ts` itself) and world size: the traces of one run overlap in time, and a rank
seen again (in start order) begins the next cycle or run. The run with
the most ranks is analysed (the latest on a tie: what was just re-run); the others are named.
A trace without a clock (an Nsight export) joins the run analysed.
"""

from __future__ import annotations

from statistics import median
from typing import Any, Optional

# Traces of one run start within this much of the run's window (clock skew between hosts, a
# profiler that starts a step later on one rank); separate runs are seconds apart at least.
SAME_RUN_GAP_US = 2_000_000.0
# A rank stopped early when its trace ends this much before the others' (and by 10 steps).
STOP_MIN_US = 1_000_000.0
STOP_STEPS = 10


def _clock(s: dict[str, Any]) -> Optional[tuple[float, float]]:
    c = s.get("_clock_us")
    return (float(c[0]), float(c[1])) if c else None


def _same_world(s: dict[str, Any], run: list[dict[str, Any]]) -> bool:
    """A world size that one trace does not record is no evidence of another run."""
    sizes = {x.get("world_size") for x in run} - {None}
    return s.get("world_size") is None or not sizes or s.get("world_size") in sizes


def pick_run(summaries: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Optional[str]]:
    timed = sorted((s for s in summaries if _clock(s)), key=lambda s: _clock(s) or (0.0, 0.0))
    runs: list[list[dict[str, Any]]] = []
    run_end = 0.0
    for s in timed:
        start, end = _clock(s) or (0.0, 0.0)
        # A rank already in the run starts another one: the next cycle of a `repeat` schedule
        # (seconds or less after the last) or the same job run again.
        again = runs and any(x["rank"] == s["rank"] for x in runs[-1])
        if runs and not again and start <= run_end + SAME_RUN_GAP_US and _same_world(s, runs[-1]):
            runs[-1].append(s)
            run_end = max(run_end, end)
        else:
            runs.append([s])
            run_end = end
    if len(runs) <= 1:
        return summaries, None
    chosen = max(range(len(runs)), key=lambda i: (len({s["rank"] for s in runs[i]}), i))
    kept = [*runs[chosen], *(s for s in summaries if not _clock(s))]
    left = [s for i, run in enumerate(runs) if i != chosen for s in run]
    ws = runs[chosen][0].get("world_size")
    note = (
        f"the traces hold {len(runs)} separate runs or profiler cycles (a rank's trace again later, time "
        f"windows that do not overlap, or another world size); analysed the one with the most ranks, the "
        f"latest on a tie ({len(runs[chosen])} trace(s)"
        f"{f', world size {ws}' if ws else ''}), left out {len(left)} trace(s) of the others, "
        f"e.g. {left[0]['file']}"
    )
    return kept, note


def _span_list(ranks: list[int]) -> str:
    """0-3, 7, 8, 10-127: a long list of ranks on one line (runs of three or more collapsed)."""
    out: list[str] = []
    i = 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        if j - i >= 2:
            out.append(f"{ranks[i]}-{ranks[j]}")
        else:
            out.extend(str(r) for r in ranks[i : j + 1])
        i = j + 1
    return ", ".join(out)


def missing_ranks(ranks: dict[int, dict[str, Any]]) -> Optional[str]:
    sizes = {s.get("world_size") for s in ranks.values()}
    if len(sizes) != 1:
        return None
    ws = sizes.pop()
    if not isinstance(ws, int) or ws <= len(ranks):
        return None
    missing = [r for r in range(ws) if r not in ranks]
    have = f"{len(ranks)} of {ws} ranks have a trace (world size {ws})"
    return f"{have}: no trace of rank(s) {_span_list(missing)}"


def stopped(ranks: dict[int, dict[str, Any]]) -> Optional[dict[str, Any]]:
    """The ranks whose trace ends well before the others': they stopped (crashed, exited, hung
    outside the profiler) while the others went on, usually into a collective that waits for them."""
    ends = {r: c[1] for r, s in ranks.items() if (c := _clock(s))}
    if len(ends) < 2:
        return None
    latest = median(ends.values())
    step_us = 1000.0 * median(float(s.get("step_ms") or 0.0) for s in ranks.values())
    limit = max(STOP_MIN_US, STOP_STEPS * step_us)
    early = sorted(r for r, e in ends.items() if latest - e >= limit)
    if not early or len(early) * 2 > len(ends):
        return None  # most ranks end early: it is the others that ran on, not a stop
    others = sorted(r for r in ends if r not in early)
    last_steps = [ranks[r]["last_step_ms"] for r in others if ranks[r].get("last_step_ms") is not None]
    return {
        "ranks": early,
        "others": others,
        "early_s": round((median(ends[r] for r in others) - max(ends[r] for r in early)) / 1e6, 3),
        "others_last_step_ms": round(median(last_steps), 3) if last_steps else None,
        "step_ms": round(step_us / 1000.0, 3),
    }


def stop_story(found: dict[str, Any]) -> str:
    who = ", ".join(str(r) for r in found["ranks"])
    text = (
        f"rank {who}'s trace ends {found['early_s']:.3f} s before the others' "
        f"(rank(s) {_span_list(found['others'])})"
    )
    last = found.get("others_last_step_ms")
    if last is not None and last > 2 * found["step_ms"]:
        text += (
            f", whose last step lasted {last:.1f} ms against a {found['step_ms']:.1f} ms step: "
            f"rank {who} stopped mid-run (crashed, exited or hung) and the others waited for it"
        )
    else:
        text += f": rank {who} stopped before the others"
    return text
