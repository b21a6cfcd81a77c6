"""Mixture of experts: expert parallelism, experts per rank, top-k routing and all-to-all.

A MoE layer replaces the dense MLP by E experts (each a gated MLP of width f_e), a router
(E x h), and optionally shared experts that every token passes through (DeepSeek-MoE, Qwen-MoE).
Read from config.json for Mixtral (num_local_experts, num_experts_per_tok), Qwen2-MoE
(num_experts, moe_intermediate_size, shared_expert_intermediate_size and its 1-output gate) and
DeepSeek-MoE (n_routed_experts, n_shared_experts x moe_intermediate_size, the first
first_k_dense_replace layers dense). Mixtral-8x7B counts 46,702,792,704 parameters, 12.9B
active per token (Mistral AI's "46.7B total, 12.9B active").

Expert parallelism ep (Megatron-Core MoE, DeepSpeed-MoE) splits the experts of every layer over
ep ranks carved out of the data-parallel group: each rank holds E/ep experts; the expert
gradients are reduced over dp/ep ranks, the dense ones over dp. Tokens go to their top-k
experts with a capacity factor c (tokens an expert accepts: c x k x tokens / E): each MoE layer
does an all-to-all to dispatch s x b x k x c token vectors of h and one to combine them, in
forward and again in backward (4 per layer per micro-batch), each sending (ep-1)/ep of its
buffer off the rank; they sit on the critical path (exposed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Optional

from pgdoctor.plan.model import ModelShape, shape_from_hf_config

EXPERT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts")


@dataclass(frozen=True)
class MoeSpec:
    experts: int
    top_k: int
    expert_ffn: int
    shared_ffn: int = 0  # width of the shared experts together (in the shape's ffn_hidden)
    dense_layers: int = 0  # the first layers keep a dense MLP of dense_ffn
    dense_ffn: int = 0
    shared_gate: bool = False  # Qwen2-MoE: a 1-output sigmoid gate on the shared expert
    capacity_factor: float = 1.0

    def to_json(self) -> dict[str, object]:
        return dict(self.__dict__)


def is_moe(cfg: Mapping[str, Any]) -> bool:
    return any(isinstance(cfg.get(k), int) and cfg[k] > 1 for k in EXPERT_KEYS)


def moe_from_hf_config(cfg: Mapping[str, Any], name: str = "config.json") -> tuple[ModelShape, MoeSpec]:
    """The attention/shared part as a ModelShape (its ffn_hidden the shared experts' width), and
    the experts."""
    mtype = str(cfg.get("model_type", ""))
    experts = next(int(cfg[k]) for k in EXPERT_KEYS if isinstance(cfg.get(k), int) and cfg[k] > 1)
    top_k = int(cfg.get("num_experts_per_tok") or 2)
    dense_ffn = int(cfg.get("intermediate_size") or 0)
    expert_ffn = int(cfg.get("moe_intermediate_size") or dense_ffn)
    shared, gate, dense_layers = 0, False, 0
    if mtype == "qwen2_moe":
        shared = int(cfg.get("shared_expert_intermediate_size") or 0)
        gate = shared > 0
    elif cfg.get("n_shared_experts"):
        shared = int(cfg["n_shared_experts"]) * expert_ffn
    if cfg.get("first_k_dense_replace"):
        dense_layers = int(cfg["first_k_dense_replace"])
    base = {k: v for k, v in cfg.items() if k not in EXPERT_KEYS}
    shape = shape_from_hf_config(base, name=name)
    shape = replace(
        shape,
        ffn_hidden=shared,
        gated_mlp=True,
        qkv_bias=shape.qkv_bias or mtype == "qwen2_moe",
        shape_note=f"mixture of experts ({mtype}): {experts} experts of width {expert_ffn}, top-{top_k}"
        + (f", shared width {shared}" if shared else "")
        + (f", first {dense_layers} layer(s) dense" if dense_layers else ""),
    )
    if "attention_bias" in cfg:
        shape = replace(shape, qkv_bias=bool(cfg["attention_bias"]))
    return shape, MoeSpec(experts, top_k, expert_ffn, shared, dense_layers, dense_ffn, gate)


def _expert_numel(h: int, ffn: int, tp: int) -> int:
    return 3 * h * ffn // tp  # gate, up, down of a SwiGLU expert


def moe_rank_tensors(
    shape: ModelShape, moe: MoeSpec, tp: int, ep: int, layers_here: int, first_layer: int
) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """(dense extras, expert tensors) one rank holds on top of the shape's tensors for its
    layers first_layer .. first_layer + layers_here - 1: routers, shared gates and the dense
    layers' extra MLP width are replicated over ep; the local experts are split over it."""
    h = shape.hidden
    dense: list[tuple[str, int]] = []
    expert: list[tuple[str, int]] = []
    for i in range(first_layer, first_layer + layers_here):
        if i < moe.dense_layers:
            dense.append(
                (f"layers.{i}.mlp.dense_extra", _expert_numel(h, moe.dense_ffn - moe.shared_ffn, tp))
            )
            continue
        dense.append((f"layers.{i}.router.weight", moe.experts * h))
        if moe.shared_gate:
            dense.append((f"layers.{i}.shared_gate.weight", h))
        for e in range(moe.experts // ep):
            expert.append((f"layers.{i}.experts.{e}", _expert_numel(h, moe.expert_ffn, tp)))
    return dense, expert


def total_params(shape: ModelShape, moe: MoeSpec) -> int:
    dense, expert = moe_rank_tensors(shape, moe, 1, 1, shape.layers, 0)
    return shape.shape_params + sum(n for _, n in dense + expert)


def active_params(shape: ModelShape, moe: MoeSpec) -> int:
    """Parameters one token passes through: the dense part and top-k experts per MoE layer."""
    moe_layers = shape.layers - moe.dense_layers
    return total_params(shape, moe) - moe_layers * (moe.experts - moe.top_k) * _expert_numel(
        shape.hidden, moe.expert_ffn, 1
    )


def activation_shape(shape: ModelShape, moe: Optional[MoeSpec]) -> ModelShape:
    """A dense shape whose MLP keeps what a MoE layer keeps for backward: each token's top-k
    expert activations (times the capacity factor) plus the shared experts'."""
    if moe is None:
        return shape
    return replace(shape, ffn_hidden=round(moe.top_k * moe.capacity_factor * moe.expert_ffn + moe.shared_ffn))


def all_to_all_bytes(seq: int, micro_batch: int, hidden: int, act_bytes: int, moe: MoeSpec, ep: int) -> float:
    """Bytes one rank sends off itself per MoE layer per micro-batch (4 all-to-alls)."""
    if ep <= 1:
        return 0.0
    buffer = seq * micro_batch * moe.top_k * moe.capacity_factor * hidden * act_bytes
    return 4 * buffer * (ep - 1) / ep
