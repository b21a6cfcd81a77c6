"""The `hang` section of a report (the same from `pgdoctor hang` and from `diagnose` of a saved
snapshot) and the console table of the roll-call: the culprit's group first."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pgdoctor.diagnose.stacks.evidence import Frame, RankEvidence, is_user_frame, short_path
from pgdoctor.diagnose.stacks.verdict import Verdict, jobs_of, last_stack, progressing
from pgdoctor.knowledge.ranks import rank_ranges


def rank_json(ev: RankEvidence) -> dict[str, Any]:
    last = last_stack(ev)
    return {
        "rank": ev.rank,
        "pid": ev.pid,
        "host": ev.host,
        "local_rank": ev.local_rank,
        "stack": [f.to_json() for f in last],
        "progressing": progressing(ev),
        "tiers": dict(ev.tiers),
        "problems": list(ev.problems),
        "state": ev.state,
        "wchan": ev.wchan,
        "threads": ev.threads,
        "ranges": list(ev.ranges),
        "rank_source": ev.rank_source,
        "workers": [w.to_json() for w in ev.workers],
        "gpu": dict(ev.gpu),
    }


def hang_json(verdicts: Sequence[Verdict], evidence: Sequence[RankEvidence]) -> dict[str, Any]:
    by_job = jobs_of(evidence)
    jobs = []
    for v in verdicts:
        ranks = by_job.get(v.job, [])
        jobs.append(
            {
                "job": v.job,
                "world_size": next((e.world_size for e in ranks if e.world_size), None),
                "hosts": sorted({e.host for e in ranks}),
                "culprits": v.culprits,
                "progressing_ranks": v.progressing,
                "groups": [
                    {
                        "ranks": g.ranks,
                        "where": g.place.label(),
                        "collective": g.place.collective,
                        "frame": g.place.frame.where() if g.place.frame else "",
                        "seq": g.place.seq,
                        "function": g.place.frame.function if g.place.frame else "",
                    }
                    for g in v.groups
                ],
                "ranks": [rank_json(e) for e in ranks],
            }
        )
    return {"jobs": jobs}


def console_lines(hang: Mapping[str, Any]) -> list[str]:
    """One table per job: group, ranks, where; the culprits' groups first, then the waiting."""
    out: list[str] = []
    for job in hang.get("jobs", ()):
        culprits = set(job.get("culprits", ()))
        ranks = job.get("ranks", [])
        hosts = ", ".join(job.get("hosts", ())) or "?"
        out.append(
            f"job {job.get('job') or '?'}: {len(ranks)} rank(s) on {hosts}, world size "
            f"{job.get('world_size') or '?'}"
        )
        rows = sorted(job.get("groups", ()), key=lambda g: (not culprits & set(g["ranks"]), g["ranks"][0]))
        width = max([len(rank_ranges(g["ranks"])) for g in rows] + [5])
        for g in rows:
            mark = "CULPRIT" if culprits & set(g["ranks"]) else ("waiting" if g["collective"] else "")
            where = g["where"]
            if len(g["ranks"]) == 1:  # 'rank 2 is at', 'rank 3 waits in'
                where = (
                    ("is " + where[4:]) if where.startswith("are ") else where.replace("wait ", "waits ", 1)
                )
            out.append(f"  {mark:<8} {rank_ranges(g['ranks']):<{width}}  {where}")
        for r in ranks:
            if not r["stack"]:
                why = next((p.get("cause", "") for p in r.get("problems", ())), "") or "no stack"
                out.append(f"  {'?':<8} {r['rank']!s:<{width}}  stacks unavailable: {why}")
            for w in r.get("workers", ()):
                if w.get("stack"):
                    top = next((f for f in w["stack"] if is_user_frame(Frame.from_json(f))), w["stack"][0])
                    out.append(
                        f"  {'':<8} {'':<{width}}  rank {r['rank']}'s worker pid {w['pid']} at "
                        f"{short_path(top['file'])}:{top['line']} in {top['function']}"
                    )
        if job.get("progressing_ranks"):
            out.append(
                f"  progressing: ranks {rank_ranges(job['progressing_ranks'])} (frame moved or CPU grew)"
            )
    return out
