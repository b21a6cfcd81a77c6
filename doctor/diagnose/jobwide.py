"""Job-wide triage: what a thousand ranks said, in a few lines.

Pure: the events of every log of one job in, groups out. Each rank's failures become signatures
(what failed, with the facts every rank of a collective shares: op, sequence number, timeout,
exception type, exit code), and ranks with the same signature are one group, written as rank
ranges (`0-516,518-1023`), never as a list of a thousand numbers. Beside the groups: the ranks
missing from a signature nearly every other rank shares, the ranks whose last completed
collective is behind the others', the earliest failure by timestamp, and hosts all of whose
ranks share a failure no other host has (then the node is the suspect, not one rank).

A rank comes from the line (`[rank3]:`, `[Rank 3]`, torchrun's table) or, for a log with no rank
of its own, from its file name: in a set of files whose names differ in one number only
(`rank_17.log`, `job-4242-17.err`, Slurm `%t`, torchrun's `attempt_0/17/stderr.log`), that number.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Optional

from pgdoctor.checks.base import CODES
from pgdoctor.diagnose.causality import is_hardware
from pgdoctor.diagnose.event import Event
from pgdoctor.diagnose.rules.launcher import EXIT, MARKER
from pgdoctor.knowledge.ranks import run_words

# A signature that at least this share of the known ranks have is "shared": the ranks without
# it are named.
SHARED = 0.5
MAX_GROUPS = 20
_NUM = re.compile(r"\d+")
# Short names for the codes that fill a thousand-rank log; the rest use their slug.
_LABELS = {
    "RUN151": "watchdog timeout",
    "RUN152": "heartbeat monitor timeout",
    "RUN153": "gloo timeout",
    "RUN101": "CUDA out of memory",
    "RUN102": "CUDA out of memory (fragmentation)",
    "RUN103": "CUDA out of memory (other processes)",
    "RUN132": "Python exception",
}


def rank_ranges(ranks: Iterable[int]) -> str:
    """`0-3,7,9-12`: consecutive ranks as ranges, all of them (the JSON's compact form)."""
    return ",".join(run_words(ranks))


def file_ranks(names: Sequence[str]) -> dict[str, int]:
    """The rank each per-rank file stands for: among files whose names are the same but for their
    numbers, the one number that differs between them (a constant job id is not a rank)."""
    groups: dict[str, list[tuple[str, list[re.Match[str]]]]] = defaultdict(list)
    for name in names:
        groups[_NUM.sub("#", name)].append((name, list(_NUM.finditer(name))))
    out: dict[str, int] = {}
    hostlike: dict[str, bool] = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        fields = len(members[0][1])
        varying = [i for i in range(fields) if len({m[1][i].group() for m in members}) > 1]
        if len(varying) != 1:
            continue
        i = varying[0]
        if len({m[1][i].group() for m in members}) != len(members):
            continue  # a number shared by two files is not one per rank
        for name, nums in members:
            num = nums[i]
            start = num.start()
            word = name[
                max(name.rfind("/", 0, start), name.rfind("\\", 0, start)) + 1 : start
            ]  # in its part of the path
            if word not in hostlike:
                hostlike[word] = bool(_HOSTLIKE.search(word))
            if len(num.group()) <= 7 and not hostlike[word]:
                out[name] = int(num.group())
    return out


# A number after one of these words names a machine (Slurm's %N, a per-node log), not a rank.
_HOSTLIKE = re.compile(r"(?:node|host|nid|gpu|compute|dgx|hgx|server|machine)[-_]?$", re.I)


def assign_file_ranks(events: Sequence[Event], sources: Sequence[str]) -> dict[str, int]:
    """Give events without a rank the rank of their per-rank file (facts["rank_from"] says so),
    and make it part of their identity: a thousand ranks' identical timeout lines stay a
    thousand ranks, not one event seen a thousand times. Returns the ranks of the files, for
    triage (the events that now carry them leave it unchanged)."""
    by_file = _single_rank_files(events, sources)
    if not by_file:
        return by_file
    for e in events:
        if e.rank is not None or e.code == MARKER:
            continue
        name = sources[e.source_index] if 0 <= e.source_index < len(sources) else e.source
        rank = by_file.get(name)
        if rank is None:
            continue
        e.rank = rank
        e.facts["rank"] = rank
        e.facts["rank_from"] = "file name"
        if len(e.dedupe) > 1 and e.dedupe[1] is None:
            e.dedupe = (e.dedupe[0], rank, *e.dedupe[2:])
        else:
            e.dedupe = (*e.dedupe, "file rank", rank)
    return by_file


def _single_rank_files(events: Sequence[Event], sources: Sequence[str]) -> dict[str, int]:
    """file_ranks without the files whose own lines name another rank: such a file holds several
    ranks (a per-node log), and its number is not the rank of its lines."""
    by_file = file_ranks(sources)
    mixed = {
        sources[e.source_index]
        for e in events
        if e.rank is not None
        and 0 <= e.source_index < len(sources)
        and by_file.get(sources[e.source_index], e.rank) != e.rank
    }
    return {k: v for k, v in by_file.items() if k not in mixed}


def signature(e: Event) -> str:
    """What failed, with the facts all ranks of one collective share (never a per-rank value:
    no rank, pid, host, time or duration)."""
    return " ".join(_parts(e))


@functools.cache
def _label(code: str) -> str:
    return _LABELS.get(code) or (CODES[code].slug.replace("-", " ") if code in CODES else code)


def _parts(e: Event) -> tuple[str, ...]:
    f = e.facts
    if e.code == EXIT:
        sig = f.get("signal")
        code = f.get("exitcode")
        return ("exit", f"{sig} (exit code {code})" if sig else f"code {code}")
    parts = [e.code, _label(e.code)]
    if f.get("pg_id") not in (None, "", 0, "0"):
        parts.append(f"PG {f['pg_id']}")
    if f.get("op"):
        parts.append(str(f["op"]))
    if f.get("seq") is not None:
        parts.append(f"SeqNum={f['seq']}")
    if f.get("timeout_ms") is not None:
        parts.append(f"after {f['timeout_ms']} ms")
    for key in ("exception", "nccl_error", "signal", "xid"):
        if f.get(key) not in (None, ""):
            parts.append(str(f[key]))
    return tuple(parts)


def _most_specific(sigs: dict[tuple[str, ...], Event]) -> dict[tuple[str, ...], Event]:
    """One rank's signatures without those another of its signatures says more precisely (the
    watchdog's "detected at work 2070" beside its "ALLREDUCE SeqNum=2070 ... timed out")."""
    keep = {}
    for p, e in sigs.items():
        if not any(q != p and q[0] == p[0] and set(p) < set(q) for q in sigs):
            keep[p] = e
    return keep


def _when(ts: tuple[str, float]) -> str:
    kind, sec = ts
    try:
        t = _dt.datetime.fromtimestamp(sec)
    except (OverflowError, OSError, ValueError):
        return f"{sec:.3f}"
    # glog lines carry no year: normalize.py counts them from 2000
    return t.strftime("%m-%d %H:%M:%S.%f")[:-3] if kind != "iso" else t.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def triage(
    events: Sequence[Event], sources: Sequence[str], by_file: Optional[Mapping[str, int]] = None
) -> Optional[dict[str, Any]]:
    """Groups of ranks by failure signature, for a job of two or more ranks; None otherwise.
    `by_file`: what assign_file_ranks returned for the same events, else found again."""
    by_file = _single_rank_files(events, sources) if by_file is None else by_file
    known: set[int] = set(by_file.values())
    ranks_of: dict[str, set[int]] = defaultdict(set)
    first: dict[str, Event] = {}
    tier: dict[str, int] = {}
    host_of: dict[int, str] = {}
    unranked: Counter[str] = Counter()
    completed: dict[int, int] = {}
    timed_out_at: dict[int, int] = {}
    dated: list[tuple[tuple[str, float], Event, int, str]] = []
    per_rank: dict[int, dict[tuple[str, ...], Event]] = defaultdict(dict)
    for e in events:
        if e.code == MARKER:
            continue
        name = sources[e.source_index] if 0 <= e.source_index < len(sources) else e.source
        rank = e.rank if e.rank is not None else by_file.get(name)
        parts = _parts(e)
        sig = " ".join(parts)
        first.setdefault(sig, e)
        tier[sig] = min(tier.get(sig, 9), e.cause_tier if e.code != EXIT else 3)
        if rank is None:
            unranked[sig] += 1
            continue
        known.add(rank)
        per_rank[rank].setdefault(parts, e)
        host = e.facts.get("host")
        if isinstance(host, str) and host:
            host_of.setdefault(rank, host)
        if isinstance(e.facts.get("last_completed_seq"), int):
            completed[rank] = max(completed.get(rank, -1), e.facts["last_completed_seq"])
        if e.code in ("RUN151", "RUN152", "RUN153") and isinstance(e.facts.get("seq"), int):
            timed_out_at.setdefault(rank, e.facts["seq"])
    for rank, sigs in per_rank.items():
        for parts, e in _most_specific(sigs).items():
            sig = " ".join(parts)
            ranks_of[sig].add(rank)
            if e.ts and e.code != EXIT:
                dated.append((e.ts, e, rank, sig))
    if len(known) < 2:
        return None
    # A GPU's own fault leads its tier: the errors of the ranks on it are its consequences.
    order = sorted(ranks_of, key=lambda s: (tier[s], not is_hardware(first[s]), first[s].position))
    groups = [
        {
            "signature": s,
            "ranks": rank_ranges(ranks_of[s]),
            "count": len(ranks_of[s]),
            "first": f"{first[s].source}:{first[s].line}",
            **({"unranked": unranked[s]} if unranked[s] else {}),
        }
        for s in order[:MAX_GROUPS]
    ]
    out: dict[str, Any] = {"ranks": len(known), "rank_span": rank_ranges(known), "groups": groups}
    if len(order) > MAX_GROUPS:
        out["groups_left_out"] = len(order) - MAX_GROUPS
    if unranked:
        out["unranked_events"] = sum(unranked.values())
    absent = _absent(ranks_of, known, order)
    if absent:
        out["absent"] = absent
    behind = _behind(completed, "last_completed_seq") or _behind(timed_out_at, "timed_out_seq")
    if behind:
        out["behind"] = behind
    if dated:
        kinds = Counter(ts[0] for ts, *_ in dated)
        kind = kinds.most_common(1)[0][0]
        ts, e, rank, sig = min((d for d in dated if d[0][0] == kind), key=lambda d: (d[0][1], d[1].position))
        out["earliest"] = {"rank": rank, "time": _when(ts), "signature": sig, "where": f"{e.source}:{e.line}"}
    hosts = _suspect_hosts(ranks_of, host_of, known, order)
    if hosts:
        out["suspect_hosts"] = hosts
    return out


def _absent(ranks_of: Mapping[str, set[int]], known: set[int], order: Sequence[str]) -> list[dict[str, Any]]:
    """For each set of ranks that lacks signatures most ranks share: the ranks and what they lack."""
    lacking: dict[frozenset[int], list[str]] = {}
    shared_by: dict[frozenset[int], int] = {}
    for s in order:
        have = ranks_of[s]
        missing = frozenset(known - have)
        if missing and len(have) >= 2 and len(have) >= SHARED * len(known):
            lacking.setdefault(missing, []).append(s)
            shared_by[missing] = max(shared_by.get(missing, 0), len(have))
    return [
        {"ranks": rank_ranges(m), "count": len(m), "signatures": sigs, "shared_by": shared_by[m]}
        for m, sigs in list(lacking.items())[:MAX_GROUPS]
    ]


def _behind(values: Mapping[int, int], what: str) -> Optional[dict[str, Any]]:
    if len(set(values.values())) < 2:
        return None
    low = min(values.values())
    common = Counter(values.values()).most_common(1)[0][0]
    lagging = [r for r, v in values.items() if v == low]
    return {
        "what": what,
        "ranks": rank_ranges(lagging),
        "count": len(lagging),
        "seq": low,
        "others": common if common != low else max(values.values()),
    }


def _suspect_hosts(
    ranks_of: Mapping[str, set[int]], host_of: Mapping[int, str], known: set[int], order: Sequence[str]
) -> list[dict[str, Any]]:
    """Hosts (of two or more known ranks) where every rank has a signature that no rank of any
    other host has: the node, not a rank, is the suspect."""
    on_host: dict[str, set[int]] = defaultdict(set)
    for r, h in host_of.items():
        on_host[h].add(r)
    if len(on_host) < 2:
        return []
    out = []
    for s in order:
        have = ranks_of[s]
        hosts = {host_of.get(r) for r in have}
        if None in hosts or len(hosts) > max(1, len(on_host) // 4):
            continue
        for h in sorted(h for h in hosts if h is not None):
            mine = on_host[h]
            if len(mine) >= 2 and mine <= have:
                out.append({"host": h, "ranks": rank_ranges(mine), "count": len(mine), "signature": s})
    seen: set[object] = set()
    unique = []
    for item in out:
        if item["host"] not in seen:
            seen.add(item["host"])
            unique.append(item)
    return unique[:MAX_GROUPS]
