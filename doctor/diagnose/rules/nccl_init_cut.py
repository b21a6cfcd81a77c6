"""A stack cut inside NCCL's communicator creation, its error text left out of the paste.

Frameworks that create NCCL communicators themselves raise NCCL's result after the creation call: CuPy's
`cupy.cuda.nccl.NcclCommunicator.__init__` (cupy/cuda/nccl.pyx, since v8 cupy_backends/cuda/libs/nccl.pyx;
ChainerMN, Ray's and Alpa's collective groups: "cupy_backends.cuda.libs.nccl.NcclError: NCCL_ERROR_..."),
Ray / Alpa's `create_nccl_communicator` (under "RayTaskError(NcclError)"), PaddlePaddle 1.x's C++
`paddle::platform::NCCLCommContext::CreateNCCLComm` (c_comm_init op) and dygraph's
`parallel_helper._init_parallel_ctx` (NCCLParallelContext::Init), whose EnforceNotMet prints the C++ call
stack before its "Error Message Summary". A paste that ends in that call, with no NCCL result text, no
summary and no exception message after it, lost the reason. Every such cut stack in the released corpora (4:
ChainerMN, Alpa on Ray, Paddle's c_comm_init and prepare_context) was NCCL's "unhandled system error" at
bootstrap (the ranks' sockets, interfaces, /dev/shm): RUN171 at tier 1, the lowest, so that any failure read
elsewhere in the paste is the cause. The same call with its reason in the paste is read by that reason
(nccl_errors, nccl_wrappers, loader: a missing libnccl, a duplicate GPU, a CUDA error).
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_CREATE = lazy_re.compile(
    r"\bNcclCommunicator\.__init__\b|\bcreate_nccl_communicator\b|"
    r"\bNCCLCommContext::CreateNCCLComm\b|\b_init_parallel_ctx\b"
)
# what would have said why: NCCL's result texts and names, a framework's summary, an exception's message
_REASON = lazy_re.compile(
    r"(?i)unhandled (?:system|cuda) error|invalid (?:usage|argument)|internal error|remote process|"
    r"nccl_?error_|ncclSystemError|ncclInternalError|ncclInvalid|ncclUnhandled|ncclRemote|"
    r"Error Message Summary|ExternalError|libnccl|nccl (?:error|failure)|"
    # (Ray's wrapped head holds the task's repr, not the reason: "RayTaskError(NcclError): ray::W.f() (...)";
    # a C++ frame's scope is no message: "paddle::platform::EnforceNotMet::EnforceNotMet(...)")
    r"(?:Error|Exception|EnforceNotMet)\b(?:\([^)]*\))?:(?!:)\s*(?!ray::)\S"
)


def _cut_creation(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    around = [*hit.before(24, same_rank=False), hit.line, *hit.after(48, same_rank=False)]
    if any(_REASON.search(ln.text) for ln in around):
        return None  # the reason is in the paste: its own reading
    call = m.group(0)
    return [
        row.event(
            hit,
            f"{hit.who()}: the stack ends in NCCL's communicator creation ({call}) and the paste lost its "
            "error text: a cut NCCL bootstrap failure, most often 'unhandled system error' (the ranks' "
            "sockets, the interface NCCL chose, /dev/shm); rerun with NCCL_DEBUG=INFO for the WARN lines",
            {"call": call, "cut": True, "phase": "nccl_communicator_creation"},
            tier=1,
            dedupe=(row.code, "nccl init cut"),
        )
    ]


SIGNATURES = (
    Signature(
        "stack cut in nccl communicator creation",
        _CREATE,
        _cut_creation,
        C.NCCL_SYSTEM_ERROR.code,
        tier=1,
        anchors=(
            b"NcclCommunicator.__init__",
            b"create_nccl_communicator",
            b"NCCLCommContext::CreateNCCLComm",
            b"_init_parallel_ctx",
        ),
        words=(
            "ncclcommunicator.__init__",
            "create_nccl_communicator",
            "createncclcomm",
            "_init_parallel_ctx",
        ),
    ),
)
parse = gated_reader(SIGNATURES)
