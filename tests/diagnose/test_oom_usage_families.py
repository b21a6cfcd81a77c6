"""GPU memory exhaustion in every layer that reports it, and NCCL's usage / internal errors in every
wrapping, each written from the code that prints it (not the one sentence a paste showed):
c10/cuda/CUDACachingAllocator.cpp (1.x, 2.0, 2.1 "capacty", 2.2+, HIP / XPU / NPU / MPS copies), THC's
THCudaCheck (torch <= 0.4, Lua torch), torch.cuda.memory_summary(), NCCL's CUDACHECK / CUCHECK and
include/alloc.h, the CUDA math libraries' allocation statuses, the frameworks' allocators (TensorFlow's
BFC, XLA, PaddlePaddle, CuPy, MXNet, TensorRT-LLM, vLLM's KV-cache check, Accelerate's batch-size
search); NCCL's ncclGetErrorString texts as torch (whole or cut), the NCCLCHECK macros of NCCL's examples,
nccl-tests, TensorRT-LLM and TransformerEngine, Horovod/XLA/CuPy print them. Prefixes real logs add
(`[rankN]:`, pdsh host names, Ray's actor prefix, markdown quotes) keep the diagnosis and its facts."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.diagnose_root import root_finding as _root

# -- the caching allocator, every version: (line, gpu_index, requested_bytes) ---------------------------------

_ALLOCATOR = [
    # 1.4 - 2.0
    (
        "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; 14.24 GiB already allocated; 8.75 MiB free; 14.69 GiB reserved in total by PyTorch)",
        0,
        20 << 20,
    ),
    # 1.10 - 2.0 with the max_split_size_mb hint, torch.cuda.OutOfMemoryError since 1.13
    (
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB (GPU 1; 79.35 GiB total capacity; 75.91 GiB already allocated; 1.06 GiB free; 77.09 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF",
        1,
        3 << 29,
    ),
    # <= 1.3: "cached"
    (
        "RuntimeError: CUDA out of memory. Tried to allocate 58.00 MiB (GPU 2; 10.76 GiB total capacity; 9.61 GiB already allocated; 33.12 MiB free; 202.57 MiB cached)",
        2,
        58 << 20,
    ),
    # set_per_process_memory_fraction: "allowed"
    (
        "RuntimeError: CUDA out of memory. Tried to allocate 1.00 GiB (GPU 3; 31.75 GiB total capacity; 28.02 GiB already allocated; 1.14 GiB free; 29.00 GiB allowed; 29.50 GiB reserved in total by PyTorch)",
        3,
        1 << 30,
    ),
    # 2.1 (sic "capacty")
    (
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacty of 14.75 GiB of which 1.66 GiB is free. Process 414660 has 13.09 GiB memory in use. Of the allocated memory 10.09 GiB is allocated by PyTorch, and 1.92 GiB is reserved by PyTorch but unallocated.",
        0,
        2 << 30,
    ),
    # 2.2+ ("capacity", "this process has"), torch.OutOfMemoryError since 2.5
    (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 224.00 MiB. GPU 5 has a total capacity of 79.10 GiB of which 105.62 MiB is free. Including non-PyTorch memory, this process has 78.98 GiB memory in use. Of the allocated memory 76.23 GiB is allocated by PyTorch, and 1.29 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
        5,
        224 << 20,
    ),
    # ROCm: the hipified allocator
    (
        "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 6 has a total capacity of 191.98 GiB of which 1.03 GiB is free. Of the allocated memory 188.00 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated.",
        6,
        2 << 30,
    ),
]


@pytest.mark.parametrize(("line", "gpu", "requested"), _ALLOCATOR)
@pytest.mark.parametrize(
    "prefix",
    ["", "[rank3]: ", "worker-5: [rank3]: ", "(RayTrainWorker pid=4242, ip=10.0.0.1) [rank3]: ", "> "],
)
def test_allocator_oom_of_every_version_behind_every_prefix(
    line: str, gpu: int, requested: int, prefix: str
) -> None:
    root = _root(prefix + line + "\n")
    assert root is not None and root.category == "cuda_oom"
    assert root.facts["gpu_index"] == gpu and root.facts["requested_bytes"] == requested
    if "[rank3]" in prefix:
        assert root.facts["rank"] == 3


def test_allocator_oom_in_a_traceback_is_the_cause_not_the_crash_of_the_rank() -> None:
    log = (
        "[rank1]: Traceback (most recent call last):\n"
        '[rank1]:   File "train.py", line 88, in <module>\n'
        "[rank1]:     loss.backward()\n"
        "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 1 has a total "
        "capacity of 23.65 GiB of which 301.06 MiB is free. Including non-PyTorch memory, this process has 23.34 "
        "GiB memory in use. Of the allocated memory 22.10 GiB is allocated by PyTorch, and 812.00 MiB is reserved "
        "by PyTorch but unallocated.\n"
        "E0501 10:00:00.123000 140 torch/distributed/elastic/multiprocessing/api.py:826] failed (exitcode: 1) "
        "local_rank: 1 (pid: 4242) of binary: /usr/bin/python3\n"
    )
    root = _root(log)
    assert root.category == "cuda_oom" and root.facts["rank"] == 1 and root.facts["gpu_index"] == 1


def test_allocator_oom_in_the_elastic_root_cause_table() -> None:
    log = (
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
        "============================================================\n"
        "train.py FAILED\n"
        "------------------------------------------------------------\n"
        "Root Cause (first observed failure):\n"
        "[0]:\n"
        "  time      : 2024-01-01_10:00:00\n"
        "  host      : node1\n"
        "  rank      : 3 (local_rank: 3)\n"
        "  exitcode  : 1 (pid: 1234)\n"
        "  error_file: /tmp/torchelastic_x/attempt_0/3/error.json\n"
        "  traceback : Traceback (most recent call last):\n"
        '    File "train.py", line 10, in main\n'
        "  torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity "
        "of 79.10 GiB of which 1.05 GiB is free.\n"
        "============================================================\n"
    )
    root = _root(log)
    assert root.category == "cuda_oom" and root.facts["gpu_index"] == 3
    assert root.facts["requested_bytes"] == 2 << 30


# -- torch <= 0.4 and Lua torch: THC -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("log", "where"),
    [
        (
            "THCudaCheck FAIL file=/pytorch/torch/lib/THC/generic/THCStorage.cu line=58 error=2 : out of memory",
            "/pytorch/torch/lib/THC/generic/THCStorage.cu:58",
        ),
        (
            "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=663 error=2 : out of memory",
            "/pytorch/aten/src/THC/THCGeneral.cpp:663",
        ),
        (
            "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCCachingAllocator.cpp:510",
            "/pytorch/aten/src/THC/THCCachingAllocator.cpp:510",
        ),
        (
            "Exception in main training loop: cuda runtime error (2) : out of memory at /pytorch/torch/lib/THC/generic/THCStorage.cu:58",
            "/pytorch/torch/lib/THC/generic/THCStorage.cu:58",
        ),
        (
            "/home/u/torch/install/bin/luajit: ./net.lua:19: cuda runtime error (2) : out of memory at /home/u/torch/extra/cutorch/lib/THC/generic/THCStorage.cu:66",
            "/home/u/torch/extra/cutorch/lib/THC/generic/THCStorage.cu:66",
        ),
        # hard-wrapped by a terminal: the line number on the next line
        (
            "> THCudaCheck FAIL file=/home/jack/torch/extra/cutorch/lib/THC/generic/THCStorage.cu line=\n"
            "> 66 error=2 : out of memory \n",
            None,
        ),
    ],
)
def test_thc_out_of_memory_of_torch_0x_and_lua_torch(log: str, where: Any) -> None:
    root = _root(log + "\n")
    assert root is not None and root.category == "cuda_oom" and root.facts["cuda_error"] == 2
    if where:
        assert root.facts["where"] == where


def test_thc_oom_followed_by_an_unrelated_exception_at_exit_stays_the_cause() -> None:
    log = (
        "THCudaCheck FAIL file=/pytorch/torch/lib/THC/generic/THCStorage.cu line=58 error=2 : out of memory\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 387, in <module>\n'
        "    im_data.data.resize_(data[0].size()).copy_(data[0])\n"
        "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/torch/lib/THC/generic/THCStorage.cu:58\n"
        "Exception ignored in: <bound method DataLoaderIter.__del__ of <object at 0x7fa71cadc7f0>>\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.5/multiprocessing/queues.py", line 345, in get\n'
        "TypeError: 'NoneType' object is not iterable\n"
    )
    assert _root(log).category == "cuda_oom"


# -- other devices' allocators -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "fmt", "gpu", "requested"),
    [
        (
            "RuntimeError: XPU out of memory. Tried to allocate 2.00 GiB (GPU 1; 15.11 GiB total capacity; 12.00 GiB already allocated; 13.00 GiB reserved in total by PyTorch)",
            "xpu",
            1,
            2 << 30,
        ),
        (
            "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 4; 60.97 GiB total capacity; 58.20 GiB already allocated; 58.20 GiB current active; 1.02 GiB free; 59.31 GiB reserved in total by PyTorch)",
            "npu",
            4,
            2 << 30,
        ),
        (
            "RuntimeError: MPS backend out of memory (MPS allocated: 18.04 GB, other allocations: 1.06 MB, max allowed: 18.13 GB). Tried to allocate 256.00 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).",
            "mps",
            None,
            256_000_000,
        ),
    ],
)
def test_other_devices_allocators(line: str, fmt: str, gpu: Any, requested: int) -> None:
    root = _root(line + "\n")
    assert root.category == "cuda_oom" and root.facts["format"] == fmt
    assert root.facts.get("gpu_index") == gpu and root.facts["requested_bytes"] == requested


# -- torch.cuda.memory_summary() -----------------------------------------------------------------------------

_SUMMARY = (
    "|===========================================================================|\n"
    "|                  PyTorch CUDA memory summary, device ID 2                 |\n"
    "|---------------------------------------------------------------------------|\n"
    "|            CUDA OOMs: {ooms}            |        cudaMalloc retries: 4         |\n"
    "|===========================================================================|\n"
)


def test_memory_summary_with_ooms_is_the_oom_and_without_is_silent() -> None:
    root = _root(_SUMMARY.format(ooms=1))
    assert root.category == "cuda_oom" and root.facts["device"] == 2 and root.facts["cuda_ooms"] == 1
    assert _root(_SUMMARY.format(ooms=0)) is None


# -- NCCL's own CUDA allocations -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "log",
    [
        "node1:1234:1290 [3] include/alloc.h:48 NCCL WARN Cuda failure 'out of memory'",
        "node1:1234:1290 [3] NCCL WARN Cuda failure 2 'out of memory'",
        "[2024-06-01 10:00:00] node1:1234:1290 [3] include/alloc.h:225 NCCL WARN Cuda failure 2 'out of memory' (ncclCudaCalloc)",
        "node1:1234:1290 [3] include/alloc.h:103 NCCL WARN Failed to CUDA calloc 6291456 bytes",
        "node1:1234:1290 [3] include/alloc.h:125 NCCL WARN Failed to CUDA calloc async 2432 bytes",
        "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, unhandled cuda error, NCCL version 2.14.3\n"
        "ncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\nCuda failure 'out of memory'",
        "[rank2]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
        "[rank2]: ncclUnhandledCudaError: Call to CUDA function failed.\n[rank2]: Last error:\n"
        "[rank2]: Cuda failure 2 'out of memory'",
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: external/xla/xla/service/gpu/nccl_utils.cc:297: NCCL operation ncclCommInitRank(&comm, nranks, id, rank) failed: unhandled cuda error. Last NCCL warning(error) log entry (may be unrelated) 'Cuda failure 'out of memory''.",
        "node1: Test NCCL failure common.cu:1204 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / Cuda failure 'out of memory''\n"
        " .. node1 pid 12: Test failure common.cu:915",
        "node1: Test CUDA failure common.cu:733 'out of memory'\n .. node1 pid 1234: Test failure common.cu:401",
        "Failed: Cuda error example.cu:40 'out of memory'",
    ],
)
def test_nccl_and_its_tests_running_out_of_gpu_memory_is_cuda_oom_not_nccl(log: str) -> None:
    root = _root(log + "\n")
    assert root is not None and root.category == "cuda_oom", root and root.code


def test_nccl_oom_keeps_rank_and_bytes() -> None:
    root = _root(
        "[rank5]: node1:1234:1290 [5] include/alloc.h:103 NCCL WARN Failed to CUDA calloc 6291456 bytes\n"
    )
    assert root.category == "cuda_oom" and root.facts["requested_bytes"] == 6291456
    assert root.facts["rank"] == 5


# -- CUDA allocation calls and the math libraries --------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "reporter"),
    [
        ("RuntimeError: CUDA error: out of memory", "CUDA runtime"),
        (
            "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
            "cuBLAS",
        ),
        ("RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED", "cuDNN"),
        (
            "RuntimeError: cusolver error: CUSOLVER_STATUS_ALLOC_FAILED, when calling `cusolverDnCreate(handle)`",
            "cuSOLVER",
        ),
        ("RuntimeError: cuFFT error: CUFFT_ALLOC_FAILED", "cuFFT"),
        (
            "RuntimeError: CUDA error: CUSPARSE_STATUS_ALLOC_FAILED when calling `cusparseCreate(&handle)`",
            "cuSPARSE",
        ),
        (
            "numba.cuda.cudadrv.driver.CudaAPIError: [2] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY",
            "the CUDA driver",
        ),
        (
            "E tensorflow/stream_executor/cuda/cuda_driver.cc:806] failed to allocate 3.45G (3707310080 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
            "the CUDA driver",
        ),
        ("RuntimeError: cudaMalloc failed: out of memory", "cudaMalloc"),
        (
            "mxnet.base.MXNetError: [09:12:33] src/storage/./pooled_storage_manager.h:157: cudaMalloc failed: out of memory",
            "cudaMalloc",
        ),
        (
            "[TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory (/src/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmBuffers.h:125)",
            "cudaMallocAsync",
        ),
        ("cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorMemoryAllocation: out of memory", None),
    ],
)
def test_cuda_allocation_failures_of_every_library(line: str, reporter: Any) -> None:
    root = _root(line + "\n")
    assert root is not None and root.category == "cuda_oom"
    if reporter:
        assert root.facts["reported_by"] == reporter


# -- frameworks' own allocators and wrappers -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "fmt", "facts"),
    [
        (
            "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[32,512,512] and type float on /job:localhost/replica:0/task:0/device:GPU:1 by allocator GPU_1_bfc",
            "tensorflow",
            {"gpu_index": 1, "shape": "32,512,512"},
        ),
        (
            "W tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.22GiB (rounded to 1310720000)requested by op Conv2D",
            "tensorflow",
            {"gpu_index": 0},
        ),
        (
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 10737418240 bytes.",
            "xla",
            {"requested_bytes": 10737418240},
        ),
        (
            "XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 32.00MiB (33554432B) on device ordinal 2",
            "xla",
            {"requested_bytes": 33554432, "gpu_index": 2},
        ),
        (
            "RuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 20.55G of 15.48G hbm. Exceeded hbm capacity by 5.07G.",
            "xla",
            {"memory_space": "hbm"},
        ),
        (
            "RuntimeError: Resource exhausted: Attempting to reserve 10.5G at the bottom of memory. That was not possible. There are 7.8G free, 0B reserved, and 7.8G reservable.",
            "xla",
            {},
        ),
        (
            "Out of memory error on GPU 3. Cannot allocate 256.000244MB memory on GPU 3, 15.719727GB memory has been allocated and available memory is only 48.000000MB.",
            "paddle",
            {"gpu_index": 3},
        ),
        (
            "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 bytes (allocated so far: 0 bytes).",
            "cupy",
            {"requested_bytes": 1073741824},
        ),
        ("RuntimeError: No executable batch size found, reached zero.", "accelerate", {}),
        (
            "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
            "vllm_kv_cache",
            {},
        ),
        (
            "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (20000). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
            "vllm_kv_cache",
            {},
        ),
        (
            "ERROR 06-02 05:17:18 [core.py:387] ValueError: To serve at least one request with the models's max seq len (40960), (10.00 GiB KV cache is needed, which is larger than the available KV cache memory (1.25 GiB). Based on the available memory,  Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
            "vllm_kv_cache",
            {"kv_cache_needed_bytes": 10 << 30},
        ),
        (
            "ValueError: Free memory on device cuda:0 (10.53/79.19 GiB) on startup is less than desired GPU memory utilization (0.9, 71.27 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
            "vllm_startup",
            {"device": "cuda:0"},
        ),
    ],
)
def test_framework_allocators_and_wrappers(line: str, fmt: str, facts: dict[str, Any]) -> None:
    root = _root(line + "\n")
    assert root is not None and root.category == "cuda_oom" and root.facts["format"] == fmt
    for k, v in facts.items():
        assert root.facts[k] == v


def test_vllm_kv_cache_message_wrapped_over_lines() -> None:
    log = (
        "ValueError: To serve at least one request with the model's max seq len (131072),\n"
        "(5.07 GiB KV cache is needed, which is larger than the available KV cache memory (4.34 GiB)...\n"
    )
    root = _root(log)
    assert root is not None and root.category == "cuda_oom"


def test_ray_task_error_wrapping_a_cuda_oom() -> None:
    log = (
        "ray.exceptions.RayTaskError(OutOfMemoryError): ray::TrainTrainable.train() (pid=1234, ip=10.0.0.1)\n"
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total "
        "capacity; 14.24 GiB already allocated; 8.75 MiB free; 14.69 GiB reserved in total by PyTorch)\n"
    )
    root = _root(log)
    assert root.category == "cuda_oom" and root.facts["requested_bytes"] == 20 << 20


# -- what is not an OOM stays silent -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "log",
    [
        "W tensorflow/core/common_runtime/bfc_allocator.cc:239] Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.26GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.",
        "INFO 06-02 05:17:18 [gpu_worker.py:227] Available KV cache memory: 61.32 GiB",
        "INFO 06-02 05:17:18 [kv_cache_utils.py:634] GPU KV cache size: 1,004,640 tokens",
        "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True  # avoid fragmentation",
        "node1:1234:1234 [0] NCCL INFO NCCL version 2.20.5+cuda12.4",
        "  4294967296     134217728   float     sum      -1    29122  147.48  258.09      0    29169  147.24  257.67      0\n"
        " Out of bounds values : 0 OK\n Avg bus bandwidth    : 257.9",
    ],
)
def test_lookalikes_stay_silent(log: str) -> None:
    assert _root(log + "\n") is None


# -- NCCL usage and internal errors, every wrapping: (log, code) ------------------------------------------------


@pytest.mark.parametrize(
    ("log", "code"),
    [
        (
            "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, invalid usage, NCCL version 2.14.3\n"
            "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.",
            "RUN191",
        ),
        (
            "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, invalid argument (run with NCCL_DEBUG=WARN for details), NCCL version 2.20.5\n"
            "ncclInvalidArgument: Invalid value for an argument.",
            "RUN191",
        ),
        # torch's message with its head cut off (quoted in a PR or a title)
        (
            "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, internal error - please report this issue to the NCCL developers, NCCL version 2.19.3",
            "RUN192",
        ),
        (
            "torch/csrc/distributed/c10d/NCCLUtils.hpp:219, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.18.1",
            "RUN191",
        ),
        # NCCLCHECK macros of programs that call NCCL themselves
        (
            "Failed, NCCL error /src/tensorrt_llm/cpp/tensorrt_llm/plugins/ncclPlugin/allreducePlugin.cpp:295 'internal error - please report this issue to the NCCL developers'",
            "RUN192",
        ),
        (
            "RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: Failed, NCCL error ../tensorrt_llm/runtime/ncclCommunicator.cpp:90 'invalid usage (run with NCCL_DEBUG=WARN for details)'",
            "RUN191",
        ),
        (
            "Failed, NCCL error TransformerEngine/transformer_engine/pytorch/csrc/userbuffers/userbuffers-host.cpp:223 ''",
            "RUN192",
        ),
        ("Test NCCL failure common.cu:483 'internal error'", "RUN192"),
        (
            "nid006352: Test NCCL failure common.cu:958 'invalid usage (run with NCCL_DEBUG=WARN for details) / '\n"
            " .. nid006352 pid 1234: Test failure common.cu:842",
            "RUN191",
        ),
        (
            "HCA-128: Test NCCL failure common.cu:1204 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '\n"
            " .. HCA-128 pid 757466: Test failure common.cu:915",
            "RUN194",
        ),
        # the same macro's report repeated by every rank of one node, glued into one line by the reader
        (
            "\n".join(
                [
                    "> Failed, NCCL error /src/plugins/ncclPlugin/allreducePlugin.cpp:295 'internal error - please report this issue to the NCCL developers'"
                ]
                * 4
            ),
            "RUN192",
        ),
        (
            "node1:1234:1290 [0] init.cc:779 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1a000",
            "RUN193",
        ),
        ("cupy_backends.cuda.libs.nccl.NcclError: NCCL_ERROR_INVALID_USAGE: invalid usage", "RUN191"),
        ("horovod.common.exceptions.HorovodInternalError: ncclCommInitRank failed: invalid usage", "RUN191"),
        ("RuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)", "RUN191"),
        (
            "node1:1234:1290 [0] misc/argcheck.cc:40 NCCL WARN Reduce : invalid root 0 (root should be in the 0..0 range)",
            "RUN191",
        ),
        (
            "terminate called after throwing an instance of 'std::runtime_error'\n  what():  NCCL Error 4: invalid argument",
            "RUN191",
        ),
    ],
)
def test_nccl_usage_and_internal_errors_in_every_wrapping(log: str, code: str) -> None:
    root = _root(log + "\n")
    assert root is not None and root.category == "nccl_usage" and root.code == code


def test_nccl_check_macro_with_a_network_last_error_is_network() -> None:
    root = _root(
        "node1: Test NCCL failure common.cu:1005 'remote process exited or there was a network error / "
        "NET/IB : Got completion from peer 10.0.0.2<57926> with error 12, opcode 0, len 0, vendor err 129'\n"
    )
    assert root.category == "nccl_network" and root.facts["host"] == "node1"


def test_nccl_check_macro_keeps_host_and_site() -> None:
    root = _root("HCA-107: Test NCCL failure common.cu:1204 'invalid usage / '\n")
    assert root.facts["host"] == "HCA-107" and root.facts["where"] == "common.cu:1204"


def test_duplicate_gpu_names_both_ranks_and_the_reporting_one() -> None:
    root = _root(
        "node1:1234:1290 [0] init.cc:779 NCCL WARN Duplicate GPU detected : rank 3 and rank 2 both on CUDA device 4f000\n"
    )
    assert root.code == "RUN193" and root.facts["ranks"] == [2, 3] and root.facts["rank"] == 2
    assert root.facts["bus_id"] == "4f000"


# -- nccl-tests' result check: wrong values are RUN327 --------------------------------------------------------


@pytest.mark.parametrize(
    ("log", "sizes"),
    [
        # before 2.10: an "error" column of maximum deviations, no "# " before the summary
        (
            "all_gather_perf -g 8 -b 4294967296 -e 4294967296 -n 100\n"
            "       size         count    type     time   algbw   busbw  error     time   algbw   busbw  error\n"
            "        (B)    (elements)             (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
            "  4294967296     134217728   float    29122  129.05  129.05  1e+00    29169  128.84  128.84  1e+00\n"
            " Out of bounds values : 2 FAILED\n"
            " Avg bus bandwidth    : 128.942\n",
            [4294967296],
        ),
        # 2.10+: "#wrong" counts, redop and root columns
        (
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
            "     1048576        262144     float     sum      -1    61.20   17.13   29.98      0    60.98   17.20   30.09      0\n"
            "     2097152        524288     float     sum      -1    95.71   21.91   38.35     12    95.32   22.00   38.50      0\n"
            "# Out of bounds values : 12 FAILED\n"
            "# Avg bus bandwidth    : 34.23\n"
            "#\n"
            "# Collective test concluded: all_reduce_perf\n",
            [2097152],
        ),
    ],
)
def test_nccl_tests_wrong_results_in_both_table_formats(log: str, sizes: list[int]) -> None:
    root = _root(log)
    assert root.code == "RUN327" and root.category == "nccl_usage"
    assert root.facts["wrong_sizes_bytes"] == sizes and root.facts["wrong_values"] > 0


@pytest.mark.parametrize(
    ("line", "reporter"),
    [
        # glog CHECKs on a CUDA call (Caffe, PaddlePaddle 1.x, MXNet's mshadow), spconv's tensorview
        (
            "F0304 14:26:21.611594  4889 syncedmem.cpp:71] Check failed: error == cudaSuccess (2 vs. 0)  out of memory\n*** Check failure stack trace: ***",
            "a CUDA error check",
        ),
        ("Check failed: cudaSuccess == cudaStat (0 vs. 2) Cuda Error: out of memory", "a CUDA error check"),
        (
            "mxnet.base.MXNetError: [08:45:46] /home/travis/build/dmlc/mxnet-distro/mxnet-build/3rdparty/mshadow/mshadow/./stream_gpu-inl.h:184: Check failed: e == cudaSuccess: CUDA: out of memory",
            "a CUDA error check",
        ),
        (
            "RuntimeError: TensorStorage /io/include/tensorview/tensor.h 168\ncuda failed with error 2 out of memory. use CUDA_LAUNCH_BLOCKING=1 to get correct traceback.",
            "a CUDA error check",
        ),
        # ROCm's hipified c10 check
        ("RuntimeError: HIP error: out of memory", "HIP runtime"),
        # XLA's copy of the BFC allocator under JAX
        (
            "2024-01-01 10:00:00.000000: W external/xla/xla/tsl/framework/bfc_allocator.cc:482] Allocator (GPU_0_bfc) ran out of memory trying to allocate 4.00GiB (rounded to 4294967296)requested by op",
            "XLA",
        ),
        # the watchdog's rethrow of a CUDA OOM
        (
            "[rank3]:[E ProcessGroupNCCL.cpp:1182] [Rank 3] NCCL watchdog thread terminated with exception: CUDA error: out of memory",
            "CUDA runtime",
        ),
    ],
)
def test_cuda_allocation_checks_of_other_codebases(line: str, reporter: str) -> None:
    root = _root(line + "\n")
    assert root is not None and root.category == "cuda_oom" and root.facts["reported_by"] == reporter


def test_xla_oom_cut_by_a_terminal_after_out_keeps_the_bytes() -> None:
    log = (
        "[1] 2019-06-13 01:17:08.886805: E external/org_tensorflow/tensorflow/compiler/xla/python/local_client.cc:672] "
        "Execution of replica 0 failed: Resource exhausted: Out \n"
        "of memory while trying to allocate 5520758552 bytes.\n"
    )
    root = _root(log)
    assert root.category == "cuda_oom" and root.facts["requested_bytes"] == 5520758552


def test_bfc_allocator_names_the_gpu_and_the_rounded_request() -> None:
    root = _root(
        "2025-08-05 12:33:53.958194: W external/xla/xla/tsl/framework/bfc_allocator.cc:501] Allocator (GPU_2_bfc) "
        "ran out of memory trying to allocate 91.27GiB (rounded to 98000028160)requested by op \n"
    )
    assert root.category == "cuda_oom" and root.facts["gpu_index"] == 2
    assert root.facts["requested_bytes"] == 98000028160 and root.facts["reported_by"] == "XLA"


# -- a rank's GPU OOM is the cause of what the other ranks and the launcher report ------------------------------

_OOM_RANK3 = (
    "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 3 has a total "
    "capacity of 23.65 GiB of which 301.06 MiB is free.\n"
)


@pytest.mark.parametrize(
    "after",
    [
        # the peers wait in the collective the OOM rank never joins, then the launcher reaps it
        "[rank0]:[E1101 10:30:00.000000 1 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=1234, OpType=ALLREDUCE, NumelIn=1000, NumelOut=1000, Timeout(ms)=600000) ran for "
        "600012 milliseconds before timing out.\n"
        "E1101 10:30:02.000000 1 torch/distributed/elastic/multiprocessing/api.py:862] failed (exitcode: 1) "
        "local_rank: 3 (pid: 104) of binary: /usr/bin/python\n",
        # the peers see it go away
        "[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
        "remote process exited or there was a network error, NCCL version 2.20.5\n"
        "[rank0]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n"
        "[rank0]: Last error:\n[rank0]: socketProgress: Connection closed by remote peer node1<43210>\n",
    ],
)
def test_a_rank_oom_is_the_cause_of_the_peers_errors_and_the_exit(after: str) -> None:
    root = _root(_OOM_RANK3 + after)
    assert root.category == "cuda_oom" and root.facts["rank"] == 3 and root.facts["gpu_index"] == 3


def test_oom_behind_deepspeeds_host_prefix_keeps_rank_gpu_and_host() -> None:
    log = (
        "worker-5: [rank22]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 6 has a "
        "total capacity of 79.33 GiB of which 1.59 GiB is free.\n"
        "worker-5: [2024-11-01 10:00:00,000] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python', '-u', "
        "'main.py', '--local_rank=6'] exits with return code = 1\n"
    )
    root = _root(log)
    assert root.category == "cuda_oom"
    assert (root.facts["rank"], root.facts["gpu_index"], root.facts["host"]) == (22, 6, "worker-5")


def test_oom_in_an_elastic_json_error_file() -> None:
    import json

    tb = (
        'Traceback (most recent call last):\n  File "train.py", line 10, in main\n    loss.backward()\n'
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of "
        "79.10 GiB of which 1.05 GiB is free.\n"
    )
    log = json.dumps(
        {
            "message": {
                "message": "OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total "
                "capacity of 79.10 GiB of which 1.05 GiB is free.",
                "extraInfo": {"py_callstack": tb, "timestamp": "1700000000"},
            }
        }
    )
    root = _root(log + "\n")
    assert root.category == "cuda_oom" and root.facts["gpu_index"] == 3


# -- the device a collective runs on ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "log",
    [
        "[rank1]:[E1101 10:00:00.000000 1 ProcessGroupNCCL.cpp:2011] [PG ID 0 PG GUID 0(default_pg) Rank 1] Tensor found on device cuda:0 but backend constrained to cuda:1",
        "torch.distributed.DistBackendError: Attempt to perform collective on tensor not on device passed to init_process_group",
        "torch.distributed.DistBackendError: Not able to create/get the NCCL Communicator since the GPU devices are not known",
    ],
)
def test_a_collective_on_a_tensor_of_another_gpu_than_the_bound_one(log: str) -> None:
    root = _root(log + "\n")
    assert root.code == "RUN301" and root.category == "nccl_usage"


# -- the allocator's exception type without its message ------------------------------------------------------------


@pytest.mark.parametrize(
    "log",
    [
        "[rank0]: torch.OutOfMemoryError",
        "torch.cuda.OutOfMemoryError",
        '  File "train.py", line 10, in <module>\n    loss.backward()\ntorch.OutOfMemoryError: ',
        "ray.exceptions.RayTaskError(OutOfMemoryError): ray::RayTrainWorker._RayTrainWorker__execute() (pid=1234, ip=10.0.0.1)",
        "terminate called after throwing an instance of 'c10::OutOfMemoryError'",
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -6) local_rank: 3 (pid: 4242) of binary: /usr/bin/python\n"
        "terminate called after throwing an instance of 'c10::OutOfMemoryError'",
        "RuntimeError: Unable to find a valid cuDNN algorithm to run convolution",
    ],
)
def test_oom_exception_type_alone_and_cudnn_without_an_algorithm(log: str) -> None:
    root = _root(log + "\n")
    assert root is not None and root.category == "cuda_oom"


@pytest.mark.parametrize(
    "log",
    [
        "    except torch.cuda.OutOfMemoryError:",
        "if isinstance(e, torch.cuda.OutOfMemoryError):",
        # Ray's own host-memory kill is raised unwrapped: host_oom's, not a GPU OOM
        "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
    ],
)
def test_code_naming_the_type_and_rays_host_oom_are_not_a_gpu_oom(log: str) -> None:
    root = _root(log + "\n")
    assert root is None or root.category != "cuda_oom"


# -- NCCL's result by its number (PaddlePaddle, PPL, samples) and RCCL's hipified WARN -----------------------------


@pytest.mark.parametrize(
    ("log", "code"),
    [
        ("ExternalError: NCCL error(5), invalid usage. ", "RUN191"),
        ("OSError: (External) NCCL error(1), unhandled cuda error. ", "RUN194"),
        ("[ERROR] NCCL error(code:5) on (ncclCommInitRank)", "RUN191"),
        ("NCCL error(Err=3) at /src/comm.cu:120", "RUN192"),
    ],
)
def test_nccl_result_by_number(log: str, code: str) -> None:
    root = _root(log + "\n")
    assert root.category == "nccl_usage" and root.code == code


def test_nccl_result_by_number_with_a_network_last_error_is_network() -> None:
    root = _root(
        "ExternalError: NCCL error(2), unhandled system error. \nLast error:\n"
        "socketProgress: Connection closed by remote peer node1<43210>\n"
    )
    assert root.category == "nccl_network"


def test_rccl_hip_failure_out_of_memory() -> None:
    root = _root("node1:1:1 [0] NCCL WARN HIP failure 'out of memory'\n")
    assert root.category == "cuda_oom" and root.facts["reported_by"] == "RCCL"


def test_internal_error_returned_through_the_bootstrap_is_network() -> None:
    log = (
        "DisAI-4090-2:914454:914479 [1] NCCL INFO bootstrap.cc:312 -> 3\n"
        "DisAI-4090-2:914454:914479 [1] NCCL INFO init.cc:1493 -> 3\n"
        "DisAI-4090-2:914454:914454 [3] NCCL INFO group.cc:95 -> 3\n"
        "DisAI-4090-2: Test NCCL failure common.cu:961 'internal error - please report this issue to the NCCL developers / '\n"
        " .. DisAI-4090-2 pid 914454: Test failure common.cu:844\n"
    )
    assert _root(log).category == "nccl_network"


def test_internal_error_through_nccls_own_frames_stays_internal() -> None:
    log = (
        "node1:1:2 [0] NCCL INFO graph/search.cc:1049 -> 3\n"
        "node1:1:2 [0] NCCL INFO init.cc:1493 -> 3\n"
        "node1: Test NCCL failure common.cu:961 'internal error - please report this issue to the NCCL developers / '\n"
    )
    assert _root(log).code == "RUN192"
