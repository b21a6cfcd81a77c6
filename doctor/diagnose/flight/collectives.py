"""Flight-recorder dumps: which collective did not every rank enter or complete.

A dump is what ProcessGroupNCCL/gloo's FlightRecorder writes per rank (pickle via
`torch._C._distributed_c10d._dump_fr_trace()`, or JSON via `_dump_fr_trace_json()`; on a
watchdog timeout the files TORCH_FR_DUMP_TEMP_FILE<rank>): {"version", "pg_config": {name:
{"name","desc","ranks"}}, "pg_status": {pg_id: {"last_enqueued_collective", ...}}, "entries":
[{"record_id", "pg_id", "process_group": (id, desc), "collective_seq_id", "p2p_seq_id",
"profiling_name": "nccl:all_reduce", "input_sizes", "input_dtypes", "output_sizes",
"output_dtypes", "state": "scheduled"|"started"|"completed", "timeout_ms", "is_p2p", "frames":
[{"name","filename","line"}]}]}. The rank is not in the dump: it comes from the file name's
trailing number, as torch names them. Pickles go through pgdoctor.diagnose.flight.safe_pickle only.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event
from pgdoctor.diagnose.flight import safe_pickle
from pgdoctor.model import Evidence

MAX_DUMP_BYTES = 256 << 20
_RANK_IN_NAME = re.compile(r"(\d+)(?:\.[A-Za-z]+)*$")
_TORCH_FRAME = re.compile(r"[/\\]torch[/\\](?:distributed|nn[/\\]parallel|_dynamo|utils)[/\\]")


class DumpError(ValueError):
    pass


@dataclass
class Dump:
    path: str
    rank: int
    data: dict[str, Any]


@dataclass
class FlightReport:
    dumps: list[Dump] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def looks_like_dump(path: str) -> bool:
    """A pickle, or JSON whose head has the flight recorder's keys: not a log to scan."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    if head[:1] == b"\x80":
        return True
    return head.lstrip()[:1] == b"{" and b'"entries"' in head and (b'"pg_config"' in head or b'"comm_lib_version"' in head)


def load_dump(path: str) -> dict[str, Any]:
    size = os.path.getsize(path)
    if size > MAX_DUMP_BYTES:
        raise DumpError(f"{path}: {size} bytes is too large for a flight-recorder dump")
    with open(path, "rb") as fh:
        raw = fh.read()
    if raw[:1] == b"\x80":
        try:
            data = safe_pickle.loads(raw)
        except Exception as exc:  # a user's file: any failure to read is a skip, never a crash
            raise DumpError(f"{path}: {exc}") from None
    else:
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise DumpError(f"{path}: neither a pickle nor JSON ({type(exc).__name__})") from None
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        raise DumpError(f"{path}: not a flight-recorder dump (no entries list)")
    return data


def read_dumps(paths: Sequence[str]) -> FlightReport:
    """Every dump under these directories (or files); unreadable files are listed, not fatal."""
    files: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, names in os.walk(p):
                dirs.sort()
                files.extend(os.path.join(root, n) for n in sorted(names))
        elif os.path.isfile(p):
            files.append(p)
        else:
            raise DumpError(f"no such flight-recorder directory or file: {p}")
    rep = FlightReport()
    used_ranks: set[int] = set()
    for i, f in enumerate(files):
        try:
            data = load_dump(f)
        except (DumpError, OSError) as exc:
            rep.skipped.append(str(exc))
            continue
        m = _RANK_IN_NAME.search(os.path.basename(f))
        rank = int(m.group(1)) if m else i
        if rank in used_ranks:
            # torch writes the same trace as pickle and JSON; the JSON form has no Python
            # frames, so keep whichever of the two carries them.
            prev = next(d for d in rep.dumps if d.rank == rank)
            if _has_frames(data) and not _has_frames(prev.data):
                prev.path, prev.data = f, data
            continue
        used_ranks.add(rank)
        rep.dumps.append(Dump(f, rank, data))
    rep.dumps.sort(key=lambda d: d.rank)
    return rep


def _has_frames(data: Mapping[str, Any]) -> bool:
    return any(isinstance(e, Mapping) and e.get("frames") for e in data.get("entries", []))


def _int(v: Any, default: int = -1) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


def _frames(entry: Mapping[str, Any], n: int = 4) -> list[str]:
    out = []
    for fr in entry.get("frames") or []:
        if not isinstance(fr, Mapping):
            continue
        fn = str(fr.get("filename", ""))
        if _TORCH_FRAME.search(fn):
            continue
        out.append(f"{fn}:{fr.get('line', '?')} in {fr.get('name', '?')}")
        if len(out) >= n:
            break
    return out


def _pg_key(e: Mapping[str, Any]) -> str:
    pg = e.get("process_group")
    if isinstance(pg, (list, tuple)) and pg:
        return str(pg[0])
    return str(e.get("pg_id", "0"))


def _pg_desc(e: Mapping[str, Any]) -> str:
    pg = e.get("process_group")
    if isinstance(pg, (list, tuple)) and len(pg) > 1:
        return str(pg[1])
    return ""


def _sig(e: Mapping[str, Any]) -> tuple[Any, ...]:
    return (e.get("profiling_name"), json.dumps(e.get("input_sizes"), default=str),
            json.dumps(e.get("input_dtypes"), default=str))


def _describe(e: Mapping[str, Any]) -> str:
    return f"{e.get('profiling_name')} sizes={e.get('input_sizes')} dtypes={e.get('input_dtypes')}"


def _completed(e: Mapping[str, Any], last_completed: int) -> bool:
    return e.get("state") == "completed" or _int(e.get("collective_seq_id")) <= last_completed


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
            seq = _int(e.get("collective_seq_id"))
            if seq < 0:
                continue
            key = _pg_key(e)
            desc.setdefault(key, _pg_desc(e))
            per_pg.setdefault(key, {}).setdefault(d.rank, {})[seq] = e
        for key in per_pg:
            st = status.get(key) if isinstance(status, Mapping) else None
            if isinstance(st, Mapping):
                last_done[(key, d.rank)] = _int(st.get("last_completed_collective"))
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
                frames = _frames(sample)
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
                        last[str(r)] = {"seq": max(seqs), "op": le.get("profiling_name"), "frames": _frames(le, 2)}
                facts["missing_ranks_last_collective"] = last
                ev = [Evidence(f"rank {r}: seq {seq} {_describe(present[r])} at {'; '.join(_frames(present[r], 2))}",
                               file=_dump_path(rep, r)) for r in sorted(present)[:3]]
                ev += [Evidence(f"rank {r}: no entry for seq {seq} (last: {last.get(str(r), {}).get('op', 'none')} "
                                f"seq {last.get(str(r), {}).get('seq', '-')})", file=_dump_path(rep, r)) for r in missing[:3]]
                where = f" at {frames[0]}" if frames else ""
                msg = (f"process group {key} ({desc.get(key, '')}): ranks {missing} never entered {facts['op']} "
                       f"seq {seq} (sizes {facts['input_sizes']}, {facts['input_dtypes']}) that ranks "
                       f"{sorted(present)} wait in{where}")
                events.append(_event(C.FR_RANKS_MISSING.code, label, msg, facts, ev, 1))
                found = True
                break
            sigs = {r: _sig(e) for r, e in present.items()}
            if len(set(sigs.values())) > 1:
                per_rank = {str(r): {"op": e.get("profiling_name"), "input_sizes": e.get("input_sizes"),
                                     "input_dtypes": e.get("input_dtypes"), "frames": _frames(e, 2)}
                            for r, e in sorted(present.items())}
                groups: dict[tuple[Any, ...], list[int]] = {}
                for r, s in sigs.items():
                    groups.setdefault(s, []).append(r)
                majority = max(groups.values(), key=len)
                odd = sorted(r for r in ranks if r not in majority)
                facts = {**base, "per_rank": per_rank, "odd_ranks": odd,
                         "op": present[majority[0]].get("profiling_name")}
                ev = [Evidence(f"rank {r}: seq {seq} {_describe(e)} at {'; '.join(_frames(e, 2))}",
                               file=_dump_path(rep, r)) for r, e in sorted(present.items())[:6]]
                msg = (f"process group {key} ({desc.get(key, '')}): at seq {seq} ranks entered different collectives: "
                       + "; ".join(f"rank {r} {v['op']} {v['input_sizes']}" for r, v in per_rank.items()))
                events.append(_event(C.FR_OP_MISMATCH.code, label, msg, facts, ev, 0))
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
                         "frames": _frames(sample)}
                ev = [Evidence(f"rank {r}: seq {seq} {_describe(present[r])} state={present[r].get('state')}",
                               file=_dump_path(rep, r)) for r in sorted(pending)[:4]]
                msg = (f"process group {key}: every rank entered {facts['op']} seq {seq} but ranks {sorted(pending)} "
                       "never completed it")
                events.append(_event(C.FR_NOT_COMPLETED.code, label, msg, facts, ev, 1))
                found = True
                break
        # A few members without a dump most likely died; most of them missing means the user
        # gave only some ranks' dumps, which says nothing.
        if not found and no_dump and len(no_dump) <= max(1, len(members) // 2):
            events.append(_no_dump_event(rep, key, desc.get(key, ""), by_rank, hi, no_dump, label))
    from pgdoctor.diagnose.flight.p2p import analyze_p2p  # a module of its own; imports this one

    return events + analyze_p2p(rep, label)


def member_list(rep: FlightReport, key: str) -> list[int]:
    """Global ranks of a process group in group-rank order, from pg_config ("ranks": "[0, 2, 4]");
    torch 2.13's gloo dumps key the default group by its empty name, so a single entry is taken
    as that group."""
    for d in rep.dumps:
        cfg = d.data.get("pg_config")
        if not isinstance(cfg, Mapping):
            continue
        entry = cfg.get(key)
        if entry is None and len(cfg) == 1 and key == "0":
            entry = next(iter(cfg.values()))
        if isinstance(entry, Mapping):
            raw = entry.get("ranks")
            try:
                ranks = json.loads(raw) if isinstance(raw, str) else raw
                return [int(r) for r in ranks or ()]
            except (TypeError, ValueError, json.JSONDecodeError):
                continue
    return []


def _members(rep: FlightReport, key: str) -> set[int]:
    return set(member_list(rep, key))


def _no_dump_event(rep: FlightReport, key: str, desc: str, by_rank: Mapping[int, Mapping[int, Mapping[str, Any]]],
                   hi: int, no_dump: list[int], label: str) -> Event:
    """Members of the group with no dump at all: most often ranks that died before dumping."""
    present = {r: s[hi] for r, s in by_rank.items() if hi in s}
    sample = present[min(present)] if present else {}
    frames = _frames(sample)
    facts: dict[str, Any] = {"pg": key, "pg_desc": desc, "seq": hi, "dump_ranks": sorted(by_rank),
                             "op": sample.get("profiling_name"), "input_sizes": sample.get("input_sizes"),
                             "input_dtypes": sample.get("input_dtypes"), "missing_ranks": no_dump,
                             "present_ranks": sorted(present), "no_dump_ranks": no_dump, "frames": frames}
    ev = [Evidence(f"rank {r}: last entered seq {hi} {_describe(e)}", file=_dump_path(rep, r))
          for r, e in sorted(present.items())[:3]]
    msg = (f"process group {key} ({desc}): ranks {no_dump} left no flight-recorder dump (they died before "
           f"dumping, or their dumps were not given); the others last entered {facts['op']} seq {hi}"
           + (f" at {frames[0]}" if frames else ""))
    return _event(C.FR_RANKS_MISSING.code, label, msg, facts, ev, 1)


def _dump_path(rep: FlightReport, rank: int) -> str:
    return next((d.path for d in rep.dumps if d.rank == rank), "")


def _event(code: str, label: str, msg: str, facts: dict[str, Any], evidence: list[Evidence], tier: int) -> Event:
    missing = facts.get("missing_ranks") or facts.get("odd_ranks") or facts.get("not_completed_ranks") or []
    rank: Optional[int] = missing[0] if missing else None
    if rank is not None:
        facts["rank"] = rank
    return Event(code, label, 0, -1, msg, rank, facts, evidence, None, tier, (code, facts.get("pg"), facts.get("seq")))
