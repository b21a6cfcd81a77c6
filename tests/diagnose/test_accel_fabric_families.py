"""Families read at their sources (v15 held-out misses, session 16):

- device OOM of accelerators in their runtimes' words (rules/accel_oom.py): Ascend CANN's runtime error table
  (rtErrMap_: RT_ERROR_DRV_OUT_MEMORY -> 207001 "driver error:out of memory"), the EL0004 block with its
  time / PID, torch_npu's NPU_CHECK_ERROR ("error code is 207001", "[Error]: Failed to apply for memory."),
  HIP's hipErrorMemoryAllocation, SYCL's PI_ERROR_OUT_OF_RESOURCES (IPEX FAQ): RUN101;
- NCCL's duplicate-GPU check (init.cc "Duplicate GPU detected : rank %d and rank %d both on CUDA device %lx",
  2.4-2.2x and RCCL) and its retellings: RUN193;
- PaddlePaddle 0.x-1.x PADDLE_ENFORCE on an ncclResult_t ("<ncclGetErrorString> at [<file>:<line>]"),
  classified by NCCL's text as torch's wording is (nccl_detail.KIND);
- NVSHMEM's transports (nvshmemx_error.h NZ_ERROR_JMP "<file>:<line>: non-zero status: <n> <msg>" in
  modules/transport/{ibgda,ibrc,ibdevx,ucx,libfabric}, host/transport/transport.cpp): RUN393;
- aws-ofi-nccl's provider / protocol start-up WARNs (v1.0.0-v1.17: nccl_ofi_net.c, nccl_ofi_rdma.c): RUN294;
- TensorFlow's collective health check (collective_all_reduce_strategy.py _check_health, TF 2.3+): RUN394;
- nvidia-smi nvlink --status ("Link N: <inactive>" beside "Link M: 25.781 GB/s"): RUN346;
- a program's own "warning:" about P2P / peer access (kmcuda) is a healthy run's note.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = ["", "[rank3]: ", "node7: ", "(RayWorkerWrapper pid=1234) ", "[1,0]<stderr>:"]

CASES = [
    # Ascend CANN
    ("EL0004: 2024-08-28-16:15:00.358.141 Failed to allocate memory.", "RUN101", {"device": "npu"}),
    (
        "EL0004: [PID: 4021] 2025-03-01-10:00:00.123.456 Failed to allocate memory.",
        "RUN101",
        {"device": "npu"},
    ),
    (
        "rtFftsPlusTaskLaunch execute failed, reason=[driver error:out of memory][FUNC:FuncErrorReason]"
        "[FILE:error_message_manage.cc][LINE:53]",
        "RUN101",
        {"device": "npu"},
    ),
    (
        "rtMalloc execute failed, reason=[driver error:out of memory][FUNC:ReportError]"
        "[FILE:error_message_manage.cc][LINE:566]",
        "RUN101",
        {"device": "npu"},
    ),
    (
        "[ERROR] RUNTIME(3717568,python):2026-04-23-23:34:33.485.417 [npu_driver.cc:6926]3746335 "
        "MallocPhysical:[drv api]halMemCreate failed drvRetCode=6, size=20971520(bytes), flags=0, "
        "ErrCode=207001, "
        "desc=[driver error:out of memory], InnerCode=0x7020016",
        "RUN101",
        {"device": "npu"},
    ),
    (
        "RuntimeError: call aclnnBatchMatMul failed, error code is 207001",
        "RUN101",
        {"device": "npu"},
    ),
    ("[Error]: Failed to apply for memory.", "RUN101", {"device": "npu"}),
    # ROCm / Intel
    ("what():  hipMalloc failed: hipErrorMemoryAllocation", "RUN101", {"device": "rocm"}),
    ("RuntimeError: cnrtMalloc failed: cnrtErrorNoMem", "RUN101", {"device": "mlu"}),
    (
        "RuntimeError: Native API failed. Native API returns: -5 (PI_ERROR_OUT_OF_RESOURCES) -5 "
        "(PI_ERROR_OUT_OF_RESOURCES)",
        "RUN101",
        {"device": "xpu"},
    ),
    # NCCL duplicate GPU
    (
        "ubuntu1583:1585 [0] init.cc:738 NCCL WARN Duplicate GPU detected : rank 0 and rank 1 both on CUDA "
        "device 1000",
        "RUN193",
        {"ranks": [0, 1], "bus_id": "1000"},
    ),
    ("Error: rank 27 and rank 19 both on CUDA device 53000 (PCI 53:00.0)", "RUN193", {"ranks": [19, 27]}),
    (
        "ncclInvalidUsage — Duplicate GPU detected: rank 3 and rank 7 both on CUDA device",
        "RUN193",
        {"ranks": [3, 7], "bus_id": None},
    ),
    # Paddle 1.x NCCL enforce
    (
        "paddle.fluid.core.EnforceNotMet: invalid argument at [/paddle/paddle/operators/nccl_op.cu.cc:193]",
        "RUN191",
        {"framework": "paddle", "where": "nccl_op.cu.cc:193"},
    ),
    (
        "  what():  internal error at [/paddle/paddle/fluid/platform/nccl_helper.h:106]",
        "RUN192",
        {"framework": "paddle", "nccl_error_text": "internal error"},
    ),
    (
        "EnforceNotMet: unhandled system error at [/paddle/paddle/fluid/platform/collective_helper.cc:62]",
        "RUN171",
        {"framework": "paddle"},
    ),
    # NVSHMEM transports
    (
        "/root/nvshmem_src/src/modules/transport/ibgda/ibgda.cpp:1345: non-zero status: 121 Error in "
        "mlx5dv_devx_obj_modify for INIT2RTR_QP with syndrome 29e0df",
        "RUN393",
        {"transport": "ibgda", "status": 121},
    ),
    (
        "/root/nvshmem_src/src/modules/transport/ibgda/ibgda.cpp:3005: non-zero status: 7 ibgda_rc_init2rtr "
        "failed on RC #0.",
        "RUN393",
        {"transport": "ibgda", "status": 7},
    ),
    (
        "/opt/nvshmem/src/modules/transport/ibrc/ibrc.cpp:1200: non-zero status: 7 ibv_modify_qp failed ",
        "RUN393",
        {"transport": "ibrc"},
    ),
    ("/src/host/init/init.cu:1111: non-zero status: 7 nvshmem transport init failed ", "RUN393", {}),
    (
        "/repo/nvshmem_src/src/host/transport/transport.cpp:nvshmemi_transport_init:275: init failed for "
        "transport: IBGDA",
        "RUN393",
        {"transport": "transport", "where": "transport.cpp:275"},
    ),
    ("/src/host/init/init.cu:1001: non-zero status: 7 nvshmem setup connections failed", "RUN393", {}),
    # aws-ofi-nccl
    ("[bug] NCCL WARN NET/OFI Only EFA provider is supported", "RUN294", {"reason": "provider_not_efa"}),
    (
        "ip-10-0-0-1:1234:1250 [0] NCCL WARN NET/OFI Unable to find a protocol that worked.  Failing "
        "initialization.",
        "RUN294",
        {"reason": "no_protocol"},
    ),
    (
        "ip-10-0-0-1:1234:1250 [0] NCCL WARN NET/OFI OFI fi_getinfo() call failed: No data available",
        "RUN294",
        {"reason": "no_libfabric_provider"},
    ),
    (
        "ip-10-0-0-1:1234:1250 [0] NCCL WARN NET/OFI Couldn't open a fabric provider. RC: -61, ERROR: "
        "No data "
        "available",
        "RUN294",
        {"reason": "no_libfabric_provider"},
    ),
    (
        "ip-10-0-0-1:1234:1250 [0] NCCL WARN NET/OFI EFA provider requires at least libfabric version "
        "1.22.0.",
        "RUN294",
        {"reason": "provider_not_efa"},
    ),
    (
        "10.3.35.83: WARN: Function: find_ofi_provider Line: 300: NET/OFI Could not find any optimal "
        "provider",
        "RUN294",
        {"reason": "no_libfabric_provider"},
    ),
    # TensorFlow collective health check
    (
        "WARNING:tensorflow:/job:worker/replica:0/task:7 seems down, retrying 1/3",
        "RUN394",
        {"peer_task": 7, "attempt": 1},
    ),
    (
        "ERROR:tensorflow:Cluster check alive failed, /job:worker/replica:0/task:1 is down, aborting "
        "collectives: failed to connect to all addresses",
        "RUN394",
        {"peer_task": 1, "status": "failed to connect to all addresses"},
    ),
    (
        "tensorflow.python.framework.errors_impl.UnavailableError: Collective ops is aborted by: cluster "
        "check "
        "alive failed, /job:worker/replica:0/task:2 is down",
        "RUN394",
        {"peer_task": 2},
    ),
    (
        "2021-08-04 12:09:48.895406: W tensorflow/core/common_runtime/base_collective_executor.cc:217] "
        "BaseCollectiveExecutor::StartAbort Unavailable: cluster check alive failed, /job:worker/replica:0/"
        "task:1 is down",
        "RUN394",
        {"peer_task": 1},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line,code,facts", CASES)
def test_accel_fabric_family(prefix: str, line: str, code: str, facts: dict[str, object]) -> None:
    _check(prefix + line + "\n", code, facts)


QUIET = [
    # pinned host memory through CANN (the container's memlock limit): not a device OOM
    "rtsMallocHost execution failed, reason=driver error:out of memory",
    # NVSHMEM's memory registration with the NIC is the RDMA stack's (RUN385's class), not the network
    "/opt/nvshmem/src/modules/transport/ibrc/ibrc.cpp:900: non-zero status: 7 mem registration failed ",
    # Paddle's "invalid argument" at a non-NCCL file is CUDA's cudaErrorInvalidValue text
    "EnforceNotMet: invalid argument at [/paddle/paddle/fluid/platform/gpu_info.cc:62]",
    # kmcuda and other programs that go on without P2P
    "warning: failed to enable p2p on gpu #0: peer access is not supported between these two devices",
    "warning: p2p 1 <-> 0 is impossible",
    "2024-01-01 12:00:00 WARNING: peer access is not supported between these two devices",
]


@pytest.mark.parametrize("line", QUIET)
def test_accel_fabric_quiet(line: str) -> None:
    assert _root(line + "\n") is None


def test_host_pinned_oom_block_is_not_a_device_oom() -> None:
    log = (
        "torch.OutOfMemoryError: allocate_host_memory_slowpath:../torch_npu/csrc/core/npu/"
        "CachingHostAllocator.cpp:252\n"
        "NPU function error: aclrtMallocHostWithCfg, error code is 207001\n"
        "[Error]: Failed to apply for memory.\n"
    )
    root = _root(log)
    assert root is None or root.facts.get("device") != "npu"


def test_cann_oom_block_of_an_npu_rank() -> None:
    log = (
        "[ERROR] 2024-08-28-16:15:00 (PID:15597, Device:2, RankID:2) ERR00100 PTA call acl api failed\n"
        "EL0004: 2024-08-28-16:15:00.358.141 Failed to allocate memory.\n"
        "        Possible Cause: Available memory is insufficient.\n"
        "        Solution: Close applications not in use.\n"
        "        TraceBack (most recent call last):\n"
        "        rtFftsPlusTaskLaunch execute failed, reason=[driver error:out of memory]"
        "[FUNC:FuncErrorReason]"
        "[FILE:error_message_manage.cc][LINE:53]\n"
    )
    _check(log, "RUN101", {"device": "npu"})


def test_nvshmem_status_with_its_message_on_the_next_line() -> None:
    log = "/root/nvshmem_src/src/host/transport/transport.cpp:400: non-zero status: 7\nconnect EPS failed\n"
    _check(log, "RUN393", {"transport": "transport", "status": 7})


def test_nvshmem_null_value_records_of_several_ranks() -> None:
    # ibgda.cpp's NVSHMEMI_NULL_ERROR_JMP ("<file>:<line>: NULL value <msg>") of four ranks at once: the
    # messages come after all the locations
    log = (
        "/sgl-workspace/nvshmem/src/modules/transport/ibgda/ibgda.cpp:1348: NULL value \n" * 4
        + "Unable to create ah.\n" * 4
        + "/sgl-workspace/nvshmem/src/modules/transport/ibgda/ibgda.cpp:3025: non-zero status: 7 \n" * 4
        + "ibgda_rc_init2rtr failed on RC #216.\n"
    )
    _check(log, "RUN393", {"transport": "ibgda"})


def test_deepep_init_assertion_alone_is_tier_one_nvshmem() -> None:
    log = (
        "RuntimeError: Failed: Assertion error /workspace/DeepEP/csrc/deep_ep.cpp:113 'nvshmem_rank == "
        "internode::init(root_unique_id, nvshmem_rank, num_nvshmem_ranks, low_latency_mode)'\n"
    )
    _check(log, "RUN393", {"framework": "deepep"})


NVLINK_STATUS = """nvidia-smi nvlink -s
GPU 2: Tesla V100-SXM2-32GB (UUID: GPU-2)
         Link 0: 25.781 GB/s
         Link 1: 25.781 GB/s
         Link 2: 25.781 GB/s
         Link 3: 25.781 GB/s
         Link 4: 25.781 GB/s
         Link 5: 25.781 GB/s
GPU 3: Tesla V100-SXM2-32GB (UUID: GPU-3)
         Link 0: 25.781 GB/s
         Link 1: 25.781 GB/s
         Link 2: 25.781 GB/s
         Link 3: <inactive>
         Link 4: 25.781 GB/s
         Link 5: <inactive>
"""


def test_nvidia_smi_nvlink_inactive_beside_active() -> None:
    _check(NVLINK_STATUS, "RUN346", {"gpu": 3, "links_inactive": [3, 5]})


def test_ofi_plugin_init_failed_after_the_provider_refusal() -> None:
    log = (
        "algo-1:249:249 [0] ofi_init:1288 NCCL WARN NET/OFI Only EFA provider is supported\n"
        "algo-1:249:249 [0] ofi_init:1339 NCCL WARN NET/OFI aws-ofi-nccl initialization failed\n"
    )
    _check(log, "RUN294", {"reason": "provider_not_efa"})


def test_dcgm_health_every_link_of_a_pcie_gpu_is_quiet() -> None:
    # DCGM_FR_NVLINK_DOWN for every link of a GPU without NVLink (NVIDIA/NVSentinel#1481, DCGM 3.3-4.4)
    log = (
        "|    -> NVLINK system       | Failure                                       |\n"
        "|                           | GPU 0's NvLink link 0 is currently down ...   |\n"
        "|                           | ... (all 12 links)                            |\n"
    )
    assert _root(log) is None
    _check("|  | GPU 1's NvLink link 3 is currently down |\n", "RUN346")


def test_nvidia_smi_nvlink_all_inactive_is_quiet() -> None:
    log = "GPU 0: Tesla V100-PCIE-32GB (UUID: GPU-0)\n\t Link 0: <inactive>\n\t Link 1: <inactive>\n"
    assert _root(log) is None


def test_kmcuda_p2p_warnings_are_quiet() -> None:
    log = (
        "warning: p2p 1 <-> 0 is impossible\n"
        "warning: p2p 2 <-> 0 is impossible\n"
        "warning: failed to enable p2p on gpu #0: peer access is not supported between these two devices\n"
        "warning: failed to enable p2p on gpu #1: peer access is not supported between these two devices\n"
    )
    assert _root(log) is None


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: CUDA error: peer access is not supported between these two devices",
        "error: peer access is not supported between these two device",
        "node1:12:34 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : 217 peer access is "
        "not "
        "supported between these two devices",
    ],
)
def test_peer_access_with_an_error_context_still_fires(line: str) -> None:
    _check(line + "\n", "RUN291")
