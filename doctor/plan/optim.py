"""Optimizer state that is not a fixed number of bytes per element: bitsandbytes' 8-bit
block-wise optimizers and Adafactor's factored second moment.

8-bit Adam/AdamW (Dettmers et al. 2022, "8-bit Optimizers via Block-wise Quantization";
bitsandbytes `Optimizer2State.init_state`): both moments are uint8 (`state1`, `state2`, 1 B
each), and every block of 256 elements keeps one fp32 `absmax` per moment; tensors with fewer
than 4096 elements (`min_8bit_size`) keep 32-bit moments (8 B). So 2 + 8/256 = 2.03125 B per
element of a large tensor against Adam's 8: the "75% less optimizer memory" of the
bitsandbytes documentation. The shared 256-entry quantization maps (2 KiB) are not counted.

Adafactor (Shazeer and Stern 2018; torch.optim.Adafactor, beta1 off): a matrix of r x c keeps a
row variance (r) and a column variance (c) instead of r x c second moments; vectors keep a full
one; each tensor has a 4-byte step. Sharded (ZeRO/FSDP flat) state is 1-D, so factoring is lost
there: each flat unit keeps a full second moment.
"""

from __future__ import annotations

from collections.abc import Sequence

BNB_BLOCK = 256
BNB_MIN_8BIT_SIZE = 4096


def bnb_8bit_state_bytes(numel: int) -> int:
    """Bytes of bitsandbytes' two-state 8-bit optimizer state for one tensor."""
    if numel < BNB_MIN_8BIT_SIZE:
        return 8 * numel
    blocks = -(-numel // BNB_BLOCK)
    return 2 * numel + 2 * 4 * blocks


def adafactor_state_bytes(rows: int, cols: int, elem_bytes: int = 4) -> int:
    """torch.optim.Adafactor's state for one (rows x cols) tensor (cols=1: a vector)."""
    second = rows + cols if rows > 1 and cols > 1 else rows * cols
    return second * elem_bytes + 4


def special_state_bytes(kind: str, pieces: Sequence[tuple[int, int]], elem_bytes: int = 4) -> int:
    if kind == "8bit":
        return sum(bnb_8bit_state_bytes(r * c) for r, c in pieces)
    if kind == "factored":
        return sum(adafactor_state_bytes(r, c, elem_bytes) for r, c in pieces)
    raise ValueError(f"unknown optimizer state kind {kind!r}")


def tensor_dims(tensors: Sequence[tuple[str, int]], hidden: int) -> list[tuple[int, int]]:
    """(rows, cols) of each named tensor of pgdoctor.plan.model.rank_tensors: every weight that is
    not a norm is a matrix with the hidden size on one side; norms and biases are vectors."""
    out = []
    for name, n in tensors:
        matrix = (name.endswith(".weight") and "norm" not in name) or name.startswith("embed.")
        out.append((n // hidden, hidden) if matrix and n % hidden == 0 else (n, 1))
    return out


def bytes_per_param_line(param: float, grad: float, master: float, state: float, optimizer: str) -> str:
    """The bytes-per-parameter convention in words: 'B/param: 2 weights + 2 grads + 4 master + 8
    optimizer (adamw) = 16 (ZeRO paper's 2+2+12; Megatron's bf16 with fp32 grads is 18)'."""

    def f(x: float) -> str:
        return f"{x:.4g}"

    total = param + grad + master + state
    return (
        f"{f(param)} weights + {f(grad)} grads + {f(master)} fp32 master + {f(state)} optimizer "
        f"({optimizer}) = "
        f"{f(total)} B per trained parameter"
    )
