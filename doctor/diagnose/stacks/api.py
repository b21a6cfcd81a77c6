"""Saved hang evidence (files of `pgdoctor hang --save`, from one node or several) -> the
roll-call findings and the `hang` section, as `pgdoctor hang` gave them live."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pgdoctor.diagnose.stacks.evidence import RankEvidence, load_evidence
from pgdoctor.diagnose.stacks.report import hang_json
from pgdoctor.diagnose.stacks.verdict import analyze, findings_of
from pgdoctor.model import Finding


def diagnose_evidence(paths: Sequence[str]) -> tuple[list[Finding], dict[str, Any]]:
    evidence: list[RankEvidence] = []
    for path in paths:
        try:
            evidence.append(load_evidence(path))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a damaged file: the ranks of the others still vote
    verdicts = analyze(evidence)
    return findings_of(verdicts), hang_json(verdicts, evidence)
