"""cuda_oom reported by another layer than torch's CUDA caching allocator (which `cuda_oom` reads).

Each row is a family read at the code that prints it:
- torch <= 0.4 and Lua torch (THC's THCudaCheck): "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp
  line=663 error=2 : out of memory" and the exception "cuda runtime error (2) : out of memory at
  /pytorch/torch/lib/THC/generic/THCStorage.cu:58" (error 2 is cudaErrorMemoryAllocation).
- other devices' copies of the caching allocator: "XPU out of memory. Tried to allocate ..." (torch's
  XPUCachingAllocator), torch_npu's "NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; ...)", Cambricon's
  "MLU out of memory", the MPS allocator's "MPS backend out of memory (MPS allocated: ..., other allocations:
  ..., max allowed: ...). Tried to allocate ...".
- a CUDA allocation call that failed, as the code around it words it: CUDACHECK macros ("node1: Test CUDA
  failure common.cu:733 'out of memory'" of nccl-tests, "Failed: Cuda error sample.cu:40 'out of memory'"
  of NCCL's examples), cudaMalloc wrappers ("cudaMalloc failed: out of memory" of MXNet's storage
  manager, TensorRT-LLM's "CUDA runtime error in ::cudaMallocAsync(ptr, n, stream): out of memory").
- frameworks' own allocators: TensorFlow ("OOM when allocating tensor with shape[32,512,512] and type float
  on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc", the BFC allocator's "Allocator
  (GPU_0_bfc) ran out of memory trying to allocate 1.22GiB (rounded to 1310720000)requested by op Conv2D";
  its "The caller indicates that this is not a failure" variant is a performance note, not a failure),
  XLA / JAX / torch_xla ("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 10737418240 bytes.",
  "Out of memory allocating 4294967296 bytes", "Failed to allocate request for 32.00MiB (33554432B) on
  device ordinal 0", the TPU compiler's "Ran out of memory in memory space hbm", the TPU runtime's
  "Attempting to allocate 1.23G. That was not possible. There are 800.00M free."), PaddlePaddle ("Out of
  memory error on GPU 0. Cannot allocate 256.000244MB memory on GPU 0, 15.719727GB memory has been allocated
  and available memory is only 48.000000MB."), CuPy's memory pool ("cupy.cuda.memory.OutOfMemoryError: Out
  of memory allocating 1,073,741,824 bytes (allocated so far: 0 bytes).").
- vLLM's KV-cache sizing at start-up (worker/ and v1/core/kv_cache_utils.py): "No available memory for the
  cache blocks. Try increasing `gpu_memory_utilization` ...", "The model's max seq len (32768) is larger
  than the maximum number of tokens that can be stored in KV cache (20000).", v1's "To serve at least one
  request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the
  available KV cache memory (9.47 GiB)." The GPU holds too little for the weights plus one sequence.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gate, read
from pgdoctor.knowledge.clip import clip
from pgdoctor.knowledge.units import SIZE, fmt_bytes, to_bytes
from pgdoctor.model import lazy_re

_W = r"\s+"


def _oom(
    row: Signature, hit: Hit, message: str, facts: dict[str, Any], tier: Optional[int] = None
) -> list[Event]:
    facts.setdefault("likely_cause", "insufficient_memory")
    if "requested_bytes" in facts:
        facts["bytes"] = facts["requested_bytes"]
    return [row.event(hit, message, facts, tier=tier, dedupe=(row.code, hit.rank, "cuda_error"))]


# -- torch <= 0.4 / Lua torch: THC ----------------------------------------------------------------------
_THC = lazy_re.compile(
    r"cuda runtime error \(2\) ?: out of memory(?: at (?P<at>\S+))?|"
    r"(?:THCudaCheck FAIL file=(?P<file>\S+) line=\s*(?P<line>\d+) )?error=2 : out of memory"
)


def _thc(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"format": "thc", "reported_by": "THC", "cuda_error": 2}
    where = m.group("at") or (f"{m.group('file')}:{m.group('line')}" if m.group("file") else "")
    if where:
        facts["where"] = where
    return _oom(row, hit, "CUDA out of memory (cuda runtime error 2, reported by torch's THC)", facts)


# -- other devices' caching allocators ------------------------------------------------------------------
_DEVICE = lazy_re.compile(r"\b(?P<dev>XPU|NPU|MLU|MPS backend) out of memory")
_DEV_REQ = lazy_re.compile(rf"Tried to allocate {SIZE}")
_DEV_IDX = lazy_re.compile(r"\((?:GPU|NPU|XPU|MLU) (\d+);|\b(?:GPU|NPU|XPU|MLU) (\d+) has a total capac")


def _device(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    text, _ = hit.block(4)
    dev = m.group("dev").split()[0]
    facts: dict[str, Any] = {"format": dev.lower(), "reported_by": f"the {dev} allocator"}
    req = _DEV_REQ.search(text)
    if req:
        facts["requested_bytes"] = to_bytes(req.group(1), req.group(2))
    idx = _DEV_IDX.search(text)
    if idx:
        facts["gpu_index"] = int(idx.group(1) or idx.group(2))
    msg = f"{dev} out of memory" + (
        f": tried to allocate {fmt_bytes(facts['requested_bytes'])}" if "requested_bytes" in facts else ""
    )
    if "gpu_index" in facts:
        msg += f" on device {facts['gpu_index']}"
    return _oom(row, hit, msg + " (the device memory is exhausted)", facts)


# -- a CUDA allocation call that failed, in the words of the code around it ------------------------------
_CHECK = lazy_re.compile(
    r"(?:CUDA|Cuda) (?:failure|error) (?P<where>\S+:\d+) '(?:out of memory|cudaErrorMemoryAllocation)'|"
    # glog CHECKs on a CUDA call: Caffe's "Check failed: error == cudaSuccess (2 vs. 0)  out of memory",
    # Paddle's "Check failed: cudaSuccess == cudaStat (0 vs. 2) Cuda Error: out of memory"; tensorview's
    # (spconv) "cuda failed with error 2 out of memory"
    r"cudaSuccess[^\n]{0,40}?\((?:2 vs\. 0|0 vs\. 2)\)\s*(?:Cuda Error: )?out of memory|"
    r"cuda failed with error 2 out of memory"
)
_MALLOC = lazy_re.compile(
    r"\b(?P<call>cu(?:da)?(?:Mem)?(?:Malloc|Alloc|alloc)\w*)\b(?:\([^)]*\))?[^:\n]{0,40}?: "
    r"(?:out of memory|cudaErrorMemoryAllocation|CUDA_ERROR_OUT_OF_MEMORY)"
)


def _check(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"format": "cuda_error", "reported_by": "a CUDA error check"}
    if m.group("where"):
        facts["where"] = m.group("where")
    where = f" at {m.group('where')}" if m.group("where") else ""
    return _oom(row, hit, f"a CUDA call{where} failed: out of memory (cudaErrorMemoryAllocation)", facts)


def _malloc(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"format": "cuda_error", "reported_by": m.group("call")}
    return _oom(
        row, hit, f"{m.group('call')} failed: out of memory (the GPU has no room for the allocation)", facts
    )


# -- TensorFlow ------------------------------------------------------------------------------------------
_TF = lazy_re.compile(
    r"OOM when allocating tensor(?: with shape\s*\[(?P<shape>[^\]]*)\])?(?P<rest>.*)|"
    r"Allocator \((?P<alloc>\w+)\) ran out of memory trying to allocate (?P<size>[\d.]+\s*\w+)"
    r"(?: \(rounded to (?P<rounded>\d+)\))?|"
    # TF's copy of an input to the GPU whose destination buffer could not be allocated (eager and
    # tf.function, TF 2.x): "Failed copying input tensor from .../device:CPU:0 to .../device:GPU:0 in
    # order to run _EagerConst: Dst tensor is not initialized."
    r"Dst tensor is not initialized|"
    # the rendezvous' copy between devices of one worker (rendezvous_mgr.cc): "ResourceExhaustedError:
    # SameWorkerRecvDone unable to allocate output tensor. Key: <src>;<incarnation>;<dst device>;<edge>;0:0"
    r"SameWorkerRecvDone unable to allocate output tensor|"
    # tf.data's batch (batch_dataset_op.cc), in host memory: "Failed to allocate memory for the batch of
    # component 0"
    r"(?P<batch>Failed to allocate memory for the batch of component \d+)"
)
_TF_GPU = lazy_re.compile(r"device:GPU:(\d+)|\bGPU_(\d+)_bfc")
# A tensor of host memory: "... on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu" (also
# mklcpu), the rendezvous key's destination a CPU ("Key: /job:../device:GPU:0;..;/job:../device:CPU:0;...").
_TF_HOST = lazy_re.compile(
    r"\bby allocator (?:cpu|mklcpu)\b|"
    r"SameWorkerRecvDone.*Key: [^;\s]*;[0-9a-f]+;[^;\s]*device:CPU:\d+;"
)


def _tf(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    text, _ = hit.block(2)
    if "not a failure" in text:
        return []  # the BFC allocator's note that a larger workspace would have been faster
    # XLA's copy of the BFC allocator (xla/tsl/framework) prints the same words under JAX
    xla = "xla/" in hit.text or "tsl/" in hit.text
    facts: dict[str, Any] = {
        "format": "xla" if xla else "tensorflow",
        "reported_by": "XLA" if xla else "TensorFlow",
    }
    if m.group("batch") or _TF_HOST.search(hit.text):
        facts["memory"] = "host"
        msg = f"{facts['reported_by']} ran out of host memory: {clip(hit.text.strip(), 160)}"
        return [row.event(hit, msg, facts, code=C.HOST_ALLOC_FAILED.code, dedupe=(C.HOST_ALLOC_FAILED.code,))]
    src = hit.text
    if "SameWorkerRecvDone" in src:  # the key's destination device, not its source
        parts = src.split("Key:")[-1].split(";")
        src = parts[2] if len(parts) > 2 else src
    g = _TF_GPU.search(src)
    if g:
        facts["gpu_index"] = int(g.group(1) or g.group(2))
    if m.group("rounded"):
        facts["requested_bytes"] = int(m.group("rounded"))
    if m.group("shape") is not None:
        facts["shape"] = m.group("shape")
        what = f"a tensor of shape [{m.group('shape')}]"
    else:
        what = m.group("size") or "a tensor"
    where = f" on GPU {facts['gpu_index']}" if "gpu_index" in facts else ""
    return _oom(row, hit, f"{facts['reported_by']} ran out of GPU memory allocating {what}{where}", facts)


# -- XLA (JAX, TensorFlow/XLA, torch_xla) -----------------------------------------------------------------
_XLA = lazy_re.compile(
    # (a terminal may cut it after "Out": the rest of the sentence alone is still XLA's)
    # (the byte count, or the human-readable size of newer XLA: "... to allocate 24.00GiB.")
    r"Out of memory (?:while trying to allocate|allocating) (?:(?P<bytes>\d+) bytes|[\d.]+\s?[KMGT]i?B\b)|"
    r"^\s*of memory while trying to allocate (?P<b3>\d+) bytes|"
    r"Failed to allocate request for (?P<size>[\d.]+\s*\w+) \((?P<b2>\d+)B\) on device ordinal (?P<dev>\d+)|"
    r"Ran out of memory in memory space (?P<space>\w+)|"
    r"Attempting to (?:allocate|reserve) \S+(?: at the bottom of memory)?\. That was not possible\."
)


def _xla(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"format": "xla", "reported_by": "XLA"}
    b = m.group("bytes") or m.group("b2") or m.group("b3")
    if b:
        facts["requested_bytes"] = int(b)
    if m.group("dev"):
        facts["gpu_index"] = int(m.group("dev"))
    msg = "XLA ran out of device memory"
    if m.group("space"):
        msg += f" (memory space {m.group('space')})"
        facts["memory_space"] = m.group("space")
    if b:
        msg += f" allocating {fmt_bytes(int(b))}"
    if "gpu_index" in facts:
        msg += f" on device {facts['gpu_index']}"
    return _oom(row, hit, msg, facts)


# XLA's report of the allocation that failed, printed under its OOM only (a paste often keeps only part of
# it): GPU's BufferAssignment::ToVerboseString ("BufferAssignment OOM Debugging.", "BufferAssignment
# stats:", "Peak buffers:", then per buffer "Size: 96.00MiB", "Operator: op_name=...", "XLA Label: fusion",
# "Shape: f32[128,256,768]", "=========="), the TPU compiler's ("Exceeded hbm capacity by 3.63G.", "Program
# hbm requirement 19.11G:", "Largest program allocations in hbm:", per allocation "XLA label: fusion.1 =
# ...", "Allocation type: HLO temp").
_XLA_DUMP = lazy_re.compile(
    r"BufferAssignment OOM Debugging|^\s*XLA Label: \S|^\s*XLA label: \S|Exceeded (?P<space>\w+) capacity by"
    r"|Program (?P<space2>hbm|vmem) requirement|Largest program allocations in (?P<space3>\w+)"
    # each allocation's kind in the TPU compiler's list (XRT's XRTCompile, PJRT): "Allocation type: scoped"
    r"|(?:^|\s)Allocation type: (?:scoped|HLO temp|program|parameter|output)\b"
    # TensorFlow's executor appends this to a RESOURCE_EXHAUSTED (an allocator's OOM) from any device:
    # "Hint: If you want to see a list of allocated tensors when OOM happens, add
    # report_tensor_allocations_upon_oom to RunOptions for current allocation info."
    r"|(?P<tf>list of allocated tensors when OOM happens)"
)


def _xla_dump(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("tf"):
        facts0: dict[str, Any] = {"format": "tensorflow", "reported_by": "TensorFlow", "from_hint": True}
        return _oom(
            row, hit, "TensorFlow ran out of device memory (RESOURCE_EXHAUSTED, its OOM hint)", facts0
        )
    facts: dict[str, Any] = {"format": "xla", "reported_by": "XLA", "from_buffer_report": True}
    space = m.group("space") or m.group("space2") or m.group("space3")
    if space:
        facts["memory_space"] = space
    msg = "XLA ran out of device memory (its report of the buffers live at the peak"
    return _oom(row, hit, msg + (f" in {space})" if space else ")"), facts)


# -- PaddlePaddle, CuPy -------------------------------------------------------------------------------------
_PADDLE = lazy_re.compile(
    r"Out of memory error on GPU (?P<gpu>\d+)\. Cannot allocate (?P<size>[\d.]+\s*[KMGT]?B)"
)
# CuPy's memory pool (cupy/cuda/memory.pyx OutOfMemoryError): v7+ "Out of memory allocating
# 1,073,741,824 bytes (allocated so far: 0 bytes[, limit set to: ...])."; v2-v6 "out of memory to
# allocate 205520896 bytes (total 16068929536 bytes)" (Chainer's trainer prints it as "Exception in
# main training loop: out of memory ...").
_CUPY = lazy_re.compile(
    r"Out of memory allocating (?P<bytes>[\d,]+) bytes \(allocated so far|"
    r"OutOfMemoryError: Out of memory allocating (?P<b3>[\d,]+) bytes|"
    r"out of memory to allocate (?P<b2>\d+) bytes \(total (?P<total>\d+) bytes\)"
)


def _paddle(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {
        "format": "paddle",
        "reported_by": "PaddlePaddle",
        "gpu_index": int(m.group("gpu")),
    }
    return _oom(row, hit, f"PaddlePaddle could not allocate {m.group('size')} on GPU {m.group('gpu')}", facts)


def _cupy(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    n = int((m.group("bytes") or m.group("b3") or m.group("b2")).replace(",", ""))
    facts: dict[str, Any] = {"format": "cupy", "reported_by": "CuPy", "requested_bytes": n}
    if m.group("total"):
        facts["pool_total_bytes"] = int(m.group("total"))
    return _oom(row, hit, f"CuPy's memory pool could not allocate {fmt_bytes(n)} on the GPU", facts)


# -- vLLM's KV cache ----------------------------------------------------------------------------------------
_VLLM_KV = lazy_re.compile(
    rf"No{_W}available{_W}memory{_W}for{_W}the{_W}cache{_W}blocks|"
    rf"larger{_W}than{_W}the{_W}maximum{_W}number{_W}of{_W}tokens{_W}that{_W}can{_W}be{_W}stored{_W}in{_W}KV"
    rf"{_W}cache|"
    rf"(?P<need>\d+(?:\.\d+)?){_W}GiB{_W}KV{_W}cache{_W}is{_W}needed,{_W}which{_W}is{_W}larger{_W}than{_W}the{_W}"
    rf"available(?:{_W}KV{_W}cache{_W}memory)?{_W}\((?P<have>-?\d+(?:\.\d+)?){_W}GiB\)"
)


def _vllm_kv(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"format": "vllm_kv_cache", "reported_by": "vLLM"}
    msg = "vLLM: the GPU memory left after the weights cannot hold the KV cache"
    if m.group("need"):
        facts["kv_cache_needed_bytes"] = int(float(m.group("need")) * (1 << 30))
        facts["kv_cache_available_bytes"] = int(float(m.group("have")) * (1 << 30))
        msg += (
            f" ({m.group('need')} GiB needed for one sequence of max_model_len, "
            f"{m.group('have')} GiB available)"
        )
    else:
        msg += f" ({clip(hit.text[m.start() :].strip(), 120)})"
    return _oom(row, hit, msg + "; lower max_model_len or raise gpu_memory_utilization", facts)


# -- other stacks' device allocators, in their own words ---------------------------------------------------
# - TensorFlow 2.x eager ops: "tensorflow.python.framework.errors_impl.ResourceExhaustedError: failed to
#   allocate memory [Op:Mul]" (the op's output buffer; no shape, no allocator name).
# - ROCm's MIOpen, MIGraphX and RPP check the free device memory before hipMalloc (handlehip.cpp
#   default_allocator / Handle::Create): "MIOpen Error: .../handlehip.cpp:70: Memory not available to
#   allocate buffer: 655360000".
# - Ascend CANN's error code EL0004 (Memory_Allocation_Failure): "Memory_Allocation_Failure(EL0004): Failed to
#   allocate memory." / "... Failed to allocate memory requested by GE module.", above "Call rtMalloc fail"
#   or "allocate device memory failed".
# - MindSpore's dynamic memory pool (backend/common/mem_reuse/mem_dynamic_allocator.cc
#   AddMemBlockAndMemBufByEagerFree): "TotalUsedMemStatistics : 29356337664 plus
#   TotalUsedByEventMemStatistics : 0 and plus alloc size : 301990400 is more than total mem size :
#   29464985600." (older: without the event part).
# - TensorRT's builder and runtime (nvinfer1 allocators): "[TRT] [E] 2: [virtualMemoryBuffer.cpp::
#   resizePhysical::140] Error Code 2: OutOfMemory (no further information)", "... Error Code 2: OutOfMemory
#   (Requested size was 20132809216 bytes.)", and the warning before it "Requested amount of GPU memory
#   (57662592 bytes) could not be allocated. There may not be enough free memory for allocation to succeed."
# - Intel Gaudi's PyTorch bridge: "RuntimeError: [Rank:0] FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed
#   for size::939524096 (896)MB".
# - Intel GPUs through SYCL's Unified Runtime / Level Zero: "UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
#   "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY" (a memcpy's or an allocation's status).
# - SGLang's memory pool at start-up (model_runner.py / pool_configurator.py): "RuntimeError: Not enough
#   memory. Please try to increase --mem-fraction-static." (no room for the KV cache after the weights).
_STACKS = lazy_re.compile(
    # (TF eager's "[Op:AddV2]" after the message names TensorFlow without the exception type before it)
    r"(?P<tf>ResourceExhausted(?:Error)?:\s*failed to allocate memory|failed to allocate memory \[Op:\w)|"
    r"Memory not available to allocate buffer: (?P<rocm>\d+)|"
    r"(?P<ascend>Memory_Allocation_Failure\(EL0004\)|EL0004: Failed to allocate memory)|"
    r"plus alloc size : (?P<ms>\d+) is more than total mem size : (?P<mstotal>\d+)|"
    r"(?P<sglang>Not enough memory\. Please try to increase --mem-fraction-static)|"
    r"(?P<trt>Error Code 2: OutOfMemory(?: \(Requested size was (?P<trtb>\d+) bytes)?|"
    r"Requested amount of GPU memory \((?P<trtw>\d+) bytes\) could not be allocated)|"
    r"MODULE:PT_DEVMEM Allocation failed for size::(?P<hpu>\d+)|"
    r"(?P<xpu>(?:UR|ZE)_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)"
)


def _stacks(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("tf"):
        facts: dict[str, Any] = {"format": "tensorflow", "reported_by": "TensorFlow"}
        return _oom(row, hit, "TensorFlow could not allocate an op's output in GPU memory", facts)
    if m.group("rocm"):
        n = int(m.group("rocm"))
        facts = {"format": "rocm_library", "reported_by": "MIOpen/MIGraphX", "requested_bytes": n}
        return _oom(
            row, hit, f"ROCm's library found less free GPU memory than the {fmt_bytes(n)} it needs", facts
        )
    if m.group("ascend"):
        facts = {"format": "ascend", "reported_by": "CANN (EL0004)"}
        return _oom(row, hit, "Ascend CANN could not allocate NPU memory (EL0004)", facts)
    if m.group("ms"):
        n, total = int(m.group("ms")), int(m.group("mstotal"))
        facts = {
            "format": "mindspore",
            "reported_by": "MindSpore",
            "requested_bytes": n,
            "total_bytes": total,
        }
        return _oom(
            row,
            hit,
            f"MindSpore's device memory pool cannot fit {fmt_bytes(n)} (pool {fmt_bytes(total)})",
            facts,
        )
    if m.group("trt"):
        facts = {"format": "tensorrt", "reported_by": "TensorRT"}
        b = m.group("trtb") or m.group("trtw")
        if b:
            facts["requested_bytes"] = int(b)
        size = f" {fmt_bytes(int(b))}" if b else ""
        return _oom(row, hit, f"TensorRT could not allocate{size} of GPU memory", facts)
    if m.group("hpu"):
        n = int(m.group("hpu"))
        facts = {"format": "gaudi", "reported_by": "Gaudi PT_DEVMEM", "requested_bytes": n}
        return _oom(row, hit, f"Intel Gaudi's device memory could not hold {fmt_bytes(n)} more", facts)
    if m.group("xpu"):
        facts = {"format": "xpu", "reported_by": m.group("xpu").split("_", 1)[0] + " (Intel GPU)"}
        return _oom(row, hit, f"the Intel GPU ran out of device memory ({m.group('xpu')})", facts)
    facts = {"format": "sglang", "reported_by": "SGLang"}
    return _oom(
        row,
        hit,
        "SGLang: the memory left after the weights holds no KV cache at the current --mem-fraction-static",
        facts,
    )


# The allocator's exception type with its message cut off or on a later line: "torch.OutOfMemoryError"
# (2.5+), "torch.cuda.OutOfMemoryError" (1.13+), C++'s "terminate called after throwing an instance of
# 'c10::OutOfMemoryError'" (the what() lost), Ray's "RayTaskError(OutOfMemoryError)" (the task raised it:
# Ray's own ray.exceptions.OutOfMemoryError of a node out of host memory is raised unwrapped).
_TYPE = lazy_re.compile(r"\b(?:torch\.(?:cuda\.)?|c10::)OutOfMemoryError\b|RayTaskError\(OutOfMemoryError\)")
# cuDNN found no convolution algorithm whose workspace it could allocate (torch's Conv_v7/v8 search):
# in practice the GPU is full, rarely an unsupported configuration.
_CUDNN_ALGO = lazy_re.compile(r"Unable to find a valid cuDNN algorithm to run convolution")


def _type_only(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    before = hit.text[: m.start()].strip()
    if before and not before.endswith(("instance of '", "exceptions.", ":")):
        return None  # code that names the type ("except torch.cuda.OutOfMemoryError:"), not a raise
    if any("out of memory" in ln.text or "Tried to allocate" in ln.text for ln in hit.after(24)):
        return []  # the message with its figures follows: that line is the finding
    if "more than 1EB" in hit.text:
        return []  # the allocator's garbage size, no full GPU: rules/cuda_oom.py's reading of the line
    facts: dict[str, Any] = {"format": "exception_type", "reported_by": "PyTorch"}
    return _oom(
        row,
        hit,
        f"{hit.who()} raised {m.group(0)} (the CUDA caching allocator's out-of-memory error; its message is "
        "not in the log)",
        facts,
        tier=1,
    )


def _cudnn_algo(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"format": "cudnn_algorithm", "reported_by": "cuDNN"}
    return _oom(
        row,
        hit,
        "cuDNN found no convolution algorithm it could run: most often no GPU memory was left for any "
        "algorithm's workspace (a smaller batch, or torch.backends.cudnn.benchmark=False, confirms it)",
        facts,
        tier=1,
    )


_EXC = "the exception type ('RuntimeError: ', 'ValueError: ') before the message"
_ROWS = (
    Signature(
        "thc out of memory",
        _THC,
        _thc,
        C.CUDA_OOM.code,
        anchors=(b"ut of memory",),
        worth=(rb"out of memory",),
        words=("out of memory",),
    ),
    Signature(
        "device allocator out of memory",
        _DEVICE,
        _device,
        C.CUDA_OOM.code,
        anchors=(b"ut of memory",),
        worth=(rb"out of memory",),
        words=("out of memory",),
    ),
    Signature(
        "cuda check out of memory",
        _CHECK,
        _check,
        C.CUDA_OOM.code,
        anchors=(b"ut of memory", b"MemoryAllocation"),
        worth=(rb"out of memory", rb"MemoryAllocation"),
        words=("out of memory", "memoryallocation"),
    ),
    Signature(
        "cuda malloc out of memory",
        _MALLOC,
        _malloc,
        C.CUDA_OOM.code,
        anchors=(b"ut of memory", b"MemoryAllocation", b"OUT_OF_MEMORY"),
        worth=(rb"out of memory", rb"MemoryAllocation", rb"OUT_OF_MEMORY"),
        words=("out of memory", "memoryallocation", "out_of_memory"),
    ),
    Signature(
        "tensorflow oom",
        _TF,
        _tf,
        C.CUDA_OOM.code,
        anchors=(
            b"OOM when allocating",
            b"ran out of memory",
            b"Dst tensor is not initialized",
            b"SameWorkerRecvDone unable to allocate",
            b"Failed to allocate memory for the batch of component",
        ),
        words=(
            "oom when allocating",
            "ran out of memory",
            "dst tensor is not initialized",
            "sameworkerrecvdone unable to allocate",
            "failed to allocate memory for the batch of component",
        ),
    ),
    Signature(
        "xla out of memory",
        _XLA,
        _xla,
        C.CUDA_OOM.code,
        anchors=(
            b"ut of memory",
            b"Failed to allocate request",
            b"was not possible",
            b"of memory while trying",
        ),
        worth=(
            rb"[Oo]ut of memory",
            rb"Failed to allocate request",
            rb"was not possible",
            rb"of memory while trying",
        ),
        words=("out of memory", "failed to allocate request", "was not possible", "of memory while trying"),
    ),
    Signature(
        "xla out of memory buffer report",
        _XLA_DUMP,
        _xla_dump,
        C.CUDA_OOM.code,
        anchors=(
            b"BufferAssignment OOM",
            b"XLA Label: ",
            b"XLA label: ",
            b" capacity by",
            b" requirement",
            b"Largest program allocations in",
            b"Allocation type: ",
            b"allocated tensors when OOM happens",
        ),
        worth=(
            rb"Allocation type: ",
            rb"allocated tensors when OOM happens",
            rb"BufferAssignment OOM",
            rb"XLA [Ll]abel: ",
            rb"Exceeded \w+ capacity by",
            rb"Program (?:hbm|vmem) requirement",
            rb"Largest program allocations in",
        ),
        words=(
            "bufferassignment oom",
            "xla label: ",
            " capacity by",
            " requirement",
            "largest program allocations in",
            "allocation type: ",
            "allocated tensors when oom happens",
        ),
    ),
    Signature(
        "paddle out of memory",
        _PADDLE,
        _paddle,
        C.CUDA_OOM.code,
        anchors=(b"ut of memory",),
        worth=(rb"[Oo]ut of memory",),
        words=("out of memory",),
    ),
    Signature(
        "cupy out of memory",
        _CUPY,
        _cupy,
        C.CUDA_OOM.code,
        anchors=(b"ut of memory",),
        worth=(rb"[Oo]ut of memory",),
        words=("out of memory",),
    ),
    Signature(
        "other stacks' device allocators",
        _STACKS,
        _stacks,
        C.CUDA_OOM.code,
        anchors=(
            b"rror",
            b"failed to allocate memory [Op:",
            b"Memory not available",
            b"EL0004",
            b"more than total mem size",
            b"Not enough memory",
            b"OutOfMemory",
            b"Requested amount of GPU memory",
            b"PT_DEVMEM",
            b"OUT_OF_DEVICE_MEMORY",
        ),
        worth=(
            rb"Error\b",
            rb"failed to allocate memory \[Op:",
            rb"Memory not available",
            rb"EL0004",
            rb"more than total mem size",
            rb"Not enough memory",
            rb"OutOfMemory",
            rb"Requested amount of GPU memory",
            rb"PT_DEVMEM",
            rb"OUT_OF_DEVICE_MEMORY",
        ),
        words=(
            "failed to allocate memory",
            "memory not available",
            "el0004",
            "more than total mem size",
            "mem-fraction-static",
            "outofmemory",
            "requested amount of gpu memory",
            "pt_devmem",
            "out_of_device_memory",
        ),
        anchor_from="the 'Error' of ResourceExhaustedError",
        examples=(
            "tensorflow.python.framework.errors_impl.ResourceExhaustedError: failed to allocate memory "
            "[Op:Mul]",
        ),
    ),
    Signature(
        "vllm kv cache",
        _VLLM_KV,
        _vllm_kv,
        C.CUDA_OOM.code,
        # vLLM's sentences by their own words as well: a title, or Ray's second line of the engine's error,
        # has no 'ValueError: ' before them
        anchors=(b"rror", b"memory for the cache blocks", b"stored in KV cache", b"KV cache is needed"),
        worth=(rb"Error\b", rb"memory for the cache blocks", rb"stored in KV cache", rb"KV cache is needed"),
        words=("cache blocks", "kv cache"),
        anchor_from=_EXC + " where a terminal wrapped the sentence",
        examples=(
            "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
            "when initializing the engine.",
            "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that "
            "can be stored in KV cache (20000).",
            "ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV "
            "cache is needed, which is larger than the available KV cache memory (9.47 GiB).",
        ),
    ),
)
SIGNATURES = (
    *_ROWS,
    Signature(
        "oom exception type",
        _TYPE,
        _type_only,
        C.CUDA_OOM.code,
        anchors=(b"rror",),
        worth=(rb"Error\b", rb"OutOfMemoryError"),
        words=("outofmemoryerror",),
        anchor_from="the 'Error' of OutOfMemoryError itself",
        examples=(
            "[rank0]: torch.OutOfMemoryError",
            "terminate called after throwing an instance of 'c10::OutOfMemoryError'",
        ),
    ),
    Signature(
        "cudnn no algorithm",
        _CUDNN_ALGO,
        _cudnn_algo,
        C.CUDA_OOM.code,
        anchors=(b"valid cuDNN algorithm",),
        worth=(rb"valid cuDNN algorithm",),
        words=("valid cudnn algorithm",),
        examples=("RuntimeError: Unable to find a valid cuDNN algorithm to run convolution",),
    ),
)
_WORDS = gate(SIGNATURES)


def parse(hit: Hit) -> list[Event]:
    if _WORDS is not None and not hit.may_hold(_WORDS):
        return []
    return read(hit, SIGNATURES)
