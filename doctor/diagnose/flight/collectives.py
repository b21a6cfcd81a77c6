"""Flight-recorder dumps -> faults: per process group, the first collective (by sequence number,
never by record id or by the order dumps were read) that not every member entered, that members
entered differently, or that did not start or complete; send/recv pairs (pgdoctor.diagnose.flight.p2p);
members that left no dump. Every independent fault is kept, and they are ordered by which one
explains the others (pgdoctor.diagnose.flight.order).

Sequence numbers are compared from the latest first record of any rank in that group: a ring
buffer that wrapped lost the earlier ones. Gaps are normal (`monitored_barrier` consumes
sequence numbers that no rank records).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Optional

from pgdoctor.checks.codes import flight as F
from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.flight.compare import Problem, compare_coalesced, compare_one, state_problem
from pgdoctor.diagnose.flight.dump import FlightReport, dump_path, frames_of, int_of, pg_name
from pgdoctor.diagnose.flight.entries import Entry, Table, table_of
from pgdoctor.diagnose.flight.groups import Groups, build, last_completed
from pgdoctor.diagnose.flight.order import Fault, findings, ranks_text
from pgdoctor.diagnose.flight.p2p import p2p_faults
from pgdoctor.diagnose.flight.status import status_faults
from pgdoctor.model import Evidence, Finding

KIND_CODE = {
    "missing": C.FR_RANKS_MISSING.code,
    "op_type": C.FR_OP_MISMATCH.code,
    "not_completed": C.FR_NOT_COMPLETED.code,
    "late": C.FR_RANKS_MISSING.code,
    "input_size": F.FR_SIZE_MISMATCH.code,
    "output_size": F.FR_SIZE_MISMATCH.code,
    "total_numel": F.FR_SIZE_MISMATCH.code,
    "input_dtype": F.FR_DTYPE_MISMATCH.code,
    "output_dtype": F.FR_DTYPE_MISMATCH.code,
    "state": F.FR_NOT_STARTED.code,
    "no_dump": F.FR_DUMP_MISSING.code,
}
KIND_TEXT = {
    "op_type": "entered a different collective than the other ranks",
    "input_size": "disagree on input sizes",
    "output_size": "disagree on output sizes",
    "total_numel": "disagree on total numel",
    "input_dtype": "disagree on input dtypes",
    "output_dtype": "disagree on output dtypes",
}


def _base(pg: str, t: Table, seq: int, sample: Optional[Entry]) -> dict[str, Any]:
    facts: dict[str, Any] = {"pg": pg_name(pg), "pg_desc": t.desc.get(pg, ""), "seq": seq}
    if pg != pg_name(pg):  # one name for several groups (split_group): which one
        facts["pg_ranks"] = pg.split("|", 1)[1]
    if sample is not None:
        facts.update(
            op=sample.name,
            input_sizes=sample.in_sizes,
            input_dtypes=sample.in_dtypes,
            output_sizes=sample.out_sizes,
            output_dtypes=sample.out_dtypes,
            frames=frames_of(sample.raw),
            timeout_ms=sample.raw.get("timeout_ms"),
        )
    return facts


def _where(facts: Mapping[str, Any]) -> str:
    words = [w for w in (facts.get("pg_desc"), facts.get("pg_ranks")) if w not in (None, "", "undefined")]
    if facts.get("pg_ranks"):
        words[-1] = f"ranks {words[-1]}"
    desc = f" ({', '.join(words)})" if words else ""
    return f"process group {facts['pg']}{desc} seq {facts['seq']} {facts.get('op') or ''}".rstrip()


def _missing_fault(
    rep: FlightReport,
    pg: str,
    t: Table,
    g: Groups,
    seq: int,
    present: Mapping[int, list[Entry]],
    missing: list[int],
) -> Fault:
    sample = (
        next(e for r in sorted(present) for e in present[r] if not e.marker)
        if any(not e.marker for es in present.values() for e in es)
        else None
    )
    facts = _base(pg, t, seq, sample)
    stop = _stopped_before(t, pg, seq, missing, present)
    if stop is not None and sample is not None:
        # Sequence numbers are consecutive within a group and a rank runs its group's collectives
        # in order: the peers issued `stop` too and wait in it; their wrapped buffers only show
        # what they queued after it, so which collective `stop` was is not known.
        facts = {
            **_base(pg, t, stop, None),
            "frames": facts.get("frames"),
            "timeout_ms": facts.get("timeout_ms"),
            "recorded_from": {"seq": seq, "op": sample.name},
        }
    no_dump = [r for r in missing if r not in g.dumped]
    coalesced = any(
        len([e for e in es if not e.marker]) > 1 or any(e.coalesced for e in es) for es in present.values()
    )
    kind = "no_dump" if no_dump and len(no_dump) == len(missing) else "missing"
    code = F.FR_COALESCED_MISMATCH.code if coalesced and kind == "missing" else KIND_CODE[kind]
    last: dict[str, Any] = {}
    by_rank = t.by_pg.get(pg, {})
    for r in missing[:16]:  # enough to see what they did; a thousand would drown the facts
        seqs = [s for s in by_rank.get(r, {}) if s < seq]
        if seqs:
            le = by_rank[r][max(seqs)][0]
            last[str(r)] = {"seq": max(seqs), "op": le.name, "frames": frames_of(le.raw, 2)}
        elif (other := t.last.get(r)) is not None and other.pg != pg:
            # Nothing of this group before: where the rank went instead (another group's
            # collective it waits in, as in a deadlock between two groups) is the lead.
            last[str(r)] = {
                "pg": other.pg,
                "seq": other.seq,
                "op": other.name,
                "frames": frames_of(other.raw, 2),
            }
    facts.update(
        kind="coalesced_missing" if code == F.FR_COALESCED_MISMATCH.code else kind,
        missing_ranks=missing,
        present_ranks=sorted(present),
        missing_ranks_last_collective=last,
    )
    if no_dump:
        facts["no_dump_ranks"] = no_dump
        _note_cut(rep, facts, no_dump)
    where = f" at {facts['frames'][0]}" if facts.get("frames") else ""
    if kind == "no_dump":
        msg = (
            f"{_absent_text(rep, missing)}; in "
            f"{_where(facts)} the last collective of the group, {ranks_text(sorted(present))} entered "
            f"it{where}"
        )
    else:
        msg = (
            f"{_where(facts)}: {ranks_text(missing)} never entered it"
            + (" (a coalesced group)" if code == F.FR_COALESCED_MISMATCH.code else "")
            + f"; {_wait(sorted(present))} in it{where}"
            + _elsewhere(last)
            + (
                f"; the peers' ring buffers wrapped and begin at seq {seq} {sample.name if sample else ''}"
                if "recorded_from" in facts
                else ""
            )
            + (f"; {ranks_text(no_dump)} left no dump" if no_dump else "")
        )
    ev = [
        Evidence(f"rank {r}: seq {seq} {_desc(present[r][0])}", file=dump_path(rep, r))
        for r in sorted(present)[:3]
    ]
    ev += [
        Evidence(
            f"rank {r}: " + (f"its dump does not read: {rep.cut[r]}" if r in rep.cut else "no dump")
            if r in no_dump
            else f"rank {r}: no entry for seq {seq} ({_last_text(last.get(str(r)))})",
            file=dump_path(rep, r),
        )
        for r in missing[:3]
    ]
    # A group's last collective seen beside a rank with no dump may have completed long ago: its
    # time says nothing about what the ranks wait in, unless it is the last thing they entered.
    stuck = all(
        (last_of := t.last.get(r)) is not None and (last_of.pg, last_of.seq) == (pg, seq) for r in present
    )
    return Fault(
        code,
        facts,
        missing,
        sorted(present),
        msg,
        ev,
        1,
        0 if kind == "no_dump" and not stuck else _issued(t, present),
        stuck,
    )


def _note_cut(rep: FlightReport, facts: dict[str, Any], ranks: list[int]) -> None:
    cut = [r for r in ranks if r in rep.cut]
    if cut:
        facts["cut_dump_ranks"] = cut
        if len(cut) == len(ranks):
            facts["kind"] = "cut_dump"


def _absent_text(rep: FlightReport, ranks: list[int], world: int = 0) -> str:
    """Why these ranks' collectives are unknown: no dump at all (died or aborted before dumping),
    or a dump that is there but does not read to its end (the rank reached its dump)."""
    of = f" of the {world} ranks" if world else ""
    gone = [r for r in ranks if r not in rep.cut]
    cut = [r for r in ranks if r in rep.cut]
    parts = []
    if gone:
        parts.append(f"{ranks_text(gone)}{of} left no flight-recorder dump (died or aborted before dumping)")
    if cut:
        head = ranks_text(cut) + ("" if gone else of)
        parts.append(f"{head} left a dump that is cut off (it does not read to its end)")
    return "; ".join(parts)


def _elsewhere(last: Mapping[str, Mapping[str, Any]]) -> str:
    away = [(int(r), v) for r, v in last.items() if "pg" in v]
    if not away:
        return ""
    r, v = away[0]
    more = f" (and {len(away) - 1} more)" if len(away) > 1 else ""
    return f"; rank {r}'s last collective is {v['op']} seq {v['seq']} of process group {v['pg']}{more}"


def _last_text(last: Mapping[str, Any] | None) -> str:
    if not last:
        return "no earlier collective of the group recorded"
    where = f" in process group {last['pg']}" if "pg" in last else ""
    return f"last: {last['op']} seq {last['seq']}{where}"


def _stopped_before(
    t: Table, pg: str, seq: int, missing: list[int], present: Mapping[int, list[Entry]]
) -> Optional[int]:
    """The first sequence number the missing ranks never issued, when it lies before everything
    the peers' buffers still hold (a rank far behind peers that queued hundreds of collectives
    since): None when the peers' buffers show it themselves."""
    by_rank = t.by_pg.get(pg, {})
    lasts = [max(by_rank[m]) for m in missing if by_rank.get(m)]
    if not lasts or len(lasts) != len(missing) or max(lasts) + 1 >= seq:
        return None
    stop = min(lasts) + 1
    held = [min(by_rank[r]) for r in present if by_rank.get(r)]
    return stop if held and min(held) > stop else None


def _created_ns(t: Table, present: Mapping[int, list[Entry]]) -> list[int]:
    """When each entry was created, on one clock (Table.ns); the unknown (0) left out."""
    times = [t.ns(r, int_of(e.raw.get("time_created_ns"), 0)) for r, es in present.items() for e in es]
    return [x for x in times if x > 0]


def _issued(t: Table, present: Mapping[int, list[Entry]]) -> int:
    return min(_created_ns(t, present), default=0)


def _wait(ranks: list[int]) -> str:
    return f"{ranks_text(ranks)} {'waits' if len(ranks) == 1 else 'wait'}"


def _desc(e: Entry) -> str:
    return f"{e.name} in={e.in_sizes} out={e.out_sizes} dtypes={e.in_dtypes}->{e.out_dtypes} state={e.state}"


def _problem_fault(
    rep: FlightReport, pg: str, t: Table, seq: int, present: Mapping[int, list[Entry]], p: Problem
) -> Fault:
    firsts = {r: es[0] for r, es in present.items()}
    ok = [r for r in sorted(present) if r not in p.culprits]
    facts = _base(pg, t, seq, firsts[ok[0]] if ok else firsts[min(firsts)])
    coalesced = p.kind.startswith("coalesced_")
    code = F.FR_COALESCED_MISMATCH.code if coalesced else KIND_CODE[p.kind]
    facts.update(kind=p.kind, per_rank=p.per_rank, present_ranks=sorted(present), detail=p.detail)
    tier = 0
    if p.kind in ("state", "not_completed", "late"):
        name = {"not_completed": "not_completed_ranks", "state": "not_started_ranks"}.get(
            p.kind, "late_ranks"
        )
        facts[name] = p.culprits
        tier = 1
    else:
        facts["odd_ranks"] = p.culprits
    if p.kind == "not_completed":
        msg = f"{_where(facts)}: every rank entered it but {ranks_text(p.culprits)} never completed it"
    elif p.kind == "late":
        msg = f"{_where(facts)}: {ranks_text(p.culprits)} {p.detail} ({_wait(ok)} in it and gave up first)"
    elif p.kind == "state":
        started = [r for r in sorted(present) if r not in p.culprits]
        msg = (
            f"{_where(facts)}: {ranks_text(p.culprits)} scheduled it but never started it, while "
            f"{_wait(started)} in it, started"
        )
    elif not ok and p.kind in KIND_TEXT:
        # A tie nothing breaks (compare.minority): every member is named, and the message says so.
        facts["tie"] = True
        verb = "entered different collectives" if p.kind == "op_type" else KIND_TEXT.get(p.kind, "disagree")
        msg = (
            f"{_where(facts)}: {ranks_text(p.culprits)} {verb}, as many ranks on each side: nothing in "
            "these dumps says which side is odd (no sibling group recorded this collective)"
        )
    else:
        who = ranks_text(p.culprits) if p.culprits else "the ranks"
        verb = KIND_TEXT.get(p.kind.removeprefix("coalesced_"), "disagree")
        if len(p.culprits) == 1:
            verb = verb.replace("disagree", "disagrees")
        msg = f"{_where(facts)}: {who} {verb}" + (f" ({p.detail})" if p.kind != "op_type" else "")
        shown = sorted(p.culprits)[:2] + ok[:1]
        msg += ": " + "; ".join(f"rank {r} {_desc(firsts[r])}" for r in shown)
    ev = [
        Evidence(f"rank {r}: seq {seq} {_desc(firsts[r])}", file=dump_path(rep, r))
        for r in (sorted(p.culprits)[:3] + ok[:2])
    ]
    # A stall inside the collective holds every rank in it: they are its waiters too, so the ranks
    # of other groups that wait for them are explained by it.
    waiters = sorted(present) if p.kind == "not_completed" else ok
    return Fault(code, facts, p.culprits or sorted(present), waiters, msg, ev, tier, _issued(t, present))


def _lost(t: Table, rank: int, present: Mapping[int, list[Entry]]) -> bool:
    """The rank's ring buffer wrapped and begins after the collective was issued: it cannot show
    it either way (busy in other groups since), so it is not counted as missing."""
    if not t.wrapped.get(rank) or rank not in t.first_ns:
        return False
    issued = _created_ns(t, present)
    return bool(issued) and t.first_ns[rank] > max(issued)


def _completed_any(tables: Iterable[Mapping[int, list[Entry]]]) -> bool:
    """Some single collective's entry says "completed" (NCCL's state; gloo leaves every entry
    scheduled). The ops of a coalesced group are not read: their states are not the group's."""
    return any(
        len(es) == 1 and not es[0].coalesced and es[0].state == "completed"
        for by in tables
        for es in by.values()
    )


def _siblings(t: Table, g: Groups, pg: str, seq: int) -> dict[int, Entry]:
    """The single entries that the ranks of groups like pg (same description, same size, no rank in
    common: the other TP pairs of a TP group) recorded at the same sequence number."""
    members, desc = g.of(pg), t.desc.get(pg, "")
    out: dict[int, Entry] = {}
    for other, by_rank in t.by_pg.items():
        m = g.of(other)
        if other == pg or t.desc.get(other, "") != desc or len(m) != len(members) or m & members:
            continue
        for r, by_seq in by_rank.items():
            es = [e for e in by_seq.get(seq, []) if not e.marker]
            if len(es) == 1:
                out[r] = es[0]
    return out


def _group_fault(
    rep: FlightReport, pg: str, t: Table, g: Groups, partial: bool, done: Mapping[tuple[int, str], int]
) -> Optional[Fault]:
    by_rank = t.by_pg[pg]
    members = g.of(pg)
    if len(members) < 2:
        return None
    size = len(members)

    # A wrapped ring may begin inside a coalesced group: where its oldest sequence number is such a
    # group on some rank, that number is not compared.
    def cut(r: int, first: int) -> bool:
        return t.cut.get(r) == (pg, first) and any(
            len(es) > 1 or any(e.coalesced for e in es) for b in by_rank.values() for es in [b.get(first, [])]
        )

    start = max(min(s) + cut(r, min(s)) for r, s in by_rank.items() if s)
    seqs = sorted({s for by_seq in by_rank.values() for s in by_seq if s >= start})
    # NCCL completes a collective only with every member in it: a member whose dump holds nothing of
    # a group its peers completed collectives in recorded nothing there (its recorder was off), and
    # a collective completed without a member's entry lost that entry; neither is a rank missing.
    blind = _completed_any(by_rank.values())
    for seq in seqs:
        present = {r: by_rank[r][seq] for r in sorted(by_rank) if seq in by_rank[r]}
        if _completed_any([present]):
            missing = []
        else:
            # A rank with no dump can only be missed at the end: its own earlier entries are unknown.
            missing = sorted(
                m
                for m in members & g.dumped
                if m not in present and not (blind and m not in by_rank) and not _lost(t, m, present)
            )
        if missing:
            return _missing_fault(rep, pg, t, g, seq, present, missing)
        ops = {r: [e for e in es if not e.marker] for r, es in present.items()}
        if not any(ops.values()):
            continue
        coalesced = any(len(es) > 1 or len(es) != len(present[r]) for r, es in ops.items())
        p = (
            compare_coalesced(ops, size)
            if coalesced
            else compare_one({r: es[0] for r, es in ops.items()}, size)
        )
        if p and not coalesced:
            # Only now (a fault, so once per group) the sibling groups that break a tie are read.
            p = compare_one({r: es[0] for r, es in ops.items()}, size, _siblings(t, g, pg, seq)) or p
        if p:
            return _problem_fault(rep, pg, t, seq, present, p)
        if any(t.tracks_state.get(r) for r in present):

            def completed(e: Entry) -> bool:
                pg_id = str(e.raw.get("pg_id", e.pg))
                return e.state == "completed" or e.seq <= done.get((e.rank, pg_id), -1)

            firsts = {r: es[-1] for r, es in present.items()}
            sp = state_problem(firsts, completed, t.offset_ns)
            absent = sorted(members - g.dumped)
            if sp and sp.kind == "not_completed" and absent and not partial:
                # Every rank that dumped is in it and none completed it: the members that left no
                # dump (died, aborted) are the ones they wait for.
                return _missing_fault(rep, pg, t, g, seq, present, absent)
            if sp:
                return _problem_fault(rep, pg, t, seq, present, sp)
    no_dump = sorted(members - g.dumped)
    if no_dump and seqs and not partial:
        last = seqs[-1]
        return _missing_fault(
            rep, pg, t, g, last, {r: by_rank[r][last] for r in sorted(by_rank) if last in by_rank[r]}, no_dump
        )
    return None


def _dump_missing_fault(rep: FlightReport, g: Groups, others_agree: bool) -> Fault:
    nd = g.no_dump
    facts: dict[str, Any] = {
        "kind": "no_dump",
        "no_dump_ranks": nd,
        "missing_ranks": nd,
        "dump_ranks": sorted(g.dumped),
        "world_size": len(g.world),
    }
    _note_cut(rep, facts, nd)
    agree = "agree with each other" if others_agree else "show the faults above"
    msg = f"{_absent_text(rep, nd, len(g.world))}; the {len(g.dumped)} dumps that exist {agree}"
    return Fault(F.FR_DUMP_MISSING.code, facts, nd, [], msg, [], 2)


def faults(rep: FlightReport) -> list[Fault]:
    t = table_of(rep)
    g = build(rep, t)
    # Most of the world without a dump: the user gave some ranks' dumps, which says nothing about the rest.
    partial = len(g.no_dump) > len(g.world) // 2
    done = last_completed(rep)
    out = [f for pg in sorted(t.by_pg) if (f := _group_fault(rep, pg, t, g, partial, done))]
    out += p2p_faults(rep, g)
    out += status_faults(rep)
    if g.no_dump and not partial and not any(set(g.no_dump) <= set(f.culprits) for f in out):
        out.append(_dump_missing_fault(rep, g, others_agree=not out))
    return out


def analyze(rep: FlightReport, label: str = "") -> list[Finding]:
    """The findings of these dumps, root cause first (label: where they came from, for messages)."""
    return findings(faults(rep))
