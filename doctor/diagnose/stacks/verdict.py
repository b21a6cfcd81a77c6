"""The roll-call: a job's ranks grouped by where they are, and the rank(s) the others wait for.

A rank's place is its innermost stable user frame (the job's own code, not torch or the
standard library) plus the torch.distributed call it waits in, if any. The culprit is the rank
that is somewhere else: with ranks waiting in a collective, every rank that is not waiting in
one is a culprit (a rank that waits is never the culprit: it waits for someone); with every rank
waiting but at different places, the ranks outside the largest group. A rank whose frame moves
between samples or whose CPU time grows makes progress: a job with any rank progressing is not
hung (a long checkpoint or evaluation on one rank, a straggler), and gets no fail finding. CPU
time is not progress for a rank waiting in a collective (a spin: NCCL's, or a busy-wait on the
work handle), nor in a snapshot `pgdoctor run` took after no step evidence for a while
(`quiet_s`): there only a frame that moves to another function is (a busy-wait loop's line
jitters between the lines of its loop).
Pure: evidence in, findings out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from pgdoctor.checks.codes.hang import (
    HANG_ALL_WAITING,
    HANG_CULPRIT,
    HANG_PROGRESSING,
    HANG_STACKS_UNAVAILABLE,
)
from pgdoctor.diagnose.stacks.evidence import (
    Frame,
    RankEvidence,
    collective_of,
    gpu_phrase,
    short_path,
    user_frame,
)
from pgdoctor.knowledge.ranks import missing_ranks, rank_ranges
from pgdoctor.model import Evidence, Finding, Scope

# CPU time per wall second above which a rank is working, not waiting (a gloo or NCCL wait, a
# sleep, a lock or a queue read costs a few ms per second of background threads).
BUSY_CPU_FRACTION = 0.2


@dataclass(frozen=True)
class Place:
    frame: Optional[Frame]  # innermost user frame (None: only library frames, or no stack)
    collective: str  # the torch.distributed call it waits in, '' when none
    innermost: Optional[Frame]  # the innermost frame of all, for the message
    seq: Optional[int] = None  # the collective's SeqNum, where the flight recorder says it

    def label(self) -> str:
        if self.frame is None and self.innermost is None:
            return "stack unknown"
        where = self.frame or self.innermost
        assert where is not None
        seq = f" (SeqNum {self.seq})" if self.seq is not None and self.collective else ""
        head = f"wait in {self.collective}{seq} at" if self.collective else "are at"
        tail = "" if self.collective or where.function in ("<module>", "") else f" in {where.function}"
        if not self.collective and self.innermost is not None and self.innermost != where:
            inner = self.innermost
            tail += f" (innermost {short_path(inner.file)}:{inner.line} {inner.function})"
        return f"{head} {where.where()}{tail}"


@dataclass
class Group:
    place: Place
    ranks: list[int] = field(default_factory=list)

    @property
    def waiting(self) -> bool:
        return bool(self.place.collective)


def progressing(ev: RankEvidence) -> bool:
    """The rank moved: its innermost user frame differs between samples, or it burns CPU outside
    a collective and no step-based watch said the job stood still."""
    if ev.quiet_s is not None:
        # No step for a while: only a move to another function counts (its innermost user frame,
        # or the innermost of all). A busy-wait loop's line jitters between the lines of its loop.
        return len({_function_key(s) for s in ev.samples if s}) > 1
    places = {_key(user_frame(s) or s[0]) for s in ev.samples if s}
    if len(places) > 1:
        return True
    if collective_of(last_stack(ev)):
        return False  # a spin burns CPU in place
    if len(ev.cpu_s) >= 2 and len(ev.sample_times_s) >= 2:
        wall = ev.sample_times_s[-1] - ev.sample_times_s[0]
        return wall > 0 and (ev.cpu_s[-1] - ev.cpu_s[0]) / wall >= BUSY_CPU_FRACTION
    return False


def _function_key(stack: Sequence[Frame]) -> tuple[str, str, str, str]:
    user = user_frame(stack)
    inner = stack[0] if stack else None
    return (
        user.file if user else "",
        user.function if user else "",
        inner.file if inner else "",
        inner.function if inner else "",
    )


def _key(f: Optional[Frame]) -> tuple[str, int, str]:
    return (f.file, f.line, f.function) if f else ("", 0, "")


def last_stack(ev: RankEvidence) -> Sequence[Frame]:
    """The rank's last stack that holds a frame: an empty read (no Python frame in the main thread,
    an interpreter starting or exiting) says nothing of where the rank is in the job's code."""
    return next((s for s in reversed(ev.samples) if s), ())


def place_of(ev: RankEvidence) -> Place:
    stack = last_stack(ev)
    if not stack:
        return Place(None, "", None)
    return Place(user_frame(stack), collective_of(stack), stack[0] if stack else None, ev.seq)


def groups(ranks: Sequence[RankEvidence]) -> list[Group]:
    by: dict[tuple[Any, ...], Group] = {}
    for ev in sorted(ranks, key=lambda e: e.rank):
        p = place_of(ev)
        key = (
            _key(p.frame),
            p.collective,
            p.seq if p.collective else None,
            _key(p.innermost) if p.frame is None else None,
        )
        by.setdefault(key, Group(p)).ranks.append(ev.rank)
    return list(by.values())


@dataclass
class Verdict:
    job: str
    groups: list[Group]
    culprits: list[int]
    progressing: list[int]
    unknown: list[int]  # ranks without a stack
    findings: list[Finding]


def _frames(stack: Sequence[Frame], n: int = 6) -> list[str]:
    return [f"{short_path(f.file)}:{f.line} {f.function}" for f in stack[:n]]


def roll_call(job: str, ranks: Sequence[RankEvidence]) -> Verdict:
    ranks = sorted(ranks, key=lambda e: e.rank)
    known = [e for e in ranks if last_stack(e)]
    unknown = [e.rank for e in ranks if not last_stack(e)]
    moving = [e.rank for e in ranks if progressing(e)]
    all_groups = groups(known)
    findings: list[Finding] = []
    culprits: list[int] = []
    line = roll_call_line(all_groups)
    facts_base: dict[str, Any] = {
        "job": job,
        "groups": [
            {
                "ranks": g.ranks,
                "where": g.place.label(),
                "frame": g.place.frame.where() if g.place.frame else "",
                "collective": g.place.collective,
            }
            for g in all_groups
        ],
    }
    if moving:
        findings.append(
            HANG_PROGRESSING.finding(
                f"ranks {rank_ranges(moving)} make progress: {line}",
                scope=Scope(),
                facts={**facts_base, "progressing_ranks": moving},
            )
        )
    elif known:
        waiting = [g for g in all_groups if g.waiting]
        elsewhere = [g for g in all_groups if not g.waiting]
        if waiting and elsewhere:
            culprit_groups = elsewhere
        elif len(all_groups) > 1:
            biggest = max(all_groups, key=lambda g: (len(g.ranks), -g.ranks[0]))
            culprit_groups = [g for g in all_groups if g is not biggest]
        else:
            culprit_groups = []
        culprits = sorted(r for g in culprit_groups for r in g.ranks)
        by_rank = {e.rank: e for e in ranks}
        waited_for = _waited_for(by_rank, [r for g in all_groups if g not in culprit_groups for r in g.ranks])
        bystanders = [r for r in culprits if waited_for is not None and r not in waited_for]
        if bystanders and len(bystanders) < len(culprits):
            # A collective on a subgroup waits for its members only: a rank elsewhere outside it
            # is not what holds the waiting ranks.
            culprits = [r for r in culprits if r not in bystanders]
            culprit_groups = [g for g in culprit_groups if set(g.ranks) & set(culprits)]
        else:
            bystanders = []
        if culprits:
            first = culprit_groups[0]
            ev = by_rank[first.ranks[0]]
            frame = first.place.frame or first.place.innermost
            facts = {
                **facts_base,
                "ranks": culprits,
                "frame": frame.where() if frame else "",
                "function": frame.function if frame else "",
                "frames": _frames(last_stack(ev)),
                "waiting_ranks": sorted(r for g in all_groups if g not in culprit_groups for r in g.ranks),
            }
            workers = [w for r in culprits for w in by_rank[r].workers if w.stack]
            if workers:
                facts["workers"] = [
                    {
                        "rank": r,
                        "pid": w.pid,
                        "frame": (user_frame(w.stack) or w.stack[0]).where(),
                        "frames": _frames(w.stack),
                    }
                    for r in culprits
                    for w in by_rank[r].workers
                    if w.stack
                ]
            if bystanders:
                facts["not_waited_for"] = bystanders
            if ev.ranges:
                facts["ranges"] = list(ev.ranges)
            gpus = {str(r): dict(by_rank[r].gpu) for r in culprits if by_rank[r].gpu}
            if gpus:
                facts["gpu"] = gpus
            gpu_note = gpu_phrase(ev.gpu)
            evidence = [
                Evidence(f"rank {r}: {'; '.join(_frames(last_stack(by_rank[r]), 3))}", key=f"rank{r}")
                for r in culprits[:8]
            ]
            findings.append(
                HANG_CULPRIT.finding(
                    f"{line}: rank{'s' if len(culprits) > 1 else ''} {rank_ranges(culprits)} "
                    f"{'are' if len(culprits) > 1 else 'is'} elsewhere, at {_culprit_places(culprit_groups)}"
                    + (f" ({gpu_note})" if gpu_note else "")
                    + _stopped_note(by_rank, culprits)
                    + (
                        f"; rank{'s' if len(bystanders) > 1 else ''} {rank_ranges(bystanders)} "
                        "not in the group they wait on"
                        if bystanders
                        else ""
                    ),
                    scope=Scope(rank=culprits[0]) if len(culprits) == 1 else Scope(),
                    evidence=evidence,
                    facts=facts,
                )
            )
        elif all_groups and all_groups[0].waiting:
            ws = next((e.world_size for e in ranks if e.world_size), None)
            seen = {e.rank for e in ranks}
            missing = missing_ranks(seen, ws) if ws else []
            facts = {
                **facts_base,
                "waiting_ranks": [e.rank for e in known],
                "missing_ranks": missing,
                "frame": all_groups[0].place.frame.where() if all_groups[0].place.frame else "",
            }
            where = (
                (
                    f"; rank{'s' if len(missing) > 1 else ''} {rank_ranges(missing)} of the world of {ws} "
                    f"{'were' if len(missing) > 1 else 'was'} not seen here (another node, or "
                    f"{'they' if len(missing) > 1 else 'it'} died): look there"
                )
                if missing
                else _none_missing(all_groups[0].place.collective, ws, {e.rank for e in known})
            )
            # A rank stopped inside the call (SIGSTOP) holds the others there: /proc says which.
            stopped = _stopped_note(by_rank, [e.rank for e in known])
            findings.append(HANG_ALL_WAITING.finding(f"{line}{where}{stopped}", scope=Scope(), facts=facts))
    for ev in ranks:
        if ev.problems and not last_stack(ev):
            p = ev.problems[0]
            findings.append(
                HANG_STACKS_UNAVAILABLE.finding(
                    f"rank {ev.rank} (pid {ev.pid}): stacks unavailable: {p.get('cause', '')}; fix: "
                    f"{p.get('fix', '')}",
                    scope=Scope(rank=ev.rank),
                    facts={
                        "rank": ev.rank,
                        "pid": ev.pid,
                        "cause": p.get("cause", ""),
                        "fix": p.get("fix", ""),
                        "tiers": dict(ev.tiers),
                    },
                )
            )
    return Verdict(job, all_groups, culprits, moving, unknown, findings)


# Point-to-point calls: every rank blocked in the same one is a cycle of peers, not a late rank.
_SENDS = frozenset({"send", "isend"})
_RECVS = frozenset({"recv", "irecv"})


def _none_missing(collective: str, world_size: Optional[int], placed: set[int]) -> str:
    """What an all-waiting roll-call means when every rank of the world is placed in it."""
    if not world_size or len(placed) < world_size:
        return ""  # the world is unknown: the late rank may still be outside what was read
    if collective in _SENDS:
        return (
            f"; all {world_size} ranks are here and each one sends while its peer sends too: a cycle of "
            "blocking sends that no rank receives first (a p2p deadlock; order them: even ranks send "
            "first, odd ranks receive first, or use batch_isend_irecv)"
        )
    if collective in _RECVS:
        return (
            f"; all {world_size} ranks are here and each one receives from a peer that receives too: "
            "nobody sends (a p2p deadlock in the send/recv order)"
        )
    return (
        f"; all {world_size} ranks of the world are here and wait in the same call: no rank is late, the "
        "call itself does not complete (a transport that stands still; or a long collective: sample again)"
    )


# /proc states of a process that does not run at all: its stack is where it was when it stopped.
_STOPPED = {
    "T": "stopped by a signal (SIGSTOP, Ctrl-Z; SIGCONT resumes it)",
    "t": "held by a tracer (a debugger)",
}


def _stopped_note(by_rank: Mapping[int, RankEvidence], culprits: Sequence[int]) -> str:
    """'; rank 2 is stopped by a signal (...)': the reason a culprit stands still, where /proc says it."""
    notes = []
    for state, why in _STOPPED.items():
        held = [r for r in culprits if by_rank[r].state == state]
        if held:
            who = f"ranks {rank_ranges(held)} are" if len(held) > 1 else f"rank {held[0]} is"
            notes.append(f"; {who} {why}")
    return "".join(notes)


def _culprit_places(culprit_groups: Sequence[Group]) -> str:
    """'data.py:6', or, where the culprits are in different places, each with its ranks
    ('data.py:6 (rank 2), train.py:40 (rank 5)')."""
    places = [(g.place.frame or g.place.innermost, g.ranks) for g in culprit_groups]
    if len(places) == 1:
        frame = places[0][0]
        return frame.where() if frame else ""
    return ", ".join(
        f"{f.where() if f else 'stack unknown'} (rank{'s' if len(rs) > 1 else ''} {rank_ranges(rs)})"
        for f, rs in places
    )


def _waited_for(by_rank: Mapping[int, RankEvidence], waiting: Sequence[int]) -> Optional[set[int]]:
    """The ranks the waiting ranks can be waiting for: the members of the groups of their pending
    collectives, where every waiting rank's recorder and socket said it; else None (unknown)."""
    groups = [by_rank[r].wait_group for r in waiting]
    if not groups or any(g is None for g in groups):
        return None
    return {r for g in groups if g is not None for r in g}


def roll_call_line(gs: Sequence[Group]) -> str:
    """'ranks 0,1,3 wait in all_reduce at train.py:15; rank 2 is at data.py:6 in load_batch'"""
    parts = []
    for g in sorted(gs, key=lambda g: (g.waiting, g.ranks[0])):
        who = f"rank {g.ranks[0]}" if len(g.ranks) == 1 else f"ranks {rank_ranges(g.ranks)}"
        label = g.place.label()
        if len(g.ranks) == 1 and label.startswith("are "):
            label = "is " + label[4:]
        elif len(g.ranks) == 1 and label.startswith("wait "):
            label = "waits " + label[5:]
        parts.append(f"{who} {label}")
    return "; ".join(parts)


def jobs_of(ranks: Sequence[RankEvidence]) -> dict[str, list[RankEvidence]]:
    """The ranks per job; within a job one entry per rank: the last read wins (a node read twice, a
    run's later snapshot), except that a read without a stack never replaces one with a stack. A run's
    last snapshot may be taken while the launcher kills the ranks: their stacks are gone, and the
    snapshot before it, which named the culprit, must still decide."""
    out: dict[str, dict[int, RankEvidence]] = {}
    for ev in ranks:
        job = out.setdefault(ev.job, {})
        seen = job.get(ev.rank)
        if seen is None or last_stack(ev) or not last_stack(seen):
            job[ev.rank] = ev
    return {job: sorted(by.values(), key=lambda e: e.rank) for job, by in sorted(out.items())}


def analyze(ranks: Sequence[RankEvidence]) -> list[Verdict]:
    return [roll_call(job, rs) for job, rs in jobs_of(ranks).items()]


def findings_of(verdicts: Sequence[Verdict]) -> list[Finding]:
    """Fail findings first (the culprit of each job), then warnings, then info."""
    out = [f for v in verdicts for f in v.findings]
    return sorted(out, key=lambda f: -f.severity.rank)
