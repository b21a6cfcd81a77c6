"""The model the planner reasons about: a transformer's shape (decoder-only, or an
encoder-decoder whose decoder layers add cross-attention), and the parameter tensors one rank
holds under tensor and pipeline parallelism.

Sharding follows Megatron-LM, because that is what TP/PP layouts mean in practice:
QKV and the first MLP matrix are column-parallel (weight and bias split over t), the attention
output and the second MLP matrix are row-parallel (weight split, bias replicated), norms are
replicated, the word embedding and an untied output layer are split over the vocabulary.
Stage 0 holds the embeddings, the last stage the final norm and the output layer; with tied
embeddings and more than one stage the last stage keeps its own copy of the word embedding
(Megatron's "shared embedding" whose gradients are all-reduced between the two stages).
Layers are split evenly over stages; the first L mod p stages get one extra layer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Optional

from pgdoctor.model import jsontext


@dataclass(frozen=True)
class ModelShape:
    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn_hidden: int
    vocab: int
    gated_mlp: bool = True  # SwiGLU/GeGLU: gate and up matrices (fused in one tensor)
    qkv_bias: bool = False
    out_bias: bool = False
    mlp_bias: bool = False
    norm_bias: bool = False  # LayerNorm has a bias, RMSNorm does not
    tied_embeddings: bool = False
    learned_positions: int = 0  # rows of a learned position embedding (GPT-2), 0 for rotary
    dropout: bool = False  # dropout layers keep 1-byte masks for backward
    max_seq_len: Optional[int] = None
    # Encoder-decoder (T5, BART; pgdoctor.plan.encdec): the last `decoder_layers` of `layers`
    # are decoder layers with cross-attention (0: decoder-only).
    decoder_layers: int = 0
    relative_buckets: int = 0  # T5's relative position bias: buckets x heads in each stack's first layer
    embed_norm: bool = False  # BART's layernorm_embedding (one per stack)
    final_norm: bool = True  # a norm after the last layer (of each stack)
    # --params: the count the user gave; the shape only distributes it over tensors.
    params_given: Optional[int] = None
    shape_note: str = ""

    @property
    def qkv_out(self) -> int:
        return (self.heads + 2 * self.kv_heads) * self.head_dim

    def layer_params(self, tp: int = 1) -> int:
        return sum(n for _, n in layer_tensors(self, tp))

    @property
    def shape_params(self) -> int:
        """Parameters of the whole model as its tensors count them (tp=1, pp=1)."""
        return sum(n for _, n in rank_tensors(self, 1, 1, 0))

    @property
    def params(self) -> int:
        return self.params_given if self.params_given is not None else self.shape_params

    def to_json(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items()}
        out["params"] = self.params
        out["shape_params"] = self.shape_params
        return out


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def layer_tensors(m: ModelShape, tp: int, decoder: bool = False) -> list[tuple[str, int]]:
    """(name, numel) of one transformer layer's tensors on one tensor-parallel rank; `decoder`:
    an encoder-decoder's decoder layer, with cross-attention (pgdoctor.plan.encdec)."""
    h = m.hidden
    out: list[tuple[str, int]] = [("norm1.weight", h)]
    if m.norm_bias:
        out.append(("norm1.bias", h))
    qkv = m.qkv_out // tp
    attn = m.heads * m.head_dim // tp
    out.append(("attn.qkv.weight", qkv * h))
    if m.qkv_bias:
        out.append(("attn.qkv.bias", qkv))
    out.append(("attn.out.weight", h * attn))
    if m.out_bias:
        out.append(("attn.out.bias", h))
    out.append(("norm2.weight", h))
    if m.norm_bias:
        out.append(("norm2.bias", h))
    f = m.ffn_hidden // tp
    up = 2 * f if m.gated_mlp else f
    out.append(("mlp.up.weight", up * h))
    if m.mlp_bias:
        out.append(("mlp.up.bias", up))
    out.append(("mlp.down.weight", h * f))
    if m.mlp_bias:
        out.append(("mlp.down.bias", h))
    if decoder:
        out.extend(cross_attention_tensors(m, tp))
    return out


def is_decoder_layer(m: ModelShape, index: int) -> bool:
    """Whether layer `index` (0-based over the whole stack) is a decoder layer with cross-attention."""
    return m.decoder_layers > 0 and index >= m.layers - m.decoder_layers


# --- encoder-decoder (T5, BART; read by pgdoctor.plan.encdec) --------------------------------


def cross_attention_tensors(m: ModelShape, tp: int) -> list[tuple[str, int]]:
    """A decoder layer's cross-attention tensors on one tensor-parallel rank."""
    h = m.hidden
    attn = m.heads * m.head_dim // tp
    kv = 2 * m.kv_heads * m.head_dim // tp
    out = [("cross.norm.weight", h)] + ([("cross.norm.bias", h)] if m.norm_bias else [])
    out.append(("cross.q.weight", attn * h))
    if m.qkv_bias:
        out.append(("cross.q.bias", attn))
    out.append(("cross.kv.weight", kv * h))
    if m.qkv_bias:
        out.append(("cross.kv.bias", kv))
    out.append(("cross.out.weight", h * attn))
    if m.out_bias:
        out.append(("cross.out.bias", h))
    return out


def stack_tensors(m: ModelShape, tp: int, index: int, stage: int, before: bool) -> list[tuple[str, int]]:
    """The per-stack tensors next to layer `index`: before it, the decoder's embedding extras
    (first decoder layer) and T5's relative position bias (each stack's first layer); after it,
    the encoder's final norm (last encoder layer)."""
    enc = m.layers - m.decoder_layers
    out: list[tuple[str, int]] = []
    if before:
        if index == enc:
            if stage != 0:
                out.append(("decoder.embed.word", _ceil_div(m.vocab, tp) * m.hidden))
            if m.learned_positions:
                out.append(("decoder.embed.position", m.learned_positions * m.hidden))
            if m.embed_norm:
                out += [("decoder.embed.norm.weight", m.hidden)] + (
                    [("decoder.embed.norm.bias", m.hidden)] if m.norm_bias else []
                )
        if m.relative_buckets and index in (0, enc):
            out.append((f"stack{int(index == enc)}.relative_bias", m.relative_buckets * m.heads // tp))
    elif index == enc - 1 and m.final_norm:
        out += [("encoder.final_norm.weight", m.hidden)] + (
            [("encoder.final_norm.bias", m.hidden)] if m.norm_bias else []
        )
    return out


def stage_layers(layers: int, pp: int) -> list[int]:
    base, extra = divmod(layers, pp)
    return [base + (1 if i < extra else 0) for i in range(pp)]


def rank_tensors(m: ModelShape, tp: int, pp: int, stage: int) -> list[tuple[str, int]]:
    """(name, numel) of every parameter tensor one (tp, pp) rank holds; the vocabulary is
    padded to a multiple of tp, as Megatron pads it."""
    vocab_shard = _ceil_div(m.vocab, tp)
    out: list[tuple[str, int]] = []
    if stage == 0:
        out.append(("embed.word", vocab_shard * m.hidden))
        if m.learned_positions:
            out.append(("embed.position", m.learned_positions * m.hidden))
        if m.embed_norm:
            out += [("embed.norm.weight", m.hidden)] + (
                [("embed.norm.bias", m.hidden)] if m.norm_bias else []
            )
    first = sum(stage_layers(m.layers, pp)[:stage])
    for i in range(stage_layers(m.layers, pp)[stage]):
        if m.decoder_layers:
            out.extend(stack_tensors(m, tp, first + i, stage, before=True))
        out.extend(
            (f"layers.{i}.{name}", n) for name, n in layer_tensors(m, tp, is_decoder_layer(m, first + i))
        )
        if m.decoder_layers:
            out.extend(stack_tensors(m, tp, first + i, stage, before=False))
    if stage == pp - 1:
        if m.final_norm:
            out.append(("final_norm.weight", m.hidden))
            if m.norm_bias:
                out.append(("final_norm.bias", m.hidden))
        if not m.tied_embeddings or pp > 1:
            out.append(("output.weight", vocab_shard * m.hidden))
    return out


def shard_units(m: ModelShape, tp: int, pp: int, stage: int) -> list[int]:
    """Numels of the units ZeRO/FSDP flatten and shard on one (tp, pp) rank: one per layer (the
    usual wrapping policy: FSDP's transformer auto-wrap) and one for everything else
    (embeddings, final norm, output layer), as the root unit holds them."""
    first = sum(stage_layers(m.layers, pp)[:stage])
    layers = [
        sum(n for _, n in layer_tensors(m, tp, is_decoder_layer(m, first + i)))
        for i in range(stage_layers(m.layers, pp)[stage])
    ]
    rest = sum(n for _, n in rank_tensors(m, tp, pp, stage)) - sum(layers)
    return ([rest] if rest else []) + layers


def linear_stack_tensors(width: int, layers: int) -> list[tuple[str, int]]:
    """A stack of `layers` square Linear(width, width) layers with bias: a plain MLP replica
    under DDP, or one pipeline stage's share of such a stack."""
    return [
        (f"{i}.{kind}", n) for i in range(layers) for kind, n in (("weight", width * width), ("bias", width))
    ]


def tp_mlp_tensors(width: int, ffn_shard: int, blocks: int) -> list[tuple[str, int]]:
    """Megatron MLP blocks on one tensor-parallel rank: a column-parallel (ffn_shard x width)
    weight with its bias shard, then a row-parallel (width x ffn_shard) weight whose bias is
    replicated (it is added once, after the all-reduce)."""
    out: list[tuple[str, int]] = []
    for i in range(blocks):
        out += [
            (f"{i}.w1", ffn_shard * width),
            (f"{i}.b1", ffn_shard),
            (f"{i}.w2", width * ffn_shard),
            (f"{i}.b2", width),
        ]
    return out


def shape_problem(m: ModelShape) -> Optional[str]:
    """Why this shape is not a transformer the planner can reason about, or None."""
    if m.head_dim < 1 or m.heads * m.head_dim < 1:
        return f"{m.heads} heads of hidden size {m.hidden} leave no head dimension"
    if m.kv_heads < 1 or m.heads % m.kv_heads:
        return f"{m.heads} attention heads are not a multiple of {m.kv_heads} key/value heads"
    return None


def check_divisible(m: ModelShape, tp: int, pp: int) -> Optional[str]:
    """Why (tp, pp) cannot shard this model, or None."""
    if m.heads % tp or m.kv_heads % tp:
        return f"{m.heads} attention heads ({m.kv_heads} key/value) are not divisible by tp={tp}"
    if m.ffn_hidden % tp:
        return f"MLP width {m.ffn_hidden} is not divisible by tp={tp}"
    if pp > m.layers:
        return f"pp={pp} is more stages than the {m.layers} layers"
    return None


# Shapes of well-known models (GPT-3 paper table 2.1, LLaMA/Llama-2/3 model cards), used when
# only a parameter count is given: the count is kept exact, the shape only spreads it over
# layers for activations and tensor-parallel traffic.
_KNOWN: tuple[tuple[float, int, int, int, int, int], ...] = (
    # params, layers, hidden, heads, kv_heads, MLP width (0: LLaMA's rule)
    (125e6, 12, 768, 12, 12, 0),
    (350e6, 24, 1024, 16, 16, 0),
    (760e6, 24, 1536, 16, 16, 0),
    (1.3e9, 24, 2048, 16, 16, 0),
    (2.7e9, 32, 2560, 32, 32, 0),
    (7e9, 32, 4096, 32, 32, 11008),
    (13e9, 40, 5120, 40, 40, 13824),
    (34e9, 48, 8192, 64, 8, 22016),
    (70e9, 80, 8192, 64, 8, 28672),
    (175e9, 96, 12288, 96, 96, 0),
    (405e9, 126, 16384, 128, 8, 53248),
)


def _llama_ffn(hidden: int) -> int:
    # LLaMA's rule: 2/3 of 4h, rounded up to a multiple of 256 (4096 -> 11008).
    return 256 * _ceil_div(int(2 * 4 * hidden / 3), 256)


def shape_from_params(params: int, **overrides: Any) -> ModelShape:
    """A LLaMA-style shape (SwiGLU, RMSNorm, no biases, untied, 32000 vocabulary) of the known
    model nearest in size; keyword overrides (layers, hidden, heads, vocab, ...) win."""
    nearest = min(_KNOWN, key=lambda k: abs(math.log(k[0] / params)))
    _, layers, hidden, heads, kv, ffn = nearest
    hidden = overrides.pop("hidden", None) or hidden
    heads = overrides.pop("heads", None) or (heads if hidden == nearest[2] else max(1, hidden // 128))
    if hidden % heads:
        raise ValueError(f"hidden size {hidden} is not divisible by {heads} heads")
    kv = overrides.pop("kv_heads", None) or (kv if heads == nearest[3] else heads)
    shape = ModelShape(
        name="--params",
        layers=overrides.pop("layers", None) or layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv,
        head_dim=hidden // heads,
        ffn_hidden=overrides.pop("ffn_hidden", None)
        or (ffn if ffn and hidden == nearest[2] else _llama_ffn(hidden)),
        vocab=overrides.pop("vocab", None) or 32000,
        params_given=params,
    )
    shape = replace(shape, **{k: v for k, v in overrides.items() if v is not None})
    note = (
        f"shape {shape.layers} layers x {shape.hidden} hidden, {shape.heads} heads, vocabulary {shape.vocab} "
        f"(LLaMA-style, nearest known size; {shape.shape_params / 1e9:.3g}B by shape, "
        f"{params / 1e9:.3g}B used)"
    )
    return replace(shape, shape_note=note)


def override_shape(
    shape: ModelShape,
    layers: Optional[int] = None,
    hidden: Optional[int] = None,
    heads: Optional[int] = None,
    vocab: Optional[int] = None,
) -> ModelShape:
    """The shape with the user's --layers/--hidden/--heads/--vocab; head size follows."""
    if layers and shape.decoder_layers:
        raise ValueError(
            "--layers on an encoder-decoder: set num_layers / num_decoder_layers in its config.json"
        )
    new_heads = heads or shape.heads
    new_hidden = hidden or shape.hidden
    if (new_hidden, new_heads) != (shape.hidden, shape.heads) and new_hidden % new_heads:
        raise ValueError(f"hidden size {new_hidden} is not divisible by {new_heads} heads")
    return replace(
        shape,
        layers=layers or shape.layers,
        hidden=new_hidden,
        heads=new_heads,
        vocab=vocab or shape.vocab,
        kv_heads=shape.kv_heads if new_heads == shape.heads else new_heads,
        head_dim=shape.head_dim
        if (new_hidden, new_heads) == (shape.hidden, shape.heads)
        else new_hidden // new_heads,
    )


class ConfigFormatError(ValueError):
    pass


def _get(cfg: Mapping[str, Any], *names: str, default: Any = None) -> Any:
    for n in names:
        if cfg.get(n) is not None:
            return cfg[n]
    return default


def _need_int(cfg: Mapping[str, Any], *names: str) -> int:
    v = _get(cfg, *names)
    if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
        raise ConfigFormatError(f"config.json has no positive integer {' / '.join(names)}")
    return v


def _vision_config_problem(cfg: Mapping[str, Any], mtype: str, hidden: int, layers: int, heads: int) -> str:
    """The one-line answer for a vision transformer's config.json (ViT, DeiT, BEiT: patches, no
    vocabulary), which the planner's text-model shapes do not describe: the flags that give an
    estimate, with the count and the sequence worked out from the config, so the user can run it."""
    image, patch = _get(cfg, "image_size"), _get(cfg, "patch_size")
    channels = _get(cfg, "num_channels", default=3)
    ffn = _get(cfg, "intermediate_size", default=4 * hidden)
    ints = all(
        isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (image, patch, channels, ffn)
    )
    if not ints:
        what = "is a vision model (patch_size, no vocab_size): the planner cannot read it"
        return f"model_type {mtype!r} {what}"
    tokens = (image // patch) ** 2 + 1  # the patches and the class token
    # transformers' ViTModel without pooler or head: patch projection (+ bias), class token,
    # positions; per layer q, k, v, o and the two MLP matrices with biases and two LayerNorms;
    # the final LayerNorm.
    embed = channels * patch * patch * hidden + hidden + hidden + tokens * hidden
    layer = 4 * (hidden * hidden + hidden) + 2 * hidden * ffn + ffn + hidden + 4 * hidden
    count = embed + layers * layer + 2 * hidden
    return (
        f"model_type {mtype!r} is a vision transformer (patch_size, no vocab_size), which the planner does "
        f"not read from config.json; for an estimate give its shape: --params {count / 1e6:.1f}M "
        f"--layers {layers} --hidden {hidden} --heads {heads} --vocab {channels * patch * patch} "
        f"--seq-len {tokens} "
        f"(the encoder without its head; the patch projection's inputs as the vocabulary; "
        f"(image_size / patch_size)^2 patches + the class token)"
    )


def shape_from_hf_config(cfg: Mapping[str, Any], name: str = "config.json") -> ModelShape:
    """Shape from a Hugging Face config.json. Exact parameter counts for the LLaMA family
    (llama, mistral, qwen2, qwen3), GPT-2 and GPT-NeoX (they match transformers'
    num_parameters()); other types are read through the same common field names and marked
    approximate (biases and norms may differ)."""
    if not isinstance(cfg, Mapping):
        raise ConfigFormatError("config.json is not a JSON object")
    mtype = str(cfg.get("model_type", ""))
    if mtype in ("t5", "mt5", "bart", "mbart"):
        raise ConfigFormatError(
            f"model_type {mtype!r} is an encoder-decoder: read it with pgdoctor.plan.encdec.shape_from_config"
        )
    experts = _get(cfg, "num_local_experts", "num_experts", "n_routed_experts")
    if isinstance(experts, int) and experts > 1:
        raise ConfigFormatError(
            f"config.json describes a mixture of experts ({experts} experts), which the planner does not "
            f"model; "
            "give --params with the total parameter count and --layers/--hidden/--heads for an estimate"
        )
    hidden = _need_int(cfg, "hidden_size", "n_embd", "d_model")
    layers = _need_int(cfg, "num_hidden_layers", "n_layer", "num_layers")
    heads = _need_int(cfg, "num_attention_heads", "n_head", "num_heads")
    if _get(cfg, "vocab_size") is None and _get(cfg, "patch_size") is not None:
        raise ConfigFormatError(_vision_config_problem(cfg, mtype, hidden, layers, heads))
    vocab = _need_int(cfg, "vocab_size")
    kv = _get(cfg, "num_key_value_heads", "multi_query_group_num", default=heads)
    head_dim = _get(cfg, "head_dim", default=None) or hidden // heads
    ffn = _get(cfg, "intermediate_size", "n_inner", "ffn_dim", "d_ff", default=None) or 4 * hidden
    act = str(_get(cfg, "hidden_act", "activation_function", default="")).lower()
    max_seq = _get(cfg, "max_position_embeddings", "n_positions", "seq_length")
    if mtype == "gpt2":
        shape = ModelShape(
            name=name,
            layers=layers,
            hidden=hidden,
            heads=heads,
            kv_heads=heads,
            head_dim=hidden // heads,
            ffn_hidden=ffn,
            vocab=vocab,
            gated_mlp=False,
            qkv_bias=True,
            out_bias=True,
            mlp_bias=True,
            norm_bias=True,
            tied_embeddings=bool(cfg.get("tie_word_embeddings", True)),
            learned_positions=int(_get(cfg, "n_positions", default=1024)),
            max_seq_len=max_seq,
            dropout=any(float(cfg.get(k, 0.1)) > 0 for k in ("resid_pdrop", "attn_pdrop")),
        )
    elif mtype == "gpt_neox":
        shape = ModelShape(
            name=name,
            layers=layers,
            hidden=hidden,
            heads=heads,
            kv_heads=heads,
            head_dim=hidden // heads,
            ffn_hidden=ffn,
            vocab=vocab,
            gated_mlp=False,
            qkv_bias=True,
            out_bias=True,
            mlp_bias=True,
            norm_bias=True,
            tied_embeddings=bool(cfg.get("tie_word_embeddings", False)),
            max_seq_len=max_seq,
            dropout=any(float(cfg.get(k, 0.0) or 0.0) > 0 for k in ("hidden_dropout", "attention_dropout")),
        )
    else:
        llama_family = mtype in {"llama", "mistral", "qwen2"}
        # Families with a gated MLP (SwiGLU/GeGLU) whatever their hidden_act says.
        gated_family = llama_family or mtype in {
            "qwen3",
            "gemma",
            "gemma2",
            "gemma3_text",
            "phi3",
            "olmo",
            "olmo2",
            "granite",
            "cohere",
            "internlm2",
            "deepseek_v2",
        }
        attn_bias = bool(cfg.get("attention_bias", mtype == "qwen2"))
        shape = ModelShape(
            name=name,
            layers=layers,
            hidden=hidden,
            heads=heads,
            kv_heads=int(kv),
            head_dim=int(head_dim),
            ffn_hidden=ffn,
            vocab=vocab,
            gated_mlp=gated_family or act in {"silu", "swiglu", "geglu", "gelu_glu"},
            qkv_bias=attn_bias,
            out_bias=bool(cfg.get("attention_bias", False)),
            mlp_bias=bool(cfg.get("mlp_bias", False)),
            norm_bias=False,
            tied_embeddings=bool(cfg.get("tie_word_embeddings", False)),
            max_seq_len=max_seq,
            dropout=float(cfg.get("attention_dropout", 0.0) or 0.0) > 0,
            shape_note=""
            if llama_family
            else f"model_type {mtype!r} read as a LLaMA-like model: count approximate",
        )
    if mtype == "qwen3":
        # Qwen3 adds per-head q/k RMSNorm weights (head_dim each) to every layer.
        shape = replace(shape, shape_note="qwen3 q/k norms not counted (2 x head_dim per layer)")
    return shape


def hf_config_from_text(text: str, path: str) -> ModelShape:
    try:
        cfg = jsontext.loads(text)
    except jsontext.JsonInputError as exc:
        raise ConfigFormatError(f"{path} is not JSON: {exc}") from None
    return shape_from_hf_config(cfg, name=path)
