"""Independent flight-recorder faults, ordered by which explains the others.

A fault names culprits (ranks that did not do what their peers did) and waiters (ranks blocked
in the collective). Fault A explains fault B when every culprit of B is a waiter of A: B's
culprits did not arrive because they are stuck in A. The faults nothing explains come first
(mismatches before hangs before a missing dump, then fewer culprits, then the one issued
first); in a cycle (a cross-group deadlock: each half's culprits wait in the other half) the
half with fewer culprits is the cause: the ranks that issued collectives in a different order
than everyone else.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pgdoctor.checks.base import CODES
from pgdoctor.knowledge.ranks import run_words
from pgdoctor.model import Evidence, Finding, Scope


@dataclass
class Fault:
    code: str
    facts: dict[str, Any]
    culprits: list[int]
    waiters: list[int]
    message: str
    evidence: list[Evidence] = field(default_factory=list)
    tier: int = 1  # 0 a mismatch, 1 a hang, 2 a missing dump
    issued_ns: int = 0  # when the ranks that wait issued it (time_created_ns); 0: not known
    # The ranks that entered it have nothing after it: where the job stopped, not a collective of
    # the group that completed long ago beside a rank that left no dump.
    stuck: bool = False


_NEVER = 1 << 64


def rank_ranges(ranks: Sequence[int], limit: int = 12) -> str:
    """'0,2-5': ranges, so a thousand ranks stay one short word."""
    parts = run_words(ranks)
    return ",".join(parts[:limit]) + (",..." if len(parts) > limit else "")


def ranks_text(ranks: Sequence[int], limit: int = 12) -> str:
    """'rank 3', 'ranks 0,2-5 (5)'."""
    rs = sorted(set(ranks))
    if not rs:
        return "no rank"
    if len(rs) == 1:
        return f"rank {rs[0]}"
    text = rank_ranges(rs, limit)
    return f"ranks {text} ({len(rs)})" if len(rs) > 2 or "-" in text else f"ranks {text}"


def by_rank_groups(values: Mapping[int, Any]) -> dict[str, Any]:
    """{rank: value} with equal values folded under one key of rank ranges ('0-520,522-1023'), so
    facts stay small at a thousand ranks."""
    groups: dict[str, tuple[list[int], Any]] = {}
    for r in sorted(values):
        key = json.dumps(values[r], sort_keys=True, default=str)
        groups.setdefault(key, ([], values[r]))[0].append(r)
    return {rank_ranges(rs, limit=64): v for rs, v in sorted(groups.values(), key=lambda g: g[0][0])}


def _key(f: Fault) -> tuple[Any, ...]:
    # Between faults alike, the one issued first: a straggler that never entered its TP group's
    # all_reduce is also missing from the DP all_reduce its DP peers issued after theirs.
    return (
        f.tier,
        len(f.culprits),
        f.issued_ns or _NEVER,
        str(f.facts.get("pg", "")),
        f.facts.get("seq", 0),
        f.culprits,
    )


def order(faults: list[Fault]) -> list[tuple[Fault, str]]:
    """(fault, role): role is 'root', 'independent' (another cause nothing explains) or the
    description of the fault that explains it."""

    def explainer(f: Fault) -> Fault | None:
        if not f.culprits:
            return None
        for other in sorted(faults, key=_key):
            if other is not f and set(f.culprits) <= set(other.waiters):
                return other
        # The same ranks without a dump, seen again in another group: said once.
        same = [
            o for o in faults if o.code == f.code and o.culprits == f.culprits and "no_dump_ranks" in o.facts
        ]
        first = min(same, key=lambda o: (not o.stuck, _key(o))) if same else None
        if "no_dump_ranks" in f.facts and len(same) > 1 and first is not f:
            return first
        return None

    primary = sorted((f for f in faults if explainer(f) is None), key=_key)
    if not primary and faults:
        primary = [min(faults, key=_key)]
    rest = sorted((f for f in faults if f not in primary), key=_key)
    out: list[tuple[Fault, str]] = []
    for i, f in enumerate(primary):
        out.append((f, "root" if i == 0 else "independent"))
    for f in rest:
        ex = explainer(f)
        out.append(
            (f, f"{ex.code} pg {ex.facts.get('pg')} seq {ex.facts.get('seq')}" if ex else "independent")
        )
    return out


def findings(faults: list[Fault]) -> list[Finding]:
    """Findings root first; the rest carry cascade_of (the root's code) and explained_by /
    independent, so a reader sees which are consequences and which are separate faults."""
    out: list[Finding] = []
    root_code = ""
    for f, role in order(faults):
        facts = dict(f.facts)
        facts["culprit_ranks"] = list(f.culprits)
        if f.culprits:
            facts["rank"] = f.culprits[0]
            facts["ranks"] = list(f.culprits)
        if f.waiters:
            facts["waiting_ranks"] = list(f.waiters)
        if role == "root":
            facts["root_cause"] = True
            root_code = f.code
        else:
            facts["cascade_of"] = root_code
            if role == "independent":
                facts["independent"] = True
            else:
                facts["explained_by"] = role
        scope = Scope(rank=f.culprits[0]) if f.culprits else Scope()
        out.append(CODES[f.code].finding(f.message, scope=scope, evidence=f.evidence[:6], facts=facts))
    return out
