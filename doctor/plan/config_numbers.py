"""The numbers of a Hugging Face config.json, typed and bounded in one place before any reader of the
planner (model.py, moe.py, encdec.py) converts them. The planner walks layers and experts one by one:
`"num_hidden_layers": 1000000` spun for minutes and 10**9 ran out of memory, where `--layers` is
bounded to 4096. A string or a list where a number belongs (`"intermediate_size": "x"`, Gemma 3n's
per-layer list) was an internal error from deep inside the arithmetic. A field that is absent or
null stays so: its reader's default applies."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Largest sound value of each kind, as the CLI bounds its own options (cli/plan.py: MAX_LAYERS, MAX_COUNT).
_LAYERS, _EXPERTS, _WIDTH, _POSITIONS = 4096, 4096, 1 << 24, 1 << 31
WHOLE: dict[str, int] = {
    **dict.fromkeys(
        (
            "num_hidden_layers",
            "n_layer",
            "num_layers",
            "num_decoder_layers",
            "encoder_layers",
            "decoder_layers",
            "first_k_dense_replace",
        ),
        _LAYERS,
    ),
    **dict.fromkeys(
        ("num_local_experts", "num_experts", "n_routed_experts", "num_experts_per_tok", "n_shared_experts"),
        _EXPERTS,
    ),
    **dict.fromkeys(
        (
            "hidden_size",
            "n_embd",
            "d_model",
            "num_attention_heads",
            "n_head",
            "num_heads",
            "vocab_size",
            "num_key_value_heads",
            "multi_query_group_num",
            "head_dim",
            "d_kv",
            "intermediate_size",
            "n_inner",
            "ffn_dim",
            "d_ff",
            "moe_intermediate_size",
            "shared_expert_intermediate_size",
            "encoder_attention_heads",
            "decoder_attention_heads",
            "encoder_ffn_dim",
            "decoder_ffn_dim",
            "relative_attention_num_buckets",
        ),
        _WIDTH,
    ),
    **dict.fromkeys(("max_position_embeddings", "n_positions", "seq_length"), _POSITIONS),
}
RATES = ("resid_pdrop", "attn_pdrop", "hidden_dropout", "attention_dropout", "dropout_rate", "dropout")


def check_config_numbers(cfg: Any) -> None:
    """Raises ValueError naming the first field that is not a whole number in its bounds (or, for a
    dropout rate, a number from 0 to 1). Anything but a JSON object is left to the readers."""
    if not isinstance(cfg, Mapping):
        return
    for key, value in cfg.items():  # in the file's order: the first bad field is the one named
        if value is None:
            continue
        if key in WHOLE:
            limit = WHOLE[key]
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"{key} is {_shown(value)}, not a whole number")
            if not 0 <= value <= limit:
                raise ValueError(f"{key} is {_shown(value)}; it must be from 0 to {limit}")
        elif key in RATES and (
            not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 1
        ):
            raise ValueError(f"{key} is {_shown(value)}, not a rate from 0 to 1")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
