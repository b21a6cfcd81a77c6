"""Xid events from the kernel log (probe `gpu_xid`), judged by pgdoctor.knowledge.xid's table.

One finding per Xid code per GPU, at the table's severity: the count, the last message and
what to do. A code the table does not know is a warning: the driver only prints Xids for errors.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pgdoctor.checks.base import Config, check, evidence_of, register_code
from pgdoctor.checks.gpu.health import AREA, gpus
from pgdoctor.knowledge.xid import describe_xid
from pgdoctor.model import Evidence, Finding, Scope, Snapshot, Unavailable

CHECK_GROUP = "gpu_xid"  # the published prefix of this module's check names

GPU120 = register_code(
    "GPU120",
    "gpu-xid-fatal",
    "fail",
    "gpu_hardware",
    "Recent Xid events that need a GPU reset, a reboot or a drained node",
    AREA,
)
GPU121 = register_code(
    "GPU121",
    "gpu-xid-warning",
    "warn",
    "gpu_hardware",
    "Recent Xid events worth attention (application faults, corrected or contained errors)",
    AREA,
)
GPU122 = register_code(
    "GPU122",
    "gpu-xid-info",
    "info",
    "gpu_hardware",
    "Recent informational Xid events (consequences of other errors)",
    AREA,
)
GPU123 = register_code(
    "GPU123",
    "gpu-xid-log-unreadable",
    "info",
    "configuration",
    "The kernel log could not be read, so Xid events were not checked",
    AREA,
)
BY_SEVERITY = {"fail": GPU120, "warn": GPU121, "info": GPU122}

ACTION_TEXT = {
    "none": "no action of its own",
    "application": "fix or restart the application",
    "reset": "reset the GPU",
    "reboot": "reboot the node",
    "drain": "drain the node and open a hardware ticket",
}


def bus_key(bus: str) -> str:
    """Kernel (0000:3b:00) and NVML (00000000:3B:00.0) bus ids compared as domain:bus:device."""
    parts = bus.lower().split(":")
    if len(parts) < 3:
        return bus.lower()
    try:
        domain = int(parts[-3], 16)
    except ValueError:
        return bus.lower()
    return f"{domain:04x}:{parts[-2]}:{parts[-1].split('.')[0]}"


# gpu_pci: on a host without NVIDIA GPUs an empty kernel log says nothing about GPU health.
@check(AREA, [GPU120, GPU121, GPU122, GPU123], needs=["gpu_xid", "gpu_pci"])
def xid_events(snap: Snapshot, config: Config) -> list[Finding]:
    events_m = snap.get("gpu.xid.events")
    if events_m is not None and isinstance(events_m.value, Unavailable):
        return [
            GPU123.finding(
                f"Xid events not checked: {events_m.value.reason.value}: {events_m.value.detail}",
                evidence=evidence_of(events_m),
                facts={"reason": events_m.value.reason.value},
            )
        ]
    if events_m is None or not isinstance(events_m.value, list):
        return []
    by_bus = {bus_key(g.v("gpu.pci_bus_id")): g for g in gpus(snap) if isinstance(g.v("gpu.pci_bus_id"), str)}
    groups: dict[tuple[int, str], list[dict[str, Any]]] = defaultdict(list)
    for e in events_m.value:
        if isinstance(e, dict) and isinstance(e.get("code"), int):
            groups[(e["code"], bus_key(str(e.get("pci_bus_id", ""))))].append(e)
    source = snap.value("gpu.xid.source", "kernel log")
    out = []
    for (code, bus), evs in sorted(groups.items()):
        info = describe_xid(code)
        severity = info.severity if info else "warn"
        meaning = info.meaning if info else "not in pgdoctor's Xid table; see NVIDIA's Xid catalog"
        action = ACTION_TEXT[info.action] if info else "look the code up in NVIDIA's Xid catalog"
        g = by_bus.get(bus)
        where = g.label if g else f"GPU at PCI {bus}"
        last = evs[-1]
        pids = sorted({e["pid"] for e in evs if isinstance(e.get("pid"), int)})
        evidence = [
            Evidence(str(e.get("line") or e.get("message", "")), key="gpu.xid.events") for e in evs[-3:]
        ]
        evidence += evidence_of(snap.get("gpu.xid.source"))
        out.append(
            BY_SEVERITY[severity].finding(
                f"{where}: Xid {code} x{len(evs)} in {source} ({meaning}); action: {action}",
                scope=g.scope if g else Scope(),
                evidence=evidence,
                facts={
                    "xid": code,
                    "count": len(evs),
                    "pci_bus_id": bus,
                    "pids": pids,
                    "action": info.action if info else "unknown",
                    "last_message": last.get("message", ""),
                    "last_time_unix": last.get("time_unix"),
                },
            )
        )
    return out
