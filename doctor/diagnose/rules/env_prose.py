"""A hang of several GPUs told in sentences, where the person's words point at the platform's peer-to-peer
path rather than at the program: a title or a short account (prose_hangs' gate: at most 8 lines, none a
program's record) with no program line to read.

Two shapes, both GPU_P2P_BROKEN_BY_PLATFORM (RUN590, driver_env) at tier 1:
- An inference engine that hangs once it spans several GPUs ("[Bug]: when tensor-parallel-size>1，Stuck",
  vllm#8087; "vLLM Distributed Inference stuck when using multi -GPU", vllm#2466). hang_titles leaves a
  server's or an inference's hang unread (its _NOT_TRAINING): it is no training collective that a rank
  skipped. With one GPU the engine runs no collective at all; with tensor parallelism its first all-reduce
  (NCCL's P2P / SHM transports, vLLM's custom all-reduce over CUDA IPC) is the first traffic between the
  GPUs. A hang there is the peer-to-peer path the platform breaks (PCIe ACS or the IOMMU redirecting peer
  traffic, a VM, GeForce boards whose driver reports P2P it lacks): NCCL's troubleshooting guide ("GPU
  Direct": P2P messages fail or crawl with a VM or container configured wrong, ACS, BIOS settings;
  NVIDIA/nccl#199: a multi-GPU nccl-tests "hang" was P2P at a crawl, ACS off fixed it), and vLLM's
  debugging tips (a hang with tensor parallelism: test the GPUs' communication with its sanity script,
  NCCL_P2P_DISABLE).
- One GPU works and several hang with no error ("单卡正常多卡的就卡在加载数据上 不动了 ... 没有报错",
  PaddleOCR#3234; "works on a single GPU but stuck on multiple GPUs"): nothing of the program differs
  between the two runs except the traffic between the GPUs. Not where the hang comes during training after
  steps ran ("Struk during training on multi-GPUs with deepspeed, but work with single GPU" is a collective a
  rank never joined, hang_titles' RUN151), nor across machines (the network's, not P2P).

Not read, as prose_hangs: a denial or a fix ("no longer hangs"), a warning ("may hang"), a question about a
setting, a death (OOM, a crash, a kill, an error named), a board or link already named (hang_titles' RTX
40-series row, platform_signs), a collective named (hang_titles / prose_hangs read those), a download or a
model's loading (vLLM's own tips: those are disk and network waits), several machines.
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.hang_titles import _COLLECTIVE
from pgdoctor.diagnose.rules.prose_hangs import _ANCHORS, _DIED, _HARDWARE, _WORDS, _WORTH, _aside, _prose
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

# the hang's words: prose_hangs' (English and CJK) and the misspellings a title keeps ("Stucked", "Struk"),
# and "不动" (does not move) that Chinese titles put after 卡在 or alone
_HANG = (
    r"\bhang(?:s|ing|ed)?\b|\bhung\b|\bstuck(?:ed)?\b|\bstr?uk\b|\bdeadlock(?:s|ed)?\b|\bfreez(?:e|es|ing)\b|"
    r"\bnever (?:returns?|finish\w*|proceeds?|completes?)\b|卡住|卡死|卡在|卡着|死锁|挂起|不动"
)
# an inference engine, or tensor parallelism of any engine, over more than one GPU
_ENGINE = r"\bvllm\b|\bsglang\b|\btgi\b|text-generation-inference|\blmdeploy\b|\btensorrt-llm\b"
_TP_MANY = (
    r"\btensor[-_ ]?parallel(?:[-_ ]?size)?\s*(?:>|>=|=|==|:)?\s*(?:[2-9]|1[0-6])\b|"
    r"\btensor[-_ ]?parallel(?:[-_ ]?size)?\s*>\s*1\b|\btp\s*(?:>|=|==)\s*(?:[2-9]|1)\b|"
    r"--tp(?:[-_]size)?[ =](?:[2-9])\b"
)
_MULTI_GPU = (
    r"\bmulti ?[- ]? ?gpus?\b|\bmultiple gpus?\b|\bseveral gpus\b|\b(?:[2-9]|1[0-6]) ?(?:x ?)?gpus\b|"
    r"\bmore than (?:one|1) gpus?\b|多卡|多张卡|多gpu|多GPU|多个 ?gpu|多个 ?GPU"
)
_ENGINE_HANG = lazy_re.compile(
    rf"(?i)(?:(?:{_ENGINE}).{{0,120}}?(?:{_MULTI_GPU}|{_TP_MANY})|(?:{_TP_MANY})).{{0,120}}?(?:{_HANG})|"
    rf"(?:{_HANG}).{{0,120}}?(?:(?:{_ENGINE}).{{0,120}}?(?:{_MULTI_GPU}|{_TP_MANY})|(?:{_TP_MANY}))|"
    rf"(?:{_ENGINE}).{{0,120}}?(?:{_HANG}).{{0,120}}?(?:{_MULTI_GPU}|{_TP_MANY})"
)
# one GPU runs, several hang: "单卡正常多卡...卡在", "works (fine) on a single GPU but hangs on multiple
# GPUs", "single GPU is fine, multi-GPU stuck"
_ONE_OK = (
    r"单卡(?:训练|微调|推理|运行|跑)?(?:都)?(?:正常|没问题|没有问题|可以|能跑|能正常)|"
    r"(?i:\b(?:works?|working|runs?|running|fine|ok|okay)\b(?:\s+\w+){0,2}\s+(?:on|with|using)\s+"
    r"(?:a\s+|one\s+|1\s+)?(?:single|one|1)[- ]?gpu\b|"
    r"\b(?:single|one|1)[- ]?gpu\b(?:\s+\w+){0,2}\s+(?:works?|is fine|is ok|runs? fine|runs? well))"
)
_ONE_OK_HANG = lazy_re.compile(
    rf"(?:{_ONE_OK})[^。.!?！？]{{0,80}}?(?:(?i:{_MULTI_GPU})[^。.!?！？]{{0,60}}?(?i:{_HANG})|"
    rf"(?i:{_HANG})[^。.!?！？]{{0,60}}?(?i:{_MULTI_GPU}))|"
    rf"(?i:{_MULTI_GPU})[^。.!?！？]{{0,60}}?(?i:{_HANG})[^。!?！？]{{0,120}}?(?:{_ONE_OK})"
)
# during training after steps ran: a collective a rank never joined (hang_titles, prose_hangs)
_MID_TRAINING = lazy_re.compile(
    r"(?i)\bduring (?:the )?training\b|\bafter (?:\d+|a few|some|several) (?:epochs?|iterations?|steps?)\b|"
    r"\bepoch\b|\biterations?\b|\bstep \d|\brandomly\b|"
    r"第 ?\d+ ?(?:个|轮|步|次)|训练(?:了)?一(?:会|段时间)|训练过程中"
)
# waits that are not the GPUs' traffic: a download, the model's loading (vLLM's tips), several machines
_OTHER_WAIT = lazy_re.compile(
    r"(?i)\bdownload\w*|\bloading (?:the )?(?:model|weights|checkpoint)|\bload(?:s|ing)? (?:the )?model\b|"
    r"\bmulti[- ]?(?:node|machine)s?\b|\b(?:several|multiple|two|\d) (?:nodes|machines|hosts)\b|"
    r"多机|多节点|跨节点|\bxid\b|\bnvlink\b|\bray\b"
)
_COLLECTIVE_NAMED = lazy_re.compile(rf"(?i)(?:{_COLLECTIVE})")


# "no error", "没有报错": the person says nothing died, which _DIED would read as an error named
_NO_ERROR = lazy_re.compile(
    r"(?i)\b(?:no|without(?: any)?|not any) (?:errors?|error messages?|exceptions?)\b|"
    r"没有?(?:任何)?(?:报错|错误)|无报错"
)


def _gate(hit: Hit) -> bool:
    text = _NO_ERROR.sub(" ", hit.text)
    if not _prose(hit) or _aside(text, hang=True) or _DIED.search(text) or _HARDWARE.search(text):
        return False
    return not (_OTHER_WAIT.search(text) or _COLLECTIVE_NAMED.search(text))


def _event(row: Signature, hit: Hit, said: str, kind: str) -> list[Event]:
    return [
        row.event(
            hit,
            f'the report says {said} ("{hit.text.strip()[:160]}"): the first traffic between the GPUs never '
            "completes, which is the peer-to-peer path the platform breaks (PCIe ACS or the IOMMU, a VM, a "
            "board whose driver reports P2P it lacks): run the vendor's P2P test (p2pBandwidthLatencyTest, "
            "nccl-tests), then disable ACS / set iommu=pt, or set NCCL_P2P_DISABLE=1 to confirm",
            {"kind": kind, "inferred_from": "words", "read_as": "prose"},
            tier=1,
            dedupe=(row.code, kind),
        )
    ]


def _engine_hang(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _gate(hit):
        return None
    return _event(row, hit, "an inference engine hangs once it spans several GPUs", "engine_multi_gpu_hang")


def _one_ok_hang(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _gate(hit) or _MID_TRAINING.search(hit.text):
        return None
    return _event(row, hit, "the job runs on one GPU and hangs on several", "one_gpu_ok_several_hang")


# prose_hangs' hang words (its CJK ones included) with a title's misspellings and "不动" (does not move)
_ANCHORS_ALL = (*_ANCHORS, b"Struk", b"struk", "不动".encode())
_WORTH_ALL = (*_WORTH, rb"(?i:\bstr?uk\b)", "不动".encode())
_WORDS_ALL = (*_WORDS, "struk", "stuk", "不动")

SIGNATURES = (
    Signature(
        "prose: an inference engine hangs across gpus",
        _ENGINE_HANG,
        _engine_hang,
        C.GPU_P2P_BROKEN_BY_PLATFORM.code,
        tier=1,
        anchors=_ANCHORS_ALL,
        worth=_WORTH_ALL,
        words=_WORDS_ALL,
        anchor_from="the hang's word in its usual spellings (case aside)",
        examples=(
            "[Bug]: when tensor-parallel-size>1，Stuck",
            "vLLM Distributed Inference stuck when using multi -GPU",
        ),
    ),
    Signature(
        "prose: one gpu runs, several hang",
        _ONE_OK_HANG,
        _one_ok_hang,
        C.GPU_P2P_BROKEN_BY_PLATFORM.code,
        tier=1,
        anchors=_ANCHORS_ALL,
        worth=_WORTH_ALL,
        words=_WORDS_ALL,
        anchor_from="the hang's word in its usual spellings (case aside)",
        examples=("请问下 训练的时候 单卡正常多卡的就卡在加载数据上 不动了 无法下面进行训练 没有报错",),
    ),
)

parse = gated_reader(SIGNATURES)
