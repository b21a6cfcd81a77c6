"""Collective desync and killed-process shapes that were silent: each case is written from the text at its
source. Horovod's stall inspector per-tensor lines pasted without the report's head (horovod/common/
operations.cc 0.13-0.19 "<tensor> [missing ranks: 0, 3]", before 0.13 "Stalled ops: <tensor> [ready ranks:
1]"), FSDP's execution-order warning (torch/distributed/fsdp/_exec_order_utils.py 1.12-2.x), a traceback cut
after DDP's parameter check frame (torch/distributed/utils.py _verify_param_shape_across_processes 1.12+,
torch/nn/parallel/distributed.py dist._verify_model_across_ranks 1.9-1.10 and
dist._verify_params_across_processes 1.11), the shell's job-control words for SIGTERM (bash jobs.c /
strsignal(SIGTERM) "Terminated", zsh "terminated") and for any signal glued onto a progress bar that never
printed its newline, and TensorFlow's TPU session hooks (tensorflow/python/tpu/session_support.py
"ShutdownHook: lame workers found: %s", preempted_hook.py "TPU node %s reached an unrecoverable state %s"
and "TPUPollingThread found TPU %s in state %s"). The lines of a healthy run stay silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, failure_findings, prefixed, root_finding

MISMATCH, EXITED, OOM, SIGNAL = "RUN201", "RUN133", "RUN121", "RUN131"

CASES: list[tuple[str, str, dict[str, Any]]] = [
    # Horovod 0.13-0.19: per-tensor lines alone (the "[m" of "[missing" reads as a lost colour code)
    (
        "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 3, 4]\n"
        "MetricAverageCallback/HorovodAllreduce_MetricAverageCallback_acc_0 [missing ranks: 0, 1, 4]",
        MISMATCH,
        {"kind": "horovod_stall", "missing_ranks": [0, 1, 3, 4]},
    ),
    (
        "[2019-04-13 13:53:31.851506: W horovod/common/operations.cc:588] HorovodBroadcast_global_step_0 [missing ranks: 1]",
        MISMATCH,
        {"kind": "horovod_stall", "missing_ranks": [1]},
    ),
    # Horovod before 0.13: the ready ranks are listed
    (
        "Stalled ops: HorovodBroadcast_conv1_weights_0 [ready ranks: 5, 6, 3, 1, 4, 0]",
        MISMATCH,
        {"kind": "horovod_stall", "ready_ranks": [0, 1, 3, 4, 5, 6]},
    ),
    # FSDP's execution-order warning (a warnings.warn: file:line before it, the message's second line after)
    (
        "/opt/conda/lib/python3.10/site-packages/torch/distributed/fsdp/_exec_order_utils.py:268: UserWarning: Forward order differs from that of the first iteration on rank 1. Collectives are unchecked and may give incorrect results or hang.\n"
        "Expected to all-gather for ['layer1.weight'] but trying to all-gather parameters for ['layer2.weight']\n"
        "  warnings.warn(",
        MISMATCH,
        {"kind": "fsdp_forward_order", "rank": 1, "got_params": "['layer2.weight']"},
    ),
    # DDP's parameter check frame, the exception cut off (1.12+ and 1.9-1.10 names)
    (
        '  File "/usr/lib/python3.10/site-packages/torch/nn/parallel/distributed.py", line 825, in __init__\n'
        "    _verify_param_shape_across_processes(self.process_group, parameters)\n"
        '  File "/usr/lib/python3.10/site-packages/torch/distributed/utils.py", line 288, in _verify_param_shape_across_processes',
        MISMATCH,
        {"kind": "ddp_param_verification", "frame": "_verify_param_shape_across_processes"},
    ),
    (
        '  File "/usr/lib/python3.8/site-packages/torch/nn/parallel/distributed.py", line 578, in __init__\n'
        "    dist._verify_model_across_ranks(self.process_group, parameters)\n"
        '  File "/usr/lib/python3.8/site-packages/torch/nn/parallel/distributed.py", line 578, in _verify_model_across_ranks',
        MISMATCH,
        {"frame": "_verify_model_across_ranks"},
    ),
    # Ascend HCCL EI0005 (CANN 6.x-8.x error catalogue; HCCL user guide "参数一致性校验"), its TraceBack's transport
    # errors are the check's consequence
    (
        "EI0005: 2024-04-24-06:32:27.781.599 The arguments for collective communication are inconsistent between ranks:tag[HcomAllReduce_6629421139219749105_0], parameter[count], local[16512], remote [8320]\n"
        "        Solution: Check whether the training script and ranktable of each NPU are consistent.\n"
        "        TraceBack (most recent call last):\n"
        "        Transport init error. Reason: [Create] [DestLink]Create Dest error! createLink para:rank[5]-localUserrank[4]-localIpAddr[127.10.0.1], dst_rank[6]-remoteUserrank[7]-remote_ip_addr[127.10.0.1]",
        MISMATCH,
        {"op": "HcomAllReduce", "parameter": "count", "local": "16512", "remote": "8320"},
    ),
    # the shell's SIGTERM words
    (
        "./train.sh: line 14: 48213 Terminated              python train.py --config cfg.yaml",
        EXITED,
        {"signal": "SIGTERM", "pid": 48213, "command": "python train.py --config cfg.yaml"},
    ),
    ("[1]+  Terminated              nohup python train.py", EXITED, {"signal": "SIGTERM"}),
    ("[3]   Terminated              python train.py", EXITED, {"command": "python train.py"}),
    ("zsh: terminated  python train.py", EXITED, {"signal": "SIGTERM", "command": "python train.py"}),
    # a signal's word glued onto a progress bar (tqdm, Keras)
    (
        "Epoch 1:  29%|█▍   | 9413/32393 [3:28:18<8:28:33,  1.33s/it, loss=3.23, v_num=9]Terminated ",
        EXITED,
        {"signal": "SIGTERM"},
    ),
    ("100%|██████████| 3/3 [00:43<00:00, 14.22s/it]Killed", OOM, {"killer": "sigkill"}),
    (
        "1200/5000 [=====>........................] - ETA: 9:41 - loss: 0.5123Killed",
        OOM,
        {"killer": "sigkill"},
    ),
    (
        "Training:  45%|████▌     | 450/1000 [10:00<12:00, 1.2it/s]Segmentation fault (core dumped)",
        SIGNAL,
        {},
    ),
    # a runner's record of exit status 128 + N (IDEs, kubectl, docker, CI, horovodrun's gloo launcher)
    (
        "Process finished with exit code 139 (interrupted by signal 11: SIGSEGV)",
        SIGNAL,
        {"signal": "SIGSEGV"},
    ),
    ("Process finished with exit code 134 (interrupted by signal 6: SIGABRT)", SIGNAL, {"exit_status": 134}),
    ("command terminated with exit code 139", SIGNAL, {"signal": "SIGSEGV", "exit_status": 139}),
    ("Process 3 exit with status code 139.", SIGNAL, {"signal": "SIGSEGV"}),
    ("ERROR: Job failed: exit code 139", SIGNAL, {"signal": "SIGSEGV"}),
    # the kubelet's eviction by node condition (pkg/kubelet/eviction/helpers.go nodeConditionMessageFmt)
    (
        "Status:         Failed\nReason:         Evicted\nMessage:        The node had condition: [DiskPressure]. ",
        EXITED,
        {"reason": "eviction", "node_condition": "DiskPressure"},
    ),
    ("  Warning  Evicted  10s  kubelet  The node had condition: [MemoryPressure].", OOM, {}),
    # TensorFlow's TPU hooks
    (
        "INFO:tensorflow:ShutdownHook: lame workers found: HeartbeatManager(/job:worker/replica:0/task:0/device:CPU:0)",
        EXITED,
        {"reason": "worker heartbeat lost", "tasks": [0]},
    ),
    (
        "WARNING:tensorflow:TPU node my-tpu reached an unrecoverable state PREEMPTED, terminating the session now.",
        EXITED,
        {"tpu_state": "PREEMPTED", "preempted": True, "tpu": "my-tpu"},
    ),
    (
        "W0902 03:34:21.925864 140070334211904 preempted_hook.py:89] TPUPollingThread found TPU b'my-tpu' in state PREEMPTED",
        EXITED,
        {"tpu_state": "PREEMPTED", "tpu": "my-tpu"},
    ),
]


@pytest.mark.parametrize(("text", "code", "facts"), CASES, ids=[f"c{i}" for i in range(len(CASES))])
@pytest.mark.parametrize("prefix", ["", LAUNCHER_PREFIXES[4]], ids=["bare", "host"])
def test_desync_and_killed_shapes(prefix: str, text: str, code: str, facts: dict[str, Any]) -> None:
    root = root_finding(prefixed(prefix, text))
    assert root is not None and root.code == code, (text, root)
    for k, v in facts.items():
        assert root.facts.get(k) == v, (k, root.facts)


def test_a_cut_ddp_check_frame_yields_to_its_exception() -> None:
    log = (
        '  File "/x/torch/distributed/utils.py", line 288, in _verify_param_shape_across_processes\n'
        "    return dist._verify_params_across_processes(process_group, tensors, logger)\n"
        "RuntimeError: DDP expects same model across all ranks, but Rank 0 has 236 params, while rank 1 has "
        "inconsistent 0 params.\n"
    )
    root = root_finding(log)
    assert root is not None and root.code == MISMATCH and root.facts.get("kind") == "ddp_model_mismatch", root


def test_a_terminated_after_a_real_failure_ranks_behind_it() -> None:
    log = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
        "of 79.15 GiB of which 1.05 GiB is free.\n"
        "./run.sh: line 5:  2345 Terminated              python train.py\n"
    )
    found = failure_findings(log)
    assert found and found[0].code != EXITED, found


HEALTHY = [
    "WARNING:tensorflow:TPUPollingThread found TPU b'au2018-3' in state READY, and health HEALTHY.",
    "    Last State:     Terminated\n      Reason:       Completed\n      Exit Code:    0",
    "State:          Terminated",
    "Epoch 3: 100%|██████████| 500/500 [01:40<00:00, 4.98it/s, loss=0.211]",
    "INFO:tensorflow:Installing graceful shutdown hook.",
    '  File "/x/torch/nn/parallel/distributed.py", line 825, in __init__',
    "Process finished with exit code 0",
    "INFO: Terminated 3 idle workers",
    "worker exited with exit code 143",
    "step 139 loss 0.134 lr 0.000143",
]


@pytest.mark.parametrize("text", HEALTHY, ids=[f"h{i}" for i in range(len(HEALTHY))])
def test_healthy_lines_stay_silent(text: str) -> None:
    assert not failure_findings(text + "\n"), text
