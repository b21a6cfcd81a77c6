"""Is a job moving? The evidence `pgdoctor run` counts as progress, never CPU time: a rank that
spins in a busy-wait (polling a collective's work handle, NCCL's spin in a CUDA synchronise)
burns a core while the job stands still.

- Output lines (`Lines`): a line with a step counter (`step 12`, `iter: 12`, `epoch 3`,
  `[120/5000]`, `global_step=12`) is progress when the counter differs from the last one seen in
  lines of the same shape; a line of a shape not seen before is progress (a new phase: "saving
  checkpoint", "eval"); a repeated shape is progress when its numbers changed (`loss 2.31` then
  `loss 2.29`), except a wait or heartbeat line ("still waiting", "timeout", "elapsed", "retry"),
  whose counting seconds are not steps. An identical repeated line is never progress, nor is an
  error report: a Python traceback (its header, its indented frames, its exception line) or a
  bare `SomethingError: ...` line. A rank's gloo timeout prints one of new shape after the job
  stood still; counted as a new phase, it made a driver that exits 0 anyway look recovered.
- The ranks' live sockets (`Counters`): the `pgdoctor.step` counter or the default process
  group's collective sequence number changed.
Pure: lines and numbers in, a yes or no out.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Optional

from pgdoctor.knowledge.progress import STEP_COUNTER

MAX_SHAPES = 4096  # shapes remembered (least recently seen dropped): bounded memory
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# A leading timestamp or glog/syslog header says when, not what: it is not part of the shape.
_STAMP = re.compile(
    r"^\s*(?:[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ \S+\]\s*"  # glog: I1204 19:16:43.692000 5039 api.py:10]
    r"|\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?\s*)"
)
_RANK_PREFIX = re.compile(r"^\s*\[(?:default)?rank\d+\]:\s*|^\s*\d+:\s*")  # torchrun --tee, srun -l
_NUMBER = re.compile(r"\d+")
_TRACEBACK = re.compile(
    r"^(?:Traceback \(most recent call last\):|During handling of the above exception"
    r"|The above exception was the direct cause)"
)
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure)\b")
_WAITING = re.compile(
    r"(?i)\b(?:wait|waiting|waited|timeout|timed out|time out|heartbeat|still|stuck|retry|retrying|"
    r"elapsed|watchdog|hang|hung|sleep|sleeping|no progress)\b"
)


class Lines:
    """Reads a job's output line by line and says which lines show progress."""

    def __init__(self) -> None:
        self._seen: OrderedDict[tuple[str, str], tuple[str, ...]] = OrderedDict()
        self.stepped = False  # the last line fed moved a step counter of a shape seen before
        self._in_traceback: set[str] = set()  # output streams (rank prefixes) inside a traceback

    def feed(self, raw: bytes) -> bool:
        self.stepped = False
        text = _ANSI.sub("", raw.decode("utf-8", "replace")).rstrip()
        prefix = _RANK_PREFIX.match(text)
        who = prefix.group(0).strip() if prefix else ""
        body = _STAMP.sub("", text[prefix.end() :] if prefix else text).strip()
        # The prefix's one separating space off, a traceback frame keeps its indent.
        rest = text[len(prefix.group(0).rstrip()) :].removeprefix(" ") if prefix else text
        if not body:
            return False
        if self._error_report(who, rest, body):
            return False
        shape = _NUMBER.sub("#", body)
        key = (who, shape)
        counters = tuple(m.group(2) or m.group(3) for m in STEP_COUNTER.finditer(body))
        numbers = tuple(_NUMBER.findall(body))
        before = self._seen.get(key)
        self._seen[key] = counters or numbers
        self._seen.move_to_end(key)
        if len(self._seen) > MAX_SHAPES:
            self._seen.popitem(last=False)
        if before is None:
            return True  # a shape not seen before: the job does something new
        if counters:
            self.stepped = counters != before
            return self.stepped
        return numbers != before and not _WAITING.search(body)

    def _error_report(self, who: str, rest: str, body: str) -> bool:
        """Is this line part of a traceback or an exception line? A traceback's frames are indented;
        its first line back at the margin is the exception (or, interleaved, another stream's line,
        which ends the traceback and is judged as usual)."""
        if _TRACEBACK.match(body):
            self._in_traceback.add(who)
            return True
        if who in self._in_traceback and rest.startswith((" ", "\t")):
            return True
        self._in_traceback.discard(who)
        return bool(_EXCEPTION.match(body))


def counters_moved(before: Optional[Mapping[str, Any]], now: Optional[Mapping[str, Any]]) -> bool:
    """Two progress answers of one rank's socket: did its step counter or its collective sequence
    number change? (A first answer has nothing to compare with.)"""
    if not before or not now:
        return False
    return any(
        now.get(k) is not None and before.get(k) is not None and now.get(k) != before.get(k)
        for k in ("step", "seq")
    )
