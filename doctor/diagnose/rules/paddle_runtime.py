"""PaddlePaddle's own words for a memory or environment failure that its other rows (oom_layers' "Out of
memory error on GPU 0", launch_env's dynload stack, loader's "The third-party dynamic library ...") do not
read.

Read from Paddle 1.8-2.6 (paddle/fluid/memory/detail/buddy_allocator.cc, memory/allocation/, phi/backends/
dynload/cudnn.h, python/paddle/device/__init__.py, base/framework.py; the strings of libpaddle.so 2.6.2):

cuda_oom: the buddy allocator (FLAGS_allocator_strategy=naive_best_fit, Paddle 1.x's default) when its pool
cannot grow: 1.x "Cannot allocate 2.000000GB in GPU 0, avaliable 1.234000GB, total 15.782000GB,
GpuMinChunkSize 256.000000B, GpuMaxChunkSize 14.217000GB, GPU memory used: 14.548000GB"; 2.4+ "Cannot allocate
2.000000GB in gpu:0, avaliable 1.2GB, total 16GB, used 14GB." (Paddle's own spelling "avaliable"). A CPU
place there is the host's memory.

cuda_oom, Paddle 1.x's first GPU chunk (platform/gpu_info.cc GpuMaxChunkSize, when the pool takes
FLAGS_fraction_of_gpu_memory_to_use of a GPU whose free memory is less): 1.0-1.1 "EnforceNotMet: enforce
allocating <= available failed, 2413512130 > 1833238272" (PADDLE_ENFORCE_LE without a message), 1.2-1.5
"Insufficient GPU memory to allocation. at [/paddle/paddle/fluid/platform/gpu_info.cc:262]", 1.6+ the same
with its hint "[Hint: Expected allocating <= available, but received allocating:X > available:Y.]". And the
source location of an enforce thrown by the CUDA allocator (memory/allocation/cuda_allocator.cc;
phi/core/memory/ in 3.x), whose AllocateImpl throws only when cudaMalloc failed: "(at
/paddle/paddle/fluid/memory/allocation/cuda_allocator.cc:69)" (2.x) or "at [.../cuda_allocator.cc:41]" (1.x),
the line a paste keeps when the message above it is cut; its FreeImpl's "GPU memory is freed in incorrect
device" (a bug, not memory) is read as no OOM.

host_oom: the host allocator (memory/allocation/system_allocator.cc, AlignedMalloc) when posix_memalign or
malloc failed: "ResourceExhaustedError: Fail to alloc memory of 4294967296 size, error code is 12." (2.x) and
"Fail to alloc memory of 4294967296 size." (2.5+), raised to Python as MemoryError.

driver_env: a CUDA library Paddle loads lazily is absent - "(PreconditionNotMet) Cannot load cudnn shared
library. Cannot invoke method cudnnGetVersion." (phi/backends/dynload/cudnn.h, the enforce of every cuDNN call
whose handle is null); a CPU-only wheel asked for a GPU - "ValueError: The device should not be 'gpu',
since PaddlePaddle is not compiled with CUDA" (paddle.set_device, 2.0+; "The device should not be gpu:0,
since ..."), "Paddle can't use CUDA device since it's not compiled with CUDA,Please recompile or
reinstall Paddle with GPU support.", "Paddle wasn't compiled with CUDA, but place is GPU.", "Paddle is
not compiled with CUDA. Cannot visit device synchronize." (the C++ places); and the launcher's guess of the
mode when neither collective nor parameter-server arguments were given (python/paddle/distributed/fleet/
launch.py, which_distributed_mode): 1.8 "Not found distinct arguments and not compiled with cuda. Default use
ps mode", 2.0-2.1 "... not compiled with cuda or xpu. Default use ps mode" (later "or xpu or npu"): a CPU-only
wheel, and a parameter-server launch without servers that then fails. 2.2+'s "... not compiled with cuda or
xpu. But found args.servers not empty, default use ps mode" is a CPU job that asked for servers (silent),
and "Not found distinct arguments and compiled with cuda or xpu. Default use collective mode" a GPU wheel
(silent).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_SIZE = r"[\d.]+\s*[KMGTP]?i?B"
_BUDDY = lazy_re.compile(
    r"Cannot allocate (?P<size>" + _SIZE + r") in (?P<place>(?:GPU |gpu:|GPU:|CPU|cpu)(?P<gpu>\d*)), "
    r"ava(?:il|li)able (?P<free>" + _SIZE + r")"
)


def _buddy(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("place").lower().startswith("cpu"):
        return [
            row.event(
                hit,
                f"Paddle's host memory pool could not allocate {m.group('size')} ({m.group('free')} left)",
                {"framework": "paddle", "size": m.group("size"), "free": m.group("free")},
                code=C.HOST_ALLOC_FAILED.code,
                dedupe=(C.HOST_ALLOC_FAILED.code, hit.rank, "paddle_buddy"),
            )
        ]
    facts: dict[str, Any] = {
        "format": "paddle_buddy",
        "reported_by": "PaddlePaddle",
        "likely_cause": "insufficient_memory",
        "size": m.group("size"),
        "free": m.group("free"),
    }
    if m.group("gpu"):
        facts["gpu_index"] = int(m.group("gpu"))
    return [
        row.event(
            hit,
            f"PaddlePaddle's GPU memory pool could not allocate {m.group('size')} on {m.group('place')} "
            f"(only {m.group('free')} available): lower the batch size, or "
            "FLAGS_fraction_of_gpu_memory_to_use is too small / another process holds the GPU",
            facts,
            dedupe=(row.code, hit.rank, "cuda_error"),
        )
    ]


_CHUNK = lazy_re.compile(
    r"enforce allocating <= available failed(?:, (?P<a>\d+) > (?P<b>\d+))?|"
    r"Insufficient GPU memory to allocation|"
    r"Expected allocating <= available, but received allocating:? ?(?P<a2>\d+) > available:? ?(?P<b2>\d+)"
)


def _chunk(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {
        "format": "paddle_gpu_chunk",
        "reported_by": "PaddlePaddle",
        "likely_cause": "insufficient_memory",
    }
    want, free = m.group("a") or m.group("a2"), m.group("b") or m.group("b2")
    if want and free and len(want) < 16 and len(free) < 16:
        facts["requested_bytes"], facts["free_bytes"] = int(want), int(free)
    return [
        row.event(
            hit,
            "Paddle could not reserve its first GPU memory chunk: the GPU's free memory is less than "
            "FLAGS_fraction_of_gpu_memory_to_use asks for (another process holds the GPU, or lower the "
            "fraction)",
            facts,
            dedupe=(row.code, hit.rank, "cuda_error"),
        )
    ]


_ALLOC_SITE = lazy_re.compile(
    r"(?:\(at |at \[)\S*?/(?:fluid|phi/core)/memory/allocation/"
    r"(?P<file>cuda_(?:managed_)?allocator)\.cc:\d+[)\]]"
)


def _alloc_site(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if any("freed in incorrect device" in ln.text for ln in [*hit.before(4, same_rank=False), hit.line]):
        return []
    return [
        row.event(
            hit,
            f"Paddle's CUDA allocator threw ({m.group('file')}.cc, which throws when cudaMalloc failed): the "
            "GPU ran out of memory (the message above the location is cut)",
            {
                "format": "paddle_allocator_site",
                "reported_by": "PaddlePaddle",
                "likely_cause": "insufficient_memory",
            },
            dedupe=(row.code, hit.rank, "cuda_error"),
        )
    ]


_HOST = lazy_re.compile(r"Fail to alloc memory of (?P<n>\d+) size(?:, error code is (?P<err>\d+))?\.")


def _host(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    n = int(m.group("n"))
    facts: dict[str, Any] = {"framework": "paddle", "allocator": "paddle_cpu"}
    if len(m.group("n")) < 16:
        facts["requested_bytes"] = facts["bytes"] = n
    if m.group("err"):
        facts["errno"] = int(m.group("err"))
    return [
        row.event(
            hit,
            f"Paddle's host allocator could not allocate {n} bytes (posix_memalign/malloc failed): the host "
            "or the container's memory limit is exhausted",
            facts,
            dedupe=(row.code, hit.rank, "paddle_host"),
        )
    ]


_CUDNN = lazy_re.compile(
    r"Cannot load (?P<lib>cudnn|cublas|cusolver|cusparse|curand|cufft|nccl|tensorrt) shared "
    r"library\. Cannot invoke method (?P<fn>\w+)"
)


def _cudnn(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    lib = f"lib{m.group('lib')}.so"
    return [
        row.event(
            hit,
            f"Paddle could not load {lib} to call {m.group('fn')}: the library is not installed, not on "
            "LD_LIBRARY_PATH, or of another CUDA than this Paddle wheel",
            {"library": lib, "reason": "dso_not_loaded", "framework": "paddle", "function": m.group("fn")},
            dedupe=(row.code, lib),
        )
    ]


_CPU_BUILD = lazy_re.compile(
    r"since PaddlePaddle is not compiled with CUDA|"
    r"Paddle can't use CUDA(?:Pinned)? device since it's not compiled with CUDA|"
    r"Paddle wasn't compiled with CUDA, but place is GPU|"
    r"Paddle is not compiled with CUDA\. Cannot visit|"
    # fleet/launch.py's guess of the mode (1.8-2.1): no servers were given, so the ps launch fails after it
    r"Not found distinct arguments and not compiled with cuda(?: or \w+)*\. Default use ps mode"
)


def _cpu_build(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"the installed Paddle is a CPU-only build and the job asked for a GPU ({m.group(0)}): install "
            "paddlepaddle-gpu for this CUDA (pip uninstall paddlepaddle first)",
            {"reason": "cpu_build_of_paddle", "framework": "paddle"},
            dedupe=(row.code, "cpu_build_of_paddle"),
        )
    ]


SIGNATURES = (
    Signature(
        "paddle buddy allocator out of memory",
        _BUDDY,
        _buddy,
        C.CUDA_OOM.code,
        anchors=(b"Cannot allocate ",),
        worth=(rb"Cannot allocate [\d.]+\s*[KMGTP]?i?B in ",),
        words=("cannot allocate",),
        examples=("Cannot allocate 2.000000GB in GPU 0, avaliable 1.234000GB, total 15.782000GB",),
    ),
    Signature(
        "paddle first gpu chunk larger than free memory",
        _CHUNK,
        _chunk,
        C.CUDA_OOM.code,
        anchors=(b"allocating <= available", b"Insufficient GPU memory to allocation"),
        words=("allocating <= available", "insufficient gpu memory to allocation"),
    ),
    Signature(
        "paddle cuda allocator's source location",
        _ALLOC_SITE,
        _alloc_site,
        C.CUDA_OOM.code,
        anchors=(b"/memory/allocation/cuda_",),
        worth=(rb"/memory/allocation/cuda_(?:managed_)?allocator\.cc:\d",),
        words=("/memory/allocation/cuda_",),
        anchor_from="the allocator's path in the location (at ...) after the cut message",
        examples=(" (at /paddle/paddle/fluid/memory/allocation/cuda_allocator.cc:69)",),
    ),
    Signature(
        "paddle host allocator",
        _HOST,
        _host,
        C.HOST_ALLOC_FAILED.code,
        anchors=(b"Fail to alloc memory of",),
        worth=(rb"Fail to alloc memory of \d+ size",),
        words=("fail to alloc memory of",),
    ),
    Signature(
        "paddle cannot load a cuda library",
        _CUDNN,
        _cudnn,
        C.LIBRARY_MISSING.code,
        anchors=(b"shared library. Cannot invoke method",),
        worth=(rb"shared library\. Cannot invoke method",),
        words=("cannot invoke method",),
    ),
    Signature(
        "paddle cpu build asked for a gpu",
        _CPU_BUILD,
        _cpu_build,
        C.NO_CUDA_DEVICE.code,
        anchors=(
            b"not compiled with CUDA",
            b"compiled with CUDA, but place is GPU",
            b"not compiled with cuda",
        ),
        worth=(
            rb"not compiled with CUDA",
            rb"wasn't compiled with CUDA, but place is GPU",
            rb"and not compiled with cuda(?: or \w+)*\. Default use ps mode",
        ),
        words=("not compiled with cuda", "compiled with cuda, but place is gpu"),
    ),
)
parse = gated_reader(SIGNATURES)
