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
# The same queue callback when the runtime could not get memory for the queue's work (a kernel's scratch, an
# allocation under an RCCL collective); ROCm 6.x-7.x add the device's free memory: ":0:rocdevice.cpp :3671:
# Callback: Queue 0x7f.. Aborting with error : HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to
# allocate the necessary resources. ... Code: 0x1008  Available Free mem : 4 MB". The process aborts (SIGABRT)
# instead of raising a catchable OOM: device memory was exhausted (RUN101).
_HSA_OOR = lazy_re.compile(r"HSA_STATUS_ERROR_OUT_OF_RESOURCES\b")
_FREE_MEM = lazy_re.compile(r"Available Free mem\s*:\s*(\d+)\s*MB")
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


def _hsa_oor(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {
        "runtime": "rocm",
        "hsa_status": "HSA_STATUS_ERROR_OUT_OF_RESOURCES",
        "format": "hsa",
        "reported_by": "ROCm runtime",
        "likely_cause": "insufficient_memory",
    }
    for ln in [hit.line, *hit.after(3, same_rank=False)]:
        f = _FREE_MEM.search(ln.text)
        if f:
            facts["free_mb"] = int(f.group(1))
            break
    free = f" with {facts['free_mb']} MB free" if "free_mb" in facts else ""
    msg = (
        f"the ROCm runtime aborted a GPU queue: it could not allocate the resources the work needed{free} "
        "(HSA_STATUS_ERROR_OUT_OF_RESOURCES): device memory was exhausted"
    )
    return [row.event(hit, msg, facts, dedupe=(row.code, hit.rank, "cuda_error"))]


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
        "rocm hsa out of resources",
        _HSA_OOR,
        _hsa_oor,
        C.CUDA_OOM.code,
        anchors=(b"HSA_STATUS_ERROR_OUT_OF_RESOURCES",),
        words=("hsa_status_error_out_of_resources",),
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
