"""`pgdoctor run -- COMMAND`: the child's output and exit code unchanged, signals forwarded, the
evidence environment never overriding the user, a stalled job's hang snapshot taken before the
launcher kills the ranks, a crash's first error as the root cause."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pgdoctor.knowledge.evidence_env import KNOBS, prepared
from tests.helpers.hang_lab import job_env, kill_tree, torchrun_argv
from tests.helpers.paths import ROOT

PGDOCTOR = [sys.executable, "-m", "pgdoctor", "run"]


def test_evidence_env_never_overrides_the_user() -> None:
    env, applied = prepared({"TORCH_FR_BUFFER_SIZE": "50", "PATH": "/bin"}, "/ev", "/live")
    assert env["TORCH_FR_BUFFER_SIZE"] == "50" and env["PATH"] == "/bin"
    assert env["TORCH_FR_DUMP_TEMP_FILE"] == "/ev/fr-rank" and env["PGDOCTOR_LIVE_DIR"] == "/live"
    assert {a["name"] for a in applied} == {k.name for k in KNOBS} - {"TORCH_FR_BUFFER_SIZE"}


def test_every_knob_is_documented() -> None:
    doc = (ROOT / "docs" / "hang.md").read_text()
    assert all(f"`{k.name}`" in doc for k in KNOBS)


def test_output_and_exit_code_pass_through(tmp_path: Path, no_leftover_children) -> None:
    p = subprocess.run(
        [
            *PGDOCTOR,
            "--report",
            str(tmp_path / "r.json"),
            "--",
            sys.executable,
            "-c",
            "import os, sys; print('hello', os.environ['TORCH_FR_BUFFER_SIZE']); sys.exit(7)",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 7 and p.stdout == "hello 2000\n"
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["command"] == "run" and report["meta"]["exit_code"] == 7
    ok = subprocess.run(
        [
            *PGDOCTOR,
            "--preflight",
            "--report",
            str(tmp_path / "ok.json"),
            "--",
            sys.executable,
            "-c",
            "print('fine')",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ok.returncode == 0 and ok.stdout == "fine\n" and "pgdoctor run: ok (exit 0)" in ok.stderr
    assert "pgdoctor run: preflight exit" in ok.stderr
    assert isinstance(json.loads((tmp_path / "ok.json").read_text())["meta"]["preflight"]["exit_code"], int)


def test_sigterm_is_forwarded_and_the_childs_code_returned(no_leftover_children) -> None:
    child = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, lambda *a: sys.exit(42))\n"
        "print('up', flush=True)\n"
        "time.sleep(60)\n"
    )
    p = subprocess.Popen(
        [*PGDOCTOR, "--", sys.executable, "-c", child],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert p.stdout is not None and p.stdout.readline() == "up\n"
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=30) == 42
    finally:
        p.kill()
        p.wait()


def test_unknown_command_is_a_usage_error() -> None:
    p = subprocess.run(
        [*PGDOCTOR, "--", "no-such-command-pgdoctor"], capture_output=True, text=True, timeout=60
    )
    assert (
        p.returncode == 2
        and p.stderr.strip() == "pgdoctor: error: command not found: no-such-command-pgdoctor"
    )


def _run_job(
    tmp_path: Path, scenario: str, args: list[int], nproc: int, life_s: float, stall_after: float
) -> tuple[subprocess.CompletedProcess[str], dict]:
    env = job_env(tmp_path / "ready", life_s)
    (tmp_path / "ready").mkdir()
    argv = [
        *PGDOCTOR,
        "--stall-after",
        str(stall_after),
        "--save",
        str(tmp_path / "ev"),
        "--report",
        str(tmp_path / "r.json"),
        "--",
        *torchrun_argv(scenario, args, nproc),
    ]
    p = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
        start_new_session=True,
    )
    try:
        out, err = p.communicate(timeout=120)
    finally:
        kill_tree(p.pid)
        p.wait()
    return subprocess.CompletedProcess(argv, p.returncode, out, err), json.loads(
        (tmp_path / "r.json").read_text()
    )


@pytest.mark.slow
def test_stalled_rank_is_snapshotted_before_the_launcher_kills_it(
    tmp_path: Path, no_leftover_children
) -> None:
    p, report = _run_job(tmp_path, "sleep", [2], nproc=4, life_s=8, stall_after=2)
    assert p.returncode == 1 == report["meta"]["exit_code"]  # torchrun's code: its ranks timed out
    root = report["findings"][0]
    assert (
        root["code"] == "HNG101"
        and root["facts"]["ranks"] == [2]
        and root["facts"]["frame"] == "hang_culprit.py:7"
    )
    assert "root cause HNG101: rank 2 is at hang_culprit.py:7" in p.stderr
    snap = report["meta"]["stall_snapshots"][-1]
    # Taken while the ranks were alive (a dead rank has no stack), well before the gloo timeout.
    rank2 = json.loads((Path(snap["dir"]) / "hang-rank2.json").read_text())
    assert rank2["stack"][0]["function"] == "nap" and rank2["tiers"]["py-spy"] == "ok"
    assert report["hang"]["jobs"][0]["culprits"] == [2]


@pytest.mark.slow
def test_rank_that_raises_is_the_root_cause(tmp_path: Path, no_leftover_children) -> None:
    p, report = _run_job(tmp_path, "raise", [1], nproc=2, life_s=20, stall_after=30)
    assert p.returncode == 1
    root = report["findings"][0]
    shown = [(f["code"], f["message"][:160]) for f in report["findings"]]
    assert root["code"] == "RUN132" and root["facts"]["rank"] == 1, shown
    assert "sample 17 has 0 tokens" in root["message"]
    assert report["meta"]["stall_snapshots"] == []
    assert os.path.exists(tmp_path / "ev" / "launcher.log")


def test_kept_output_holds_whole_lines_of_both_streams(tmp_path: Path) -> None:
    """stdout and stderr share the kept launcher.log: a half line of one stream must not be
    spliced with the other's line (under load a pipe read returns half lines, and the exception
    line of a traceback was cut in two, so the diagnosis lost the rank's error)."""
    code = (
        "import sys, time\n"
        "sys.stdout.write('first half of a stdout line'); sys.stdout.flush(); time.sleep(0.3)\n"
        "sys.stderr.write('RuntimeError: a whole stderr line\\n'); sys.stderr.flush(); time.sleep(0.3)\n"
        "sys.stdout.write(' and its end\\n'); sys.stdout.write('no newline at the end'); sys.stdout.flush()\n"
    )
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "pgdoctor",
            "run",
            "--save",
            str(tmp_path / "ev"),
            "--",
            sys.executable,
            "-c",
            code,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    kept = (tmp_path / "ev" / "launcher.log").read_text().splitlines()
    assert "first half of a stdout line and its end" in kept, kept
    assert "RuntimeError: a whole stderr line" in kept, kept
    assert kept[-1] == "no newline at the end", kept
