"""Profiler traces a user hands over as they are: a rank stalled outside the profiled ops, a rank
that stopped mid-run, traces of several runs in one directory, ranks without a trace, files the
profiler never finished.

Ground truth: real 4-rank gloo DDP runs on CPU (torch 2.13.0), `python -m
tests.helpers.make_cpu_traces host|stop` (tests/fixtures/traces/README.md): in
cpu_host_rank2_4rank rank 2 sleeps 30 ms per step between its DataLoader and its forward; in
cpu_stop_rank2_4rank rank 2 leaves its loop at its fourth active step and the others wait in the
all-reduce until gloo's 6 s timeout. The figures below were checked against a separate
computation from the raw events (the step thread's ops, gloo's all-reduce ranges, their unions).
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from pgdoctor.cli import main as cli
from pgdoctor.diagnose.profile.analyze import analyze_traces
from tests.helpers import kineto_synth
from tests.helpers.paths import FIXTURES

TRACES = FIXTURES / "traces"
HOST = TRACES / "cpu_host_rank2_4rank"
STOP = TRACES / "cpu_stop_rank2_4rank"


def _files(d: Path) -> list[str]:
    return sorted(str(p) for p in d.iterdir() if p.is_file())


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as done:
        cli(["diagnose", *argv])
    out = capsys.readouterr()
    return int(done.value.code or 0), out.out + out.err


def test_rank_stalled_outside_every_profiled_op_is_the_straggler_cause_host() -> None:
    traces, found = analyze_traces(_files(HOST))
    s = traces["straggler"]
    assert s["rank"] == 2 and s["cause"] == "host"
    # The sleep is 30 ms per step: its host time exceeds the others' by about that much, and it
    # waits in the all-reduce far less than they do (checked from the raw events: 17.8 ms against 49.3).
    assert 25.0 < s["excess_ms"]["host"] < 35.0
    ranks = traces["ranks"]
    assert ranks["2"]["wait_ms"] == pytest.approx(17.85, abs=0.05)
    assert ranks["0"]["wait_ms"] == pytest.approx(49.29, abs=0.05)
    assert ranks["2"]["idle_ms"] > 25.0 > max(ranks[r]["idle_ms"] for r in ("0", "1", "3"))
    assert found[0].code == "RUN405" and "no profiled op" in found[0].message


def test_rank_that_stopped_mid_run_is_named_with_the_others_long_last_step(
    capsys: pytest.CaptureFixture[str],
) -> None:
    traces, _ = analyze_traces(_files(STOP))
    stop = traces["stopped"]
    assert stop["ranks"] == [2] and stop["others"] == [0, 1, 3]
    assert 5.5 < stop["early_s"] < 7.0  # gloo's 6 s timeout
    assert stop["others_last_step_ms"] > 5000.0
    assert all(not k.startswith("_") for r in traces["ranks"].values() for k in r)  # no wall clock leaks
    rc, text = _cli(capsys, str(STOP))
    assert rc == 0
    assert "stopped: rank 2's trace ends 6.0" in text and "the others waited for it" in text


def test_traces_of_two_runs_in_one_directory_are_not_compared(tmp_path: Path) -> None:
    for d in (HOST, STOP):
        for f in d.iterdir():
            shutil.copy(f, tmp_path / f.name)
    traces, _ = analyze_traces(_files(tmp_path))
    kept = {Path(r["file"]).name for r in traces["ranks"].values()}
    # Four ranks each: the later run (stop was recorded after host) is analysed, whole.
    assert kept == {p.name for p in STOP.iterdir()}
    assert any("2 separate runs" in n for n in traces["notes"])
    assert "skipped" not in traces  # not "rank 0 again": the other run is not a duplicate
    assert traces["stopped"]["ranks"] == [2]


def test_ranks_without_a_trace_are_named_from_the_world_size(tmp_path: Path) -> None:
    for f in _files(STOP):
        if Path(f).name.startswith(("rank1.", "rank3.")):
            shutil.copy(f, tmp_path)
    traces, _ = analyze_traces(_files(tmp_path))
    assert "2 of 4 ranks have a trace (world size 4): no trace of rank(s) 0, 2" in traces["notes"]


def _gpu_trace_with_trailer(tmp_path: Path, name: str, rank: int, base_ns: int) -> str:
    """Kineto writes baseTimeNanoseconds after traceEvents, where the GPU fast path stops parsing."""
    gz = tmp_path / f"{name}.gz"
    kineto_synth.write_rank(str(gz), rank, 2, steps=3, t0=0.0)
    text = gzip.decompress(gz.read_bytes()).decode()
    gz.unlink()
    out = tmp_path / f"{name}.pt.trace.json"
    out.write_text(text.rstrip()[:-1] + f', "baseTimeNanoseconds": {base_ns}}}')
    return str(out)


def test_gpu_traces_take_their_wall_clock_from_the_trailer(tmp_path: Path) -> None:
    day = 1_790_000_000 * 10**9
    files = [
        _gpu_trace_with_trailer(tmp_path, "a_rank0", 0, day),
        _gpu_trace_with_trailer(tmp_path, "a_rank1", 1, day),
        _gpu_trace_with_trailer(tmp_path, "b_rank0", 0, day + 3600 * 10**9),
        _gpu_trace_with_trailer(tmp_path, "b_rank1", 1, day + 3600 * 10**9),
    ]
    traces, _ = analyze_traces(files)
    assert {Path(r["file"]).name[:2] for r in traces["ranks"].values()} == {"b_"}
    assert any("2 separate runs" in n for n in traces["notes"])


def test_traces_from_time_zero_are_never_split(tmp_path: Path) -> None:
    """Hand-made or converted traces count from zero: no wall clock, so no runs are told apart."""
    a = tmp_path / "a.pt.trace.json.gz"
    b = tmp_path / "b.pt.trace.json.gz"
    kineto_synth.write_rank(str(a), 0, 2, t0=0.0)
    kineto_synth.write_rank(str(b), 1, 2, t0=10_000_000_000.0)
    traces, _ = analyze_traces([str(a), str(b)])
    assert set(traces["ranks"]) == {"0", "1"} and not any("separate" in n for n in traces.get("notes", []))


def _hostile(tmp_path: Path, kind: str) -> Path:
    d = tmp_path / kind
    d.mkdir()
    good = gzip.decompress(next(STOP.iterdir()).read_bytes())
    if kind == "empty":
        (d / "rank0.1.pt.trace.json.gz").write_bytes(b"")
        (d / "rank1.1.pt.trace.json").write_bytes(b"")
    elif kind == "cut_gzip":
        (d / "rank0.pt.trace.json.gz").write_bytes(gzip.compress(good)[:2000])
    elif kind == "cut_json":
        (d / "rank0.pt.trace.json").write_bytes(good[: len(good) // 2])
    elif kind == "nested":
        (d / "rank0.pt.trace.json").write_text('{"traceEvents": [' + "[" * 50_000 + "]" * 50_000 + "]}")
    elif kind == "events_not_a_list":
        (d / "rank0.pt.trace.json").write_text(json.dumps({"traceEvents": {"ph": "X"}}))
    elif kind == "no_trace_events":
        (d / "rank0.pt.trace.json").write_text(json.dumps({"schemaVersion": 1, "deviceProperties": []}))
    elif kind == "not_nsys":
        import sqlite3

        with sqlite3.connect(d / "rank0.sqlite") as db:
            db.execute("create table t(a)")
        db.close()
    return d


@pytest.mark.parametrize(
    "kind, reason",
    [
        ("empty", "an empty file"),
        ("cut_gzip", "end-of-stream"),
        ("cut_json", "not JSON"),
        ("nested", "nested too deeply"),
        ("events_not_a_list", "expected '['"),
        ("no_trace_events", "nothing to analyse"),
        ("not_nsys", "not an nsys export"),
    ],
)
def test_unreadable_traces_are_one_line_each_and_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, reason: str
) -> None:
    rc, text = _cli(capsys, str(_hostile(tmp_path, kind)))
    assert rc == 3, text
    skipped = [line for line in text.splitlines() if "skipped:" in line]
    assert skipped and all(reason in line for line in skipped), text
    assert "Traceback" not in text and "\x1b" not in text


def test_nsight_export_of_a_hung_rank_names_it_stopped() -> None:
    """A real nsys 2022.4 export of `pgdoctor repro timeout --nproc 3` (tests/fixtures/nsys/README.md):
    rank 2 hangs in its backward pass; its NVTX ranges end seconds before the others'."""
    traces, _ = analyze_traces([str(FIXTURES / "nsys" / "cpu_timeout_rank2_3ranks.sqlite")])
    stop = traces["stopped"]
    assert stop["ranks"] == [2] and stop["others"] == [0, 1] and stop["early_s"] > 5.0


def test_cycles_of_a_repeat_schedule_are_told_apart_by_the_rank_seen_again(tmp_path: Path) -> None:
    """A `schedule(..., repeat=2)` writes one file per rank per cycle, a step or two apart: well
    within the gap that separates runs, so the rank seen again is what starts the next cycle."""
    for f in HOST.iterdir():
        shutil.copy(f, tmp_path / f.name)
        trace = json.loads(gzip.decompress(f.read_bytes()))
        trace["baseTimeNanoseconds"] += 500_000_000  # the next cycle, half a second later
        later = tmp_path / f.name.replace(".pt.", ".cycle2.pt.")
        later.write_bytes(gzip.compress(json.dumps(trace).encode()))
    traces, _ = analyze_traces(_files(tmp_path))
    assert {Path(r["file"]).name.split(".")[2] for r in traces["ranks"].values()} == {"cycle2"}
    assert any("2 separate runs or profiler cycles" in n for n in traces["notes"])
    assert "skipped" not in traces and traces["straggler"]["rank"] == 2


def test_html_report_tells_the_stopped_rank(capsys: pytest.CaptureFixture[str]) -> None:
    rc, text = _cli(capsys, str(STOP), "--format", "html")
    assert rc == 0 and "Stopped: rank 2" in text


def _cpu_trace(path: Path, rank: int, calls: int, steps: int = 4) -> None:
    """A CPU Kineto trace in torch.profiler's layout: ProfilerStep ranges on the step thread, each
    with `calls` collectives (c10d::allreduce_ there, gloo:all_reduce on gloo's thread) after 2 ms
    of compute. Made by hand: the real run this mirrors (120 per-parameter all-reduces of a DDP
    loop, /work/s19/t1 scratch) is 530 KB of traces."""
    ev: list[dict] = []  # type: ignore[type-arg]
    t = 1000.0
    for k in range(steps):
        ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{k}", "pid": 1, "tid": 1,
                   "ts": t, "dur": 2000.0 + calls * 100.0})  # fmt: skip
        ev.append(
            {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": t, "dur": 2000.0}
        )
        for j in range(calls):
            at = t + 2000.0 + j * 100.0
            ev.append(
                {
                    "ph": "X",
                    "cat": "cpu_op",
                    "name": "c10d::allreduce_",
                    "pid": 1,
                    "tid": 1,
                    "ts": at,
                    "dur": 90.0,
                }
            )
            ev.append(
                {
                    "ph": "X",
                    "cat": "cpu_op",
                    "name": "gloo:all_reduce",
                    "pid": 1,
                    "tid": 2,
                    "ts": at,
                    "dur": 95.0,
                }
            )
        t += 2000.0 + calls * 100.0
    trace = {"schemaVersion": 1, "distributedInfo": {"rank": rank, "world_size": 2, "backend": "gloo"},
             "deviceProperties": [], "traceEvents": ev}  # fmt: skip
    path.write_text(json.dumps(trace))


def test_many_small_collectives_are_named_in_the_exposed_communication_finding(tmp_path: Path) -> None:
    for r in (0, 1):
        _cpu_trace(tmp_path / f"rank{r}.pt.trace.json", r, calls=40)
    traces, found = analyze_traces(_files(tmp_path))
    assert {s["collectives_per_step"] for s in traces["ranks"].values()} == {40.0}
    exposed = next(f for f in found if f.code == "RUN406")
    assert "40 collectives per step" in exposed.message and "bucket or coalesce" in exposed.message
    assert exposed.facts["collectives_per_step"] == 40.0


def test_a_ddp_loop_with_bucketed_all_reduces_is_not_many_small_collectives() -> None:
    traces, found = analyze_traces(_files(TRACES / "cpu_balanced_4rank"))
    assert all(s["collectives_per_step"] <= 4 for s in traces["ranks"].values())
    assert all("collectives per step" not in f.message for f in found)
