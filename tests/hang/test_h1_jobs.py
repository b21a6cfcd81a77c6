"""h1: `pgdoctor hang` on real hung gloo jobs the other tests do not hold (torch 2.13 CPU): a p2p
ring whose ranks all send first, ranks started by mp.spawn (no RANK in /proc), and ranks in a PID
namespace of their own answering on pgdoctor's socket. Every job is killed with its descendants
when its test ends, however it ends."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence

import pytest

from tests.helpers.hang_lab import Job, quiet_port, started_job
from tests.helpers.paths import HELPERS

pytestmark = pytest.mark.slow
JOB = "tests.helpers.hang_h1_job"


def line_of(text: str) -> int:
    lines = (HELPERS / "hang_h1_job.py").read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)


@contextlib.contextmanager
def job(argv: Sequence[str], env: dict[str, str] | None = None) -> Iterator[Job]:
    try:
        with started_job(argv, 60.0, env) as running:
            yield running
    finally:
        time.sleep(0.2)  # the killed ranks' zombies reaped by init


def torchrun(*args: str) -> list[str]:
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "4",
            "--monitor-interval", "0.2", "-m", JOB, *args]  # fmt: skip


def hang(*args: str) -> tuple[int, dict]:
    p = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "hang", "--json", "--interval", "0.2", *args],
        capture_output=True,
        text=True,
        timeout=90,
        cwd="/",
    )
    return p.returncode, json.loads(p.stdout) if p.stdout.strip() else {}


def test_a_ring_whose_ranks_all_send_first_is_a_p2p_deadlock(no_leftover_children) -> None:
    with job(torchrun("ring")) as j:
        j.wait_ready(4, settle_s=1.5)
        rc, report = hang(str(j.pid))
    fail = next(f for f in report["findings"] if f["severity"] == "fail")
    assert rc == 1 and fail["code"] == "HNG102", report["findings"]
    assert fail["facts"]["missing_ranks"] == []
    assert fail["facts"]["frame"] == f"hang_h1_job.py:{line_of('every rank is here')}"
    assert "p2p deadlock" in fail["message"] and "not seen" not in fail["message"]


def test_mp_spawn_ranks_are_found_through_the_named_launcher(no_leftover_children) -> None:
    argv = [sys.executable, "-m", JOB, "spawn", "4", str(quiet_port()), "queue", "2"]
    with job(argv) as j:
        pids = j.wait_ready(4)
        rc, report = hang(str(j.pid))
    assert rc == 1, report
    (found,) = report["hang"]["jobs"]
    assert {r["rank"]: r["pid"] for r in found["ranks"]} == pids  # start order is the rank
    assert found["culprits"] == [2]
    fail = next(f for f in report["findings"] if f["severity"] == "fail")
    assert fail["code"] == "HNG101" and fail["facts"]["frame"] == f"hang_h1_job.py:{line_of('nobody puts')}"


def _unshare_works() -> bool:
    exe = shutil.which("unshare")
    if exe is None:
        return False
    p = subprocess.run([exe, "--pid", "--fork", "--mount-proc", "true"], capture_output=True, check=False)
    return p.returncode == 0


@pytest.mark.skipif(not _unshare_works(), reason="needs unshare --pid (root or user namespaces)")
def test_socket_of_a_rank_in_its_own_pid_namespace_is_found(no_leftover_children) -> None:
    """A rank in a container names its socket by the PID it sees (2, 3, ...), not the node's."""
    prefix = ["unshare", "--pid", "--fork", "--mount-proc"]
    with job([*prefix, *torchrun("queue", "1")], env={"PGDOCTOR_TEST_LIVE": "1"}) as j:
        j.wait_ready(4)
        rc, report = hang(str(j.pid), "--tiers", "proc,socket")
    assert rc == 1, report
    (found,) = report["hang"]["jobs"]
    assert found["culprits"] == [1]
    assert all(r["tiers"].get("socket") == "ok" for r in found["ranks"]), found["ranks"]


def test_a_subgroup_collective_names_its_missing_member_not_the_ranks_outside(no_leftover_children) -> None:
    """Ranks 0-1 wait in an all_reduce of the group {0, 1, 2}; ranks 2 and 3 sit in the same line
    elsewhere. Rank 3 is not in the group: the socket's group table and the recorder say so."""
    env = {"PGDOCTOR_TEST_LIVE": "1", "TORCH_FR_BUFFER_SIZE": "100"}
    with job(torchrun("subgroup", "2"), env=env) as j:
        j.wait_ready(4)
        rc, report = hang(str(j.pid), "--tiers", "proc,socket")
    assert rc == 1, report
    (found,) = report["hang"]["jobs"]
    assert found["culprits"] == [2]
    fail = next(f for f in report["findings"] if f["code"] == "HNG101")
    assert fail["facts"]["not_waited_for"] == [3] and fail["facts"]["ranks"] == [2]
    waiting = {r["rank"]: r for r in found["ranks"]}
    assert fail["facts"]["frame"] == f"hang_h1_job.py:{line_of('nobody puts')}"
    assert set(waiting) == {0, 1, 2, 3}


def test_a_live_rank_whose_socket_cannot_answer_is_not_called_dead(tmp_path, no_leftover_children) -> None:
    """Rank 1 holds the GIL in C: its socket gives no recorder. The others' recorders must not
    make it "a rank that died before dumping" (RUN290), live or in `diagnose` of the saved files."""
    env = {"PGDOCTOR_TEST_LIVE": "1", "TORCH_FR_BUFFER_SIZE": "100"}
    with job(torchrun("regex", "1"), env=env) as j:
        j.wait_ready(4)
        _rc, report = hang(str(j.pid), "--save", str(tmp_path / "ev"))
    assert {r["rank"] for r in report["hang"]["jobs"][0]["ranks"]} == {0, 1, 2, 3}
    assert not [f for f in report["findings"] if f["facts"].get("no_dump_ranks")], report["findings"]
    assert sorted(p.name for p in (tmp_path / "ev").glob("fr-rank*.json")) == [
        "fr-rank0.json",
        "fr-rank2.json",
        "fr-rank3.json",
    ]
    p = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "diagnose", "--json", str(tmp_path / "ev")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    again = json.loads(p.stdout)
    assert not [f for f in again["findings"] if f["facts"].get("no_dump_ranks")], again["findings"]
