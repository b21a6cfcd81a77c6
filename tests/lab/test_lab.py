"""All nine FAULT x STRATEGY combinations of `pgdoctor repro`, each run once, for real, on 2-4
gloo ranks through the CLI; the findings name the injected cause. Plus Ctrl-C during a run,
usage errors, and --nsys without Nsight Systems."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pgdoctor.lab.pp import schedule

# 2 ranks where that shows the fault, 3 for a pipeline with a middle stage, 4 once; rank start-up
# (importing torch) dominates on 2 cores.
NPROC = {
    ("oom", "ddp"): 2,
    ("oom", "pp"): 2,
    ("oom", "tp"): 2,
    ("timeout", "ddp"): 2,
    ("timeout", "pp"): 3,
    ("timeout", "tp"): 2,
    ("imbalance", "ddp"): 2,
    ("imbalance", "pp"): 4,
    ("imbalance", "tp"): 2,
}
PHASES = {"forward", "backward", "optimizer"}
# The oom fault grows the batch each step, and the step's first allocation of that batch is its
# inputs, drawn in the "data" range: which allocation crosses the cap first depends on what the
# allocator kept from the step before, so an OOM may be read in the data phase too (seen in CI).
OOM_PHASES = PHASES | {"data"}


def _repro(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pgdoctor", "repro", *args], capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.slow
@pytest.mark.parametrize(("fault", "strategy"), sorted(NPROC))
def test_repro_names_the_injected_cause(fault: str, strategy: str, no_leftover_children) -> None:
    n = NPROC[(fault, strategy)]
    bad = n - 1
    res = _repro(fault, "--parallel", strategy, "--nproc", str(n), "--pg-timeout", "2", "--json")
    assert res.returncode == 1, res.stderr[-3000:]
    report = json.loads(res.stdout)
    assert report["incomplete"] == [], report["incomplete"]
    assert report["meta"]["wall_s"] < 60
    findings = report["findings"]
    assert len(report["ranks"]) == n
    # The same split as `pgdoctor diagnose`: one root cause, the injected rank, and its cascade.
    root = findings[0]
    assert root["facts"].get("root_cause") is True and root["scope"]["rank"] == bad, findings
    assert (
        root["category"]
        == {"oom": "host_oom", "timeout": "collective_timeout", "imbalance": "imbalance"}[fault]
    )
    assert all(
        f["facts"].get("cascade_of") == root["code"] and not f["facts"].get("root_cause")
        for f in findings[1:]
    )
    if (fault, strategy) == ("timeout", "pp"):
        assert root["code"] == "RUN404"  # the waiting peers' gloo timeouts are its consequences
        assert any(f["code"] == "RUN153" and f["scope"]["rank"] != bad for f in findings[1:]), findings
    if fault == "oom":  # the peers' "Connection closed by peer" is a consequence, not a second failure
        assert root["code"] in ("RUN121", "RUN122")
    if fault == "oom":
        oom = [f for f in findings if f["category"] == "host_oom"]
        assert oom, findings
        f = oom[0]
        assert f["scope"]["rank"] == bad
        assert f["facts"]["lab_phase"] in OOM_PHASES
        assert f["facts"]["requested_bytes"] > 0
        assert f["facts"]["lab_memory_host_as_limit_bytes"] > 0
    elif fault == "timeout":
        stalled = [f for f in findings if f["code"] == "RUN404"]
        assert len(stalled) == 1 and stalled[0]["scope"]["rank"] == bad
        assert stalled[0]["facts"]["phase"] in PHASES
        # The peers time out waiting for it; once the lab stops the stalled rank, a peer may also
        # see its store or gloo connection reset, or abort on gloo's exception (a C++ stack in
        # abort()): consequences (cascades of the root, asserted above), never a second cause. A
        # host OOM or any other class would be a misread (a fail of another class once under load
        # in CI; the message now shows which).
        consequences = {"collective_timeout", "rendezvous", "nccl_network", "process_crash"}
        odd = [
            (f["code"], f["category"], f["message"][:160])
            for f in findings
            if f["severity"] == "fail" and f["category"] not in consequences
        ]
        assert not odd, odd
        if strategy != "pp":  # gloo's flight recorder records collectives, not send/recv
            fr = [f for f in findings if f["facts"].get("missing_ranks") == [bad]]
            assert fr, findings
            assert fr[0]["facts"]["op"] == "gloo:all_reduce" and fr[0]["facts"]["seq"] > 0
            assert fr[0]["scope"]["rank"] == bad and fr[0]["facts"]["lab_phase"] in PHASES
    else:
        imb = [f for f in findings if f["category"] == "imbalance"]
        assert len(imb) == 1, findings
        f = imb[0]
        assert f["scope"]["rank"] == bad and f["facts"]["ratio"] >= 1.3
        assert 0 < f["facts"]["others_wait_share"] < 1
        if strategy == "pp":
            assert f["facts"]["stage"] == bad
            assert f["facts"]["bubble"] > f["facts"]["ideal_bubble"] == pytest.approx(3 / 7, abs=1e-3)


def _procs_with(marker: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmd:
                pids.append(int(entry))
    return pids


@pytest.mark.slow
def test_ctrl_c_leaves_no_rank_behind(tmp_path) -> None:
    trace_dir = tmp_path / f"ctrl-c-{os.getpid()}"
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pgdoctor",
            "repro",
            "timeout",
            "--parallel",
            "ddp",
            "--nproc",
            "2",
            "--pg-timeout",
            "30",
            "--trace-dir",
            str(trace_dir),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        # Wait until both ranks are training (their trace files exist), then interrupt.
        while time.monotonic() < deadline and len(list(trace_dir.glob("rank*.events.jsonl"))) < 2:
            time.sleep(0.2)
        ranks = [pid for pid in _procs_with(str(trace_dir)) if pid != p.pid]
        assert len(ranks) == 2, "the ranks did not start"
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130
    assert "interrupted" in err and "Traceback" not in err
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _procs_with(str(trace_dir)):
        time.sleep(0.1)
    assert _procs_with(str(trace_dir)) == []


def test_usage_errors_are_one_line() -> None:
    for args in (
        ["oom", "--nproc", "2", "--rank", "5"],
        ["melt"],
        ["oom", "--parallel", "fsdp"],
        ["oom", "--nproc", "1"],
    ):
        res = _repro(*args, timeout=60)
        assert res.returncode == 2, (args, res.stderr)
        assert "Traceback" not in res.stderr and res.stderr.strip().count("\n") == 0, res.stderr


def test_nsys_prints_the_capture_command_without_nsight(tmp_path) -> None:
    env = dict(os.environ, PATH=str(tmp_path))  # no nsys here
    res = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "repro", "timeout", "--parallel", "tp", "--nproc", "2", "--nsys"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert res.returncode == 0, res.stderr
    cmd = res.stdout.strip()
    assert cmd.startswith(
        "nsys profile -t cuda,nvtx,osrt --sample=none --cpuctxsw=none --trace-fork-before-exec=true"
    )
    assert cmd.endswith("pgdoctor repro timeout --parallel tp --nproc 2")


def test_schedules() -> None:
    assert schedule("gpipe", 2, 0, 3) == [("F", 0), ("F", 1), ("F", 2), ("B", 0), ("B", 1), ("B", 2)]
    # 1F1B: p - s - 1 warm-up forwards, then alternate, then drain.
    assert schedule("1f1b", 4, 0, 4) == [
        ("F", 0),
        ("F", 1),
        ("F", 2),
        ("F", 3),
        ("B", 0),
        ("B", 1),
        ("B", 2),
        ("B", 3),
    ]
    assert schedule("1f1b", 4, 3, 4) == [
        ("F", 0),
        ("B", 0),
        ("F", 1),
        ("B", 1),
        ("F", 2),
        ("B", 2),
        ("F", 3),
        ("B", 3),
    ]
    assert schedule("1f1b", 2, 0, 3) == [("F", 0), ("F", 1), ("B", 0), ("F", 2), ("B", 1), ("B", 2)]
    for kind in ("gpipe", "1f1b"):
        for s in range(4):
            ops = schedule(kind, 4, s, 6)
            assert sorted(ops) == sorted([("F", i) for i in range(6)] + [("B", i) for i in range(6)])
            assert all(ops.index(("F", i)) < ops.index(("B", i)) for i in range(6))


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.skipif(not _cuda(), reason="needs an NVIDIA GPU with a CUDA build of torch")
def test_oom_on_gpu_goes_through_the_cuda_caching_allocator(no_leftover_children) -> None:
    res = _repro("oom", "--parallel", "ddp", "--nproc", "2", "--device", "cuda", "--json", timeout=180)
    assert res.returncode == 1, res.stderr[-3000:]
    report = json.loads(res.stdout)
    assert report["incomplete"] == [], report["incomplete"]
    oom = [f for f in report["findings"] if f["category"] == "cuda_oom"]
    assert oom and oom[0]["scope"]["rank"] == 1
    facts = oom[0]["facts"]
    assert facts["lab_phase"] in OOM_PHASES
    assert facts["lab_cap_gpu_memory_fraction"] < 1
    assert facts["lab_memory_gpu_total_bytes"] > facts["lab_memory_gpu_reserved_bytes"] > 0


def test_nsys_on_path_is_run_with_the_capture_command(tmp_path) -> None:
    stub = tmp_path / "nsys"
    record = tmp_path / "args.txt"
    stub.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {record}\necho profiled\n")
    stub.chmod(0o755)
    env = dict(os.environ, PATH=f"{tmp_path}:{os.environ.get('PATH', '')}")
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "pgdoctor",
            "repro",
            "oom",
            "--parallel",
            "pp",
            "--nproc",
            "3",
            "--nsys",
            "--trace-dir",
            str(tmp_path / "t"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert res.returncode == 0, res.stderr
    assert "profiled" in res.stdout
    args = record.read_text().split("\n")
    assert args[:6] == [
        "profile",
        "-t",
        "cuda,nvtx,osrt",
        "--sample=none",
        "--cpuctxsw=none",
        "--trace-fork-before-exec=true",
    ]
    assert args[args.index("-o") + 1] == str(tmp_path / "t" / "pgdoctor-repro-oom-pp")
    assert "--nsys" not in args and args[-9:-1] == [
        "repro",
        "oom",
        "--parallel",
        "pp",
        "--nproc",
        "3",
        "--trace-dir",
        str(tmp_path / "t"),
    ]


@pytest.mark.slow
def test_repro_html_report_draws_the_per_rank_timeline(tmp_path: Path) -> None:
    out = tmp_path / "repro.html"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pgdoctor",
            "repro",
            "imbalance",
            "--parallel",
            "tp",
            "--nproc",
            "2",
            "--format",
            "html",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    html = out.read_text() if out.exists() else ""
    why = html[html.find("<p>Incomplete:</p>") :][:600] if "<p>Incomplete:</p>" in html else ""
    assert proc.returncode == 1, (proc.stderr, why)
    section = html[html.index('<section id="timeline">') :]
    assert "rank 0" in section and "rank 1" in section and "<rect" in section
    assert "RUN403" in html
