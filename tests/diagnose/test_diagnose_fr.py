"""Flight recorder: real dumps from real 3-rank gloo jobs (torch 2.13 CPU) in which one rank
skips a collective, read as pickle (through the restricted unpickler) and as JSON; the malicious
pickle that must not run."""

from __future__ import annotations

import os
import pickle
import shutil
import tarfile
from pathlib import Path

import pytest

from pgdoctor.diagnose.api import diagnose_paths, diagnose_sources
from pgdoctor.diagnose.flight import safe_pickle
from pgdoctor.diagnose.flight.dump import load_dump, read_dumps
from tests.helpers import fr_lab
from tests.helpers.paths import FIXTURES

# The tests of the one real job run on one worker: spread over workers, each built it (7 CPU-s).
SKIP_RUN_WORKER = pytest.mark.xdist_group("fr_skip_run")


@pytest.fixture(scope="module")
def skip_run(tmp_path_factory: pytest.TempPathFactory) -> fr_lab.FrRun:
    """One real job shared by the module: rank 1 never enters an all_reduce ranks 0 and 2 wait in."""
    out = tmp_path_factory.mktemp("fr-skip")
    run = fr_lab.run("skip", str(out))
    assert [o.timed_out for o in run.outcomes] == [False] * 3, [o.stderr[-500:] for o in run.outcomes]
    return run


@pytest.mark.slow
@SKIP_RUN_WORKER
def test_real_dump_names_the_rank_that_skipped(skip_run: fr_lab.FrRun) -> None:
    rep = diagnose_paths([], [skip_run.out])
    root = rep.findings[0]
    assert root.code == "RUN281" and root.category == "collective_timeout"
    f = root.facts
    assert f["missing_ranks"] == [1] and f["present_ranks"] == [0, 2]
    assert f["op"] == "gloo:all_reduce" and f["seq"] == 5 and f["input_sizes"] == [[256]]
    assert f["input_dtypes"] == ["Float"]
    assert f["missing_ranks_last_collective"]["1"]["op"] == "gloo:broadcast"
    assert any("fr_workload.py" in fr for fr in f["frames"]), "Python frames come from the pickle dumps"


@pytest.mark.slow
@SKIP_RUN_WORKER
def test_json_dumps_alone_give_the_same_answer(skip_run: fr_lab.FrRun, tmp_path: Path) -> None:
    for n in os.listdir(skip_run.out):
        if n.endswith(".json"):
            shutil.copy(os.path.join(skip_run.out, n), tmp_path / n)
    root = diagnose_paths([], [str(tmp_path)]).findings[0]
    assert root.code == "RUN281" and root.facts["missing_ranks"] == [1] and root.facts["seq"] == 5


@pytest.mark.slow
@SKIP_RUN_WORKER
def test_dump_plus_real_gloo_logs(skip_run: fr_lab.FrRun) -> None:
    logs = [(f"rank{r}.log", skip_run.log_text(r)) for r in range(3)]
    findings = diagnose_sources(logs, [skip_run.out])
    codes = [f.code for f in findings]
    assert codes[0] == "RUN281", codes
    assert "RUN153" in codes and findings[codes.index("RUN153")].facts["cascade_of"] == "RUN281"
    gloo = findings[codes.index("RUN153")]
    assert gloo.facts["timeout_ms"] == 3000 and set(gloo.facts["ranks"]) <= {0, 2}


def test_recorded_fixture_dumps_are_plain_data(tmp_path: Path) -> None:
    with tarfile.open(FIXTURES / "codes" / "RUN282" / "bad.tar") as tf:
        tf.extractall(tmp_path, filter="data")
    rep = read_dumps([str(tmp_path)])
    assert sorted(d.rank for d in rep.dumps) == [0, 1, 2] and not rep.skipped
    assert rep.dumps[1].data["entries"][-1]["profiling_name"] == "gloo:all_gather"


class _Boom:
    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (os.system, (self.command,))


def test_malicious_pickle_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    # A well-formed pickle (editing the bytes of one would break its string's length prefix).
    evil = pickle.dumps({"entries": [_Boom(f"touch {marker}")]})
    with pytest.raises(safe_pickle.UnsafePickleError, match=r"(posix|os)\.system"):
        safe_pickle.loads(evil)
    assert not marker.exists()
    dump = tmp_path / "rank0.pkl"
    dump.write_bytes(evil)
    (tmp_path / "rank1.pkl").write_bytes(pickle.dumps({"entries": []}))
    rep = read_dumps([str(tmp_path)])
    assert [d.rank for d in rep.dumps] == [1] and "refused" in rep.skipped[0]
    assert not marker.exists()


def test_safe_pickle_admits_plain_containers_only() -> None:
    data = {"a": [1, 2.5, None, True, "x", b"y", (1, 2)], "s": {1}, "f": frozenset({2})}
    assert safe_pickle.loads(pickle.dumps(data, protocol=2)) == data
    assert safe_pickle.loads(pickle.dumps(data, protocol=5)) == data
    with pytest.raises(safe_pickle.UnsafePickleError):
        safe_pickle.loads(pickle.dumps(Path("/etc")))
    with pytest.raises(pickle.UnpicklingError):
        safe_pickle.loads(b"\x80\x04garbage")


def test_unreadable_dump_is_skipped_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "rank0.json").write_text("{not json")
    (tmp_path / "rank1.json").write_text('{"entries": []}')
    rep = read_dumps([str(tmp_path)])
    assert [d.rank for d in rep.dumps] == [1] and len(rep.skipped) == 1
    with pytest.raises(ValueError):
        load_dump(str(tmp_path / "rank0.json"))


def test_a_group_member_without_a_dump_is_reported(tmp_path: Path) -> None:
    with tarfile.open(FIXTURES / "codes" / "RUN281" / "good.tar") as tf:
        tf.extractall(tmp_path, filter="data")
    (tmp_path / "nccl_trace_rank2").unlink()  # rank 2 died before dumping
    root = diagnose_paths([], [str(tmp_path)]).findings[0]
    assert root.code == "RUN290" and root.facts["no_dump_ranks"] == [2] and root.facts["missing_ranks"] == [2]
    assert root.facts["present_ranks"] == [0, 1] and root.facts["culprit_ranks"] == [2]


def test_a_missing_dump_yields_to_a_cause_the_logs_show_on_another_rank(tmp_path: Path) -> None:
    # Rank 1 ran out of host memory; the launcher's teardown killed rank 2 before it dumped. The
    # dumps that exist agree, so the missing dump says nothing the OOM does not explain.
    with tarfile.open(FIXTURES / "codes" / "RUN281" / "good.tar") as tf:
        tf.extractall(tmp_path / "fr", filter="data")
    (tmp_path / "fr" / "nccl_trace_rank2").unlink()
    shutil.copy(FIXTURES / "codes" / "RUN122" / "bad.log", tmp_path / "job.log")
    findings = diagnose_paths([str(tmp_path / "job.log")], [str(tmp_path / "fr")]).findings
    root = findings[0]
    assert root.code == "RUN122" and root.scope.rank == 1 and root.facts["root_cause"] is True
    assert root.facts["fr_code"] == "RUN290"
    missing = [f for f in findings if f.code == "RUN290"]
    assert missing and missing[0].facts["cascade_of"] == "RUN122"


def test_dumps_inside_a_job_directory_are_found_without_the_option(tmp_path: Path) -> None:
    with tarfile.open(FIXTURES / "codes" / "RUN281" / "bad.tar") as tf:
        tf.extractall(tmp_path / "fr", filter="data")
    shutil.copy(FIXTURES / "logs" / "gloo_skip_3ranks_real.log", tmp_path / "job.log")
    rep = diagnose_paths([str(tmp_path)])
    assert [f.code for f in rep.findings][:2] == ["RUN281", "RUN153"]
    assert len(rep.meta["sources"]) == 1 and len(rep.meta["flight_recorder"]["dumps"]) == 3


def _nccl_p2p_dump(rank: int, ops: list[tuple[str, int, str, list[int]]]) -> bytes:
    """A dump in the format NCCL's flight recorder writes for send/recv (gloo records none, so
    this is written from torch's FlightRecorder format, as in test/distributed/test_c10d_nccl.py):
    ops are (kind, peer, state, size)."""
    entries = []
    for i, (kind, peer, state, size) in enumerate(ops, start=1):
        arrow = f"{rank}->{peer}" if kind == "send" else f"{rank}<-{peer}"
        entries.append(
            {
                "record_id": i - 1,
                "pg_id": 0,
                "process_group": ("0", "default_pg"),
                "collective_seq_id": 0,
                "p2p_seq_id": i,
                "op_id": i,
                "profiling_name": f"nccl:{kind} {arrow}",
                "input_sizes": [size],
                "input_dtypes": ["BFloat16"],
                "output_sizes": [size],
                "output_dtypes": ["BFloat16"],
                "state": state,
                "is_p2p": True,
                "retired": state == "completed",
                "timeout_ms": 600000,
                "frames": [{"name": "send_forward", "filename": "/w/pp.py", "line": 40 + i}],
            }
        )
    return pickle.dumps(
        {
            "version": "2.10",
            "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"}},
            "pg_status": {},
            "entries": entries,
        },
        protocol=2,
    )


@pytest.mark.parametrize(
    ("rank1_ops", "code"),
    [
        ([("recv", 0, "completed", [4, 8])], "RUN287"),  # rank 1 never posted the recv
        ([("recv", 0, "completed", [4, 8]), ("recv", 0, "started", [4, 16])], "RUN288"),  # sizes disagree
        ([("recv", 0, "completed", [4, 8]), ("recv", 0, "started", [4, 8])], "RUN283"),  # both posted, stuck
    ],
)
def test_nccl_send_recv_pairs(tmp_path: Path, rank1_ops: list, code: str) -> None:  # type: ignore[type-arg]
    (tmp_path / "nccl_trace_rank_0").write_bytes(
        _nccl_p2p_dump(0, [("send", 1, "completed", [4, 8]), ("send", 1, "started", [4, 8])])
    )
    (tmp_path / "nccl_trace_rank_1").write_bytes(_nccl_p2p_dump(1, rank1_ops))
    root = diagnose_paths([], [str(tmp_path)]).findings[0]
    assert root.code == code and root.facts["src"] == 0 and root.facts["dst"] == 1
    if code == "RUN287":
        assert root.facts["missing_ranks"] == [1] and "never posted the matching receive" in root.message


@pytest.mark.slow
@pytest.mark.parametrize("scenario", ["skip", "ok"])
def test_header_only_dumps_still_name_the_rank_behind(scenario: str, tmp_path: Path) -> None:
    # `_dump_fr_trace(includeCollectives=False)` writes pg_config and pg_status only: no entries
    # key at all. Such files were read as logs and said nothing; the counters still say which rank
    # never issued the collective its peers wait in.
    run = fr_lab.run(scenario, str(tmp_path / "full"), status_out=str(tmp_path / "status"))
    assert [o.timed_out for o in run.outcomes] == [False] * 3, [o.stderr[-500:] for o in run.outcomes]
    for ext in ("pkl", "json"):
        only = tmp_path / ext
        only.mkdir()
        for r in range(3):
            shutil.copy(tmp_path / "status" / f"rank{r}.{ext}", only)
        assert "entries" not in load_dump(str(only / f"rank0.{ext}"))
        rep = diagnose_paths([], [str(only)])
        fails = [f for f in rep.findings if f.severity.value == "fail"]
        if scenario == "ok":
            assert fails == [], [f.code for f in rep.findings]
            continue
        root = fails[0]
        assert root.code == "RUN281" and root.facts["kind"] == "missing", root.message
        assert root.facts["missing_ranks"] == [1] and root.facts["present_ranks"] == [0, 2]
        assert root.facts["seq"] == 5 and root.facts["source"] == "pg_status"
        # Diagnosed from a directory of logs and dumps too: the header-only JSON is a dump, not a log.
        both = diagnose_paths([str(only)], [])
        assert both.findings and both.findings[0].code == "RUN281"


def _status_dumps(tmp_path: Path, counters: dict[int, tuple[object, object, object]]) -> str:
    """NCCL-shaped header-only dumps (as `_dump_fr_trace_json(includeCollectives=False)` writes them)."""
    import json

    for r, (enq, started, done) in counters.items():
        doc = {
            "comm_lib_version": "2.21.5",
            "nccl_comm_state": {},
            "pg_config": {"0": {"desc": "default_pg", "name": "0", "ranks": str(sorted(counters))}},
            "pg_status": {
                "0": {
                    "last_enqueued_collective": enq,
                    "last_started_collective": started,
                    "last_completed_collective": done,
                }
            },
            "version": "2.10",
        }
        (tmp_path / f"nccl_trace_rank_{r}").write_text(json.dumps(doc))
    return str(tmp_path)


@pytest.mark.parametrize(
    "counters, code, kind, culprits",
    [
        # rank 2 issued two fewer collectives than its peers: it never issued seq 41
        ({0: (42, 42, 41), 1: (42, 42, 41), 2: (40, 40, 40), 3: (42, 42, 41)}, "RUN281", "missing", [2]),
        # numbers as strings (gloo and JSON writers) are numbers
        ({0: ("7", "-1", "7"), 1: ("6", "-1", "6")}, "RUN281", "missing", [1]),
        # every rank issued seq 9; rank 1 never started it while its peers did
        ({0: (9, 9, 8), 1: (9, 8, 8), 2: (9, 9, 8)}, "RUN286", "state", [1]),
        # every rank started seq 9; only rank 3 never completed it
        ({0: (9, 9, 9), 1: (9, 9, 9), 2: (9, 9, 9), 3: (9, 9, 8)}, "RUN283", "not_completed", [3]),
    ],
)
def test_header_only_counters_name_the_odd_rank(
    tmp_path: Path,
    counters: dict[int, tuple[object, object, object]],
    code: str,
    kind: str,
    culprits: list[int],
) -> None:
    rep = diagnose_paths([], [_status_dumps(tmp_path, counters)])
    root = rep.findings[0]
    assert (root.code, root.facts["kind"], root.facts.get("ranks")) == (
        code,
        kind,
        culprits,
    ), root.message


@pytest.mark.parametrize(
    "counters",
    [
        {0: (42, 42, 42), 1: (42, 42, 42)},  # a healthy job: every rank at the same place
        {0: (5, 5, 4), 1: (5, 5, 4)},  # all in seq 5, none done: who is to blame is not in the counters
        {0: ("x", None, []), 1: (-1, -1, -1)},  # garbage and an unused group
        {0: (3, 3, 3)},  # one rank compares with nothing
        # gloo (no starts tracked) marks a collective completed lazily: a healthy job dumped rank by
        # rank after its last barrier differs by one there
        {0: (6, -1, 6), 1: (6, -1, 5), 2: (6, -1, 6)},
    ],
)
def test_header_only_counters_that_agree_or_say_nothing_are_silent(
    tmp_path: Path, counters: dict[int, tuple[object, object, object]]
) -> None:
    rep = diagnose_paths([], [_status_dumps(tmp_path, counters)])
    assert [f.code for f in rep.findings if f.severity.value == "fail"] == []
