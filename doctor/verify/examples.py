"""Ready-made entries for trying `pgdoctor verify` and `pgdoctor bench scaling` without writing
one: `pgdoctor verify pgdoctor.verify.examples:mlp`. Each returns the entry mapping."""

from __future__ import annotations

from typing import Any


def _data(batch: int, features: int, outputs: int) -> Any:
    import torch

    def data(rank: int, world: int, step: int) -> tuple[Any, Any]:
        g = torch.Generator().manual_seed(1000 * step + rank)
        return torch.randn(batch, features, generator=g), torch.randn(batch, outputs, generator=g)

    return data


def mlp() -> dict[str, Any]:
    """A 3-layer MLP with Adam: equivalent under DDP, pp (nn.Sequential) and tp."""
    import torch
    from torch import nn

    model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 4))
    return {
        "model": model,
        "loss": nn.MSELoss(),
        "data": _data(8, 16, 4),
        "optimizer": lambda params: torch.optim.Adam(params, lr=1e-3),
    }


def mlp_sum_loss() -> dict[str, Any]:
    """The same MLP with a loss that sums over samples: DDP's gradients are 1/N of one process's."""
    from torch import nn

    return {**mlp(), "loss": nn.MSELoss(reduction="sum")}


def batchnorm_mlp() -> dict[str, Any]:
    """An MLP with BatchNorm1d and no SyncBatchNorm."""
    from torch import nn

    model = nn.Sequential(nn.Linear(16, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 4))
    return {**mlp(), "model": model}


def small_mlp() -> dict[str, Any]:
    """A small MLP (0.66 M parameters, micro-batch 32) for `bench scaling`: over gloo its
    all-reduce outgrows its computation."""
    from torch import nn

    model = nn.Sequential(
        nn.Linear(256, 512),
        nn.ReLU(),
        nn.Linear(512, 512),
        nn.ReLU(),
        nn.Linear(512, 512),
        nn.ReLU(),
        nn.Linear(512, 10),
    )
    return {"model": model, "loss": nn.MSELoss(), "data": _data(32, 256, 10)}


# GPT-style decoder stacks (pre-norm TransformerEncoderLayer blocks under a causal mask, tied
# token embedding and head, fp32, dropout 0) at the sizes benchmarks/bench_verify_scale.py
# measures: (layers, width, heads, vocabulary). 124M is GPT-2 small's shape, 350M GPT-2 medium's.
GPT_SIZES = {
    "1m": (4, 128, 4, 3072),
    "10m": (6, 320, 5, 8192),
    "124m": (12, 768, 12, 50257),
    "350m": (24, 1024, 16, 50257),
}
GPT_SEQ = 32  # tokens per sample
GPT_BATCH = 2  # samples per rank and step


def gpt(size: str, loss_reduction: str = "mean") -> dict[str, Any]:
    """The entry of a GPT of `size` (a key of GPT_SIZES), plain SGD."""
    import torch
    from torch import nn

    layers, width, heads, vocab = GPT_SIZES[size]

    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.wte = nn.Embedding(vocab, width)
            self.wpe = nn.Embedding(1024, width)
            block = nn.TransformerEncoderLayer(
                width, heads, 4 * width, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
            )
            self.blocks = nn.TransformerEncoder(block, layers, enable_nested_tensor=False)
            self.ln_f = nn.LayerNorm(width)
            for emb in (self.wte, self.wpe):
                nn.init.normal_(emb.weight, std=0.02)  # GPT-2's: logits of order 1 through the tied head

        def forward(self, idx: Any) -> Any:
            t = idx.shape[1]
            x = self.wte(idx) + self.wpe(torch.arange(t, device=idx.device))
            mask = nn.Transformer.generate_square_subsequent_mask(t, device=idx.device)
            x = self.ln_f(self.blocks(x, mask=mask, is_causal=True))
            return x @ self.wte.weight.t()  # the head is the embedding (tied, as GPT-2's)

    ce = nn.CrossEntropyLoss(reduction=loss_reduction)

    def loss(logits: Any, target: Any) -> Any:
        return ce(logits.reshape(-1, vocab), target.reshape(-1))

    def data(rank: int, world: int, step: int) -> tuple[Any, Any]:
        g = torch.Generator().manual_seed(1000 * step + rank)
        tokens = torch.randint(0, vocab, (GPT_BATCH, GPT_SEQ + 1), generator=g)
        return tokens[:, :-1], tokens[:, 1:]

    return {
        "model": GPT(),
        "loss": loss,
        "data": data,
        "optimizer": lambda params: torch.optim.SGD(params, lr=1e-3),
    }


def gpt_1m() -> dict[str, Any]:
    return gpt("1m")


def gpt_10m() -> dict[str, Any]:
    return gpt("10m")


def gpt_124m() -> dict[str, Any]:
    """GPT-2 small's shape (124M parameters)."""
    return gpt("124m")


def gpt_350m() -> dict[str, Any]:
    """GPT-2 medium's shape (354M parameters)."""
    return gpt("350m")


def gpt_1m_sum_loss() -> dict[str, Any]:
    return gpt("1m", "sum")


def gpt_10m_sum_loss() -> dict[str, Any]:
    return gpt("10m", "sum")


def gpt_124m_sum_loss() -> dict[str, Any]:
    return gpt("124m", "sum")


def gpt_350m_sum_loss() -> dict[str, Any]:
    return gpt("350m", "sum")
