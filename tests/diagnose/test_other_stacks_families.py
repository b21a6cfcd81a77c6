"""Synthetic variants of the other_stacks.py families, each read at its source:
UCX src/uct/ib/{ud,rc}/base/*_iface.c (ucs_fatal "transport error: %s"), libfabric prov/psm3 (assert
"Assertion failure at %s:%d: %s"), legate.core src/core/comm/comm_nccl.cu (CHECK_NCCL), rabit
src/allreduce_base.cc (tracker connect / ReConnectLinks), LightGBM src/network/linkers_socket.cpp,
MindSpore ccsrc/distributed/cluster/cluster_context.cc, jax/_src/xla_bridge.py (TPU init warning),
Kubeflow training-operator pkg/controller.v1 (JobFailed message), Ray src/ray/raylet/node_manager.cc."""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root, root_finding


@pytest.mark.parametrize(
    ("log", "code"),
    [
        (
            "[node7:4242:0:4242]    rc_iface.c:412  Fatal: transport error: Transport retry count exceeded\n",
            "RUN173",
        ),
        ("[node7:4242:0:4242]    ud_iface.c:781  Fatal: transport error: Endpoint timeout\n", "RUN173"),
        ("Failed to modify QP to RTS: Connection timed out\nerrno: 110\n", "RUN173"),
        ("failed to modify QP to INIT, Invalid argument\n", "RUN173"),
        (
            "host:rank0: Assertion failure at psm3/ptl_am/ptl.c:196: nbytes == req->req_data.recv_msglen\n",
            "RUN192",
        ),
        (
            "Internal NCCL failure with error unhandled system error in file /x/comm_nccl.cu at line 85\n",
            "RUN171",
        ),
        ("Internal NCCL failure with error invalid usage in file /x/comm_nccl.cu at line 85\n", "RUN191"),
        ("Internal NCCL failure with error internal error in file /x/comm_nccl.cu at line 85\n", "RUN192"),
        (
            "retry connect to ip(retry time 4): [10.0.0.3]\nconnect to (failed): [10.0.0.3]\n"
            "Socket Connect Error:Connection refused\n",
            "RUN222",
        ),
        (
            "failed in ReconnectLink [10:00:00]"
            " rabit/include/rabit/internal/socket.h:26: Connection refused\n",
            "RUN174",
        ),
        ("lightgbm.basic.LightGBMError: Machine list file doesn't contain the local machine\n", "RUN221"),
        ("[LightGBM] [Warning] Connecting to rank 3 failed, waiting for 1200 milliseconds\n", "RUN222"),
        (
            "[WARNING]"
            " DISTRIBUTED(1,7f,python):2024-01-01-00:00:00.000.000 [mindspore/ccsrc/distributed/cluster/"
            "cluster_context.cc:268] PostProcess] This node could be"
            " redundant and is not successfully registered.\n",
            "RUN221",
        ),
        (
            "UserWarning: TPU backend initialization is taking more than"
            " 60.0 seconds. Did you run your code on all "
            "TPU hosts? See https://jax.readthedocs.io/en/latest/multi_process.html for more information.\n",
            "RUN221",
        ),
        ("  Message:  PyTorchJob train-1 is failed because 2 Worker replica(s) failed.\n", "RUN133"),
        (
            "(raylet) node_manager.cc:3007: 3 Workers (tasks /\n actors)"
            " killed due to memory pressure (OOM), 0 Workers "
            "crashed due to other reasons at node (ID: ab, IP: 10.0.0.2) over the last time period.\n",
            "RUN121",
        ),
    ],
)
def test_other_stack_families(log: str, code: str) -> None:
    check_root(log, code)


@pytest.mark.parametrize(
    "log",
    [
        "Socket Connect Error:Connection refused\n",  # without rabit's tracker retries: not read as rabit
        "Internal NCCL failure with error some future text in file /x/comm_nccl.cu at line 85\n",
        "[LightGBM] [Info] Connected to rank 3\n",
    ],
)
def test_other_stack_rows_stay_silent(log: str) -> None:
    root = root_finding(log)
    assert root is None or root.code not in {"RUN222", "RUN191", "RUN192"}, root


def test_paddle_gpu_allocator_frame_is_cuda_oom() -> None:
    # paddle/fluid/memory/allocation/cuda_allocator.cc (Paddle 2.x) throws ResourceExhausted from here.
    check_root(
        "RuntimeError: 0   std::string"
        " paddle::platform::GetTraceBackString<std::string>(std::string&&, char const*, "
        "int)\n1   paddle::memory::allocation::CUDAAllocator::AllocateImpl(unsigned long)\n"
        "2   paddle::memory::allocation::Allocator::Allocate(unsigned long)\n",
        "RUN101",
    )


def test_hccl_init_internal_error_is_nccl_internal() -> None:
    # hccl_types.h: HCCL_E_INTERNAL = 4; torch_npu ProcessGroupHCCL raises it from hcclCommInitRootInfoConfig.
    check_root(
        "RuntimeError: create_config:torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:102 HCCL function "
        "error: hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, &(comm->hcclComm_)), "
        "error code is 4\n",
        "RUN192",
    )
