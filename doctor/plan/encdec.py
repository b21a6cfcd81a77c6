"""Encoder-decoder transformers (T5, mT5, BART) for the planner.

The model is one stack of `layers` = encoder + decoder layers: the first run the encoder, the
last `decoder_layers` the decoder, whose layers add cross-attention (a norm, Q from the decoder,
K and V from the encoder's output, an output projection). Pipeline stages split the whole stack
evenly, as Megatron-LM's T5 does with a split rank; stage 0 holds the shared embedding, the stage
of the first decoder layer the decoder's own embedding extras (and a copy of the shared word
embedding when it is not stage 0), the last stage the output layer.

The tensors (cross-attention, the per-stack extras) are listed by pgdoctor.plan.model.
Parameter counts equal transformers' `num_parameters()` (tests/plan/test_plan_encdec.py):
  T5 (model_type t5, mt5): shared embedding vocab x d_model (tied to the output in T5 v1.0,
    untied in v1.1 and mT5), per layer q, k, v, o of d_model x (num_heads x d_kv) without bias,
    RMS-style norms without bias, a ReLU (wi, wo) or gated-GeLU (wi_0, wi_1, wo) MLP of width
    d_ff; a relative position bias (relative_attention_num_buckets x num_heads) in each stack's
    first layer; a final norm per stack. t5-small 60,506,624; t5-base 222,903,552; t5-large
    737,668,096.
  BART (model_type bart): tied embedding, learned positions of max_position_embeddings + 2 rows
    per stack (BartLearnedPositionalEmbedding's offset), a LayerNorm after each stack's
    embeddings (layernorm_embedding), biases on every projection and norm, GeLU MLP of
    encoder_ffn_dim, no final norm (mBART's add_final_layer_norm adds one). bart-base
    139,420,416.

Activations: a decoder layer keeps what a decoder-only layer keeps plus its cross-attention's
(the norm's input 2, Q, K, V, the projection's input and the dropout mask, counted as the
self-attention's; the K/V projections' input is the encoder output, kept once for all layers and
not counted per layer). Source and target sequences are both `--seq-len` tokens. Tensor
parallelism splits cross-attention like self-attention: one more all-reduce per decoder layer
forward and one backward.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pgdoctor.model import jsontext
from pgdoctor.plan.model import (
    ConfigFormatError,
    ModelShape,
    _get,
    _need_int,
    shape_from_hf_config,
    stage_layers,
)

ENCODER_DECODER = ("t5", "mt5", "bart", "mbart")


def decoder_layers_on_stage(m: ModelShape, pp: int, stage: int) -> int:
    layers = stage_layers(m.layers, pp)
    first = sum(layers[:stage])
    enc = m.layers - m.decoder_layers
    return max(0, first + layers[stage] - max(first, enc)) if m.decoder_layers else 0


def cross_factor(m: ModelShape, coeff: float) -> float:
    """A decoder layer's activations relative to a layer without cross-attention, whose
    coefficient (bytes per s*b*h) is `coeff`."""
    h = m.hidden
    cross = 2 + 2 * m.qkv_out / h + 2 * m.heads * m.head_dim / h + (1.0 if m.dropout else 0.0) + 2
    return (coeff + cross) / coeff


def shape_from_encdec_config(cfg: Mapping[str, Any], name: str) -> ModelShape:
    mtype = str(cfg.get("model_type", ""))
    if mtype in ("t5", "mt5"):
        hidden = _need_int(cfg, "d_model")
        enc = _need_int(cfg, "num_layers")
        dec = int(_get(cfg, "num_decoder_layers", default=enc))
        heads = _need_int(cfg, "num_heads")
        proj = str(_get(cfg, "feed_forward_proj", default="relu")).lower()
        shape = ModelShape(
            name=name,
            layers=enc + dec,
            hidden=hidden,
            heads=heads,
            kv_heads=heads,
            head_dim=int(_get(cfg, "d_kv", default=hidden // heads)),
            ffn_hidden=_need_int(cfg, "d_ff"),
            vocab=_need_int(cfg, "vocab_size"),
            gated_mlp=proj.startswith("gated"),
            tied_embeddings=bool(cfg.get("tie_word_embeddings", mtype == "t5")),
            dropout=float(cfg.get("dropout_rate", 0.1) or 0.0) > 0,
            max_seq_len=_get(cfg, "n_positions"),
            decoder_layers=dec,
            relative_buckets=int(_get(cfg, "relative_attention_num_buckets", default=32)),
        )
    else:  # bart, mbart
        hidden = _need_int(cfg, "d_model")
        enc = _need_int(cfg, "encoder_layers")
        dec = _need_int(cfg, "decoder_layers")
        heads = _need_int(cfg, "encoder_attention_heads")
        ffn = _need_int(cfg, "encoder_ffn_dim")
        if (
            _get(cfg, "decoder_attention_heads", default=heads),
            _get(cfg, "decoder_ffn_dim", default=ffn),
        ) != (heads, ffn):
            raise ConfigFormatError(
                "config.json: decoder heads or FFN width differ from the encoder's, which the "
                "planner does not model"
            )
        positions = _need_int(cfg, "max_position_embeddings")
        shape = ModelShape(
            name=name,
            layers=enc + dec,
            hidden=hidden,
            heads=heads,
            kv_heads=heads,
            head_dim=hidden // heads,
            ffn_hidden=ffn,
            vocab=_need_int(cfg, "vocab_size"),
            gated_mlp=False,
            qkv_bias=True,
            out_bias=True,
            mlp_bias=True,
            norm_bias=True,
            tied_embeddings=bool(cfg.get("tie_word_embeddings", True)),
            learned_positions=positions + 2,
            max_seq_len=positions,
            dropout=float(cfg.get("dropout", 0.1) or 0.0) > 0,
            decoder_layers=dec,
            embed_norm=True,
            final_norm=bool(cfg.get("add_final_layer_norm", mtype == "mbart")),
        )
    note = (
        f"encoder-decoder ({mtype}): {enc} encoder + {dec} decoder layers (cross-attention); source and "
        "target sequences both --seq-len tokens"
    )
    return replace(shape, shape_note=note)


def shape_from_config(cfg: Mapping[str, Any], name: str = "config.json") -> ModelShape:
    """Any config.json the planner reads densely: an encoder-decoder here, the rest by
    pgdoctor.plan.model.shape_from_hf_config."""
    if isinstance(cfg, Mapping) and str(cfg.get("model_type", "")) in ENCODER_DECODER:
        return shape_from_encdec_config(cfg, name)
    return shape_from_hf_config(cfg, name)


def config_from_text(text: str, path: str) -> ModelShape:
    try:
        cfg = jsontext.loads(text)
    except jsontext.JsonInputError as exc:
        raise ConfigFormatError(f"{path} is not JSON: {exc}") from None
    return shape_from_config(cfg, name=path)
