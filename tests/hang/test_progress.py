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
