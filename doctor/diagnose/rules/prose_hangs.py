"""A hang told in sentences: a thread's title or a short paste of a person's prose (a bug report's few
lines, a PR's description) that says where the ranks hang and why, with no program line to read.

A hang prints nothing, so many threads about one hold only the person's account of it. The title rows
(hang_titles, vocabulary's _title) read one short line; an account of two to eight sentences was not read at
all, nor a one-line description longer than a title. Here a line is read when the paste is such an account:
at most `_MAX_LINES` lines, none of them a program's record (a timestamp, a level, a source location, a
traceback frame: `_PROGRAM`), each at most `_MAX_CHARS` characters.

What they say, by family:
- One rank takes another path and the others wait ("If the predictions in different ranks have different
  lengths, the AUC metric will hang up when doing all_gather", "one rank first consumes its data loader,
  and then enters compute_validation_loss and stuck on tot_loss.reduce ... other ranks are still training",
  "当一张卡中图像有正样本，另一张卡的所有图像都没有正样本，那么就会卡住"; "only the main process enters
  the evaluation and the others hang", the resolution of transformers#31532): the ranks called different
  collectives or different numbers of them (uneven data, a branch on a rank's data), RUN201 at tier 1. Not
  where the rank that left died (an error, OOM, a crash, a kill: those rows read it).
- A pipeline's point-to-point exchange that deadlocks ("Pipeline Parallelism deadlock with
  variable_seq_lengths=True and batch_p2p_comm=True (PP>=4)", Megatron-LM#5100; "rank0 send tensor to
  rank2, success / rank1 send tensor to rank3, hang", Megatron-LM#620): one stage posts a send or a receive
  that its peer posts in another order or on another group, so they never pair: RUN201. A P2P hang of the
  transport itself (GeForce boards, IOMMU, a driver) says its hardware and is platform_signs'; a start-up
  hang is the start-up's.
- Ranks named as hanging beside ranks that went on ("... ranks 0 and 3 don't return" under the prints of
  ranks 1 and 2): the ranks disagree on the collectives they call, RUN201.
- A collective that hangs or times out, said in one of the sentences ("We observed the script only gets
  stuck with NCCL backend", torchrec#850; "it fails because of an nccl 600 seconds timeout when loading the
  checkpoint", fairseq2#1485): hang_titles' collective-hang words and vocabulary's collective-timeout words,
  read in every sentence of such an account, RUN151 at tier 1, with those rows' exclusions (a setting, a
  warning that it may hang, a start-up).
- A hang right after DDP's first rebuild of its gradient buckets, in a person's words around the quoted line
  ("No error, but hangs after output `... mmcv - INFO - Reducer buckets have been rebuilt in this
  iteration.`", mmdetection#7976). The line is printed once, after the first iteration, by DDP's forward
  (torch/nn/parallel/distributed.py 1.7+: `if self.reducer._rebuild_buckets(): logger.info("Reducer buckets
  have been rebuilt in this iteration.")`; mmcv/parallel/distributed.py's MMDistributedDataParallel the same
  through print_log): a hang after it is the second iteration's gradient all-reduce never completing on
  some rank, RUN151. Also after NCCL's "Init COMPLETE" / "Connected all rings" quoted in the sentence. This
  row reads the sentence in any paste (the person's words are in the line), not the logged line alone,
  which healthy runs print.
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.hang_titles import _ANCHORS as _TITLE_ANCHORS
from pgdoctor.diagnose.rules.hang_titles import _CJK_HANGS, _COLLECTIVE_HANG, _MAY, _STARTUP
from pgdoctor.diagnose.rules.hang_titles import _WORDS as _TITLE_WORDS
from pgdoctor.diagnose.rules.hang_titles import _WORTH as _TITLE_WORTH
from pgdoctor.diagnose.rules.vocabulary import _ASKING, _TIMEOUT_WORD, _TITLE_ASIDE, _TITLE_COLLECTIVE, _near
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_MAX_LINES = 8
_MAX_CHARS = 600
# a program's record, not a person's sentence: a timestamp, a level word, a source location, a traceback
_PROGRAM = lazy_re.compile(
    r"\d\d:\d\d:\d\d|\b(?:INFO|WARNING|WARN|DEBUG|ERROR|CRITICAL|FATAL)\b|\.(?:py|cc|cpp|cu|h|hpp):\d|"
    r"^\s*File \"|Traceback \(most recent|^\s*[\w.]*(?:Error|Exception):|^\s*\[[EWIF]\d{0,4}\b|^\s*#\d+ "
)
_HANG_EN = (
    r"\bhang(?:s|ing|ed)?\b|\bhung\b|\bstuck\b|\bdeadlock(?:s|ed)?\b|\bfreez(?:e|es|ing)\b|"
    r"\b(?:don't|do not|doesn't|does not|never|won't|didn't|did not) (?:return|finish|proceed|complete)\b"
)
_HANG_CJK = "|".join(_CJK_HANGS)
_HANG = rf"{_HANG_EN}|{_HANG_CJK}"
_HANG_RE = lazy_re.compile(rf"(?i){_HANG}")
_RANKS = r"(?:ranks|gpus|processes|devices|cards|workers|replicas|nodes)"
_RANK = r"(?:rank|gpu|process|device|card|worker|replica|node)"
# one rank alone runs a step the others skip: the main process's evaluation, a logging or saving branch
_ALONE = (
    r"(?i:\bonly (?:on |in |by )?(?:the )?(?:rank ?0|rank zero|main (?:process|rank)|master (?:process|rank)|"
    r"local[ _]rank ?0|first rank|one (?:rank|gpu|process))\b|\bis_(?:local_)?main_process\b|"
    r"\bif (?:args\.|self\.)?(?:local_)?rank ?== ?0\b)|"
    r"只有 ?(?:主进程|rank ?0|0号卡|主卡)"
)
_ALONE_RE = lazy_re.compile(_ALONE)
# the ranks differ: in data, in what they hold, or one rank does another thing than the others
_DIFFER = lazy_re.compile(
    rf"(?i)\bdifferent (?:lengths?|sizes?|shapes?|numbers? of \w+|amounts? of \w+)\b.{{0,40}}?"
    rf"\b(?:in|on|across|between|among|for|per) (?:the |each |all |different |multiple )?{_RANKS}\b|"
    rf"\b(?:in|on|across|between|among) (?:the |each |all |different |multiple )?{_RANKS}\b.{{0,40}}?"
    r"\b(?:have|has|hold|get|gets|with) (?:a )?different (?:lengths?|sizes?|shapes?|numbers?)\b|"
    rf"\b(?:length|size|shape|number of \w+) (?:is|are) different (?:in|on|across|between|among) "
    rf"(?:the |each |all |different )?{_RANKS}\b|"
    rf"\bone (?:of the )?{_RANK}s?\b.{{0,200}}?\b(?:the )?other {_RANKS}\b|"
    rf"\bother {_RANKS}\b.{{0,80}}?\bwait(?:s|ing)? for (?:this|that|the) {_RANK}\b|"
    # (the line reader puts a space between a CJK word and a Latin one: "一个 rank")
    r"(?:一张|某张|其中一张|有的|一个|某个) ?(?:卡|gpu|GPU|rank|进程)[^。？?!！]{0,60}?"
    r"(?:另一张|另一个|其他|其余|别的|有的) ?(?:卡|gpu|GPU|rank|进程)|"
    r"不同(?:的)? ?(?:卡|rank|进程|gpu|GPU)[^。？?!！]{0,20}?(?:不同|不一致|不一样)|" + _ALONE
)
# the rank that went another way died: that failure's row reads it ("dead hanging" is a hang)
_DIED = lazy_re.compile(
    r"(?i)\boom\b|out of memory|\bcrash\w*|\bdie[sd]\b|\bkill(?:s|ed)?\b|segfault|\berrors?\b|"
    r"\bexception|\bexit(?:s|ed)? with|显存|崩溃|报错|挂掉"
)
# a pipeline's point-to-point exchange that deadlocks (not the transport's hardware, not the start-up)
_PIPELINE = (
    r"\bpipeline[ _-]?(?:model[ _-]?)?parallel\w*|\bpipeline schedules?\b|\bpipelin\w* stages?\b|"
    r"\bpp ?(?:>=?|=|>) ?\d|\b1f1b\b|\bbatch_p2p_comm\b|\b_communicate_shapes\b|\bbatch_isend_irecv\b"
)
_PIPELINE_HANG = lazy_re.compile(
    rf"(?i)(?:{_PIPELINE}).{{0,80}}?(?:{_HANG_EN})|(?:{_HANG_EN}).{{0,80}}?(?:{_PIPELINE})"
)
_HARDWARE = lazy_re.compile(
    r"(?i)\brtx\b|\b40[6-9]0\b|\b30[6-9]0\b|\biommu\b|\bacs\b|\bdriver\b|\bnvlink\b|\bpcie\b|\bbios\b"
)
# "rank1 send tensor to rank3, hang" / "ranks 0 and 3 don't return": named ranks that hang
_NAMED_HANG = lazy_re.compile(
    rf"(?i)^\W*\.{{0,3}}\s*(?:and\s+)?ranks?[ :_]?\d+(?:\s*(?:,|and|&)\s*\d+)*\b.{{0,80}}?(?:{_HANG_EN})"
    r"\s*[.!]?\s*$"
)
_RANK_NO = lazy_re.compile(r"(?i)\branks?[ :_]?\s*(\d+)")
_COLLECTIVE_TIMEOUT = _near(_TITLE_COLLECTIVE, _TIMEOUT_WORD)
# quoted lines after which a hang says the next collective never completed
_UP_LINE = (
    r"Reducer buckets have been rebuilt|All DDP processes registered|Init COMPLETE|"
    r"Connected all (?:rings|trees)"
)
# "hangs after output `<the line>`", "stuck right after <the line>"; "<the line> 之后就卡住了"
_HANG_AFTER_UP = lazy_re.compile(
    rf"(?i)(?:{_HANG_EN})\s+(?:\w+\s+){{0,2}}?(?:after|following|once)\b.{{0,200}}?(?:{_UP_LINE})|"
    rf"(?:{_UP_LINE}).{{0,200}}?(?:之后|以后|后)[^。？！]{{0,10}}?(?:{_HANG_CJK})"
)


# a program's short record between the sentences ("epoch 1 done", "step 20 loss 0.31"; "NCCL hang detector:
# enabled"), or commented code and its shapes ("# rank 0 shape ...", "torch.Size([8])"): the paste is a log,
# and a sentence in it is a line of that log, not an account (a person's line under the ranks' own prints,
# "... ranks 0 and 3 don't return", is the named-hang row's shape: printed tensors do not count here)
_RECORD = lazy_re.compile(
    r"(?i)^\s*(?:[\w.-]+\s+){0,3}[\w.-]*\d[\w.-]*(?:\s+[\w.-]+){0,3}\s*$|"
    r"^\s*[a-z][\w .-]{0,40}:\s*(?:enabled|disabled|on|off|true|false|yes|no|none|\d[\w.]*)\s*$|"
    r"^\s*#|\btorch\.Size\("
)


def _prose(hit: Hit) -> bool:
    """Whether the hit line is a sentence of a person's account: the paste is a title or a few sentences,
    none of them a program's record (also none whose timestamp or logger prefix the reader removed: the
    patterns see only the text after it)."""
    lines = [ln for ln in hit.lines if ln.text.strip()]
    if not lines or len(lines) > _MAX_LINES or _ASKING.match(hit.text):
        return False
    if len(lines) > 1 and any(_RECORD.search(ln.text) and not _HANG_RE.search(ln.text) for ln in lines):
        return False
    return all(
        len(ln.text) <= _MAX_CHARS and ln.ts is None and ln.proc is None and not _PROGRAM.search(ln.text)
        for ln in lines
    )


# a hang that may happen or that did not: a warning, a fix, a denial (a sentence of an account names the
# backend and its settings beside the hang, "stuck with NCCL backend and default partitioning", so the
# title's list of setting words is not used for hangs)
_NO_HANG = lazy_re.compile(
    r"(?i)\b(?:no|not|without|never)\s+(?:\w+\s+)?(?:hang|hangs|hanging|stuck|deadlock)"
)


# a hang that could happen, in an account's sentence: hang_titles' _MAY less the words of a fix or a
# debugging session, which a PR's or a report's account of a real hang holds ("debug configuration", "this
# PR fixes")
_MAYBE = lazy_re.compile(
    r"(?i)\b(?:may|might|could|would|potentially|possibly|avoid\w*|prevent\w*|workaround)\b|\bcan\b(?!')"
)


def _aside(text: str, hang: bool = False) -> bool:
    if hang:
        return bool(_MAYBE.search(text) or _NO_HANG.search(text))
    return bool(_TITLE_ASIDE.search(text) or _MAY.search(text))


def _one_line(hit: Hit) -> bool:
    return sum(1 for ln in hit.lines if ln.text.strip()) == 1


def _event(row: Signature, hit: Hit, said: str, why: str, kind: str) -> list[Event]:
    return [
        row.event(
            hit,
            f'the report says {said} ("{hit.text.strip()[:160]}"): {why}',
            # a paste of one line is a thread's title (hang_titles' reading of the same shape says so too)
            {"kind": kind, "inferred_from": "words", "read_as": "title" if _one_line(hit) else "prose"},
            tier=1,
            dedupe=(row.code, kind),
        )
    ]


def _ranks_differ(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    text = hit.text
    if not _prose(hit) or not _HANG_RE.search(text) or _aside(text, hang=True):
        return None
    if _DIED.search(text) or _STARTUP.search(text):
        return None
    return _event(
        row,
        hit,
        "the ranks hang where one of them differs from the others",
        "one rank took another path (other data, a branch on its data, an early end of its batches) and "
        "the others wait in a collective it never joins, or joins with other sizes: make every rank call "
        "the same collectives in the same order with the same shapes",
        # one rank alone took a branch: the kind hang_titles gives the same account in a title
        "one_rank_diverged" if _ALONE_RE.search(text) else "ranks_differ",
    )


def _pipeline_hang(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    text = hit.text
    if not _prose(hit) or _aside(text, hang=True) or _STARTUP.search(text) or _HARDWARE.search(text):
        return None
    if _DIED.search(text):
        return None
    return _event(
        row,
        hit,
        "a pipeline's point-to-point exchange deadlocks",
        "one stage posts a send or a receive that its peer posts in another order, on another group or "
        "with another shape, so the pair never matches and both wait",
        "pipeline_p2p_order",
    )


def _named_hang(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _prose(hit) or _DIED.search(hit.text) or _STARTUP.search(hit.text):
        return None
    said = m.group(0)
    hang = _HANG_RE.search(said)
    hung = {int(n) for n in re.findall(r"\d+", said[: hang.start() if hang else len(said)])}
    others = {int(r.group(1)) for ln in hit.lines if ln is not hit.line for r in _RANK_NO.finditer(ln.text)}
    if not hung or not (others - hung):
        return None
    return _event(
        row,
        hit,
        "some ranks hang while others went on",
        "the ranks that went on passed a collective (or a send) that the others still wait in, or called "
        "one the others never call",
        "named_ranks_hang",
    )


def _collective_words(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    text = hit.text
    hang = bool(_HANG_RE.search(m.group(0)))
    if len(hit.lines) < 2 or not _prose(hit) or _aside(text, hang) or _STARTUP.search(text):
        return None  # a title alone is hang_titles' and vocabulary's
    return _event(
        row,
        hit,
        "a collective hangs or times out",
        "a collective that never completes on every rank, what the process group's watchdog reports as a "
        "timeout",
        "collective_hang",
    )


def _hang_after_up(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if _ASKING.match(hit.text) or _MAY.search(hit.text.split("`")[0]):
        return None
    return _event(
        row,
        hit,
        "the job hangs right after its communicator came up or DDP rebuilt its buckets",
        "the next collective (the gradient all-reduce of the following iteration) never completes on some "
        "rank",
        "hang_after_first_collective",
    )


# hang_titles' hang words (one table for both), with the CJK ones a sentence holds
_ANCHORS = (*_TITLE_ANCHORS, *(w.encode() for w in _CJK_HANGS))
_WORTH = (*_TITLE_WORTH, *(w.encode() for w in _CJK_HANGS))
_WORDS = (*_TITLE_WORDS, *_CJK_HANGS)
_RETURN_ANCHORS = (b"t return", b"never return", b"t finish", b"t proceed", b"t complete")
_RETURN_WORTH = (rb"(?i:(?:n't|not|never) (?:return|finish|proceed|complete)\b)",)
_RETURN_WORDS = ("t return", "never return", "t finish", "t proceed", "t complete")

SIGNATURES = (
    Signature(
        "prose: the ranks hang where one differs",
        _DIFFER,
        _ranks_differ,
        C.COLLECTIVE_MISMATCH.code,
        tier=1,
        anchors=_ANCHORS,
        worth=_WORTH,
        words=_WORDS,
        anchor_from="the hang's word in its usual spellings, which the build requires in the line",
        examples=(
            "If the `predictions` and `labels` in different ranks have different lengths, the AUC metric "
            "will hang up when doing `all_gather` in ignite.",
            "当我用两张卡，采用DDP,当一张卡中图像有正样本，另一张卡的所有图像都没有正样本，那么就会卡住。",
        ),
    ),
    Signature(
        "prose: a pipeline's p2p exchange deadlocks",
        _PIPELINE_HANG,
        _pipeline_hang,
        C.COLLECTIVE_MISMATCH.code,
        tier=1,
        anchors=_ANCHORS,
        worth=_WORTH,
        words=_WORDS,
        anchor_from="the hang's word in its usual spellings (case aside)",
        examples=(
            "# [BUG] Pipeline Parallelism deadlock with `variable_seq_lengths=True` and "
            "`batch_p2p_comm=True` (PP>=4)",
        ),
    ),
    Signature(
        "prose: named ranks hang",
        _NAMED_HANG,
        _named_hang,
        C.COLLECTIVE_MISMATCH.code,
        tier=1,
        anchors=(*_ANCHORS, *_RETURN_ANCHORS),
        worth=(*_WORTH, *_RETURN_WORTH),
        words=(*_WORDS, *_RETURN_WORDS),
        anchor_from="the hang's word in its usual spellings (case aside)",
        examples=("rank1 send  tensor to rank3, hang", "... ranks 0 and 3 don't return"),
    ),
    Signature(
        "prose: a collective hangs",
        _COLLECTIVE_HANG,
        _collective_words,
        C.WATCHDOG_TIMEOUT.code,
        tier=1,
        anchors=_ANCHORS,
        worth=_WORTH,
        words=_WORDS,
        anchor_from="the hang's word in its usual spellings (case aside)",
        examples=("We observed the script only gets stuck with NCCL backend and default partitioning.",),
    ),
    Signature(
        "prose: a collective times out",
        _COLLECTIVE_TIMEOUT,
        _collective_words,
        C.WATCHDOG_TIMEOUT.code,
        tier=1,
        anchors=(b"imed out", b"imes out", b"iming out", b"imeout", b"ime out", b"IMEOUT", b"eadline"),
        worth=(rb"(?i:time ?out|timed out|times out|timing out|deadline)",),
        words=("time", "timing", "deadline"),
        anchor_from="the timeout's word in its usual spellings (case aside)",
        examples=(
            "1. When I start multinode traning from a HF checkpoint of a Llama 70B model, it fails because "
            "of an nccl 600 seconds timeout when loading the checkpoint",
        ),
    ),
    Signature(
        "prose: a hang after the communicator came up",
        _HANG_AFTER_UP,
        _hang_after_up,
        C.WATCHDOG_TIMEOUT.code,
        tier=1,
        anchors=_ANCHORS,
        worth=_WORTH,
        words=_WORDS,
        anchor_from="the hang's word in its usual spellings (case aside)",
        examples=(
            "No error, but hangs after output `2022-05-12 22:06:13,674 - mmcv - INFO - Reducer buckets have "
            "been rebuilt in this iteration.` and stays around ~90% utilization",
        ),
    ),
)

parse = gated_reader(SIGNATURES)
