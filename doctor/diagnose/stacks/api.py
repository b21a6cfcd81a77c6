"""Saved hang evidence (files of `pgdoctor hang --save`, from one node or several) -> the
roll-call findings and the `hang` section, as `pgdoctor hang` gave them live."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pgdoctor.diagnose.stacks.evidence import RankEvidence, load_evidence
from pgdoctor.diagnose.stacks.report import hang_json
from pgdoctor.diagnose.stacks.verdict import analyze, findings_of
from pgdoctor.model import Finding


def diagnose_evidence(paths: Sequence[str]) -> tuple[list[Finding], dict[str, Any]]:
    """The findings and the `hang` section of the evidence files; a damaged one (cut, not JSON,
    another schema) is left out, the ranks of the others still vote, and it is named with its
    reason in the section's `skipped` ("PATH: reason"), never dropped silently."""
    evidence: list[RankEvidence] = []
    skipped: list[str] = []
    for path in paths:
        try:
            evidence.append(load_evidence(path))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            skipped.append(str(exc) if str(exc).startswith(f"{path}: ") else f"{path}: {exc}")
    verdicts = analyze(evidence)
    hang = hang_json(verdicts, evidence)
    if skipped:
        hang["skipped"] = skipped
    return findings_of(verdicts), hang


def without_unread_recorders(findings: Sequence[Finding], hang: Mapping[str, Any]) -> list[Finding]:
    """A snapshot's flight recorders come from the ranks that answered on a socket: a live rank
    that did not (it held the GIL in C code, it never opted in) left no recorder, which the
    recorder analysis reads as a rank that died before dumping. The snapshot saw it alive: a
    finding that rests only on such ranks' missing recorders is dropped."""
    alive = {
        r.get("rank")
        for job in hang.get("jobs", ())
        for r in job.get("ranks", ())
        if dict(r.get("tiers", {})).get("proc") == "ok"
    }
    return [
        f for f in findings if not (f.facts.get("no_dump_ranks") and set(f.facts["no_dump_ranks"]) <= alive)
    ]
