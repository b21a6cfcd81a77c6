"""The exit codes (a public contract, see the README) and the one exception for user errors."""

from __future__ import annotations

import click

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INCOMPLETE = 0, 1, 2, 3
EXIT_INTERRUPTED = 130
# A bug in pgdoctor, never 1: a job script must tell a crash of the tool from a diagnosis.
EXIT_INTERNAL = 4


class UserError(click.ClickException):
    """A usage or configuration problem: one line on stderr, exit 2."""

    exit_code = EXIT_USAGE


# Running out of threads, processes, memory or file descriptors is the environment's limit
# (ulimit, a cgroup), not a bug of pgdoctor: one line naming the limit, exit 3 (incomplete).
_ERRNO_LIMITS = {
    11: "cannot start a process or thread: the process limit was reached (ulimit -u, a cgroup's pids.max)",
    12: "out of memory (the address-space limit, ulimit -v, or the host)",
    23: "too many open files on the host (fs.file-max)",
    24: "too many open files (ulimit -n)",
}


def resource_exhaustion(exc: BaseException) -> str | None:
    """The limit that `exc` says was reached, or None when it is some other error."""
    if isinstance(exc, MemoryError):
        return _ERRNO_LIMITS[12]
    if isinstance(exc, RuntimeError) and "can't start new thread" in str(exc):
        return "cannot start a thread: a process or memory limit was reached (ulimit -u, ulimit -v)"
    if isinstance(exc, OSError) and exc.errno in _ERRNO_LIMITS:
        return _ERRNO_LIMITS[exc.errno]
    return None
