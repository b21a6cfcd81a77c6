"""What an event's name says it is: GPU kernel families as Holistic Trace Analysis counts them,
and the CPU-side ranges that are collectives, data loading or a training step.

Kernel families (read from HTA 0.5.0's definitions, so the breakdowns agree): communication
is `nccl...Kernel` (RCCL keeps the names); memory is `Memcpy...`, `Memset...` and `dma...`;
compute is every other kernel except names containing Memcpy or Sync (those count as neither).
"""

from __future__ import annotations

import re

COMPUTE, COMM, MEMORY, OTHER = 0, 1, 2, 3

_COMM_KERNEL = re.compile(r"nccl.*Kernel")
_MEMORY_KERNEL = re.compile(r"Memcpy|Memset|dma")
_NOT_COMPUTE = re.compile(r"nccl.*Kernel|.*Memcpy|Memset|.*Sync")

GPU_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})

# CPU-side collectives, across backends and torch versions: the c10d dispatcher ops
# (c10d::allreduce_, c10d::_allgather_base_, ...), the backends' own ranges (gloo:all_reduce,
# nccl:all_reduce, ...), record_param_comms, and pgdoctor's comm.* ranges.
_CPU_COMM = re.compile(r"(c10d::|gloo:|nccl:|mpi:|ucc:|comm\.|record_param_comms|ProcessGroup)")
# A DataLoader's __next__ (every loader iterator class), pgdoctor's `data` range, and the usual
# record_function names for input pipelines.
_CPU_DATA = re.compile(
    r"(enumerate\(DataLoader\)|DataLoader.*__next__|^data(\b|[._ ])|^dataloader)", re.IGNORECASE
)
_STEP = re.compile(r"ProfilerStep\s*#\s*(\d+)$|step(\s|$)")
_LAUNCH = re.compile(
    r"(cuda|hip)(LaunchKernel|LaunchCooperativeKernel|ModuleLaunchKernel|ExtModuleLaunchKernel)"
    r"|cuLaunchKernel|hipLaunchKernel"
)


def kernel_kind(name: str) -> int:
    if _COMM_KERNEL.match(name):
        return COMM
    if _MEMORY_KERNEL.match(name):
        return MEMORY
    if not _NOT_COMPUTE.match(name):
        return COMPUTE
    return OTHER


def cpu_kind(name: str) -> int:
    """COMM, MEMORY (data loading is the CPU's input side) or COMPUTE for a CPU range."""
    if _CPU_COMM.match(name):
        return COMM
    if _CPU_DATA.search(name):
        return MEMORY
    return COMPUTE


def is_step(name: str) -> bool:
    return bool(_STEP.match(name))


def is_launch(name: str) -> bool:
    return bool(_LAUNCH.match(name))
