"""Across nodes: which node differs from the rest, which node or link is slow, which rank never
arrived. Reads what the multi-node run (pgdoctor.engine.multinode) gathered to rank 0 into the
`multinode` probe result: `cluster.nodes` (each node's facts, from node_facts below),
`cluster.missing` and `cluster.bandwidth` (pairwise send/recv rounds).

Every finding's scope names the node by hostname (and rank).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pgdoctor.checks.base import Config, check, config_key, register_code
from pgdoctor.knowledge.ranks import count_label, rank_ranges
from pgdoctor.model import Evidence, Finding, Scope, Snapshot, Unavailable

CHECK_GROUP = "net_cluster"  # the published prefix of this module's check names

NET110 = register_code(
    "NET110",
    "mtu-differs-across-nodes",
    "warn",
    "nccl_network",
    "MTU of the job's interface differs across nodes",
    "net",
)
NET111 = register_code(
    "NET111",
    "node-software-differs",
    "fail",
    "driver_env",
    "Driver, CUDA, torch or NCCL version differs across nodes",
    "net",
)
NET112 = register_code(
    "NET112",
    "node-hardware-differs",
    "fail",
    "configuration",
    "GPU model, GPU count or RDMA port rates differ across nodes",
    "net",
)
NET113 = register_code(
    "NET113",
    "node-env-differs",
    "warn",
    "configuration",
    "NCCL_/TORCH_ environment differs across nodes",
    "net",
)
NET114 = register_code(
    "NET114", "node-missing", "fail", "rendezvous", "A rank never joined the multi-node check", "net"
)
NET115 = register_code(
    "NET115",
    "slow-node",
    "fail",
    "performance",
    "Node with far less point-to-point bandwidth than the others",
    "net",
)
NET116 = register_code(
    "NET116", "slow-link", "warn", "performance", "Link between two nodes slower than the others", "net"
)

SLOW_RATIO = config_key(
    "net.slow_ratio",
    float,
    0.5,
    "A node or link below this fraction of the median bandwidth is slow (NET115/NET116).",
)

BANDWIDTH_BYTES = config_key(
    "net.bandwidth_bytes",
    int,
    4 << 20,
    "Largest bytes per send/recv in the multi-node bandwidth rounds (sizes ramp up from 64 KiB).",
)

SOFTWARE_FACTS = ("driver_version", "cuda_runtime", "torch_version", "nccl_version")
HARDWARE_FACTS = ("gpu_count", "gpu_models", "rdma_rates")
ENV_PREFIXES = ("NCCL_", "TORCH_")


def _value(snap: Snapshot, *keys: str) -> Any:
    for key in keys:
        v = snap.value(key)
        if v is not None:
            return v
    return None


def node_facts(snap: Snapshot) -> dict[str, Any]:
    """What must agree across nodes, from one node's snapshot. None means not measured there."""
    gpu_names = sorted(str(m.value) for m in snap.all("gpu.name") if not isinstance(m.value, Unavailable))
    topo_gpus = snap.value("topo.gpus")
    if not gpu_names and isinstance(topo_gpus, list) and topo_gpus:
        gpu_names = sorted(f"pci:{g.get('device_id')}" for g in topo_gpus)
    gpu_count = snap.value("gpu.count")
    if gpu_count is None and isinstance(topo_gpus, list):
        gpu_count = len(topo_gpus)
    ports = snap.value("net.ib.ports")
    rates = (
        sorted(str(p.get("rate")) for p in ports.values() if p.get("state") == "ACTIVE")
        if isinstance(ports, dict)
        else None
    )
    route = snap.value("net.master_route")
    env = snap.value("env.vars")
    return {
        "driver_version": _value(snap, "gpu.driver_version", "topo.nvidia_driver_version"),
        "cuda_runtime": snap.value("software.torch.cuda_runtime"),
        "torch_version": _value(snap, "software.torch.runtime_version", "software.torch.version"),
        "nccl_version": snap.value("software.torch.nccl_version"),
        "gpu_count": gpu_count,
        "gpu_models": gpu_names if gpu_names or gpu_count == 0 else None,
        "rdma_rates": rates,
        "mtu": route.get("mtu") if isinstance(route, dict) else None,
        "interface": route.get("interface") if isinstance(route, dict) else None,
        "env": {k: v for k, v in env.items() if k.startswith(ENV_PREFIXES)}
        if isinstance(env, dict)
        else None,
    }


def _nodes(snap: Snapshot) -> list[dict[str, Any]]:
    value = snap.value("cluster.nodes", [])
    return [n for n in value if isinstance(n, dict)] if isinstance(value, list) else []


def _scope(node: Mapping[str, Any]) -> Scope:
    return Scope(host=str(node.get("host")), rank=node.get("rank"))


def _label(node: Mapping[str, Any]) -> str:
    return f"{node.get('host')} (rank {node.get('rank')})"


def odd_ones(values: Mapping[int, Any]) -> tuple[Any, dict[int, Any]]:
    """(the majority value, {rank: value} of the ranks that differ from it). A tie goes to the
    value of the lowest rank, so rank 0's view is the reference when half the nodes disagree."""
    known = {r: v for r, v in values.items() if v is not None}
    if len({repr(v) for v in known.values()}) <= 1:
        return next(iter(known.values()), None), {}
    counts = Counter(repr(v) for v in known.values())
    top = max(counts.values())
    ref_repr = next(repr(v) for _, v in sorted(known.items()) if counts[repr(v)] == top)
    ref = next(v for v in known.values() if repr(v) == ref_repr)
    return ref, {r: v for r, v in known.items() if repr(v) != ref_repr}


def fmt_value(v: Any) -> str:
    """Lists as counts (`8x NVIDIA H100`), so a GPU list stays one readable phrase."""
    if isinstance(v, list):
        if not v:
            return "none"
        return ", ".join(f"{n}x {item}" for item, n in Counter(str(x) for x in v).items())
    return "unknown" if v is None else str(v)


def _differences(
    nodes: Sequence[Mapping[str, Any]], names: Sequence[str]
) -> dict[int, list[tuple[str, Any, Any]]]:
    """rank -> [(fact, its value, the majority value)]."""
    out: dict[int, list[tuple[str, Any, Any]]] = {}
    for name in names:
        ref, odd = odd_ones({int(n["rank"]): (n.get("facts") or {}).get(name) for n in nodes})
        for rank, v in odd.items():
            out.setdefault(rank, []).append((name, v, ref))
    return out


def _fact_findings(snap: Snapshot, code: Any, names: Sequence[str], what: str) -> list[Finding]:
    nodes = _nodes(snap)
    by_rank = {int(n["rank"]): n for n in nodes}
    out = []
    for rank, diffs in sorted(_differences(nodes, names).items()):
        node = by_rank[rank]
        text = "; ".join(f"{f} {fmt_value(v)} (others: {fmt_value(ref)})" for f, v, ref in diffs)
        out.append(
            code.finding(
                f"{_label(node)} differs from the other {len(nodes) - 1} nodes in {what}: {text}",
                scope=_scope(node),
                evidence=[
                    Evidence(f"{_label(node)}: {f} = {fmt_value(v)}", key="cluster.nodes")
                    for f, v, _ in diffs
                ],
                facts={
                    "host": node.get("host"),
                    "rank": rank,
                    "differences": [{"fact": f, "value": v, "majority": ref} for f, v, ref in diffs],
                },
            )
        )
    return out


@check("net", [NET111], needs=["multinode"])
def software_consistency(snap: Snapshot, config: Config) -> list[Finding]:
    return _fact_findings(snap, NET111, SOFTWARE_FACTS, "software versions")


@check("net", [NET112], needs=["multinode"])
def hardware_consistency(snap: Snapshot, config: Config) -> list[Finding]:
    return _fact_findings(snap, NET112, HARDWARE_FACTS, "hardware")


@check("net", [NET110], needs=["multinode"])
def mtu_consistency(snap: Snapshot, config: Config) -> list[Finding]:
    return _fact_findings(snap, NET110, ("mtu",), "the MTU of the interface that routes to MASTER_ADDR")


@check("net", [NET113], needs=["multinode"])
def env_consistency(snap: Snapshot, config: Config) -> list[Finding]:
    nodes = [n for n in _nodes(snap) if isinstance((n.get("facts") or {}).get("env"), dict)]
    names = sorted({k for n in nodes for k in n["facts"]["env"]})
    by_rank = {int(n["rank"]): n for n in nodes}
    diffs: dict[int, list[tuple[str, Any, Any]]] = {}
    for name in names:
        ref, odd = odd_ones({int(n["rank"]): n["facts"]["env"].get(name, "<unset>") for n in nodes})
        for rank, v in odd.items():
            diffs.setdefault(rank, []).append((name, v, ref))
    out = []
    for rank, items in sorted(diffs.items()):
        node = by_rank[rank]
        text = "; ".join(f"{k}={v} (others: {ref})" for k, v, ref in items)
        out.append(
            NET113.finding(
                f"{_label(node)} has a different NCCL_/TORCH_ environment from the other {len(nodes) - 1} "
                f"nodes: {text}",
                scope=_scope(node),
                evidence=[Evidence(f"{_label(node)}: {k}={v}", key="cluster.nodes") for k, v, _ in items],
                facts={
                    "host": node.get("host"),
                    "rank": rank,
                    "differences": [{"variable": k, "value": v, "majority": ref} for k, v, ref in items],
                },
            )
        )
    return out


# Up to this many missing ranks get a finding each (with the host each was expected on); more
# are one finding with rank ranges: a job of 100,000 ranks must not print 100,000 findings.
MISSING_ONE_BY_ONE = 8


@check("net", [NET114], needs=["multinode"])
def missing_ranks(snap: Snapshot, config: Config) -> list[Finding]:
    missing = [m for m in snap.value("cluster.missing", []) or [] if isinstance(m, dict)]
    if not missing:
        return []
    arrived = _nodes(snap)
    total = len(arrived) + len(missing)
    shown = ", ".join(_label(n) for n in arrived[:MISSING_ONE_BY_ONE])
    if len(arrived) > MISSING_ONE_BY_ONE:
        shown += f" and {len(arrived) - MISSING_ONE_BY_ONE} more"
    waited = missing[0].get("waited_s")
    if len(missing) > MISSING_ONE_BY_ONE:
        ranks = [int(m["rank"]) for m in missing]
        hosts = [str(m["host"]) for m in missing if m.get("host")]
        return [
            NET114.finding(
                f"{count_label(ranks)} of {total} did not report within {waited} s; {len(arrived)} arrived "
                f"({shown})",
                evidence=[Evidence(f"no report from {count_label(ranks)}", key="cluster.missing")],
                facts={
                    "ranks": rank_ranges(ranks, max_runs=64),
                    "count": len(ranks),
                    "hosts": hosts[: MISSING_ONE_BY_ONE * 4],
                    "arrived": len(arrived),
                },
            )
        ]
    out = []
    for item in missing:
        rank = int(item["rank"])
        host = item.get("host")
        where = f"rank {rank}" + (f" (expected on {host})" if host else "")
        out.append(
            NET114.finding(
                f"{where} did not report within {item.get('waited_s')} s; {len(arrived)} of {total} ranks "
                f"arrived ({shown})",
                scope=Scope(host=host, rank=rank),
                evidence=[Evidence(f"rank {rank}: no report", key="cluster.missing")],
                facts={
                    "rank": rank,
                    "host": host,
                    "arrived": [n.get("host") for n in arrived[: MISSING_ONE_BY_ONE * 4]],
                },
            )
        )
    return out


def _pairs(snap: Snapshot) -> list[dict[str, Any]]:
    bw = snap.value("cluster.bandwidth")
    if not isinstance(bw, dict):
        return []
    return [p for p in bw.get("pairs", []) if isinstance(p.get("gbytes_per_s"), (int, float))]


def slow_nodes(pairs: Sequence[Mapping[str, Any]], ratio: float) -> tuple[dict[int, float], float, set[int]]:
    """Each node's best pair bandwidth, their median, and the nodes below ratio x median.

    The best pair is what a node can do when its partner is healthy: a slow node has no fast
    pair, a healthy node has at least one (it also pairs with healthy nodes). Needs 3 nodes."""
    best: dict[int, float] = {}
    for p in pairs:
        for r in (int(p["src"]), int(p["dst"])):
            best[r] = max(best.get(r, 0.0), float(p["gbytes_per_s"]))
    if len(best) < 3:
        return best, 0.0, set()
    med = statistics.median(best.values())
    return best, med, {r for r, b in best.items() if b < ratio * med}


def _gb(x: float) -> str:
    return f"{x:.3g} GB/s"


@check("net", [NET115, NET116], needs=["multinode"])
def bandwidth(snap: Snapshot, config: Config) -> list[Finding]:
    pairs = _pairs(snap)
    ratio = float(config["net.slow_ratio"])
    hosts: dict[int, str] = {}
    for p in pairs:
        hosts[int(p["src"])], hosts[int(p["dst"])] = str(p.get("src_host")), str(p.get("dst_host"))
    best, med, slow = slow_nodes(pairs, ratio)
    out = []
    for r in sorted(slow):
        mine = [p for p in pairs if r in (int(p["src"]), int(p["dst"]))]
        out.append(
            NET115.finding(
                f"{hosts[r]} (rank {r}) reaches at best {_gb(best[r])} to any peer against a median of "
                f"{_gb(med)} "
                f"over {len(best)} nodes ({best[r] / med:.2g}x)",
                scope=Scope(host=hosts[r], rank=r),
                evidence=[
                    Evidence(
                        f"{p['src_host']} -> {p['dst_host']}: {_gb(float(p['gbytes_per_s']))}",
                        key="cluster.bandwidth",
                    )
                    for p in mine
                ],
                facts={
                    "host": hosts[r],
                    "rank": r,
                    "best_gbytes_per_s": best[r],
                    "median_gbytes_per_s": med,
                    "ratio": best[r] / med,
                },
            )
        )
    healthy = [p for p in pairs if int(p["src"]) not in slow and int(p["dst"]) not in slow]
    if len(healthy) >= 3:
        pmed = statistics.median(float(p["gbytes_per_s"]) for p in healthy)
        for p in healthy:
            bw = float(p["gbytes_per_s"])
            if bw < ratio * pmed:
                out.append(
                    NET116.finding(
                        f"{p['src_host']} -> {p['dst_host']} moved {_gb(bw)} against a median of {_gb(pmed)} "
                        f"over "
                        f"{len(healthy)} links ({bw / pmed:.2f}x); both nodes are fast with other peers",
                        scope=Scope(
                            host=str(p["src_host"]),
                            rank=int(p["src"]),
                            link=f"{p['src_host']}->{p['dst_host']}",
                        ),
                        evidence=[
                            Evidence(
                                f"{p['src_host']} -> {p['dst_host']}: {_gb(bw)}", key="cluster.bandwidth"
                            )
                        ],
                        facts={
                            "src_host": p["src_host"],
                            "dst_host": p["dst_host"],
                            "gbytes_per_s": bw,
                            "median_gbytes_per_s": pmed,
                            "ratio": bw / pmed,
                        },
                    )
                )
    return out
