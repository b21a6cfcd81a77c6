"""Network interfaces from /sys/class/net: the names NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME
select from, and whether each is up."""

from __future__ import annotations

from typing import Any

from pgdoctor.model import Measurement
from pgdoctor.probes.base import ProbeContext, probe

IFF_UP = 0x1


def _read(ctx: ProbeContext, path: str) -> str | None:
    try:
        return ctx.fs.read_stripped(path)
    except OSError:
        return None  # e.g. speed of a down link raises EINVAL: the field is simply absent


def interface(ctx: ProbeContext, name: str) -> dict[str, Any]:
    base = f"/sys/class/net/{name}"
    info: dict[str, Any] = {"operstate": _read(ctx, f"{base}/operstate") or "unknown"}
    flags = _read(ctx, f"{base}/flags")
    info["admin_up"] = bool(int(flags, 16) & IFF_UP) if flags else None
    for field in ("mtu", "speed", "carrier"):
        raw = _read(ctx, f"{base}/{field}")
        if raw is not None and raw.lstrip("-").isdigit():
            info["speed_mbps" if field == "speed" else field] = int(raw)
    # "up" as NCCL sees it: administratively up and not reporting down (loopback says "unknown").
    info["up"] = bool(info["admin_up"]) and info["operstate"] in ("up", "unknown")
    return info


@probe("netifs", area="net", level="quick")
def netifs(ctx: ProbeContext) -> list[Measurement]:
    ifaces = {name: interface(ctx, name) for name in ctx.fs.listdir("/sys/class/net")}
    return [Measurement("net.interfaces", ifaces, source="sysfs:/sys/class/net")]
