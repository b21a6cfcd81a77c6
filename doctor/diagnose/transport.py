"""The network NCCL chose, judged for the whole job: a multi-node job on TCP sockets (NET117).

The observations come from rules/nccl_transport.py (code OBSERVED, a `kind` fact each) and are
kept out of the root-cause analysis: "Using network Socket" is no failure, and on one node it
is harmless (the socket transport carries nothing when every peer is reached over NVLink, PCIe or
shared memory). Across nodes it carries all inter-node traffic, at a fraction of the bandwidth
of InfiniBand or RoCE (tens of Gb/s of kernel TCP against 200-400 Gb/s of RDMA per port).

A host is on sockets when NCCL said so there: "Using network Socket" (2.7+; a host whose lines
say "Using network IB" or a plugin's name is not), or, where no "Using network" line was printed
(before 2.7, or an excerpt), "NET/Socket : Using", which NCCL prints only when it initialises the
socket transport, after IB and the plugin found nothing or NCCL_NET asked for it. The job spans
several nodes when NCCL's nNodes, the launcher (--nnodes, min_nodes, --nodes, SLURM_NNODES) or the
hosts in NCCL's own line prefixes say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

from pgdoctor.checks.codes import joblogs as C
from pgdoctor.diagnose.event import Event
from pgdoctor.diagnose.rules.nccl_transport import OBSERVED
from pgdoctor.model import Evidence, Finding, Scope

__all__ = ["OBSERVED", "judge", "split"]

# Why NCCL fell back, in the order a person checks them, as the message says it.
_WHY = (
    ("env_off", "the environment turned InfiniBand off"),
    ("no_libibverbs", "libibverbs could not be opened (no verbs library in the host or container)"),
    ("no_ib_device", "NET/IB found no device (no HCA visible: /dev/infiniband, driver, container)"),
)


def split(events: Sequence[Event]) -> tuple[list[Event], list[Event]]:
    """(failures, observations) of the events of all logs."""
    failures = [e for e in events if e.code != OBSERVED]
    return failures, [e for e in events if e.code == OBSERVED]


def _on_sockets(observed: Sequence[Event]) -> list[Event]:
    """The lines that put a host on sockets, where "Using network" (when the host has one) decides."""
    chosen: dict[Any, set[bool]] = {}
    for e in observed:
        if e.facts.get("kind") == "network":
            chosen.setdefault(e.facts.get("host"), set()).add(str(e.facts["network"]).startswith("Socket"))
    out = []
    for e in observed:
        k, host = e.facts.get("kind"), e.facts.get("host")
        said = k == "network" and str(e.facts["network"]).startswith("Socket")
        if said or (k == "socket" and True in chosen.get(host, {True})):
            out.append(e)
    return out


def judge(observed: Sequence[Event]) -> list[Finding]:
    """NET117 when a host of a multi-node job runs NCCL on the socket transport, else []."""
    if not observed:
        return []
    sockets = _on_sockets(observed)
    if not sockets:
        return []
    hosts = sorted({str(e.facts["host"]) for e in observed if e.facts.get("host")})
    counts = [e for e in observed if e.facts.get("kind") == "nodes"]
    # NCCL's own count decides where it printed one; else the launcher's, or the hosts seen.
    stated = [int(e.facts["nodes"]) for e in counts if e.facts.get("nodes_from") == "nccl"]
    launched = max((int(e.facts["nodes"]) for e in counts), default=0)
    n = max(stated) if stated else max(launched, len(hosts))
    if n <= 1:
        return []  # one node (or nothing says otherwise): sockets carry no traffic that matters
    socket_hosts = sorted({str(e.facts["host"]) for e in sockets if e.facts.get("host")})
    interfaces = sorted({i for e in sockets for i in e.facts.get("interfaces", ())})
    kinds = {e.facts.get("kind") for e in observed}
    why = [text for kind, text in _WHY if kind in kinds]
    on = f" on {', '.join(interfaces)}" if interfaces else ""
    msg = (
        f"NCCL carries this {n}-node job's inter-node traffic over TCP sockets (NET/Socket{on}), "
        "not InfiniBand/RoCE"
        + (f": {'; '.join(why)}" if why else "")
        + "; sockets give a fraction of the fabric's bandwidth"
    )
    facts: dict[str, Any] = {
        "source": "nccl_logs",  # performance, not failure: rendered after the root cause
        "nodes": n,
        "nodes_from": "nccl"
        if any(e.facts.get("nodes_from") == "nccl" for e in counts)
        else ("launcher" if counts else "hosts"),
        "hosts": hosts[:16],
        "socket_hosts": socket_hosts[:16],
        "interfaces": interfaces,
        "reasons": [kind for kind, _ in _WHY if kind in kinds],
        "no_net_plugin": "no_net_plugin" in kinds,
    }
    settings = sorted({str(e.facts["setting"]) for e in observed if e.facts.get("kind") == "env_off"})
    if settings:
        facts["settings"] = settings
    return [
        C.NCCL_SOCKET_FALLBACK.finding(
            msg,
            scope=Scope(host=socket_hosts[0] if len(socket_hosts) == 1 else None, file=sockets[0].source),
            evidence=_evidence(observed, sockets, counts, hosts),
            facts=facts,
        )
    ]


def _first(events: Sequence[Event], kind: str) -> Optional[Event]:
    return next((e for e in events if e.facts.get("kind") == kind), None)


def _evidence(
    observed: Sequence[Event], sockets: Sequence[Event], counts: Sequence[Event], hosts: Sequence[str]
) -> list[Evidence]:
    """The socket line, the line that says why, and the line that says how many nodes (or a line of
    a second host)."""
    picked: list[Event] = [sockets[0]]
    for kind, _ in _WHY:
        e = _first(observed, kind)
        if e is not None:
            picked.append(e)
            break
    if counts:
        # the largest count, NCCL's own line before the launcher's
        picked.append(
            min(counts, key=lambda e: (-int(e.facts["nodes"]), e.facts.get("nodes_from") != "nccl"))
        )
    elif len(hosts) > 1:
        first_host = sockets[0].facts.get("host")
        other = next((e for e in observed if e.facts.get("host") not in (None, first_host)), None)
        if other is not None:
            picked.append(other)
    out: list[Evidence] = []
    for e in picked:
        out.extend(e.evidence[:1])
    return out
