"""What `pgdoctor verify` and `bench scaling` leave behind and open, with real gloo ranks: no TCP
listener on the wildcard address (read from /proc/net/tcp*), no process (the ranks, their
guards, a helper the user's build() started, also in a session of its own) and no run directory
after any exit, SIGINT, SIGTERM or SIGKILL; -o of bench scaling checked before any rank starts."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")

from pgdoctor.verify.rundir import LOCK, PREFIX, run_dir, sweep_stale

TAG = f"test_verify_safety-{os.getpid()}"

# An entry whose build() starts a helper in the rank's process group (as a data loader's server
# would) and whose data() is slow enough to be interrupted.
SLOW_WITH_HELPER = """
import os, subprocess, sys, time
import torch
from torch import nn

def data(rank, world, step):
    time.sleep(float(os.environ.get("SLOW_DATA_S", "0")))
    g = torch.Generator().manual_seed(1000 * step + rank)
    return torch.randn(4, 8, generator=g), torch.randn(4, 3, generator=g)

def build():
    # HELPER_OWN_SESSION=1: the helper leaves the rank's process group (os.setsid, as a daemon does).
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "pgdoctor-test-helper"],
                     start_new_session=os.environ.get("HELPER_OWN_SESSION") == "1")
    return {"model": nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3)), "loss": nn.MSELoss(),
            "data": data}
"""


def _ours() -> dict[int, str]:
    """pid -> command line of every live process carrying this file's tag (the CLI, the ranks, the
    helpers: the environment is inherited; the ranks' guards run with PATH alone)."""
    found = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            if f"PGDOCTOR_TEST_SAFETY_TAG={TAG}".encode() not in (d / "environ").read_bytes():
                continue
            if (d / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
            found[int(d.name)] = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError):
            continue
    return found


def _wait_gone(timeout: float = 15.0) -> dict[int, str]:
    deadline = time.monotonic() + timeout
    while _ours() and time.monotonic() < deadline:
        time.sleep(0.2)
    return _ours()


def _run_dirs(tmp: Path) -> set[str]:
    return {n for n in os.listdir(tmp) if n.startswith(PREFIX)}


def _listeners(pids: set[int]) -> list[tuple[str, str]]:
    """(local address, owner pid) of every TCP socket in LISTEN held by one of `pids`."""
    inodes: dict[str, int] = {}
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes[target[8:-1]] = pid
        except OSError:
            continue
    out = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table, encoding="ascii") as fh:
            next(fh)
            for line in fh:
                f = line.split()
                if f[3] == "0A" and f[9] in inodes:  # LISTEN
                    out.append((f[1], str(inodes[f[9]])))
    return out


WILDCARD = ("00000000:", "00000000000000000000000000000000:")
LOOPBACK = ("0100007F:", "00000000000000000000000001000000:", "0000000000000000FFFF00000100007F:")


@pytest.fixture
def entry(tmp_path: Path) -> Path:
    p = tmp_path / "helper_entry.py"
    p.write_text(SLOW_WITH_HELPER)
    return p


def _env(tmp: Path, **more: str) -> dict[str, str]:
    """The CLI's environment: tagged, its own TMPDIR (its run directories land there only), and
    gloo's interface left to pgdoctor."""
    env = {k: v for k, v in os.environ.items() if k != "GLOO_SOCKET_IFNAME"}
    return {**env, "PGDOCTOR_TEST_SAFETY_TAG": TAG, "TMPDIR": str(tmp), **more}


@pytest.mark.slow
@pytest.mark.parametrize("command", ["verify", "bench"])
def test_no_wildcard_listener_and_nothing_left_after_a_clean_run(
    entry: Path, command: str, tmp_path: Path
) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    argv = (
        [sys.executable, "-m", "pgdoctor", "verify", f"{entry}:build", "--steps", "2"]
        if command == "verify"
        else [
            sys.executable,
            "-m",
            "pgdoctor",
            "bench",
            "scaling",
            f"{entry}:build",
            "--nproc",
            "2",
            "--steps",
            "2",
        ]
    )
    p = subprocess.Popen(
        argv, env=_env(tmp, SLOW_DATA_S="0.5"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    seen: list[tuple[str, str]] = []
    try:
        while p.poll() is None:
            seen.extend(_listeners(set(_ours())))
            time.sleep(0.1)
        _, err = p.communicate(timeout=5)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    assert seen, "no listener seen: the store's server should listen while the ranks run"
    assert not [a for a in seen if a[0].startswith(WILDCARD)], seen
    assert all(a.startswith(LOOPBACK) for a, _ in seen), seen
    assert not _wait_gone(), "a rank or the helper the entry started outlived the run"
    assert not _run_dirs(tmp)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_nothing_left_after_a_signal(entry: Path, sig: int, tmp_path: Path) -> None:
    _signal_the_run(entry, sig, tmp_path, own_session=False)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [None, signal.SIGINT, signal.SIGKILL])
def test_a_helper_in_a_session_of_its_own_dies_with_the_run(
    entry: Path, sig: int | None, tmp_path: Path
) -> None:
    """A helper that build() starts with start_new_session leaves the rank's group, which the rank's
    group kill reached alone: it outlived verify (exit 0, Ctrl-C and SIGKILL alike). The ranks run
    under the guard of `pgdoctor run` (a child subreaper), which kills every descendant."""
    if sig is not None:
        _signal_the_run(entry, sig, tmp_path, own_session=True)
        return
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "verify", f"{entry}:build", "--steps", "1"],
        env=_env(tmp, HELPER_OWN_SESSION="1"),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr
    assert not _wait_gone(), _ours()


def _signal_the_run(entry: Path, sig: int, tmp_path: Path, own_session: bool) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    p = subprocess.Popen(
        [sys.executable, "-m", "pgdoctor", "verify", f"{entry}:build", "--timeout", "120"],
        env=_env(tmp, SLOW_DATA_S="30", HELPER_OWN_SESSION="1" if own_session else "0"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        # the CLI, 2 ranks, the helper of rank 0's reference (its build() runs first); the ranks'
        # guards run with PATH alone, untagged
        while not any("pgdoctor-test-helper" in c for c in _ours().values()) and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(0.5)
        assert len(_ours()) >= 4, _ours()
        assert _run_dirs(tmp)
        p.send_signal(sig)
        p.communicate(timeout=30)
        assert p.returncode == (-9 if sig == signal.SIGKILL else 130)  # SIGTERM unwinds as Ctrl-C does
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert not _wait_gone(), _ours()
    if sig == signal.SIGKILL:
        # Nothing could remove its run directory; the next run's start does.
        assert _run_dirs(tmp) and sweep_stale(str(tmp))
    assert not _run_dirs(tmp)


def test_a_run_dir_is_swept_once_its_owner_died_and_kept_while_it_lives(tmp_path: Path) -> None:
    dead = tmp_path / f"{PREFIX}dead"
    dead.mkdir()
    (dead / LOCK).write_text("1\n")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time\nf = open(sys.argv[1])\n"
            "fcntl.flock(f, fcntl.LOCK_EX)\nprint('locked', flush=True)\ntime.sleep(60)",
            str(dead / LOCK),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        assert sweep_stale(str(tmp_path)) == [] and dead.exists()  # its owner lives
    finally:
        holder.kill()
        holder.wait()
    assert sweep_stale(str(tmp_path)) == [str(dead)] and not dead.exists()
    with run_dir() as live:
        fd = os.open(live / LOCK, os.O_RDONLY)
        try:
            with pytest.raises(OSError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held by this process
        finally:
            os.close(fd)
        assert str(live) not in sweep_stale()
    assert not live.exists()


def test_bench_scaling_checks_its_output_before_any_rank_starts(entry: Path, tmp_path: Path) -> None:
    t0 = time.monotonic()
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pgdoctor",
            "bench",
            "scaling",
            f"{entry}:build",
            "--format",
            "html",
            "-o",
            str(tmp_path / "missing" / "report.html"),
        ],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "does not exist" in r.stderr and "Traceback" not in r.stderr
    assert time.monotonic() - t0 < 30 and not _ours()
