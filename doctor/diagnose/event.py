"""What the category modules see (a Hit: clean lines around one trigger) and what they
return (Events: one observed failure with its facts and the log lines that show it)."""

from __future__ import annotations

import functools
import operator
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from pgdoctor.diagnose.text.normalize import Line, text_rank
from pgdoctor.knowledge import nccl_version
from pgdoctor.knowledge.clip import clip
from pgdoctor.knowledge.ranks import bounded
from pgdoctor.knowledge.signals import signal_of_exitcode
from pgdoctor.model import Evidence

# A line that starts a new log record rather than continuing a message split over lines.
_NEW_RECORD = re.compile(
    r"^(?:Traceback|\s*File |\[|\d{4}-\d\d-\d\d|[IWEF]\d{4} |[\w.-]+:\d+:\d+ \[\d+\]|"
    r"[A-Z]{4,}:|[\w.]*(?:Error|Exception|Warning):|terminate called)"
)
EVIDENCE_CHARS = 600
# The window of raw lines the scanner cuts around a hit (text/scan.py), so a Hit holds at most
# this many lines before and after its trigger: a rule can tell a window that ended early (the
# log ended) from one that ran out.
LINES_BEFORE = 24
LINES_AFTER = 48
# The fact of an event that holds only if a communicator never came up after it (a connect retried, an
# interface list): NCCL's "host:pid:" of the process it waits for, or "" for any. The rule reads its
# window; doctor/diagnose/lookahead.py reads the rest of the log for the events that carry it.
UNTIL_UP = "_until_up"
# The fact of an event that is a failure of the job only if the job has several processes (a kernel's own
# fault with nothing distributed in its window): lookahead.py keeps it when another source is read with
# it or its log shows a rank, NCCL, c10d, a launcher or an engine's workers anywhere. Its value: "whole"
# (the rule's window held the whole file) or "window" (the rest of the file is read).
ONE_PROCESS = "_one_process"
# NCCL's own prefix "host:pid:tid [cudaDev] " (src/debug.cc), optionally after "[%F %T] ".
_NCCL_PREFIX = re.compile(r"^(?:\[[\d\- :]+\] )?([\w.-]+):(\d+):\d+ \[(\d+)\]")


@dataclass
class Hit:
    source: str
    lines: list[Line]
    idx: int
    source_index: int = 0

    @property
    def line(self) -> Line:
        return self.lines[self.idx]

    @property
    def text(self) -> str:
        return self.line.text

    @property
    def rank(self) -> Optional[int]:
        if self.line.rank is not None:
            return self.line.rank
        return text_rank(self.text)

    @functools.cached_property
    def _lower(self) -> Optional[str]:
        """The hit line in lower case, once for all the modules that test it; None outside ASCII."""
        t = self.text
        return t.lower() if t.isascii() else None

    def may_hold(self, words: tuple[str, ...]) -> bool:
        """Whether the hit line may contain one of `words` (lower case), case-insensitively: the
        cheap gate of a rule module whose every finding needs one of them in the line. Text
        outside ASCII always passes: case folding there is wider than str.lower()."""
        low = self._lower
        if low is None:
            return True
        for w in words:  # noqa: SIM110 (a loop: any() over a generator costs twice as much here)
            if w in low:
                return True
        return False

    def who(self, rank: Optional[int] = None) -> str:
        """How a message names the process: global rank, else local rank, else NCCL's host/pid/GPU."""
        r = rank if rank is not None else self.rank
        if r is not None:
            return f"rank {r}"
        if self.line.local_rank is not None:
            return f"local rank {self.line.local_rank}"
        m = _NCCL_PREFIX.match(self.text)
        if m:
            return f"{m.group(1)} pid {m.group(2)} (GPU {m.group(3)})"
        return "a rank"

    def moved_to(self, line: Line) -> Hit:
        """This hit moved to a later line of its window (the record a raise line announces), found by
        identity: a repeated line equals its earlier copies, and moving back to one of them read the
        same records again and again (a RecursionError in the HCCL reader)."""
        idx = next(i for i in range(self.idx + 1, len(self.lines)) if self.lines[i] is line)
        return Hit(self.source, self.lines, idx, self.source_index)

    def after(self, n: int, same_rank: bool = True) -> list[Line]:
        """Up to n following lines (of the same rank when ranks are known)."""
        out: list[Line] = []
        me = self.line.rank
        for ln in self.lines[self.idx + 1 :]:
            if len(out) >= n:
                break
            if same_rank and me is not None and ln.rank is not None and ln.rank != me:
                continue
            out.append(ln)
        return out

    def before(self, n: int, same_rank: bool = True) -> list[Line]:
        out: list[Line] = []
        me = self.line.rank
        for ln in reversed(self.lines[: self.idx]):
            if len(out) >= n:
                break
            if same_rank and me is not None and ln.rank is not None and ln.rank != me:
                continue
            out.append(ln)
        out.reverse()
        return out

    def block(self, n: int = 8, sep: str = " ") -> tuple[str, list[Line]]:
        """The hit line and its continuation lines (a message split over lines by a paste or a
        logger), joined with `sep` ("" to undo a terminal's hard wrap); stops at a blank line,
        the start of a new record or another rank's line (a line without any prefix continues)."""
        used = [self.line]
        for ln in self.after(n):
            if (
                not ln.text.strip()
                or _NEW_RECORD.match(ln.text)
                or (ln.rank is not None and ln.rank != self.line.rank)
            ):
                break
            used.append(ln)
        return sep.join(ln.text.strip() for ln in used), used

    def evidence(self, lines: Optional[list[Line]] = None) -> list[Evidence]:
        return [
            Evidence(clip(ln.text.strip(), EVIDENCE_CHARS), file=self.source, line=ln.no)
            for ln in (lines or [self.line])
        ]


def _window_host(hit: Hit) -> Optional[str]:
    """The host of the NCCL records around a hit, when they all name the same one."""
    host: Optional[str] = None
    for ln in hit.lines:
        t = ln.text
        if "NCCL" not in t:
            continue
        # A line that starts with the host already found names that host or no host at all.
        if host is not None and t.startswith(host) and t[len(host) : len(host) + 1] == ":":
            continue
        m = _NCCL_PREFIX.match(t)
        if m:
            if host is not None and m.group(1) != host:
                return None
            host = m.group(1)
    return host


# The process a line is about, in the words the launchers, DataLoader and Ray print ("(pid: 1760809)",
# "worker (pid 7579) is killed", "pid=2421").
_PID = re.compile(r"\bpid[=:]? ?(\d{1,9})\b")


def _window_nccl_version(hit: Hit) -> Optional[nccl_version.NcclVersion]:
    """The NCCL version the lines around a hit print (knowledge/nccl_version.py), when they print one only."""
    found: dict[str, nccl_version.NcclVersion] = {}
    for ln in hit.lines:
        for v in nccl_version.find_all(ln.text):
            # One release printed twice (NCCL's banner, torch 1.x's misprint): the banner says more.
            if v.version not in found or (v.cuda and not found[v.version].cuda):
                found[v.version] = v
    return found.popitem()[1] if len(found) == 1 else None


def _window_rank(hit: Hit) -> Optional[int]:
    """The rank of the lines around a hit line that has none, when every line with a rank there names the
    same one and at least two do: a traceback printed under "[rank3]:" whose last line lost its prefix to
    a wrap or a paste. A local rank or a second rank in the window says nothing."""
    ranked = [ln.rank for ln in hit.lines if ln.rank is not None]
    if len(ranked) < 2 or len(set(ranked)) != 1 or any(ln.local_rank is not None for ln in hit.lines):
        return None
    return ranked[0]


@dataclass
class Event:
    """One observed failure. `cause_tier`: 0 a primary cause (OOM, crash, hardware, config),
    1 a failure that is usually a symptom (timeouts, remote errors), 2 a pure consequence."""

    code: str
    source: str
    line: int
    source_index: int
    message: str
    rank: Optional[int] = None
    facts: dict[str, Any] = field(default_factory=dict)
    evidence: list[Evidence] = field(default_factory=list)
    ts: Optional[tuple[str, float]] = None
    cause_tier: int = 0
    dedupe: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        # The one gate for every rule's rank: a number past MAX_RANK read from a log is no rank.
        if self.rank is not None and bounded(self.rank) is None:
            self.rank = None
            self.facts.pop("rank", None)

    @property
    def position(self) -> tuple[int, int]:
        return (self.source_index, self.line)


# Event.position as a sort key without a Python call per event (sorting 30,000 events of a
# 10,000-file job spent most of its time in the property).
POSITION = operator.attrgetter("source_index", "line")


def event(
    hit: Hit,
    code: str,
    message: str,
    facts: Optional[dict[str, Any]] = None,
    lines: Optional[list[Line]] = None,
    tier: int = 0,
    rank: Optional[int] = None,
    dedupe: tuple[Any, ...] = (),
) -> Event:
    r = rank if rank is not None else hit.rank
    f = dict(facts or {})
    # A negative exit code is a death by signal (-6: SIGABRT), whichever rule read it.
    sig = signal_of_exitcode(f.get("exitcode"))
    if sig is not None:
        f.setdefault("signal", sig)
    if r is not None:
        f.setdefault("rank", r)
    elif hit.line.local_rank is None and "rank" not in f:
        around = _window_rank(hit)
        if around is not None:
            f["rank"] = around
            f["rank_from"] = "the rank prefixes around it"
    if hit.line.host:
        f.setdefault("host", hit.line.host)
    if hit.line.pid is not None:
        f.setdefault("proc_pid", hit.line.pid)  # the Ray prefix's process, for Ray's report of its death
    if r is None and hit.line.local_rank is not None:
        f.setdefault("local_rank", hit.line.local_rank)
    if "nccl_version" not in f:
        version = _window_nccl_version(hit)
        if version:
            f.update(version.facts())
    m = _NCCL_PREFIX.match(hit.text)
    if m:
        f.setdefault("host", m.group(1))
        f.setdefault("pid", int(m.group(2)))
        f.setdefault("cuda_dev", int(m.group(3)))
    else:
        pid = _PID.search(hit.text) if "pid" not in f and "pid" in hit.text else None
        if pid:
            f["pid"] = int(pid.group(1))
        if "host" not in f:
            host = _window_host(hit)
            if host:
                f["host"] = host
                f["host_from"] = "NCCL lines around it"
    return Event(
        code=code,
        source=hit.source,
        line=hit.line.no,
        source_index=hit.source_index,
        message=message,
        rank=r,
        facts=f,
        evidence=hit.evidence(lines),
        ts=hit.line.ts,
        cause_tier=tier,
        dedupe=dedupe or (code, r),
    )
