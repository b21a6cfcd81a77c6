"""Linux signal numbers as the logs print them, and their names: one table for every reader.

A Python child killed by signal N exits with -N (subprocess/multiprocessing's returncode, torchrun's
"exitcode: -9"); a shell reports 128+N. The numbers are Linux's (x86-64 and arm64 agree on these).
"""

from __future__ import annotations

from typing import Optional

SIGNAL_NAMES = {
    1: "SIGHUP",
    2: "SIGINT",
    4: "SIGILL",
    6: "SIGABRT",
    7: "SIGBUS",
    8: "SIGFPE",
    9: "SIGKILL",
    11: "SIGSEGV",
    13: "SIGPIPE",
    15: "SIGTERM",
}


def signal_of_exitcode(code: object) -> Optional[str]:
    """The signal a negative exit code (-N: killed by signal N) names, e.g. -9 -> "SIGKILL"; None for
    anything else (a normal exit status, a number no signal has, a value that is not an int)."""
    if isinstance(code, bool) or not isinstance(code, int) or not -64 < code < 0:
        return None
    return SIGNAL_NAMES.get(-code, f"signal {-code}")
