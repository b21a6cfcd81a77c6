"""`pgdoctor hang` on real torchrun jobs (torch CPU, gloo), each with its ground truth: which rank
is elsewhere and in which frame. Every job is killed with its descendants when its test ends."""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
import sysconfig
import uuid
from pathlib import Path

import pytest

from tests.helpers.hang_lab import torchrun_job
from tests.helpers.paths import HELPERS


def line_of(text: str) -> int:
    """The line of tests/helpers/hang_job.py holding `text` (the frame a rank stays in)."""
    lines = (HELPERS / "hang_job.py").read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)


pytestmark = pytest.mark.slow
SYSTEM_PYTHON = f"/usr/bin/python{sys.version_info[0]}.{sys.version_info[1]}"


def hang_cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 60, user: str | None = None
) -> tuple[int, dict, str]:
    argv = [sys.executable, "-m", "pgdoctor", "hang", "--json", "--interval", "0.2", *args]
    if user:
        # The other user cannot reach this interpreter (it may live under root's home): the system
        # Python of the same version runs pgdoctor from this environment's site-packages.
        site = sysconfig.get_paths()["purelib"]
        argv = [
            "runuser",
            "-u",
            user,
            "--",
            "env",
            f"PATH={Path(sys.executable).parent}:/usr/bin:/bin",
            SYSTEM_PYTHON,
            "-c",
            f"import site, sys; site.addsitedir({site!r}); from pgdoctor.cli import main; main(sys.argv[1:])",
            *argv[3:],
        ]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, cwd="/")
    return p.returncode, json.loads(p.stdout) if p.stdout.strip() else {}, p.stderr


def job_of(report: dict, pids: set[int]) -> dict:
    """The job of the report whose ranks are these pids (other jobs may run on the node)."""
    for job in report["hang"]["jobs"]:
        if {r["pid"] for r in job["ranks"]} & pids:
            return job
    raise AssertionError(f"no job with pids {pids}: {report['hang']}")


def culprit(report: dict) -> dict:
    fails = [f for f in report["findings"] if f["severity"] == "fail"]
    assert fails, report["findings"]
    return fails[0]


def test_sleeping_rank_named_via_launcher_pid_and_saved_for_diagnose(tmp_path, no_leftover_children) -> None:
    with torchrun_job("sleep", [2], env={"PGDOCTOR_TEST_LIVE": "1", "TORCH_FR_BUFFER_SIZE": "100"}) as job:
        pids = job.wait_ready(4)
        rc, report, err = hang_cli(str(job.pid), "--tiers", "proc,py-spy", "--save", str(tmp_path / "snap"))
        assert rc == 1, err
        f = culprit(report)
        assert f["code"] == "HNG101" and f["facts"]["ranks"] == [2]
        assert f["facts"]["frame"] == "hang_culprit.py:7"
        assert f["facts"]["waiting_ranks"] == [0, 1, 3]
        j = job_of(report, set(pids.values()))
        assert [r["rank"] for r in j["ranks"]] == [0, 1, 2, 3]
        by_rank = {r["rank"]: r for r in j["ranks"]}
        assert by_rank[2]["stack"][0] == {
            "file": str(HELPERS / "hang_culprit.py"),
            "line": 7,
            "function": "nap",
        }
        assert by_rank[0]["tiers"]["py-spy"] == "ok" and "socket" not in by_rank[0]["tiers"]
        assert not any(r["progressing"] for r in j["ranks"])
        # pystack, the fallback where py-spy cannot read the interpreter, gives the same verdict.
        rc3, report3, err3 = hang_cli(str(job.pid), "--tiers", "proc,pystack", "--samples", "2")
        assert rc3 == 1, err3
        assert (
            culprit(report3)["facts"]["ranks"] == [2]
            and culprit(report3)["facts"]["frame"] == "hang_culprit.py:7"
        )
        assert job_of(report3, set(pids.values()))["ranks"][0]["tiers"]["pystack"] == "ok"
        # The cooperative socket alone (no ptrace) gives the same verdict, with the ranks' recorders.
        rc2, report2, err2 = hang_cli(str(job.pid), "--tiers", "proc,socket")
        assert rc2 == 1, err2
        assert culprit(report2)["facts"]["ranks"] == [2]
        assert culprit(report2)["facts"]["frame"] == "hang_culprit.py:7"
        j2 = job_of(report2, set(pids.values()))
        r0 = j2["ranks"][0]
        assert r0["tiers"]["socket"] == "ok" and "py-spy" not in r0["tiers"]
        assert r0["tiers"]["flight_recorder"] == "ok (socket)"
        # The recorders say which collective: the waiting ranks' all_reduce is SeqNum 2 (the first
        # was everyone's start-up all_reduce), and diagnose's flight analysis agrees on rank 2.
        assert any(g["where"].startswith("wait in all_reduce (SeqNum 2) at") for g in j2["groups"])
        fr = next(f for f in report2["findings"] if f["code"] == "RUN281")
        assert fr["facts"]["missing_ranks"] == [2] or 2 in fr["facts"].get("ranks", [fr["scope"].get("rank")])
    # The saved snapshot, read after the job is gone, gives the same answer.
    d = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "diagnose", str(tmp_path / "snap"), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert d.returncode == 1, d.stderr
    saved = json.loads(d.stdout)
    assert saved["findings"][0]["code"] == "HNG101" and saved["findings"][0]["facts"]["ranks"] == [2]
    assert saved["hang"]["jobs"][0]["culprits"] == [2]


def test_lock_and_dataloader_culprits_among_8_ranks(no_leftover_children) -> None:
    with torchrun_job("mixed", [2, 5], nproc=8) as job:
        pids = job.wait_ready(8, timeout_s=90)
        rc, report, err = hang_cli()  # no PID: every job on the node
        assert rc == 1, err
        j = job_of(report, set(pids.values()))
        assert len(j["ranks"]) == 8  # the DataLoader worker is not a rank
        assert j["culprits"] == [2, 5]
        groups = {tuple(g["ranks"]): g for g in j["groups"]}
        assert (
            groups[(2,)]["frame"] == f"hang_job.py:{line_of('nobody releases it')}"
            and groups[(2,)]["collective"] == ""
        )
        assert groups[(0, 1, 3, 4, 6, 7)]["collective"] == "all_reduce"
        r5 = next(r for r in j["ranks"] if r["rank"] == 5)
        assert len(r5["workers"]) == 1
        assert any(
            fr["file"].endswith("hang_culprit.py") and fr["line"] == 20 for fr in r5["workers"][0]["stack"]
        ), r5
        f = next(f for f in report["findings"] if f["code"] == "HNG101" and f["facts"]["job"] == j["job"])
        assert f["facts"]["ranks"] == [2, 5]
        assert any(w["rank"] == 5 and w["frame"] == "hang_culprit.py:20" for w in f["facts"]["workers"])


def test_two_jobs_one_hung_in_another_collective_one_healthy(no_leftover_children) -> None:
    with torchrun_job("collective", [3]) as hung, torchrun_job("healthy", nproc=2) as healthy:
        hung_pids = set(hung.wait_ready(4, timeout_s=90).values())
        ok_pids = set(healthy.wait_ready(2, timeout_s=90).values())
        rc, report, err = hang_cli(str(hung.pid), str(healthy.pid), "--samples", "4")
        assert rc == 1, err
        jh, jo = job_of(report, hung_pids), job_of(report, ok_pids)
        assert jh["job"] != jo["job"]
        assert jh["culprits"] == [3]
        assert {g["collective"] for g in jh["groups"]} == {"all_reduce", "barrier"}
        assert jo["culprits"] == [] and jo["progressing_ranks"]  # any rank moving: progress
        assert [f["code"] for f in report["findings"] if f["facts"].get("job") == jo["job"]] == ["HNG104"]
        # The healthy job alone: exit 0, no fail finding.
        rc, report, err = hang_cli(str(healthy.pid), "--samples", "4")
        assert rc == 0, err
        assert not [f for f in report["findings"] if f["severity"] == "fail"]


def test_not_a_rank_is_a_usage_error() -> None:
    with subprocess.Popen(["sleep", "30"]) as p:
        try:
            rc, report, err = hang_cli(str(p.pid))
        finally:
            p.kill()
    assert rc == 2 and report == {}
    assert err.strip().startswith("pgdoctor: error: PID") and len(err.strip().splitlines()) == 1


@pytest.mark.skipif(os.geteuid() != 0, reason="creating a throwaway user needs root")
@pytest.mark.skipif(not os.path.exists(SYSTEM_PYTHON), reason=f"no {SYSTEM_PYTHON} for the other user")
def test_unprivileged_user_against_a_root_job(no_leftover_children) -> None:
    name = f"pgdh{uuid.uuid4().hex[:8]}"
    subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True)
    try:
        uid = pwd.getpwnam(name).pw_uid
        with torchrun_job("sleep", [1], nproc=2) as job:
            job.wait_ready(2)
            rc, report, err = hang_cli(str(job.pid), user=name)
            assert rc in (1, 3), err
            ranks = report["hang"]["jobs"][0]["ranks"]
            assert [r["rank"] for r in ranks] == [0, 1] and all(r["rank_source"] == "cmdline" for r in ranks)
            for r in ranks:
                assert (
                    r["problems"][0]["cause"]
                    == f"ptrace denied: the rank runs as uid 0, pgdoctor as uid {uid}"
                )
                assert "sudo" in r["problems"][0]["fix"]
            assert {f["code"] for f in report["findings"]} == {"HNG103"}
    finally:
        subprocess.run(["userdel", name], check=False)


def test_two_nodes_on_loopback_merge_into_one_verdict(tmp_path, no_leftover_children) -> None:
    from tests.helpers.hang_lab import quiet_port

    endpoint = f"127.0.0.1:{quiet_port()}"
    with (
        torchrun_job("sleep", [3], nproc=2, node=(0, 2, endpoint)) as n0,
        torchrun_job("sleep", [3], nproc=2, node=(1, 2, endpoint)) as n1,
    ):
        ready0, ready1 = n0.wait_ready(2, timeout_s=90), n1.wait_ready(2, timeout_s=90)
        for node, job in (("node0", n0), ("node1", n1)):
            rc, _, err = hang_cli(str(job.pid), "--save", str(tmp_path / node))
            assert rc == 1, (
                err
            )  # each node alone: its ranks wait for ranks it cannot see, or it holds the culprit
        culprit_node = "node0" if 3 in ready0 else "node1"
        other = "node1" if culprit_node == "node0" else "node0"
        assert 3 in (ready0 if culprit_node == "node0" else ready1)
    alone = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "diagnose", str(tmp_path / other), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    first = json.loads(alone.stdout)["findings"][0]
    assert first["code"] == "HNG102" and 3 in first["facts"]["missing_ranks"]
    merged = subprocess.run(
        [
            sys.executable,
            "-m",
            "pgdoctor",
            "diagnose",
            str(tmp_path / "node0"),
            str(tmp_path / "node1"),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert merged.returncode == 1, merged.stderr
    out = json.loads(merged.stdout)
    assert out["findings"][0]["code"] == "HNG101" and out["findings"][0]["facts"]["ranks"] == [3]
    assert out["findings"][0]["facts"]["frame"] == "hang_culprit.py:7"
    (job,) = out["hang"]["jobs"]
    assert job["job"] == "hangtest" and [r["rank"] for r in job["ranks"]] == [0, 1, 2, 3]


def test_torchs_own_worker_server_is_a_tier_without_ptrace(tmp_path, no_leftover_children) -> None:
    """Every rank serves torch's worker server (worker_main() with TORCH_WORKER_SERVER_SOCKET, made
    per rank): `hang --tiers proc,torch` names the culprit from its tracebacks, and its flight
    recorder puts the SeqNum the others wait in into the roll-call."""
    env = {"TORCH_WORKER_SERVER_SOCKET": str(tmp_path / "ws"), "TORCH_FR_BUFFER_SIZE": "100"}
    with torchrun_job("sleep", [2], env=env) as job:
        pids = job.wait_ready(4)
        rc, report, err = hang_cli(str(job.pid), "--tiers", "proc,torch", "--save", str(tmp_path / "snap"))
        assert rc == 1, err
        f = culprit(report)
        assert f["code"] == "HNG101" and f["facts"]["ranks"] == [2], f
        assert f["facts"]["frame"] == "hang_culprit.py:7"
        assert "wait in all_reduce (SeqNum 2)" in f["message"], f["message"]
        ranks = job_of(report, set(pids.values()))["ranks"]
        assert all(r["tiers"]["torch"] == "ok" for r in ranks), [r["tiers"] for r in ranks]
        assert all(r["tiers"]["flight_recorder"] == "ok (torch worker server)" for r in ranks)
        assert sorted(p.name for p in (tmp_path / "snap").glob("fr-rank*.json")) == [
            f"fr-rank{r}.json" for r in range(4)
        ]
