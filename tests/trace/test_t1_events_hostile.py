"""`python -m pgdoctor.trace DIR` on rank event files it did not write itself: events with the
wrong types are skipped, never a traceback (an int() of a string pid, a sort of mixed types)."""

from __future__ import annotations

import json
from pathlib import Path

from pgdoctor.trace.events import main, read_events


def test_merge_skips_events_of_the_wrong_shape(tmp_path: Path) -> None:
    good = {"ph": "X", "name": "step n=0", "pid": 0, "tid": 7, "ts": 5.0, "dur": 1.0}
    bad = [
        {"ph": "X", "name": "a", "pid": "zero", "tid": 1, "ts": 1, "dur": 2},
        {"ph": "X", "name": "b", "tid": 1, "ts": "x", "dur": None},
        {"ph": "X", "name": "c", "tid": "t", "ts": 1, "dur": 1},
        {"ph": "X", "name": 5, "tid": 1, "ts": 1, "dur": 1},
        {"ph": "X", "name": "d", "tid": 1, "ts": 1, "dur": -3},
        {"ph": "X", "name": "e", "tid": 1, "ts": True, "dur": 1},
        [1, 2],
    ]
    lines = [json.dumps(e) for e in bad] + [
        '{"ph":"X","name":"f","tid":1,"ts":1e400,"dur":1}',
        json.dumps(good),
    ]
    (tmp_path / "rank0.events.jsonl").write_bytes(b"\xff\xfe torn\n" + "\n".join(lines).encode())
    assert read_events(tmp_path / "rank0.events.jsonl") == [good]
    out = tmp_path / "merged.json"
    assert main([str(tmp_path), "-o", str(out)]) == 0
    merged = json.loads(out.read_text())
    assert [e["name"] for e in merged["traceEvents"] if e["ph"] == "X"] == ["step n=0"]
