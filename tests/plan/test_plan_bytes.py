"""The planner's bytes of parameters, gradients and optimizer state equal what torch allocates.

Each model is built here with torch, independently of the planner: full layers created and then
sharded the way Megatron shards them (column-parallel slices rows, row-parallel slices columns
and keeps the bias whole, the vocabulary split over tp and padded), pipeline stages holding
their slice of layers plus embeddings (first) or head (last). One real training step runs
(forward, backward, optimizer step), then torch's own tensors are counted:
parameters and their .grad by numel x element_size, the optimizer's state tensors (Adam:
exp_avg, exp_avg_sq, step; SGD: momentum_buffer), and for mixed precision the fp32 master
copy the optimizer steps on (its gradient is a transient copy, freed after the step, as in
the ZeRO paper's 2+2+12 accounting).
"""

from __future__ import annotations

import math
from typing import Any, Optional

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from pgdoctor.plan.memory import OPTIMIZERS, PRECISIONS, MemoryInput, StateBytes, stage_memory, state_bytes
from pgdoctor.plan.model import (
    ModelShape,
    linear_stack_tensors,
    rank_tensors,
    shape_from_hf_config,
    tp_mlp_tensors,
)

SHAPES = {
    "gpt2": shape_from_hf_config(
        {"model_type": "gpt2", "n_embd": 64, "n_layer": 3, "n_head": 4, "vocab_size": 97, "n_positions": 32}
    ),
    "llama-gqa": shape_from_hf_config(
        {
            "model_type": "llama",
            "hidden_size": 64,
            "num_hidden_layers": 3,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "intermediate_size": 96,
            "vocab_size": 101,
        }
    ),
    "qwen2-tied": shape_from_hf_config(
        {
            "model_type": "qwen2",
            "hidden_size": 48,
            "num_hidden_layers": 3,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "intermediate_size": 80,
            "vocab_size": 64,
            "tie_word_embeddings": True,
        }
    ),
}
RECIPES = [
    ("fp32", "adam"),
    ("bf16-mixed", "adamw"),
    ("fp16-mixed", "adam"),
    ("bf16-autocast", "adamw"),
    ("fp32", "sgd-momentum"),
    ("fp32", "sgd"),
]
# fp16-mixed and plain SGD differ from these only in dtype or in having no state: the MLP tests cover them.
TRANSFORMER_RECIPES = [
    ("fp32", "adam"),
    ("bf16-mixed", "adamw"),
    ("bf16-autocast", "adamw"),
    ("fp32", "sgd-momentum"),
]
SEQ, BATCH = 8, 2


@pytest.fixture(autouse=True, scope="module")
def _one_thread() -> Any:
    # Tiny models: extra threads only contend for the machine's two cores.
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _shard(t: torch.Tensor, dim: int, rank: int, tp: int) -> nn.Parameter:
    """Rank's slice of a full tensor along dim, padded with zeros to a multiple of tp (vocab)."""
    size = t.shape[dim]
    per = -(-size // tp)
    if per * tp != size:
        pad = list(t.shape)
        pad[dim] = per * tp - size
        t = torch.cat([t, torch.zeros(pad, dtype=t.dtype)], dim)
    return nn.Parameter(t.narrow(dim, rank * per, per).clone())


def _norm(shape: ModelShape) -> nn.Module:
    return nn.LayerNorm(shape.hidden) if shape.norm_bias else nn.RMSNorm(shape.hidden)


class Block(nn.Module):
    """One transformer layer as tensor-parallel rank `rank` of `tp` holds it."""

    def __init__(self, shape: ModelShape, tp: int, rank: int):
        super().__init__()
        h, hd = shape.hidden, shape.head_dim
        self.shape, self.tp = shape, tp
        self.norm1, self.norm2 = _norm(shape), _norm(shape)
        # Full layers first, then the shard, as a checkpoint is split for tensor parallelism.
        q = nn.Linear(h, shape.heads * hd, bias=shape.qkv_bias)
        k = nn.Linear(h, shape.kv_heads * hd, bias=shape.qkv_bias)
        v = nn.Linear(h, shape.kv_heads * hd, bias=shape.qkv_bias)
        # Column-parallel: each rank keeps its heads of q, k and v, fused into one weight.
        self.qkv_w = nn.Parameter(torch.cat([_shard(m.weight.data, 0, rank, tp).data for m in (q, k, v)]))
        self.qkv_b = (
            nn.Parameter(torch.cat([_shard(m.bias.data, 0, rank, tp).data for m in (q, k, v)]))
            if shape.qkv_bias
            else None
        )
        o = nn.Linear(shape.heads * hd, h, bias=shape.out_bias)
        self.o_w = _shard(o.weight.data, 1, rank, tp)  # row-parallel
        self.o_b = nn.Parameter(o.bias.data.clone()) if shape.out_bias else None  # replicated
        ups = [
            nn.Linear(h, shape.ffn_hidden, bias=shape.mlp_bias) for _ in range(2 if shape.gated_mlp else 1)
        ]
        self.up_w = nn.Parameter(torch.cat([_shard(u.weight.data, 0, rank, tp).data for u in ups]))
        self.up_b = (
            nn.Parameter(torch.cat([_shard(u.bias.data, 0, rank, tp).data for u in ups]))
            if shape.mlp_bias
            else None
        )
        down = nn.Linear(shape.ffn_hidden, h, bias=shape.mlp_bias)
        self.down_w = _shard(down.weight.data, 1, rank, tp)
        self.down_b = nn.Parameter(down.bias.data.clone()) if shape.mlp_bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = self.shape
        b, t, _ = x.shape
        nh, nkv, hd = s.heads // self.tp, s.kv_heads // self.tp, s.head_dim
        qkv = F.linear(self.norm1(x), self.qkv_w, self.qkv_b)
        q, k, v = qkv.split([nh * hd, nkv * hd, nkv * hd], dim=-1)
        q = q.view(b, t, nh, hd).transpose(1, 2)
        k = k.view(b, t, nkv, hd).transpose(1, 2).repeat_interleave(nh // nkv, dim=1)
        v = v.view(b, t, nkv, hd).transpose(1, 2).repeat_interleave(nh // nkv, dim=1)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, nh * hd)
        # (The all-reduce after a row-parallel product changes values, not allocations.)
        x = x + F.linear(a, self.o_w) + (self.o_b if self.o_b is not None else 0)
        u = F.linear(self.norm2(x), self.up_w, self.up_b)
        if s.gated_mlp:
            g, u = u.chunk(2, dim=-1)
            u = F.silu(g) * u
        else:
            u = F.gelu(u)
        return x + F.linear(u, self.down_w) + (self.down_b if self.down_b is not None else 0)


class Stage(nn.Module):
    """Pipeline stage `stage` of `pp`, tensor-parallel rank `rank` of `tp`."""

    def __init__(self, shape: ModelShape, tp: int, rank: int, pp: int, stage: int):
        super().__init__()
        self.shape, self.first, self.last, self.pp = shape, stage == 0, stage == pp - 1, pp
        vocab_full = nn.Embedding(shape.vocab, shape.hidden)
        if self.first:
            self.embed = nn.Embedding.from_pretrained(
                _shard(vocab_full.weight.data, 0, rank, tp).data, freeze=False
            )
            self.pos = (
                nn.Embedding(shape.learned_positions, shape.hidden) if shape.learned_positions else None
            )
        n_layers = len(range(shape.layers)[stage::pp])  # how many layers this stage gets
        self.layers = nn.ModuleList(Block(shape, tp, rank) for _ in range(n_layers))
        if self.last:
            self.final_norm = _norm(shape)
            if not shape.tied_embeddings or pp > 1:
                # Untied head, or the last stage's own copy of a tied embedding.
                self.output = nn.Parameter(_shard(vocab_full.weight.data, 0, rank, tp).data)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.first:
            x = self.embed(x % self.embed.num_embeddings)
            if self.pos is not None:
                x = x + self.pos(torch.arange(x.shape[1]))
        for layer in self.layers:
            x = layer(x)
        if self.last:
            head = self.output if hasattr(self, "output") else self.embed.weight
            x = F.linear(self.final_norm(x), head)
        return x


def _optimizer(name: str, params: list[torch.Tensor]) -> torch.optim.Optimizer:
    if name in ("adam", "adamw"):
        cls = torch.optim.Adam if name == "adam" else torch.optim.AdamW
        return cls(params, lr=1e-3)
    return torch.optim.SGD(params, lr=1e-3, momentum=0.9 if name == "sgd-momentum" else 0.0)


def _nbytes(ts: Any) -> int:
    return sum(t.numel() * t.element_size() for t in ts)


def train_step_and_count(model: nn.Module, make_input: Any, precision: str, optimizer: str) -> StateBytes:
    """One real step (twice, so lazily created state exists), then torch's allocations."""
    dtype = {
        "fp32": torch.float32,
        "bf16-mixed": torch.bfloat16,
        "fp16-mixed": torch.float16,
        "bf16-autocast": torch.float32,
    }[precision]
    model = model.to(dtype)
    params = list(model.parameters())
    master: Optional[list[torch.Tensor]] = None
    if dtype != torch.float32:
        master = [p.detach().clone().float().requires_grad_() for p in params]
    opt = _optimizer(optimizer, master if master is not None else params)
    for _ in range(2):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16-autocast"):
            out = model(make_input(dtype))
        out.float().square().mean().backward()
        if master is not None:
            for m, p in zip(master, params):
                m.grad = p.grad.float()
        opt.step()
        if master is not None:
            with torch.no_grad():
                for m, p in zip(master, params):
                    p.copy_(m)
                    m.grad = None
    assert all(p.grad is not None for p in params), "every parameter must get a gradient"
    opt_state = [t for st in opt.state.values() for t in st.values() if isinstance(t, torch.Tensor)]
    return StateBytes(
        params=_nbytes(params),
        grads=_nbytes(p.grad for p in params),
        master=_nbytes(master or []),
        optimizer=_nbytes(opt_state),
    )


def _predicted(tensors: list[tuple[str, int]], precision: str, optimizer: str) -> StateBytes:
    return state_bytes(sum(n for _, n in tensors), len(tensors), PRECISIONS[precision], OPTIMIZERS[optimizer])


LAYOUTS = [
    (1, 0, 1, 0),
    (2, 0, 1, 0),
    (2, 1, 1, 0),
    (1, 0, 2, 0),
    (1, 0, 2, 1),
    (2, 1, 2, 0),
    (2, 0, 2, 1),
    (1, 0, 3, 1),
]


@pytest.mark.parametrize("shape_name", sorted(SHAPES))
@pytest.mark.parametrize("tp, rank, pp, stage", LAYOUTS)
def test_transformer_shards_and_stages_match_torch_to_the_byte(
    shape_name: str, tp: int, rank: int, pp: int, stage: int
) -> None:
    shape = SHAPES[shape_name]
    torch.manual_seed(0)
    for precision, optimizer in TRANSFORMER_RECIPES:
        model = Stage(shape, tp, rank, pp, stage)

        def make_input(dtype: torch.dtype, model: Stage = model) -> torch.Tensor:
            if model.first:
                return torch.randint(0, shape.vocab, (BATCH, SEQ))
            return torch.randn(BATCH, SEQ, shape.hidden, dtype=dtype)

        actual = train_step_and_count(model, make_input, precision, optimizer)
        predicted = _predicted(rank_tensors(shape, tp, pp, stage), precision, optimizer)
        assert predicted == actual, f"{shape_name} tp={tp}/{rank} pp={pp}/{stage} {precision} {optimizer}"
        # The planner's per-stage memory uses the same states.
        mem = stage_memory(
            MemoryInput(shape, PRECISIONS[precision], OPTIMIZERS[optimizer], SEQ, BATCH),
            tp,
            pp,
            1,
            0,
            stage,
            1,
        )
        assert mem.states == actual


def test_a_planned_model_of_the_issue_is_the_real_parameter_count() -> None:
    """The whole unsharded model: planner's count equals torch's numel over parameters."""
    for shape in SHAPES.values():
        assert sum(p.numel() for p in Stage(shape, 1, 0, 1, 0).parameters()) == shape.params


# --- the lab's kinds of model: MLP replicas (DDP), MLP pipeline stages, Megatron MLP blocks ---


def _mlp(width: int, layers: int) -> nn.Module:
    mods: list[nn.Module] = []
    for _ in range(layers):
        mods += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*mods)


class TpMlpBlock(nn.Module):
    def __init__(self, width: int, ffn: int, tp: int, rank: int):
        super().__init__()
        fc1, fc2 = nn.Linear(width, ffn), nn.Linear(ffn, width)
        self.w1, self.b1 = _shard(fc1.weight.data, 0, rank, tp), _shard(fc1.bias.data, 0, rank, tp)
        self.w2, self.b2 = _shard(fc2.weight.data, 1, rank, tp), nn.Parameter(fc2.bias.data.clone())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + F.linear(F.gelu(F.linear(x, self.w1, self.b1)), self.w2) + self.b2


@pytest.mark.parametrize("precision, optimizer", RECIPES)
def test_mlp_replica_and_pipeline_stages_match_torch_to_the_byte(precision: str, optimizer: str) -> None:
    width, layers = 48, 5
    cases = [(_mlp(width, layers), layers)] + [(_mlp(width, n), n) for n in (3, 2)]  # whole, then 2 stages
    for model, n in cases:
        actual = train_step_and_count(model, lambda d: torch.randn(4, width, dtype=d), precision, optimizer)
        assert _predicted(linear_stack_tensors(width, n), precision, optimizer) == actual


@pytest.mark.parametrize("precision, optimizer", RECIPES)
def test_megatron_mlp_shards_match_torch_to_the_byte(precision: str, optimizer: str) -> None:
    width, ffn, blocks = 40, 96, 3
    for tp in (1, 2, 4):
        for rank in range(tp):
            model = nn.Sequential(*[TpMlpBlock(width, ffn, tp, rank) for _ in range(blocks)])
            actual = train_step_and_count(
                model, lambda d: torch.randn(4, width, dtype=d), precision, optimizer
            )
            shard = math.ceil(ffn / tp)
            assert _predicted(tp_mlp_tensors(width, shard, blocks), precision, optimizer) == actual


# --- the lab's own models (pgdoctor.lab), built by the lab's code ---------------------------

LAB_COUNTS = r"""
import inspect, json, os, sys, tempfile
import torch, torch.distributed as dist
from pgdoctor.lab import ddp, pp, tp
from pgdoctor.lab.faults import Fault
from pgdoctor.lab.spec import LabSpec

torch.set_num_threads(1)


def loss_of(module, x):
    # Lab models take (x) or, with their loss inside, (x, y); DDP forwards to its module.
    inner = getattr(module, "module", module)
    if len(inspect.signature(inner.forward).parameters) >= 2:
        return module(x, torch.randn_like(x))
    return module(x).square().mean()


store_file = os.path.join(sys.argv[1], "store")
# One process is enough to build every rank's model: allocations do not depend on peers.
dist.init_process_group("gloo", store=dist.FileStore(store_file, 1), rank=0, world_size=1)
out = []
for strategy, cls in (("ddp", ddp.DdpRun), ("pp", pp.PpRun), ("tp", tp.TpRun)):
    for fault in ("none", "imbalance"):
        spec = LabSpec(fault=fault, strategy=strategy, nproc=2, run_dir=sys.argv[1], width=64, batch=4)
        for rank in range(spec.nproc):
            run = cls(spec, rank, 1, "cpu", Fault(spec, rank, "cpu"))
            module = getattr(run, "model", None) or run.stage
            params = list(module.parameters())
            loss_of(module, torch.randn(4, spec.width)).backward()
            grads = sum(p.grad.numel() * p.grad.element_size() for p in params)
            run.opt.step()
            state = [t for st in run.opt.state.values() for t in st.values() if isinstance(t, torch.Tensor)]
            group = run.opt.param_groups[0]
            # The lab trains with plain SGD (no state); Adam on the same module shows the states.
            adam = torch.optim.Adam(params, lr=1e-3)
            adam.step()
            adam_state = [t for st in adam.state.values() for t in st.values() if isinstance(t, torch.Tensor)]
            row = {
                "strategy": strategy, "fault": fault, "rank": rank, "width": spec.width,
                "optimizer": type(run.opt).__name__.lower(), "momentum": group.get("momentum", 0),
                "params": sum(p.numel() * p.element_size() for p in params), "grads": grads,
                "optimizer_bytes": sum(t.numel() * t.element_size() for t in state),
                "adam_bytes": sum(t.numel() * t.element_size() for t in adam_state),
            }
            if strategy == "ddp":
                sizes = module._get_ddp_logging_data().get("bucket_sizes", "")
                row["bucket_bytes"] = sum(int(s) for s in str(sizes).split(",") if s.strip())
                row["layers"] = ddp.LAYERS
            elif strategy == "pp":
                row["layers"] = pp.stage_layers(spec)[rank]
            else:
                row["blocks"], row["shard"] = tp.BLOCKS, tp.shard_widths(spec)[rank]
            out.append(row)
dist.destroy_process_group()
print(json.dumps(out), flush=True)
# torch 2.13 sometimes aborts in a static destructor at interpreter exit after FSDP on gloo
# ("terminate called without an active exception"); the counts are out, so leave at once.
import os
os._exit(0)
"""


@pytest.mark.slow
def test_lab_models_match_torch_to_the_byte(tmp_path: Any) -> None:
    import json
    import subprocess
    import sys

    from pgdoctor.plan.memory import ddp_bucket_bytes

    proc = subprocess.run(
        [sys.executable, "-c", LAB_COUNTS, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(proc.stdout.strip().splitlines()[-1])
    assert {r["strategy"] for r in rows} == {"ddp", "pp", "tp"}
    for r in rows:
        if r["strategy"] == "tp":
            tensors = tp_mlp_tensors(r["width"], r["shard"], r["blocks"])
        else:
            tensors = linear_stack_tensors(r["width"], r["layers"])
        opt = {"adam": "adam", "adamw": "adamw"}.get(r["optimizer"]) or (
            "sgd-momentum" if r["momentum"] else "sgd"
        )
        predicted = _predicted(tensors, "fp32", opt)
        where = f"lab {r['strategy']} fault={r['fault']} rank={r['rank']}"
        assert (predicted.params, predicted.grads, predicted.master, predicted.optimizer) == (
            r["params"],
            r["grads"],
            0,
            r["optimizer_bytes"],
        ), where
        assert _predicted(tensors, "fp32", "adam").optimizer == r["adam_bytes"], where
        if r["strategy"] == "ddp":
            numel = sum(n for _, n in tensors)
            assert ddp_bucket_bytes(numel, PRECISIONS["fp32"]) == r["bucket_bytes"], where


# --- activations: Korthikanti's formula against what autograd actually saves ---------------


class Gpt2Layer(nn.Module):
    """The layer Korthikanti et al. count: LayerNorm, attention with dropout, 4h GeLU MLP, dropout."""

    def __init__(self, h: int, a: int, p: float = 0.1):
        super().__init__()
        self.h, self.a, self.p = h, a, p
        self.ln1, self.ln2 = nn.LayerNorm(h), nn.LayerNorm(h)
        self.qkv, self.o = nn.Linear(h, 3 * h), nn.Linear(h, h)
        self.fc1, self.fc2 = nn.Linear(h, 4 * h), nn.Linear(4 * h, h)

    def forward(self, x: torch.Tensor, eager: bool) -> torch.Tensor:
        b, t, h = x.shape
        hd = h // self.a
        q, k, v = (z.view(b, t, self.a, hd).transpose(1, 2) for z in self.qkv(self.ln1(x)).split(h, -1))
        if eager:
            scores = (q @ k.transpose(-1, -2)) / hd**0.5
            scores = scores.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
            y = F.dropout(scores.softmax(-1), self.p, True) @ v
        else:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + F.dropout(self.o(y.transpose(1, 2).reshape(b, t, h)), self.p, True)
        return x + F.dropout(self.fc2(F.gelu(self.fc1(self.ln2(x)))), self.p, True)


def _saved_for_backward(layer: Gpt2Layer, x: torch.Tensor, eager: bool) -> int:
    """Bytes of distinct storages autograd keeps for backward, weights excluded."""
    weights = {p.untyped_storage().data_ptr() for p in layer.parameters()}
    seen: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        st = t.untyped_storage()
        if st.data_ptr() not in weights:
            seen[st.data_ptr()] = st.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        layer(x, eager)
    return sum(seen.values())


@pytest.mark.parametrize("s, b, h, a", [(256, 2, 256, 4), (512, 1, 512, 8), (128, 4, 384, 6)])
def test_activation_formula_is_within_15_percent_of_what_autograd_saves(
    s: int, b: int, h: int, a: int
) -> None:
    from pgdoctor.plan.memory import activation_bytes_per_layer

    torch.manual_seed(0)
    for dtype, scale in ((torch.bfloat16, 1.0), (torch.float32, 2.0)):
        layer = Gpt2Layer(h, a).to(dtype)
        x = torch.randn(b, s, h, dtype=dtype, requires_grad=True)
        for eager in (True, False):
            saved = _saved_for_backward(layer, x, eager)
            predicted = activation_bytes_per_layer(
                s, b, h, a, 1, "none", flash_attention=not eager, act_scale=scale
            )
            assert predicted == pytest.approx(saved, rel=0.15), (dtype, eager, saved, predicted)


class FusedRMSNorm(torch.autograd.Function):
    """RMSNorm that keeps only its input and 1/rms for backward, as fused kernels (Megatron,
    Transformer Engine, apex) do; nn.RMSNorm in eager mode keeps every intermediate."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        rstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6)
        ctx.save_for_backward(x, w, rstd)
        return (x.float() * rstd).to(x.dtype) * w

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> Any:
        x, w, rstd = ctx.saved_tensors
        n = x.float() * rstd
        gf = (g * w).float()
        dx = rstd * (gf - n * (gf * n).mean(-1, keepdim=True))
        return dx.to(x.dtype), (g.float() * n).sum(dim=tuple(range(g.dim() - 1))).to(w.dtype)


class LlamaLayer(nn.Module):
    def __init__(self, shape: ModelShape):
        super().__init__()
        s, h = shape, shape.hidden
        self.s = s
        self.n1, self.n2 = nn.Parameter(torch.ones(h)), nn.Parameter(torch.ones(h))
        self.qkv = nn.Linear(h, s.qkv_out, bias=False)
        self.o = nn.Linear(s.heads * s.head_dim, h, bias=False)
        self.up, self.down = (
            nn.Linear(h, 2 * s.ffn_hidden, bias=False),
            nn.Linear(s.ffn_hidden, h, bias=False),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s, (b, t, _) = self.s, x.shape
        q, k, v = self.qkv(FusedRMSNorm.apply(x, self.n1)).split(
            [s.heads * s.head_dim, s.kv_heads * s.head_dim, s.kv_heads * s.head_dim], -1
        )
        q, k, v = (z.view(b, t, -1, s.head_dim).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + self.o(y.transpose(1, 2).reshape(b, t, -1))
        g, u = self.up(FusedRMSNorm.apply(x, self.n2)).chunk(2, -1)
        return x + self.down(F.silu(g) * u)


@pytest.mark.parametrize("hidden, heads, kv, ffn", [(256, 4, 4, 688), (512, 8, 2, 1376)])
def test_activation_count_of_a_llama_layer_matches_what_autograd_saves(
    hidden: int, heads: int, kv: int, ffn: int
) -> None:
    from pgdoctor.plan.memory import activation_bytes_per_layer, activation_coeff

    shape = shape_from_hf_config(
        {
            "model_type": "llama",
            "hidden_size": hidden,
            "num_hidden_layers": 1,
            "num_attention_heads": heads,
            "num_key_value_heads": kv,
            "intermediate_size": ffn,
            "vocab_size": 64,
        }
    )
    layer = LlamaLayer(shape).to(torch.bfloat16)
    x = torch.randn(2, 256, hidden, dtype=torch.bfloat16, requires_grad=True)
    weights = {p.untyped_storage().data_ptr() for p in layer.parameters()}
    seen: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        if t.untyped_storage().data_ptr() not in weights:
            seen[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        layer(x)
    coeff, score = activation_coeff(shape)
    predicted = activation_bytes_per_layer(256, 2, hidden, heads, 1, "none", True, 1.0, coeff, score)
    assert predicted == pytest.approx(sum(seen.values()), rel=0.02)


def test_gpt2_shape_recounts_to_korthikantis_34_and_5() -> None:
    from pgdoctor.plan.memory import activation_coeff

    assert activation_coeff(SHAPES["gpt2"]) == (34.0, 5.0)


# --- ZeRO-3 as PyTorch FSDP runs it: 2 real gloo ranks, one FSDP unit per layer ------------

FSDP_COUNTS = r"""
import json, sys, warnings
warnings.filterwarnings("ignore")
import torch, torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, ShardingStrategy
from torch.distributed.fsdp.wrap import ModuleWrapPolicy
from tests.plan.test_plan_bytes import BATCH, SEQ, SHAPES, Block, Stage

torch.set_num_threads(1)
dist.init_process_group("gloo")
out = []
for name in sorted(SHAPES):
    shape = SHAPES[name]
    torch.manual_seed(0)
    model = FSDP(Stage(shape, 1, 0, 1, 0), device_id=torch.device("cpu"),
                 auto_wrap_policy=ModuleWrapPolicy({Block}), sharding_strategy=ShardingStrategy.FULL_SHARD)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(2):
        model(torch.randint(0, shape.vocab, (BATCH, SEQ))).float().square().mean().backward()
        opt.step()
    params = list(model.parameters())  # FSDP's flat parameters: this rank's shards
    state = [t for st in opt.state.values() for t in st.values() if isinstance(t, torch.Tensor)]
    out.append({"shape": name, "rank": dist.get_rank(), "world": dist.get_world_size(),
                "params": sum(p.numel() * p.element_size() for p in params),
                "grads": sum(p.grad.numel() * p.grad.element_size() for p in params),
                "optimizer": sum(t.numel() * t.element_size() for t in state)})
dist.destroy_process_group()
print(json.dumps(out), flush=True)
# torch 2.13 sometimes aborts in a static destructor at interpreter exit after FSDP on gloo
# ("terminate called without an active exception"); the counts are out, so leave at once.
import os
os._exit(0)
"""


@pytest.mark.slow
def test_zero3_states_match_pytorch_fsdp_full_shard_to_the_byte(no_leftover_children: None) -> None:
    import json
    import os
    import sys

    from pgdoctor.plan.model import shard_units
    from pgdoctor.probes.processes import WaitPolicy, free_port, run_children
    from tests.helpers.paths import ROOT

    port = free_port()
    envs = [
        dict(
            os.environ,
            PYTHONPATH=str(ROOT),
            RANK=str(r),
            WORLD_SIZE="2",
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(port),
        )
        for r in range(2)
    ]
    argv = [sys.executable, "-c", FSDP_COUNTS]
    outcomes = run_children([argv, argv], envs, WaitPolicy(180, grace_s=10))
    for o in outcomes:
        assert o.ok, o.stderr[-3000:]
    rows = [row for o in outcomes for row in json.loads(o.stdout.strip().splitlines()[-1])]
    assert len(rows) == 2 * len(SHAPES)
    for r in rows:
        shape = SHAPES[r["shape"]]
        tensors = rank_tensors(shape, 1, 1, 0)
        predicted = state_bytes(
            sum(n for _, n in tensors),
            len(tensors),
            PRECISIONS["fp32"],
            OPTIMIZERS["adam"],
            zero=3,
            dp=r["world"],
            units=shard_units(shape, 1, 1, 0),
        )
        assert (predicted.params, predicted.grads, predicted.optimizer) == (
            r["params"],
            r["grads"],
            r["optimizer"],
        ), r
