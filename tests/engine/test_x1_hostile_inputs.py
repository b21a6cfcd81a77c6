"""Hostile inputs, x1's round (2026-12-07): each test is one class of input that misbehaved, run as a
real command (`python -m pgdoctor`) on files made here: error lines that echoed secrets and mangled
file names, a pipe reader that left (exit 1, "findings"), Ctrl-C during the import, sizes past any
float, text inputs with a byte-order mark, `topo --from /dev/zero`, empty paths, a stdin that never
closes, and the cache's folder under a missing home."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pgdoctor.diagnose.text import cache
from pgdoctor.knowledge.units import parse_binary_bytes
from tests.helpers.paths import ROOT

TOKEN = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345"
SNAPSHOT = {
    "schema_version": 1,
    "kind": "pgdoctor.snapshot",
    "pgdoctor_version": "x",
    "host": "node1",
    "time_unix": 0,
    "level": "quick",
    "probes": [],
}
MODEL = {"hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 16, "vocab_size": 32000}


def run(*argv: str, timeout: float = 60, **kw: object) -> subprocess.CompletedProcess[bytes]:
    kw.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-m", "pgdoctor", *argv], capture_output=True, timeout=timeout, **kw
    )


def one_error_line(proc: subprocess.CompletedProcess[bytes]) -> str:
    lines = proc.stderr.decode().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("pgdoctor: error: "), lines
    return lines[0]


@pytest.mark.parametrize(
    "argv",
    [
        ["explain", TOKEN],
        ["explain", "https://admin:hunter2@node1"],
        ["list", "--area", f"x {TOKEN}"],
        ["check", "--only", f"x {TOKEN}"],
        ["check", "--level", "quick", "--config", "/nonexistent/admin:hunter2@node1.toml"],
        ["plan", "--params", "7B", "--gpu", "h100-sxm", "--interconnect", TOKEN],
        ["run", "--", f"/nonexistent/{TOKEN}"],
    ],
)
def test_an_error_line_never_echoes_a_secret_it_was_given(argv: list[str]) -> None:
    line = one_error_line(run(*argv))
    assert TOKEN not in line and "hunter2" not in line
    assert "<redacted>" in line


def test_an_error_line_names_a_file_with_terminal_control_exactly_escaped() -> None:
    """click strips CSI sequences from a line written into a pipe: the error named `a\\x07.json`
    for a file called `a ESC[2J BEL .json`. The line is escaped before click sees it."""
    line = one_error_line(run("check", "--from", "/nonexistent/a\x1b[2J\x07.json"))
    assert "/nonexistent/a\\x1b[2J\\x07.json" in line
    assert "\x1b" not in line and "\x07" not in line


def test_an_error_line_is_clipped() -> None:
    line = one_error_line(run("explain", "x" * 100_000))
    assert len(line) <= 2000


@pytest.mark.parametrize(
    "argv",
    [["list"], ["explain", "RUN101"], ["list", "--config"], ["plan", "--params", "7B", "--gpu", "h100-sxm"]],
)
def test_a_reader_that_leaves_is_exit_0_not_findings(argv: list[str]) -> None:
    """`pgdoctor list | head -1`: click answered the EPIPE with sys.exit(1), which a script reads
    as "findings found"; a small report that broke the pipe at the exit flush was exit 120 with
    "Exception ignored". The pipe's read end is closed before pgdoctor writes, so every write fails."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pgdoctor", *argv],
            stdout=write_end,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr and b"Exception ignored" not in proc.stderr


def test_ctrl_c_while_the_cli_imports_is_one_line_and_130() -> None:
    """The entry point installs a handler before `import pgdoctor.cli` (click, the engine): a Ctrl-C
    in that tenth of a second printed an import's KeyboardInterrupt traceback. The handler is
    fired here by hand, where the import would be."""
    script = (
        "import os, signal, time\n"
        "from pgdoctor.__main__ import _interrupted_while_starting\n"
        "signal.signal(signal.SIGINT, _interrupted_while_starting)\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "time.sleep(30)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=30)
    assert proc.returncode == 130
    assert proc.stderr == b"pgdoctor: interrupted\n"
    assert 'pgdoctor = "pgdoctor.__main__:run"' in (ROOT / "pyproject.toml").read_text()


@pytest.mark.parametrize("text", ["1e309", "9" * 400, "nan", "inf", "2e18"])
def test_a_sweep_size_past_any_float_is_a_usage_error(text: str) -> None:
    with pytest.raises(ValueError):
        parse_binary_bytes(text)


def test_bench_refuses_an_infinite_size_as_usage() -> None:
    assert "1e309" in one_error_line(run("bench", "collectives", "--min-bytes", "1e309"))


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-32"])
def test_named_text_inputs_with_a_byte_order_mark_are_read(tmp_path: Path, encoding: str) -> None:
    """Notepad's UTF-8 BOM and PowerShell's UTF-16: json and tomllib refuse a BOM, and
    `topo --from` of a UTF-16 snapshot was an internal error (exit 4)."""
    snap, model, config = tmp_path / "s.json", tmp_path / "config.json", tmp_path / "c.toml"
    snap.write_text(json.dumps(SNAPSHOT), encoding=encoding)
    model.write_text(json.dumps(MODEL), encoding=encoding)
    config.write_text("[traces]\n", encoding=encoding)
    for argv in (
        ["check", "--from", str(snap), "--config", str(config)],
        ["plan", "--model", str(model), "--gpu", "h100-sxm"],
    ):
        proc = run(*argv)
        assert proc.returncode in (0, 1), (argv, proc.stderr)
    proc = run("topo", "--from", str(snap))
    assert proc.returncode == 2 and b"no topology in this snapshot" in proc.stderr  # read, and judged


def test_a_file_in_no_encoding_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_bytes(b"# caf\xe9\n[traces]\n")
    assert "not text in UTF-8" in one_error_line(run("check", "--level", "quick", "--config", str(path)))


@pytest.mark.parametrize("kind", ["zero", "urandom", "fifo", "directory"])
def test_topo_from_an_endless_or_odd_file_is_refused_at_once(tmp_path: Path, kind: str) -> None:
    """topo read its snapshot with open().read(): /dev/zero filled memory, a FIFO blocked forever."""
    path = {"zero": "/dev/zero", "urandom": "/dev/urandom"}.get(kind, str(tmp_path / "in"))
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        os.mkdir(path)
    one_error_line(run("topo", "--from", path, timeout=30))


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--from", ""],
        ["topo", "--from", ""],
        ["plan", "--params", "7B", "--gpu", "h100-sxm", "--from", " "],
        ["plan", "--model", "", "--gpu", "h100-sxm"],
        ["check", "--level", "quick", "--config", ""],
    ],
)
def test_an_empty_path_is_a_usage_error_not_the_option_left_out(argv: list[str]) -> None:
    """`check --from "$SNAP"` with SNAP unset probed the live host and passed."""
    assert "an empty path" in one_error_line(run(*argv))


def test_a_stdin_that_never_sends_nor_closes_is_bounded_by_timeout() -> None:
    """`diagnose -` peeked at stdin for its first byte before --timeout started counting."""
    read_end, write_end = os.pipe()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pgdoctor", "diagnose", "--timeout", "1", "-"],
            stdin=read_end,
            capture_output=True,
            timeout=60,
        )
    finally:
        os.close(read_end)
        os.close(write_end)
    assert proc.returncode == 3, proc.stderr
    assert b"did not finish within --timeout 1 s" in proc.stderr


@pytest.mark.parametrize(
    "env",
    [
        {"HOME": "{tmp}/missing"},
        {"HOME": ""},
        {"HOME": "{tmp}/home", "XDG_CACHE_HOME": "relative-cache"},
    ],
)
def test_the_cache_never_makes_a_home_nor_a_folder_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str]
) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    monkeypatch.delenv("PGDOCTOR_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value.format(tmp=tmp_path))
    before = sorted(tmp_path.rglob("*"))
    cache.write_cached("x1", "probe.json", b"{}")
    assert cache.read_cached("x1", "probe.json") in (None, b"{}")
    made = sorted(set(tmp_path.rglob("*")) - set(before))
    if env.get("XDG_CACHE_HOME"):  # the home exists: the cache goes there, never into the cwd
        assert cache.cache_dir() == tmp_path / "home" / ".cache" / "pgdoctor"
        assert not list((tmp_path / "cwd").iterdir())
    else:
        assert cache.cache_dir() is None and made == []


@pytest.mark.parametrize(
    "matrix",
    [{"a": [1]}, {"devices": [5], "cells": [["X"]]}, {"devices": ["GPU0", "GPU1"], "cells": [["X"]]}],
)
def test_topo_from_a_snapshot_with_a_damaged_matrix_is_one_line(tmp_path: Path, matrix: dict) -> None:  # type: ignore[type-arg]
    probe = {"name": "topology", "area": "net", "status": "passed"}
    snap = {**SNAPSHOT, "probes": [{**probe, "measurements": [{"key": "topo.matrix", "value": matrix}]}]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(snap))
    assert "damaged" in one_error_line(run("topo", "--from", str(path)))
