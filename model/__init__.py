"""The data model every part of pgdoctor speaks: measurements, snapshots, findings, reports.

Everything here is plain data (frozen dataclasses and enums) that round-trips through JSON,
because a snapshot written on one machine is read by `check --from` on another, and a report
is read by renderers that must not care how it was produced.
"""

from __future__ import annotations

import enum
import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from pgdoctor.model.redact import scrub

# Bump when the meaning or shape of the snapshot or of --json output changes.
SCHEMA_VERSION = 1

JsonValue = Union[None, bool, int, float, str, list[Any], dict[str, Any]]


class Severity(str, enum.Enum):
    INFO = "info"
    WARN = "warn"
    FAIL = "fail"

    @property
    def rank(self) -> int:
        return {"info": 0, "warn": 1, "fail": 2}[self.value]


class Status(str, enum.Enum):
    """Outcome of one probe or one check."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    UNAVAILABLE = "unavailable"
    CRASHED = "crashed"


class Reason(str, enum.Enum):
    """Why a measurement or a probe has no value. Closed set: renderers and checks switch on it."""

    NOT_SUPPORTED = "not_supported"
    NO_PERMISSION = "no_permission"
    GPU_LOST = "gpu_lost"
    LIBRARY_NOT_FOUND = "library_not_found"
    DRIVER_NOT_LOADED = "driver_not_loaded"
    FUNCTION_NOT_FOUND = "function_not_found"
    NOT_PRESENT = "not_present"
    NOT_REQUESTED = "not_requested"
    TIMEOUT = "timeout"
    INTERRUPTED = "interrupted"
    ERROR = "error"


@dataclass(frozen=True)
class Unavailable:
    """A value that could not be measured, with the reason; never a silent 0, False or N/A."""

    reason: Reason
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"unavailable": self.reason.value, "detail": self.detail}

    def __str__(self) -> str:
        return f"unavailable ({self.reason.value}{': ' + self.detail if self.detail else ''})"


@dataclass(frozen=True)
class Scope:
    """Where a measurement or a finding applies. All fields optional; empty means the host."""

    host: Optional[str] = None
    rank: Optional[int] = None
    gpu_index: Optional[int] = None
    gpu_uuid: Optional[str] = None
    link: Optional[str] = None
    nic: Optional[str] = None
    file: Optional[str] = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Scope:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})

    def label(self) -> str:
        parts = [f"{k}={v}" for k, v in self.to_json().items()]
        return ",".join(parts)


HOST = Scope()


def _json_value(value: JsonValue | Unavailable) -> Any:
    if isinstance(value, Unavailable):
        return value.to_json()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _value_from_json(data: Any) -> JsonValue | Unavailable:
    if isinstance(data, dict) and set(data) == {"unavailable", "detail"}:
        return Unavailable(Reason(data["unavailable"]), data["detail"])
    return data  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Measurement:
    """One measured fact: a stable dotted key, a value (or Unavailable), unit, scope and source."""

    key: str
    value: JsonValue | Unavailable
    unit: str = ""
    scope: Scope = HOST
    source: str = ""

    @property
    def ok(self) -> bool:
        return not isinstance(self.value, Unavailable)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "value": _json_value(self.value)}
        if self.unit:
            out["unit"] = self.unit
        if self.scope != HOST:
            out["scope"] = self.scope.to_json()
        if self.source:
            out["source"] = self.source
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Measurement:
        return cls(
            key=data["key"],
            value=_value_from_json(data.get("value")),
            unit=data.get("unit", ""),
            scope=Scope.from_json(data.get("scope", {})),
            source=data.get("source", ""),
        )


@dataclass(frozen=True)
class ProbeResult:
    """What one probe returned, or why it returned nothing."""

    name: str
    area: str
    status: Status
    reason: str = ""
    duration_s: float = 0.0
    measurements: tuple[Measurement, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "area": self.area,
            "status": self.status.value,
            "reason": self.reason,
            "duration_s": round(self.duration_s, 6),
            "measurements": [m.to_json() for m in self.measurements],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ProbeResult:
        return cls(
            name=data["name"],
            area=data["area"],
            status=Status(data["status"]),
            reason=data.get("reason", ""),
            duration_s=float(data.get("duration_s", 0.0)),
            measurements=tuple(Measurement.from_json(m) for m in data.get("measurements", [])),
        )


class SnapshotFormatError(ValueError):
    """A snapshot file that is not one pgdoctor can read."""


@dataclass(frozen=True)
class Snapshot:
    """Everything the probes saw on one host at one time. Input of every check."""

    host: str
    time_unix: float
    pgdoctor_version: str
    level: str
    probes: tuple[ProbeResult, ...]
    schema_version: int = SCHEMA_VERSION

    def measurements(self) -> Iterator[Measurement]:
        for p in self.probes:
            yield from p.measurements

    def probe(self, name: str) -> Optional[ProbeResult]:
        for p in self.probes:
            if p.name == name:
                return p
        return None

    def get(self, key: str, scope: Optional[Scope] = None) -> Optional[Measurement]:
        """The measurement with this key (and scope, when given); None when never measured."""
        for m in self.measurements():
            if m.key == key and (scope is None or m.scope == scope):
                return m
        return None

    def value(self, key: str, default: Any = None) -> Any:
        """The value of a host-scope key, or `default` when missing or unavailable."""
        m = self.get(key)
        if m is None or isinstance(m.value, Unavailable):
            return default
        return m.value

    def all(self, key: str) -> list[Measurement]:
        return [m for m in self.measurements() if m.key == key]

    def with_prefix(self, prefix: str) -> list[Measurement]:
        return [m for m in self.measurements() if m.key.startswith(prefix)]

    def to_json(self) -> dict[str, Any]:
        return scrub({
            "schema_version": self.schema_version,
            "kind": "pgdoctor.snapshot",
            "pgdoctor_version": self.pgdoctor_version,
            "host": self.host,
            "time_unix": self.time_unix,
            "level": self.level,
            "probes": [p.to_json() for p in self.probes],
        })

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1, sort_keys=False)

    @classmethod
    def from_json(cls, data: Any) -> Snapshot:
        if not isinstance(data, dict) or data.get("kind") != "pgdoctor.snapshot":
            raise SnapshotFormatError("not a pgdoctor snapshot (no \"kind\": \"pgdoctor.snapshot\")")
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise SnapshotFormatError(
                f"snapshot schema_version {version!r} is not supported (this pgdoctor reads {SCHEMA_VERSION})"
            )
        try:
            return cls(
                host=str(data["host"]),
                time_unix=float(data["time_unix"]),
                pgdoctor_version=str(data["pgdoctor_version"]),
                level=str(data.get("level", "standard")),
                probes=tuple(ProbeResult.from_json(p) for p in data["probes"]),
                schema_version=version,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise SnapshotFormatError(f"malformed snapshot: {type(exc).__name__}: {exc}") from None

    @classmethod
    def loads(cls, text: str) -> Snapshot:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SnapshotFormatError(f"snapshot is not JSON: {exc}") from None
        return cls.from_json(data)


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
        return {
            "name": self.name,
            "area": self.area,
            "status": self.status.value,
            "reason": self.reason,
            "duration_s": round(self.duration_s, 6),
            "codes": list(self.codes),
        }


@dataclass(frozen=True)
class Report:
    """Everything renderers and the exit code read."""

    command: str
    snapshot: Optional[Snapshot]
    findings: tuple[Finding, ...]
    checks: tuple[CheckResult, ...] = ()
    requested_areas: tuple[str, ...] = ()
    incomplete_reasons: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Every renderer (console, html, junit, ...) reads the report, so redacting here keeps
        # credentials out of all of them, whatever a probe measured or a log line contained.
        object.__setattr__(self, "findings", tuple(Finding.from_json(scrub(f.to_json())) for f in self.findings))
        if self.snapshot is not None:
            object.__setattr__(self, "snapshot", Snapshot.from_json(self.snapshot.to_json()))

    @property
    def incomplete(self) -> bool:
        return bool(self.incomplete_reasons)

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
            "findings": [f.to_json() for f in self.findings],
            "results": self.results_json(),
            "measurements": measurements,
            "incomplete": list(self.incomplete_reasons),
            "meta": dict(self.meta),
        }
        out.update(self.extra)
        return scrub(out)  # type: ignore[no-any-return]


def exit_code(report: Report, fail_on: Severity = Severity.FAIL, exit_zero: bool = False) -> int:
    """0 clean; 1 a finding at or above fail_on (wins); 3 incomplete."""
    if exit_zero:
        return 0
    if any(f.severity.rank >= fail_on.rank for f in report.findings):
        return 1
    if report.incomplete:
        return 3
    return 0


def sorted_findings(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (-f.severity.rank, f.code, f.scope.label()))
