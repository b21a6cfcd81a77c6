"""Net checks: NCCL_IB_HCA syntax, port judgements, slow-node and odd-node rules."""

from __future__ import annotations

import pytest

from pgdoctor.checks.base import Config
from pgdoctor.checks.net.cluster import odd_ones, slow_nodes
from pgdoctor.checks.net.links import parse_hca, select_hca
from pgdoctor.engine.runner import Selection, run_checks
from pgdoctor.model import Severity
from tests.helpers.net_fixtures import HOSTS4, facts, pairs, tree_snapshot, with_cluster

PORTS = {f"mlx5_{i}:1": {"device": f"mlx5_{i}", "port": 1} for i in (0, 1, 10)}
PORTS["mlx5_1:2"] = {"device": "mlx5_1", "port": 2}


@pytest.mark.parametrize(
    "spec, selected, missing",
    [
        ("mlx5", ["mlx5_0:1", "mlx5_1:1", "mlx5_10:1", "mlx5_1:2"], []),
        ("mlx5_1", ["mlx5_1:1", "mlx5_10:1", "mlx5_1:2"], []),  # prefix: mlx5_1 also matches mlx5_10
        ("=mlx5_1", ["mlx5_1:1", "mlx5_1:2"], []),
        ("=mlx5_1:2", ["mlx5_1:2"], []),
        ("mlx5_0:1,mlx5_7", ["mlx5_0:1"], ["mlx5_7"]),
        ("^mlx5_1", ["mlx5_0:1"], []),
        ("^=mlx5_1", ["mlx5_0:1", "mlx5_10:1"], []),
        (
            "^=mlx5_9",
            ["mlx5_0:1", "mlx5_1:1", "mlx5_10:1", "mlx5_1:2"],
            [],
        ),  # excluding the absent is harmless
        ("=mlx5_0:3", [], ["mlx5_0:3"]),
    ],
)
def test_nccl_ib_hca_selection(spec: str, selected: list[str], missing: list[str]) -> None:
    got_selected, got_missing = select_hca(spec, PORTS)
    assert sorted(got_selected) == sorted(selected)
    assert got_missing == missing


def test_parse_hca_flags() -> None:
    assert parse_hca("^=mlx5_0:1, mlx5_1") == (True, True, [("mlx5_0", 1), ("mlx5_1", None)])


def codes(snap, config=None, only=("net",)) -> dict[str, list]:  # type: ignore[no-untyped-def]
    found, _ = run_checks(snap, config or Config(), Selection(only=only))
    out: dict[str, list] = {}
    for f in found:
        out.setdefault(f.code, []).append(f)
    return out


def test_hca_partly_down_is_a_warning_wholly_down_a_failure() -> None:
    partly = codes(tree_snapshot("two_numa_bad", {"NCCL_IB_HCA": "=mlx5_0,mlx5_1"}))["NET102"][0]
    assert partly.severity is Severity.WARN and partly.facts["down"] == ["mlx5_1:1"]
    wholly = codes(tree_snapshot("two_numa_bad", {"NCCL_IB_HCA": "=mlx5_1"}))["NET102"][0]
    assert wholly.severity is Severity.FAIL


def test_ports_excluded_by_nccl_ib_hca_are_not_judged() -> None:
    found = codes(tree_snapshot("two_numa_bad", {"NCCL_IB_HCA": "^=mlx5_1,mlx5_2"}))
    assert "NET103" not in found and "NET104" not in found and "NET102" not in found
    assert "NET105" in found  # error counters are judged on every port


def test_error_threshold_from_config() -> None:
    snap = tree_snapshot("two_numa_bad")
    assert "NET105" not in codes(snap, Config({"net.ib_error_threshold": 12}))
    assert codes(snap)["NET105"][0].facts["counters"] == {"symbol_error": 12, "link_downed": 3}


def test_rdma_expectation_sources() -> None:
    no_ib = tree_snapshot("no_ib")
    assert "NET107" not in codes(no_ib)
    assert "NET107" in codes(no_ib, Config({"net.expect_rdma": True}))
    assert "NET107" in codes(tree_snapshot("no_ib", {"NCCL_NET": "IB"}))
    assert "NET107" not in codes(tree_snapshot("no_ib", {"NCCL_IB_HCA": "mlx5", "NCCL_IB_DISABLE": "1"}))


def test_numa_finding_names_gpu_and_nic() -> None:
    f = codes(tree_snapshot("two_numa_bad"))["NET106"]
    assert len(f) == 1 and f[0].facts == {
        "gpu": "GPU1",
        "gpu_numa_node": 1,
        "nic": "mlx5_0",
        "nic_numa_node": 0,
    }
    assert f[0].scope.host == "node-a" and f[0].scope.gpu_index == 1


def test_odd_ones_majority_and_tie() -> None:
    assert odd_ones({0: "a", 1: "a", 2: "b"}) == ("a", {2: "b"})
    assert odd_ones({0: "b", 1: "a", 2: "a", 3: "b"}) == ("b", {1: "a", 2: "a"})  # tie: rank 0's value
    assert odd_ones({0: None, 1: "a", 2: "a"}) == ("a", {})  # unknown is not a difference


def test_slow_node_needs_three_nodes_and_uses_best_pair() -> None:
    two = [{"src": 0, "dst": 1, "gbytes_per_s": 1.0}, {"src": 1, "dst": 0, "gbytes_per_s": 10.0}]
    assert slow_nodes(two, 0.5)[2] == set()
    four = pairs(HOSTS4, {(1, 2): 1.1, (0, 1): 1.2, (1, 3): 1.1, (3, 1): 1.0})["pairs"]
    best, med, slow = slow_nodes(four, 0.5)
    assert slow == {1} and best[1] == 1.2 and med == 11.8


def test_slow_node_and_slow_link_are_told_apart() -> None:
    base = tree_snapshot("two_numa_good")
    four = [facts(i) for i in range(4)]
    node = codes(
        with_cluster(base, four, pairs(HOSTS4, {(1, 2): 1.1, (0, 1): 1.2, (1, 3): 1.1, (3, 1): 1.0}))
    )
    assert [f.scope.host for f in node["NET115"]] == ["gpu-node-01"] and "NET116" not in node
    assert "1.2 GB/s" in node["NET115"][0].message and "11.8 GB/s" in node["NET115"][0].message
    link = codes(with_cluster(base, four, pairs(HOSTS4, {(2, 3): 2.9})))
    assert "NET115" not in link
    assert link["NET116"][0].scope.link == "gpu-node-02->gpu-node-03"


def test_consistency_findings_name_the_odd_host() -> None:
    four = [facts(i) for i in range(4)]
    snap = with_cluster(
        tree_snapshot("two_numa_good"),
        [
            four[0],
            facts(1, env={**four[1]["env"], "NCCL_IB_HCA": "=mlx5_0"}),
            facts(2, driver_version="535.104.05"),
            four[3],
        ],
    )
    found = codes(snap)
    assert [f.scope.host for f in found["NET113"]] == ["gpu-node-01"]
    assert "NCCL_IB_HCA==mlx5_0 (others: =mlx5_0,mlx5_1)" in found["NET113"][0].message
    assert [f.scope.host for f in found["NET111"]] == ["gpu-node-02"]
    assert all(f.scope.host for fs in found.values() for f in fs)


def test_gpu_lists_are_summarised() -> None:
    snap = with_cluster(
        tree_snapshot("two_numa_good"),
        [facts(0, gpu_count=7, gpu_models=["NVIDIA H100 80GB HBM3"] * 7), *[facts(i) for i in range(1, 4)]],
    )
    msg = codes(snap)["NET112"][0].message
    assert "7x NVIDIA H100 80GB HBM3 (others: 8x NVIDIA H100 80GB HBM3)" in msg
