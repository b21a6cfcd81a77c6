"""Findings, check results and the report that renderers and the exit code read."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Optional, TypedDict

from pgdoctor.model.measurement import HOST, SCHEMA_VERSION, Scope, Severity, Status, result_json
from pgdoctor.model.redact import scrub
from pgdoctor.model.snapshot import Snapshot


@dataclass(frozen=True)
class Evidence:
    """A fact that justifies a finding: a measurement, or a log line with its place."""

    text: str
    key: str = ""
    file: str = ""
    line: int = 0

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in ("", 0)} | {"text": self.text}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Evidence:
        return cls(data["text"], data.get("key", ""), data.get("file", ""), int(data.get("line", 0)))

    def located(self) -> str:
        """The text with where it comes from (`file:line: `, else `key: `), once: a measurement's
        text usually starts with its own key already."""
        if self.file:
            return f"{self.file}:{self.line}: {self.text}"
        if self.key and not self.text.startswith(self.key):
            return f"{self.key}: {self.text}"
        return self.text


@dataclass(frozen=True)
class Finding:
    """One problem found: stable code, severity, what was observed, why we think so, where."""

    code: str
    slug: str
    severity: Severity
    category: str
    title: str
    message: str
    area: str
    scope: Scope = HOST
    evidence: tuple[Evidence, ...] = ()
    facts: Mapping[str, Any] = field(default_factory=dict)

    @property
    def playbook(self) -> str:
        return f"pgdoctor explain {self.code}"

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "slug": self.slug,
            "severity": self.severity.value,
            "category": self.category,
            "area": self.area,
            "title": self.title,
            "message": self.message,
            "scope": self.scope.to_json(),
            "evidence": [e.to_json() for e in self.evidence],
            "facts": dict(self.facts),
            "playbook": self.playbook,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Finding:
        return cls(
            code=data["code"],
            slug=data["slug"],
            severity=Severity(data["severity"]),
            category=data.get("category", ""),
            title=data["title"],
            message=data["message"],
            area=data.get("area", ""),
            scope=Scope.from_json(data.get("scope", {})),
            evidence=tuple(Evidence.from_json(e) for e in data.get("evidence", [])),
            facts=dict(data.get("facts", {})),
        )


@dataclass(frozen=True)
class CheckResult:
    name: str
    area: str
    status: Status
    reason: str = ""
    duration_s: float = 0.0
    codes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {**result_json(self), "codes": list(self.codes)}


class ReportExtra(TypedDict, total=False):
    """The sections a command adds to its report beside findings and measurements. Each is
    printed as a top-level key of `--json` (docs/output-formats.md) and read by the renderers of
    render/ (HTML sections) and by the command's own console view; a new section is declared here
    first, with what it holds, so renderers and readers never guess at an untyped dict."""

    nodes: list[dict[str, Any]]
    """check across nodes: per node, its host, rank and what it measured (engine/multinode.py)."""
    traces: dict[str, Any]
    """diagnose on profiler traces: per-rank time breakdown and the straggler (diagnose/profile/)."""
    ranks: list[dict[str, Any]]
    """repro: one row per rank (exit, stderr tail, dumps, the fault it played) (cli/repro.py)."""
    trace_events: list[dict[str, Any]]
    """repro with tracing: the merged Chrome/Perfetto events of every rank (trace/events.py)."""
    scaling: dict[str, Any]
    """bench scaling: rows per world size, gradient bytes, strong or weak (verify/scaling.py)."""
    verify: dict[str, Any]
    """verify: the VerifyResult as JSON: verdict, first divergent tensor, cause (verify/result.py)."""
    plan: dict[str, Any]
    """plan: PlanResult.to_json(): model, inputs, layouts best first, notes (plan/run.py)."""
    hang: dict[str, Any]
    """hang, run, and diagnose of a saved hang snapshot: {"jobs": [{"job", "world_size", "hosts",
    "culprits", "progressing_ranks", "groups", "ranks": [{"rank", "pid", "host", "stack",
    "progressing", "tiers", "workers", ...}]}]} (diagnose/stacks/report.py)."""


@dataclass(frozen=True)
class Verdict:
    """The one judgement of a report, made once (Report.verdict): every renderer prints it and
    the exit code is derived from it, so a page can never say PASSED while the command exits 1.

    failed: a finding at or above the report's fail_on (exit 1, which wins); incomplete: something
    asked for could not run (exit 3); passed: neither (exit 0; findings below fail_on are still
    shown). root and cascade: the root cause and its consequences (facts root_cause / cascade_of)
    where an analysis ordered them; a cascade finding is part of its root's failure, not another."""

    status: str
    fail_on: Severity
    failing: tuple[Finding, ...]
    below: tuple[Finding, ...]
    root: Optional[Finding]
    cascade: tuple[Finding, ...]
    incomplete: tuple[str, ...]

    @property
    def word(self) -> str:
        return self.status.upper()

    @property
    def exit_code(self) -> int:
        return {"failed": 1, "incomplete": 3, "passed": 0}[self.status]

    def summary(self) -> str:
        """One line a person reads: the verdict and why."""
        if self.status == "failed":
            lead = self.root if self.root is not None and self.root in self.failing else self.failing[0]
            more = len([f for f in self.failing if f is not lead and f not in self.cascade])
            why = f"{lead.code} {lead.title}"
            if self.cascade:
                why += f" (+{len(self.cascade)} consequence{'s' if len(self.cascade) != 1 else ''})"
            if more:
                plural = "s" if more != 1 else ""
                why += f" and {more} more finding{plural} of severity {self.fail_on.value} or worse"
            return f"FAILED: {why}"
        sev = {s: sum(1 for f in self.below if f.severity is s) for s in (Severity.WARN, Severity.INFO)}
        shown = ", ".join(f"{n} {s.value}" for s, n in sev.items() if n)
        below = f"; reported below that: {shown}" if shown else ""
        if self.status == "incomplete":
            return (
                f"INCOMPLETE: {self.incomplete[0]}"
                + (f" (+{len(self.incomplete) - 1} more)" if len(self.incomplete) > 1 else "")
                + below
            )
        return f"PASSED: no finding of severity {self.fail_on.value} or worse{below}"

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "fail_on": self.fail_on.value,
            "exit_code": self.exit_code,
            "failing": len(self.failing),
            "root_cause": self.root.code if self.root else None,
            "cascade": len(self.cascade),
        }


def judge(findings: tuple[Finding, ...], incomplete: tuple[str, ...], fail_on: Severity) -> Verdict:
    failing = tuple(f for f in findings if f.severity.rank >= fail_on.rank)
    below = tuple(f for f in findings if f.severity.rank < fail_on.rank)
    root = next((f for f in findings if f.facts.get("root_cause") is True), None)
    cascade = tuple(f for f in findings if root is not None and f is not root and f.facts.get("cascade_of"))
    status = "failed" if failing else "incomplete" if incomplete else "passed"
    return Verdict(status, fail_on, failing, below, root, cascade, incomplete)


@dataclass(frozen=True)
class Report:
    """Everything renderers and the exit code read. fail_on: the severity at which the command
    fails (repro fails on warn); read through `verdict`, never again by a renderer."""

    command: str
    snapshot: Optional[Snapshot]
    findings: tuple[Finding, ...]
    checks: tuple[CheckResult, ...] = ()
    requested_areas: tuple[str, ...] = ()
    incomplete_reasons: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)
    extra: ReportExtra = field(default_factory=lambda: ReportExtra())
    fail_on: Severity = Severity.FAIL

    def __post_init__(self) -> None:
        # `check` records its --fail-on in meta (the JSON has carried it there): that sets it.
        chosen = self.meta.get("fail_on", self.fail_on)
        object.__setattr__(
            self, "fail_on", Severity(chosen.value if isinstance(chosen, Severity) else str(chosen))
        )
        # Every renderer (console, html, junit, ...) reads the report, so redacting here keeps
        # credentials out of all of them, whatever a probe measured or a log line contained.
        object.__setattr__(
            self, "findings", tuple(Finding.from_json(scrub(f.to_json())) for f in self.findings)
        )
        # The metadata too (skipped-file notes, file names, the job-wide lines, traces): the
        # console reads it directly, not through to_json.
        object.__setattr__(self, "meta", scrub(dict(self.meta)))
        object.__setattr__(self, "extra", scrub(dict(self.extra)))
        object.__setattr__(self, "incomplete_reasons", tuple(scrub(list(self.incomplete_reasons))))
        if self.snapshot is not None:
            object.__setattr__(self, "snapshot", self.snapshot.redacted())

    @property
    def incomplete(self) -> bool:
        return bool(self.incomplete_reasons)

    @functools.cached_property
    def verdict(self) -> Verdict:
        return judge(self.findings, self.incomplete_reasons, self.fail_on)

    def worst(self) -> Optional[Severity]:
        return max((f.severity for f in self.findings), key=lambda s: s.rank, default=None)

    def results_json(self) -> list[dict[str, Any]]:
        probes = [dict(p.to_json(), kind="probe") for p in (self.snapshot.probes if self.snapshot else ())]
        for p in probes:
            p.pop("measurements", None)
        return probes + [dict(c.to_json(), kind="check") for c in self.checks]

    def to_json(self) -> dict[str, Any]:
        measurements = [m.to_json() for m in self.snapshot.measurements()] if self.snapshot else []
        out: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "command": self.command,
            "host": self.snapshot.host if self.snapshot else self.meta.get("host", ""),
            # Which pgdoctor measured, and when: the snapshot's own, so `check --from` keeps them.
            **(
                {
                    "pgdoctor_version": self.snapshot.pgdoctor_version,
                    "time_unix": self.snapshot.time_unix,
                    "time": _iso(self.snapshot.time_unix),
                }
                if self.snapshot
                else {}
            ),
            "findings": [f.to_json() for f in self.findings],
            "results": self.results_json(),
            "measurements": measurements,
            "incomplete": list(self.incomplete_reasons),
            "verdict": self.verdict.to_json(),
            "meta": dict(self.meta),
        }
        out.update(self.extra)
        return scrub(out)  # type: ignore[no-any-return]


def _iso(t: float) -> str:
    import datetime

    try:
        return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):  # a hand-edited snapshot's time beyond year 9999
        return ""


def exit_code(report: Report, exit_zero: bool = False) -> int:
    """The report's verdict as an exit code: 0 clean; 1 a finding at or above its fail_on (wins);
    3 incomplete; 0 whatever it found with exit_zero (report-only use)."""
    return 0 if exit_zero else report.verdict.exit_code


def sorted_findings(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (-f.severity.rank, f.code, f.scope.label()))
