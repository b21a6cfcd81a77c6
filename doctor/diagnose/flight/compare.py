"""What must agree across the ranks of one collective, and who disagrees.

Raw input shapes differ legally from rank to rank, so each op is compared on what it needs to
agree on (as torch's analyzer, torch/distributed/flight_recorder/components/types.py, does):
all_gather output numel = input numel x group size and reduce_scatter the reverse, on every rank;
scatter compares outputs (only the source has an input), gather inputs (only the destination has
an output); all_to_all compares only the job-wide totals (uneven splits are legal); everything
else compares input and output sizes. Dtypes: inputs across ranks (where a rank has an input),
outputs across ranks (where it has an output), and each rank's output against its own input for
ops that do not change the dtype. The ranks whose value differs from the most common one are the
culprits; a tie blames the side without the lowest rank, so the answer never depends on the order
in which dumps were read.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

from pgdoctor.diagnose.flight.dump import int_of
from pgdoctor.diagnose.flight.entries import Entry, numel
from pgdoctor.diagnose.flight.order import by_rank_groups

GATHER_LIKE = {
    "all_gather",
    "_all_gather_base",
    "all_gather_into_tensor",
    "all_gather_into_tensor_coalesced",
    "all_gather_single",
}
SCATTER_LIKE = {
    "reduce_scatter",
    "_reduce_scatter_base",
    "reduce_scatter_tensor",
    "reduce_scatter_tensor_coalesced",
    "reduce_scatter_single",
}
ALL_TO_ALL = {"all_to_all", "all_to_all_single", "all_to_all_v_single", "alltoall", "alltoall_base"}
UNEVEN = {"all_gather_v", "reduce_scatter_v"}
KEEPS_DTYPE_EXEMPT = {"scatter", "gather", "broadcast", "_broadcast_oop"}


@dataclass
class Problem:
    kind: str  # op_type, input_size, output_size, total_numel, input_dtype, output_dtype, state, ...
    culprits: list[int]
    detail: str
    per_rank: dict[str, Any] = field(default_factory=dict)


def _key(v: Any) -> Hashable:
    if isinstance(v, (list, tuple)):
        return tuple(_key(x) for x in v)
    return (
        v
        if isinstance(v, (str, int, float, bool, type(None)))
        else json.dumps(v, sort_keys=True, default=str)
    )


def minority(values: Mapping[int, Any], peers: Optional[Mapping[int, Any]] = None) -> list[int]:
    """Ranks whose value is not the most common one. A tie (a pair that disagrees one against one)
    is broken by `peers`, the values the sibling groups (the other TP pairs, say) recorded at the
    same sequence number. A tie nothing breaks (a 2-rank world; onlyActive dumps, which drop the
    siblings' completed entries) names every rank of the tied values: picking one would blame the
    right rank half the time."""
    groups: dict[Hashable, list[int]] = {}
    for r in sorted(values):
        groups.setdefault(_key(values[r]), []).append(r)
    if len(groups) < 2:
        return []
    votes: dict[Hashable, int] = {}
    for v in (peers or {}).values():
        votes[_key(v)] = votes.get(_key(v), 0) + 1
    rank_of = {k: (len(groups[k]), votes.get(k, 0)) for k in groups}
    best = max(rank_of.values())
    tied = [k for k in groups if rank_of[k] == best]
    if len(tied) > 1:
        return sorted(r for k, rs in groups.items() if k in tied or rank_of[k] < best for r in rs)
    return sorted(r for k, rs in groups.items() if k != tied[0] for r in rs)


def _describe(e: Entry) -> dict[str, Any]:
    return {
        "op": e.name,
        "input_sizes": e.in_sizes,
        "output_sizes": e.out_sizes,
        "input_dtypes": e.in_dtypes,
        "output_dtypes": e.out_dtypes,
        "state": e.state,
    }


def _by(
    present: Mapping[int, Entry], f: Callable[[Entry], Any], when: Callable[[Entry], bool] = lambda e: True
) -> dict[int, Any]:
    return {r: f(e) for r, e in present.items() if when(e)}


def _sizes(present: Mapping[int, Entry], size: int, sib: Mapping[int, Entry]) -> Optional[Problem]:
    op = next(iter(present.values())).op
    if op in UNEVEN:
        return None
    if op in ALL_TO_ALL:
        return _all_to_all(present, size, op) if len(present) == size else None
    bad: list[int] = []
    odd_kind, bad_kind, bad_detail = "input_size", "", ""
    if op in GATHER_LIKE:
        bad = [r for r, e in present.items() if numel(e.out_sizes) != numel(e.in_sizes) * size]
        bad_kind, bad_detail = "output_size", f"output numel != input numel x group size {size}"
        odd = minority(_by(present, lambda e: e.in_sizes), _by(sib, lambda e: e.in_sizes))
    elif op in SCATTER_LIKE:
        bad = [r for r, e in present.items() if numel(e.in_sizes) != numel(e.out_sizes) * size]
        bad_kind, bad_detail = "input_size", f"input numel != output numel x group size {size}"
        odd_kind, odd = (
            "output_size",
            minority(_by(present, lambda e: e.out_sizes), _by(sib, lambda e: e.out_sizes)),
        )
    elif op == "scatter":
        odd_kind, odd = "output_size", minority(_by(present, lambda e: e.out_sizes))
    elif op == "gather":
        odd = minority(_by(present, lambda e: e.in_sizes))
    else:
        odd = minority(_by(present, lambda e: e.in_sizes), _by(sib, lambda e: e.in_sizes))
        if not odd:
            odd_kind, odd = (
                "output_size",
                minority(_by(present, lambda e: e.out_sizes), _by(sib, lambda e: e.out_sizes)),
            )
    if odd:
        return Problem(odd_kind, odd, f"{op}: {odd_kind.replace('_', ' ')}s differ across ranks")
    if bad and len(bad) < len(present):
        return Problem(bad_kind, sorted(bad), f"{op}: {bad_detail}")
    return None


def _all_to_all(present: Mapping[int, Entry], size: int, op: str) -> Optional[Problem]:
    """Uneven splits are legal; splits that cannot agree are not. The tensor-list form records one
    shape per peer, so what rank i sends to j must be what j receives from i: the ranks that cover
    every pair that disagrees are the culprits (a rank with wrong splits disagrees with all its
    peers). The single-tensor form records only each rank's total; when the job-wide totals differ,
    the culprits are the ranks off a clear majority (even splits), else no rank can be named."""
    ranks = sorted(present)  # group rank i is the i-th member (new_group sorts its ranks)
    lists = {r: (len(present[r].in_sizes), len(present[r].out_sizes)) for r in ranks}
    # Off the most common count and not one tensor per peer: a tie names both sides (minority).
    odd = [r for r in minority(lists) if lists[r] != (size, size)]
    if odd and all(lists[r] == (size, size) for r in ranks if r not in odd):
        return Problem(
            "input_size", odd, f"{op}: one tensor per peer on the other ranks ({size}), not on these"
        )
    if all(len(present[r].in_sizes) == size and len(present[r].out_sizes) == size for r in ranks):
        sent = {(i, j): math.prod(present[ranks[i]].in_sizes[j]) for i in range(size) for j in range(size)}
        got = {(i, j): math.prod(present[ranks[j]].out_sizes[i]) for i in range(size) for j in range(size)}
        bad = sorted(p for p in sent if sent[p] != got[p])
        if not bad:
            return None
        culprits = sorted(ranks[i] for i in _cover(bad))
        i, j = bad[0]
        return Problem(
            "input_size",
            culprits,
            f"{op}: splits that cannot agree (rank {ranks[i]} sends {sent[(i, j)]} "
            f"elements to rank {ranks[j]}, which expects {got[(i, j)]}; {len(bad)} of {size * size} pairs)",
        )
    tin = sum(numel(e.in_sizes) for e in present.values())
    tout = sum(numel(e.out_sizes) for e in present.values())
    if tin == tout:
        return None
    totals = {r: (numel(e.in_sizes), numel(e.out_sizes)) for r, e in present.items()}
    odd = minority(totals)
    if len(odd) * 2 >= len(totals):
        odd = []  # no majority to stand against: uneven splits, any rank could be the one
    return Problem("total_numel", odd, f"{op}: total input numel {tin} != total output numel {tout}")


def _cover(pairs: list[tuple[int, int]]) -> list[int]:
    """Fewest group ranks touching every disagreeing (sender, receiver) pair, greedily: the rank in
    most of them first (ties: the lower rank)."""
    left, out = set(pairs), []
    while left:
        count: dict[int, int] = {}
        for i, j in left:
            for r in {i, j}:
                count[r] = count.get(r, 0) + 1
        best = min(count, key=lambda r: (-count[r], r))
        out.append(best)
        left = {p for p in left if best not in p}
    return out


def _dtypes(present: Mapping[int, Entry], sib: Mapping[int, Entry]) -> Optional[Problem]:
    op = next(iter(present.values())).op

    def has_in(e: Entry) -> bool:
        return bool(e.in_sizes and e.in_dtypes)

    def has_out(e: Entry) -> bool:
        return bool(e.out_sizes and e.out_dtypes)

    odd = minority(
        _by(present, lambda e: sorted(set(e.in_dtypes)), has_in),
        _by(sib, lambda e: sorted(set(e.in_dtypes)), has_in),
    )
    if odd:
        return Problem("input_dtype", odd, f"{op}: input dtypes differ across ranks")
    odd = minority(
        _by(present, lambda e: sorted(set(e.out_dtypes)), has_out),
        _by(sib, lambda e: sorted(set(e.out_dtypes)), has_out),
    )
    if odd:
        return Problem("output_dtype", odd, f"{op}: output dtypes differ across ranks")
    if op not in KEEPS_DTYPE_EXEMPT:
        own = sorted(
            r
            for r, e in present.items()
            if e.in_dtypes
            and e.out_dtypes
            and e.in_sizes
            and e.out_sizes
            and set(e.in_dtypes) != set(e.out_dtypes)
        )
        if own and len(own) < len(present):
            return Problem(
                "output_dtype", own, f"{op}: output dtype differs from the input dtype on these ranks"
            )
    return None


def compare_one(
    present: Mapping[int, Entry], size: int, siblings: Optional[Mapping[int, Entry]] = None
) -> Optional[Problem]:
    """The first disagreement among the entries ranks recorded for one collective, or None.
    siblings: what the ranks of groups like this one recorded at the same sequence number, which
    only ever breaks a tie."""
    sib = siblings or {}
    per_rank = by_rank_groups({r: _describe(e) for r, e in present.items()})
    odd = minority(_by(present, lambda e: e.op), _by(sib, lambda e: e.op))
    if odd:
        return Problem("op_type", odd, "ranks entered different collectives", per_rank)
    sib = {r: e for r, e in sib.items() if e.op == next(iter(present.values())).op}
    for check in (lambda: _sizes(present, size, sib), lambda: _dtypes(present, sib)):
        p = check()
        if p:
            p.per_rank = per_rank
            return p
    return None


def compare_coalesced(present: Mapping[int, list[Entry]], size: int) -> Optional[Problem]:
    """Ranks' entries of one coalesced group: the same number of ops, each agreeing."""
    odd = minority({r: len(es) for r, es in present.items()})
    per_rank = by_rank_groups({r: [_describe(e) for e in es] for r, es in present.items()})
    if odd:
        return Problem(
            "coalesced_count", odd, "ranks put different numbers of ops into the coalesced group", per_rank
        )
    n = len(next(iter(present.values())))
    for i in range(n):
        p = compare_one({r: es[i] for r, es in present.items()}, size)
        if p:
            return Problem(
                f"coalesced_{p.kind}",
                p.culprits,
                f"op {i + 1} of {n} in the coalesced group: {p.detail}",
                per_rank,
            )
    return None


def state_problem(
    present: Mapping[int, Entry],
    completed: Callable[[Entry], bool],
    offset_ns: Optional[Mapping[int, int]] = None,
) -> Optional[Problem]:
    """NCCL only (gloo leaves every entry scheduled): a rank still `scheduled` while its peers
    started or completed never launched the collective; all entered and not all completed is a
    stall inside the collective."""
    per_rank = by_rank_groups({r: {"op": e.name, "state": e.state} for r, e in present.items()})
    done = {r for r, e in present.items() if completed(e)}
    if len(done) == len(present):
        return None
    states = {r: ("completed" if r in done else e.state) for r, e in present.items()}
    sched = sorted(r for r, s in states.items() if s == "scheduled")
    if sched and len(sched) < len(present):
        return Problem("state", sched, "scheduled on these ranks while their peers started it", per_rank)
    late, gap_s, limit_s, known = late_arrivals(present, offset_ns or {})
    if late:
        return Problem(
            "late",
            late,
            f"entered it {gap_s:.0f} s after the first rank, "
            + (
                f"past the {limit_s:.0f} s timeout of its peers"
                if known
                else "when its peers had long timed out"
            ),
            per_rank,
        )
    return Problem(
        "not_completed",
        sorted(r for r in present if r not in done),
        "entered by all, not completed",
        per_rank,
    )


LATE_WITHOUT_TIMEOUT_S = 60.0  # recorders before timeout_ms: NCCL's default timeout is 10 minutes


def late_arrivals(
    present: Mapping[int, Entry], offset_ns: Mapping[int, int]
) -> tuple[list[int], float, float, bool]:
    """Ranks (a minority) that entered a collective no rank completed only after their peers'
    timeout had run out: the straggler, seen in its own dump only because that dump was written
    later (a recorder that dumps each rank on its own timeout). Its peers had given up before it
    arrived, so the collective could never complete: it is the one that did not enter in time.
    Times are read on one clock (offset_ns, clocks.py): a node's clock ahead is not lateness.
    Returns (ranks, how late in s, the timeout in s, whether the dump recorded that timeout)."""
    times = {r: int_of(e.raw.get("time_created_ns"), 0) for r, e in present.items()}
    if len(times) < 2 or min(times.values()) <= 0:
        return [], 0.0, 0.0, False
    times = {r: t - offset_ns.get(r, 0) for r, t in times.items()}
    first = min(times, key=lambda r: (times[r], r))
    timeout_ms = int_of(present[first].raw.get("timeout_ms"), 0)
    limit_s = timeout_ms / 1000 if timeout_ms > 0 else LATE_WITHOUT_TIMEOUT_S
    late = sorted(r for r, t in times.items() if (t - times[first]) / 1e9 > limit_s)
    if not late or len(late) * 2 >= len(times):
        return [], 0.0, 0.0, False
    return late, (max(times[r] for r in late) - times[first]) / 1e9, limit_s, timeout_ms > 0
