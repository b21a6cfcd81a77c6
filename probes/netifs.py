"""Network interfaces from /sys/class/net and /proc/net: the names NCCL_SOCKET_IFNAME and
GLOO_SOCKET_IFNAME select from, whether each is up, their addresses, the interface the kernel
routes MASTER_ADDR through, and whether the GPUDirect RDMA module is loaded.

Everything is read through ctx.fs, so fixture trees stand in for a real host. /proc/net/* is
per network namespace, which is what a rank sees (and what the namespace tests rely on).
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any, Optional

from pgdoctor.knowledge.launchenv import parse_launch
from pgdoctor.model import Measurement, Reason, Unavailable
from pgdoctor.probes.base import ProbeContext, probe

IFF_UP = 0x1
RTF_GATEWAY = 0x2
# Kernel modules that give NCCL GPUDirect RDMA over the InfiniBand verbs stack: nvidia_peermem
# (shipped with the driver since 470) and the older out-of-tree nv_peer_mem.
PEERMEM_MODULES = ("nvidia_peermem", "nv_peer_mem")


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


def _hex_ip4(raw: str) -> ipaddress.IPv4Address:
    """/proc/net/route prints addresses as host-order (little-endian) hex."""
    return ipaddress.IPv4Address(socket.ntohl(int(raw, 16)))


def routes(ctx: ProbeContext) -> list[dict[str, Any]] | None:
    """IPv4 routes of the main table from /proc/net/route; None when the file is unreadable."""
    text = _read(ctx, "/proc/net/route")
    if text is None:
        return None
    out = []
    for line in text.splitlines()[1:]:
        cols = line.split()
        if len(cols) < 8:
            continue
        try:
            dest, gw, flags, metric, mask = (
                _hex_ip4(cols[1]),
                _hex_ip4(cols[2]),
                int(cols[3], 16),
                int(cols[6]),
                _hex_ip4(cols[7]),
            )
            net = ipaddress.IPv4Network(f"{dest}/{mask}", strict=False)
        except ValueError:
            continue
        out.append(
            {
                "interface": cols[0],
                "network": str(net),
                "gateway": str(gw) if flags & RTF_GATEWAY else None,
                "metric": metric,
            }
        )
    return out


def local_ipv4(ctx: ProbeContext) -> list[str]:
    """This namespace's own IPv4 addresses: the `/32 host LOCAL` leaves of /proc/net/fib_trie."""
    text = _read(ctx, "/proc/net/fib_trie")
    if text is None:
        return []
    found: list[str] = []
    last: Optional[str] = None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("|-- "):
            last = s[4:].strip()
        elif s.startswith("/32 host LOCAL") and last and last not in found:
            found.append(last)
    return found


def addresses(ctx: ProbeContext, route_table: list[dict[str, Any]] | None) -> dict[str, list[str]]:
    """Interface -> addresses. IPv4 addresses are matched to the interface whose directly
    connected route contains them (fib_trie does not name interfaces); IPv6 come from if_inet6."""
    out: dict[str, list[str]] = {}
    connected = [r for r in route_table or [] if r["gateway"] is None and r["network"] != "0.0.0.0/0"]
    for addr in local_ipv4(ctx):
        ip = ipaddress.IPv4Address(addr)
        if ip.is_loopback:
            out.setdefault("lo", []).append(addr)
            continue
        hits = sorted(
            (r for r in connected if ip in ipaddress.IPv4Network(r["network"])),
            key=lambda r: -ipaddress.IPv4Network(r["network"]).prefixlen,
        )
        if hits:
            out.setdefault(hits[0]["interface"], []).append(addr)
    for line in (_read(ctx, "/proc/net/if_inet6") or "").splitlines():
        cols = line.split()
        if len(cols) == 6 and len(cols[0]) == 32:
            addr = str(ipaddress.IPv6Address(int(cols[0], 16)))
            out.setdefault(cols[5], []).append(addr)
    return out


def _resolve4(host: str) -> str | Unavailable:
    try:
        return str(ipaddress.IPv4Address(host))
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, socket.AF_INET)
    except socket.gaierror as exc:
        return Unavailable(Reason.ERROR, f"getaddrinfo({host}): {exc.strerror or exc}")
    return str(infos[0][4][0])


def route_to(
    route_table: list[dict[str, Any]], addr: str, addrs: dict[str, list[str]]
) -> dict[str, Any] | None:
    """The interface that carries the job's traffic to `addr`. On the master itself that is the
    interface holding the address (the one peers connect to), not the loopback the kernel would
    use locally; elsewhere the longest matching prefix, lowest metric first (policy routing
    rules are not modelled)."""
    ip = ipaddress.IPv4Address(addr)
    if ip.is_loopback:
        return {"interface": "lo", "network": f"{addr}/32", "gateway": None, "metric": 0}
    for name, held in addrs.items():
        if addr in held:
            return {"interface": name, "network": f"{addr}/32", "gateway": None, "metric": 0}
    hits = [r for r in route_table if ip in ipaddress.IPv4Network(r["network"])]
    if not hits:
        return None
    return min(hits, key=lambda r: (-ipaddress.IPv4Network(r["network"]).prefixlen, r["metric"]))


def master_route(
    ctx: ProbeContext,
    route_table: list[dict[str, Any]] | None,
    addrs: dict[str, list[str]],
    ifaces: dict[str, Any],
) -> Measurement | None:
    master = parse_launch(ctx.env).master_addr
    if not master:
        return None
    key, src = "net.master_route", "procfs:/proc/net/route"
    if ":" in master:
        return Measurement(
            key, Unavailable(Reason.NOT_SUPPORTED, f"IPv6 MASTER_ADDR {master}: no route lookup"), source=src
        )
    resolved = _resolve4(master)
    if isinstance(resolved, Unavailable):
        return Measurement(key, resolved, source=src)
    if route_table is None:
        return Measurement(
            key, Unavailable(Reason.NOT_PRESENT, "/proc/net/route is not readable"), source=src
        )
    r = route_to(route_table, resolved, addrs)
    if r is None:
        return Measurement(
            key, Unavailable(Reason.ERROR, f"no route to MASTER_ADDR {master} ({resolved})"), source=src
        )
    name = r["interface"]
    v4 = [a for a in addrs.get(name, []) if "." in a]
    return Measurement(
        key,
        {
            "master_addr": master,
            "address": resolved,
            "interface": name,
            "gateway": r["gateway"],
            "source_address": v4[0] if v4 else None,
            "mtu": ifaces.get(name, {}).get("mtu"),
            "up": ifaces.get(name, {}).get("up"),
        },
        source=src,
    )


def peermem(ctx: ProbeContext) -> Measurement:
    """GPUDirect RDMA module: /proc/modules when readable, else /sys/module (built-ins included)."""
    modules = _read(ctx, "/proc/modules")
    if modules is not None:
        loaded = {line.split()[0] for line in modules.splitlines() if line.strip()}
        found = [m for m in PEERMEM_MODULES if m in loaded]
        return Measurement("net.nvidia_peermem", bool(found), source="procfs:/proc/modules")
    if ctx.fs.exists("/sys/module"):
        found = [m for m in PEERMEM_MODULES if ctx.fs.exists(f"/sys/module/{m}")]
        return Measurement("net.nvidia_peermem", bool(found), source="sysfs:/sys/module")
    return Measurement(
        "net.nvidia_peermem",
        Unavailable(Reason.NOT_PRESENT, "neither /proc/modules nor /sys/module"),
        source="procfs:/proc/modules",
    )


@probe("netifs", area="net", level="quick")
def netifs(ctx: ProbeContext) -> list[Measurement]:
    ifaces = {name: interface(ctx, name) for name in ctx.fs.listdir("/sys/class/net")}
    out = [Measurement("net.interfaces", ifaces, source="sysfs:/sys/class/net")]
    table = routes(ctx)
    addrs = addresses(ctx, table)
    out.append(Measurement("net.addresses", addrs, source="procfs:/proc/net/fib_trie,/proc/net/if_inet6"))
    m = master_route(ctx, table, addrs, ifaces)
    if m is not None:
        out.append(m)
    out.append(peermem(ctx))
    return out
