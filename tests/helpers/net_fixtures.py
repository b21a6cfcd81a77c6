"""Snapshots for the net codes, made by running the real net probes on the sysfs fixture trees
(tests/fixtures/sysfs/) with a given environment, plus, for the cross-node codes, a `multinode`
result in the exact shape pgdoctor.engine.multinode writes (values chosen to show one odd node).

`python -m tests.helpers.net_fixtures` rewrites tests/fixtures/codes/NET*/{bad,good}.json.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any, Optional

from pgdoctor.engine.runner import Selection, collect
from pgdoctor.model import Measurement, ProbeResult, Snapshot, Status
from pgdoctor.probes.base import ProbeContext
from pgdoctor.probes.sysfs import FsReader

TESTS = Path(__file__).resolve().parents[1]
SYSFS = TESTS / "fixtures" / "sysfs"
CODES = TESTS / "fixtures" / "codes"
BASE_ENV = {"MASTER_ADDR": "10.0.0.5", "MASTER_PORT": "29500", "NCCL_DEBUG": "WARN"}


def tree_snapshot(tree: str, env: Optional[dict[str, str]] = None, host: str = "node-a") -> Snapshot:
    ctx = ProbeContext(env={**BASE_ENV, **(env or {})}, fs=FsReader(SYSFS / tree), clock=lambda: 1764460800.0)
    return collect(ctx, Selection(only=("net",)), timeout_s=30.0, host=host)


def facts(host_index: int, **over: Any) -> dict[str, Any]:
    base = {
        "driver_version": "550.54.15",
        "cuda_runtime": "12.4",
        "torch_version": "2.5.1+cu124",
        "nccl_version": "2.21.5",
        "gpu_count": 8,
        "gpu_models": ["NVIDIA H100 80GB HBM3"] * 8,
        "rdma_rates": ["400 Gb/sec (4X NDR)"] * 8,
        "mtu": 4092,
        "interface": "ib0",
        "env": {
            "NCCL_DEBUG": "WARN",
            "NCCL_IB_HCA": "=mlx5_0,mlx5_1",
            "TORCH_NCCL_ASYNC_ERROR_HANDLING": "3",
        },
    }
    return base | over


def pairs(
    hosts: list[str],
    gbps: dict[tuple[int, int], float],
    shifts: tuple[int, ...] = (1, 2),
    normal: float = 11.8,
) -> dict[str, Any]:
    n = len(hosts)
    out = []
    for k in shifts:
        for src in range(n):
            dst = (src + k) % n
            out.append(
                {
                    "src": src,
                    "dst": dst,
                    "src_host": hosts[src],
                    "dst_host": hosts[dst],
                    "gbytes_per_s": gbps.get((src, dst), normal),
                }
            )
    return {"schedule": "neighbours", "shifts": list(shifts), "bytes": 4 << 20, "seconds": 2.5, "pairs": out}


def with_cluster(
    snap: Snapshot,
    node_facts: list[dict[str, Any]],
    bandwidth: Any = None,
    missing: Optional[list[dict[str, Any]]] = None,
) -> Snapshot:
    hosts = [f"gpu-node-{i:02d}" for i in range(len(node_facts))]
    nodes = [
        {"rank": i, "host": h, "address": f"10.0.3.{17 + i}", "facts": f}
        for i, (h, f) in enumerate(zip(hosts, node_facts))
    ]
    bw = bandwidth if bandwidth is not None else pairs(hosts, {})
    result = ProbeResult(
        "multinode",
        "net",
        Status.PASSED,
        "",
        3.2,
        (
            Measurement("cluster.nodes", nodes, source="c10d store"),
            Measurement("cluster.missing", missing or [], source="c10d store"),
            Measurement("cluster.bandwidth", bw, unit="GB/s", source="gloo send/recv"),
        ),
    )
    return dataclasses.replace(snap, host=hosts[0], probes=(*snap.probes, result))


HOSTS4 = [f"gpu-node-{i:02d}" for i in range(4)]


def code_fixtures() -> dict[str, tuple[Snapshot, Snapshot]]:
    good_tree = tree_snapshot("two_numa_good")
    four = [facts(i) for i in range(4)]
    return {
        "NET101": (
            tree_snapshot("two_numa_good", {"NCCL_IB_HCA": "mlx5_0,mlx5_4"}),
            tree_snapshot("two_numa_good", {"NCCL_IB_HCA": "mlx5_0,mlx5_1"}),
        ),
        "NET102": (
            tree_snapshot("two_numa_bad", {"NCCL_IB_HCA": "=mlx5_1:1"}),
            tree_snapshot("two_numa_good", {"NCCL_IB_HCA": "=mlx5_1:1"}),
        ),
        "NET103": (tree_snapshot("two_numa_bad"), good_tree),
        "NET104": (tree_snapshot("two_numa_bad"), good_tree),
        "NET105": (tree_snapshot("two_numa_bad"), good_tree),
        "NET106": (tree_snapshot("two_numa_bad"), good_tree),
        "NET107": (tree_snapshot("no_ib", {"NCCL_IB_HCA": "mlx5"}), tree_snapshot("no_ib")),
        "NET108": (tree_snapshot("two_numa_bad"), good_tree),
        "NET110": (with_cluster(good_tree, [*four[:3], facts(3, mtu=2044)]), with_cluster(good_tree, four)),
        "NET111": (
            with_cluster(good_tree, [*four[:2], facts(2, torch_version="2.4.0+cu121"), four[3]]),
            with_cluster(good_tree, four),
        ),
        "NET112": (
            with_cluster(
                good_tree, [facts(0, gpu_count=7, gpu_models=["NVIDIA H100 80GB HBM3"] * 7), *four[1:]]
            ),
            with_cluster(good_tree, four),
        ),
        "NET113": (
            with_cluster(good_tree, [*four[:3], facts(3, env={**four[3]["env"], "NCCL_ALGO": "Tree"})]),
            with_cluster(good_tree, four),
        ),
        "NET114": (
            with_cluster(good_tree, four[:3], missing=[{"rank": 3, "waited_s": 66.0}]),
            with_cluster(good_tree, four),
        ),
        "NET115": (
            with_cluster(
                good_tree, four, pairs(HOSTS4, {(1, 2): 1.1, (0, 1): 1.2, (1, 3): 1.1, (3, 1): 1.0})
            ),
            with_cluster(good_tree, four),
        ),
        "NET116": (
            with_cluster(good_tree, four, pairs(HOSTS4, {(2, 3): 2.9})),
            with_cluster(good_tree, four),
        ),
    }


def main() -> None:
    for code, (bad, good) in code_fixtures().items():
        d = CODES / code
        d.mkdir(parents=True, exist_ok=True)
        (d / "bad.json").write_text(bad.dumps() + "\n")
        (d / "good.json").write_text(good.dumps() + "\n")
    print(f"wrote {len(code_fixtures())} fixture pairs under {CODES}", file=sys.stderr)


if __name__ == "__main__":
    main()
