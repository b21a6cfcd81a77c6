"""Real torch.distributed gloo ranks: a clean sweep, an injected corruption, a rank that never
enters a collective, a rank that dies, the CLI, and a run under torchrun. Faults go through the
worker's fault-injection hook (PGDOCTOR_COLL_FAULT)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pgdoctor.checks import load_all
from pgdoctor.checks.base import Config
from pgdoctor.engine.runner import Selection, build_report
from pgdoctor.knowledge.collectives import ALL_OPS, SweepSpec
from pgdoctor.model import ProbeResult, Reason, Snapshot, Status
from pgdoctor.probes.base import ProbeContext, ProbeUnavailable
from pgdoctor.probes.collectives.launch import CollRun, run_collectives

pytestmark = pytest.mark.slow
load_all()

SMALL = SweepSpec(
    ops=ALL_OPS,
    min_bytes=8,
    max_bytes=16 << 10,
    factor=16,
    iters=3,
    warmup=1,
    op_timeout_s=15.0,
    init_timeout_s=60.0,
)


# Every bench run of this file: the collectives benchmark on gloo (no GPU here).
BENCH_GLOO = ["bench", "collectives", "--backend", "gloo"]


def _env(fault: str = "") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PGDOCTOR_COLL_FAULT"}
    if fault:
        env["PGDOCTOR_COLL_FAULT"] = fault
    env["OMP_NUM_THREADS"] = "1"
    return env


def _findings(run: CollRun) -> list:
    snap = Snapshot(
        "h",
        0.0,
        "0",
        "standard",
        (ProbeResult("collectives", "collectives", Status.PASSED, "", 1.0, tuple(run.to_measurements())),),
    )
    return list(build_report("check", snap, Config(), Selection(only=("collectives",))).findings)


@pytest.fixture(scope="module")
def clean() -> CollRun:
    return run_collectives(SMALL, _env(), 2)


def test_clean_sweep_is_correct_everywhere_with_per_rank_times(clean: CollRun) -> None:
    assert clean.problems == []
    assert {r.op for r in clean.rows} == set(ALL_OPS)
    assert all(r.correct and len(r.rank_time_us) == 2 and r.time_us > 0 for r in clean.rows)
    ms = {m.key: m for m in clean.to_measurements()}
    row = ms["collectives.all_reduce.8"].value
    assert isinstance(row, dict)
    assert {"op", "bytes", "time_us", "algbw_gbps", "busbw_gbps", "correct", "rank_time_us"} <= set(row)
    assert ms["collectives.backend"].value == "gloo" and ms["collectives.world_size"].value == 2
    assert "nccl-tests" in str(ms["collectives.size_convention"].value)
    assert isinstance(ms["collectives.host_memcpy_gbps"].value, float)
    assert ms["collectives.all_gather.busbw_peak_gbps"].unit == "GB/s"
    assert not [f for f in _findings(clean) if f.code in ("COL101", "COL105", "COL106")]


def test_corrupted_rank_gets_the_data_corruption_finding(no_leftover_children: None) -> None:
    spec = SweepSpec(
        ops=("all_reduce", "reduce_scatter"),
        min_bytes=64,
        max_bytes=4096,
        factor=8,
        iters=2,
        warmup=0,
        init_timeout_s=60.0,
    )
    run = run_collectives(spec, _env("corrupt:1:reduce_scatter"), 2)
    col101 = [f for f in _findings(run) if f.code == "COL101"]
    assert len(col101) == 1
    f = col101[0]
    assert f.scope.rank == 1 and f.facts["op"] == "reduce_scatter" and f.category == "data_corruption"
    assert all(r.correct for r in run.rows if r.op == "all_reduce")


def test_rank_that_never_enters_is_named_within_the_timeout(no_leftover_children: None) -> None:
    spec = SweepSpec(
        ops=("all_reduce", "all_gather"),
        min_bytes=8,
        max_bytes=64,
        factor=8,
        iters=2,
        warmup=0,
        op_timeout_s=2.0,
        init_timeout_s=60.0,
    )
    start = time.monotonic()
    run = run_collectives(spec, _env("hang:1:all_gather"), 2, deadline_s=60.0)
    elapsed = time.monotonic() - start
    (f,) = [f for f in _findings(run) if f.code == "COL105"]
    assert f.facts["ranks"] == [1] and f.facts["waiting_ranks"] == [0] and f.category == "collective_timeout"
    assert "all_gather" in f.message
    assert elapsed < 45.0, elapsed  # start-up + 2 s stage timeout + 3 s grace, far below the 60 s deadline
    assert [r.op for r in run.rows] == ["all_reduce", "all_reduce"]  # what finished before the hang is kept


def test_rank_that_dies_is_named(no_leftover_children: None) -> None:
    spec = SweepSpec(ops=("broadcast",), min_bytes=8, max_bytes=8, iters=1, warmup=0, op_timeout_s=10.0)
    run = run_collectives(spec, _env("exit:1:broadcast"), 2)
    (f,) = [f for f in _findings(run) if f.code == "COL106"]
    assert f.facts["ranks"] == [1] and f.facts["returncode"] == 17


def test_a_sigkilled_rank_is_the_root_cause_not_its_waiting_peers(no_leftover_children: None) -> None:
    """The OOM killer's SIGKILL mid-sweep: the dead rank is named with the signal; the peers are
    the ones that waited (no hang of their own, no timeout that nobody set)."""
    spec = SweepSpec(
        ops=("all_reduce",),
        min_bytes=8,
        max_bytes=1024,
        factor=8,
        iters=1,
        warmup=0,
        op_timeout_s=20.0,
        init_timeout_s=20.0,
    )
    run = run_collectives(spec, _env("kill:1:all_reduce"), 3, deadline_s=60.0)
    found = _findings(run)
    assert not [f for f in found if f.code == "COL105"], [f.message for f in found]
    (f,) = [f for f in found if f.code == "COL106"]
    assert f.facts["ranks"] == [1] and f.facts["returncode"] == -9 and "SIGKILL" in f.message


def test_a_stopped_rank_is_named_and_the_stall_bound_ends_the_run(no_leftover_children: None) -> None:
    """A rank that neither runs nor dies (SIGSTOP): its peer cannot report either (the store lives
    in rank 0), so only the parent's stall bound (init + 2 stage timeouts + a margin) ends the
    run, far below the whole sweep's backstop, and the stopped rank is the one named."""
    from pgdoctor.probes.collectives.launch import backstop_s, stall_s

    spec = SweepSpec(
        ops=("all_reduce", "all_gather"),
        min_bytes=8,
        max_bytes=1 << 20,
        factor=2,
        iters=1,
        warmup=0,
        op_timeout_s=1.0,
        init_timeout_s=30.0,
    )
    assert stall_s(spec, first=False) < backstop_s(spec, 2) / 10
    start = time.monotonic()
    run = run_collectives(spec, _env("stop:0:all_gather"), 2)
    assert time.monotonic() - start < backstop_s(spec, 2)
    (f,) = [f for f in _findings(run) if f.code == "COL105"]
    assert f.facts["ranks"] == [0] and f.facts["waiting_ranks"] == [1]
    # Rank 1 either could not report (its store is in the stopped rank 0), and the parent read
    # rank 0's state, or it reached the store's socket first and named rank 0 itself.
    assert "state T" in f.message or f.facts["phase"] == "collective", f.message


def test_bench_init_is_bounded_by_timeout_for_spawned_ranks(no_leftover_children: None) -> None:
    """A rank that never joins the rendezvous is named within --init-timeout (it once waited 60 s
    whatever the options said)."""
    out = _pgdoctor(
        [
            *BENCH_GLOO,
            "--nproc",
            "2",
            "--json",
            "--max-bytes",
            "8",
            "--ops",
            "all_reduce",
            "--timeout",
            "1.5",
            "--init-timeout",
            "4",
        ],
        _env("hang:1:init"),
    )
    assert out.returncode == 1, out.stderr[-2000:]
    (f,) = [f for f in json.loads(out.stdout)["findings"] if f["code"] == "COL105"]
    assert f["facts"]["phase"] == "init" and f["facts"]["ranks"] == [1] and f["facts"]["timeout_s"] == 4.0, f
    assert "process-group init" in f["message"]


def test_probe_runs_only_when_asked_on_a_host_without_gpus() -> None:
    from pgdoctor.probes.collectives.probe import collectives

    with pytest.raises(ProbeUnavailable) as exc:
        collectives(ProbeContext(env=_env(), level="standard", options={}))
    assert exc.value.reason is Reason.NOT_REQUESTED


def _pgdoctor(
    args: list[str], env: dict[str, str], timeout: float = 120.0
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pgdoctor", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


def test_bench_cli_json_and_usage_errors(no_leftover_children: None) -> None:
    out = _pgdoctor(
        [
            *BENCH_GLOO,
            "--nproc",
            "2",
            "--json",
            "--max-bytes",
            "4K",
            "--iters",
            "2",
            "--ops",
            "all_reduce,all_to_all",
        ],
        _env(),
    )
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)
    rows = [
        m["value"]
        for m in report["measurements"]
        if isinstance(m["value"], dict) and "busbw_gbps" in m["value"]
    ]
    assert {r["op"] for r in rows} == {"all_reduce", "all_to_all"} and all(r["correct"] for r in rows)
    assert report["meta"]["world_size"] == 2 and report["findings"] == []
    bad = _pgdoctor(BENCH_GLOO, _env())
    assert bad.returncode == 2 and "--nproc" in bad.stderr and "Traceback" not in bad.stderr
    bad = _pgdoctor(["bench", "collectives", "--nproc", "2", "--ops", "allreduce"], _env())
    assert bad.returncode == 2 and "allreduce" in bad.stderr and "Traceback" not in bad.stderr


def test_bench_console_prints_each_view_once_and_ends_with_the_summary(no_leftover_children: None) -> None:
    ops = ("all_reduce", "broadcast")
    out = _pgdoctor(
        [
            *BENCH_GLOO,
            "--nproc",
            "2",
            "--min-bytes",
            "64",
            "--max-bytes",
            "4K",
            "--iters",
            "3",
            "--warmup",
            "0",
            "--ops",
            ",".join(ops),
        ],
        _env(),
    )
    assert out.returncode == 0, out.stderr[-2000:]
    lines = [line.rstrip() for line in out.stdout.splitlines()]
    heads = [
        "size = bytes of the full buffer",
        "summary (every element of every rank's result checked)",
        *(f"{op} (2 ranks)" for op in ops),
        *(f"busbw vs size: {op} " for op in ops),
    ]
    for head in heads:
        assert sum(line.lstrip().startswith(head) for line in lines) == 1, (head, out.stdout)

    def table_rows(op: str) -> int:
        first = lines.index(f"{op} (2 ranks)") + 2  # past the title and the column names
        return next(i for i, line in enumerate([*lines[first:], ""]) if not line)

    start = next(i for i, line in enumerate(lines) if line.startswith("summary ("))
    tail = [line for line in lines[start + 1 :] if line]
    assert tail[0].split() == [
        "op",
        "peak",
        "busbw",
        "GB/s",
        "at",
        "size",
        "latency",
        "us",
        "over",
        "sizes",
        "correct",
    ]
    for op, line in zip(ops, tail[1:3]):
        name, peak, _, unit, lat, *rest = line.split()  # the peak's size is a value and a unit
        assert name == op and float(peak) > 0 and unit in ("B", "KiB") and float(lat) > 0, line
        verdict = rest[rest.index("ok") :]  # after the small-message sizes the latency was taken over
        assert " ".join(verdict) == f"ok ({table_rows(op)} sizes)", line
    # after the summary only the report: the area's status line, its findings (indented), the count
    assert tail[3].endswith("Collective bandwidth, latency and correctness"), tail
    assert all(line.startswith("    ") for line in tail[4:-2]), tail
    assert re.fullmatch(r"(no findings|\d+ (warn|info)(, \d+ info)?) on \S+\.", tail[-2]), tail[-2]
    assert tail[-1].startswith("PASSED: "), tail[-1]  # the report's one verdict, as the exit code says


def test_check_runs_the_short_sweep_with_nproc(no_leftover_children: None) -> None:
    out = _pgdoctor(["check", "--only", "collectives", "--nproc", "2", "--json"], _env())
    report = json.loads(out.stdout)
    (probe,) = [r for r in report["results"] if r["kind"] == "probe" and r["name"] == "collectives"]
    assert probe["status"] == "passed", probe
    quick = _pgdoctor(
        ["check", "--only", "collectives", "--nproc", "2", "--level", "quick", "--json"], _env()
    )
    assert not [r for r in json.loads(quick.stdout)["results"] if r["kind"] == "probe"]


def test_under_torchrun_each_rank_runs_in_process_and_rank0_reports(no_leftover_children: None) -> None:
    from pgdoctor.probes.processes import free_port

    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "2",
        "--master-addr",
        "127.0.0.1",
        "--master-port",
        str(free_port()),
        "-m",
        "pgdoctor",
        *BENCH_GLOO,
        "--json",
        "--max-bytes",
        "1K",
        "--iters",
        "2",
        "--ops",
        "all_reduce",
    ]
    env = _env()
    env["GLOO_SOCKET_IFNAME"] = "lo"
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180, start_new_session=True)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)  # one report on stdout: rank 1 only writes a line on stderr
    assert report["meta"]["launcher"] == "torchrun" and report["meta"]["world_size"] == 2
    assert "rank 1" in out.stderr


def test_under_srun_master_addr_comes_from_the_node_list(no_leftover_children: None) -> None:
    from pgdoctor.probes.processes import free_port, run_children

    port = free_port()
    envs = []
    for r in range(2):
        env = {
            k: v for k, v in _env().items() if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
        }
        env.update(
            {
                "SLURM_PROCID": str(r),
                "SLURM_NTASKS": "2",
                "SLURM_LOCALID": str(r),
                "SLURM_NTASKS_PER_NODE": "2",
                "SLURM_JOB_NODELIST": "localhost",
                "SLURM_JOB_ID": "4242",
                "SLURM_STEP_ID": "0",
                "MASTER_PORT": str(port),
                "GLOO_SOCKET_IFNAME": "lo",
            }
        )
        envs.append(env)
    argv = [
        sys.executable,
        "-m",
        "pgdoctor",
        *BENCH_GLOO,
        "--json",
        "--max-bytes",
        "64",
        "--iters",
        "2",
        "--ops",
        "all_reduce",
    ]
    outs = run_children([argv, argv], envs, 120)
    assert all(o.ok for o in outs), [o.stderr[-1000:] for o in outs]
    report = json.loads(outs[0].stdout)
    assert report["meta"]["launcher"] == "slurm" and report["meta"]["world_size"] == 2
    assert outs[1].stdout == ""  # rank 1 reports on stderr only


def _alive_with(marker: str) -> list[int]:
    """Processes whose environment mentions `marker` (the ranks carry their ready directory)."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/environ", "rb") as fh:
                    if marker.encode() in fh.read():
                        out.append(int(d))
            except OSError:
                continue
    return out


@pytest.mark.parametrize(
    ("fault", "phase", "what"),
    [("hang:1:import", "start", "the rendezvous"), ("hang:1:init", "init", "init")],
)
def test_bench_rank_that_never_joins_is_named_within_timeout_after_readiness(
    tmp_path: Path, no_leftover_children: None, fault: str, phase: str, what: str
) -> None:
    """Spawned ranks report ready once imported; the rendezvous is bounded by --timeout from
    then (it was at least 15 s whatever --timeout said). A rank stuck before it is ready, or
    ready and never joining, is named; exit 1; no rank and no temp file is left."""
    env = _env(fault) | {"TMPDIR": str(tmp_path)}
    out = _pgdoctor(
        [
            *BENCH_GLOO,
            "--nproc",
            "2",
            "--json",
            "--max-bytes",
            "8",
            "--ops",
            "all_reduce",
            "--timeout",
            "5",
        ],
        env,
    )
    assert out.returncode == 1, out.stderr[-2000:]
    (f,) = [f for f in json.loads(out.stdout)["findings"] if f["code"] == "COL105"]
    assert f["facts"]["ranks"] == [1] and f["facts"]["phase"] == phase, f
    assert f["facts"]["waiting_ranks"] == [0] and f["facts"]["what"] == what, f
    if phase == "init":
        assert f["facts"]["timeout_s"] == 5.0, f
    else:
        assert "never reported ready" in f["message"], f
    # The ranks are killed before pgdoctor exits, but the kernel reaps them a moment later: wait
    # for that (up to 10 s) instead of a fixed pause that a loaded machine can outrun.
    deadline = time.monotonic() + 10
    while _alive_with(str(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _alive_with(str(tmp_path)) == []
    assert [p.name for p in tmp_path.iterdir()] == []
