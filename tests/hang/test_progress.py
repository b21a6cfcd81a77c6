"""What `pgdoctor run` counts as progress: lines with new step content and the sockets' counters,
never CPU time (pure checks, and the verdict's rule for spinning ranks)."""

from __future__ import annotations

from pgdoctor.diagnose.stacks.evidence import Frame, RankEvidence
from pgdoctor.diagnose.stacks.verdict import progressing
from pgdoctor.hang.progress import Lines, counters_moved


def feed(lines: list[str]) -> list[bool]:
    watch = Lines()
    return [watch.feed(line.encode()) for line in lines]


def test_step_counters_moving_are_progress_and_repeats_are_not() -> None:
    assert feed(["step 1 loss 2.31", "step 2 loss 2.30", "step 2 loss 2.30", "step 2 loss 2.29"]) == [
        True,
        True,
        False,
        False,  # same step: a counter that did not move outvotes the other numbers
    ]
    assert feed(["[rank0]: epoch 1 [10/500]", "[rank1]: epoch 1 [10/500]", "[rank0]: epoch 1 [20/500]"]) == [
        True,
        True,  # another rank's line is its own
        True,
    ]


def test_heartbeats_and_identical_lines_are_not_progress() -> None:
    got = feed(
        [
            "I1204 19:16:43.692000 5039 api.py:10] still waiting for rank 3 (elapsed 30 s)",
            "I1204 19:17:13.692000 5039 api.py:10] still waiting for rank 3 (elapsed 60 s)",
            "2026-12-04T19:17:20Z watchdog: no heartbeat for 20 s",
            "2026-12-04T19:17:40Z watchdog: no heartbeat for 40 s",
            "saving checkpoint",
            "saving checkpoint",
            "loss 2.31",
            "loss 2.29",
        ]
    )
    assert got == [True, False, True, False, True, False, True, True]


def test_an_error_report_is_not_a_new_phase() -> None:
    """A rank's gloo timeout after the job stood still printed a traceback of new shapes: counted as
    progress, it made a run whose driver exited 0 drop its hang snapshot as "recovered"."""
    got = feed(
        [
            "[rank0]: step 0",
            "[rank0]: Traceback (most recent call last):",
            '[rank0]:   File "/job/train.py", line 137, in wait',
            "[rank0]:     dist.all_reduce(t)",
            "[rank0]:     ^^^^^^^^^^^^^^^^^^",
            "[rank1]: step 0",  # another stream's line in between is judged as usual
            "[rank0]: RuntimeError: [gloo/unbound_buffer.cc:78] Timed out waiting 12000ms for recv",
            "torch.distributed.DistBackendError: connection closed",
            "[rank0]: step 1",  # after the exception line, lines are judged again
        ]
    )
    assert got == [True, False, False, False, False, True, False, False, True]


def test_socket_counters() -> None:
    assert counters_moved({"step": 3, "seq": 10}, {"step": 3, "seq": 11})
    assert counters_moved({"step": 3, "seq": None}, {"step": 4, "seq": None})
    assert not counters_moved({"step": 3, "seq": 10}, {"step": 3, "seq": 10})
    assert not counters_moved(None, {"step": 3, "seq": 10})


def _rank(stack: list[Frame], cpu: list[float], quiet_s: float | None = None) -> RankEvidence:
    return RankEvidence(
        rank=0,
        pid=1,
        samples=[stack] * len(cpu),
        sample_times_s=[float(i) for i in range(len(cpu))],
        cpu_s=cpu,
        quiet_s=quiet_s,
    )


def test_cpu_in_a_collective_or_after_a_quiet_watch_is_a_spin() -> None:
    dist = "/x/site-packages/torch/distributed/distributed_c10d.py"
    in_collective = [Frame(dist, 10, "all_reduce"), Frame("/job/train.py", 5, "<module>")]
    own_loop = [Frame("/job/train.py", 9, "spin")]
    busy = [0.0, 0.9, 1.8]
    assert not progressing(_rank(in_collective, busy))
    assert progressing(_rank(own_loop, busy))  # plain `hang`: a long compute at one frame works
    assert not progressing(_rank(own_loop, busy, quiet_s=300.0))  # `run` saw no step for 300 s

    def after(frames: list[list[Frame]]) -> RankEvidence:
        return RankEvidence(rank=0, pid=1, samples=frames, quiet_s=300.0)

    # After a quiet watch, a loop's line jittering within one function is still a spin; a move
    # to another function (of the job, or of the library it calls) is progress.
    assert not progressing(after([own_loop, [Frame("/job/train.py", 11, "spin")]]))
    assert progressing(after([own_loop, [Frame("/job/train.py", 30, "evaluate")]]))
    assert progressing(
        after([own_loop, [Frame("/x/site-packages/torch/nn/linear.py", 3, "forward"), *own_loop]])
    )
    assert RankEvidence.from_json(_rank(own_loop, busy, 12.5).to_json()).quiet_s == 12.5


def test_collective_sequence_counts_subgroups_too() -> None:
    """A job that steps only on subgroups (FSDP, tensor or pipeline parallel groups) still moves
    its socket's sequence number: a real one-rank gloo group and a subgroup."""
    import subprocess
    import sys

    from tests.helpers.hang_lab import quiet_port
    from tests.helpers.paths import ROOT

    code = (
        "import torch, torch.distributed as dist\n"
        "from pgdoctor.trace import live\n"
        "assert live.collective_seq() is None\n"
        "dist.init_process_group('gloo', rank=0, world_size=1)\n"
        "sub = dist.new_group([0])\n"
        "t = torch.ones(4)\n"
        "before = live.collective_seq()\n"
        "for _ in range(3):\n"
        "    dist.all_reduce(t, group=sub)\n"
        "print(before, live.collective_seq(), live.progress()['seq'])\n"
        "dist.destroy_process_group()\n"
    )
    env = {
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(quiet_port()),
        "PYTHONPATH": str(ROOT),
        "PATH": "/usr/bin:/bin",
        "OMP_NUM_THREADS": "1",
    }
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    before, after, via_progress = map(int, out.stdout.split())
    assert after == before + 3 == via_progress


def test_a_later_snapshot_without_stacks_does_not_replace_one_with_stacks() -> None:
    """`pgdoctor run` keeps every stall snapshot; the last one may be taken while the launcher kills
    the ranks. Their files then have no stack, and the snapshot that read the stacks still decides."""
    from pgdoctor.diagnose.stacks.verdict import jobs_of

    user = [Frame("/job/train.py", 7, "nap")]
    read = [RankEvidence(rank=r, pid=10 + r, job="j", samples=[user]) for r in range(2)]
    gone = [
        RankEvidence(rank=r, pid=10 + r, job="j", problems=[{"tier": "py-spy", "cause": "no such process"}])
        for r in range(2)
    ]
    later = [RankEvidence(rank=0, pid=10, job="j", samples=[[Frame("/job/train.py", 9, "step")]])]
    kept = jobs_of([*read, *gone, *later])["j"]
    assert [e.samples[-1][0].line for e in kept] == [9, 7]  # a later read with a stack still wins
