"""Desync evidence in the NCCL watchdog's own records, before root cause: ranks that timed out at one SeqNum
of one group in different collectives or sizes (the odd rank is the suspect), and ranks stuck at different
SeqNums of one group where one had completed the other's work (their collectives were matched out of
order). Each yields a collective_mismatch event that causality ranks above the timeouts it explains.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import POSITION, Event
from pgdoctor.knowledge.ranks import count_label, rank_ranges

# Point-to-point work has its own sequence numbers and sizes per pair: only collectives are compared.
_P2P = frozenset({"SEND", "RECV", "RECVANYSOURCE"})
# Collectives whose input has one size on every rank: two ranks at one SeqNum with different NumelIn
# were in different calls even without a majority (scatter, gather and all_to_all may differ by rank).
_SAME_SIZE = frozenset(
    {
        "ALLREDUCE",
        "BROADCAST",
        "ALLGATHER",
        "_ALLGATHER_BASE",
        "ALLGATHER_INTO_TENSOR_COALESCED",
        "REDUCE",
        "REDUCE_SCATTER",
        "_REDUCE_SCATTER_BASE",
        "ALLREDUCE_COALESCED",
        "BARRIER",
    }
)


def disagreeing_timeouts(events: list[Event]) -> list[Event]:
    """Watchdog records of several ranks at one SeqNum of one process group that name different
    collectives (OpType) or sizes (NumelIn): the ranks were not in the same collective, a desync.
    The rank(s) in the minority are the suspects; the timeouts are its symptom. One mismatch event
    per disagreeing (group, SeqNum) that has a majority, or none."""
    by_work: dict[tuple[Any, int], dict[int, tuple[Any, Any]]] = defaultdict(dict)
    where: dict[tuple[Any, int], Event] = {}
    for e in events:
        f = e.facts
        if (
            e.code != C.WATCHDOG_TIMEOUT.code
            or e.rank is None
            or "seq" not in f
            or "op" not in f
            or f["op"] in _P2P
        ):
            continue
        key = (f.get("pg_id"), f["seq"])
        by_work[key].setdefault(e.rank, (f["op"], f.get("numel_in")))
        where.setdefault(key, e)
    out: list[Event] = []
    for key, ranks in by_work.items():
        kinds: dict[tuple[Any, Any], list[int]] = defaultdict(list)
        for r, kind in sorted(ranks.items()):
            kinds[kind].append(r)
        if len(kinds) < 2:
            continue
        ordered = sorted(kinds.items(), key=lambda kv: (-len(kv[1]), kv[1]))
        majority = len(ordered[0][1]) > len(ordered[1][1])
        ops = {op for op, _n in kinds}
        if not majority and (len(ops) > 1 or not ops <= _SAME_SIZE):
            # A tie: only one collective called with different sizes where sizes must agree is proof. A tie
            # on sizes of scatter / all_to_all is not; a tie on OpType (two ranks, two ops) stays the timeout
            # it is reported as (an end-of-epoch hang where ranks left the loop at different points: the
            # real-log corpus labels it so), and a majority still names the odd one out.
            continue
        suspects = sorted(r for kind, rs in ordered[1:] for r in rs) if majority else []
        desc = "; ".join(
            f"{count_label(rs)}: {op}" + (f" NumelIn={n}" if n is not None else "") for (op, n), rs in ordered
        )
        first = where[key]
        facts: dict[str, Any] = {
            "kind": "watchdog_disagreement",
            "seq": key[1],
            "ops_by_rank": {str(r): k[0] for r, k in sorted(ranks.items())},
            "numel_in_by_rank": {str(r): k[1] for r, k in sorted(ranks.items()) if k[1] is not None},
        }
        if key[0] is not None:
            facts["pg_id"] = key[0]
        msg = (
            f"ranks timed out in different collectives at SeqNum {key[1]} ({desc}): they were not in the "
            f"same "
            "collective (a desync)"
        )
        if suspects:
            facts["suspect_ranks"] = suspects
            msg += f"; rank(s) {rank_ranges(suspects)} are the odd ones out"
        else:
            msg += "; no majority names the odd one out (compare the code paths of these ranks)"
        rank = suspects[0] if len(suspects) == 1 else None
        out.append(
            Event(
                C.COLLECTIVE_MISMATCH.code,
                first.source,
                first.line,
                first.source_index,
                msg,
                rank,
                facts,
                list(first.evidence),
                first.ts,
                0,
                (C.COLLECTIVE_MISMATCH.code, "watchdog", key),
            )
        )
    return out


_CROSSED_BY = 2


def crossed_timeouts(events: list[Event]) -> list[Event]:
    """Watchdog records of two ranks of one process group stuck at different SeqNums, where the rank that
    is further on had already completed the work the other is stuck in ("last completed NCCL work" at or past
    it). A collective completes on no rank before every rank ran it, so the later rank's work at that SeqNum
    was matched with some other call: the ranks issued different sequences of collectives (a desync), not
    one rank arriving late (then the others wait at its SeqNum and none has completed it). The later rank
    must have completed the stuck work and the one after it: a pair one work apart (rank 1 stuck in
    ALLREDUCE 215121, rank 0 done with it and stuck in BROADCAST 215122) stays the timeout it is reported
    as, as the real-log corpus labels such pairs (an end-of-epoch hang where one rank left the loop first).
    Only records that name their process group count: SeqNums of two groups are unrelated. One event or
    none."""
    first: dict[tuple[Any, Optional[int]], Event] = {}
    ops: dict[tuple[Optional[int], int], str] = {}
    for e in sorted(events, key=POSITION):
        f = e.facts
        watchdog = e.code == C.WATCHDOG_TIMEOUT.code and e.rank is not None and e.cause_tier <= 1
        if watchdog and "seq" in f and "op" in f:
            ops.setdefault((e.rank, f["seq"]), f["op"])  # the record of the work, for the SeqNum line's group
        if watchdog and "seq" in f and f.get("pg_id") is not None and f.get("op") not in _P2P:
            first.setdefault((f["pg_id"], e.rank), e)
    done: dict[tuple[Any, Optional[int]], int] = {}
    for e in events:
        if e.rank is not None and "last_completed_seq" in e.facts and e.facts.get("pg_id") is not None:
            key = (e.facts["pg_id"], e.rank)
            done[key] = max(done.get(key, -1), e.facts["last_completed_seq"])
    for (pg, ra), a in first.items():
        for (pg_b, rb), b in first.items():
            x, y = a.facts["seq"], b.facts["seq"]
            if pg_b != pg or rb == ra or y <= x or done.get((pg, rb), -1) < x + _CROSSED_BY:
                continue
            op_a = a.facts.get("op") or ops.get((ra, x), "a collective")
            op_b = b.facts.get("op") or ops.get((rb, y), "a collective")
            if _P2P & {op_a, op_b}:
                continue
            facts: dict[str, Any] = {
                "kind": "watchdog_crossed",
                "seq_by_rank": {str(ra): x, str(rb): y},
                "ops_by_rank": {str(ra): op_a, str(rb): op_b},
                "last_completed_by_rank": {str(rb): done[(pg, rb)]},
                "seq": x,
            }
            facts["pg_id"] = pg
            msg = (
                f"rank {ra} is stuck in {op_a} SeqNum {x} while rank {rb} had completed up to "
                f"{done[(pg, rb)]} and is stuck in {op_b} SeqNum {y}: "
                "the ranks' collectives were matched out of order (a desync: compare their code paths)"
            )
            evidence = list(a.evidence) + [e for e in b.evidence if e not in a.evidence]
            dedupe = (C.COLLECTIVE_MISMATCH.code, "watchdog_crossed")
            code = C.COLLECTIVE_MISMATCH.code
            return [
                Event(code, a.source, a.line, a.source_index, msg, None, facts, evidence, a.ts, 0, dedupe)
            ]
    return []


# Records without a group id may still come from two groups (a tensor-parallel and a data-parallel one count
# their works apart, and their SeqNums soon differ by thousands): only a short gap is read as one group's.
_STRANDED_SPAN = 64


def stranded_timeouts(events: list[Event]) -> list[Event]:
    """Watchdog records of one process group (torch before 2.2 prints `WorkNCCL(SeqNum=..., OpType=...`
    with no group id: those records are read as the job's one default group; 2.2+ name it, "[PG 0 Rank
    1]") where the other ranks agree on one SeqNum and a minority of ranks is stuck at least two works
    earlier. The others could not have finished the stuck rank's SeqNum and the one after it unless its
    collective was matched with some other call of theirs (a different size or op: 2U1/Qwen-VL-Series-
    Finetune#17, rank 0 stuck in ALLREDUCE 959 NumelIn=544997376 while ranks 1-5 wait in ALLREDUCE 963
    NumelIn=2560): a desync. A rank that is merely late leaves no timeout of its own behind the others
    (it never enqueued their work), and a pair one work apart stays the timeout it is reported as (see
    crossed_timeouts, which reads the "last completed work" of 2.3+ first). A later rank whose own
    record says it had not completed the stuck work contradicts the reading: then nothing. One event or
    none."""
    first: dict[tuple[Any, int], Event] = {}
    done: dict[tuple[Any, int], int] = {}
    for e in sorted(events, key=POSITION):
        f = e.facts
        if e.code != C.WATCHDOG_TIMEOUT.code or e.rank is None or e.cause_tier > 1 or "seq" not in f:
            continue
        if "last_completed_seq" in f:
            key = (f.get("pg_id"), e.rank)
            done[key] = max(done.get(key, -1), f["last_completed_seq"])
        if "op" not in f or f["op"] in _P2P:
            continue
        first.setdefault((f.get("pg_id"), e.rank), e)
    groups: dict[Any, dict[int, Event]] = defaultdict(dict)
    for (pg, r), e in first.items():
        groups[pg][r] = e
    for pg, recs in groups.items():
        ev = _stranded(pg, recs, done)
        if ev:
            return ev
    return []


def _stranded(pg: Any, first: dict[int, Event], done: dict[tuple[Any, int], int]) -> list[Event]:
    if len(first) < 3:
        return []
    at: dict[int, list[int]] = defaultdict(list)
    for r, e in sorted(first.items()):
        at[e.facts["seq"]].append(r)
    top = max(at)
    ahead = at[top]
    behind = sorted(r for s, rs in at.items() if s != top for r in rs)
    if (
        not behind
        or len(ahead) < 2
        or len(behind) >= len(ahead)
        or len({first[r].facts["op"] for r in ahead}) != 1
    ):
        return []
    low = min(first[r].facts["seq"] for r in behind)
    high = max(first[r].facts["seq"] for r in behind)
    if high > top - _CROSSED_BY or top - low > _STRANDED_SPAN:
        return []
    if any(done.get((pg, r), high + _CROSSED_BY) < high + 1 for r in ahead):
        return []  # a later rank says it had not completed the stuck work: it waits there too
    a = first[behind[0]]
    b = first[ahead[0]]
    facts: dict[str, Any] = {
        "kind": "watchdog_stranded",
        "seq_by_rank": {str(r): first[r].facts["seq"] for r in sorted(first)},
        "ops_by_rank": {str(r): first[r].facts["op"] for r in sorted(first)},
        "seq": low,
        "suspect_ranks": behind,
    }
    if pg is not None:
        facts["pg_id"] = pg
    numel = {str(r): first[r].facts["numel_in"] for r in sorted(first) if "numel_in" in first[r].facts}
    if numel:
        facts["numel_in_by_rank"] = numel
    msg = (
        f"{count_label(behind)} {'is' if len(behind) == 1 else 'are'} stuck in {a.facts['op']} SeqNum "
        f"{a.facts['seq']} while {count_label(ahead)} had gone past it and wait in {b.facts['op']} SeqNum "
        f"{top}: "
        "the stuck collective was matched with some other call of the others (a desync: compare the code "
        f"paths and tensor sizes of rank(s) {rank_ranges(behind)} with the rest)"
    )
    evidence = list(a.evidence) + [x for x in b.evidence if x not in a.evidence]
    dedupe = (C.COLLECTIVE_MISMATCH.code, "watchdog_stranded")
    rank = behind[0] if len(behind) == 1 else None
    return [
        Event(
            C.COLLECTIVE_MISMATCH.code,
            a.source,
            a.line,
            a.source_index,
            msg,
            rank,
            facts,
            evidence,
            a.ts,
            0,
            dedupe,
        )
    ]
