"""A thread's title (the whole paste, one short line: vocabulary's _title) that names how NCCL or gloo failed
in a person's words, without the program's own line.

Many threads keep only their title, and titles name NCCL's result by its kind rather than by the text of
ncclGetErrorString ("NCCL failure caused by NET/IB completion error", NVIDIA/nccl#1405; "Test NCCL failure
common with network error.", NVIDIA/nccl-tests#252; "gloo连接失败", flagos-ai/FlagCX#117; "[Bug] Invalid usage
of NCCL library when starting the downstream classification task", open-mmlab/mmselfsup#731). Read here, at
tier 1, by the kind the words name, each to the code NCCL's own text of that kind has:
- the IB / RoCE transport (NET/IB, a completion error, an ibverbs or RDMA error) with NCCL: RUN173;
- NCCL's system error (ncclSystemError in words: "NCCL system error on multi-node"): RUN171;
- a network error or a remote process that exited, with NCCL (ncclRemoteError in words, also "NCCL 网络错误"):
  RUN172;
- gloo's connection that failed, was refused, reset or closed ("gloo connection failed", "gloo连接失败"):
  RUN174 (a gloo time-out is the rendezvous's, and is left to its rows);
- NCCL's invalid usage in other words ("Invalid usage of NCCL library", "ncclInvalidUsage when running two
  processes"): RUN191; NCCL's internal error in words ("NCCL internal error"): RUN192;
- two ranks (or processes) on one GPU ("Two ranks on the same GPU", "multiple processes share the same
  device with NCCL"): RUN193, what NCCL 2.5+ says as "Duplicate GPU detected".

Never read: a line with more than a title (a program's line says more, and its family reads it), a question
or a request (vocabulary's _ASKING), a setting or a fix (_TITLE_ASIDE, and "avoid", "fix", "handle", "may"),
a title with a time-out (the watchdog's and the rendezvous's rows read those) and, for the usage rows, a
title that says the case is supported or works.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.vocabulary import _GAP, _TITLE_ASIDE, _title
from pgdoctor.diagnose.signature import Build, Signature, gated_reader
from pgdoctor.model import lazy_re

_NCCL = r"\bnccl\w*|\brccl\b"
_FAIL = r"\berrors?\b|\bfail\w*|\bcrash\w*|报错|错误|失败"
# the IB / RoCE transport named as what failed
_IB = (
    rf"\bnet/ib\b{_GAP}(?:{_FAIL})|\bcompletion (?:errors?|with error)|\bgot completion\b{_GAP}\berror|"
    r"\bibv_\w+ (?:errors?|failed)|\b(?:ib|infiniband|roce|rdma|ibverbs) (?:errors?|failures?|failed)\b"
)
_IB_TITLE = lazy_re.compile(
    rf"(?i)(?:{_NCCL}){_GAP}(?:{_IB})|(?:{_IB}){_GAP}(?:{_NCCL})|\bnet/ib\b{_GAP}(?:{_FAIL})"
)
_SYSTEM = r"\bsystem ?errors?\b|\bncclsystemerror\b"
_SYSTEM_TITLE = lazy_re.compile(rf"(?i)(?:{_NCCL}){_GAP}(?:{_SYSTEM})|\bncclsystemerror\b")
# ncclSystemError's own text (ncclGetErrorString, NCCL 2.x) without NCCL named: "unhandled system error when
# using multi node", 'Get "unhandled system error" when training with 2 nodes', "DistBackendError: unhandled
# system error". Web services' handlers log the same words ("Unhandled system error occurred: ...", "Unhandled
# system error in f: ..."), so the title must name the job too: nodes or GPUs, training, a launcher, a
# collective or torch's exception type of a backend's error.
_JOB = lazy_re.compile(
    r"(?i)multi[- ]?(?:node|gpu|machine)s?|\bnodes?\b|\bgpus?\b|\bddp\b|\bfsdp\b|distributed|"
    r"(?<![/\w])train\w*|torchrun|deepspeed|megatron|horovod|\branks?\b|all_?reduce|all_?gather|\bbroadcast|"
    r"\bbarrier|distbackenderror|多机|多卡|训练"
)
# (not a handler's head: "... occurred", "... in <function>:", "... on path /x")
_UNNAMED_SYSTEM_TITLE = lazy_re.compile(
    r"(?i)(?<![\w-])unhandled system error\b(?!\s*(?:occurred|in \w+\s*:|on (?:path|request)\b))"
)

_REMOTE = (
    r"\bnetwork (?:errors?|failures?|issues?|problems?)\b|"
    r"\bremote (?:process|peer|rank)s? (?:exited|died|crashed)|"
    r"\bncclremoteerror\b|网络(?:错误|异常|故障|问题)"
)
_REMOTE_TITLE = lazy_re.compile(rf"(?i)(?:{_NCCL}){_GAP}(?:{_REMOTE})|(?:{_REMOTE}){_GAP}(?:{_NCCL})")
_GLOO_CONN = (
    rf"\bconnect(?:ion|ions|ing)?\b{_GAP}(?:fail\w*|errors?|refused|reset|closed|lost|broken|abort\w*)|"
    r"\b(?:failed|unable|fails) to connect\b|连接(?:失败|错误|断开|异常|被拒绝|被重置)"
)
_GLOO_TITLE = lazy_re.compile(
    rf"(?i)(?=.*\bgloo(?![a-z]))(?:{_GLOO_CONN})|\bgloo(?![a-z]).*?(?:{_GLOO_CONN})"
)
_USAGE_TITLE = lazy_re.compile(r"(?i)\binvalid usage of (?:the )?nccl\b|\bncclinvalid(?:usage|argument)\b")
_INTERNAL_TITLE = lazy_re.compile(
    rf"(?i)(?:{_NCCL}){_GAP}\binternal (?:errors?|check failed)\b|\bncclinternalerror\b"
)
_MANY = r"\b(?:two|2|multiple|several|many|more|both)\s+(?:nccl\s+)?(?:ranks?|process(?:es)?|workers?)\b"
_ONE_GPU = (
    r"\b(?:the )?same (?:cuda |physical )?(?:gpu|device|card)\b|\bone (?:cuda )?(?:gpu|device)\b|"
    r"同一(?:张)?(?:卡|gpu|GPU|显卡)"
)
_SAME_GPU_TITLE = lazy_re.compile(rf"(?i)(?:{_MANY}){_GAP}(?:{_ONE_GPU})|(?:{_ONE_GPU}){_GAP}(?:{_MANY})")
# a fix, a possibility, a time-out or a report that it works: not a failure's title
_ASIDE = lazy_re.compile(
    r"(?i)\b(?:may|might|could|would|avoid\w*|prevent\w*|fix\w*|resolv\w*|solv\w*|workaround|handl\w*|"
    r"retr(?:y|ies)|detect\w*|support\w*|allow\w*|works?|working|worked|succeed\w*|timed? ?out|timeouts?)\b|"
    r"超时"
)


# a program's own line (its level, a source position, a timestamp): its family reads it, not this module
_PROGRAM = lazy_re.compile(
    r"\b(?:NCCL|RCCL) (?:INFO|WARN|TRACE)\b|\w\.(?:cc|cu|c|cpp|h|py):\d|\d\d:\d\d:\d\d|"
    r"^\s*[\w.-]+:\d+:\d+ \[\d+\]"
)


def _read(hit: Hit) -> bool:
    return (
        _title(hit)
        and not _PROGRAM.search(hit.text)
        and not _TITLE_ASIDE.search(hit.text)
        and not _ASIDE.search(hit.text)
    )


def _builder(kind: str, said: str) -> Build:
    def build(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
        if not _read(hit):
            return None
        return [
            row.event(
                hit,
                f'the report names {said} ("{m.group(0)}")',
                {"kind": kind, "inferred_from": "title", "read_as": "title"},
                tier=1,
                dedupe=(row.code, "title", kind),
            )
        ]

    return build


def _row(
    name: str,
    pattern: re.Pattern[str],
    kind: str,
    said: str,
    code: str,
    anchors: tuple[str, ...],
    worth: bytes,
    *examples: str,
) -> Signature:
    return Signature(
        f"title: {name}",
        pattern,
        _builder(kind, said),
        code,
        tier=1,
        anchors=tuple(a.encode() for a in anchors),
        worth=(worth,),
        words=tuple(dict.fromkeys(a.lower().strip() for a in anchors)),
        anchor_from="the kind's words in their usual spellings, a failure's word after the fabric's",
        examples=examples,
    )


def _job_row(*args: Any) -> Signature:
    """A row of `_row` read only where the title also names the distributed job (`_JOB`)."""
    row = _row(*args)
    title = row.build

    def build(r: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
        # a question about it ("..., any idea?") asks; it does not report the job's failure
        asks = hit.text.rstrip().endswith(("?", "？"))
        return title(r, hit, m) if _JOB.search(hit.text) and not asks else None

    return replace(row, build=build)


# the IB / RoCE fabric's name with a failure's word after it: not "Using network IB" or "RoCE v2"; NET/IB only
# with the failure's first letter after it, as NCCL prints "NET/IB" in every channel line of an INFO log
_IB_ANCHORS = (
    "NET/IB e",
    "NET/IB f",
    "NET/IB c",
    "Net/IB e",
    "Net/IB f",
    "net/ib e",
    "net/ib f",
    "ompletion error",
    "ompletion Error",
    "ompletion with error",
    "ibv_",
    " IB e",
    " IB E",
    " IB f",
    " IB F",
    "nfiniband e",
    "nfiniband f",
    "nfiniBand e",
    "nfiniBand f",
    "RoCE e",
    "RoCE f",
    "ROCE e",
    "RDMA e",
    "RDMA f",
    "rdma e",
    "rdma f",
    "ibverbs e",
    "ibverbs f",
)
_IB_WORTH = (
    rb"(?i:net/ib\b[^\n]{0,40}?(?:error|fail|crash)|completion (?:error|with error)|ibv_\w+ (?:error|failed)|"
    rb"\b(?:ib|infiniband|roce|rdma|ibverbs) (?:error|failure|failed))"
)

SIGNATURES = (
    _row(
        "nccl's ib transport failed",
        _IB_TITLE,
        "nccl_ib_error",
        "NCCL's InfiniBand / RoCE transport failing between ranks",
        C.NCCL_IB_ERROR.code,
        _IB_ANCHORS,
        _IB_WORTH,
        "NCCL failure caused by NET/IB completion error",
        "NCCL IB error on multi-node training",
    ),
    _row(
        "nccl's system error",
        _SYSTEM_TITLE,
        "nccl_system_error",
        "NCCL's system error (a socket, memory or device call failed)",
        C.NCCL_SYSTEM_ERROR.code,
        ("ystem error", "ystemError", "YSTEM ERROR", "ystem Error", "ystemerror"),
        rb"(?i:system ?error)",
        "NCCL system error on multi node",
    ),
    _job_row(
        "nccl's system error text unnamed",
        _UNNAMED_SYSTEM_TITLE,
        "nccl_system_error",
        "NCCL's system error by its own text (a socket, memory or device call failed)",
        C.NCCL_SYSTEM_ERROR.code,
        ("nhandled system error", "NHANDLED SYSTEM ERROR", "nhandled System Error"),
        rb"(?i:unhandled system error)",
        "unhandled system error when using multi node",
        "DistBackendError: unhandled system error on 2 nodes",
    ),
    _row(
        "nccl's network error or remote exit",
        _REMOTE_TITLE,
        "nccl_remote_error",
        "NCCL failing on a network error or a remote process that exited",
        C.NCCL_REMOTE_ERROR.code,
        (
            "etwork error",
            "etwork Error",
            "etwork failure",
            "etwork issue",
            "etwork problem",
            "emote process",
            "emote peer",
            "emote rank",
            "emoteError",
            "网络",
        ),
        rb"(?i:network (?:error|failure|issue|problem)|"
        rb"remote (?:process|peer|rank)s? (?:exited|died|crashed)|ncclremoteerror)|\xe7\xbd\x91\xe7\xbb\x9c",
        "Test NCCL failure common with network error.",
        "NCCL remote process exited",
    ),
    _row(
        "gloo's connection failed",
        _GLOO_TITLE,
        "gloo_connection_failed",
        "gloo's connection between ranks failing",
        C.NCCL_SOCKET_ERROR.code,
        ("gloo", "Gloo", "GLOO"),
        rb"(?i:gloo[^\n]*connect|connect[^\n]*gloo)|(?i:gloo)[^\n]*\xe8\xbf\x9e\xe6\x8e\xa5",
        "gloo连接失败",
        "gloo connection failed",
    ),
    _row(
        "nccl's internal error",
        _INTERNAL_TITLE,
        "nccl_internal_error",
        "NCCL's internal error (a check inside NCCL failed)",
        C.NCCL_INTERNAL_ERROR.code,
        ("nternal error", "nternal Error", "nternal check", "nternalError", "NTERNAL ERROR"),
        rb"(?i:internal (?:error|check failed)|ncclinternalerror)",
        "NCCL internal error",
    ),
    _row(
        "nccl's invalid usage",
        _USAGE_TITLE,
        "nccl_invalid_usage",
        "NCCL's invalid usage (the program called NCCL in a way it rejects)",
        C.NCCL_INVALID_USAGE.code,
        ("nvalid usage of", "nvalid Usage of", "nvalidUsage", "nvalidArgument", "NVALID USAGE OF"),
        rb"(?i:invalid usage of|ncclinvalid(?:usage|argument))",
        "[Bug] Invalid usage of NCCL library when starting the downstream classification task",
        "ncclInvalidUsage when running two processes",
    ),
    _row(
        "two ranks on one gpu",
        _SAME_GPU_TITLE,
        "duplicate_gpu",
        "two ranks on one GPU (what NCCL says as 'Duplicate GPU detected')",
        C.NCCL_DUPLICATE_GPU.code,
        (
            "same GPU",
            "same gpu",
            "same device",
            "same card",
            "same CUDA",
            "same cuda",
            "same physical",
            "one GPU",
            "one gpu",
            "one device",
            "one CUDA",
            "one cuda",
            "同一",
        ),
        rb"(?i:same (?:cuda |physical )?(?:gpu|device|card)|one (?:cuda )?(?:gpu|device))|"
        rb"\xe5\x90\x8c\xe4\xb8\x80",
        "Two ranks on the same GPU",
        "Multiple processes use the same GPU with NCCL",
    ),
)

parse = gated_reader(SIGNATURES)
