"""Compute micro-probes per GPU through torch (`--level full` only).

bf16 matmul TFLOP/s, device-to-device copy bandwidth, pinned host-to-device and device-to-host
bandwidth; while the host-to-device copies run, the PCIe link generation is read from NVML, since
an idle link drops to a low generation by design and only a loaded one shows what it trained to.

A GPU that another process uses is skipped (its numbers would be the other job's, and the load
would slow that job down) unless options["force"]. torch is imported inside the probe only.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Callable, Optional

from pgdoctor.model import Measurement, Reason, Scope, Unavailable
from pgdoctor.probes.base import ProbeContext, ProbeUnavailable, probe
from pgdoctor.probes.gpu.health import backend_for
from pgdoctor.probes.gpu.nvml import NvmlError

MATMUL_N = 8192
COPY_BYTES = 256 << 20
REPEATS = 5
# Enough work per timed repeat (>= ~10 ms on an H100) that launch overhead and timer jitter vanish.
MATMUL_ITERS = 10
DTOD_ITERS = 40


def busy_gpus(previous: Sequence[Measurement], own_pids: Sequence[int]) -> dict[int, list[int]]:
    """NVML index -> pids of other processes on it (from the gpu probe's gpu.processes)."""
    mine = set(own_pids)
    out: dict[int, list[int]] = {}
    for m in previous:
        if m.key == "gpu.processes" and isinstance(m.value, list) and m.scope.gpu_index is not None:
            pids = [p["pid"] for p in m.value if isinstance(p, dict) and p.get("pid") not in mine]
            if pids:
                out[m.scope.gpu_index] = pids
    return out


def nvml_index_by_uuid(previous: Sequence[Measurement]) -> dict[str, int]:
    return {
        m.value: m.scope.gpu_index
        for m in previous
        if m.key == "gpu.uuid" and isinstance(m.value, str) and m.scope.gpu_index is not None
    }


def torch_uuid(props: Any) -> Optional[str]:
    """torch prints a device UUID without NVML's `GPU-` prefix; normalise to NVML's form."""
    raw = getattr(props, "uuid", None)
    if raw is None:
        return None
    text = str(raw)
    return text if text.startswith("GPU-") else f"GPU-{text}"


def best_rate(amount: float, timings_s: Sequence[float]) -> float:
    """The rate of the fastest repeat: interference only ever slows a repeat down."""
    return amount / min(t for t in timings_s if t > 0)


def _timed(torch: Any, fn: Callable[[], None], repeats: int = REPEATS) -> list[float]:
    fn()  # warm-up: allocator, cuBLAS heuristics, clocks ramping up
    torch.cuda.synchronize()
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        out.append(time.perf_counter() - start)
    return out


def _copy(dst: Any, src: Any, times: int = 1) -> None:
    for _ in range(times):
        dst.copy_(src, non_blocking=True)


def _measure(torch: Any, dev: int, ctx: ProbeContext, nvml_index: int, scope: Scope) -> list[Measurement]:
    device = torch.device("cuda", dev)
    out = []
    with torch.cuda.device(device):
        a = torch.randn(MATMUL_N, MATMUL_N, device=device, dtype=torch.bfloat16)
        b = torch.randn(MATMUL_N, MATMUL_N, device=device, dtype=torch.bfloat16)
        flops = 2.0 * MATMUL_N**3 * MATMUL_ITERS

        def matmul() -> None:
            for _ in range(MATMUL_ITERS):
                torch.matmul(a, b)

        t = _timed(torch, matmul)
        out.append(
            Measurement(
                "gpu.compute.bf16_tflops",
                round(best_rate(flops, t) / 1e12, 1),
                "TFLOP/s",
                scope,
                f"torch.matmul bf16 {MATMUL_N}^3",
            )
        )
        src = torch.empty(COPY_BYTES, dtype=torch.uint8, device=device)
        dst = torch.empty_like(src)
        # A device copy reads and writes every byte: count both, as memory-bandwidth datasheets do.
        t = _timed(torch, lambda: _copy(dst, src, DTOD_ITERS))
        out.append(
            Measurement(
                "gpu.compute.dtod_gbps",
                round(best_rate(2 * COPY_BYTES * DTOD_ITERS, t) / 1e9, 1),
                "GB/s",
                scope,
                "torch copy_ device->device, read+write bytes",
            )
        )
        host = torch.empty(COPY_BYTES, dtype=torch.uint8, pin_memory=True)
        t = _timed(torch, lambda: _copy(src, host))
        out.append(
            Measurement(
                "gpu.compute.htod_gbps",
                round(best_rate(COPY_BYTES, t) / 1e9, 1),
                "GB/s",
                scope,
                "torch copy_ pinned host->device",
            )
        )
        t = _timed(torch, lambda: _copy(host, src))
        out.append(
            Measurement(
                "gpu.compute.dtoh_gbps",
                round(best_rate(COPY_BYTES, t) / 1e9, 1),
                "GB/s",
                scope,
                "torch copy_ device->pinned host",
            )
        )
        out.append(_gen_under_load(torch, ctx, nvml_index, scope, lambda: _copy(src, host)))
    return out


def _gen_under_load(
    torch: Any, ctx: ProbeContext, index: int, scope: Scope, copy: Callable[[], None]
) -> Measurement:
    for _ in range(8):  # queue about 2 GiB of transfers, then ask NVML while they run
        copy()
    backend = backend_for(ctx)
    value: Any
    try:
        backend.init()
        try:
            value = backend.call("nvmlDeviceGetCurrPcieLinkGeneration", index)
        finally:
            backend.shutdown()
    except NvmlError as exc:
        value = Unavailable(exc.reason, exc.detail)
    torch.cuda.synchronize()
    return Measurement(
        "gpu.pcie.link_gen_loaded", value, "", scope, "nvml:nvmlDeviceGetCurrPcieLinkGeneration"
    )


@probe("gpu_compute", area="gpu", level="full", timeout_s=180.0, after=("gpu",))
def gpu_compute(ctx: ProbeContext) -> list[Measurement]:
    try:
        import torch
    except ImportError:
        raise ProbeUnavailable(Reason.NOT_PRESENT, "torch is not installed") from None
    if not torch.cuda.is_available():
        raise ProbeUnavailable(Reason.NOT_PRESENT, "torch sees no CUDA device (CPU build or no driver)")
    own = next((m.value for m in ctx.previous if m.key == "gpu.own_pids" and isinstance(m.value, list)), [])
    busy = busy_gpus(ctx.previous, own)
    by_uuid = nvml_index_by_uuid(ctx.previous)
    out: list[Measurement] = []
    for dev in range(torch.cuda.device_count()):
        uuid = torch_uuid(torch.cuda.get_device_properties(dev))
        # torch orders devices by CUDA_DEVICE_ORDER / CUDA_VISIBLE_DEVICES; NVML by PCI bus: match by UUID.
        index = by_uuid.get(uuid or "", dev)
        scope = Scope(gpu_index=index, gpu_uuid=uuid)
        if index in busy and not ctx.options.get("force"):
            skipped = Unavailable(
                Reason.NOT_REQUESTED,
                f"GPU used by pid(s) {','.join(map(str, busy[index]))}; --force to measure anyway",
            )
            out += [
                Measurement(k, skipped, "", scope)
                for k in (
                    "gpu.compute.bf16_tflops",
                    "gpu.compute.dtod_gbps",
                    "gpu.compute.htod_gbps",
                    "gpu.compute.dtoh_gbps",
                    "gpu.pcie.link_gen_loaded",
                )
            ]
            continue
        out += _measure(torch, dev, ctx, index, scope)
        torch.cuda.empty_cache()  # the tensors died with _measure; give the memory back
    return out
