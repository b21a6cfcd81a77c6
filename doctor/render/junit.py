"""--format junit: JUnit XML for CI systems (Jenkins, GitLab, GitHub test reporters).

One <testsuite> per area, one <testcase> per check result. A check that produced findings at
or above the report's fail threshold (the report's verdict, which is the exit code's) carries
them in <failure>; lower-severity findings go to <system-out>, so a CI page that turns red means
the same as exit 1. A diagnosis's cascade (consequences of its root cause) is written in the root
cause's testcase as <system-out>, not counted as failures of their own. A check that could not run (its probe
was
unavailable or not selected) is <skipped> with the reason; a crashed check, and a probe that
crashed, timed out or was unavailable in an area asked for by name, is <error>: what makes
the exit code 3 (incomplete).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from typing import TextIO

from pgdoctor.knowledge.areas import AREAS
from pgdoctor.model import CheckResult, Finding, Report, Severity, Status

# XML 1.0 forbids most control characters even as character references; log lines have them.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(text: object) -> str:
    return _INVALID_XML.sub("\ufffd", str(text))


def _finding_text(f: Finding) -> str:
    lines = [f"{f.severity.value} {f.code} {f.slug}: {f.title}"]
    if f.scope.label():
        lines.append(f"  scope: {f.scope.label()}")
    lines.append(f"  {f.message}")
    lines.extend(f"  evidence: {e.located()}" for e in f.evidence)
    lines.append(f"  playbook: {f.playbook}")
    return "\n".join(lines)


def _area_order(areas: set[str]) -> list[str]:
    return [a for a in AREAS if a in areas] + sorted(areas - set(AREAS))


def _testcase(suite: ET.Element, classname: str, name: str, time_s: float) -> ET.Element:
    return ET.SubElement(
        suite, "testcase", classname=_clean(classname), name=_clean(name), time=f"{time_s:.6f}"
    )


def _check_case(
    suite: ET.Element,
    c: CheckResult,
    findings: list[Finding],
    threshold: Severity,
    cascade: frozenset[int] = frozenset(),
) -> str:
    """Adds the testcase; returns its outcome: passed, failure, skipped or error."""
    case = _testcase(suite, f"pgdoctor.{c.area}", c.name, c.duration_s)
    if c.status is Status.CRASHED:
        ET.SubElement(case, "error", message=_clean(c.reason), type="crashed").text = _clean(
            f"check {c.name} crashed: {c.reason}"
        )
        return "error"
    if c.status in (Status.SKIPPED, Status.UNAVAILABLE) and not findings:
        ET.SubElement(case, "skipped", message=_clean(f"{c.status.value}: {c.reason}"))
        return "skipped"
    # A cascade finding is a consequence of the root cause in the same testcase: told, not failed.
    failing = [f for f in findings if f.severity.rank >= threshold.rank and id(f) not in cascade]
    other = [f for f in findings if f.severity.rank < threshold.rank or id(f) in cascade]
    if other:
        ET.SubElement(case, "system-out").text = _clean(
            "\n\n".join(
                (
                    "consequence of the root cause " + str(f.facts.get("cascade_of")) + ": "
                    if id(f) in cascade
                    else ""
                )
                + _finding_text(f)
                for f in other
            )
        )
    if failing:
        worst = max(failing, key=lambda f: f.severity.rank)
        message = "; ".join(
            f"{f.code} {f.title}" + (f" ({f.scope.label()})" if f.scope.label() else "") for f in failing
        )
        ET.SubElement(case, "failure", message=_clean(message), type=worst.severity.value).text = _clean(
            "\n\n".join(_finding_text(f) for f in failing)
        )
        return "failure"
    return "passed"


def _suite(root: ET.Element, area: str, host: str, timestamp: str) -> ET.Element:
    return ET.SubElement(
        root,
        "testsuite",
        name=_clean(f"pgdoctor.{area}"),
        hostname=_clean(host or "unknown"),
        timestamp=timestamp,
    )


def render(report: Report, out: TextIO, color: bool = False) -> None:
    verdict = report.verdict
    threshold = verdict.fail_on
    # Only under a root cause that fails itself; else a failing consequence must still fail.
    cascade = frozenset(id(f) for f in verdict.cascade) if verdict.root in verdict.failing else frozenset()
    snapshot = report.snapshot
    host = snapshot.host if snapshot else str(report.meta.get("host", ""))
    timestamp = ""
    if snapshot:
        import datetime

        timestamp = datetime.datetime.fromtimestamp(snapshot.time_unix, datetime.timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%S"
        )

    # Findings belong to the check whose codes include theirs; any left over (a plugin that did
    # not declare its codes, a command without checks) get a testcase of their own per code.
    owner: dict[str, CheckResult] = {}
    for c in report.checks:
        for code in c.codes:
            owner.setdefault(code, c)
    by_check: dict[str, list[Finding]] = defaultdict(list)
    orphans: dict[tuple[str, str], list[Finding]] = defaultdict(list)

    def home(f: Finding) -> Finding:  # a cascade finding goes with its root cause
        return verdict.root if verdict.root is not None and id(f) in cascade else f

    for f in report.findings:
        h = home(f)
        if h.code in owner:
            by_check[owner[h.code].name].append(f)
        else:
            orphans[(h.area or "unknown", h.code)].append(f)

    # The probes that make the run incomplete (exit 3), as the engine named them in the report's
    # incomplete reasons (crashed, timed out, or unmeasurable in an area asked for by name; absent
    # hardware, such as no InfiniBand under --only net, is an answer and not among them).
    broken_probes = [
        p
        for p in (snapshot.probes if snapshot else ())
        if any(r.startswith(f"probe {p.name} ") for r in report.incomplete_reasons)
    ]
    areas = {c.area for c in report.checks} | {a for a, _ in orphans} | {p.area for p in broken_probes}

    root = ET.Element("testsuites", name=_clean(f"pgdoctor {report.command}"))
    totals: dict[str, int] = defaultdict(int)
    for area in _area_order(areas):
        suite = _suite(root, area, host, timestamp)
        counts: dict[str, int] = defaultdict(int)
        elapsed = 0.0
        for p in broken_probes:
            if p.area == area:
                case = _testcase(suite, f"pgdoctor.{area}.probe", f"probe:{p.name}", p.duration_s)
                ET.SubElement(case, "error", message=_clean(p.reason), type=p.status.value).text = _clean(
                    f"probe {p.name} {p.status.value}: {p.reason}"
                )
                counts["error"] += 1
                elapsed += p.duration_s
        for c in report.checks:
            if c.area == area:
                counts[_check_case(suite, c, by_check.get(c.name, []), threshold, cascade)] += 1
                elapsed += c.duration_s
        for (f_area, code), fs in sorted(orphans.items()):
            if f_area == area:
                pseudo = CheckResult(f"finding:{code}", area, Status.FAILED)
                counts[_check_case(suite, pseudo, fs, threshold, cascade)] += 1
        n = sum(counts.values())
        suite.set("tests", str(n))
        suite.set("failures", str(counts["failure"]))
        suite.set("errors", str(counts["error"]))
        suite.set("skipped", str(counts["skipped"]))
        suite.set("time", f"{elapsed:.6f}")
        for k in ("failure", "error", "skipped"):
            totals[k] += counts[k]
        totals["tests"] += n
    if verdict.status == "incomplete" and not totals["error"]:
        # Incomplete for a reason no probe or check carries (a repro that did not show its fault,
        # an interrupted sweep): one error testcase says it, so the page is not green on exit 3.
        suite = _suite(root, "incomplete", host, timestamp)
        case = _testcase(suite, "pgdoctor.incomplete", "incomplete", 0.0)
        ET.SubElement(case, "error", message=_clean(verdict.incomplete[0]), type="incomplete").text = _clean(
            "\n".join(verdict.incomplete)
        )
        for k, v in (
            ("tests", "1"),
            ("failures", "0"),
            ("errors", "1"),
            ("skipped", "0"),
            ("time", "0.000000"),
        ):
            suite.set(k, v)
        totals["error"] += 1
        totals["tests"] += 1
    root.set("tests", str(totals["tests"]))
    root.set("failures", str(totals["failure"]))
    root.set("errors", str(totals["error"]))
    root.set("skipped", str(totals["skipped"]))
    ET.indent(root)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(root, encoding="unicode"))
    out.write("\n")
