"""Findings of a lab run.

oom and timeout runs are diagnosed by pgdoctor's log diagnoser, the same code as
`pgdoctor diagnose`, fed what the run left: every rank's stderr/stdout (each line prefixed
`[rankN]:` as torchrun prefixes its workers' output) and the flight-recorder dumps. The lab
then adds what only it knows, as extra facts on a copy of each finding: the ranges that were
open on the failing (or hung) rank, hence the phase, and that rank's memory at the time.
imbalance runs are diagnosed from the trace events (pgdoctor.lab.imbalance).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from typing import Any, Optional

from pgdoctor.knowledge.clip import clip
from pgdoctor.lab.imbalance import DEFAULT_RATIO, Imbalance, analyse
from pgdoctor.lab.launch import LabRun
from pgdoctor.model import Evidence, Finding, Scope

EXPECTED_CATEGORIES = {
    ("oom", "cpu"): "host_oom",
    ("oom", "cuda"): "cuda_oom",
    ("timeout", "cpu"): "collective_timeout",
    ("timeout", "cuda"): "collective_timeout",
    ("imbalance", "cpu"): "imbalance",
    ("imbalance", "cuda"): "imbalance",
}
IMBALANCE_CODES = {"ddp": "RUN401", "pp": "RUN402", "tp": "RUN403"}


class DiagnoserUnavailable(RuntimeError):
    """The log diagnoser (pgdoctor.diagnose) is not installed in this build."""


def prefixed_sources(run: LabRun) -> list[tuple[str, str]]:
    out = []
    for name, text in run.sources():
        rank = os.path.basename(name).split(".", 1)[0].removeprefix("rank")
        lines = text.splitlines()
        out.append((name, "".join(f"[rank{rank}]:{line}\n" for line in lines)))
    return out


def _log_findings(run: LabRun) -> list[Finding]:
    try:
        from pgdoctor.diagnose.api import diagnose_sources
    except ImportError as exc:
        raise DiagnoserUnavailable(f"pgdoctor.diagnose.api is not available: {exc}") from None
    dirs = [run.fr_dir] if run.fr_dir else []
    try:
        result: Any = diagnose_sources(prefixed_sources(run), flight_recorder_dirs=dirs)
    except ValueError as exc:  # an unreadable flight-recorder dump
        raise DiagnoserUnavailable(f"the log diagnoser could not read this run: {exc}") from None
    findings = getattr(result, "findings", result)
    return [f for f in findings if isinstance(f, Finding)]


def _lab_facts(result: dict[str, Any]) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    if result.get("phase"):
        facts["lab_phase"] = result["phase"]
    if result.get("ranges"):
        facts["lab_ranges"] = list(result["ranges"])
    if "step" in result:
        facts["lab_step"] = result["step"]
    if result.get("batch"):
        facts["lab_batch"] = result["batch"]
    for k, v in (result.get("memory") or {}).items():
        facts[f"lab_memory_{k}"] = v
    for k, v in (result.get("cap") or {}).items():
        facts[f"lab_cap_{k}"] = v
    return facts


def _culprit(run: LabRun, category: str) -> Optional[dict[str, Any]]:
    """The rank result the lab itself saw fail in this category's way: for OOMs the rank that
    raised an allocation error; for timeouts the rank still inside its step when the others
    dumped (the one they waited for)."""
    results = [r for r in run.results if r]
    if category in ("host_oom", "cuda_oom"):
        for r in results:
            if r.get("status") == "error" and (
                "OutOfMemoryError" in str(r.get("error_type")) or "allocate" in str(r.get("error"))
            ):
                return r
    if category == "collective_timeout":
        for r in results:
            if r.get("status") == "hung":
                return r
    return None


def enrich(run: LabRun, findings: Sequence[Finding]) -> list[Finding]:
    """Copies of the diagnoser's findings with the lab's facts (`lab_*`: open ranges, phase,
    step, memory) about the rank each finding is about. A finding without a rank gets the rank
    the lab saw fail in that category's way. The diagnoser's own facts win over the lab's."""
    by_rank = {int(r["rank"]): r for r in run.results if r and "rank" in r}
    out = []
    for f in findings:
        scope = f.scope
        if scope.rank is None:
            culprit = _culprit(run, f.category)
            if culprit is not None:
                scope = dataclasses.replace(scope, rank=int(culprit["rank"]))
        res = by_rank.get(scope.rank) if scope.rank is not None else None
        if res is None:
            out.append(f)
            continue
        facts = {**_lab_facts(res), "lab_status": res.get("status"), **dict(f.facts)}
        ev = tuple(f.evidence)
        if res.get("ranges"):
            ev += (
                Evidence(f"rank {scope.rank} ({res.get('status')}) open ranges: {' > '.join(res['ranges'])}"),
            )
        out.append(dataclasses.replace(f, facts=facts, scope=scope, evidence=ev))
    return out


def _innermost(ranges: Sequence[str]) -> str:
    return ranges[-1] if ranges else ""


def stalled_findings(results: Sequence[dict[str, Any]]) -> list[Finding]:
    """RUN404 for each rank that was still inside its step ("hung": its dump watcher found it
    there) when other ranks failed: the rank the others waited for, with where it was and where
    they waited. This needs no log or flight recorder, so it also covers send/recv, which gloo's
    flight recorder does not record."""
    from pgdoctor.checks import load_all
    from pgdoctor.checks.base import CODES

    hung = [r for r in results if r and r.get("status") == "hung"]
    failed = [r for r in results if r and r.get("status") == "error"]
    if not hung or not failed:
        return []
    load_all()
    code = CODES["RUN404"]
    waiting = {int(r["rank"]): _innermost(r.get("ranges") or []) for r in failed}
    first_error = clip(str(failed[0].get("error", "")).splitlines()[0], 300) if failed[0].get("error") else ""
    out = []
    for h in hung:
        ranges = list(h.get("ranges") or [])
        where = " > ".join(ranges) or "no open range"
        waits = ", ".join(f"rank {r} in {w or 'no open range'}" for r, w in sorted(waiting.items()))
        msg = (
            f"rank {h['rank']} was still in {where} ({h.get('phase') or 'no phase'}) at step {h.get('step')} "
            f"when its peers failed waiting for it: {waits}"
        )
        evidence = [Evidence(f"rank {h['rank']} open ranges: {where}")]
        evidence += [
            Evidence(
                f"rank {r['rank']} {r.get('error_type', 'error')}: "
                f"{clip(str(r.get('error', '')).splitlines()[0], 300)}"
                if r.get("error")
                else f"rank {r['rank']} failed"
            )
            for r in failed
        ]
        facts = {
            "rank": h["rank"],
            "phase": h.get("phase", ""),
            "ranges": ranges,
            "step": h.get("step"),
            "waiting_ranks": sorted(waiting),
            "waiting_in": {str(r): w for r, w in sorted(waiting.items())},
            "first_error": first_error,
            "culprit_ranks": [int(h["rank"])],
        }
        out.append(code.finding(msg, scope=Scope(rank=int(h["rank"])), evidence=evidence, facts=facts))
    return out


def imbalance_finding(
    strategy: str, imb: Imbalance, ratio_threshold: float = DEFAULT_RATIO
) -> Optional[Finding]:
    from pgdoctor.checks import load_all
    from pgdoctor.checks.base import CODES

    if imb.ratio < ratio_threshold:
        return None
    load_all()
    code = CODES[IMBALANCE_CODES[strategy]]
    who = {"ddp": "rank", "pp": "stage", "tp": "shard"}[strategy]
    what = "pp.fwd + pp.bwd self time" if strategy == "pp" else "compute (step - communication - data)"
    msg = (
        f"{who} {imb.slowest} computes {imb.slowest_compute_ms:.1f} ms per step; the median of the other "
        f"{len(imb.ranks) - 1} {who}{'s' if len(imb.ranks) > 2 else ''} is "
        f"{imb.others_median_compute_ms:.1f} ms; "
        f"{imb.slowest_compute_ms:.1f} / {imb.others_median_compute_ms:.1f} = {imb.ratio:.2f}x ({what}, "
        f"median over "
        f"steps); the other ranks spend {imb.others_wait_share:.0%} of their step waiting in communication"
    )
    if imb.bubble is not None and imb.ideal_bubble is not None:
        msg += f"; pipeline bubble {imb.bubble:.0%} against an ideal {imb.ideal_bubble:.0%}"
    evidence = [
        Evidence(
            f"rank {r.rank}: compute {imb.compute_of(r):.1f} ms, waiting in communication {r.comm_ms:.1f} "
            f"ms, "
            f"step {r.step_ms:.1f} ms (median of {r.steps} steps)"
            + (" <- slowest" if r.rank == imb.slowest else "")
        )
        for r in imb.ranks
    ]
    return code.finding(msg, scope=Scope(rank=imb.slowest), evidence=evidence, facts=imb.facts())


# Log findings of these categories say why a rank failed; a stalled rank beside them is their consequence.
_CAUSES = {
    "cuda_oom",
    "host_oom",
    "process_crash",
    "gpu_hardware",
    "driver_env",
    "nccl_usage",
    "collective_mismatch",
}


def root_first(logs: Sequence[Finding], stalled: Sequence[Finding]) -> list[Finding]:
    """One root cause and its cascade, as `pgdoctor diagnose` orders them. The log diagnoser's
    root leads when it is a cause (an OOM, a crash) or when it is a flight-recorder finding that
    blames the stalled rank (it adds the group, op and sequence number); otherwise the rank that
    was still inside its step while its peers failed (RUN404) is the root, and the peers'
    timeouts waiting for it are its consequences."""
    logs, stalled = list(logs), list(stalled)
    if not logs and not stalled:
        return []
    lead: Finding
    if logs and (
        logs[0].category in _CAUSES
        or not stalled
        or (
            logs[0].code.startswith("RUN2")
            and stalled[0].scope.rank in (logs[0].facts.get("culprit_ranks") or [])
        )
    ):
        lead, rest = logs[0], logs[1:] + stalled
    else:
        lead, rest = stalled[0], logs + stalled[1:]
    head = dataclasses.replace(
        lead, facts={**{k: v for k, v in lead.facts.items() if k != "cascade_of"}, "root_cause": True}
    )
    out = [head]
    for f in rest:
        facts = {k: v for k, v in f.facts.items() if k != "root_cause"}
        facts["cascade_of"] = head.code
        out.append(dataclasses.replace(f, facts=facts))
    return out


def diagnose_run(run: LabRun, by_rank_events: dict[int, list[dict[str, Any]]]) -> list[Finding]:
    """The findings of a finished lab run, root cause first (raises DiagnoserUnavailable for
    oom/timeout runs when the log diagnoser is missing)."""
    spec = run.spec
    if spec.fault == "imbalance" or spec.fault == "none":
        imb = analyse(spec.strategy, by_rank_events, spec.microbatches)
        if imb is None:
            return []
        f = imbalance_finding(spec.strategy, imb)
        return root_first([f], []) if f else []
    return root_first(enrich(run, _log_findings(run)), stalled_findings(run.results))
