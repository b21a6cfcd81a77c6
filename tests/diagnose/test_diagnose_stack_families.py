"""Families of the non-PyTorch stacks, written from the format strings of their sources (TensorFlow's
nccl_ops kernels and op registry, MXNet's src/kvstore/kvstore.cc, Paddle's enforce.h NCCL message, HCCL's
op_base.cc plog and the MindIE / ATB runners, MindFormers' hccl_tools.py), under the launchers' prefixes;
their healthy lines stay silent."""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, check_root, failure_findings, prefixed

_TF_ATTRS = ' with these attrs: [reduction="sum", shared_name="c1", T=DT_FLOAT, num_devices=2]'

CASES = [
    # TensorFlow without NCCL: every op of nccl_ops.cc, the executor's and the op registry's wording
    (
        "InvalidArgumentError: No OpKernel was registered to support Op 'NcclAllReduce' used by "
        "{{node Adam/NcclAllReduce}}" + _TF_ATTRS + "\nRegistered devices: [CPU, GPU]\nRegistered kernels:\n"
        "  <no registered kernels>",
        "RUN263",
        {"op": "NcclAllReduce", "framework": "tensorflow"},
    ),
    (
        "InvalidArgumentError: No OpKernel was registered to support Op 'NcclAllReduce' with these attrs.  "
        "Registered devices: [CPU,GPU,XLA_CPU], Registered kernels:\n  <no registered kernels>",
        "RUN263",
        {"op": "NcclAllReduce"},
    ),
    (
        "No OpKernel was registered to support Op 'NcclBroadcast' used by {{node NcclBroadcast}}",
        "RUN263",
        {"op": "NcclBroadcast"},
    ),
    (
        "No OpKernel was registered to support Op '_NcclBroadcastSend' used by {{node x}}",
        "RUN263",
        {"op": "_NcclBroadcastSend"},
    ),
    (
        "NotFoundError: Op type not registered 'NcclAllReduce' in binary running on worker-0. Make sure "
        "the Op and Kernel are registered in the binary running in this process.",
        "RUN263",
        {"op": "NcclAllReduce"},
    ),
    # MXNet's kvstore kinds its libmxnet was not compiled with, every version's wording
    (
        "mxnet.base.MXNetError: [13:07:50] src/kvstore/kvstore.cc:37: compile with USE_DIST_KVSTORE=1 "
        "to use dist_device_sync",
        "RUN263",
        {"framework": "mxnet", "kvstore": "dist_device_sync", "build_flag": "USE_DIST_KVSTORE"},
    ),
    (
        "[08:41:24] src/kvstore/kvstore.cc:41: compile with USE_DIST_KVSTORE=1 to use dist_async",
        "RUN263",
        {"kvstore": "dist_async"},
    ),
    (
        "[08:41:24] src/kvstore/kvstore.cc:44: compile with USE_DIST_KVSTORE=1 to use dist",
        "RUN263",
        {"kvstore": "dist"},
    ),
    (
        "mxnet.base.MXNetError: [10:00:00] src/kvstore/kvstore.cc:60: compile with USE_NCCL=1 to use nccl",
        "RUN263",
        {"kvstore": "nccl", "build_flag": "USE_NCCL"},
    ),
    # Paddle's NCCL message with the errno of a /dev/shm that is too small (2.0-2.2 and 2.3+ wording)
    (
        "OSError: (External)  Nccl error, invalid data type, detail: Resource temporarily unavailable\n"
        "Please try one of the following solutions:\n1. export NCCL_SHM_DISABLE=1;\n"
        "2. export NCCL_P2P_LEVEL=SYS;\n3. Increase shared memory by setting the -shm-size option when "
        "starting docker container, e.g., setting  -shm-size=2g.\n"
        "  (at /paddle/paddle/fluid/operators/collective/broadcast_op.cu.cc:65)\n"
        "FatalError: `Process abort signal` is detected by the operating system.\n"
        "  [SignalInfo: *** SIGABRT (@0x6941) received by PID 26945 (TID 0x7fbd52c03700) from PID 26945 ***]",
        "RUN171",
        {"likely_cause": "shared_memory", "errno": "Resource temporarily unavailable"},
    ),
    (
        "ExternalError: NCCL error(2), unhandled system error.  Detail: No space left on device\n"
        "Please try one of the following solutions:\n1. export NCCL_SHM_DISABLE=1;",
        "RUN171",
        {"nccl_error": "unhandled system error"},
    ),
    # HCCL's communicator start-up failing as its callers print it
    (
        "[ERROR] HCCL(36035,mindie_llm_backend_connector):2025-05-13-02:25:58.068.817 [op_base.cc:974]"
        "[36818][Init][CommRootInfoConfig]errNo[0x0000000005000002]HcclCommInitRootInfo failed.",
        "RUN221",
        {"hccl_error": 2, "backend": "hccl"},
    ),
    (
        "[2025-05-13 02:25:58.64217] [error] [36815] [hccl_runner.cpp:132] AllGatherHcclRunner:0 "
        "HcclCommInitRootInfo fail, error:2, rank:1, rankSize:4",
        "RUN221",
        {"hccl_error": 2, "world_size": 4},
    ),
    # MindFormers' rank table without the driver's hccn_tool
    (
        "/bin/sh: 1: hccn_tool: not found\nFailed to call hccn_tool, try to read /etc/hccn.conf instead\n"
        "Traceback (most recent call last):\n"
        '  File "../../mindformers/tools/hccl_tools.py", line 137, in main\n'
        "    device_ip = device_ips[device_id]\nKeyError: '0'",
        "RUN263",
        {"problem": "hccn_tool_missing"},
    ),
    ("bash: hccn_tool: command not found", "RUN263", {"problem": "hccn_tool_missing"}),
    # XLA's rendezvous: a participant never arrived (both wordings), or the leader hangs in its callback
    (
        "E0218 03:50:19.000000 1 rendezvous.cc:100] [id=1] This thread has been waiting for `acquire clique "
        "for rank 3; clique=devices=[4,5,6,7]; is_p2p=0; run_id=-15` for 10 seconds and may be stuck. "
        "Expected 4 threads to join the rendezvous, but not all of them arrived on time.",
        "RUN151",
        {"waited_s": 10},
    ),
    (
        "E0218 03:50:19.000000 1 rendezvous.cc:90] [id=2] This thread has been waiting for `first call to "
        "collective operation 4; run_id=12` for 20 seconds and may be stuck. All 8 threads joined the "
        "rendezvous, however the leader has not marked the rendezvous as completed. Leader can be "
        "deadlocked inside the rendezvous callback.",
        "RUN151",
        {"waited_s": 20},
    ),
    (
        "F0218 03:50:59.000000 1 rendezvous.cc:130] [id=2] Termination timeout for `first call to collective "
        "operation 4; run_id=12` of 40 seconds exceeded. Exiting to ensure a consistent program state. "
        "Expected 8 threads to join the rendezvous, but not all of them arrived on time.",
        "RUN151",
        {},
    ),
    # the coordination service of JAX / TF: a task that re-joined as a new process (every version's wording)
    (
        "2025-04-05 18:39:10.837611: E external/xla/xla/tsl/distributed_runtime/coordination/"
        "coordination_service.cc:962] /job:jax_worker/replica:0/task:1 unexpectedly tried to connect with a "
        "different incarnation. It has likely restarted.\nE0405 18:39:10.837983     387 "
        "coordination_service_agent.cc:455] Polled an error from coordination service (this can be an error "
        "from this or another task).",
        "RUN312",
        {"ranks": [1]},
    ),
    (
        "jaxlib.xla_extension.XlaRuntimeError: ABORTED: /job:jax_worker/replica:0/task:7 unexpectedly tried "
        "to connect with a different incarnation. It has likely restarted.",
        "RUN312",
        {"ranks": [7]},
    ),
    (
        "tensorflow.python.framework.errors_impl.AbortedError: Incarnation ID mismatch: expecting "
        "4521346611 but got 8812734. This means the remote task has restarted.",
        "RUN312",
        {},
    ),
    (
        "ABORTED: /job:worker/replica:0/task:2 Heartbeat: Incarnation ID mismatch: expecting 1 but got 2. "
        "The task has restarted and likely crashed earlier - check for any earlier errors",
        "RUN312",
        {"ranks": [2]},
    ),
    (
        "E0101 00:00:00.000000 1 coordination_service_agent.cc:200] ABORTED: Leader incarnation ID "
        "mismatch: the coordination leader has restarted.",
        "RUN312",
        {},
    ),
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize(("log", "code", "facts"), CASES)
def test_stack_family_under_every_prefix(prefix: str, log: str, code: str, facts: dict) -> None:
    check_root(prefixed(prefix, log), code, facts)


# Healthy lines of the same stacks: none of them is a failure.
DECOYS = [
    "2024-01-01 10:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1546] Adding visible gpu "
    "devices: 0, 1",
    "INFO:tensorflow:Using MirroredStrategy with devices ('/job:localhost/replica:0/task:0/device:GPU:0',)",
    "[INFO] HCCL(40211,python):2025-03-02-07:40:02.001.112 [op_base.cc:1021][40211][Init][CommRootInfo]"
    "hcclCommInitRootInfo success, take time [1850]us, rankNum[8], rank[2]",
    "export NCCL_SHM_DISABLE=1;  # force the P2P transport",
    "INFO:root:Start training with [gpu(0), gpu(1)] kvstore=dist_sync",
    "hccn_tool -i 0 -ip -g\nipaddr:192.168.100.101\nnetmask:255.255.255.0",
    "E0218 03:50:19.000000 1 rendezvous.cc:100] [id=1] This thread has been waiting for `acquire clique for "
    "rank 3; clique=devices=[4,5,6,7]; is_p2p=0; run_id=-1558191007` for 10 seconds and may be stuck. "
    "Expected 4 threads to join the rendezvous, but not all of them arrived on time.\n"
    "E0218 03:50:21.000000 1 "
    "rendezvous.cc:120] Thread is unstuck! Warning above was a false-positive. Perhaps the timeout is too "
    "short.",
    "I0405 18:30:01.112233 387 coordination_service.cc:624] /job:jax_worker/replica:0/task:1 has connected "
    "to coordination service with the same incarnation again: 4521346611",
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES[:3])
@pytest.mark.parametrize("log", DECOYS)
def test_healthy_lines_of_these_stacks_stay_silent(prefix: str, log: str) -> None:
    assert failure_findings(prefixed(prefix, log)) == []
