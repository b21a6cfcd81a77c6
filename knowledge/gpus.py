"""GPU presets for the planner: memory, achieved TFLOP/s, the links inside a node and to the host.

`memory_gib` is what the driver reports (nvidia-smi / rocm-smi, rounded down to a GiB).
`peak_tflops` are the datasheets' dense (no sparsity) tensor-core figures per precision;
`achieved` is the share of peak a well-tuned LLM training step reaches (MFU): 40%, the figure
Megatron-LM and the MI300X/H100 training reports land near (the planner's default 400 TFLOP/s
for an H100 is 40% of 989). Every value is overridable on the command line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

ACHIEVED = 0.40


@dataclass(frozen=True)
class Gpu:
    name: str
    memory_gib: int
    bf16_tflops: float  # dense peak
    fp8_tflops: Optional[float]  # dense peak; None: no FP8 tensor cores
    intra: str  # interconnect preset inside a node
    pcie: str  # host link preset
    source: str

    def achieved_tflops(self, precision: str) -> float:
        fp8 = precision.startswith("fp8") and self.fp8_tflops is not None
        peak = self.fp8_tflops if fp8 and self.fp8_tflops is not None else self.bf16_tflops
        if precision == "fp32":
            peak = self.bf16_tflops / 2  # TF32 tensor cores run at half the bf16 rate
        return round(peak * ACHIEVED, 1)

    def to_json(self) -> dict[str, object]:
        return dict(self.__dict__)


GPUS: dict[str, Gpu] = {
    "a100-40g": Gpu(
        "a100-40g", 40, 312.0, None, "nvlink3", "pcie4", "A100 SXM 40GB datasheet: 312 TFLOP/s bf16"
    ),
    "a100-80g": Gpu(
        "a100-80g", 80, 312.0, None, "nvlink3", "pcie4", "A100 SXM 80GB datasheet: 312 TFLOP/s bf16"
    ),
    "h100-sxm": Gpu(
        "h100-sxm", 80, 989.0, 1979.0, "nvlink4", "pcie5", "H100 SXM datasheet: 989 bf16, 1979 fp8"
    ),
    "h100-pcie": Gpu(
        "h100-pcie", 80, 756.0, 1513.0, "pcie5", "pcie5", "H100 PCIe datasheet: 756 bf16, 1513 fp8"
    ),
    "h200": Gpu(
        "h200", 140, 989.0, 1979.0, "nvlink4", "pcie5", "H200 SXM datasheet: 141 GB, 989 bf16, 1979 fp8"
    ),
    "b200": Gpu(
        "b200", 179, 2250.0, 4500.0, "nvlink5", "pcie5", "B200 datasheet: 192 GB, 2.25 PF bf16, 4.5 PF fp8"
    ),
    "l40s": Gpu("l40s", 45, 362.0, 733.0, "pcie4", "pcie4", "L40S datasheet: 48 GB, 362 bf16, 733 fp8"),
    "rtx4090": Gpu(
        "rtx4090", 23, 165.0, 330.0, "pcie4", "pcie4", "Ada whitepaper: 165 bf16 (fp32 accumulate), 330 fp8"
    ),
    "mi300x": Gpu(
        "mi300x", 191, 1307.0, 2615.0, "xgmi3", "pcie5", "MI300X datasheet: 192 GB, 1307 bf16, 2615 fp8"
    ),
}


def get_gpu(name: str) -> Gpu:
    try:
        return GPUS[name]
    except KeyError:
        raise ValueError(f"unknown GPU {name!r} (known: {', '.join(GPUS)})") from None
