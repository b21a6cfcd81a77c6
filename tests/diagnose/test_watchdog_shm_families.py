"""CUDA launch-timeout and NCCL shared-memory registration families, read at their sources:

- CUDA's cudaErrorLaunchTimeout (driver_types.h / cudaGetErrorString, CUDA 9-12: 702, 6 before CUDA 10.1)
  "the launch timed out and was terminated", the driver's CUDA_ERROR_LAUNCH_TIMEOUT (cuda.h), HIP's
  hipErrorLaunchTimeOut (hip_runtime_api.h), under torch's "CUDA error: ..." (c10/cuda/CUDAException.h),
  torch 0.4-1.x THCudaCheck "cuda runtime error (6) : ...", NCCL's CUDACHECK "Cuda failure '...'"
  (2.4-2.11) / "Cuda failure 702 '...'" (2.12+), CuPy's CUDADriverError: RUN342 (the display watchdog);
- NCCL's SHM transport registering its /dev/shm segment with CUDA: shmOpen's cudaHostRegister in
  include/shm.h (2.4-2.11, caller transport/shm.cu / shm.cc) and ncclShmOpen's in misc/shmutils.cc (2.12+),
  whose CUDACHECK prints "<file>:<line> NCCL WARN Cuda failure 'invalid argument'": RUN171.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = ["", "[rank3]: ", "node7: ", "[1,0]<stderr>:"]

TIMEOUT_CASES = [
    "RuntimeError: CUDA error: the launch timed out and was terminated",
    "what():  CUDA error: the launch timed out and was terminated (insert_events at /opt/conda/conda-bld/"
    "pytorch_1556653099582/work/c10/cuda/CUDACachingAllocator.cpp:564)",
    "RuntimeError: cuda runtime error (6) : the launch timed out and was terminated at "
    "/pytorch/aten/src/THC/THCCachingHostAllocator.cpp:265",
    "host1:1234:1250 [0] enqueue.cc:123 NCCL WARN Cuda failure 'the launch timed out and was terminated'",
    "host1:1234:1250 [0] NCCL WARN Cuda failure 702 'the launch timed out and was terminated'",
    "cupy_backends.cuda.api.driver.CUDADriverError: CUDA_ERROR_LAUNCH_TIMEOUT: the launch timed out and was "
    "terminated",
    "RuntimeError: HIP error: hipErrorLaunchTimeOut",
    "RuntimeError: CUDA driver error: cudaErrorLaunchTimeout",
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line", TIMEOUT_CASES)
def test_launch_timeout_family(prefix: str, line: str) -> None:
    _check(prefix + line + "\n", "RUN342", {"cuda_error_number": 702})


SHM_CASES = [
    # NCCL 2.4 (horovod/horovod#893)
    "heinzel135:151780:151928 [2] include/shm.h:42 NCCL WARN Cuda failure 'invalid argument'\n"
    "heinzel135:151780:151928 [2] NCCL INFO transport/shm.cu:187 -> 1\n"
    "heinzel135:151780:151928 [2] NCCL INFO init.cu:658 -> 1\n",
    # NCCL 2.12+ misc/shmutils.cc, with the error number
    "node1:200:300 [1] misc/shmutils.cc:97 NCCL WARN Cuda failure 1 'invalid argument'\n"
    "node1:200:300 [1] NCCL INFO transport/shm.cc:386 -> 1\n",
    "node1:200:300 [1] misc/shmutils.cc:97 NCCL WARN Cuda failure 712 'part or all of the requested memory "
    "range is already mapped'\n",
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("log", SHM_CASES)
def test_shm_register_family(prefix: str, log: str) -> None:
    text = "".join(prefix + ln + "\n" for ln in log.splitlines())
    _check(text, "RUN171", {"likely_cause": "shared_memory"})


def test_shm_register_out_of_memory_is_oom() -> None:
    root = _root("node1:200:300 [1] misc/shmutils.cc:97 NCCL WARN Cuda failure 2 'out of memory'\n")
    assert root is None or root.code != "RUN171"


@pytest.mark.parametrize(
    "line",
    [
        "launch timed out waiting for workers",
        "INFO: kernel launch timeout set to 30 s",
    ],
)
def test_quiet(line: str) -> None:
    assert _root(line + "\n") is None


# NCCL's CUDACHECK answering 999 cudaErrorUnknown inside communicator creation (include/alloc.h's
# cudaHostAlloc / cudaMalloc under channel.cc / transport setup): the INFO return chain (NCCL_DEBUG=INFO)
# runs through init.cc (2.9+) or init.cu (2.4-2.8): RUN313 (driver_env), e.g. huggingface/finetrainers#344.
INIT_999 = [
    "h:1:2 [0] include/alloc.h:112 NCCL WARN Cuda failure 999 'unknown error'\n"
    "h:1:2 [0] NCCL INFO include/alloc.h:199 -> 1\n"
    "h:1:2 [0] NCCL INFO channel.cc:41 -> 1\n"
    "h:1:2 [0] NCCL INFO init.cc:526 -> 1\n",
    "h:1:2 [0] include/alloc.h:41 NCCL WARN Cuda failure 'unknown error'\n"
    "h:1:2 [0] NCCL INFO transport/p2p.cu:210 -> 1\n"
    "h:1:2 [0] NCCL INFO init.cu:658 -> 1\n",
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("log", INIT_999)
def test_unknown_error_in_comm_init(prefix: str, log: str) -> None:
    text = "".join(prefix + ln + "\n" for ln in log.splitlines())
    _check(text, "RUN313", {"cuda_error_code": 999})


def test_unknown_error_in_a_collective_is_not_init() -> None:
    root = _root(
        "h:1:2 [0] enqueue.cc:1040 NCCL WARN Cuda failure 999 'unknown error'\n"
        "h:1:2 [0] NCCL INFO enqueue.cc:1060 -> 1\n"
        "h:1:2 [0] NCCL INFO group.cc:418 -> 1\n"
    )
    assert root is not None and root.code != "RUN313"


# torch_npu's HCCL_CHECK_ERROR raise inside an operation (ProcessGroupHCCL.cpp: "<fn>:<file>:<line> HCCL
# function error: <call>, error code is N"; older torch_npu "OPS function error: HcclAllreduce, error code is
# N"), with HcclResult (CANN hccl_types.h) 1 HCCL_E_PARA, 2 HCCL_E_PTR, 5 HCCL_E_NOT_SUPPORT: RUN191.
HCCL_OP_USAGE = [
    (
        "RuntimeError: operator():build/CMakeFiles/torch_npu.dir/compiler_depend.ts:56 HCCL function error: "
        "HcclAllreduce(send_buffer, recv_buffer, numel, hccl_data_type, hccl_reduce_op, comm, "
        "stream.stream(false)), error code is 1",
        1,
    ),
    (
        "RuntimeError: operator():build/CMakeFiles/torch_npu.dir/compiler_depend.ts:82 HCCL function error: "
        "HcclAllGather(inputDataPtr, outputDataPtr, numel, hcclType, comm, stream.stream(false)), "
        "error code is 5",
        5,
    ),
    ("RuntimeError: OPS function error: HcclBroadcast, error code is 2", 2),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(("line", "num"), HCCL_OP_USAGE)
def test_hccl_op_usage(prefix: str, line: str, num: int) -> None:
    _check(prefix + line + "\n", "RUN191", {"hccl_error": num})


def test_hccl_op_internal_stays_bare() -> None:
    root = _root(
        "RuntimeError: operator():build/CMakeFiles/torch_npu.dir/compiler_depend.ts:56 HCCL function error: "
        "HcclAllreduce(send_buffer, recv_buffer, numel, hccl_data_type, hccl_reduce_op, comm, "
        "stream.stream(false)), error code is 4\n"
    )
    assert root is None or root.code != "RUN191"
