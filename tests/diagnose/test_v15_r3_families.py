"""Families of the v15 dev misses of group r3, read at their sources: RCCL's ncclGetErrorString texts
(nccl_errors.py); NCCL's socketFinalizeAccept type check (misc/socket.cc 2.12+, net_texts.py and the WARN
rows); the enforce of caffe2's CAFFE_NCCL_CHECK and gloo's NCCL_CHECK on ncclSuccess (nccl_wrappers.py);
protobuf's 2 GB limit on TF's worker-service messages (RUN364, grpc_transport.py); TF's collectives aborted on
tensors of different shapes (ring_alg.cc, collective_param_resolver_local.cc, tf_collectives.py); Paddle's
collective-layer enforce (paddle/fluid/distributed/collective, paddle_comm.py); torch 2.7+'s Watchdog::run
record (ProcessGroupNCCL.cpp, stuck_stacks.py); oneCCL's ATL status and Xe Link port checks (RUN365,
oneccl.py); a stopped or zombie process that nvidia-smi shows holding GPU memory (RUN103, gpu_holders.py).
Look-alike healthy lines stay silent."""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, check_root, failure_findings, prefixed

RCCL = [
    "Rccl error, unhandled system error",
    "RuntimeError: RCCL error: unhandled system error",
    "[rank0]: rccl failed: remote process exited or there was a network error",
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize("log", RCCL)
def test_rccl_error_texts(prefix: str, log: str) -> None:
    root = failure_findings(prefixed(prefix, log))
    assert root and root[0].category == "nccl_network", (log, root)


WRONG_TYPE = [
    # NCCL's WARN record
    "node1:4242:4300 [0] misc/socket.cc:484 NCCL WARN socketFinalizeAccept: wrong type 3 != 4\n"
    "node1:4242:4300 [0] NCCL INFO transport/net.cc:871 -> 3\n",
    # quoted in a sentence (a title), glued to CJK text
    "多机多卡训练，在运行程序时，出现了socketFinalizeAccept: wrong type 3 != 4错误。但是如果我在运行时指定"
    "NCCL_IB_DISABLE=1，那么程序就可以正常运行。",
    "Multi-node job fails with socketFinalizeAccept: wrong type 4 != 3",
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize("log", WRONG_TYPE)
def test_nccl_socket_type_mismatch(prefix: str, log: str) -> None:
    check_root(prefixed(prefix, log), "RUN174")


def test_socket_type_mismatch_names_the_transports() -> None:
    check_root(
        "socketFinalizeAccept: wrong type 3 != 4",
        "RUN174",
        {"peer_socket_type": "NetSocket", "listener_socket_type": "NetIb", "transport_mismatch": True},
    )


ENFORCE = [
    (
        "[E net_dag.cc:188] Exception from operator chain starting at '' (type 'NCCLAllreduce'): "
        "caffe2::EnforceNotMet: [enforce fail at cuda_nccl_gpu.cc:24] status == ncclSuccess. 2 vs 0.  "
        "Error at: "
        "/root/caffe2/caffe2/contrib/nccl/cuda_nccl_gpu.cc24: system error Error from operator: ",
        "nccl_network",
    ),
    (
        "RuntimeError: [enforce fail at gloo/nccl/nccl.cu:150] status == ncclSuccess. 2 vs 0.  "
        "unhandled system error",
        "nccl_network",
    ),
    (
        "caffe2::EnforceNotMet: [enforce fail at cuda_nccl_gpu.cc:24] status == ncclSuccess. 12 vs 0.  "
        "Error at: "
        "/x/cuda_nccl_gpu.cc24: invalid argument",
        "nccl_usage",
    ),
    ("[enforce fail at cuda_nccl_gpu.cc:24] status == ncclSuccess. 1 vs 0.", "nccl_usage"),
]


@pytest.mark.parametrize(("log", "category"), ENFORCE)
def test_nccl_result_enforce(log: str, category: str) -> None:
    found = failure_findings(log)
    assert found and found[0].category == category, (log, found)


_PROTO = (
    "[libprotobuf ERROR external/com_google_protobuf/src/google/protobuf/message_lite.cc:451] "
    "tensorflow.{msg} exceeded maximum protobuf size of 2GB: 5368538440\n"
)
TOO_LARGE = [
    "Epoch 1/3\n"
    + _PROTO.format(msg="RecvBufRespExtra") * 2
    + "WARNING:tensorflow:/job:worker/replica:0/task:1 seems down, retrying 1/3\n"
    "ERROR:tensorflow:Cluster check alive failed, /job:worker/replica:0/task:1 is down, "
    "aborting collectives: "
    "Deadline Exceeded\n",
    _PROTO.format(msg="RecvTensorResponse"),
    _PROTO.format(msg="RecvBufResponse")
    + "tensorflow.python.framework.errors_impl.UnavailableError: Socket closed\n",
]


@pytest.mark.parametrize("prefix", ["", "[1,0]<stderr>:", "worker-1: "])
@pytest.mark.parametrize("log", TOO_LARGE)
def test_protobuf_limit_between_workers(prefix: str, log: str) -> None:
    check_root(prefixed(prefix, log), "RUN364", {"message_bytes": 5368538440})


SHAPES = [
    "Random error after hundreds of iterations: Aborting RingReduce with Invalid argument: "
    "Incompatible shapes: "
    "[0,64] vs. [0,256]",
    "2021-01-01 12:00:00.100: W tensorflow/core/common_runtime/base_collective_executor.cc:217] "
    "BaseCollectiveExecutor::StartAbort Invalid argument: Incompatible shapes: [1,4] vs. [1,2]",
    "tensorflow.python.framework.errors_impl.InvalidArgumentError: Collective ops is aborted by: Invalid "
    "argument: Incompatible shapes: [128] vs. [64]",
    "tensorflow.python.framework.errors_impl.InvalidArgumentError: Shape mismatch in the collective instance "
    "100. Op at device /job:worker/replica:0/task:1/device:GPU:0 expected shape [10] but "
    "another member in the "
    "group expects shape [20].",
]


@pytest.mark.parametrize("log", SHAPES)
def test_tf_collective_shapes_differ(log: str) -> None:
    check_root(log, "RUN201")


def test_tf_shapes_title_in_lower_case_and_a_model_bug_without_a_collective() -> None:
    check_root("aborting ringreduce with invalid argument: incompatible shapes: [0,64] vs. [0,256]", "RUN201")
    log = "InvalidArgumentError: Incompatible shapes: [32,10] vs. [16,10] [Op:Add]"
    assert "RUN201" not in [f.code for f in failure_findings(log)]


PADDLE = [
    "----------------------\nError Message Summary:\n----------------------\n"
    "InvalidArgumentError: The length of size_on_each_rank must be equal to world_size.\n"
    "  [Hint: Expected length_size_on_each_rank == world_size, but received length_size_on_each_rank:16 != "
    "world_size:8.] (at /work/Paddle/paddle/fluid/distributed/collective/process_group_nccl.cc:222)\n",
    "ValueError: (InvalidArgument) Tensor's place must be GPU. [Hint: Expected x, but received y.] "
    "(at /paddle/paddle/phi/core/distributed/check/static_check.cc:40)\n",
    "PreconditionNotMetError: The dtype of input tensors must be equal.\n"
    "  [Hint: Expected a == b.] (at /paddle/paddle/fluid/operators/collective/c_allgather_op.cu.cc:64)\n",
]


@pytest.mark.parametrize("log", PADDLE)
def test_paddle_collective_argument_checks(log: str) -> None:
    check_root(log, "RUN191", {"framework": "paddle"})


_RUN = (
    "Exception raised from run at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2063 "
    "(most recent "
    "call first):\n"
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x80 (0x7f71 in libc10.so)\n"
    "frame #1: <unknown function> + 0xe34731 (0x7f70 in libtorch_cuda.so)\n"
    "frame #2: <unknown function> + 0xd828c (0x7f71 in libstdc++.so.6)\n"
)


@pytest.mark.parametrize("prefix", ["", "[rank1]: ", "[default0]:"])
def test_watchdog_run_record_alone(prefix: str) -> None:
    check_root(prefixed(prefix, _RUN), "RUN151", {"frame": "run"})


def test_watchdog_run_record_after_a_cut_inner_record_says_nothing() -> None:
    log = "frame #7: <unknown function> + 0x94ac3 (0x7f82 in libc.so.6)\n\n" + _RUN
    assert [f.code for f in failure_findings(log)] == []


def test_run_record_of_another_file_is_not_the_watchdog() -> None:
    log = _RUN.replace("ProcessGroupNCCL.cpp", "TCPStore.cpp")
    assert "RUN151" not in [f.code for f in failure_findings(log)]


_PORT = (
    "2025:04:02-03:30:40:(4119976) |CCL_WARN| host: node7, rank: {r}, local_port_id: {{ 65559 0 {p} }}, "
    "port issue: {{ status: {s}, details: {d} }}\n"
)
_NOTES = (
    "2025:04:02-03:30:40:(4119977) |CCL_WARN| did not find MPI-launcher specific variables, "
    "switch to ATL/OFI, "
    "to force enable ATL/MPI set CCL_ATL_TRANSPORT=mpi\n"
)


def test_oneccl_failed_ports() -> None:
    log = _NOTES + "".join(
        _PORT.format(r=r, p=p, s="failed", d="training timeout") for r in (0, 1) for p in (1, 2)
    )
    check_root(log, "RUN365", {"port_id": "65559 0 1", "port_details": "training timeout"})


def test_oneccl_numbered_paste_and_atl_status() -> None:
    log = " 15 " + _PORT.format(r=0, p=1, s="failed", d="flapping")
    check_root(log, "RUN365")
    check_root("test_distributed_checkpoint.py got atl_status: FAILURE randomly", "RUN365")
    check_root("RuntimeError: oneCCL: atl_ofi_comm.cpp:280 init_transport: atl_status: FAILURE", "RUN365")


def test_oneccl_degraded_ports_and_notes_are_silent() -> None:
    log = _NOTES + _PORT.format(r=0, p=1, s="degraded", d="link errors")
    assert failure_findings(log) == []


_SMI = (
    "+-----------------------------------------------------------------------------+\n"
    "| Processes:                                                                  |\n"
    "|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |\n"
    "|=============================================================================|\n"
    "|    0   N/A  N/A      1395      C   python                          25081MiB |\n"
    "+-----------------------------------------------------------------------------+\n"
)


@pytest.mark.parametrize(
    "ps",
    [
        "thomased  1395  1.7 14.4 89506440 28604880 pts/2 Tl May25 147:37 python train.py --device=cuda:0\n",
        "  PID STAT CMD\n 1395 Z    [python] <defunct>\n",
        "root      1395  0.0  0.0      0     0 ?        Z    May25   0:00 [python] <defunct>\n",
    ],
)
def test_stale_process_holds_gpu_memory(ps: str) -> None:
    check_root(_SMI + "\n# ps -aux | grep 1395\n" + ps, "RUN103", {"other_pid": 1395, "gpu": 0})


def test_running_process_in_the_table_is_silent() -> None:
    ps = "thomased  1395  99.0 14.4 89506440 28604880 pts/2 Rl May25 147:37 python train.py\n"
    assert failure_findings(_SMI + ps) == []
    assert failure_findings(_SMI) == []
