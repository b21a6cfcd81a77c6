"""torch elastic's ChildFailedError table (torch/distributed/elastic/multiprocessing/errors/__init__.py,
1.10+) as a failed torchrun job prints it, for table tests of the launcher and wrapper rules. One
layout for every test that needs it: the rules read its keys (rank, exitcode, pid, host, traceback),
so a test's table must be the real one, not a copy that drifts."""

from __future__ import annotations

import signal


def child_failed_table(
    rank: int,
    exitcode: int,
    pid: int,
    *,
    script: str = "train.py",
    host: str = "gpu-node-1",
    when: str = "2024-03-21_17:04:45",
    local_rank: int | None = None,
) -> str:
    """The table with one root-cause entry. Its traceback line is the one elastic writes: the signal
    for a negative exit code, else the pointer to the errors page (no error file was recorded)."""
    if exitcode < 0:
        name = signal.Signals(-exitcode).name
        traceback = f"Signal {-exitcode} ({name}) received by PID {pid}"
    else:
        traceback = "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"
    local = rank if local_rank is None else local_rank
    return (
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
        "============================================================\n"
        f"{script} FAILED\n"
        "------------------------------------------------------------\n"
        "Failures:\n"
        "  <NO_OTHER_FAILURES>\n"
        "------------------------------------------------------------\n"
        "Root Cause (first observed failure):\n"
        "[0]:\n"
        f"  time      : {when}\n"
        f"  host      : {host}\n"
        f"  rank      : {rank} (local_rank: {local})\n"
        f"  exitcode  : {exitcode} (pid: {pid})\n"
        "  error_file: <N/A>\n"
        f"  traceback : {traceback}\n"
        "============================================================\n"
    )
