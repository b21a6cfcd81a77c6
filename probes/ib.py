"""InfiniBand and RoCE ports from /sys/class/infiniband: what `ibstat` and `ibv_devinfo` show,
read from the files the kernel's ib_core exports, so no rdma-core tools are needed.

Per port: state (`4: ACTIVE`), phys_state (`5: LinkUp`), rate (`200 Gb/sec (4X HDR)`),
link_layer (InfiniBand | Ethernet, the latter is RoCE) and every counter under
ports/N/counters/ (checks/net/links.py lists the error counters it judges). A host
without the directory has no RDMA devices: the probe is unavailable with Reason.NOT_PRESENT,
which the report shows as "no InfiniBand devices", not as a failure.
"""

from __future__ import annotations

import os
import re
from typing import Any, Optional

from pgdoctor.model import Measurement, Reason
from pgdoctor.probes.base import ProbeContext, ProbeUnavailable, probe

BASE = "/sys/class/infiniband"
PCI_RE = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]$")


def _read(ctx: ProbeContext, path: str) -> Optional[str]:
    try:
        return ctx.fs.read_stripped(path)
    except OSError:
        return None


def _state(raw: Optional[str]) -> tuple[Optional[int], Optional[str]]:
    """`4: ACTIVE` -> (4, "ACTIVE")."""
    if not raw:
        return None, None
    num, _, name = raw.partition(":")
    return (int(num) if num.strip().isdigit() else None), (name.strip() or raw.strip())


def _rate_gbps(raw: Optional[str]) -> Optional[float]:
    m = re.match(r"^\s*([\d.]+)\s*Gb/sec", raw or "")
    return float(m.group(1)) if m else None


def pci_address(ctx: ProbeContext, path: str) -> Optional[str]:
    """The PCI function a sysfs `device` link leads to (a virtio or auxiliary device sits under
    one), or None for a virtual device."""
    real = os.path.realpath(ctx.fs.path(path))
    parts = [p for p in real.split(os.sep) if PCI_RE.match(p)]
    return parts[-1] if parts else None


def numa_node(ctx: ProbeContext, pci: Optional[str]) -> Optional[int]:
    raw = _read(ctx, f"/sys/bus/pci/devices/{pci}/numa_node") if pci else None
    return int(raw) if raw is not None and raw.lstrip("-").isdigit() else None


def port(ctx: ProbeContext, dev: str, num: str) -> dict[str, Any]:
    base = f"{BASE}/{dev}/ports/{num}"
    state_num, state = _state(_read(ctx, f"{base}/state"))
    phys_num, phys = _state(_read(ctx, f"{base}/phys_state"))
    rate = _read(ctx, f"{base}/rate")
    counters: dict[str, int] = {}
    for name in ctx.fs.listdir(f"{base}/counters"):
        raw = _read(ctx, f"{base}/counters/{name}")
        if raw is not None and raw.isdigit():
            counters[name] = int(raw)
    return {
        "device": dev,
        "port": int(num),
        "state": state,
        "state_num": state_num,
        "phys_state": phys,
        "phys_state_num": phys_num,
        "rate": rate,
        "rate_gbps": _rate_gbps(rate),
        "link_layer": _read(ctx, f"{base}/link_layer"),
        "counters": counters,
    }


def device(ctx: ProbeContext, dev: str) -> dict[str, Any]:
    base = f"{BASE}/{dev}"
    pci = pci_address(ctx, f"{base}/device") if ctx.fs.exists(f"{base}/device") else None
    return {
        "pci": pci,
        "numa_node": numa_node(ctx, pci),
        "netdevs": ctx.fs.listdir(f"{base}/device/net"),
        "node_type": _read(ctx, f"{base}/node_type"),
        "fw_ver": _read(ctx, f"{base}/fw_ver"),
        "hca_type": _read(ctx, f"{base}/hca_type"),
        "ports": ctx.fs.listdir(f"{base}/ports"),
    }


@probe("ib", area="net", level="quick")
def ib(ctx: ProbeContext) -> list[Measurement]:
    names = ctx.fs.listdir(BASE)
    if not names:
        raise ProbeUnavailable(Reason.NOT_PRESENT, f"no InfiniBand devices ({BASE} is absent or empty)")
    devices = {d: device(ctx, d) for d in names}
    ports = {f"{d}:{n}": port(ctx, d, n) for d in names for n in devices[d]["ports"] if n.isdigit()}
    src = f"sysfs:{BASE}"
    return [
        Measurement("net.ib.devices", devices, source=src),
        Measurement("net.ib.ports", ports, source=src),
    ]
