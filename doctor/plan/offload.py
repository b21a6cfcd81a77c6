"""Offload of optimizer states and parameters to host memory or NVMe.

ZeRO-Offload (Ren et al. 2021) keeps the fp32 master weights, the optimizer moments and fp32
gradients on the CPU, which runs the optimizer step; the GPU keeps the 16-bit parameters (none
with ZeRO-Infinity's / FSDP's parameter offload, which fetches each layer when it runs). Host
bytes per parameter: 4 master + 8 Adam + 4 fp32 gradients = 16, plus the 2 B of 16-bit parameters
when they are offloaded too: DeepSpeed's estimators' 16 and 18 (deepspeed.runtime.zero.stage3.
estimate_zero3_model_states_mem_needs), which multiply by an additional_buffer_factor of 1.5
for pinned staging buffers; the planner's host memory per node does the same, so that its
figures are DeepSpeed's (t5-small, 60.5M parameters, 1 GPU: 1.52 GiB with parameters offloaded,
1.35 GiB optimizer only).

PCIe traffic per step and GPU: every micro-batch's reduced gradient shard goes to the host
(grad bytes), the updated 16-bit parameters come back once per step (param bytes); with
parameter offload each micro-batch also fetches the parameter shard for forward and again for
backward. It is counted as exposed (the CPU step waits for the last gradients, the next forward
for the parameters). With NVMe the host states are read and written once per step at the
node's NVMe bandwidth instead of living in host memory.

The CPU optimizer step is on the critical path too (ZeRO-Offload's delayed parameter update,
which hides it behind the next step, is not modelled): the node's CPUs update every parameter
its ranks own at CPU_ADAM_PARAMS_PER_S, an assumption of about 1e9 parameters per second per
node for DeepSpeed's vectorised CPU-Adam (the ZeRO-Offload paper, Ren et al. 2021, reports
CPU-Adam step latencies of the order of a second per billion parameters on a DGX-2's CPUs;
torch's own CPU Adam is several times slower). `--cpu-optimizer-rate` replaces it.

With pipeline parallelism (pp > 1) only the optimizer is offloaded, with ZeRO-1 sharding of the
optimizer states (Megatron-Core's optimizer CPU offload with its distributed optimizer): the
GPU keeps the 16-bit parameters and gradients, the host each rank's shard of master, moments
and fp32 gradients.
"""

from __future__ import annotations

import math
from typing import Optional

OFFLOADS = ("none", "optimizer", "optimizer+params")
DEVICES = ("cpu", "nvme")
HOST_BUFFER_FACTOR = 1.5  # DeepSpeed's estimators' additional_buffer_factor
FP32_GRAD_BYTES = 4
CPU_ADAM_PARAMS_PER_S = 1e9  # per node, DeepSpeed CPU-Adam (assumption; see the module docstring)


def cpu_step_s(owned_numel_per_rank: int, ranks_per_node: int, rate: float = CPU_ADAM_PARAMS_PER_S) -> float:
    """Time of the host's optimizer step over the parameters a node's ranks own."""
    return owned_numel_per_rank * ranks_per_node / rate


def offload_states(
    params: int,
    grads: int,
    master: int,
    optimizer: int,
    grad_bytes: int,
    offload: str,
    owned_numel: Optional[int] = None,
) -> tuple[int, int]:
    """(parameter bytes that stay on the GPU, bytes this rank keeps on the host), from one rank's
    sharded states; gradients, master and optimizer state all leave the GPU."""
    if offload not in OFFLOADS:
        raise ValueError(f"offload {offload!r} is not one of {OFFLOADS}")
    if offload == "none":
        return params, 0
    owned = grads // max(1, grad_bytes) if owned_numel is None else owned_numel
    host = master + optimizer + FP32_GRAD_BYTES * owned
    if offload == "optimizer+params":
        return 0, host + params
    return params, host


def host_per_node(host_bytes_per_rank: int, ranks_per_node: int) -> int:
    """Host memory a node needs for its ranks' offloaded states, with DeepSpeed's 1.5x buffers."""
    return math.ceil(host_bytes_per_rank * ranks_per_node * HOST_BUFFER_FACTOR)


def pcie_bytes(offload: str, owned_grad_bytes: int, owned_param_bytes: int, micro_batches: int) -> int:
    """Bytes one GPU moves over PCIe per optimizer step for its offloaded states."""
    if offload == "none":
        return 0
    moved = micro_batches * owned_grad_bytes + owned_param_bytes
    if offload == "optimizer+params":
        moved += 2 * micro_batches * owned_param_bytes
    return moved
