"""nccl_usage of collective libraries outside torch: calls out of the library's life cycle, JAX's pmap
checks, and a CUDA graph capture that a collective broke.

Formats:
- rabit (XGBoost <= 1.x, rabit/src/engine.cc; xgboost4j-spark, dmlc): "Doing rabit call after Finalize"
  (rabit of 2016-2018: utils::Check in GetEngine once Finalize had run in that thread) and 1.x's "the rabit
  has not been initialized"; allreduce_base.cc's "can only call Init once". Printed by utils::Check
  (LOG(FATAL), or the JVM's glibc backtrace under it) - RUN378.
- Open MPI (ompi/runtime/ompi_mpi_params / errhandler, 1.x-5.x): "*** The MPI_Comm_rank() function was
  called after MPI_FINALIZE was invoked." then "*** This is disallowed by the MPI standard."; MPICH / Intel
  MPI (src/mpi/init): "Attempting to use an MPI routine after finalizing MPICH" - RUN378.
- JAX (jax/interpreters/pxla.py 0.2, jax/_src/interpreters/pxla.py 0.4): "On multi-host platforms, the
  input to pmapped functions must have leading axis size equal to the number of local devices if no
  `devices` argument is specified. Got axis_size=2, num_local_devices=8", "... pmapped functions must run
  across all devices, i.e. num_replicas * num_partitions should equal the number of local devices. Got
  num_replicas=...", "Leading axis size of input to pmapped function must equal the number of local devices
  passed to pmap. Got axis_size=4, num_local_devices=2."; core.py / lax/parallel.py (0.2-0.4) "NameError:
  unbound axis name: i" (a psum / all_gather over an axis no pmap binds) - RUN379.
- CUDA graph capture errors (cudaErrorStreamCapture*, 900-908, as torch raises them: "RuntimeError: CUDA
  error: operation failed due to a previous error during capture", "operation not permitted when stream is
  capturing", ...; ROCm's "HIP error: operation not permitted when stream is capturing",
  hipErrorStreamCapture*) in a worker of a multi-GPU job: vLLM's tensor-parallel workers ("(RayWorkerVllm
  pid=7)", VllmWorkerProcess) or a rank with collectives in its window (pynccl, custom all-reduce, NCCL). A
  collective issued inside the capture on a stream or with a library the capture cannot record invalidated
  it - RUN380.
  Without such a context the error is a single program's graph (left to the generic rows).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_RABIT = lazy_re.compile(
    r"Doing rabit call after Finalize|the rabit has not been initialized|"
    r"allreduce_base\.cc:\d+\]?:? can only call Init once"
)
_MPI_FINALIZED = lazy_re.compile(
    r"The (?P<fn>P?MPI_\w+)\(\) function was called after MPI_FINALIZE was invoked|"
    r"Attempting to use an MPI routine after finalizing (?P<impl>MPICH|MPI)\b"
)
_PMAP = lazy_re.compile(
    r"the input to pmapped functions must have leading axis size equal to the number of local devices|"
    r"pmapped functions must run across all devices|"
    r"Leading axis size of input to pmapped function must equal the number of local devices|"
    r"unbound axis name: (?P<axis>[^\s.]+)"
)
_SIZES = lazy_re.compile(r"axis_size=(\d+), num_local_devices=(\d+)")
_CAPTURE = lazy_re.compile(
    r"(?:CUDA error|Cuda failure|cudaError\w*|HIP error|hipError\w*)\W+(?P<what>operation failed due to a "
    r"previous error during "
    r"capture|operation not permitted when stream is capturing|operation would result in a merge of "
    r"separate capture sequences|capture was not ended in the same stream as it began|capturing stream has "
    r"unjoined work|dependency created on uncaptured work in another stream|operation would make the legacy "
    r"stream depend on a capturing blocking stream|operation not permitted on an event last recorded in a "
    r"capturing stream)"
)
# A worker of a multi-GPU job: a vLLM tensor-parallel worker's prefix, or collectives in the window.
_WORKER_PROC = lazy_re.compile(r"RayWorker|VllmWorker|Worker_TP|\bTP\d")
# vLLM's multiproc_worker_utils.py (0.5-0.8): "Worker VllmWorkerProcess pid 25756 died, exit code: -15",
# "Killing local vLLM worker processes"; Ray's worker wrapper.
_WORKER_TEXT = lazy_re.compile(r"VllmWorkerProcess|local vLLM worker processes|RayWorkerWrapper")
_COLLECTIVE_WORDS = lazy_re.compile(
    r"pynccl|custom_all_reduce|\bnccl|NCCL|all_reduce|allreduce|all_gather|reduce_scatter|ProcessGroup|"
    r"tensor_model_parallel|tensor_parallel"
)


def _rabit(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    twice = "Init once" in m.group(0)
    return [
        row.event(
            hit,
            f"{hit.who()}: rabit (XGBoost's allreduce) was "
            + ("initialised a second time" if twice else "called after the program finalized it")
            + ": the order of Init / Finalize and the training calls in this worker",
            {"framework": "rabit", "rabit_check": m.group(0)},
            dedupe=(row.code, "rabit"),
        )
    ]


def _mpi_finalized(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "mpi"}
    if m.group("fn"):
        facts["mpi_call"] = m.group("fn")
    return [
        row.event(
            hit,
            f"{hit.who()}: "
            + (f"{m.group('fn')}() was" if m.group("fn") else "an MPI routine was")
            + " called after MPI_Finalize: the program (or a library it loads) uses MPI after its shutdown",
            facts,
            dedupe=(row.code, hit.rank, "mpi"),
        )
    ]


def _pmap(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "jax"}
    sizes = _SIZES.search(hit.text)
    if sizes:
        facts["axis_size"], facts["num_local_devices"] = int(sizes.group(1)), int(sizes.group(2))
    if m.group("axis"):
        facts["axis_name"] = m.group("axis")
        what = f"a collective names the axis {m.group('axis')!r}, which no pmap / shard_map around it binds"
    else:
        what = "a pmap's mapped axis does not match the devices this process owns"
    return [row.event(hit, f"{hit.who()}: JAX rejected the call: {what}", facts, dedupe=(row.code, "jax"))]


def _capture(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    window = [*hit.before(24, same_rank=False), hit.line, *hit.after(48, same_rank=False)]
    proc = next((ln.proc for ln in window if ln.proc and _WORKER_PROC.search(ln.proc)), None)
    if proc is None:  # vLLM's multiproc executor names its workers in its own lines, not as a prefix
        proc = next((w.group(0) for ln in window if (w := _WORKER_TEXT.search(ln.text))), None)
    words = next((w.group(0) for ln in window if (w := _COLLECTIVE_WORDS.search(ln.text))), None)
    if proc is None and words is None:
        return None
    facts: dict[str, Any] = {"cuda_error": m.group("what")}
    if proc:
        facts["worker"] = proc
    if words:
        facts["collective_context"] = words
    return [
        row.event(
            hit,
            f"{hit.who()}: a CUDA graph capture failed in a worker of a multi-GPU job "
            f"({m.group('what')}): a collective issued while the stream was capturing broke the capture",
            facts,
            dedupe=(row.code, hit.rank, "capture"),
        )
    ]


SIGNATURES = (
    Signature(
        "rabit outside its life cycle",
        _RABIT,
        _rabit,
        C.COLLECTIVE_AFTER_FINALIZE.code,
        anchors=(b"rabit call after Finalize", b"rabit has not been initialized", b"can only call Init once"),
        words=("rabit call after finalize", "rabit has not been initialized", "can only call init once"),
    ),
    Signature(
        "MPI called after MPI_Finalize",
        _MPI_FINALIZED,
        _mpi_finalized,
        C.COLLECTIVE_AFTER_FINALIZE.code,
        anchors=(b"was called after MPI_FINALIZE", b"MPI routine after finalizing"),
        words=("was called after mpi_finalize", "mpi routine after finalizing"),
    ),
    Signature(
        "JAX pmap device check",
        _PMAP,
        _pmap,
        C.JAX_PMAP_USAGE.code,
        anchors=(
            b"pmapped functions must",
            b"pmapped function must",
            b"unbound axis name: ",
        ),
        words=("pmapped function", "unbound axis name: "),
    ),
    Signature(
        "CUDA graph capture broken in a multi-GPU worker",
        _CAPTURE,
        _capture,
        C.COLLECTIVE_IN_GRAPH_CAPTURE.code,
        anchors=(
            b"previous error during capture",
            b"when stream is capturing",
            b"separate capture sequences",
            b"in the same stream as it began",
            b"stream has unjoined work",
            b"on uncaptured work",
            b"capturing blocking stream",
            b"recorded in a capturing stream",
        ),
        words=(
            "during capture",
            "stream is capturing",
            "capture sequences",
            "same stream as it began",
            "unjoined work",
            "uncaptured work",
            "capturing blocking stream",
            "capturing stream",
        ),
    ),
)
parse = gated_reader(SIGNATURES)
