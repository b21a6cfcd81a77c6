"""Dumps that hold counters but no entries: `_dump_fr_trace(includeCollectives=False)` (torch's own
header-only dump: pg_config and pg_status, no entries key), or dumps trimmed to their header. Each
rank's pg_status still
says how far the group got on it: `last_enqueued_collective` (issued), `last_started_collective`
(NCCL with timing on; -1 otherwise) and `last_completed_collective` (gloo also counts a collective
that timed out). The counters are sequence numbers of the group's collectives, so they compare
across ranks as the entries' `collective_seq_id` does:

- a rank whose last issued collective is behind its peers' never issued the next one, which its
  peers wait in (RUN281, kind `missing`);
- every rank issued it, and some started it while others did not: they never launched it
  (kind `state`);
- every rank issued it, and some completed it while others did not: the stall is inside the
  collective on those ranks (kind `not_completed`); only where starts are tracked (NCCL with
  timing), since gloo marks completion lazily.

Where any dump has entries, the entries say more and this module stays silent: an onlyActive dump
of a healthy job has none either, and its counters agree. A rank is compared in a group only where
it used it (issued at least one collective) and its own pg_config does not leave it out: a group
whose pg_status lists non-members (test writers do) would otherwise make them look behind.

torch keys pg_status by the rank's own `pg_id`, the number it gives each group it is a member of
in creation order (FlightRecorder's all_pg_status_, keyed by ProcessGroupNCCL's local id), not by
the group's name, which pg_config and the entries use: rank 5 of TP groups "1"-"4" and DP groups
"5"-"6" calls its groups "0", "3", "6" by ids 0, 1, 2. Where the names are new_group's counter
(decimal), creation order is their numeric order, so id k is the rank's k-th group by name
(`_names_by_id`); where they are not, or where the keys are names already (as some writers key
them), they are read as names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pgdoctor.checks.codes import flight as F
from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.flight.dump import (
    Dump,
    FlightReport,
    aliases,
    config_entries,
    dump_path,
    pg_name,
    pg_status,
)
from pgdoctor.diagnose.flight.local_ids import decimal
from pgdoctor.diagnose.flight.order import Fault, ranks_text
from pgdoctor.model import Evidence

Counters = tuple[int, int, int]  # last enqueued, started, completed (-1: none / not tracked)


def _names_by_id(d: Dump, ids: list[str]) -> dict[str, str]:
    """pg_status key -> group name on this rank, where the keys are local ids (module doc)."""
    members = [name for name, ranks in config_entries(d) if not ranks or d.rank in ranks]
    nums = [decimal(name) for name in members]
    if not ids or not members or any(n is None for n in nums):
        return {}  # no config, or hashed names: their order is not creation order
    ordered = [str(n) for n in sorted(n for n in nums if n is not None)]
    if any(decimal(k) is None or int(k) >= len(ordered) for k in ids) or set(ids) <= set(members):
        return {}  # more keys than groups, or keys that are names already
    return {k: ordered[int(k)] for k in ids}


def counters(rep: FlightReport) -> dict[str, dict[int, Counters]]:
    """group key -> rank -> its pg_status counters."""
    alias = aliases(rep)
    out: dict[str, dict[int, Counters]] = {}
    for d in rep.dumps:
        left_out = {name for name, ranks in config_entries(d) if ranks and d.rank not in ranks}
        status = pg_status(d)
        names = _names_by_id(d, list(status))
        for pg_id, got in status.items():
            name = names.get(pg_id, pg_id)
            if name in left_out or got[0] < 1:
                continue  # not a member, or never used on this rank: counters say nothing of it
            out.setdefault(alias.get((d.rank, name), name), {})[d.rank] = got
    return out


def _fault(
    rep: FlightReport, pg: str, kind: str, seq: int, culprits: list[int], by_rank: Mapping[int, Counters]
) -> Fault:
    waiters = sorted(r for r in by_rank if r not in culprits)
    facts: dict[str, Any] = {
        "pg": pg_name(pg),
        "seq": seq,
        "kind": kind,
        "source": "pg_status",
        "present_ranks": sorted(r for r in by_rank if by_rank[r][0] >= seq),
        "per_rank": {
            str(r): {"last_enqueued": c[0], "last_started": c[1], "last_completed": c[2]}
            for r, c in sorted(by_rank.items())[:16]
        },
    }
    if pg != pg_name(pg):
        facts["pg_ranks"] = pg.split("|", 1)[1]
    where = (
        f"process group {pg_name(pg)} seq {seq} (from the dumps' pg_status counters: they hold no entries)"
    )
    if kind == "missing":
        facts["missing_ranks"] = culprits
        code = C.FR_RANKS_MISSING.code
        last = max(by_rank[r][0] for r in culprits)
        msg = (
            f"{where}: {ranks_text(culprits)} never issued it (last issued: seq {last}); "
            f"{ranks_text(waiters)} issued it and wait"
        )
    elif kind == "state":
        facts["not_started_ranks"] = culprits
        code = F.FR_NOT_STARTED.code
        msg = (
            f"{where}: {ranks_text(culprits)} issued it but never started it, while {ranks_text(waiters)} did"
        )
    else:
        facts["not_completed_ranks"] = culprits
        code = C.FR_NOT_COMPLETED.code
        msg = f"{where}: every rank issued it but {ranks_text(culprits)} never completed it"
        waiters = sorted(by_rank)
    ev = [
        Evidence(
            f"rank {r}: pg_status last_enqueued {by_rank[r][0]}, last_started {by_rank[r][1]}, "
            f"last_completed {by_rank[r][2]}",
            file=dump_path(rep, r),
        )
        for r in (culprits[:3] + [w for w in waiters if w not in culprits][:2])
    ]
    return Fault(code, facts, culprits, waiters, msg, ev, 1)


def status_faults(rep: FlightReport) -> list[Fault]:
    if any(d.data["entries"] for d in rep.dumps):
        return []
    out: list[Fault] = []
    for pg, by_rank in sorted(counters(rep).items()):
        if len(by_rank) < 2:
            continue  # one rank alone compares with nothing
        issued = {r: c[0] for r, c in by_rank.items()}
        top = max(issued.values())
        if top < 0:
            continue
        if min(issued.values()) < top:
            low = min(issued.values())
            out.append(
                _fault(rep, pg, "missing", low + 1, sorted(r for r in issued if issued[r] == low), by_rank)
            )
            continue
        started = {r: c[1] for r, c in by_rank.items()}
        if max(started.values()) >= top and min(started.values()) < top:
            out.append(_fault(rep, pg, "state", top, sorted(r for r in started if started[r] < top), by_rank))
            continue
        done = {r: c[2] for r, c in by_rank.items()}
        # Completion is only compared where starts are tracked (NCCL with timing): gloo leaves
        # last_started at -1 and marks a collective completed lazily, so a healthy job's ranks
        # dumped one after another differ by one there.
        if max(started.values()) >= 0 and min(done.values()) < top <= max(done.values()):
            out.append(
                _fault(rep, pg, "not_completed", top, sorted(r for r in done if done[r] < top), by_rank)
            )
    return out
