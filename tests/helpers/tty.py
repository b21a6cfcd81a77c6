"""Run pgdoctor with its stdout on a pseudo-terminal of a given size (a 120x40 terminal, as a
person sees it), stderr and exit code as usual; colour is off (NO_COLOR)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from typing import Optional

from tests.helpers.paths import ROOT

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def terminal_output(
    args: list[str],
    env: dict[str, str],
    columns: Optional[int] = None,
    lines: Optional[int] = None,
    timeout: float = 120.0,
) -> tuple[int, bytes, str]:
    """`python -m pgdoctor ARGS` with stdout on a pseudo-terminal (isatty() is true as in a shell),
    of columns x lines when given: (exit code, the raw bytes the terminal got, stderr)."""
    master, slave = pty.openpty()
    if columns is not None:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines or 24, columns, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "pgdoctor", *args],
        stdout=slave,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=ROOT,
    )
    os.close(slave)
    chunks, deadline = [], time.monotonic() + timeout
    try:
        # Read while it runs: a pty buffers only a few KiB, and a full one would block the child.
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed its end
                break
            if not data:
                break
            chunks.append(data)
        _, err = proc.communicate(timeout=timeout)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, b"".join(chunks), err.decode(errors="replace")


def run_on_terminal(
    args: list[str], columns: int = 120, lines: int = 40, timeout: float = 120.0
) -> tuple[int, str, str]:
    """On a columns x lines terminal with colour off: (exit code, what a person reads, stderr)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["NO_COLOR"] = "1"
    rc, raw, err = terminal_output(args, env, columns, lines, timeout)
    return rc, _ANSI.sub("", raw.decode(errors="replace")).replace("\r\n", "\n"), err
