"""One verdict per report, made once (Report.verdict), printed by every renderer and returned as
the exit code: a page that says PASSED while the command exits 1 (repro imbalance's HTML once
did), a console that says "[ok] no failure found" beside a straggler, or a JUnit file with 0
failures on exit 1 is a contradiction this file catches.

Each format's verdict is read back from what it wrote: the console's last verdict line, the JSON's
"verdict", JUnit's failure/error counts, the Prometheus pgdoctor_verdict series, the HTML page's
data-verdict. First for reports of every shape (failed, cascade, incomplete, below fail_on, repro's
fail_on warn), then for the real commands, each in every format it offers."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pgdoctor.model import Finding, Report, Scope, Severity, exit_code
from pgdoctor.render import FORMATS, get_renderer
from tests.helpers.paths import FIXTURES, ROOT

FIX = FIXTURES
EXIT = {"failed": 1, "incomplete": 3, "passed": 0}


def verdict_of(fmt: str, text: str) -> str:
    if fmt == "json":
        return str(json.loads(text)["verdict"]["status"])
    if fmt == "junit":
        root = ET.fromstring(text)
        if int(root.get("failures", "0")):
            return "failed"
        return "incomplete" if int(root.get("errors", "0")) else "passed"
    if fmt == "prometheus":
        on = re.findall(r'^pgdoctor_verdict\{[^}]*status="(\w+)"\} 1$', text, re.M)
        assert len(on) == 1, text
        return on[0]
    if fmt == "html":
        found = re.findall(r'data-verdict="(\w+)"', text)
        assert len(found) == 1
        return found[0]
    lines = re.findall(r"^(FAILED|INCOMPLETE|PASSED): ", text, re.M)
    assert lines, text[-2000:]
    return lines[-1].lower()


def _f(code: str, sev: str, **facts: Any) -> Finding:
    return Finding(
        code,
        code.lower(),
        Severity(sev),
        "process_crash",
        f"title {code}",
        f"message {code}",
        "run",
        Scope(rank=0),
        (),
        facts,
    )


SHAPES = {
    "failed with a cascade": Report(
        "diagnose",
        None,
        (
            _f("RUN243", "fail", root_cause=True),
            _f("RUN244", "fail", cascade_of="RUN243"),
            _f("RUN194", "fail", cascade_of="RUN243"),
        ),
    ),
    "warn only (a straggler)": Report("diagnose", None, (_f("RUN405", "warn"),)),
    "incomplete without findings": Report(
        "bench collectives", None, (), incomplete_reasons=("interrupted after 3 of 9 sizes",)
    ),
    "repro fails on warn": Report(
        "repro", None, (_f("RUN401", "warn", root_cause=True),), fail_on=Severity.WARN
    ),
    "clean": Report("check", None, ()),
    "fail_on from meta": Report("check", None, (_f("ENV301", "warn"),), meta={"fail_on": "warn"}),
}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_format_says_the_verdict_the_exit_code_says(shape: str, fmt: str) -> None:
    report = SHAPES[shape]
    out = io.StringIO()
    get_renderer(fmt)(report, out, False)
    assert EXIT[verdict_of(fmt, out.getvalue())] == exit_code(report), (shape, fmt)


def test_a_cascade_is_one_failure_in_junit() -> None:
    out = io.StringIO()
    get_renderer("junit")(SHAPES["failed with a cascade"], out, False)
    assert ET.fromstring(out.getvalue()).get("failures") == "1"
    assert "consequence of the root cause RUN243" in out.getvalue()


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pgdoctor", *args], capture_output=True, text=True, timeout=300, cwd=cwd
    )


def _xid_job(tmp: Path) -> Path:
    (tmp / "job").mkdir()
    (tmp / "job" / "a_job.log").write_text(
        "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
    )
    (tmp / "job" / "dmesg.log").write_text(
        "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus.\n"
    )
    return tmp / "job"


COMMANDS = {
    "check": (["check", "--level", "quick", "--only", "software,host"], ["console", *sorted(FORMATS)]),
    # no InfiniBand here: the ib probe is unavailable (not_present), an answer, not incomplete
    "check net": (["check", "--level", "quick", "--only", "net"], ["console", *sorted(FORMATS)]),
    "diagnose failed": (["diagnose", "{xid}"], ["console", *sorted(FORMATS)]),
    "diagnose traces": (
        ["diagnose", str(FIX / "traces" / "cpu_compute_rank2_4rank")],
        ["console", *sorted(FORMATS)],
    ),
    "diagnose clean": (
        ["diagnose", str(FIX / "logs" / "decoys_clean_run.log")],
        ["console", *sorted(FORMATS)],
    ),
    "plan": (["plan", "--params", "70B", "--gpu", "a100-40g", "--gpus-per-node", "1"], ["console", "json"]),
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_in_every_format_agrees_with_its_exit_code(name: str, tmp_path: Path) -> None:
    args, formats = COMMANDS[name]
    args = [a.replace("{xid}", str(_xid_job(tmp_path))) if "{xid}" in a else a for a in args]
    seen = {}
    for fmt in formats:
        extra = (
            ["--json"]
            if fmt == "json" and name == "plan"
            else ([] if fmt == "console" else ["--format", fmt])
        )
        res = _cli(*args, *extra)
        assert res.returncode in EXIT.values(), (fmt, res.stderr[-2000:])
        seen[fmt] = (verdict_of(fmt, res.stdout), res.returncode)
        assert EXIT[seen[fmt][0]] == res.returncode, (name, fmt, seen[fmt])
    assert len({v for v, _ in seen.values()}) == 1, seen


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_repro_imbalance_page_says_what_its_exit_code_says(tmp_path: Path) -> None:
    """A real run of ranks: its report in every format once, and the command's exit code."""
    from pgdoctor.cli.repro import run_and_diagnose
    from pgdoctor.lab.spec import LabSpec

    spec = LabSpec(
        fault="imbalance",
        strategy="ddp",
        nproc=2,
        run_dir=str(tmp_path),
        trace_dir=str(tmp_path / "t"),
        factor=3.0,
        faulty_rank=-1,
        steps=0,
        device="cpu",
        schedule="1f1b",
        microbatches=4,
        pg_timeout_s=5.0,
    )
    report = run_and_diagnose(spec, 120.0, with_events=True)
    code = exit_code(report)
    assert code in (1, 3)
    for fmt in sorted(FORMATS):
        out = io.StringIO()
        get_renderer(fmt)(report, out, False)
        assert EXIT[verdict_of(fmt, out.getvalue())] == code, fmt
