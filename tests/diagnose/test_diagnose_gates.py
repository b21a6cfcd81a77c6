"""The rule modules' word gates (Hit.may_hold) only save time: every corpus log and every log
fixture gives the same findings with the gates open. A pattern added to a gated module without
its word makes this fail on the fixture that comes with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pgdoctor.diagnose.api import diagnose_sources
from pgdoctor.diagnose.event import Hit

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


def _answers(logs: list[tuple[str, str]]) -> dict[str, list[dict[str, object]]]:
    return {name: [f.to_json() for f in diagnose_sources([(name, text)])] for name, text in logs}


def test_the_gates_change_no_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    logs = _logs()
    assert len(logs) > 300
    gated = _answers(logs)
    monkeypatch.setattr(Hit, "may_hold", lambda self, words: True)
    open_ = _answers(logs)
    assert [n for n in gated if gated[n] != open_[n]] == []
