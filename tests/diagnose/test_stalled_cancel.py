"""A Slurm cancel long after the last progress line is a hang (RUN370); a cancel shortly after
steady progress stays the plain cancel. Real lines from public threads (URLs beside them) and every
shape slurmstepd printed since 2.x (src/slurmd/slurmstepd/req.c, by release)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pgdoctor.diagnose.api import diagnose_paths, diagnose_sources
from pgdoctor.diagnose.lookback import _lines_up_to
from pgdoctor.diagnose.text.reader import Source
from pgdoctor.knowledge.progress import is_progress, step_seconds
from pgdoctor.knowledge.slurm import CANCEL, read_cancel
from pgdoctor.model import Finding
from tests.helpers.paths import FIXTURES

HUNG = "RUN370"


def _findings(text: str) -> list[Finding]:
    return diagnose_sources([("job.log", text)])


def _codes(text: str) -> list[str]:
    return [f.code for f in _findings(text)]


# (line, entity, id, host, reason): each release's format string filled in.
VARIANTS = [
    # 2.x-14.03
    (
        "slurmstepd: error: *** JOB 123 CANCELLED AT 2013-05-01T10:00:00 DUE TO TIME LIMIT ***",
        "JOB",
        "123",
        None,
        "time limit",
    ),
    ("slurmd[node-1]: *** STEP 123.0 CANCELLED AT 2013-05-01T10:00:00 ***", "STEP", "123.0", None, "scancel"),
    # 14.11-15.08
    (
        "slurmstepd: error: *** JOB 123 CANCELLED AT 2015-05-01T10:00:00 DUE TO TIME LIMIT on node-1 ***",
        "JOB",
        "123",
        "node-1",
        "time limit",
    ),
    (
        "slurmstepd: error: *** STEP 123.0 CANCELLED AT 2015-05-01T10:00:00 *** on node-1",
        "STEP",
        "123.0",
        "node-1",
        "scancel",
    ),
    (
        "slurmstepd: error: *** JOB 123 CANCELLED AT 2015-05-01T10:00:00 DUE TO NODE node-1 FAILURE ***",
        "JOB",
        "123",
        "node-1",
        "node failure",
    ),
    # 16.05-today
    (
        "slurmstepd: error: *** JOB 123 ON node-1 CANCELLED AT 2024-05-01T10:00:00 DUE TO TIME LIMIT ***",
        "JOB",
        "123",
        "node-1",
        "time limit",
    ),
    (
        "slurmstepd: error: *** STEP 123.0 ON node-1 CANCELLED AT 2024-05-01T10:00:00 DUE TO TIME LIMIT ***",
        "STEP",
        "123.0",
        "node-1",
        "time limit",
    ),
    (
        "slurmstepd: error: *** STEP 123.batch ON node-1 CANCELLED AT 2024-05-01T10:00:00 ***",
        "STEP",
        "123.batch",
        "node-1",
        "scancel",
    ),
    (
        "slurmstepd: error: *** STEP 123.0 ON node-1 CANCELLED AT 2024-05-01T10:00:00 DUE to SIGNAL Terminated ***",
        "STEP",
        "123.0",
        "node-1",
        "signal Terminated",
    ),
    (
        "slurmstepd: error: *** STEP 123+1.0 ON node-1 CANCELLED AT 2024-05-01T10:00:00 DUE TO PREEMPTION ***",
        "STEP",
        "123+1.0",
        "node-1",
        "preemption",
    ),
    (
        "slurmstepd: error: *** JOB 123 ON node-1 CANCELLED AT 2024-05-01T10:00:00 DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***",
        "JOB",
        "123",
        "node-1",
        "node failure",
    ),
    (
        "slurmstepd: error: *** JOB 123 ON node-1 CANCELLED AT 2024-05-01T10:00:00 DUE TO JOB REQUEUE ***",
        "JOB",
        "123",
        "node-1",
        "job requeue",
    ),
    (
        "slurmstepd: error: *** STEP 123.0 ON node-1 CANCELLED AT 2024-05-01T10:00:00 DUE TO TASK FAILURE ***",
        "STEP",
        "123.0",
        "node-1",
        "task failure",
    ),
]


@pytest.mark.parametrize("line,entity,sid,host,reason", VARIANTS)
def test_every_slurm_release_cancel_shape_is_read(
    line: str, entity: str, sid: str, host: str, reason: str
) -> None:
    m = CANCEL.search(line)
    assert m is not None
    c = read_cancel(m)
    assert (c.entity, c.slurm_id, c.host, c.reason) == (entity, sid, host, reason)


STEPS = "".join(
    f"2024-05-01 10:0{i}:00,101 - INFO - step {1200 + i} loss {2.31 - i * 0.001:.3f} lr 3.0e-04 tokens/s 41234\n"
    for i in range(4)
)  # one step a minute, the last at 10:03:00


@pytest.mark.parametrize("line", [v[0] for v in VARIANTS])
def test_a_cancel_hours_after_the_last_step_is_a_hang_only_when_time_limit_or_scancel(line: str) -> None:
    late = line.replace("2024-05-01T10:00:00", "2024-05-01T14:03:00").replace(
        "2015-05-01T10:00:00", "2024-05-01T14:03:00"
    )
    late = late.replace("2013-05-01T10:00:00", "2024-05-01T14:03:00")
    c = read_cancel(CANCEL.search(late))  # type: ignore[arg-type]
    found = _findings(STEPS + late + "\n")
    if c.time_limit or c.by_user:
        assert found[0].code == HUNG, [f.code for f in found]
        assert found[0].facts["idle_s"] == pytest.approx(4 * 3600, abs=1)
        assert found[0].facts["reason"] == c.reason
        assert "no progress for 4 h 00 min" in found[0].message
        assert found[0].evidence[0].line == 4 and "step 1203" in found[0].evidence[0].text
    else:  # preemption, node failure, requeue, task failure: a cause from outside the job
        assert HUNG not in [f.code for f in found]


def test_a_time_limit_cancel_after_steady_progress_stays_a_plain_cancel() -> None:
    line = "slurmstepd: error: *** JOB 123 ON node-1 CANCELLED AT 2024-05-01T10:04:10 DUE TO TIME LIMIT ***\n"
    found = _findings(STEPS + line)
    assert HUNG not in [f.code for f in found]
    assert "Slurm cancelled 123 on node-1 (time limit)" in found[0].message


def test_the_threshold_is_the_jobs_own_cadence() -> None:
    # Megatron prints one line per log_interval (here 100) iterations of 9.97 s: a line every 997 s.
    # 30 minutes after the last line is two lines missed, not a hang; 6 hours is.
    mega = "".join(
        f" [2024-05-01 10:{m:02d}:00] iteration      {it}/  500000 | consumed samples:        61440 | "
        "elapsed time per iteration (ms): 9969.4 | learning rate: 2.9E-04 | lm loss: 2.31E+00 |\n"
        for m, it in ((0, 100), (16, 200), (33, 300))
    )
    cancel = "slurmstepd: error: *** STEP 9.0 ON n1 CANCELLED AT 2024-05-01T{at} DUE TO TIME LIMIT ***\n"
    assert HUNG not in _codes(mega + cancel.format(at="11:03:00"))
    f = _findings(mega + cancel.format(at="16:33:00"))[0]
    assert f.code == HUNG and f.facts["progress_every_s"] == pytest.approx(990)
    assert f.facts["step_s"] == pytest.approx(9.969, abs=1e-3)
    # one Megatron line alone: its stated per-iteration time is not its cadence; 30 minutes are needed
    one = mega.splitlines(keepends=True)[-1]
    assert HUNG not in _codes(one + cancel.format(at="10:45:00"))
    assert _codes(one + cancel.format(at="11:04:00"))[0] == HUNG
    # lines a minute apart, cancelled 6 minutes after the last: not a hang (20 intervals are needed)
    assert HUNG not in _codes(STEPS + cancel.format(at="10:09:00"))


# https://github.com/NVIDIA-NeMo/Megatron-Bridge/issues/3427 ("Nemotron 3 Super runs don't exit after the
# iterations are over", --time_limit 00:20:00). The thread's last line is cut after "ON" where it is quoted;
# the rest is slurmstepd's 16.05+ format with the node and the time of that line's own prefix.
MEGATRON_BRIDGE_3427 = """Deleting CUDA graphs
 [2026-04-20 03:17:07] iteration       50/      50 | consumed samples:        25600 | elapsed time per iteration (ms): 9969.4 | learning rate: 4.500000E-06 | global batch size:   512 | lm loss: 4.791878E-03 | seq_load_balancing_loss: 9.546359E-01 | load_balancing_loss: 0.000000E+00 | mtp_1 loss: 4.700819E-03 | mtp_2 loss: 4.768143E-03 | loss scale: 1.0 | grad norm: 0.022 | number of skipped iterations:   0 | number of nan iterations:   0 |
[after training is done] datetime: 2026-04-20 03:17:08
[2026-04-20T03:25:23.011] error: *** STEP 1942963.1 ON node-0001 CANCELLED AT 2026-04-20T03:25:23 DUE TO TIME LIMIT ***
"""


def test_real_megatron_job_that_hung_after_its_last_iteration() -> None:
    f = _findings(MEGATRON_BRIDGE_3427)[0]
    assert f.code == HUNG
    assert f.facts["idle_s"] == 8 * 60 + 16
    assert f.facts["after_last_step"] is True
    assert f.facts["step_s"] == pytest.approx(9.969, abs=1e-3)
    assert "after its last step" in f.message
    assert "iteration       50/      50" in f.evidence[0].text


# Real cancel lines with no training progress before them: recognised as Slurm's cancel, never a hang.
REAL_PLAIN = [
    # https://github.com/DataBiosphere/toil/issues/4706
    """2023-12-03 00:47:28.365363: Running the command: "vg index -t 72 -j clip.dist clip.gbz"
1 jobs are running, 0 jobs are issued and waiting to run
slurmstepd-phoenix-07: error: *** JOB 1449736 ON phoenix-07 CANCELLED AT 2023-12-03T12:47:09 DUE TO TIME LIMIT ***
""",
    # https://github.com/desihub/desitarget/issues/628
    """srun: Force Terminated job 32233190
srun: Job step aborted: Waiting up to 32 seconds for job step to finish.
slurmstepd: error: *** STEP 32233190.0 ON nid01934 CANCELLED AT 2020-07-03T02:59:56 DUE TO TIME LIMIT ***
srun: error: nid01934: tasks 2,4-5,7: Terminated
srun: Terminating job step 32233190.0
srun: error: nid01935: tasks 8-15: Terminated
srun: error: nid01934: tasks 0-1,3,6: Terminated
""",
    # https://github.com/ZettaAI/zetta_utils/issues/671 (node names elided there)
    """srun: Job step aborted: Waiting up to 47 seconds for job step to finish.
slurmstepd: error: *** JOB 494583 ON ... CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME LIMIT ***
slurmstepd: error: *** STEP 494583.0 ON ... CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME LIMIT ***
""",
    # https://github.com/marbl/canu/issues/1052
    """Current # sequences loaded and processed from file: 30000...
Current # sequences loaded and processed from file: 35000...
slurmstepd: error: *** JOB 3884617 ON node023 CANCELLED AT 2018-08-19T16:30:21 DUE TO TIME LIMIT ***
""",
    # https://github.com/c3nl-neuraldynamics/c3nl_cluster/issues/19
    "slurmstepd: error: *** JOB 602025 ON compute-2-4 CANCELLED AT 2017-07-12T15:20:54 DUE TO TIME LIMIT ***\n",
]


@pytest.mark.parametrize("text", REAL_PLAIN)
def test_real_cancels_without_progress_are_plain_cancels(text: str) -> None:
    found = _findings(text)
    assert found and HUNG not in [f.code for f in found]
    assert any("Slurm cancelled" in f.message and "(time limit)" in f.message for f in found)


def test_a_tqdm_bar_without_a_clock_is_bounded_by_the_next_timed_line() -> None:
    bar = "Epoch 3:  45%|####5     | 450/1000 [3:00:00<3:40:00, 24.00s/it, loss=2.31]\n"
    timed = "2024-05-01 10:00:00,000 - WARNING - dataloader worker 3 is slow\n"
    cancel = "slurmstepd: error: *** JOB 7 ON n1 CANCELLED AT 2024-05-01T13:00:00 DUE TO TIME LIMIT ***\n"
    f = _findings(bar + timed + cancel)[0]
    assert f.code == HUNG and f.facts["idle_is_lower_bound"] is True
    assert "no progress for at least 3 h 00 min" in f.message
    # no clock at all: nothing to measure, the cancel stays plain
    assert HUNG not in _codes(bar + cancel)


def test_progress_stamped_in_another_zone_is_not_compared() -> None:
    zoned = "".join(
        f" [2024-05-01T10:0{i}:00+02:00] iteration {i}/ 100 | lm loss: 2.3E+00 |\n" for i in range(1, 4)
    )
    assert HUNG in _codes(
        zoned.replace("+02:00", "")
        + "slurmstepd: error: *** JOB 7 ON n1 CANCELLED AT 2024-05-01T14:00:00 DUE TO TIME LIMIT ***\n"
    )
    cancel = "slurmstepd: error: *** JOB 7 ON n1 CANCELLED AT 2024-05-01T14:00:00 DUE TO TIME LIMIT ***\n"
    assert HUNG not in _codes(zoned + cancel)


@pytest.mark.parametrize(
    "line,step",
    [
        ("Epoch 0:  45%|####5     | 450/1000 [03:00<03:40, 2.50it/s, v_num=0, loss=2.3]", 0.4),
        ("1234it [00:12, 98.70it/s]", 1 / 98.7),
        ("{'loss': 2.3012, 'grad_norm': 1.07, 'learning_rate': 2e-05, 'epoch': 0.52}", None),
        ("[rank0]: step 100 loss 2.31 lr 3e-4 tokens/s 41234", None),
        ("Epoch 3 | iter 120/500 | loss: 2.3 | 3.2s/it", 3.2),
        # fairseq's train_inner line
        (
            "epoch 001:    100 / 1000 loss=9.871, nll_loss=9.2, ppl=588.2, wps=4410.3, ups=1.2, num_updates=100, lr=1e-05",
            None,
        ),
    ],
)
def test_progress_shapes(line: str, step: float) -> None:
    assert is_progress(line)
    assert step_seconds(line) == (pytest.approx(step) if step else None)


@pytest.mark.parametrize(
    "line",
    [
        "NCCL INFO Channel 00/02 :    0   1   2   3",
        "Current # sequences loaded and processed from file: 35000...",
        "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
        "Saving checkpoint at step 1200 to /ckpt",
    ],
)
def test_lines_that_are_not_progress(line: str) -> None:
    assert not is_progress(line)


@pytest.mark.parametrize(
    "steps",
    [
        # torchtitan (train.py's log line under its "[titan] %(asctime)s - %(name)s - %(levelname)s" format)
        "[titan] 2024-05-01 10:02:00,101 - root - INFO - step: 1200  loss:  2.3120  memory: 61.20GiB(77.31%)  tps: 3,214  mfu: 41.20%\n"
        "[titan] 2024-05-01 10:03:00,101 - root - INFO - step: 1201  loss:  2.3110  memory: 61.20GiB(77.31%)  tps: 3,211  mfu: 41.17%\n",
        # DeepSpeed's engine report under its logger's "[%(asctime)s] [%(levelname)s] [%(filename)s:%(lineno)d:%(funcName)s]"
        "[2024-05-01 10:02:00,101] [INFO] [logging.py:96:log_dist] [Rank 0] step=1200, skipped=0, lr=[0.0003], mom=[(0.9, 0.95)]\n"
        "[2024-05-01 10:03:00,101] [INFO] [logging.py:96:log_dist] [Rank 0] step=1201, skipped=0, lr=[0.0003], mom=[(0.9, 0.95)]\n",
        # torchrun's per-rank prefix before a plain logger
        "[default0]:2024-05-01 10:02:00,101 INFO step 1200 | loss 2.31 | lr 3.0e-04\n"
        "[default0]:2024-05-01 10:03:00,101 INFO step 1201 | loss 2.31 | lr 3.0e-04\n",
    ],
)
def test_progress_shapes_of_training_frameworks(steps: str) -> None:
    cancel = "slurmstepd: error: *** JOB 77 ON n1 CANCELLED AT 2024-05-01T12:03:00 DUE TO TIME LIMIT ***\n"
    f = _findings(steps + cancel)[0]
    assert f.code == HUNG and f.facts["idle_s"] == pytest.approx(7200, abs=1)
    assert f.facts["progress_every_s"] == pytest.approx(60, abs=1)
    # the same lines a few steps before the limit: out of time
    assert HUNG not in _codes(steps + cancel.replace("12:03:00", "10:05:00"))


# More than the rule's 24-line window between the last step and the cancel: lookback.py reads further up.
FAR_STEPS = "".join(
    f"2024-05-01 10:0{i}:00,101 - INFO - step {1200 + i} loss 2.31 lr 3.0e-04\n" for i in range(4)
)
FAR_NOISE = "".join(
    f"[rank{r % 64}]: prefetching shard {r:05d} of /data/tokens (queue {r % 7})\n" for r in range(300)
)
FAR_CANCEL = "slurmstepd: error: *** JOB 9 ON n1 CANCELLED AT {at} DUE TO TIME LIMIT ***\nsrun: error: n1: task 0: Terminated\n"


def test_a_stall_further_up_than_the_window_is_found_in_the_file(tmp_path: Path) -> None:
    log = tmp_path / "slurm-9.out"
    log.write_text(FAR_STEPS + FAR_NOISE + FAR_CANCEL.format(at="2024-05-01T14:03:00"))
    f = diagnose_paths([str(log)]).findings[0]
    assert f.code == HUNG and f.facts["progress_found"] == "further up the log"
    assert f.facts["idle_s"] == pytest.approx(4 * 3600, abs=1)
    assert [e.line for e in f.evidence] == [4, 305]
    # gzip, read again through the same reader
    gz = tmp_path / "slurm-9.out.gz"
    gz.write_bytes(gzip.compress(log.read_bytes()))
    assert diagnose_paths([str(gz)]).findings[0].code == HUNG
    # out of time after steady steps far up: the plain cancel
    log.write_text(FAR_STEPS + FAR_NOISE + FAR_CANCEL.format(at="2024-05-01T10:05:00"))
    assert HUNG not in [f.code for f in diagnose_paths([str(log)]).findings]


def test_a_stall_further_up_than_the_window_is_found_on_stdin_too() -> None:
    # Standard input is kept as it is read (text/reader.Replay), so it is read again like the file.
    log = FAR_STEPS + FAR_NOISE + FAR_CANCEL.format(at="2024-05-01T14:03:00")
    out = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "diagnose", "-", "--format", "json"],
        input=log,
        capture_output=True,
        text=True,
        timeout=120,
    )
    first = json.loads(out.stdout)["findings"][0]
    assert first["code"] == HUNG and first["facts"]["progress_found"] == "further up the log", out.stderr


@pytest.mark.parametrize("size", [1, 7, 64, 1 << 20])
def test_lookback_reads_the_same_lines_whatever_the_chunk_size(size: int) -> None:
    data = (FAR_STEPS + FAR_NOISE + FAR_CANCEL.format(at="2024-05-01T14:03:00")).encode()
    src = Source("x", lambda: iter([data[i : i + size] for i in range(0, len(data), size)]))
    lines = _lines_up_to(src, 305)
    assert lines is not None
    assert [ln.no for ln in lines] == list(range(1, 306))
    assert "CANCELLED AT" in lines[-1].text and "step 1200" in lines[0].text
    assert _lines_up_to(src, 400) is None  # the log ends before it
    # the last line without a newline
    tail = Source("y", lambda: iter([data.rstrip(b"\n")]))
    assert (_lines_up_to(tail, 306) or [])[-1].text.startswith("srun: error")


# https://github.com/AILab-CVC/YOLO-World/issues/165 (8-GPU DDP, mmengine's logger, quoted in the thread)
YOLO_WORLD_165 = """> 2024/01/24 02:50:32 - mmengine - INFO - Epoch(train)  [83][ 350/2693]  base_lr: 2.0000e-03 lr: 3.9620e-04  eta: 8:51:35  time: 0.5674  data_time: 0.0034  memory: 11750  grad_norm: 1426.9864  loss: 1913.7995  loss_cls: 713.1300  loss_bbox: 567.7602  loss_dfl: 632.9093
> 2024/01/24 02:51:06 - mmengine - INFO - Epoch(train)  [83][ 400/2693]  base_lr: 2.0000e-03 lr: 3.9620e-04  eta: 8:53:03  time: 0.6830  data_time: 0.0038  memory: 12217  grad_norm: 1230.4055  loss: 1938.0739  loss_cls: 724.0408  loss_bbox: 577.7115  loss_dfl: 636.3216
> 2024/01/24 02:51:36 - mmengine - INFO - Epoch(train)  [83][ 450/2693]  base_lr: 2.0000e-03 lr: 3.9620e-04  eta: 8:45:57  time: 0.5917  data_time: 0.0037  memory: 12657  grad_norm: 1262.3597  loss: 1928.3339  loss_cls: 722.3070  loss_bbox: 571.3169  loss_dfl: 634.7099
> 2024/01/24 02:52:03 - mmengine - INFO - Epoch(train)  [83][ 500/2693]  base_lr: 2.0000e-03 lr: 3.9620e-04  eta: 8:37:19  time: 0.5559  data_time: 0.0037  memory: 12430  grad_norm: 1171.2148  loss: 1938.4618  loss_cls: 738.1616  loss_bbox: 569.1982  loss_dfl: 631.1020
"""


def test_real_mmengine_progress_lines() -> None:
    cancel = "slurmstepd: error: *** JOB 31 ON gpu-3 CANCELLED AT 2024-01-24T{at} DUE TO TIME LIMIT ***\n"
    f = _findings(YOLO_WORLD_165 + cancel.format(at="06:52:03"))[0]
    assert f.code == HUNG and f.facts["idle_s"] == 4 * 3600
    assert f.facts["progress_every_s"] == pytest.approx(30)  # a line per 50 iterations
    assert "[83][ 500/2693]" in f.evidence[0].text
    assert HUNG not in _codes(YOLO_WORLD_165 + cancel.format(at="02:53:00"))


def test_the_launchers_teardown_after_the_cancel_stays_behind_the_hang() -> None:
    bad = (FIXTURES / "codes" / "RUN370" / "bad.log").read_text()
    teardown = """W1103 14:00:18.512000 140022 torch/distributed/elastic/agent/server/api.py:704] Received Signals.SIGTERM death signal, shutting down workers
W1103 14:00:18.513000 140022 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 81235 closing signal SIGTERM
Traceback (most recent call last):
  File "/usr/local/bin/torchrun", line 8, in <module>
    sys.exit(main())
torch.distributed.elastic.multiprocessing.api.SignalException: Process 140022 got signal: 15
"""
    assert [f.code for f in _findings(bad + teardown)] == [HUNG]
