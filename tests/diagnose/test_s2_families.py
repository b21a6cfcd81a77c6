"""s2 of 2026-12-07: titles that name the kill signal in a person's sentence (rules/kill_signal_titles.py).

vocabulary's "words: killed" read "SIGKILL" in a title only where the line held none of a person's words
(its _PROSE), and killed_titles reads no question, so two real titles of runs the OOM killer ended were
silent: "Why does my pytorch distributed training (DDP) code send a SIGKILL signal on its own on most
version of pytorch 1.6.0, 1.7.0, 1.7.1?" (https://github.com/pytorch/pytorch/issues/54823) and
"启动训练后被kill信号杀死了进程？" (https://github.com/extreme-bert/extreme-bert/issues/5). The other titles
below are written in the same shapes (the signal as SIGKILL, "signal 9", "kill signal", kill信号; a
statement, a "why" question, the CJK passive), not taken from threads. A question about how a launcher or
the signal behaves, a handler, a signal a person sends, and one that did not come stay silent; a kill that
names another cause keeps that cause's class.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import root_finding

KILL_SIGNAL_TITLES = (
    # https://github.com/pytorch/pytorch/issues/54823
    "Why does my pytorch distributed training (DDP) code send a SIGKILL signal on its own on most version of "
    "pytorch 1.6.0, 1.7.0, 1.7.1?",
    # https://github.com/extreme-bert/extreme-bert/issues/5
    "启动训练后被kill信号杀死了进程？",
    "My training gets SIGKILL after a few epochs",
    "Why is my DDP job receiving SIGKILL during evaluation?",
    "为什么训练到一半收到SIGKILL信号",
    "训练中途进程被kill信号杀掉",
    "Our workers receive signal 9 after the first epoch",
    "My fine-tuning run keeps getting a kill signal",
)

SILENT = (
    "Does torchrun send SIGKILL to the workers?",
    "Can SIGKILL be caught?",
    "SIGKILL handler not called",
    "How to handle SIGKILL in my training script",
    "I send SIGKILL to the process but it stays",
    "we use signal 9 to stop the job",
    "My job never gets SIGKILL",
    "进程会被kill信号杀死吗？",
)

OTHERS = (("Why does my training get SIGKILL after CUDA out of memory?", "cuda_oom"),)
# a kill after another cause is not read as the kill signal's title (that cause's rows, or none, answer)
NOT_THE_KILL = (
    "My job got SIGKILL after NCCL timeout",
    "Why does my run get SIGKILL after a segfault in NCCL?",
)


@pytest.mark.parametrize("title", KILL_SIGNAL_TITLES)
def test_a_kill_signal_title_names_the_kill(title: str) -> None:
    root = root_finding(title + "\n")
    assert root is not None and root.code == "RUN121", (title, root)
    assert root.facts.get("read_as") == "title" and root.facts.get("signal") == "SIGKILL", root.facts


@pytest.mark.parametrize("line", SILENT)
def test_near_misses_stay_silent(line: str) -> None:
    assert root_finding(line + "\n") is None, line


@pytest.mark.parametrize(("line", "category"), OTHERS)
def test_other_causes_keep_their_class(line: str, category: str) -> None:
    root = root_finding(line + "\n")
    assert (root.category if root else None) == category, (line, root)


@pytest.mark.parametrize("line", NOT_THE_KILL)
def test_a_kill_after_another_cause_is_not_read_as_the_kill(line: str) -> None:
    root = root_finding(line + "\n")
    assert root is None or root.facts.get("read_as") != "title" or root.code != "RUN121", (line, root)
