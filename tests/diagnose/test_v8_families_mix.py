"""Families read at their source for collective mismatches, CUDA OOM, killed processes and the
illegal-access false alarm, each in the prefixes and wrappings real logs put around them: Horovod's
shutdown error (horovod/common/operations.cc), fairseq's all_gather_list check, the CUDA math
libraries' ALLOC_FAILED statuses as TensorFlow's stream executor logs them, torch elastic's failure
record re-typed in lower case, and a sticky CUDA fault reported next to a profiler's own error."""

from __future__ import annotations

from typing import Optional

import pytest

from tests.helpers.diagnose_root import root_finding as _root


def _code(log: str) -> Optional[str]:
    root = _root(log)
    return root.code if root is not None else None


_HVD_NEW = (
    "Horovod has been shut down. This was caused by an exception on one of the ranks or an attempt to "
    "allreduce, allgather or broadcast a tensor after one of the ranks finished execution. If the shutdown "
    "was caused by an exception, you should see the exception in the log before the first shutdown message."
)
_HVD_OLD = (
    "Horovod has been shut down. This has been caused by an exception on one of the rank or an attempt to "
    "allreduce, allgather or broadcast a tensor after one of the ranks has finished execution."
)
_FAIRSEQ = (
    "Exception: Unable to unpickle data from other workers. all_gather_list requires all workers to enter "
    "the function together, so this error usually indicates that the workers have fallen out of sync "
    "somehow. Workers can fall out of sync if one of them runs out of memory, or if there are other "
    "conditions in your training script that can cause one worker to finish an epoch while other workers "
    "are still iterating over their portions of the data."
)


@pytest.mark.parametrize(
    "line",
    [
        f"[1,3]<stderr>:{_HVD_NEW}",
        f"horovod.common.exceptions.HorovodInternalError: {_HVD_NEW}",
        f"tensorflow.python.framework.errors_impl.FailedPreconditionError: {_HVD_OLD}",
        f"[rank2]: RuntimeError: {_HVD_NEW}",
        f"2023-01-01 12:00:00 ERROR {_HVD_OLD}",
    ],
)
def test_horovod_shutdown_without_an_exception_is_a_collective_mismatch(line: str) -> None:
    assert _code(line + "\n") == "RUN201"


def test_horovod_shutdown_after_a_ranks_own_error_names_that_error() -> None:
    log = (
        "[1,1]<stderr>:RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 15.78 GiB total "
        "capacity; 13.20 GiB already allocated; 1.02 GiB free; 13.50 GiB reserved in total by PyTorch)\n"
        f"[1,0]<stderr>:{_HVD_NEW}\n"
    )
    assert _code(log) == "RUN101"


@pytest.mark.parametrize(
    "log",
    [
        "Traceback (most recent call last):\n"
        '  File "fairseq/distributed_utils.py", line 177, in all_gather_list\n'
        "    result.append(pickle.loads(bytes(out_buffer[header_size:header_size + enc_size].tolist())))\n"
        "_pickle.UnpicklingError: invalid load key, '\\xe2'.\n\n"
        "During handling of the above exception, another exception occurred:\n\n" + _FAIRSEQ + "\n",
        f"-- Process 1 terminated with the following error:\n{_FAIRSEQ}\n",
        f"[rank3]: {_FAIRSEQ}\n",
        "2021-05-01 10:00:00 | ERROR | fairseq.trainer | " + _FAIRSEQ + "\n",
    ],
)
def test_fairseq_all_gather_list_out_of_sync_is_a_collective_mismatch(log: str) -> None:
    assert _code(log) == "RUN201"


@pytest.mark.parametrize(
    "line",
    [
        "2020-09-24 18:27:41.164048: E tensorflow/stream_executor/cuda/cuda_blas.cc:225] failed to create "
        "cublas handle: CUBLAS_STATUS_ALLOC_FAILED",
        "2020-09-24 18:27:41.164048: E tensorflow/stream_executor/cuda/cuda_dnn.cc:328] Could not create "
        "cudnn handle: CUDNN_STATUS_ALLOC_FAILED",
        "E0101 12:00:00.000000 1234 cuda_blas.cc:190] failed to create cublas handle: "
        "CUBLAS_STATUS_ALLOC_FAILED",
        "[rank1]: RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
    ],
)
def test_math_library_alloc_failed_without_an_exception_is_cuda_oom(line: str) -> None:
    assert _code(line + "\n") == "RUN101"


@pytest.mark.parametrize(
    "line",
    [
        "traceback : signal 9 (SIGKILL) received by PID 36071",
        "  traceback : Signal 9 (SIGKILL) received by PID 36071",
        "[0]:traceback : signal 9 (SIGKILL) received by PID 811",
    ],
)
def test_elastic_sigkill_record_in_either_case_is_a_killed_rank(line: str) -> None:
    log = (
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
        "train.py FAILED\n"
        "rank2 (local rank: 2)exitcode: -9 (pid: 36071)error file: <N/A>\n" + line + "\n"
    )
    assert _code(log) == "RUN121"


_NVPROF = (
    "==102728== NVPROF is profiling process 102728, command: ./all_reduce_perf -g 4\n"
    "#  Rank  0 on     node7 device  0 [0x04] Tesla V100-SXM2-16GB\n"
    "Cuda failure common.cu:510 'an illegal memory access was encountered'\n"
    "==102728== Error: Internal profiling error 4054:1.\n"
    "======== Error: CUDA profiling error.\n"
)


def test_illegal_access_reported_with_the_profilers_own_error_is_no_failure() -> None:
    assert _root(_NVPROF) is None
    cupti = "RuntimeError: CUDA error: an illegal memory access was encountered\nCUPTI_ERROR_UNKNOWN\n"
    assert _root(cupti) is None


@pytest.mark.parametrize(
    "log",
    [
        "Cuda failure common.cu:510 'an illegal memory access was encountered'\n",
        "==1== NVPROF is profiling process 1, command: ./all_reduce_perf -g 4\n"
        "RuntimeError: CUDA error: an illegal memory access was encountered\n",
    ],
)
def test_illegal_access_without_a_profiler_error_stays_a_gpu_fault(log: str) -> None:
    assert _code(log) == "RUN244"


@pytest.mark.parametrize(
    "line",
    [
        "[ERROR] TBE Subprocess[task distribute] raise error[], main process disappeared!",
        "[ERROR] TBE Subprocess(task distribute] raise error[], main process disappeared!",
        "[ERROR] TBE(12345,python):2024-01-01-12:00:00.000.000 [parallel_compilation.py:100][subprocess] "
        "TBE Subprocess[task distribute] raise error[], main process disappeared!",
    ],
)
def test_cann_compile_workers_losing_their_main_process_is_a_crash(line: str) -> None:
    assert _code(line + "\n") == "RUN133"


def test_cann_compile_workers_after_a_known_cause_name_that_cause() -> None:
    log = (
        "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total capacity; "
        "13.20 GiB already allocated; 1.02 GiB free; 13.50 GiB reserved in total by PyTorch)\n"
        "[ERROR] TBE Subprocess[task distribute] raise error[], main process disappeared!\n"
    )
    assert _code(log) == "RUN101"
