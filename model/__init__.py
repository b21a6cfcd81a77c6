"""The data model every part of pgdoctor speaks: measurements, snapshots, findings, reports.

Everything here is plain data (frozen dataclasses and enums) that round-trips through JSON,
because a snapshot written on one machine is read by `check --from` on another, and a report
is read by renderers that must not care how it was produced.
"""

from __future__ import annotations

from pgdoctor.model.measurement import (
    HOST,
    SCHEMA_VERSION,
    JsonValue,
    Measurement,
    ProbeResult,
    Reason,
    Scope,
    Severity,
    Status,
    Unavailable,
)
from pgdoctor.model.report import (
    CheckResult,
    Evidence,
    Finding,
    Report,
    ReportExtra,
    Verdict,
    exit_code,
    sorted_findings,
)
from pgdoctor.model.snapshot import Snapshot, SnapshotFormatError

__all__ = [
    "HOST",
    "SCHEMA_VERSION",
    "CheckResult",
    "Evidence",
    "Finding",
    "JsonValue",
    "Measurement",
    "ProbeResult",
    "Reason",
    "Report",
    "ReportExtra",
    "Scope",
    "Severity",
    "Snapshot",
    "SnapshotFormatError",
    "Status",
    "Unavailable",
    "Verdict",
    "exit_code",
    "sorted_findings",
]
