"""env_families (rules/env_families.py): installs, builds and platform set-ups, read at their sources:

- Paddle python/paddle/distributed/collective.py _new_process_group_impl (2.4-2.6: core.ProcessGroupGloo /
  ProcessGroupNCCL / ProcessGroupBKCL / ProcessGroupCustom; <= 2.3 core_avx; dygraph NCCLParallelContext),
  torch._C._distributed_c10d without a backend: RUN334;
- clr hipamd/src/hip_platform.cpp __hipRegisterFunction (ROCm 5.x-7.x "Cannot retrieve Static function,
  error: %d", <= 5.2 "Cannot Retrieve Static function", "Cannot register Static function, error: %d"):
  RUN265;
- opa-psm2 opa/opa_service.c hfi_wait_for_device, infinipath-psm ipath_wait_for_device: RUN350;
- intel/llvm sycl plugin.hpp checkPiResult / Unified Runtime: "Native API failed. Native API returns: N
  (NAME)": RUN351, INVALID_BINARY RUN265, the OOM codes not here;
- oneCCL src/common/global/global.cpp getenv_local_coord (CCL_ERROR record, torch-ccl's EXCEPTION): RUN352;
- CANN ge tbe_op_store_adapter.cc EC0010 / InitTbeFunc: RUN353;
- RCCL src/init.cc /proc/cmdline check ("Missing \"iommu=pt\""): RUN354 when no communicator came up;
- aws-ofi-nccl register_mr_buffers / register_rail_mr_buffer (type = 2 GPU memory, RC -22): RUN292.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = ["", "[rank3]: ", "node7: ", "[1,0]<stderr>:"]

CASES = [
    (
        "AttributeError: module 'paddle.fluid.libpaddle' has no attribute 'ProcessGroupGloo'",
        "RUN334",
        {"framework": "paddle", "backend": "Gloo"},
    ),
    (
        "AttributeError: module 'paddle.base.libpaddle' has no attribute 'ProcessGroupNCCL'",
        "RUN334",
        {"framework": "paddle", "backend": "NCCL"},
    ),
    (
        "AttributeError: module 'paddle.fluid.core_avx' has no attribute 'NCCLParallelContext'",
        "RUN334",
        {"framework": "paddle", "backend": "NCCL"},
    ),
    (
        "AttributeError: module 'torch._C._distributed_c10d' has no attribute 'ProcessGroupNCCL'",
        "RUN334",
        {"framework": "pytorch", "backend": "NCCL"},
    ),
    (
        "ImportError: cannot import name 'ProcessGroupGloo' from 'torch._C._distributed_c10d' "
        "(unknown location)",
        "RUN334",
        {"framework": "pytorch", "backend": "Gloo"},
    ),
    ("Cannot retrieve Static function, error: 218", "RUN265", {"hip_error": 218, "reason": "no_code_object"}),
    ("Cannot retrieve Static function, error: 209", "RUN265", {"hip_error_name": "hipErrorNoBinaryForGpu"}),
    ("Cannot Retrieve Static function", "RUN265", {"runtime": "rocm"}),
    ("Cannot register Static function, error: 1", "RUN265", {"hip_error": 1}),
    (
        "20039hfi_wait_for_device: The /dev/hfi1_0 device failed to appear after 15.0 seconds: Connection "
        "timed out",
        "RUN350",
        {"device": "/dev/hfi1_0", "fabric": "omni-path", "waited_s": 15.0},
    ),
    (
        "nyx0818.engin.umich.edu.28120ipath_wait_for_device: The /dev/ipath device failed to appear after "
        "30.0 seconds: Connection timed out",
        "RUN350",
        {"device": "/dev/ipath", "fabric": "infinipath"},
    ),
    (
        "nyx0818.28120PSM Could not find an InfiniPath Unit on device /dev/ipath (30s elapsed) (err=21)",
        "RUN350",
        {"device": "/dev/ipath"},
    ),
    (
        "  what():  Native API failed. Native API returns: -999 (Unknown PI error) -999 (Unknown PI error)",
        "RUN351",
        {"native_error": -999},
    ),
    (
        "RuntimeError: Native API failed. Native API returns: -997 (Command failed to enqueue/execute) -997 "
        "(Command failed to enqueue/execute)",
        "RUN351",
        {"native_error": -997},
    ),
    (
        "  what():  Native API failed. Native API returns: -1 (PI_ERROR_DEVICE_NOT_FOUND) -1 "
        "(PI_ERROR_DEVICE_NOT_FOUND)",
        "RUN351",
        {"native_error_name": "PI_ERROR_DEVICE_NOT_FOUND"},
    ),
    (
        "  what():  Native API failed. Native API returns: -42 (PI_ERROR_INVALID_BINARY) -42 "
        "(PI_ERROR_INVALID_BINARY)",
        "RUN265",
        {"reason": "no_code_for_device"},
    ),
    (
        "2024:01:15-03:36:29:(1980058) |CCL_ERROR| global.cpp:150 getenv_local_coord: condition "
        "global_data::env().ze_ipc_exchange == ccl::ze::ipc_exchange_mode::sockets failed",
        "RUN352",
        {"library": "oneCCL"},
    ),
    (
        "RuntimeError: oneCCL: global.cpp:150 getenv_local_coord: EXCEPTION: to get local_idx/count from "
        "ATL, set CCL_ZE_IPC_EXCHANGE=sockets explicitly",
        "RUN352",
        {"reason": "local_coord_unknown"},
    ),
    (
        "EC0010: Failed to import Python module [ModuleNotFoundError: No module named "
        "'tbe.common.repository_manager.utils.repository_manager_log'.].",
        "RUN353",
        {
            "exception": "ModuleNotFoundError",
            "module": "tbe.common.repository_manager.utils.repository_manager_log",
        },
    ),
    (
        "EC0010: Failed to import Python module [AttributeError: `np.float_` was removed in the NumPy 2.0 "
        "release. Use `np.float64` instead.].",
        "RUN353",
        {"exception": "AttributeError"},
    ),
    (
        "        [GraphOpt][InitializeInner][InitTbeFunc] Failed to init tbe.[FUNC:InitializeInner]"
        "[FILE:tbe_op_store_adapter.cc][LINE:1623]",
        "RUN353",
        {"accelerator": "ascend"},
    ),
    (
        'supllm:402:402 [0] /src/rccl/hipify/src/init.cc:179 NCCL WARN Missing "iommu=pt" from kernel '
        "command line which can lead to system instablity or hang!\n"
        "supllm:402:402 [0] NCCL INFO RCCL version : 2.22.3-HEAD:271856d",
        "RUN354",
        {"kernel_option": "iommu=pt"},
    ),
    (
        "box:204802:204802 [0] /home/e/rccl/build/release/hipify/src/init.cc:125 NCCL WARN Missing "
        '"amd_iommu=on" from kernel command line which can lead to system instablity or hang!\n'
        "box:204802:204802 [0] NCCL INFO Bootstrap : Using enp203s0:192.168.100.86<0>",
        "RUN354",
        {"kernel_option": "amd_iommu=on"},
    ),
    (
        "register_mr_buffers:544 NCCL WARN NET/OFI Unable to register memory (type = 2) for device 0. "
        "RC: -22, Error: Invalid argument",
        "RUN292",
        {"memory_type": 2, "rc": -22},
    ),
    (
        "ip-10-0-1-2:149:298 [4] register_rail_mr_buffer:617 NCCL WARN NET/OFI Unable to register memory "
        "(type = 2) for device 4. RC: -22, Error: Invalid argument",
        "RUN292",
        {"device": 4},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(("line", "code", "facts"), CASES)
def test_env_family(prefix: str, line: str, code: str, facts: dict[str, object]) -> None:
    _check(prefix + line + "\n", code, facts)


@pytest.mark.parametrize(
    "line",
    [
        # oneCCL's notes healthy runs print
        "2024:01:15-03:36:29:(1980058) |CCL_WARN| could not get local_idx/count from environment variables, "
        "trying to get them from ATL",
        # SYCL's OOM is the memory rows', never this one's
        "  what():  Native API failed. Native API returns: -5 (PI_ERROR_OUT_OF_RESOURCES) -5 "
        "(PI_ERROR_OUT_OF_RESOURCES)",
        # a module attribute that is no process group
        "AttributeError: module 'paddle.fluid.libpaddle' has no attribute 'eager'",
    ],
)
def test_env_family_quiet_or_elsewhere(line: str) -> None:
    root = _root(line + "\n")
    assert root is None or root.code not in ("RUN351", "RUN352", "RUN334"), root


def test_iommu_warning_of_a_communicator_that_came_up_is_quiet() -> None:
    log = (
        'n1:402:402 [0] /src/rccl/hipify/src/init.cc:179 NCCL WARN Missing "iommu=pt" from kernel '
        "command line which can lead to system instablity or hang!\n"
        "n1:402:402 [0] NCCL INFO RCCL version : 2.22.3-HEAD:271856d\n"
        "n1:402:420 [0] NCCL INFO comm 0x5581 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n"
        "epoch 1 step 100 loss 2.31\n"
    )
    assert _root(log) is None


def test_iommu_warning_yields_to_a_failure() -> None:
    log = (
        'n1:402:402 [0] /src/rccl/hipify/src/init.cc:179 NCCL WARN Missing "iommu=pt" from kernel '
        "command line which can lead to system instablity or hang!\n"
        "RuntimeError: HIP out of memory. Tried to allocate 2.00 GiB (GPU 0; 63.98 GiB total capacity)\n"
    )
    root = _root(log)
    assert root is not None and root.code != "RUN354", root


def test_ofi_host_memory_registration_is_not_this_row() -> None:
    root = _root(
        "ip-10-0-87-143:149:298 [5] register_mr_buffers:465 NCCL WARN NET/OFI Unable to register memory "
        "(type = 1) for device 0. RC: 12, Error: Cannot allocate memory\n"
    )
    assert root is None or root.code != "RUN292", root


def test_acl_init_env_failed_is_the_cann_environment() -> None:
    # Ascend/pytorch issue 7 (CANN 7.0.RC1, torch_npu 2.1): fixed by installing TBE's Python dependencies.
    log = (
        ">>> print(x)\nEH9999: Inner Error!\n"
        "EH9999  [Init][Env]init env failed![FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]\n"
        "        TraceBack (most recent call last):\n"
        "        build op model failed, result = 500001[FUNC:ReportInnerError][FILE:log_inner.cpp]"
        "[LINE:145]\n"
        "\nAborted (core dumped)\n"
    )
    _check(log, "RUN353", {"reason": "cann_op_compile_env_init_failed"})


def test_acl_init_env_failed_in_a_daemonic_process_is_not_the_install() -> None:
    log = (
        "    assert not _current_process._config.get('daemon'), \\\n"
        "AssertionError: daemonic processes are not allowed to have children\n"
        "EH9999: Inner Error!\n"
        "EH9999  [Init][Env]init env failed![FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]\n"
    )
    root = _root(log)
    assert root is None or root.code != "RUN353", root


@pytest.mark.parametrize(
    ("line", "code", "err"),
    [
        # NVCaffe 0.16 NCCL_CHECK as a reporter typed it (markdown underscores kept): NVIDIA/caffe issue 492
        (
            "_Check_ failed: result == ncclSuccess (1 vs. 0)  unhandled cuda _error_",
            "RUN194",
            "unhandled cuda error",
        ),
        (
            "F0312 10:01:02.123456  4242 parallel.cpp:98] Check failed: result == ncclSuccess (2 vs. 0)  "
            "unhandled system error",
            "RUN171",
            "unhandled system error",
        ),
        ("Check failed: result == ncclSuccess (5 vs. 0) ncclCommInitRank failed!", "RUN191", "invalid usage"),
        ("Check failed: result == ncclSuccess (3 vs. 0) internal error", "RUN192", "internal error"),
    ],
)
def test_glog_check_of_an_nccl_result(line: str, code: str, err: str) -> None:
    _check(line + "\n", code, {"nccl_error": err})


def test_iommu_warning_far_above_a_communicator_that_came_up_is_quiet() -> None:
    head = (
        'n1:402:402 [0] /src/rccl/hipify/src/init.cc:179 NCCL WARN Missing "iommu=pt" from kernel '
        "command line which can lead to system instablity or hang!\n"
    )
    channels = "".join(f"n1:402:420 [0] NCCL INFO Channel {i:02d}/32 :    0   1\n" for i in range(120))
    log = head + channels + "n1:402:420 [0] NCCL INFO comm 0x5581 rank 0 nranks 2 cudaDev 0 - Init COMPLETE\n"
    assert _root(log) is None


def test_iommu_warning_alone_is_quiet() -> None:
    # every init on a host without iommu=pt prints it, healthy ones too
    assert (
        _root(
            'n1:402:402 [0] /src/rccl/hipify/src/init.cc:179 NCCL WARN Missing "iommu=pt" from kernel '
            "command line which can lead to system instablity or hang!\n"
        )
        is None
    )
