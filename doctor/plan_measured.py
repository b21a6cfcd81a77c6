"""Measured links from a pgdoctor snapshot: the collective probes' bus bandwidth and latency.

Read defensively: any `collectives.*` measurement whose key or unit says it is a bus
bandwidth (busbw, GB/s) counts; the highest value is the plateau (small messages never reach
it). A key, link or NIC scope naming the network ("inter", "node", "net", "nic") is the
inter-node link; everything else the intra-node one. Latency keys give the α term (smallest).
Unavailable measurements are skipped, never read as 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from pgdoctor.model import Measurement, Snapshot, Unavailable
from pgdoctor.plan_presets import Link, measured

_TO_GBPS = {"gb/s": 1.0, "gbps": 1.0, "mb/s": 1e-3, "b/s": 1e-9, "gbit/s": 1 / 8}
_TO_US = {"us": 1.0, "µs": 1.0, "ms": 1e3, "s": 1e6, "ns": 1e-3}
_INTER_WORDS = ("inter", "cross_node", "multinode", "multi_node", "internode", ".net", "nic", "node")


@dataclass(frozen=True)
class MeasuredLinks:
    intra: Optional[Link]
    inter: Optional[Link]
    notes: tuple[str, ...]


def _number(m: Measurement) -> Optional[float]:
    v = m.value
    if isinstance(v, (Unavailable, bool)) or not isinstance(v, (int, float)):
        return None
    return float(v) if v > 0 else None


def _is_inter(m: Measurement) -> bool:
    key = m.key.lower()
    if m.scope.nic:
        return True
    if m.scope.link and any(w in m.scope.link.lower() for w in ("inter", "net", "nic")):
        return True
    return any(w in key.replace("intra", "") for w in _INTER_WORDS)


def _bandwidth_gbps(m: Measurement) -> Optional[float]:
    value = _number(m)
    if value is None:
        return None
    key, unit = m.key.lower(), m.unit.strip().lower()
    if "busbw" not in key and "bus_bandwidth" not in key:
        return None
    if unit in _TO_GBPS:
        return value * _TO_GBPS[unit]
    if key.endswith("_gbps") and not unit:
        return value
    return None


def _latency_us(m: Measurement) -> Optional[float]:
    value = _number(m)
    key, unit = m.key.lower(), m.unit.strip().lower()
    if value is None or "latency" not in key:
        return None
    if unit in _TO_US:
        return value * _TO_US[unit]
    if key.endswith("_us") and not unit:
        return value
    return None


def links_from_snapshot(snapshot: Snapshot) -> MeasuredLinks:
    found = snapshot.with_prefix("collectives.")
    bw: dict[str, list[tuple[bool, float, str]]] = {"intra": [], "inter": []}
    lat: dict[str, list[float]] = {"intra": [], "inter": []}
    for m in found:
        where = "inter" if _is_inter(m) else "intra"
        b = _bandwidth_gbps(m)
        if b is not None:
            # Prefer all-reduce: the planner's DP and TP traffic is all-reduce shaped.
            bw[where].append(("all_reduce" in m.key, b, m.key))
        t = _latency_us(m)
        if t is not None:
            lat[where].append(t)
    notes = []
    links: dict[str, Optional[Link]] = {}
    for where in ("intra", "inter"):
        if not bw[where]:
            links[where] = None
            continue
        _, best, key = max(bw[where])
        latency = min(lat[where]) if lat[where] else 0.0
        links[where] = measured(f"measured-{where}", best, latency, where, f"snapshot {snapshot.host}: {key}")
        notes.append(f"{where}-node busbw {best:.3g} GB/s from {key} on {snapshot.host}")
    if not found:
        notes.append(f"snapshot from {snapshot.host} has no collectives.* measurements")
    elif links["intra"] is None and links["inter"] is None:
        notes.append(f"snapshot from {snapshot.host} has collectives.* measurements but no bus bandwidth")
    return MeasuredLinks(links["intra"], links["inter"], tuple(notes))
