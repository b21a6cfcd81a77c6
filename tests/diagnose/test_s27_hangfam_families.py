"""s27 hangfam: collective_timeout families of the released misses, read as families, with near misses
that must stay as they were.

- A launcher's record of a rank that ended on SIGABRT (-6) after another rank's watchdog had waited out its
  whole collective timeout (composer's "Rank 1 crashed with exit code -6." after rank 0's "Watchdog caught
  collective operation timeout", v12k-nccl_timeout-006, llm-foundry#203; DeepSpeed's launcher "exits with
  return code = -6"): that rank's own watchdog aborted it after the same wait, so the timeout leads
  (causality.py, as for SIGKILL). A SIGABRT recorded before the timeout (the rank that died first and left
  the others waiting a whole timeout), or a fault signal after it, still leads.
"""

from __future__ import annotations

from tests.helpers.diagnose_root import root_finding

_TIMEOUT = (
    "[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=40, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600321 "
    "milliseconds before timing out."
)
_COMPOSER_ABORT = (
    "ERROR:composer.cli.launcher:Rank 3 crashed with exit code -6.\n"
    "Waiting up to 30 seconds for all training processes to terminate. Press Ctrl-C to exit immediately."
)


def test_sigabrt_after_anothers_timeout_is_its_consequence() -> None:
    # v12k-nccl_timeout-006 (llm-foundry#203): rank 0's watchdog, then composer's record of rank 3's abort
    log = f"{_TIMEOUT}\n{_COMPOSER_ABORT}\nGlobal rank 0 (PID 786) exited with code -6\n"
    root = root_finding(log)
    assert root is not None and root.code == "RUN151", root
    assert root.facts.get("seq") == 40 and root.facts.get("op") == "ALLREDUCE" and root.facts.get("rank") == 0


def test_sigabrt_before_the_timeout_still_leads() -> None:
    # the rank that aborted first left the others waiting: its record comes a whole timeout earlier
    root = root_finding(f"{_COMPOSER_ABORT}\n{_TIMEOUT}\n")
    assert root is not None and root.category == "process_crash" and root.facts.get("rank") == 3, root


def test_a_fault_after_the_timeout_still_leads() -> None:
    # SIGSEGV is no watchdog's doing
    log = f"{_TIMEOUT}\nERROR:composer.cli.launcher:Rank 3 crashed with exit code -11.\n"
    root = root_finding(log)
    assert root is not None and root.category == "process_crash", root


def test_deepspeed_launcher_abort_after_the_timeout() -> None:
    log = (
        f"{_TIMEOUT}\n[2024-01-01 00:00:00,000] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', "
        "'-u', 'train.py', '--local_rank=3'] exits with return code = -6\n"
    )
    root = root_finding(log)
    assert root is not None and root.code == "RUN151", root


def test_sigabrt_alone_stays_a_crash() -> None:
    # without a timeout in the paste the abort is all the log says (v15b-nccl_timeout-005's shape)
    root = root_finding("ERROR:composer.cli.launcher:Rank 3 crashed with exit code -6.\n")
    assert root is not None and root.category == "process_crash", root
