"""Hostile and unlucky inputs, second pass (a red-team round): each test is one class of input
that misbehaved, run as a real command on real files under an address-space cap."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path


MEMORY_CAP = 3 << 30
OOM = b"[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
BIDI = ["\u202e", "\u202d", "\u2066", "\u2067", "\u2068", "\u2069", "\u200f", "\u061c"]


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run(
    *argv: str, env: dict[str, str] | None = None, timeout: float = 30
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "pgdoctor", *argv],
        capture_output=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        preexec_fn=_capped,
        stdin=subprocess.DEVNULL,
    )


def test_bidirectional_controls_in_log_text_and_file_names_never_reach_the_console(tmp_path: Path) -> None:
    # "Trojan Source": U+202E and the isolates reorder what the terminal shows of a line.
    mark = "".join(BIDI).encode()
    name = tmp_path / ("rank0" + "".join(BIDI) + ".log")
    name.write_bytes(OOM.replace(b"memory.", b"memory. " + mark))
    for argv in (
        ["diagnose", str(name)],
        ["diagnose", "--format", "junit", str(name)],
        ["diagnose", "--json", str(name)],
    ):
        p = run(*argv)
        assert p.returncode == 1, p.stderr[-2000:]
        text = (p.stdout + p.stderr).decode()
        assert not any(c in text for c in BIDI), [c for c in BIDI if c in text]
        assert "\\u202e" in text, text[-500:]


def test_a_cap_note_with_a_zero_count_is_written_not_a_crash() -> None:
    # Past the cap of hit lines read, every hit repeated a kind already read: past_cap_read is 0,
    # and the counts reach the notes with their zeros left out (a 200,000-line log exited 4).
    from pgdoctor.diagnose.analyze import cap_notes

    (note,) = cap_notes(
        [{"name": "big.log", "cap_reads": 100_000, "cap_line": 100_001, "past_cap_counted": 7}]
    )
    assert "0 line(s) of a kind not seen before were read and 7 repeating" in note


def _one_line_error(p: subprocess.CompletedProcess[bytes], *words: str) -> None:
    err = p.stderr.decode()
    assert p.returncode == 2, (p.returncode, p.stdout[-500:], err[-2000:])
    assert "Traceback" not in err and err.count("\n") == 1, err
    for w in words:
        assert w in err, err


def test_an_empty_output_name_is_a_usage_error_not_stdout(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(OOM)
    p = run("diagnose", str(log), "-o", "")
    _one_line_error(p, "empty file name")
    assert not p.stdout


def test_a_flight_recorder_device_or_fifo_is_named_as_what_it_is(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    log = tmp_path / "a.log"
    log.write_bytes(OOM)
    for fr in ("/dev/zero", str(tmp_path / "fifo")):
        _one_line_error(
            run("diagnose", str(log), "--flight-recorder", fr), "not a directory nor a regular file"
        )
