"""A rank whose flight-recorder dump is there but cut (killed while it dumped, a disk that filled)
was said to have "left no flight-recorder dump", a wrong fact about a file the user can see. The
dumps are the real 4-rank gloo `died` scenario of tests/fixtures/fr/ (torch 2.13.0 CPU; rank 2 exits
before dumping); the cut file is the first half of a real rank's pickle, named as rank 2's."""

from __future__ import annotations

import tarfile
from pathlib import Path

from pgdoctor.diagnose.api import diagnose_paths
from tests.helpers.paths import FIXTURES


def _died(tmp_path: Path) -> Path:
    with tarfile.open(FIXTURES / "fr" / "died.tar") as tf:
        tf.extractall(tmp_path, filter="data")
    return tmp_path


def _root(tmp_path: Path) -> tuple[str, dict]:  # type: ignore[type-arg]
    report = diagnose_paths([], [str(tmp_path)])
    root = report.findings[0]
    return root.message, root.facts


def test_a_rank_without_a_dump_still_left_none(tmp_path: Path) -> None:
    message, facts = _root(_died(tmp_path))
    assert "rank 2 left no flight-recorder dump" in message
    assert "cut_dump_ranks" not in facts


def test_a_rank_whose_dump_is_cut_is_said_to_have_one_that_cannot_be_read(tmp_path: Path) -> None:
    d = _died(tmp_path)
    whole = (d / "rank3.pkl").read_bytes()
    (d / "rank2.pkl").write_bytes(whole[: len(whole) // 2])
    message, facts = _root(d)
    assert facts["missing_ranks"] == [2] and facts["cut_dump_ranks"] == [2]
    assert "rank 2 left a dump that is cut off" in message
    assert "left no flight-recorder dump" not in message
