"""Hangs of several GPUs told in a person's sentences that point at the platform's peer-to-peer path
(rules/env_prose.py): an inference engine that hangs once it spans several GPUs, a job that runs on one GPU
and hangs on several with no error.

Real titles carry their thread's URL; the others (marked "synthetic") are other phrasings of the same
families, and near misses that another row reads or that stay silent.
"""

from __future__ import annotations

import pytest

from pgdoctor.diagnose.api import diagnose_sources


def _first(text: str) -> tuple[object, object]:
    real = [f for f in diagnose_sources([("-", text)]) if f.severity in ("warn", "fail")]
    return (real[0].category, real[0].code) if real else (None, None)


P2P = ("driver_env", "RUN590")


@pytest.mark.parametrize(
    "text",
    [
        # https://github.com/vllm-project/vllm/issues/8087
        "[Bug]: when tensor-parallel-size>1，Stuck",
        # https://github.com/vllm-project/vllm/issues/2466
        "vLLM Distributed Inference stuck when using multi -GPU",
        # https://github.com/PaddlePaddle/PaddleOCR/issues/3234
        "请问下 训练的时候 单卡正常多卡的就卡在加载数据上 不动了 无法下面进行训练 没有报错",
        # synthetic: the same families in other words
        "SGLang server hangs with --tp 2, no error message",
        "vllm serve hangs forever with tensor_parallel_size=4",
        "Works fine on a single GPU but hangs on multiple GPUs.",
        "Multi-GPU run never starts\nWith 2 GPUs it just hangs, although it runs OK with one GPU.",
        "单卡推理没问题，多卡就卡住",
    ],
)
def test_a_multi_gpu_hang_in_words_is_the_platforms_p2p(text: str) -> None:
    assert _first(text) == P2P


@pytest.mark.parametrize(
    "text",
    [
        # a hang during training after steps ran: a collective a rank never joined (hang_titles)
        "Struk during training on multi-GPUs with deepspeed, but work with single GPU",
        "多卡训练卡住，单卡GPU利用率为0，其余100%",
        # a denial, a warning, a download, several machines, a death, a board named
        "vLLM no longer hangs with tensor-parallel-size 2",
        "vLLM may hang with tensor-parallel-size 2 if NCCL_P2P_DISABLE is unset",
        "vllm stuck downloading the model with tp=2",
        "vLLM stuck with tensor parallel across multiple nodes",
        "vLLM with tensor_parallel_size=4 hangs after CUDA out of memory",
        # stops at random during training: not a start that never completes
        "Training on 2 GPU's work fine - On 3 GPU's training stops randomly",
        # an engine on one GPU
        "vLLM hangs when generating long outputs",
    ],
)
def test_near_misses_are_not_read_as_the_platforms_p2p(text: str) -> None:
    assert _first(text) != P2P


def test_a_program_log_is_not_read_as_prose() -> None:
    log = (
        "INFO 03-28 21:38:23 llm_engine.py:87] Initializing an LLM engine with tensor_parallel_size=2\n"
        "INFO 03-28 21:38:30 custom_all_reduce.py:240] Registering 2275 cuda graph addresses\n"
        "the engine is stuck with tensor-parallel-size=2 here\n"
    )
    assert _first(log) != P2P
