"""Caffe's and Torch7's multi-GPU training aborting on their own invariants (RUN601, RUN722, nccl_usage).

Formats, read at the source (BVLC/caffe src/caffe/parallel.cpp apply_buffers, 1.0; NVIDIA/caffe 0.15-0.17
src/caffe/syncedmem.cpp; both through glog, "F<mmdd> <time> <tid> <file>:<line>] Check failed: <expr> (<a>
vs. <b>)" followed by "*** Check failure stack trace: ***"):

- parallel.cpp: "Check failed: total_size == (ptr == buffer ? 1 : ptr - buffer) (118335438 vs. 117426126)",
  under GPUParams<>::configure / P2PSync<>::P2PSync: the net a worker GPU built holds another number of
  learnable parameters than the root solver's net, so the shared parameter buffer cannot be laid over it (a
  custom layer that sizes its blobs per instance, a fork whose layers were never made multi-GPU safe);
- syncedmem.cpp: "Check failed: Caffe::current_device() == gpu_device_ (0 vs. 1)" (NVCaffe), "Check failed:
  device == device_" / "Check failed: attributes.device == device_" (BVLC's check_device in a debug build): a
  blob's GPU memory used from another GPU's thread (a layer or data transformer sharing a buffer across the
  solvers).

Torch7's GPU check of one op's tensors (torch/cutorch lib/THC, torch/cunn lib/THCUNN, 2015-2017; PyTorch 0.x
kept THC and THCUNN): THC's THAssert(THCudaTensor_checkGPU(state, n, ...)) before a kernel, printed by Lua as
"<file>.lua:51: Assertion `THCudaTensor_checkGPU(state, 4, r_, t, m1, m2)' failed.  at .../THC/
THCTensorMathBlas.cu:79" (under "[thread 1 callback]" for threads.lua's workers), the generic
THCAssertSameGPU(THCTensor_(checkGPU)(...)) and THCUNN_assertSameGPU with their message "Some of
weight/gradient/input tensors are located on different GPUs. Please move them to a single one.": a multi-GPU
module (cunn's DataParallelTable, nn.GPU, a model split by hand) fed a tensor of another GPU (RUN722). THC's
THArgCheck "arguments are located on different GPUs" of PyTorch 0.x, which released threads label ambiguous
as often as not, is not read.

Silent: parallel.cpp's checks of a CUDA or NCCL call ("Check failed: error == cudaSuccess (10 vs. 0) invalid
device ordinal", "Check failed: result == ncclSuccess (2 vs. 0) system error": the rows of those errors read
them), and the same expressions without glog's file and line (a question about the code).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_CHECK = lazy_re.compile(
    r"\b(?P<file>parallel\.cpp|syncedmem\.cpp):\d+\] Check failed: (?P<expr>"
    r"total_size == \(ptr == buffer \? 1 : ptr - buffer\)|"
    r"(?:Caffe::current_device\(\)|device|attributes\.device) == (?:gpu_device_|device_)(?!\w))"
    r"(?: \((?P<a>-?\d+) vs\. (?P<b>-?\d+)\))?"
)


def _caffe_check(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    sizes = m.group("expr").startswith("total_size")
    if sizes != (m.group("file") == "parallel.cpp"):
        return None
    facts: dict[str, Any] = {"framework": "caffe", "check": m.group("expr"), "source": m.group("file")}
    if m.group("a") is not None:
        facts["values"] = [int(m.group("a")), int(m.group("b"))]
    if sizes:
        why = (
            "a worker GPU's net holds another number of learnable parameters than the root solver's "
            "(a layer that sizes its blobs per instance is not multi-GPU safe)"
        )
    else:
        why = (
            "a blob's GPU memory was used from another GPU's solver thread (a layer or data transformer "
            "sharing a buffer across GPUs)"
        )
    return [
        row.event(
            hit,
            f"Caffe's multi-GPU training aborted on its own check in {m.group('file')}: {why}; train on one "
            "GPU or fix that layer",
            facts,
            dedupe=(row.code, m.group("file")),
        )
    ]


_CHECK_GPU = lazy_re.compile(
    r"Assertion [`'](?P<check>THC\w*?_?\(?checkGPU\)?\([^)\n]{0,80}\))' failed|"
    r"Some of weight/gradient/input tensors are located on different GPUs"
)
_THC_SOURCE = lazy_re.compile(r"\bat \S*/(?P<src>THC\w*/\S+?\.cu):(?P<line>\d+)")


def _check_gpu(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "torch7", "problem": "tensors_on_different_gpus"}
    if m.group("check"):
        facts["check"] = m.group("check")
    src = _THC_SOURCE.search(hit.text, m.end())
    if src:
        facts["source"] = f"{src.group('src').rsplit('/', 1)[-1]}:{src.group('line')}"
    return [
        row.event(
            hit,
            f"{hit.who()}: the GPU check of one op failed: its tensors live on different GPUs (a multi-GPU "
            "model - DataParallelTable, nn.GPU, a model split by hand - fed a tensor of another GPU, or "
            "cutorch.setDevice changed between creating the module and running it); move the inputs to the "
            "module's GPU (:cuda() after cutorch.setDevice) before the call",
            facts,
            dedupe=(row.code,),
        )
    ]


SIGNATURES = (
    Signature(
        "caffe multi-gpu invariant",
        _CHECK,
        _caffe_check,
        C.CAFFE_MULTI_GPU_MISMATCH.code,
        anchors=(b"] Check failed: ",),
        worth=(rb"(?:parallel|syncedmem)\.cpp:\d+\] Check failed: ",),
        words=("check failed: ",),
        anchor_from="glog's '] Check failed: ' after the file and line before each expression",
        examples=(
            "F0321 13:50:58.896466   271 parallel.cpp:55] Check failed: total_size == (ptr == buffer ? 1 : "
            "ptr - buffer) (118335438 vs. 117426126)",
            "F1123 09:52:47.834031 15880 syncedmem.cpp:178] Check failed: Caffe::current_device() == "
            "gpu_device_ (0 vs. 1)",
            "F0602 11:03:12.000412  4411 syncedmem.cpp:293] Check failed: device == device_ (1 vs. 0)",
        ),
    ),
    Signature(
        "torch7 tensors on different gpus",
        _CHECK_GPU,
        _check_gpu,
        C.TENSORS_ON_DIFFERENT_GPUS.code,
        anchors=(b"checkGPU", b"located on different GPUs"),
        worth=(rb"checkGPU\)?\([^)\n]{0,80}\)' failed", rb"tensors are located on different GPUs"),
        words=("checkgpu", "located on different gpus"),
    ),
)
parse = gated_reader(SIGNATURES)
