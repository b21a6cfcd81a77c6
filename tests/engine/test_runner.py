"""The runner turns hangs, exceptions and crashes into results, never into a hang or a traceback."""

from __future__ import annotations

import time

import pytest

from pgdoctor.checks.base import CHECKS, CheckSpec, Config
from pgdoctor.engine.runner import Selection, build_report, collect
from pgdoctor.model import Measurement, Reason, Status
from pgdoctor.probes.base import ProbeContext, ProbeSpec, ProbeUnavailable


def _ctx(level: str = "quick") -> ProbeContext:
    return ProbeContext(env={}, level=level)


def _only(monkeypatch: pytest.MonkeyPatch, *specs: ProbeSpec) -> None:
    import pgdoctor.probes as probes_pkg

    probes_pkg.load_all()
    monkeypatch.setattr("pgdoctor.engine.runner.PROBES", {s.name: s for s in specs})


def test_hanging_probe_is_reported_as_timed_out_within_its_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    def hang(ctx: ProbeContext) -> list[Measurement]:
        time.sleep(3600)
        return []

    _only(
        monkeypatch,
        ProbeSpec("hang", "host", "quick", 0.3, hang),
        ProbeSpec("fine", "host", "quick", 5, lambda ctx: [Measurement("x", 1)]),
    )
    start = time.monotonic()
    snap = collect(_ctx(), timeout_s=30)
    assert time.monotonic() - start < 2.0
    hung = snap.probe("hang")
    assert hung is not None and hung.status is Status.UNAVAILABLE and hung.reason.startswith("timeout")
    assert snap.value("x") == 1


def test_whole_run_timeout_bounds_every_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    _only(monkeypatch, ProbeSpec("slow", "host", "quick", 60, lambda ctx: [time.sleep(3600)]))  # type: ignore[func-returns-value]
    start = time.monotonic()
    snap = collect(_ctx(), timeout_s=0.5)
    assert time.monotonic() - start < 2.5
    assert snap.probes[0].status is Status.UNAVAILABLE


def test_raising_probe_is_crashed_with_its_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(ctx: ProbeContext) -> list[Measurement]:
        raise KeyError("nvml")

    _only(monkeypatch, ProbeSpec("boom", "host", "quick", 5, boom))
    p = collect(_ctx()).probes[0]
    assert p.status is Status.CRASHED and "KeyError" in p.reason


def test_unavailable_probe_keeps_its_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(ctx: ProbeContext) -> list[Measurement]:
        raise ProbeUnavailable(Reason.LIBRARY_NOT_FOUND, "NVML library not found")

    _only(monkeypatch, ProbeSpec("gpu_x", "gpu", "quick", 5, missing))
    snap = collect(_ctx())
    assert snap.probes[0].status is Status.UNAVAILABLE
    assert snap.probes[0].reason == "library_not_found: NVML library not found"
    # Unavailable is incomplete only when the area was asked for by name.
    assert not build_report("check", snap, Config()).incomplete
    assert build_report("check", snap, Config(), Selection(only=("gpu",))).incomplete


def test_probes_above_the_level_do_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    _only(
        monkeypatch,
        ProbeSpec("heavy", "host", "full", 5, lambda ctx: [Measurement("heavy", 1)]),
        ProbeSpec("light", "host", "quick", 5, lambda ctx: [Measurement("light", 1)]),
    )
    assert [p.name for p in collect(_ctx("standard")).probes] == ["light"]


def test_dependent_probe_sees_earlier_measurements(monkeypatch: pytest.MonkeyPatch) -> None:
    def second(ctx: ProbeContext) -> list[Measurement]:
        return [Measurement("b", next(m.value for m in ctx.previous if m.key == "a") + 1)]  # type: ignore[operator]

    _only(
        monkeypatch,
        ProbeSpec("second", "host", "quick", 5, second, ("first",)),
        ProbeSpec("first", "host", "quick", 5, lambda ctx: [Measurement("a", 41)]),
    )
    assert collect(_ctx()).value("b") == 42


def test_crashing_check_is_a_result_and_makes_the_run_incomplete(monkeypatch: pytest.MonkeyPatch) -> None:
    def bad_check(snap, config):  # type: ignore[no-untyped-def]
        raise ZeroDivisionError("division by zero")

    _only(monkeypatch, ProbeSpec("p", "host", "quick", 5, lambda ctx: [Measurement("a", 1)]))
    monkeypatch.setitem(CHECKS, "t.bad", CheckSpec("t.bad", "host", bad_check, (), ("p",)))
    report = build_report("check", collect(_ctx()), Config(), Selection(only=("host",)))
    result = next(c for c in report.checks if c.name == "t.bad")
    assert result.status is Status.CRASHED and "ZeroDivisionError" in result.reason
    assert report.incomplete


def test_check_reading_a_probe_that_did_not_run_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    _only(monkeypatch, ProbeSpec("p", "host", "quick", 5, lambda ctx: [Measurement("a", 1)]))
    monkeypatch.setitem(CHECKS, "t.needs", CheckSpec("t.needs", "host", lambda s, c: [], (), ("absent",)))
    report = build_report("check", collect(_ctx()), Config())
    assert [c.status for c in report.checks if c.name == "t.needs"] == [Status.SKIPPED]


def test_absent_hardware_is_an_answer_not_an_incomplete_run(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_ib(ctx: ProbeContext) -> list[Measurement]:
        raise ProbeUnavailable(Reason.NOT_PRESENT, "no InfiniBand devices")

    _only(monkeypatch, ProbeSpec("ib_x", "net", "quick", 5, no_ib))
    assert not build_report("check", collect(_ctx()), Config(), Selection(only=("net",))).incomplete


def _cli(*args: str, extra: dict[str, str] | None = None) -> str:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("NCCL_", "TORCH_"))} | (extra or {})
    proc = subprocess.run(
        [sys.executable, "-m", "pgdoctor", *args], capture_output=True, text=True, timeout=120, env=env
    )
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout


def test_a_check_that_found_only_info_findings_passed_in_every_format() -> None:
    """ENV408 (blocking wait on) is info: its check passes in JSON results and in Prometheus, as
    the console's [ok] and the exit code already said; the info code is the result's reason."""
    import json

    on = {"TORCH_NCCL_BLOCKING_WAIT": "1"}
    rep = json.loads(_cli("check", "--level", "quick", "--only", "knobs", "--json", "--exit-zero", extra=on))
    assert "ENV408" in {f["code"] for f in rep["findings"] if f["severity"] == "info"}
    knobs = next(r for r in rep["results"] if r["name"] == "knobs.nccl_knobs")
    assert knobs["status"] == "passed" and "ENV408" in knobs["reason"]
    prom = _cli(
        "check", "--level", "quick", "--only", "knobs", "--format", "prometheus", "--exit-zero", extra=on
    )
    line = 'check="knobs.nccl_knobs",status="passed"} 1'
    assert line in prom, prom
    assert 'check="knobs.nccl_knobs",status="failed"} 0' in prom


def test_a_check_skipped_by_the_level_says_which_level_runs_its_probe() -> None:
    import json

    rep = json.loads(_cli("check", "--level", "quick", "--only", "collectives", "--json", "--exit-zero"))
    reasons = {r["reason"] for r in rep["results"] if r["area"] == "collectives"}
    assert reasons == {"probe collectives runs at --level standard and above (this run: quick)"}
