"""Saved hang evidence (`hang --save`'s hang-rank<R>.json) with a field of another type than --save
writes was an internal error (exit 4) in `diagnose DIR`: "workers": "x" or "problems": [5] reached a
.get or .items inside RankEvidence.from_json. Such a file is damaged, as one that is not JSON is: it is
skipped and the other ranks still vote. The files are written here from RankEvidence.to_json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pgdoctor.diagnose.stacks.api import diagnose_evidence
from pgdoctor.diagnose.stacks.evidence import Frame, RankEvidence, load_evidence

STACK = [
    Frame("/x/torch/distributed/distributed_c10d.py", 3252, "all_reduce"),
    Frame("/job/train.py", 67, "main"),
]


def _write(tmp_path: Path, rank: int, **damage: Any) -> str:
    ev = RankEvidence(rank=rank, pid=100 + rank, samples=[STACK, STACK], cpu_s=[1.0, 1.0], world_size=2)
    data = {**ev.to_json(), **damage}
    path = tmp_path / f"hang-rank{rank}.json"
    path.write_text(json.dumps(data))
    return str(path)


@pytest.mark.parametrize(
    "damage",
    [
        {"samples": "x"},
        {"problems": "x"},
        {"problems": [5]},
        {"workers": "x"},
        {"workers": [5]},
        {"samples": [[5]]},
        {"tiers": [1, 2]},
    ],
)
def test_a_damaged_field_skips_the_file_and_the_others_still_vote(
    tmp_path: Path, damage: dict[str, Any]
) -> None:
    bad = _write(tmp_path, 0, **damage)
    good = _write(tmp_path, 1)
    with pytest.raises(ValueError, match="damaged field"):
        load_evidence(bad)
    findings, hang = diagnose_evidence([bad, good])
    assert isinstance(findings, list) and hang is not None
