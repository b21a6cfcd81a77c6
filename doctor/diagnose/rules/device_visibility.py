"""device_visibility: the process asks for GPUs (or for NCCL) that it cannot have.

Formats: ProcessGroupNCCL's constructor check, the same words in every torch since 1.x,
"RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!" (TORCH_CHECK; 2.2+
raises it as "ValueError: ..."), also cut anywhere after "ProcessGroupNCCL is" by a paste ("RuntimeError:
ProcessGroupNCCL is only supp"), and a traceback whose last frame is that constructor
(`pg = ProcessGroupNCCL(prefix_store, rank, world_size, pg_options)` of 1.x, `backend_class =
ProcessGroupNCCL(backend_prefix_store, group_rank, group_size, pg_options)` of 2.x) with its exception
line left without a message (ranks interleaved on one stream); a torch without NCCL ("Distributed
package doesn't have NCCL built in", "NCCL support is not compiled"); a GPU index beyond the visible
ones: cudart's "invalid device ordinal" (cudaErrorInvalidDevice, 101) as torch's "CUDA error: ...",
NCCL's "Cuda failure 101 '...'" and nccl-tests' "Test CUDA failure common.cu:941 '...'", and torch's
own "device >= 0 && device < num_gpus INTERNAL ASSERT FAILED".
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader

_NO_NCCL = re.compile(r"Distributed package doesn't have NCCL built in|NCCL support is not compiled")
NO_GPU_MESSAGE = "ProcessGroupNCCL is only supported with GPUs, no GPUs found!"
# The whole message anywhere, or a prefix of it down to "ProcessGroupNCCL is" that ends the line after
# an exception type (a paste cut there).
_NO_GPU = re.compile(
    r"ProcessGroupNCCL is only supported with GPUs, no GPUs|"
    r"(?:RuntimeError|ValueError|Error): (ProcessGroupNCCL is\b[^\n]*?)\s*$"
)
# The constructor call as the last frame of a traceback (torch 1.x and 2.x spell its arguments apart).
_CTOR_FRAME = re.compile(r"= ProcessGroupNCCL\((?:backend_)?prefix_store, ")
_EXC_LINE = re.compile(r"^\s*(?:RuntimeError|ValueError)(?P<rest>.*)$")  # no \b: glued to the next frame
# "device >= 0 && device < num_gpus INTERNAL ASSERT FAILED" is torch's own check of the same mistake.
_ORDINAL = re.compile(r"invalid device ordinal|CUDA_VISIBLE_DEVICES|device >= 0 && device < num_gpus")
_NO_GPU_WHY = (
    "the NCCL backend found no GPU in this process (no driver or device nodes in the container, "
    "CUDA_VISIBLE_DEVICES empty, a login node or a CPU-only PyTorch): use gloo there, or run on a GPU node"
)


def _no_nccl(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"this PyTorch cannot use NCCL: {m.group(0)} (a CPU-only or ROCm/macOS build)",
            {"library": "NCCL"},
            dedupe=(row.code, "nccl"),
        )
    ]


def _is_message_prefix(text: str) -> bool:
    """True when `text` is the no-GPU message or a cut of it at least "ProcessGroupNCCL is" long."""
    t = text.strip()
    return len(t) >= len("ProcessGroupNCCL is") and (
        NO_GPU_MESSAGE.startswith(t) or t.startswith(NO_GPU_MESSAGE)
    )


def _no_gpu(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group(1) is not None and not _is_message_prefix(m.group(1)):
        return None
    return [
        row.event(
            hit,
            f"{hit.who()}: {_NO_GPU_WHY}",
            {"reason": "no_visible_device", "backend": "nccl"},
            dedupe=(row.code, "no_visible_device"),
        )
    ]


def _ctor_raised(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    """The constructor frame, then its exception line with no message (or the message cut): its only
    check that raises is the GPU count."""
    for ln in hit.after(3, same_rank=False):
        if ln.text.lstrip().startswith("File "):
            return None  # a deeper frame: the constructor was not where it raised
        e = _EXC_LINE.match(ln.text)
        if e is None:
            continue
        rest = e.group("rest")
        if rest.startswith(":") and rest[1:].strip():
            # the message is there: the no-GPU row reads it (tier 0), any other is another row's
            return [] if _is_message_prefix(rest[1:]) else None
        return [
            row.event(
                hit,
                f"{hit.who()}: ProcessGroupNCCL's constructor raised with its message lost ({_NO_GPU_WHY})",
                {"reason": "no_visible_device", "backend": "nccl", "message_missing": True},
                [hit.line, ln],
                dedupe=(row.code, "no_visible_device"),
            )
        ]
    return None


def _ordinal(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = hit.text
    # torch's "CUDA error: ...", NCCL's "Cuda failure 101 '...'", nccl-tests' "Test CUDA failure ..."
    if not ("rror" in t or "ERROR" in t or "failure" in t):
        return None
    return [
        row.event(
            hit,
            f"{hit.who()} asked for a GPU index that is not visible "
            "(more processes per node than visible GPUs, or a wrong CUDA_VISIBLE_DEVICES)",
            {"cuda_error": m.group(0)},
            dedupe=(row.code,),
        )
    ]


_EXC = "the exception type ('RuntimeError: ', 'ValueError: ') before torch's message"
SIGNATURES = (
    Signature(
        "no nccl in torch",
        _NO_NCCL,
        _no_nccl,
        C.LIBRARY_MISSING.code,
        anchors=(b"NCCL built in", b"rror"),
        worth=(rb"NCCL built in", rb"not compiled", rb"Error\b"),
        words=("nccl built in", "nccl support is not compiled"),
        anchor_from=_EXC,
        examples=("RuntimeError: NCCL support is not compiled",),
    ),
    Signature(
        "nccl backend without a gpu",
        _NO_GPU,
        _no_gpu,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"ProcessGroupNCCL is only", b"rror"),
        worth=(rb"ProcessGroupNCCL is only", rb"Error\b"),
        words=("processgroupnccl is",),
        anchor_from=_EXC,
        examples=(
            "RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!",
            "ValueError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!",
            "RuntimeError: ProcessGroupNCCL is only supp",
            "RuntimeError: ProcessGroupNCCL is",
        ),
    ),
    Signature(
        "processgroupnccl constructor raised",
        _CTOR_FRAME,
        _ctor_raised,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"= ProcessGroupNCCL(",),
        worth=(rb"= ProcessGroupNCCL\(",),
        words=("= processgroupnccl(",),
    ),
    Signature(
        "device ordinal",
        _ORDINAL,
        _ordinal,
        C.DEVICE_MISMATCH.code,
        anchors=(b"rror", b"ERROR", b"UDA failure"),
        worth=(rb"Error\b", rb"\berror\b", rb"[Cc]uda failure|CUDA failure"),
        words=("invalid device ordinal", "cuda_visible_devices", "device >= 0 && device < num_gpus"),
        anchor_from="'CUDA error: ' before the runtime's message, or NCCL's and nccl-tests' 'CUDA failure' "
        "(one of them required by the row)",
        examples=(
            "RuntimeError: CUDA error: invalid device ordinal",
            "g0010: Test CUDA failure common.cu:941 'invalid device ordinal'",
        ),
    ),
)
# Every pattern of parse() needs one of its row's words in the line (lower case; checked before any of them).
parse = gated_reader(SIGNATURES, unless="NCCL INFO")
