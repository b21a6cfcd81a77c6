"""Memory exhaustion that a library or a serving engine reports in its own words, not torch's allocator's.

Formats, read at their source:
- A CUDA allocation call's status printed by the library that made it. NVSHMEM's heap (src/host/mem/
  mem_heap.cpp, 2.x-3.x, NVSHMEMI_NZ_ERROR_JMP): "/nvshmem/src/host/mem/mem_heap.cpp:1509: non-zero status: 2
  cuMemCreate failed" (the status is the CUresult: 2 is CUDA_ERROR_OUT_OF_MEMORY; its consequence
  "non-zero status: 7 allocate_physical_memory_to_heap failed" and the illegal accesses after it follow),
  3.7's "error status: 2 (NVSHMEMX_ERROR_OUT_OF_MEMORY) cuMemCreate failed"; wrappers' "cuMemCreate(&h,
  n, &prop, 0) failed with error CUDA_ERROR_OUT_OF_MEMORY" (tiny-cuda-nn), "cuMemCreate failed (status 2,
  CUDA_ERROR_OUT_OF_MEMORY)", the same for cuMemAlloc* and cudaMalloc* (cudaErrorMemoryAllocation is 2
  too). Another status is not memory ("status 800, CUDA_ERROR_NOT_SUPPORTED": a driver without VMM), so
  only 2 or the out-of-memory names count. NVSHMEM's own pools (teams, the symmetric heap's size) are
  comm_lib_checks' (RUN586).
- cuBLAS's handle creation failing for want of memory: TensorFlow's and XLA's stream executor
  (stream_executor/cuda/cuda_blas.cc, TF 1.x-2.x) "E tensorflow/stream_executor/cuda/cuda_blas.cc:459]
  failed to create cublas handle: CUBLAS_STATUS_NOT_INITIALIZED", torch's "CUDA error:
  CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`" (torch 0.4-1.0's THCublasCheck:
  "cublas runtime error : library not initialized at .../THCGeneral.cpp:216"), CuPy's "CUBLASError:
  CUBLAS_STATUS_NOT_INITIALIZED", TensorFlow's matmul without the handle ("InternalError: Blas GEMM
  launch failed : a.shape=(100, 784), ..."), and TensorFlow's cuda_dnn.cc "Could not create cudnn handle:
  CUDNN_STATUS_INTERNAL_ERROR". cublasCreate and cudnnCreate allocate on the
  device; TensorFlow reserves nearly all of a GPU's memory per process by default, so a second process on
  the GPU (IMPALA's actors, a Horovod rank per GPU placed wrong) or a framework already holding the memory
  leaves them none. A driver or build mismatch gives the same status, in the build-fit rows' words that
  lead (tier 1 here, as cuda_oom's cuDNN NOT_INITIALIZED row).
- Ray's memory monitor's kill message (raylet node_manager.cc, Ray 2.2+) ends, after its table of the top
  memory users, in "Refer to the documentation on how to address the out of memory issue:
  https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html. Consider provisioning more
  memory on this node ... To adjust the kill threshold, set the environment variable
  `RAY_memory_usage_threshold` when starting Ray." A job's status tail (`ray job submit`, an actor's
  prefixed stream) often keeps only this end; workers.py reads the opening.
- A serving engine's KV-cache profile that found no memory left after the weights: SGLang's model runner
  (model_runner.py, 0.2-0.5) "max_total_tokens=131072 is larger than the profiled value -561981. Use the
  profiled value instead." (a profiled value <= 0 is "Not enough memory" a moment later; a positive one
  is a healthy cap), vLLM v1's gpu_worker "Available KV cache memory: -3.55 GiB", 0.6-0.8's worker "...
  the rest of the memory reserved for KV Cache is -3.06GiB." and v0's "# GPU blocks:
  0, # CPU blocks: 2048" ("# cuda blocks: 0" in 0.6+); the ValueError / RuntimeError after them are
  oom_layers' rows.
- A process's SIGKILL death in a wrapper's key=value return code ("+[05:25:15] rc=137" in the bash xtrace of
  OpenPAI's container exit handler, Ansible's "rc=137", Kubernetes' '"exitCode": 137', Popen's
  "returncode=-9"): host memory's most common killer, read by host_oom's exit-status build (tier 1).
- torch's OOM cut mid-word by a search excerpt or a title: "RuntimeError: CUDA ou", "CUDA error: out of
  me" (cudaGetErrorString's only text that starts "ou"), ROCm's "HIP out of mem" - a line that ends in a part
  of "out of memory" after "CUDA " / "HIP " says nothing else.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.host_oom import _exit_137
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_CALL = r"cuMemCreate|cuMemAlloc\w*|cudaMalloc\w*"
_ALLOC_STATUS = lazy_re.compile(
    # NVSHMEM's record: the status first ("non-zero status: 2 cuMemCreate failed")
    r"(?:non-zero|error) status: (?P<st1>-?\d+)(?: \((?P<name1>\w+)\))?:? (?P<call1>"
    + _CALL
    + r")\b[^\n]{0,40}?"
    r" failed"
    # a wrapper's: the call, then its status ("cuMemCreate(...) failed with error CUDA_ERROR_OUT_OF_MEMORY")
    r"|(?P<call2>" + _CALL + r")\b(?:\([^\n]{0,200}?\))? failed\b[ :,(]*(?:with (?:error|status|code) |"
    r"(?:status|error|code)[ :=]*)?(?P<st2>-?\d+|CUDA_ERROR_\w+|cudaError\w+|NVSHMEMX_ERROR_\w+)"
)
_OOM_NAMES = ("CUDA_ERROR_OUT_OF_MEMORY", "cudaErrorMemoryAllocation", "NVSHMEMX_ERROR_OUT_OF_MEMORY")


def _alloc_status(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    call = m.group("call1") or m.group("call2")
    st = m.group("st1") or m.group("st2")
    names = {m.group("name1") or "", st}
    if st != "2" and not names & set(_OOM_NAMES):
        return None  # another status: not memory (800 CUDA_ERROR_NOT_SUPPORTED is a driver without VMM)
    nvshmem = "nvshmem" in hit.text.lower() or any(
        "nvshmem" in ln.text.lower()
        for ln in [*hit.before(6, same_rank=False), *hit.after(6, same_rank=False)]
    )
    facts: dict[str, Any] = {
        "format": "cuda_error",
        "cuda_call": call,
        "status": st,
        "likely_cause": "insufficient_memory",
        "reported_by": "NVSHMEM" if nvshmem else call,
    }
    status = f"status {st}: out of memory" if st.lstrip("-").isdigit() else st
    msg = (
        f"{hit.who()}: NVSHMEM's symmetric heap could not get GPU memory ({call} failed, {status}); the "
        "errors after it (failed heap set-up, illegal accesses, closed sockets) are its consequences"
        if nvshmem
        else f"{hit.who()}: {call} failed for want of GPU memory ({status})"
    )
    return [row.event(hit, msg, facts, dedupe=(row.code, hit.rank, "cuda_error"))]


_HANDLE = lazy_re.compile(
    # cuBLAS returns NOT_INITIALIZED from cublasCreate when the CUDA calls under it fail, whoever prints it
    # (TensorFlow's "failed to create cublas handle: ", torch's "... when calling `cublasCreate(handle)`",
    # CuPy's CUBLASError on its first use of the handle); the name alone in a title says as much
    r"(?P<blas>CUBLAS_STATUS_NOT_INITIALIZED)"
    # torch 0.4-1.0's THCublasCheck on the handle's creation (THCGeneral.cpp)
    r"|cublas runtime error : (?P<blas4>library not initialized)"
    # TensorFlow's matmul when the stream has no BLAS (its handle was never created)
    r"|(?P<gemm>Blas (?:GEMM|xGEMMBatched|SGEMM) launch failed)"
    r"|[Cc]ould not create cudnn handle: (?P<dnn>CUDNN_STATUS_INTERNAL_ERROR)"
)


def _handle(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    lib = "cuDNN" if m.group("dnn") else "cuBLAS"
    status = next(g for g in m.groups() if g)
    facts: dict[str, Any] = {
        "format": "cuda_error",
        "reported_by": lib,
        "status": status,
        "likely_cause": "insufficient_memory",
    }
    if "tensorflow" in hit.text or "stream_executor" in hit.text:
        facts["framework"] = "tensorflow"
    what = (
        f"TensorFlow's matmul had no cuBLAS handle ({status})"
        if m.group("gemm")
        else f"{lib} could not create its handle ({status})"
    )
    msg = (
        f"{what}: most often the GPU had no memory left for it "
        "(another process on the same GPU, or TensorFlow reserving the whole GPU per process); "
        "otherwise the CUDA / "
        f"{lib} build does not fit the driver"
    )
    return [row.event(hit, msg, facts, dedupe=(C.CUDA_OOM.code, hit.rank, "cuda_error"))]


_RAY_TAIL = lazy_re.compile(
    r"Refer to the documentation on how to address the out of memory issue"
    r"|To adjust the kill threshold, set the environment variable `?RAY_memory_usage_threshold"
)


def _ray_tail(row: Signature, hit: Hit, _m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "Ray's memory monitor killed a worker: the node ran out of host memory (its OOM-prevention "
            "message; raise the node's memory or lower the tasks' parallelism)",
            {"killer": "ray_memory_monitor"},
            dedupe=(row.code, "ray"),
        )
    ]


_KV_PROFILE = lazy_re.compile(
    r"max_total_tokens=\d+ is larger than the profiled value (?P<sgl>-?\d+)"
    r"|(?:Available KV cache memory:|the rest of the memory reserved for KV Cache is) "
    r"(?P<vllm>-?\d+(?:\.\d+)?) ?GiB"
    r"|# (?P<dev>GPU|cuda|CUDA|gpu|xpu|hpu|rocm) blocks: (?P<blocks>\d+), # CPU blocks"
)


def _kv_profile(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("sgl") is not None:
        engine, value, what = (
            "SGLang",
            float(m.group("sgl")),
            f"a profiled KV pool of {m.group('sgl')} tokens",
        )
    elif m.group("vllm") is not None:
        engine, value, what = "vLLM", float(m.group("vllm")), f"{m.group('vllm')} GiB left for the KV cache"
    else:
        engine, value, what = "vLLM", float(m.group("blocks")), "0 GPU blocks for the KV cache"
    if value > 0:
        return []  # a healthy profile: the engine caps its pool and goes on
    return [
        row.event(
            hit,
            f"{engine}: {what} - the memory left after the weights (and activations' peak) holds no KV "
            "cache: lower the model's share of the GPU (more tensor parallelism, quantisation) or raise "
            "--mem-fraction-static / gpu_memory_utilization",
            {"format": "kv_cache_profile", "engine": engine.lower(), "likely_cause": "insufficient_memory"},
            dedupe=(row.code, hit.rank, "kv_cache"),
        )
    ]


# a strict prefix of "out of memory", at least "ou", ending the line: after the exception type, or the whole
# line (a title, a wrapper's second line)
_CUT_OOM = lazy_re.compile(
    r"(?:(?:Error|[Ee]xception): |^\s*)(?:CUDA|HIP) (?:error: ou|ou)"
    r"(?:t(?: (?:o(?:f(?: (?:m(?:e(?:m(?:or?)?)?)?)?)?)?)?)?)?\s*$"
)


def _cut_oom(row: Signature, hit: Hit, _m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: CUDA out of memory (the message is cut off after '{hit.text.strip()[-20:]}')",
            {"format": "cut", "likely_cause": "insufficient_memory", "reported_by": "torch"},
            dedupe=(row.code, hit.rank, "cuda_error"),
        )
    ]


# A wrapper script's or a job record's return code in key=value form: bash xtrace of an exit handler
# ("+[05:25:15] rc=137", OpenPAI's YARN container script; "+ rc=137"), Ansible's "rc=137", a job JSON's
# '"exitCode": 137' (Kubernetes' container status), "exit_code=137", "returncode=-9" (Python's Popen repr).
# 137 is the shell's 128 + SIGKILL; -9 the signal as Popen reports it. host_oom's SIGKILL exit-status row
# reads the record (tier 1: most often an OOM killer whose own line is elsewhere).
_KV_EXIT = lazy_re.compile(
    r"(?<![\w.-])(?:rc|RC|exit_?[Cc]ode|exit_status|return_?code|returncode)\"?\s?[=:]\s?137\b"
    r"|(?<![\w.-])(?:exit_?[Cc]ode|returncode|return_code)\"?\s?[=:]\s?-9\b"
)

SIGNATURES = (
    Signature(
        "cuda allocation call status",
        _ALLOC_STATUS,
        _alloc_status,
        C.CUDA_OOM.code,
        anchors=(b"cuMemCreate", b"cuMemAlloc", b"cudaMalloc"),
        worth=(
            rb"(?:cuMemCreate|cuMemAlloc|cudaMalloc)\w*\b.{0,220}failed|status: -?\d+:? (?:cuMem|cudaMalloc)",
        ),
        words=("cumemcreate", "cumemalloc", "cudamalloc"),
        examples=(
            "/nvshmem/src/host/mem/mem_heap.cpp:1509: non-zero status: 2 cuMemCreate failed ",
            "/opt/nvshmem/src/host/mem/mem_heap.cpp:1201: error status: 2 (NVSHMEMX_ERROR_OUT_OF_MEMORY) "
            "cuMemCreate failed",
            "RuntimeError: /tmp/pip-req-build/include/tiny-cuda-nn/gpu_memory.h:582 "
            "cuMemCreate(&m_handles.back(), n_bytes_to_allocate, &prop, 0) failed with error "
            "CUDA_ERROR_OUT_OF_MEMORY",
            "cuMemAlloc failed with error 2",
        ),
    ),
    Signature(
        "math library handle without memory",
        _HANDLE,
        _handle,
        C.CUDA_OOM.code,
        tier=1,
        anchors=(
            b"CUBLAS_STATUS_NOT_INITIALIZED",
            b"CUDNN_STATUS_INTERNAL_ERROR",
            b"cublas runtime error : library not initialized",
            b"Blas GEMM launch failed",
            b"Blas xGEMMBatched launch failed",
            b"Blas SGEMM launch failed",
        ),
        words=(
            "cublas_status_not_initialized",
            "cudnn_status_internal_error",
            "library not initialized",
            "launch failed",
        ),
        examples=(
            "2018-07-23 17:46:40.242247: E tensorflow/stream_executor/cuda/cuda_blas.cc:459] failed to "
            "create cublas handle: CUBLAS_STATUS_NOT_INITIALIZED",
            "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
            "cupy_backends.cuda.libs.cublas.CUBLASError: CUBLAS_STATUS_NOT_INITIALIZED",
            "RuntimeError: cublas runtime error : library not initialized at "
            "/pytorch/aten/src/THC/THCGeneral.cpp:216",
            "tensorflow.python.framework.errors_impl.InternalError: Blas GEMM launch failed : "
            "a.shape=(100, 784), "
            "b.shape=(784, 10), m=100, n=10, k=784",
            "2021-10-12 20:59:07.624820: E tensorflow/stream_executor/cuda/cuda_dnn.cc:374] Could not create "
            "cudnn handle: CUDNN_STATUS_INTERNAL_ERROR",
        ),
    ),
    Signature(
        "ray oom prevention tail",
        _RAY_TAIL,
        _ray_tail,
        C.HOST_OOM_KILLED.code,
        anchors=(b"how to address the out of memory issue", b"To adjust the kill threshold"),
        words=("how to address the out of memory issue", "to adjust the kill threshold"),
        examples=(
            "(ActorModelRayActor pid=8249) Refer to the documentation on how to address the out of memory "
            "issue: https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html. Consider "
            "provisioning more memory on this node or reducing task parallelism by requesting more CPUs per "
            "task.",
            "(raylet) To adjust the kill threshold, set the environment variable "
            "`RAY_memory_usage_threshold` when starting Ray.",
        ),
    ),
    Signature(
        "kv cache profile without memory",
        _KV_PROFILE,
        _kv_profile,
        C.CUDA_OOM.code,
        anchors=(
            b"is larger than the profiled value",
            b"Available KV cache memory",
            b"reserved for KV Cache is",
            b" blocks: ",
        ),
        worth=(
            rb"is larger than the profiled value -?\d",
            rb"Available KV cache memory: -?\d",
            rb"reserved for KV Cache is -?\d",
            rb"blocks: 0, # CPU",
        ),
        words=("profiled value", "kv cache memory", "kv cache is", "# cpu blocks"),
        examples=(
            "[2025-07-02 07:41:59 DP0 TP0] max_total_tokens=131072 is larger than the profiled value "
            "-561981. Use the profiled value instead.",
            "INFO 07-02 07:41:59 [gpu_worker.py:227] Available KV cache memory: -3.55 GiB",
            "INFO 03-01 12:00:00 worker.py:267] ... PyTorch activation peak memory takes 1.26GiB; the "
            "rest of the "
            "memory reserved for KV Cache is -3.06GiB.",
            "INFO 05-06 10:11:12 executor_base.py:110] # cuda blocks: 0, # CPU blocks: 2048",
        ),
    ),
    Signature(
        "return code record 137",
        _KV_EXIT,
        _exit_137,
        C.HOST_OOM_KILLED.code,
        tier=1,
        anchors=(b"rc=137", b"RC=137", b"ode=137", b"ode: 137", b'ode": 137', b"status=137", b"code=-9"),
        worth=(rb"[=:] ?137\b", rb"code\"?[=:] ?-9\b"),
        words=("=137", ": 137", "=-9"),
        anchor_from="the key before its '=' where a space or quote stands between",
        examples=(
            "+[05:25:15] rc=137",
            '        "exitCode": 137,',
            "Job failed: exit_code=137",
            "<Popen: returncode=-9 args=['python', 'train.py']>",
        ),
    ),
    Signature(
        "cut cuda oom",
        _CUT_OOM,
        _cut_oom,
        C.CUDA_OOM.code,
        anchors=(b"CUDA ou", b"HIP ou", b"CUDA error: ou", b"HIP error: ou"),
        worth=(rb"(?:CUDA|HIP) (?:error: )?ou\w*(?: \w*){0,2}\s*$",),
        words=("cuda ou", "hip ou", "error: ou"),
        examples=(
            "RuntimeError: CUDA ou",
            "[rank2]: torch.OutOfMemoryError: CUDA out of mem",
            "RuntimeError: CUDA error: out of me",
            "RuntimeError: HIP out of mem",
        ),
    ),
)

parse = gated_reader(SIGNATURES)
