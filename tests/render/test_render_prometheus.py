"""--format prometheus: node_exporter textfile format, checked line by line against the exposition
grammar and parsed back with prometheus_client's own parser."""

from __future__ import annotations

import dataclasses
import io
import math
import re
from collections import Counter

import pytest

from pgdoctor.model import Measurement, Reason, Report, Scope, Severity, Status, Unavailable
from pgdoctor.render import get_renderer
from tests.helpers.render_reports import gpu_finding, gpu_measurements, live_report, with_measurements

parser = pytest.importorskip("prometheus_client.parser", reason="prometheus-client is in the test extra")

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL_VALUE = r'"(?:[^"\\\n]|\\\\|\\"|\\n)*"'
SAMPLE = re.compile(
    rf"^({NAME})\{{((?:[a-zA-Z_][a-zA-Z0-9_]*={LABEL_VALUE})(?:,[a-zA-Z_][a-zA-Z0-9_]*={LABEL_VALUE})*)\}}"
    r" (-?[0-9][0-9.e+-]*)$"
)


def render(report: Report) -> str:
    buf = io.StringIO()
    get_renderer("prometheus")(report, buf, False)
    return buf.getvalue()


def strict_check(text: str) -> list[tuple[str, str]]:
    """Every line is HELP, TYPE or a sample; a family's HELP and TYPE come once, before its
    samples, and its samples are contiguous; no series twice. Returns (name, labels) per sample."""
    assert text.endswith("\n")
    seen_family: list[str] = []
    series: list[tuple[str, str]] = []
    current = ""
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name = line.split(" ")[2]
            assert re.fullmatch(NAME, name) and name not in seen_family, line
            seen_family.append(name)
            current = name
        elif line.startswith("# TYPE "):
            assert line == f"# TYPE {current} gauge", line
        else:
            m = SAMPLE.match(line)
            assert m, f"not a valid sample line: {line!r}"
            assert m.group(1) == current, f"sample outside its family: {line!r}"
            value = float(m.group(3))
            assert math.isfinite(value)
            series.append((m.group(1), m.group(2)))
    dupes = [s for s, n in Counter(series).items() if n > 1]
    assert not dupes, dupes
    return series


def samples(text: str) -> list[tuple[str, dict[str, str], float]]:
    out = []
    for fam in parser.text_string_to_metric_families(text):
        assert fam.type == "gauge"
        out += [(s.name, s.labels, s.value) for s in fam.samples]
    return out


@pytest.fixture(scope="module")
def report() -> Report:
    rep = live_report()
    return with_measurements(rep, "gpu", "gpu", gpu_measurements(), [gpu_finding()])


def test_valid_exposition_and_one_status_per_check(report: Report) -> None:
    text = render(report)
    strict_check(text)
    got = samples(text)
    status = [(lab, v) for n, lab, v in got if n == "pgdoctor_check_status"]
    assert len(status) == len(report.checks) * len(Status)
    for c in report.checks:
        mine = {lab["status"]: v for lab, v in status if lab["check"] == c.name}
        assert mine == {s.value: (1.0 if s is c.status else 0.0) for s in Status}
        assert all(lab["area"] == c.area for lab, _ in status if lab["check"] == c.name)


def test_findings_counts_and_timestamp(report: Report) -> None:
    assert report.snapshot is not None
    got = samples(render(report))
    counts = {lab["severity"]: v for n, lab, v in got if n == "pgdoctor_findings"}
    assert counts == {s.value: float(sum(1 for f in report.findings if f.severity is s)) for s in Severity}
    assert counts["fail"] >= 2  # ENV401 from the live run and GPU101
    per_code = {lab["code"] for n, lab, v in got if n == "pgdoctor_finding"}
    assert {"ENV401", "GPU101"} <= per_code
    ts = [v for n, lab, v in got if n == "pgdoctor_last_run_timestamp_seconds"]
    assert ts == [pytest.approx(report.snapshot.time_unix, abs=0.01)]
    assert all(lab["host"] == report.snapshot.host for _, lab, _ in got)


def test_gpu_measurements_are_labelled_by_gpu(report: Report) -> None:
    got = samples(render(report))
    temps = {lab["gpu"]: (lab["gpu_uuid"], v) for n, lab, v in got if n == "pgdoctor_gpu_temp_c"}
    assert temps == {
        "0": ("GPU-5f1e0000-7c3a-4e21-9d55-a00000000000", 31.0),
        "1": ("GPU-5f1e0000-7c3a-4e21-9d55-a00000000001", 38.0),
    }
    ecc = {lab["gpu"]: v for n, lab, v in got if n == "pgdoctor_gpu_ecc_volatile_uncorrected"}
    assert ecc == {"0": 0.0, "1": 2.0}
    # Strings (names, uuids) and booleans are not samples.
    names = {n for n, _, _ in got}
    assert "pgdoctor_gpu_name" not in names and "pgdoctor_gpu_persistence_mode" not in names


def test_only_finite_numbers_and_no_duplicate_series(report: Report) -> None:
    s = Scope(gpu_index=0)
    odd = [
        Measurement(
            "gpu.power.draw_w", Unavailable(Reason.NOT_SUPPORTED, "no power sensor"), scope=Scope(gpu_index=5)
        ),
        Measurement("gpu.clocks.sm_mhz", float("nan"), scope=s),
        Measurement("gpu.clocks.mem_mhz", float("inf"), scope=s),
        # The same series a second time (same key, same labels): the first wins.
        Measurement(
            "gpu.temp_c", 99, scope=Scope(gpu_index=0, gpu_uuid="GPU-5f1e0000-7c3a-4e21-9d55-a00000000000")
        ),
        Measurement("gpu-temp.c", 1, scope=s),  # sanitises to a name another key owns: dropped
        Measurement("findings", 7),  # would collide with a fixed family
    ]
    text = render(with_measurements(report, "more", "gpu", odd))
    strict_check(text)
    got = samples(text)
    names = {n for n, _, _ in got}
    assert "pgdoctor_gpu_clocks_sm_mhz" not in names and "pgdoctor_gpu_clocks_mem_mhz" not in names
    assert not any(n == "pgdoctor_gpu_power_draw_w" and lab["gpu"] == "5" for n, lab, _ in got)
    assert [v for n, lab, v in got if n == "pgdoctor_gpu_temp_c" and lab["gpu"] == "0"] == [31.0]
    assert [v for n, lab, v in got if n == "pgdoctor_findings"] != [] and 7.0 not in [
        v for n, lab, v in got if n == "pgdoctor_findings"
    ]


def test_label_values_are_escaped(report: Report) -> None:
    assert report.snapshot is not None
    host = 'node"7\\a\nb'
    rep = dataclasses.replace(report, snapshot=dataclasses.replace(report.snapshot, host=host))
    nic = Measurement("net.ib.rate_gbps", 400, scope=Scope(nic='mlx5_0 "port" 1'))
    text = render(with_measurements(rep, "ib", "net", [nic]))
    strict_check(text)
    assert 'host="node\\"7\\\\a\\nb"' in text
    got = samples(text)
    assert {lab["host"] for _, lab, _ in got} == {host}
    assert [lab["nic"] for n, lab, _ in got if n == "pgdoctor_net_ib_rate_gbps"] == ['mlx5_0 "port" 1']
