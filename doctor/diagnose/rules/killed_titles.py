"""A thread's title (the whole paste, one short line: vocabulary's _title) that says the training or the
process was killed, in a person's words and without the signal's name or number.

Threads about a SIGKILLed run often keep nothing but their title, since the shell printed one word
("Killed", zh_CN "已杀死") and the program nothing: "Process keeps getting killed", "Program killed
unexpectedly", "\"Killed\" in training", "Killed!!", "`Killed` if I use FSDPTrainer",
"自动被killed且无任何报错信息" (killed on its own with no error message),
"训练时内存逐渐变大，最后被kill掉了" (the memory grew during training until it was killed),
"训练过程中途总是退出（killed），没任何错误提示". What was killed (the process, the program, the training, the
job) within a few words of the passive "killed" in one clause (vocabulary's _GAP), or the shell's word quoted
as the whole subject, is a run that the kernel's OOM killer (or a cgroup's, or a scheduler's memory limit)
ended: RUN121 at tier 1, as vocabulary's "words: killed" reads the signal's own words in a title
(SIGKILL, "exit code -9").

Never read: a question or a request (a "?" or vocabulary's _ASKING: "Why was my training killed?", "How to
kill the process"), a setting or a fix (_TITLE_ASIDE), a run that was not killed or a process that cannot be
killed ("zombie processes are not killed", "can't kill the training process"), a kill that names another
cause (a timeout, a hang, the watchdog, a crash signal, Ctrl+C, SIGTERM, the GPU's memory: those rows read
them), and a kill that a person did ("I killed the process", "kill the job").
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.vocabulary import _GAP, _TITLE_ASIDE, _title
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_WHAT = (
    r"\bprocess(?:es)?\b|\bprograms?\b|\btraining\b|\btrain\b|\bjobs?\b|\bscripts?\b|\bpython\b|\bworkers?\b|"
    r"\bruns?\b|\btrainer\b|fine-?tun\w*|\bpretrain\w*|\btasks?\b"
)
_PASSIVE = r"(?:(?:is|was|were|are|gets?|got|getting|keeps? getting|being|been|be|always|suddenly) )*killed\b"
_CJK_WHAT = r"进程|训练|程序|任务|微调"
_CJK_KILLED = r"被\s*(?:kill(?:ed)?|杀死?|杀掉)|kill掉|\(killed\)|（killed）|已杀死"
_KILLED_TITLE = lazy_re.compile(
    rf"(?i)(?:{_WHAT}){_GAP}{_PASSIVE}|"
    # the shell's word as the whole subject: '"Killed" error in the training process', "Killed!!"
    # or its condition: "`Killed` if I use FSDPTrainer or TensorParallelTrainer", "Killed with 8 GPUs"
    r"\A\W*killed\W*(?:(?:error|during|while|when|in|on|after|if|with|using|at|before)\b.*)?\Z|"
    rf"(?:{_CJK_WHAT}).{{0,16}}?(?:{_CJK_KILLED})|(?:{_CJK_KILLED}).{{0,12}}?(?:{_CJK_WHAT}|无任何报错|没有报错)|"
    r"自动被\s*killed"
)
# a kill the title gives another cause for, one that was not done, or one a person did
_OTHER = lazy_re.compile(
    r"(?i)\?|？|time ?out|timed out|watchdog|\bhangs?\b|\bhung\b|\bstuck\b|deadlock|卡住|超时|segfault|"
    r"segmentation|sigsegv|sigterm|sigint|sigabrt|ctrl|keyboard|\bcuda\b|\bgpu memory\b|\bvram\b|显存|"
    r"\bnot\b|n't\b|\bnever\b|\bcannot\b|\bunable\b|zombie|orphan|\bremain\w*|still running|没有被|未被|无法|"
    r"\bi killed\b|\bwe killed\b|\bto be killed\b|\bshould\b|\bkill -|\bkillall\b|\bpkill\b|"
    # the active voice, the run killing something else ("the run killed it")
    r"\bkilled (?:it|them|the|my|a|an|all|our|this|that|its|other)\b"
)


def _killed_title(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    text = hit.text
    if not _title(hit) or _TITLE_ASIDE.search(text) or _OTHER.search(text):
        return None
    return [
        row.event(
            hit,
            f'the report says the run was killed ("{m.group(0).strip()}"), with no error of its own: most '
            "likely the kernel's or a cgroup's OOM killer (or a scheduler's memory limit) sent SIGKILL",
            {"signal": "SIGKILL", "inferred_from": "title", "read_as": "title"},
            tier=1,
            dedupe=(row.code, "killed_title"),
        )
    ]


SIGNATURES = (
    Signature(
        "title: the run was killed",
        _KILLED_TITLE,
        _killed_title,
        C.HOST_OOM_KILLED.code,
        tier=1,
        anchors=(b"illed", b"ILLED", b"kill", "被杀".encode(), "已杀死".encode()),
        worth=(rb"(?i:killed)", rb"kill", "被杀".encode(), "已杀死".encode()),
        words=("killed", "kill", "被杀", "已杀死"),
        anchor_from="the passive 'killed' (case aside) or the CJK words of a kill",
        examples=(
            "Process keeps getting killed",
            "Program killed unexpectedly",
            '"Killed" in training',
            "自动被killed且无任何报错信息",
            "训练时内存逐渐变大，最后被kill掉了",
            "训练进程被杀死",
        ),
    ),
)
parse = gated_reader(SIGNATURES)
