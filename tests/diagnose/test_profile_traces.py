"""Per-rank profiler traces -> breakdown, straggler and its cause, findings (RUN405-RUN409).

Ground truth: real 4-rank gloo DDP runs recorded with torch.profiler (tests/fixtures/traces,
tests/helpers/make_cpu_traces.py) and GPU traces written in Kineto's layout (tests/helpers/kineto_synth.py).
"""

from __future__ import annotations

import glob
import gzip
import json
import shutil
import tarfile
from pathlib import Path

import pytest

from pgdoctor.cli import main as cli
from pgdoctor.diagnose.api import diagnose_paths
from pgdoctor.diagnose.profile import reader
from pgdoctor.diagnose.profile.analyze import analyze_traces
from pgdoctor.render import get_renderer
from tests.helpers import kineto_synth
from tests.helpers.paths import FIXTURES

TRACES = FIXTURES / "traces"
CODES = FIXTURES / "codes"


def _files(d: Path) -> list[str]:
    return sorted(str(p) for p in d.iterdir() if p.is_file())


def _x_events(path: str) -> list[dict]:  # type: ignore[type-arg]
    with gzip.open(path, "rt") as f:
        return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]


@pytest.mark.parametrize("chunk", [97, 4096])
def test_streaming_reader_gives_every_event_json_load_gives(
    monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    # Tiny chunks cut events, numbers and strings at every place; the flows and instants it steps
    # over unread are the only events missing, and every complete event is decoded identically.
    path = _files(TRACES / "cpu_data_rank1_4rank")[1]
    monkeypatch.setattr(reader, "CHUNK", chunk)
    got = [e for kind, e in reader.scan(path) if kind == "event"]
    assert [e for e in got if e.get("ph") == "X"] == _x_events(path)
    meta = dict(item for kind, item in reader.scan(path) if kind == "meta")
    assert meta["distributedInfo"]["rank"] == 1


@pytest.mark.parametrize("chunk", [61, 1 << 20])
def test_gpu_fast_path_decodes_exactly_the_events_a_gpu_breakdown_reads(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, chunk: int
) -> None:
    path = str(tmp_path / "r0.pt.trace.json.gz")
    kineto_synth.write_rank(path, 0, 1, steps=3, kernels=6)
    monkeypatch.setattr(reader, "CHUNK", chunk)
    full = [e for k, e in reader.scan(path) if k == "event"]
    wanted = [
        e
        for e in full
        if e.get("ph") == "X"
        and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "user_annotation")
    ]
    assert [e for k, e in reader.scan(path, gpu_only=True) if k == "event"] == wanted
    assert len(wanted) == 3 * (
        1 + 2 * (1 + 6 + 1)
    )  # a step, then launch + GPU event per memcpy, kernel, all-reduce


def test_cpu_only_profile_on_a_gpu_host_is_read_in_full(tmp_path: Path) -> None:
    # deviceProperties lists a GPU, but the profile recorded CPU activity only.
    src = _files(TRACES / "cpu_compute_rank2_4rank")
    for p in src:
        with gzip.open(p, "rt") as f:
            doc = json.load(f)
        doc["deviceProperties"] = [{"id": 0, "name": "NVIDIA H100"}]
        with gzip.open(tmp_path / Path(p).name, "wt") as f:
            json.dump(doc, f, indent=1)
    traces, _ = analyze_traces(_files(tmp_path))
    assert {r["kind"] for r in traces["ranks"].values()} == {"cpu"}
    assert traces["straggler"]["rank"] == 2


def test_reader_plain_json_bare_array_and_a_cut_file(tmp_path: Path) -> None:
    ev = {"ph": "X", "name": "k", "ts": 1.5, "dur": 2, "args": {"a": {"b": "}{"}}}
    (tmp_path / "a.json").write_text(json.dumps({"traceEvents": [ev, {"ph": "s", "id": 1}, ev]}))
    assert [e for k, e in reader.scan(str(tmp_path / "a.json")) if k == "event"] == [ev, ev]
    (tmp_path / "b.json").write_text(json.dumps([ev]))
    assert [e for _, e in reader.scan(str(tmp_path / "b.json"))] == [ev]
    text = json.dumps({"traceEvents": [ev, ev]})
    (tmp_path / "c.json").write_text(text[: len(text) // 2])
    with pytest.raises(reader.TraceError):
        list(reader.scan(str(tmp_path / "c.json")))
    assert reader.looks_like_trace(str(tmp_path / "a.json"))
    (tmp_path / "d.json").write_text('{"entries": [], "pg_config": {}}')
    assert not reader.looks_like_trace(str(tmp_path / "d.json"))


@pytest.mark.parametrize(
    "set_name, rank, cause", [("cpu_compute_rank2_4rank", 2, "compute"), ("cpu_data_rank1_4rank", 1, "data")]
)
def test_cpu_ground_truth_names_the_rank_and_the_cause(set_name: str, rank: int, cause: str) -> None:
    traces, found = analyze_traces(_files(TRACES / set_name))
    s = traces["straggler"]
    assert (s["rank"], s["cause"]) == (rank, cause)
    assert found[0].code == "RUN405" and found[0].scope.rank == rank
    assert set(traces["ranks"]) == {"0", "1", "2", "3"}
    for r in traces["ranks"].values():
        assert r["steps"] == 5 and r["last_step_left_out"] and r["kind"] == "cpu"
        assert abs(r["compute_pct"] + r["non_compute_pct"] + r["idle_pct"] - 100.0) < 0.1


def test_balanced_cpu_run_names_no_straggler() -> None:
    traces, found = analyze_traces(_files(TRACES / "cpu_balanced_4rank"))
    assert traces["straggler"] is None
    assert "RUN405" not in {f.code for f in found} and "RUN407" not in {f.code for f in found}


def test_data_stall_is_its_own_finding() -> None:
    _, found = analyze_traces(_files(TRACES / "cpu_data_rank1_4rank"))
    stall = next(f for f in found if f.code == "RUN407")
    assert stall.facts["ranks"] == [1] and stall.facts["data_pct_of_step"] > 50


@pytest.mark.parametrize("code", ["RUN405", "RUN406", "RUN407", "RUN408", "RUN409"])
def test_code_fixtures_fire_on_bad_and_not_on_good(code: str) -> None:
    def codes(which: str) -> set[str]:
        p = CODES / code / which
        paths = _files(p) if p.is_dir() else glob.glob(str(CODES / code / f"{which}.*"))
        return {f.code for f in analyze_traces(paths)[1]}

    assert code in codes("bad")
    assert code not in codes("good")


def test_gpu_straggler_that_starts_late_is_host_bound(tmp_path: Path) -> None:
    paths = kineto_synth.write_set(str(tmp_path), 4, slow_rank=3, delay_us=3000.0)
    traces, _ = analyze_traces(paths)
    assert traces["straggler"]["rank"] == 3 and traces["straggler"]["cause"] == "host"
    balanced = kineto_synth.write_set(str(tmp_path / "even"), 4)
    assert analyze_traces(balanced)[0]["straggler"] is None


def test_all_steps_keeps_the_last_step() -> None:
    files = _files(TRACES / "cpu_balanced_4rank")
    default, _ = analyze_traces(files)
    every, _ = analyze_traces(files, all_steps=True)
    assert {r["steps"] for r in default["ranks"].values()} == {5}
    assert {r["steps"] for r in every["ranks"].values()} == {6}
    assert "--all-steps" in default["notes"][0] and "notes" not in every


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as done:
        cli(["diagnose", *argv])
    assert done.value.code == 0  # warnings only: performance findings do not fail the job
    return capsys.readouterr().out


def test_cli_json_has_top_level_traces_and_console_tells_the_story(
    capsys: pytest.CaptureFixture[str],
) -> None:
    d = str(TRACES / "cpu_compute_rank2_4rank")
    out = json.loads(_run(capsys, d, "--json"))
    r2 = out["traces"]["ranks"]["2"]
    for key in ("steps", "step_ms", "compute_pct", "non_compute_pct", "idle_pct", "comm_comp_overlap_pct"):
        assert key in r2
    assert out["traces"]["straggler"]["rank"] == 2
    assert out["findings"][0]["code"] == "RUN405"
    text = _run(capsys, d)
    assert "straggler: rank 2 is the straggler" in text and "cause: compute" in text
    assert json.loads(_run(capsys, d, "--all-steps", "--json"))["traces"]["ranks"]["0"]["steps"] == 6


def test_html_report_draws_bars_and_step_timeline(tmp_path: Path) -> None:
    import io

    rep = diagnose_paths([str(TRACES / "cpu_data_rank1_4rank")])
    buf = io.StringIO()
    get_renderer("html")(rep, buf, False)
    html = buf.getvalue()
    assert 'class="trace-bars"' in html and 'class="trace-steps"' in html
    assert "Straggler: rank 1, cause data" in html
    assert "<script" not in html and "http://" not in html.replace("http://www.w3.org/2000/svg", "")


def test_job_directory_with_traces_dumps_and_logs_reports_them_together(tmp_path: Path) -> None:
    with tarfile.open(CODES / "RUN281" / "bad.tar") as tf:
        tf.extractall(tmp_path / "fr", filter="data")
    shutil.copy(FIXTURES / "logs" / "gloo_skip_3ranks_real.log", tmp_path / "job.log")
    shutil.copytree(TRACES / "cpu_compute_rank2_4rank", tmp_path / "profiler")
    rep = diagnose_paths([str(tmp_path)])
    codes = [f.code for f in rep.findings]
    assert codes[:2] == ["RUN281", "RUN153"]  # the hang's root cause stays first
    assert "RUN405" in codes and rep.extra["traces"]["straggler"]["rank"] == 2
    assert len(rep.meta["sources"]) == 1 and len(rep.meta["flight_recorder"]["dumps"]) == 3
    buf = __import__("io").StringIO()
    from pgdoctor.diagnose.render import render

    render(rep, buf)
    text = buf.getvalue()
    assert "Root cause:" in text and "RUN281" in text and "straggler: rank 2" in text


def test_unreadable_trace_is_skipped_not_fatal(tmp_path: Path) -> None:
    good = _files(TRACES / "cpu_balanced_4rank")[0]
    shutil.copy(good, tmp_path / "rank0.pt.trace.json.gz")
    (tmp_path / "rank1.pt.trace.json").write_text('{"traceEvents": [{"ph": "X", "ts": 1')
    (tmp_path / "rank2.pt.trace.json").write_text('{"traceEvents": []}')
    (tmp_path / "rank3.pt.trace.json").write_text(
        json.dumps(  # a GPU event of zero length only
            {
                "distributedInfo": {"rank": 3},
                "traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 5, "dur": 0}],
            }
        )
    )
    traces, _ = analyze_traces(_files(tmp_path))
    assert list(traces["ranks"]) == ["0", "3"] and traces["ranks"]["3"]["idle_pct"] == 0.0
    assert "rank1.pt.trace.json" in traces["skipped"][0] and "no complete" in traces["skipped"][1]


def test_pgdoctor_rank_event_files_from_a_real_lab_run(tmp_path: Path) -> None:
    # RUN401's bad trace: a real 2-rank gloo lab run, rank 1 computing twice as long (factor 2),
    # merged by pgdoctor.trace; split back into the rank<N>.events.jsonl files the ranks wrote.
    merged = json.loads((CODES / "RUN401" / "bad.trace.json").read_text())
    for rank in (0, 1):
        lines = [json.dumps(e) for e in merged["traceEvents"] if e.get("pid") == rank and e.get("ph") == "X"]
        (tmp_path / f"rank{rank}.events.jsonl").write_text("\n".join(lines) + "\n")
    shutil.copy(CODES / "RUN401" / "bad.trace.json", tmp_path / "trace.json")
    rep = diagnose_paths([str(tmp_path)])
    traces = rep.extra["traces"]
    assert set(traces["ranks"]) == {"0", "1"} and traces["ranks"]["1"]["rank_from"] == "file name"
    assert (traces["straggler"]["rank"], traces["straggler"]["cause"]) == (1, "compute")
    assert any("merged" in n for n in traces["notes"])  # trace.json is the same ranks again, left out


def test_diagnose_config_sets_the_trace_thresholds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rank 1 waits for its DataLoader more than half of each step: RUN407 at the default 10 %,
    not with traces.data_stall_pct = 90; a wrong type is a usage error (exit 2)."""
    d = str(TRACES / "cpu_data_rank1_4rank")
    strict = tmp_path / "strict.toml"
    strict.write_text("[traces]\ndata_stall_pct = 90.0\n")
    assert "RUN407" in {f["code"] for f in json.loads(_run(capsys, d, "--json"))["findings"]}
    assert "RUN407" not in {
        f["code"] for f in json.loads(_run(capsys, d, "--json", "--config", str(strict)))["findings"]
    }
    bad = tmp_path / "bad.toml"
    bad.write_text('[traces]\ndata_stall_pct = "high"\n')
    with pytest.raises(SystemExit) as exc:
        cli(["diagnose", d, "--config", str(bad)])
    assert exc.value.code == 2
    assert "data_stall_pct" in capsys.readouterr().err
