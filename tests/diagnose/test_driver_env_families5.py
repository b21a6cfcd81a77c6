"""Driver/environment and GPU-hardware families added in session part8 (drv), read at their sources:

- oneCCL's worker start (src/common/utils/... base_thread.cpp "error while creating %s thread #%d
  pthread_create returns %d", src/exec/exec.cpp start_workers' condition and "failed to start worker # N",
  2021.x-2021.14; torch-ccl raises the last as "RuntimeError: oneCCL: exec.cpp:134 ..."): RUN330;
- Omniverse Kit's GPU Foundation (gpu.foundation.plugin, Isaac Sim 2022.x-5.x): "Skipping NVIDIA GPU due
  CUDA being in bad state: <name>", "No device could be created. Some known system issues:", and
  omni.kit.renderer's "GPU Foundation is not initialized!": RUN262;
- TensorFlow's / XLA's stream_executor/cuda/cuda_diagnostics.cc (TF 1.x to local_xla): "kernel version X
  does not match DSO version Y -- cannot find working devices in this configuration": RUN261;
- HIP's enum names printed bare by hipGetErrorName ("hipErrorNoDevice", "hipErrorInsufficientDriver"):
  the same classes as cudart's;
- the kernel's fault record (arch/x86/mm/fault.c show_signal_msg, traps.c) of a process that crashed
  inside the NVIDIA user-space driver (libcuda.so.<version>, libcuda.so.1, libnvidia-*.so): RUN331;
- cudart's code-only faults (716 misaligned address, 715 illegal instruction, 714 hardware stack error,
  718 invalid program counter) raised by a distributed job's own call: RUN332 (process_crash), while 700
  and 719 and every watchdog report keep RUN244.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = ["", "[rank3]: ", "node7: ", "(RayWorkerWrapper pid=1234) "]
KERNEL_PREFIXES = ["", "[ 1843.439669] ", "Aug 29 16:58:38 gpu-node kernel: ", "[Fri Aug  9 13:32:56 2024] "]

ONECCL = [
    (
        "2023:11:28-16:35:45:(35980) |CCL_ERROR| base_thread.cpp:36 start: error while creating worker thread #0 pthread_create returns 22",
        {"pthread_errno": 22, "thread_index": 0},
    ),
    (
        "2024:08:21-10:41:21:( 8320) |CCL_ERROR| base_thread.cpp:40 start: error while creating worker thread #3 pthread_create returns 11",
        {"pthread_errno": 11, "thread_index": 3},
    ),
    (
        "RuntimeError: oneCCL: exec.cpp:134 start_workers: EXCEPTION: failed to start worker # 0",
        {"thread": "worker"},
    ),
    (
        "2023:11:28-16:35:45:(35980) |CCL_ERROR| exec.cpp:150 start_workers: EXCEPTION: failed to start listener # 0",
        {"thread": "listener"},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line,facts", ONECCL)
def test_oneccl_worker_start(prefix: str, line: str, facts: dict[str, object]) -> None:
    _check(prefix + line + "\n", "RUN330", facts)


OMNIVERSE = [
    (
        "2025-06-23 14:15:00 [13,736ms] [Warning] [gpu.foundation.plugin] Skipping NVIDIA GPU due CUDA being in bad state: NVIDIA H100 80GB HBM3",
        {"gpu": "NVIDIA H100 80GB HBM3"},
    ),
    (
        "2026-08-24T16:00:31Z [18,951ms] [Warning] [gpu.foundation.plugin] Skipping NVIDIA GPU due CUDA being in bad state: NVIDIA RTX Pro 6000 Blackwell DC-4-96Q",
        {"reason": "omniverse_cuda_bad_state"},
    ),
    (
        "2025-03-12 14:26:34 [423ms] [Error] [gpu.foundation.plugin] No device could be created. Some known system issues:",
        {"reason": "omniverse_cuda_bad_state"},
    ),
    (
        "2024-09-14 08:08:55 [3,619ms] [Error] [omni.kit.renderer.plugin] GPU Foundation is not initialized!",
        {"reason": "omniverse_cuda_bad_state"},
    ),
]


@pytest.mark.parametrize("line,facts", OMNIVERSE)
def test_omniverse_gpu_foundation(line: str, facts: dict[str, object]) -> None:
    _check(line + "\n", "RUN262", facts)


def test_omniverse_skipping_a_non_nvidia_gpu_is_silent() -> None:
    log = "2026-03-12T02:19:50Z [1,678ms] [Warning] [gpu.foundation.plugin] Skipping unsupported non-NVIDIA GPU: Intel(R) Arc(TM) 140T GPU (32GB)\n"
    assert _root(log) is None


DSO = [
    "2021-09-13 23:57:29.694695: E tensorflow/stream_executor/cuda/cuda_diagnostics.cc:306] kernel version 460.56.0 does not match DSO version 470.57.2 -- cannot find working devices in this configuration",
    "2023-11-14 22:30:50.201665: E tensorflow/compiler/xla/stream_executor/cuda/cuda_diagnostics.cc:312] kernel version 470.182.3 does not match DSO version 470.223.2 -- cannot find working devices in this configuration",
    "2025-01-27 13:52:31.859580: E external/local_xla/xla/stream_executor/cuda/cuda_diagnostics.cc:262] kernel version 550.120.0 does not match DSO version 560.35.5 -- cannot find working devices in this configuration",
]


@pytest.mark.parametrize("line", DSO)
def test_stream_executor_kernel_module_and_libcuda_differ(line: str) -> None:
    _check(line + "\n", "RUN261", {"reason": "driver_library_mismatch"})


def test_stream_executor_versions_that_match_are_silent() -> None:
    log = (
        "2021-09-13 23:57:29.694668: I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:192] libcuda reported version is: 470.57.2\n"
        "2021-09-13 23:57:29.694689: I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:196] kernel reported version is: 470.57.2\n"
    )
    assert _root(log) is None


HIP_NAMES = [
    ("hipErrorNoDevice: no ROCm-capable device is detected", "RUN262"),
    ('RuntimeError: HIP error: "hipErrorNoDevice"', "RUN262"),
    ("hipErrorInsufficientDriver", "RUN261"),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line,code", HIP_NAMES)
def test_hip_enum_names_bare(prefix: str, line: str, code: str) -> None:
    _check(prefix + line + "\n", code)


LIBCUDA_FAULTS = [
    (
        "python[3551]: segfault at 1378 ip 00007fff859dbeff sp 00007fff3b60ce60 error 4 in libcuda.so.418.67[7fff858c5000+dec000]",
        "libcuda.so.418.67",
    ),
    (
        "python3[20417]: segfault at 10 ip 00007f2b5c6e1a2b sp 00007ffd1e2c2f40 error 4 in libcuda.so.535.104.05[7f2b5c400000+1a2000]",
        "libcuda.so.535.104.05",
    ),
    (
        "traps: pt_main_thread[4711] general protection fault ip:7f0a12345678 sp:7ffc9abcdef0 error:0 in libcuda.so.1[7f0a12000000+2000000]",
        "libcuda.so.1",
    ),
    (
        "python[812]: segfault at 0 ip 00007f1c2d3e4f50 sp 00007ffe55aa1230 error 4 in libnvidia-ptxjitcompiler.so.550.54.15[7f1c2c000000+1e00000]",
        "libnvidia-ptxjitcompiler.so.550.54.15",
    ),
]


@pytest.mark.parametrize("prefix", KERNEL_PREFIXES)
@pytest.mark.parametrize("line,lib", LIBCUDA_FAULTS)
def test_a_crash_inside_the_user_space_driver(prefix: str, line: str, lib: str) -> None:
    _check(prefix + line + "\n", "RUN331", {"library": lib})


def test_a_segfault_in_another_library_stays_a_crash() -> None:
    root = _root(
        "python[3551]: segfault at 0 ip 00007f3a1c2d4eff sp 00007ffd3b60ce60 error 4 in libtorch_cpu.so[7f3a1c200000+dec000]\n"
    )
    assert root is not None and root.code == "RUN131", root


CODE_ONLY = [
    "RuntimeError: CUDA error: misaligned address",
    "RuntimeError: CUDA error: an illegal instruction was encountered",
    "RuntimeError: CUDA error: hardware stack error",
    "RuntimeError: CUDA error: invalid program counter",
    "RuntimeError: CUDA driver error: CUDA_ERROR_MISALIGNED_ADDRESS",
]
_JOB = "Initializing distributed: GLOBAL_RANK: 3, MEMBER: 4/8\n"


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line", CODE_ONLY)
def test_a_code_only_fault_raised_by_the_program(prefix: str, line: str) -> None:
    _check(_JOB + prefix + line + "\n", "RUN332", {"reason": "kernel_code_fault"})


@pytest.mark.parametrize(
    "log",
    [
        "[rank1]:[E ProcessGroupNCCL.cpp:1414] [PG 2 Rank 1] Process group watchdog thread terminated with exception: CUDA error: misaligned address\n",
        _JOB + "RuntimeError: CUDA error: an illegal memory access was encountered\n",
        _JOB + "RuntimeError: CUDA error: unspecified launch failure\n",
    ],
)
def test_watchdog_reports_and_illegal_address_keep_the_gpu_class(log: str) -> None:
    _check(log, "RUN244")


# MXNet built without CUDA (src/storage/storage.cc, src/engine: LOG(FATAL) << "Compile with USE_CUDA=1 to
# enable GPU usage"), raised as MXNetError or printed by std::terminate's what().
MXNET_CPU = [
    "mxnet.base.MXNetError: [12:00:00] src/storage/storage.cc:78: Compile with USE_CUDA=1 to enable GPU usage",
    "     what():  [22:03:01] src/storage/storage.cc:119: Compile with USE_CUDA=1 to enable GPU usage",
]


@pytest.mark.parametrize("line", MXNET_CPU)
def test_mxnet_cpu_build_asked_for_a_gpu(line: str) -> None:
    _check(line + "\n", "RUN262", {"reason": "cpu_build_of_mxnet"})


NVML_LONG = [
    ("The GPU requires a reset before it can be used again", "RUN293"),
    ("nvml: the GPU requires a reset before it can be used again", "RUN293"),
    ("The GPU has fallen off the bus or has otherwise become inaccessible", "RUN243"),
    ("nvml: the GPU has fallen off the bus or has otherwise become inaccessible", "RUN243"),
    ("hipErrorECCNotCorrectable", "RUN242"),
]


@pytest.mark.parametrize("line,code", NVML_LONG)
def test_nvml_long_texts_and_hip_ecc(line: str, code: str) -> None:
    _check(line + "\n", code)


# gdb's stop record with the faulting frame in the driver's library without symbols (gdb 8-14: "0x.. in ?? ()
# from /lib64/libcuda.so").
GDB_IN_DRIVER = [
    "Program received signal SIGSEGV, Segmentation fault.\n0x00007fffdba8de67 in ?? () from /lib64/libcuda.so\n",
    'Thread 74 "pt_main_thread" received signal SIGSEGV, Segmentation fault.\n[Switching to Thread 0x7ffef1800640 (LWP 323521)]\n0x00007fff4402c640 in ?? () from /lib/x86_64-linux-gnu/libcuda.so.1\n',
]


@pytest.mark.parametrize("log", GDB_IN_DRIVER)
def test_gdb_stop_inside_the_driver(log: str) -> None:
    _check(log, "RUN331", {"reporter": "gdb"})


def test_gdb_stop_in_another_library_stays_a_crash() -> None:
    root = _root(
        "Program received signal SIGSEGV, Segmentation fault.\n0x00007fffdba8de67 in ?? () from /usr/lib/libfoo.so\n"
    )
    assert root is not None and root.code == "RUN131", root


# MXNet's engine asked for a GPU index beyond the visible ones (src/engine/threaded_engine.cc, 1.x).
MXNET_ORDINAL = [
    "mxnet.base.MXNetError: [06:53:40] src/engine/threaded_engine.cc:328: Check failed: exec_ctx.dev_id < device_count_ (1 vs. 1) : Invalid GPU Id: 1, Valid device id should be less than device_count: 1",
    "  what():  [06:53:40] src/engine/threaded_engine.cc:331: Check failed: exec_ctx.dev_id < device_count_ (4 vs. 4) : Invalid GPU Id: 4, Valid device id should be less than device_count: 4",
]


@pytest.mark.parametrize("line", MXNET_ORDINAL)
def test_mxnet_gpu_id_beyond_the_visible(line: str) -> None:
    _check(line + "\n", "RUN264")


# TensorFlow's / XLA's stream executor probing the driver (stream_executor/cuda/cuda_driver.cc "failed call to
# cuInit: <CUresult name>: <cuGetErrorString>"; jaxlib's versions_helpers.cc "operation cuInit(0) failed:").
# CUDA_ERROR_NO_DEVICE is a CPU run's probe (silent: test_driver_env_families3's decoys); any other answer
# says a GPU is there and the driver refused it (tier 1: below an error the framework raises itself).
CUINIT_REFUSED = [
    (
        "E0101 12:00:00.000000 1 cuda_driver.cc:152] failed call to cuInit: CUDA_ERROR_SYSTEM_NOT_READY: system not yet initialized",
        "RUN262",
    ),
    (
        "2024-01-01 12:00:00.000000: E external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:282] failed call to cuInit: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: forward compatibility was attempted on non supported HW",
        "RUN261",
    ),
    (
        "2021-01-01 12:00:00.000000: E tensorflow/stream_executor/cuda/cuda_driver.cc:271] failed call to cuInit: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: system has unsupported display driver / cuda driver combination",
        "RUN261",
    ),
    (
        "2021-01-01 12:00:00.000000: E tensorflow/stream_executor/cuda/cuda_driver.cc:271] failed call to cuInit: CUDA_ERROR_INSUFFICIENT_DRIVER: CUDA driver version is insufficient for CUDA runtime version",
        "RUN261",
    ),
    (
        "RuntimeError: jaxlib/cuda/versions_helpers.cc:98: operation cuInit(0) failed: CUDA_ERROR_SYSTEM_NOT_READY",
        "RUN262",
    ),
]


@pytest.mark.parametrize("line,code", CUINIT_REFUSED)
def test_cuinit_refused_on_a_gpu_machine(line: str, code: str) -> None:
    root = _root(line + "\n")
    assert root is not None and root.code == code, root


# Paddle's enforce of cudaErrorUnknown (paddle/phi/backends/gpu/cuda/cuda_info.cc: device queries; a kernel's
# file otherwise); HIP's enum names for the sticky faults (ROCm < 5 printed the name for the message).
PADDLE_AND_HIP = [
    (
        "ExternalError: CUDA error(999), unknown error. \n  [Hint: 'cudaErrorUnknown'. This indicates that an unknown internal error has occurred. ] (at /paddle/paddle/phi/backends/gpu/cuda/cuda_info.cc:66)",
        "RUN262",
    ),
    (
        "OSError: (External) CUDA error(999), unknown error. \n  [Hint: 'cudaErrorUnknown'. This indicates that an unknown internal error has occurred. ] (at /paddle/paddle/phi/kernels/gpu/foo_kernel.cu:66)",
        "RUN323",
    ),
    ("[rank2]: RuntimeError: HIP error: hipErrorIllegalAddress", "RUN244"),
    ("[rank2]: RuntimeError: HIP error: hipErrorLaunchFailure", "RUN244"),
]


@pytest.mark.parametrize("log,code", PADDLE_AND_HIP)
def test_paddle_unknown_error_and_hip_fault_names(log: str, code: str) -> None:
    _check(log + "\n", code)
