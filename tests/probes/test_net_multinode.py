"""`pgdoctor check --only net` under plain RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT: real processes
on 127.0.0.1 (the namespace tests cover separate hosts)."""

from __future__ import annotations

import json
import os
import sys
import threading
import time

import pytest
from click.testing import CliRunner

from pgdoctor.cli import cli
from pgdoctor.probes.multinode import schedule
from pgdoctor.probes.processes import free_port, run_children

BASE = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "PYTHONPATH") if k in os.environ}


def launch(
    ranks: list[int],
    world: int,
    args: list[str],
    timeout_s: float,
    port: int,
    extra: dict[int, dict[str, str]] | None = None,
) -> list:
    argv = [sys.executable, "-m", "pgdoctor", "check", "--only", "net", *args]
    envs = [
        {
            **BASE,
            "RANK": str(r),
            "WORLD_SIZE": str(world),
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(port),
            **(extra or {}).get(r, {}),
        }
        for r in ranks
    ]
    return run_children([argv] * len(ranks), envs, timeout_s)


def test_schedule() -> None:
    assert schedule(1, False) == [] and schedule(2, False) == [1] and schedule(3, False) == [1, 2]
    assert schedule(8, False) == [1, 2]
    assert schedule(4, True) == [1, 2, 3]


@pytest.mark.slow
def test_four_ranks_all_pairs_merged_on_rank_zero(no_leftover_children: None) -> None:
    port = free_port()
    outs = launch(
        [0, 1, 2, 3],
        4,
        ["--json", "--all-pairs", "--timeout", "60"],
        90,
        port,
        extra={2: {"NCCL_ALGO": "Tree", "PGDOCTOR_TEST_TORCH_VERSION": "1.99.0+fake"}},
    )
    assert not any(o.timed_out for o in outs), [o.stderr[-500:] for o in outs]
    report = json.loads(outs[0].stdout)  # exactly one JSON object on rank 0's stdout
    assert all(o.stdout == "" for o in outs[1:])
    assert len({o.returncode for o in outs}) == 1
    assert all("report is printed by rank 0" in o.stderr for o in outs[1:])
    assert report["meta"]["multinode"]["arrived"] == [0, 1, 2, 3]
    bw = next(m["value"] for m in report["measurements"] if m["key"] == "cluster.bandwidth")
    assert bw["schedule"] == "all-pairs" and len(bw["pairs"]) == 12
    assert {(p["src"], p["dst"]) for p in bw["pairs"]} == {
        (a, b) for a in range(4) for b in range(4) if a != b
    }
    assert all(p["gbytes_per_s"] > 0 for p in bw["pairs"])
    by_code = {f["code"]: f for f in report["findings"]}
    assert by_code["NET111"]["scope"]["rank"] == 2 and "1.99.0+fake" in by_code["NET111"]["message"]
    assert by_code["NET113"]["scope"]["rank"] == 2 and "NCCL_ALGO=Tree" in by_code["NET113"]["message"]
    assert all(f["scope"].get("host") for f in report["findings"])
    assert [n["rank"] for n in report["nodes"]] == [1, 2, 3]


def _listeners(port: int) -> list[str]:
    """Local addresses listening on `port`, from /proc/net/tcp (state 0A = LISTEN)."""
    out = []
    with open("/proc/net/tcp") as fh:
        for line in fh.readlines()[1:]:
            cols = line.split()
            addr, p = cols[1].split(":")
            if int(p, 16) == port and cols[3] == "0A":
                out.append(".".join(str(int(addr[i : i + 2], 16)) for i in (6, 4, 2, 0)))
    return out


@pytest.mark.slow
def test_missing_rank_is_reported_within_timeout_and_rank0_binds_master_addr(
    no_leftover_children: None,
) -> None:
    port = free_port()
    seen: list[str] = []

    def watch() -> None:
        end = time.monotonic() + 20
        while time.monotonic() < end and not seen:
            seen.extend(_listeners(port))
            time.sleep(0.05)

    t = threading.Thread(target=watch)
    t.start()
    start = time.monotonic()
    (out,) = launch([0], 2, ["--json", "--timeout", "8"], 30, port)
    elapsed = time.monotonic() - start
    t.join()
    assert not out.timed_out and elapsed < 20
    assert seen and set(seen) == {"127.0.0.1"}  # never the wildcard 0.0.0.0
    report = json.loads(out.stdout)
    missing = [f for f in report["findings"] if f["code"] == "NET114"]
    assert len(missing) == 1 and missing[0]["scope"]["rank"] == 1
    assert out.returncode == 1


@pytest.mark.slow
def test_rank_without_rank0_gives_up_within_timeout(no_leftover_children: None) -> None:
    port = free_port()
    start = time.monotonic()
    (out,) = launch([1], 2, ["--timeout", "4"], 30, port)
    assert time.monotonic() - start < 15
    assert out.returncode == 3 and out.stdout == ""
    assert "rank 0 never answered" in out.stderr


def test_incomplete_launch_env_is_a_usage_error() -> None:
    res = CliRunner().invoke(
        cli,
        ["check", "--only", "net"],
        env={"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": None, "MASTER_PORT": None},
    )
    assert res.exit_code == 2
    assert "needs MASTER_ADDR, MASTER_PORT" in res.output
    assert "Traceback" not in res.output


def test_pairs_from_rank_posts_keep_upper_bounds_and_gaps() -> None:
    from pgdoctor.engine.multinode import _bandwidth_summary, _pairs

    nodes = [{"rank": r, "host": f"h{r}"} for r in range(3)]
    bw = {
        "schedule": "neighbours",
        "shifts": [1],
        "bytes": 1 << 20,
        "ranks": {
            0: {
                "got": [None, None, 0.5],
                "upper_bound": [],
                "round_bytes": [1 << 20],
                "error": None,
                "seconds": 1.0,
            },
            1: {
                "got": [0.001, None, None],
                "upper_bound": [0],
                "round_bytes": [1 << 20],
                "error": "Timed out",
                "seconds": 2.0,
            },
        },
    }
    pairs = _pairs(bw, nodes)
    assert pairs == [
        {"src": 0, "dst": 1, "src_host": "h0", "dst_host": "h1", "gbytes_per_s": 0.001, "upper_bound": True},
        {"src": 2, "dst": 0, "src_host": "h2", "dst_host": "h0", "gbytes_per_s": 0.5},
    ]  # rank 2 posted nothing: the pair 1 -> 2 is missing, not zero
    summary = _bandwidth_summary(bw, pairs, 3)
    assert summary["silent_ranks"] == [2] and summary["errors"] == {"1": "Timed out"}
    assert summary["expected_pairs"] == 3 and summary["seconds"] == 2.0


def test_distributed_only_with_several_ranks_and_net_requested() -> None:
    from pgdoctor.checks import load_all
    from pgdoctor.engine.multinode import wanted
    from pgdoctor.engine.runner import Selection

    load_all()
    many = {"RANK": "0", "WORLD_SIZE": "4"}
    assert wanted(many, Selection(only=("net",)))
    assert wanted(many, Selection(only=("NET115",)))
    assert wanted({"SLURM_PROCID": "1", "SLURM_NTASKS": "2"}, Selection(only=("net", "gpu")))
    assert not wanted(many, Selection())  # a plain check under a launcher stays per node
    assert not wanted(many, Selection(only=("gpu",)))
    assert not wanted({"RANK": "0", "WORLD_SIZE": "1"}, Selection(only=("net",)))
    assert not wanted({}, Selection(only=("net",)))


def test_suspects_are_the_pairs_well_below_the_median() -> None:
    from pgdoctor.probes.multinode import suspects

    nan = float("nan")
    got = [[nan, 1.0, 1.0], [1.0, nan, 0.1], [0.6, 1.0, nan]]  # got[dst][src]
    assert suspects(got, 0.5, limit=10) == [(2, 1)]  # 2 -> 1 at 0.1 against a median of 1.0
    assert suspects(got, 0.75, limit=10) == [(2, 1), (0, 2)]
    assert suspects(got, 0.75, limit=1) == [(2, 1)]
    assert suspects([[nan, 0.1], [1.0, nan]], 0.5, limit=4) == []  # too few pairs to judge


def test_rendezvous_wait_is_a_deadline_the_torch_import_does_not_extend() -> None:
    """Rank 1's wait for rank 0 is bounded by a point in time: a duration taken before torch was
    imported (seconds on a loaded host) used to be spent again after the import, so `check
    --timeout 10` with rank 0 absent ran 9.7 s. A deadline already past leaves the floor, 0.5 s."""
    from pgdoctor.knowledge.launchenv import parse_launch
    from pgdoctor.probes.multinode import Rendezvous

    env = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()), "WORLD_SIZE": "2", "RANK": "1"}
    with pytest.raises(ConnectionError, match=r"within 0\.5 s"):
        Rendezvous(parse_launch(env), env, time.monotonic() - 100.0)


def test_local_phase_is_bounded_on_the_budget_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each node's own probes end by 50% of --timeout counted from the process start (at least
    1 s), not 40% counted from when they begin: after a slow torch import the fixed share ran
    past the arrival deadline."""
    from pgdoctor.engine import multinode as engine

    seen: list[float] = []

    class Stop(Exception):
        pass

    def local_phase(ctx: object, selection: object, timeout_s: float, host: str) -> None:
        seen.append(timeout_s)
        raise Stop

    monkeypatch.setattr(engine, "_local_phase", local_phase)
    for started_ago, most in ((0.0, 4.0), (3.0, 2.0), (7.0, 1.0)):
        budget = engine.Budget(time.monotonic() - started_ago, 10.0)
        with pytest.raises(Stop):
            engine._run(None, None, None, None, "h", 1, 2, budget, 0, 0, 0, False, None, False, {})  # type: ignore[arg-type]
        assert most - 0.2 <= seen[-1] <= most, (started_ago, seen)
