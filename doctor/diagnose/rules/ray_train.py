"""Ray Train's own controller (ray/train/v2, Ray 2.43+): its report barrier that not every rank reached.

Formats (python/ray/train/v2/_internal/exceptions.py, raised by worker_group.py and printed behind the
controller actor's "(TrainController pid=5760)" prefix, often inside "ray.train.ControllerError: Training
failed due to controller error:" or the FailurePolicy's "Decision: FailureDecision.RETRY ... Error: ..."):
- WorkerGroupStartupTimeoutError ("The worker group startup timed out after 30.0 seconds waiting for 2
  workers. ...") is read by launch_start.py (RUN221).
- BroadcastCollectiveTimeoutError: "The broadcast operation timed out after 1800.00 seconds. Please make sure
  all worker ranks call `ray.train.report`." then "The following ranks have not called it: [1, 3]": the ranks
  run different code paths (report called on rank 0 only, or inside a branch), a desync (RUN201); the ranks
  it names are the ones that never called it.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_REPORT = lazy_re.compile(
    r"The broadcast operation timed out after (?P<secs>\d+(?:\.\d+)?) seconds\. Please make sure all "
    r"worker ranks call `?ray\.train\.report"
)
_MISSING = lazy_re.compile(r"The following ranks have not called it:\s*\[(?P<ranks>[\d,\s]*)\]")


def _report(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {
        "framework": "ray train",
        "problem": "report_barrier_timeout",
        "op": "ray.train.report",
        "timeout_s": float(m.group("secs")),
    }
    for ln in [hit.line, *hit.after(3, same_rank=False)]:
        r = _MISSING.search(ln.text)
        if r:
            facts["ranks"] = [int(x) for x in re.findall(r"\d+", r.group("ranks"))]
            break
    who = f" (ranks {', '.join(map(str, facts['ranks']))} never called it)" if facts.get("ranks") else ""
    return [
        row.event(
            hit,
            f"not every Ray Train worker called ray.train.report{who}: the ranks run different code paths "
            "(report called on rank 0 only, or inside a branch); every rank must call it, with or without a "
            "checkpoint",
            facts,
            dedupe=(row.code, "ray_train_report"),
        )
    ]


SIGNATURES = (
    Signature(
        "ray train report barrier timeout",
        _REPORT,
        _report,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"Please make sure all worker ranks call",),
        worth=(rb"make sure all worker ranks call",),
        words=("make sure all worker ranks call",),
    ),
)
parse = gated_reader(SIGNATURES)
