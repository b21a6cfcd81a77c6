"""Memory per GPU: model states (parameters, gradients, optimizer), activations, overheads.

Model states follow the ZeRO paper's accounting (Rajbhandari et al. 2020): mixed-precision Adam
keeps 16-bit parameters (2 B) and gradients (2 B), and an fp32 master copy plus two fp32 moments
(4 + 4 + 4 B): 16 B per parameter. ZeRO-1 shards the 12 B of optimizer state over the N
data-parallel ranks (4P + 12P/N), ZeRO-2 also the gradients (2P + 14P/N), ZeRO-3/FSDP also the
parameters (16P/N). torch's Adam also keeps a 4-byte fp32 `step` tensor per parameter tensor
(not per element), counted here so that the totals match what torch allocates to the byte.

Activations follow Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
Transformer Models"), in bytes per layer for 16-bit activations with sequence length s,
micro-batch b, hidden h, heads a and tensor-parallel size t (sequence parallelism assumed
whenever t > 1, as Megatron recommends):
  no recomputation      sbh(34 + 5as/h) / t
  selective recompute   34sbh / t           (the attention score term is recomputed)
  full recompute        2sbh / t            (only each layer's input is kept)
FlashAttention never stores the s x s scores, so with it the 5as/h term is dropped as in the
selective case. fp32 activations count double.

The 34 is GPT's: 11 for attention (QKV input 2, Q K V 6, projection input 2, dropout mask 1),
19 for a 4h GeLU MLP (input 2, GeLU input 8, second matrix input 8, dropout mask 1), 4 for the
two norms. activation_coeff() redoes that count for the model's own shape: grouped-query K and
V are smaller, a SwiGLU MLP of width f keeps 2 + 8f/h (gate and up outputs, SiLU output,
down-projection input), models without dropout keep no masks and only the softmax output
(2as/h instead of 5as/h) in eager attention. Under 1F1B pipelining stage i keeps the
activations of min(p - i, m) micro-batches in flight; the last stage also holds the logits
(Korthikanti's 4sbh(1 + v/h)/t).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Optional

from pgdoctor.knowledge.units import GIB
from pgdoctor.plan.model import ModelShape, layer_tensors, rank_tensors, shard_units, stage_layers


@dataclass(frozen=True)
class Precision:
    name: str
    param_bytes: int
    grad_bytes: int
    master_bytes: int  # fp32 master copy the optimizer steps on; 0 when params are fp32
    act_scale: float  # activations relative to Korthikanti's 16-bit figures


PRECISIONS: dict[str, Precision] = {
    "fp32": Precision("fp32", 4, 4, 0, 2.0),
    "bf16-mixed": Precision("bf16-mixed", 2, 2, 4, 1.0),
    "fp16-mixed": Precision("fp16-mixed", 2, 2, 4, 1.0),
    # Megatron-LM with bf16 keeps and all-reduces gradients in an fp32 main_grad buffer
    # (accumulate_allreduce_grads_in_fp32 is forced on for bf16): 2 + 4 + 4 + 8 = 18 B with Adam.
    "bf16-mixed-fp32-grads": Precision("bf16-mixed-fp32-grads", 2, 4, 4, 1.0),
    # torch.autocast over fp32 weights (the usual plain-PyTorch recipe): fp32 states, 16-bit
    # activations.
    "bf16-autocast": Precision("bf16-autocast", 4, 4, 0, 1.0),
}


@dataclass(frozen=True)
class Optimizer:
    name: str
    state_bytes: int  # per parameter element, fp32 (the dtype of the master or fp32 weights)
    step_bytes_per_tensor: int  # torch Adam's scalar fp32 `step`, one per parameter tensor


OPTIMIZERS: dict[str, Optimizer] = {
    "adam": Optimizer("adam", 8, 4),  # exp_avg + exp_avg_sq
    "adamw": Optimizer("adamw", 8, 4),
    "sgd-momentum": Optimizer("sgd-momentum", 4, 0),  # momentum_buffer
    "sgd": Optimizer("sgd", 0, 0),
}

RECOMPUTE = ("none", "selective", "full")
ZERO_STAGES = (0, 1, 2, 3)
DEFAULT_OVERHEAD = 2 * GIB
# torch DDP's default bucket size (bucket_cap_mb=25, in MiB).
DDP_BUCKET_BYTES = 25 * 2**20


@dataclass(frozen=True)
class StateBytes:
    """Bytes of model states on one rank."""

    params: int
    grads: int
    master: int
    optimizer: int  # moments and step tensors

    @property
    def total(self) -> int:
        return self.params + self.grads + self.master + self.optimizer


def _shard(n: int, parts: int) -> int:
    # Flat ZeRO/FSDP buffers are padded to a multiple of the group size.
    return -(-n // parts)


def state_bytes(
    numel: int, n_tensors: int, precision: Precision, optimizer: Optimizer, zero: int = 0, dp: int = 1,
    units: Optional[Sequence[int]] = None,
) -> StateBytes:
    """Model-state bytes for `numel` parameters in `n_tensors` tensors on one rank.

    Sharded (zero >= 1) state lives in flat buffers, one per unit (`units`: their numels; the
    whole rank by default), each padded to a multiple of dp, with one optimizer step per unit,
    as FSDP's FlatParameter and DeepSpeed's partitions do."""
    if zero not in ZERO_STAGES:
        raise ValueError(f"ZeRO stage {zero} is not one of {ZERO_STAGES}")
    dp = max(1, dp)
    flat = list(units) if units else [numel]
    owned = sum(_shard(u, dp) for u in flat)
    params = (owned if zero >= 3 else numel) * precision.param_bytes
    grads = (owned if zero >= 2 else numel) * precision.grad_bytes
    opt_numel = owned if zero >= 1 else numel
    steps = len(flat) if zero >= 1 else n_tensors
    return StateBytes(
        params=params,
        grads=grads,
        master=opt_numel * precision.master_bytes,
        optimizer=opt_numel * optimizer.state_bytes + steps * optimizer.step_bytes_per_tensor,
    )


def activation_coeff(shape: ModelShape) -> tuple[float, float]:
    """(bytes per s*b*h per layer kept for backward in 16-bit, coefficient of the eager
    attention's as/h term): Korthikanti's (34, 5) for GPT, recounted for this shape."""
    h = shape.hidden
    mask = 1.0 if shape.dropout else 0.0
    attn = 2 + 2 * shape.qkv_out / h + 2 * shape.heads * shape.head_dim / h + mask
    mlp = 2 + (8 if shape.gated_mlp else 4) * shape.ffn_hidden / h + mask
    return attn + mlp + 4, (5.0 if shape.dropout else 2.0)


def activation_bytes_per_layer(
    seq: int, micro_batch: int, hidden: int, heads: int, tp: int = 1, recompute: str = "none",
    flash_attention: bool = True, act_scale: float = 1.0, coeff: float = 34.0, score_coeff: float = 5.0,
) -> float:
    """Korthikanti et al.'s per-layer activation bytes (see the module docstring); `coeff` and
    `score_coeff` are the 34 and 5 of GPT, or activation_coeff() of another shape."""
    sbh = seq * micro_batch * hidden
    if recompute == "full":
        per = 2.0 * sbh
    elif recompute == "selective" or flash_attention:
        per = coeff * sbh
    elif recompute == "none":
        per = sbh * (coeff + score_coeff * heads * seq / hidden)
    else:
        raise ValueError(f"recompute {recompute!r} is not one of {RECOMPUTE}")
    return per / tp * act_scale


def ddp_bucket_bytes(numel: int, precision: Precision, bucket_view: bool = False) -> int:
    """torch DDP's reducer keeps its own flat bucket tensors covering every gradient; only with
    gradient_as_bucket_view=True are the .grad tensors views into them instead of a second copy."""
    return 0 if bucket_view else numel * precision.grad_bytes


@dataclass(frozen=True)
class MemoryInput:
    shape: ModelShape
    precision: Precision
    optimizer: Optimizer
    seq_len: int
    micro_batch: int
    recompute: str = "none"
    flash_attention: bool = True
    overhead_bytes: int = DEFAULT_OVERHEAD
    ddp_bucket_view: bool = False  # DDP(gradient_as_bucket_view=True): no second gradient copy


@dataclass(frozen=True)
class StageMemory:
    stage: int
    numel: int
    n_tensors: int
    states: StateBytes
    activations: int
    buffers: int  # DDP buckets or the ZeRO-3 gathered layer
    overhead: int
    notes: tuple[str, ...] = field(default=())

    @property
    def total(self) -> int:
        return self.states.total + self.activations + self.buffers + self.overhead

    def to_json(self) -> dict[str, object]:
        return {
            "stage": self.stage, "params_numel": self.numel, "param_tensors": self.n_tensors,
            "params": self.states.params, "grads": self.states.grads, "master": self.states.master,
            "optimizer": self.states.optimizer, "activations": self.activations, "buffers": self.buffers,
            "overhead": self.overhead, "total": self.total,
        }


def stage_memory(
    inp: MemoryInput, tp: int, pp: int, dp: int, zero: int, stage: int, micro_batches: int
) -> StageMemory:
    shape = inp.shape
    tensors = rank_tensors(shape, tp, pp, stage)
    numel = sum(n for _, n in tensors)
    units = shard_units(shape, tp, pp, stage)
    if shape.params_given is not None:
        # The shape only spreads the given count: scale this rank's share to it.
        scale = shape.params_given / shape.shape_params
        numel = round(numel * scale)
        units = [round(u * scale) for u in units]
    states = state_bytes(numel, len(tensors), inp.precision, inp.optimizer, zero, dp, units)
    layers_here = stage_layers(shape.layers, pp)[stage]
    coeff, score_coeff = activation_coeff(shape)
    per_layer = activation_bytes_per_layer(
        inp.seq_len, inp.micro_batch, shape.hidden, shape.heads, tp, inp.recompute, inp.flash_attention,
        inp.precision.act_scale, coeff, score_coeff,
    )
    in_flight = min(pp - stage, max(1, micro_batches))
    acts = per_layer * layers_here * in_flight
    if inp.recompute == "full" and layers_here:
        # Backward recomputes one layer at a time and holds its full activations meanwhile.
        acts += activation_bytes_per_layer(
            inp.seq_len, inp.micro_batch, shape.hidden, shape.heads, tp, "none", inp.flash_attention,
            inp.precision.act_scale, coeff, score_coeff,
        )
    if stage == pp - 1:
        sbh = inp.seq_len * inp.micro_batch * shape.hidden
        acts += 4.0 * sbh * (1 + shape.vocab / shape.hidden) / tp
    notes = []
    buffers = 0
    if zero == 0 and dp > 1 and not inp.ddp_bucket_view:
        buffers = ddp_bucket_bytes(numel, inp.precision)
        notes.append("DDP buckets hold a second copy of the gradients (gradient_as_bucket_view=False)")
    if zero == 3 and dp > 1:
        # FSDP/ZeRO-3 gathers a whole layer (and prefetches the next) plus its unsharded gradient.
        layer = sum(n for _, n in layer_tensors(shape, tp))
        if shape.params_given is not None:
            layer = round(layer * shape.params_given / shape.shape_params)
        buffers = layer * (2 * inp.precision.param_bytes + inp.precision.grad_bytes)
        notes.append("ZeRO-3 keeps the current and the prefetched layer unsharded")
    return StageMemory(stage, numel, len(tensors), states, int(acts), buffers, inp.overhead_bytes, tuple(notes))


def worst_stage(
    inp: MemoryInput, tp: int, pp: int, dp: int, zero: int, micro_batches: int
) -> StageMemory:
    """The stage that needs the most memory: it decides whether a layout fits."""
    return max(
        (stage_memory(inp, tp, pp, dp, zero, s, micro_batches) for s in range(pp)), key=lambda m: m.total
    )
