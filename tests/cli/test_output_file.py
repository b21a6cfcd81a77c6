"""-o FILE (cli/output.py): checked up front on every command, written to a temporary file in the
same directory and renamed, so a full disk leaves the previous report whole; a symbolic link is
refused unless --follow-symlinks; a SIGKILLed writer's temporary file goes at the next write."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

QUICK = ["check", "--level", "quick", "--only", "launch", "--json"]


def _run(*argv: str, preexec=None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    return subprocess.run(
        [sys.executable, "-m", "pgdoctor", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        preexec_fn=preexec,
        cwd=cwd,
    )


def _small_files() -> None:
    signal.signal(
        signal.SIGXFSZ, signal.SIG_IGN
    )  # a write past the limit fails with EFBIG, as on a full disk
    resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))


def test_a_full_disk_leaves_the_previous_report_whole(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    assert _run(*QUICK, "-o", str(out)).returncode in (0, 1)
    before = out.read_text()
    p = _run(*QUICK, "-o", str(out), preexec=_small_files)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "unchanged" in p.stderr, p.stderr
    assert out.read_text() == before and json.loads(before)["command"] == "check"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["r.json"]  # no temporary file left


def test_a_symbolic_link_is_refused_unless_asked(tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.write_text("keep me")
    link = tmp_path / "r.json"
    link.symlink_to(target)
    t0 = time.monotonic()
    p = _run(*QUICK, "-o", str(link))
    assert p.returncode == 2 and "symbolic link" in p.stderr and target.read_text() == "keep me", p.stderr
    assert time.monotonic() - t0 < 30
    p = _run(*QUICK, "-o", str(link), "--follow-symlinks")
    assert p.returncode in (0, 1), p.stderr
    assert link.is_symlink() and json.loads(target.read_text())["command"] == "check"


def test_a_link_to_a_pipe_is_written_in_place() -> None:
    p = _run("check", "--level", "quick", "--only", "launch", "-o", "/dev/stdout")
    assert p.returncode in (0, 1) and "on " in p.stdout, p.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "scaling", "no_such_module:build", "--nproc", "1,2"],
        ["diagnose", "-"],
        ["collect", "--level", "quick"],
        ["repro", "oom", "--parallel", "ddp", "--nproc", "2"],
    ],
)
def test_every_output_is_checked_before_any_work(argv: list[str], tmp_path: Path) -> None:
    t0 = time.monotonic()
    p = _run(*argv, "-o", str(tmp_path / "missing" / "r.json"))
    assert p.returncode == 2 and "does not exist" in p.stderr, p.stderr
    assert time.monotonic() - t0 < 20


def test_a_killed_writers_temporary_file_is_removed_at_the_next_write(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".r.json.{dead.pid}.pgdoctor-tmp"
    stale.write_text('{"half": ')
    live = tmp_path / f".r.json.{os.getpid()}.pgdoctor-tmp"  # a writer still running keeps its file
    live.write_text("{")
    assert _run(*QUICK, "-o", str(tmp_path / "r.json")).returncode in (0, 1)
    assert not stale.exists() and live.exists()
