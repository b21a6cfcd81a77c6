"""cuda_oom: every CUDA out-of-memory format of PyTorch's caching allocator, old and new.

Formats (c10/cuda/CUDACachingAllocator.cpp):
- <= 2.0: "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity;
  14.24 GiB already allocated; 8.75 MiB free; [1.00 GiB allowed; ]14.69 GiB reserved in total
  by PyTorch)"; before 1.4 the last field was "... cached)".
- 2.1: "Tried to allocate 1.95 GiB. GPU 0 has a total capacty of 14.75 GiB of which 1.66 GiB is
  free. Process 414660 has 13.09 GiB memory in use. Of the allocated memory 10.09 GiB is
  allocated by PyTorch, and 1.92 GiB is reserved by PyTorch but unallocated." (sic "capacty")
- >= 2.2: "capacity", and the allocator's own process is named "Including non-PyTorch memory,
  this process has X memory in use." while other processes are "Process N has X memory in use."
- CUDA runtime / NCCL without allocator numbers: "CUDA error: out of memory",
  NCCL "Cuda failure 'out of memory'".
- The driver's context creation refused for memory ("failed call to cuDevicePrimaryCtxRetain:
  CUDA_ERROR_OUT_OF_MEMORY", cuCtxCreate) is RUN262 (driver_env): the GPU was full or not granted before
  the job allocated anything.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, read
from pgdoctor.knowledge.units import SIZE, fmt_bytes, to_bytes
from pgdoctor.model import lazy_re

S = SIZE
_W = r"\s*"
_NEW = lazy_re.compile(
    rf"Tried{_W}to{_W}allocate{_W}{S}\.?{_W}GPU{_W}(\d+){_W}has{_W}a{_W}total{_W}capac(?:i)?ty{_W}of{_W}{S}"
    rf"{_W}of{_W}which{_W}{S}{_W}is{_W}free"
)
_OLD = lazy_re.compile(
    rf"Tried{_W}to{_W}allocate{_W}{S}{_W}\(GPU{_W}(\d+);{_W}{S}{_W}total{_W}capacity;{_W}{S}{_W}already{_W}al"
    rf"located;"
    rf"{_W}{S}{_W}free;(?:{_W}{S}{_W}allowed;)?{_W}{S}{_W}(reserved{_W}in{_W}total|cached)"
)
_PROC = lazy_re.compile(rf"Process{_W}(\d+){_W}has{_W}{S}{_W}memory{_W}in{_W}use")
_SELF = lazy_re.compile(rf"this{_W}process{_W}has{_W}{S}{_W}memory{_W}in{_W}use")
_ALLOWED = lazy_re.compile(rf"{S}{_W}allowed;")
_SPLIT = lazy_re.compile(
    rf"Of{_W}the{_W}allocated{_W}memory{_W}{S}{_W}is{_W}allocated{_W}by{_W}PyTorch,{_W}and{_W}{S}{_W}is{_W}re"
    rf"served"
)
# ROCm builds print the same allocator text with "HIP" (HIPCachingAllocator is the hipified copy).
_ANY = lazy_re.compile(
    r"CUDA out of memory|HIP out of memory|(?:CUDA|HIP) [Ee]rror: out of memory|"
    r"(?:Cuda|HIP) failure '?out of memory|"
    r"cudaErrorMemoryAllocation|hipErrorOutOfMemory"
    r"|CUBLAS_STATUS_ALLOC_FAILED"
    # ROCm's hipBLAS through torch's hipified check: "CUDA error: HIPBLAS_STATUS_ALLOC_FAILED when calling
    # `hipblasCreate(handle)`"
    r"|HIPBLAS_STATUS_ALLOC_FAILED"
    # the same exhaustion reported by another layer: cuDNN's status, the driver API's enum
    # (Triton, CuPy), NCCL's own allocations (include/alloc.h: "Failed to CUDA calloc
    # 6291456 bytes", "Failed to CUDA calloc async 2432 bytes", "Failed to CUDA malloc ...",
    # "Failed to CUDA host alloc ...")
    r"|CUDNN_STATUS_ALLOC_FAILED|CUDA_ERROR_OUT_OF_MEMORY|Failed to CUDA (?:calloc|malloc|host alloc)"
    # the other CUDA math libraries' allocation statuses (cusolver_common.h, cufft.h, cusparse.h,
    # curand.h), as torch's checks print them: "cusolver error: CUSOLVER_STATUS_ALLOC_FAILED, when calling
    # `cusolverDnCreate(handle)`", "cuFFT error: CUFFT_ALLOC_FAILED"
    r"|CUSOLVER_STATUS_ALLOC_FAILED|CUFFT_ALLOC_FAILED|CUSPARSE_STATUS_ALLOC_FAILED|CURAND_STATUS_ALLOCATION_FAILED"
    # MXNet's and other CHECKs of a CUDA call: "Check failed: e == cudaSuccess: CUDA: out of memory"
    r"|CUDA: out of memory"
    # the class and the sentence as a title retypes them ("torch.cuda.0utOfMemoryError: CUDA outof memory")
    r"|\b[O0]utOfMemoryError: CUDA\b|CUDA out ?of ?memory"
    # NCCL 1.x (src/core.cu allocDevMem): "WARN src/core.cu:225 failed to allocate 2101248 byte device buffer"
    # and its result's string, "NCCL Init failed (10) 'cuda malloc failed'" (ncclCudaMallocFailed)
    r"|failed to allocate \d+ byte device buffer|'cuda malloc failed'|\bncclCudaMallocFailed\b"
)
# Who reported it, by the words it is reported in (first match wins).
_REPORTERS = (
    ("Failed to CUDA", "NCCL"),
    ("byte device buffer", "NCCL 1.x"),
    ("cuda malloc failed", "NCCL 1.x"),
    ("ncclCudaMallocFailed", "NCCL 1.x"),
    ("HIPBLAS", "hipBLAS"),
    ("CUBLAS", "cuBLAS"),
    ("CUDNN", "cuDNN"),
    ("CUSOLVER", "cuSOLVER"),
    ("CUFFT", "cuFFT"),
    ("CUSPARSE", "cuSPARSE"),
    ("CURAND", "cuRAND"),
    ("CUDA error", "CUDA runtime"),
    ("HIP error", "HIP runtime"),
    ("CUDA: out of memory", "a CUDA error check"),
    ("Cuda failure", "NCCL"),
    ("HIP failure", "RCCL"),
    ("CUDA_ERROR_", "the CUDA driver"),
)


def _reporter(text: str) -> str:
    return next((name for key, name in _REPORTERS if key in text), "")


_LAYER_BYTES = lazy_re.compile(
    r"failed to allocate (\d+) byte device buffer|"
    r"Failed to CUDA (?:calloc|malloc|host alloc)(?: async)? (\d+) bytes"
)


def _b(m: re.Match[str], i: int) -> int:
    return to_bytes(m.group(i), m.group(i + 1))


def _judge(f: dict[str, Any]) -> str:
    """fragmentation: the allocator holds at least the request in reserved-but-unallocated blocks
    it could not hand out (all wholly free blocks were already released before the error);
    other_process: other processes hold at least the request; otherwise the job needs more."""
    req = f.get("requested_bytes", 0)
    frag = f.get("reserved_unallocated_bytes", 0)
    other = f.get("other_process_bytes", 0)
    total = f.get("total_bytes", 0) or 1
    if other >= max(req, total // 20) and other >= frag:
        return "other_process"
    if req and frag >= req:
        return "fragmentation"
    return "insufficient_memory"


def _facts(text: str) -> Optional[dict[str, Any]]:
    f: dict[str, Any] = {}
    m = _NEW.search(text)
    if m:
        f.update(
            format="torch>=2.1",
            requested_bytes=_b(m, 1),
            gpu_index=int(m.group(3)),
            total_bytes=_b(m, 4),
            free_bytes=_b(m, 6),
        )
        sp = _SPLIT.search(text)
        if sp:
            f["allocated_bytes"] = _b(sp, 1)
            f["reserved_unallocated_bytes"] = _b(sp, 3)
            f["reserved_bytes"] = f["allocated_bytes"] + f["reserved_unallocated_bytes"]
        al = _ALLOWED.search(text)
        if al:
            f["allowed_bytes"] = _b(al, 1)
        procs = [
            {"pid": int(p.group(1)), "bytes": to_bytes(p.group(2), p.group(3))} for p in _PROC.finditer(text)
        ]
        me = _SELF.search(text)
        if me:
            f["this_process_bytes"] = _b(me, 1)
        elif procs and "reserved_bytes" in f:
            # In a container the allocator cannot find its own pid in NVML's list, so it names
            # itself "Process N": the entry holding at least what PyTorch reserved is us.
            mine = max(procs, key=lambda p: p["bytes"])
            if mine["bytes"] >= f["reserved_bytes"]:
                f["this_process_bytes"] = mine["bytes"]
                procs = [p for p in procs if p is not mine]
        if procs:
            f["other_processes"] = procs
        f["other_process_bytes"] = sum(p["bytes"] for p in procs)
    else:
        m = _OLD.search(text)
        if not m:
            return None
        f.update(
            format="torch<=2.0",
            requested_bytes=_b(m, 1),
            gpu_index=int(m.group(3)),
            total_bytes=_b(m, 4),
            allocated_bytes=_b(m, 6),
            free_bytes=_b(m, 8),
        )
        if m.group(10):
            f["allowed_bytes"] = _b(m, 10)
        last = _b(m, 12)
        if "cached" in m.group(14):
            f["reserved_unallocated_bytes"] = last
            f["reserved_bytes"] = f["allocated_bytes"] + last
        else:
            f["reserved_bytes"] = last
            f["reserved_unallocated_bytes"] = max(0, last - f["allocated_bytes"])
        # Memory neither free nor reserved by this PyTorch: CUDA context, other libraries, other
        # processes. Only a large share of the GPU points at another process.
        rest = f["total_bytes"] - f["free_bytes"] - f["reserved_bytes"]
        f["non_pytorch_bytes"] = max(0, rest)
        if rest > max(2 << 30, f["total_bytes"] // 5):
            f["other_process_bytes"] = rest
    f["bytes"] = f["requested_bytes"]
    if f["requested_bytes"] > f["total_bytes"]:
        f["request_exceeds_gpu"] = True
    f["likely_cause"] = _judge(f)
    return f


# The driver's context creation refused for memory (XLA's and TensorFlow's stream executor: "failed
# initializing StreamExecutor for CUDA device ordinal 3: INTERNAL: failed call to cuDevicePrimaryCtxRetain:
# CUDA_ERROR_OUT_OF_MEMORY: out of memory; total memory reported: 34089730048", TF 1.x "...; total memory
# reported: N"; cuCtxCreate's the same): the process had allocated nothing yet, so the GPU was full or not
# granted before it started: another job on it, or a scheduler that hands out some GPUs of a node while the
# process sees them all (CUDA_VISIBLE_DEVICES not set to the granted ones). Not the job's memory: driver_env.
_CONTEXT_OOM = lazy_re.compile(
    r"\b(cuDevicePrimaryCtxRetain|cuCtxCreate(?:_v\d)?)\b[^\n]{0,40}?"
    r"(?:CUDA_ERROR_OUT_OF_MEMORY|out of memory)"
)
_ORDINAL = lazy_re.compile(r"(?:CUDA device ordinal |CUDA:)(\d+)")


def _context_oom(row: Signature, hit: Hit, m: re.Match[str]) -> list[Event]:
    dev = _ORDINAL.search(hit.text)
    facts: dict[str, Any] = {"reason": "context_out_of_memory", "cuda_call": m.group(1)}
    if dev:
        facts["gpu_index"] = int(dev.group(1))
    return [
        row.event(
            hit,
            f"{hit.who()}: the driver could not create a context on GPU "
            f"{facts.get('gpu_index', '?')} ({m.group(1)}: out of memory) before the job allocated anything: "
            "the GPU is held by another job or was not granted to this one (a scheduler's share of a node); "
            "set CUDA_VISIBLE_DEVICES to the GPUs the job was given",
            facts,
            code=C.NO_CUDA_DEVICE.code,
            tier=1,
            dedupe=(C.NO_CUDA_DEVICE.code, "context_out_of_memory"),
        )
    ]


def _oom(row: Signature, hit: Hit, _m: re.Match[str]) -> Optional[list[Event]]:
    ctx = _CONTEXT_OOM.search(hit.text)
    if ctx:
        return _context_oom(row, hit, ctx)
    text, used = hit.block(8)
    facts = _facts(text)
    if facts is None and any("Tried to allocate" in ln.text and _facts(ln.text) for ln in hit.after(24)):
        return []  # a short mention (an error file's "message", a summary) before the record with the figures
    if facts is None:
        # The layer that failed: the trigger line first (a cuBLAS status inside torch's "CUDA error: ..."
        # is cuBLAS's), then the lines around it.
        what = _reporter(hit.text) or _reporter(text) or "PyTorch"
        f: dict[str, Any] = {
            "format": "cuda_error",
            "likely_cause": "insufficient_memory",
            "reported_by": what,
        }
        lb = _LAYER_BYTES.search(text)
        if lb:
            f["requested_bytes"] = f["bytes"] = int(lb.group(1) or lb.group(2))
        return [
            row.event(
                hit,
                f"{what} reported CUDA out of memory (no allocator figures in the message)"
                + (f": {fmt_bytes(f['bytes'])} could not be allocated" if "bytes" in f else ""),
                f,
                used,
                dedupe=(row.code, hit.rank, "cuda_error"),
            )
        ]
    cause = facts["likely_cause"]
    code = {"fragmentation": C.CUDA_OOM_FRAGMENTATION, "other_process": C.CUDA_OOM_OTHER_PROCESS}.get(
        cause, C.CUDA_OOM
    )
    msg = (
        f"GPU {facts['gpu_index']}: tried to allocate {fmt_bytes(facts['requested_bytes'])} with "
        f"{fmt_bytes(facts['free_bytes'])} free of {fmt_bytes(facts['total_bytes'])}"
    )
    if "allocated_bytes" in facts:
        msg += (
            f"; PyTorch had {fmt_bytes(facts['allocated_bytes'])} allocated and "
            f"{fmt_bytes(facts.get('reserved_unallocated_bytes', 0))} reserved but unallocated"
        )
    if facts.get("other_process_bytes"):
        msg += f"; other processes hold {fmt_bytes(facts['other_process_bytes'])}"
    if facts.get("request_exceeds_gpu"):
        msg += "; the single request is larger than the whole GPU"
    msg += {
        "fragmentation": " (fragmentation: the reserved-but-unallocated memory alone exceeds the request)",
        "other_process": " (another process holds the memory)",
        "insufficient_memory": " (the job needs more memory than the GPU has)",
    }[cause]
    return [
        row.event(
            hit,
            msg,
            facts,
            used,
            code=code.code,
            dedupe=(code.code, hit.rank, facts["requested_bytes"], facts["gpu_index"]),
        )
    ]


# The allocators' refusal of a request of 1 EiB or more (CUDACachingAllocator / CUDAMallocAsyncAllocator
# allocate(), 2.1+: "CUDA out of memory. Tried to allocate more than 1EB memory."): no GPU has that, so the
# size itself is garbage, not the GPU full. In a distributed job it is most often a size read from a
# collective that failed (a broadcast_object_list / all_gather_object whose size tensor came back from a
# timed-out or aborted communicator, or from ranks calling object collectives out of step): that collective's
# failure is the cause, and this line its consequence (tier 2: anything else found leads).
_GARBAGE_SIZE = lazy_re.compile(r"Tried to allocate more than 1EB memory")
# The frame the allocation was made in, where the paste shows the traceback above the line: Python's
# ('File ".../distributed_c10d.py", line 2246, in broadcast_object_list') or rich's boxed one
# ("│ /.../modeling_chatglm.py:202 in  │"). A size made by the program's own code (a model's
# torch.arange(seq_len) with a garbage seq_len, zai-org/ChatGLM-6B#790) is no collective's and no full GPU:
# the bug is the program's, which this line does not name.
_FRAME = lazy_re.compile(r'File "([^"]+)", line \d+, in (\w+)|([\w.~/\\-]+\.py):\d+ in\b ?(\w*)')
_COLLECTIVE_FRAME = lazy_re.compile(
    r"(?i)distributed|_object|broadcast|all_?gather|all_?reduce|reduce_?scatter|all_?to_?all|\bdist\b|"
    r"\bcomm|collective|nccl|gloo|deepspeed|horovod|megatron|mmengine/dist"
)


def _last_frame(hit: Hit) -> Optional[str]:
    """The path and function of the last traceback frame above the line, or None where none is shown."""
    for ln in reversed(hit.before(40)):
        f = _FRAME.search(ln.text)
        if f is not None:
            return " ".join(g for g in f.groups() if g)
    return None


def _garbage_size(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    frame = _last_frame(hit)
    if frame is not None and not _COLLECTIVE_FRAME.search(frame):
        return []  # the program's own size (its frame shown), not a collective's: no finding
    return [
        row.event(
            hit,
            f"{hit.who()}: the allocator refused a request of 1 EiB or more: a garbage size, not a full GPU "
            "- most often a size received from a collective that timed out or was aborted (object "
            "collectives: broadcast_object_list, all_gather_object); that collective's failure is the cause",
            {"garbage_size": True, "likely_cause": "size_from_failed_collective"},
            dedupe=(row.code, hit.rank, "garbage_size"),
        )
    ]


# NCCL 2.7-2.11's remote memory allocation service (bootstrap.cc ncclRemoteMemAllocationService): a thread
# that reads a size from a peer's socket and cudaMallocs it for that peer; on a failure it says "[Rem
# Allocator] Allocation failed (segment 0, fd 130)" and serves on. When the peer's socket closed ("Net :
# Connection closed by remote peer", socket.h), the size it reads next is garbage and include/alloc.h's
# "Cuda failure 'out of memory'" follows, returned through bootstrap.cc ("NCCL INFO bootstrap.cc:231 -> 1"):
# the socket's failure, read where it is reported, not the job's GPU memory (the job itself may go on).
_NCCL_CUDA_OOM = lazy_re.compile(r"Cuda failure '?out of memory|Failed to CUDA (?:calloc|malloc)")
_REM_ALLOC = lazy_re.compile(r"\[Rem Allocator\]|NCCL INFO bootstrap\.cc:\d+ -> 1\b")
_NCCL_THREAD = lazy_re.compile(r"^(?:\[[\d\- :]+\] )?[\w.-]+:(\d+:\d+) \[")


def rem_alloc_garbage(hit: Hit) -> bool:
    """Whether this NCCL OOM line is the remote allocation service's (its own thread's lines around it)."""
    me = _NCCL_THREAD.match(hit.text.strip())
    for ln in hit.before(8, same_rank=False) + hit.after(4, same_rank=False):
        th = _NCCL_THREAD.match(ln.text.strip())
        if _REM_ALLOC.search(ln.text) and (me is None or th is None or th.group(1) == me.group(1)):
            return True
    return False


def _rem_alloc(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    # the allocation service's garbage size: the socket errors beside it are read where they are
    return [] if rem_alloc_garbage(hit) else None


_CUDA_ROWS = (
    Signature(
        "nccl remote allocator's garbage size",
        _NCCL_CUDA_OOM,
        _rem_alloc,
        C.CUDA_OOM.code,
        anchors=(b"ut of memory", b"Failed to CUDA "),
        worth=(rb"out of memory", rb"Failed to CUDA (?:calloc|malloc)"),
        anchor_from="the 'Cuda failure ' NCCL's WARN puts before the CUDA error's text",
        examples=(
            "node1:39:298 [0] include/alloc.h:48 NCCL WARN Cuda failure 'out of memory'",
            "node1:39:298 [0] include/alloc.h:103 NCCL WARN Failed to CUDA calloc 6291456 bytes",
        ),
    ),
    Signature(
        "allocation of a garbage size",
        _GARBAGE_SIZE,
        _garbage_size,
        C.WATCHDOG_TIMEOUT.code,
        tier=2,
        anchors=(b"ut of memory",),
        worth=(rb"out of memory",),
        anchor_from="the 'CUDA out of memory. ' before the allocator's sentence",
        examples=("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate more than 1EB memory",),
    ),
    Signature(
        "cuda out of memory",
        _ANY,
        _oom,
        C.CUDA_OOM.code,
        # "_ALLOC": the math libraries' statuses also come without any exception around them, as
        # TensorFlow's stream executor logs them ("E tensorflow/stream_executor/cuda/cuda_blas.cc:225]
        # failed to create cublas handle: CUBLAS_STATUS_ALLOC_FAILED", cuda_dnn.cc likewise)
        # ("hipErrorOutOfMemory" / "cudaErrorMemoryAllocation" also stand alone, as a C++ wrapper's
        # "what():  hipMalloc failed: hipErrorOutOfMemory" prints them, with no exception word or
        # "out of memory" on the line)
        anchors=(
            b"ut of memory",
            b"rror",
            b"ERROR",
            b"_ALLOC",
            b"hipErrorOutOfMemory",
            b"cudaErrorMemoryAllocation",
            # NCCL's allocation failure also without the WARN or ncclUnhandledCudaError before it (a title)
            b"Failed to CUDA ",
            b"byte device buffer",
            b"cuda malloc failed",
            b"ncclCudaMallocFailed",
        ),
        worth=(
            rb"out of memory",
            rb"Error\b",
            rb"\bERROR\b",
            rb"_ALLOC",
            rb"hipErrorOutOfMemory",
            rb"cudaErrorMemoryAllocation",
            rb"Failed to CUDA (?:calloc|malloc|host alloc)",
            rb"failed to allocate \d+ byte device buffer",
            rb"cuda malloc failed",
            rb"ncclCudaMallocFailed",
        ),
        anchor_from="'...Error' in cudaErrorMemoryAllocation / hipErrorOutOfMemory, the 'RuntimeError: ' "
        "of cuBLAS's and cuDNN's messages, NCCL's 'WARN' or ncclUnhandledCudaError before its "
        "'Failed to CUDA calloc', the exception type before CUDA_ERROR_OUT_OF_MEMORY; '_ALLOC' of the "
        "math libraries' own status names",
        examples=(
            "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
            "cupy.cuda.runtime.CUDARuntimeError: cudaErrorMemoryAllocation: out of memory",
            "RuntimeError: hipErrorOutOfMemory",
            "RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED",
            "node-1:1234:1290 [3] include/alloc.h:48 NCCL WARN Failed to CUDA calloc 6291456 bytes",
            "ncclUnhandledCudaError: Failed to CUDA calloc async 2432 bytes",
            "RuntimeError: CUDA driver error: CUDA_ERROR_OUT_OF_MEMORY",
            "RuntimeError: cusolver error: CUSOLVER_STATUS_ALLOC_FAILED, when calling "
            "`cusolverDnCreate(handle)`",
            "RuntimeError: cuFFT error: CUFFT_ALLOC_FAILED",
            "2020-09-24 18:27:41.164048: E tensorflow/stream_executor/cuda/cuda_blas.cc:225] failed to "
            "create cublas handle: CUBLAS_STATUS_ALLOC_FAILED",
        ),
    ),
)


# Wrappers that retry on a CUDA OOM and give up in their own words: Accelerate's
# find_executable_batch_size (accelerate/utils/memory.py) halves the batch after each OOM and
# raises "No executable batch size found, reached zero." when none fits.
_ACCELERATE = lazy_re.compile(r"No executable batch size found, reached zero")


def _accelerate(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "Accelerate's find_executable_batch_size ran out of memory at every batch size down to 1",
            {"format": "accelerate", "likely_cause": "insufficient_memory", "reported_by": "accelerate"},
            dedupe=(row.code, hit.rank, "cuda_error"),
        )
    ]


# vLLM's start-up check (worker/gpu_worker.py): "ValueError: Free memory on device cuda:0 (109.53/121.69
# GiB) on startup is less than desired GPU memory utilization (0.91, 110.74 GiB)." (a terminal may wrap it)
# Before 0.10 the device was not named: "Free memory on device (6.92/8.0 GiB) on startup is less than ...".
_VLLM_STARTUP = lazy_re.compile(
    r"Free memory on device (?:(\S+) )?\((\d+(?:\.\d+)?)/(\d+(?:\.\d+)?) GiB\) on startup is"
)


def _vllm_startup(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    free, total = float(m.group(2)), float(m.group(3))
    return [
        row.event(
            hit,
            f"vLLM found {free:.2f} of {total:.2f} GiB free on {m.group(1) or 'the GPU'} at start-up, less "
            "than its "
            "gpu_memory_utilization asks for (another process, or another engine on the same GPU, holds the "
            "rest)",
            {
                "format": "vllm_startup",
                "likely_cause": "other_process",
                "device": m.group(1) or "",
                "free_bytes": int(free * (1 << 30)),
                "total_bytes": int(total * (1 << 30)),
            },
            dedupe=(row.code, hit.rank, "cuda_error"),
        )
    ]


# vLLM's memory profiling, the same accounting a step later (worker/worker.py 0.4-0.6, v1/worker/gpu_worker.py
# 0.7-0.34), an AssertionError: "Error in memory profiling. This happens when the GPU memory was not properly
# cleaned up before initializing the vLLM instance." (0.4), "Error in memory profiling. Initial free memory
# 76533727232, current free memory 76533727232. This happens when ..." (0.5-0.6), "Error in memory profiling.
# Initial free memory 70.12 GiB, current free memory 71.30 GiB. This happens when other processes sharing the
# same container release GPU memory while vLLM is profiling ..." (0.34): another process's GPU memory moved.
_VLLM_PROFILING = lazy_re.compile(
    r"Error in memory profiling\.(?: Initial free memory (?P<init>\d+(?:\.\d+)?)(?: GiB)?, current free "
    r"memory (?P<now>\d+(?:\.\d+)?))?"
)


def _vllm_profiling(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"format": "vllm_memory_profiling", "likely_cause": "other_process"}
    return [
        row.event(
            hit,
            "vLLM's memory profiling at start-up saw the GPU's free memory change under it: another process "
            "(or an earlier engine not cleaned up) holds or releases memory on the same GPU",
            facts,
            dedupe=(row.code, hit.rank, "cuda_error"),
        )
    ]


# CUDA code that reports cudaGetErrorString itself: caffe2's "[enforce fail at context_gpu.cu:343] error ==
# cudaSuccess. 2 vs 0. Error at: /caffe2/core/context_gpu.cu:343: out of memory".
# bitsandbytes' CUDA_CHECK_RETURN (csrc/ops.cuh, 0.3x-0.4x): printf("Error %s at line %d in file %s\n",
# cudaGetErrorString(s), ...) -> "Error out of memory at line 380 in file .../csrc/pythonInterface.c".
# spconv 1.x and its vendored copies (mmdet3d/ops/spconv, tensorview's TV_CHECK_CUDA_ERR): the file/line,
# then "cuda execution failed with error 2": 2 is cudaErrorMemoryAllocation (other numbers are not memory).
_CU_OOM = lazy_re.compile(
    r"Error at: \S+\.cu:\d+: out of memory|"
    r"\bError out of memory at line \d+ in file \S+|"
    r"\bcuda execution failed with error 2\b"
)


def _cu_oom(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "a CUDA allocation failed: out of memory (reported by the framework's own CUDA code)",
            {"format": "cuda_error", "likely_cause": "insufficient_memory"},
            dedupe=(row.code, hit.rank, "cuda_error"),
        )
    ]


# torch.cuda.memory_summary()'s table (torch/cuda/memory.py), often pasted alone after the error was cut:
# "|            CUDA OOMs: 1            |        cudaMalloc retries: 3         |" under "PyTorch CUDA memory
# summary, device ID 0". The allocator counts the OOMs it raised: one or more is the OOM itself; zero (a
# summary printed for profiling) says nothing.
_SUMMARY = lazy_re.compile(r"CUDA OOMs: (\d+)\s*\|\s*cudaMalloc retries: (\d+)")
_SUMMARY_DEVICE = lazy_re.compile(r"CUDA memory summary, device ID (\d+)")


def _summary(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    ooms = int(m.group(1))
    if ooms == 0:
        return []
    facts: dict[str, Any] = {
        "format": "memory_summary",
        "likely_cause": "insufficient_memory",
        "cuda_ooms": ooms,
        "cudamalloc_retries": int(m.group(2)),
    }
    for ln in hit.before(4, same_rank=False):
        d = _SUMMARY_DEVICE.search(ln.text)
        if d:
            facts["device"] = int(d.group(1))
    where = f" on device {facts['device']}" if "device" in facts else ""
    return [
        row.event(
            hit,
            f"torch.cuda.memory_summary() counts {ooms} CUDA out-of-memory error(s){where} "
            f"({m.group(2)} cudaMalloc retries after freeing the cache)",
            facts,
            tier=1,
            dedupe=(row.code, hit.rank, "cuda_error"),
        )
    ]


_WRAPPERS = (
    Signature(
        "memory summary table",
        _SUMMARY,
        _summary,
        C.CUDA_OOM.code,
        anchors=(b"CUDA OOMs",),
        worth=(rb"CUDA OOMs",),
    ),
    Signature(
        "vllm start-up memory check",
        _VLLM_STARTUP,
        _vllm_startup,
        C.CUDA_OOM.code,
        # vLLM's own words: a title, or Ray's second line of the engine's error, has no 'ValueError: '
        anchors=(b"Free memory on device",),
        worth=(rb"Free memory on device",),
        examples=(
            "ValueError: Free memory on device cuda:0 (109.53/121.69 GiB) on startup is less than desired "
            "GPU memory utilization (0.91, 110.74 GiB).",
        ),
    ),
    Signature(
        "vllm memory profiling",
        _VLLM_PROFILING,
        _vllm_profiling,
        C.CUDA_OOM.code,
        # no healthy line says it; a title or Ray's second line drops the 'AssertionError: '
        anchors=(b"Error in memory profiling",),
        examples=(
            "AssertionError: Error in memory profiling. Initial free memory 70.12 GiB, current free memory "
            "71.30 GiB. This happens when other processes sharing the same container release GPU memory "
            "while vLLM is profiling during initialization.",
        ),
    ),
    Signature(
        "cuda source oom",
        _CU_OOM,
        _cu_oom,
        C.CUDA_OOM.code,
        anchors=(b"rror", b"ut of memory", b"failed with error 2"),
        worth=(rb"out of memory", rb"failed with error 2\b"),
    ),
    Signature(
        "accelerate batch size search",
        _ACCELERATE,
        _accelerate,
        C.CUDA_OOM.code,
        anchors=(b"No executable batch size found",),
        worth=(rb"No executable batch size found",),
        examples=("RuntimeError: No executable batch size found, reached zero.",),
    ),
)
# cuDNN's handle creation or workspace failed (cudnnCreate returns CUDNN_STATUS_NOT_INITIALIZED when the CUDA
# calls under it fail; cudnn.h): torch's "cuDNN error: CUDNN_STATUS_NOT_INITIALIZED", TensorFlow's "Could not
# create cudnn handle: ...", Caffe's "Check failed: status == CUDNN_STATUS_SUCCESS (4 vs. 0)
# CUDNN_STATUS_INTERNAL_ERROR", MXNet's "cuDNN: CUDNN_STATUS_INTERNAL_ERROR", cuDNN 9's
# CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED. Most often the GPU had no memory left for cuDNN's
# context and workspace (a batch too large, a framework that reserves most of it up front, another process);
# a build that does not fit the GPU says so in its own words, which lead (tier 1). cuDNN 9's other internal
# sub-statuses (COMPILATION_FAILED, HOST_ALLOCATION_FAILED, ...) name another cause and are not read.
_CUDNN_INIT = lazy_re.compile(
    r"(?<!\bno )(?<!\bavoid )"
    r"(CUDNN_STATUS_NOT_INITIALIZED|CUDNN_STATUS_INTERNAL_ERROR(?:_DEVICE_ALLOCATION_FAILED)?)(?!_)"
)


def _cudnn_init(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    status = m.group(1)
    facts: dict[str, Any] = {
        "format": "cuda_error",
        "reported_by": "cuDNN",
        "likely_cause": "insufficient_memory",
    }
    msg = (
        f"cuDNN failed ({status}): most often the GPU had no memory left for cuDNN's handle and workspace "
        "(reduce the batch or free the GPU); otherwise the cuDNN / CUDA build does not fit the driver or GPU"
    )
    return [row.event(hit, msg, facts | {"status": status}, dedupe=(row.code, hit.rank, "cuda_error"))]


SIGNATURES = (
    *_CUDA_ROWS,
    *_WRAPPERS,
    Signature(
        "cudnn handle not initialised",
        _CUDNN_INIT,
        _cudnn_init,
        C.CUDA_OOM.code,
        tier=1,
        anchors=(b"CUDNN_STATUS_NOT_INITIALIZED", b"CUDNN_STATUS_INTERNAL_ERROR"),
    ),
)


def parse(hit: Hit) -> list[Event]:
    t = hit.text
    if (
        "CUDA" not in t
        and "Cuda" not in t
        and "CUBLAS" not in t
        and "HIP" not in t
        and "hipError" not in t
        and "cudaError" not in t
        and "CUDNN" not in t
        and "ALLOC" not in t
        and "byte device buffer" not in t  # NCCL 1.x's allocDevMem
        and "cuda malloc failed" not in t
        and "ncclCudaMallocFailed" not in t
    ):
        return read(hit, _WRAPPERS)  # the allocator's and the libraries' own words all name CUDA
    return read(hit, SIGNATURES)
