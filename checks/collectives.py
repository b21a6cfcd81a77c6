"""Collective probes judged: wrong results, bandwidth and latency against the hardware's
expectation, one slow rank, and ranks that never answered."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any, Optional

from pgdoctor.checks.base import Config, check, config_key, evidence_of, register_code
from pgdoctor.knowledge.clip import clip
from pgdoctor.knowledge.collectives import Row, rows_of
from pgdoctor.knowledge.expectations import Topology, expected
from pgdoctor.knowledge.units import fmt_bytes
from pgdoctor.model import Evidence, Finding, Measurement, Scope, Snapshot

AREA = "collectives"
COL101 = register_code(
    "COL101",
    "collective-wrong-result",
    "fail",
    "data_corruption",
    "A collective returned wrong data (silent data corruption)",
    AREA,
)
COL102 = register_code(
    "COL102",
    "collective-busbw-below-expected",
    "warn",
    "performance",
    "Collective bus bandwidth below what the hardware should reach",
    AREA,
)
COL103 = register_code(
    "COL103",
    "collective-latency-high",
    "warn",
    "performance",
    "Small-message collective latency far above expected",
    AREA,
)
COL104 = register_code(
    "COL104",
    "collective-slow-rank",
    "warn",
    "imbalance",
    "One rank is much slower than the others in collectives",
    AREA,
)
COL105 = register_code(
    "COL105",
    "collective-hang",
    "fail",
    "collective_timeout",
    "Process-group init or a collective did not complete",
    AREA,
)
COL106 = register_code(
    "COL106",
    "collective-rank-failed",
    "fail",
    "process_crash",
    "A rank died or raised during the collective probe",
    AREA,
)

EXPECTED = config_key(
    "collectives.expected_busbw_gbps",
    float,
    0.0,
    "Expected busbw plateau in GB/s; 0 derives it from the detected topology.",
)
NVLINK_EFF = config_key(
    "collectives.nvlink_efficiency",
    float,
    0.8,
    "Share of the NVLink line rate a ring all-reduce should reach.",
)
PCIE_EFF = config_key(
    "collectives.pcie_efficiency",
    float,
    0.6,
    "Share of the PCIe line rate a collective over PCIe should reach.",
)
NET_EFF = config_key(
    "collectives.network_efficiency",
    float,
    0.8,
    "Share of the node's summed InfiniBand/RoCE rate a multi-node collective should reach.",
)
GLOO_EFF = config_key(
    "collectives.gloo_efficiency",
    float,
    0.01,
    "Share of the host's memory-copy bandwidth gloo (TCP) should reach as busbw.",
)
JUDGED_OPS = config_key(
    "collectives.judged_ops",
    str,
    "all_reduce,all_gather,reduce_scatter",
    "NCCL ops whose busbw plateau is compared with the expectation (comma-separated).",
)
JUDGED_OPS_GLOO = config_key(
    "collectives.judged_ops_gloo",
    str,
    "all_reduce",
    "gloo ops judged (gloo's reduce_scatter/all_to_all are not bandwidth-optimal).",
)
MIN_BYTES_NCCL = config_key(
    "collectives.judge_min_bytes_nccl",
    int,
    128 << 20,
    "Judge NCCL busbw only when the sweep reached this size (plateau).",
)
MIN_BYTES_GLOO = config_key(
    "collectives.judge_min_bytes_gloo",
    int,
    16 << 20,
    "Judge gloo busbw only when the sweep reached this size.",
)
LAT_NCCL = config_key(
    "collectives.expected_latency_us_nccl",
    float,
    30.0,
    "Expected small all_reduce time on one node with NCCL, in microseconds.",
)
LAT_NCCL_MULTI = config_key(
    "collectives.expected_latency_us_nccl_multinode",
    float,
    80.0,
    "Expected small all_reduce time across nodes with NCCL, in microseconds.",
)
LAT_GLOO = config_key(
    "collectives.expected_latency_us_gloo",
    float,
    500.0,
    "Expected small all_reduce time with gloo over loopback/TCP, in microseconds.",
)
LAT_FACTOR = config_key(
    "collectives.latency_factor", float, 4.0, "Latency counts as far above expected beyond this multiple."
)
LAT_MAX_BYTES = config_key(
    "collectives.latency_max_bytes", int, 4096, "Sizes up to this count as small messages for latency."
)
SLOW_FACTOR = config_key(
    "collectives.slow_rank_factor",
    float,
    1.5,
    "A rank slower than this multiple of the others' median time is slow.",
)
SLOW_MIN_US = config_key(
    "collectives.slow_rank_min_us",
    float,
    200.0,
    "Ignore per-rank differences smaller than this (scheduler noise).",
)
SLOW_SHARE = config_key(
    "collectives.slow_rank_share",
    float,
    0.5,
    "Share of the measured sizes where a rank must be slow to be reported.",
)


def _ranks(ranks: Sequence[int]) -> str:
    return ", ".join(str(r) for r in ranks)


@check(AREA, [COL101], needs=["collectives"])
def wrong_results(snap: Snapshot, config: Config) -> list[Finding]:
    by_rank_op: dict[tuple[int, str], list[tuple[Row, dict[str, Any], Measurement]]] = {}
    for row, m in rows_of(snap):
        for w in row.wrong:
            by_rank_op.setdefault((int(w["rank"]), row.op), []).append((row, dict(w), m))
    out = []
    for (rank, op), hits in sorted(by_rank_op.items()):
        row, w, m = hits[0]
        sizes = ", ".join(fmt_bytes(h[0].bytes) for h in hits)
        out.append(
            COL101.finding(
                f"rank {rank} got wrong {op} results at {len(hits)} size(s) ({sizes}): element "
                f"{w['first_index']} "
                f"is {w['got']:g}, expected {w['expected']:g} ({w['wrong_elements']} of {w['elements']} "
                f"elements wrong)",
                scope=Scope(rank=rank),
                evidence=[
                    Evidence(
                        f"{h[2].key}: rank {rank} {h[1]['wrong_elements']} wrong of {h[1]['elements']}, "
                        f"first at {h[1]['first_index']}",
                        key=h[2].key,
                    )
                    for h in hits[:3]
                ],
                facts={
                    "rank": rank,
                    "op": op,
                    "bytes": [h[0].bytes for h in hits],
                    "first_index": w["first_index"],
                    "expected": w["expected"],
                    "got": w["got"],
                    "wrong_elements": w["wrong_elements"],
                },
            )
        )
    return out


def topology(snap: Snapshot, backend: str, world: int) -> Topology:
    """The facts the expectation rests on, from the GPU, InfiniBand and collectives probes."""
    names = [m.value for m in snap.all("gpu.name") if isinstance(m.value, str)]
    gpu0 = [m for m in snap.all("gpu.nvlink.active") if m.scope.gpu_index == 0]
    links = sum(1 for m in gpu0 if m.value is True)
    versions = [
        m.value for m in snap.all("gpu.nvlink.version") if m.scope.gpu_index == 0 and isinstance(m.value, int)
    ]
    gen = [m.value for m in snap.all("gpu.pcie.link_gen_max") if isinstance(m.value, int)]
    width = [m.value for m in snap.all("gpu.pcie.link_width_max") if isinstance(m.value, int)]
    ports = snap.value("net.ib.ports", {})
    active = [
        p
        for p in (ports.values() if isinstance(ports, dict) else [])
        if isinstance(p, dict) and p.get("state") == "ACTIVE" and isinstance(p.get("rate_gbps"), (int, float))
    ]
    # Where GPU 0's links end: at other GPUs' PCI addresses (direct NVLink) or elsewhere (NVSwitch).
    buses = {str(m.value).lower() for m in snap.all("gpu.pci_bus_id") if isinstance(m.value, str)}
    remotes = [
        str(m.value).lower()
        for m in snap.all("gpu.nvlink.remote_bus_id")
        if m.scope.gpu_index == 0 and isinstance(m.value, str)
    ]
    nvswitch = any(r not in buses for r in remotes) if remotes and buses else None
    peers = len({r for r in remotes if r in buses}) if remotes and buses else None
    memcpy = snap.value("collectives.host_memcpy_gbps")
    nodes = snap.value("collectives.nodes", 1)
    return Topology(
        backend=backend,
        world_size=world,
        nodes=nodes if isinstance(nodes, int) else 1,
        gpu_name=names[0] if names else None,
        nvlink_links=links or None,
        nvlink_version=min(versions) if versions else None,
        pcie_gen=min(gen) if gen else None,
        pcie_width=min(width) if width else None,
        nvswitch=nvswitch,
        nvlink_peers=peers,
        nic_ports=len(active),
        nic_gbps=sum(float(p["rate_gbps"]) for p in active) / 8.0,
        host_memcpy_gbps=float(memcpy) if isinstance(memcpy, (int, float)) else None,
    )


def _run_facts(snap: Snapshot) -> tuple[str, int]:
    backend = snap.value("collectives.backend", "")
    world = snap.value("collectives.world_size", 0)
    return (backend if isinstance(backend, str) else ""), (world if isinstance(world, int) else 0)


@check(AREA, [COL102], needs=["collectives"])
def busbw_below_expected(snap: Snapshot, config: Config) -> list[Finding]:
    backend, world = _run_facts(snap)
    rows = rows_of(snap)
    if not rows:
        return []
    exp = expected(topology(snap, backend, world), config)
    if exp.busbw_gbps is None:
        return []
    floor = config[MIN_BYTES_NCCL.name] if backend == "nccl" else config[MIN_BYTES_GLOO.name]
    ops = config[JUDGED_OPS.name] if backend == "nccl" else config[JUDGED_OPS_GLOO.name]
    judged = [o.strip() for o in str(ops).split(",") if o.strip()]
    out = []
    for op in judged:
        mine = [(r, m) for r, m in rows if r.op == op and r.correct]
        if not mine or max(r.bytes for r, _ in mine) < floor:
            continue
        best, m = max(mine, key=lambda rm: rm[0].busbw_gbps)
        if best.busbw_gbps >= exp.busbw_gbps:
            continue
        out.append(
            COL102.finding(
                f"{op} busbw peaks at {best.busbw_gbps:.2f} GB/s ({fmt_bytes(best.bytes)}, {world} ranks, "
                f"{backend}); "
                f"{exp.why}",
                evidence=[
                    Evidence(
                        f"{m.key}: busbw {best.busbw_gbps:.3f} GB/s, algbw {best.algbw_gbps:.3f} GB/s, "
                        f"time {best.time_us:.1f} us",
                        key=m.key,
                    ),
                    *evidence_of(snap.get("collectives.host_memcpy_gbps")),
                ],
                facts={
                    "op": op,
                    "busbw_gbps": round(best.busbw_gbps, 4),
                    "bytes": best.bytes,
                    "expected_busbw_gbps": round(exp.busbw_gbps, 4),
                    "why": exp.why,
                    "backend": backend,
                    "world_size": world,
                },
            )
        )
    return out


@check(AREA, [COL103], needs=["collectives"])
def latency_high(snap: Snapshot, config: Config) -> list[Finding]:
    backend, world = _run_facts(snap)
    if world < 2:
        return []
    small = [
        (r, m)
        for r, m in rows_of(snap)
        if r.op == "all_reduce" and r.bytes <= config[LAT_MAX_BYTES.name] and r.correct
    ]
    if not small:
        return []
    exp = expected(topology(snap, backend, world), config)
    assert exp.latency_us is not None
    limit = exp.latency_us * config[LAT_FACTOR.name]
    # The best small size: a latency problem slows every small message, a scheduler hiccup one.
    row, m = min(small, key=lambda rm: rm[0].time_us)
    if row.time_us <= limit:
        return []
    return [
        COL103.finding(
            f"all_reduce of {fmt_bytes(row.bytes)} takes {row.time_us:.0f} us at best over sizes up to "
            f"{fmt_bytes(config[LAT_MAX_BYTES.name])} ({world} ranks, {backend}); expected about "
            f"{exp.latency_us:g} us, "
            f"limit {limit:g} us",
            evidence=[
                Evidence(
                    f"{m.key}: time {row.time_us:.1f} us (min {row.time_min_us:.1f}, max "
                    f"{row.time_max_us:.1f})",
                    key=m.key,
                )
            ],
            facts={
                "op": "all_reduce",
                "bytes": row.bytes,
                "time_us": round(row.time_us, 3),
                "expected_latency_us": exp.latency_us,
                "limit_us": limit,
                "backend": backend,
            },
        )
    ]


def _slow_ranks(row: Row, factor: float, min_us: float) -> list[tuple[int, float, float]]:
    """(rank, its time, the others' median) for every rank far behind the others in one row."""
    out = []
    for r, t in enumerate(row.rank_time_us):
        others = [x for i, x in enumerate(row.rank_time_us) if i != r]
        if not others:
            continue
        med = statistics.median(others)
        if t > factor * med and t - med > min_us:
            out.append((r, t, med))
    return out


@check(AREA, [COL104], needs=["collectives"])
def slow_rank(snap: Snapshot, config: Config) -> list[Finding]:
    rows = [(r, m) for r, m in rows_of(snap) if r.world_size >= 2 and len(r.rank_time_us) == r.world_size]
    if len(rows) < 2:
        return []
    hits: dict[int, list[tuple[Row, Measurement, float, float]]] = {}
    for row, m in rows:
        for rank, t, med in _slow_ranks(row, config[SLOW_FACTOR.name], config[SLOW_MIN_US.name]):
            hits.setdefault(rank, []).append((row, m, t, med))
    out = []
    for rank, hs in sorted(hits.items()):
        if len(hs) < config[SLOW_SHARE.name] * len(rows):
            continue
        ratios = [t / med if med > 0 else float("inf") for _, _, t, med in hs]
        worst = max(hs, key=lambda h: h[2] - h[3])
        out.append(
            COL104.finding(
                f"rank {rank} is slower than the others at {len(hs)} of {len(rows)} sizes (median "
                f"{statistics.median(ratios):.1f}x "
                f"the others; worst {worst[0].op} {fmt_bytes(worst[0].bytes)}: {worst[2]:.0f} us vs "
                f"{worst[3]:.0f} us)",
                scope=Scope(rank=rank),
                evidence=[
                    Evidence(f"{m.key}: per-rank times {list(row.rank_time_us)} us", key=m.key)
                    for row, m, _, _ in hs[:3]
                ],
                facts={
                    "rank": rank,
                    "slow_sizes": len(hs),
                    "sizes": len(rows),
                    "median_ratio": round(statistics.median(ratios), 3),
                },
            )
        )
    return out


def _problems(snap: Snapshot) -> tuple[list[dict[str, Any]], Optional[Measurement]]:
    m = snap.get("collectives.problems")
    if m is None or not isinstance(m.value, list):
        return [], m
    return [p for p in m.value if isinstance(p, dict)], m


@check(AREA, [COL105], needs=["collectives"])
def hang(snap: Snapshot, config: Config) -> list[Finding]:
    problems, m = _problems(snap)
    out = []
    for p in problems:
        if p.get("kind") != "hang":
            continue
        ranks = [int(r) for r in p.get("ranks", [])]
        phase = "process-group init" if p.get("phase") == "init" else str(p.get("what") or "the collective")
        if p.get("phase") == "unknown":
            msg = f"rank(s) {_ranks(ranks)} sent no report within {p.get('timeout_s')} s"
            if p.get("waiting_ranks"):
                msg += f"; rank(s) {_ranks(p['waiting_ranks'])} waited for them"
        elif p.get("all_entered"):
            msg = (
                f"every rank ({_ranks(ranks)}) entered {phase} and none completed "
                f"within {p.get('timeout_s')} s"
            )
        else:
            msg = f"rank(s) {_ranks(ranks)} never reached {phase} within {p.get('timeout_s')} s"
            if p.get("waiting_ranks"):
                msg += f"; rank(s) {_ranks(p['waiting_ranks'])} waited for them"
        if p.get("note"):
            msg += f" ({p['note']})"
        out.append(
            COL105.finding(
                msg,
                scope=Scope(rank=ranks[0]) if len(ranks) == 1 else Scope(),
                evidence=[
                    Evidence(
                        f"collectives.problems: hang at {p.get('what') or p.get('phase')}; did not answer: "
                        f"{_ranks(ranks) or '-'}; waited: {_ranks(p.get('waiting_ranks', [])) or '-'}; "
                        f"stage timeout {p.get('timeout_s')} s"
                        + "".join(
                            f"; then rank {_ranks(c.get('ranks', []))}: {clip(str(c.get('detail', '')), 160)}"
                            for c in p.get("consequences", [])[:2]
                        ),
                        key=m.key if m else "collectives.problems",
                    )
                ],
                facts={
                    "ranks": ranks,
                    "phase": p.get("phase"),
                    "what": p.get("what"),
                    "timeout_s": p.get("timeout_s"),
                    "waiting_ranks": p.get("waiting_ranks", []),
                    "all_entered": bool(p.get("all_entered")),
                },
            )
        )
    return out


@check(AREA, [COL106], needs=["collectives"])
def rank_failed(snap: Snapshot, config: Config) -> list[Finding]:
    problems, _ = _problems(snap)
    failed = [p for p in problems if p.get("kind") in ("crash", "error")]
    crashes = [p for p in failed if p.get("kind") == "crash"]
    # When a rank dies its peers' errors ("connection reset") are consequences: report the dead
    # rank, with the peers' errors as evidence.
    primary = crashes or failed
    out = []
    for p in primary:
        ranks = [int(r) for r in p.get("ranks", [])]
        detail = str(p.get("detail", "")).strip().splitlines()
        last = detail[-1] if detail else ""
        evidence = [Evidence(f"rank {_ranks(ranks)} stderr: {line}") for line in detail[-3:]]
        for q in failed:
            if q is not p:
                evidence.append(
                    Evidence(
                        f"rank {_ranks(q.get('ranks', []))} {q.get('kind')}: "
                        f"{clip(str(q.get('detail', '')).strip(), 300)}"
                    )
                )
        how = f"exited with {p.get('exit')}" if p.get("kind") == "crash" else "raised"
        waiting = [int(r) for r in p.get("waiting_ranks", [])]
        out.append(
            COL106.finding(
                f"rank(s) {_ranks(ranks) or '?'} {how} during {p.get('what') or 'the collective probe'}"
                + (f": {clip(last, 300)}" if last else "")
                + (
                    f"; rank(s) {_ranks(waiting)} waited for it until pgdoctor stopped them"
                    if waiting
                    else ""
                ),
                scope=Scope(rank=ranks[0]) if len(ranks) == 1 else Scope(),
                evidence=evidence,
                facts={
                    "ranks": ranks,
                    "kind": p.get("kind"),
                    "what": p.get("what"),
                    "returncode": p.get("returncode"),
                    "waiting_ranks": waiting,
                },
            )
        )
    return out
