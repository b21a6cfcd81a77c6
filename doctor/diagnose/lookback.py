"""A Slurm cancel whose window held no progress line: look further up its log.

The scanner gives a rule the 24 lines before a hit (text/scan.py); a job that printed more than
that between its last step and the cancel (one warning per rank, a stack dump, a teardown
message of every worker) leaves rules/stalled_cancel.py nothing to measure, and the cancel is
read as a plain one (RUN133, workers.py). Here, for such a cancel only, the log is read again
up to the cancel's line: newlines are counted in C over the chunks before it, and only the last
LOOKBACK_BYTES (at most LOOKBACK_LINES lines) are decoded and read by the same judgement. A source
that cannot be read twice (standard input) keeps the plain cancel.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Optional

from pgdoctor.checks.codes import joblogs as J
from pgdoctor.checks.codes import run as R
from pgdoctor.diagnose.event import EVIDENCE_CHARS, LINES_BEFORE, Event
from pgdoctor.diagnose.rules.stalled_cancel import DEDUPE, stalled
from pgdoctor.diagnose.text.normalize import Line, logical_lines
from pgdoctor.diagnose.text.reader import Source
from pgdoctor.knowledge.clip import clip
from pgdoctor.knowledge.progress import is_progress
from pgdoctor.knowledge.slurm import CANCEL, read_cancel
from pgdoctor.model import Evidence

LOOKBACK_BYTES = 4 << 20
LOOKBACK_LINES = 5000


def _plain_cancel(e: Event) -> bool:
    """workers.py's reading of a time-limit or scancel cancel (the kinds a hang ends in)."""
    if e.code != R.RANK_EXITED.code or e.facts.get("reporter") != "slurm" or "cancelled_at" not in e.facts:
        return False
    why = str(e.facts.get("reason", ""))
    return why in ("time limit", "a user's scancel") or why.startswith("signal ")


def _lines_up_to(src: Source, line_no: int) -> Optional[list[Line]]:
    """The logical lines of the last LOOKBACK_BYTES up to and including physical line `line_no`, or
    None when the source ends before it (or cannot be read again)."""
    kept: deque[bytes] = deque()
    kept_bytes = 0
    first_kept = 1  # line number of the first line that starts in kept[0]
    seen = 0  # newlines before the current chunk
    try:
        chunks = src.chunks()
    except OSError:
        return None
    carry = b""
    reached = False
    for chunk in chunks:
        data = carry + chunk
        nl = data.count(b"\n")
        if seen + nl >= line_no:  # the target line ends in this chunk
            parts = data.split(b"\n", line_no - seen)
            kept.append(b"\n".join(parts[: line_no - seen]))
            reached = True
            break
        # keep whole lines only; the last partial line goes on with the next chunk
        cut = data.rfind(b"\n") + 1
        if cut:
            kept.append(data[:cut])
            kept_bytes += cut
            seen += nl
            carry = data[cut:]
        else:
            carry = data
        while kept_bytes > LOOKBACK_BYTES and len(kept) > 1:
            old = kept.popleft()
            kept_bytes -= len(old)
            first_kept += old.count(b"\n")
    if not reached:
        if not (carry and seen + 1 == line_no):  # the target is the last line, without a newline
            return None
        kept.append(carry)
    raw = b"".join(kept).split(b"\n")
    drop = max(0, len(raw) - LOOKBACK_LINES - 1)
    return logical_lines(raw[drop:], first_kept + drop)


def look_further(events: list[Event], sources: Sequence[Source]) -> list[Event]:
    """`events` with each plain time-limit or scancel cancel whose log shows a stall further up
    than the rule's window replaced by RUN370."""
    out: list[Event] = []
    for e in events:
        if not _plain_cancel(e) or not (0 <= e.source_index < len(sources)):
            out.append(e)
            continue
        out.append(_judged(e, sources[e.source_index]) or e)
    return out


def _judged(e: Event, src: Source) -> Optional[Event]:
    lines = _lines_up_to(src, e.line)
    at = next((i for i in range(len(lines or ()) - 1, -1, -1) if lines and lines[i].no == e.line), None)
    if lines is None or at is None:
        return None
    line = lines[at]
    m = CANCEL.search(line.text)
    if m is None:
        return None
    before = lines[:at]
    if any(is_progress(ln.text) for ln in before[-LINES_BEFORE:]):
        return None  # the rule saw those and judged them: out of time, not hung
    got = stalled(read_cancel(m), line, before)
    if got is None:
        return None
    msg, facts, p = got
    facts["progress_found"] = "further up the log"
    return Event(
        code=J.STALLED_UNTIL_CANCEL.code,
        source=e.source,
        line=e.line,
        source_index=e.source_index,
        message=msg,
        rank=None,
        facts=facts,
        evidence=[
            Evidence(clip(ln.text.strip(), EVIDENCE_CHARS), file=e.source, line=ln.no) for ln in (p, line)
        ],
        ts=e.ts,
        cause_tier=1,
        dedupe=DEDUPE,
    )
