"""Flight-recorder dumps: which collective did not every rank enter or complete (p2p ops are
matched in pgdoctor.diagnose.flight.p2p; the dump format is described in
pgdoctor.diagnose.flight.dump)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event
from pgdoctor.diagnose.flight.dump import (
    FlightReport,
    describe,
    dump_path,
    frames_of,
    int_of,
    make_event,
    member_list,
    pg_desc,
    pg_key,
)
from pgdoctor.diagnose.flight.p2p import analyze_p2p
from pgdoctor.model import Evidence


def _sig(e: Mapping[str, Any]) -> tuple[Any, ...]:
    return (e.get("profiling_name"), json.dumps(e.get("input_sizes"), default=str),
            json.dumps(e.get("input_dtypes"), default=str))


def _completed(e: Mapping[str, Any], last_completed: int) -> bool:
    return e.get("state") == "completed" or int_of(e.get("collective_seq_id")) <= last_completed


def analyze(rep: FlightReport, label: str) -> list[Event]:
    """One event per process group: the first collective (by sequence number) that not every
    rank entered (RUN281), that ranks entered with different ops or sizes (RUN282), or that all
    entered but not all completed (RUN283)."""
    per_pg: dict[str, dict[int, dict[int, Mapping[str, Any]]]] = {}
    last_done: dict[tuple[str, int], int] = {}
    desc: dict[str, str] = {}
    tracks_state: dict[int, bool] = {}
    for d in rep.dumps:
        tracks_state[d.rank] = any(isinstance(e, Mapping) and e.get("state") in ("started", "completed")
                                   for e in d.data["entries"])
        status = d.data.get("pg_status") or {}
        for e in d.data["entries"]:
            if not isinstance(e, Mapping) or e.get("is_p2p"):
                continue
            seq = int_of(e.get("collective_seq_id"))
            if seq < 0:
                continue
            key = pg_key(e)
            desc.setdefault(key, pg_desc(e))
            per_pg.setdefault(key, {}).setdefault(d.rank, {})[seq] = e
        for key in per_pg:
            st = status.get(key) if isinstance(status, Mapping) else None
            if isinstance(st, Mapping):
                last_done[(key, d.rank)] = int_of(st.get("last_completed_collective"))
    events: list[Event] = []
    dumped = {d.rank for d in rep.dumps}
    for key, by_rank in sorted(per_pg.items()):
        members = _members(rep, key)
        for r in members & dumped:
            by_rank.setdefault(r, {})  # dumped, but never entered a collective of this group
        no_dump = sorted(members - dumped)
        ranks = sorted(by_rank)
        if len(ranks) < 2 and not no_dump:
            continue
        entered = [s for s in by_rank.values() if s]
        lo = max(min(s) for s in entered)
        hi = max(max(s) for s in entered)
        found = False
        for seq in range(lo, hi + 1):
            present = {r: by_rank[r][seq] for r in ranks if seq in by_rank[r]}
            missing = [r for r in ranks if seq not in by_rank[r]]
            base = {"pg": key, "pg_desc": desc.get(key, ""), "seq": seq, "dump_ranks": ranks}
            if missing:
                sample = present[min(present)]
                frames = frames_of(sample)
                facts: dict[str, Any] = {
                         **base, "op": sample.get("profiling_name"), "input_sizes": sample.get("input_sizes"),
                         "input_dtypes": sample.get("input_dtypes"), "output_sizes": sample.get("output_sizes"),
                         "missing_ranks": missing, "present_ranks": sorted(present), "frames": frames,
                         "timeout_ms": sample.get("timeout_ms")}
                last: dict[str, Any] = {}
                for r in missing:
                    seqs = [s for s in by_rank[r] if s < seq]
                    if seqs:
                        le = by_rank[r][max(seqs)]
                        last[str(r)] = {"seq": max(seqs), "op": le.get("profiling_name"), "frames": frames_of(le, 2)}
                facts["missing_ranks_last_collective"] = last
                ev = [Evidence(f"rank {r}: seq {seq} {describe(present[r])} at {'; '.join(frames_of(present[r], 2))}",
                               file=dump_path(rep, r)) for r in sorted(present)[:3]]
                ev += [Evidence(f"rank {r}: no entry for seq {seq} (last: {last.get(str(r), {}).get('op', 'none')} "
                                f"seq {last.get(str(r), {}).get('seq', '-')})", file=dump_path(rep, r)) for r in missing[:3]]
                where = f" at {frames[0]}" if frames else ""
                msg = (f"process group {key} ({desc.get(key, '')}): ranks {missing} never entered {facts['op']} "
                       f"seq {seq} (sizes {facts['input_sizes']}, {facts['input_dtypes']}) that ranks "
                       f"{sorted(present)} wait in{where}")
                events.append(make_event(C.FR_RANKS_MISSING.code, label, msg, facts, ev, 1))
                found = True
                break
            sigs = {r: _sig(e) for r, e in present.items()}
            if len(set(sigs.values())) > 1:
                per_rank = {str(r): {"op": e.get("profiling_name"), "input_sizes": e.get("input_sizes"),
                                     "input_dtypes": e.get("input_dtypes"), "frames": frames_of(e, 2)}
                            for r, e in sorted(present.items())}
                groups: dict[tuple[Any, ...], list[int]] = {}
                for r, s in sigs.items():
                    groups.setdefault(s, []).append(r)
                majority = max(groups.values(), key=len)
                odd = sorted(r for r in ranks if r not in majority)
                facts = {**base, "per_rank": per_rank, "odd_ranks": odd,
                         "op": present[majority[0]].get("profiling_name")}
                ev = [Evidence(f"rank {r}: seq {seq} {describe(e)} at {'; '.join(frames_of(e, 2))}",
                               file=dump_path(rep, r)) for r, e in sorted(present.items())[:6]]
                msg = (f"process group {key} ({desc.get(key, '')}): at seq {seq} ranks entered different collectives: "
                       + "; ".join(f"rank {r} {v['op']} {v['input_sizes']}" for r, v in per_rank.items()))
                events.append(make_event(C.FR_OP_MISMATCH.code, label, msg, facts, ev, 0))
                found = True
                break
            # gloo leaves every entry "scheduled" and updates last_completed lazily: completion
            # is only judged for ranks whose recorder tracks state (NCCL).
            pending = [r for r, e in present.items() if tracks_state.get(r) and
                       not _completed(e, last_done.get((key, r), -1))]
            if pending:
                sample = present[pending[0]]
                facts = {**base, "op": sample.get("profiling_name"), "input_sizes": sample.get("input_sizes"),
                         "input_dtypes": sample.get("input_dtypes"), "not_completed_ranks": sorted(pending),
                         "frames": frames_of(sample)}
                ev = [Evidence(f"rank {r}: seq {seq} {describe(present[r])} state={present[r].get('state')}",
                               file=dump_path(rep, r)) for r in sorted(pending)[:4]]
                msg = (f"process group {key}: every rank entered {facts['op']} seq {seq} but ranks {sorted(pending)} "
                       "never completed it")
                events.append(make_event(C.FR_NOT_COMPLETED.code, label, msg, facts, ev, 1))
                found = True
                break
        # A few members without a dump most likely died; most of them missing means the user
        # gave only some ranks' dumps, which says nothing.
        if not found and no_dump and len(no_dump) <= max(1, len(members) // 2):
            events.append(_no_dump_event(rep, key, desc.get(key, ""), by_rank, hi, no_dump, label))
    return events + analyze_p2p(rep, label)


def _members(rep: FlightReport, key: str) -> set[int]:
    return set(member_list(rep, key))


def _no_dump_event(rep: FlightReport, key: str, desc: str, by_rank: Mapping[int, Mapping[int, Mapping[str, Any]]],
                   hi: int, no_dump: list[int], label: str) -> Event:
    """Members of the group with no dump at all: most often ranks that died before dumping."""
    present = {r: s[hi] for r, s in by_rank.items() if hi in s}
    sample = present[min(present)] if present else {}
    frames = frames_of(sample)
    facts: dict[str, Any] = {"pg": key, "pg_desc": desc, "seq": hi, "dump_ranks": sorted(by_rank),
                             "op": sample.get("profiling_name"), "input_sizes": sample.get("input_sizes"),
                             "input_dtypes": sample.get("input_dtypes"), "missing_ranks": no_dump,
                             "present_ranks": sorted(present), "no_dump_ranks": no_dump, "frames": frames}
    ev = [Evidence(f"rank {r}: last entered seq {hi} {describe(e)}", file=dump_path(rep, r))
          for r, e in sorted(present.items())[:3]]
    msg = (f"process group {key} ({desc}): ranks {no_dump} left no flight-recorder dump (they died before "
           f"dumping, or their dumps were not given); the others last entered {facts['op']} seq {hi}"
           + (f" at {frames[0]}" if frames else ""))
    return make_event(C.FR_RANKS_MISSING.code, label, msg, facts, ev, 1)
