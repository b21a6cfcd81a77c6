"""The flight-recorder scenarios of tests/helpers/fr_unseen2.py against their ground truth: jobs laid
out as real ones are (TP x DP at 8 to 64 ranks, pipelines), simulated so that each fault's cascade
through the other groups is what a job shows, real 8-rank gloo jobs of the same layout, ring
buffers that wrapped, and the field sets of older recorders (1.4, 2.0, 2.3) and hashed group names."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgdoctor.diagnose.api import diagnose_paths
from tests.helpers import fr_scenarios as S
from tests.helpers import fr_unseen2 as U

SCENARIOS = {s.name: s for s in U.unseen2_scenarios()}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_root_cause_is_the_ground_truth(name: str, tmp_path: Path) -> None:
    sc = SCENARIOS[name]
    findings = diagnose_paths([], [str(sc.dumps_in(tmp_path))]).findings
    ok, why = S.judge(findings, sc.truth)
    assert ok, f"{name}: truth {S.truth_text(sc.truth)}, got {S.verdict(findings)} ({why})"
    if sc.truth.code:
        root = findings[0]
        assert root.facts["root_cause"] is True and root.scope.rank == sc.truth.ranks[0]


@pytest.mark.parametrize("name", sorted(U.GLOO8))
def test_real_gloo_json_dumps_alone_give_the_same_root_cause(name: str, tmp_path: Path) -> None:
    src = SCENARIOS[name].dumps_in(tmp_path / "both", with_json=True)
    only = tmp_path / "json"
    only.mkdir()
    for f in src.glob("*.json"):
        f.rename(only / f.name)
    findings = diagnose_paths([], [str(only)]).findings
    assert S.judge(findings, SCENARIOS[name].truth)[0], S.verdict(findings)


def test_a_pair_that_disagrees_one_against_one_is_told_apart_by_the_other_pairs(tmp_path: Path) -> None:
    root = diagnose_paths([], [str(SCENARIOS["sim_tp2_op_type_mismatch"].dumps_in(tmp_path))]).findings[0]
    assert root.code == "RUN282" and root.facts["odd_ranks"] == [6] and root.facts["waiting_ranks"] == [7]


def test_the_simulator_leaves_a_clean_job_completed_and_a_straggler_cascading() -> None:
    g = U.tp_dp(8, 2)
    ws = [S.Writer(r) for r in range(8)]
    U.simulate(ws, g, {r: U.tp_dp_program(g, 3)(r) for r in range(8)}, stop={5: 2})
    assert {e["state"] for w in ws for e in w.entries[:2]} == {"completed"}
    assert [e["state"] for e in ws[5].entries] == ["completed", "completed"]
    assert ws[4].entries[-1]["state"] == "started" and ws[4].entries[-1]["process_group"][0] == "3"


def test_older_recorders_dumps_are_read_with_their_own_fields(tmp_path: Path) -> None:
    d = SCENARIOS["v14_straggler"].dumps_in(tmp_path)
    import pickle

    data = pickle.loads((d / "nccl_trace_rank_0").read_bytes())  # our own test file
    assert data["version"] == "1.4" and "seq_id" in data["entries"][0]
    assert "collective_seq_id" not in data["entries"][0] and isinstance(data["pg_config"][0], list)
    root = diagnose_paths([], [str(d)]).findings[0]
    assert (root.code, root.facts["missing_ranks"], root.facts["seq"]) == ("RUN281", [2], 6)


def test_a_straggler_is_named_where_it_first_failed_to_arrive(tmp_path: Path) -> None:
    """Rank 37 never entered step 4's TP all_reduce (group 5); its DP peers issued step 4's DP
    all_reduce (group 14) later. Both name rank 37; the root is the one issued first."""
    findings = diagnose_paths([], [str(SCENARIOS["sim_straggler_64"].dumps_in(tmp_path))]).findings
    fails = [(f.facts["pg"], f.facts["culprit_ranks"]) for f in findings if f.code == "RUN281"]
    assert fails[0] == ("5", [37]) and ("14", [37]) in fails


def test_a_straggler_whose_own_dump_shows_it_entering_late_is_named(tmp_path: Path) -> None:
    findings = diagnose_paths([], [str(SCENARIOS["sim_late_straggler_16"].dumps_in(tmp_path))]).findings
    root = findings[0]
    assert (root.code, root.facts["kind"], root.facts["late_ranks"]) == ("RUN281", "late", [5])
    assert root.facts["waiting_ranks"] == [4, 6, 7] and "660 s after the first rank" in root.message


def test_a_stall_inside_a_collective_explains_the_groups_waiting_for_its_ranks(tmp_path: Path) -> None:
    """Every rank of TP group 2 entered its all_reduce within the timeout and none completed: that
    stall is the root; the DP groups missing those ranks are its consequences."""
    findings = diagnose_paths([], [str(SCENARIOS["sim_slow_but_in_time_16"].dumps_in(tmp_path))]).findings
    assert findings[0].code == "RUN283" and findings[0].facts["pg"] == "2"
    assert all(f.facts.get("explained_by") == "RUN283 pg 2 seq 6" for f in findings[1:])


def test_a_dump_with_no_entries_is_no_rank_missing(tmp_path: Path) -> None:
    """Rank 6 recorded nothing (recorder off); its peers completed collectives with it, so its empty
    dump proves nothing, and the straggler (rank 5) is still named."""
    findings = diagnose_paths([], [str(SCENARIOS["sim_empty_dump_straggler_16"].dumps_in(tmp_path))]).findings
    assert all(6 not in f.facts.get("culprit_ranks", []) for f in findings)
    assert findings[0].facts["culprit_ranks"] == [5]


def test_groups_that_share_one_name_are_told_apart_by_their_ranks(tmp_path: Path) -> None:
    """split_group / DeviceMesh give every TP group the name "1": the straggler's TP group is
    [4-7], not the eight ranks of both groups, and the finding says which one."""
    root = diagnose_paths([], [str(SCENARIOS["split_named_straggler_16"].dumps_in(tmp_path))]).findings[0]
    assert (root.facts["pg"], root.facts["pg_ranks"], root.facts["waiting_ranks"]) == ("1", "4-7", [4, 6, 7])
    assert "process group 1 (tp, ranks 4-7) seq 6" in root.message
