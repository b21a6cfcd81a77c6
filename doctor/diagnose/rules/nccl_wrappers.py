"""nccl_usage / nccl_network from frameworks that print NCCL's result by its number: PaddlePaddle's
enforce (phi/core/enforce.h build_nvidia_error_msg: "NCCL error(5), invalid usage. " inside "ExternalError:"
or "OSError: (External)"; the number alone when the text is cut), PPL's NCCL_CHECK ("NCCL error(code:5) on
(ncclCommInitRank)") and CUDA samples' "NCCL error(Err=3) at comm.cu:120". The number is the ncclResult_t
(1 unhandled cuda error, 2 system, 3 internal, 4 invalid argument, 5 invalid usage, 6 remote); a text
after it decides when both are there, and NCCL's last WARN (`Last error:`) decides before either, as for
torch's own message (nccl_errors).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.nccl_detail import KIND, RESULT, from_detail, last_error
from pgdoctor.diagnose.signature import Signature, gate, read

_NUMBERED = re.compile(
    r"NCCL error\((?:code:|Err=)?(?P<num>[1-7])\)(?:,\s*(?P<err>[a-z][a-z ,-]*[a-z]))?"
    r"(?:\s+(?:at|on)\s+(?P<where>\S+))?"
)


def _numbered(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    num = int(m.group("num"))
    err = (m.group("err") or "").lower()
    kind = next((c for k, c in KIND.items() if err.startswith(k)), None) if err else None
    kind = kind or RESULT.get(num)
    if kind is None:
        return []
    base: dict[str, Any] = {"nccl_result": num, "nccl_error": err or f"ncclResult {num}"}
    base["nccl_error_text"] = err or f"ncclResult {num}"
    if m.group("where"):
        base["where"] = m.group("where").strip("()")
    return from_detail(hit, last_error(hit), base, None, 0, kind)


SIGNATURES = (
    Signature(
        "nccl result by number",
        _NUMBERED,
        _numbered,
        C.NCCL_INTERNAL_ERROR.code,
        anchors=(b"rror",),
        worth=(rb"NCCL error\(",),
        words=("nccl error(",),
    ),
)
_WORDS = gate(SIGNATURES)


def parse(hit: Hit) -> list[Event]:
    if _WORDS is not None and not hit.may_hold(_WORDS):
        return []
    return read(hit, SIGNATURES)
