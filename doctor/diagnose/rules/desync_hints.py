"""Lines that show the ranks diverged without an error of their own: a traceback cut before its exception
line whose last frame is a cross-rank consistency check (the check is what failed, so its family is the
finding even though its message is missing), and FSDP's warning that a rank's all-gather order changed.

Formats: DistributedDataParallel's constructor verifies that every rank holds the same parameters before
the first broadcast: torch 1.9-1.10 `dist._verify_model_across_ranks(self.process_group, parameters)`
(torch/nn/parallel/distributed.py), 1.11 `dist._verify_params_across_processes(...)`, 1.12+
`_verify_param_shape_across_processes(self.process_group, parameters)` (torch/distributed/utils.py, called
from distributed.py's __init__). A Python traceback's frame: '  File ".../torch/distributed/utils.py", line
288, in _verify_param_shape_across_processes' (a rank prefix may stand before it, indentation stripped). Its
exceptions, when shown, are read by their own rows ("DDP expects same model across all ranks", "appears not
to match sizes of the same param in process 0", or an NCCL error of DDP's first collective): this row
answers only when no exception line follows the frame. faulthandler's and py-spy's dumps of a hung rank
(no ", in " / a "(file:line)" tail) are not tracebacks and are not read here.
FSDP's execution-order check (torch/distributed/fsdp/_exec_order_utils.py, 1.12-2.x, with
TORCH_DISTRIBUTED_DEBUG=INFO or DETAIL): warnings.warn("Forward order differs from that of the first iteration
on rank 1. Collectives are unchecked and may give incorrect results or hang.\nExpected to all-gather for
['a.weight'] but trying to all-gather parameters for ['b.weight']") (or "Expected no more parameters in the
forward but trying to all-gather parameters for ..."): this rank all-gathers in another order than the
others, so the all-gathers pair up wrongly (wrong results) or one waits forever. DETAIL's hard check ("Forward
order differs across ranks: rank 0 is all-gathering ...") is `mismatch`'s.
Ascend HCCL's parameter check when two ranks set up a link for one collective (CANN error code
EI0005, 6.x-8.x; the HCCL user guide's "参数一致性校验"): "EI0005: <time> The arguments for collective
communication are inconsistent between ranks:tag[HcomAllReduce_66294..._0], parameter[count],
local[16512], remote [8320]" (the parameter is the tag, op type, count, data type or root). The
transport errors of its TraceBack ("Transport init error ... Create Dest error", EI0009) are this
check's consequence, so this row is a cause.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_DDP_VERIFY = lazy_re.compile(
    r"File \"[^\"]+\", line \d+, in (?P<fn>_verify_param_shape_across_processes|"
    r"_verify_params_across_processes|_verify_model_across_ranks)\s*$"
)
# An exception line, a C++ throw or a later frame of another function: the cut traceback goes on.
_GOES_ON = lazy_re.compile(
    r"^\s*(?:[\w.]*(?:Error|Exception|Interrupt|Exit)\b|terminate called|what\(\)|Exception raised from)"
)


def _ddp_verify(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if any(_GOES_ON.search(ln.text) for ln in hit.after(48)):
        return None
    facts: dict[str, Any] = {"kind": "ddp_param_verification", "frame": m.group("fn"), "cut": True}
    return [
        row.event(
            hit,
            f"{hit.who()}: DistributedDataParallel's check that every rank holds the same parameters "
            f"({m.group('fn')}) raised; the exception line is cut from the log, but this check fails when "
            "the ranks built different models (parameter count, shapes or order differ)",
            facts,
            tier=1,
            dedupe=(row.code, "ddp_verify"),
        )
    ]


_FSDP_ORDER = lazy_re.compile(
    r"Forward order differs from that of the first iteration on rank (?P<rank>\d+)\. "
    r"Collectives are unchecked"
)
_FSDP_WHAT = lazy_re.compile(
    r"(?:Expected to all-gather for (?P<want>\[.*?\])|Expected no more parameters in the forward) but trying "
    r"to all-gather parameters for (?P<got>.+)$"
)


def _fsdp_order(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    rank = int(m.group("rank"))
    facts: dict[str, Any] = {"kind": "fsdp_forward_order", "framework": "fsdp", "rank": rank}
    for ln in [hit.line, *hit.after(3)]:
        w = _FSDP_WHAT.search(ln.text)
        if w:
            if w.group("want"):
                facts["expected_params"] = w.group("want")[:200]
            facts["got_params"] = w.group("got").strip()[:200]
            break
    return [
        row.event(
            hit,
            f"FSDP: rank {rank} all-gathers its parameters in another order than in the first iteration "
            "(a data-dependent branch or a module skipped on some ranks): the ranks' all-gathers pair up "
            "wrongly or hang",
            facts,
            tier=1,
            rank=rank,
            dedupe=(row.code, "fsdp_order", rank),
        )
    ]


_HCCL_ARGS = lazy_re.compile(
    r"(?:\bEI0005\b.*?)?arguments for collective communication are inconsistent between ranks"
    r"(?::?\s*tag\s*\[(?P<tag>[^\]]*)\],?\s*parameter\s*\[(?P<param>[^\]]*)\],?"
    r"\s*local\s*\[(?P<local>[^\]]*)\],?\s*remote\s*\[(?P<remote>[^\]]*)\])?"
)


def _hccl_args(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"kind": "hccl_parameter_check", "backend": "hccl", "error_code": "EI0005"}
    if m.group("tag"):
        facts["tag"] = m.group("tag")
        op = re.match(r"[A-Za-z]+", m.group("tag"))
        if op:
            facts["op"] = op.group(0)
        facts.update(parameter=m.group("param"), local=m.group("local"), remote=m.group("remote"))
    what = (
        f": {facts['parameter']} is {facts['local']} here and {facts['remote']} on the peer"
        if m.group("tag")
        else ""
    )
    return [
        row.event(
            hit,
            f"{hit.who()}: HCCL found the ranks called {facts.get('op', 'a collective')} with different "
            f"arguments (EI0005){what}: the scripts or rank tables differ between NPUs",
            facts,
            dedupe=(row.code, "hccl_args"),
        )
    ]


SIGNATURES = (
    Signature(
        "ddp parameter check frame",
        _DDP_VERIFY,
        _ddp_verify,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"_verify_param_shape_across_processes", b"_verify_params_across", b"_verify_model_across"),
        words=("_verify_param", "_verify_model"),
    ),
    Signature(
        "fsdp forward order warning",
        _FSDP_ORDER,
        _fsdp_order,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"Forward order differs from that of the first",),
        worth=(rb"Forward order differs from that of the first",),
        words=("forward order differs",),
    ),
    Signature(
        "hccl parameter check",
        _HCCL_ARGS,
        _hccl_args,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"communication are inconsistent between ranks",),
        worth=(rb"communication are inconsistent between ranks",),
        words=("inconsistent between ranks",),
    ),
)

parse = gated_reader(SIGNATURES)
