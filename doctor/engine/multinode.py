"""`pgdoctor check` across nodes: one process per node (torchrun, srun or plain RANK/WORLD_SIZE/
MASTER_ADDR/MASTER_PORT), results merged on rank 0.

Phases, every one bounded by --timeout:
1. Rendezvous (pgdoctor.probes.multinode, like the bandwidth phase): rank 0 hosts a c10d TCPStore on a socket
it binds to MASTER_ADDR itself (never the
   wildcard address); under torchrun the agent's store on MASTER_PORT is used instead.
2. Each rank probes its own node, runs the per-node checks and puts its report (snapshot,
   findings, consistency facts) under its key. Rank 0 waits for every key until the arrival
   deadline; a rank that never arrives becomes finding NET114 and the bandwidth phase is skipped
   (a collective with an absent rank could only time out).
3. Bandwidth (level standard/full): a gloo group on the interface that routes to MASTER_ADDR;
   in each round every rank sends to rank+k and receives from rank-k at the same time. The
   default schedule uses k = 1, 2 (each node meets 4 peers, O(n) pairs); --all-pairs uses every
   k in 1..n-1 (all ordered pairs). Within a round the exchange size grows x4 from 64 KiB until
   the slowest pair needs RAMP_TARGET_S (or net.bandwidth_bytes is reached), then the best of 3
   exchanges counts. Every gloo wait is bounded by the phase deadline; each rank posts what it
   received under its key, also when a round was cut off, so a very slow node is still named.
4. Rank 0 runs the cross-node checks (checks/net/cluster.py) on its snapshot plus a `multinode`
   probe result, merges every node's findings (scope: that node's hostname), prints the report,
   and publishes the exit code; the other ranks print nothing on stdout and exit with that code.

Test-only hook: PGDOCTOR_TEST_TORCH_VERSION replaces the torch version a node reports in the
consistency facts (and nowhere else), so a test can make one namespace host look different.
"""

from __future__ import annotations

import dataclasses
import socket
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from pgdoctor.checks import load_all as load_checks
from pgdoctor.checks.base import CHECKS, Config
from pgdoctor.checks.net.cluster import node_facts
from pgdoctor.engine.errors import EXIT_INCOMPLETE, UserError
from pgdoctor.engine.runner import Selection, collect, incomplete_reasons, run_checks
from pgdoctor.knowledge.launchenv import parse_launch
from pgdoctor.model import (
    CheckResult,
    Finding,
    Measurement,
    ProbeResult,
    Reason,
    Report,
    Severity,
    Snapshot,
    Status,
    Unavailable,
    exit_code,
    sorted_findings,
)
from pgdoctor.probes.base import ProbeContext
from pgdoctor.probes.multinode import (
    Rendezvous,
    SetupError,
    local_address_towards,
    measure,
    schedule,
    seconds_left,
)
from pgdoctor.probes.processes import process_started

TEST_TORCH_VERSION_VAR = "PGDOCTOR_TEST_TORCH_VERSION"


def wanted(env: Mapping[str, str], selection: Selection) -> bool:
    """True when the launcher says there are several ranks and --only names the net area (or a
    NET code). A plain `check` under a launcher stays per-node: its collective probes run their
    own rendezvous on MASTER_PORT, which this one would collide with."""
    info = parse_launch(env)
    return bool(info.world_size and info.world_size > 1 and "net" in selection.requested_areas)


@dataclass(frozen=True)
class Budget:
    """Fractions of --timeout given to each phase; the rest is margin for the last exchange."""

    start: float
    total_s: float

    def at(self, fraction: float) -> float:
        return self.start + self.total_s * fraction


@dataclass(frozen=True)
class Outcome:
    """What the check command prints (rank 0 only) and the exit code every rank uses."""

    report: Optional[Report]
    code: int
    rank: int


def _test_overrides(facts: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    """The documented test-only hook (see module docstring); no effect unless the variable is set."""
    fake = env.get(TEST_TORCH_VERSION_VAR, "").strip()
    return {**facts, "torch_version": fake} if fake else facts


def _cluster_codes() -> set[str]:
    return {code for c in CHECKS.values() if "multinode" in c.needs for code in c.codes}


def _with_host(f: Finding, host: str, rank: int) -> Finding:
    """A finding of this node's own checks, scoped to this node. Findings about the cluster
    (a missing rank, a slow pair) keep their own scope: rank 0 only computed them."""
    if f.code in _cluster_codes():
        return f
    scope = f.scope
    if scope.host is None:
        scope = dataclasses.replace(scope, host=host)
    if scope.rank is None and scope.host == host:
        scope = dataclasses.replace(scope, rank=rank)
    return dataclasses.replace(f, scope=scope)


def _local_phase(
    ctx: ProbeContext, selection: Selection, timeout_s: float, host: str
) -> tuple[Snapshot, dict[str, Any]]:
    # software: the versions the consistency checks compare. Never the collectives area: its
    # probes would start a second rendezvous on MASTER_PORT.
    widened = Selection((*selection.only, "software"), (*selection.skip, "collectives"))
    snap = collect(ctx, widened, timeout_s, host=host)
    facts = _test_overrides(node_facts(snap), ctx.env)
    # The report keeps what the user asked for (and what its checks read); the widening only
    # served the facts above.
    load_checks()
    needed = {n for c in CHECKS.values() if selection.area_selected(c.area) for n in c.needs}
    kept = tuple(p for p in snap.probes if selection.area_selected(p.area) or p.name in needed)
    return dataclasses.replace(snap, probes=kept), facts


def run_check(
    ctx: ProbeContext,
    selection: Selection,
    config: Config,
    timeout_s: float,
    *,
    all_pairs: bool = False,
    fail_on: Severity = Severity.FAIL,
    exit_zero: bool = False,
    meta: Optional[dict[str, Any]] = None,
) -> Outcome:
    info = parse_launch(ctx.env)
    missing_vars = [
        n
        for n, v in (
            ("RANK", info.rank),
            ("MASTER_ADDR", info.master_addr),
            ("MASTER_PORT", info.master_port),
        )
        if v is None
    ]
    if missing_vars:
        raise UserError(f"multi-node check (world size {info.world_size}) needs {', '.join(missing_vars)}")
    assert info.rank is not None and info.world_size is not None
    rank, size = info.rank, info.world_size
    if not 0 <= rank < size:
        raise UserError(f"rank {rank} is outside the world size {size}")
    host = socket.gethostname()
    # --timeout bounds the whole run: the budget starts when the process did, not after its imports.
    budget = Budget(min(time.monotonic(), process_started()), timeout_s)
    arrive_by, bandwidth_by, end_by = budget.at(0.55), budget.at(0.85), budget.at(0.97)
    try:
        rdv = Rendezvous(info, ctx.env, arrive_by)
    except SetupError as exc:
        raise UserError(str(exc)) from None
    except ConnectionError as exc:
        print(
            f"pgdoctor: rank {rank} on {host}: rank 0 never answered within {timeout_s * 0.55:.0f} s ({exc})",
            file=sys.stderr,
        )
        return Outcome(None, EXIT_INCOMPLETE, rank)
    try:
        return _run(
            ctx,
            selection,
            config,
            rdv,
            host,
            rank,
            size,
            budget,
            arrive_by,
            bandwidth_by,
            end_by,
            all_pairs,
            fail_on,
            exit_zero,
            meta or {},
        )
    finally:
        rdv.close()


def _run(
    ctx: ProbeContext,
    selection: Selection,
    config: Config,
    rdv: Rendezvous,
    host: str,
    rank: int,
    size: int,
    budget: Budget,
    arrive_by: float,
    bandwidth_by: float,
    end_by: float,
    all_pairs: bool,
    fail_on: Severity,
    exit_zero: bool,
    meta: dict[str, Any],
) -> Outcome:
    # Bounded by the budget's clock, not from now: after a slow import of torch a fixed share would
    # end past the arrival deadline.
    local_s = min(budget.total_s * 0.4, seconds_left(budget.at(0.5), floor=1.0))
    snap, facts = _local_phase(ctx, selection, timeout_s=local_s, host=host)
    device_addr = rdv.addr if rank == 0 else local_address_towards(rdv.addr, rdv.port)
    payload: dict[str, Any] = {"rank": rank, "host": host, "facts": facts, "address": device_addr}
    if rank != 0:
        findings, checks = run_checks(snap, config, selection)
        payload |= {
            "snapshot": snap.to_json(),
            "findings": [_with_host(f, host, rank).to_json() for f in findings],
            "incomplete": incomplete_reasons(snap, checks, selection),
        }
    rdv.set(f"node/{rank}", payload)

    rdv.announce("arrived_ranks", rank)
    rdv.add("arrived", 1)
    if rank == 0:
        # One counter to wait on and one list to read, not one key per rank: at 100,000 ranks a
        # poll of every key takes seconds of its own.
        while rdv.add("arrived", 0) < size and time.monotonic() < arrive_by:
            time.sleep(0.05)
        here = rdv.announced("arrived_ranks")
        if len(here) < rdv.add("arrived", 0):  # some rank's torch could not append: ask key by key
            here = frozenset(r for r in range(size) if rdv.has(f"node/{r}"))
        missing = [r for r in range(size) if r not in here]
        rdv.set("roster", {"missing": missing})
    else:
        if not rdv.wait_for("roster", arrive_by + 2.0):
            print(f"pgdoctor: rank {rank} on {host}: rank 0 published no roster in time", file=sys.stderr)
            return Outcome(None, EXIT_INCOMPLETE, rank)
        missing = rdv.get("roster")["missing"]

    bw: Any
    shifts = schedule(size, all_pairs)
    if missing:
        bw = Unavailable(Reason.NOT_REQUESTED, f"ranks {missing} never arrived: no bandwidth rounds")
    elif ctx.level == "quick":
        bw = Unavailable(Reason.NOT_REQUESTED, "--level quick runs no bandwidth rounds")
    else:
        nbytes = int(config["net.bandwidth_bytes"])
        t0 = time.monotonic()
        mine = measure(
            rdv.store,
            rank,
            size,
            device_addr,
            nbytes,
            shifts,
            reps=3,
            deadline=bandwidth_by,
            slow_ratio=float(config["net.slow_ratio"]),
        )
        mine["seconds"] = round(time.monotonic() - t0, 3)
        rdv.set(f"bw/{rank}", mine)
        bw = {"schedule": "all-pairs" if all_pairs else "neighbours", "shifts": shifts, "bytes": nbytes}

    if rank != 0:
        ok = rdv.wait_for("exit", end_by)
        code = int(rdv.get("exit")) if ok else EXIT_INCOMPLETE
        rdv.set(f"done/{rank}", 1)
        print(
            f"pgdoctor: rank {rank} on {host}: the report is printed by rank 0 (exit {code})", file=sys.stderr
        )
        return Outcome(None, code, rank)

    gone = set(missing)
    nodes = [rdv.get(f"node/{r}") for r in range(size) if r not in gone]
    if isinstance(bw, dict):
        # Each rank posts what it received, also after a failure; a rank that posts nothing
        # (killed, stuck) leaves its incoming pairs unmeasured.
        bw["ranks"] = {
            r: rdv.get(f"bw/{r}") for r in range(size) if rdv.wait_for(f"bw/{r}", bandwidth_by + 2.0)
        }
    # Slurm with one task per node: rank r runs on the r-th node of the job's node list.
    job_nodes = parse_launch(ctx.env).nodes
    expected = {r: job_nodes[r] for r in missing if len(job_nodes) == size}
    report = _merge(snap, nodes, missing, expected, bw, size, config, selection, budget, meta)
    code = exit_code(dataclasses.replace(report, fail_on=fail_on), exit_zero)
    rdv.set("exit", code)
    others = [r for r in range(size) if r != 0 and r not in gone]
    for r in others:  # keep the store up until every rank has read its exit code
        rdv.wait_for(f"done/{r}", end_by)
    return Outcome(report, code, 0)


def _pairs(bw: Any, nodes: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Directed pairs src -> dst with what dst received, in schedule order."""
    hosts = {int(n["rank"]): n["host"] for n in nodes}
    ranks = bw.get("ranks", {}) if isinstance(bw, dict) else {}
    size = len(hosts)
    out = []
    for k in bw.get("shifts", []) if isinstance(bw, dict) else []:
        for src in range(size):
            dst = (src + k) % size
            got = (ranks.get(dst) or {}).get("got") or []
            value = got[src] if src < len(got) else None
            if value is None:
                continue
            pair = {
                "src": src,
                "dst": dst,
                "src_host": hosts.get(src),
                "dst_host": hosts.get(dst),
                "gbytes_per_s": round(float(value), 6),
            }
            if src in (ranks.get(dst) or {}).get("upper_bound", []):
                pair["upper_bound"] = True  # cut off by the deadline: at most this much
            out.append(pair)
    return out


def _bandwidth_summary(bw: dict[str, Any], pairs: list[dict[str, Any]], size: int) -> dict[str, Any]:
    ranks = bw.get("ranks", {})
    errors = {r: v["error"] for r, v in ranks.items() if v.get("error")}
    sizes: list[int] = next((v["round_bytes"] for v in ranks.values() if v.get("round_bytes")), [])
    confirmed: list[list[int]] = next((v["confirmed"] for v in ranks.values() if v.get("confirmed")), [])
    return {
        "schedule": bw["schedule"],
        "shifts": bw["shifts"],
        "bytes": bw["bytes"],
        "round_bytes": sizes,
        "remeasured": confirmed,
        "seconds": max((v.get("seconds", 0.0) for v in ranks.values()), default=0.0),
        "pairs": pairs,
        "median_gbytes_per_s": statistics.median(p["gbytes_per_s"] for p in pairs) if pairs else None,
        "expected_pairs": size * len(bw["shifts"]),
        "silent_ranks": sorted(set(range(size)) - set(ranks)),
        "errors": {str(r): e for r, e in sorted(errors.items())},
    }


def _merge(
    snap: Snapshot,
    nodes: list[dict[str, Any]],
    missing: list[int],
    expected: dict[int, str],
    bw: Any,
    size: int,
    config: Config,
    selection: Selection,
    budget: Budget,
    meta: dict[str, Any],
) -> Report:
    pairs = _pairs(bw, nodes)
    bandwidth: Any = _bandwidth_summary(bw, pairs, size) if isinstance(bw, dict) else bw
    waited = round(budget.total_s * 0.55, 1)
    cluster = ProbeResult(
        "multinode",
        "net",
        Status.PASSED,
        "",
        time.monotonic() - budget.start,
        (
            Measurement(
                "cluster.nodes",
                [
                    {"rank": n["rank"], "host": n["host"], "address": n.get("address"), "facts": n["facts"]}
                    for n in nodes
                ],
                source="c10d store",
            ),
            Measurement(
                "cluster.missing",
                [{"rank": r, "host": expected.get(r), "waited_s": waited} for r in missing],
                source="c10d store",
            ),
            Measurement("cluster.bandwidth", bandwidth, unit="GB/s", source="gloo send/recv"),
        ),
    )
    merged = dataclasses.replace(snap, probes=(*snap.probes, cluster))
    findings, checks = run_checks(merged, config, selection)
    rank0 = nodes[0]
    all_findings = [_with_host(f, rank0["host"], 0) for f in findings]
    incomplete = list(incomplete_reasons(merged, checks, selection))
    extra_nodes = []
    for n in nodes[1:]:
        all_findings += [Finding.from_json(f) for f in n.get("findings", [])]
        incomplete += [f"{n['host']} (rank {n['rank']}): {r}" for r in n.get("incomplete", [])]
        extra_nodes.append({"rank": n["rank"], "host": n["host"], "snapshot": n.get("snapshot")})
    if isinstance(bandwidth, dict) and (bandwidth["errors"] or bandwidth["silent_ranks"]):
        first = next(iter(bandwidth["errors"].items()), None)
        incomplete.append(
            f"bandwidth rounds stopped early: {len(pairs)} of {bandwidth['expected_pairs']} pairs "
            f"measured"
            + (f"; rank {first[0]}: {first[1]}" if first else "")
            + (f"; no result from ranks {bandwidth['silent_ranks']}" if bandwidth["silent_ranks"] else "")
        )
    return Report(
        command="check",
        snapshot=merged,
        findings=tuple(sorted_findings(all_findings)),
        checks=tuple(checks) + tuple(_peer_check_results(nodes)),
        requested_areas=selection.requested_areas,
        incomplete_reasons=tuple(incomplete),
        meta=dict(meta)
        | {
            "multinode": {
                "world_size": size,
                "arrived": [n["rank"] for n in nodes],
                "missing": missing,
                "hosts": [n["host"] for n in nodes],
            }
        },
        extra={"nodes": extra_nodes},
    )


def _peer_check_results(nodes: Sequence[Mapping[str, Any]]) -> list[CheckResult]:
    """One result line per peer node, so the report shows it was checked."""
    out = []
    for n in nodes[1:]:
        count = len(n.get("findings", []))
        status = Status.FAILED if count else Status.PASSED
        out.append(CheckResult(f"node:{n['host']}", "net", status, f"rank {n['rank']}: {count} findings"))
    return out
