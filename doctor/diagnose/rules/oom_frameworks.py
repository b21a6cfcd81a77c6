"""cuda_oom in the words of training frameworks that catch the allocator's error and say it their own way.

- fairseq's trainer (fairseq/trainer.py, read in 2018, 2019, 2020 and the last release, 0.12): it catches
  a RuntimeError whose text holds "out of memory", logs it and either recovers or gives up:
  2018-2019 "| WARNING: ran out of memory, skipping batch", "| WARNING: ran out of memory with exception:
  ...", "| WARNING: OOM in all workers, skipping update", "| WARNING: ran out of memory, retrying batch";
  0.9-0.12 (logging) "attempting to recover from OOM in forward/backward pass", "OOM: Ran out of memory with
  exception: ...", "ran out of memory in validation step, retrying batch" and, when the optimizer step runs
  out, "OOM during optimization, irrecoverable" (then re-raised). A recovered OOM is still an OOM: the run
  is at the GPU's limit, and a later failure of the recovery path itself (fairseq#2857's UnboundLocalError
  after the warning) has it as its cause (tier 1 for the recovered ones, behind any other failure).
- MindSpore's device memory (runtime/pynative/op_runner.cc, runtime/device/kernel_runtime.cc, the Ascend /
  GPU memory managers' mem_dynamic_allocator, 1.x-2.x): "RuntimeError: Malloc for kernel output failed,
  Memory isn't enough, node:Default/Cast-op446" (input / output / workspace), "Device memory isn't enough
  and alloc failed, alloc size:1048576", "Out of Memory!!! Request memory size: 33100113920B, Memory
  Statistic:" (the memory manager's, "#umsg#Framework Error Message:#umsg#" before it in newer releases).
  (The pool's "TotalUsedMemStatistics ... is more than total mem size" record is oom_layers'.)
- MXNet's pooled GPU storage (src/storage/pooled_storage_manager.h, 0.7-0.9 PooledStorageManager<
  GPUDeviceStorage>::Alloc: two tries, the pool released between them, then LOG(FATAL) << "Memory allocation
  failed."), as dmlc's logging prints it: "[19:03:47] src/storage/./pooled_storage_manager.h:62: Memory
  allocation failed." The message alone says nothing of the device, so the file name is required; later
  releases say "cudaMalloc failed: out of memory" (oom_layers').
- Hugging Face text-generation-inference's warmup (server/text_generation_server/models/flash_causal_lm.py,
  1.x-3.x), which turns the allocator's OutOfMemoryError into "RuntimeError: Not enough memory to handle 4096
  prefill tokens. You need to decrease `--max-batch-prefill-tokens`" (later "Not enough memory to handle 16000
  total tokens with 4096 prefill tokens. You need to decrease `--max-batch-total-tokens` or
  `--max-batch-prefill-tokens`"), the router's "Warmup(Generation(...))" wrapping it. The words alone are
  common to many C libraries ("Not enough memory to handle image header"): the token count is required.
- The exception type of an allocator's failure with its message cut off or on the lines below it:
  TensorFlow's errors_impl.ResourceExhaustedError (its OOM: "OOM when allocating tensor ...", "failed to
  allocate memory"), PaddlePaddle's ResourceExhaustedError (paddle/fluid/platform/enforce.h, the allocator's
  "Out of memory error on GPU 0" on the next lines, its "Error Message Summary:" block), wrapped by Python
  ("RuntimeError: ResourceExhaustedError:") or pasted as the thread's title above the log. The line holds
  the type and nothing after it; a message that follows on the line is read by its own row (a gRPC "Received
  message larger than max" is RESOURCE_EXHAUSTED too, and is not read here). Tier 1: the message, where the
  paste keeps it, leads.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_FAIRSEQ = lazy_re.compile(
    r"(?P<fatal>OOM during optimization, irrecoverable)|"
    r"(?P<recover>attempting to recover from OOM in forward/backward pass|"
    r"ran out of memory in validation step, retrying batch|OOM in all workers, skipping update|"
    r"(?:\| WARNING: )?ran out of memory(?:, (?:skipping|retrying) batch| with exception:)|"
    r"OOM: Ran out of memory with exception)"
)
_MINDSPORE = lazy_re.compile(
    r"Malloc for kernel (?P<what>input|output|workspace) failed, Memory isn't enough"
    r"(?:, node:\s*(?P<node>\S+))?|"
    r"Device memory isn't enough and alloc failed, alloc size:\s*(?P<size>\d+)|"
    r"Out of Memory!!! Request memory size: (?P<req>\d+)B?"
)

_TGI_WARMUP = lazy_re.compile(
    r"Not enough memory to handle (?P<n>\d+) (?:prefill|total) tokens"
    r"(?:.*?--(?P<knob>max-batch-(?:prefill|total)-tokens))?"
)

_MXNET_POOL = lazy_re.compile(r"pooled_storage_manager\.h:\d+\]?:? Memory allocation failed")

_EXHAUSTED_TYPE = lazy_re.compile(
    r"^\s*(?:[\w.]+Error: )?(?:[\w.]+\.)?ResourceExhaustedError(?: \(see above for traceback\))?:?\s*$"
)


def _event(row: Signature, hit: Hit, message: str, facts: dict[str, Any], tier: int) -> list[Event]:
    facts = {"likely_cause": "insufficient_memory", "error_line": clip(hit.text.strip(), 200), **facts}
    return [row.event(hit, message, facts, tier=tier, dedupe=(C.CUDA_OOM.code, hit.rank, "framework_oom"))]


def _fairseq(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "fairseq", "reported_by": "fairseq trainer"}
    if m.group("fatal"):
        facts["recovered"] = False
        return _event(
            row, hit, "fairseq ran out of GPU memory in the optimizer step and could not recover", facts, 0
        )
    facts["recovered"] = True
    return _event(
        row,
        hit,
        "fairseq caught a CUDA out-of-memory error and tried to recover (skipped or retried the batch): the "
        "run is at the GPU's memory limit; lower --max-tokens / --batch-size or the sequence length",
        facts,
        1,
    )


def _mindspore(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "mindspore", "reported_by": "MindSpore memory manager"}
    if m.group("node"):
        facts["node"] = m.group("node")
    if m.group("what"):
        facts["buffer"] = f"kernel {m.group('what')}"
    size = m.group("size") or m.group("req")
    if size and len(size) <= 15:
        facts["requested_bytes"] = int(size)
    return _event(
        row,
        hit,
        "MindSpore could not allocate device memory"
        + (f" for {facts['buffer']} of {m.group('node')}" if m.group("node") else "")
        + ": the device is out of memory; reduce batch_size or the sequence / image size",
        facts,
        0,
    )


def _mxnet_pool(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "mxnet", "reported_by": "MXNet pooled storage manager"}
    return _event(
        row,
        hit,
        "MXNet's pooled GPU storage could not allocate even after releasing its pool: the GPU is out of "
        "memory; lower the batch size (per device) or the input size",
        facts,
        0,
    )


def _tgi_warmup(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "text-generation-inference", "reported_by": "TGI warmup"}
    facts["tokens"] = int(m.group("n")[:12])
    knob = m.group("knob") or "max-batch-prefill-tokens"
    return _event(
        row,
        hit,
        f"text-generation-inference ran out of GPU memory in its warmup batch ({m.group('n')} tokens): lower "
        f"--{knob} (or the model's memory: quantize, more shards)",
        facts,
        0,
    )


def _exhausted_type(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"exception": "ResourceExhaustedError", "message": "cut"}
    return _event(
        row,
        hit,
        "ResourceExhaustedError with its message cut: TensorFlow's and PaddlePaddle's allocator ran out of "
        "(GPU) memory; lower the batch size or the input size",
        facts,
        1,
    )


SIGNATURES = (
    Signature(
        "fairseq trainer oom",
        _FAIRSEQ,
        _fairseq,
        C.CUDA_OOM.code,
        anchors=(
            b"OOM during optimization",
            b"recover from OOM",
            b"ran out of memory",
            b"Ran out of memory",
            b"OOM in all workers",
        ),
        words=("oom during optimization", "recover from oom", "ran out of memory", "oom in all workers"),
    ),
    Signature(
        "mindspore device memory",
        _MINDSPORE,
        _mindspore,
        C.CUDA_OOM.code,
        anchors=(b"Memory isn't enough", b"memory isn't enough", b"Out of Memory!!! Request memory size"),
        words=("memory isn't enough", "out of memory!!! request memory size"),
    ),
    Signature(
        "tgi warmup out of memory",
        _TGI_WARMUP,
        _tgi_warmup,
        C.CUDA_OOM.code,
        anchors=(b"Not enough memory to handle",),
        worth=(rb"Not enough memory to handle \d+ (?:prefill|total) tokens",),
        words=("not enough memory to handle",),
        examples=(
            "RuntimeError: Not enough memory to handle 4096 prefill tokens. You need to decrease "
            "`--max-batch-prefill-tokens`",
        ),
    ),
    Signature(
        "mxnet pooled storage allocation",
        _MXNET_POOL,
        _mxnet_pool,
        C.CUDA_OOM.code,
        anchors=(b"pooled_storage_manager.h:",),
        worth=(rb"pooled_storage_manager\.h:\d+\]?:? Memory allocation failed",),
        words=("pooled_storage_manager.h:",),
    ),
    Signature(
        "resource exhausted type with its message cut",
        _EXHAUSTED_TYPE,
        _exhausted_type,
        C.CUDA_OOM.code,
        tier=1,
        anchors=(b"ResourceExhaustedError",),
        worth=(rb"ResourceExhaustedError(?: \(see above for traceback\))?:?\s*$",),
        words=("resourceexhaustederror",),
    ),
)

parse = gated_reader(SIGNATURES)
