"""The roll-call verdict, rank discovery on /proc trees, the stack tools' parsers, the ptrace
refusal causes and the cooperative socket, without a job (fast); real jobs: test_hang_procs.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pgdoctor.diagnose.api import diagnose_paths
from pgdoctor.diagnose.stacks.evidence import Frame, RankEvidence, collective_of, user_frame
from pgdoctor.diagnose.stacks.verdict import analyze, roll_call
from pgdoctor.probes import live
from pgdoctor.probes.ranks import ProcFs, Table
from pgdoctor.probes.stacks import parse_pyspy, parse_pystack, ptrace_refusal
from tests.helpers.paths import FIXTURES

SITE = "/venv/lib/python3.11/site-packages"
C10D = Frame(f"{SITE}/torch/distributed/distributed_c10d.py", 3252, "all_reduce")
BARRIER = Frame(f"{SITE}/torch/distributed/distributed_c10d.py", 4800, "barrier")
SLEEP = Frame("/usr/lib/python3.11/threading.py", 320, "wait")


def ev(
    rank: int, *frames: Frame, cpu: tuple[float, float] = (1.0, 1.0), samples: int = 3, world: int = 4
) -> RankEvidence:
    return RankEvidence(
        rank=rank,
        pid=100 + rank,
        job="j",
        world_size=world,
        samples=[list(frames)] * samples,
        sample_times_s=[0.0, 1.0],
        cpu_s=list(cpu),
    )


def train(line: int) -> Frame:
    return Frame("/job/train.py", line, "<module>")


@pytest.mark.parametrize("code", ["HNG101", "HNG102", "HNG103", "HNG104"])
def test_saved_fixtures_fire_on_bad_and_not_on_good(code: str) -> None:
    base = FIXTURES / "codes" / code
    assert code in {f.code for f in diagnose_paths([str(base / "bad")]).findings}
    assert code not in {f.code for f in diagnose_paths([str(base / "good")]).findings}


def test_culprit_is_the_rank_elsewhere_and_waiting_ranks_never_are() -> None:
    data = Frame("/job/data.py", 6, "load_batch")
    v = roll_call(
        "j", [ev(0, C10D, train(15)), ev(1, C10D, train(15)), ev(2, data, train(12)), ev(3, C10D, train(15))]
    )
    assert v.culprits == [2]
    f = v.findings[0]
    assert f.code == "HNG101" and f.facts["frame"] == "data.py:6" and f.facts["function"] == "load_batch"
    assert f.message.startswith(
        "rank 2 is at data.py:6 in load_batch; ranks 0-1, 3 wait in all_reduce at train.py:15"
    )
    # Three ranks elsewhere, one waiting: the three are the culprits, the waiting one never.
    v = roll_call("j", [ev(0, C10D, train(15)), ev(1, data), ev(2, data), ev(3, data)])
    assert v.culprits == [1, 2, 3]


def test_all_waiting_in_different_collectives_names_the_smaller_group() -> None:
    v = roll_call(
        "j",
        [ev(0, C10D, train(15)), ev(1, C10D, train(15)), ev(2, BARRIER, train(20)), ev(3, C10D, train(15))],
    )
    assert v.culprits == [2] and v.findings[0].code == "HNG101"


def test_all_waiting_in_one_place_names_the_ranks_not_seen() -> None:
    v = roll_call("j", [ev(0, C10D, train(15), world=4), ev(1, C10D, train(15), world=4)])
    assert v.culprits == [] and v.findings[0].code == "HNG102"
    assert v.findings[0].facts["missing_ranks"] == [2, 3]


def test_moving_frame_or_growing_cpu_is_progress_not_a_hang() -> None:
    moving = RankEvidence(rank=1, pid=101, job="j", samples=[[train(10)], [train(11)]])
    v = roll_call("j", [ev(0, C10D, train(15)), moving])
    assert [f.code for f in v.findings] == ["HNG104"] and v.progressing == [1]
    busy = ev(1, Frame("/job/model.py", 3, "compute"), cpu=(1.0, 1.9))
    assert [f.code for f in roll_call("j", [ev(0, C10D, train(15)), busy]).findings] == ["HNG104"]


def test_two_jobs_are_judged_apart() -> None:
    a = [ev(0, C10D, train(15)), ev(1, Frame("/job/x.py", 1, "f"))]
    b = [RankEvidence(rank=r, pid=200 + r, job="k", samples=[[train(r)], [train(r + 1)]]) for r in (0, 1)]
    verdicts = {v.job: v for v in analyze(a + b)}
    assert (
        verdicts["j"].culprits == [1] and verdicts["k"].culprits == [] and verdicts["k"].progressing == [0, 1]
    )


def test_frames_user_and_collective() -> None:
    stack = [
        Frame(f"{SITE}/torch/distributed/distributed_c10d.py", 10, "wait"),
        C10D,
        Frame(f"{SITE}/torch/distributed/c10d_logger.py", 83, "wrapper"),
        train(15),
    ]
    assert user_frame(stack) == train(15) and collective_of(stack) == "all_reduce"
    assert user_frame([SLEEP]) is None and collective_of([SLEEP, train(1)]) == ""


def test_evidence_round_trips() -> None:
    e = ev(3, C10D, train(15))
    assert RankEvidence.from_json(e.to_json()) == e


# --- /proc trees ---------------------------------------------------------------------------


def _proc(
    root: Path,
    pid: int,
    ppid: int,
    cmd: list[str],
    env: dict[str, str] | None,
    uid: int = 0,
    start: int = 100,
) -> None:
    d = root / str(pid)
    d.mkdir(parents=True)
    comm = os.path.basename(cmd[0])[:15]
    fields = ["S", str(ppid)] + ["0"] * 9 + ["5", "3"] + ["0"] * 4 + ["2", "0", str(start)]
    (d / "stat").write_text(f"{pid} ({comm}) {' '.join(fields)}\n")
    (d / "status").write_text(f"Name:\t{comm}\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n")
    (d / "cmdline").write_bytes(b"\0".join(a.encode() for a in cmd) + b"\0")
    (d / "wchan").write_text("futex_wait_queue")
    if env is not None:
        (d / "environ").write_bytes(b"\0".join(f"{k}={v}".encode() for k, v in env.items()) + b"\0")


def _rank_env(rank: int, run_id: str, world: int = 2) -> dict[str, str]:
    return {
        "RANK": str(rank),
        "LOCAL_RANK": str(rank),
        "WORLD_SIZE": str(world),
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": "29500",
        "TORCHELASTIC_RUN_ID": run_id,
    }


def test_ranks_jobs_workers_and_launchers_from_proc(tmp_path: Path) -> None:
    py = "/usr/bin/python3"
    _proc(tmp_path, 10, 1, ["/bin/bash", "job.sh"], {})
    _proc(tmp_path, 11, 10, [py, "-m", "torch.distributed.run", "--nproc-per-node", "2", "train.py"], {})
    _proc(tmp_path, 12, 11, [py, "train.py"], _rank_env(0, "a"))
    _proc(tmp_path, 13, 11, [py, "train.py"], _rank_env(1, "a"))
    _proc(tmp_path, 14, 13, [py, "train.py"], _rank_env(1, "a"))  # rank 1's DataLoader worker
    _proc(tmp_path, 20, 1, ["/usr/local/bin/torchrun", "train.py"], {})
    _proc(tmp_path, 21, 20, [py, "train.py"], _rank_env(0, "b"))
    _proc(tmp_path, 30, 1, ["/bin/sleep", "100"], {"HOME": "/root"})
    table = Table.read(ProcFs(str(tmp_path)))
    ranks = table.ranks()
    assert [(r.job, r.rank, r.proc.pid) for r in ranks] == [("a", 0, 12), ("a", 1, 13), ("b", 0, 21)]
    assert [w.pid for w in ranks[1].workers] == [14]
    assert [r.proc.pid for r in table.resolve(10)] == [12, 13]  # a shell above the launcher
    assert [r.proc.pid for r in table.resolve(14)] == [13]  # a worker names its rank
    assert table.resolve(30) == []


def test_unreadable_environ_falls_back_to_the_launcher_and_start_order(tmp_path: Path) -> None:
    py = "/usr/bin/python3"
    _proc(tmp_path, 11, 1, [py, "-m", "torch.distributed.run", "train.py"], None, uid=1000)
    _proc(tmp_path, 13, 11, [py, "train.py"], None, uid=1000, start=200)
    _proc(tmp_path, 12, 11, [py, "train.py"], None, uid=1000, start=300)
    ranks = Table.read(ProcFs(str(tmp_path))).ranks()
    assert [(r.rank, r.proc.pid, r.source) for r in ranks] == [(1, 12, "cmdline"), (0, 13, "cmdline")]


# --- tools ---------------------------------------------------------------------------------


def test_pyspy_and_pystack_parsers_take_the_main_thread() -> None:
    text = (
        '[{"pid": 5, "thread_id": 1, "thread_name": "pt_autograd", "os_thread_id": 6, "frames": '
        '[{"name": "x", "filename": "a.py", "line": 1}]}, {"pid": 5, "os_thread_id": 5, "frames": '
        '[{"name": "nap", "filename": "b.py", "line": 7}, {"name": "<module>", "filename": "m.py", "line": '
        "2}]}]"
    )
    assert parse_pyspy(text, 5) == [
        {"file": "b.py", "line": 7, "function": "nap"},
        {"file": "m.py", "line": 2, "function": "<module>"},
    ]
    assert parse_pyspy("not json", 5) is None
    out = (
        "Traceback for thread 5 (python) [] (most recent call last):\n"
        '    (Python) File "m.py", line 2, in <module>\n    (Python) File "b.py", line 7, in nap\n'
    )
    assert parse_pystack(out, 5) == [
        {"file": "b.py", "line": 7, "function": "nap"},
        {"file": "m.py", "line": 2, "function": "<module>"},
    ]


@pytest.mark.parametrize(
    "target,euid,cap,scope,words",
    [
        (0, 1000, 0, 0, "runs as uid 0, pgdoctor as uid 1000"),
        (1000, 1000, 0, 1, "ptrace_scope is 1"),
        (1000, 1000, 0, 2, "ptrace_scope is 2"),
        (0, 0, 1 << 19, 3, "ptrace_scope is 3"),
        (0, 0, 0, 0, "no CAP_SYS_PTRACE"),
        (0, 0, 1 << 19, 1, ""),
        (1000, 1000, 0, 0, ""),
    ],
)
def test_ptrace_refusal_names_one_cause_and_its_fix(
    target: int, euid: int, cap: int, scope: int, words: str
) -> None:
    cause, fix = ptrace_refusal(target, euid, cap, scope)
    assert (words in cause and bool(fix)) if words else (cause, fix) == ("", "")


def test_live_socket_answers_with_this_process_stack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pgdoctor.trace import live as server

    monkeypatch.setattr(server, "_started", None)  # an earlier test's instrument() started one elsewhere
    d = tmp_path / "live"
    path = server.start(str(d))
    assert path == str(d / f"{os.getpid()}.sock")
    assert oct(os.stat(d).st_mode & 0o777) == "0o700"
    seen = live.socket_path(os.getpid(), os.getuid(), {"PGDOCTOR_LIVE_DIR": str(d)})
    got: dict = {}
    # asked from another thread while the main thread sits in a known frame
    t = threading.Thread(target=lambda: got.update(live.ask(seen, 5.0) or {}))
    t.start()
    t.join()
    assert got["pid"] == os.getpid()
    assert any(f["function"] == "test_live_socket_answers_with_this_process_stack" for f in got["stack"])
    assert "flight_recorder" not in got  # no process group in this process


def test_pending_seq_reads_gloo_and_nccl_recorders() -> None:
    from pgdoctor.diagnose.stacks.evidence import pending_seq

    gloo = {
        "entries": [
            {"collective_seq_id": 1, "pg_id": 0, "state": "scheduled", "retired": True},
            {"collective_seq_id": 2, "pg_id": 0, "state": "scheduled", "retired": False},
        ]
    }
    nccl = {
        "entries": [
            {"collective_seq_id": 7, "pg_id": 0, "state": "completed"},
            {"collective_seq_id": 8, "pg_id": 0, "state": "started"},
        ]
    }
    assert pending_seq(gloo) == 2 and pending_seq(nccl) == 8
    assert pending_seq({"entries": gloo["entries"][:1]}) is None and pending_seq(None) is None


def _fake_ranks(n: int) -> list[subprocess.Popen[bytes]]:
    """Small Python processes with one job's rank environment (no torch): discovery and tiers."""
    procs = []
    for r in range(n):
        env = {
            **os.environ,
            "RANK": str(r),
            "LOCAL_RANK": str(r),
            "WORLD_SIZE": str(n),
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": "29998",
            "TORCHELASTIC_RUN_ID": f"fake-{os.getpid()}",
        }
        procs.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env=env))
    return procs


def test_interrupt_ends_hang_with_130_and_kills_its_stack_tools(tmp_path: Path, no_leftover_children) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    for tool in ("py-spy", "pystack"):
        (fake / tool).write_text(f"#!/bin/sh\necho $$ >> {tmp_path}/started\nexec sleep 600\n")
        (fake / tool).chmod(0o755)
    ranks = _fake_ranks(2)
    try:
        env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"}
        p = subprocess.Popen(
            [sys.executable, "-m", "pgdoctor", "hang", "--json", *(str(r.pid) for r in ranks)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 30
        while not (tmp_path / "started").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
        assert p.returncode == 130 and "interrupted" in err and out == ""
        for pid in map(int, (tmp_path / "started").read_text().split()):
            assert (
                not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
            )
    finally:
        for r in ranks:
            r.kill()
            r.wait()


def test_timeout_bounds_hang_when_the_stack_tool_never_answers(tmp_path: Path, no_leftover_children) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    for tool in ("py-spy", "pystack"):
        (fake / tool).write_text(f"#!/bin/sh\necho $$ >> {tmp_path}/started\nexec sleep 600\n")
        (fake / tool).chmod(0o755)
    ranks = _fake_ranks(2)
    try:
        env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"}
        t0 = time.monotonic()
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "pgdoctor",
                "hang",
                "--json",
                "--timeout",
                "2",
                *(str(r.pid) for r in ranks),
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert time.monotonic() - t0 < 12  # the bound held: the fake tools would sleep 600 s
        assert p.returncode == 3, p.stderr
        report = json.loads(p.stdout)
        assert [r["tiers"]["py-spy"] for r in report["hang"]["jobs"][0]["ranks"]] == [
            "timed out",
            "timed out",
        ]
        assert {f["code"] for f in report["findings"]} == {"HNG103"}
        for pid in map(int, (tmp_path / "started").read_text().split()):
            assert (
                not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
            )
    finally:
        for r in ranks:
            r.kill()
            r.wait()


# torch's side of the debug-info pipe, played by a small process: the FIFO <stem><rank>.pipe held
# open for reading (O_NONBLOCK, as ProcessGroupNCCL does), and on a byte the recorder written to
# <TORCH_NCCL_DEBUG_INFO_TEMP_FILE><rank>.
PIPE_RANK = """
import json, os, time
stem, dump = os.environ["TORCH_NCCL_DEBUG_INFO_PIPE_FILE"], os.environ["TORCH_NCCL_DEBUG_INFO_TEMP_FILE"]
os.mkfifo(stem + "0.pipe")
fd = os.open(stem + "0.pipe", os.O_RDONLY | os.O_NONBLOCK)
end = time.monotonic() + 60
while time.monotonic() < end:
    try:
        got = os.read(fd, 16)
    except BlockingIOError:
        got = b""
    if got:
        entry = {"record_id": 0, "pg_id": 0, "process_group": ["0", "default_pg"], "collective_seq_id": 5,
                 "p2p_seq_id": 0, "profiling_name": "nccl:all_reduce",
                 "input_sizes": [[8]], "input_dtypes": ["Float"],
                 "output_sizes": [[8]], "output_dtypes": ["Float"], "state": "started", "timeout_ms": 600000,
                 "is_p2p": False, "frames": []}
        with open(dump + "0", "w") as fh:
            pg_config = {"0": {"name": "0", "desc": "default_pg", "ranks": "[0]"}}
            json.dump({"version": "2.4", "pg_config": pg_config,
                       "entries": [entry]}, fh)
    time.sleep(0.02)
"""


def test_nccl_debug_pipe_is_asked_for_the_recorder(tmp_path: Path, no_leftover_children) -> None:
    env = {
        **os.environ,
        "RANK": "0",
        "LOCAL_RANK": "0",
        "WORLD_SIZE": "1",
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": "29997",
        "TORCHELASTIC_RUN_ID": f"pipe-{os.getpid()}",
        "TORCH_NCCL_DEBUG_INFO_PIPE_FILE": str(tmp_path / "pipe-"),
        "TORCH_NCCL_DEBUG_INFO_TEMP_FILE": str(tmp_path / "dump-"),
    }
    rank = subprocess.Popen([sys.executable, "-c", PIPE_RANK], env=env)
    try:
        deadline = time.monotonic() + 20
        while not (tmp_path / "pipe-0.pipe").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "pgdoctor",
                "hang",
                "--json",
                "--tiers",
                "proc",
                "--samples",
                "1",
                "--save",
                str(tmp_path / "snap"),
                str(rank.pid),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        report = json.loads(p.stdout)
        (r,) = report["hang"]["jobs"][0]["ranks"]
        assert r["tiers"]["flight_recorder"] == "ok (nccl pipe)"
        saved = json.loads((tmp_path / "snap" / "fr-rank0.json").read_text())
        assert saved["entries"][0]["collective_seq_id"] == 5
    finally:
        rank.kill()
        rank.wait()


def test_console_table_puts_the_culprit_first() -> None:
    from pgdoctor.diagnose.stacks.report import console_lines

    report = diagnose_paths([str(FIXTURES / "codes" / "HNG101" / "bad")])
    lines = console_lines(report.extra["hang"])
    assert lines[0].startswith("job ") and "4 rank(s)" in lines[0]
    assert lines[1].split()[:3] == ["CULPRIT", "2", "is"] and "hang_culprit.py:7 in nap" in lines[1]
    assert lines[2].split()[0] == "waiting" and "wait in all_reduce at" in lines[2]


def test_srun_tasks_are_ranks_but_their_shells_and_launchers_are_not(tmp_path: Path) -> None:
    py = "/usr/bin/python3"
    slurm = {"SLURM_JOB_ID": "77", "SLURM_STEP_ID": "0", "SLURM_NTASKS": "2"}
    _proc(tmp_path, 10, 1, ["/usr/sbin/slurmstepd", "[77.0]"], {})
    _proc(
        tmp_path,
        11,
        10,
        ["/bin/bash", "-c", "python train.py"],
        {**slurm, "SLURM_PROCID": "1", "SLURM_LOCALID": "1"},
    )
    _proc(tmp_path, 12, 11, [py, "train.py"], {**slurm, "SLURM_PROCID": "1", "SLURM_LOCALID": "1"})
    _proc(
        tmp_path, 13, 12, [py, "train.py"], {**slurm, "SLURM_PROCID": "1", "SLURM_LOCALID": "1"}
    )  # its worker
    # torchrun under srun: the agent carries SLURM_PROCID, its children RANK; only they are ranks.
    _proc(tmp_path, 20, 10, [py, "-m", "torch.distributed.run", "train.py"], {**slurm, "SLURM_PROCID": "0"})
    _proc(tmp_path, 21, 20, [py, "train.py"], {**slurm, "SLURM_PROCID": "0", **_rank_env(0, "t")})
    ranks = Table.read(ProcFs(str(tmp_path))).ranks()
    assert [(r.job, r.rank, r.proc.pid, r.world_size) for r in ranks] == [
        ("slurm-77.0", 1, 12, 2),
        ("t", 0, 21, 2),
    ]
    assert [w.pid for w in ranks[0].workers] == [13]
