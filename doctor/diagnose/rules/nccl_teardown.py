"""NCCL's complaints while a process group is torn down after the job's work: cleanup noise, not a cause.

Read at the source:
- NCCL init.cc (2.19+, commReclaim): "commReclaim: cleanup comm 0x9801e10 rank 0 failed in destroy/abort,
  error 1" when ncclCommDestroy / ncclCommAbort could not free a resource (a buffer already deregistered,
  a CUDA context going away); the CUDA call's own WARN ("transport/p2p.cc:1128 NCCL WARN Cuda failure 1
  'invalid argument'") comes just before it, on the same "host:pid:tid" prefix.
- ProcessGroupNCCL.cpp (torch 2.4+): "[PG ID 0 PG GUID 0(default_pg) Rank 0] Watchdog joined, destroying
  NCCL communicators." then "... Destroy complete." (destroy_process_group / the destructor at exit).

A NCCL WARN inside that cleanup (the commReclaim line, a WARN followed by it on the same process, or a WARN
after the process group said it is destroying its communicators) is an observation: the job's own failure, if
any, is said before the teardown by its own lines. A real failure that made the teardown happen keeps its
rows.
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.nccl_transport import OBSERVED
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_WARN = lazy_re.compile(r"\bNCCL WARN\b")
_RECLAIM = lazy_re.compile(r"commReclaim: cleanup comm \S+ rank \d+ failed in destroy/abort")
_DESTROYING = lazy_re.compile(r"Watchdog joined, destroying NCCL communicators|destroying NCCL communicators")
_DONE = lazy_re.compile(r"\bDestroy complete\b")
_PROC = lazy_re.compile(r"([\w.-]+:\d+):\d+ \[\d+\]")


def _in_teardown(hit: Hit) -> bool:
    if _RECLAIM.search(hit.text):
        return True
    me = _PROC.search(hit.text)
    for ln in hit.after(4, same_rank=False):
        if _RECLAIM.search(ln.text) and (me is None or me.group(1) in ln.text):
            return True
    for ln in reversed(hit.before(12, same_rank=False)):
        if _DONE.search(ln.text):
            return False  # a teardown that finished before this line
        if _DESTROYING.search(ln.text):
            return True
    return False


def _teardown(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _in_teardown(hit):
        return None
    return [
        row.event(
            hit,
            hit.text.strip(),
            {"kind": "teardown_noise"},
            code=OBSERVED,
            dedupe=(OBSERVED, "nccl_teardown", hit.line.no),
        )
    ]


SIGNATURES = (
    Signature(
        "nccl warn during communicator teardown",
        _WARN,
        _teardown,
        C.NCCL_PLATFORM_FEATURE.code,
        tier=3,
        # (the scanner's anchor of every NCCL WARN line, as the "nccl warn" row of nccl_errors has it)
        anchors=(b"WARN",),
        worth=(rb"NCCL WARN",),
        words=("nccl warn",),
    ),
)
parse = gated_reader(SIGNATURES)
