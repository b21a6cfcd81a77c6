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
from typing import Optional

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


def _a_descendant_stops(root: int, within_s: float = 20.0) -> bool:
    import time

    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        parent, state = {}, {}
        for d in Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            parent[int(d.name)], state[int(d.name)] = int(fields[1]), fields[0]
        for pid, st in state.items():
            up = pid
            while up in parent and up != root:
                up = parent[up]
            if up == root and pid != root and st == "T":
                return True
        time.sleep(0.05)
    return False


def test_sigterm_ends_a_job_that_stopped_itself(no_leftover_children) -> None:
    # `sh -c 'kill -STOP $$'`: the forwarded SIGTERM stayed pending in the stopped shell, and run
    # (and `timeout 90 pgdoctor run ...` around it) waited forever.
    p = subprocess.Popen(
        [*PGDOCTOR, "--", "sh", "-c", "echo up; kill -STOP $$; exit 7"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert p.stdout is not None and p.stdout.readline() == "up\n"
        assert _a_descendant_stops(p.pid), "the job never stopped"
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=30) == 128 + signal.SIGTERM
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


def _snapshot_naming(report: dict, rank: int) -> Path:
    """The directory of the stall snapshot that named `rank` the culprit. Not simply the last one:
    on a loaded host a snapshot can also catch the ranks still importing torch (before) or
    torchrun killing them after their timeout (after), with no socket or fewer rank files."""
    snaps = report["meta"]["stall_snapshots"]
    naming = [s for s in snaps if s["culprit"] and f"rank {rank} " in s["culprit"]]
    assert naming, snaps
    return Path(naming[0]["dir"])


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
    # The snapshot that named the culprit was taken while the ranks were alive (a dead rank has no
    # stack), well before the gloo timeout.
    rank2 = json.loads((_snapshot_naming(report, 2) / "hang-rank2.json").read_text())
    # read through the socket the shim started in every rank (no code in the job)
    assert rank2["stack"][0]["function"] == "nap" and rank2["tiers"]["socket"] == "ok"
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


@pytest.mark.slow
def test_ranks_spinning_in_a_busy_wait_are_called_stalled(tmp_path: Path, no_leftover_children) -> None:
    """Ranks 0-1 poll their all_reduce's work handle (a core each, no step) while rank 2 sleeps:
    CPU time is not progress, so the stall is seen and the snapshot names rank 2."""
    _, report = _run_job(tmp_path, "spin", [2], nproc=3, life_s=12, stall_after=2)
    snap = _snapshot_naming(report, 2)
    assert any(
        "rank 2 is elsewhere, at hang_culprit.py:7" in (x["culprit"] or "")
        for x in report["meta"]["stall_snapshots"]
    )
    root = report["findings"][0]
    assert root["code"] == "HNG101" and root["facts"]["ranks"] == [2], root
    spinner = json.loads((snap / "hang-rank0.json").read_text())
    # The spinner burned CPU during the snapshot, and still did not count as progress. A sleeping
    # rank burns none; a spinner gets what the machine leaves it (0.199 of a core once under CI load).
    wall = spinner["sample_times_s"][-1] - spinner["sample_times_s"][0]
    assert (spinner["cpu_s"][-1] - spinner["cpu_s"][0]) / wall > 0.05 and spinner["quiet_s"] >= 2
    assert report["hang"]["jobs"][0]["progressing_ranks"] == []


@pytest.mark.slow
def test_run_starts_every_ranks_socket_without_code(tmp_path: Path, no_leftover_children) -> None:
    """hang_job never calls pgdoctor.live() here: the shim `run` puts on PYTHONPATH starts each
    rank's socket, whose collective sequence number then shows a silent healthy job's progress."""
    # A 4 s stall bound in a 6 s life: a job whose sockets showed no progress is still stalled (and
    # killed) before its end, and a loaded machine's slow socket start is not taken for one (2 s was).
    p, report = _run_job(tmp_path, "healthy", [], nproc=2, life_s=6, stall_after=4)
    assert p.returncode == 0, p.stderr[-2000:]
    meta = report["meta"]
    assert meta["progress"]["socket_moves"] >= 2, meta["progress"]
    # (a loaded machine may take a snapshot while the silent ranks still import torch: discarded)
    assert meta["stall_snapshots"] == []
    path = next(a["value"] for a in meta["env_applied"] if a["name"] == "PYTHONPATH")
    shim = path.split(os.pathsep)[0]
    assert shim.endswith("/site") and not os.path.exists(shim)  # the shim went with the run


@pytest.mark.slow
def test_the_shims_socket_names_the_culprit(tmp_path: Path, no_leftover_children) -> None:
    _, report = _run_job(tmp_path, "sleep", [1], nproc=2, life_s=8, stall_after=2)
    snap = _snapshot_naming(report, 1)
    for r in (0, 1):
        assert json.loads((snap / f"hang-rank{r}.json").read_text())["tiers"]["socket"] == "ok"
    assert report["hang"]["jobs"][0]["culprits"] == [1]


def test_shim_runs_the_sitecustomize_it_shadows_and_only_ranks_start(tmp_path: Path) -> None:
    from pgdoctor.hang import shim
    from pgdoctor.trace import autostart

    user = tmp_path / "user"
    user.mkdir()
    (user / "sitecustomize.py").write_text("import os\nos.environ['USER_SITE_RAN'] = '1'\n")
    env, _ = prepared({**os.environ, "PYTHONPATH": str(user)}, str(tmp_path / "ev"), str(tmp_path / "live"))
    (tmp_path / "live").mkdir(mode=0o700)
    shim.install(str(tmp_path / "live" / "site"))
    assert env["PYTHONPATH"].split(os.pathsep) == [str(tmp_path / "live" / "site"), str(user)]
    probe = (
        "import os, sys; from pgdoctor.trace import live;"
        "print(os.environ.get('USER_SITE_RAN'), live._started is not None)"
    )
    for extra, started in (({"RANK": "3"}, "True"), ({}, "False")):
        out = subprocess.run(
            [sys.executable, "-c", probe],
            env={**{k: v for k, v in env.items() if k != "RANK"}, **extra},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.stdout.split() == ["1", started], out.stderr
    assert autostart.is_rank({"RANK": "2"}, {"RANK": "2"}) is False  # a rank's own child process
    assert autostart.is_rank({"SLURM_PROCID": "2"}, None) is True  # parent unreadable (slurmstepd)
    off, applied = prepared({"PGDOCTOR_LIVE": "0", "PYTHONPATH": "/u"}, "/ev", "/live")
    assert off["PYTHONPATH"] == "/u" and "PYTHONPATH" not in {a["name"] for a in applied}


@pytest.mark.slow
def test_a_silent_pause_that_resumes_leaves_no_root_cause(tmp_path: Path, no_leftover_children) -> None:
    """Rank 0 sits in one frame for 6 s (a long checkpoint) with nothing printed: the stall is
    snapshotted, but the job steps again and exits 0, so the report has no root cause."""
    p, report = _run_job(tmp_path, "pause", [0, 6], nproc=2, life_s=30, stall_after=2)
    assert p.returncode == 0, p.stderr[-2000:]
    assert report["meta"]["stall_snapshots"], p.stderr[-2000:]
    assert report["meta"]["progress"]["recovered_after_snapshot"] is True
    assert not [f for f in report["findings"] if f["severity"] == "fail"], report["findings"]
    assert "pgdoctor run: ok (exit 0)" in p.stderr


def _started(pid: int) -> str:
    """The kernel's start time of a process (its identity beside a pid that may be reused); '' once
    it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return ""
    return "" if fields[0] in ("Z", "X") else fields[19]


def _alive(ranks: dict[int, str], seconds: float) -> list[int]:
    """The recorded processes still running (same pid, same start time) after up to `seconds`."""
    import time

    end = time.monotonic() + seconds
    while True:
        alive = [pid for pid, st in ranks.items() if _started(pid) == st]
        if not alive or time.monotonic() > end:
            return alive
        time.sleep(0.05)


# Each background rank writes its pid and start time (field 22 of /proc/PID/stat) as it starts.
_RECORD = "{sleep} & echo $! $(cut -d' ' -f22 /proc/$!/stat) >> {pids}"


def _recorded(pids: Path, count: int, seconds: float = 30) -> dict[int, str]:
    import time

    end = time.monotonic() + seconds
    while True:
        rows = [r.split() for r in pids.read_text().splitlines()] if pids.exists() else []
        if len(rows) >= count and all(len(r) == 2 for r in rows[:count]):
            return {int(pid): st for pid, st in rows[:count]}
        if time.monotonic() >= end:
            break
        time.sleep(0.05)
    raise AssertionError(f"the launcher did not start its {count} background ranks in {seconds} s")


@pytest.mark.slow
@pytest.mark.parametrize("session", ["", "setsid "], ids=["launchers-group", "own-session"])
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL, None], ids=["sigterm", "sigkill", "exits"])
def test_a_shell_launchers_background_ranks_do_not_outlive_run(
    tmp_path: Path, stop: Optional[int], session: str
) -> None:
    # A shell does not pass SIGTERM on to its background jobs; a launcher that ends leaves them
    # orphaned (here holding run's stdout); after a SIGKILL of run nothing of pgdoctor runs (the
    # OOM killer, a scheduler's grace period). In each case the ranks ran on after `pgdoctor run` had
    # ended. Ranks in a session of their own (`setsid`, as torchrun starts each rank) are out of
    # reach of any process-group kill: they are the job's guard's descendants all the same.
    pids = tmp_path / "pids"
    script = "; ".join(_RECORD.format(sleep=f"{session}sleep {n}", pids=pids) for n in (120, 121))
    ranks: dict[int, str] = {}
    p = subprocess.Popen(
        [*PGDOCTOR, "--", "bash", "-c", script + ("; wait" if stop else "")],
        stdout=subprocess.PIPE if stop is None else subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    try:
        ranks = _recorded(pids, 2)
        if stop is not None:
            p.send_signal(stop)
        p.communicate(timeout=90)
        if stop is None:
            assert p.returncode == 0
        assert _alive(ranks, 10) == []
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        for pid in _alive(ranks, 0):  # the test's own clean-up when the behaviour is broken
            os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
def test_torchruns_ranks_in_their_own_sessions_do_not_outlive_a_killed_run(tmp_path: Path) -> None:
    # torchrun (elastic's SubprocessHandler) starts each rank with start_new_session: a SIGKILL of
    # `run` (the OOM killer, a scheduler's grace period) takes torchrun, and no group kill reaches
    # the ranks. The guard, their subreaper, kills them when run's pipe to it closes.
    import time

    ready = tmp_path / "ready"
    ready.mkdir()
    p = subprocess.Popen(
        [*PGDOCTOR, "--", *torchrun_argv("sleep", [0, 1], 2)],
        env=job_env(ready, 120),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    ranks: dict[int, str] = {}
    try:
        end = time.monotonic() + 90
        while len(list(ready.glob("ready-*"))) < 2 and time.monotonic() < end and p.poll() is None:
            time.sleep(0.1)
        pids = [int(f.read_text()) for f in sorted(ready.glob("ready-*"))]
        assert len(pids) == 2, "the two ranks did not start"
        ranks = {pid: _started(pid) for pid in pids}
        assert all(os.getsid(pid) == pid for pid in pids)  # each leads a session of its own
        p.kill()
        p.wait(timeout=30)
        assert _alive(ranks, 15) == []
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        for pid in _alive(ranks, 0):  # the test's own clean-up when the behaviour is broken
            os.kill(pid, signal.SIGKILL)
