"""s3 of 2026-12-07: families of the rendezvous_init, nccl_internal_or_invalid_usage, nccl_system_error and
cuda_oom classes that the released corpora (v23's dev half first) showed silent, each read as a family: every
wording a writer or a program uses for it, not the one line seen. Lines are real (URL in a comment) unless
marked synthetic.

- A person's sentence in a paste's prose that reports a device OOM (rules/oom_prose.py): a writer who met it
  ("I encountered a CUDA Out of Memory error while running ...", https://github.com/ganler/code-r1/issues/17),
  the run as the subject of the verb ("At a certain point (around 1000 iters) it OOMs, even with zero-3
  offloading", https://github.com/deepspeedai/DeepSpeed/issues/1003), a program that returned it ("it just
  breakdown and return a OOM error", https://github.com/tensorflow/tensorflow/issues/38889): RUN101 at tier 1
  with facts["read_as"] == "prose". Negations, conditions, plans and the host's memory stay silent.
- vocabulary's _GONE (a head-line title that says the failure went away) held backspace characters where its
  English branch meant \\b, so 'no longer', 'went away', 'gone', 'fixed' never matched; a head title such as
  "GPU OOM went away with dist_train.sh after the fix" above a cut traceback was read as RUN101.
- A person's sentence in a paste (not a title alone) that says the meeting hangs or never lets the training
  start (rules/meeting_prose.py): "Looks like it hangs at the function call of
  `c10d::TCPStore::TCPStore(...)`"
  (https://github.com/pytorch/pytorch/issues/15638), "Multi-nodes and multi-gpu trainning never starts, 2
  machines have the same environment" (https://github.com/Lightning-AI/pytorch-lightning/issues/14611):
  RUN221 at tier 1 with facts["read_as"] == "prose"; a hang after the call, a condition, a fix, a program's
  record stay silent.
- Paddle's TCP store client (paddle/fluid/distributed/store/tcp_utils.cc 2.3+, phi's since 2.5) retrying
  "Retry to connect to h:p while the server is not yet listening." was read only when the log ended in the
  loop; a paste of two nodes (https://github.com/yeyupiaoling/PPASR/issues/142) shows the master's own client
  "Successfully connected to 127.0.1.1:63917" while the other node keeps retrying. The wait is now settled
  by the lookahead (diagnose/lookahead.py): only that process's (glog thread id) success line silences it.
- XGBoost's tracker failing in RabitTracker::Run (src/collective/tracker.cc 2.1-3.x): "Failed to accept
  connection.", "Failed to initialize worker proxy.", "Invalid command received.", "Failed to inform workers
  to stop." inside XGBoost's Report ("- [tracker.cc:286|12:58:58]: Failed to accept connection.",
  https://github.com/dmlc/xgboost/issues/11380): RUN222 at tier 2 (rules/xgboost_collective.py); the same
  generic words outside XGBoost's Report stay silent.
- A Horovod launcher stack cut inside its driver's wait for the tasks to register
  (common/service/driver_service.py wait_for_initial_registration, whose only raise is "Timed out waiting
  for tasks to start", https://github.com/horovod/horovod/issues/1414; and
  wait_for_task_to_task_address_updates): read as the meeting's cut stack (rules/init_stacks.py), RUN221
  tier 2.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import root_finding

OOM_PROSE = [
    # https://github.com/ganler/code-r1/issues/17
    "I encountered a CUDA Out of Memory error while running `bash main_grpo.sh` with the "
    "`code-r1-2k-leetcode2k-taco` dataset after 160 successful epochs. The training was stable until then, "
    "but suddenly crashed during `loss.backward()`. Do you have any insights on why this might happen?",
    # https://github.com/deepspeedai/DeepSpeed/issues/1003
    "PYTHONPATH=~/DeepSpeed deepspeed --num_gpus 4 distill.py --deepspeed_config ds_config_zero3.json\n"
    "At a certain point (around 1000 iters) it OOMs, even with zero-3 offloading. Here are the wandb logs.",
    # https://github.com/tensorflow/tensorflow/issues/38889
    "For example, I have 3 GPUs whose memory is 11G, in fact, I found when I running my code, the first "
    "one uses almost 11G while the others usese 155M. And then tensorflow need allocate more memory, but the "
    "first one has on more memory to do. I think in this case, it should allocate memory to other GPUs, but "
    "in fact it just breakdown and return a OOM error.",
    # synthetic: the other verbs and spellings of the same report, under the command (a title alone is
    # vocabulary's title rows')
    "torchrun --nproc_per_node 8 train.py\n"
    "We also keep getting out of memory on rank 3 after the first eval.",
    "torchrun --nproc_per_node 8 train.py\nI'm facing CUDA OOM with 8 GPUs when the sequence length is 8192.",
    "torchrun --nproc_per_node 8 train.py\nThe training OOMed after 2 epochs on the A100 nodes.",
    "torchrun --nproc_per_node 8 train.py\n"
    "Training crashed with an out-of-memory error during the backward pass, we are on 4 V100s.",
    "torchrun --nproc_per_node 8 train.py\n"
    "Since upgrading, the script throws an OOM error at the first step.",
]

OOM_SILENT = [
    "If it OOMs, reduce the batch size.",
    "I didn't get OOM with batch size 4, thanks.",
    "I got no OOM error after the fix.",
    "We use gradient checkpointing to avoid OOM and I got good results.",
    "Would I get OOM with 8 GPUs? We are planning the run.",
    "I wonder whether I will get OOM with ZeRO-2.",
    "no model OOMs here, the loss is stable.",
    "I never hit OOM on the 80 GB cards.",
]


@pytest.mark.parametrize("log", OOM_PROSE)
def test_oom_in_prose_is_the_device_memory(log: str) -> None:
    root = root_finding(log + "\n")
    assert root is not None and root.code == "RUN101", (log, root)
    assert root.facts.get("read_as") == "prose", root.facts


@pytest.mark.parametrize("log", OOM_SILENT)
def test_oom_named_without_a_report_stays_silent(log: str) -> None:
    assert root_finding(log + "\n") is None, log


def test_oom_in_prose_of_the_host_memory_is_not_the_device() -> None:
    root = root_finding("I got OOM on RAM, the process was killed.\n")
    assert root is None or root.code != "RUN101", root


def test_a_head_title_that_says_the_oom_went_away_stays_silent() -> None:
    log = (
        "GPU OOM went away with dist_train.sh after the fix\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 3, in <module>\n'
        "    model.cuda()\n"
    )
    assert root_finding(log) is None


MEETING_PROSE = [
    # https://github.com/pytorch/pytorch/issues/15638
    "$ python -m torch.distributed.launch --nproc_per_node 2 a.py\n"
    "before 1 - {'backend': 'nccl', 'init_method': 'env://', 'rank': 1, 'world_size': 2}\n"
    "after 0\n"
    "Looks like it hangs at the function call of `c10d::TCPStore::TCPStore(std::string const&, unsigned "
    "short, bool) ()`, `c10d::tcputil::connect(std::string const&, unsigned short, bool, "
    "std::chrono::duration<long, std::ratio<1l, 1000l> > const&) ()`",
    # https://github.com/Lightning-AI/pytorch-lightning/issues/14611
    "Multi-nodes and multi-gpu training never starts\n"
    "Multi-nodes and multi-gpu trainning never starts, 2 machines have the same environment and te.py",
    # synthetic: the other calls, hang words and wordings
    "python train.py --nnodes 2\nthe program is stuck in dist.init_process_group when I use 2 nodes",
    "torchrun --nnodes 2 train.py\nIt freezes at the call to init_process_group on the second machine.",
    "torchrun --nnodes 2 train.py\nThe distributed training does not start on the second node.",
    "多机多卡训练无法启动",
]

MEETING_SILENT = [
    "python train.py\nIf it hangs at init_process_group, check the firewall.",
    "python train.py\nit hangs after init_process_group returns",
    "python train.py\nit was stuck in init_process_group but is no longer stuck after the fix",
    "python train.py\nsingle GPU training never starts the second epoch",
    "python train.py\n2024-01-02 03:04:05 INFO init_process_group stuck detector armed",
    "How to make multi-node training start faster?",
]


@pytest.mark.parametrize("log", MEETING_PROSE)
def test_a_meeting_that_hangs_in_prose_is_the_rendezvous(log: str) -> None:
    root = root_finding(log + "\n")
    assert root is not None and root.code == "RUN221", (log, root)
    assert root.facts.get("read_as") == "prose", root.facts


@pytest.mark.parametrize("log", MEETING_SILENT)
def test_a_meeting_named_without_a_hang_stays_silent(log: str) -> None:
    assert root_finding(log + "\n") is None, log


_RETRY = (
    "I0224 13:50:30.278173 1512912 tcp_utils.cc:107] Retry to connect to {a} while the server is not yet "
    "listening."
)
_UP = "I0224 13:50:40.574657 {tid} tcp_utils.cc:130] Successfully connected to {a}"


def test_paddle_store_retry_that_another_process_settles_is_the_meeting() -> None:
    # https://github.com/yeyupiaoling/PPASR/issues/142 (shape): node B retries, node A's own client connects
    a = "127.0.1.1:63917"
    log = "\n".join(
        [_RETRY.format(a=a)] * 3
        + [
            "此时A主机则为以下讯息：",
            "I0224 13:50:30.574579 1498980 tcp_utils.cc:181] The server starts to listen on IP_ANY:63917",
        ]
        + [_UP.format(tid=1498980, a=a)]
    )
    root = root_finding(log + "\n")
    assert root is not None and root.code == "RUN221", root
    assert root.facts.get("framework") == "paddle", root.facts


@pytest.mark.parametrize("retries", [1, 3, 80])
def test_paddle_store_retry_its_own_process_settles_stays_silent(retries: int) -> None:
    # synthetic from tcp_utils.cc's format strings: 80 retries put the success past the rule's 48-line window
    a = "10.0.0.1:6170"
    log = "\n".join([_RETRY.format(a=a)] * retries + [_UP.format(tid=1512912, a=a), "epoch 1 loss 0.5"])
    assert root_finding(log + "\n") is None


def test_paddle_store_retry_without_glog_prefix_settles_on_its_address() -> None:
    a = "10.0.0.1:6170"
    retry = f"Retry to connect to {a} while the server is not yet listening."
    assert root_finding("\n".join([retry] * 3 + [f"Successfully connected to {a}", "epoch 1"]) + "\n") is None
    root = root_finding("\n".join([retry] * 60) + "\n")  # the log ends waiting
    assert root is not None and root.code == "RUN221", root


TRACKER_RUN = [
    # https://github.com/dmlc/xgboost/issues/11380
    "> ERROR XGBoostSpark: the job was aborted due to\n"
    "> ml.dmlc.xgboost4j.java.XGBoostError: [12:58:58] /workspace/src/collective/result.cc:78: \n"
    "> - [tracker.cc:286|12:58:58]: Failed to accept connection.\n"
    "> - [socket.h:89|12:58:58]: Invalid polling request.",
    # synthetic, from tracker.cc's Fail() strings under result.cc's Report
    "xgboost.core.XGBoostError: [10:00:00] /workspace/src/collective/result.cc:78: \n"
    "- Failed to initialize worker proxy.\n"
    "- Invalid magic number.",
    "xgboost.core.XGBoostError: [10:00:00] /workspace/src/collective/result.cc:78: \n"
    "- [tracker.cc:240|10:00:00]: Invalid command received.",
]


@pytest.mark.parametrize("log", TRACKER_RUN)
def test_xgboost_tracker_run_failure_is_the_meeting(log: str) -> None:
    root = root_finding(log + "\n")
    assert root is not None and root.code == "RUN222", (log, root)
    assert root.facts.get("problem") == "tracker_failed", root.facts


@pytest.mark.parametrize(
    "log", ["server.cpp: Failed to accept connection.\nretrying", "- Failed to accept connection."]
)
def test_accept_failure_outside_xgboost_stays_silent(log: str) -> None:
    assert root_finding(log + "\n") is None


HOROVOD_WAIT = (
    # https://github.com/horovod/horovod/issues/1414
    "(horovod) hadoop3@cu11:~$ horovodrun -np 16 -H cu11:8,cu08:8 python keras_mnist.py\n"
    "Traceback (most recent call last):\n"
    '  File "/sw/envs/horovod/bin/horovodrun", line 21, in <module>\n'
    "    run.run()\n"
    '  File "/sw/envs/horovod/lib/python3.6/site-packages/horovod/run/run.py", line 229, in _driver_fn\n'
    "    driver.wait_for_initial_registration(settings.timeout)\n"
    '  File "/sw/envs/horovod/lib/python3.6/site-packages/horovod/run/common/service/driver_service.py", '
    "line 117, in {func}\n"
    "    timeout.check_time_out_for({what})"
)


@pytest.mark.parametrize(
    ("func", "what"),
    [
        ("wait_for_initial_registration", "'tasks to start'"),
        # synthetic: the second wait of driver_service.py (0.20+ horovod/runner/)
        ("wait_for_task_to_task_address_updates", "\n        'tasks to update task-to-task addresses')"),
    ],
)
def test_horovod_stack_cut_in_the_tasks_registration_is_the_meeting(func: str, what: str) -> None:
    root = root_finding(HOROVOD_WAIT.format(func=func, what=what) + "\n")
    assert root is not None and root.code == "RUN221", root
    assert func in root.facts.get("frame", ""), root.facts


def test_horovod_stack_cut_elsewhere_in_the_launcher_stays_silent() -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/sw/envs/horovod/bin/horovodrun", line 21, in <module>\n'
        "    run.run()\n"
        '  File "/sw/envs/horovod/lib/python3.6/site-packages/horovod/run/run.py", line 677, in run\n'
        "    settings, fn_cache=fn_cache)\n"
    )
    assert root_finding(log) is None
