"""driver_env: the software stack under PyTorch does not fit (driver, CUDA libraries, device
visibility).

Formats: torch/cuda/__init__.py "The NVIDIA driver on your system is too old (found version
11040)."; cudaGetErrorString "CUDA driver version is insufficient for CUDA runtime version",
"no CUDA-capable device is detected", "invalid device ordinal"; "Found no NVIDIA driver on your
system"; "No CUDA GPUs are available"; "Torch not compiled with CUDA enabled"; the dynamic
loader "libnccl.so.2: cannot open shared object file: No such file or directory" (NCCL's own
"NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file" at INFO is harmless and
not matched).
"""

from __future__ import annotations

import re

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit, event

_TOO_OLD = re.compile(r"NVIDIA driver on your system is too old \(found version (\d+)\)|"
                      r"CUDA driver version is insufficient for CUDA runtime version|cudaErrorInsufficientDriver")
_NO_DEVICE = re.compile(r"no CUDA-capable device is detected|No CUDA GPUs are available|Found no NVIDIA driver on your system|"
                        r"Torch not compiled with CUDA enabled|cudaErrorNoDevice")
_LIB = re.compile(r"(lib(?:nccl|cudart|cuda|cublas(?:Lt)?|cudnn\w*|nvrtc|cusparse\w*|cufft|curand|nvJitLink|cupti)"
                  r"\.so(?:\.[\d.]+)?)\s*:\s*cannot open shared object file")
_ORDINAL = re.compile(r"invalid device ordinal|CUDA_VISIBLE_DEVICES")


def parse(hit: Hit) -> list[Event]:
    t = hit.text
    if "NCCL INFO" in t:
        return []
    m = _TOO_OLD.search(t)
    if m:
        facts = {"driver_version_found": int(m.group(1))} if m.group(1) else {}
        return [event(hit, C.DRIVER_TOO_OLD.code, "the NVIDIA driver is older than the CUDA runtime PyTorch needs"
                      + (f" (driver reports CUDA {int(m.group(1)) // 1000}.{int(m.group(1)) % 1000 // 10})"
                         if m.group(1) else ""), facts, dedupe=(C.DRIVER_TOO_OLD.code,))]
    m = _NO_DEVICE.search(t)
    if m:
        why = {"Torch not compiled with CUDA enabled": "cpu_build_of_torch",
               "Found no NVIDIA driver on your system": "no_driver"}.get(m.group(0), "no_visible_device")
        return [event(hit, C.NO_CUDA_DEVICE.code, f"no usable CUDA device: {m.group(0)}", {"reason": why},
                      dedupe=(C.NO_CUDA_DEVICE.code, why))]
    m = _LIB.search(t)
    if m:
        return [event(hit, C.LIBRARY_MISSING.code, f"{m.group(1)} could not be loaded (not installed or not on the "
                      "library path)", {"library": m.group(1)}, dedupe=(C.LIBRARY_MISSING.code, m.group(1)))]
    m = _ORDINAL.search(t)
    if m and ("rror" in t or "ERROR" in t):
        return [event(hit, C.DEVICE_MISMATCH.code,
                      f"{hit.who()} asked for a GPU index that is not visible "
                      "(more processes per node than visible GPUs, or a wrong CUDA_VISIBLE_DEVICES)",
                      {"cuda_error": m.group(0)}, dedupe=(C.DEVICE_MISMATCH.code,))]
    return []
