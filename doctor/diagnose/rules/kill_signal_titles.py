"""A thread's title (the whole paste, one short line: vocabulary's _title) that names the kill signal in a
person's sentence: a statement or a "why" question about a run that SIGKILL ended.

vocabulary's "words: killed" reads the signal's name in a title, but only where the line has none of a
person's words (its _PROSE: "my", "we", "I"), and killed_titles reads the passive "killed" but no
question. Threads about a run the kernel's or a cgroup's OOM killer ended are titled in just those shapes:
"Why does my pytorch distributed training (DDP) code send a SIGKILL signal on its own on most version of
pytorch 1.6.0, 1.7.0, 1.7.1?" (pytorch/pytorch#54823), "启动训练后被kill信号杀死了进程？" (the process was
killed by a kill signal after training started, extreme-bert/extreme-bert#5), "My training gets SIGKILL
after a few epochs", "为什么训练到一半收到SIGKILL信号". The signal is named as SIGKILL, "signal 9",
"kill signal" or
"kill信号"/"信号9"; RUN121 at tier 1, as the other killed titles.

A question is read only where it asks why the kill happened ("why", 为什么/为何/怎么回事) or states it in the
CJK passive (被...杀/被kill): "Does torchrun send SIGKILL to the workers?" asks how a launcher behaves. Never
read: a setting, a retry or a request (_TITLE_ASIDE), a kill that names another cause (a timeout, a hang,
a crash signal, SIGTERM, the GPU's memory: killed_titles' _OTHER), a signal a person or a launcher sends on
purpose ("I send SIGKILL", "kill -9", "sends SIGKILL to the workers", "instead of SIGTERM"), a handler,
and a signal that cannot be caught ("catch SIGKILL", "trap SIGKILL").
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.vocabulary import _TITLE_ASIDE, _title
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_SIGNAL = lazy_re.compile(r"(?i)\bsigkill\b|\bsignal 9\b|\bkill signals?\b|kill\s*信号|信号\s*9")
# what else the title blames: that cause's rows read it
_OTHER = lazy_re.compile(
    r"(?i)time ?out|timed out|watchdog|\bhangs?\b|\bhung\b|\bstuck\b|deadlock|卡住|卡死|超时|segfault|"
    r"segmentation|sigsegv|sigbus|sigabrt|bus error|sigterm|sigint|ctrl|keyboard|\bgpu memory\b|\bvram\b|"
    r"显存|cuda out of memory"
)
# a signal somebody sends, handles or cannot catch on purpose, or one that did not come: no run was
# killed, and the title is owned here so that the net under the families does not read the bare name
_ON_PURPOSE = lazy_re.compile(
    r"(?i)\bnot\b|n't\b|\bnever\b|\bcannot\b|\bunable\b|无法|没有被|未被|"
    r"\b(?:i|we|you) (?:send|sent|use|used|issue|issued)\b|\bkill -|\bkillall\b|\bpkill\b|"
    r"\bsends? (?:a |the )?(?:sigkill|kill signal|signal 9)(?: signal)? to\b|\binstead\b|"
    r"handl\w*|\bcatch\w*|\bcaught\b|\btrap\w*|\bhook\w*|\bgraceful\w*|\bpropagat\w*|\bforward\w*|会被|吗"
)
_QUESTION = lazy_re.compile(r"\?|？")
_WHY = lazy_re.compile(r"(?i)\bwhy\b|为什么|为何|怎么回事|被\s*(?:kill|杀|sigkill)")


def _kill_signal_title(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    text = hit.text
    if not _title(hit) or _OTHER.search(text):
        return None
    if _TITLE_ASIDE.search(text) or _ON_PURPOSE.search(text):
        return []
    if _QUESTION.search(text) and not _WHY.search(text):
        return []
    return [
        row.event(
            hit,
            f'the report says the run got the kill signal ("{m.group(0).strip()}"), with no error of its '
            "own: most likely the kernel's or a cgroup's OOM killer (or a scheduler's memory limit) sent "
            "SIGKILL",
            {"signal": "SIGKILL", "inferred_from": "title", "read_as": "title"},
            tier=1,
            dedupe=(row.code, "killed_title"),
        )
    ]


SIGNATURES = (
    Signature(
        "title: the kill signal in a person's words",
        _SIGNAL,
        _kill_signal_title,
        C.HOST_OOM_KILLED.code,
        tier=1,
        anchors=(
            b"SIGKILL",
            b"sigkill",
            b"Sigkill",
            b"SigKill",
            b"ignal 9",
            b"IGNAL 9",
            b"ill signal",
            b"ILL SIGNAL",
            "信号".encode(),
        ),
        worth=(rb"(?i:sigkill|signal 9|kill signal)", "信号".encode()),
        words=("sigkill", "signal", "信号"),
        anchor_from="the signal's name, 'signal 9', 'kill signal' (case aside) or the CJK 信号",
        examples=(
            "Why does my pytorch distributed training (DDP) code send a SIGKILL signal on its own?",
            "启动训练后被kill信号杀死了进程？",
            "My training gets SIGKILL after a few epochs",
            "Our job receives signal 9 during evaluation",
        ),
    ),
)
parse = gated_reader(SIGNATURES)
