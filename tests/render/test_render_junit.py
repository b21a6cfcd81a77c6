"""--format junit: a suite per area, a case per check; failures carry the findings."""

from __future__ import annotations

import dataclasses
import io
import xml.etree.ElementTree as ET

import pytest

from pgdoctor.model import CheckResult, Evidence, ProbeResult, Report, Severity, Status
from pgdoctor.render import get_renderer
from tests.helpers.render_reports import gpu_finding, live_report


def render(report: Report) -> ET.Element:
    buf = io.StringIO()
    get_renderer("junit")(report, buf, False)
    text = buf.getvalue()
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    return ET.fromstring(text)


def cases(root: ET.Element) -> dict[str, ET.Element]:
    return {c.get("name", ""): c for c in root.iter("testcase")}


@pytest.fixture(scope="module")
def report() -> Report:
    return live_report()


def test_one_suite_per_area_one_case_per_check(report: Report) -> None:
    root = render(report)
    suites = root.findall("testsuite")
    assert sorted(s.get("name") for s in suites) == sorted({f"pgdoctor.{c.area}" for c in report.checks})
    assert sorted(cases(root)) == sorted(c.name for c in report.checks)
    for s in suites:
        kids = s.findall("testcase")
        assert int(s.get("tests", "-1")) == len(kids)
        assert int(s.get("failures", "-1")) == sum(1 for k in kids if k.find("failure") is not None)
        assert int(s.get("skipped", "-1")) == sum(1 for k in kids if k.find("skipped") is not None)
        assert int(s.get("errors", "-1")) == sum(1 for k in kids if k.find("error") is not None)
    assert int(root.get("tests", "-1")) == len(report.checks)


def test_failure_carries_the_finding_of_its_check(report: Report) -> None:
    case = cases(render(report))["knobs.socket_ifname"]
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("type") == "fail"
    assert "ENV401" in failure.get("message", "")
    assert "nosuchif" in (failure.text or "")
    assert "pgdoctor explain ENV401" in (failure.text or "")


def test_info_findings_do_not_fail_the_case_but_are_reported(report: Report) -> None:
    infos = [f for f in report.findings if f.severity is Severity.INFO]
    assert infos, "the live run has no info finding to test with"
    owner = next(c for c in report.checks if infos[0].code in c.codes)
    case = cases(render(report))[owner.name]
    if not any(f.severity is Severity.FAIL for f in report.findings if f.code in owner.codes):
        assert case.find("failure") is None
    out = case.find("system-out")
    assert out is not None and infos[0].code in (out.text or "")


def test_fail_on_warn_in_meta_turns_warnings_into_failures(report: Report) -> None:
    warn = dataclasses.replace(gpu_finding(), severity=Severity.WARN, code="ENV404")
    rep = dataclasses.replace(
        report,
        findings=(warn,),
        checks=(CheckResult("knobs.nccl_knobs", "knobs", Status.FAILED, codes=("ENV404",)),),
    )
    assert cases(render(rep))["knobs.nccl_knobs"].find("failure") is None
    rep = dataclasses.replace(rep, meta={**rep.meta, "fail_on": "warn"})
    failure = cases(render(rep))["knobs.nccl_knobs"].find("failure")
    assert failure is not None and failure.get("type") == "warn"


def test_unavailable_check_is_skipped_with_its_reason(report: Report) -> None:
    blocked = [c for c in report.checks if c.status in (Status.UNAVAILABLE, Status.SKIPPED)]
    assert blocked, "every check ran on this host; nothing to test"
    case = cases(render(report))[blocked[0].name]
    skipped = case.find("skipped")
    assert skipped is not None and blocked[0].reason in skipped.get("message", "")


def test_crashed_check_and_crashed_probe_are_errors(report: Report) -> None:
    assert report.snapshot is not None
    crashed = CheckResult(
        "host.boom", "host", Status.CRASHED, "ZeroDivisionError: division by zero", 0.001, ()
    )
    probe = ProbeResult("test_raise", "host", Status.CRASHED, "RuntimeError: probe exploded")
    snap = dataclasses.replace(report.snapshot, probes=(*report.snapshot.probes, probe))
    # as the engine reports them (runner.incomplete_reasons): the probe that makes the run incomplete
    reasons = (
        "probe test_raise crashed: RuntimeError: probe exploded",
        "check host.boom crashed: ZeroDivisionError",
    )
    root = render(
        dataclasses.replace(
            report, snapshot=snap, checks=(*report.checks, crashed), incomplete_reasons=reasons
        )
    )
    err = cases(root)["host.boom"].find("error")
    assert err is not None and "ZeroDivisionError" in err.get("message", "")
    perr = cases(root)["probe:test_raise"].find("error")
    assert perr is not None and "probe exploded" in (perr.text or "")
    host = next(s for s in root.findall("testsuite") if s.get("name") == "pgdoctor.host")
    assert host.get("errors") == "2"


def test_findings_without_a_check_get_their_own_case_and_text_is_xml_safe(report: Report) -> None:
    nasty = dataclasses.replace(gpu_finding(), evidence=(Evidence("NVRM: Xid \x1b[31m79\x00 <&> ]]>"),))
    root = render(dataclasses.replace(report, findings=(*report.findings, nasty), checks=()))
    case = cases(root)["finding:GPU101"]
    failure = case.find("failure")
    assert failure is not None and "Xid" in (failure.text or "") and "<&> ]]>" in (failure.text or "")
