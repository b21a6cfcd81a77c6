"""GPU memory exhaustion reported by stacks other than torch's caching allocator, and c10d's bare
"No backend type" sentence, each line written from the code that prints it (cited per row), behind the
prefixes real logs add. The real logs these rows were checked against are new/part8_oom.jsonl."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, root_finding

# (line, code, facts the root finding must carry)
_OTHER_STACKS: list[tuple[str, str, dict[str, Any]]] = [
    # TensorFlow 2.x eager op output (tensorflow/core/common_runtime/eager): keras-ocr#195
    (
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError: failed to allocate memory [Op:Mul]",
        "RUN101",
        {"reported_by": "TensorFlow"},
    ),
    # MIOpen src/hip/handlehip.cpp default_allocator (also MIGraphX, RPP): ROCm/MIOpen#47
    (
        "MIOpen Error: /data/repo/MIOpen/src/hip/handlehip.cpp:70: Memory not available to allocate buffer: 655360000",
        "RUN101",
        {"requested_bytes": 655360000},
    ),
    # Ascend CANN error code EL0004 (Memory_Allocation_Failure)
    (
        "[ERROR] RecentErrMsg: [PID: 1611576] 2026-03-24-12:14:32.900.217 Memory_Allocation_Failure(EL0004): Failed to allocate memory.",
        "RUN101",
        {"format": "ascend"},
    ),
    (
        "EL0004: Failed to allocate memory.",
        "RUN101",
        {"format": "ascend"},
    ),
    # MindSpore mem_dynamic_allocator.cc AddMemBlockAndMemBufByEagerFree (2.3+ with the event statistic)
    (
        "[ERROR] PRE_ACT(54175,fffdbcff91e0,python):2024-10-22-11:24:55.301.443 [mindspore/ccsrc/backend/common/mem_reuse/mem_dynamic_allocator.cc:392] AddMemBlockAndMemBufByEagerFree] TotalUsedMemStatistics : 29356337664 plus TotalUsedByEventMemStatistics : 0 and plus alloc size : 301990400 is more than total mem size : 29464985600.",
        "RUN101",
        {"requested_bytes": 301990400, "total_bytes": 29464985600},
    ),
    # the same, before the event statistic existed
    (
        "[ERROR] DEVICE(1,ffff,python):2023-01-01-00:00:00.000.000 [mindspore/ccsrc/backend/common/mem_reuse/mem_dynamic_allocator.cc:300] AddMemBlockAndMemBuf] TotalUsedMemStatistics : 100 plus alloc size : 2147483648 is more than total mem size : 1073741824.",
        "RUN101",
        {"requested_bytes": 2147483648},
    ),
    # SGLang model_runner.py init_memory_pool / pool_configurator.py: sglang#4330
    (
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
        "RUN101",
        {"format": "sglang"},
    ),
    # TensorRT nvinfer1 allocators (virtualMemoryBuffer.cpp, executionContext.cpp, myelinResourceManager.cpp)
    (
        "[03/13/2026-13:17:50] [TRT] [E] [virtualMemoryBuffer.cpp::nvinfer1::StdVirtualMemoryBufferImpl::resizePhysical::154] Error Code 2: OutOfMemory (Requested size was 2833252352 bytes.)",
        "RUN101",
        {"requested_bytes": 2833252352},
    ),
    (
        "[E] 2: [virtualMemoryBuffer.cpp::nvinfer1::StdVirtualMemoryBufferImpl::resizePhysical::140] Error Code 2: OutOfMemory (no further information)",
        "RUN101",
        {"format": "tensorrt"},
    ),
    (
        "[TRT] [W] Requested amount of GPU memory (57662592 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.",
        "RUN101",
        {"requested_bytes": 57662592},
    ),
    # Intel Gaudi PyTorch bridge (habana_frameworks PT_DEVMEM)
    (
        "RuntimeError: [Rank:0] FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed for size::939524096 (896)MB",
        "RUN101",
        {"requested_bytes": 939524096},
    ),
    # Intel GPU: SYCL Unified Runtime / Level Zero statuses
    (
        "strata/sycl: memcpy failed: level_zero backend failed with error: 39 (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)",
        "RUN101",
        {"format": "xpu"},
    ),
    ("RuntimeError: ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", "RUN101", {"format": "xpu"}),
    # torch's hipified cuBLAS check on ROCm
    (
        "RuntimeError: CUDA error: HIPBLAS_STATUS_ALLOC_FAILED when calling `hipblasCreate(handle)`",
        "RUN101",
        {"reported_by": "hipBLAS"},
    ),
    # a C++ wrapper's what() naming only the HIP / CUDA runtime enum
    ("  what():  hipMalloc failed: hipErrorOutOfMemory", "RUN101", {}),
    ("  what():  cudaMalloc returned cudaErrorMemoryAllocation", "RUN101", {}),
    # vLLM worker/gpu_worker.py before the device was named (<= 0.9): vllm#20305, vllm-omni#276
    (
        "ValueError: Free memory on device (31.44/47.38 GiB) on startup is less than desired GPU memory utilization (0.95, 45.01 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
        "RUN101",
        {"format": "vllm_startup", "likely_cause": "other_process"},
    ),
    # and after (>= 0.10): pytorch#175666
    (
        "(EngineCore_DP0 pid=6940) ValueError: Free memory on device cuda:1 (19.77/22.05 GiB) on startup is less than desired GPU memory utilization (0.9, 19.84 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
        "RUN101",
        {"device": "cuda:1"},
    ),
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize("line,code,facts", _OTHER_STACKS)
def test_device_memory_exhaustion_of_other_stacks(
    prefix: str, line: str, code: str, facts: dict[str, Any]
) -> None:
    root = root_finding(prefix + line + "\n")
    assert root is not None and root.code == code, (line, root)
    for k, v in facts.items():
        assert root.facts.get(k) == v, (line, k, root.facts)


def test_tensorflow_eager_oom_stays_the_cause_over_the_bfc_chunk_dump() -> None:
    log = (
        "ResourceExhaustedError: failed to allocate memory [Op:AddV2]\n"
        "2022-02-11 12:56:42.783555: I tensorflow/core/common_runtime/bfc_allocator.cc:1066] InUse at 703b12d00 of size 256 next 275\n"
    )
    root = root_finding(log)
    assert root is not None and root.code == "RUN101"


# c10d ProcessGroup.hpp getBackend (2.0+): the sentence alone, as an issue title or a one-line summary
# quotes it (mistral-inference#252: "[BUG: No backend type associated with device type cpu").
@pytest.mark.parametrize(
    "line",
    [
        "[BUG: No backend type associated with device type cpu",
        "No backend type associated with device type cpu",
        "[rank1]: RuntimeError: No backend type associated with device type cpu",
    ],
)
def test_no_backend_for_cpu_tensors_alone(line: str) -> None:
    root = root_finding(line + "\n")
    assert root is not None and root.category == "nccl_usage", root


@pytest.mark.parametrize(
    "line",
    [
        # healthy lines that share words with the rows above
        "[TRT] [I] [MemUsageChange] Init CUDA: CPU +2, GPU +0, now: CPU 1000, GPU 2000 (MiB)",
        "INFO 06-30 13:53:19 [gpu_worker.py:180] Free memory on device (70.10/79.15 GiB) at startup",
        "[2025-03-29 18:18:34 TP0] Load weight end. type=Gemma3, dtype=torch.bfloat16, avail mem=10.00 GB, mem usage=14.00 GB.",
        "[INFO] RUNTIME(1234,python):2023-01-01-12:00:00.000.000 rtMalloc size 1024 ok",
        "mem_fraction_static=0.88 --mem-fraction-static default used",
    ],
)
def test_healthy_neighbours_stay_silent(line: str) -> None:
    assert root_finding(line + "\n") is None


# ps-lite include/ps/kv_app.h KVWorker::Pull_ checks (MXNet 3rdparty/ps-lite, BytePS), glog's format
@pytest.mark.parametrize(
    "line,got",
    [
        (
            "  what():  [05:33:59] /work/mxnet/3rdparty/ps-lite/include/ps/kv_app.h:587: Check failed: lens->size() == keys.size() (2 vs. 1) ",
            2,
        ),
        ("[12:00:00] include/ps/kv_app.h:520: Check failed: vals->size() == total_val (10 vs. 20)", 10),
    ],
)
def test_ps_lite_pull_size_mismatch(line: str, got: int) -> None:
    root = root_finding("terminate called after throwing an instance of 'dmlc::Error'\n" + line + "\n")
    assert root is not None and root.code == "RUN345", root
    assert root.facts.get("got") == got and root.facts.get("framework") == "ps-lite"


def test_ps_lite_lost_servers_check_is_not_a_pull_mismatch() -> None:
    root = root_finding(
        "[12:00:00] include/ps/kv_app.h:505: Check failed: (total_key) == (keys.size()) lost some servers?\n"
    )
    assert root is None or root.code != "RUN345"
