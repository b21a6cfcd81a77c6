"""What `pgdoctor plan` is asked: one typed record of every option, with what each field means.

The CLI parses flags into a PlanOptions and nothing else; `pgdoctor.plan.run.run_plan` turns it
into layouts and a PlanResult. A field's default is the command line's default. Sizes and
bandwidths stay text here (`80GiB`, `25`) because their parsing and its error message belong to
the planner, not to the flag parser; inputs read from files arrive as their text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from pgdoctor.plan.comm import SCHEDULES


class PlanError(ValueError):
    """An option, or a combination of options, that the planner cannot use (a usage error)."""


@dataclass(frozen=True)
class ModelSource:
    """Where the model's shape comes from: exactly one of a parameter count or a config's text."""

    params: Optional[str] = None
    """Parameter count as given: `7B`, `1.3B`, `125M`."""
    config_path: Optional[str] = None
    """A Hugging Face config.json (dense, mixture of experts or encoder-decoder), named in messages."""
    config_text: Optional[str] = None
    """The text of `config_path` (the caller reads the file)."""
    layers: Optional[int] = None
    """Override of the number of layers."""
    hidden: Optional[int] = None
    """Override of the hidden size."""
    heads: Optional[int] = None
    """Override of the number of attention heads."""
    vocab: Optional[int] = None
    """Override of the vocabulary size."""
    kv_heads: Optional[int] = None
    """Key/value heads (grouped-query attention)."""

    def overrides(self) -> dict[str, Optional[int]]:
        return {"layers": self.layers, "hidden": self.hidden, "heads": self.heads, "vocab": self.vocab}


@dataclass(frozen=True)
class PlanOptions:
    """Every choice of one `pgdoctor plan` run (the flags of the same name, without the dashes)."""

    model: ModelSource
    """The model: a parameter count or a config, with shape overrides."""
    gpu: Optional[str] = None
    """GPU preset (`h100-sxm`, `a100-80g`, ...): memory, achieved TFLOP/s and links, each overridable."""
    gpus_per_node: int = 8
    """GPUs sharing the intra-node link (an NVLink domain)."""
    nodes: int = 1
    """Number of nodes."""
    gpu_memory: Optional[str] = None
    """Memory per GPU (`80GiB`, `80GB`); default: the preset's. One of the two is needed."""
    precision: str = "bf16-mixed"
    """Training precision (a key of pgdoctor.plan.memory.PRECISIONS)."""
    optimizer: str = "adamw"
    """Optimizer (a key of pgdoctor.plan.memory.OPTIMIZERS)."""
    seq_len: Optional[int] = None
    """Tokens per sequence; default: the config's maximum up to 8192, else 2048."""
    micro_batch: Optional[int] = None
    """Sequences per micro-batch; default: searched over 1, 2, 4, 8 with a global batch, else 1."""
    global_batch: Optional[int] = None
    """Sequences per optimizer step (gradient accumulation follows)."""
    recompute: str = "search"
    """Activation checkpointing: none, selective, full, or search (tries each for every layout)."""
    headroom: str = "5%"
    """Free GPU memory a layout needs to be recommended (`5%` or `0.05`)."""
    trainable: Optional[str] = None
    """Fine-tuning: share of parameters that train (`0.5%`)."""
    lora_rank: Optional[int] = None
    """Fine-tuning with LoRA adapters of this rank."""
    lora_targets: Optional[str] = None
    """Projections with adapters: attn, mlp, all, or q,k,v,o,gate,up,down; default attn,mlp."""
    base_weights: str = "16bit"
    """Storage of the frozen base under LoRA (nf4: QLoRA)."""
    offload: str = "none"
    """ZeRO-Offload / ZeRO-Infinity / FSDP CPU offload of the optimizer (and parameters)."""
    offload_device: str = "cpu"
    """Where offloaded states live: cpu or nvme."""
    host_memory: Optional[str] = None
    """Host memory per node, checked when offloading."""
    pcie: Optional[str] = None
    """GPU-host link preset; default: the GPU preset's, else pcie5."""
    cpu_optimizer_rate: float = 1e9
    """Offload: parameters the host's optimizer step updates per second per node."""
    nvme_bandwidth: str = "25"
    """NVMe read/write bandwidth per node in GB/s (offload to nvme)."""
    flash_attention: bool = True
    """False: attention stores the s x s scores (eager attention)."""
    interconnect: Optional[str] = None
    """Link between GPUs of a node (a preset); default: the GPU preset's."""
    inter_node: Optional[str] = None
    """Link between nodes, per NIC (a preset); default: pgdoctor.knowledge.interconnects.DEFAULT_INTER."""
    nics_per_node: int = 1
    """NICs a node uses for collectives (8 on rail-optimised DGX/HGX)."""
    bandwidth_intra: Optional[str] = None
    """Measured intra-node busbw in GB/s (wins over the preset and over `measured_text`)."""
    bandwidth_inter: Optional[str] = None
    """Measured inter-node busbw per NIC in GB/s (wins over the preset and over `measured_text`)."""
    measured_text: Optional[str] = None
    """Text of a pgdoctor snapshot or a `bench scaling --json` result: measured bandwidth and TFLOP/s."""
    measured_path: Optional[str] = None
    """The file `measured_text` was read from (`--from`)."""
    tp: Optional[int] = None
    """Only layouts with this tensor parallelism."""
    pp: Optional[int] = None
    """Only layouts with this pipeline depth."""
    zero: Optional[int] = None
    """Only layouts with this ZeRO stage (0-3)."""
    sequence_parallel: bool = True
    """Tensor parallelism with sequence parallelism (norms and dropouts sharded)."""
    schedule: str = "1f1b"
    """Pipeline schedule: one of pgdoctor.plan.comm.SCHEDULES."""
    virtual_stages: int = 2
    """Model chunks per pipeline stage for the interleaved schedule."""
    cp: Optional[int] = None
    """Context parallelism (ring attention); default: searched from 16K tokens per sequence."""
    ep: Optional[int] = None
    """Mixture of experts: only layouts with this expert parallelism."""
    capacity_factor: float = 1.0
    """Mixture of experts: tokens an expert accepts, relative to an even split."""
    tflops: Optional[float] = None
    """Achieved (not peak) TFLOP/s per GPU; default: 40% of the preset's peak, else DEFAULT_TFLOPS."""
    overhead: str = "2GiB"
    """Fixed memory per GPU: CUDA context, NCCL buffers, allocator slack."""
    ddp_bucket_view: bool = False
    """The job uses DDP(gradient_as_bucket_view=True)."""
    largest_model: bool = False
    """Search the largest LLaMA-style model each layout fits instead of planning one model."""

    def __post_init__(self) -> None:
        if self.schedule not in SCHEDULES:
            raise PlanError(f"schedule {self.schedule!r}: one of {', '.join(SCHEDULES)}")
