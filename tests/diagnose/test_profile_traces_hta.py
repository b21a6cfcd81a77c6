"""pgdoctor's per-rank figures against Holistic Trace Analysis's on the public GPU trace sets.

HTA's figures were computed with HTA 0.5.0 and recorded (tests/fixtures/traces/
hta_0.5.0_figures.json, `python benchmarks/bench_traces.py --record`); the traces are read in
place from ../shared/traces. Temporal breakdown within 3 points, overlap within 5.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pgdoctor.diagnose.profile.analyze import analyze_traces
from tests.helpers.paths import FIXTURES

SHARED = Path(__file__).resolve().parents[3] / "shared" / "traces"
RECORDED = json.loads((FIXTURES / "traces" / "hta_0.5.0_figures.json").read_text())
SETS = sorted(RECORDED["sets"])

# One worker: `ours` analyses every shared set (3.5 s), once per worker that draws one of these tests.
pytestmark = [
    pytest.mark.skipif(not SHARED.is_dir(), reason=f"the public trace sets are not at {SHARED}"),
    pytest.mark.xdist_group("hta_sets"),
]


@pytest.fixture(scope="module")
def ours() -> dict[str, dict]:  # type: ignore[type-arg]
    out = {}
    for name in SETS:
        d = SHARED / name
        if d.is_dir():
            out[name] = analyze_traces(sorted(str(p) for p in d.iterdir() if p.is_file()))[0]
    return out


def test_recorded_figures_are_hta_0_5_0_on_every_shared_gpu_set() -> None:
    assert RECORDED["hta_version"] == "0.5.0"
    on_disk = {p.name for p in SHARED.glob("gpu_*") if p.is_dir()}
    assert on_disk <= set(SETS), f"sets without recorded HTA figures: {on_disk - set(SETS)}"


@pytest.mark.parametrize("name", SETS)
def test_breakdown_within_3_points_and_overlap_within_5(name: str, ours: dict) -> None:  # type: ignore[type-arg]
    if name not in ours:
        pytest.skip(f"{name} is not in {SHARED}")
    theirs = RECORDED["sets"][name]["ranks"]
    mine = ours[name]["ranks"]
    assert set(mine) == set(theirs), "ranks keyed by distributedInfo.rank, as HTA keys them"
    for rank, h in theirs.items():
        m = mine[rank]
        for key in ("compute_pct", "non_compute_pct", "idle_pct"):
            assert abs(m[key] - h[key]) <= 3.0, (rank, key, m[key], h[key])
        if h.get("comm_comp_overlap_pct") is None:
            assert m["comm_comp_overlap_pct"] is None  # no NCCL kernel on this rank
        else:
            assert abs(m["comm_comp_overlap_pct"] - h["comm_comp_overlap_pct"]) <= 5.0, rank


def test_dlrm_straggler_is_the_rank_that_waits_least_not_the_one_that_computes_most(ours: dict) -> None:  # type: ignore[type-arg]
    if "gpu_dlrm_8rank" not in ours:
        pytest.skip("gpu_dlrm_8rank is not in ../shared/traces")
    s = ours["gpu_dlrm_8rank"]["straggler"]
    assert s["rank"] == 7 and s["cause"] == "host"
    assert s["most_compute_rank"] != 7
    assert RECORDED["sets"]["gpu_dlrm_8rank"]["stragglers"] == [7]  # HTA's late-start candidate agrees
