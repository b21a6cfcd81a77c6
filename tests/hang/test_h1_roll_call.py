"""h1: roll-calls of hung jobs the other tests do not hold, on evidence shaped as real reads gave it
(torch 2.13 CPU, gloo, py-spy 0.4): a rank whose main thread runs no Python (it raised and sits in
the interpreter's exit), every rank of the world blocked in `send` (a p2p ring whose sends all go
first), and the ranks of a launcher that started them with multiprocessing's spawn."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pgdoctor.diagnose.stacks.evidence import Frame, RankEvidence, pending_group
from pgdoctor.diagnose.stacks.report import console_lines, hang_json
from pgdoctor.diagnose.stacks.verdict import analyze, roll_call
from pgdoctor.probes.ranks import ProcFs, Table
from pgdoctor.probes.stacks import parse_pyspy, parse_pystack, read_stack

SITE = "/venv/lib/python3.11/site-packages"
C10D = Frame(f"{SITE}/torch/distributed/distributed_c10d.py", 3252, "all_reduce")
SEND = Frame(f"{SITE}/torch/distributed/distributed_c10d.py", 2561, "send")
RECV = Frame(f"{SITE}/torch/distributed/distributed_c10d.py", 2620, "recv")


def train(line: int) -> Frame:
    return Frame("/job/train.py", line, "<module>")


def ev(rank: int, *stacks: list[Frame], world: int = 4) -> RankEvidence:
    return RankEvidence(
        rank=rank,
        pid=100 + rank,
        job="j",
        world_size=world,
        samples=[list(s) for s in stacks],
        sample_times_s=[0.0, 1.0],
        cpu_s=[1.0, 1.0],
    )


def test_a_read_without_a_python_frame_is_no_place_and_no_culprit() -> None:
    # py-spy on a rank that raised and is exiting: its main thread is there, with no Python frame.
    exiting = [ev(r, [], [], []) for r in (1, 3)]
    waiting = ev(0, [C10D, train(81)], [C10D, train(81)], [C10D, train(81)])
    v = roll_call("j", [waiting, *exiting])
    assert v.culprits == [] and v.unknown == [1, 3]
    assert [g.ranks for g in v.groups] == [[0]]
    fail = v.findings[0]
    assert fail.code == "HNG102" and fail.facts["missing_ranks"] == [2]
    assert not fail.message.rstrip().endswith("at")
    # A read with frames before the empty one still places the rank (a later empty read of a rank
    # that began to exit does not erase where it was).
    placed = roll_call("j", [waiting, ev(1, [Frame("/job/data.py", 6, "load")], [])])
    assert placed.culprits == [1] and placed.findings[0].facts["frame"] == "data.py:6"


def test_console_and_json_give_the_last_stack_that_holds_frames() -> None:
    evidence = [ev(0, [C10D, train(15)]), ev(1, [Frame("/job/data.py", 6, "load")], [])]
    section = hang_json(analyze(evidence), evidence)
    ranks = {r["rank"]: r for r in section["jobs"][0]["ranks"]}
    assert ranks[1]["stack"][0]["file"] == "/job/data.py"
    assert "CULPRIT  1" in "\n".join(console_lines(section))


def test_every_rank_in_send_is_a_p2p_cycle_not_a_late_rank() -> None:
    v = roll_call("j", [ev(r, [SEND, train(94)]) for r in range(4)])
    f = v.findings[0]
    assert f.code == "HNG102" and f.facts["missing_ranks"] == []
    assert "all 4 ranks are here" in f.message and "p2p deadlock" in f.message
    assert "were not seen" not in f.message
    recv = roll_call("j", [ev(r, [RECV, train(99)]) for r in range(4)]).findings[0]
    assert "nobody sends" in recv.message
    same = roll_call("j", [ev(r, [C10D, train(15)]) for r in range(4)]).findings[0]
    assert "no rank is late" in same.message


def test_a_rank_without_a_stack_keeps_the_world_open() -> None:
    # Three ranks in send and one unread: the unread one may be elsewhere; no cycle is claimed.
    v = roll_call("j", [*(ev(r, [SEND, train(94)]) for r in range(3)), ev(3, [])])
    assert "p2p deadlock" not in v.findings[0].message


def _proc(root: Path, pid: int, ppid: int, cmd: list[str], env: dict[str, str], start: int = 100) -> None:
    d = root / str(pid)
    d.mkdir(parents=True)
    comm = os.path.basename(cmd[0])[:15]
    fields = ["S", str(ppid)] + ["0"] * 9 + ["5", "3"] + ["0"] * 4 + ["2", "0", str(start)]
    (d / "stat").write_text(f"{pid} ({comm}) {' '.join(fields)}\n")
    (d / "status").write_text(f"Name:\t{comm}\nUid:\t0\t0\t0\t0\n")
    (d / "cmdline").write_bytes(b"\0".join(a.encode() for a in cmd) + b"\0")
    (d / "environ").write_bytes(b"\0".join(f"{k}={v}".encode() for k, v in env.items()) + b"\0")


SPAWNED = [
    "/usr/bin/python3",
    "-c",
    "from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5, pipe_handle=9)",
    "--multiprocessing-fork",
]
TRACKER = ["/usr/bin/python3", "-c", "from multiprocessing.resource_tracker import main;main(4)"]


def test_a_named_mp_spawn_launcher_gives_its_children_as_ranks_in_start_order(tmp_path: Path) -> None:
    """mp.spawn's children learn their rank as an argument: nothing in /proc environ says it."""
    _proc(tmp_path, 10, 1, ["/usr/bin/python3", "train.py"], {"HOME": "/root"})
    _proc(tmp_path, 11, 10, TRACKER, {}, start=110)
    _proc(tmp_path, 13, 10, SPAWNED, {}, start=130)
    _proc(tmp_path, 12, 10, SPAWNED, {}, start=120)
    # Rank 1 (started second) set RANK in os.environ; its DataLoader, spawned too, passed it on.
    _proc(tmp_path, 14, 13, SPAWNED, {"RANK": "1", "WORLD_SIZE": "2", "MASTER_PORT": "1"}, start=140)
    table = Table.read(ProcFs(str(tmp_path)))
    ranks = table.resolve(10)
    assert [(r.rank, r.proc.pid, r.job, r.world_size) for r in ranks] == [
        (0, 12, "spawn-10", 2),
        (1, 13, "spawn-10", 2),
    ]
    assert [w.pid for w in ranks[1].workers] == [14]
    assert table.ranks(within=[12, 13]) == []  # unnamed, a spawned child is any Python worker


def test_spawned_children_with_their_own_rank_variables_keep_them(tmp_path: Path) -> None:
    _proc(tmp_path, 10, 1, ["/usr/bin/python3", "train.py"], {})
    env = {"WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}
    _proc(tmp_path, 12, 10, SPAWNED, {**env, "RANK": "1"}, start=120)
    _proc(tmp_path, 13, 10, SPAWNED, {**env, "RANK": "0"}, start=130)
    ranks = Table.read(ProcFs(str(tmp_path))).resolve(10)
    assert sorted((r.rank, r.proc.pid, r.source) for r in ranks) == [(0, 13, "environ"), (1, 12, "environ")]


def test_a_stack_tool_answer_of_another_shape_is_unread_with_what_it_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A py-spy of another shape (or a wrapper of that name) exits 0: never an empty stack, never
    "exited with 0", and its words reach the console escaped."""
    assert parse_pyspy('[{"thread_id": 1, "frames": "oops"}]', 1) is None
    tool = tmp_path / "py-spy"
    tool.write_text('#!/bin/sh\necho \'[{"thread_id": 1, "frames": "oops"}]\'\n')
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    got = read_stack(os.getpid(), 10.0, os.getuid(), ("py-spy",))
    assert got.frames is None and got.tool == "py-spy"
    assert "not in a shape pgdoctor reads" in got.cause and "oops" in got.cause


def test_spawned_ranks_are_found_below_a_shell_or_a_guard_but_a_ranks_spawned_workers_are_not(
    tmp_path: Path,
) -> None:
    _proc(tmp_path, 5, 1, ["/bin/sh", "job.sh"], {})  # the job script (or `pgdoctor run`'s guard)
    _proc(tmp_path, 10, 5, ["/usr/bin/python3", "train.py"], {})
    _proc(tmp_path, 12, 10, SPAWNED, {}, start=120)
    _proc(tmp_path, 13, 10, SPAWNED, {}, start=130)
    table = Table.read(ProcFs(str(tmp_path)))
    assert [(r.rank, r.proc.pid) for r in table.resolve(5)] == [(0, 12), (1, 13)]
    # A torchrun rank whose DataLoader spawns its workers: they are its workers, not ranks.
    env = {"RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "2"}
    _proc(tmp_path, 20, 1, ["/usr/bin/python3", "-m", "torch.distributed.run", "train.py"], {})
    _proc(tmp_path, 21, 20, ["/usr/bin/python3", "train.py"], env)
    _proc(tmp_path, 22, 21, SPAWNED, env, start=220)
    table = Table.read(ProcFs(str(tmp_path)))
    (rank,) = table.resolve(20)
    assert rank.proc.pid == 21 and [w.pid for w in rank.workers] == [22]


def test_a_rank_outside_the_subgroup_the_others_wait_on_is_no_culprit() -> None:
    data = Frame("/job/data.py", 6, "load")
    waiting = [ev(r, [C10D, train(15)]) for r in (0, 1)]
    for w in waiting:
        w.wait_group = [0, 1, 2]
    v = roll_call("j", [*waiting, ev(2, [data]), ev(3, [data])])
    assert v.culprits == [2]
    f = v.findings[0]
    assert f.facts["ranks"] == [2] and f.facts["not_waited_for"] == [3]
    assert f.message.endswith("rank 3 not in the group they wait on")
    # Where one waiting rank's group is unknown, nobody is ruled out.
    waiting[1].wait_group = None
    assert roll_call("j", [*waiting, ev(2, [data]), ev(3, [data])]).culprits == [2, 3]
    # The saved evidence keeps it, so `diagnose DIR` judges the same way.
    waiting[0].wait_group = [0, 1, 2]
    assert RankEvidence.from_json(waiting[0].to_json()).wait_group == [0, 1, 2]


def test_pending_group_reads_the_first_unfinished_collective_of_any_group() -> None:
    fr = {
        "entries": [
            {"process_group": ["0", "default_pg"], "state": "scheduled", "retired": True},
            {"process_group": ["1", "undefined"], "state": "scheduled", "retired": False},
        ]
    }
    assert pending_group(fr, {"0": [0, 1, 2, 3], "1": [0, 1, 2]}) == [0, 1, 2]
    assert pending_group(fr, {}) is None and pending_group(fr, None) is None
    assert pending_group({"entries": []}, {"0": [0]}) is None


def test_culprits_in_different_places_are_each_named_with_their_frame() -> None:
    sleep = Frame("/job/train.py", 34, "nap")
    q = Frame("/job/train.py", 38, "wait_queue")
    ranks = [ev(r, [C10D, train(78)], world=8) for r in (0, 1, 3, 4, 6, 7)]
    v = roll_call("j", [*ranks, ev(2, [sleep], world=8), ev(5, [q], world=8)])
    assert v.culprits == [2, 5]
    tail = "ranks 2, 5 are elsewhere, at train.py:34 (rank 2), train.py:38 (rank 5)"
    assert v.findings[0].message.endswith(tail)


def test_a_stopped_culprit_is_said_to_be_stopped() -> None:
    """A rank frozen by SIGSTOP (state T in /proc) sits in the frame it was stopped in."""
    stopped = ev(2, [Frame("/job/train.py", 34, "nap")])
    stopped.state = "T"
    v = roll_call("j", [ev(0, [C10D, train(71)]), ev(1, [C10D, train(71)]), stopped])
    assert v.culprits == [2]
    assert "rank 2 is stopped by a signal (SIGSTOP" in v.findings[0].message


def test_pystack_saying_the_thread_runs_no_python_is_an_empty_stack() -> None:
    assert parse_pystack("The frame stack for thread 17537 is empty\n", 17537) == []
    assert parse_pystack("garbage", 1) is None


def test_a_rank_stopped_inside_the_collective_is_said_to_hold_the_others() -> None:
    ranks = [ev(r, [C10D, train(71)]) for r in range(4)]
    ranks[0].state = "T"
    f = roll_call("j", ranks).findings[0]
    assert f.code == "HNG102" and f.message.endswith(
        "rank 0 is stopped by a signal (SIGSTOP, Ctrl-Z; SIGCONT resumes it)"
    )
