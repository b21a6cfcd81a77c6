"""Run pgdoctor with its stdout on a pseudo-terminal of a given size (a 120x40 terminal, as a
person sees it), stderr and exit code as usual; colour is off (NO_COLOR)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios

from tests.helpers.paths import ROOT

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def run_on_terminal(args: list[str], columns: int = 120, lines: int = 40,
                    timeout: float = 120.0) -> tuple[int, str, str]:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["NO_COLOR"] = "1"
    proc = subprocess.Popen([sys.executable, "-m", "pgdoctor", *args], stdout=slave, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, env=env, cwd=ROOT)
    os.close(slave)
    chunks = []
    try:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
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
    out = _ANSI.sub("", b"".join(chunks).decode(errors="replace")).replace("\r\n", "\n")
    return proc.returncode, out, err.decode(errors="replace")
