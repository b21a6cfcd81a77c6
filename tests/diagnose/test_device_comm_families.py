"""device_comm_faults families (rules/device_comm_faults.py), read at their sources:

- TPU runtime records (libtpu synchronous_driver / fake_program_continuator, tpunetd, TF TPUEstimator
  infeed/outfeed, XRT, torch_xla xla_dist.py): RUN337;
- NVIDIA open-gpu-kernel-modules src/nvidia/src/kernel/gpu/gsp/kernel_gsp.c (r515-r595) GSP timeouts:
  RUN241 (Xid 119 text);
- amdgpu 4.18 amdgpu_device_gpu_recover "*ERROR* VRAM is lost!" (rules/gpu_hardware.py): RUN295 family;
- HCCL hccl_types.h HcclResult at communicator start-up (torch_npu raise, glog CHECK): RUN191 / RUN313;
- NCCL src/graph/xml.h "too many XML nodes (max %d)": RUN192;
- AWS Neuron runtime ENC enc_init_comm: RUN191;
- Intel Gaudi process_group_hccl_base.cpp "Collective call returned error": RUN192;
- XGBoost src/common/device_helpers.cu "Multiple processes within communication group running on same CUDA
  device is not supported": RUN193;
- PaddlePaddle fluid/install_check.py (1.x) and paddle/utils/install_check.py (2.x): RUN313.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, prefixed
from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

CASES = [
    (
        "I0629 20:17:54.098071 140019624834816 error_handling.py:70] Error recorded from outfeed: Bad "
        "hardware "
        "status: 0x1",
        "RUN337",
        {"hardware_status": "0x1"},
    ),
    (
        "INFO:tensorflow:Error recorded from infeed: Bad hardware status: 0x1",
        "RUN337",
        {"reason": "bad_hardware_status"},
    ),
    (
        "E0827 23:43:41.200122   39475 synchronous_driver.cc:820] [/dev/accel0 tpu1013:pe1:0] !!!! FATAL "
        "ERROR "
        "!!!! for [/dev/accel0 tpu1013:pe1:0] , fatal_error: true, running_timer: 0xeacdbdd045e77",
        "RUN337",
        {"device": "/dev/accel0", "reason": "driver_fatal_error"},
    ),
    (
        "E0827 23:43:41.200512   39676 fake_program_continuator.cc:556] 1x0x2_BC1: *** [Physical location: "
        "tpu1013:pe1:3] A Unknown error has occurred, all pending programs will fail, and results may be "
        "corrupted. An unknown error has occurred, contact your next level of support.",
        "RUN337",
        {"chip_location": "tpu1013:pe1:3"},
    ),
    (
        "E0511 18:18:50.796852     915 tpunetd_client.cc:311] Detected failure "
        "SLICE_FAILURE_CHIP_DRIVER_ERROR "
        "in session e6c885828b538167; Start failure handling",
        "RUN337",
        {"slice_failure": "SLICE_FAILURE_CHIP_DRIVER_ERROR"},
    ),
    (
        "Exception in device=TPU:6: Failed precondition: From /job:tpu_worker/replica:0/task:0:\n"
        "  (0) Failed precondition: Driver must be Open to DMA map.",
        "RUN337",
        {"reason": "driver_not_open"},
    ),
    (
        "RuntimeError: TPU node-v3-32 is not HEALTHY yet. Re-run when all TPUs are HEALTHY",
        "RUN337",
        {"tpu_node": "node-v3-32"},
    ),
    (
        "[   84.300488] NVRM: GPU6 _kgspLogRpcTimeout: ********************************* GSP Timeout "
        "**********************************",
        "RUN241",
        {"gpu": 6, "reason": "gsp_rpc_timeout"},
    ),
    (
        "[   24.302465] NVRM: GPU6 _kgspIsHeartbeatTimedOut: Heartbeat timed out, currentTimeMs 812751949 "
        "heartbeat 1899482 heartbeatWithOffsetMs 812745879 diff 6070 timeout 5200",
        "RUN241",
        {"gpu": 6, "reason": "gsp_heartbeat_timeout"},
    ),
    (
        "[ 2119.412345] NVRM: Timeout after 6s of waiting for RPC response from GPU1 GSP! Expected "
        "function 76 "
        "(GSP_RM_CONTROL) (0x20800a4c 0x4).",
        "RUN241",
        {"xid": 119},
    ),
    (
        "[   84.300480] NVRM: GPU6 kgmmuCheckMemSubsysError_IMPL: Memory Subsystem Error detected. "
        "kbusSendSysmembarSingle failed.",
        "RUN241",
        {"reason": "memory_subsystem_error"},
    ),
    (
        "[Wed Sep 26 00:34:04 2018] [drm:amdgpu_device_gpu_recover [amdgpu]] *ERROR* VRAM is lost!",
        None,
        {"reason": "vram_lost_in_reset"},
    ),
    (
        "RuntimeError: create_config:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:148 HCCL function "
        "error: "
        "hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, &(comm->hcclComm_)), error code is 1",
        "RUN191",
        {"hccl_error": 1, "hccl_result": "HCCL_E_PARA"},
    ),
    (
        "RuntimeError: HCCL function error: HcclGetRootInfo(&hcclID), error code is 5",
        "RUN191",
        {"hccl_result": "HCCL_E_NOT_SUPPORT"},
    ),
    (
        "RuntimeError: create_config:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:102 HCCL function "
        "error: "
        "hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, &(comm->hcclComm_)), error code is 15",
        "RUN313",
        {"hccl_result": "HCCL_E_RUNTIME"},
    ),
    (
        "F20251111 12:28:58.504206 214989 collective_service.cpp:37] Check failed: status == HCCL_SUCCESS "
        "(1 vs. "
        "0) HCCL get root info failed.",
        "RUN191",
        {"hccl_error": 1},
    ),
    ("NCCL WARN Error : too many XML nodes (max 256)", "RUN192", {"max_nodes": 256}),
    (
        "node1:123:456 [0] graph/xml.h:88 NCCL WARN Error : too many XML nodes (max 256)",
        "RUN192",
        {"problem": "topo_xml_max_nodes"},
    ),
    ("NCCL WARN Error : too many XML subnodes (max 128)", "RUN192", {"max_subnodes": 128}),
    ("NCCL WARN Error : too many XML attributes (max 16)", "RUN192", {"problem": "topo_xml_max_attributes"}),
    (
        "2025-Jan-16 00:39:18.628881 31598:33752 ERROR   ENC:enc_init_comm                           "
        "global comm "
        "(2) has less channels than this replica group (4) :likely not enough EFA devices found if running "
        "on "
        "multiple nodes or CC not permitted on this group [1 3 5 7 9 11 13 15 ]",
        "RUN191",
        {"global_channels": 2, "group_channels": 4},
    ),
    (
        "logging.cc:97: Unhandled exception: N3c105ErrorE. what(): Collective call returned error\n"
        "Exception raised from operator() at "
        "/npu-stack/pytorch-integration/python_packages/habana_frameworks/"
        "torch/distributed/hccl/process_group_hccl_base.cpp:286 (most recent call first):",
        "RUN192",
        {"accelerator": "gaudi"},
    ),
    (
        "ml.dmlc.xgboost4j.java.XGBoostError: [17:58:48] /workspace/src/common/device_helpers.cu:64: Check "
        "failed: n_uniques == world (1 vs. 2) : Multiple processes within communication group running on "
        "same "
        "CUDA device is not supported",
        "RUN193",
        {"distinct_gpus": 1, "world_size": 2},
    ),
    (
        "(VllmWorkerProcess pid=1775) ERROR 09-23 10:49:22 multiproc_worker_utils.py:226] Exception in "
        "worker "
        "VllmWorkerProcess while processing method init_device: NCCL error: internal error - please report "
        "this issue to the NCCL developers, Traceback (most recent call last):",
        "RUN192",
        {"method": "init_device"},
    ),
    (
        "Exception in worker VllmWorkerProcess while processing method init_device: NCCL error: unhandled "
        "cuda "
        "error (run with NCCL_DEBUG=INFO for details), Traceback (most recent call last):",
        "RUN194",
        {"nccl_error": "unhandled cuda error"},
    ),
    (
        "Exception in worker VllmWorkerProcess while processing method init_device: NCCL error: invalid "
        "usage "
        "(run with NCCL_DEBUG=WARN for details), Traceback (most recent call last):",
        "RUN191",
        {"framework": "vllm"},
    ),
    (
        "2020-09-17 15:38:44,634-WARNING: Your Paddle has some problem with multiple GPU. This may be "
        "caused by:",
        "RUN313",
        {"framework": "paddle"},
    ),
    (
        "PaddlePaddle meets some problem with 2 GPUs. This may be caused by:",
        "RUN313",
        {"world_size": 2},
    ),
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize("log,code,facts", CASES)
def test_family(prefix: str, log: str, code: str | None, facts: dict) -> None:
    root = _root(prefixed(prefix, log))
    assert root is not None, log
    if code is None:
        assert root.category == "gpu_hardware" or str(root.category) == "gpu_hardware", root
        for k, v in facts.items():
            assert root.facts.get(k) == v, (k, root.facts)
        return
    _check(prefixed(prefix, log), code, facts)


SILENT = [
    # the queue closed after another failure (a TPU OOM, T5 issue 767): not the hardware
    "Bad hardware status: Queue is closed.",
    # a program's own core halt
    "E0511 18:18:50.796852 915 tpunetd_client.cc:311] Detected failure SLICE_FAILURE_SW_INJECT_ERROR in "
    "session "
    "e6c8",
    "amdgpu 0000:03:00.0: GPU reset succeeded, trying to resume",
    "RuntimeError: HCCL function error: hcclCommInitRootInfoConfig(...), error code is 6",
    "Check failed: status == HCCL_SUCCESS (1 vs. 0) HCCL allreduce failed.",
    "Collective call returned error",
    # the same words in other programs' own XML parsers (not NCCL's "Error : too many XML nodes")
    "ValueError: Too many XML nodes (max 100000)",
]


@pytest.mark.parametrize("log", SILENT)
def test_silent(log: str) -> None:
    assert _root(log) is None, (log, _root(log))
