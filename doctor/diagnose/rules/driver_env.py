"""driver_env: the software stack under PyTorch does not fit (driver, CUDA libraries, device
visibility).

Formats: torch/cuda/__init__.py "The NVIDIA driver on your system is too old (found version
11040)."; CUDA runtime and driver errors by message, number or enum name
(pgdoctor.knowledge.cuda_errors: 35 insufficient driver, 100 no device, 802 system not yet
initialized, 803/804, ...), as "CUDA error: <message>", "Error 802: system not yet initialized"
or "cudaErrorSystemNotReady"; "Found no NVIDIA driver on your system"; "No CUDA GPUs are
available"; "Torch not compiled with CUDA enabled"; "Distributed package doesn't have NCCL built
in"; "invalid device ordinal"; the dynamic loader "libnccl.so.2: cannot open shared object file:
No such file or directory" and vLLM's "Failed to load NCCL library from libnccl.so.2" (NCCL's own
"NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file" at INFO is harmless and not
matched).
"""

from __future__ import annotations

import re
from typing import Any

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit, event
from pgdoctor.knowledge.cuda_errors import CUDA_ERROR_WORDS, find_cuda_error

_TOO_OLD = re.compile(r"NVIDIA driver on your system is too old \(found version (\d+)\)")
_NO_DEVICE = re.compile(r"No CUDA GPUs are available|Found no NVIDIA driver on your system|"
                        r"Torch not compiled with CUDA enabled")
_LIB = re.compile(r"(lib(?:nccl|cudart|cuda|cublas(?:Lt)?|cudnn\w*|nvrtc|cusparse\w*|cufft|curand|nvJitLink|cupti|nvidia-ml)"
                  r"\.so(?:\.[\d.]+)?)\s*:\s*cannot open shared object file")
# NVML's user-space library and the loaded kernel module differ (a driver upgrade without a reboot).
_NVML_MISMATCH = re.compile(r"Failed to initialize NVML: Driver/library version mismatch|Driver/library version mismatch")
_LOAD_FAILED = re.compile(r"Failed to load NCCL library from (\S+?)\s?\.?(?:\s|$)")
_NO_NCCL = re.compile(r"Distributed package doesn't have NCCL built in|ProcessGroupNCCL is only supported with GPUs, no GPUs found|"
                      r"NCCL support is not compiled")
# "device >= 0 && device < num_gpus INTERNAL ASSERT FAILED" is torch's own check of the same mistake.
_ORDINAL = re.compile(r"invalid device ordinal|CUDA_VISIBLE_DEVICES|device >= 0 && device < num_gpus")
_WHY = {"Torch not compiled with CUDA enabled": "cpu_build_of_torch", "Found no NVIDIA driver on your system": "no_driver"}


def cuda_error_events(hit: Hit, t: str) -> list[Event]:
    """driver_env events for a CUDA error of the environment kind in `t` (also inside NCCL's
    "Cuda failure 802 'system not yet initialized'"), else []."""
    ce = find_cuda_error(t)
    if ce is None:
        return []
    facts: dict[str, Any] = {"cuda_error": ce.message, "cuda_error_number": ce.number, "cuda_error_name": ce.runtime_name}
    if ce.kind == "driver_too_old":
        return [event(hit, C.DRIVER_TOO_OLD.code, f"the NVIDIA driver does not fit the CUDA runtime: {ce.message} "
                      f"({ce.runtime_name}, {ce.number})", facts, dedupe=(C.DRIVER_TOO_OLD.code,))]
    if ce.kind == "arch_unsupported":
        return [event(hit, C.ARCH_UNSUPPORTED.code, f"CUDA: {ce.message} ({ce.runtime_name}, {ce.number}): this PyTorch "
                      "(or a compiled extension) carries no code for this GPU's compute capability", facts,
                      dedupe=(C.ARCH_UNSUPPORTED.code,))]
    if ce.kind == "not_ready":
        facts["reason"] = "system_not_ready"
        return [event(hit, C.NO_CUDA_DEVICE.code, f"CUDA reports '{ce.message}' ({ce.runtime_name}, {ce.number}): on "
                      "NVSwitch systems the NVIDIA Fabric Manager is not running or does not match the driver",
                      facts, dedupe=(C.NO_CUDA_DEVICE.code, "not_ready"))]
    facts["reason"] = "no_visible_device" if ce.kind == "no_device" else "device_init_failed"
    return [event(hit, C.NO_CUDA_DEVICE.code, f"no usable CUDA device: {ce.message} ({ce.runtime_name}, {ce.number})",
                  facts, dedupe=(C.NO_CUDA_DEVICE.code, facts["reason"]))]


# Every pattern of parse() needs one of these in the line (lower case; checked before any of them).
_WORDS = ("too old", *CUDA_ERROR_WORDS, "driver/library version mismatch", "no cuda gpus are available",
          "found no nvidia driver", "torch not compiled with cuda", "cannot open shared object file",
          "failed to load nccl library", "nccl built in", "processgroupnccl is only supported", "nccl support is not compiled",
          "invalid device ordinal", "cuda_visible_devices", "device >= 0 && device < num_gpus")


def parse(hit: Hit) -> list[Event]:
    t = hit.text
    if "NCCL INFO" in t or not hit.may_hold(_WORDS):
        return []
    m = _TOO_OLD.search(t)
    if m:
        found = int(m.group(1))
        return [event(hit, C.DRIVER_TOO_OLD.code, "the NVIDIA driver is older than the CUDA runtime PyTorch needs"
                      f" (driver reports CUDA {found // 1000}.{found % 1000 // 10})", {"driver_version_found": found},
                      dedupe=(C.DRIVER_TOO_OLD.code,))]
    evs = cuda_error_events(hit, t)
    if evs:
        return evs
    if _NVML_MISMATCH.search(t):
        return [event(hit, C.DRIVER_TOO_OLD.code, "the NVIDIA kernel module and its user-space libraries are different "
                      "versions (Driver/library version mismatch: the driver was upgraded without a reboot)",
                      {"reason": "driver_library_mismatch"}, dedupe=(C.DRIVER_TOO_OLD.code, "nvml"))]
    m = _NO_DEVICE.search(t)
    if m:
        why = _WHY.get(m.group(0), "no_visible_device")
        return [event(hit, C.NO_CUDA_DEVICE.code, f"no usable CUDA device: {m.group(0)}", {"reason": why},
                      dedupe=(C.NO_CUDA_DEVICE.code, why))]
    m = _LIB.search(t) or _LOAD_FAILED.search(t)
    if m:
        return [event(hit, C.LIBRARY_MISSING.code, f"{m.group(1)} could not be loaded (not installed or not on the "
                      "library path)", {"library": m.group(1)}, dedupe=(C.LIBRARY_MISSING.code, m.group(1)))]
    m = _NO_NCCL.search(t)
    if m:
        return [event(hit, C.LIBRARY_MISSING.code, f"this PyTorch cannot use NCCL: {m.group(0)} (a CPU-only or ROCm/"
                      "macOS build, or no GPU visible)", {"library": "NCCL"}, dedupe=(C.LIBRARY_MISSING.code, "nccl"))]
    m = _ORDINAL.search(t)
    if m and ("rror" in t or "ERROR" in t):
        return [event(hit, C.DEVICE_MISMATCH.code,
                      f"{hit.who()} asked for a GPU index that is not visible "
                      "(more processes per node than visible GPUs, or a wrong CUDA_VISIBLE_DEVICES)",
                      {"cuda_error": m.group(0)}, dedupe=(C.DEVICE_MISMATCH.code,))]
    return []
