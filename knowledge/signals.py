"""Linux signal numbers as the logs print them, and their names: one table for every reader.

A Python child killed by signal N exits with -N (subprocess/multiprocessing's returncode, torchrun's
"exitcode: -9"); a shell reports 128+N. The numbers are Linux's (x86-64 and arm64 agree on these).
"""

from __future__ import annotations

from typing import Optional

SIGNAL_NAMES = {
    1: "SIGHUP",
    2: "SIGINT",
    3: "SIGQUIT",
    4: "SIGILL",
    5: "SIGTRAP",
    6: "SIGABRT",
    7: "SIGBUS",
    8: "SIGFPE",
    9: "SIGKILL",
    10: "SIGUSR1",
    11: "SIGSEGV",
    12: "SIGUSR2",
    13: "SIGPIPE",
    14: "SIGALRM",
    15: "SIGTERM",
    24: "SIGXCPU",
    25: "SIGXFSZ",
    31: "SIGSYS",
}
# glibc's strsignal() words for each (srun's "task 3: Terminated", a shell's "Killed", mpirun's "(Aborted)").
STRSIGNAL = {
    "Hangup": 1,
    "Interrupt": 2,
    "Quit": 3,
    "Illegal instruction": 4,
    "Aborted": 6,
    "Bus error": 7,
    "Floating point exception": 8,
    "Killed": 9,
    "User defined signal 1": 10,
    "Segmentation fault": 11,
    "User defined signal 2": 12,
    "Terminated": 15,
}
# Who sends a signal that does not come from the process's own fault (for a rank that exited on it with no
# other error in its log).
SIGNAL_SENDERS = {
    "SIGHUP": "its terminal or SSH session closed (run under nohup, tmux or the scheduler)",
    "SIGINT": "Ctrl-C or a launcher's interrupt",
    "SIGQUIT": "a user or tool asked for a core dump",
    "SIGUSR1": "the scheduler's warning signal (Slurm --signal, a preemption notice) or a tool's",
    "SIGUSR2": "the scheduler's warning signal (Slurm --signal, a preemption notice) or a tool's",
    "SIGPIPE": "a write to a pipe or socket whose reader had gone (a log pipe or a peer that ended)",
    "SIGALRM": "a timer the program or a library set",
    "SIGTERM": "the scheduler (time limit, preemption, scancel / kubectl delete) or the launcher stopping it",
    "SIGXCPU": "the CPU-time limit (ulimit -t, the scheduler's limit)",
    "SIGXFSZ": "the file-size limit (ulimit -f) while writing a file",
}


def signal_of_exitcode(code: object) -> Optional[str]:
    """The signal a negative exit code (-N: killed by signal N) names, e.g. -9 -> "SIGKILL"; None for
    anything else (a normal exit status, a number no signal has, a value that is not an int)."""
    if isinstance(code, bool) or not isinstance(code, int) or not -64 < code < 0:
        return None
    return SIGNAL_NAMES.get(-code, f"signal {-code}")
