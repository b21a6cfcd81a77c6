"""`pgdoctor plan` on the published config.json of public models (Llama-2 7B/13B/70B, Mixtral-8x7B,
Flan-T5-XL, ViT), against counts and bytes worked out by hand here, formula by formula."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pgdoctor.cli import main
from pgdoctor.plan.encdec import shape_from_config
from pgdoctor.plan.model import shape_from_hf_config
from pgdoctor.plan.moe import active_params, moe_from_hf_config, total_params

# The fields of each checkpoint's config.json on the Hugging Face hub (meta-llama/Llama-2-*-hf,
# mistralai/Mixtral-8x7B-v0.1, google/flan-t5-xl, google/vit-base-patch16-224).
LLAMA2 = {"model_type": "llama", "vocab_size": 32000, "hidden_act": "silu", "tie_word_embeddings": False}
LLAMA2_7B = {**LLAMA2, "hidden_size": 4096, "intermediate_size": 11008, "num_attention_heads": 32,
             "num_hidden_layers": 32, "num_key_value_heads": 32, "max_position_embeddings": 4096}  # fmt: skip
LLAMA2_13B = {**LLAMA2_7B, "hidden_size": 5120, "intermediate_size": 13824, "num_attention_heads": 40,
              "num_hidden_layers": 40, "num_key_value_heads": 40}  # fmt: skip
LLAMA2_70B = {**LLAMA2_7B, "hidden_size": 8192, "intermediate_size": 28672, "num_attention_heads": 64,
              "num_hidden_layers": 80, "num_key_value_heads": 8}  # fmt: skip
MIXTRAL = {**LLAMA2_7B, "model_type": "mixtral", "intermediate_size": 14336, "num_key_value_heads": 8,
           "num_local_experts": 8, "num_experts_per_tok": 2, "max_position_embeddings": 32768}  # fmt: skip
FLAN_T5_XL = {"model_type": "t5", "d_model": 2048, "d_kv": 64, "d_ff": 5120, "num_layers": 24,
              "num_decoder_layers": 24, "num_heads": 32, "vocab_size": 32128,
              "feed_forward_proj": "gated-gelu", "relative_attention_num_buckets": 32,
              "tie_word_embeddings": False, "dropout_rate": 0.1}  # fmt: skip
VIT_BASE = {"model_type": "vit", "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
            "intermediate_size": 3072, "image_size": 224, "patch_size": 16, "num_channels": 3,
            "qkv_bias": True}  # fmt: skip


def llama_by_hand(h: int, f: int, layers: int, heads: int, kv: int, vocab: int) -> int:
    """Embedding + per layer (q, o: h x h; k, v: h x kv*d; gate, up, down: h x f; 2 RMSNorms) +
    final RMSNorm + untied lm_head."""
    d = h // heads
    layer = 2 * h * h + 2 * h * kv * d + 3 * h * f + 2 * h
    return vocab * h + layers * layer + h + vocab * h


@pytest.mark.parametrize(
    ("cfg", "published"),
    [(LLAMA2_7B, 6_738_415_616), (LLAMA2_13B, 13_015_864_320), (LLAMA2_70B, 68_976_648_192)],
)
def test_llama2_counts_are_the_hand_count_and_the_published_one(cfg: dict[str, Any], published: int) -> None:
    by_hand = llama_by_hand(
        cfg["hidden_size"],
        cfg["intermediate_size"],
        cfg["num_hidden_layers"],
        cfg["num_attention_heads"],
        cfg["num_key_value_heads"],
        cfg["vocab_size"],
    )
    assert by_hand == published
    assert shape_from_hf_config(cfg).params == published


def test_mixtral_total_and_active_by_hand() -> None:
    shape, moe = moe_from_hf_config(MIXTRAL)
    h, f, layers, vocab = 4096, 14336, 32, 32000
    attn = 2 * h * h + 2 * h * 8 * 128
    expert = 3 * h * f
    router = 8 * h
    base = 2 * vocab * h + h + layers * (attn + router + 2 * h)
    assert total_params(shape, moe) == base + layers * 8 * expert == 46_702_792_704
    assert active_params(shape, moe) == base + layers * 2 * expert == 12_879_925_248


def test_flan_t5_xl_by_hand() -> None:
    d, ff, inner, layers, vocab, heads = 2048, 5120, 32 * 64, 24, 32128, 32
    attn = 4 * d * inner
    mlp = 3 * d * ff  # gated-gelu: wi_0, wi_1, wo
    enc = layers * (attn + mlp + 2 * d) + d + 32 * heads  # + final norm + relative bias
    dec = layers * (2 * attn + mlp + 3 * d) + d + 32 * heads
    by_hand = vocab * d + enc + dec + vocab * d  # shared embedding + untied lm_head
    assert by_hand == 2_849_757_184
    assert shape_from_config(FLAN_T5_XL).params == by_hand


def _plan(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(["plan", *args])
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


def test_llama2_7b_ddp_bytes_per_gpu_by_hand(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(LLAMA2_7B))
    code, out, _ = _plan(
        ["--model", str(cfg), "--gpus-per-node", "8", "--gpu-memory", "80GiB", "--seq-len", "4096",
         "--micro-batch", "1", "--tp", "1", "--pp", "1", "--zero", "0", "--recompute", "none", "--json"],
        capsys,
    )  # fmt: skip
    mem = json.loads(out)["plan"]["layouts"][0]["memory"]
    p, s, h, layers, vocab = 6_738_415_616, 4096, 4096, 32, 32000
    assert (mem["params"], mem["grads"], mem["master"]) == (2 * p, 2 * p, 4 * p)
    assert mem["optimizer"] == 8 * p + 4 * mem["param_tensors"]  # Adam's two moments + a step per tensor
    assert mem["buffers"] == 2 * p  # DDP's bucket copy of the bf16 gradients
    # Per layer 37.5 sbh bytes (norm inputs 2+2, QKV input 2, Q K V 6, attention out 2, MLP input 2,
    # SwiGLU 8f/h = 21.5), plus the last stage's logits 4sbh(1 + v/h).
    assert mem["activations"] == layers * 37.5 * s * h + 4 * s * h * (1 + vocab / h)
    assert code == 1  # 134 GiB per GPU: PLAN101


def test_nothing_fits_speaks_of_states_per_gpu_not_per_parameter(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """ZeRO-3 shards the states, MoE splits the parameters: states / numel is no bytes-per-parameter
    figure (it read "69B parameters at 2 B of states each" for 70B, "1.6B parameters" for Mixtral,
    whose shape counts the dense part only)."""
    for cfg, count in ((LLAMA2_70B, "69B"), (MIXTRAL, "46.7B")):
        path = tmp_path / "config.json"
        path.write_text(json.dumps(cfg))
        code, out, _ = _plan(
            ["--model", str(path), "--gpus-per-node", "8", "--gpu-memory", "80GiB", "--seq-len", "512",
             "--micro-batch", "1", "--tp", "1", "--pp", "1", "--zero", "3", "--recompute", "none"],
            capsys,
        )  # fmt: skip
        line = next(x for x in out.splitlines() if x.startswith("Nothing fits"))
        assert line.startswith(f"Nothing fits 8 x 80.0 GiB: {count} parameters need ")
        assert "per GPU for their model states alone" in line and "B of states each" not in line
        assert code == 1


def test_a_vit_config_is_one_line_with_flags_that_plan_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(VIT_BASE))
    code, out, err = _plan(["--model", str(cfg), "--gpu", "h100-sxm"], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    # ViTModel without pooler: patch projection 3*16*16*768 + 768, class token 768, 197 positions x 768;
    # per layer 4(h^2 + h) + 2 h f + f + h + 4h; final LayerNorm 2h.
    h, f = 768, 3072
    by_hand = 3 * 16 * 16 * h + h + h + 197 * h + 12 * (4 * (h * h + h) + 2 * h * f + f + h + 4 * h) + 2 * h
    assert by_hand == 85_798_656
    flags = err.split("give its shape: ")[1].split(" (")[0].split()
    assert flags == ["--params", "85.8M", "--layers", "12", "--hidden", "768", "--heads", "12", "--vocab",
                     "768", "--seq-len", "197"]  # fmt: skip
    code, out, _ = _plan([*flags, "--gpu", "h100-sxm", "--gpus-per-node", "1", "--json"], capsys)
    assert code == 0
    model = json.loads(out)["plan"]["model"]
    assert model["params"] == 85_800_000 and abs(model["shape_params"] / by_hand - 1) < 0.01
