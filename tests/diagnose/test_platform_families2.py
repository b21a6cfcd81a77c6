"""More driver/environment and GPU-hardware families read at their sources, every variant under the
prefixes real logs add. Each group names the source its lines come from:

- ProcessGroupNCCL's constructor check (torch 1.x TORCH_CHECK as RuntimeError, 2.2+ TORCH_CHECK_WITH
  ValueError), whole, cut by a paste after "ProcessGroupNCCL is", or lost behind the constructor frame
  (distributed_c10d.py 1.x `pg = ProcessGroupNCCL(prefix_store, ...)`, 2.x `backend_class = ...`);
- cudart's 101 "invalid device ordinal" through torch, NCCL's CUDACHECK WARN and nccl-tests' CUDACHECK
  ("Test CUDA failure common.cu:N '<cudaGetErrorString>'"), with every other environment message of
  cudart's table in the nccl-tests shape;
- NCCL's transport/nvls.cc CUCHECK sites (driver calls on multicast objects) answering any CUDA error;
- CUDA check macros that put the source location before the message and wrap it (DeepEP's EPException,
  cuda-samples' checkCudaErrors, llama.cpp's CUDA_CHECK);
- cudart's 205 "mapping of buffer object failed" (cuMem / P2P mappings: BAR1, IOMMU);
- cudart's 999 "unknown error" as c10's check prints it after kernels ran (the NCCL watchdog, a launch,
  Triton's launcher) versus at device set-up;
- framework loaders that search for a library themselves (torch7's nccl.torch ffi.lua).

Decoys with the same words stay silent or keep their own class.
"""

from __future__ import annotations

from typing import Any, Optional

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = ["", "[rank3]: ", "node7: ", "2025-01-02 03:04:05,678 - ERROR - ", "(RayWorkerWrapper pid=1234) "]
WARN = "gpu-node-07:2814:2856 [0] "
FULL = "ProcessGroupNCCL is only supported with GPUs, no GPUs found!"


def _prefixed(prefix: str, log: str) -> str:
    return "".join(prefix + ln + "\n" for ln in log.split("\n"))


# ProcessGroupNCCL's constructor: the message whole or cut anywhere after "ProcessGroupNCCL is".
NO_GPU_LINES = [
    f"RuntimeError: {FULL}",
    f"ValueError: {FULL}",
    f"torch.distributed.DistBackendError: {FULL}",
    "RuntimeError: ProcessGroupNCCL is only supp",
    "RuntimeError: ProcessGroupNCCL is",
    "ValueError: ProcessGroupNCCL is only supported with GPUs, no GPU",
    "RuntimeError: ProcessGroupNCCL is only supported with GPUs,",
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line", NO_GPU_LINES)
def test_nccl_backend_without_a_gpu(prefix: str, line: str) -> None:
    _check(_prefixed(prefix, line), "RUN262", {"reason": "no_visible_device", "backend": "nccl"})


TB_1X = """Traceback (most recent call last):
  File "/usr/local/lib/python3.7/dist-packages/fairseq/distributed/utils.py", line 261, in distributed_init
    rank=cfg.distributed_training.distributed_rank,
  File "/usr/local/lib/python3.7/dist-packages/torch/distributed/distributed_c10d.py", line 610, in init_process_group
    timeout=timeout,
  File "/usr/local/lib/python3.7/dist-packages/torch/distributed/distributed_c10d.py", line 738, in _new_process_group_helper
    pg = ProcessGroupNCCL(prefix_store, rank, world_size, pg_options)
{exc}"""
TB_2X = """  File "/opt/venv/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 895, in init_process_group
    default_pg = _new_process_group_helper(
  File "/opt/venv/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 1009, in _new_process_group_helper
    backend_class = ProcessGroupNCCL(backend_prefix_store, group_rank, group_size, pg_options)
{exc}"""


@pytest.mark.parametrize("prefix", PREFIXES[:3])
@pytest.mark.parametrize("tb", [TB_1X, TB_2X])
@pytest.mark.parametrize(
    "exc",
    [
        "RuntimeError: ProcessGroupNCCL is",
        f"ValueError: {FULL}",
        # ranks interleaved on one stream: the exception line glued to another rank's frame, no message
        "        RuntimeErrorbackend_class = ProcessGroupNCCL(backend_prefix_store, group_rank, group_size, pg_options)",
        "RuntimeError",
        "ValueError",
    ],
)
def test_nccl_backend_without_a_gpu_behind_the_constructor_frame(prefix: str, tb: str, exc: str) -> None:
    _check(_prefixed(prefix, tb.format(exc=exc)), "RUN262", {"reason": "no_visible_device"})


def test_the_constructor_frame_with_another_message_is_not_a_missing_gpu() -> None:
    root = _root(
        TB_2X.format(exc="ValueError: Invalid value for environment variable TORCH_NCCL_BLOCKING_WAIT")
    )
    assert root is None or root.code != "RUN262", root
    # a deeper frame after the constructor: it did not raise there
    deeper = TB_2X.format(
        exc='  File "/x/torch/cuda/__init__.py", line 302, in _lazy_init\n    torch._C._cuda_init()\nRuntimeError'
    )
    root = _root(deeper)
    assert root is None or root.facts.get("backend") != "nccl", root


@pytest.mark.parametrize(
    "line",
    [
        "INFO: ProcessGroupNCCL is initialized with 8 ranks",
        "RuntimeError: ProcessGroupNCCL is not available on this build of torch_npu",
        "RuntimeError: ProcessGroupNCC",
    ],
)
def test_other_words_about_processgroupnccl_are_not_a_missing_gpu(line: str) -> None:
    root = _root(line + "\n")
    assert root is None or root.code != "RUN262", root


def test_a_torch_without_nccl_is_a_missing_library() -> None:
    _check("RuntimeError: Distributed package doesn't have NCCL built in\n", "RUN263")


# cudart 101 through torch, NCCL's CUDACHECK and nccl-tests' CUDACHECK, and torch's own assert.
ORDINAL = [
    "RuntimeError: CUDA error: invalid device ordinal",
    "g0010: Test CUDA failure common.cu:941 'invalid device ordinal'",
    "node1: Test CUDA failure common.cu:963 'invalid device ordinal'",
    WARN + "NCCL WARN Cuda failure 101 'invalid device ordinal'",
    WARN + "init.cc:1437 NCCL WARN Cuda failure 'invalid device ordinal'",
    "RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at "
    '"../aten/src/ATen/cuda/CUDAContext.cpp":50, please report a bug to PyTorch.',
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line", ORDINAL)
def test_gpu_index_beyond_the_visible_ones(prefix: str, line: str) -> None:
    _check(_prefixed(prefix, line), "RUN264")


def test_nccl_tests_failure_pair_with_several_hosts() -> None:
    log = (
        "# Using devices\n"
        "g0010: Test CUDA failure common.cu:941 'invalid device ordinal'\n"
        " .. g0010 pid 888386: Test failure common.cu:891\n"
        "g0016: Test CUDA failure common.cu:941 'invalid device ordinal'\n"
        " .. g0016 pid 3645592: Test failure common.cu:891\n"
    )
    _check(log, "RUN264")


# nccl-tests' CUDACHECK with every environment message of cudart's table.
NCCL_TESTS_ENV = [
    ("CUDA driver version is insufficient for CUDA runtime version", "RUN261"),
    ("no CUDA-capable device is detected", "RUN262"),
    ("all CUDA-capable devices are busy or unavailable", "RUN262"),
    ("CUDA-capable device(s) is/are busy or unavailable", "RUN262"),
    ("system not yet initialized", "RUN262"),
    ("forward compatibility was attempted on non supported HW", "RUN261"),
    ("system has unsupported display driver / cuda driver combination", "RUN261"),
    ("peer access is not supported between these two devices", "RUN291"),
    ("mapping of buffer object failed", "RUN291"),
    ("no kernel image is available for execution on the device", "RUN265"),
]


@pytest.mark.parametrize("prefix", ["", "[1,0]<stderr>:"])
@pytest.mark.parametrize("msg,code", NCCL_TESTS_ENV)
def test_nccl_tests_cuda_failure_environment_messages(prefix: str, msg: str, code: str) -> None:
    _check(f"{prefix}node05: Test CUDA failure common.cu:1045 '{msg}'\n", code)
    # the message wrapped onto the next line by a paste
    _check(f"{prefix}node05: Test CUDA failure common.cu:1045\n'{msg}'\n", code)


# NCCL's transport/nvls.cc: every CUCHECK there is a driver call on a multicast object. (A bare 1 'invalid
# argument' there is NCCL's own class, RUN196: test_diagnose_source_families.py.)
NVLS = [
    "transport/nvls.cc:223 NCCL WARN Cuda failure 999 'unknown error",
    "transport/nvls.cc:223 NCCL WARN Cuda failure 999 'unknown error'",
    "transport/nvls.cc:154 NCCL WARN Cuda failure 801 'operation not supported'",
    "transport/nvls.cc:168 NCCL WARN Cuda failure 401 'the operation cannot be performed in the present state'",
    "transport/nvls.cc:120 NCCL WARN Cuda failure 201 'invalid device context'",
    "transport/nvls.cc:120 NCCL WARN Cuda failure 'unknown error'",
]


@pytest.mark.parametrize("prefix", ["", "[2025-08-24 17:57:25] "])
@pytest.mark.parametrize("line", NVLS)
def test_nvls_sites_answering_any_cuda_error_are_the_platform(prefix: str, line: str) -> None:
    _check(f"{prefix}gpu47:4962:5097 [1] {line}\n", "RUN292", {"feature": "nvls"})


def test_out_of_memory_at_an_nvls_site_stays_memory() -> None:
    root = _root("gpu47:4962:5097 [1] transport/nvls.cc:120 NCCL WARN Cuda failure 2 'out of memory'\n")
    assert root is not None and root.category == "cuda_oom", root


# CUDA check macros that print the source location first (and wrap the message).
WRAPPED = [
    (
        "RuntimeError: Failed: CUDA error /sgl-workspace/DeepEP/csrc/deep_ep.cpp:200\n"
        "'peer access is not supported between these two devices'",
        "RUN291",
    ),
    (
        "RuntimeError: Failed: CUDA error /sgl-workspace/DeepEP/csrc/deep_ep.cpp:200 "
        "'peer access is not supported between these two devices'",
        "RUN291",
    ),
    ("Cuda failure p2pBandwidthLatencyTest.cu:189: 'mapping of buffer object failed'", "RUN291"),
    ("CUDA error 217 at ggml-cuda.cu:6292: peer access is not supported between these two devices", "RUN291"),
    (
        'CUDA error at p2pBandwidthLatencyTest.cu:172 code=205(cudaErrorMapBufferObjectFailed) "cudaDeviceEnablePeerAccess(j, 0)"',
        "RUN291",
    ),
    (
        "RuntimeError: Failed: CUDA error /x/DeepEP/csrc/kernels/runtime.cu:29\n"
        "'CUDA driver version is insufficient for CUDA runtime version'",
        "RUN261",
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES[:3])
@pytest.mark.parametrize("log,code", WRAPPED)
def test_cuda_checks_with_a_source_location(prefix: str, log: str, code: str) -> None:
    _check(_prefixed(prefix, log), code)


def test_a_wrapped_location_whose_next_line_is_no_cuda_message_is_silent() -> None:
    assert _root("RuntimeError: Failed: CUDA error /x/deep_ep.cpp:200\nretrying\n") is None


# cudart 205: a mapping of another GPU's (or an exported) allocation failed.
MAP_FAILED = [
    WARN + "allocator.cc:89 (ncclMemAlloc) NCCL WARN Cuda failure 205 'mapping of buffer object failed'",
    "RuntimeError: CUDA error: mapping of buffer object failed",
    "RuntimeError: CUDA driver error: CUDA_ERROR_MAP_FAILED",
]


@pytest.mark.parametrize("prefix", ["", "[2026-08-24 17:57:25] "])
@pytest.mark.parametrize("line", MAP_FAILED)
def test_mapping_of_buffer_object_failed_is_the_platform(prefix: str, line: str) -> None:
    _check(f"{prefix}{line}\n", "RUN291", {"cuda_error_number": 205})


# cudart 999 after kernels ran.
WATCHDOG = (
    "[E ProcessGroupNCCL.cpp:915] [Rank 0] NCCL watchdog thread terminated with exception: CUDA error: "
    "unknown error\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
    "might be incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
)
UNKNOWN_AT_RUNTIME = [
    WATCHDOG,
    "[rank7]:[E ProcessGroupNCCL.cpp:1414] [PG 0 Rank 7] Process group watchdog thread terminated with "
    "exception: CUDA error: unknown error\n",
    '  File "/x/model/vision_encoder/vary_b.py", line 313, in forward\n'
    "    attn = attn.softmax(dim=-1)\nRuntimeError: CUDA error: unknown error\n",
    "RuntimeError: Triton Error [CUDA]: unknown error\n",
    "RuntimeError: CUDA driver error: unknown error\n",
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("log", UNKNOWN_AT_RUNTIME)
def test_unknown_error_after_kernels_ran_is_the_device(prefix: str, log: str) -> None:
    _check(_prefixed(prefix, log.rstrip("\n")), "RUN323", {"cuda_error_number": 999})


def test_unknown_error_at_device_set_up_is_the_environment() -> None:
    log = (
        '  File "/x/torch/cuda/__init__.py", line 404, in set_device\n'
        "    torch._C._cuda_setDevice(device)\n"
        '  File "/x/torch/cuda/__init__.py", line 298, in _lazy_init\n'
        "    torch._C._cuda_init()\n"
        "RuntimeError: CUDA error: unknown error\n"
    )
    _check(log, "RUN262", {"reason": "device_init_failed"})
    _check(
        "UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up "
        "environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start.\n",
        "RUN262",
    )


def test_an_xid_names_what_the_unknown_error_was() -> None:
    log = (
        "[ 1843.439669] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.\n"
        + WATCHDOG
    )
    _check(log, "RUN243")


# Framework loaders that search for a library themselves.
NOT_FOUND = [
    "nccl/ffi.lua:195: 'libnccl.so not found in library path.",
    "/usr/local/share/lua/5.1/trepl/init.lua:389: /usr/local/share/lua/5.1/nccl/ffi.lua:201: 'libnccl.so not "
    "found in library path.",
    "RuntimeError: libcudnn.so.8 is not found",
]


@pytest.mark.parametrize("prefix", PREFIXES[:3])
@pytest.mark.parametrize("line", NOT_FOUND)
def test_library_not_found_by_a_frameworks_loader(prefix: str, line: str) -> None:
    _check(_prefixed(prefix, line), "RUN263")


@pytest.mark.parametrize(
    "line",
    [
        "gpu-node-07:2814:2814 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal net plugin.",
        "libnccl-net.so not found, using internal implementation",
        "UserWarning: libcudnn.so.8 not found, falling back to the bundled copy",
        "bash: nvcc: command not found",
    ],
)
def test_optional_or_warned_libraries_stay_silent(line: str) -> None:
    assert _root(line + "\n") is None


# cudart 711 (more peers than the driver maps per GPU), 98 / 8 (a kernel without code for this GPU), and
# NVRTC older than the GPU, in every shape their callers print.
MORE_ENV = [
    (
        "[2025-06-20 02:14:03] ubuntu:33207:33207 [0] allocator.cc:79 NCCL WARN Cuda failure 711 'peer mapping resources exhausted'",
        "RUN291",
    ),
    ("CUDA failure test.cu:20 'peer mapping resources exhausted'", "RUN291"),
    (
        "CUDA error: peer mapping resources exhausted\n  current device: 0, in function ggml_cuda_init at ggml/src/ggml-cuda/ggml-cuda.cu:336\n  cudaDeviceEnablePeerAccess(id_other, 0)",
        "RUN291",
    ),
    ("RuntimeError: CUDA driver error: CUDA_ERROR_TOO_MANY_PEERS", "RUN291"),
    ("RuntimeError: CUDA error: invalid device function", "RUN265"),
    (
        "THCudaCheck FAIL file=/x/pytorch/torch/lib/THC/generated/../generic/THCTensorMathPointwise.cu line=247 error=8 : invalid device function",
        "RUN265",
    ),
    (
        "RuntimeError: cuda runtime error (8) : invalid device function at /opt/conda/conda-bld/pytorch_1544174967633/work/aten/src/THC/THCGeneral.cpp:405",
        "RUN265",
    ),
    ("RuntimeError: HIP error: invalid device function", "RUN265"),
    ("RuntimeError: nvrtc: error: invalid value for --gpu-architecture (-arch)", "RUN265"),
]


@pytest.mark.parametrize("prefix", PREFIXES[:3])
@pytest.mark.parametrize("log,code", MORE_ENV)
def test_peer_limits_and_missing_gpu_code(prefix: str, log: str, code: str) -> None:
    _check(_prefixed(prefix, log), code)


def test_tensorflows_peer_access_warning_stays_silent() -> None:
    log = (
        "2019-07-25 09:33:34.093469: W tensorflow/core/common_runtime/gpu/gpu_device.cc:1597] Unable to enable "
        "peer access between device ordinals 0 and 9, status: Internal: failed to enable\n"
        "peer access from 0x7f76d46da2c0 to 0x7f76b4713830: CUDA_ERROR_TOO_MANY_PEERS: peer mapping resources "
        "exhausted\n"
    )
    assert _root(log) is None


# cuDNN's and cuBLAS's own words for a library stack of mixed versions or without this GPU's arch.
LIBRARY_STACK = [
    ("RuntimeError: cuDNN error: CUDNN_STATUS_VERSION_MISMATCH", "RUN296"),
    ("RuntimeError: CUDNN_STATUS_VERSION_MISMATCH", "RUN296"),
    ("RuntimeError: cuDNN error: CUDNN_STATUS_ARCH_MISMATCH", "RUN265"),
    ("Invalid handle. Cannot load symbol cublasLtCreate", "RUN263"),
    ("Invalid handle. Cannot load symbol cublasLtMatmulAlgoGetHeuristic", "RUN263"),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line,code", LIBRARY_STACK)
def test_cudnn_and_cublas_library_stack(prefix: str, line: str, code: str) -> None:
    _check(_prefixed(prefix, line), code)


# The kernel's PCIe AER driver (aer.c / err.c, 4.x-6.x wordings).
KERNEL_PREFIXES = ["", "[  +0.000844] ", "Sep 19 16:18:02 bubz kernel: [68183.615790] "]
AER = [
    ("pcieport 0000:00:02.0: AER: Uncorrected (Fatal) error received: id=0010", "fatal"),
    ("pcieport 0000:00:03.0: AER: Multiple Uncorrected (Fatal) error received: 0000:00:03.0", "fatal"),
    (
        "pcieport 0000:00:03.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)",
        "fatal",
    ),
    ("pcieport 0000:00:01.2: AER: Uncorrectable (Fatal) error message received from 0000:63:00.0", "fatal"),
    ("nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)", "unrecoverable"),
]


@pytest.mark.parametrize("prefix", KERNEL_PREFIXES)
@pytest.mark.parametrize("line,severity", AER)
def test_pcie_uncorrected_errors(prefix: str, line: str, severity: str) -> None:
    _check(prefix + line + "\n", "RUN324", {"severity": severity})


@pytest.mark.parametrize(
    "line",
    [
        "pcieport 0000:00:03.0: AER: Corrected error received: 0000:00:03.0",
        "pcieport 0000:00:03.1: AER: Correctable error message received from 0000:00:00.0",
        "pcieport 0000:00:03.1: PCIe Bus Error: severity=Correctable, type=Data Link Layer, (Transmitter ID)",
        "pcieport 0000:00:02.0: PCIe Bus Error: severity=Corrected, type=Data Link Layer, id=0010(Transmitter ID)",
        "pcieport 0000:00:01.2: AER: Uncorrectable (Non-Fatal) error received from 0000:63:00.0",
        "snd_hda_intel 0000:63:00.1: PCIe Bus Error: Uncorrectable (Non-Fatal), type=Transaction Layer",
        "pcieport 0000:00:1c.0: AER: Uncorrected (Non-Fatal) error received: 0000:03:00.0",
    ],
)
def test_corrected_and_non_fatal_pcie_errors_stay_silent(line: str) -> None:
    assert _root(line + "\n") is None


def test_the_xid_of_the_lost_gpu_outranks_the_link_error() -> None:
    log = (
        "[74889.542031] pcieport 0000:00:02.0: AER: Uncorrected (Fatal) error received: id=0010\n"
        "[74889.542044] pcieport 0000:00:02.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, id=0010(Receiver ID)\n"
        "[74889.542239] nvidia 0000:02:00.0: device has no AER-aware driver\n"
        "[74889.644138] NVRM: Xid (PCI:0000:02:00): 79, GPU has fallen off the bus.\n"
    )
    _check(log, "RUN243")


# Builds and kernels that do not fit this GPU or this toolchain: cpp_extension's CUDA_MISMATCH_MESSAGE (two
# lines as the source prints it), its Ninja check, xFormers without CUDA kernels, inductor's Triton check,
# flash-attn's TORCH_CHECK, transformers' bf16 check.
BUILD_FIT = [
    (
        "RuntimeError: \nThe detected CUDA version (12.1) mismatches the version that was used to compile\n"
        "PyTorch (11.8). Please make sure to use the same CUDA versions.",
        "RUN296",
        {"toolkit_cuda": "12.1", "torch_cuda": "11.8"},
    ),
    ("RuntimeError: Ninja is required to load C++ extensions", "RUN296", {}),
    (
        "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
        "     query       : shape=(1, 4096, 1, 512) (torch.float16)\n"
        "`cutlassF` is not supported because:\n"
        "    xFormers wasn't build with CUDA support",
        "RUN296",
        {},
    ),
    (
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
        "RuntimeError: Found Tesla P100-PCIE-16GB which is too old to be supported by the triton GPU compiler, "
        "which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0, but your device "
        "is of CUDA capability 6.0",
        "RUN265",
        {"arch": "triton"},
    ),
    ("RuntimeError: FlashAttention only supports Ampere GPUs or newer.", "RUN265", {"arch": "flash_attn"}),
    (
        "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0",
        "RUN265",
        {"arch": "bf16"},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES[:3])
@pytest.mark.parametrize("log,code,facts", BUILD_FIT)
def test_builds_and_kernels_that_do_not_fit(prefix: str, log: str, code: str, facts: dict[str, Any]) -> None:
    _check(_prefixed(prefix, log), code, facts)


def test_a_library_that_warns_about_flash_attention_and_falls_back_stays_silent() -> None:
    assert _root("UserWarning: FlashAttention only supports Ampere GPUs or newer.\n") is None


# Frameworks asked for a GPU they cannot see (Lightning 1.x, Accelerate, transformers, vLLM, torch.accelerator).
FRAMEWORK_NO_GPU = [
    (
        "pytorch_lightning.utilities.exceptions.MisconfigurationException: You requested GPUs: [0, 1]\n But your machine only has: []",
        "RUN262",
    ),
    (
        "pytorch_lightning.utilities.exceptions.MisconfigurationException: You requested gpu: [0, 1, 2, 3]\n But your machine only has: [0, 1]",
        "RUN264",
    ),
    ("ValueError: fp16 mixed precision requires a GPU (not 'mps').", "RUN262"),
    ("ValueError: fp16 mixed precision requires a GPU (not 'cpu').", "RUN262"),
    (
        "ValueError: FP16 Mixed precision training with AMP or APEX (`--fp16`) and FP16 half precision evaluation (`--fp16_full_eval`) can only be used on CUDA or MLU devices or NPU devices or certain XPU devices (with IPEX).",
        "RUN262",
    ),
    ("RuntimeError: Failed to infer device type", "RUN262"),
    ("RuntimeError: Cannot access accelerator device when none is available.", "RUN262"),
    ("RuntimeError: GPU is required to quantize or run quantize model.", "RUN262"),
    (
        "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla V100-SXM2-32GB GPU has compute capability 7.0. You can use float16 instead by explicitly setting the`dtype` flag in CLI, for example: --dtype=half.",
        "RUN265",
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES[:3])
@pytest.mark.parametrize("log,code", FRAMEWORK_NO_GPU)
def test_frameworks_asked_for_a_gpu_they_cannot_see(prefix: str, log: str, code: str) -> None:
    _check(_prefixed(prefix, log), code)


# The amdgpu kernel driver's side of a ROCm GPU hang.
AMDGPU = [
    "[drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx timeout, signaled seq=1234, emitted seq=1236",
    "amdgpu 0000:03:00.0: [drm] *ERROR* ring gfx_0.0.0 timeout, signaled seq=52311, emitted seq=52313",
    "amdgpu 0000:03:00.0: amdgpu: GPU reset begin!",
]


@pytest.mark.parametrize("prefix", KERNEL_PREFIXES)
@pytest.mark.parametrize("line", AMDGPU)
def test_amdgpu_ring_timeouts_and_resets(prefix: str, line: str) -> None:
    _check(prefix + line + "\n", "RUN295", {"runtime": "rocm"})


SMI_Q = """    Retired Pages
        Single Bit ECC                    : 0
        Double Bit ECC                    : 0
        Pending Page Blacklist            : {blacklist}
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : {uncorrectable}
        Pending                           : {pending}
        Remapping Failure Occurred        : {failure}
        Bank Remap Availability Histogram
            Max                           : 639 bank(s)
"""


@pytest.mark.parametrize(
    "fields,field",
    [
        (
            {"blacklist": "No", "uncorrectable": "2", "pending": "No", "failure": "Yes"},
            "Remapping Failure Occurred",
        ),
        ({"blacklist": "No", "uncorrectable": "1", "pending": "Yes", "failure": "No"}, "Pending"),
        (
            {"blacklist": "Yes", "uncorrectable": "0", "pending": "No", "failure": "No"},
            "Pending Page Blacklist",
        ),
    ],
)
def test_nvidia_smi_memory_health_fields(fields: dict[str, str], field: str) -> None:
    _check(SMI_Q.format(**fields), "RUN242", {"nvidia_smi": f"{field}: Yes"})


def test_a_healthy_nvidia_smi_q_stays_silent() -> None:
    assert _root(SMI_Q.format(blacklist="No", uncorrectable="0", pending="No", failure="No")) is None
    # "Pending : Yes" outside the remapped-rows block is not this field
    assert _root("    Clocks Event Reasons\n        Pending                           : Yes\n") is None


# The CUDA runtime's peer-access fault over NVLink (newer runtimes' wording of the NVLink error), as torch's
# c10 check prints it, with and without the rank/host prefixes, and behind GradScaler's .item().
NVLINK_PEER_LINES = [
    "RuntimeError: CUDA error: Invalid access of peer GPU memory over nvlink or a hardware error",
    "torch.AcceleratorError: CUDA error: Invalid access of peer GPU memory over nvlink or a hardware error\n"
    "CUDA kernel errors might be asynchronously reported at some other API call",
    "RuntimeError: CUDA error: invalid access of peer GPU memory over NVLink or a hardware error",
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("log", NVLINK_PEER_LINES)
def test_nvlink_peer_access_fault_is_the_link(prefix: str, log: str) -> None:
    root = _root(_prefixed(prefix, log))
    assert root is not None and root.facts.get("cuda_error") == "uncorrectable NVLink error", (log, root)


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(
    ("log", "code"),
    [
        # XLA raising it through the first NCCL call (JAX multi-GPU)
        (
            "INTERNAL: external/xla/xla/service/gpu/nccl_utils.cc:134: NCCL operation ncclGetUniqueId(&id) "
            "failed: Unable to load NCCL library. Multi-GPU collectives will not work.",
            "RUN263",
        ),
        (
            "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: NCCL operation ncclCommInitRank(...) failed: "
            "Unable to load NCCL library. Multi-GPU collectives will not work.",
            "RUN263",
        ),
        # the loader's own warning on a run that needs no collective: silent
        (
            "2024-02-23 23:00:01.000000: W external/xla/xla/service/gpu/nccl_api.cc:90] Unable to load NCCL "
            "library. Multi-GPU collectives will not work.",
            None,
        ),
    ],
)
def test_xla_without_its_nccl_library(prefix: str, log: str, code: Optional[str]) -> None:
    root = _root(prefix + log)
    assert (root.code if root else None) == code, (log, root)
