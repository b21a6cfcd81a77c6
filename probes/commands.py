"""External commands go through a CommandRunner (argv and a timeout, never a shell), so tests
replay recorded outputs and nothing a probe runs can hang pgdoctor."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Optional, Protocol


@dataclass(frozen=True)
class CommandOutput:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


class CommandNotFound(OSError):
    pass


class CommandTimeout(TimeoutError):
    pass


class CommandRunner(Protocol):
    def run(self, argv: Sequence[str], timeout_s: float) -> CommandOutput: ...


class SubprocessRunner:
    def run(self, argv: Sequence[str], timeout_s: float) -> CommandOutput:
        try:
            # start_new_session: a timeout kills the whole group the command made, not just it.
            proc = subprocess.Popen(
                list(argv),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise CommandNotFound(f"{argv[0]}: command not found") from None
        try:
            out, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            raise CommandTimeout(f"{argv[0]} did not finish within {timeout_s:g} s") from None
        except BaseException:
            _kill_group(proc)
            raise
        return CommandOutput(
            tuple(argv), proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
        )


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    import os
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


class ReplayRunner:
    """Strict fake: answers only the argv it has a recording for and raises on anything else."""

    def __init__(self, recordings: Mapping[tuple[str, ...], CommandOutput | Exception]):
        self.recordings = dict(recordings)
        self.calls: list[tuple[str, ...]] = []

    def run(self, argv: Sequence[str], timeout_s: float) -> CommandOutput:
        key = tuple(argv)
        self.calls.append(key)
        rec: Optional[CommandOutput | Exception] = self.recordings.get(key)
        if rec is None:
            raise AssertionError(f"ReplayRunner has no recording for {key}")
        if isinstance(rec, Exception):
            raise rec
        return rec
