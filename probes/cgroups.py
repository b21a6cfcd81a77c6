"""The cgroup limits this process runs under (memory, CPU quota, process count), cgroup v2 or v1,
and whether it runs in a container: what a scheduler or container runtime imposes beyond the
host's own resources, and what a support bundle must say when a rank is OOM-killed or throttled.

Reads /proc/self/cgroup for this process's cgroup path, then the controller files below
/sys/fs/cgroup (v2: memory.max, cpu.max, pids.max in one hierarchy; v1: memory.limit_in_bytes,
cpu.cfs_quota_us and cpu.cfs_period_us, pids.max per controller). Inside a container with its
own cgroup namespace the path reads `/` and the files sit at the mount's root, so the root is
tried after the path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from pgdoctor.probes.base import ProbeContext

# v1 reports "no limit" as the largest page-aligned signed 64-bit value, whatever the page size;
# anything at or above 2**62 is treated as unlimited.
V1_UNLIMITED = 1 << 62
# Marks of a container runtime in PID 1's or this process's cgroup path.
RUNTIME_MARKS = (
    ("kubepods", "kubernetes"),
    ("docker", "docker"),
    ("containerd", "containerd"),
    ("crio", "cri-o"),
    ("libpod", "podman"),
    ("lxc", "lxc"),
)


def _read(ctx: ProbeContext, path: str) -> Optional[str]:
    try:
        return ctx.fs.read_stripped(path)
    except OSError:
        return None


def own_paths(ctx: ProbeContext, pid: str = "self") -> dict[str, str]:
    """Controller (or "" for the v2 hierarchy) -> this process's cgroup path."""
    out: dict[str, str] = {}
    for line in (_read(ctx, f"/proc/{pid}/cgroup") or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(",") if parts[1] else [""]:
                out[controller] = parts[2]
    return out


def _first(ctx: ProbeContext, base: str, path: str, name: str) -> tuple[Optional[str], str]:
    for where in (f"{base}{path.rstrip('/')}/{name}", f"{base}/{name}"):
        text = _read(ctx, where)
        if text is not None:
            return text, where
    return None, ""


def _number(text: Optional[str], unlimited: str = "max") -> int | str | None:
    if text is None:
        return None
    if text == unlimited:
        return "max"
    return int(text) if text.lstrip("-").isdigit() else None


def limits(ctx: ProbeContext) -> dict[str, Any]:
    """{"version": 2|1|None, "path": ..., "memory_max_bytes": int|"max"|None,
    "cpu_quota_cpus": float|"max"|None, "pids_max": int|"max"|None, "files": {...}}."""
    paths = own_paths(ctx)
    files: dict[str, str] = {}
    if ctx.fs.exists("/sys/fs/cgroup/cgroup.controllers"):
        path = paths.get("", "/")
        mem, files["memory"] = _first(ctx, "/sys/fs/cgroup", path, "memory.max")
        cpu, files["cpu"] = _first(ctx, "/sys/fs/cgroup", path, "cpu.max")
        pids, files["pids"] = _first(ctx, "/sys/fs/cgroup", path, "pids.max")
        quota: float | str | None = None
        if cpu:
            q, _, period = cpu.partition(" ")
            quota = (
                "max"
                if q == "max"
                else (int(q) / int(period) if q.isdigit() and period.isdigit() and int(period) else None)
            )
        return {
            "version": 2,
            "path": path,
            "memory_max_bytes": _number(mem),
            "cpu_quota_cpus": quota,
            "pids_max": _number(pids),
            "files": {k: v for k, v in files.items() if v},
        }
    if not ctx.fs.listdir("/sys/fs/cgroup"):
        return {
            "version": None,
            "path": None,
            "memory_max_bytes": None,
            "cpu_quota_cpus": None,
            "pids_max": None,
            "files": {},
        }
    mem_path = paths.get("memory", "/")
    mem, files["memory"] = _first(ctx, "/sys/fs/cgroup/memory", mem_path, "memory.limit_in_bytes")
    mem_v: int | str | None = _number(mem)
    if isinstance(mem_v, int) and mem_v >= V1_UNLIMITED:
        mem_v = "max"
    cpu_path = paths.get("cpu", paths.get("cpuacct", "/"))
    cpu_base = next(
        (b for b in ("/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu") if ctx.fs.exists(b)),
        "/sys/fs/cgroup/cpu",
    )
    q_text, files["cpu"] = _first(ctx, cpu_base, cpu_path, "cpu.cfs_quota_us")
    p_text, _ = _first(ctx, cpu_base, cpu_path, "cpu.cfs_period_us")
    q_v, p_v = _number(q_text), _number(p_text)
    quota = None
    if isinstance(q_v, int):  # -1: no quota
        quota = "max" if q_v < 0 else (q_v / p_v if isinstance(p_v, int) and p_v > 0 else None)
    pids, files["pids"] = _first(ctx, "/sys/fs/cgroup/pids", paths.get("pids", "/"), "pids.max")
    return {
        "version": 1,
        "path": mem_path,
        "memory_max_bytes": mem_v,
        "cpu_quota_cpus": quota,
        "pids_max": _number(pids),
        "files": {k: v for k, v in files.items() if v},
    }


def container(ctx: ProbeContext, env: Mapping[str, str]) -> Optional[str]:
    """The container runtime this process runs under, or None on the bare host. From the
    files runtimes leave (/.dockerenv, /run/.containerenv), their variables (Kubernetes,
    Apptainer/Singularity, enroot, systemd's `container=`) and the cgroup paths."""
    if env.get("KUBERNETES_SERVICE_HOST"):
        return "kubernetes"
    if env.get("APPTAINER_CONTAINER") or env.get("SINGULARITY_CONTAINER"):
        return "apptainer"
    if env.get("ENROOT_ROOTFS") or ctx.fs.exists("/etc/enroot"):
        return "enroot"
    if ctx.fs.exists("/.dockerenv"):
        return "docker"
    if ctx.fs.exists("/run/.containerenv"):
        return "podman"
    if env.get("container"):
        return env["container"]
    for pid in ("1", "self"):
        text = " ".join(own_paths(ctx, pid).values())
        for mark, runtime in RUNTIME_MARKS:
            if mark in text:
                return runtime
    return None
