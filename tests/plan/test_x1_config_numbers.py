"""A config.json's numbers are typed and bounded before the planner reads them: a layer count of 10**6
spun for minutes (10**9 ran out of memory), and a string or list where a number belongs was an
internal error (exit 4) from inside the arithmetic. Configs made here; the LLaMA-7B-like base is the
shape of meta-llama/Llama-2-7b-hf's config.json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pgdoctor.plan.config_numbers import check_config_numbers

BASE = {
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "vocab_size": 32000,
    "intermediate_size": 11008,
}


@pytest.mark.parametrize(
    "key, value",
    [
        ("num_hidden_layers", 10**6),
        ("num_hidden_layers", 10**9),
        ("num_local_experts", 10**9),
        ("intermediate_size", "x"),
        ("intermediate_size", [11008, 11008]),
        ("max_position_embeddings", "x"),
        ("num_key_value_heads", [1]),
        ("head_dim", -3),
        ("hidden_size", True),
        ("attention_dropout", [1]),
        ("attention_dropout", 2.5),
    ],
)
def test_a_field_that_is_no_sound_number_is_one_usage_error(tmp_path: Path, key: str, value: Any) -> None:
    cfg = {**BASE, key: value}
    with pytest.raises(ValueError, match=key):
        check_config_numbers(cfg)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    proc = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "plan", "--model", str(path), "--gpu", "h100-sxm"],
        capture_output=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    lines = proc.stderr.decode().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and key in lines[0], lines


def test_real_shapes_and_nulls_pass() -> None:
    check_config_numbers({**BASE, "n_inner": None, "head_dim": None, "attention_dropout": 0.0})
    check_config_numbers({**BASE, "max_position_embeddings": 10_485_760, "num_local_experts": 256})
    check_config_numbers([1, 2])  # not an object: its reader says so
