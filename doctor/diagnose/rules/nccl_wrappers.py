"""nccl_usage / nccl_network from frameworks that print NCCL's result by its number: PaddlePaddle's
enforce (phi/core/enforce.h build_nvidia_error_msg: "NCCL error(5), invalid usage. " inside "ExternalError:"
or "OSError: (External)"; the number alone when the text is cut), PPL's NCCL_CHECK ("NCCL error(code:5) on
(ncclCommInitRank)") and CUDA samples' "NCCL error(Err=3) at comm.cu:120". The number is the ncclResult_t
(1 unhandled cuda error, 2 system, 3 internal, 4 invalid argument, 5 invalid usage, 6 remote; 7 and 8
below), and programs' own CHECK macros that print the file and ncclGetErrorString's text; a text
after it decides when both are there, and NCCL's last WARN (`Last error:`) decides before either, as for
torch's own message (nccl_errors).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.nccl_detail import RESULT, from_detail, kind_of, last_error
from pgdoctor.diagnose.signature import Signature, gate, read
from pgdoctor.knowledge.nccl_results import TEXTS
from pgdoctor.model import lazy_re

_NUMBERED = lazy_re.compile(
    r"NCCL error\((?:code:|Err=)?(?P<num>[1-7])\)(?:,\s*(?P<err>[a-z][a-z ,-]*[a-z]))?"
    r"(?:\s+(?:at|on)\s+(?P<where>\S+))?"
)


def _numbered(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    num = int(m.group("num"))
    err = (m.group("err") or "").lower()
    kind = kind_of(err) or RESULT.get(num)
    if kind is None:
        return []
    where = m.group("where")
    return _result(hit, num, err, where.strip("()") if where else None, kind)


def _result(hit: Hit, num: int, err: str, where: Optional[str], kind: Any) -> list[Event]:
    """The events of a ncclResult_t a program printed by its number (and text, when it has one)."""
    base: dict[str, Any] = {"nccl_result": num, "nccl_error": err or f"ncclResult {num}"}
    base["nccl_error_text"] = err or f"ncclResult {num}"
    if where is not None:
        base["where"] = where
    return from_detail(hit, last_error(hit), base, None, 0, kind)


# The number alone, no ncclGetErrorString text after it: "RuntimeError: NCCL error 2" (programs that print
# the ncclResult_t with their own CHECK macro), "ncclResult 7", "NCCL Error 7", "ncclResult_t: 3". NCCL's
# numbers (nccl.h 2.x): 1-6 as above, 7 ncclInProgress (2.14+, a non-blocking communicator whose caller did
# not wait), 8 ncclTimeout (2.28+). A version ("NCCL error 2.18.1") or a text after the number is no bare
# number (the rows of that text read it).
_BARE = lazy_re.compile(
    r"(?:\bNCCL [Ee]rror|\bncclResult(?:_t)?)(?: code)?[ :=#]*(?P<num>[1-8])(?![\d.])"
    r"(?!\s*[:,)]?\s*[A-Za-z])"
)
_IN_PROGRESS, _TIMEOUT = 7, 8
# ... and after the place, as FastMoE's NCCL check prints it (its cuda/ sources, USE_NCCL=1 builds:
# fprintf "NCCL Error at %s:%d value %d\n", then exit; laekov/fastmoe#126): "NCCL Error at
# .../cuda/global_exchange.cpp:127 value 5" (and "NCCL error at <file>:<line> value N" of its copies).
_PLACED = lazy_re.compile(
    r"\bNCCL [Ee]rror at (?P<where>[\w./-]+:\d+),? (?:value|code|result) (?P<num>[1-8])\b"
)


def _bare(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    num = int(m.group("num"))
    base: dict[str, Any] = {"nccl_result": num, "nccl_error": f"ncclResult {num}"}
    if "where" in m.re.groupindex:
        base["where"] = m.group("where")
    if num == _TIMEOUT:
        return [
            row.event(
                hit,
                f"{hit.who()}: an NCCL call returned ncclTimeout (8): it did not complete in its time limit",
                {**base, "nccl_error_text": "timeout"},
                code=C.WATCHDOG_TIMEOUT.code,
                tier=1,
                dedupe=(C.WATCHDOG_TIMEOUT.code, hit.rank, "nccl_result"),
            )
        ]
    if num == _IN_PROGRESS:
        return [
            row.event(
                hit,
                f"{hit.who()}: an NCCL call returned ncclInProgress (7) where its caller wanted success: a "
                "non-blocking communicator (TORCH_NCCL_USE_COMM_NONBLOCKING / ncclConfig_t.blocking=0) used "
                "by code that does not wait for it",
                {**base, "nccl_error_text": "NCCL operation in progress", "likely_cause": "nonblocking_comm"},
                code=C.NCCL_INVALID_USAGE.code,
                dedupe=(C.NCCL_INVALID_USAGE.code, hit.rank, "in_progress"),
            )
        ]
    base["nccl_error_text"] = f"ncclResult {num}"
    return from_detail(hit, last_error(hit), base, None, 0, RESULT[num])


# Programs' own CHECK macros that print the file, the line and ncclGetErrorString's text (CUDA samples,
# research kernels, inference engines): "NCCL err main.cu:42: invalid usage (run with NCCL_DEBUG=WARN for
# details)", "Failed: NCCL error test.cu:30 'internal error'", "NCCL error at comm.cpp:77: invalid argument".
# torch's "NCCL error in: <file>:<line>, <text>, NCCL version" is nccl_errors' (that module reads first).
_TEXTS = (*TEXTS, "unknown result code")
_MACRO = lazy_re.compile(
    r"\b(?:NCCL|nccl) (?:err(?:or)?|failure)\b(?: at| in)?:?\s*"
    r"(?P<where>[\w./-]+\.(?:cu|cuh|cc|cpp|cxx|c|h|hpp):\d+)[:,]?\s*'?(?P<err>(?i:" + "|".join(_TEXTS) + r"))"
)


def _macro(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = m.group("err").lower()
    kind = kind_of(err)
    if kind is None:
        return None
    base: dict[str, Any] = {"nccl_error": err, "nccl_error_text": m.group("err"), "where": m.group("where")}
    return from_detail(hit, last_error(hit), base, None, 0, kind)


# Programs' own NCCL checks that print ncclGetErrorString's text first and the place after it, or the
# place in words: XGBoost's dh::safe_nccl (src/common/device_helpers.cuh ThrowOnNcclError, 0.8-1.x: "NCCL
# failure :internal error /x/device_helpers.cuh(952)", later "NCCL failure: unhandled cuda error. /x(45)"),
# RAPIDS raft's RAFT_NCCL_TRY (raft/core/detail/macros, 21.x-25.x: "NCCL error encountered at: file=/x/
# std_comms.hpp line=435: call='ncclCommInitRank(...)', Reason=3:internal error") and the older cuML/rmm
# throw_nccl_error ("NCCL error encountered at: /x/comms.cu:88: 3 internal error"); raft's NCCL_TRY_NO_THROW
# and NCCL's own examples print "NCCL call='ncclCommDestroy(comm)' failed. Reason:internal error" (a destroy
# or an abort at teardown is an echo of what failed before it: tier 1).
_TEXT_FIRST = lazy_re.compile(
    r"\bNCCL failure ?: ?(?P<err>(?i:" + "|".join(_TEXTS) + r"))|"
    r"\bNCCL call='(?P<call>.{0,400}?)' failed\. Reason: ?(?P<err3>(?i:" + "|".join(_TEXTS) + r"))|"
    r"\bNCCL error encountered at: (?:file=(?P<where>\S+) line=(?P<line>\d+): call='.{0,400}?', "
    r"Reason=\d+:|(?P<where2>[\w./-]+:\d+): (?:[1-8] )?)(?P<err2>(?i:" + "|".join(_TEXTS) + r"))"
)


def _text_first(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    text = m.group("err") or m.group("err2") or m.group("err3")
    kind = kind_of(text.lower())
    if kind is None:
        return None
    base: dict[str, Any] = {"nccl_error": text.lower(), "nccl_error_text": text}
    call = m.group("call") or ""
    if call:
        base["nccl_call"] = call[:120]
    where = f"{m.group('where')}:{m.group('line')}" if m.group("where") else m.group("where2")
    if where:
        base["where"] = where
    teardown = call.startswith(("ncclCommDestroy", "ncclCommAbort", "ncclCommFinalize"))
    return from_detail(hit, last_error(hit), base, None, 1 if teardown else 0, kind)


# An enforce on the ncclResult_t (caffe2's CAFFE_NCCL_CHECK in contrib/nccl/cuda_nccl_gpu.cc, gloo's
# NCCL_CHECK in gloo/nccl/nccl.cu): "[enforce fail at cuda_nccl_gpu.cc:24] status == ncclSuccess. 2 vs 0.
# Error at: /.../cuda_nccl_gpu.cc24: system error" (caffe2 glues the line to the file), gloo's "... 2 vs 0.
# unhandled system error". The text is ncclGetErrorString's (NCCL 1.x "system error", 2.x "unhandled system
# error"); without it only 1-3 mean the same in both numberings (1.x: 4 is an invalid device pointer).
_ENFORCE = lazy_re.compile(
    r"\b(?:status|result|res|ret) == ncclSuccess\. (?P<num>\d{1,2}) vs 0\.?"
    r"(?:\s*Error at: (?P<where>[^\s:]+):?)?(?:\s+(?P<err>[a-z][a-z ,-]*[a-z]))?"
)


def _enforce(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    num = int(m.group("num"))
    err = (m.group("err") or "").lower()
    kind = kind_of(err) or (RESULT.get(num) if num <= 3 else None)
    if kind is None:
        return None
    return _result(hit, num, err, m.group("where") or None, kind)


# CuPy's NcclError (cupy_backends/cuda/libs/nccl.pyx, cupy 7-13) names the result through its ERROR_NAMES
# table, which before cupy#8661's fix knew only NCCL's results up to 5: a newer NCCL's 6 (ncclRemoteError, a
# peer that exited or a network error) or 7 (ncclInProgress) made the constructor itself fail, "File
# \"cupy_backends/cuda/libs/nccl.pyx\", line 117, in cupy_backends.cuda.libs.nccl.NcclError.__init__" then
# "KeyError: 6": the number is the ncclResult_t NCCL returned.
_RESULT_TEXTS = {1: _TEXTS[1], 2: _TEXTS[0], 3: _TEXTS[2], 4: _TEXTS[4], 5: _TEXTS[3], 6: _TEXTS[5]}
_CUPY_KEY = lazy_re.compile(r"^\s*KeyError: (?P<num>[1-8])\s*$")


def _cupy_key(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not any("NcclError" in ln.text or "nccl.pyx" in ln.text for ln in hit.before(4)):
        return None
    num = int(m.group("num"))
    if num in (_IN_PROGRESS, _TIMEOUT):
        return _bare(row, hit, m)
    err = _RESULT_TEXTS.get(num, f"ncclResult {num}")
    base: dict[str, Any] = {"nccl_result": num, "nccl_error": err, "nccl_error_text": err, "reporter": "cupy"}
    return from_detail(hit, last_error(hit), base, None, 0, RESULT[num])


# XLA's wrapper of a failed NCCL call (xla/service/gpu nccl_utils.cc / nccl_api.cc, JAX and PyTorch/XLA on
# GPU): "... ncclCommInitRankConfig(...) failed: invalid usage (run with NCCL_DEBUG=WARN for details). Last
# NCCL warning(error) log entry (may be unrelated) '<the WARN>'."; a user's paste that elides the middle
# ("invalid usage ... Last NCCL warning(error): '<the WARN>'") or keeps the second line of a wrap: the
# result's text and the quoted WARN on one line, the WARN deciding (as torch's `Last error:`).
_XLA_LAST = lazy_re.compile(
    r"(?P<err>unhandled (?:cuda|system) error|internal error|invalid argument|invalid usage|"
    r"remote process exited or there was a network error)\b[^'\n]{0,120}?Last NCCL warning\(error\)"
)


def _xla_last(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    kind = kind_of(m.group("err"))
    detail = last_error(hit)
    if kind is None or not detail:
        return None
    base: dict[str, Any] = {
        "nccl_error": m.group("err"),
        "nccl_error_text": m.group("err"),
        "reporter": "xla",
    }
    return from_detail(hit, detail, base, None, 0, kind)


# NCCL's CUDACHECK text on a line of its own ("Cuda failure 'invalid argument'", 2.19+ "Cuda failure 1
# 'invalid argument'"): a paste that kept the message and dropped the WARN head ("host:pid:tid [dev]
# file:line NCCL WARN "), read as the WARN is (the CUDA error decides: out of memory, a driver's answer; a
# bare generic one is ncclUnhandledCudaError, RUN194). nccl-tests' own "Cuda failure common.cu:892 'out of
# memory'" names its file and is oom_layers'; "driver shutting down" is the process's exit, not a failure.
_BARE_CUDA_FAILURE = lazy_re.compile(r"^\s*Cuda failure (?:\d+ )?'(?P<what>[^'\n]+)'\s*$")


def _bare_cuda_failure(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "shutting down" in m.group("what"):
        return []
    text = m.group(0).strip()
    return from_detail(hit, text, {"nccl_warn": text}, None, 0, None)


# OneFlow's OF_NCCL_CHECK (oneflow/core/device/cuda_util.h, 0.x-1.x; the ROCm build's copy for RCCL): glog's
# LOG(FATAL) or std::cout of "Check failed: " #condition " : " ncclGetErrorString " (" result ") ", since 0.9
# ". To see more detail, please run OneFlow with system variable NCCL_DEBUG=INFO": "F1028 20:39:07.626992
# 206314 collective_boxing_executor.cpp:452] Check failed: ncclGroupEnd() : unhandled system error (2)",
# "Check failed: ncclCommInitRank(&comm, n, id, rank) : invalid usage (5)". A search excerpt cut inside the
# text ("... : unhandled s") names it where one result's text alone begins so (past "unhandled ").
_OF_CHECK = lazy_re.compile(
    r"Check failed: (?P<call>[\w:]*nccl[A-Z]\w*\(.*?\)) : (?P<err>[A-Za-z][A-Za-z ,-]*?)"
    r"(?: \((?P<num>\d+)\)|\s*$)"
)


def _of_check(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = m.group("err").strip().lower()
    num = int(m.group("num")) if m.group("num") else None
    kind = kind_of(err)
    if kind is None and num is None:
        whole = {t for t in TEXTS if t.startswith(err)}
        if len(err) < 11 or len(whole) != 1:
            return []  # cut before the text says which result it was
        err = whole.pop()
        kind = kind_of(err)
    kind = kind or (RESULT.get(num) if num is not None else None)
    if kind is None:
        return []
    call = m.group("call").split("(", 1)[0]
    return _result(hit, num if num is not None else 0, err, call, kind)


# ncclGetErrorString's texts since NCCL 2.12 carry NCCL's own hint (src/init.cc): "unhandled cuda error (run
# with NCCL_DEBUG=INFO for details)", "unhandled system error (run with ...INFO...)", "invalid argument (run
# with NCCL_DEBUG=WARN for details)", "invalid usage (run with NCCL_DEBUG=WARN for details)". The hint is
# NCCL's alone, so the text is NCCL's result wherever a wrapper or a paste left it without torch's "NCCL error
# in:" head or a framework's prefix ("RuntimeError: invalid usage (run with NCCL_DEBUG=WARN for details)").
_HINTED = lazy_re.compile(
    r"(?P<err>(?i:unhandled (?:cuda|system) error|invalid usage|invalid argument)) "
    r"\(run with NCCL_DEBUG=(?:INFO|WARN) for details\)"
)


def _hinted(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = m.group("err").lower()
    kind = kind_of(err)
    if kind is None:
        return None
    base: dict[str, Any] = {"nccl_error": err, "nccl_error_text": err}
    return from_detail(hit, last_error(hit), base, None, 0, kind)


SIGNATURES = (
    Signature(
        "nccl result in oneflow's check",
        _OF_CHECK,
        _of_check,
        C.NCCL_SYSTEM_ERROR.code,
        anchors=(b"Check failed: ",),
        worth=(rb"Check failed: [\w:]*nccl[A-Z]",),
        words=("check failed: ",),
    ),
    Signature(
        "nccl result with xla's last warning",
        _XLA_LAST,
        _xla_last,
        C.NCCL_INTERNAL_ERROR.code,
        anchors=(b"Last NCCL warning(error)",),
        worth=(rb"Last NCCL warning\(error\)",),
        words=("last nccl warning(error)",),
    ),
    Signature(
        "nccl result through cupy's error table",
        _CUPY_KEY,
        _cupy_key,
        C.NCCL_REMOTE_ERROR.code,
        anchors=(b"rror",),
        worth=(rb"KeyError: [1-8]\s*$",),
        words=("keyerror",),
    ),
    Signature(
        "nccl result by number",
        _NUMBERED,
        _numbered,
        C.NCCL_INTERNAL_ERROR.code,
        anchors=(b"rror",),
        worth=(rb"NCCL error\(",),
        words=("nccl error(",),
    ),
    Signature(
        "nccl result number alone",
        _BARE,
        _bare,
        C.NCCL_SYSTEM_ERROR.code,
        anchors=(b"rror", b"ncclResult"),
        worth=(rb"NCCL [Ee]rror:? ?#?[1-8]\b", rb"ncclResult"),
        words=("nccl error", "ncclresult"),
    ),
    Signature(
        "nccl result number after the place",
        _PLACED,
        _bare,
        C.NCCL_SYSTEM_ERROR.code,
        anchors=(b"rror at",),
        worth=(rb"NCCL [Ee]rror at ",),
        words=("nccl error at",),
    ),
    Signature(
        "nccl result enforce",
        _ENFORCE,
        _enforce,
        C.NCCL_SYSTEM_ERROR.code,
        anchors=(b"== ncclSuccess",),
        words=("== ncclsuccess",),
    ),
    Signature(
        "nccl cuda failure without its warn head",
        _BARE_CUDA_FAILURE,
        _bare_cuda_failure,
        C.NCCL_CUDA_ERROR.code,
        anchors=(b"Cuda failure ",),
        words=("cuda failure ",),
    ),
    Signature(
        "nccl check of a program, text first",
        _TEXT_FIRST,
        _text_first,
        C.NCCL_INTERNAL_ERROR.code,
        anchors=(b"NCCL failure", b"NCCL error encountered at", b"NCCL call='"),
        words=("nccl failure", "nccl error encountered at", "nccl call='"),
    ),
    Signature(
        "nccl check macro of a program",
        _MACRO,
        _macro,
        C.NCCL_INTERNAL_ERROR.code,
        anchors=(b"NCCL err", b"nccl err", b"NCCL failure", b"nccl failure"),
        worth=(rb"(?:NCCL|nccl) (?:err|failure)",),
        words=("nccl err", "nccl failure"),
        anchor_from="the macro's own 'NCCL err' / 'NCCL failure' (either case) before the file",
        examples=(
            "NCCL err main.cu:42: invalid usage (run with NCCL_DEBUG=WARN for details)",
            "Failed: NCCL error test.cu:30 'internal error'",
            "nccl err comm.cu:9: unhandled cuda error",
        ),
    ),
    Signature(
        "ncclGetErrorString text with nccl's hint",
        _HINTED,
        _hinted,
        C.NCCL_INVALID_USAGE.code,
        anchors=(b"run with NCCL_DEBUG=",),
        words=("run with nccl_debug=",),
    ),
)
_WORDS = gate(SIGNATURES)


def parse(hit: Hit) -> list[Event]:
    if _WORDS is not None and not hit.may_hold(_WORDS):
        return []
    return read(hit, SIGNATURES)
