"""`pgdoctor plan` for fine-tuning, offload, the recomputation/micro-batch search, optimizers,
GPU presets and the recommendation's paragraph; each figure checked against its published source."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pgdoctor.cli import main
from pgdoctor.knowledge.gpus import GPUS
from pgdoctor.knowledge.interconnects import get
from pgdoctor.knowledge.units import GIB
from pgdoctor.plan.comm import Fabric
from pgdoctor.plan.finetune import FineTune, lora_params, parse_targets, quantized_bytes
from pgdoctor.plan.layouts import PlanInput, evaluate, plan
from pgdoctor.plan.memory import OPTIMIZERS, PRECISIONS, MemoryInput, stage_memory, state_bytes
from pgdoctor.plan.model import ModelShape, shape_from_hf_config, shape_from_params
from pgdoctor.plan.offload import HOST_BUFFER_FACTOR, offload_states
from pgdoctor.plan.optim import bnb_8bit_state_bytes

MIXED, ADAM = PRECISIONS["bf16-mixed"], OPTIMIZERS["adamw"]


def run_plan(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    with pytest.raises(SystemExit) as exc:
        main(["plan", *args, "--json"])
    out = capsys.readouterr().out
    return int(exc.value.code or 0), json.loads(out) if out.strip() else {}


def gpt3_175b() -> ModelShape:
    return ModelShape("gpt3", 96, 12288, 96, 96, 128, 4 * 12288, 50257, gated_mlp=False)


def llama_65b() -> ModelShape:
    return shape_from_hf_config(
        {
            "model_type": "llama",
            "hidden_size": 8192,
            "num_hidden_layers": 80,
            "num_attention_heads": 64,
            "intermediate_size": 22016,
            "vocab_size": 32000,
        }
    )


# --- fine-tuning: LoRA, QLoRA, frozen parameters ----------------------------------------


def test_lora_counts_are_the_lora_papers_gpt3_figures() -> None:
    """Hu et al. 2021: GPT-3 175B with adapters on W_q and W_v; r=4 is Table 5's "18M", r=1 and
    r=8 Table 4's 4.7M and 37.7M."""
    shape = gpt3_175b()
    assert lora_params(shape, 4, ("q", "v")) == 18_874_368
    assert lora_params(shape, 1, ("q", "v")) == pytest.approx(4.7e6, rel=0.005)
    assert lora_params(shape, 8, ("q", "v")) == 37_748_736  # "37.7M"
    assert parse_targets("attn,mlp") == ("q", "k", "v", "o", "gate", "up", "down")
    with pytest.raises(ValueError):
        parse_targets("q,banana")


def test_nf4_with_double_quantization_is_the_qlora_papers_4_127_bits() -> None:
    """Dettmers et al. 2023, section 3: 4 + 8/64 + 32/(64 x 256) = 4.127 bits per parameter."""
    n = 64 * 256 * 1000
    assert quantized_bytes("nf4", n, 1) * 8 / n == pytest.approx(4.127, abs=5e-4)
    assert quantized_bytes("int8", 4096 * 4096, 4096) == 4096 * 4096 + 4 * 4096  # LLM.int8: fp32 row scales


def test_qlora_fine_tunes_llama_65b_on_one_48gb_gpu() -> None:
    """QLoRA's headline: 65B fine-tuned on a single 48 GB GPU (r=64 on every linear layer, NF4
    base, gradient checkpointing, adapters trained in bf16 as qlora.py casts them); 16-bit full
    fine-tuning needs more than 780 GB."""
    shape = llama_65b()
    assert shape.params == pytest.approx(65.3e9, rel=0.01)
    qlora = FineTune(lora_rank=64, lora_targets=parse_targets("all"), base_weights="nf4")
    mi = MemoryInput(
        shape, PRECISIONS["bf16-pure"], ADAM, seq_len=512, micro_batch=1, recompute="full", finetune=qlora
    )
    mem = stage_memory(mi, 1, 1, 1, 0, 0, 1)
    assert mem.total < 48e9
    base = mem.states.params - 2 * mem.trained
    # 4.127 bits for the layers' linear weights, 16 bits for embeddings, output layer and norms.
    linear = shape.layers * (shape.layer_params() - 2 * shape.hidden)
    assert base == pytest.approx(linear * 4.127 / 8 + 2 * (shape.params - linear), rel=1e-3)
    full = stage_memory(MemoryInput(shape, MIXED, ADAM, seq_len=512, micro_batch=1), 1, 1, 1, 0, 0, 1)
    assert full.states.total > 780e9


def test_frozen_parameters_have_no_gradients_or_optimizer_state() -> None:
    shape = shape_from_params(7_000_000_000)
    mi = MemoryInput(
        shape, MIXED, ADAM, seq_len=2048, micro_batch=1, finetune=FineTune(trainable_fraction=0.005)
    )
    mem = stage_memory(mi, 1, 1, 1, 0, 0, 1)
    trained = round(7e9 * 0.005)
    assert mem.trained == pytest.approx(trained, rel=1e-6)
    assert mem.states.params == pytest.approx(2 * 7e9, rel=1e-6)  # every weight is stored
    assert mem.states.grads == pytest.approx(2 * trained, rel=1e-6)
    assert mem.states.master + mem.states.optimizer == pytest.approx(12 * trained, rel=1e-3)


def test_lora_and_frozen_base_match_torch_to_the_byte() -> None:
    """A real frozen transformer (the bytes test's Stage) with trained LoRA A/B tensors: torch's
    parameters, gradients, fp32 master and Adam state equal the planner's."""
    import torch

    from pgdoctor.plan.finetune import lora_layer_tensors
    from tests.plan.test_plan_bytes import Stage, _nbytes

    torch.manual_seed(0)
    shape = shape_from_hf_config(
        {
            "model_type": "llama",
            "hidden_size": 64,
            "num_hidden_layers": 3,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "intermediate_size": 96,
            "vocab_size": 101,
        }
    )
    for precision in ("fp32", "bf16-mixed"):
        dtype = torch.float32 if precision == "fp32" else torch.bfloat16
        for targets in (("q", "v"), parse_targets("attn,mlp")):
            base = Stage(shape, 1, 0, 1, 0).to(dtype).requires_grad_(False)
            dims = {
                "q": (64, 64),
                "k": (64, 32),
                "v": (64, 32),
                "o": (64, 64),
                "gate": (64, 96),
                "up": (64, 96),
                "down": (96, 64),
            }
            adapters = []
            for _ in range(shape.layers):
                for t in targets:
                    d_in, d_out = dims[t]
                    adapters += [
                        torch.nn.Parameter(torch.randn(8, d_in, dtype=dtype) * 0.01),
                        torch.nn.Parameter(torch.zeros(d_out, 8, dtype=dtype)),
                    ]
            master = (
                [p.detach().float().clone().requires_grad_() for p in adapters]
                if dtype != torch.float32
                else None
            )
            opt = torch.optim.AdamW(master if master is not None else adapters, lr=1e-3)
            for _ in range(2):
                out = base(torch.randint(0, shape.vocab, (2, 8))).float().square().mean()
                for a, b in zip(adapters[::2], adapters[1::2]):
                    out = out + (torch.ones(1, a.shape[1], dtype=dtype) @ a.T @ b.T).float().sum()
                out.backward()
                if master is not None:
                    for m, p in zip(master, adapters):
                        m.grad = p.grad.float()
                opt.step()
            state = [t for st in opt.state.values() for t in st.values() if isinstance(t, torch.Tensor)]
            actual = (
                _nbytes(list(base.parameters()) + adapters),
                _nbytes(p.grad for p in adapters),
                _nbytes(master or []),
                _nbytes(state),
            )
            assert all(p.grad is None for p in base.parameters())
            ft = FineTune(lora_rank=8, lora_targets=targets)
            mem = stage_memory(
                MemoryInput(shape, PRECISIONS[precision], ADAM, 8, 2, finetune=ft), 1, 1, 1, 0, 0, 1
            )
            assert len(lora_layer_tensors(shape, 8, targets)) * shape.layers == len(adapters)
            assert (mem.states.params, mem.states.grads, mem.states.master, mem.states.optimizer) == actual, (
                precision,
                targets,
            )


# --- optimizers ---------------------------------------------------------------------------


def test_8bit_adam_keeps_2_bytes_and_block_constants_as_bitsandbytes_allocates() -> None:
    """bitsandbytes Optimizer2State.init_state: uint8 state1/state2, fp32 absmax per 256-element
    block, 32-bit state under 4096 elements; "75% less" optimizer memory than Adam's 8 B."""
    n = 4096 * 11008
    assert bnb_8bit_state_bytes(n) == 2 * n + 8 * (n // 256)
    assert bnb_8bit_state_bytes(4095) == 8 * 4095
    assert 1 - bnb_8bit_state_bytes(n) / (8 * n) == pytest.approx(0.75, abs=0.005)
    dims = [(11008, 4096), (4000, 1)]  # a norm of 4000 elements stays 32-bit
    st = state_bytes(11008 * 4096 + 4000, 2, MIXED, OPTIMIZERS["adamw8bit"], dims=dims)
    assert st.optimizer == bnb_8bit_state_bytes(11008 * 4096) + 8 * 4000


def test_adafactor_and_pure_bf16_adam_match_torch_to_the_byte() -> None:
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(48, 80), torch.nn.GELU(), torch.nn.Linear(80, 48))
    params = list(model.parameters())
    dims = [(80, 48), (80, 1), (48, 80), (48, 1)]
    numel = sum(p.numel() for p in params)
    for name, dtype, precision in (
        ("adafactor", torch.float32, "fp32"),
        ("adamw", torch.bfloat16, "bf16-pure"),
    ):
        m = model.to(dtype)
        opt = (
            torch.optim.Adafactor(m.parameters(), lr=1e-2)
            if name == "adafactor"
            else torch.optim.AdamW(m.parameters(), lr=1e-3)
        )
        m(torch.randn(4, 48, dtype=dtype)).float().square().mean().backward()
        opt.step()
        actual = sum(
            t.numel() * t.element_size()
            for st in opt.state.values()
            for t in st.values()
            if isinstance(t, torch.Tensor)
        )
        assert (
            state_bytes(numel, 4, PRECISIONS[precision], OPTIMIZERS[name], dims=dims).optimizer == actual
        ), name
    assert state_bytes(10**6, 0, PRECISIONS["bf16-pure"], ADAM).total == 8 * 10**6  # 2 + 2 + 0 + 4


def test_console_prints_the_bytes_per_parameter_convention(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["plan", "--params", "1.3B", "--gpus-per-node", "8", "--gpu-memory", "80GiB"])
    out = capsys.readouterr().out
    assert (
        "B/param: 2 weights + 2 grads + 4 fp32 master + 8 optimizer (adamw) = 16 B per trained parameter"
        in out
    )
    assert "18 with fp32 gradients" in out
    with pytest.raises(SystemExit):
        main(
            [
                "plan",
                "--params",
                "1.3B",
                "--gpus-per-node",
                "8",
                "--gpu-memory",
                "80GiB",
                "--precision",
                "bf16-mixed-fp32-grads",
            ]
        )
    assert "2 weights + 4 grads + 4 fp32 master + 8 optimizer (adamw) = 18 B" in capsys.readouterr().out


# --- offload ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params, offload, deepspeed_gib",
    [
        # DeepSpeed's estimate_zero3_model_states_mem_needs_all_live printout for t5-small (60.5M
        # parameters), 1 node x 1 GPU, zero_init=1: per-CPU "1.52GB" and "1.35GB" (GiB).
        (60_506_624, "optimizer+params", 1.52),  # t5-small
        (60_506_624, "optimizer", 1.35),
    ],
)
def test_offload_host_memory_is_deepspeeds_estimate(params: int, offload: str, deepspeed_gib: float) -> None:
    shape = shape_from_params(params)
    mi = MemoryInput(shape, MIXED, ADAM, seq_len=512, micro_batch=1, offload=offload)
    lay = evaluate(PlanInput(mi, Fabric(1, 1, get("nvlink4"), get("ib-ndr")), 80 * GIB), 1, 1, 1, 3)
    assert lay.host_node_bytes / GIB == pytest.approx(deepspeed_gib, abs=0.01)
    # On the GPU, the 16-bit parameters stay without parameter offload: DeepSpeed's 2 x params.
    assert lay.memory.states.params == (
        0 if offload == "optimizer+params" else pytest.approx(2 * params, rel=1e-6)
    )
    assert lay.memory.states.grads == lay.memory.states.master == lay.memory.states.optimizer == 0
    assert HOST_BUFFER_FACTOR == 1.5


def test_offload_moves_gradients_and_parameters_over_pcie(capsys: pytest.CaptureFixture[str]) -> None:
    rc, data = run_plan(
        capsys,
        "--params",
        "7B",
        "--gpus-per-node",
        "8",
        "--gpu-memory",
        "80GiB",
        "--seq-len",
        "4096",
        "--offload",
        "optimizer",
        "--host-memory",
        "512GiB",
        "--zero",
        "2",
    )
    best = data["plan"]["recommended"]
    # 7B / 8 ranks: 875M parameters each; gradients down (2 B), parameters up (2 B): 3.5 GB at pcie5 48 GB/s.
    # Plus the host's optimizer step: 8 x 875M parameters at the assumed 1e9 parameters/s per node (CPU-Adam).
    assert best["offload_cpu_step_s"] == pytest.approx(7e9 / 1e9, rel=1e-3)
    assert best["offload_s"] == pytest.approx(7e9 / 8 * 4 / 48e9 + 7.0, rel=1e-3)
    assert best["host_node_bytes"] == pytest.approx(7e9 * 16 * 1.5, rel=1e-4)
    assert offload_states(10, 20, 40, 80, 2, "optimizer") == (10, 40 + 80 + 4 * 10)
    rc, data = run_plan(
        capsys,
        "--params",
        "7B",
        "--gpus-per-node",
        "8",
        "--gpu-memory",
        "80GiB",
        "--seq-len",
        "4096",
        "--offload",
        "optimizer",
        "--host-memory",
        "128GiB",
    )
    assert rc == 1 and "PLAN106" in {f["code"] for f in data["findings"]}


# --- search over recomputation and micro-batch --------------------------------------------


def test_search_weighs_recomputation_and_micro_batch_from_the_global_batch(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _rc, data = run_plan(
        capsys,
        "--params",
        "70B",
        "--gpus-per-node",
        "8",
        "--nodes",
        "8",
        "--gpu-memory",
        "80GiB",
        "--seq-len",
        "4096",
        "--global-batch",
        "512",
    )
    lays = data["plan"]["layouts"]
    best = data["plan"]["recommended"]
    assert {lay["recompute"] for lay in lays} == {"none", "selective", "full"}
    assert {lay["micro_batch"] for lay in lays} == {1, 2, 4, 8}
    same = [lay for lay in lays if all(lay[k] == best[k] for k in ("dp", "tp", "pp", "zero"))]
    assert len(same) == 12  # 3 recomputations x 4 micro-batch sizes
    # Gradient accumulation follows from the global batch.
    assert best["micro_batches"] * best["dp"] * best["micro_batch"] == 512
    roomy = [lay for lay in lays if lay["fits"] and not lay["tight"]]
    per_token = min(lay["step_s"] / lay["tokens_per_step"] for lay in roomy)
    assert best["step_s"] / best["tokens_per_step"] <= per_token * 1.01
    assert data["plan"]["why"].startswith(f"Why dp={best['dp']} tp={best['tp']}")


def test_full_recompute_keeps_korthikantis_layer_inputs_plus_one_layer() -> None:
    """Korthikanti et al. 2022, section 4.1: full recomputation keeps 2sbh per layer, and one
    layer's activations (34sbh with FlashAttention) exist while it is recomputed."""
    shape = shape_from_params(7_000_000_000)
    s, b, h, L = 4096, 1, shape.hidden, shape.layers
    mi = MemoryInput(shape, MIXED, ADAM, seq_len=s, micro_batch=b, recompute="full")
    acts = stage_memory(mi, 1, 1, 1, 0, 0, 1).activations
    from pgdoctor.plan.memory import activation_coeff

    coeff, _ = activation_coeff(shape)
    logits = 4 * s * b * h * (1 + shape.vocab / h)
    assert acts == int(2 * s * b * h * L + coeff * s * b * h + logits)


# --- GPUs, the answer ------------------------------------------------------------------------


def test_gpu_preset_sets_memory_tflops_and_link(capsys: pytest.CaptureFixture[str]) -> None:
    _rc, data = run_plan(capsys, "--params", "1.3B", "--gpu", "a100-80g")
    inputs = data["plan"]["inputs"]
    assert inputs["gpu_memory_bytes"] == 80 * GIB and inputs["tflops"] == pytest.approx(312 * 0.4)
    assert data["plan"]["interconnect"]["intra"]["name"] == "nvlink3"
    _rc, data = run_plan(
        capsys, "--params", "1.3B", "--gpu", "a100-80g", "--tflops", "150", "--gpu-memory", "40GiB"
    )
    assert data["plan"]["inputs"]["tflops"] == 150 and data["plan"]["inputs"]["gpu_memory_bytes"] == 40 * GIB
    assert {
        "a100-40g",
        "a100-80g",
        "h100-sxm",
        "h100-pcie",
        "h200",
        "b200",
        "l40s",
        "rtx4090",
        "mi300x",
    } == set(GPUS)


def test_fp8_is_refused_on_a_gpu_without_fp8_tensor_cores() -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pgdoctor",
            "plan",
            "--params",
            "7B",
            "--gpu",
            "a100-80g",
            "--precision",
            "fp8-mixed",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "no FP8" in proc.stderr


def test_seed_self_test_7b_on_one_a100_says_what_to_try_first(capsys: pytest.CaptureFixture[str]) -> None:
    """The seed's question: 7B whose fp32 weights (28 GB) fit one 80 GB A100 but whose mixed Adam
    states (112 GB) do not."""
    rc, data = run_plan(
        capsys, "--params", "7B", "--gpu", "a100-80g", "--gpus-per-node", "1", "--seq-len", "4096"
    )
    why = data["plan"]["why"]
    assert rc == 1 and why.startswith("Nothing fits 1 x 80.0 GiB")
    for option in ("8-bit AdamW", "CPU offload of the optimizer", "sharding over more GPUs", "LoRA r=16"):
        assert option in why
    assert "Try first: 8-bit AdamW" in why


def test_the_recommendation_says_why_and_names_the_runner_up(capsys: pytest.CaptureFixture[str]) -> None:
    _rc, data = run_plan(
        capsys, "--params", "7B", "--gpus-per-node", "8", "--gpu-memory", "80GiB", "--seq-len", "4096"
    )
    why = data["plan"]["why"]
    assert "Why dp=8 tp=1 pp=1 zero=1" in why and "Runner-up" in why and "First change" in why
    assert "tokens/s" in why


def test_lora_cli_trains_only_the_adapters(capsys: pytest.CaptureFixture[str]) -> None:
    rc, data = run_plan(
        capsys,
        "--params",
        "7B",
        "--gpus-per-node",
        "1",
        "--gpu-memory",
        "24GiB",
        "--seq-len",
        "2048",
        "--lora-rank",
        "16",
        "--base-weights",
        "nf4",
    )
    best = data["plan"]["recommended"]
    assert rc == 0 and best is not None
    assert data["plan"]["inputs"]["finetune"]["base_weights"] == "nf4"
    assert best["memory"]["trained_numel"] == 32 * 16 * (4 * (4096 + 4096) + 3 * (4096 + 11008))
    plan_inp = PlanInput(
        MemoryInput(shape_from_params(7_000_000_000), MIXED, ADAM, 2048, 1),
        Fabric(1, 1, get("nvlink4"), get("ib-ndr")),
        24 * GIB,
    )
    assert not plan(plan_inp)[0].fits  # the full model does not


# --- mixture of experts --------------------------------------------------------------------

MIXTRAL = {
    "architectures": ["MixtralForCausalLM"],
    "hidden_act": "silu",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "max_position_embeddings": 32768,
    "model_type": "mixtral",
    "num_attention_heads": 32,
    "num_experts_per_tok": 2,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "num_local_experts": 8,
    "rms_norm_eps": 1e-05,
    "tie_word_embeddings": False,
    "vocab_size": 32000,
}
QWEN_MOE = {
    "model_type": "qwen2_moe",
    "hidden_size": 2048,
    "num_hidden_layers": 24,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "intermediate_size": 5632,
    "moe_intermediate_size": 1408,
    "shared_expert_intermediate_size": 5632,
    "num_experts": 60,
    "num_experts_per_tok": 4,
    "vocab_size": 151936,
    "tie_word_embeddings": False,
    "hidden_act": "silu",
}
DEEPSEEK_MOE = {
    "model_type": "deepseek",
    "hidden_size": 2048,
    "num_hidden_layers": 28,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "intermediate_size": 10944,
    "moe_intermediate_size": 1408,
    "n_routed_experts": 64,
    "n_shared_experts": 2,
    "num_experts_per_tok": 6,
    "first_k_dense_replace": 1,
    "vocab_size": 102400,
    "tie_word_embeddings": False,
    "hidden_act": "silu",
}


def test_moe_parameter_counts_are_the_published_ones() -> None:
    """Mixtral-8x7B: 46,702,792,704 parameters (transformers' num_parameters() of its
    config.json; Mistral AI: "46.7B total, 12.9B active"); Qwen1.5-MoE-A2.7B: 14.3B total;
    DeepSeek-MoE 16B: 16.4B total (their model cards)."""
    from pgdoctor.plan.moe import active_params, moe_from_hf_config, total_params

    shape, moe = moe_from_hf_config(MIXTRAL)
    assert total_params(shape, moe) == 46_702_792_704
    assert active_params(shape, moe) == 12_879_925_248
    shape, moe = moe_from_hf_config(QWEN_MOE)
    assert total_params(shape, moe) == pytest.approx(14.3e9, rel=0.002)
    shape, moe = moe_from_hf_config(DEEPSEEK_MOE)
    assert total_params(shape, moe) == pytest.approx(16.4e9, rel=0.002)


def test_expert_parallelism_splits_experts_and_adds_all_to_all(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from pgdoctor.plan.moe import MoeSpec, all_to_all_bytes

    cfg = tmp_path / "mixtral.json"
    cfg.write_text(json.dumps(MIXTRAL))
    _rc, data = run_plan(
        capsys,
        "--model",
        str(cfg),
        "--gpus-per-node",
        "8",
        "--nodes",
        "2",
        "--gpu",
        "h100-sxm",
        "--seq-len",
        "4096",
        "--global-batch",
        "256",
        "--tp",
        "1",
        "--pp",
        "1",
        "--zero",
        "1",
    )
    assert data["plan"]["model"]["params"] == 46_702_792_704
    lays = {
        lay["ep"]: lay
        for lay in data["plan"]["layouts"]
        if lay["recompute"] == "full" and lay["micro_batch"] == 1
    }
    assert set(lays) == {1, 2, 4, 8}
    # Megatron MoE: 4 all-to-alls per MoE layer per micro-batch, (ep-1)/ep of s x b x k x c x h x 2 B each.
    a2a = 4 * 4096 * 1 * 2 * 1.0 * 4096 * 2 * 7 / 8
    assert all_to_all_bytes(4096, 1, 4096, 2, MoeSpec(8, 2, 14336), 8) == a2a
    assert lays[8]["all_to_all_bytes"] == pytest.approx(a2a * 32 * lays[8]["micro_batches"])
    assert lays[1]["all_to_all_bytes"] == 0
    # ZeRO-1 keeps parameters whole: ep=8 holds one expert of each layer, ep=1 all eight.
    expert = 3 * 4096 * 14336 * 32 * 2  # bytes of one expert per layer, 16-bit
    assert lays[1]["memory"]["params"] - lays[8]["memory"]["params"] == 7 * expert
    assert lays[1]["memory"]["params"] == 2 * 46_702_792_704


# --- pipeline schedules, tensor parallelism without sequence parallelism ------------------


def test_pipeline_schedules_follow_their_papers() -> None:
    """Narayanan et al. 2021 (Megatron-LM), section 2.2.2: the interleaved schedule's bubble is
    (p-1)/(v m) of the ideal step; Qi et al. 2024: ZB-H1 a third of 1F1B's; Korthikanti et al.
    section 4.2.3: interleaving keeps 1 + (p-1)/(p v) times 1F1B's activations in flight."""
    from pgdoctor.plan.comm import activations_in_flight, bubble_fraction

    for p, m, v in ((8, 64, 2), (4, 16, 4), (16, 32, 3)):
        b = bubble_fraction(p, m, "interleaved", v)
        assert b / (1 - b) == pytest.approx((p - 1) / (v * m))
        z = bubble_fraction(p, m, "zb-h1")
        assert z / (1 - z) == pytest.approx((p - 1) / m / 3)
        assert bubble_fraction(p, 2 * p - 1, "zb-h2") == 0
        assert activations_in_flight(p, 0, m, "interleaved", v) == pytest.approx(p * (1 + (p - 1) / (p * v)))
        assert activations_in_flight(p, 0, m) == p
    shape = shape_from_params(70 * 10**9)
    mi = MemoryInput(
        shape, MIXED, ADAM, seq_len=4096, micro_batch=1, schedule="interleaved", virtual_stages=2
    )
    inter = stage_memory(mi, 8, 8, 1, 0, 0, 64)
    plain = stage_memory(MemoryInput(shape, MIXED, ADAM, seq_len=4096, micro_batch=1), 8, 8, 1, 0, 0, 64)
    assert inter.activations > plain.activations


def test_tensor_parallelism_without_sequence_parallelism_is_korthikantis_equation_2() -> None:
    """Korthikanti et al. 2022, eq. 2: sbh(10 + 24/t + 5as/(ht)) per layer without sequence
    parallelism; eq. 3 (with it): sbh(34 + 5as/h)/t."""
    gpt = shape_from_hf_config(
        {
            "model_type": "gpt2",
            "n_embd": 1024,
            "n_layer": 4,
            "n_head": 16,
            "vocab_size": 50257,
            "n_positions": 2048,
        }
    )
    s, b, t = 2048, 1, 4
    sbh = s * b * gpt.hidden
    for sp, expected in (
        (False, sbh * (10 + 24 / t + 5 * gpt.heads * s / (gpt.hidden * t))),
        (True, sbh * (34 + 5 * gpt.heads * s / gpt.hidden) / t),
    ):
        mi = MemoryInput(
            gpt, MIXED, ADAM, seq_len=s, micro_batch=b, flash_attention=False, sequence_parallel=sp
        )
        one_layer = stage_memory(mi, t, 2, 1, 0, 0, 1).activations
        two_layers = stage_memory(replace_layers(mi, 6), t, 2, 1, 0, 0, 1).activations
        assert two_layers - one_layer == pytest.approx(expected, rel=1e-6)  # one more layer on stage 0


def replace_layers(mi: MemoryInput, layers: int) -> MemoryInput:
    from dataclasses import replace

    return replace(mi, shape=replace(mi.shape, layers=layers))


def test_hybrid_sharding_shards_inside_a_node_and_all_reduces_across_nodes() -> None:
    """FSDP HYBRID_SHARD (HSDP): ZeRO-3 over the 8 GPUs of a node, replicated over 4 nodes; each
    step all-reduces every rank's 1/8 of the gradients across the 4 replicas, between nodes."""
    from pgdoctor.plan.comm import ring_all_reduce_s

    shape = shape_from_params(13 * 10**9)
    fabric = Fabric(8, 4, get("nvlink4"), get("ib-ndr"))
    inp = PlanInput(MemoryInput(shape, MIXED, ADAM, seq_len=4096, micro_batch=1), fabric, 80 * GIB)
    full = evaluate(inp, 32, 1, 1, 3)
    hsdp = evaluate(inp, 32, 1, 1, 3, shard=8)
    assert hsdp.label == "dp=32 tp=1 pp=1 zero=3 shard=8" and hsdp.zero_label == "3h"
    assert hsdp.memory.states.total == pytest.approx(16 * 13e9 / 8, rel=1e-4)
    assert full.memory.states.total == pytest.approx(16 * 13e9 / 32, rel=1e-4)
    grads = hsdp.memory.numel * 2
    bw, lat, crosses = fabric.group_link(4, 1)
    assert crosses and hsdp.traffic.dp_inter_s == pytest.approx(ring_all_reduce_s(grads / 8, 4, bw, lat))
    assert hsdp.traffic.dp_s < full.traffic.dp_s  # the per-micro-batch gathers stay on NVLink
    assert any(lay.shard == 8 for lay in plan(inp))


def test_context_parallelism_splits_long_sequences(capsys: pytest.CaptureFixture[str]) -> None:
    """The seed's scenario C: activations of very long sequences exhaust memory. 8B at 128K
    tokens on 8 x 80 GiB: with tp=1 pp=1 and no context parallelism nothing fits; ring attention
    over cp ranks (each holding s/cp tokens) does."""
    from pgdoctor.plan.comm import ring_attention_bytes

    common = (
        "--params",
        "8B",
        "--gpu",
        "h100-sxm",
        "--seq-len",
        "131072",
        "--global-batch",
        "8",
        "--tp",
        "1",
        "--pp",
        "1",
    )
    rc, data = run_plan(capsys, *common, "--cp", "1")
    assert rc == 1 and data["plan"]["recommended"] is None
    rc, data = run_plan(capsys, *common)
    best = data["plan"]["recommended"]
    assert rc == 0 and best["cp"] > 1 and best["dp"] * best["cp"] == 8
    # K and V of s/cp tokens around the ring, cp-1 steps, forward once and backward twice.
    kv = 32 * 128  # 7B-shaped --params: 32 KV heads of 128
    local = 131072 // best["cp"]
    assert ring_attention_bytes(local, 1, kv, 2, 4) == 3 * 3 * 2 * local * kv * 2
    layers = data["plan"]["model"]["layers"]
    assert best["cp_bytes"] == pytest.approx(
        best["micro_batches"] * layers * ring_attention_bytes(local, best["micro_batch"], kv, 2, best["cp"])
    )


def test_fp8_uses_the_gpus_fp8_rate_and_keeps_an_fp8_weight_copy(capsys: pytest.CaptureFixture[str]) -> None:
    """H100 SXM: 1979 dense FP8 TFLOP/s (datasheet) at the presets' 40%; the bf16 weights, fp32
    master and Adam state stay (16 B per parameter) and Transformer Engine adds a 1-byte fp8
    copy of each weight."""
    args = (
        "--params",
        "7B",
        "--gpu",
        "h100-sxm",
        "--seq-len",
        "4096",
        "--tp",
        "1",
        "--pp",
        "1",
        "--zero",
        "1",
    )
    _rc, fp8 = run_plan(capsys, *args, "--precision", "fp8-mixed")
    _rc, bf16 = run_plan(capsys, *args)
    assert fp8["plan"]["inputs"]["tflops"] == pytest.approx(1979 * 0.4)
    assert bf16["plan"]["inputs"]["tflops"] == pytest.approx(989 * 0.4)
    f, b = fp8["plan"]["recommended"], bf16["plan"]["recommended"]
    assert f["memory"]["params"] == b["memory"]["params"]
    assert f["memory"]["buffers"] - b["memory"]["buffers"] == f["memory"]["params_numel"]
    assert f["step_s"] < b["step_s"]


def test_largest_model_per_layout_is_the_zero_papers_table_2(capsys: pytest.CaptureFixture[str]) -> None:
    """Rajbhandari et al. 2020, Table 2 (memory analysis, model states only, 32 GB V100s, mixed
    Adam, 64 GPUs, MP 1): baseline DP 2B, ZeRO-1 (P_os) 7.6B, ZeRO-2 (P_os+g) 14.4B, ZeRO-3
    (P_os+g+p) 128B. With one token, no overhead and DDP's bucket view the planner's states are
    the paper's; ZeRO-3 comes out lower because the planner also counts the gathered layers."""
    from pgdoctor.plan.largest import largest_models

    inp = PlanInput(
        MemoryInput(shape_from_params(7 * 10**9), MIXED, ADAM, 1, 1, overhead_bytes=1, ddp_bucket_view=True),
        Fabric(8, 8, get("nvlink3"), get("ib-hdr")),
        32 * 10**9,
    )
    got = {r.zero: r.params for r in largest_models(inp, [(64, 1, 1, z) for z in range(4)])}
    assert got[0] == pytest.approx(2e9, rel=0.005)
    assert got[1] == pytest.approx(7.6e9, rel=0.01)
    assert got[2] == pytest.approx(14.4e9, rel=0.005)
    assert got[3] < 128e9
    assert state_bytes(128 * 10**9, 0, MIXED, ADAM, 3, 64).total == pytest.approx(32e9, rel=1e-6)
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "plan",
                "--largest-model",
                "--gpu-memory",
                "32GB",
                "--gpus-per-node",
                "8",
                "--nodes",
                "8",
                "--seq-len",
                "1",
                "--overhead",
                "1B",
                "--ddp-bucket-view",
                "--recompute",
                "none",
                "--tp",
                "1",
                "--pp",
                "1",
                "--json",
            ]
        )
    assert exc.value.code in (0, None)
    rows = json.loads(capsys.readouterr().out)["largest_model"]
    assert {r["zero"]: r["params"] for r in rows}[2] == pytest.approx(14.4e9, rel=0.005)
