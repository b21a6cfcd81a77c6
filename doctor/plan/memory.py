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
from functools import lru_cache
from typing import Optional

from pgdoctor.knowledge.units import GIB
from pgdoctor.plan.comm import activations_in_flight
from pgdoctor.plan.finetune import FineTune, frozen_param_bytes, lora_layer_tensors
from pgdoctor.plan.model import ModelShape, layer_tensors, stage_layers
from pgdoctor.plan.model import rank_tensors as _rank_tensors
from pgdoctor.plan.model import shard_units as _shard_units
from pgdoctor.plan.moe import MoeSpec, activation_shape, moe_rank_tensors
from pgdoctor.plan.optim import tensor_dims


# The search evaluates thousands of (layout, setting) pairs of one shape: the per-rank tensor
# lists depend only on (shape, tp, pp, stage), so they are computed once. Callers never mutate them.
@lru_cache(maxsize=4096)
def rank_tensors(shape: ModelShape, tp: int, pp: int, stage: int) -> tuple[tuple[str, int], ...]:
    return tuple(_rank_tensors(shape, tp, pp, stage))


@lru_cache(maxsize=4096)
def shard_units(shape: ModelShape, tp: int, pp: int, stage: int) -> tuple[int, ...]:
    return tuple(_shard_units(shape, tp, pp, stage))


@lru_cache(maxsize=256)
def shape_params(shape: ModelShape) -> int:
    return shape.shape_params


@dataclass(frozen=True)
class Precision:
    name: str
    param_bytes: int
    grad_bytes: int
    master_bytes: int  # fp32 master copy the optimizer steps on; 0 when params are fp32
    act_scale: float  # activations relative to Korthikanti's 16-bit figures
    state_scale: float = 1.0  # optimizer state dtype relative to fp32 (0.5: moments in bf16)


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
    # Pure bf16: bf16 weights and gradients, no master copy, and the optimizer's moments in the
    # weights' dtype (torch's Adam on bf16 parameters): 2 + 2 + 0 + 4 = 8 B with Adam.
    "bf16-pure": Precision("bf16-pure", 2, 2, 0, 1.0, 0.5),
    # FP8 matmuls (Transformer Engine): weights kept in bf16 with an fp32 master, an fp8 copy of
    # each linear weight for the matmul (1 B, counted in the buffers), activations saved for
    # backward in fp8 where TE does (the linear layers' inputs): counted as 0.75 of the 16-bit
    # figure.
    "fp8-mixed": Precision("fp8-mixed", 2, 2, 4, 0.75),
}


@dataclass(frozen=True)
class Optimizer:
    name: str
    state_bytes: int  # per parameter element, fp32 (the dtype of the master or fp32 weights)
    step_bytes_per_tensor: int  # torch Adam's scalar fp32 `step`, one per parameter tensor
    kind: str = "dense"  # dense | 8bit (bitsandbytes block-wise) | factored (Adafactor)


OPTIMIZERS: dict[str, Optimizer] = {
    "adam": Optimizer("adam", 8, 4),  # exp_avg + exp_avg_sq
    "adamw": Optimizer("adamw", 8, 4),
    "sgd-momentum": Optimizer("sgd-momentum", 4, 0),  # momentum_buffer
    "sgd": Optimizer("sgd", 0, 0),
    # bitsandbytes Adam8bit/AdamW8bit: see pgdoctor.plan.optim (2 B + block constants).
    "adam8bit": Optimizer("adam8bit", 2, 0, "8bit"),
    "adamw8bit": Optimizer("adamw8bit", 2, 0, "8bit"),
    # torch.optim.Adafactor (no first moment): factored second moment rows + columns per matrix.
    "adafactor": Optimizer("adafactor", 4, 4, "factored"),
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
    numel: int,
    n_tensors: int,
    precision: Precision,
    optimizer: Optimizer,
    zero: int = 0,
    dp: int = 1,
    units: Optional[Sequence[int]] = None,
    dims: Optional[Sequence[tuple[int, int]]] = None,
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
    if optimizer.kind == "dense":
        opt = (
            round(opt_numel * optimizer.state_bytes * precision.state_scale)
            + steps * optimizer.step_bytes_per_tensor
        )
    else:
        from pgdoctor.plan.optim import special_state_bytes

        # Sharded state is flat (1-D) per unit; unsharded, the tensors' own shapes.
        pieces = [(_shard(u, dp), 1) for u in flat] if zero >= 1 or not dims else list(dims)
        opt = special_state_bytes(
            optimizer.kind,
            pieces,
            4 if precision.master_bytes or precision.param_bytes == 4 else precision.param_bytes,
        )
    return StateBytes(
        params=params,
        grads=grads,
        master=opt_numel * precision.master_bytes,
        optimizer=opt,
    )


def activation_coeff(shape: ModelShape) -> tuple[float, float]:
    """(bytes per s*b*h per layer kept for backward in 16-bit, coefficient of the eager
    attention's as/h term): Korthikanti's (34, 5) for GPT, recounted for this shape."""
    h = shape.hidden
    mask = 1.0 if shape.dropout else 0.0
    attn = 2 + 2 * shape.qkv_out / h + 2 * shape.heads * shape.head_dim / h + mask
    mlp = 2 + (8 if shape.gated_mlp else 4) * shape.ffn_hidden / h + mask
    return attn + mlp + 4, (5.0 if shape.dropout else 2.0)


def replicated_coeff(shape: ModelShape) -> float:
    """The part of activation_coeff that tensor parallelism without sequence parallelism keeps
    whole on every rank: two norm inputs (4), the QKV and MLP inputs (4), the dropout masks
    after attention and MLP (2 with dropout): Korthikanti's 10 for GPT."""
    return 8.0 + (2.0 if shape.dropout else 0.0)


def activation_bytes_per_layer(
    seq: int,
    micro_batch: int,
    hidden: int,
    heads: int,
    tp: int = 1,
    recompute: str = "none",
    flash_attention: bool = True,
    act_scale: float = 1.0,
    coeff: float = 34.0,
    score_coeff: float = 5.0,
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
    finetune: Optional[FineTune] = None
    offload: str = "none"  # see pgdoctor.plan.offload: none | optimizer | optimizer+params
    moe: Optional[MoeSpec] = None
    schedule: str = "1f1b"  # pipeline schedule (pgdoctor.plan.comm.SCHEDULES)
    sequence_parallel: bool = True  # with tp > 1; off: norms, dropouts and layer inputs replicated
    virtual_stages: int = 1  # model chunks per stage for the interleaved schedule


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
    trained_numel: int = -1  # parameters with gradients and optimizer state (-1: all of numel)
    host_bytes: int = 0  # offloaded states in host memory, this rank's share

    @property
    def trained(self) -> int:
        return self.numel if self.trained_numel < 0 else self.trained_numel

    @property
    def total(self) -> int:
        return self.states.total + self.activations + self.buffers + self.overhead

    def to_json(self) -> dict[str, object]:
        return {
            "stage": self.stage,
            "params_numel": self.numel,
            "param_tensors": self.n_tensors,
            "params": self.states.params,
            "grads": self.states.grads,
            "master": self.states.master,
            "optimizer": self.states.optimizer,
            "activations": self.activations,
            "buffers": self.buffers,
            "overhead": self.overhead,
            "total": self.total,
            "trained_numel": self.trained,
            "host": self.host_bytes,
        }


def stage_memory(
    inp: MemoryInput,
    tp: int,
    pp: int,
    dp: int,
    zero: int,
    stage: int,
    micro_batches: int,
    ep: int = 1,
) -> StageMemory:
    shape = inp.shape
    tensors = list(rank_tensors(shape, tp, pp, stage))
    units = list(shard_units(shape, tp, pp, stage))
    experts: list[tuple[str, int]] = []
    if inp.moe is not None:
        first = sum(stage_layers(shape.layers, pp)[:stage])
        extra, experts = moe_rank_tensors(
            shape, inp.moe, tp, ep, stage_layers(shape.layers, pp)[stage], first
        )
        tensors = tensors + extra
        units = [sum(units) + sum(n for _, n in extra)]
    numel = sum(n for _, n in tensors)
    if shape.params_given is not None:
        # The shape only spreads the given count: scale this rank's share to it.
        scale = shape.params_given / shape_params(shape)
        numel = round(numel * scale)
        units = [round(u * scale) for u in units]
    layers_here = stage_layers(shape.layers, pp)[stage]
    trained = numel
    if inp.finetune is None:
        states = state_bytes(
            numel,
            len(tensors),
            inp.precision,
            inp.optimizer,
            zero,
            dp,
            units,
            tensor_dims(tensors, shape.hidden),
        )
    else:
        states, trained = _finetune_states(inp, tensors, numel, tp, layers_here, zero, dp)
    if experts:
        # Expert states are sharded over the expert-data-parallel group (dp / ep ranks).
        e_numel = sum(n for _, n in experts)
        moe_layers = max(1, len({name.split(".experts")[0] for name, _ in experts}))
        e_units = [e_numel // moe_layers] * moe_layers
        es = state_bytes(
            e_numel,
            len(experts),
            inp.precision,
            inp.optimizer,
            zero,
            max(1, dp // ep),
            e_units if sum(e_units) == e_numel else None,
        )
        states = StateBytes(
            states.params + es.params,
            states.grads + es.grads,
            states.master + es.master,
            states.optimizer + es.optimizer,
        )
        numel += e_numel
        trained += e_numel
    host = 0
    if inp.offload != "none":
        from pgdoctor.plan.offload import offload_states

        # ZeRO-1 (pp > 1): gradients stay whole on the GPU, the host holds this rank's shard.
        owned = -(-trained // max(1, dp)) if zero < 2 else None
        gpu_params, host = offload_states(
            states.params,
            states.grads,
            states.master,
            states.optimizer,
            inp.precision.grad_bytes,
            inp.offload,
            owned,
        )
        states = StateBytes(gpu_params, states.grads if zero < 2 else 0, 0, 0)
    coeff, score_coeff = activation_coeff(activation_shape(shape, inp.moe))
    per_layer = activation_bytes_per_layer(
        inp.seq_len,
        inp.micro_batch,
        shape.hidden,
        shape.heads,
        tp,
        inp.recompute,
        inp.flash_attention,
        inp.precision.act_scale,
        coeff,
        score_coeff,
    )
    if tp > 1 and not inp.sequence_parallel:
        # Korthikanti et al. eq. 2: without sequence parallelism the layer norms' inputs, the
        # dropout masks and the inputs of QKV and of the MLP (10 sbh in GPT) are not split.
        sbh = inp.seq_len * inp.micro_batch * shape.hidden
        kept = 2.0 if inp.recompute == "full" else replicated_coeff(shape)
        per_layer += kept * sbh * (1 - 1 / tp) * inp.precision.act_scale
    in_flight = activations_in_flight(pp, stage, micro_batches, inp.schedule, inp.virtual_stages)
    act_layers = float(layers_here)
    if shape.decoder_layers:
        from pgdoctor.plan.encdec import cross_factor, decoder_layers_on_stage

        # Decoder layers also keep their cross-attention's activations.
        act_layers += decoder_layers_on_stage(shape, pp, stage) * (cross_factor(shape, coeff) - 1)
    acts = per_layer * act_layers * in_flight
    if inp.recompute == "full" and layers_here:
        # Backward recomputes one layer at a time and holds its full activations meanwhile.
        acts += activation_bytes_per_layer(
            inp.seq_len,
            inp.micro_batch,
            shape.hidden,
            shape.heads,
            tp,
            "none",
            inp.flash_attention,
            inp.precision.act_scale,
            coeff,
            score_coeff,
        )
    if stage == pp - 1:
        sbh = inp.seq_len * inp.micro_batch * shape.hidden
        acts += 4.0 * sbh * (1 + shape.vocab / shape.hidden) / tp
    notes = []
    buffers = 0
    if inp.precision.name.startswith("fp8"):
        # Transformer Engine caches an fp8 copy of each weight it multiplies with (1 B); under
        # ZeRO-3 only of the gathered layers.
        fp8_cache = (
            numel if zero < 3 else 2 * sum(n for _, n in layer_tensors(shape, tp, shape.decoder_layers > 0))
        )
        buffers += fp8_cache
        notes.append("fp8: one 1-byte copy of each weight in use (Transformer Engine's fp8 weight cache)")
    if zero == 0 and dp > 1 and not inp.ddp_bucket_view:
        buffers += ddp_bucket_bytes(trained, inp.precision)
        notes.append("DDP buckets hold a second copy of the gradients (gradient_as_bucket_view=False)")
    if zero == 3 and (dp > 1 or inp.offload == "optimizer+params"):
        # FSDP/ZeRO-3 gathers a whole layer (and prefetches the next) plus its unsharded gradient.
        layer = sum(n for _, n in layer_tensors(shape, tp, shape.decoder_layers > 0))  # the largest layer
        if shape.params_given is not None:
            layer = round(layer * shape.params_given / shape_params(shape))
        layer_trained = layer if numel == trained else trained // max(1, layers_here)
        buffers += 2 * layer * inp.precision.param_bytes + layer_trained * inp.precision.grad_bytes
        notes.append(
            f"ZeRO-3 keeps the current and the prefetched layer unsharded ({shape.layers} layers of "
            f"{layer / 1e6:.4g}M parameters per rank; --layers changes it)"
        )
    return StageMemory(
        stage,
        numel,
        len(tensors),
        states,
        int(acts),
        buffers,
        inp.overhead_bytes,
        tuple(notes),
        trained,
        host,
    )


def _finetune_states(
    inp: MemoryInput,
    tensors: list[tuple[str, int]],
    numel: int,
    tp: int,
    layers_here: int,
    zero: int,
    dp: int,
) -> tuple[StateBytes, int]:
    """States when only part of the model trains: frozen weights keep only their storage
    (sharded under ZeRO-3); the trained part has gradients, master and optimizer state."""
    ft = inp.finetune
    assert ft is not None
    shape, prec = inp.shape, inp.precision
    scale = shape.params_given / shape_params(shape) if shape.params_given is not None else 1.0
    if ft.lora_rank:
        lora = lora_layer_tensors(shape, ft.lora_rank, ft.lora_targets, tp) * layers_here
        t_numel, t_count = sum(n for _, n in lora), len(lora)
        dims = [(ft.lora_rank, n // ft.lora_rank) for _, n in lora]
        frozen = frozen_param_bytes(tensors, shape.hidden, ft.base_weights, prec.param_bytes, scale)
    else:
        frac = ft.trainable_fraction or 0.0
        t_numel, t_count = round(numel * frac), max(1, round(len(tensors) * frac))
        dims = None
        frozen = (numel - t_numel) * prec.param_bytes
    return finetune_state_bytes(frozen, t_numel, t_count, prec, inp.optimizer, zero, dp, dims), t_numel


def finetune_state_bytes(
    frozen_bytes: int,
    trained_numel: int,
    trained_tensors: int,
    precision: Precision,
    optimizer: Optimizer,
    zero: int = 0,
    dp: int = 1,
    dims: Optional[Sequence[tuple[int, int]]] = None,
) -> StateBytes:
    """Model states when only `trained_numel` parameters in `trained_tensors` tensors train (a
    frozen subset, or LoRA adapters over a frozen base): the frozen tensors keep their storage,
    `frozen_bytes` (sharded under ZeRO-3), and nothing else; the trained ones are counted as
    state_bytes counts a model (gradients, master, optimizer state)."""
    frozen = -(-frozen_bytes // max(1, dp)) if zero >= 3 else frozen_bytes
    tr = state_bytes(trained_numel, trained_tensors, precision, optimizer, zero, dp, None, dims)
    return StateBytes(tr.params + frozen, tr.grads, tr.master, tr.optimizer)


def worst_stage(
    inp: MemoryInput,
    tp: int,
    pp: int,
    dp: int,
    zero: int,
    micro_batches: int,
    ep: int = 1,
) -> StageMemory:
    """The stage that needs the most memory: it decides whether a layout fits."""
    return max(
        (stage_memory(inp, tp, pp, dp, zero, s, micro_batches, ep) for s in range(pp)), key=lambda m: m.total
    )
