"""Families of t1's session (issue 26), each read at its source and pinned with the thread's real lines:

- glog's CHECK_EQ of an ncclResult_t whose checked value is the call itself (Paddle 1.x platform/nccl_helper.h
  NCCLGroupGuard: "Check failed: dynload::ncclGroupEnd() == ncclSuccess (1 vs. 0)") or comes second (Antares'
  CHECK_EQ(ncclSuccess, ncclGroupStart()): "ncclSuccess == ncclGroupStart() (0 vs. 1)"): NCCL's result code;
  a bare unhandled cuda error under Paddle's NCCLContextMap constructor (glog's stack) is the communicator's
  creation, RUN313; elsewhere RUN194;
- NCCL's transport/nvls.cc "Failed to bind NVLink SHARP (NVLS) Multicast memory ... CUDA error 401" quoted
  without its WARN prefix: RUN292;
- FSDP's "Inconsistent compute device and `device_id` on rank N" retyped with other quotes: RUN301;
- the DDP Reducer's constructor before DDP's Python check ("replicas_[0].size() >= 1 ASSERT FAILED at
  .../reducer.cpp:53", "Expected at least one parameter.") and fairscale's reduce-scatter bucketer
  "reduce_scatter received 2 inputs, expected group.size() (8)": RUN301;
- perftest's "Couldn't allocate MR" (ibv_reg_mr refused; a --use_cuda GPU buffer without nvidia-peermem, or
  the memlock limit): RUN385;
- c10's "Could not compute stream ID for X on device -1" (torch_npu and the other backends' stream pools: no
  device selected in this process): RUN264;
- a scheduler's own variable missing ("KeyError: 'SLURM_NODEID'", Lightning's SLURMEnvironment forced off
  Slurm; OMPI_COMM_WORLD_*, PMI_*): RUN550, while torch's own ("KeyError: 'RANK'") stay RUN224.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

# https://github.com/PaddlePaddle/Paddle/issues/14620
PADDLE_BROADCAST = """2018-11-25 15:44:36 , Epoch_id: 0, Batch_id: 17730, Cost: 0.087458
F1125 15:44:39.266677 200102 nccl_helper.h:62] Check failed: dynload::ncclGroupEnd() == ncclSuccess (1 vs. 0)
*** Check failure stack trace: ***
@ 0x7fb8680c0f9d google::LogMessage::Fail()
@ 0x7fb8680c4a4c google::LogMessage::SendToLog()
@ 0x7fb8680c0ac3 google::LogMessage::Flush()
@ 0x7fb8680c5f5e google::LogMessageFatal::~LogMessageFatal()
@ 0x7fb869369ea6 _ZNSt17_Function_handlerIFvvEZN6paddle9framework7details17BroadcastOpHandle15BroadcastOneVarERKNS3_9VarHandleERKSt6vectorIPS5_SaIS9_EERKS8_IPKNS2_5ScopeESaISG_EEEUlvE1_E9_M_invokeERKSt9_Any_data
"""
# https://github.com/PaddlePaddle/Paddle/issues/14109
PADDLE_CONTEXT_MAP = """    F1122 12:57:04.196161 22202 nccl_helper.h:62] Check failed: dynload::ncclGroupEnd() == ncclSuccess (1 vs. 0)
    *** Check failure stack trace: ***
        @     0x7fd3677641ed  google::LogMessage::Fail()
        @     0x7fd367767c9c  google::LogMessage::SendToLog()
        @     0x7fd367763d13  google::LogMessage::Flush()
        @     0x7fd3677691ae  google::LogMessageFatal::~LogMessageFatal()
        @     0x7fd3677bb0f6  paddle::platform::NCCLGroupGuard::~NCCLGroupGuard()
        @     0x7fd3677bda0c  paddle::platform::NCCLContextMap::NCCLContextMap()
        @     0x7fd3677b9210  paddle::framework::ParallelExecutor::ParallelExecutor()
"""
# https://github.com/bytedance/byteps/issues/38 (the BytePS form, read before this session)
BYTEPS = "`byteps/common/core_loops.cc :309] Check failed: r == ncclSuccess NCCL error: invalid usage`"


@pytest.mark.parametrize(
    ("log", "code", "facts"),
    [
        (PADDLE_BROADCAST, "RUN194", {"nccl_result": 1}),
        (PADDLE_CONTEXT_MAP, "RUN313", {"init_site": "NCCLContextMap", "phase": "communicator_init"}),
        # Antares (microsoft/antares, CHECK_EQ(ncclSuccess, ncclGroupStart())): the result second
        (
            "F0312 10:11:12.000000  4242 nccl.cc:88] Check failed: ncclSuccess == ncclGroupStart() (0 vs. 3)",
            "RUN192",
            {"nccl_result": 3},
        ),
        (
            "F0312 10:11:12.000000  4242 nccl.cc:91] Check failed: ncclSuccess == ncclCommInitRank(&comm, nranks, id, rank) (0 vs. 2)",
            "RUN171",
            {"nccl_result": 2},
        ),
        # the Caffe form, unchanged
        (
            "F0508 14:41:40.563820 19761 parallel.cpp:195] Check failed: result == ncclSuccess (1 vs. 0)  unhandled cuda error",
            "RUN194",
            {"nccl_result": 1},
        ),
        (BYTEPS, "RUN191", {"nccl_error": "invalid usage"}),
    ],
)
def test_glog_checks_of_nccl_results(log: str, code: str, facts: dict[str, object]) -> None:
    _check(log, code, facts)


@pytest.mark.parametrize(
    "line",
    [
        # https://github.com/pytorch/ao/pull/3841 (the CI job's line quoted in the PR)
        "  Failed to bind NVLink SHARP (NVLS) Multicast memory: CUDA error 401",
        # NCCL 2.2x's full sentence, without its WARN prefix
        "Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 at MC group 1f offset 0 : CUDA error 401 'the operation cannot be performed in the present state'.",
        "Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 801 'operation not supported'.",
    ],
)
def test_nvls_bind_quoted_bare(line: str) -> None:
    _check(line + "\n", "RUN292", {"feature": "nvls"})


@pytest.mark.parametrize(
    ("log", "facts"),
    [
        # https://github.com/h2oai/h2ogpt/issues/671 (the reporter retyped FSDP's ValueError in the prose)
        (
            "i run the finetune.py without lora and use the fsdp ,but there is a error, fsdp/_init_utils.py,line889 inconsistent compute device and'device_id ' on rank 3: cuda:0 vs cuda:3; i run the programmer in Single machine multi card",
            {"usage_check": "fsdp_device", "rank": 3},
        ),
        (
            "ValueError: Inconsistent compute device and ‘device_id’ on rank 1: cuda:0 vs cuda:1",
            {"usage_check": "fsdp_device"},
        ),
        # https://github.com/XPixelGroup/BasicSR/issues/199 (torch 1.0-1.4's AT_ASSERTM in the Reducer)
        (
            '` File "/home/gpu/llp/BasicSR/codes/models/SRGAN_model.py", line 74, in __init__\n    device_ids=[torch.cuda.current_device()])\n`\nerror is \n"RuntimeError: replicas_[0].size() >= 1 ASSERT FAILED at /pytorch/torch/csrc/distributed/c10d/reducer.cpp:53"',
            {"usage_check": "ddp"},
        ),
        # 1.5-1.7's TORCH_CHECK of the same, below DDP's constructor
        (
            '  File "/usr/lib/python3.8/site-packages/torch/nn/parallel/distributed.py", line 409, in __init__\n    self._ddp_init_helper()\nRuntimeError: Expected at least one parameter.',
            {"usage_check": "ddp"},
        ),
        # https://github.com/facebookresearch/fairscale/issues/904
        (
            '  File "/home/xxx/.local/lib/python3.8/site-packages/fairscale/utils/reduce_scatter_bucketer.py", line 131, in reduce_scatter_async\n    assert (\nAssertionError: reduce_scatter received 2 inputs, expected group.size() (8)',
            {"usage_check": "arguments"},
        ),
    ],
)
def test_usage_checks_of_fsdp_ddp_and_collective_lists(log: str, facts: dict[str, object]) -> None:
    _check(log + "\n", "RUN301", facts)


# https://github.com/linux-rdma/perftest/issues/126
PERFTEST_CUDA = """root@rdma-cuda-test-pod-1:~# ib_write_bw -d mlx5_0 -F -R -q 2 --use_cuda=0 192.168.111.1
initializing CUDA
Listing all CUDA devices in system:
CUDA device 0: PCIe address is 02:00

Picking device No. 0
[pid = 56, dev = 0] device name = [NVIDIA A30-8C]
creating CUDA Ctx
making it the current CUDA Ctx
cuMemAlloc() of a 262144 bytes GPU buffer
allocated GPU buffer address at 0000010013000000 pointer=0x10013000000
Couldn't allocate MR
failed to create mr
Failed to create MR
Failed to initialize RDMA contexts.
ERRNO: Bad address.
Failed to handle RDMA CM event.
ERRNO: Bad address.
Failed to connect RDMA CM events.
ERRNO: Bad address.
Segmentation fault (core dumped)
"""
# host memory under a pod's 64 KB memlock limit (raids-lab/crater issue 339's shape), newer perftest's errno
PERFTEST_HOST = """[host2] $ ib_read_bw -q 30 10.244.46.50
Couldn't allocate MR with error=12
failed to create mr
Failed to create MR
 Couldn't create IB resources
"""


@pytest.mark.parametrize(
    ("log", "facts"),
    [
        (PERFTEST_CUDA, {"engine": "perftest", "memory_type": "cuda"}),
        (PERFTEST_HOST, {"engine": "perftest", "errno": 12}),
    ],
)
def test_perftest_memory_registration(log: str, facts: dict[str, object]) -> None:
    _check(log, "RUN385", facts)


# https://github.com/dcharatan/pixelsplat/issues/112
LIGHTNING_SLURM = """  File "/opt/conda/lib/python3.10/site-packages/lightning/fabric/plugins/environments/slurm.py", line 155, in node_rank
    return int(os.environ["SLURM_NODEID"])
  File "/opt/conda/lib/python3.10/os.py", line 680, in __getitem__
    raise KeyError(key) from None
KeyError: 'SLURM_NODEID'
"""
# https://github.com/ModelTC/mqbench-paper/issues/1
MQBENCH = """  File "mqbench/prototype/utils/dist.py", line 53, in dist_init
    proc_id = int(os.environ['SLURM_PROCID'])
  File "/opt/conda/lib/python3.7/os.py", line 681, in __getitem__
    raise KeyError(key) from None
KeyError: 'SLURM_PROCID'
"""


@pytest.mark.parametrize(
    ("log", "code", "var"),
    [
        (LIGHTNING_SLURM, "RUN550", "SLURM_NODEID"),
        (MQBENCH, "RUN550", "SLURM_PROCID"),
        (MQBENCH.replace("SLURM_PROCID", "OMPI_COMM_WORLD_RANK"), "RUN550", "OMPI_COMM_WORLD_RANK"),
        (MQBENCH.replace("SLURM_PROCID", "PMI_RANK"), "RUN550", "PMI_RANK"),
        # torch's own variable: the rendezvous settings, as before
        (MQBENCH.replace("SLURM_PROCID", "RANK"), "RUN224", "RANK"),
    ],
)
def test_scheduler_variables_versus_torch_variables(log: str, code: str, var: str) -> None:
    _check(log, code, {"missing_variable": var})


@pytest.mark.parametrize(
    "line",
    [
        # https://github.com/Ascend/pytorch/issues/20 (the title, the reporter's XXX and full-width colon kept)
        "[BUG] multi-npu training error：Could not compute stream ID for XXX on device -1",
        # c10's full assert (torch_npu NPUStream.cpp / CUDAStream.cpp)
        "RuntimeError: Could not compute stream ID for 0x55d0c0a8e1f0 on device -1 (something has gone horribly wrong!)",
    ],
)
def test_stream_of_no_selected_device(line: str) -> None:
    _check(line + "\n", "RUN264", {"device": -1, "reason": "device_not_selected"})


def test_stream_of_another_device_is_not_read_as_no_device() -> None:
    root = _root(
        "RuntimeError: Could not compute stream ID for 0x55d0c0a8e1f0 on device 1 (something has gone horribly wrong!)\n"
    )
    assert root is None or root.facts.get("reason") != "device_not_selected"


# ROCm's wording of a capture broken by a collective (https://github.com/ROCm/hip/issues/3876: dist.all_reduce
# over RCCL inside torch.cuda.graph); the title alone names no collective, so it stays with the generic rows
CAPTURE_HIP = "RuntimeError: HIP error: operation not permitted when stream is capturing"


def test_hip_capture_error_with_a_collective() -> None:
    log = (
        '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 2050, in all_reduce\n'
        "    work = group.allreduce([tensor], opts)\n" + CAPTURE_HIP + "\n"
    )
    _check(log, "RUN380", {"cuda_error": "operation not permitted when stream is capturing"})
    assert (
        _root("[Block Issue][hip graph]: HIP error: operation not permitted when stream is capturing\n")
        is None
    )


@pytest.mark.parametrize(
    "log",
    [
        # NCCL's NVLS lines of a healthy init
        "node1:1234:5678 [0] NCCL INFO NVLS multicast support is available on dev 0\n"
        "node1:1234:5678 [0] NCCL INFO NVLS comm 0x55d0c0 headRank 0 nHeads 4 buffSize 1048576 memSize 2097152 "
        "nvlsPerRankSize 201326592 nvlsTotalSize 1610612736\n",
        # perftest that registered its GPU buffer and ran
        "allocated GPU buffer address at 0000010013000000 pointer=0x10013000000\n"
        " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
        " 65536      5000             11427.26            11426.98		   0.182832\n",
        # a launch that printed its scheduler's variables, and FSDP's set-up note
        "SLURM_PROCID=0 SLURM_NODEID=0 SLURM_LOCALID=0 OMPI_COMM_WORLD_RANK=0\n"
        "FSDP device_id=cuda:3 on rank 3, compute device cuda:3\n",
        # glog INFO lines around NCCL in a healthy Paddle run
        "I1122 12:57:04.196161 22202 nccl_helper.h:105] NCCLContextMap created with 8 places\n"
        "I1122 12:57:05.000000 22202 parallel_executor.cc:421] ncclGroupEnd() == ncclSuccess\n",
    ],
)
def test_near_misses_stay_silent(log: str) -> None:
    assert _root(log) is None
