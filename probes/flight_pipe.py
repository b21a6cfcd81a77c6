"""NCCL's debug-info pipe: a rank started with TORCH_NCCL_DEBUG_INFO_PIPE_FILE (torch >= 2.8 also
TORCH_FR_DEBUG_INFO_PIPE_FILE) and a flight-recorder buffer makes a FIFO `<stem><rank>.pipe`
and, when anything is written to it, writes its flight recorder to
`<TORCH_FR_DUMP_TEMP_FILE or TORCH_NCCL_DEBUG_INFO_TEMP_FILE><rank>` (default
/tmp/nccl_trace_rank_<rank>). This is the documented way to ask a live NCCL rank for its
recorder without stopping it. Paths go through /proc/PID/root (a rank in a container). gloo has
no pipe (torch 2.13)."""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Mapping
from typing import Optional

PIPE_VARS = ("TORCH_FR_DEBUG_INFO_PIPE_FILE", "TORCH_NCCL_DEBUG_INFO_PIPE_FILE")
DUMP_VARS = ("TORCH_FR_DUMP_TEMP_FILE", "TORCH_NCCL_DEBUG_INFO_TEMP_FILE")
DEFAULT_DUMP = "/tmp/nccl_trace_rank_"


def _first(env: Mapping[str, str], names: tuple[str, ...]) -> str:
    return next((env[n] for n in names if env.get(n)), "")


def request_dump(
    pid: int, rank: int, environ: Optional[Mapping[str, str]], timeout_s: float
) -> tuple[str, str]:
    """(path of the fresh dump, '') or ('', why not). Writes one byte to the rank's pipe and waits
    for its dump file to change; never blocks on a pipe nobody reads (O_NONBLOCK)."""
    env = environ or {}
    stem = _first(env, PIPE_VARS)
    if not stem:
        return "", "absent (the job has no TORCH_NCCL_DEBUG_INFO_PIPE_FILE)"
    root = f"/proc/{pid}/root"
    pipe = f"{root}{stem}{rank}.pipe"
    dump = f"{root}{_first(env, DUMP_VARS) or DEFAULT_DUMP}{rank}"
    try:
        before = os.stat(dump).st_mtime_ns
    except OSError:
        before = 0
    try:
        fd = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        why = (
            "no reader on the pipe (not an NCCL rank, or its recorder is off)"
            if exc.errno == errno.ENXIO
            else f"cannot open {stem}{rank}.pipe: {exc.strerror}"
        )
        return "", why
    try:
        os.write(fd, b"1")
    finally:
        os.close(fd)
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        try:
            st = os.stat(dump)
            if st.st_mtime_ns != before and st.st_size > 0:
                time.sleep(0.05)  # the writer finishes the file
                return dump, ""
        except OSError:
            pass
        time.sleep(0.05)
    return "", f"the rank did not write {dump[len(root) :]} within {timeout_s:.1f} s"
