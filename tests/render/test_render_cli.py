"""`pgdoctor check --format F [-o FILE]` for every format, as a job script runs it."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pgdoctor.model import Report
from pgdoctor.render import FORMATS, get_renderer
from tests.helpers.render_reports import gpu_finding, trace

BASE_ENV = {k: v for k, v in os.environ.items() if not k.startswith(("NCCL_", "TORCH_", "PGDOCTOR_"))}
ENV = {**BASE_ENV, "NCCL_SOCKET_IFNAME": "nosuchif"}


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pgdoctor", "check", "--level", "quick", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env=ENV,
    )


def looks_right(fmt: str, text: str) -> None:
    assert "ENV401" in text
    if fmt == "json":
        assert any(f["code"] == "ENV401" for f in json.loads(text)["findings"])
    elif fmt == "junit":
        assert ET.fromstring(text.split("?>", 1)[1]).tag == "testsuites"
    elif fmt == "prometheus":
        assert 'pgdoctor_finding{host="' in text and 'code="ENV401",severity="fail"} 1' in text
    elif fmt == "html":
        assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_format_to_a_file_and_to_stdout(fmt: str, tmp_path: Path) -> None:
    out = tmp_path / f"report.{fmt}"
    proc = run("--format", fmt, "-o", str(out))
    assert proc.returncode == 1, proc.stderr  # ENV401 is a fail
    assert proc.stdout == ""
    looks_right(fmt, out.read_text(encoding="utf-8"))
    proc = run("--format", fmt)
    assert proc.returncode == 1, proc.stderr
    looks_right(fmt, proc.stdout)


def test_all_integration_formats_are_registered() -> None:
    assert {"junit", "prometheus", "html"} <= set(FORMATS)


def test_unwritable_output_is_one_line_exit_2(tmp_path: Path) -> None:
    proc = run("--format", "html", "-o", str(tmp_path / "no" / "such" / "dir" / "r.html"))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stderr.strip().count("\n") == 0


def test_unknown_format_is_a_usage_error() -> None:
    proc = run("--format", "yaml")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


@pytest.mark.parametrize("fmt", ["junit", "prometheus", "html"])
def test_a_report_without_snapshot_renders(fmt: str) -> None:
    """diagnose and repro reports have findings and meta but no snapshot, checks or probes."""
    report = Report(
        "repro",
        None,
        (gpu_finding(),),
        meta={"host": "node-b"},
        extra={"trace_events": trace(), "ranks": [{"rank": 0}]},
    )
    buf = io.StringIO()
    get_renderer(fmt)(report, buf, False)
    text = buf.getvalue()
    assert "GPU101" in text and "node-b" in text
    if fmt == "html":
        assert '<section id="timeline">' in text


def test_junit_follows_fail_on_warn(tmp_path: Path) -> None:
    """A warning (ENV503 from a 10^9 open-files floor) is a JUnit failure exactly when it fails the run."""
    cfg = tmp_path / "c.toml"
    cfg.write_text("[host]\nmin_open_files = 1000000000\n")
    out = tmp_path / "r.xml"
    for fail_on, rc, failed in (("fail", 0, False), ("warn", 1, True)):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pgdoctor",
                "check",
                "--level",
                "quick",
                "--only",
                "host",
                "--config",
                str(cfg),
                "--fail-on",
                fail_on,
                "--format",
                "junit",
                "-o",
                str(out),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env=BASE_ENV,
        )
        assert proc.returncode == rc, proc.stderr
        case = next(
            c for c in ET.parse(out).getroot().iter("testcase") if c.get("name") == "host.host_limits"
        )
        assert (case.find("failure") is not None) is failed
        assert "ENV503" in ET.tostring(case, encoding="unicode")
