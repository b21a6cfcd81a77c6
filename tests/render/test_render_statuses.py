"""One report, five formats: every renderer says the same thing about each check (issue: a
check with only an info finding was `failed` in JSON, HTML and Prometheus, `[ok]` in the console)."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET

import pytest

from pgdoctor.model import Report, Severity, Status
from pgdoctor.render import get_renderer
from tests.helpers.render_reports import live_report


def _text(report: Report, fmt: str) -> str:
    out = io.StringIO()
    get_renderer(fmt)(report, out, False)
    return out.getvalue()


@pytest.fixture(scope="module")
def report() -> Report:
    rep = live_report()  # ENV401 (fail) and ENV408 (info) from real probes of this host
    codes = {f.code: f.severity for f in rep.findings}
    assert codes.get("ENV401") is Severity.FAIL and codes.get("ENV408") is Severity.INFO
    return rep


def test_every_format_gives_each_check_the_same_status(report: Report) -> None:
    js = {
        r["name"]: r["status"]
        for r in json.loads(_text(report, "json"))["results"]
        if r.get("kind", "check") == "check"
    }
    prom = dict(
        re.findall(
            r'pgdoctor_check_status\{[^}]*check="([^"]+)",status="([a-z]+)"\} 1', _text(report, "prometheus")
        )
    )
    html = dict(
        re.findall(
            r"<tr><td>check</td><td>([^<]+)</td><td>[^<]*</td><td>([a-z]+)</td>", _text(report, "html")
        )
    )
    junit = {c.get("name"): c for c in ET.fromstring(_text(report, "junit")).iter("testcase")}
    for c in report.checks:
        assert js[c.name] == prom[c.name] == html[c.name] == c.status.value, c.name
        failed_here = [f for f in report.findings if f.code in c.codes and f.severity is not Severity.INFO]
        assert (c.status is Status.FAILED) == bool(failed_here), c.name
        case = junit[c.name]
        if c.status is Status.PASSED:
            assert case.find("failure") is None and case.find("error") is None, c.name


def test_info_only_check_passes_and_the_console_says_ok(report: Report) -> None:
    knobs = next(c for c in report.checks if c.name == "knobs.nccl_knobs")
    assert knobs.status is Status.PASSED and knobs.reason == "info: ENV408"
    console = _text(report, "console")
    line = next(ln for ln in console.splitlines() if "NCCL / gloo / torch settings" in ln)
    launch_fail = any(f.area == "knobs" and f.severity is Severity.FAIL for f in report.findings)
    assert line.startswith("[x]" if launch_fail else "[ok]"), line
