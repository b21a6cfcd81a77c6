"""nccl_usage from nccl-tests' own check of the results (RUN327): with -c 1 (the default) every test
compares what the collective returned with what it should have, per size in the "#wrong" columns (an
"error" column of maximum deviations before 2.10) and in its summary (src/common.cu, all versions):
"# Out of bounds values : 2 FAILED" ("OK" when none; no "# " before 2.10, and rccl-tests' copy prints the
same). A count above zero means a collective ran to completion and returned corrupted data on a GPU: an
NCCL bug for that size or algorithm, or the GPU or the path between GPUs (IOMMU / PCIe ACS on peer
copies, a failing NVLink) corrupting it. Failures of the calls themselves ("Test NCCL failure
common.cu:...", "Test CUDA failure ...") are read by nccl_errors and oom_layers.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gate, read
from pgdoctor.model import lazy_re

_WRONG = lazy_re.compile(r"Out of bounds values\s*:\s*(?P<n>\d+)\s+FAILED")
# A result row: size, count, type, [redop, root,] then time algbw busbw wrong, out-of-place and in-place.
# Rows of one length may be joined by the reader as if a terminal had wrapped them: found anywhere.
_ROW = lazy_re.compile(
    r"(?P<size>\d+)\s+\d+\s+(?:float|half|bfloat16|double|u?int(?:8|32|64)?|char|fp8_e\dm\d)"
    r"(?:\s+(?:sum|prod|max|min|avg|premulsum|none)\s+-?\d+)?(?P<cols>(?:\s+[\d.e+-]+|\s+N/A){8})"
)
_OP = lazy_re.compile(r"\b(\w+?)_perf\b")


def _bad(value: str) -> bool:
    """A "#wrong" count or a maximum deviation that is not zero ("N/A": the check was skipped)."""
    try:
        return float(value) != 0
    except ValueError:
        return False


def _wrong(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    n = int(m.group("n"))
    facts: dict[str, Any] = {"wrong_values": n, "reported_by": "nccl-tests"}
    sizes = []
    for text in [ln.text for ln in hit.before(24, same_rank=False)] + [hit.text[: m.start()]]:
        for r in _ROW.finditer(text):
            cols = r.group("cols").split()
            if _bad(cols[3]) or _bad(cols[7]):
                sizes.append(int(r.group("size")))
    if sizes:
        facts["wrong_sizes_bytes"] = sizes
    for ln in [*hit.before(24, same_rank=False), hit.line, *hit.after(4, same_rank=False)]:
        op = _OP.search(ln.text)
        if op:
            facts["op"] = op.group(1)
            break
    what = f"{facts['op']} " if "op" in facts else ""
    at = f" (sizes {', '.join(map(str, sizes))} bytes)" if sizes else ""
    return [
        row.event(
            hit,
            f"nccl-tests found {n} wrong value(s) in the results of {what}collectives{at}: the collective "
            "completed but returned corrupted data (an NCCL bug for that size/algorithm, or the GPU or the "
            "path between GPUs corrupting it)",
            facts,
            dedupe=(row.code, "wrong"),
        )
    ]


SIGNATURES = (
    Signature(
        "nccl-tests wrong results",
        _WRONG,
        _wrong,
        C.NCCL_WRONG_RESULTS.code,
        anchors=(b"Out of bounds values",),
        worth=(rb"Out of bounds values",),
        words=("out of bounds values",),
    ),
)
_WORDS = gate(SIGNATURES)


def parse(hit: Hit) -> list[Event]:
    if _WORDS is not None and not hit.may_hold(_WORDS):
        return []
    return read(hit, SIGNATURES)
