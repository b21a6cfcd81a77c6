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

# NCCL 1.x (src/nccl.h and core.cu's ncclGetErrorString, 1.2-1.3.4: Caffe/NVCaffe, torch <= 0.4, TF and
# Horovod of 2017): another numbering past 3, so a glog check's "(13 vs. 0)" of that era is an invalid data
# type, not 2.x's. Its texts as printed, lower case.
NCCL1_TEXT_BY_NUMBER = {
    1: "unhandled cuda error",
    2: "system error",
    3: "internal error",
    4: "invalid device pointer",
    5: "invalid rank",
    6: "unsupported device count",
    7: "device not found",
    8: "invalid device index",
    9: "lib wrapper not initialized",
    10: "cuda malloc failed",
    11: "parameter mismatch between ranks",
    12: "invalid argument",
    13: "invalid data type",
    14: "invalid reduction operations",
}
