"""`python -m pgdoctor.trace DIR` on rank event files it did not write itself: events with the
wrong types are skipped, never a traceback (an int() of a string pid, a sort of mixed types); rank
files that are FIFOs or devices are skipped, and -o is written in place when it is a device, else
whole or not at all."""

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


def _one_rank(directory: Path) -> Path:
    directory.mkdir(exist_ok=True)
    ev = {"ph": "X", "name": "step n=0", "pid": 0, "tid": 7, "ts": 5.0, "dur": 1.0}
    (directory / "rank0.events.jsonl").write_text(json.dumps(ev) + "\n")
    return directory


def test_an_output_that_is_a_device_is_written_in_place_never_replaced(tmp_path: Path) -> None:
    # `-o /dev/null` renamed a regular file over the device node (as root: for every process of the
    # host); a FIFO stands for the device here, which a test may make and remove.
    import os
    import threading

    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    assert main([str(_one_rank(tmp_path / "ev")), "-o", str(fifo)]) == 0
    reader.join(10)
    assert fifo.is_fifo() and json.loads(got[0])["traceEvents"]


def test_outputs_that_cannot_be_written_are_one_line_errors(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    # Each was a traceback (FileNotFoundError, IsADirectoryError) with exit 1.
    d = _one_rank(tmp_path / "ev")
    for out in (tmp_path / "no" / "such" / "t.json", d):
        assert main([str(d), "-o", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("pgdoctor.trace: error: cannot write") and err.count("\n") == 1, err
    assert sorted(p.name for p in d.iterdir()) == ["rank0.events.jsonl"]  # no temporary file left


def test_a_rank_file_that_is_a_fifo_or_a_device_is_skipped_not_read_forever(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    import os

    d = _one_rank(tmp_path / "ev")
    os.mkfifo(d / "rank1.events.jsonl")  # nothing ever writes: reading it blocked forever
    (d / "rank2.events.jsonl").symlink_to("/dev/zero")  # no newline ever: read until memory ran out
    assert main([str(d), "-o", str(tmp_path / "t.json")]) == 0
    err = capsys.readouterr().err
    assert "skipped" in err and "rank1.events.jsonl" in err and "rank2.events.jsonl" in err
    assert [
        e["name"] for e in json.loads((tmp_path / "t.json").read_text())["traceEvents"] if e["ph"] == "X"
    ] == ["step n=0"]
