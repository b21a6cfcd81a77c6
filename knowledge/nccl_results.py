"""NCCL's result codes (ncclResult_t in nccl.h), each with the names a log may show for it and the
text ncclGetErrorString gives it, in one table: rules read a result by number (glog's CHECK of an
ncclResult_t, "(2 vs. 0)"), by enum name (torch's "ncclSystemError: ..." detail line), by CuPy's
constant name ("NCCL_ERROR_SYSTEM_ERROR: ..."), or by its text ("unhandled system error").

Texts as ncclGetErrorString returns them (src/init.cc, NCCL 2.x; "remote process exited..." since 2.13,
"NCCL operation in progress" since 2.14, lower-cased here because rules match them without case).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NcclResult:
    number: int
    name: str  # the enum constant, as torch's detail line and NCCL's own WARN lines print it
    cupy_name: str  # CuPy's NcclError prefix (Ray's collective library, Chainer)
    text: str  # ncclGetErrorString's text, lower case


RESULTS = (
    NcclResult(1, "ncclUnhandledCudaError", "NCCL_ERROR_UNHANDLED_CUDA_ERROR", "unhandled cuda error"),
    NcclResult(2, "ncclSystemError", "NCCL_ERROR_SYSTEM_ERROR", "unhandled system error"),
    NcclResult(3, "ncclInternalError", "NCCL_ERROR_INTERNAL_ERROR", "internal error"),
    NcclResult(4, "ncclInvalidArgument", "NCCL_ERROR_INVALID_ARGUMENT", "invalid argument"),
    NcclResult(5, "ncclInvalidUsage", "NCCL_ERROR_INVALID_USAGE", "invalid usage"),
    NcclResult(
        6,
        "ncclRemoteError",
        "NCCL_ERROR_REMOTE_ERROR",
        "remote process exited or there was a network error",
    ),
    NcclResult(7, "ncclInProgress", "NCCL_ERROR_IN_PROGRESS", "nccl operation in progress"),
)

TEXT_BY_NUMBER = {r.number: r.text for r in RESULTS}
# Every name a log prints for a result, enum and CuPy constant alike, to its text.
TEXT_BY_NAME = {**{r.name: r.text for r in RESULTS}, **{r.cupy_name: r.text for r in RESULTS}}
TEXTS = tuple(r.text for r in RESULTS)
