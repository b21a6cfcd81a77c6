"""Saved hang evidence (`hang --save`'s hang-rank<R>.json) that is cut, not JSON or of another schema
was dropped silently by `pgdoctor diagnose DIR`: no `skipped:` line, and a directory of nothing
else ended "no hang" (exit 0). It is listed as skipped with its reason, as other unreadable inputs
are (meta.skipped_unreadable_files); the other ranks still vote, and a directory whose evidence is
all damaged is incomplete (exit 3: no input could be read). The good files are written from
RankEvidence.to_json, as --save writes them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pgdoctor.cli import main as cli
from pgdoctor.diagnose.stacks.evidence import Frame, RankEvidence

WAIT = [
    Frame("/x/torch/distributed/distributed_c10d.py", 3252, "all_reduce"),
    Frame("/job/train.py", 67, "main"),
]
STUCK = [Frame("/job/train.py", 40, "load_batch"), Frame("/job/train.py", 66, "main")]


def _good(d: Path, rank: int, stack: list[Frame]) -> str:
    ev = RankEvidence(rank=rank, pid=100 + rank, samples=[stack, stack], cpu_s=[1.0, 1.0], world_size=3)
    ev.tiers["proc"] = "ok"
    path = d / f"hang-rank{rank}.json"
    path.write_text(ev.dumps())
    return str(path)


def _damaged(d: Path, how: str) -> tuple[str, str]:
    """A damaged hang-rank2.json and a word its reason must hold."""
    text = RankEvidence(rank=2, pid=102, samples=[WAIT], cpu_s=[1.0]).dumps()
    data: dict[str, Any] = json.loads(text)
    body, word = {
        "cut": (text[: len(text) // 2], "cut short"),
        "cut_before_magic": (text[:8], "cut short"),
        "empty": ("", "cut short"),
        "not_json": ('{"pgdoctor_hang_evidence": 1, rank: two}', "not JSON"),
        "garbage": ("py-spy: Permission denied\n", "not JSON"),
        "other_version": (json.dumps({**data, "pgdoctor_hang_evidence": 2}), "another schema"),
        "no_rank": (json.dumps({k: v for k, v in data.items() if k != "rank"}), "damaged field"),
        "list": ("[1, 2]", "not the evidence"),
        "other_json": ('{"traceEvents": []}', "not the evidence"),
    }[how]
    path = d / "hang-rank2.json"
    path.write_text(body)
    return str(path), word


def _diagnose(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as done:
        cli(["diagnose", *argv])
    return int(done.value.code or 0), capsys.readouterr().out


HOWS = [
    "cut",
    "cut_before_magic",
    "empty",
    "not_json",
    "garbage",
    "other_version",
    "no_rank",
    "list",
    "other_json",
]


@pytest.mark.parametrize("how", HOWS)
def test_a_damaged_file_is_skipped_with_its_reason_and_the_others_vote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    _good(tmp_path, 0, WAIT)
    _good(tmp_path, 1, STUCK)
    bad, word = _damaged(tmp_path, how)
    code, out = _diagnose(capsys, "--json", str(tmp_path))
    report = json.loads(out)
    skipped = report["meta"]["skipped_unreadable_files"]
    assert [s.split(": ")[0] for s in skipped] == [bad], skipped
    assert word in skipped[0], skipped
    assert code == 1  # the two good ranks still name the culprit: a hang finding
    assert sorted(r["rank"] for j in report["hang"]["jobs"] for r in j["ranks"]) == [0, 1]
    code, out = _diagnose(capsys, str(tmp_path))
    assert code == 1 and f"skipped: {bad}: " in out, out


@pytest.mark.parametrize("how", ["cut", "not_json", "other_version"])
def test_evidence_all_damaged_is_incomplete_not_no_hang(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    bad, word = _damaged(tmp_path, how)
    code, out = _diagnose(capsys, "--json", str(tmp_path))
    report = json.loads(out)
    assert code == 3, report
    assert report["incomplete"] == ["no input could be read: 1 skipped"], report
    assert word in report["meta"]["skipped_unreadable_files"][0]
    code, out = _diagnose(capsys, bad)  # named on the command line: the same
    assert code == 3 and "incomplete:" in out and f"skipped: {bad}: " in out, out
