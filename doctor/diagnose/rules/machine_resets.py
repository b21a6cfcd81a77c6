"""The whole machine went down under GPU load: a thread's title that says so, Windows' Kernel-Power event.

A machine that restarts or powers off while its GPUs work leaves nothing in the job's log (the host went down
with it). Threads about it keep their title: "PC restarts without warning while Multi-GPU training",
"Windows 10 Computer dies suddenly with 3 or 4 GPUs (but not 1 or 2)", "System shutdown with Multiple GPUs
training", "多卡训练时电脑自动重启". Read in a title (the whole paste, or its first line above a log:
vocabulary's _title / _head_title) where the machine (PC, computer, machine, system, server, workstation,
Ubuntu, Windows, 电脑, 主机, 服务器) comes before what it did (restarts, reboots, shuts down, powers off,
turns off, dies, 重启, 关机, 断电) within a few words in one clause, and the title names GPUs (GPUs,
multi-GPU, a GPU's model, 多卡, 显卡). A program cannot power a machine off: the power supply could not
carry the GPUs' peaks, or a part passed its shutdown temperature (RUN665, tier 1).

Windows records the same as Kernel-Power event 41, "The system has rebooted without cleanly shutting down
first. This error could be caused if the system stopped responding, crashed, or lost power unexpectedly."
(RUN665, tier 1: read anywhere in a paste).

Never read: a question or a request (vocabulary's _ASKING), a setting or a fix (_TITLE_ASIDE), a command or
a script ("restart the server with 4 GPUs": the verb before the machine; "shutdown script", "after training
finishes"), a service's or a program's server or host ("inference server shuts down", "Ray head node"), a
Jupyter kernel that dies, the training that restarts ("training restarts from epoch 0 on 4 GPUs").
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.vocabulary import _LOGGED, _TITLE_ASIDE, _head_title, _title
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_MACHINE = (
    r"(?<![\w-])(?:pc|computer|machine|workstation|system|server|ubuntu|windows(?: \d+)?|linux|"
    r"(?:whole|entire) (?:box|rig|node))(?![\w-])|电脑|主机|服务器|机器"
)
_RESET = (
    r"\b(?:restart(?:s|ed|ing)?|reboot(?:s|ed|ing)?|shut(?:s|ting)? ?(?:down|off)|shutdown|"
    r"power(?:s|ed)? (?:off|down)|turn(?:s|ed)? off|dies|died|goes dark)\b|重启|关机|断电"
)
# between the machine and what it did: a few words ("suddenly", "without warning", "automatically"), no clause
_BETWEEN = r"(?:[\s,]+(?!(?:and|when|while|with|after|during|then|to)\b)[\w-]+){0,3}?\s*|[^。，,.;:!?]{0,8}?"
_TITLE_RESET = lazy_re.compile(rf"(?i)(?:{_MACHINE})(?:{_BETWEEN})(?:{_RESET})")
_GPUS = lazy_re.compile(
    r"(?i)(?<![a-z])gpus?\b|multi-?gpu|graphics cards?|video cards?|多卡|显卡|双卡|"
    r"titan|geforce|quadro|tesla|(?<![a-z])[rg]tx ?\d|(?:(?<![a-z0-9])|(?<=\dx))[vah]100"
)
# not the machine's own reset: a command or a script, a program's server, a reset that came after the work
_NOT_RESET = lazy_re.compile(
    r"(?i)\b(?:script|command|hook|gracefully|cleanly|properly|manually|how|inference|http|api|rpc|grpc|"
    r"parameter|tensorboard|jupyter|kernel|ray|docker|container|workers?|training (?:re)?starts?|"
    r"after (?:the )?(?:training|job|run) (?:is )?(?:finish|complet|end|done)\w*)\b"
)


def _title_reset(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    text = hit.text
    if not (_title(hit) or _head_title(hit)) or _LOGGED.search(text) or _TITLE_ASIDE.search(text):
        return None
    if _NOT_RESET.search(text):
        return None
    if not _GPUS.search(text):
        return None
    return [
        row.event(
            hit,
            f'the report says the machine itself went down under GPU load ("{m.group(0)}"): no program can '
            "power a machine off; the power supply could not carry the GPUs' peaks, or a part passed its "
            "shutdown temperature",
            {"kind": "machine_reset", "inferred_from": "title", "read_as": "title"},
            dedupe=(row.code, "machine_reset"),
        )
    ]


_KERNEL_POWER = lazy_re.compile(
    r"The system has rebooted without cleanly shutting down first(?:\.\s*This error could be caused if the "
    r"system stopped responding, crashed, or lost power unexpectedly)?"
)


def _kernel_power(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "Windows logged an unclean reboot (Kernel-Power event 41): the machine stopped or lost power "
            "unexpectedly; under GPU load, most often the power supply",
            {"kind": "machine_reset", "source": "Kernel-Power 41"},
            dedupe=(row.code, "machine_reset"),
        )
    ]


_CJK = ("重启", "关机", "断电")
SIGNATURES = (
    Signature(
        "title: the machine reset under gpu load",
        _TITLE_RESET,
        _title_reset,
        C.MACHINE_RESET_UNDER_GPU_LOAD.code,
        tier=1,
        anchors=(
            b"estart",
            b"ESTART",
            b"eboot",
            b"EBOOT",
            b"hut down",
            b"hutdown",
            b"HUTDOWN",
            b"hutting down",
            b"hut off",
            b"huts down",
            b"huts off",
            b"ower off",
            b"owers off",
            b"owered off",
            b"ower down",
            b"owers down",
            b"urn off",
            b"urns off",
            b"urned off",
            b" dies",
            b" died",
            b"oes dark",
            *(w.encode() for w in _CJK),
        ),
        worth=(
            rb"(?i:restart|reboot|shut ?(?:down|off)|shutdown|shuts (?:down|off)|shutting down|"
            rb"power(?:s|ed)? (?:off|down)|turn(?:s|ed)? off|\bdie[sd]\b|goes dark)",
            *(w.encode() for w in _CJK),
        ),
        words=("restart", "reboot", "shut", "power", "turn", "dies", "died", "goes dark", *_CJK),
        anchor_from="what the machine did, in its usual spellings",
        examples=(
            "PC restarts without warning while Multi-GPU training",
            "Windows 10 Computer dies suddenly with 3 or 4 GPUs (but not 1 or 2)",
            "System shutdown with Multiple GPUs training",
            "多卡训练时电脑自动重启",
        ),
    ),
    Signature(
        "windows kernel-power 41",
        _KERNEL_POWER,
        _kernel_power,
        C.MACHINE_RESET_UNDER_GPU_LOAD.code,
        tier=1,
        anchors=(b"The system has rebooted without cleanly shutting down first",),
        words=("rebooted without cleanly",),
    ),
)
parse = gated_reader(SIGNATURES)
