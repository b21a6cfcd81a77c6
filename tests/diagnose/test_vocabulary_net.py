"""The net under the families (doctor/diagnose/rules/vocabulary.py): an error line of a stack no
family module reads is classified by the words of its failure, and never outranks a family.

The positive lines are in the words of stacks the family modules did not know when this net was
built (HCCL and CANN on Ascend, Paddle's gloo, ps-lite/ZeroMQ, gRPC and XLA's coordination service,
UCX, Open MPI's TCP BTL, TensorFlow's collective ops); each must reach its class, by a family row
or by the net. The negative lines are healthy prints, settings, status tables and people's prose
that use the same words: they stay silent.
"""

from __future__ import annotations

import pytest

from pgdoctor.diagnose.event import Hit
from pgdoctor.diagnose.rules import vocabulary
from pgdoctor.diagnose.text.normalize import Line
from tests.helpers.diagnose_root import failure_findings, root_finding

CLASSES = [
    # collective timeouts
    (
        "EI0002: [PID: 7277] 2024-11-28-11:59:30.645.648 The wait execution of the Notify register times "
        "out. Reason: The Notify register has not received the Notify record from remote rank [3].",
        "collective_timeout",
    ),
    (
        "EE1002: 2024-09-26-16:06:40.565.510 Stream synchronize timeout. rtDeviceSynchronize execute "
        "failed, reason=[stream sync timeout]",
        "collective_timeout",
    ),
    (
        "  what():  [/paddle/third_party/gloo/gloo/transport/tcp/pair.cc:587] TIMEOUT self_rank = 0 "
        "pair_rank = 1 peer_str = [172.16.32.105]:36265",
        "collective_timeout",
    ),
    (
        "tensorflow.python.framework.errors_impl.DeadlineExceededError: Collective ops is aborted by: "
        "the collective all-reduce did not finish",
        "collective_timeout",
    ),
    (
        "[rank3]: EE9999 The error from device(chipId:3, dieId:0), event wait timeout occurred during "
        "task execution, stream_id:122, task_id:790, timeout=1980.",
        "collective_timeout",
    ),
    # start-up exchanges
    (
        "2024-04-12 23:39:41.656900: E external/xla/xla/pjrt/distributed/client.cc:96] Coordination "
        "service agent in error status: DEADLINE_EXCEEDED: RegisterTask timed out",
        "rendezvous",
    ),
    (
        "[ERROR] HCCL(1041085,all_reduce_test):2000-03-15-01:20:01.630.122 [topoinfo_exchange_base.cc:145]"
        " [1041085][InitGroupStage][RanktableDetect] TopoDetect ERROR occur !!! fault_type[1], "
        'fault_info["Failed to connect agent[1,3,5,7,]"]',
        "rendezvous",
    ),
    # ranks that disagree about a collective
    (
        "tensorflow.python.framework.errors_impl.InternalError: Shape mismatch in the collective instance "
        "100. Op at device /job:worker/replica:0/task:1/device:GPU:0 expected shape [8] but another member "
        "in the group expected shape [4]",
        "collective_mismatch",
    ),
    # a call the backend refused
    ("RuntimeError: ProcessGroupHCCL does not support alltoall_base with uneven splits", "nccl_usage"),
    ("Error: comunicator of ring id 1 has not been initialized", "nccl_usage"),
    # start-up: the job's own server's port, a launch setting
    (
        "[07:48:18] 3rdparty/ps-lite/include/dmlc/logging.h:276: [07:48:18] src/./zmq_van.h:121: Reached max "
        "retry for bind: Address already in use. errno = 98",
        "rendezvous",
    ),
    (
        "MXNetError: [06:04:43] src/postoffice.cc:18: Check  notnull: "
        'Environment::Get()->find("DMLC_NUM_SERVER")',
        "rendezvous",
    ),
    (
        "2019-10-14 22:36:01.352450: E tensorflow/core/common_runtime/ring_alg.cc:279] Aborting RingReduce with "
        "Internal: Inconsistent output shapes, got [4], but expected is [2].",
        "collective_mismatch",
    ),
    (
        "Non-OK-status: GpuLaunchKernel (FillPhiloxRandomKernelLaunch <Distribution>, num_blocks, block_size, 0, "
        "d.stream (), gen, data, size, dist) status: Internal: out of memory",
        "cuda_oom",
    ),
    # connections between processes
    (
        "  what():  [06:42:50] src/./zmq_van.h:304: Check failed: 0 failed to receive message. errno: 88 "
        "Socket operation on non-socket",
        "nccl_network",
    ),
    (
        "[rank1]: EI0009: [PID: 2225827] 2025-09-24-20:59:48.119.066 Transport init error. Reason: "
        "[Create][DestLink]Create Dest error! createLink para:rank[1]",
        "nccl_network",
    ),
    (
        "[1701234567.123456] [node2:12345:0]        ib_iface.c:746  UCX  ERROR  Transport retry count "
        "exceeded on mlx5_0:1/IB (synd 0x15 vend 0x81 hw_synd 0/0)",
        "nccl_network",
    ),
    (
        "[node1][[1234,1],0][btl_tcp_endpoint.c:800:mca_btl_tcp_endpoint_complete_connect] connect() to "
        "10.0.0.2 failed: No route to host (113)",
        "nccl_network",
    ),
    # the device and the process
    (
        "[PID: 1070] 2026-04-30-23:39:01.135.160 Device_Absent/Abnormal(EL0001): Device not found or "
        "invalid.",
        "gpu_hardware",
    ),
    (
        "2024-01-01 00:00:00.000: E external/xla/xla/stream_executor/gpu/gpu_driver.cc:123] failed to "
        "allocate 4.00GiB (4294967296 bytes) from device: RESOURCE_EXHAUSTED: out of memory",
        "cuda_oom",
    ),
    (
        "SystemError: (Fatal) DataLoader process (pid 10222) exited is killed by signal: Killed. (at "
        "/paddle/paddle/fluid/imperative/data_loader.cc:181)",
        "host_oom",
    ),
    ("error: peer access is not supported between these two device", "driver_env"),
]


@pytest.mark.parametrize(("line", "category"), CLASSES, ids=[c for _, c in CLASSES])
def test_a_failure_in_the_words_of_its_class_reaches_that_class(line: str, category: str) -> None:
    root = root_finding(line + "\n")
    assert root is not None and root.category == category, (line, root)


# A line of a stack that no family module reads (TensorFlow's collective ops); the Ascend / HCCL and Paddle
# lines above now reach their class through their own family rows (rules/hccl.py, gloo_errors.py).
NET_ONLY = CLASSES[3][0]


def test_the_net_marks_what_it_inferred() -> None:
    root = root_finding(NET_ONLY + "\n")
    assert root is not None and root.facts.get("inferred_from") == "words"
    assert root.facts.get("kind") == "a collective that timed out"


QUIET = [
    "slurmstepd: error: Failed to send MESSAGE_TASK_EXIT: Connection refused",
    "Communicator not initialized yet, initializing it lazily on first use",
    "export MASTER_ADDR=10.0.0.1",
    "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use",
    "RuntimeError: Bfloat16 is not supported on this GPU (compute capability 7.0)",
    "RuntimeError: Error(s) in loading state_dict for DistributedDataParallel: size mismatch for fc.weight",
    "OSError: We couldn't connect to 'https://huggingface.co' to load this file: Connection reset by peer",
    "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='hub.example', port=443): "
    "Connection refused",
    "config: {'timeout': 1800, 'max_error_rate': 0.01, 'abort_on_error': False}",
    "[I ProcessGroupNCCL.cpp:835] [Rank 0] ProcessGroupNCCL initialization options: TIMEOUT(ms): 1800000",
    "We noticed the barrier timed out once last week, retrying fixed it.",
    "        Uncorrectable Error               : 0",
    "        Device Absent                     : No",
    "Setting HCCL_EXEC_TIMEOUT=1800 (collective timeout in seconds)",
    "[INFO] HCCL(123,python):2024-01-01-00:00:00.000.000 [hccl_comm.cc:100] init success, "
    "notify wait timeout 1800",
    "step 100: allreduce 12.3 ms, 0 errors, 0 timeouts",
    "gpu-node-01:4242:4300 [0] NCCL INFO [Service thread] Connection closed by localRank 0",
    "Filter (num_proc=8): 100%|##########| 5000/5000 [00:01<00:00, dropped=0, oom=0]",
    "If you see 'Connection refused' here, your MASTER_ADDR is wrong; you can ignore a timed out retry.",
]


@pytest.mark.parametrize("line", QUIET)
def test_the_same_words_in_healthy_lines_stay_silent(line: str) -> None:
    assert failure_findings(line + "\n") == [], line


def test_a_family_finding_outranks_the_net() -> None:
    log = (
        "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total "
        "capacity of 79.10 GiB of which 1.00 GiB is free.\n" + CLASSES[0][0] + "\n"
    )
    found = failure_findings(log)
    assert found and found[0].category == "cuda_oom", [f.code for f in found]


def _hit(text: str) -> Hit:
    return Hit("job.log", [Line(text, 1)], 0)


def test_a_line_a_family_row_takes_is_left_to_that_family() -> None:
    # a family that read the line and found no failure keeps it (the heartbeat monitor polling a store
    # that rank 0 closed at its exit, a socket error in the words of the network class): never the net's
    line = (
        '[rank3]:[W ProcessGroupNCCL.cpp:1263] [PG 0 Rank 3] Failed to check the "should dump" flag on '
        "TCPStore, (maybe TCPStore server has shut down too early), with error: Connection reset by peer"
    )
    assert vocabulary._owned(_hit(line))
    assert failure_findings(line + "\n") == []
    assert not vocabulary._owned(_hit(NET_ONLY))
    # a socket error of a stack the NCCL/gloo row does not read (it declines it) is open to the net
    assert not vocabulary._owned(_hit(CLASSES[17][0]))


# A thread's title alone (a fifth of the fresh sets' logs): a person's words for a device OOM, with no
# error marker of a program's. The first is a real title (v14d-cuda_oom-005).
@pytest.mark.parametrize(
    "title",
    ["Cuda out of memory in validation", "[Bug]: GPU OOM with FSDP on 8 GPUs", "显存不足 cuda out of memory"],
)
def test_a_title_that_names_a_device_oom_is_cuda_oom(title: str) -> None:
    root = root_finding(title + "\n")
    assert root is not None and root.category == "cuda_oom", (title, root)


@pytest.mark.parametrize(
    "text",
    [
        "How to avoid Cuda out of memory in validation?",
        "[Feature] support offloading when the GPU is out of memory",
        # the same words in a log of several lines still need a program's error marker
        "epoch 3 done\nCuda out of memory in validation was fixed by a smaller batch",
    ],
)
def test_a_question_a_request_or_a_longer_text_without_an_error_marker_stays_silent(text: str) -> None:
    assert failure_findings(text + "\n") == [], text
