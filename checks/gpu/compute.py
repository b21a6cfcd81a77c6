"""Rules over the compute micro-probes (probe `gpu_compute`, `--level full`).

A GPU is judged against its peers on the node (below 0.9x the median is slow) and against a
stated share of its datasheet peak. The PCIe generation is judged here, under load, and not in
the idle NVML check: an idle link drops its generation to save power.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Optional

from pgdoctor.checks.base import Config, check, config_key, register_code
from pgdoctor.checks.gpu.health import AREA, Gpu, gpus
from pgdoctor.model import Finding, Snapshot

GPU141 = register_code(
    "GPU141",
    "gpu-pcie-gen-degraded",
    "warn",
    "gpu_hardware",
    "PCIe link runs below its maximum generation under load",
    AREA,
)
GPU190 = register_code(
    "GPU190",
    "gpu-compute-slow-vs-peers",
    "warn",
    "performance",
    "A GPU is slower than the other GPUs of the node",
    AREA,
)
GPU191 = register_code(
    "GPU191",
    "gpu-compute-below-datasheet",
    "warn",
    "performance",
    "A GPU reaches too small a share of its datasheet peak",
    AREA,
)

PEER_RATIO = config_key(
    "gpu.compute_min_peer_ratio",
    float,
    0.9,
    "A GPU below this fraction of the node's median is slow (GPU190).",
)
TFLOPS_SHARE = config_key(
    "gpu.compute_min_tflops_share",
    float,
    0.5,
    "Smallest share of the datasheet dense bf16 TFLOP/s accepted (GPU191).",
)
MEMBW_SHARE = config_key(
    "gpu.compute_min_membw_share",
    float,
    0.6,
    "Smallest share of the datasheet memory bandwidth accepted (GPU191).",
)

METRICS = {
    "gpu.compute.bf16_tflops": "bf16 matmul TFLOP/s",
    "gpu.compute.dtod_gbps": "device memory copy GB/s",
    "gpu.compute.htod_gbps": "host-to-device GB/s",
    "gpu.compute.dtoh_gbps": "device-to-host GB/s",
}


@dataclass(frozen=True)
class Datasheet:
    match: str  # substring of the NVML name; the first match in DATASHEETS wins
    bf16_tflops: float  # dense (no sparsity)
    membw_gbps: float


# Dense bf16 tensor TFLOP/s and memory bandwidth from NVIDIA's product datasheets:
# A100: "NVIDIA A100 Tensor Core GPU" datasheet (SXM4 80GB: 312 TFLOPS bf16, 2039 GB/s; PCIe 80GB 1935 GB/s).
# H100: "NVIDIA H100 Tensor Core GPU" datasheet (SXM5: 989 dense bf16 [1979 with sparsity], 3.35 TB/s;
#       PCIe: 756 dense, 2.0 TB/s; NVL: 835 dense, 3.9 TB/s).
# H200: "NVIDIA H200 Tensor Core GPU" datasheet (SXM: 989 dense bf16, 4.8 TB/s).
# B200: "NVIDIA HGX B200" / DGX B200 datasheet (2.25 PFLOPS dense bf16 per GPU [4.5 sparse], 8 TB/s).
# L40S: "NVIDIA L40S" datasheet (362 dense bf16 [733 with sparsity], 864 GB/s GDDR6).
DATASHEETS: tuple[Datasheet, ...] = (
    Datasheet("A100-SXM", 312.0, 2039.0),
    Datasheet("A100", 312.0, 1935.0),
    Datasheet("H100 PCIe", 756.0, 2000.0),
    Datasheet("H100 NVL", 835.0, 3900.0),
    Datasheet("H100", 989.0, 3350.0),
    Datasheet("H200", 989.0, 4800.0),
    Datasheet("B200", 2250.0, 8000.0),
    Datasheet("L40S", 362.0, 864.0),
)

CHECK_GROUP = "gpu_compute"  # the published prefix of this module's check names


def datasheet(name: Optional[str]) -> Optional[Datasheet]:
    if not name:
        return None
    for d in DATASHEETS:
        if d.match in name:
            return d
    return None


def _values(gs: list[Gpu], key: str) -> dict[int, float]:
    return {
        g.index: float(v)
        for g in gs
        if isinstance(v := g.v(key), (int, float)) and not isinstance(v, bool) and v > 0
    }


@check(AREA, [GPU190], needs=["gpu_compute"])
def slow_vs_peers(snap: Snapshot, config: Config) -> list[Finding]:
    gs = gpus(snap)
    ratio = config[PEER_RATIO.name]
    out = []
    for key, label in METRICS.items():
        values = _values(gs, key)
        if len(values) < 2:
            continue
        median = statistics.median(values.values())
        for g in gs:
            v = values.get(g.index)
            if v is not None and v < ratio * median:
                out.append(
                    GPU190.finding(
                        f"{g.label}: {label} {v:g}, node median {median:g} ({v / median:.2f}x)",
                        scope=g.scope,
                        evidence=g.ev(key),
                        facts={"metric": key, "value": v, "median": median},
                    )
                )
    return out


@check(AREA, [GPU191], needs=["gpu_compute"])
def below_datasheet(snap: Snapshot, config: Config) -> list[Finding]:
    out = []
    for g in gpus(snap):
        sheet = datasheet(g.v("gpu.name"))
        if sheet is None:
            continue
        for key, peak, share in (
            ("gpu.compute.bf16_tflops", sheet.bf16_tflops, config[TFLOPS_SHARE.name]),
            ("gpu.compute.dtod_gbps", sheet.membw_gbps, config[MEMBW_SHARE.name]),
        ):
            v = g.v(key)
            if isinstance(v, (int, float)) and v < share * peak:
                out.append(
                    GPU191.finding(
                        f"{g.label} ({g.v('gpu.name')}): {METRICS[key]} {v:g} is {v / peak:.0%} of the "
                        f"datasheet "
                        f"{peak:g} (accepted from {share:.0%})",
                        scope=g.scope,
                        evidence=g.ev(key, "gpu.name"),
                        facts={"metric": key, "value": v, "peak": peak, "share": v / peak},
                    )
                )
    return out


@check(AREA, [GPU141], needs=["gpu_compute", "gpu"])
def pcie_gen_under_load(snap: Snapshot, config: Config) -> list[Finding]:
    out = []
    for g in gpus(snap):
        gen, gen_max = g.v("gpu.pcie.link_gen_loaded"), g.v("gpu.pcie.link_gen_max")
        if isinstance(gen, int) and isinstance(gen_max, int) and gen < gen_max:
            out.append(
                GPU141.finding(
                    f"{g.label}: PCIe Gen{gen} under load, capable of Gen{gen_max}",
                    scope=g.scope,
                    evidence=g.ev(
                        "gpu.pcie.link_gen_loaded", "gpu.pcie.link_gen_max", "gpu.compute.htod_gbps"
                    ),
                    facts={"gen": gen, "gen_max": gen_max},
                )
            )
    return out
