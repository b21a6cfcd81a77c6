"""cuda_oom on accelerators that are not CUDA GPUs, in the words of their own runtimes.

torch's allocator copies ("NPU out of memory. Tried to allocate", "XPU out of memory", "MLU out of
memory", "HIP out of memory", "MPS backend out of memory") are `cuda_oom`'s and `oom_layers`'; this module
reads the runtimes below them, which print their own record when an allocation fails:

- Ascend CANN (runtime's error table, rtErrMap_: RT_ERROR_DRV_OUT_MEMORY -> ACL_ERROR_RT_MEMORY_ALLOCATION
  207001, "driver error:out of memory"): "rtMalloc execute failed, reason=[driver error:out of memory]",
  "rtFftsPlusTaskLaunch execute failed, reason=[driver error:out of memory][FUNC:FuncErrorReason]...",
  plog's "MallocPhysical:[drv api]halMemCreate failed drvRetCode=6, ... desc=[driver error:out of memory]".
  The same words after an rtsMallocHost / aclrtMallocHost are pinned HOST memory (EL0018, the memlock limit):
  not a device OOM, left to the host rows.
- CANN's error-code block EL0004 as the plog and torch_npu print it, with the time (and, in newer CANN, the
  PID) between the code and the message: "EL0004: 2024-08-28-16:15:00.358.141 Failed to allocate memory.",
  "EL0004: [PID: 1234] 2024-... Failed to allocate memory." (the bare forms are oom_layers').
- torch_npu's NPU_CHECK_ERROR for an allocation ("NPU function error: aclrtMalloc, error code is 207001",
  "call aclnnBatchMatMul failed, error code is 207001") and its sentence for 207001 ("[Error]: Failed to apply
  for memory.").
- HIP's older name of the error: "hipErrorMemoryAllocation" (hipErrorOutOfMemory is cuda_oom's); Cambricon
  CNRT's "cnrtErrorNoMem" (100100, "insufficient MLU device memory", cnrt.h) where a wrapper prints the name.
- Intel GPUs through SYCL's PI layer (IPEX <= 2.1): "Native API failed. Native API returns: -5
  (PI_ERROR_OUT_OF_RESOURCES)", which IPEX's FAQ says is device memory exhausted (a SYCL kernel over its
  local-memory size says it too: tier 1, behind any other finding).
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

# Host-memory calls of CANN and torch_npu's pinned allocator: the same error words, host memory.
_HOST = lazy_re.compile(r"MallocHost|[Hh]ost memory|EL0018|allocate_host_memory")

_CANN_DRV = lazy_re.compile(
    r"(?:(?P<call>\w+)(?: execute| execution)? failed, )?"
    r"(?:reason|desc)=\[?driver error:\s?out of memory\]?|driver error:\s?out of memory"
)
_EL0004_STAMPED = lazy_re.compile(
    r"EL0004:\s+(?:\[PID:\s*\d+\]\s*)?\d{4}-\d\d-\d\d[-\s][\d:.]+\s+Failed to allocate memory"
)
_NPU_207001 = lazy_re.compile(r"(?:(?P<call>\w+)(?: failed)?, )?error code is 207001\b")
_NPU_APPLY = lazy_re.compile(r"\[Error\]: Failed to apply for memory")
_HIP_OLD = lazy_re.compile(r"\b(?P<name>hipErrorMemoryAllocation|cnrtErrorNoMem)\b")
_PI_RESOURCES = lazy_re.compile(r"Native API returns: -5 \((?:PI|UR)_ERROR_OUT_OF_RESOURCES\)")


def _host_near(hit: Hit) -> bool:
    """Whether the record is of pinned host memory: the line or the few around it name a host allocation."""
    near = [ln.text for ln in hit.before(4, False)] + [hit.text] + [ln.text for ln in hit.after(2, False)]
    return any(_HOST.search(t) for t in near)


def _oom(row: Signature, hit: Hit, message: str, device: str, tier: Optional[int] = None) -> list[Event]:
    facts = {
        "likely_cause": "insufficient_memory",
        "device": device,
        "reported_by": row.name,
        "error_line": clip(hit.text.strip(), 200),
    }
    return [row.event(hit, message, facts, tier=tier, dedupe=(C.CUDA_OOM.code, hit.rank, "cuda_error"))]


def _ascend(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if _host_near(hit):
        return None
    call = m.groupdict().get("call")
    what = f" ({call})" if call else ""
    if "CUDA driver error" in hit.text:
        # torch's own driver-API check (c10/cuda/driver_api.h: "CUDA driver error: out of memory"): a CUDA GPU
        return _oom(row, hit, "the GPU ran out of memory: a CUDA driver call could not allocate", "cuda")
    return _oom(row, hit, f"the Ascend NPU ran out of device memory{what}: CANN could not allocate it", "npu")


def _hip(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("name") == "cnrtErrorNoMem":
        return _oom(row, hit, "the Cambricon MLU ran out of device memory (cnrtErrorNoMem, 100100)", "mlu")
    return _oom(row, hit, "the AMD GPU ran out of device memory (hipErrorMemoryAllocation)", "rocm")


def _pi(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return _oom(
        row, hit, "the Intel GPU could not get device resources for the op (SYCL -5: memory)", "xpu", 1
    )


SIGNATURES = (
    Signature(
        "cann driver out of memory",
        _CANN_DRV,
        _ascend,
        C.CUDA_OOM.code,
        anchors=(b"driver error:",),
        worth=(rb"driver error:\s?out of memory",),
        words=("driver error:",),
    ),
    Signature(
        "cann el0004 stamped",
        _EL0004_STAMPED,
        _ascend,
        C.CUDA_OOM.code,
        anchors=(b"EL0004",),
        words=("el0004",),
    ),
    Signature(
        "torch_npu 207001",
        _NPU_207001,
        _ascend,
        C.CUDA_OOM.code,
        anchors=(b"error code is 207001",),
        words=("207001",),
    ),
    Signature(
        "torch_npu failed to apply for memory",
        _NPU_APPLY,
        _ascend,
        C.CUDA_OOM.code,
        anchors=(b"Failed to apply for memory",),
        words=("failed to apply for memory",),
    ),
    Signature(
        "hip and cnrt oom names",
        _HIP_OLD,
        _hip,
        C.CUDA_OOM.code,
        anchors=(b"hipErrorMemoryAllocation", b"cnrtErrorNoMem"),
        words=("hiperrormemoryallocation", "cnrterrornomem"),
    ),
    Signature(
        "sycl out of resources",
        _PI_RESOURCES,
        _pi,
        C.CUDA_OOM.code,
        anchors=(b"_ERROR_OUT_OF_RESOURCES",),
        words=("_error_out_of_resources",),
    ),
)

parse = gated_reader(SIGNATURES)
