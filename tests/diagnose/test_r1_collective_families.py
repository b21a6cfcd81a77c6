"""Collective hangs and desyncs stated in words: titles that name the collective as a pasted call, in
Chinese, or by DDP / FSDP (rules/hang_titles.py); titles that name the data's split as uneven across the
devices (rules/desync_hints.py); words that say some ranks left the loop before the others, in a trainer's
own report or a title (rules/desync_texts.py).

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
MISMATCH = ("collective_mismatch", "RUN201")


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


@pytest.mark.parametrize(
    "title",
    [
        # https://github.com/QwenAudio/CosyVoice/issues/297 (the title part, without the quoted error)
        "The uneven distribution of the dataset to GPUs can cause the error",
        # synthetic: the same in other words
        "Unequal split of samples across ranks leads to hang",
        "Different number of samples on each GPU causes NCCL timeout",
        "多卡训练时各卡数据量不一致导致卡住",
        "每个rank的batch数不同",
    ],
)
def test_uneven_data_titles(title: str) -> None:
    assert _first(title) == MISMATCH


@pytest.mark.parametrize(
    "title",
    [
        # a class imbalance, results that differ: not the ranks' data
        "Imbalanced distribution of data in classification",
        "The results are different on different GPUs",
        "这两个模型的结果不同",
    ],
)
def test_not_uneven_data_titles(title: str) -> None:
    assert _first(title) != MISMATCH


# https://github.com/QwenAudio/CosyVoice/issues/1727: the join wrapper's warning beside gloo's monitored
# barrier
COSYVOICE_JOIN = (
    "[rank1]:[E ProcessGroupGloo.cpp:144] Rank 1 successfully reached monitoredBarrier, but received errors "
    "while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.\n"
    "2025-12-19 09:03:13,924 WARNING Rank 1 model.join() exit failed, some ranks may have exited early: "
    "Rank 1 successfully reached monitoredBarrier, but received errors while waiting for send/recv from "
    "rank 0. Please check rank 0 logs for faulty rank.\n"
    " Original exception:\n"
    "[../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:133] Timed out waiting 1800000ms for send "
    "operation to complete\n"
)


def test_ranks_left_early_outranks_the_barrier_timeout() -> None:
    assert _first(COSYVOICE_JOIN) == MISMATCH
    # without the trainer's words the monitored barrier's timeout is what the log says
    alone = "\n".join(ln for ln in COSYVOICE_JOIN.splitlines() if "exited early" not in ln)
    assert _first(alone) == ("collective_timeout", "RUN153")


@pytest.mark.parametrize(
    "text",
    [
        # synthetic titles
        "One rank finishes early and others hang in allreduce",
        "其他卡已经提前结束了，剩下的卡住",
    ],
)
def test_ranks_left_early_words(text: str) -> None:
    assert _first(text) == MISMATCH


@pytest.mark.parametrize(
    "text",
    [
        # a rank or a process that died, a server, one rank's normal first finish
        "One of the ranks exited early with exit code 1",
        "Embedded Postgres process exited early (code 1)",
        "The dev server exited early",
        "Rank 0 finished first and saved the checkpoint",
    ],
)
def test_not_ranks_left_early(text: str) -> None:
    assert _first(text) != MISMATCH


@pytest.mark.parametrize(
    ("title", "code"),
    [
        # synthetic titles: DDP's unused parameters with the failure they cause (RUN202), and the ranks'
        # collectives named as disagreeing (RUN201)
        ("DDP error with unused parameters", "RUN202"),
        ("find_unused_parameters 报错", "RUN202"),
        ("unused parameters cause DDP to hang", "RUN202"),
        ("NCCL collective mismatch between ranks", "RUN201"),
        ("Ranks call collectives in a different order", "RUN201"),
        ("Desync in all_gather across 8 GPUs", "RUN201"),
    ],
)
def test_desync_named_in_a_title(title: str, code: str) -> None:
    assert _first(title) == ("collective_mismatch", code)


@pytest.mark.parametrize(
    "text",
    [
        # DDP's warning that it found none (a decoy of the released corpus), a question, a setting, a
        # player's desync, the debug switch
        "Warning: find_unused_parameters=True was specified in DDP constructor, but did not find any unused "
        "parameters in the forward pass.",
        "unused parameters in DDP",
        "How to fix unused parameters error in DDP?",
        "Set find_unused_parameters=True to avoid the error",
        "Audio and video desync in output",
        "NCCL_DESYNC_DEBUG=1",
    ],
)
def test_not_desync_titles(text: str) -> None:
    assert _first(text)[0] != "collective_mismatch"
