"""One typed reader for numbers from outside (model/numbers.py): 1e400, NaN, 5,000-digit integers,
booleans where ints belong, numbers as strings and zero or negative counts are a clear error or
an absent value in every input format, and no output prints NaN or Infinity."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pgdoctor.diagnose.api import diagnose_paths
from pgdoctor.diagnose.flight.dump import int_of
from pgdoctor.diagnose.profile import straggler
from pgdoctor.engine.config import ConfigError, config_from_mapping
from pgdoctor.knowledge.units import parse_bytes, parse_count
from pgdoctor.model import jsontext, numbers
from pgdoctor.plan.measured import calibration_from_scaling

ANY_VALUE = st.one_of(
    st.integers(min_value=-(10**60), max_value=10**60),
    st.floats(),
    st.booleans(),
    st.none(),
    st.text(max_size=30),
    st.sampled_from(["nan", "inf", "-inf", "1e400", "12", "9" * 5000]),
)


@settings(max_examples=400, deadline=None)
@given(ANY_VALUE, st.booleans(), st.booleans())
def test_number_gives_a_finite_number_in_range_or_a_clear_error(
    value: object, integer: bool, strings: bool
) -> None:
    try:
        got = numbers.number(value, "x", integer=integer, lo=0, hi=10**6, strings=strings)
    except numbers.NumberError as exc:
        assert str(exc).startswith("x: ")
        return
    assert type(got) in ((int,) if integer else (int, float))
    assert math.isfinite(got) and 0 <= got <= 10**6
    assert not isinstance(value, bool)
    assert strings or not isinstance(value, str)


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.one_of(st.floats(), st.integers(), st.text(max_size=5), st.none()),
        lambda kids: st.one_of(
            st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=4), kids, max_size=4)
        ),
        max_leaves=20,
    )
)
def test_output_json_never_holds_nan_or_infinity(obj: object) -> None:
    text = numbers.dumps(obj)
    json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in the output"))


@pytest.mark.parametrize(
    "text",
    [
        '{"t": 1e400}',
        '{"t": -1e400}',
        '{"t": NaN}',
        '{"t": Infinity}',
        '{"t": ' + "9" * 5000 + "}",
        '{"t": ' + "9" * 41 + "}",
    ],
)
def test_json_from_outside_refuses_non_finite_and_huge_numbers(text: str) -> None:
    with pytest.raises(jsontext.JsonInputError):
        jsontext.loads(text)


@settings(max_examples=300, deadline=None)
@given(ANY_VALUE)
def test_dump_integers_are_typed_in_one_place(value: object) -> None:
    got = int_of(value)
    assert type(got) is int
    if isinstance(value, bool) or (isinstance(value, float) and not math.isfinite(value)):
        assert got == -1


@pytest.mark.parametrize("value", [math.nan, math.inf, -1, -1.0, 150.0, True])
def test_a_threshold_is_finite_and_in_its_range(value: object) -> None:
    with pytest.raises(ConfigError):
        config_from_mapping({"traces": {"exposed_comm_pct": value}})
    with pytest.raises(ConfigError):
        config_from_mapping({"gpu": {"temp_margin_c": value if value != 150.0 else math.nan}})


@pytest.mark.parametrize("text", ["1e400", "1e400GiB", "1e30", "nan", "-5GiB", "0"])
def test_sizes_and_counts_refuse_what_is_no_size(text: str) -> None:
    with pytest.raises(ValueError):
        parse_bytes(text)
    with pytest.raises(ValueError):
        parse_count(text)


@pytest.mark.parametrize("nproc", [0, -2, True, "4", 1e400])
def test_a_bench_result_without_a_world_size_is_refused(nproc: object) -> None:
    with pytest.raises(ValueError, match="no rows with a world size"):
        calibration_from_scaling({"scaling": {"rows": [{"nproc": nproc, "fwd_s": 0.1, "samples": 8}]}})


def test_a_straggler_is_never_named_from_non_finite_figures() -> None:
    ranks = {
        0: {"kind": "cpu", "wait_ms": math.nan, "step_ms": math.inf, "compute_ms": 1.0},
        1: {"kind": "cpu", "wait_ms": 5.0, "step_ms": 10.0, "compute_ms": 1.0},
        2: {"kind": "cpu", "wait_ms": 5.0, "step_ms": math.nan, "compute_ms": 1.0},
    }
    assert straggler.find(ranks) is None


def test_a_trace_with_infinite_times_gives_valid_json(tmp_path: Path) -> None:
    for rank in (0, 1):
        ev = [
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": f"ProfilerStep#{i}",
                "ts": i * 1000,
                "dur": 900,
                "pid": rank,
                "tid": 1,
            }
            for i in range(5)
        ]
        ev.append(
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1.0, "dur": 10, "pid": rank, "tid": 1}
        )
        text = json.dumps({"traceEvents": ev}).replace('"ts": 1.0, "dur": 10', '"ts": 1e400, "dur": NaN')
        (tmp_path / f"rank{rank}.pt.trace.json").write_text(text)
    report = diagnose_paths([str(tmp_path)])
    text = numbers.dumps(report.to_json(), default=str)
    json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in the output"))
    assert "nan" not in json.dumps(report.extra.get("traces", {})).lower()


def _cli(*argv: str, closed_stdout: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pgdoctor", *argv],
        capture_output=not closed_stdout,
        stderr=subprocess.PIPE if closed_stdout else None,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        preexec_fn=(lambda: os.close(1)) if closed_stdout else None,
    )


def test_a_snapshot_time_past_year_9999_is_a_usage_error(tmp_path: Path) -> None:
    snap = {
        "schema_version": 1,
        "kind": "pgdoctor.snapshot",
        "pgdoctor_version": "0",
        "host": "h",
        "time_unix": 1e308,
        "level": "quick",
        "probes": [],
    }
    path = tmp_path / "s.json"
    path.write_text(json.dumps(snap))
    p = _cli("check", "--from", str(path), "--format", "junit")
    assert p.returncode == 2 and "time_unix" in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_plan_gpu_memory_of_infinity_is_a_usage_error() -> None:
    p = _cli("plan", "--params", "7B", "--gpus-per-node", "8", "--gpu-memory", "1e400")
    assert p.returncode == 2 and "finite" in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_check_with_stdout_closed_is_one_line_and_exit_2(tmp_path: Path) -> None:
    p = _cli("check", "--level", "quick", "--only", "launch", closed_stdout=True)
    assert p.returncode == 2 and "stdout is closed" in p.stderr and p.stderr.count("\n") == 1, p.stderr
    out = tmp_path / "r.json"
    p = _cli("check", "--level", "quick", "--only", "launch", "--json", "-o", str(out), closed_stdout=True)
    assert p.returncode in (0, 1) and json.loads(out.read_text())["command"] == "check", p.stderr


@pytest.mark.parametrize(
    "change",
    [
        {"world_size": 0},
        {"world_size": -3},
        {"bytes": "1e400"},
        {"correct": "false"},
        {"time_us": True},
        {"world_size": 10**30},
        {"busbw_gbps": math.nan},
    ],
)
def test_a_collective_row_from_a_snapshot_is_typed(change: dict[str, object]) -> None:
    from pgdoctor.knowledge.collectives import Row

    good = {
        "op": "all_reduce",
        "bytes": 1024,
        "world_size": 2,
        "time_us": 10.0,
        "time_min_us": 9.0,
        "time_max_us": 11.0,
        "algbw_gbps": 0.1,
        "busbw_gbps": 0.1,
        "correct": True,
        "rank_time_us": [10.0, 10.0],
    }
    assert Row.from_json(good).world_size == 2
    with pytest.raises(ValueError):
        Row.from_json({**good, **change})
