"""The planner's figures next to the published ones they are checked against, with the error.

No bar of its own: each row is asserted in tests/plan/test_plan_setups.py (or test_plan.py,
test_plan_encdec.py);
this prints them side by side for the docs and for a reviewer.

Usage: python benchmarks/bench_plan_published.py [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def rows() -> list[dict[str, Any]]:
    from pgdoctor.knowledge.interconnects import get
    from pgdoctor.knowledge.units import GIB
    from pgdoctor.plan.comm import Fabric, bubble_fraction
    from pgdoctor.plan.finetune import FineTune, lora_params, parse_targets, quantized_bytes
    from pgdoctor.plan.layouts import PlanInput, evaluate
    from pgdoctor.plan.memory import OPTIMIZERS, PRECISIONS, MemoryInput, stage_memory
    from pgdoctor.plan.model import ModelShape, shape_from_hf_config, shape_from_params
    from pgdoctor.plan.moe import active_params, moe_from_hf_config, total_params
    from pgdoctor.plan.optim import bnb_8bit_state_bytes

    mixed, adam = PRECISIONS["bf16-mixed"], OPTIMIZERS["adamw"]
    gpt3 = ModelShape("gpt3", 96, 12288, 96, 96, 128, 4 * 12288, 50257, gated_mlp=False)
    out: list[dict[str, Any]] = []

    def add(what: str, source: str, planner: float, published: float, unit: str = "") -> None:
        out.append(
            {
                "what": what,
                "source": source,
                "planner": planner,
                "published": published,
                "unit": unit,
                "error": planner / published - 1 if published else 0.0,
            }
        )

    add(
        "LoRA GPT-3 175B r=4 W_q,W_v", "Hu et al. 2021, Table 5 (18M)", lora_params(gpt3, 4, ("q", "v")), 18e6
    )
    add(
        "LoRA GPT-3 175B r=1 W_q,W_v",
        "Hu et al. 2021, Table 4 (4.7M)",
        lora_params(gpt3, 1, ("q", "v")),
        4.7e6,
    )
    add(
        "LoRA GPT-3 175B r=8 W_q,W_v",
        "Hu et al. 2021, Table 4 (37.7M)",
        lora_params(gpt3, 8, ("q", "v")),
        37.7e6,
    )
    n = 64 * 256 * 1000
    add(
        "NF4 + double quantization",
        "Dettmers et al. 2023, section 3",
        quantized_bytes("nf4", n, 1) * 8 / n,
        4.127,
        "bits/param",
    )
    llama65 = shape_from_hf_config(
        {
            "model_type": "llama",
            "hidden_size": 8192,
            "num_hidden_layers": 80,
            "num_attention_heads": 64,
            "intermediate_size": 22016,
            "vocab_size": 32000,
        }
    )
    qlora = FineTune(lora_rank=64, lora_targets=parse_targets("all"), base_weights="nf4")
    mem = stage_memory(
        MemoryInput(llama65, PRECISIONS["bf16-pure"], adam, 512, 1, recompute="full", finetune=qlora),
        1,
        1,
        1,
        0,
        0,
        1,
    )
    add(
        "QLoRA LLaMA-65B on one GPU (bound: < 48 GB)",
        "Dettmers et al. 2023, abstract",
        mem.total / 1e9,
        48.0,
        "GB",
    )
    n = 4096 * 11008
    add("8-bit Adam state vs Adam", "bitsandbytes (75% less)", 1 - bnb_8bit_state_bytes(n) / (8 * n), 0.75)
    for offload, published in (("optimizer+params", 1.52), ("optimizer", 1.35)):
        mi = MemoryInput(shape_from_params(60_506_624), mixed, adam, 512, 1, offload=offload)
        lay = evaluate(PlanInput(mi, Fabric(1, 1, get("nvlink4"), get("ib-ndr")), 80 * GIB), 1, 1, 1, 3)
        add(
            f"t5-small host memory, offload {offload}",
            "DeepSpeed estimate_zero3 printout",
            lay.host_node_bytes / GIB,
            published,
            "GiB",
        )
    mixtral = {
        "model_type": "mixtral",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_attention_heads": 32,
        "num_experts_per_tok": 2,
        "num_hidden_layers": 32,
        "num_key_value_heads": 8,
        "num_local_experts": 8,
        "vocab_size": 32000,
        "hidden_act": "silu",
    }
    shape, moe = moe_from_hf_config(mixtral)
    add("Mixtral-8x7B parameters", "transformers num_parameters()", total_params(shape, moe), 46_702_792_704)
    add("Mixtral-8x7B active parameters", "Mistral AI (12.9B)", active_params(shape, moe), 12.9e9)
    from pgdoctor.plan.encdec import shape_from_config

    t5 = {
        "model_type": "t5",
        "d_model": 512,
        "d_kv": 64,
        "d_ff": 2048,
        "num_layers": 6,
        "num_heads": 8,
        "vocab_size": 32128,
    }
    for name, cfg, published in (
        ("t5-small", t5, 60_506_624),
        ("t5-base", {**t5, "d_model": 768, "d_ff": 3072, "num_layers": 12, "num_heads": 12}, 222_903_552),
        ("t5-large", {**t5, "d_model": 1024, "d_ff": 4096, "num_layers": 24, "num_heads": 16}, 737_668_096),
        (
            "bart-base",
            {
                "model_type": "bart",
                "d_model": 768,
                "encoder_layers": 6,
                "decoder_layers": 6,
                "encoder_attention_heads": 12,
                "encoder_ffn_dim": 3072,
                "vocab_size": 50265,
                "max_position_embeddings": 1024,
            },
            139_420_416,
        ),
    ):
        add(f"{name} parameters", "transformers num_parameters()", shape_from_config(cfg).params, published)
    b = bubble_fraction(8, 64, "interleaved", 2)
    add("interleaved bubble p=8 m=64 v=2", "Narayanan et al. 2021, (p-1)/(v m)", b / (1 - b), 7 / 128)
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    table = rows()
    if args.json:
        print(json.dumps(table, indent=1))
        return 0
    for r in table:
        print(
            f"{r['what']:<46} planner {r['planner']:>16.6g} {r['unit']:<10} published "
            f"{r['published']:>16.6g}  "
            f"error {r['error']:+.2%}  ({r['source']})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
