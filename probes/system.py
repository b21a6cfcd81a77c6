"""The support bundle's facts about the machine, at the level of torch.utils.collect_env and
beyond: OS and kernel, CPU model, glibc, every installed Python distribution (a `pip freeze`),
the CUDA/cuDNN/NCCL libraries the dynamic loader finds, and the container and cgroup limits the
job runs under. Facts only: no check judges them; they are what a ticket needs."""

from __future__ import annotations

import platform
import re
from typing import Any

from pgdoctor.model import Measurement, Reason, Unavailable
from pgdoctor.probes.base import ProbeContext, probe
from pgdoctor.probes.commands import CommandNotFound

# The libraries a CUDA job loads, by the names ldconfig lists them under.
_LIBS = re.compile(r"^\s*(lib(?:cudart|cuda|cudnn|nccl|cublas|nvidia-ml)\.so[.\d]*)\s.*=>\s*(\S+)", re.M)


def _os_release(ctx: ProbeContext) -> Any:
    for path in ("/etc/os-release", "/usr/lib/os-release"):
        try:
            text = ctx.fs.read_text(path)
        except OSError:
            continue
        fields = dict(re.findall(r'^(\w+)="?([^"\n]*)"?$', text, re.M))
        return fields.get("PRETTY_NAME") or f"{fields.get('NAME', '?')} {fields.get('VERSION_ID', '')}".strip()
    return Unavailable(Reason.NOT_PRESENT, "no /etc/os-release")


def _cpu_model(ctx: ProbeContext) -> Any:
    try:
        m = re.search(r"^(?:model name|Model|cpu model)\s*:\s*(.+)$", ctx.fs.read_text("/proc/cpuinfo"), re.M)
    except OSError as exc:
        return Unavailable(Reason.ERROR, f"/proc/cpuinfo: {exc.strerror}")
    return m.group(1).strip() if m else Unavailable(Reason.NOT_PRESENT, "no model name in /proc/cpuinfo")


def _read(ctx: ProbeContext, path: str) -> str | None:
    try:
        return ctx.fs.read_stripped(path)
    except OSError:
        return None


def _cgroup(ctx: ProbeContext) -> dict[str, Any]:
    """The memory and CPU limits of this process's cgroup (v2, else v1); 'max' means none."""
    out: dict[str, Any] = {}
    v2 = _read(ctx, "/sys/fs/cgroup/memory.max")
    if v2 is not None:
        out["version"] = 2
        out["memory_max"] = v2
        cpu = _read(ctx, "/sys/fs/cgroup/cpu.max")
        if cpu:
            quota, _, period = cpu.partition(" ")
            out["cpu_max"] = "max" if quota == "max" else (
                f"{int(quota) / int(period):.2f} CPUs" if quota.isdigit() and period.isdigit() else cpu)
        pids = _read(ctx, "/sys/fs/cgroup/pids.max")
        if pids:
            out["pids_max"] = pids
        return out
    v1 = _read(ctx, "/sys/fs/cgroup/memory/memory.limit_in_bytes")
    if v1 is not None:
        out["version"] = 1
        out["memory_max"] = v1
        q1, p1 = _read(ctx, "/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), _read(ctx, "/sys/fs/cgroup/cpu/cpu.cfs_period_us")
        if q1 and p1 and q1.lstrip("-").isdigit() and p1.isdigit():
            out["cpu_max"] = "max" if int(q1) < 0 else f"{int(q1) / int(p1):.2f} CPUs"
    return out


def _container(ctx: ProbeContext) -> str:
    if ctx.env.get("KUBERNETES_SERVICE_HOST"):
        return "kubernetes"
    if ctx.fs.exists("/.dockerenv"):
        return "docker"
    if ctx.fs.exists("/run/.containerenv"):
        return "podman"
    if ctx.env.get("SINGULARITY_NAME") or ctx.env.get("APPTAINER_NAME"):
        return "apptainer"
    return "none detected"


def _libraries(ctx: ProbeContext) -> Any:
    try:
        res = ctx.commands.run(["ldconfig", "-p"], timeout_s=5.0)
    except CommandNotFound:
        return Unavailable(Reason.LIBRARY_NOT_FOUND, "ldconfig is not on PATH")
    except OSError as exc:
        return Unavailable(Reason.ERROR, f"ldconfig -p: {exc}")
    if res.returncode != 0:
        return Unavailable(Reason.ERROR, f"ldconfig -p exited {res.returncode}")
    found: dict[str, str] = {}
    for name, path in _LIBS.findall(res.stdout):
        found.setdefault(name, path)
    return found


def _packages() -> list[str]:
    from importlib import metadata

    names: dict[str, str] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            names.setdefault(name.lower(), f"{name} {dist.version}")  # not name==version: a redactor reads "tokens=" as a secret
    return sorted(names.values(), key=str.lower)


@probe("system", area="host", level="quick")
def system(ctx: ProbeContext) -> list[Measurement]:
    libc, libc_version = platform.libc_ver()
    kernel = _read(ctx, "/proc/sys/kernel/osrelease") or platform.release()
    return [
        Measurement("system.os", _os_release(ctx), source="file:/etc/os-release"),
        Measurement("system.kernel", kernel, source="procfs:/proc/sys/kernel/osrelease"),
        Measurement("system.cpu_model", _cpu_model(ctx), source="procfs:/proc/cpuinfo"),
        Measurement("system.libc", f"{libc} {libc_version}".strip() or Unavailable(Reason.NOT_PRESENT, "unknown libc"),
                    source="platform.libc_ver"),
        Measurement("system.container", _container(ctx), source="environ, /.dockerenv, /run/.containerenv"),
        Measurement("system.cgroup", _cgroup(ctx) or Unavailable(Reason.NOT_PRESENT, "no cgroup limits file"),
                    source="sysfs:/sys/fs/cgroup"),
        Measurement("system.ld_library_path", ctx.env.get("LD_LIBRARY_PATH", ""), source="environ"),
        Measurement("system.cuda_libraries", _libraries(ctx), source="command:ldconfig -p"),
        Measurement("system.python_packages", _packages(), source="importlib.metadata (pip freeze, as name version)"),
    ]
