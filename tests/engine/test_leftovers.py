"""The lower-severity holes of the hostile-input campaign: --ep on a dense model, --nproc without an
upper bound, and temporary directories that a SIGKILLed run leaves (cleaned at the next start).
traces.* values of inf, -1 and nan are in tests/model/test_input_numbers.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pgdoctor.knowledge.ranks import MAX_LOCAL_RANKS
from pgdoctor.probes.processes import clean_stale_temp


def _run(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pgdoctor", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )


def test_ep_on_a_dense_model_is_a_usage_error() -> None:
    p = _run("plan", "--params", "7B", "--gpus-per-node", "8", "--gpu-memory", "80GiB", "--ep", "4")
    assert p.returncode == 2 and "dense" in p.stderr and p.stderr.count("\n") == 1, p.stderr


@pytest.mark.parametrize(
    "argv", [["bench", "collectives", "--backend", "gloo"], ["check", "--level", "quick", "--only", "launch"]]
)
def test_nproc_has_an_upper_bound(argv: list[str]) -> None:
    p = _run(*argv, "--nproc", str(MAX_LOCAL_RANKS + 1))
    assert p.returncode == 2 and str(MAX_LOCAL_RANKS) in p.stderr, p.stderr


def test_temporaries_of_dead_owners_go_and_live_ones_stay(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale_dir = tmp_path / f"pgdoctor-repro-{dead.pid}-abc"
    (stale_dir / "trace").mkdir(parents=True)
    (stale_dir / "trace" / "rank0.json").write_text("{}")
    stale_file = tmp_path / f"pgdoctor-coll-{dead.pid}-x.progress"
    stale_file.write_text("")
    live = tmp_path / f"pgdoctor-verify-batch-{os.getpid()}-def"
    live.mkdir()
    other = tmp_path / "pgdoctor-notours"
    other.mkdir()
    removed = clean_stale_temp(str(tmp_path))
    assert sorted(removed) == sorted([str(stale_dir), str(stale_file)])
    assert live.exists() and other.exists() and not stale_dir.exists()


def test_a_sigkilled_repro_leaves_nothing_after_the_next_start(tmp_path: Path) -> None:
    env = {"TMPDIR": str(tmp_path)}
    p = subprocess.Popen(
        [sys.executable, "-m", "pgdoctor", "repro", "oom", "--parallel", "ddp", "--nproc", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **env},
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(
        x.name.startswith("pgdoctor-repro-") for x in tmp_path.iterdir()
    ):
        time.sleep(0.1)
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    assert any(x.name.startswith("pgdoctor-repro-") for x in tmp_path.iterdir())
    assert _run("list", env=env).returncode == 0
    assert not any(x.name.startswith("pgdoctor-repro-") for x in tmp_path.iterdir())


def test_one_sweep_for_pid_named_and_locked_run_directories(tmp_path: Path) -> None:
    """verify's run directories (owned through a flock on owner.lock) and the pid-named ones are
    swept by the same clean_stale_temp: a free lock or a dead pid means the owner is gone; a lock
    held by a live process, a live pid, or a young directory still without its lock stays."""
    import fcntl

    from pgdoctor.probes.processes import OWNER_LOCK, UNLOCKED_AGE_S

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    by_pid = tmp_path / f"pgdoctor-coll-{dead.pid}-abc"
    by_pid.mkdir()
    (by_pid / "0").write_text("")
    freed = tmp_path / "pgdoctor-verify-batch-k2j4"
    freed.mkdir()
    (freed / OWNER_LOCK).write_text("1\n")
    held = tmp_path / "pgdoctor-verify-m3n5"
    held.mkdir()
    (held / OWNER_LOCK).write_text("2\n")
    young = tmp_path / "pgdoctor-verify-p7q8"
    young.mkdir()
    old = tmp_path / "pgdoctor-verify-r9s0"
    old.mkdir()
    past = time.time() - UNLOCKED_AGE_S - 60
    os.utime(old, (past, past))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time\n"
            f"f = open({str(held / OWNER_LOCK)!r})\n"
            "fcntl.flock(f, fcntl.LOCK_EX)\nprint('locked', flush=True)\ntime.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        removed = clean_stale_temp(str(tmp_path))
        assert sorted(removed) == sorted(str(p) for p in (by_pid, freed, old))
        assert held.exists() and young.exists()
    finally:
        holder.kill()
        holder.wait()
    assert clean_stale_temp(str(tmp_path)) == [str(held)]  # its owner is gone now
    fd = os.open(young / OWNER_LOCK, os.O_CREAT | os.O_WRONLY, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # this process owns it now: the sweep leaves it
        assert clean_stale_temp(str(tmp_path)) == []
    finally:
        os.close(fd)


def test_verify_run_dir_sweeps_with_the_same_mechanism(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    from pgdoctor.probes.processes import OWNER_LOCK
    from pgdoctor.verify.rundir import run_dir

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale_locked = tmp_path / "pgdoctor-verify-scaling-a1b2"
    stale_locked.mkdir()
    (stale_locked / OWNER_LOCK).write_text("1\n")
    stale_pid = tmp_path / f"pgdoctor-repro-{dead.pid}-c3d4"
    stale_pid.mkdir()
    with run_dir("batch") as mine:
        assert not stale_locked.exists() and not stale_pid.exists()
        assert clean_stale_temp(str(tmp_path)) == []  # its own directory is locked by this process
        assert (mine / OWNER_LOCK).exists()
    assert not mine.exists()
