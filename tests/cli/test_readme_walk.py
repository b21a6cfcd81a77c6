"""A new user's first commands, taken from the README itself, in order, in one fresh copy of the
tree and one fresh venv: the quick start's install-and-check, its test-setup-and-tests, then the
job-script line. (A build/ left by the first command once broke the second; a clean CI clone
never saw it.)

The second command's `scripts/test.sh` is run on the architecture tests only: the whole suite
inside the suite would double its time, and `.ci/run` already runs both commands verbatim on
every CI run. Lint and type checks, where the build/ leftover bit, run in full. Inside .ci/run itself
(which sets PGDOCTOR_QUICK_START_RUN) the first two commands have just run in that fresh clone and venv:
there only the job-script line runs, and a test holds .ci/run to the README's commands.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def fenced_commands(section: str) -> list[str]:
    """The lines of the fenced blocks under a README heading (## <section>), in order."""
    text = README.read_text()
    m = re.search(rf"^## {re.escape(section)}.*?$(.*?)(?=^## )", text, re.M | re.S)
    assert m, f"README has no section {section!r}"
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", m.group(1), re.M | re.S)
    return [ln.strip() for b in blocks for ln in b.splitlines() if ln.strip() and not ln.startswith("#")]


def test_the_readme_names_the_commands_this_walk_runs() -> None:
    quick = fenced_commands("Quick start")
    assert quick[0] == "python3 -m pip install . && pgdoctor check"
    assert quick[1] == "bash scripts/test-setup.sh && bash scripts/test.sh"
    assert fenced_commands("Use in a job script")[0].startswith("pgdoctor check --json > preflight.json ||")


def _fresh_copy(dest: Path) -> None:
    """What a clone of this tree holds: tracked files and untracked ones git does not ignore."""
    files = (
        subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True, capture_output=True
        )
        .stdout.decode()
        .split("\0")
    )
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


# Set by .ci/run once it has run the quick start's first command in its fresh clone and venv, while it
# runs the second (this suite): the walk's first two commands would repeat it (about 50 CPU-s, a
# twelfth of the suite on 2 cores), so only the job-script line runs, in that venv.
QUICK_START_RUN = "PGDOCTOR_QUICK_START_RUN"
CI_RUN = ROOT / ".ci" / "run"


def _check_job_line(third: subprocess.CompletedProcess[str], cwd: Path) -> None:
    report = json.loads((cwd / "preflight.json").read_text())
    assert {"schema_version", "findings", "results"} <= set(report)
    failing = [f["code"] for f in report["findings"] if f["severity"] == "fail"]
    assert third.returncode == (1 if failing else 0), (failing, third.stdout, third.stderr)
    assert "ENV101" not in failing  # torch came with the test setup


def test_ci_runs_the_readme_quick_start_verbatim() -> None:
    """What lets the walk below trust .ci/run: its two commands are the README's, in order (pip's
    --quiet aside), in one clone and one venv."""
    lines = [ln.strip() for ln in CI_RUN.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    install_and_check, setup_and_test = fenced_commands("Quick start")[:2]
    first = next(i for i, ln in enumerate(lines) if ln.replace(" --quiet", "").startswith(install_and_check))
    second = next(i for i, ln in enumerate(lines) if ln == setup_and_test)
    assert first < second
    assert lines.index(f"export {QUICK_START_RUN}=1") < second
    assert not any("cd " in ln or "venv" in ln for ln in lines[first:second]), lines[first:second]


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.skipif(not os.environ.get(QUICK_START_RUN), reason="the whole walk runs outside .ci/run")
def test_job_script_line_after_the_ci_quick_start(tmp_path: Path) -> None:
    third = subprocess.run(
        ["bash", "-c", fenced_commands("Use in a job script")[0]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    _check_job_line(third, tmp_path)


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.skipif(bool(os.environ.get(QUICK_START_RUN)), reason=".ci/run has just run this walk's commands")
def test_readme_quick_start_then_job_script_line_in_one_fresh_venv(tmp_path: Path) -> None:
    tree = tmp_path / "pgdoctor"
    _fresh_copy(tree)
    # The copy borrows this tree's mypy cache: a cold mypy run is about 20 s of the walk's CPU (0.7 s warm),
    # and the cache cannot change mypy's answer (each entry is checked against its source); which files
    # mypy finds (build/ beside the sources, the leftover this walk guards) is read afresh either way.
    if (ROOT / ".mypy_cache").is_dir():
        shutil.copytree(ROOT / ".mypy_cache", tree / ".mypy_cache")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = f"{venv / 'bin'}:{env['PATH']}"
    env["VIRTUAL_ENV"] = str(venv)
    # pip byte-compiles every file it installs (torch and the test dependencies: thousands of modules, most
    # never imported here), into a folder this walk deletes: much of the walk's CPU, and nothing the walk
    # checks. Without it, the modules the commands import are compiled as they are imported.
    env["PIP_COMPILE"] = "0"

    def sh(command: str, timeout: float) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-c", command], cwd=tree, env=env, capture_output=True, text=True, timeout=timeout
        )

    install_and_check, setup_and_test = fenced_commands("Quick start")[:2]
    first = sh(install_and_check, 600)
    # Without torch in the new venv the check reports ENV101 (exit 1) and says which Python.
    assert first.returncode in (0, 1), first.stderr[-3000:]
    assert "Traceback" not in first.stderr
    if first.returncode == 1:
        assert "ENV101" in first.stdout and str(venv) in first.stdout
    assert (tree / "build").is_dir(), "pip install . leaves build/: the case the second command must survive"

    second = sh(setup_and_test + " tests/architecture/test_architecture.py -p no:cacheprovider", 900)
    assert second.returncode == 0, (second.stdout[-3000:], second.stderr[-3000:])
    assert "All checks passed" in second.stdout and "Success: no issues found" in second.stdout

    job_line = fenced_commands("Use in a job script")[0]
    third = sh(job_line, 300)
    _check_job_line(third, tree)
