"""Fine-tuning: frozen parameters, LoRA adapters and quantized base weights (QLoRA).

Only what trains has gradients, a master copy and optimizer state; frozen weights are kept in
their storage dtype, sharded by ZeRO-3/FSDP like any parameter, and never communicated for
gradients.

LoRA (Hu et al. 2021): a targeted weight W (d_out x d_in) gets A (r x d_in) and B (d_out x r):
r (d_in + d_out) trainable parameters. GPT-3 175B (96 layers, d_model 12288) with r = 4 on W_q
and W_v has 96 x 2 x 4 x 24576 = 18,874,368 (the paper's "18M", Table 5; r = 1: 4.7M and r = 8:
37.7M, Table 4). Under tensor parallelism a column-parallel weight's B is split over t and A
replicated; a row-parallel weight's A is split and B replicated.

Quantized base weights (the linear layers' weights of every transformer layer; embeddings,
norms and the output layer stay 16-bit, as bitsandbytes and PEFT leave them):
  int8  LLM.int8 (Linear8bitLt): 1 B per element + one fp32 scale per output row
  nf4   QLoRA 4-bit NormalFloat with double quantization (Dettmers et al. 2023, section 3):
        0.5 B per element, one 8-bit absmax per block of 64, one fp32 constant per 256 blocks:
        4 + 8/64 + 32/(64 x 256) = 4.127 bits per parameter (the paper's figure)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from pgdoctor.plan.model import ModelShape

TARGETS = ("q", "k", "v", "o", "gate", "up", "down")
GROUPS = {"attn": ("q", "k", "v", "o"), "mlp": ("gate", "up", "down"), "all": TARGETS}
BASE_WEIGHTS = ("16bit", "int8", "nf4")
# Linear weights of a layer that a quantized base stores in int8/nf4 (pgdoctor.plan.model names).
QUANTIZED = ("attn.qkv.weight", "attn.out.weight", "mlp.up.weight", "mlp.down.weight")
NF4_BLOCK, NF4_BLOCKS_PER_CONSTANT = 64, 256


@dataclass(frozen=True)
class FineTune:
    trainable_fraction: Optional[float] = None  # --trainable: a share of the parameters trains
    lora_rank: int = 0
    lora_targets: tuple[str, ...] = ()
    base_weights: str = "16bit"

    @property
    def label(self) -> str:
        if self.lora_rank:
            q = "" if self.base_weights == "16bit" else f", {self.base_weights} base"
            return f"LoRA r={self.lora_rank} on {','.join(self.lora_targets)}{q}"
        return f"{self.trainable_fraction:.3g} of the parameters trainable"

    def to_json(self) -> dict[str, object]:
        return {
            "trainable_fraction": self.trainable_fraction,
            "lora_rank": self.lora_rank,
            "lora_targets": list(self.lora_targets),
            "base_weights": self.base_weights,
        }


def parse_targets(text: str) -> tuple[str, ...]:
    """`attn,mlp` or `q,v` -> the projections, in TARGETS order."""
    names: set[str] = set()
    for word in (w.strip().lower() for w in text.split(",") if w.strip()):
        if word in GROUPS:
            names.update(GROUPS[word])
        elif word in TARGETS:
            names.add(word)
        else:
            raise ValueError(f"unknown LoRA target {word!r} (use {', '.join([*GROUPS, *TARGETS])})")
    if not names:
        raise ValueError("no LoRA targets given")
    return tuple(t for t in TARGETS if t in names)


def _projection_dims(shape: ModelShape) -> dict[str, tuple[int, int, bool]]:
    """target -> (d_in, d_out, column_parallel)."""
    h, attn, kv = shape.hidden, shape.heads * shape.head_dim, shape.kv_heads * shape.head_dim
    dims = {
        "q": (h, attn, True),
        "k": (h, kv, True),
        "v": (h, kv, True),
        "o": (attn, h, False),
        "up": (h, shape.ffn_hidden, True),
        "down": (shape.ffn_hidden, h, False),
    }
    if shape.gated_mlp:
        dims["gate"] = (h, shape.ffn_hidden, True)
    return dims


def lora_linear_tensors(name: str, d_in: int, d_out: int, rank: int) -> list[tuple[str, int]]:
    """LoRA's A (r x d_in) and B (d_out x r) for a weight of d_out x d_in as this rank holds it."""
    return [(f"{name}.lora_A", rank * d_in), (f"{name}.lora_B", d_out * rank)]


def lora_layer_tensors(
    shape: ModelShape, rank: int, targets: Sequence[str], tp: int = 1
) -> list[tuple[str, int]]:
    """(name, numel) of one layer's LoRA A and B matrices on one tensor-parallel rank."""
    out: list[tuple[str, int]] = []
    for name, (d_in, d_out, column) in _projection_dims(shape).items():
        if name not in targets:
            continue
        a_in, b_out = (d_in, d_out // tp) if column else (d_in // tp, d_out)
        out += [(f"lora.{name}.A", rank * a_in), (f"lora.{name}.B", b_out * rank)]
    return [(n, k) for n, k in out if k]


def lora_params(shape: ModelShape, rank: int, targets: Sequence[str]) -> int:
    return shape.layers * sum(n for _, n in lora_layer_tensors(shape, rank, targets))


def quantized_bytes(kind: str, numel: int, rows: int, elem_bytes: int = 2) -> int:
    """Storage of a frozen weight of `numel` elements and `rows` output rows."""
    if kind == "int8":
        return numel + 4 * rows
    if kind == "nf4":
        blocks = -(-numel // NF4_BLOCK)
        return -(-numel // 2) + blocks + 4 * -(-blocks // NF4_BLOCKS_PER_CONSTANT)
    return numel * elem_bytes


def frozen_param_bytes(
    tensors: Sequence[tuple[str, int]], hidden: int, kind: str, elem_bytes: int, scale: float = 1.0
) -> int:
    """Bytes of frozen base tensors; the layers' linear weights quantized when `kind` says so."""
    total = 0
    for name, n in tensors:
        n = round(n * scale)
        quant = kind != "16bit" and name.endswith(QUANTIZED)
        rows = n // hidden if name.endswith(("attn.qkv.weight", "mlp.up.weight")) else hidden
        total += quantized_bytes(kind, n, rows, elem_bytes) if quant else n * elem_bytes
    return total
