"""Root cause, not cascade: order events into findings.

A rank's OOM, crash or hardware error comes before the other ranks' timeouts; remote errors and
dropped connections echo a peer that died; "Some NCCL operations have failed", SIGTERM,
"Killing subprocess" and ChildFailedError are consequences. Each event has a cause tier
(0 cause, 1 usually a symptom, 2 consequence, 3 exit records and markers). The root is the best
tier; within it the earliest by timestamp when the events carry comparable clocks, then the rank
torchrun names as the first failure, then position in the logs. Every other finding is listed
after it with facts["cascade_of"].
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from pgdoctor.checks.base import CODES
from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event
from pgdoctor.diagnose.rules.launcher import EXIT, MARKER
from pgdoctor.model import Evidence, Finding, Scope, Severity

# How close to the end of its log a traceback must be to count as the rank's last words when no
# launcher recorded the exit.
TAIL_LINES = 40
MAX_EVIDENCE = 6


def _dedupe(events: list[Event]) -> list[Event]:
    seen: dict[tuple[Any, ...], Event] = {}
    for e in sorted(events, key=lambda e: e.position):
        first = seen.get(e.dedupe)
        if first is None:
            e.facts.setdefault("occurrences", 1)
            seen[e.dedupe] = e
        else:
            first.facts["occurrences"] = first.facts.get("occurrences", 1) + 1
    return list(seen.values())


def _root_exit(exits: list[Event]) -> Optional[Event]:
    bad = [e for e in exits if e.facts.get("exitcode") not in (0, None)]
    for pred in (lambda e: e.facts.get("root"), lambda e: e.facts.get("first")):
        chosen = [e for e in bad if pred(e)]
        if chosen:
            return min(chosen, key=lambda e: e.position)
    return min(bad, key=lambda e: e.position) if bad else None


def _exit_finding_event(ex: Event) -> Event:
    """A rank that exited without any recognised reason in the logs: the exit record is all we have."""
    code_n = ex.facts.get("exitcode")
    sig = ex.facts.get("signal")
    who = f"rank {ex.rank}" if ex.rank is not None else (
        f"local rank {ex.facts['local_rank']}" if "local_rank" in ex.facts else "a rank")
    host = f" on {ex.facts['host']}" if ex.facts.get("host") else ""
    if code_n == -9:
        code = C.HOST_OOM_KILLED.code
        msg = (f"{who}{host} was killed by SIGKILL (exit code -9) as the first failure; with no other error this is "
               "most often the kernel's OOM killer (check dmesg on that host)")
    elif sig in ("SIGSEGV", "SIGABRT", "SIGILL", "SIGBUS", "SIGFPE"):
        code = C.FATAL_SIGNAL.code
        msg = f"{who}{host} died on {sig} (exit code {code_n}) as the first failure"
    else:
        code = C.RANK_EXITED.code
        msg = (f"{who}{host} exited with code {code_n} as the first failure; its log shows no recognised error "
               "(read that rank's own output)")
    facts = {k: v for k, v in ex.facts.items() if not k.startswith("_") and k not in ("root", "first")}
    return Event(code, ex.source, ex.line, ex.source_index, msg, ex.rank, facts, list(ex.evidence), ex.ts, 0,
                 (code, ex.rank, "exit"))


def _ts_key(events: Sequence[Event]) -> Optional[str]:
    kinds = {e.ts[0] for e in events if e.ts}
    if len(kinds) == 1 and all(e.ts for e in events):
        return next(iter(kinds))
    return None


def _seq_facts(events: list[Event]) -> dict[str, Any]:
    """Per-rank sequence numbers of the timed-out collectives; ranks with a lower number are behind."""
    seq: dict[int, int] = {}
    enq: dict[int, int] = {}
    done: dict[int, int] = {}
    for e in events:
        if e.rank is None:
            continue
        if "seq" in e.facts and e.cause_tier <= 1:
            seq.setdefault(e.rank, e.facts["seq"])
        if "last_enqueued_seq" in e.facts:
            enq[e.rank] = e.facts["last_enqueued_seq"]
        if "last_completed_seq" in e.facts:
            done[e.rank] = e.facts["last_completed_seq"]
    out: dict[str, Any] = {}
    if seq:
        out["seq_by_rank"] = {str(k): v for k, v in sorted(seq.items())}
    if enq:
        out["last_enqueued_by_rank"] = {str(k): v for k, v in sorted(enq.items())}
    if done:
        out["last_completed_by_rank"] = {str(k): v for k, v in sorted(done.items())}
    basis = enq or seq
    if len(set(basis.values())) > 1:
        low = min(basis.values())
        out["lagging_ranks"] = sorted(r for r, v in basis.items() if v == low)
        out["max_seq"] = max(basis.values())
        out["min_seq"] = low
    return out


def _finding(code: str, events: list[Event], root_code: Optional[str], exits_by_rank: Mapping[int, Event]) -> Finding:
    c = CODES[code]
    first = events[0]
    facts: dict[str, Any] = {k: v for k, v in first.facts.items() if not k.startswith("_")}
    ranks = sorted({e.rank for e in events if e.rank is not None})
    if ranks:
        facts["ranks"] = ranks
    facts["occurrences"] = sum(e.facts.get("occurrences", 1) for e in events)
    msg = first.message
    if code in (C.WATCHDOG_TIMEOUT.code, C.HEARTBEAT_TIMEOUT.code, C.GLOO_TIMEOUT.code):
        sf = _seq_facts(events)
        facts.update(sf)
        if len(ranks) > 1:
            msg += f" (timed out on ranks {','.join(map(str, ranks))})"
        if "lagging_ranks" in sf:
            msg += (f"; ranks report different sequence numbers ({sf['min_seq']} vs {sf['max_seq']}): "
                    f"rank(s) {','.join(map(str, sf['lagging_ranks']))} are behind")
    elif len(ranks) > 1:
        msg += f" (seen on ranks {','.join(map(str, ranks))})"
    if first.rank is not None and first.rank in exits_by_rank and "exitcode" not in facts:
        ex = exits_by_rank[first.rank]
        facts["exitcode"] = ex.facts.get("exitcode")
        msg += f"; rank {first.rank} exited with {ex.facts.get('exitcode')}"
    if root_code is None:
        facts["root_cause"] = True
    else:
        facts["cascade_of"] = root_code
    evidence: list[Evidence] = []
    for e in events:
        for ev in e.evidence:
            if len(evidence) < MAX_EVIDENCE and ev not in evidence:
                evidence.append(ev)
    severity = None
    if "xid_severity" in facts:
        severity = Severity(facts["xid_severity"])
    host = facts.get("host") if isinstance(facts.get("host"), str) else None
    scope = Scope(host=host, rank=first.rank, file=first.source or None)
    return c.finding(msg, scope=scope, evidence=evidence, facts=facts, severity=severity)


def assemble(events: list[Event], source_lines: Mapping[str, int]) -> list[Finding]:
    exits = _dedupe([e for e in events if e.code == EXIT])
    markers = [e for e in events if e.code == MARKER]
    failures = _dedupe([e for e in events if e.code not in (EXIT, MARKER)])
    root_exit = _root_exit(exits)
    root_rank = root_exit.rank if root_exit is not None else None
    exits_by_rank: dict[int, Event] = {}
    for ex in sorted(exits, key=lambda e: e.position):
        if ex.rank is not None and ex.facts.get("exitcode") not in (0, None):
            exits_by_rank.setdefault(ex.rank, ex)
    died = bool(exits_by_rank) or any(e.facts.get("exitcode") not in (0, None) for e in exits) or bool(markers)

    kept: list[Event] = []
    for e in failures:
        if e.code == C.PYTHON_EXCEPTION.code:
            near_end = e.line >= source_lines.get(e.source, 0) - TAIL_LINES
            fatal = (e.rank is not None and e.rank in exits_by_rank) or (died and (
                e.rank is None or not exits_by_rank)) or near_end
            if not fatal:
                continue
        kept.append(e)
    # The kernel names the pid it killed; torchrun's table maps pids to ranks.
    pid_rank = {ex.facts["pid"]: ex.rank for ex in exits if ex.rank is not None and "pid" in ex.facts}
    for e in kept:
        if e.rank is None and e.facts.get("pid") in pid_rank:
            e.rank = pid_rank[e.facts["pid"]]
            e.facts["rank"] = e.rank
    if root_exit is not None:
        # The exit record becomes a finding only when nothing in the logs explains that rank's death.
        explained = any(e.cause_tier == 0 and (e.rank is None or e.rank == root_exit.rank) for e in kept) or any(
            e.cause_tier <= 1 and e.rank is not None and e.rank == root_exit.rank for e in kept)
        if not explained:
            kept.append(_exit_finding_event(root_exit))
    if not kept:
        return []

    best = min(e.cause_tier for e in kept)
    group = [e for e in kept if e.cause_tier == best]
    kind = _ts_key(group)

    def rank_key(e: Event) -> tuple[Any, ...]:
        pref = 0 if root_rank is not None and e.rank == root_rank else 1
        return ((e.ts[1] if kind and e.ts else 0.0), pref, e.position)

    root = min(group, key=rank_key)
    if root.rank is None and root_exit is not None and root_exit.rank is not None and root.cause_tier == 0:
        # A traceback without a rank prefix: torchrun's first failure says whose it was.
        root.rank = root_exit.rank
        root.facts["rank"] = root.rank
        root.facts["rank_from"] = "launcher first failure"
    by_code: dict[str, list[Event]] = defaultdict(list)
    for e in sorted(kept, key=lambda e: (e is not root, e.cause_tier, e.position)):
        by_code[e.code].append(e)
    order = [root.code, *sorted((c for c in by_code if c != root.code), key=lambda c: (min(e.cause_tier for e in by_code[c]), min(e.position for e in by_code[c])))]
    findings = [_finding(root.code, by_code[root.code], None, exits_by_rank)]
    for code in order[1:]:
        findings.append(_finding(code, by_code[code], root.code, exits_by_rank))
    return findings
