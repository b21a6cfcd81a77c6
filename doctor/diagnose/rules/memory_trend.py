"""host_oom from the job's own progress lines: the resident memory (RSS) it prints growing to tens
of GiB until the log stops, the kernel's record of the kill being on the host, not in the paste.

Formats (the user's or the framework's logger): wenet's "... rank 0 RSS MEM USE: 212.04G", RETURNN's
"Run time: 0:01:25 CPU: 0.80% RSS: 49.03GB VMS: 1012.12GB", "rss=35.2GiB", "rss_gb: 48.1". Only a reading of
at least 10 GiB reaches the rules (a metric printed on every step must not cost a window each); the row
reads the earlier readings around it, and answers only at the last one, when the log stops within a few
lines of it. A weak record (tier 1): any error line says more.

gperftools' tcmalloc (src/tcmalloc.cc, every release; the allocator of Google Colab's Python) reports each
allocation above TCMALLOC_LARGE_ALLOC_REPORT_THRESHOLD (1 GiB by default): "tcmalloc: large alloc 1453056000
bytes == 0x55764ff10000 @  0x7fcd6cfe02a4 0x5573dd2994cc ..." (the size, the address or (nil) when it failed,
then the caller's stack), glued to a progress bar's last line when tqdm left no newline. Such reports in a
healthy run are followed by more output; a log that stops at them (a few lines at most after the last one)
ended while the process was taking gigabytes of host memory: the OOM killer (Colab's "session crashed"),
RUN121 at the same weak tier.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.units import fmt_bytes
from pgdoctor.model import lazy_re

_UNIT = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
# "RSS MEM USE: 5.11G", "RSS: 49.03GB", "rss=35.2GiB", "rss_gb: 48.1" (a unit in the key).
_READING = lazy_re.compile(
    r"\b(?:RSS|rss)(?P<keyunit>_[gm]b)?(?:[ _](?:MEM|mem|USE|use|usage|used))*\s*[:=]\s*"
    r"(?P<num>\d+(?:\.\d+)?)\s*(?P<unit>[KMGT])?(?:i?B)?\b"
)
# A reading the rules read: 10 GiB and more (two digits of G, or T).
_BIG = lazy_re.compile(
    r"\b(?:RSS|rss)(?:[ _](?:MEM|mem|USE|use|usage|used))*\s*[:=]\s*"
    r"(?:\d{2,}(?:\.\d+)?\s*G|\d+(?:\.\d+)?\s*T)|"
    r"\brss_gb\s*[:=]\s*\d{2,}"
)
GROWTH = 3.0  # the last reading at least this multiple of the first in the excerpt
MIN_READINGS = 3


def _bytes(m: re.Match[str]) -> Optional[int]:
    unit = (m.group("unit") or (m.group("keyunit") or "")[1:2]).lower()
    if unit not in _UNIT:
        return None
    return int(float(m.group("num")) * _UNIT[unit])


def _readings(texts: list[str]) -> list[int]:
    out = []
    for t in texts:
        m = _READING.search(t)
        b = _bytes(m) if m else None
        if b is not None:
            out.append(b)
    return out


def _trend(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    after = [ln.text for ln in hit.after(48)]
    if _readings(after):
        return []  # not the last reading: the last one judges the trend
    if len([t for t in after if t.strip()]) > 3:
        return []  # the job went on after its last reading: the growth did not end it
    values = _readings([*(ln.text for ln in hit.before(24)), hit.text])
    if len(values) < MIN_READINGS or values[-1] < GROWTH * values[0] or values[-1] < max(values):
        return []
    facts: dict[str, Any] = {
        "killer": "host_memory_growth",
        "rss_first_bytes": values[0],
        "rss_last_bytes": values[-1],
        "readings": len(values),
    }
    return [
        row.event(
            hit,
            f"{hit.who()}'s resident memory grew from {fmt_bytes(values[0])} to {fmt_bytes(values[-1])} "
            f"over its last {len(values)} readings and the log stops: host memory ran out (the kernel's OOM "
            "killer ends such a process; dmesg on that host has its record)",
            facts,
            tier=1,
            dedupe=(row.code, hit.rank, "rss"),
        )
    ]


# src/tcmalloc.cc's ReportLargeAlloc: "tcmalloc: large alloc %zu bytes == %p @ " and the stack.
_TCMALLOC = lazy_re.compile(r"tcmalloc: large alloc (?P<bytes>\d+) bytes == (?P<ptr>0x[0-9a-fA-F]+|\(nil\))")


def _tcmalloc(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    after = [ln.text for ln in hit.after(48, same_rank=False)]
    if any(_TCMALLOC.search(t) for t in after):
        return []  # not the last report: the last one judges whether the log stopped at them
    if len([t for t in after if t.strip()]) > 3:
        return []  # the process went on after its large allocations
    size = int(m.group("bytes"))
    failed = m.group("ptr") == "(nil)"
    return [
        row.event(
            hit,
            f"{hit.who()} was allocating {fmt_bytes(size)} of host memory at once (tcmalloc's "
            f"large-allocation report{', and the allocation failed' if failed else ''}) when the log stops: "
            "host memory ran out (the kernel's OOM killer, or Colab's 'session crashed after using all "
            "available RAM')",
            {"killer": "host_memory_large_alloc", "alloc_bytes": size, "alloc_failed": failed},
            tier=1,
            dedupe=(row.code, hit.rank, "tcmalloc"),
        )
    ]


SIGNATURES = (
    Signature(
        "tcmalloc large alloc then the log stops",
        _TCMALLOC,
        _tcmalloc,
        C.HOST_OOM_KILLED.code,
        anchors=(b"tcmalloc: large alloc",),
        words=("tcmalloc: large alloc",),
    ),
    Signature(
        "rss growth in progress lines",
        _BIG,
        _trend,
        C.HOST_OOM_KILLED.code,
        anchors=(b"RSS", b"rss"),
        worth=(
            rb"\b(?:RSS|rss)[ _A-Za-z]{0,12}[:=]\s*(?:\d{2,}(?:\.\d+)?\s*G|\d+(?:\.\d+)?\s*T)",
            rb"\brss_gb\s*[:=]\s*\d{2,}",
        ),
        words=("rss",),
    ),
)
parse = gated_reader(SIGNATURES)
