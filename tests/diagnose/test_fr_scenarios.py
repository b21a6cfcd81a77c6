"""Every flight-recorder scenario of tests/helpers/fr_scenarios.py against its own ground truth: real
4-rank gloo dumps (read as pickles and, separately, as JSON) and dumps in NCCL's recorder format,
3 to 1024 ranks. Plus: the answer does not depend on the order dumps are read; partial dumps say
nothing; the console and JSON put culprit, group, seq, op and kind first; a log's reason for the
culprit's lateness leads, with the dump's where."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from pgdoctor.diagnose.api import diagnose_paths, diagnose_sources
from pgdoctor.diagnose.flight import collectives
from pgdoctor.diagnose.flight.dump import FlightReport, read_dumps
from tests.helpers import fr_scenarios as S
from tests.helpers import fr_unseen as U

SCENARIOS = {s.name: s for s in S.all_scenarios()}
GLOO = sorted(S.GLOO)  # the 4-rank jobs kept with both formats


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_root_cause_is_the_ground_truth(name: str, tmp_path: Path) -> None:
    sc = SCENARIOS[name]
    findings = diagnose_paths([], [str(sc.dumps_in(tmp_path))]).findings
    ok, why = S.judge(findings, sc.truth)
    assert ok, f"{name}: truth {S.truth_text(sc.truth)}, got {S.verdict(findings)} ({why})"
    if sc.truth.code:
        root = findings[0]
        assert root.facts["root_cause"] is True and root.scope.rank == sc.truth.ranks[0]
        assert all(f.facts.get("cascade_of") == root.code for f in findings[1:])


@pytest.mark.parametrize("name", GLOO)
def test_json_dumps_alone_give_the_same_root_cause(name: str, tmp_path: Path) -> None:
    sc = SCENARIOS[name]
    src = sc.dumps_in(tmp_path / "both", with_json=True)
    only = tmp_path / "json"
    only.mkdir()
    for f in src.glob("*.json"):
        f.rename(only / f.name)
    findings = diagnose_paths([], [str(only)]).findings
    assert S.judge(findings, sc.truth)[0], S.verdict(findings)


@pytest.mark.parametrize(
    "name",
    [
        "culprit_rank0",
        "cross_group_deadlock",
        "two_faults",
        "ring_wrap",
        "subgroup_never_issued",
        "nccl_coalesced_clean",
        "nccl_op_type_rank0",
        "nccl_wrap_out_of_step",
    ],
)
def test_the_answer_does_not_depend_on_which_dump_is_read_first(name: str, tmp_path: Path) -> None:
    rep = read_dumps([str(SCENARIOS[name].dumps_in(tmp_path))])
    want = [(f.code, f.facts.get("culprit_ranks"), f.facts.get("seq")) for f in collectives.analyze(rep)]
    rng = random.Random(7)
    for _ in range(4):
        dumps = rep.dumps[:]
        rng.shuffle(dumps)
        got = [
            (f.code, f.facts.get("culprit_ranks"), f.facts.get("seq"))
            for f in collectives.analyze(FlightReport(dumps))
        ]
        assert got == want


def test_facts_stay_small_at_a_thousand_ranks(tmp_path: Path) -> None:
    root = diagnose_paths([], [str(SCENARIOS["scale_1024_not_started"].dumps_in(tmp_path))]).findings[0]
    assert root.facts["per_rank"] == {
        "0-520,522-1023": {"op": "nccl:all_reduce", "state": "started"},
        "521": {"op": "nccl:all_reduce", "state": "scheduled"},
    }
    assert "ranks 0-520,522-1023 (1023) wait in it" in root.message and len(root.message) < 300


def test_partial_dumps_that_agree_give_no_failure(tmp_path: Path) -> None:
    findings = diagnose_paths([], [str(S.partial_dumps().dumps_in(tmp_path))]).findings
    assert [f.code for f in findings if f.severity.value == "fail"] == []


def test_cross_group_deadlock_reports_both_halves_cause_first(tmp_path: Path) -> None:
    findings = diagnose_paths([], [str(SCENARIOS["cross_group_deadlock"].dumps_in(tmp_path))]).findings
    first, second = findings[:2]
    assert (first.code, first.facts["pg"], first.facts["missing_ranks"], first.facts["waiting_ranks"]) == (
        "RUN281",
        "1",
        [1],
        [0, 2, 3],
    )
    assert (second.facts["pg"], second.facts["missing_ranks"], second.facts["waiting_ranks"]) == (
        "0",
        [0, 2, 3],
        [1],
    )
    assert second.facts["explained_by"] == "RUN281 pg 1 seq 1"


def test_independent_faults_are_both_reported(tmp_path: Path) -> None:
    findings = diagnose_paths([], [str(SCENARIOS["two_faults"].dumps_in(tmp_path))]).findings
    assert [(f.code, f.facts["pg"], f.facts["culprit_ranks"]) for f in findings] == [
        ("RUN282", "2", [3]),
        ("RUN281", "1", [1]),
    ]
    assert findings[1].facts["independent"] is True


def test_a_gloo_size_mismatch_names_the_culprit_and_the_rank_gloo_aborted(tmp_path: Path) -> None:
    findings = diagnose_paths([], [str(SCENARIOS["size_mismatch"].dumps_in(tmp_path))]).findings
    root = findings[0]
    assert root.code == "RUN284" and root.facts["kind"] == "input_size" and root.facts["odd_ranks"] == [1]
    # Ranks that passed the same thing share one entry (ranges), so per_rank stays small at scale.
    assert root.facts["per_rank"]["1"]["input_sizes"] == [[512]] and root.facts["per_rank"]["0,2"][
        "input_sizes"
    ] == [[256]]
    dead = [f for f in findings if f.code == "RUN290"]
    assert dead and dead[0].facts["no_dump_ranks"] == [3]


def test_console_and_json_name_culprit_group_seq_op_and_kind_first(tmp_path: Path) -> None:
    d = SCENARIOS["cross_group_deadlock"].dumps_in(tmp_path)
    cmd = [sys.executable, "-m", "pgdoctor", "diagnose", "--flight-recorder", str(d)]
    con = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert con.returncode == 1, con.stderr
    first = con.stdout.splitlines()[0]
    assert first.startswith("[x] Root cause: RUN281") and "(rank 1)" in first
    second = con.stdout.splitlines()[1]
    assert "process group 1 seq 1 gloo:all_reduce: rank 1 never entered it" in second
    assert "Cascade (1)" in con.stdout and "ranks 0,2-3 (3) never entered it" in con.stdout
    js = json.loads(subprocess.run([*cmd, "--json"], capture_output=True, text=True, timeout=60).stdout)
    root = js["findings"][0]
    assert (
        root["code"],
        root["scope"]["rank"],
        root["facts"]["pg"],
        root["facts"]["seq"],
        root["facts"]["op"],
        root["facts"]["kind"],
    ) == ("RUN281", 1, "1", 1, "gloo:all_reduce", "missing")


OOM = (
    "[rank3]:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total "
    "capacity of "
    "79.10 GiB of which 1.02 GiB is free. Of the allocated memory 74.1 GiB is allocated by PyTorch, and 1.2 "
    "GiB is "
    "reserved by PyTorch but unallocated.\n"
)


def test_a_log_saying_why_the_culprit_was_late_leads_with_the_dumps_where(tmp_path: Path) -> None:
    d = SCENARIOS["skip_last"].dumps_in(tmp_path)
    findings = diagnose_sources([("rank3.log", "step 4\n" + OOM)], [str(d)])
    root = findings[0]
    assert root.code == "RUN101" and root.scope.rank == 3
    assert (root.facts["fr_code"], root.facts["fr_pg"], root.facts["fr_seq"]) == ("RUN281", "0", 5)
    assert findings[1].code == "RUN281" and findings[1].facts["cascade_of"] == "RUN101"
    # An OOM on a rank the dump does not blame is not the reason: the dump leads.
    other = diagnose_sources(
        [("rank1.log", OOM.replace("[rank3]", "[rank1]").replace("GPU 3", "GPU 1"))], [str(d)]
    )
    assert other[0].code == "RUN281" and other[1].facts["cascade_of"] == "RUN281"


def test_fixture_tars_hold_both_dump_formats_of_every_rank() -> None:
    for name, _ in S.GLOO.items():
        with tarfile.open(os.path.join(S.FR_DIR, f"{name}.tar")) as tf:
            names = tf.getnames()
        ranks = {n.split(".")[0] for n in names}
        assert {f"{r}.pkl" for r in ranks} | {f"{r}.json" for r in ranks} == set(names), name


def _answer(findings: list) -> list[tuple]:
    return [
        (f.code, f.facts.get("culprit_ranks"), f.facts.get("pg"), f.facts.get("seq"))
        for f in findings
        if f.severity.value == "fail"
    ]


@pytest.mark.parametrize(
    "name", sorted(n for n, s in SCENARIOS.items() if s.source != "scale" and not n.startswith("strings_"))
)
def test_numbers_written_as_strings_give_the_same_answer(name: str, tmp_path: Path) -> None:
    """Every scenario again with record ids, sequence ids, pg ids, times and pg_status counters as
    strings and is_p2p/retired as "true"/"false", as JSON: the same findings, never a crash."""
    sc = SCENARIOS[name]
    want = _answer(diagnose_paths([], [str(sc.dumps_in(tmp_path / "as-written"))]).findings)
    d = tmp_path / "strings"
    d.mkdir()
    U.retyped(sc.write, bools=True)(str(d), False)
    assert _answer(diagnose_paths([], [str(d)]).findings) == want


def test_fields_of_any_wrong_type_are_read_or_ignored_never_a_crash(tmp_path: Path) -> None:
    """Values no writer should produce, in every field the analysis reads: one clear answer."""
    import pickle

    src = SCENARIOS["nccl_coalesced_absent"].dumps_in(tmp_path / "src")
    weird: list[object] = [
        "",
        "abc",
        "1e400",
        "nan",
        None,
        [],
        {},
        -1,
        1.5,
        "12.0",
        True,
        "[[4, 4]]",
        "('0',",
        10**400,
    ]
    for i, value in enumerate(weird):
        d = tmp_path / f"w{i}"
        d.mkdir()
        for f in sorted(src.iterdir()):
            data = pickle.loads(f.read_bytes())  # the test's own files
            for e in data["entries"][-4:]:
                for k in (
                    "record_id",
                    "collective_seq_id",
                    "p2p_seq_id",
                    "pg_id",
                    "is_p2p",
                    "state",
                    "input_sizes",
                    "output_dtypes",
                    "process_group",
                    "time_created_ns",
                    "profiling_name",
                ):
                    e[k] = value
            data["pg_status"] = {"0": {"last_completed_collective": value}}
            data["pg_config"] = {"0": {"ranks": value}}
            (d / f.name).write_bytes(pickle.dumps(data, protocol=2))
        report = diagnose_paths([], [str(d)])
        assert report.findings is not None


def test_alltoall_splits_name_the_rank_whose_splits_disagree(tmp_path: Path) -> None:
    root = diagnose_paths(
        [], [str(SCENARIOS["nccl_alltoall_list_uneven_splits"].dumps_in(tmp_path))]
    ).findings[0]
    assert (root.code, root.facts["kind"], root.facts["odd_ranks"]) == ("RUN284", "input_size", [2])
    assert "rank 2 sends 4 elements to rank 0, which expects 3" in root.message
