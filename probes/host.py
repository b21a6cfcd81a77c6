"""Host limits that break or slow distributed jobs: /dev/shm, ulimits, memory, CPUs, and how
many NVIDIA GPUs the kernel driver knows (without NVML, so it works at quick level)."""

from __future__ import annotations

import os
import resource

from pgdoctor.model import Measurement, Reason, Unavailable
from pgdoctor.probes.base import ProbeContext, probe


def _limit(value: int) -> int | str:
    return "unlimited" if value == resource.RLIM_INFINITY else int(value)


def _meminfo(ctx: ProbeContext) -> dict[str, int]:
    out = {}
    for line in ctx.fs.read_text("/proc/meminfo").splitlines():
        name, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            out[name.strip()] = int(parts[0]) * (1024 if len(parts) > 1 and parts[1] == "kB" else 1)
    return out


@probe("host", area="host", level="quick")
def host(ctx: ProbeContext) -> list[Measurement]:
    out: list[Measurement] = []
    shm: int | Unavailable
    try:
        shm = ctx.fs.statvfs_total_bytes("/dev/shm")
    except FileNotFoundError:
        shm = Unavailable(Reason.NOT_PRESENT, "/dev/shm does not exist")
    except OSError as exc:
        shm = Unavailable(Reason.ERROR, f"statvfs(/dev/shm): {exc.strerror}")
    out.append(Measurement("host.shm.total_bytes", shm, unit="B", source="statvfs:/dev/shm"))
    for name, res in (("memlock", resource.RLIMIT_MEMLOCK), ("nofile", resource.RLIMIT_NOFILE)):
        soft, hard = resource.getrlimit(res)
        out.append(
            Measurement(f"host.rlimit.{name}.soft", _limit(soft), source=f"getrlimit:RLIMIT_{name.upper()}")
        )
        out.append(
            Measurement(f"host.rlimit.{name}.hard", _limit(hard), source=f"getrlimit:RLIMIT_{name.upper()}")
        )
    try:
        mem = _meminfo(ctx)
        for field, key in (("MemTotal", "total"), ("MemAvailable", "available")):
            value: int | Unavailable = mem[field] if field in mem else Unavailable(Reason.NOT_PRESENT, field)
            out.append(
                Measurement(f"host.memory.{key}_bytes", value, unit="B", source="procfs:/proc/meminfo")
            )
    except OSError as exc:
        bad = Unavailable(Reason.ERROR, f"/proc/meminfo: {exc.strerror}")
        out.append(Measurement("host.memory.total_bytes", bad, unit="B", source="procfs:/proc/meminfo"))
    out.append(Measurement("host.cpu.count", os.cpu_count() or 0, source="os.cpu_count"))
    allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    out.append(
        Measurement(
            "host.cpu.affinity_count",
            len(allowed) if allowed else os.cpu_count() or 0,
            source="sched_getaffinity",
        )
    )
    gpus = [d for d in ctx.fs.listdir("/proc/driver/nvidia/gpus")]
    out.append(Measurement("host.nvidia.gpu_count", len(gpus), source="procfs:/proc/driver/nvidia/gpus"))
    out.append(
        Measurement(
            "host.rdma.device_count",
            len(ctx.fs.listdir("/sys/class/infiniband")),
            source="sysfs:/sys/class/infiniband",
        )
    )
    out.append(
        Measurement(
            "host.nvidia.driver_loaded",
            ctx.fs.exists("/proc/driver/nvidia/version"),
            source="procfs:/proc/driver/nvidia/version",
        )
    )
    return out
