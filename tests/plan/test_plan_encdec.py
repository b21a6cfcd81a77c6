"""Encoder-decoder shapes (T5, BART): parameters, activations and communication with the
decoder's cross-attention counted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pgdoctor.cli import main
from pgdoctor.knowledge.interconnects import get
from pgdoctor.plan.comm import Fabric
from pgdoctor.plan.encdec import shape_from_config as shape_from_hf_config
from pgdoctor.plan.layouts import PlanInput, evaluate
from pgdoctor.plan.memory import OPTIMIZERS, PRECISIONS, MemoryInput, stage_memory
from pgdoctor.plan.model import rank_tensors

# The checkpoints' config.json fields (Hugging Face hub: t5-small, t5-base, t5-large,
# facebook/bart-base); other fields keep transformers' defaults.
T5_SMALL = {
    "model_type": "t5",
    "d_model": 512,
    "d_kv": 64,
    "d_ff": 2048,
    "num_layers": 6,
    "num_heads": 8,
    "vocab_size": 32128,
    "feed_forward_proj": "relu",
    "relative_attention_num_buckets": 32,
    "n_positions": 512,
    "dropout_rate": 0.1,
}
T5_BASE = {**T5_SMALL, "d_model": 768, "d_ff": 3072, "num_layers": 12, "num_heads": 12}
T5_LARGE = {**T5_SMALL, "d_model": 1024, "d_ff": 4096, "num_layers": 24, "num_heads": 16}
BART_BASE = {
    "model_type": "bart",
    "d_model": 768,
    "encoder_layers": 6,
    "decoder_layers": 6,
    "encoder_attention_heads": 12,
    "decoder_attention_heads": 12,
    "encoder_ffn_dim": 3072,
    "decoder_ffn_dim": 3072,
    "vocab_size": 50265,
    "max_position_embeddings": 1024,
    "dropout": 0.1,
}


@pytest.mark.parametrize(
    "cfg, published",
    [
        # transformers' model.num_parameters() of the hub checkpoints (the T5 paper rounds them to
        # 60M, 220M, 770M; BART's to 140M). Tolerance: none, the count is exact.
        (T5_SMALL, 60_506_624),
        (T5_BASE, 222_903_552),
        (T5_LARGE, 737_668_096),
        (BART_BASE, 139_420_416),
    ],
)
def test_encoder_decoder_parameter_counts_equal_transformers(cfg: dict[str, Any], published: int) -> None:
    shape = shape_from_hf_config(cfg)
    assert shape.params == published
    assert shape.decoder_layers == cfg.get("num_layers", cfg.get("decoder_layers"))


def test_t5_v1_1_is_gated_and_untied() -> None:
    # google/flan-t5-base: gated-GeLU MLP, untied output layer: 247,577,856 (num_parameters()).
    cfg = {**T5_BASE, "d_ff": 2048, "feed_forward_proj": "gated-gelu", "tie_word_embeddings": False}
    assert shape_from_hf_config(cfg).params == 247_577_856


@pytest.mark.parametrize("pp", [2, 3, 4])
def test_pipeline_stages_hold_every_tensor_plus_the_shared_embedding_copies(pp: int) -> None:
    shape = shape_from_hf_config(T5_SMALL)
    total = sum(n for s in range(pp) for _, n in rank_tensors(shape, 1, pp, s))
    # The decoder's first stage keeps its own copy of the shared embedding, the last stage the
    # tied output layer's (Megatron's shared embeddings).
    assert total == shape.params + 2 * 32128 * 512
    # tp = 2 halves every matrix; norms (and nothing else in T5) are replicated.
    halves = sum(n for _, n in rank_tensors(shape, 2, 1, 0))
    norms = (2 * 6 + 3 * 6 + 2) * 512
    assert halves == (shape.params - norms) // 2 + norms


def _inp(shape: Any, tp: int = 1) -> PlanInput:
    mi = MemoryInput(
        shape=shape,
        precision=PRECISIONS["bf16-mixed"],
        optimizer=OPTIMIZERS["adamw"],
        seq_len=512,
        micro_batch=4,
    )
    return PlanInput(mi, Fabric(8, 1, get("nvlink4"), get("ib-ndr")), 80 * 2**30)


def test_decoder_layers_keep_cross_attention_activations_and_traffic() -> None:
    shape = shape_from_hf_config(T5_SMALL)
    mi = _inp(shape).memory
    enc, dec = (stage_memory(mi, 1, 2, 1, 0, s, 1) for s in (0, 1))
    sbh = 512 * 4 * 512
    # Both stages hold 6 layers; a decoder layer also keeps its cross-attention's 13 sbh: the
    # norm's input 2, Q's input 2, Q 2, K and V 4, the projection's input 2, the dropout mask 1.
    logits = 4 * sbh * (1 + 32128 / 512)
    assert dec.activations - logits - enc.activations == pytest.approx(6 * 2 * 13 * sbh / 2, rel=0.01)
    decoder_only = shape_from_hf_config(
        {
            **T5_SMALL,
            "model_type": "llama",
            "num_hidden_layers": 12,
            "hidden_size": 512,
            "num_attention_heads": 8,
            "intermediate_size": 2048,
        }
    )
    t5 = evaluate(_inp(shape, 2), 4, 2, 1, 0)
    plain = evaluate(_inp(decoder_only, 2), 4, 2, 1, 0)
    # 12 layers of 4 all-reduces, the 6 decoder layers 2 more each for cross-attention.
    assert t5.traffic.tp_s / plain.traffic.tp_s == pytest.approx((12 * 4 + 6 * 2) / (12 * 4))


def test_cli_plans_a_t5_config(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(T5_LARGE))
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "plan",
                "--model",
                str(cfg),
                "--gpu",
                "a100-40g",
                "--gpus-per-node",
                "4",
                "--seq-len",
                "512",
                "--json",
            ]
        )
    data = json.loads(capsys.readouterr().out)
    assert exc.value.code == 0
    assert data["plan"]["model"]["params"] == 737_668_096 and data["plan"]["model"]["decoder_layers"] == 24
    assert any("encoder-decoder (t5): 24 encoder + 24 decoder" in n for n in data["plan"]["notes"])
    with pytest.raises(SystemExit) as exc:
        main(["plan", "--model", str(cfg), "--gpu-memory", "40GiB", "--layers", "12"])
    assert exc.value.code == 2
