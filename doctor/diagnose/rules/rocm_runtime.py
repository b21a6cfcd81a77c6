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
# A code object the runtime cannot load on this GPU (ROCr hsa.h: HSA_STATUS_ERROR_INVALID_ISA "The instruction
# set architecture is invalid.", HSA_STATUS_ERROR_INVALID_CODE_OBJECT "The code object is invalid.",
# HSA_STATUS_ERROR_INVALID_ISA_NAME), in ROCclr's queue callback or a library's abort: kernels built for
# another gfx target (an HSA_OVERRIDE_GFX_VERSION that does not fit, a wheel without this GPU) (RUN265).
_HSA_ISA = lazy_re.compile(r"HSA_STATUS_ERROR_(?P<status>INVALID_ISA(?:_NAME)?|INVALID_CODE_OBJECT)\b")
_HSA_OOR = lazy_re.compile(r"HSA_STATUS_ERROR_OUT_OF_RESOURCES\b")
_FREE_MEM = lazy_re.compile(r"Available Free mem\s*:\s*(\d+)\s*MB")
# rocminfo (and ROCr under it) when this user cannot use the GPUs: the kernel's compute driver is absent
# ("ROCk module is NOT loaded, possibly no GPU devices"), /dev/kfd cannot be opened ("Unable to open /dev/kfd
# read-write: Permission denied", then '<user> is not member of "render" group, the default DRM access
# group...'), and hsa_init's failure that follows, which ROCr words as a resource failure: "hsa api call
# failure at: .../rocminfo.cc:1143" / "Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed
# to allocate the necessary resources." (rocminfo.cc, ROCm 4.x-6.x). No device is visible to the process:
# the driver, the container's devices (/dev/kfd, /dev/dri) or the user's groups (RUN262), not an OOM.
_KFD = lazy_re.compile(
    r"Unable to open /dev/kfd read-write: (?P<err>[^\n]+)|ROCk module is NOT loaded|"
    r"is not member of \"(?P<group>render|video)\" group"
)
_HSA_INIT_CALL = lazy_re.compile(r"hsa api call failure at:|/dev/kfd|ROCk module is NOT loaded")
# RCCL's ROCm SMI wrapper (src/misc/rocm_smi_wrap.cc, 2.x): "NCCL WARN ROCm SMI init failure <rsmi status
# string>", "ARSMI failure N", "rocm_smi_lib: <busid> device index not found" (also "ARSMI_lib: ..."): RCCL
# reads the topology through rocm_smi_lib, whose failure (amdgpu not loaded, /sys/class/kfd not visible in
# the container, a rocm_smi_lib of another ROCm) fails ncclCommInitRank with a system error; AMD's NVML
# (RUN391).
_RSMI = lazy_re.compile(
    r"ROCm SMI init failure\b(?P<why>[^\n]{0,160})|(?:rocm_smi_lib|ARSMI_lib): (?P<bus>\S+) device index not "
    r"found|ARSMI failure (?P<ret>-?\d+)"
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


def _rsmi(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"runtime": "rocm", "library": "rocm_smi_lib", "reported_by": "RCCL"}
    if m.group("bus"):
        facts["pci_bus_id"] = m.group("bus").lower()
        what = f"rocm_smi_lib does not know the GPU at {facts['pci_bus_id']}"
    elif m.group("ret"):
        facts["rsmi_status"] = int(m.group("ret"))
        what = f"an amd-smi call failed with status {m.group('ret')}"
    else:
        why = (m.group("why") or "").strip(" :")
        if why:
            facts["rsmi_error"] = why
        what = "rocm_smi_lib could not initialise" + (f" ({why})" if why else "")
    return [
        row.event(
            hit,
            f"RCCL could not read the GPUs through ROCm SMI: {what} (the amdgpu driver, /sys/class/kfd in "
            "the container, or a rocm_smi_lib of another ROCm release)",
            facts,
            dedupe=(row.code, "rocm_smi"),
        )
    ]


def _kfd(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"runtime": "rocm"}
    if m.group("err"):
        facts["reason"] = "kfd_not_openable"
        facts["error"] = m.group("err").strip()
        what = f"/dev/kfd could not be opened ({facts['error']})"
    elif m.group("group"):
        facts["reason"] = "not_in_render_group"
        facts["group"] = m.group("group")
        what = f'the user is not in the "{m.group("group")}" group that may open the GPUs'
    else:
        facts["reason"] = "kfd_driver_not_loaded"
        what = "the amdgpu kernel driver's compute part (ROCk / kfd) is not loaded"
    return [
        row.event(
            hit,
            f"the ROCm runtime cannot reach the GPUs: {what}",
            facts,
            dedupe=(row.code, "rocm", "kfd"),
        )
    ]


def _hsa_isa(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"runtime": "rocm", "hsa_status": f"HSA_STATUS_ERROR_{m.group('status')}"}
    g = _GFX.search(hit.text)
    if g:
        facts["gfx"] = g.group(1)
    return [
        row.event(
            hit,
            f"the ROCm runtime could not load a GPU code object (HSA_STATUS_ERROR_{m.group('status')}): the "
            "kernels were built for another GPU architecture than this one (or HSA_OVERRIDE_GFX_VERSION "
            "names one that does not fit)",
            facts,
            dedupe=(row.code, "hsa_isa"),
        )
    ]


def _hsa_oor(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if any(_HSA_INIT_CALL.search(ln.text) for ln in [*hit.before(8, same_rank=False), hit.line]):
        # rocminfo's hsa_init, which says "out of resources" when /dev/kfd cannot be used
        return [
            row.event(
                hit,
                "the ROCm runtime could not initialise (hsa_init: HSA_STATUS_ERROR_OUT_OF_RESOURCES, as "
                "rocminfo reports it when /dev/kfd cannot be used): no GPU is usable by this process",
                {"runtime": "rocm", "hsa_status": "HSA_STATUS_ERROR_OUT_OF_RESOURCES", "reason": "hsa_init"},
                code=C.NO_CUDA_DEVICE.code,
                dedupe=(C.NO_CUDA_DEVICE.code, "rocm", "kfd"),
            )
        ]
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
        "rocm hsa invalid code object",
        _HSA_ISA,
        _hsa_isa,
        C.ARCH_UNSUPPORTED.code,
        anchors=(b"HSA_STATUS_ERROR_INVALID_ISA", b"HSA_STATUS_ERROR_INVALID_CODE_OBJECT"),
        words=("hsa_status_error_invalid_isa", "hsa_status_error_invalid_code_object"),
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
        "rccl rocm smi failure",
        _RSMI,
        _rsmi,
        C.NVML_CALL_FAILED.code,
        anchors=(b"ROCm SMI init failure", b"device index not found", b"ARSMI failure"),
        worth=(
            rb"ROCm SMI init failure",
            rb"(?:rocm_smi_lib|ARSMI_lib): \S+ device index not found",
            rb"ARSMI failure",
        ),
        words=("rocm smi init failure", "device index not found", "arsmi failure"),
    ),
    Signature(
        "rocm kfd unavailable",
        _KFD,
        _kfd,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"Unable to open /dev/kfd", b"ROCk module is NOT loaded", b"is not member of"),
        worth=(
            rb"Unable to open /dev/kfd",
            rb"ROCk module is NOT loaded",
            rb"is not member of \"(?:render|video)\" group",
        ),
        words=("/dev/kfd", "rock module is not loaded", "is not member of"),
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
