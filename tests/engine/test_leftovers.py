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


def test_one_sweep_goes_by_the_owner_lock_not_the_pid_in_the_name(tmp_path: Path) -> None:
    """The command-start sweep and verify's run-directory sweep are one mechanism. The old
    command-start sweep trusted the pid in a name: a live owner it could not see (another pid
    namespace sharing /tmp) lost its directory, and a dead owner's reused pid kept one forever."""
    import fcntl

    from pgdoctor.probes.processes import OWNER_LOCK
    from pgdoctor.verify.rundir import sweep_stale

    # A live run whose pid is not visible here (1 << 30 is no pid): its lock is held.
    live = tmp_path / f"pgdoctor-coll-{1 << 30}-abc"
    live.mkdir()
    fd = os.open(live / OWNER_LOCK, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    # A dead run whose pid was reused (pid 1 lives): nobody holds its lock.
    dead = tmp_path / "pgdoctor-repro-1-def"
    dead.mkdir()
    (dead / OWNER_LOCK).write_text("1\n")
    dead_verify = tmp_path / "pgdoctor-verify-xyz"
    dead_verify.mkdir()
    (dead_verify / OWNER_LOCK).write_text("1\n")
    try:
        assert sorted(clean_stale_temp(str(tmp_path))) == sorted([str(dead), str(dead_verify)])
        assert live.exists() and sweep_stale(str(tmp_path)) == []
    finally:
        os.close(fd)
    assert sweep_stale(str(tmp_path)) == [str(live)]
