"""What `python -m torch.utils.collect_env` says about the machine, for a support bundle: the OS,
the kernel, the CPU model, the C library, the container and its cgroup limits. Every file is read
through the context's file-system root, so tests run it on fixture trees."""

from __future__ import annotations

import os
import platform
from typing import Optional

from pgdoctor.model import Measurement, Reason, Unavailable
from pgdoctor.probes.base import ProbeContext, probe
from pgdoctor.probes.cgroups import container, limits


def _read(ctx: ProbeContext, path: str) -> Optional[str]:
    try:
        return ctx.fs.read_stripped(path)
    except OSError:
        return None


def os_release(ctx: ProbeContext) -> tuple[str | Unavailable, str]:
    """PRETTY_NAME of os-release(5), which systemd looks for in /etc first, then /usr/lib."""
    for path in ("/etc/os-release", "/usr/lib/os-release"):
        text = _read(ctx, path)
        if text is None:
            continue
        fields = {}
        for line in text.splitlines():
            key, eq, value = line.partition("=")
            if eq:
                fields[key.strip()] = value.strip().strip("'\"")
        name = fields.get("PRETTY_NAME") or " ".join(
            x for x in (fields.get("NAME"), fields.get("VERSION")) if x
        )
        return (name or Unavailable(Reason.NOT_PRESENT, f"{path} names no OS")), f"file:{path}"
    return Unavailable(
        Reason.NOT_PRESENT, "no /etc/os-release or /usr/lib/os-release"
    ), "file:/etc/os-release"


def cpu_model(ctx: ProbeContext) -> tuple[str | Unavailable, int | Unavailable]:
    """The CPU model and the number of sockets from /proc/cpuinfo. x86 says `model name`; arm64
    kernels print no model name, only `CPU implementer`/`CPU part`, which are given as is."""
    try:
        text = ctx.fs.read_text("/proc/cpuinfo", limit=4 << 20)
    except OSError as exc:
        bad = Unavailable(Reason.ERROR, f"/proc/cpuinfo: {exc.strerror}")
        return bad, bad
    fields: dict[str, str] = {}
    sockets: set[str] = set()
    for line in text.splitlines():
        key, colon, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if not colon:
            continue
        fields.setdefault(key, value)
        if key == "physical id":
            sockets.add(value)
    model = (
        fields.get("model name") or fields.get("Model") or fields.get("cpu model") or fields.get("Hardware")
    )
    if not model and "CPU implementer" in fields:
        model = f"CPU implementer {fields['CPU implementer']}, part {fields.get('CPU part', '?')}"
    return (
        model or Unavailable(Reason.NOT_PRESENT, "/proc/cpuinfo names no model"),
        len(sockets) if sockets else Unavailable(Reason.NOT_PRESENT, "/proc/cpuinfo has no physical id"),
    )


def glibc() -> str | Unavailable:
    # confstr asks the C library this process runs on; platform.libc_ver() would scan the
    # interpreter's binary, which is slower and wrong for a statically linked one.
    try:
        value = os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError, AttributeError):
        value = None
    if not value:
        return Unavailable(Reason.NOT_SUPPORTED, "not a glibc system (musl or another C library)")
    return value.replace("glibc ", "")


@probe("system", area="host", level="quick")
def system(ctx: ProbeContext) -> list[Measurement]:
    name, name_src = os_release(ctx)
    model, sockets = cpu_model(ctx)
    release = _read(ctx, "/proc/sys/kernel/osrelease")
    version = _read(ctx, "/proc/version")
    runtime = container(ctx, ctx.env)
    return [
        Measurement("host.os.name", name, source=name_src),
        Measurement(
            "host.kernel.release",
            release or Unavailable(Reason.NOT_PRESENT, "/proc/sys/kernel/osrelease"),
            source="procfs:/proc/sys/kernel/osrelease",
        ),
        Measurement(
            "host.kernel.version",
            version or Unavailable(Reason.NOT_PRESENT, "/proc/version"),
            source="procfs:/proc/version",
        ),
        Measurement("host.arch", platform.machine(), source="platform.machine"),
        Measurement("host.cpu.model", model, source="procfs:/proc/cpuinfo"),
        Measurement("host.cpu.sockets", sockets, source="procfs:/proc/cpuinfo"),
        Measurement("host.glibc.version", glibc(), source="confstr:CS_GNU_LIBC_VERSION"),
        # None is an answer (the bare host), not Unavailable.
        Measurement(
            "host.container", runtime, source="files:/.dockerenv,/run/.containerenv;procfs:/proc/1/cgroup"
        ),
        Measurement("host.cgroup", limits(ctx), source="sysfs:/sys/fs/cgroup"),
    ]
