"""Each foundation finding is triggered by setting exactly the variable, limit or file it names,
through the real probes, and is absent when that setting is right."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pgdoctor.engine.config import config_from_mapping
from pgdoctor.engine.runner import run_checks
from tests.helpers.env_scenarios import SCENARIOS
from tests.helpers.envlab import snapshot_for

LIVE = sorted(c for c, s in SCENARIOS.items() if not s.bad.override)


def _codes(code: str, which: str, tmp_path: Path) -> set[str]:
    sc = SCENARIOS[code]
    case = getattr(sc, which)
    if case.shm_bytes is not None and os.geteuid() != 0:
        pytest.skip("mounting a tmpfs as /dev/shm needs root")
    snap = snapshot_for(case, sc.level, tmp_path)
    findings, _ = run_checks(snap, config_from_mapping(case.config))
    return {f.code for f in findings}


@pytest.mark.parametrize("code", LIVE)
def test_setting_triggers_its_finding(code: str, tmp_path: Path) -> None:
    assert code in _codes(code, "bad", tmp_path)


@pytest.mark.parametrize("code", LIVE)
def test_right_setting_gives_no_finding(code: str, tmp_path: Path) -> None:
    assert code not in _codes(code, "good", tmp_path)


def test_clean_environment_has_no_launch_or_knob_failures(tmp_path: Path) -> None:
    from tests.helpers.env_scenarios import Case

    snap = snapshot_for(Case(), "quick", tmp_path)
    findings, results = run_checks(snap, config_from_mapping({}))
    assert [f.code for f in findings if f.severity.value == "fail"] == []
    assert all(
        r.status.value in ("passed", "failed") for r in results if r.area in ("launch", "knobs", "host")
    )


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("eth", ["eth0", "eth1"]),
        ("^eth", ["ib0", "lo"]),
        ("=eth0", ["eth0"]),
        ("=eth", []),
        ("^=eth0,lo", ["eth1", "ib0"]),
        ("ib,eth1", ["eth1", "ib0"]),
    ],
)
def test_nccl_socket_ifname_selection_follows_nccl_syntax(spec: str, expected: list[str]) -> None:
    from pgdoctor.checks.knobs import select_nccl

    assert select_nccl(spec, ["eth0", "eth1", "ib0", "lo"]) == expected


@pytest.mark.parametrize(
    ("raw", "count"),
    [
        (None, 4),
        ("", 0),
        ("-1", 0),
        ("0,1", 2),
        ("0,7,1", 1),
        ("GPU-8a2f0c1e-aaaa-bbbb-cccc-0123456789ab", 1),
        ("1,1", 1),
    ],
)
def test_visible_gpu_count_stops_where_cuda_stops(raw: str | None, count: int) -> None:
    from pgdoctor.checks.visible_devices import visible_gpu_count

    assert visible_gpu_count(raw, 4) == count


@pytest.mark.parametrize(
    ("env", "torch_version", "off"),
    [
        ({}, "2.13.0", False),
        ({}, "2.5.1+cu124", True),
        ({"TORCH_FR_BUFFER_SIZE": "0"}, "2.13.0", True),
        ({"TORCH_NCCL_TRACE_BUFFER_SIZE": "2000"}, "2.4.0", False),
        ({"TORCH_FR_BUFFER_SIZE": "0", "TORCH_NCCL_TRACE_BUFFER_SIZE": "2000"}, "2.13.0", True),
        ({}, None, False),
    ],
)
def test_flight_recorder_default_follows_the_torch_version(
    env: dict[str, str], torch_version: str | None, off: bool
) -> None:
    from pgdoctor.checks.knobs import flight_recorder_off

    assert bool(flight_recorder_off(env, torch_version)) is off


@pytest.mark.parametrize("value", ["1", "true", "YES", "t", "0", "False", "n"])
def test_torch_boolean_spellings_are_valid(value: str) -> None:
    from pgdoctor.checks.knobs import nccl_knobs
    from pgdoctor.model import Measurement, ProbeResult, Snapshot, Status

    probe = ProbeResult(
        "environment",
        "launch",
        Status.PASSED,
        measurements=(Measurement("env.vars", {"TORCH_NCCL_BLOCKING_WAIT": value}),),
    )
    snap = Snapshot("h", 0.0, "0", "quick", (probe,))
    assert "ENV406" not in {f.code for f in nccl_knobs(snap, config_from_mapping({}))}


def test_nccl_debug_unset_is_quiet_on_a_host_without_gpus(tmp_path: Path) -> None:
    """ENV404 only matters where NCCL runs: the same unset NCCL_DEBUG on a CPU/login node is no
    finding, and the check passes."""
    from tests.helpers.env_scenarios import Case

    snap = snapshot_for(Case(unset=("NCCL_DEBUG",), gpus=0), "quick", tmp_path)
    findings, results = run_checks(snap, config_from_mapping({}))
    assert "ENV404" not in {f.code for f in findings}
    assert next(r for r in results if r.name == "knobs.nccl_knobs").status.value == "passed"


def test_torch_missing_says_which_python_was_checked(tmp_path: Path) -> None:
    """A first run from a fresh venv without torch must say that pgdoctor judged the Python it
    runs in, so the user reruns it in the job's environment."""
    from tests.helpers.env_scenarios import Case

    snap = snapshot_for(Case(hide_torch=True), "quick", tmp_path)
    findings, _ = run_checks(snap, config_from_mapping({}))
    msg = next(f.message for f in findings if f.code == "ENV101")
    assert "the Python pgdoctor runs in" in msg and "job's own environment" in msg
