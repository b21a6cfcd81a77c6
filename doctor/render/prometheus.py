"""--format prometheus: the text exposition format read by node_exporter's textfile collector.

Write it to `<textfile dir>/pgdoctor.prom` through a temporary file and a rename (the collector
must never read half a file). Series:

- `pgdoctor_check_status{host,area,check,status}`: one series per check and possible status,
  1 for the status it had and 0 for the others (alert on `{status="failed"} == 1`, and absent
  series never mean "fine").
- `pgdoctor_findings{host,severity}`: number of findings per severity (always all three).
- `pgdoctor_finding{host,area,code,severity}`: number of findings per code.
- `pgdoctor_incomplete{host}`: 1 when the run was incomplete (exit code 3 without findings).
- `pgdoctor_verdict{host,status}`: the report's verdict (failed, incomplete, passed), 1 for the
  one it had and 0 for the others; the same verdict as the exit code (1, 3, 0).
- `pgdoctor_build_info{host,version,python}`: always 1; which pgdoctor and Python wrote the file.
- `pgdoctor_last_run_timestamp_seconds{host}`: when the host was probed.
- `pgdoctor_<measurement key>{host,gpu,gpu_uuid,...}`: one gauge per numeric measurement key,
  labelled by host and by the measurement's scope (gpu index and uuid, and rank, nic, link where
  set, which keep series unique). Only finite numbers: an unavailable value is not a 0, it is
  no sample at all (its reason is in the JSON report).
"""

from __future__ import annotations

import math
import platform
import re
import time
from collections import defaultdict
from typing import Optional, TextIO

from pgdoctor import __version__
from pgdoctor.model import Measurement, Report, Severity, Status

_NAME_BAD = re.compile(r"[^a-zA-Z0-9_]")
_FIXED = (
    "check_status",
    "findings",
    "finding",
    "incomplete",
    "verdict",
    "build_info",
    "last_run_timestamp_seconds",
)
# Scope fields that become labels, in this order, under these names.
_SCOPE_LABELS = (
    ("gpu_index", "gpu"),
    ("gpu_uuid", "gpu_uuid"),
    ("rank", "rank"),
    ("nic", "nic"),
    ("link", "link"),
)


def escape_label(value: str) -> str:
    """Label values: backslash, double quote and line feed are the only escapes the format has."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def metric_name(key: str) -> str:
    """`gpu.temperature_c` -> `pgdoctor_gpu_temperature_c`; anything outside [a-zA-Z0-9_] becomes _."""
    return "pgdoctor_" + _NAME_BAD.sub("_", key).strip("_")


def format_value(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    return repr(float(value))


def numeric(value: object) -> Optional[float]:
    """The value as a sample, or None: bools, strings, dicts and non-finite floats are not samples."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _labels(pairs: list[tuple[str, str]]) -> str:
    return "{" + ",".join(f'{k}="{escape_label(v)}"' for k, v in pairs) + "}"


class _Writer:
    def __init__(self, out: TextIO):
        self.out = out

    def family(self, name: str, help_text: str, samples: list[tuple[list[tuple[str, str]], float]]) -> None:
        self.out.write(f"# HELP {name} {escape_help(help_text)}\n")
        self.out.write(f"# TYPE {name} gauge\n")
        for labels, value in samples:
            self.out.write(f"{name}{_labels(labels)} {format_value(value)}\n")


def _measurement_families(
    measurements: list[Measurement], host: str
) -> list[tuple[str, str, list[tuple[list[tuple[str, str]], float]]]]:
    """(name, help, samples) per numeric key. Keys whose names collide after sanitising, and
    repeated scopes of one key, keep the first: the format forbids duplicate series."""
    reserved = {f"pgdoctor_{n}" for n in _FIXED}
    owner: dict[str, str] = {}
    families: dict[str, tuple[str, list[tuple[list[tuple[str, str]], float]]]] = {}
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    for m in measurements:
        value = numeric(m.value)
        if value is None:
            continue
        name = metric_name(m.key)
        if name in reserved or owner.setdefault(name, m.key) != m.key:
            continue
        labels = [("host", m.scope.host or host)]
        labels += [
            (label, str(getattr(m.scope, field)))
            for field, label in _SCOPE_LABELS
            if getattr(m.scope, field) is not None
        ]
        ident = (name, tuple(labels))
        if ident in seen:
            continue
        seen.add(ident)
        if name not in families:
            unit = f" ({m.unit})" if m.unit else ""
            families[name] = (f"pgdoctor measurement {m.key}{unit}", [])
        families[name][1].append((labels, value))
    return [(name, h, samples) for name, (h, samples) in families.items()]


def render(report: Report, out: TextIO, color: bool = False) -> None:
    snapshot = report.snapshot
    host = snapshot.host if snapshot else str(report.meta.get("host", ""))
    w = _Writer(out)
    h = [("host", host)]

    w.family(
        "pgdoctor_check_status",
        "Outcome of each pgdoctor check: 1 for the status it had, 0 for the others.",
        [
            ([*h, ("area", c.area), ("check", c.name), ("status", s.value)], 1 if c.status is s else 0)
            for c in report.checks
            for s in Status
        ],
    )
    w.family(
        "pgdoctor_findings",
        "Number of pgdoctor findings by severity.",
        [([*h, ("severity", s.value)], sum(1 for f in report.findings if f.severity is s)) for s in Severity],
    )
    per_code: dict[tuple[str, str, str], int] = defaultdict(int)
    for f in report.findings:
        per_code[(f.area, f.code, f.severity.value)] += 1
    if per_code:
        w.family(
            "pgdoctor_finding",
            "Number of pgdoctor findings per code (see `pgdoctor explain CODE`).",
            [
                ([*h, ("area", a), ("code", c), ("severity", s)], n)
                for (a, c, s), n in sorted(per_code.items())
            ],
        )
    w.family(
        "pgdoctor_incomplete",
        "1 when a probe or check could not run (exit code 3).",
        [(h, 1 if report.incomplete else 0)],
    )
    w.family(
        "pgdoctor_verdict",
        "The report's verdict, as the exit code says it: 1 for the one it had.",
        [
            ([*h, ("status", s)], 1 if report.verdict.status == s else 0)
            for s in ("failed", "incomplete", "passed")
        ],
    )
    w.family(
        "pgdoctor_build_info",
        "The pgdoctor and Python versions that wrote this file (always 1).",
        [([*h, ("version", __version__), ("python", platform.python_version())], 1)],
    )
    when = snapshot.time_unix if snapshot else time.time()
    w.family(
        "pgdoctor_last_run_timestamp_seconds",
        "Unix time at which pgdoctor probed this host.",
        [(h, round(float(when), 3))],
    )
    measurements = list(snapshot.measurements()) if snapshot else []
    for name, help_text, samples in _measurement_families(measurements, host):
        w.family(name, help_text, samples)
