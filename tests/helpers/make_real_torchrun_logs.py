"""Record real torchrun output (torch on this machine, gloo, 2 ranks) for the diagnose corpus:

    python -m tests.helpers.make_real_torchrun_logs

Writes tests/fixtures/logs/torchrun_real_{exception,sigkill,segfault,hang,exception_abort}.log: the
combined stdout/stderr of `python -m torch.distributed.run --nproc-per-node 2
tests/helpers/torchrun_child.py MODE`, i.e. the `[rankN]:` prefixed child output, the agent's glog
lines and the ChildFailedError table exactly as this torch version prints them.

`exception_abort` is tests/helpers/hang_job.py's `raise 1` (rank 1 raises with its process group
alive) recorded on a run where the raising rank then died on SIGABRT (-6): torch 2.13's gloo aborts
in a static destructor at exit after the uncaught exception ("terminate called without an active
exception") in about one run of two here, so the job is rerun until that happens (at most 12).
"""

from __future__ import annotations

import os
import sys

from pgdoctor.probes.processes import free_port, run_children
from tests.helpers.paths import FIXTURES, HELPERS

ABORT_TRIES = 12


def record(mode: str) -> str:
    if mode == "raise":
        from tests.helpers.hang_lab import torchrun_argv

        argv = torchrun_argv("raise", [1], nproc=2)
        env = {
            **os.environ,
            "PYTHONPATH": str(HELPERS.parents[1]),
            "HANG_LIFE_S": "20",
            "OMP_NUM_THREADS": "1",
        }
        (out,) = run_children([argv], [env], 90)
        return out.stdout + out.stderr
    argv = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "2",
        "--master-port",
        str(free_port()),
        str(HELPERS / "torchrun_child.py"),
        mode,
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_", "NCCL_", "MASTER_"))}
    (out,) = run_children([argv], [env], 90)
    return out.stdout + out.stderr


def main() -> None:
    wanted = sys.argv[1:] or ["exception", "sigkill", "segfault", "hang", "exception_abort"]
    for name in wanted:
        if name == "exception_abort":
            for _ in range(ABORT_TRIES):
                text = record("raise")
                if "exitcode  : -6" in text and "sample 17 has 0 tokens" in text:
                    break
            else:
                sys.exit(f"no SIGABRT after the exception in {ABORT_TRIES} runs: nothing written")
        else:
            text = record(name)
        (FIXTURES / "logs" / f"torchrun_real_{name}.log").write_text(text)


if __name__ == "__main__":
    main()
