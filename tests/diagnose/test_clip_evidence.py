"""Evidence and messages cut to a length are cut between tokens and marked with an ellipsis: a cut
inside `Timeout(ms)=600000` reads as another fact (`Timeout(ms)=6000`), and an unmarked cut reads
as the whole line."""

from __future__ import annotations

import io
import re

import pytest

from pgdoctor.diagnose.api import diagnose_sources
from pgdoctor.knowledge.clip import ELLIPSIS, clip

WATCHDOG = (
    "[rank1]:[E1204 10:00:01.123456 1234 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective "
    "operation "
    "timeout: WorkNCCL(SeqNum=2070, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, "
    "Timeout(ms)=600000) ran for 600013 milliseconds before timing out."
)


@pytest.mark.parametrize("limit", range(20, len(WATCHDOG) + 2, 7))
def test_a_cut_ends_on_a_whole_token_and_is_marked(limit: int) -> None:
    out = clip(WATCHDOG, limit)
    assert len(out) <= limit
    if len(WATCHDOG) <= limit:
        assert out == WATCHDOG
        return
    assert out.endswith(" " + ELLIPSIS)
    head = out[:-2]
    assert WATCHDOG.startswith(head)
    rest = WATCHDOG[len(head) :]
    # cut at a boundary (before whitespace, after a comma), or, only when the nearest boundary
    # would keep less than a third, inside a token: marked either way
    boundaries = [m.start() for m in re.finditer(r"\s|(?<=,)", WATCHDOG[:limit])]
    assert rest[:1].isspace() or head.endswith(",") or not [b for b in boundaries if b >= 0.3 * (limit - 2)]


def test_a_token_longer_than_the_limit_is_cut_and_still_marked() -> None:
    assert clip("x" * 500, 50) == "x" * 48 + " " + ELLIPSIS


def test_the_diagnose_console_never_shows_a_cut_number() -> None:
    from pgdoctor.diagnose.api import diagnose_paths  # noqa: F401  (the same renderer as the CLI)
    from pgdoctor.diagnose.render import render
    from pgdoctor.model import Report

    long_line = WATCHDOG.replace("[Rank 1] ", "[Rank 1] " + "padding " * 16)
    findings = diagnose_sources([("rank1.log", long_line + "\n")])
    out = io.StringIO()
    render(Report("diagnose", None, tuple(findings)), out)
    text = out.getvalue()
    for number in re.findall(r"Timeout\(ms\)=(\d+)", text):
        assert number == "600000", text
    shown = [ln for ln in text.splitlines() if "Watchdog caught" in ln and "padding" in ln]
    assert shown and all(
        ln.rstrip().endswith(ELLIPSIS) or ln.rstrip().endswith("timing out.") for ln in shown
    )


def test_evidence_longer_than_its_limit_is_marked_in_the_json_too() -> None:
    from pgdoctor.diagnose.event import EVIDENCE_CHARS

    line = WATCHDOG.replace("[Rank 1] ", "[Rank 1] " + "word " * 200)
    findings = diagnose_sources([("rank1.log", line + "\n")])
    texts = [e.text for f in findings for e in f.evidence if "[Rank 1]" in e.text]
    assert texts and all(len(t) <= EVIDENCE_CHARS and t.endswith(ELLIPSIS) for t in texts)
