"""Fields of another type or of absurd size in a flight-recorder dump, a profiler trace or an
Nsight export, each class fixed at the reader's one typed accessor: a trace's `pid`/`tid` that is
a list or an object (unhashable) or both 7 and "7" (`profile/rank.py: track`), steps of no length
(an empty window), an export's times of text, blobs or 1e308 (`profile/nsight.py: timed`): each
skipped the whole trace as a TypeError or IndexError. A dump's sizes that a 13 KB pickle expands
into a million numbers (30 s) and a 10 MB operation name copied into every finding and scrubbed
there (20 s) are bounded where the dump is read (`flight/dump.py: clean_entry`)."""

from __future__ import annotations

import gzip
import json
import pickle
import shutil
import sqlite3
import zlib
from pathlib import Path

import pytest

from pgdoctor.diagnose.api import diagnose_paths
from pgdoctor.diagnose.flight.dump import MAX_FIELD_CHARS, MAX_SIZE_NUMBERS, clean_entry, read_dumps
from pgdoctor.diagnose.flight.entries import entry_of
from pgdoctor.diagnose.profile.analyze import analyze_traces
from pgdoctor.knowledge.ranks import MAX_RANK
from pgdoctor.model import numbers
from pgdoctor.model.report import exit_code
from tests.helpers.paths import FIXTURES

CPU_SET = FIXTURES / "traces" / "cpu_stop_rank2_4rank"


def _trace_set(tmp_path: Path, edit) -> list[str]:  # type: ignore[no-untyped-def]
    out = []
    for p in sorted(CPU_SET.glob("*.gz")):
        data = json.loads(gzip.decompress(p.read_bytes()))
        if p.name.startswith("rank0"):
            for ev in data["traceEvents"]:
                edit(ev)
        dst = tmp_path / p.name.removesuffix(".gz")
        dst.write_text(json.dumps(data))
        out.append(str(dst))
    return out


def _tracks_as(value: object):  # type: ignore[no-untyped-def]
    def edit(ev: dict) -> None:  # type: ignore[type-arg]
        for key in ("pid", "tid"):
            if key in ev:
                ev[key] = value

    return edit


def test_a_trace_whose_tracks_are_lists_or_objects_is_read_not_skipped(tmp_path: Path) -> None:
    for i, value in enumerate(([1, 2], {"a": [1]}, None, 2.5)):
        d = tmp_path / str(i)
        d.mkdir()
        traces, _ = analyze_traces(_trace_set(d, _tracks_as(value)))
        assert traces.get("skipped", []) == [], (value, traces["skipped"])
        assert len(traces["ranks"]) == 4


def test_a_trace_whose_categories_are_lists_is_read_not_skipped(tmp_path: Path) -> None:
    def edit(ev: dict) -> None:  # type: ignore[type-arg]
        if "cat" in ev:
            ev["cat"] = [ev["cat"]]

    traces, _ = analyze_traces(_trace_set(tmp_path, edit))
    assert traces.get("skipped", []) == [] and len(traces["ranks"]) == 4


def test_steps_of_one_time_on_tracks_of_two_types_are_ordered(tmp_path: Path) -> None:
    # Two steps with the same start and end on tid 7 and tid "7": tuples that compare int with str.
    def edit(ev: dict) -> None:  # type: ignore[type-arg]
        if str(ev.get("name", "")).startswith("ProfilerStep#"):
            ev["tid"] = "7" if ev["name"].endswith(("1", "3", "5", "7", "9")) else 7
            ev["ts"], ev["dur"] = 5750335400000.0, 10.0

    traces, _ = analyze_traces(_trace_set(tmp_path, edit))
    assert traces.get("skipped", []) == [] and len(traces["ranks"]) == 4


def _fr_dump(**entry: object) -> dict:  # type: ignore[type-arg]
    e = {
        "record_id": 0,
        "pg_id": 0,
        "process_group": ["0", "default_pg"],
        "collective_seq_id": 1,
        "p2p_seq_id": 0,
        "profiling_name": "gloo:all_reduce",
        "input_sizes": [[4]],
        "input_dtypes": ["Float"],
        "output_sizes": [[4]],
        "output_dtypes": ["Float"],
        "state": "scheduled",
        "timeout_ms": 1000,
        "is_p2p": False,
        "frames": [],
        **entry,
    }
    return {
        "version": "2.4",
        "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"}},
        "pg_status": {},
        "entries": [e],
    }


def test_sizes_past_what_a_collective_holds_are_absent_whatever_their_pickle_costs(tmp_path: Path) -> None:
    shape = [2] * 1000
    many = [shape] * 1000  # one million numbers, in a pickle of a few KB (its memo shares them)
    assert entry_of(0, clean_entry({"input_sizes": many})).in_sizes == []
    assert entry_of(0, clean_entry({"input_sizes": [[3] * 200]})).in_sizes == []  # no tensor has 200 dims
    kept = [[4, 8]] * (MAX_SIZE_NUMBERS // 2)
    assert entry_of(0, clean_entry({"input_sizes": kept})).in_sizes == kept  # a large all_to_all is read
    (tmp_path / "rank0.pkl").write_bytes(pickle.dumps(_fr_dump(input_sizes=many, output_sizes=many)))
    (tmp_path / "rank1.pkl").write_bytes(pickle.dumps(_fr_dump()))
    assert (tmp_path / "rank0.pkl").stat().st_size < 20_000
    report = diagnose_paths([], [str(tmp_path)])  # it took 30 s: the sizes were read one by one
    assert len(numbers.dumps(report.to_json())) < 100_000


def test_a_ten_megabyte_operation_name_is_clipped_where_the_dump_is_read(tmp_path: Path) -> None:
    huge = "gloo:all_reduce" + "a" * (10 << 20)
    e = clean_entry(
        {
            "profiling_name": huge,
            "process_group": ["0", "d" * (1 << 20)],
            "frames": [{"name": "f" * (1 << 20), "filename": "x.py", "line": 1}],
        }
    )
    assert len(e["profiling_name"]) <= MAX_FIELD_CHARS + 64
    assert e["profiling_name"] != clean_entry({"profiling_name": huge + "b"})["profiling_name"]
    assert all(len(str(x)) <= MAX_FIELD_CHARS + 64 for x in e["process_group"])
    assert len(e["frames"][0]["name"]) <= MAX_FIELD_CHARS + 64
    (tmp_path / "rank0.json").write_text(json.dumps(_fr_dump(profiling_name=huge)))
    (tmp_path / "rank1.json").write_text(json.dumps(_fr_dump()))
    report = diagnose_paths([], [str(tmp_path)])
    assert report.findings  # the two ranks disagree on the operation
    assert len(numbers.dumps(report.to_json())) < 200_000


@pytest.mark.parametrize(
    ("export", "edit"),
    [
        ("cpu_timeout_rank2_3ranks", "UPDATE NVTX_EVENTS SET start = 1e308 WHERE rowid % 7 = 0"),
        ("cpu_timeout_rank2_3ranks", "UPDATE NVTX_EVENTS SET end = start - 5 WHERE rowid % 5 = 0"),
        ("cpu_timeout_rank2_3ranks", "UPDATE NVTX_EVENTS SET start = 'x' WHERE rowid % 3 = 0"),
        ("cpu_timeout_rank2_3ranks", "UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = 'x'"),
        ("cpu_timeout_rank2_3ranks", "UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = X'00ff'"),
        ("h100_2gpu_1s", "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = X'00ff' WHERE rowid % 3 = 0"),
        ("h100_2gpu_1s", "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = 'late' WHERE rowid % 2 = 0"),
        ("h100_2gpu_1s", "UPDATE CUPTI_ACTIVITY_KIND_MEMSET SET globalPid = NULL WHERE rowid % 2 = 0"),
        ("h100_2gpu_1s", "UPDATE NVTX_EVENTS SET globalTid = NULL WHERE rowid % 2 = 0"),
    ],
)
def test_an_nsight_export_with_times_or_ids_of_another_type_is_read_not_skipped(
    tmp_path: Path, export: str, edit: str
) -> None:
    dst = tmp_path / f"{export}.sqlite"
    shutil.copy(FIXTURES / "nsys" / f"{export}.sqlite", dst)
    con = sqlite3.connect(dst)
    con.execute(edit)
    con.commit()
    con.close()
    traces, _ = analyze_traces([str(dst)])
    assert traces.get("skipped", []) == [] and traces["ranks"], traces.get("skipped")


def test_steps_of_no_length_leave_the_threads_ranges_as_the_window(tmp_path: Path) -> None:
    # Every `dur` false or 0: the steps' union is empty (it was an IndexError, the trace skipped).
    def edit(ev: dict) -> None:  # type: ignore[type-arg]
        if "dur" in ev and str(ev.get("name", "")).startswith("ProfilerStep#"):
            ev["dur"] = False

    traces, _ = analyze_traces(_trace_set(tmp_path, edit))
    assert traces.get("skipped", []) == [] and len(traces["ranks"]) == 4


def test_a_groups_ranks_are_parsed_once_where_the_dump_is_read(tmp_path: Path) -> None:
    # pg_config's ranks as the recorder writes them (text); 2,000,000 of them were parsed and
    # bounded by each of three readers, per group, a dozen times in all (9 s).
    big = _fr_dump()
    big["pg_config"]["0"]["ranks"] = json.dumps(list(range(200_000)))
    big["pg_config"]["1"] = [0, "1", True, -1, MAX_RANK + 1]  # before 2.0: {pg_id: [ranks]}
    big["pg_config"]["2"] = {"ranks": json.dumps(list(range(2_000_000)))}  # more than any world
    (tmp_path / "rank0.json").write_text(json.dumps(big))
    (tmp_path / "rank1.json").write_text(json.dumps(_fr_dump()))
    cfg = read_dumps([str(tmp_path)]).dumps[0].data["pg_config"]
    assert cfg["0"]["ranks"] == list(range(200_000))
    assert cfg["1"] == [0, 1] and cfg["2"]["ranks"] == []
    assert exit_code(diagnose_paths([], [str(tmp_path)])) in (0, 1, 3)


def _damaged_deflate(data: bytes) -> bytes:
    """`data` (a gzip file) with one byte of its deflate body changed so that zlib itself refuses the
    stream (zlib.error, which is no OSError), not only the CRC at its end (BadGzipFile): the first such
    byte from the middle on, found by trying, so the test does not depend on one compressor's output."""
    for pos in range(len(data) // 2, len(data) - 8):
        bad = bytearray(data)
        bad[pos] ^= 0xFF
        try:
            gzip.decompress(bytes(bad))
        except zlib.error:
            return bytes(bad)
        except (OSError, EOFError):
            continue
    raise AssertionError("no byte of the deflate body makes zlib refuse the stream")


def test_a_damaged_gzip_trace_is_skipped_by_name_and_the_other_ranks_are_read(tmp_path: Path) -> None:
    paths = []
    for p in sorted(CPU_SET.glob("*.gz")):
        dst = tmp_path / p.name
        data = p.read_bytes()
        dst.write_bytes(_damaged_deflate(data) if p.name.startswith("rank0") else data)
        paths.append(str(dst))
    out, _ = analyze_traces(paths)
    (skip,) = out["skipped"]
    assert skip.startswith(str(tmp_path / "rank0")) and "a damaged gzip stream (Error -3" in skip
    assert sorted(out["ranks"]) == ["1", "2", "3"]
