"""Driver/environment and GPU families read at their sources (fourth set), every variant under the prefixes
real logs add. Each group names the source that prints its lines:

- c10/cuda/CUDAFunctions.cpp's device_count_impl: "Unexpected error from cudaGetDeviceCount(). Did you run
  some cuda functions before calling NumCudaDevices() that might have already set an error? Error 999:
  unknown error", raised by torch.cuda._lazy_init, wrapped by DeferredCudaCallError, warned by
  is_available(): no context could be made (driver_env), unlike a 999 after kernels ran (gpu_hardware);
- cudart's string table for 218 (cudaErrorInvalidPtx, "a PTX JIT compilation failed": PTX newer than the
  driver's JIT) and 223 (cudaErrorJitCompilationDisabled), by message, runtime and driver enum name;
- HIP's enum names, which ROCm before 5 printed for the message ("HIP error: hipErrorNoBinaryForGpu"), and
  the 101 names (cudaErrorInvalidDevice, CUDA_ERROR_INVALID_DEVICE, hipErrorInvalidDevice);
- nccl-tests' CUDACHECK ("%s: Test CUDA failure %s:%d '%s'", 1.x "Cuda failure %s:%d '%s'") with 'unknown
  error': in the test's set-up (no results row yet) the environment's, after rows the device's;
- vLLM 0.4's pynccl: "NameError: name 'ncclGetVersion' is not defined" when ctypes could not load libnccl,
  and its "Failed to load NCCL library" record, which is no failure when the engine went on;
- ROCm's rocm-smi without the amdgpu module and rocBLAS's Tensile host finding no device;
- DCGM's verdicts (dcgm_errors.h): "Detected XID %u for GPU %u", uncorrectable memory errors and row
  remapping, pending page retirements with a DBE, the uncontained error (XID 95), fatal NVSwitch SXIDs;
- CANN's EJ0001 (HCCL on Ascend, read by rules/hccl.py): the HCCP process cannot start while an earlier
  process holds the NPU.

Decoys stay silent: nvidia-smi -q's error sections of a healthy GPU (headings, counters at zero).
"""

from __future__ import annotations

from typing import Any, Optional

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, TRACEBACK_HEAD, prefixed
from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = LAUNCHER_PREFIXES
TB = TRACEBACK_HEAD
LAZY = '  File "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py", line 302, in _lazy_init\n    torch._C._cuda_init()\n'
GDC = "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 999: unknown error"
SETUP = "# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n"
ROWS = "#                                                              out-of-place                       in-place\n#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n           8             2     float     sum      -1    31.54    0.00    0.00      0    30.83    0.00    0.00      0\n          16             4     float     sum      -1    31.20    0.00    0.00      0    30.90    0.00    0.00      0\n"


# (log, code, facts) under every prefix.
CASES: list[tuple[str, str, Optional[dict[str, Any]]]] = [
    # cudaGetDeviceCount's 999 at device discovery, every way torch surfaces it
    (TB + LAZY + "RuntimeError: " + GDC, "RUN262", {"cuda_error_number": 999}),
    (TB + "RuntimeError: " + GDC, "RUN262", {"cuda_error_number": 999}),
    (
        TB + "torch.cuda.DeferredCudaCallError: CUDA call failed lazily at initialization with error: " + GDC,
        "RUN262",
        {"reason": "device_init_failed"},
    ),
    (
        "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:138: UserWarning: CUDA initialization: "
        + GDC
        + " (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)\n  return torch._C._cuda_getDeviceCount() > 0",
        "RUN262",
        None,
    ),
    # any other number of device discovery, and ROCm's hipified message (hipGetDeviceCount, HIP enum names)
    (
        TB
        + "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 2: out of memory",
        "RUN262",
        {"cuda_error_number": 2, "reason": "device_init_failed"},
    ),
    (
        TB
        + "RuntimeError: Unexpected error from hipGetDeviceCount(). Did you run some cuda functions before calling NumHipDevices() that might have already set an error? Error 100: hipErrorNoDevice",
        "RUN262",
        {"cuda_error_number": 100},
    ),
    (
        TB
        + "RuntimeError: Unexpected error from hipGetDeviceCount(). Did you run some cuda functions before calling NumHipDevices() that might have already set an error? Error 999: unknown error",
        "RUN262",
        {"cuda_error_number": 999},
    ),
    (
        TB
        + "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 101: invalid device ordinal",
        "RUN264",
        None,
    ),
    (
        TB
        + "RuntimeError: Unexpected error from hipGetDeviceCount(). Did you run some cuda functions before calling NumHipDevices() that might have already set an error? Error 101: hipErrorInvalidDevice",
        "RUN264",
        None,
    ),
    # cudart 218 / 223 by message and by enum name
    (TB + "RuntimeError: CUDA error: a PTX JIT compilation failed", "RUN261", {"cuda_error_number": 218}),
    (TB + "torch.AcceleratorError: CUDA error: a PTX JIT compilation failed", "RUN261", None),
    (
        TB
        + "cupy_backends.cuda.api.driver.CUDADriverError: CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed",
        "RUN261",
        {"cuda_error_number": 218},
    ),
    (TB + "RuntimeError: Triton Error [CUDA]: a PTX JIT compilation failed", "RUN261", None),
    (TB + "RuntimeError: CUDA error: PTX JIT compilation was disabled", "RUN265", {"cuda_error_number": 223}),
    (TB + "RuntimeError: CUDA driver error: CUDA_ERROR_JIT_COMPILATION_DISABLED", "RUN265", None),
    # HIP's enum names for its messages (ROCm < 5)
    (TB + "RuntimeError: HIP error: hipErrorNoBinaryForGpu", "RUN265", {"cuda_error_number": 209}),
    (TB + "RuntimeError: HIP error: hipErrorInvalidDeviceFunction", "RUN265", None),
    (TB + "RuntimeError: HIP error: hipErrorNoDevice", "RUN262", None),
    (TB + "RuntimeError: HIP error: hipErrorInsufficientDriver", "RUN261", None),
    (TB + "RuntimeError: HIP error: hipErrorNotInitialized", "RUN262", None),
    (TB + "RuntimeError: HIP error: hipErrorInvalidDevice", "RUN264", None),
    # 303: a code object that cannot be loaded on this GPU (ROCm: a gfx target the build lacks)
    (
        TB
        + "RuntimeError: HIP error: shared object initialization failed\nCompile with `TORCH_USE_HIP_DSA` to enable device-side assertions.",
        "RUN265",
        {"cuda_error_number": 303},
    ),
    (
        TB
        + "RuntimeError: HIP Function Failed (/home/chi/flash-attention/csrc/composable_kernel/include/ck_tile/host/kernel_launch_hip.hpp,51) shared object initialization failed",
        "RUN265",
        None,
    ),
    (TB + "RuntimeError: HIP error: hipErrorSharedObjectInitFailed", "RUN265", None),
    (TB + "RuntimeError: CUDA driver error: CUDA_ERROR_SHARED_OBJECT_INIT_FAILED", "RUN265", None),
    (TB + "RuntimeError: CUDA driver error: CUDA_ERROR_INVALID_DEVICE", "RUN264", None),
    (TB + "RuntimeError: CUDA error: cudaErrorInvalidDevice", "RUN264", None),
    # nccl-tests' CUDACHECK with 'unknown error' before any results row: its set-up
    ("Test CUDA failure common.cu:730 'unknown error'", "RUN262", {"reason": "device_init_failed"}),
    (
        SETUP
        + "node1: Test CUDA failure common.cu:730 'unknown error'\n .. node1 pid 1234: Test failure common.cu:1094",
        "RUN262",
        None,
    ),
    (
        "nThread 1 nGpus 4 minBytes 8 maxBytes 134217728\nCuda failure common.cu:517 'unknown error'",
        "RUN262",
        None,
    ),
    # ... and after rows: the device lost its context while the collectives ran
    (
        SETUP
        + ROWS
        + "node1: Test CUDA failure common.cu:1007 'unknown error'\n .. node1 pid 1234: Test failure common.cu:1094",
        "RUN323",
        None,
    ),
    # vLLM 0.4's pynccl bound no NCCL function
    (
        "[Bug]: vllm0.4.0 post1: NameError: name 'ncclGetVersion' is not defined",
        "RUN263",
        {"library": "libnccl"},
    ),
    (
        "ERROR 04-24 09:39:29 worker_base.py:153]     logger.info(f\"vLLM is using nccl=={ncclGetVersion()}\")\nERROR 04-24 09:39:29 worker_base.py:153] NameError: name 'ncclGetVersion' is not defined",
        "RUN263",
        {"symbol": "ncclGetVersion"},
    ),
    (TB + "NameError: name 'ncclGetUniqueId' is not defined", "RUN263", None),
    (TB + "NameError: name 'ncclCommInitRank' is not defined", "RUN263", None),
    # CANN's EJ0001 (HCCL on Ascend): the NPU is still held by an earlier training process
    (
        TB
        + "RuntimeError: [ERROR] HCCL error in: torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:64\n[ERROR] 2024-05-21-11:57:54 (PID:927000, Device:3, RankID:3) ERR02200 DIST call hccl api failed.\nEJ0001: 2024-05-21-11:57:54.167.645 Failed to initialize the HCCP process. Reason: Maybe the last training process is running.\n        Solution: Wait for 10s after killing the last training process and try again.",
        "RUN262",
        {"reason": "device_busy", "error_code": "EJ0001"},
    ),
    (
        "RuntimeError: create_config:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:102 HCCL function error: hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, &(comm->hcclComm_)), error code is 7\nEJ0001: [PID: 468348] 2025-04-24-16:14:56.975.866 Failed to initialize the HCCP process. Reason: Maybe the last training process is running.",
        "RUN262",
        {"reason": "device_busy"},
    ),
    ("EJ0001: Failed to initialize the HCCP process.", "RUN262", None),
    # DCGM's diagnostic / health verdicts (dcgm_errors.h DCGM_FR_*_MSG)
    ("Error: Detected XID 79 for GPU 3", "RUN243", {"xid": 79, "gpu": 3, "xid_from": "dcgm"}),
    ("Warning: DCGM_FR_XID_ERROR Detected XID 48 for GPU 0", "RUN242", {"xid": 48}),
    ("| Diagnostic | Fail - Detected XID 74 for GPU 1 |", "RUN241", {"xid": 74}),
    ("GPU had an uncontained error (XID 95)", "RUN242", {"xid": 95}),
    (
        "| Memory | Fail - GPU 2 had uncorrectable memory errors and row remapping failed. |",
        "RUN242",
        {"gpu": 2},
    ),
    ("GPU 5 had uncorrectable memory errors and 3 rows were remapped", "RUN242", {"gpu": 5}),
    ("Pending page retirements together with a DBE were detected on GPU 1.", "RUN242", {"gpu": 1}),
    ("GPU 0 had memory errors and row remappings are pending", "RUN242", None),
    ("Detected fatal NvSwitch SXID 20034", "RUN241", {"sxid": 20034}),
    # ROCm's tools without a driver or a device
    (
        "$ rocm-smi\nERROR:root:Driver not initialized (amdgpu not found in modules)",
        "RUN262",
        {"reason": "no_driver"},
    ),
    (
        "rocBLAS error: Could not initialize Tensile host: No devices found\nAborted (core dumped)",
        "RUN262",
        None,
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(("log", "code", "facts"), CASES)
def test_driver_env_family(prefix: str, log: str, code: str, facts: Optional[dict[str, Any]]) -> None:
    _check(prefixed(prefix, log), code, facts)


# NCCL's CUDACHECK / CUCHECK quoting the new table entries: the text decides, as for the others.
@pytest.mark.parametrize(
    ("text", "number", "code"),
    [("a PTX JIT compilation failed", 218, "RUN261"), ("PTX JIT compilation was disabled", 223, "RUN265")],
)
def test_nccl_cuda_failure_of_the_jit(text: str, number: int, code: str) -> None:
    log = (
        f"gpu1:1234:1234 [0] misc/cudawrap.cc:90 NCCL WARN Cuda failure {number} '{text}'\n"
        "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191, unhandled cuda "
        "error, NCCL version 2.14.3\nncclUnhandledCudaError: Call to CUDA function failed."
    )
    _check(log, code)


def test_unknown_error_after_kernels_stays_gpu_hardware() -> None:
    """The 999 of a device that ran kernels keeps its reading: only device discovery is the environment's."""
    _check(
        TB
        + "RuntimeError: CUDA error: unknown error\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
        "RUN323",
    )


VLLM_LOAD = (
    "ERROR 04-22 15:53:32 pynccl.py:44] Failed to load NCCL library from libnccl.so.2 .It is expected if you are "
    "not running on NVIDIA/AMD GPUs.Otherwise, the nccl library might not exist, be corrupted or it does not "
    "support the current platform Linux-4.18.0-240.el8.x86_64-x86_64-with-glibc2.35.If you already have the "
    "library, please set the environment variable VLLM_NCCL_SO_PATH to point to the correct nccl library path.\n"
    "INFO 04-22 15:53:32 pynccl_utils.py:17] Failed to import NCCL library: Failed to load NCCL library from libnccl.so.2 .\n"
)


def test_vllm_nccl_load_failure_of_a_pipeline_of_one_gpu_stages_is_still_the_cause() -> None:
    _check(
        VLLM_LOAD
        + "INFO 04-22 15:53:40 llm_engine.py:98] Initializing an LLM engine with config: tensor_parallel_size=1, pipeline_parallel_size=2\n"
        + "ERROR 04-22 15:53:33 worker_base.py:153] Error executing method init_device. This might cause deadlock in distributed execution.",
        "RUN263",
    )


def test_vllm_nccl_load_failure_is_the_cause_when_the_engine_stops() -> None:
    _check(
        VLLM_LOAD
        + "ERROR 04-22 15:53:33 worker_base.py:153] Error executing method init_device. This might cause deadlock in distributed execution.",
        "RUN263",
    )


@pytest.mark.parametrize(
    "after",
    [
        "INFO 04-22 15:54:10 gpu_executor.py:94] # GPU blocks: 2000, # CPU blocks: 512",
        "INFO 04-22 15:55:00 metrics.py:229] Avg prompt throughput: 10.0 tokens/s, Avg generation throughput: 5.0 tokens/s",
        "INFO:     Application startup complete.\nINFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)",
        "Processed prompts: 100%|##########| 10/10 [00:05<00:00,  1.90it/s]",
        "INFO 08-19 09:33:57 llm_engine.py:75] Initializing an LLM engine (v0.4.0) with config: model='/data/MiniCPM-2B-sft-bf16', dtype=torch.bfloat16, max_seq_len=4096, tensor_parallel_size=1, disable_custom_all_reduce=True, quantization=None, seed=0)",
    ],
)
def test_vllm_nccl_load_failure_is_no_failure_when_the_engine_went_on(after: str) -> None:
    assert (
        _root(VLLM_LOAD + "INFO 04-22 15:53:40 llm_engine.py:98] Initializing an LLM engine\n" + after)
        is None
    )


DECOYS = [
    # nvidia-smi -q of a healthy GPU
    "    ECC Errors\n        Volatile\n            SRAM Correctable              : 0\n            SRAM Uncorrectable            : 0\n            DRAM Correctable              : 0\n            DRAM Uncorrectable            : 0\n        Aggregate\n            SRAM Correctable              : 0\n            SRAM Uncorrectable            : 0\n    Retired Pages\n        Single Bit ECC                    : 0\n        Double Bit ECC                    : 0\n        Pending Page Blacklist            : No",
    "GPU health check: Xid errors: none\nECC errors: 0\nall GPUs healthy",
    "    ECC Errors\n        Volatile\n            Single Bit\n                Device Memory             : N/A\n            Double Bit\n                Device Memory             : N/A",
    # NCCL's init prints of the driver's version
    "gpu1:1234:1234 [0] NCCL INFO cudaDriverVersion 12020\nNCCL version 2.19.3+cuda12.3\ngpu1:1234:1234 [0] NCCL INFO comm 0x55 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE",
]


# A healthy section is printed by a tool or at INFO level, never under an ERROR level of a logger.
@pytest.mark.parametrize(
    "prefix", [p for p in PREFIXES if "ERROR" not in p] + ["2025-01-02 03:04:05,678 - INFO - "]
)
@pytest.mark.parametrize("log", DECOYS)
def test_healthy_lines_stay_silent(prefix: str, log: str) -> None:
    assert _root(prefixed(prefix, log + "\nEpoch 1/3: loss=0.412\nTraining finished.")) is None


def test_a_nonzero_ecc_counter_is_not_silenced() -> None:
    """The quiet row reads zero counters only: an Xid beside a section with counts still names the fault."""
    log = "    ECC Errors\n        Volatile\n            DRAM Uncorrectable            : 2\nNVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 0, subpartition 0."
    _check(log, "RUN242")
