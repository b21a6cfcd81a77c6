"""The GPU tier of `pgdoctor hang`: per rank process, the GPU it runs on and how busy that GPU's
SMs are for it, through NVML (the one backend of probes/gpu/nvml.py, so tests replay recordings).

A rank waiting at 100% SM runs a kernel that does not end (an NCCL kernel spinning for a peer
that never comes, a kernel that loops); a culprit at 0% SM is held on the host (Python, a lock,
data loading). NVML reports per-process SM utilisation over its last samples
(`nvmlDeviceGetProcessUtilization`; NOT_FOUND means no sample since the timestamp: no kernel ran,
0%); where that is not supported, the device's whole utilisation stands in, marked as such.

Pids are NVML's, i.e. the host's: a rank in a container of its own pid namespace is matched only
when pgdoctor runs in the same namespace as NVML sees."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Callable, Optional

from pgdoctor.model import Reason
from pgdoctor.probes.gpu.nvml import LiveBackend, NvmlBackend, NvmlError


def _safe(backend: NvmlBackend, function: str, *args: int) -> tuple[Any, Optional[NvmlError]]:
    try:
        return backend.call(function, *args), None
    except NvmlError as exc:
        return None, exc


def read(
    pids: Sequence[int], backend_factory: Callable[[], NvmlBackend] = LiveBackend
) -> tuple[dict[int, dict[str, Any]], str]:
    """{pid: {"device", "sm_util", "sm_source", "device_util"}} for the pids NVML runs, and the
    tier's status ("ok", or why not: no NVML, no driver, no GPU, no rank on a GPU)."""
    backend = backend_factory()
    try:
        backend.init()
    except NvmlError as exc:
        if exc.reason in (Reason.LIBRARY_NOT_FOUND, Reason.DRIVER_NOT_LOADED):
            return {}, f"no GPU here (NVML: {exc.reason.value})"
        return {}, f"NVML did not start: {exc.detail}"
    try:
        count, err = _safe(backend, "nvmlDeviceGetCount")
        if err is not None or not count:
            return {}, "no GPU here (NVML sees none)" if err is None else f"NVML: {err.detail}"
        wanted = set(pids)
        out: dict[int, dict[str, Any]] = {}
        for dev in range(int(count)):
            procs, err = _safe(backend, "nvmlDeviceGetComputeRunningProcesses", dev)
            on = sorted(wanted & {int(p["pid"]) for p in procs or ()})
            if not on:
                continue
            util, _ = _safe(backend, "nvmlDeviceGetUtilizationRates", dev)
            device_util = int(util["gpu"]) if isinstance(util, dict) else None
            samples, serr = _safe(backend, "nvmlDeviceGetProcessUtilization", dev, 0)
            for pid in on:
                sm: Optional[int]
                if serr is None:
                    mine = [int(s["smUtil"]) for s in samples or () if int(s["pid"]) == pid]
                    sm, source = (max(mine) if mine else 0), "process"
                elif serr.error_name == "NotFound":  # no sample since the timestamp: no kernel ran
                    sm, source = 0, "process"
                else:  # per-process figures not supported here: the device's own stands in
                    sm, source = device_util, "device"
                out[pid] = {"device": dev, "sm_util": sm, "sm_source": source, "device_util": device_util}
        if not out:
            return {}, "no rank runs on a GPU NVML sees"
        return out, "ok"
    finally:
        backend.shutdown()
