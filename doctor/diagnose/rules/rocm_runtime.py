"""ROCm under PyTorch, JAX and RCCL: the HSA runtime's status codes for a kernel that faulted, and RCCL's
copy of NCCL's CUDA check naming a HIP error.

Formats: ROCclr's queue callback (rocclr/device/rocm/rocdevice.cpp, ROCm 5.x-6.x) ": 0:rocdevice.cpp :2672:
1234567890 us: 12345: [tid:0x7f] Device::callbackQueue aborting with error : HSA_STATUS_ERROR_MEMORY_APERTURE_
VIOLATION: The agent attempted to access memory beyond the largest legal address. code: 0x29" (ROCm's
illegal memory access: RUN244, as the "Memory access fault by GPU node-N" record gpu_runtime.py reads),
"HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION" (an illegal instruction, the same class), "HSA_STATUS_ERROR_EXCEPTION:
An HSAIL operation resulted in a hardware exception" (a hardware exception, RUN295). RCCL prints NCCL's WARN
lines with the HIP error in the CUDA check ("NCCL WARN Cuda failure 'hipErrorNoBinaryForGpu'", "HIP failure
'hipErrorNoBinaryForGpu'"): the library has no code object for this GPU's gfx target, a build that does not
fit the GPU (RUN265), not an NCCL usage error.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_HSA = lazy_re.compile(
    r"HSA_STATUS_ERROR_(?P<status>MEMORY_APERTURE_VIOLATION|ILLEGAL_INSTRUCTION|EXCEPTION|MEMORY_FAULT)\b"
)
_NO_BINARY = lazy_re.compile(r"(?:Cuda|HIP) failure (?:\d+ )?'?hipErrorNoBinaryForGpu")
_GFX = lazy_re.compile(r"\b(gfx\w+)")


def _hsa(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    status = m.group("status")
    facts: dict[str, Any] = {"runtime": "rocm", "hsa_status": f"HSA_STATUS_ERROR_{status}"}
    if status == "EXCEPTION":
        return [
            row.event(
                hit,
                "the ROCm runtime aborted a queue on a hardware exception of the GPU "
                "(HSA_STATUS_ERROR_EXCEPTION)",
                facts,
                code=C.GPU_HW_EXCEPTION.code,
                dedupe=(C.GPU_HW_EXCEPTION.code, "hsa", status),
            )
        ]
    what = (
        "an illegal instruction"
        if status == "ILLEGAL_INSTRUCTION"
        else "an access outside the memory it may use"
    )
    return [
        row.event(
            hit,
            f"a GPU kernel faulted on {what} (ROCm HSA_STATUS_ERROR_{status}): a kernel or library bug far "
            "more often than the hardware",
            facts,
            dedupe=(row.code, "hsa", status),
        )
    ]


def _no_binary(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"runtime": "rocm", "reason": "no_code_object"}
    for ln in [*hit.before(6, same_rank=False), hit.line, *hit.after(6, same_rank=False)]:
        g = _GFX.search(ln.text)
        if g:
            facts["gfx"] = g.group(1)
            break
    return [
        row.event(
            hit,
            "RCCL (or a HIP library under it) has no code object for this GPU's architecture "
            "(hipErrorNoBinaryForGpu): the build does not target this GPU",
            facts,
            dedupe=(row.code, "no_binary"),
        )
    ]


SIGNATURES = (
    Signature(
        "rocm hsa kernel fault",
        _HSA,
        _hsa,
        C.CUDA_ILLEGAL_ACCESS.code,
        anchors=(b"HSA_STATUS_ERROR_",),
        words=("hsa_status_error_",),
    ),
    Signature(
        "rccl hip no binary for gpu",
        _NO_BINARY,
        _no_binary,
        C.ARCH_UNSUPPORTED.code,
        anchors=(b"hipErrorNoBinaryForGpu",),
        words=("hiperrornobinaryforgpu",),
    ),
)
parse = gated_reader(SIGNATURES)
