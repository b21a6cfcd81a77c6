"""An inference engine's own all-reduce between the GPUs of one node (CUDA IPC, no NCCL) refused its buffers
(RUN640, nccl_usage).

Format, read at the source: the CUDACHECK macro of NCCL's examples, copied into vLLM's
csrc/custom_all_reduce.cuh (0.3-0.20, `register_buffer` / `register_graph_buffers`: cudaIpcGetMemHandle,
cudaIpcOpenMemHandle, cudaPointerGetAttributes), SGLang's sgl-kernel/csrc/allreduce/custom_all_reduce.cuh and
the one-shot / two-shot all-reduce kernels that copied them: printf("Failed: Cuda error %s:%d '%s'\\n",
__FILE__, __LINE__, cudaGetErrorString(e)) and exit(EXIT_FAILURE), behind the worker's prefix ("(VllmWorker
rank=1 pid=123) ", "[rank1]: "). The engine then reports the worker's death ("EngineCore failed to start:
Worker proc VllmWorker-0 died unexpectedly", RUN133): that is the consequence. TensorRT-LLM's custom
all-reduce workspace (runtime/ipcUtils.cpp, TLLM_CUDA_CHECK): "[TensorRT-LLM][ERROR] CUDA runtime error in
::cudaIpcOpenMemHandle(...): invalid argument (.../ipcUtils.cpp:92)", the same IPC calls.

Read here: the errors that say the IPC call was handed memory it cannot share ('invalid argument', 'invalid
device pointer', 'invalid resource handle', 'operation not supported', 'peer access has not been enabled',
'resource already mapped'): the buffer came from the virtual-memory allocator
(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: a cuMemAddressReserve range is no cudaMalloc allocation,
cudaIpcGetMemHandle refuses it), or the process group spans GPUs the kernel cannot map (data parallel x tensor
parallel ranks mixed up, another node). The other CUDA errors of the same macro are their own rows' (out of
memory RUN101, the driver's and the device's errors driver_env, 'peer access is not supported between these
two devices' RUN291); the macro in a program that is no all-reduce ("sample.cu:40 'invalid argument'") is left
to the vocabulary net.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run5 as C5
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_CUDACHECK = lazy_re.compile(
    r"Failed: Cuda error (?P<where>(?:\S*/)?(?P<file>[\w.-]*(?:all_?reduce|allreduce|all-reduce)[\w.-]*\."
    r"(?:cuh|cu|h|cc|cpp))):(?P<line>\d+) '(?P<err>[^'\n]{3,120})'"
)
# TensorRT-LLM's TLLM_CUDA_CHECK on the IPC calls of its custom all-reduce workspace (runtime/ipcUtils.cpp,
# IpcMemory::allocateIpcMemory): "[TensorRT-LLM][ERROR] CUDA runtime error in ::cudaIpcOpenMemHandle(
# reinterpret_cast<void**>(&foreignBuffer), handles[nodeId], cudaIpcMemLazyEnablePeerAccess): invalid argument
# (/src/tensorrt_llm/cpp/tensorrt_llm/runtime/ipcUtils.cpp:92)".
_TLLM_IPC = lazy_re.compile(
    r"CUDA runtime error in :{0,2}(?P<call>cudaIpc(?:Get|Open)MemHandle)\(.{0,300}?\): "
    r"(?P<err>[a-z][^()\n]{2,80}?) \((?:\S*/)?(?P<file>[\w.-]+\.(?:cpp|cu|cc|h)):(?P<line>\d+)\)"
)
# The errors that say the IPC call was handed memory (or a mapping) it cannot share; 'resource already mapped'
# is cudaIpcOpenMemHandle on an address the process mapped already (a driver bug under 535, vllm#2641).
_REFUSED = lazy_re.compile(
    r"^(?:invalid argument|invalid device pointer|invalid resource handle|operation not supported|"
    r"peer access has not been enabled|resource already mapped)$"
)


def _ipc_event(row: Signature, hit: Hit, m: re.Match[str], library: str) -> Optional[list[Event]]:
    err = m.group("err").strip()
    if not _REFUSED.match(err):
        return None  # out of memory, the driver's and the device's errors: their own rows
    low = hit.text.lower() + " ".join(ln.text for ln in hit.before(24, same_rank=False)).lower()
    facts: dict[str, Any] = {"cuda_error": err, "where": f"{m.group('file')}:{m.group('line')}"}
    facts["library"] = library or (
        "sglang" if "sgl" in m.group("where").lower() or "sglang" in low else "vllm"
    )
    if "expandable_segments:true" in low:
        facts["likely_cause"] = "expandable_segments"
    msg = (
        f"{hit.who()}: the engine's custom all-reduce (CUDA IPC between the node's GPUs) failed at "
        f"{facts['where']} ('{err}'): the IPC call was handed memory it cannot share (the "
        "expandable-segments allocator's buffers, PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) or "
        "GPUs it cannot map; run without expandable segments or with the custom all-reduce off "
        "(--disable-custom-all-reduce)"
    )
    return [row.event(hit, msg, facts, dedupe=(row.code, "cudacheck"))]


def _cudacheck(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return _ipc_event(row, hit, m, "")


def _tllm_ipc(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return _ipc_event(row, hit, m, "tensorrt_llm")


SIGNATURES = (
    Signature(
        "custom all-reduce cudacheck",
        _CUDACHECK,
        _cudacheck,
        C5.CUSTOM_ALLREDUCE_CUDA_FAILURE.code,
        anchors=(b"Failed: Cuda error ",),
        words=("failed: cuda error",),
    ),
    Signature(
        "tensorrt-llm ipc cuda check",
        _TLLM_IPC,
        _tllm_ipc,
        C5.CUSTOM_ALLREDUCE_CUDA_FAILURE.code,
        anchors=(b"CUDA runtime error in ",),
        worth=(rb"CUDA runtime error in :{0,2}cudaIpc",),
        words=("cudaipc",),
    ),
)

parse = gated_reader(SIGNATURES)
