"""One command under a timeout, in its own process group, killed with all its children on the
timeout and on Ctrl-C; its output goes to files."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Optional

GRACE_S = 3.0


@dataclass
class Ran:
    argv: list[str]
    rc: Optional[int]  # None: killed at its timeout
    seconds: float
    stdout: str  # file names, relative to the step's folder
    stderr: str

    @property
    def timed_out(self) -> bool:
        return self.rc is None


def _kill_group(proc: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(GRACE_S)
            # The leader is gone; its group may still hold children that ignored SIGTERM.
            if sig == signal.SIGTERM:
                continue
            return
        except subprocess.TimeoutExpired:
            continue


def run(
    argv: list[str],
    timeout_s: float,
    folder: str,
    label: str,
    env: Optional[dict[str, str]] = None,
    cwd: Optional[str] = None,
) -> Ran:
    out_name, err_name = f"{label}.out", f"{label}.err"
    t0 = time.monotonic()
    with open(os.path.join(folder, out_name), "wb") as out, open(os.path.join(folder, err_name), "wb") as err:
        try:
            proc = subprocess.Popen(
                argv,
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
                env=env,
                cwd=cwd,
                start_new_session=True,
            )
        except OSError as exc:
            err.write(f"could not start {argv[0]}: {exc}\n".encode())
            return Ran(argv, 127, 0.0, out_name, err_name)
        try:
            rc: Optional[int] = proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            rc = None
        except BaseException:
            _kill_group(proc)
            raise
        _kill_group(proc)
    return Ran(argv, rc, round(time.monotonic() - t0, 2), out_name, err_name)
