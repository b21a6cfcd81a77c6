"""torch's CUDA-only distributed and memory texts, read in the strings of the CUDA builds' libraries
(libtorch_cuda*.so / libc10_cuda.so of torch 1.13.1, 2.1.2, 2.6.0, 2.9.1; libc10.so of 2.13 for the allocator
settings parsed in c10/core since 2.9), written as users paste them:

- ProcessGroupNCCL.cpp watchdog / heartbeat monitor (1.13-2.9): the watchdog's record, "Exception (either an
  error or timeout) detected by watchdog", "Timeout at NCCL work", 2.x "To avoid data inconsistency, we are
  taking the entire process down." on its own line, 2.4+ "Terminating the process after attempting to dump
  debug info, due to ProcessGroupNCCL watchdog hang.", 2.3-2.4 "Received a global timeout from another rank",
  blocking wait (NCCL_BLOCKING_WAIT=1 / 2.9 "timed out in blocking wait."): RUN151 / RUN152;
- ProcessGroupNCCL health check (1.13-2.1): RUN363; "ProcessGroupNCCL is only supported with GPUs, no GPUs
  found!": RUN262; NCCLUtils "Duplicate GPU detected": RUN193;
- ProcessGroupNCCL tensor checks (2.1-2.9): "Tensors for P2P must be non-overlapping and dense", "Did you call
  end_coalescing before start_coalescing?", "<op> tensors are not at the same device, found input tensor at
  ...": the c10d tensor-check row (RUN191, nccl_usage);
- CUDACachingAllocator / CUDAAllocatorConfig / CUDAMallocAsyncAllocator (1.13-2.9): OOM wrappers (RUN101,
  RUN103), the settings' checks and what expandable segments / cudaMallocAsync cannot do: RUN366;
- c10/cuda device checks: "CUDA driver version is insufficient" (RUN261), torch 2.8+'s torch.AcceleratorError
  wrapper (RUN101, RUN264).
Warnings of a healthy run (eager-init P2P serialisation, "Guessing device ID", barrier's "using GPU 0",
IntraNodeComm skips, the CUDA IPC channel not viable, TORCH_NCCL_DESYNC_DEBUG enabling async error
handling) stay silent.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, prefixed
from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

_PG = "[PG ID 0 PG GUID 0(default_pg) Rank 3] "
_P26 = "[rank3]:[E1206 10:00:00.123456 1234 ProcessGroupNCCL.cpp:616] "
_W = "WorkNCCL(SeqNum=42, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=600000) "

CASES = [
    (_P26 + "[Rank 3] To avoid data inconsistency, we are taking the entire process down.", "RUN151", {}),
    (
        "[rank0]:[F1206 10:00:00.123456 1234 ProcessGroupNCCL.cpp:1595] " + _PG + _PG + "Terminating the "
        "process after attempting to dump debug info, due to ProcessGroupNCCL watchdog hang.",
        "RUN152",
        {},
    ),
    (
        "[rank1]:[E1206 10:00:00.123456 1234 ProcessGroupNCCL.cpp:1316] [PG 0 Rank 1] Received a global "
        "timeout from another rank and will start to dump the debug info. Last enqueued NCCL work: 10, last "
        "completed NCCL work: 9.",
        "RUN151",
        {"last_enqueued": 10, "last_completed": 9},
    ),
    (
        _P26 + _PG + "Timeout at NCCL work: 42, last enqueued NCCL work: 42, last completed NCCL work: 41.",
        "RUN151",
        {},
    ),
    (
        "terminate called after throwing an instance of 'c10::DistBackendError'\n  what():  "
        + _PG
        + "Process group watchdog thread terminated with exception: [Rank 3] Watchdog caught collective "
        "operation timeout: " + _W + "ran for 600012 milliseconds before timing out.",
        "RUN151",
        {},
    ),
    (
        "torch.distributed.DistBackendError: "
        + _PG
        + "Work WorkNCCL(SeqNum=3, OpType=ALLREDUCE, NumelIn=10, "
        "NumelOut=10, Timeout(ms)=60000) timed out in blocking wait.",
        "RUN151",
        {},
    ),
    (
        "RuntimeError: ProcessGroupNCCL: Health check failure: Failed to initialize NCCL "
        "communicator on rank 3",
        "RUN363",
        {"health_check": True},
    ),
    (
        "torch.distributed.DistBackendError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!",
        "RUN262",
        {},
    ),
    ("RuntimeError: Tensors for P2P must be non-overlapping and dense", "RUN191", {}),
    ("RuntimeError: Somthing went wrong. Did you call end_coalescing before start_coalescing?", "RUN191", {}),
    (
        "ValueError: reduce_scatter_tensor tensors are not at the same device, found input tensor at cuda:0 "
        "and output tensor at cuda:1",
        "RUN191",
        {},
    ),
    ("RuntimeError: Color must be a non-negative value or NCCL_SPLIT_NOCOLOR (-1), but got -2", "RUN191", {}),
    (
        "RuntimeError: NCCL communicator has not been initialized before mem pool creation. You can pass "
        "`device_id` to init_process_group -- one way of eager initialization -- to work around this issue",
        "RUN191",
        {},
    ),
    (
        "RuntimeError: Unrecognized CachingAllocator option: expandable_segment",
        "RUN366",
        {"setting": "expandable_segment"},
    ),
    (
        "RuntimeError: Unrecognized key 'expandable_segment' in Accelerator allocator config.",
        "RUN366",
        {"setting": "expandable_segment"},
    ),
    (
        "RuntimeError: CachingAllocator option max_split_size_mb too small, must be > 20",
        "RUN366",
        {"setting": "max_split_size_mb"},
    ),
    ("RuntimeError: Expected a single True/False argument for expandable_segments", "RUN366", {}),
    ("RuntimeError: Error, expecting roundup_power2_divisions value", "RUN366", {}),
    ("RuntimeError: garbage_collect_threshold too big, set it 0.0~1.0", "RUN366", {}),
    ("RuntimeError: Error parsing CachingAllocator settings, expected :", "RUN366", {}),
    ("RuntimeError: Unknown allocator backend, options are native and cudaMallocAsync", "RUN366", {}),
    (
        "RuntimeError: backend:cudaMallocAsync requires CUDA runtime 11.4 or newer, but cudaDriverGetVersion "
        "returned 11020",
        "RUN366",
        {"setting": "backend:cudaMallocAsync"},
    ),
    (
        "RuntimeError: cudaMallocAsync does not yet support shareIpcHandle. If you need it, please file an "
        "issue describing your use case.",
        "RUN366",
        {"api": "shareIpcHandle"},
    ),
    (
        "RuntimeError: Tensors allocated with expandable_segments:True cannot be shared between processes. "
        "Consider using expandable_segments:False in data loading workers via "
        "torch.cuda.memory._set_allocator_settings('expandable_segments:False')",
        "RUN366",
        {"setting": "expandable_segments:True"},
    ),
    (
        "RuntimeError: The kernel on this machine does not support the pidfd_open syscall needed to use IPC "
        "for CUDA tensors when expandable_segments:True is set. Consider using expandable_segments:False via "
        "torch.cuda.memory._set_allocator_settings('expandable_segments:False') for this allocation.",
        "RUN366",
        {"syscall": "pidfd_open"},
    ),
    (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 "
        "has a total capacity of "
        "23.65 GiB of which 10.06 MiB is free. Process 12345 has 20.00 GiB memory in use. Including "
        "non-PyTorch memory, this process has 3.62 GiB memory in use.",
        "RUN103",
        {},
    ),
    (
        "torch.cuda.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)\n"
        "Currently allocated     : 10.00 GiB\nRequested               : 2.00 GiB",
        "RUN101",
        {},
    ),
    ("torch.AcceleratorError: CUDA error: out of memory", "RUN101", {}),
    ("RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version", "RUN261", {}),
    (
        "torch.AcceleratorError: CUDA error: invalid device ordinal\nGPU device may be out of range, do you "
        "have enough GPUs?",
        "RUN264",
        {},
    ),
]


@pytest.mark.parametrize("log,code,facts", CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_torch_cuda_text(log: str, code: str, facts: dict) -> None:
    _check(log, code, facts)


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize("log,code", [(c[0], c[1]) for c in CASES if c[1] == "RUN366"][:4])
def test_allocator_settings_behind_prefixes(prefix: str, log: str, code: str) -> None:
    _check(prefixed(prefix, log), code)


SILENT = [
    # a dump requested through the store prints it in a healthy run too (test_torch_message_audit)
    _P26 + _PG + "Observed flight recorder dump signal from another rank via TCPStore.",
    "[rank0]:[W1206 10:00:00.123456 1234 ProcessGroupNCCL.cpp:4000] Warning: An unbatched P2P op (send/recv) "
    "was called on this ProcessGroup with size 4.  In eager initialization mode, "
    "unbatched P2P ops are treated "
    "as independent collective ops, and are thus serialized with all other ops on "
    "this ProcessGroup, including "
    "other P2P ops. To avoid serialization, either create additional independent "
    "ProcessGroups for the P2P ops "
    "or use batched P2P ops. You can squash this warning by setting the environment variable "
    "TORCH_NCCL_SHOW_EAGER_INIT_P2P_SERIALIZATION_WARNING to false. (function operator())",
    "[rank0]:[W1206 10:00:00.123456 1234 ProcessGroupNCCL.cpp:1234] Guessing device ID based on global rank. "
    "This can cause a hang if rank to GPU mapping is heterogeneous. You can specify device_id in "
    "init_process_group()",
    "[rank1]:[W1206 10:00:00.1 1 intra_node_comm.cpp:123] Skipping IntraNodeComm::rendezvous() because "
    "participants have overlapping devices. To resolve this, call torch.cuda.set_device() before "
    "init_process_group().",
    "[rank0]:[W1206 10:00:00.1 1 ProcessGroupNCCL.cpp:900] TORCH_NCCL_DESYNC_DEBUG and "
    "TORCH_NCCL_ASYNC_ERROR_HANDLING must both be enabled. Enabling TORCH_NCCL_ASYNC_ERROR_HANDLING.",
    "[W CudaIPCTypes.cpp:15] Producer process has been terminated before all shared CUDA tensors released. "
    "See Note [Sharing CUDA tensors]",
    "[rank0]:[W1206 10:00:00.1 1 ProcessGroupNCCL.cpp:900] backend:cudaMallocAsync ignores "
    "max_split_size_mb,roundup_power2_divisions, and garbage_collect_threshold.",
]


@pytest.mark.parametrize("line", SILENT)
def test_healthy_warnings_stay_silent(line: str) -> None:
    assert _root(line) is None
