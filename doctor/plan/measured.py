"""Measured links from a pgdoctor snapshot: the collective probe's bus bandwidth and latency.

The collective probe writes `collectives.<op>.busbw_peak_gbps` (the plateau of its sweep, GB/s),
`collectives.<op>.latency_us` (the time of its smallest message, the whole collective),
`collectives.world_size` and `collectives.nodes`. Read defensively: any `collectives.*`
measurement whose key says busbw and whose unit is a bandwidth counts, all-reduce preferred,
highest value taken (small messages never reach the plateau); unavailable values are skipped,
never read as 0. A run that spanned several nodes measured the inter-node path (a key or scope
naming "inter"/"nic" does too); one inside a node the intra-node link.

The α of the α-β model is a per-hop latency, so a whole collective's small-message time is
divided by its ring steps: 2(n-1) for all-reduce, n-1 for all-gather, reduce-scatter and
broadcast, 1 for send/recv.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from pgdoctor.knowledge.interconnects import Link, measured
from pgdoctor.knowledge.ranks import MAX_RANK
from pgdoctor.model import Measurement, Snapshot, Unavailable, numbers

_TO_GBPS = {"gb/s": 1.0, "gbps": 1.0, "mb/s": 1e-3, "b/s": 1e-9, "gbit/s": 1 / 8}
_TO_US = {"us": 1.0, "µs": 1.0, "ms": 1e3, "s": 1e6, "ns": 1e-3}
_INTER_WORDS = ("inter", "cross_node", "multinode", "multi_node", "nic")


@dataclass(frozen=True)
class MeasuredLinks:
    intra: Optional[Link]
    inter: Optional[Link]
    notes: tuple[str, ...]
    nodes: int = 1


def _number(v: object) -> Optional[float]:
    if isinstance(v, Unavailable):
        return None
    got = numbers.maybe(v, lo=0)  # a boolean, a string, NaN or infinity is no measurement
    return float(got) if got else None


def _op(key: str) -> str:
    parts = key.split(".")
    return parts[1] if len(parts) > 2 else ""


def _is_inter(m: Measurement, nodes: int) -> bool:
    if m.scope.nic or any(w in m.key.lower().replace("intra", "") for w in _INTER_WORDS):
        return True
    if m.scope.link and any(w in m.scope.link.lower() for w in ("inter", "net", "nic")):
        return True
    return nodes > 1


def _bandwidth_gbps(m: Measurement) -> Optional[float]:
    value = _number(m.value)
    key, unit = m.key.lower(), m.unit.strip().lower()
    if value is None or ("busbw" not in key and "bus_bandwidth" not in key):
        return None
    if unit in _TO_GBPS:
        return value * _TO_GBPS[unit]
    return value if not unit and "gbps" in key else None


def _hop_latency_us(m: Measurement, world: int) -> Optional[float]:
    value = _number(m.value)
    key, unit = m.key.lower(), m.unit.strip().lower()
    if value is None or "latency" not in key:
        return None
    if unit in _TO_US:
        value *= _TO_US[unit]
    elif unit or not key.endswith("_us"):
        return None
    op = _op(key)
    steps = {"all_reduce": 2 * (world - 1), "send_recv": 1}.get(op, world - 1)
    return value / max(1, steps)


def links_from_snapshot(snapshot: Snapshot) -> MeasuredLinks:
    found = [m for m in snapshot.with_prefix("collectives.") if m.scope.rank in (None, 0)]
    world = int(_number(snapshot.value("collectives.world_size")) or 2)
    nodes = int(_number(snapshot.value("collectives.nodes")) or 1)
    bw: dict[str, list[tuple[bool, float, str]]] = {"intra": [], "inter": []}
    lat: dict[str, list[tuple[bool, float]]] = {"intra": [], "inter": []}
    for m in found:
        where = "inter" if _is_inter(m, nodes) else "intra"
        is_ar = _op(m.key) == "all_reduce"
        b = _bandwidth_gbps(m)
        if b is not None:
            bw[where].append((is_ar, b, m.key))
        t = _hop_latency_us(m, world)
        if t is not None:
            lat[where].append((not is_ar, t))
    notes = []
    links: dict[str, Optional[Link]] = {}
    for where in ("intra", "inter"):
        if not bw[where]:
            links[where] = None
            continue
        # All-reduce first (the planner's DP and TP traffic is all-reduce shaped), then the highest.
        _, best, key = max(bw[where])
        latency = min(lat[where])[1] if lat[where] else 0.0
        links[where] = measured(
            f"measured-{where}",
            best,
            latency,
            where,
            f"{key} on {snapshot.host} ({world} ranks, {nodes} node(s))",
        )
        notes.append(
            f"{where}-node busbw {best:.3g} GB/s, latency {latency:.3g} us per hop, from {key} "
            f"on {snapshot.host} ({world} ranks, {nodes} node(s))"
        )
    if not found:
        notes.append(f"snapshot from {snapshot.host} has no collectives.* measurements: presets used")
    elif links["intra"] is None and links["inter"] is None:
        notes.append(
            f"snapshot from {snapshot.host} has collectives.* measurements but no bus bandwidth: presets used"
        )
    return MeasuredLinks(links["intra"], links["inter"], tuple(notes), nodes)


# --- `pgdoctor bench scaling --json`: measured link and compute rate -------------------------
# The report's `scaling` object (pgdoctor.verify.scaling, docs/verify.md): `rows[]`, one per
# world size, each with `nproc`, `step_s`, `fwd_s`, `bwd_s`, `optim_s`, `comm_s`, `samples` (per
# step, all ranks), `busbw_gbps` and `latency_us` (the ranks' own all-reduce of the gradients'
# size: bus bandwidth and per-hop latency); `grad_bytes` (fp32 gradients of the trained
# parameters). The FLOPs of one step are 6 x parameters x samples (2 forward, 4 backward per
# parameter and sample: the entry's inputs are one vector per sample, as the examples' MLPs),
# unless the file gives `flops_per_step` or `tokens_per_sample`.


@dataclass(frozen=True)
class Calibration:
    intra: Optional[Link]
    inter: Optional[Link]
    tflops: Optional[float]  # achieved per GPU
    notes: tuple[str, ...]


def is_scaling_report(data: object) -> bool:
    return (
        isinstance(data, dict)
        and isinstance(data.get("scaling"), dict)
        and isinstance(data["scaling"].get("rows"), list)
    )


def calibration_from_scaling(data: dict[str, object]) -> Calibration:
    """Measured intra-node link and achieved TFLOP/s per rank from a bench scaling report: the
    largest world size's row (the bench runs its ranks on one host)."""
    scaling = data["scaling"]
    assert isinstance(scaling, dict)
    # nproc divides below: 0, -2, true and "4" are no world size.
    rows = [
        r
        for r in scaling["rows"]
        if isinstance(r, dict) and numbers.maybe(r.get("nproc"), integer=True, lo=1, hi=MAX_RANK + 1)
    ]
    if not rows:
        raise ValueError("bench scaling result has no rows with a world size (nproc) of 1 or more")
    row = max(rows, key=lambda r: r["nproc"])
    host = str(data.get("host") or "?")
    where = f"bench scaling at {row['nproc']} rank(s) on {host}"
    notes: list[str] = []
    intra = None
    bw, lat = _number(row.get("busbw_gbps")), _number(row.get("latency_us")) or 0.0
    if bw is not None:
        intra = measured("measured-intra", bw, lat, "intra", where)
        notes.append(f"measured: intra-node busbw {bw:.3g} GB/s, latency {lat:.3g} us per hop, from {where}")
    tflops = None
    compute = (_number(row.get("fwd_s")) or 0.0) + (_number(row.get("bwd_s")) or 0.0)
    samples = _number(row.get("samples"))
    flops = _number(scaling.get("flops_per_step"))
    params = (_number(scaling.get("grad_bytes")) or 0.0) / 4
    if compute > 0 and samples and (flops or params):
        per_rank = samples / row["nproc"]
        tokens = per_rank * (_number(scaling.get("tokens_per_sample")) or 1.0)
        flops = flops / row["nproc"] if flops else 6.0 * params * tokens
        tflops = flops / compute / 1e12
        notes.append(
            f"measured: {tflops:.3g} TFLOP/s per GPU, {flops:.3g} FLOPs per rank and step (6 x "
            f"{params:.4g} parameters x {tokens:.4g} samples) in forward+backward {compute * 1e3:.3g} ms, "
            f"from {where}"
        )
    if intra is None and tflops is None:
        notes.append(f"bench scaling result from {host} has no bandwidth or compute time: presets used")
    return Calibration(intra, None, tflops, tuple(notes))


def calibrate(text: str, path: str, nics_per_node: int) -> Calibration:
    """`--from FILE`: a bench scaling report, else a pgdoctor snapshot (collective probes)."""
    from dataclasses import replace

    from pgdoctor.model import jsontext
    from pgdoctor.model.snapshot import Snapshot

    data = jsontext.loads(text)
    if is_scaling_report(data):
        assert isinstance(data, dict)
        return calibration_from_scaling(data)
    got = links_from_snapshot(Snapshot.loads(text))
    inter, notes = got.inter, list(got.notes)
    if inter is not None and nics_per_node > 1:
        # A run across nodes measured all of a node's NICs together; the planner multiplies
        # the per-NIC figure by --nics-per-node, so it is divided here.
        inter = replace(
            inter, busbw_gbps=inter.busbw_gbps / nics_per_node, line_gbps=inter.line_gbps / nics_per_node
        )
        notes.append(f"inter-node busbw divided over {nics_per_node} NICs per node")
    return Calibration(got.intra, inter, None, tuple(notes))
