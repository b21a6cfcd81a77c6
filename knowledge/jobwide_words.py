"""How a job-wide triage (diagnose's `meta["jobwide"]`) reads in words: one source for the
console and the HTML report, so both say the same thing the same way.

Each line is (style, text): style "" plain, "warn" for what stands out, "fail" for a suspect
node, "dim" for a remark. Rank sets are ranges with their size ("ranks 0-516,518-1023 (1023
ranks)", "rank 2"), never a thousand numbers and never "rank 2 (1)".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

Line = tuple[str, str]


def ranks_phrase(ranks: str, count: int, width: int = 100) -> str:
    """'rank 2' / 'ranks 0-3,7 (5 ranks)'; a scattered set is shortened after `width` characters."""
    text = ranks
    if len(text) > width:
        cut = text[:width].rsplit(",", 1)[0]
        text = f"{cut},... (+{text.count(',') - cut.count(',')} more ranges)"
    return f"rank {text}" if count == 1 else f"ranks {text} ({count} ranks)"


def header(job: Mapping[str, Any], dump_ranks: int = 0) -> str:
    """Whose logs the triage read; when the flight-recorder dumps cover more ranks, says so
    (the logs of 2 ranks beside the dumps of 3 is not a contradiction)."""
    n = job["ranks"]
    head = f"Job-wide: the logs of {n} rank{'s' if n != 1 else ''} ({job['rank_span'][:80]})"
    if dump_ranks > n:
        head += f"; the flight-recorder dumps cover {dump_ranks} ranks"
    return head


def lines(job: Mapping[str, Any], root_rank: Optional[int] = None) -> list[Line]:
    """Every line under the header: one per failure signature, then what stands out."""
    out: list[Line] = []
    for g in job["groups"]:
        extra = ""
        if g.get("unranked"):
            n = g["unranked"]
            extra = f", and {n} line{'s' if n != 1 else ''} of a log without a rank"
        out.append(("", f"{ranks_phrase(g['ranks'], g['count'])}: {g['signature']}{extra}"))
    if job.get("groups_left_out"):
        out.append(("dim", f"... {job['groups_left_out']} more signature(s) in --json"))
    for a in job.get("absent", []):
        more = f" (and {len(a['signatures']) - 1} more)" if len(a["signatures"]) > 1 else ""
        verb = "lacks" if a["count"] == 1 else "lack"
        out.append(
            (
                "warn",
                f"absent: {ranks_phrase(a['ranks'], a['count'])} {verb} what {a['shared_by']} of "
                f"{job['ranks']} ranks share: {a['signatures'][0]}{more}",
            )
        )
    b = job.get("behind")
    if b:
        what = "last completed" if b["what"] == "last_completed_seq" else "timed out at"
        out.append(
            (
                "warn",
                f"behind: {ranks_phrase(b['ranks'], b['count'])} {what} SeqNum={b['seq']} "
                f"(the others {b['others']})",
            )
        )
    e = job.get("earliest")
    if e:
        text = (
            f"earliest failure by timestamp: rank {e['rank']} at {e['time']}: {e['signature']} ({e['where']})"
        )
        if root_rank is not None and e["rank"] != root_rank:
            text += (
                f"; the root cause (rank {root_rank}) is chosen by what caused what, not by time: "
                "a rank that waits for a dead or slow peer often logs its error first"
            )
        out.append(("", text))
    for h in job.get("suspect_hosts", []):
        out.append(
            (
                "fail",
                f"suspect host {h['host']}: all of its {ranks_phrase(h['ranks'], h['count'])} share "
                f"{h['signature']}, which no other host has: the node, not one rank",
            )
        )
    return out
