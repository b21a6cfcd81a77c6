"""mpi_signal_frames: Open MPI's own crash handler naming the MPI library as the place a rank died (RUN336).

Format, read at the source (open-mpi/ompi opal/util/stacktrace.c, 1.6-5.0, opal_show_stackframe): the handler
prints "[host:pid] *** Process received signal ***", "[host:pid] Signal: Segmentation fault (11)", "[host:pid]
Signal code: Invalid permissions (2)" (or "Address not mapped (1)"), "[host:pid] Failing at address: 0x..",
then one line per frame from backtrace_symbols(): "[host:pid] [ 3] /usr/lib/libmpi.so.12(ompi_datatype_sndrcv+
0x54c)[0x7f600fa6d6bc]", an unexported one as "(+0x2fcb7)". Frame 0 is the signal trampoline (libpthread /
libc); glibc's memcpy / memmove below it carry no symbol. When the first frame below those is Open MPI's own
(libmpi, libopen-pal, libopen-rte, an mca_ component), the rank died inside MPI: with "Invalid permissions"
(SEGV_ACCERR: the address is mapped but not readable from the CPU, as CUDA's unified address space reserves
device memory in the host's) inside an MPI data call (MPI_Alltoall, MPI_Send, MPI_Allreduce ...), the
classic case is a GPU buffer handed to an MPI built without CUDA support (mpi4py / ChainerMN / Horovod with
device arrays); otherwise a broken or mixed MPI installation. A first frame in another library (libtorch,
python, libnccl: rules/launch_env.py reads NCCL's) is that library's crash and not read here.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_SIGNAL = lazy_re.compile(r"\bSignal: (?P<sig>Segmentation fault|Bus error) \((?P<num>11|7)\)")
# "[host:pid] [ 3] /usr/lib/libmpi.so.12(ompi_datatype_sndrcv+0x54c)[0x7f600fa6d6bc]" (the host tag is
# sometimes stripped by the line reader)
_OMPI_FRAME = lazy_re.compile(
    r"^\s*(?:\[[\w.-]{1,80}:\d+\]\s*)?\[\s*(?P<n>\d+)\]\s+(?P<lib>[^\s(]+)\((?P<sym>[A-Za-z_][\w.]*)?"
    r"(?:\+0x[0-9a-fA-F]+)?\)\s*\[0x"
)
_LIBC = lazy_re.compile(r"(?:^|/)lib(?:c|pthread)[.-]")
_MPI_LIB = lazy_re.compile(r"(?:^|/)(?:lib(?:mpi|open-pal|open-rte|pmix|ucp|uct|ucs)\w*|mca_\w+)\.so")
_MPI_CALL = lazy_re.compile(r"^P?MPI_[A-Z]\w*$")
_CODE = lazy_re.compile(r"\bSignal code: (?P<code>[A-Za-z][A-Za-z ]{2,40}?) \(-?\d+\)")


def _ompi_frames(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    frames = [f for f in (_OMPI_FRAME.match(ln.text) for ln in hit.after(20, same_rank=False)) if f]
    below = [f for f in frames if f.group("n") != "0"]
    # glibc's unexported copy routines under the handler, then the first frame of another library
    first = next((f for f in below if not _LIBC.search(f.group("lib"))), None)
    if first is None or not _MPI_LIB.search(first.group("lib")):
        return None
    mpi = [f for f in below if _MPI_LIB.search(f.group("lib"))]
    fn = next((f.group("sym") for f in mpi if f.group("sym")), None) or first.group("lib").rsplit("/", 1)[-1]
    call = next((f.group("sym") for f in frames if f.group("sym") and _MPI_CALL.match(f.group("sym"))), None)
    code = next((c.group("code") for c in map(_CODE.search, (x.text for x in hit.after(3))) if c), None)
    sig = "SIGSEGV" if m.group("num") == "11" else "SIGBUS"
    facts: dict[str, Any] = {"signal": sig, "frame": fn, "library": "mpi", "reporter": "open mpi"}
    if call:
        facts["mpi_call"] = call
    if code:
        facts["signal_code"] = code
    if call and code == "Invalid permissions":
        facts["reason"] = "device_buffer_to_mpi"
        why = (
            f"inside {call} on an address the CPU may not read (a GPU buffer handed to an MPI built without "
            "CUDA support): build Open MPI / MVAPICH with CUDA (ompi_info --parsable --all | grep "
            "mpi_built_with_cuda_support), or copy the arrays to host memory before the MPI call"
        )
    else:
        facts["reason"] = "crash_in_mpi"
        why = (
            f"inside the MPI library ({fn}): the MPI installation is broken or mixed (mpi4py or the "
            "framework built against another libmpi); run a two-rank MPI hello world with the same mpirun"
        )
    return [row.event(hit, f"{hit.who()} died on {sig} {why}", facts, dedupe=(row.code, hit.rank, "ompi"))]


SIGNATURES = (
    Signature(
        "open mpi handler: fatal signal inside mpi",
        _SIGNAL,
        _ompi_frames,
        C.STACK_LIBRARY_CRASH.code,
        anchors=(b"Signal: ",),
        worth=(rb"Signal: (?:Segmentation fault|Bus error) \(",),
        words=("signal: ",),
    ),
)
parse = gated_reader(SIGNATURES)
