"""build_probes: a PyTorch build asked by hand whether it has NCCL or torch.distributed, answering False.

Formats, read at their sources: torch.distributed.is_nccl_available() (c10d's `_NCCL_AVAILABLE`, every torch
since 1.x), torch.cuda.nccl.is_available(tensors) (torch/cuda/nccl.py: `if not hasattr(torch._C,
"_nccl_all_reduce"): warnings.warn("PyTorch is not compiled with NCCL support"); return False`) and
torch.distributed.is_available() (a build without c10d at all). In a REPL the answer is the next line
(">>> torch.distributed.is_nccl_available()" then "False", the nccl.py warning maybe between); in a script's
print it is the same line ("is_nccl_available(): False", "is_nccl_available() = False"). False is the build
rules/device_visibility.py reads from "Distributed package doesn't have NCCL built in": RUN263. True, and the
call inside the program's own code, say nothing. The nccl.py warning alone stays silent: DataParallel's
replicate asks torch.cuda.nccl on every Windows build and runs on without it (v10g-other_ambiguous-005,
v16a-other_ambiguous-004).
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_PROBE = lazy_re.compile(
    r"(?P<call>\b(?:(?:torch\.distributed\.|dist\.)?is_nccl_available\(|(?:torch\.cuda\.)?nccl\.is_available\(|"
    r"torch\.distributed\.is_available\()(?:[^()]|\([^()]*\))*\))"
    r"\)?\s*(?:(?:[:=]|->|is)\s*)?(?P<answer>False|True)?\W*$"
)
# What may stand between the REPL's call and its answer: torch/cuda/nccl.py's warning and its source line.
_PROBE_NOTE = lazy_re.compile(r"UserWarning|warnings\.warn\(|^\s*$")


def _probe(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    answer = m.group("answer")
    if answer is None:
        for ln in hit.after(4, same_rank=False):
            if _PROBE_NOTE.search(ln.text):
                continue
            answer = ln.text.strip()
            break
    if answer != "False":
        return None if answer != "True" else []
    what = "NCCL" if "nccl" in m.group("call") else "torch.distributed"
    return [
        row.event(
            hit,
            f"this PyTorch cannot use {what}: {clip(m.group('call'), 80)} answered False (a build without "
            f"{what}: CPU-only, ROCm, Windows or macOS wheels, or a vendor's build such as Jetson's)",
            {"library": what, "read_as": "probe"},
            dedupe=(row.code, what.lower()),
        )
    ]


SIGNATURES = (
    Signature(
        "backend probe answered false",
        _PROBE,
        _probe,
        C.LIBRARY_MISSING.code,
        anchors=(b"is_nccl_available(", b"nccl.is_available(", b"distributed.is_available("),
        words=("is_nccl_available(", "nccl.is_available(", "distributed.is_available("),
    ),
)
parse = gated_reader(SIGNATURES)
