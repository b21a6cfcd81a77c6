"""accel_env families (rules/accel_env.py), read at their sources:

- Intel Gaudi SynapseAI 1.x (habana_frameworks.torch's device acquire; hccl_demo's initDevice): "synStatus=N
  [text] Device acquire failed.", SynapseAI <= 1.4 "RuntimeError: Device acquire failed.",
  "synDeviceAcquire(...) failed with synapse error: N": RUN333;
- libtpu through jax/_src/xla_bridge.py and torch_xla (PJRT, XRT): "The TPU is already in use by process
  with pid N", "TPU initialization failed: open(/dev/accelN): ...", "Couldn't open device: /dev/accelN":
  RUN333;
- CANN runtime / npu-smi: "rtGetDeviceCount execute failed, reason=[driver error:no valid device]", "dcmi
  model initialized failed, because the device is used. ret is -8020": RUN333;
- macOS dyld under dlopen (Horovod, torch extensions): "Symbol not found: _ncclX", 12.x+ "symbol not found
  in flat namespace '_x'", "Library not loaded: @rpath/libc10.dylib": RUN195 / RUN263;
- glibc's loader on libnccl's symbol versions ("version `NCCL_2.12' not found"): RUN195;
- jax/_src/lib/__init__.py check_jaxlib_version (0.2-0.4): RUN296;
- torch/cuda/__init__.py _check_capability's call line printed by the warnings module: RUN265.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = ["", "[rank3]: ", "node7: ", "(RayWorkerWrapper pid=1234) ", "[1,0]<stderr>:"]

CASES = [
    ("RuntimeError: synStatus=26 [Generic failure] Device acquire failed.", "RUN333", {"syn_status": 26}),
    (
        "RuntimeError: synStatus=20 [Device already acquired] Device acquire failed.",
        "RUN333",
        {"syn_status": 20},
    ),
    ("RuntimeError: synStatus=8 [Device not found] Device acquire failed.", "RUN333", {"syn_status": 8}),
    ("RuntimeError: Device acquire failed.", "RUN333", {"accelerator": "gaudi"}),
    (
        "HCCL demo error: In function initDevice(): synDeviceAcquire(&resources.deviceHandle, nullptr) "
        "failed with synapse error: 20",
        "RUN333",
        {"syn_status": 20},
    ),
    (
        "jaxlib.xla_extension.XlaRuntimeError: ABORTED: The TPU is already in use by process with pid 2771. "
        "Not attempting to load libtpu.so in this process.",
        "RUN333",
        {"holder_pid": 2771, "reason": "device_busy"},
    ),
    (
        "jaxlib._jax.XlaRuntimeError: UNKNOWN: TPU initialization failed: open(/dev/accel3): Operation not "
        "permitted: Operation not permitted; Couldn't open device: /dev/accel3; [/dev/accel3]",
        "RUN333",
        {"device": "/dev/accel3", "reason": "device_not_permitted"},
    ),
    (
        "RuntimeError: Bad StatusOr access: UNKNOWN: TPU initialization failed: open(/dev/vfio/0): Device or "
        "resource busy: Device or resource busy; Couldn't open iommu group /dev/vfio/0",
        "RUN333",
        {"device": "/dev/vfio/0", "reason": "device_busy"},
    ),
    (
        "E tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc:561] Invalid argument: Invalid fd: -1; "
        "Couldn't open device: /dev/accel0 (Operation not permitted); Unable to create Node",
        "RUN333",
        {"device": "/dev/accel0"},
    ),
    (
        "EE1001: The argument is invalid.Reason: rtGetDeviceCount execute failed, reason=[driver "
        "error:no valid device]",
        "RUN333",
        {"accelerator": "ascend", "reason": "no_valid_device"},
    ),
    (
        "dcmi model initialized failed, because the device is used. ret is -8020",
        "RUN333",
        {"dcmi_ret": -8020},
    ),
    (
        "tensorflow.python.framework.errors_impl.NotFoundError: dlopen(/usr/local/lib/python3.6/"
        "site-packages/horovod/tensorflow/mpi_lib.cpython-36m-darwin.so, 6): Symbol not found: "
        "_ncclAllReduce",
        "RUN195",
        {"symbol": "ncclAllReduce"},
    ),
    (
        "ImportError: dlopen(/Users/u/venv/lib/python3.9/site-packages/horovod/torch/mpi_lib_v2.cpython-39-"
        "darwin.so, 0x0002): symbol not found in flat namespace '_ncclCommInitRank'",
        "RUN195",
        {"symbol": "ncclCommInitRank"},
    ),
    (
        "ImportError: dlopen(/Users/u/venv/lib/python3.10/site-packages/torch/_C.cpython-310-darwin.so, 2): "
        "Library not loaded: @rpath/libc10.dylib",
        "RUN263",
        {"library": "libc10.dylib"},
    ),
    (
        "ImportError: /usr/lib/x86_64-linux-gnu/libnccl.so.2: version `NCCL_2.12' not found (required by "
        "/opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so)",
        "RUN195",
        {"symbol_version": "NCCL_2.12", "required_by": "libtorch_cuda.so"},
    ),
    (
        "RuntimeError: jaxlib version 0.4.20 is newer than and incompatible with jax version 0.4.13. Please "
        "update your jax and/or jaxlib packages.",
        "RUN296",
        {"jaxlib_version": "0.4.20", "jax_version": "0.4.13"},
    ),
    (
        "RuntimeError: jaxlib is version 0.1.69, but this version of jax requires version >= 0.1.74.",
        "RUN296",
        {"jaxlib_required": "0.1.74"},
    ),
    (
        '  warnings.warn(incompatible_device_warn.format(device_name, capability, " ".join(arch_list), '
        "device_name))",
        "RUN265",
        {"reason": "arch_not_in_build"},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line,code,facts", CASES)
def test_accel_env_family(prefix: str, line: str, code: str, facts: dict[str, object]) -> None:
    _check(prefix + line + "\n", code, facts)


QUIET = [
    # a Python environment's own library, not the training stack's
    "ImportError: dlopen(/Users/u/venv/lib/python3.9/site-packages/PIL/_imaging.cpython-39-darwin.so, 2): "
    "Symbol not found: _xcb_connect",
    "ImportError: dlopen(/Users/u/lib/python3.9/site-packages/lxml/etree.cpython-39-darwin.so, 2): "
    "Library not loaded: /usr/local/opt/libxml2/lib/libxml2.2.dylib",
    # older JAX's INFO record of a backend it skipped on a GPU machine
    "I0820 16:10:25.293788 140208504612672 xla_bridge.py:353] Unable to initialize backend 'tpu_driver': "
    "NOT_FOUND: Unable to find driver in registry given worker:",
]


@pytest.mark.parametrize("line", QUIET)
def test_accel_env_quiet(line: str) -> None:
    assert _root(line + "\n") is None


def test_tpu_info_line_below_a_named_failure() -> None:
    log = (
        "I0000 00:00:1700000000.000 1 xla_bridge.py:660] Unable to initialize backend 'tpu': UNKNOWN: TPU "
        "initialization failed: open(/dev/accel0): Device or resource busy\n"
        "RuntimeError: CUDA error: out of memory\n"
    )
    root = _root(log)
    assert root is not None and root.code != "RUN333"


# jaxlib/gpu's library loads; XLA's raised "No
# visible GPU devices"; MXNet's src/ndarray/ndarray.cc CPU build; the loader's filter now knowing the other
# stacks.
STACK_CASES = [
    ("jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: No visible GPU devices.", "RUN262", {}),
    (
        "jax.errors.JaxRuntimeError: INTERNAL: Unable to load cuSPARSE. Is it installed?",
        "RUN263",
        {"library": "cuSPARSE"},
    ),
    ("RuntimeError: Unable to load cuPTI. Is it installed?", "RUN263", {"library": "cuPTI"}),
    (
        "mxnet.base.MXNetError: [10:00:00] src/ndarray/ndarray.cc:1286: GPU is not enabled",
        "RUN262",
        {"reason": "cpu_build_of_mxnet"},
    ),
    (
        "ImportError: /lib64/libm.so.6: version `GLIBC_2.29' not found (required by "
        "/opt/conda/lib/python3.8/site-packages/jaxlib/xla_extension.so)",
        "RUN263",
        {"symbol_version": "GLIBC_2.29"},
    ),
    (
        "tensorflow.python.framework.errors_impl.NotFoundError: /usr/local/lib/python3.8/dist-packages/"
        "horovod/tensorflow/mpi_lib.cpython-38-x86_64-linux-gnu.so: undefined symbol: "
        "_ZN10tensorflow8OpKernel",
        "RUN263",
        {"reason": "undefined_symbol"},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line,code,facts", STACK_CASES)
def test_other_stack_env_family(prefix: str, line: str, code: str, facts: dict[str, object]) -> None:
    _check(prefix + line + "\n", code, facts)


# jax/_src/xla_bridge.py's warnings when it falls back to the CPU stay silent (test_driver_env_families3's
# DECOYS: a torch job that imports jax beside it prints them).
def test_jax_cuda_plugin_on_a_cpu_node_is_quiet() -> None:
    log = (
        "CUDA backend failed to initialize: jaxlib/cuda/versions_helpers.cc:98: operation cuInit(0) failed: "
        "CUDA_ERROR_NO_DEVICE (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n"
        "step 100 loss 0.31\n"
    )
    assert _root(log) is None


def test_jax_info_record_of_a_skipped_cuda_backend_is_quiet() -> None:
    log = (
        "I0305 14:57:34.730122 140585066018624 xla_bridge.py:353] Unable to initialize backend 'cuda': "
        "FAILED_PRECONDITION: No visible GPU devices.\n"
    )
    assert _root(log) is None


# torch_npu's Initialize (torch_npu/csrc/core/npu/sys_ctrl/npu_sys_ctrl.cpp) and the CANN runtime's plog;
# numbers from torch_npu/csrc/core/npu/NPUErrorCodes.h (507033 "Failed to start the device", 207004 "The
# device is unavailable", 107001 "Invalid device ID").
NPU_CASES = [
    (
        "RuntimeError: Initialize:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:217 NPU function error: "
        "aclrtSetDevice(device_id_), error code is 507033",
        "RUN333",
        {"npu_error": 507033, "reason": "device_start_failed"},
    ),
    (
        "RuntimeError: Initialize:torch_npu/csrc/core/npu/sys_ctrl/npu_sys_ctrl.cpp:182 NPU function error: "
        "c10_npu::SetDevice(device_id_), error code is 207004",
        "RUN333",
        {"npu_error": 207004},
    ),
    (
        "[ERROR] aclrtSetDevice(deviceId) failed: 507033 (/home/x/main.cpp:80)",
        "RUN333",
        {"npu_error": 507033},
    ),
    (
        "        open device 2 failed, runtime result = 507033.[FUNC:ReportCallError]"
        "[FILE:log_inner.cpp][LINE:14]",
        "RUN333",
        {"device": 2},
    ),
    (
        "RuntimeError: Initialize:torch_npu/csrc/core/npu/sys_ctrl/npu_sys_ctrl.cpp:182 NPU function error: "
        "c10_npu::SetDevice(device_id_), error code is 107001",
        "RUN264",
        {"reason": "invalid_device_id"},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line,code,facts", NPU_CASES)
def test_npu_set_device_family(prefix: str, line: str, code: str, facts: dict[str, object]) -> None:
    _check(prefix + line + "\n", code, facts)


def test_npu_start_failure_of_a_lost_device_is_not_this_row() -> None:
    log = (
        "[ERROR] RecentErrMsg: Inner_Error_Device_Status_Abnormal(E39009): Failed to connect the device.\n"
        "        Possible Cause: 1. Heartbeats are missing on the device. 2. The underlying channel is "
        "disconnected.\n"
        "        open device 2 failed, runtime result = 507033.[FUNC:ReportCallError][FILE:log_inner.cpp]\n"
    )
    root = _root(log)
    assert root is None or root.code != "RUN333"
