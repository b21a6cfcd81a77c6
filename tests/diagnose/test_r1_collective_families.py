"""Collective hangs stated in words: titles that name the collective as a pasted call, in Chinese, or by
DDP / FSDP (rules/hang_titles.py).

Real lines carry their thread's URL. The others are written from the message's parts as the sources
print them (marked "synthetic"): Accelerate's `wait_for_everyone` (accelerate/state.py, a
torch.distributed.barrier()), and the phrasings of titles of the same families.
"""

from __future__ import annotations

import pytest

from pgdoctor.diagnose.api import diagnose_sources


def _first(text: str) -> tuple[object, object]:
    real = [f for f in diagnose_sources([("-", text)]) if f.severity in ("warn", "fail")]
    return (real[0].category, real[0].code) if real else (None, None)


TIMEOUT = ("collective_timeout", "RUN151")


@pytest.mark.parametrize(
    "title",
    [
        # https://github.com/pytorch/pytorch/issues/54059 (a title read before, kept)
        "Using torch.distributed.barrier() makes the whole code hang",
        # synthetic: the call with its module path after the hang's word
        "Training stuck at dist.barrier()",
        "Process hangs when using torch.distributed.barrier()",
        "Hang on dist.all_reduce with multiple GPUs",
        "Deadlock in torch.distributed.all_gather_into_tensor",
        "Training hangs at accelerator.wait_for_everyone()",
        # synthetic: Chinese titles
        "程序在all_reduce处卡住",
        "训练过程中卡在 barrier",
        "dist.barrier() 死锁",
        "NCCL 超时",
        "all_reduce超时",
        "训练时 dist.barrier() 超时报错",
        # synthetic: DDP / FSDP named for their collectives
        "DDP hangs during validation",
        "FSDP stuck after a few hundred steps",
        "DDP训练卡住",
    ],
)
def test_collective_hang_titles(title: str) -> None:
    assert _first(title) == TIMEOUT


@pytest.mark.parametrize(
    "title",
    [
        # a start-up, another waiter, a warning or a value: not a collective's hang
        "初始化 NCCL 超时",
        "NCCL 初始化卡住",
        "store based barrier 超时",
        "DDP hangs with num_workers > 0 in the DataLoader",
        "DDP stuck at loss 0.69",
        "DDP hangs while loading the checkpoint",
        "dist.barrier() may hang if the device is not set",
        "How to avoid a hang in dist.barrier()?",
        "DDP init hangs",
    ],
)
def test_not_collective_hang_titles(title: str) -> None:
    assert _first(title) != TIMEOUT
