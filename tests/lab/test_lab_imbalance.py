"""The imbalance analysis over recorded traces (fixtures from real lab runs) and over
hand-made events whose answer is known."""

from __future__ import annotations

import json

import pytest

from pgdoctor.lab.diagnosis import IMBALANCE_CODES, imbalance_finding
from pgdoctor.lab.imbalance import analyse, ideal_bubble
from pgdoctor.trace.events import COMM_TID, trace_events
from tests.helpers.paths import FIXTURES


def _by_rank(path) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for e in trace_events(json.loads(path.read_text())):
        out.setdefault(int(e["pid"]), []).append(e)
    return out


@pytest.mark.parametrize("strategy", ["ddp", "pp", "tp"])
def test_code_fires_on_bad_trace_and_not_on_good(strategy: str) -> None:
    code = IMBALANCE_CODES[strategy]
    d = FIXTURES / "codes" / code
    bad = analyse(strategy, _by_rank(d / "bad.trace.json"), microbatches=4)
    good = analyse(strategy, _by_rank(d / "good.trace.json"), microbatches=4)
    assert bad is not None and good is not None
    f = imbalance_finding(strategy, bad)
    assert f is not None and f.code == code and f.category == "imbalance"
    assert f.scope.rank == 1 and f.facts["rank"] == 1  # the lab slowed rank 1 down
    assert f.facts["ratio"] > 1.5
    assert imbalance_finding(strategy, good) is None
    if strategy == "pp":
        assert f.facts["stage"] == 1
        assert f.facts["ideal_bubble"] == pytest.approx(1 / 5)
        assert f.facts["bubble"] > f.facts["ideal_bubble"]
    if strategy == "tp":
        assert f.facts["shard"] == 1


def _ev(name: str, ts: float, dur: float, rank: int, tdur: float | None = None, **args) -> dict:
    e = {"name": name, "ph": "X", "ts": ts, "dur": dur, "pid": rank, "tid": 1, "args": args}
    if tdur is not None:
        e["tdur"] = tdur
    return e


def _ddp_rank(rank: int, compute: float, wait: float, steps: int = 5) -> list[dict]:
    evs, t = [], 0.0
    for n in range(steps):
        step = compute + wait
        evs.append(_ev("step", t, step, rank, n=n))
        evs.append(_ev("fwd", t, compute / 2, rank))
        evs.append(_ev("bwd", t + compute / 2, compute / 2 + wait, rank))
        evs.append(_ev("comm.all_reduce", t + compute, wait, rank, bucket=0, bytes=4))
        evs.append(_ev("comm.all_reduce", t, 5 * step, rank))  # async comm track: not waiting
        evs[-1]["tid"] = COMM_TID
        t += step + 10
    return evs


def test_known_answer_on_wall_clock() -> None:
    by_rank = {0: _ddp_rank(0, 1000, 1000), 1: _ddp_rank(1, 2000, 0), 2: _ddp_rank(2, 1000, 1000)}
    imb = analyse("ddp", by_rank)
    assert imb is not None
    assert imb.slowest == 1
    assert imb.slowest_compute_ms == pytest.approx(2.0)
    assert imb.median_compute_ms == pytest.approx(1.0)
    assert imb.ratio == pytest.approx(2.0)
    assert imb.others_wait_share == pytest.approx(0.5)


def test_thread_cpu_clock_wins_over_a_descheduled_wall_clock() -> None:
    # Rank 0 was descheduled (wall 3 ms) but used 1 ms of CPU, like rank 1: no imbalance.
    by_rank = {
        0: [_ev("step", 0, 3000, 0, tdur=1000, n=0), _ev("step", 5000, 3000, 0, tdur=1000, n=1)],
        1: [_ev("step", 0, 3000, 1, tdur=1000, n=0), _ev("step", 5000, 3000, 1, tdur=1000, n=1)],
    }
    by_rank[0][1]["dur"] = 9000
    imb = analyse("ddp", by_rank, warmup=0)
    assert imb is not None and imb.ratio == pytest.approx(1.0)


def test_ideal_bubble() -> None:
    assert ideal_bubble(4, 4) == pytest.approx(3 / 7)
    assert ideal_bubble(2, 8) == pytest.approx(1 / 9)


def test_too_few_ranks_or_steps_gives_no_answer() -> None:
    assert analyse("ddp", {0: _ddp_rank(0, 1, 1)}) is None
    assert analyse("ddp", {0: _ddp_rank(0, 1, 1, steps=2), 1: _ddp_rank(1, 1, 1, steps=2)}) is None


def _pp_rank(rank: int, compute: float, wait: float, steps: int = 5) -> list[dict]:
    """A stage's steps: pp.fwd and pp.bwd whose self time is the compute, waiting nested inside."""
    evs, t = [], 0.0
    for n in range(steps):
        step = compute + wait
        evs.append(_ev("step", t, step, rank, n=n))
        evs.append(_ev("pp.fwd", t, compute / 2 + wait, rank, stage=rank, mb=0))
        evs.append(_ev("pp.recv", t, wait, rank, peer=rank - 1, mb=0))
        evs.append(_ev("pp.bwd", t + compute / 2 + wait, compute / 2, rank, stage=rank, mb=0))
        t += step + 10
    return evs


def _tp_rank(rank: int, compute: float, wait: float, steps: int = 5) -> list[dict]:
    evs, t = [], 0.0
    for n in range(steps):
        step = compute + wait
        evs.append(_ev("step", t, step, rank, n=n))
        evs.append(_ev("fwd", t, step, rank))
        evs.append(_ev("tp.all_reduce", t + compute, wait, rank, layer=0))
        t += step + 10
    return evs


BUILD = {"ddp": _ddp_rank, "pp": _pp_rank, "tp": _tp_rank}


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("strategy", ["ddp", "pp", "tp"])
def test_imbalance_figures_add_up(strategy: str, n: int) -> None:
    """The finding gives the slow rank's time, the median of the OTHER ranks (the slow one left
    out), their ratio, and every rank's compute and wait: a reader can redo the arithmetic."""
    compute = {r: 1000.0 + 150 * r for r in range(n - 1)} | {n - 1: 4200.0}  # us; the last rank is slow
    wait = {r: 4200.0 + 500 - compute[r] for r in range(n)}  # the others wait for the slow one
    imb = analyse(strategy, {r: BUILD[strategy](r, compute[r], wait[r]) for r in range(n)}, microbatches=4)
    assert imb is not None
    f = imbalance_finding(strategy, imb)
    assert f is not None and f.scope.rank == n - 1
    others = sorted(compute[r] / 1000 for r in range(n - 1))
    med = (
        others[len(others) // 2]
        if len(others) % 2
        else (others[len(others) // 2 - 1] + others[len(others) // 2]) / 2
    )
    assert f.facts["compute_ms"] == pytest.approx(4.2)
    assert f.facts["others_median_compute_ms"] == pytest.approx(med)
    assert f.facts["others_ranks"] == list(range(n - 1))
    assert f.facts["ratio"] == pytest.approx(4.2 / med, abs=1e-3)
    for r in range(n):
        assert f.facts["per_rank"][str(r)]["compute_ms"] == pytest.approx(compute[r] / 1000)
        assert f.facts["per_rank"][str(r)]["wait_ms"] == pytest.approx(wait[r] / 1000)
    assert f"computes 4.2 ms per step; the median of the other {n - 1}" in f.message
    assert f"is {med:.1f} ms; 4.2 / {med:.1f} = {4.2 / med:.2f}x" in f.message
    assert len(f.evidence) == n and all(
        f"rank {r}: compute {compute[r] / 1000:.1f} ms, waiting in communication "
        f"{wait[r] / 1000:.1f} ms" in f.evidence[r].text
        for r in range(n)
    )
