"""Interconnect of one node: InfiniBand/RoCE ports, NCCL_IB_HCA against the HCAs present,
GPU-NIC NUMA placement, RDMA expected but absent, GPUDirect RDMA module.

NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME are judged by the knobs checks (ENV401/ENV402).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pgdoctor.checks.base import Config, check, config_key, evidence_of, register_code
from pgdoctor.model import Evidence, Finding, Scope, Severity, Snapshot

CHECK_GROUP = "net_links"  # the published prefix of this module's check names

NET101 = register_code(
    "NET101",
    "ib-hca-no-match",
    "fail",
    "nccl_network",
    "NCCL_IB_HCA names HCAs this host does not have",
    "net",
)
NET102 = register_code(
    "NET102", "ib-hca-down", "fail", "nccl_network", "NCCL_IB_HCA selects ports that are not active", "net"
)
NET103 = register_code(
    "NET103", "ib-port-not-active", "warn", "nccl_network", "InfiniBand/RoCE port not ACTIVE / LinkUp", "net"
)
NET104 = register_code(
    "NET104",
    "ib-port-rate-low",
    "warn",
    "performance",
    "InfiniBand/RoCE port at a lower rate than its peers",
    "net",
)
NET105 = register_code(
    "NET105",
    "ib-link-errors",
    "warn",
    "nccl_network",
    "InfiniBand/RoCE link error counters above zero",
    "net",
)
NET106 = register_code(
    "NET106",
    "gpu-nic-numa-remote",
    "warn",
    "performance",
    "GPU whose nearest NIC sits on another NUMA node",
    "net",
)
NET107 = register_code(
    "NET107",
    "rdma-expected-missing",
    "fail",
    "nccl_network",
    "No RDMA device although the job expects one",
    "net",
)
NET108 = register_code(
    "NET108",
    "gpudirect-rdma-module-missing",
    "warn",
    "performance",
    "GPUDirect RDMA kernel module (nvidia_peermem) not loaded",
    "net",
)

EXPECT_RDMA = config_key(
    "net.expect_rdma",
    bool,
    False,
    "The job must run NCCL over InfiniBand/RoCE: no RDMA device is a failure (NET107).",
)
IB_ERROR_THRESHOLD = config_key(
    "net.ib_error_threshold",
    int,
    0,
    "Highest tolerated value of each InfiniBand link error counter (NET105).",
)

# Counters that mean a physical or link-level problem (InfiniBand PortCounters attribute).
ERROR_COUNTERS = (
    "symbol_error",
    "link_error_recovery",
    "link_downed",
    "port_rcv_errors",
    "excessive_buffer_overrun_errors",
    "local_link_integrity_errors",
    "port_rcv_remote_physical_errors",
)


def env_of(snap: Snapshot) -> dict[str, str]:
    value = snap.value("env.vars", {})
    return dict(value) if isinstance(value, dict) else {}


def ports_of(snap: Snapshot) -> dict[str, dict[str, Any]]:
    value = snap.value("net.ib.ports", {})
    return dict(value) if isinstance(value, dict) else {}


def port_active(p: Mapping[str, Any]) -> bool:
    return p.get("state") == "ACTIVE" and p.get("phys_state") == "LinkUp"


def parse_hca(spec: str) -> tuple[bool, bool, list[tuple[str, int | None]]]:
    """NCCL_IB_HCA: `^` excludes, `=` matches names exactly (else as prefixes), `:N` picks a port.
    Returns (exclude, exact, [(name, port or None)])."""
    body = spec.strip()
    exclude = body.startswith("^")
    body = body[1:] if exclude else body
    exact = body.startswith("=")
    body = body[1:] if exact else body
    items: list[tuple[str, int | None]] = []
    for raw in body.split(","):
        raw = raw.strip()
        if not raw:
            continue
        name, _, port = raw.partition(":")
        items.append((name.strip(), int(port) if port.strip().isdigit() else None))
    return exclude, exact, items


def _hit(p: Mapping[str, Any], item: tuple[str, int | None], exact: bool) -> bool:
    name, port = item
    dev = str(p.get("device", ""))
    return (dev == name if exact else dev.startswith(name)) and (port is None or p.get("port") == port)


def select_hca(spec: str, ports: Mapping[str, Mapping[str, Any]]) -> tuple[list[str], list[str]]:
    """(ports NCCL would consider, entries that match nothing). Exclusions never miss."""
    exclude, exact, items = parse_hca(spec)
    if exclude:
        return [k for k, p in ports.items() if not any(_hit(p, i, exact) for i in items)], []
    selected = [k for k, p in ports.items() if any(_hit(p, i, exact) for i in items)]
    missing = [
        f"{n}:{pt}" if pt is not None else n
        for n, pt in items
        if not any(_hit(p, (n, pt), exact) for p in ports.values())
    ]
    return selected, missing


def _port_scope(snap: Snapshot, key: str) -> Scope:
    return Scope(host=snap.host, nic=key)


@check("net", [NET101, NET102], needs=["ib", "environment"])
def ib_hca(snap: Snapshot, config: Config) -> list[Finding]:
    spec = env_of(snap).get("NCCL_IB_HCA", "").strip()
    if not spec:
        return []
    ports = ports_of(snap)
    selected, missing = select_hca(spec, ports)
    states = ", ".join(f"{k} {p.get('state')}" for k, p in ports.items())
    ev = [Evidence(f"NCCL_IB_HCA={spec}", key="env.vars"), Evidence(f"ports: {states}", key="net.ib.ports")]
    facts = {"value": spec, "ports": sorted(ports), "selected": selected}
    if missing or not selected:
        have = ", ".join(sorted(ports)) or "none"
        message = (
            f"NCCL_IB_HCA={spec} names {', '.join(missing)}, which this host does not have (it has {have})"
            if missing
            else f"NCCL_IB_HCA={spec} selects none of this host's ports (it has {have})"
        )
        return [
            NET101.finding(
                message, scope=Scope(host=snap.host), evidence=ev, facts=facts | {"missing": missing}
            )
        ]
    down = [k for k in selected if not port_active(ports[k])]
    if not down:
        return []
    severity = Severity.FAIL if len(down) == len(selected) else Severity.WARN
    down_states = ", ".join(f"{k} {ports[k].get('state')}/{ports[k].get('phys_state')}" for k in down)
    return [
        NET102.finding(
            f"NCCL_IB_HCA={spec} selects {len(down)} of {len(selected)} ports that are not active "
            f"({down_states})",
            scope=Scope(host=snap.host),
            evidence=ev,
            facts=facts | {"down": down},
            severity=severity,
        )
    ]


def _used(snap: Snapshot, ports: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Ports NCCL may use: those NCCL_IB_HCA selects, or all of them."""
    spec = env_of(snap).get("NCCL_IB_HCA", "").strip()
    return select_hca(spec, ports)[0] if spec else list(ports)


@check("net", [NET103], needs=["ib", "environment"])
def ib_ports_active(snap: Snapshot, config: Config) -> list[Finding]:
    ports = ports_of(snap)
    out = []
    for key in _used(snap, ports):
        p = ports[key]
        if port_active(p):
            continue
        out.append(
            NET103.finding(
                f"{key} is {p.get('state')} / {p.get('phys_state')} (link layer {p.get('link_layer')})",
                scope=_port_scope(snap, key),
                evidence=[
                    Evidence(
                        f"{key}: state={p.get('state')} phys_state={p.get('phys_state')} "
                        f"rate={p.get('rate')}",
                        key="net.ib.ports",
                    )
                ],
                facts={"port": key, "state": p.get("state"), "phys_state": p.get("phys_state")},
            )
        )
    return out


@check("net", [NET104], needs=["ib", "environment"])
def ib_port_rate(snap: Snapshot, config: Config) -> list[Finding]:
    ports = ports_of(snap)
    active = {k: ports[k] for k in _used(snap, ports) if port_active(ports[k]) and ports[k].get("rate_gbps")}
    out = []
    for layer in sorted({str(p.get("link_layer")) for p in active.values()}):
        group = {k: p for k, p in active.items() if str(p.get("link_layer")) == layer}
        best = max(float(p["rate_gbps"]) for p in group.values())
        for key, p in group.items():
            if float(p["rate_gbps"]) < best:
                peers = ", ".join(f"{k} {q.get('rate')}" for k, q in group.items() if k != key)
                out.append(
                    NET104.finding(
                        f"{key} runs at {p.get('rate')}, below the {best:g} Gb/sec of its peers on this host",
                        scope=_port_scope(snap, key),
                        evidence=[
                            Evidence(f"{key}: rate={p.get('rate')}; peers: {peers}", key="net.ib.ports")
                        ],
                        facts={"port": key, "rate_gbps": p["rate_gbps"], "peer_rate_gbps": best},
                    )
                )
    return out


@check("net", [NET105], needs=["ib"])
def ib_link_errors(snap: Snapshot, config: Config) -> list[Finding]:
    limit = int(config["net.ib_error_threshold"])
    out = []
    for key, p in ports_of(snap).items():
        counters = p.get("counters") or {}
        bad = {c: int(counters[c]) for c in ERROR_COUNTERS if int(counters.get(c, 0)) > limit}
        if bad:
            text = ", ".join(f"{c}={v}" for c, v in bad.items())
            out.append(
                NET105.finding(
                    f"{key}: {text} (counters since the last reset or reboot)",
                    scope=_port_scope(snap, key),
                    evidence=[
                        Evidence(
                            f"/sys/class/infiniband/{p.get('device')}/ports/{p.get('port')}/counters: {text}",
                            key="net.ib.ports",
                        )
                    ],
                    facts={"port": key, "counters": bad},
                )
            )
    return out


def nearest_nic(matrix: Mapping[str, Any], gpu: str, nics: list[str]) -> tuple[str, str] | None:
    order = {"X": 0, "NV": 1, "PIX": 2, "PXB": 3, "PHB": 4, "NODE": 5, "SYS": 6}
    names = list(matrix.get("devices", []))
    if gpu not in names:
        return None
    row = matrix["cells"][names.index(gpu)]
    cands = [(order.get(row[names.index(n)], 9), n, row[names.index(n)]) for n in nics if n in names]
    if not cands:
        return None
    _, name, rel = min(cands)
    return name, rel


@check("net", [NET106], needs=["topology"])
def gpu_nic_numa(snap: Snapshot, config: Config) -> list[Finding]:
    gpus = snap.value("topo.gpus", []) or []
    nics = snap.value("topo.nics", []) or []
    matrix = snap.value("topo.matrix", {}) or {}
    rdma = [n["name"] for n in nics if n.get("kind") == "rdma"]
    candidates = rdma or [n["name"] for n in nics]
    numa = {n["name"]: n.get("numa_node") for n in nics}
    out = []
    for g in gpus:
        found = nearest_nic(matrix, g["name"], candidates)
        if found is None or found[1] != "SYS":
            continue
        nic, _ = found
        out.append(
            NET106.finding(
                f"{g['name']} ({g['pci']}) is on NUMA node {g.get('numa_node')}; its nearest NIC {nic} is on "
                f"NUMA node "
                f"{numa.get(nic)} (path SYS: traffic crosses the CPU interconnect)",
                scope=Scope(
                    host=snap.host, nic=nic, gpu_index=int(g["name"][3:]) if g["name"][3:].isdigit() else None
                ),
                evidence=[
                    Evidence(f"{g['name']} pci={g['pci']} numa_node={g.get('numa_node')}", key="topo.gpus"),
                    Evidence(
                        f"NICs: {', '.join(f'{n} numa_node={numa.get(n)}' for n in candidates)}",
                        key="topo.nics",
                    ),
                ],
                facts={
                    "gpu": g["name"],
                    "gpu_numa_node": g.get("numa_node"),
                    "nic": nic,
                    "nic_numa_node": numa.get(nic),
                },
            )
        )
    return out


def rdma_expected(env: Mapping[str, str], config: Config) -> list[str]:
    """Why the job expects RDMA: the reasons, or [] when it does not."""
    if env.get("NCCL_IB_DISABLE", "").strip() == "1":
        return []
    why = []
    if env.get("NCCL_IB_HCA", "").strip():
        why.append(f"NCCL_IB_HCA={env['NCCL_IB_HCA']}")
    if env.get("NCCL_NET", "").strip().upper() == "IB":
        why.append(f"NCCL_NET={env['NCCL_NET']}")
    if config["net.expect_rdma"]:
        why.append("config net.expect_rdma = true")
    return why


@check("net", [NET107], needs=["netifs", "environment"])
def rdma_missing(snap: Snapshot, config: Config) -> list[Finding]:
    why = rdma_expected(env_of(snap), config)
    ib = snap.probe("ib")
    if not why or ib is None or not ib.reason.startswith("not_present"):
        return []
    return [
        NET107.finding(
            f"no RDMA device on this host ({ib.reason}) although {'; '.join(why)}: NCCL will fall back to "
            f"TCP sockets "
            "or fail if NCCL_NET=IB forces the IB transport",
            scope=Scope(host=snap.host),
            evidence=[Evidence(f"probe ib: {ib.reason}"), *(Evidence(w) for w in why)],
            facts={"expected_because": why},
        )
    ]


@check("net", [NET108], needs=["ib", "topology", "netifs"])
def gpudirect_module(snap: Snapshot, config: Config) -> list[Finding]:
    gpus = snap.value("topo.gpus", []) or []
    loaded = snap.value("net.nvidia_peermem")
    active = [k for k, p in ports_of(snap).items() if port_active(p)]
    if not gpus or not active or loaded is not False:
        return []
    return [
        NET108.finding(
            f"{len(gpus)} NVIDIA GPUs and active RDMA ports ({', '.join(active)}) but nvidia_peermem is not "
            f"loaded: "
            "NCCL stages inter-node traffic through host memory unless it can use DMA-BUF",
            scope=Scope(host=snap.host),
            evidence=evidence_of(snap.get("net.nvidia_peermem")),
            facts={"gpus": len(gpus), "active_ports": active},
        )
    ]
