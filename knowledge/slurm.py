"""What slurmstepd prints when it cancels a job or a step, in every Slurm version since 2.x.

Read at the source (src/slurmd/slurmstepd/req.c, `_handle_signal_container` and its
predecessors), the entity being "JOB <id>" for the batch script or "STEP <id>.<step>" (also
"<id>.batch", "<id>+<het>.<step>") and the time `slurm_make_time_str` (ISO "%FT%T" unless
SLURM_TIME_FORMAT says otherwise):

- 2.x-14.03:   "*** JOB 123 CANCELLED AT 2013-05-01T10:00:00 DUE TO TIME LIMIT ***",
               "*** STEP 123.0 CANCELLED AT ... ***" (scancel)
- 14.11-15.08: "*** JOB 123 CANCELLED AT ... DUE TO TIME LIMIT on node-1 ***",
               "*** JOB 123 CANCELLED AT ... *** on node-1" (scancel)
- 16.05-today: "*** JOB 123 ON node-1 CANCELLED AT ... DUE TO TIME LIMIT ***",
               "*** STEP 123.0 ON node-1 CANCELLED AT ... ***" (scancel), and since 22.05
               "*** STEP 123.0 ON node-1 CANCELLED AT ... DUE to SIGNAL Terminated ***"
               (scancel --signal; the lower-case "to" is Slurm's).

The other reasons (PREEMPTION, NODE FAILURE, JOB REQUEUE, TASK FAILURE) are causes from outside
the job; `Cancel.time_limit` and `Cancel.by_user` tell the two kinds a hang can end in.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import NamedTuple, Optional

# Every cancel line: entity, id, host (16.05+ "ON host", 14.11 "on host" after the reason or after
# the closing stars), time, and the reason as printed ("" for a plain scancel).
CANCEL = re.compile(
    r"\*\*\* (JOB|STEP) (\S+) (?:ON (\S+) )?CANCELLED AT (\S+)"
    r"(?: (DUE [Tt][Oo] [A-Z][\w ,.-]*?))?(?: on (\S+))? \*\*\*(?: on (\S+))?"
)
TIME_LIMIT = "DUE TO TIME LIMIT"


class Cancel(NamedTuple):
    entity: str  # "JOB" or "STEP"
    slurm_id: str
    host: Optional[str]
    at: str  # as printed
    reason: str  # "time limit", "scancel", "signal Terminated", "preemption", ...

    @property
    def time_limit(self) -> bool:
        return self.reason == "time limit"

    @property
    def by_user(self) -> bool:
        """A cancel that someone asked for (scancel, with or without --signal)."""
        return self.reason == "scancel" or self.reason.startswith("signal ")


def read_cancel(m: re.Match[str]) -> Cancel:
    why = (m.group(5) or "").strip()
    if not why:
        reason = "scancel"
    elif why.upper().startswith("DUE TO SIGNAL "):
        reason = "signal " + why[len("DUE TO SIGNAL ") :]
    else:
        reason = why[len("DUE TO ") :].split(",")[0].strip().lower()
    # 14.11's "DUE TO NODE node-1 FAILURE" names the host inside the reason
    node = re.fullmatch(r"node (\S+) failure", reason)
    host = m.group(3) or m.group(6) or m.group(7) or (node.group(1) if node else None)
    if node:
        reason = "node failure"
    return Cancel(m.group(1), m.group(2), host, m.group(4), reason)


def cancel_seconds(at: str) -> Optional[float]:
    """The cancel time as seconds on the naive local clock (as the log prefixes' times are read),
    or None when SLURM_TIME_FORMAT made it something other than ISO ("relative", a custom format)."""
    try:
        return _dt.datetime.fromisoformat(at.replace("_", " ")).replace(tzinfo=None).timestamp()
    except ValueError:
        return None
