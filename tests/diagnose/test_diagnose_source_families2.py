"""More message families read at their source (continues test_diagnose_source_families.py): each case
is written from the format string of the code that prints it (Open MPI / PRRTE's errmgr help text,
NCCL's transport/nvls.cc CUCHECK sites, the aws-ofi-nccl plugin), with the prefixes and redactions
real logs add."""

from __future__ import annotations

from typing import Any

import pytest

from pgdoctor.diagnose.api import diagnose_sources


def _root(log: str) -> Any:
    findings = [f for f in diagnose_sources([("job.log", log)]) if f.severity.value in ("warn", "fail")]
    return findings[0] if findings else None


# -- Open MPI's "noticed that ... exited on signal": 1.2's "job rank", 1.3+ "process rank", PRRTE's prterun ------

@pytest.mark.parametrize(("line", "code", "pid"), [
    ("mpirun noticed that process rank 1 with PID 4242 on node gpu-3 exited on signal 9 (Killed).", "RUN121", 4242),
    ("mpirun noticed that job rank 1 with PID 4242 on node gpu-3 exited on signal 9 (Killed).", "RUN121", 4242),
    ("prterun noticed that process rank 1 with PID 4242 on node gpu-3 exited on signal 11 (Segmentation fault).",
     "RUN131", 4242),
    # a paste with the PID blanked out
    ("mpirun noticed that process rank 1 with PID xxxxxx on node gpu-3 exited on signal 9 (Killed).", "RUN121", None),
])
def test_open_mpi_signal_record_in_every_form(line: str, code: str, pid: Any) -> None:
    log = ("Primary job  terminated normally, but 1 process returned\n"
           "a non-zero exit code. Per user-direction, the job has been aborted.\n" + line + "\n")
    root = _root(log)
    assert root is not None and root.code == code
    assert root.facts["rank"] == 1 and root.facts["host"] == "gpu-3" and root.facts.get("pid") == pid
