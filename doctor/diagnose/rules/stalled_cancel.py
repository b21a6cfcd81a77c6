"""A Slurm cancel that came long after the last training progress line: the job was hung.

"slurmstepd: error: *** JOB 123 ON node-3 CANCELLED AT 2024-05-01T14:00:00 DUE TO TIME LIMIT ***"
(every version's shape: knowledge/slurm.py) says only that the scheduler ended the ranks. When
the lines before it show the job stepping ("step 1200 loss 2.31", a tqdm bar, Megatron's
"iteration 1200/500000 | ... elapsed time per iteration (ms): 980.1"), the time between the last
of them and the cancel says what happened: a few steps' worth is a job that ran out of time; far
more is a job that stopped making progress and waited, hung, until the limit (or a person's
scancel) ended it. Only the second is read here (RUN370); the first is left to the plain cancel
row of workers.py.

The last progress line's time is its prefix's, or an ISO time inside the message; without one,
the first timed line after it bounds it (the idle time is then "at least"). The job's cadence is
the median gap between its timed progress lines, or a progress bar's own rate. Idle for at least
IDLE_INTERVALS of them and MIN_IDLE_S is a hang; after the last step of its total (a job that
should have exited), MIN_IDLE_S; with no cadence, NO_RATE_IDLE_S (a rate a line states per step
is not its cadence: Megatron prints one line per log_interval iterations). Clocks
are compared as printed (Slurm prints the node's local time, and a log prefix's time is read
without its zone); a time inside the message that names its zone is not compared. The row
reads the scanner's window (24 lines before the cancel); when that holds no progress line,
lookback.py reads the log file further up with the same `stalled` judgement.
"""

from __future__ import annotations

import datetime as _dt
import re
import statistics
from collections.abc import Sequence
from typing import Any, Optional

from pgdoctor.checks.codes import joblogs as C
from pgdoctor.diagnose.event import LINES_BEFORE, Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.diagnose.text.normalize import Line
from pgdoctor.knowledge.clip import clip
from pgdoctor.knowledge.progress import fmt_idle, inline_time, is_bar, is_progress, last_step, step_seconds
from pgdoctor.knowledge.slurm import CANCEL, Cancel, cancel_seconds, read_cancel

IDLE_INTERVALS = 20
MIN_IDLE_S = 300.0
NO_RATE_IDLE_S = 1800.0


def _seconds(ln: Line, year: int) -> Optional[tuple[float, bool]]:
    """(time, whether it names a zone) of a line: its prefix's, else one inside the message."""
    if ln.ts is not None:
        kind, sec = ln.ts
        if kind == "iso":
            return sec, False
        if kind == "glog":  # glog has no year: the cancel's
            t = _dt.datetime.fromtimestamp(sec)
            try:
                return t.replace(year=year).timestamp(), False
            except ValueError:  # 29 February
                return None
    return inline_time(ln.text)


def _interval_s(progress: list[tuple[Line, Optional[float]]]) -> Optional[float]:
    """Seconds between progress lines: the median gap between timed ones (oldest first), else a
    progress bar's own rate (a bar redraws every step). A rate another line states is per step,
    not per line: Megatron prints "elapsed time per iteration" every log_interval iterations."""
    times = [t for _, t in progress if t is not None]
    gaps = [b - a for a, b in zip(times, times[1:]) if b > a]
    if gaps:
        return statistics.median(gaps)
    last = progress[-1][0].text
    return step_seconds(last) if is_bar(last) else None


def stalled(cancel: Cancel, line: Line, before: Sequence[Line]) -> Optional[tuple[str, dict[str, Any], Line]]:
    """(message, facts, last progress line) when the lines `before` the cancel `line` show a job
    that stopped stepping long before it, else None."""
    if not (cancel.time_limit or cancel.by_user):
        return None
    at = cancel_seconds(cancel.at)
    if at is None and line.ts is not None and line.ts[0] == "iso":
        at = line.ts[1]  # SLURM_TIME_FORMAT was not ISO; the line's own prefix time
    if at is None:
        return None
    year = _dt.datetime.fromtimestamp(at).year
    last = max((i for i, ln in enumerate(before) if is_progress(ln.text)), default=None)
    if last is None:
        return None
    # Timed progress lines up to the last one (for the step time), and the last one's time.
    progress: list[tuple[Line, Optional[float]]] = []
    zoned = False
    for ln in before[: last + 1]:
        if is_progress(ln.text):
            got = _seconds(ln, year)
            zoned = zoned or bool(got and got[1])
            progress.append((ln, got[0] if got else None))
    t_last = progress[-1][1]
    bound = ""
    if t_last is None:  # a line printed after it bounds its time from above
        for ln in before[last + 1 :]:
            got = _seconds(ln, year)
            if got is not None:
                t_last, zoned, bound = got[0], zoned or got[1], "at least "
                break
    if t_last is None or zoned:
        return None
    idle = at - t_last
    p = progress[-1][0]
    step = step_seconds(p.text)
    every = _interval_s(progress)
    done = last_step(p.text)
    if done:  # after its last step a job should exit, not wait
        need = MIN_IDLE_S
    elif every:
        need = max(MIN_IDLE_S, IDLE_INTERVALS * max(every, step or 0.0))
    else:
        need = NO_RATE_IDLE_S
    if idle < need:
        return None  # stepping until shortly before the cancel: out of time, not hung
    by = "at its time limit" if cancel.time_limit else f"({cancel.reason})"
    facts: dict[str, Any] = {
        "slurm_id": cancel.slurm_id,
        "cancelled_at": cancel.at,
        "reason": cancel.reason,
        "reporter": "slurm",
        "idle_s": round(idle, 1),
        "idle_is_lower_bound": bool(bound),
        "last_progress": clip(p.text.strip(), 200),
        "last_progress_line": p.no,
    }
    if cancel.host:
        facts["host"] = cancel.host
    if step:
        facts["step_s"] = round(step, 3)
    if every:
        facts["progress_every_s"] = round(every, 3)
    after = ""
    if done:
        facts["after_last_step"] = True
        after = " after its last step (on the way out: checkpoint, teardown or exit)"
    msg = (
        f"the job made no progress for {bound}{fmt_idle(idle)} before Slurm cancelled it {by}; "
        f"it was hung{after} (last progress: {clip(p.text.strip(), 120)})"
    )
    return msg, facts, p


def _stalled(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    got = stalled(read_cancel(m), hit.line, hit.before(LINES_BEFORE, same_rank=False))
    if got is None:
        return None  # workers.py's plain cancel row reads it (lookback.py may look further up)
    msg, facts, p = got
    return [row.event(hit, msg, facts, [p, hit.line], dedupe=DEDUPE)]


DEDUPE = (C.STALLED_UNTIL_CANCEL.code, "stalled_cancel")

SIGNATURES = (
    Signature(
        "cancel after the last progress",
        CANCEL,
        _stalled,
        C.STALLED_UNTIL_CANCEL.code,
        tier=1,
        anchors=(b"CANCELLED AT",),
        worth=(rb"CANCELLED AT",),
        words=("cancelled at",),
    ),
)
parse = gated_reader(SIGNATURES)
