"""The rule modules' word gates (Hit.may_hold) only save time: every corpus log and every log
fixture gives the same findings with the gates open. A pattern added to a gated module without
its word makes this fail on the fixture that comes with it."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from pgdoctor.diagnose.api import diagnose_sources
from pgdoctor.diagnose.event import Hit
from pgdoctor.model import Finding
from tests.helpers.diagnosed import CORPUS_GROUP, diagnosed

pytestmark = pytest.mark.xdist_group(CORPUS_GROUP)  # beside test_corpus, whose answers it reuses
Answers = dict[str, list[dict[str, object]]]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _logs() -> list[tuple[str, str]]:
    out = []
    for f in sorted((FIXTURES / "corpus").rglob("*.jsonl")):
        if "heldout" in f.name:
            continue  # the blind half is scored only by its own protocol, never read while rules change
        for row in f.read_text().splitlines():
            if row.strip():
                case = json.loads(row)
                out.append((case["id"], case.get("log") or ""))
    for f in sorted(FIXTURES.rglob("*.log")):
        out.append((str(f.relative_to(FIXTURES)), f.read_text(errors="replace")))
    return out


def _answers(logs: list[tuple[str, str]], diagnose: Callable[[str, str], Sequence[Finding]]) -> Answers:
    return {name: [f.to_json() for f in diagnose(name, text)] for name, text in logs}


def test_the_gates_change_no_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    logs = _logs()
    assert len(logs) > 300
    # The gated answers are the catalogue's as shipped: those test_corpus and the paste shapes already
    # computed on this worker. The open half is computed afresh, under the patch.
    gated = _answers(logs, diagnosed)
    monkeypatch.setattr(Hit, "may_hold", lambda self, words: True)
    open_ = _answers(logs, lambda name, text: diagnose_sources([(name, text)]))
    assert [n for n in gated if gated[n] != open_[n]] == []
