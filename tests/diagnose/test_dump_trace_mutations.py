"""Real flight-recorder dumps and profiler traces of tests/fixtures, mutated structurally and
diagnosed: every field of an entry, of pg_config, of pg_status or of a trace event replaced by a
value of each wrong type (a string for a number, a list for an object, None, a boolean, a number
past 64 bits, a negative, NaN where a pickle can carry it, an empty string, text with terminal
controls), fields deleted, entries duplicated, reversed and shuffled, nesting, world sizes that
disagree and ranks out of range. Each case must end in exit 0-3 with one valid JSON report, print
no terminal control, skip no input for a Python exception (the trace reader turns one into
"skipped: TypeError ..." and the run went on without the file: a crash by another name), and end
within its bound; a mutation that keeps the meaning ("12" for 12, 12.0 for 12) must give the same
answer as the original. Nsight exports get wrong values in every column and tables dropped. The
cases are drawn by a seeded generator from the full grid, so a run
is the same every time and costs about 20 s."""

from __future__ import annotations

import copy
import gzip
import io
import json
import math
import pickle
import random
import re
import shutil
import sqlite3
import tarfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from pgdoctor.cli import main as cli
from pgdoctor.diagnose.api import diagnose_paths
from pgdoctor.diagnose.flight import safe_pickle
from pgdoctor.diagnose.render import render
from pgdoctor.model import numbers
from pgdoctor.model.report import Report, exit_code
from tests.helpers import kineto_synth
from tests.helpers.paths import FIXTURES

Dumps = dict[str, Any]  # file name -> the dump's data
ESC = "\x1b]0;owned\x07\x1b[2J\u202e\r"
BIG = 1 << 70
WRONG: list[Any] = [None, True, False, "", "x", "12", -1, 0, BIG, -BIG, 3.5, math.nan, math.inf]
WRONG += [[], {}, [1, "a"], {"a": [1]}, ESC]
# A Python exception's name in a skip reason: a reader failed where it should have read or refused.
_HIDDEN_CRASH = re.compile(
    r"\b(?:TypeError|KeyError|AttributeError|IndexError|ZeroDivisionError|OverflowError|"
    r"UnboundLocalError|RecursionError|AssertionError|NameError)\b"
)
_CONTROL = re.compile(r"\x1b\]|\x1b\[2J|\x07|\u202e|\r(?!\n)")
BOUND_S = 20.0  # per case, for a slow shared machine; the slowest takes about 1 s


def _fr_fixtures() -> dict[str, Dumps]:
    out: dict[str, Dumps] = {}
    with tarfile.open(FIXTURES / "fr" / "tp_dp_straggler.tar") as tf:
        out["tp_dp_straggler"] = {
            Path(m.name).name: json.load(tf.extractfile(m))  # type: ignore[arg-type]
            for m in tf.getmembers()
            if m.isfile() and m.name.endswith(".json")
        }
    for name in ("tp_one_group_stuck_8", "pp_send_send_deadlock"):
        folder = FIXTURES / "fr_unseen3" / name
        out[name] = {
            p.name: safe_pickle.loads(p.read_bytes())
            for p in sorted(folder.iterdir())
            if p.name.startswith("nccl")
        }
    return out


FR = _fr_fixtures()


def _jsonable(v: Any) -> bool:
    try:
        json.dumps(v, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return not re.search(r"\d{41}", json.dumps(v))


def _write_dumps(folder: Path, dumps: Dumps) -> None:
    folder.mkdir()
    for name, data in dumps.items():
        if _jsonable(data) and not name.endswith(("0", "2", "4", "6")):
            (folder / f"{name}.json").write_text(json.dumps(data))
        else:
            (folder / name).write_bytes(pickle.dumps(data))


def _check(report: Report, seconds: float) -> tuple[int, list[str]]:
    """The invariants every case keeps; the answer (exit code, codes) for comparisons."""
    text = io.StringIO()
    render(report, text)
    assert not _CONTROL.search(text.getvalue()), text.getvalue()[:2000]
    json.loads(numbers.dumps(report.to_json()))
    skipped = [
        *(report.meta.get("flight_recorder") or {}).get("skipped", []),
        *(report.extra.get("traces") or {}).get("skipped", []),
        *report.meta.get("skipped_unreadable_files", []),
    ]
    assert not [s for s in skipped if _HIDDEN_CRASH.search(s)], skipped
    assert seconds < BOUND_S
    code = exit_code(report)
    assert code in (0, 1, 2, 3)
    return code, sorted(f.code for f in report.findings)


def _diagnose_dumps(tmp: Path, dumps: Dumps) -> tuple[int, list[str]]:
    _write_dumps(tmp, dumps)
    t0 = time.monotonic()
    report = diagnose_paths([], [str(tmp)])
    return _check(report, time.monotonic() - t0)


# --- mutations of dumps: each a function of one dump -------------------------------------------


def _entries(d: Mapping[str, Any]) -> list[Any]:
    e = d.get("entries")
    return e if isinstance(e, list) else []


def _column(key: str, value: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def edit(d: dict[str, Any]) -> dict[str, Any]:
        for e in _entries(d):
            if isinstance(e, dict):
                if value is _DELETE:
                    e.pop(key, None)
                elif key in e:
                    e[key] = value(e[key]) if callable(value) else value
        return d

    return edit


def _section(section: str, key: str, value: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def edit(d: dict[str, Any]) -> dict[str, Any]:
        for v in (d.get(section) or {}).values():
            if isinstance(v, dict) and key in v:
                v[key] = value
        return d

    return edit


def _top(key: str, value: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def edit(d: dict[str, Any]) -> dict[str, Any]:
        d[key] = value
        return d

    return edit


_DELETE = object()


def _nested(depth: int) -> Any:
    x: Any = []
    for _ in range(depth):
        x = [x]
    return x


def _structural() -> Iterator[tuple[str, Callable[[dict[str, Any]], dict[str, Any]]]]:
    yield "duplicated", lambda d: {**d, "entries": _entries(d) * 3}
    yield "reversed", lambda d: {**d, "entries": _entries(d)[::-1]}
    yield "shuffled", lambda d: {**d, "entries": random.Random(7).sample(_entries(d), len(_entries(d)))}
    yield "not entries", lambda d: {**d, "entries": [1, "a", None, [], *_entries(d)]}
    yield (
        "nested",
        lambda d: {**d, "entries": [*_entries(d), {"frames": _nested(150), "input_sizes": _nested(150)}]},
    )
    yield "entries a tuple", lambda d: {**d, "entries": tuple(_entries(d))}
    yield "int keys", lambda d: {**d, "pg_config": dict(enumerate((d.get("pg_config") or {}).values()))}
    yield (
        "status keys",
        lambda d: {**d, "pg_status": {(k,): v for k, v in (d.get("pg_status") or {}).items()}},
    )
    yield "controls in names", _column("profiling_name", lambda v: f"{v}{ESC}")
    yield (
        "controls in groups",
        _column("process_group", lambda v: [f"{x}{ESC}" for x in v] if isinstance(v, list) else v),
    )
    yield "controls in frames", _column("frames", [{"name": ESC, "filename": f"/a/{ESC}.py", "line": ESC}])
    yield "world of 16", _section("pg_config", "ranks", list(range(16)))
    yield "ranks out of range", _section("pg_config", "ranks", [0, -1, 1 << 21, 10**30])
    yield "ranks as text", _section("pg_config", "ranks", "[0, 1, 1048575]")
    yield "seq far apart", lambda d: _renumber(d, lambda i: i * (1 << 50))
    yield "seq negative", lambda d: _renumber(d, lambda i: -i)
    yield "one seq", lambda d: _renumber(d, lambda i: 1)


def _renumber(d: dict[str, Any], seq: Callable[[int], int]) -> dict[str, Any]:
    for i, e in enumerate(_entries(d)):
        if isinstance(e, dict):
            e["collective_seq_id"] = e["record_id"] = seq(i)
    return d


def _grid() -> list[tuple[str, str, Callable[[dict[str, Any]], dict[str, Any]]]]:
    cases = []
    for scenario, dumps in FR.items():
        keys = sorted({k for d in dumps.values() for e in _entries(d) for k in e})
        for key in keys:
            for v in [*WRONG, _DELETE]:
                cases.append((scenario, f"entries.{key} = {v!r:.20}", _column(key, v)))
        for section, sub in (
            ("pg_config", "ranks"),
            ("pg_config", "desc"),
            ("pg_status", "last_started_collective"),
        ):
            for v in WRONG:
                cases.append((scenario, f"{section}.{sub} = {v!r:.20}", _section(section, sub, v)))
        for key in ("entries", "pg_config", "pg_status", "version"):
            for v in WRONG:
                cases.append((scenario, f"{key} = {v!r:.20}", _top(key, v)))
        for name, edit in _structural():
            cases.append((scenario, name, edit))
    return cases


GRID = _grid()
SAMPLE = random.Random(20261207).sample(GRID, 240)


@pytest.mark.parametrize("chunk", range(8))
def test_mutated_dumps_never_crash_hang_or_print_controls(tmp_path: Path, chunk: int) -> None:
    for i, (scenario, what, edit) in enumerate(SAMPLE[chunk::8]):
        dumps = FR[scenario]
        first = sorted(dumps)[0]
        for scope in ("one rank", "every rank"):
            mutated = {
                name: edit(copy.deepcopy(d)) if scope == "every rank" or name == first else d
                for name, d in dumps.items()
            }
            try:
                _diagnose_dumps(tmp_path / f"{i}-{scope[0]}", mutated)
            except AssertionError as exc:
                raise AssertionError(f"{scenario}: {what} in {scope}: {exc}") from None


_IDS = ("record_id", "pg_id", "collective_seq_id", "p2p_seq_id", "timeout_ms", "time_created_ns")


def _as_text(v: Any) -> Any:
    return str(v) if type(v) is int else v


def _as_float(v: Any) -> Any:
    return float(v) if type(v) is int and abs(v) < 1 << 53 else v


@pytest.mark.parametrize("scenario", sorted(FR))
def test_meaning_preserving_mutations_give_the_same_answer(tmp_path: Path, scenario: str) -> None:
    dumps = FR[scenario]
    base = _diagnose_dumps(tmp_path / "base", dumps)
    edits: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
        "ids as text": lambda d: _apply_all(d, [_column(k, _as_text) for k in _IDS]),
        "ids as floats": lambda d: _apply_all(d, [_column(k, _as_float) for k in _IDS]),
        "keys reordered": lambda d: {
            **dict(reversed(list(d.items()))),
            "entries": [dict(reversed(list(e.items()))) if isinstance(e, dict) else e for e in _entries(d)],
        },
    }
    for what, edit in edits.items():
        got = _diagnose_dumps(
            tmp_path / what.replace(" ", "_"), {n: edit(copy.deepcopy(d)) for n, d in dumps.items()}
        )
        assert got == base, (scenario, what)


def _apply_all(d: dict[str, Any], edits: list[Callable[[dict[str, Any]], dict[str, Any]]]) -> dict[str, Any]:
    for edit in edits:
        d = edit(d)
    return d


def test_a_few_mutated_dumps_through_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dumps = FR["tp_one_group_stuck_8"]
    for i, edit in enumerate(
        (_column("input_sizes", [[1 << 62] * 3]), _top("pg_config", [ESC]), _column("state", 7))
    ):
        folder = tmp_path / str(i)
        _write_dumps(folder, {n: edit(copy.deepcopy(d)) for n, d in dumps.items()})
        with pytest.raises(SystemExit) as done:
            cli(["diagnose", "--flight-recorder", str(folder), "--timeout", "60"])
        out = capsys.readouterr()
        assert done.value.code in (0, 1, 2, 3) and "Traceback" not in out.err, out.err


# --- profiler traces -----------------------------------------------------------------------------


def _trace_sets(tmp: Path) -> dict[str, dict[str, Any]]:
    cpu = FIXTURES / "traces" / "cpu_stop_rank2_4rank"
    sets = {
        "cpu": {
            p.name.removesuffix(".gz"): json.loads(gzip.decompress(p.read_bytes()))
            for p in sorted(cpu.glob("*.gz"))
        }
    }
    gpu = tmp / "gpu-source"
    gpu.mkdir()
    for r in range(3):
        kineto_synth.write_rank(
            str(gpu / f"rank{r}.pt.trace.json.gz"), r, 3, steps=3, kernels=4, delay_us=300.0 * (r == 1)
        )
    sets["gpu"] = {
        p.name.removesuffix(".gz"): json.loads(gzip.decompress(p.read_bytes()))
        for p in sorted(gpu.glob("*.gz"))
    }
    return sets


def _diagnose_traces(folder: Path, traces: dict[str, Any]) -> tuple[int, list[str]]:
    folder.mkdir()
    for name, data in traces.items():
        (folder / name).write_text(json.dumps(data))
    t0 = time.monotonic()
    report = diagnose_paths([str(folder)])
    return _check(report, time.monotonic() - t0)


def _event_edit(key: str, value: Any, inside_args: bool = False) -> Callable[[dict[str, Any]], None]:
    def edit(trace: dict[str, Any]) -> None:
        for ev in trace["traceEvents"]:
            target = ev.get("args") if inside_args else ev
            if isinstance(target, dict) and key in target:
                if value is _DELETE:
                    del target[key]
                else:
                    target[key] = value(target[key]) if callable(value) else value

    return edit


def _trace_grid() -> list[tuple[str, Callable[[dict[str, Any]], None]]]:
    values = [v for v in WRONG if not (isinstance(v, float) and not math.isfinite(v))] + [_DELETE, [1, 2]]
    cases = []
    for key in ("ph", "ts", "dur", "name", "cat", "pid", "tid", "args", "id"):
        cases += [(f"{key} = {v!r:.20}", _event_edit(key, v)) for v in values]
    cases += [(f"args.correlation = {v!r:.20}", _event_edit("correlation", v, True)) for v in values]
    cases += [
        (f"distributedInfo.{k} = {v!r:.20}", _info_edit(k, v)) for k in ("rank", "world_size") for v in values
    ]
    cases.append(("unknown ph", _event_edit("ph", "Q")))
    cases.append(("negative dur", _event_edit("dur", lambda v: -abs(v) - 1)))
    return cases


def _info_edit(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(trace: dict[str, Any]) -> None:
        info = trace.get("distributedInfo")
        if isinstance(info, dict):
            if value is _DELETE:
                info.pop(key, None)
            else:
                info[key] = value

    return edit


TRACE_SAMPLE = random.Random(7).sample(_trace_grid(), 40)


@pytest.mark.parametrize("chunk", range(4))
def test_mutated_traces_never_crash_or_skip_for_an_exception(tmp_path: Path, chunk: int) -> None:
    sets = _trace_sets(tmp_path)
    for i, (what, edit) in enumerate(TRACE_SAMPLE[chunk::4]):
        for name, traces in sets.items():
            first = sorted(traces)[0]
            for scope in ("one", "every"):
                mutated = {}
                for f, data in traces.items():
                    if scope == "every" or f == first:
                        data = copy.deepcopy(data)
                        edit(data)
                    mutated[f] = data
                try:
                    _diagnose_traces(tmp_path / f"{i}-{name}-{scope}", mutated)
                except AssertionError as exc:
                    raise AssertionError(f"{name}: {what} in {scope}: {exc}") from None


def test_times_written_as_text_and_many_events_keep_the_answer(tmp_path: Path) -> None:
    traces = _trace_sets(tmp_path)["cpu"]
    base = _diagnose_traces(tmp_path / "base", traces)
    as_text = copy.deepcopy(traces)
    for data in as_text.values():
        _event_edit("ts", repr)(data)
        _event_edit("dur", repr)(data)
    assert _diagnose_traces(tmp_path / "text", as_text) == base
    # 200,000 events no analysis reads (instants, unknown kinds) beside the real ones: bounded.
    crowded = copy.deepcopy(traces)
    for data in crowded.values():
        data["traceEvents"] += [{"ph": "i" if i % 2 else "Q", "ts": i, "name": ESC} for i in range(50_000)]
    assert _diagnose_traces(tmp_path / "crowded", crowded) == base


# --- Nsight exports ------------------------------------------------------------------------------

_NSIGHT_VALUES = ("NULL", "'x'", "-1", "9223372036854775807", "1e308", "X'00ff'", "''")


def _nsight_grid() -> list[tuple[str, str]]:
    cases = []
    for export in ("cpu_timeout_rank2_3ranks", "h100_2gpu_1s"):
        con = sqlite3.connect(FIXTURES / "nsys" / f"{export}.sqlite")
        tables = [t for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            if table.startswith("ENUM_"):
                continue
            cases.append((export, f"DROP TABLE {table}"))
            for (col,) in con.execute(f"SELECT name FROM pragma_table_info('{table}')"):
                cases += [
                    (export, f'UPDATE {table} SET "{col}" = {v} WHERE rowid % 2 = 0') for v in _NSIGHT_VALUES
                ]
        con.close()
    return cases


NSIGHT_SAMPLE = random.Random(11).sample(_nsight_grid(), 60)


@pytest.mark.parametrize("chunk", range(2))
def test_mutated_nsight_exports_never_crash_or_skip_for_an_exception(tmp_path: Path, chunk: int) -> None:
    for i, (export, edit) in enumerate(NSIGHT_SAMPLE[chunk::2]):
        folder = tmp_path / str(i)
        folder.mkdir()
        dst = folder / f"{export}.sqlite"
        shutil.copy(FIXTURES / "nsys" / f"{export}.sqlite", dst)
        con = sqlite3.connect(dst)
        try:
            con.execute(edit)
            con.commit()
        except sqlite3.IntegrityError:  # a NOT NULL column: no export can hold that either
            continue
        finally:
            con.close()
        t0 = time.monotonic()
        try:
            _check(diagnose_paths([str(folder)]), time.monotonic() - t0)
        except AssertionError as exc:
            raise AssertionError(f"{export}: {edit}: {exc}") from None
