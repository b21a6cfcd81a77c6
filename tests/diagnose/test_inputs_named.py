"""Every input is analysed or named as skipped with its reason, never dropped: a bare-array trace is
a trace, a gzip trace cut short is a skipped trace (not an empty log), and when nothing at all could
be read the answer is incomplete (exit 3), not "no failure found"."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pgdoctor.diagnose.api import diagnose_paths


def _events(n: int = 5) -> list[dict[str, object]]:
    return [
        {
            "ph": "X",
            "cat": "cpu_op",
            "name": f"ProfilerStep#{i}",
            "ts": i * 1000,
            "dur": 900,
            "pid": 1,
            "tid": 1,
        }
        for i in range(n)
    ]


def _accounted(report_json: dict, name: str) -> str:  # type: ignore[type-arg]
    """Where the input went: 'trace', 'log', 'skipped' (with a reason naming it) or ''."""
    traces = report_json.get("traces") or {}
    if any(r.get("file", "").endswith(name) for r in (traces.get("ranks") or {}).values()):
        return "trace"
    skipped = [*(traces.get("skipped") or []), *report_json["meta"].get("skipped_unreadable_files", [])]
    if any(name in s and ": " in s for s in skipped):
        return "skipped"
    if any(s["name"].endswith(name) for s in report_json["meta"].get("sources", [])):
        return "log"
    return ""


def test_a_bare_array_trace_is_analysed_as_a_trace(tmp_path: Path) -> None:
    path = tmp_path / "r0.pt.trace.json"
    path.write_text(json.dumps(_events()))
    assert _accounted(diagnose_paths([str(path)]).to_json(), path.name) == "trace"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.floats(min_value=0.05, max_value=0.95))
def test_a_gzip_trace_cut_anywhere_is_named_as_skipped(tmp_path: Path, share: float) -> None:
    big = {"traceEvents": [{**e, "args": {"x": "y" * 20}} for e in _events(3000)]}
    data = gzip.compress(json.dumps(big).encode())
    path = tmp_path / "cut.pt.trace.json.gz"
    path.write_bytes(data[: max(20, int(len(data) * share))])
    report = diagnose_paths([str(path)])
    assert _accounted(report.to_json(), path.name) == "skipped", report.to_json()["meta"]
    assert report.incomplete  # nothing else was read: exit 3, not "no failure found"


def test_a_truncated_trace_under_64_kib_is_exit_3_and_named_on_the_console(tmp_path: Path) -> None:
    data = gzip.compress(json.dumps({"traceEvents": _events(3000)}).encode())
    path = tmp_path / "t.pt.trace.json.gz"
    path.write_bytes(data[: min(len(data) // 2, 60_000)])
    p = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "diagnose", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 3, (p.stdout, p.stderr)
    assert "skipped" in p.stdout and path.name in p.stdout and "no failure found" not in p.stdout, p.stdout
