"""`pgdoctor run`'s one-line summary on stderr when the job's own code fails: a script with a syntax
error (the logs end on an error no rule names) gets its root cause in the summary, as the report
has it, not "no root cause found"."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PGDOCTOR = [sys.executable, "-m", "pgdoctor", "run"]


def test_a_syntax_error_is_the_summarys_root_cause(tmp_path: Path, no_leftover_children) -> None:
    script = tmp_path / "train.py"
    script.write_text("import os\n\ndef main(:\n    pass\n")
    p = subprocess.run(
        [*PGDOCTOR, "--report", str(tmp_path / "r.json"), "--", sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 1  # the child's own exit code
    summary = p.stderr.strip().splitlines()[-1]
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["verdict"]["root_cause"] == "RUN134"
    assert summary.startswith("pgdoctor run: exit 1; root cause RUN134: ") and "SyntaxError" in summary
    assert "no root cause found" not in p.stderr


def test_a_clean_job_and_a_bare_failure_keep_their_summaries(tmp_path: Path, no_leftover_children) -> None:
    ok = subprocess.run(
        [*PGDOCTOR, "--", sys.executable, "-c", "print(1)"], capture_output=True, text=True, timeout=60
    )
    assert ok.returncode == 0 and ok.stderr.strip().splitlines()[-1] == "pgdoctor run: ok (exit 0)"
    bare = subprocess.run(
        [*PGDOCTOR, "--", sys.executable, "-c", "import sys; sys.exit(5)"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (
        bare.returncode == 5
        and bare.stderr.strip().splitlines()[-1] == "pgdoctor run: exit 5; no root cause found"
    )
