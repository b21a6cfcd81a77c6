"""Collective sweep arithmetic, expectations, launch identity, outcome merging and the COL checks,
without starting processes (the multi-process behaviour is in test_collectives_procs.py)."""

from __future__ import annotations

import json

import pytest

from pgdoctor.checks import load_all
from pgdoctor.checks.base import Config
from pgdoctor.checks.collectives import (
    busbw_below_expected,
    hang,
    latency_high,
    rank_failed,
    slow_rank,
    wrong_results,
)
from pgdoctor.knowledge.collectives import (
    ALL_OPS,
    SIZE_CONVENTION,
    Row,
    SweepSpec,
    aligned_bytes,
    bus_factor,
    make_row,
    parse_ops,
    preset,
    sizes,
)
from pgdoctor.knowledge.expectations import Topology, expected
from pgdoctor.knowledge.units import parse_binary_bytes
from pgdoctor.model import Measurement, ProbeResult, Snapshot, Status
from pgdoctor.probes.collectives.launch import CollRun, _absorb, _stderr_tail, node_count, spawn_env
from pgdoctor.probes.collectives.worker import describe_stage, ident_from_env, parse_faults

load_all()


def test_bus_factors_are_nccl_tests_factors() -> None:
    assert bus_factor("all_reduce", 8) == pytest.approx(2 * 7 / 8)
    for op in ("all_gather", "reduce_scatter", "all_to_all"):
        assert bus_factor(op, 4) == pytest.approx(3 / 4)
    for op in ("broadcast", "reduce", "send_recv"):
        assert bus_factor(op, 16) == 1.0
    assert bus_factor("all_reduce", 1) == 0.0
    with pytest.raises(ValueError):
        bus_factor("allreduce", 2)


def test_sizes_double_and_align_to_whole_chunks() -> None:
    assert sizes(8, 64) == [8, 16, 32, 64]
    assert sizes(8, 100, 8) == [8, 64]
    assert aligned_bytes("all_reduce", 8, 8) == 8
    assert aligned_bytes("all_gather", 8, 8) == 32  # one float32 per rank at least
    assert aligned_bytes("reduce_scatter", 100, 3) == 96
    spec = SweepSpec(ops=("all_gather", "send_recv"), min_bytes=8, max_bytes=64)
    assert spec.steps(4) == [
        ("all_gather", 16),
        ("all_gather", 32),
        ("all_gather", 64),
        ("send_recv", 8),
        ("send_recv", 16),
        ("send_recv", 32),
        ("send_recv", 64),
    ]
    assert [op for op, _ in spec.steps(1)] == ["all_gather"] * 4  # no peer for send/recv


def test_parse_ops_and_bytes() -> None:
    assert parse_ops("all-reduce,all_gather,all_reduce") == ("all_reduce", "all_gather")
    assert parse_ops("all") == ALL_OPS
    with pytest.raises(ValueError, match="allreduce"):
        parse_ops("allreduce")
    assert (
        parse_binary_bytes("8") == 8
        and parse_binary_bytes("64K") == 65536
        and parse_binary_bytes("256M") == 256 << 20
    )
    for bad in ("", "-1", "12X", "M"):
        with pytest.raises(ValueError):
            parse_binary_bytes(bad)


def test_spec_round_trips_and_rejects_nonsense() -> None:
    spec = SweepSpec(ops=("all_reduce",), max_bytes=1 << 20, backend="nccl", op_timeout_s=7.5)
    assert SweepSpec.from_json(spec.to_json()) == spec
    for kwargs in ({"iters": 0}, {"backend": "mpi"}, {"ops": ("x",)}, {"min_bytes": 64, "max_bytes": 8}):
        with pytest.raises(ValueError):
            SweepSpec(**kwargs)  # type: ignore[arg-type]


def test_presets_by_level() -> None:
    assert preset("quick", True) is None
    std, full = preset("standard", False), preset("full", True)
    assert std is not None and full is not None
    assert std.backend == "gloo" and std.factor == 8 and std.iters < full.iters
    gpu_std = preset("standard", True)
    assert gpu_std is not None and max(b for _, b in gpu_std.steps(8)) == 128 << 20
    assert full.max_bytes == 256 << 20 and full.factor == 2 and full.backend == "nccl"


def test_make_row_times_bandwidth_and_wrong_ranks() -> None:
    per_rank = [
        {"times_us": [100.0, 110.0, 90.0], "wrong": None},
        {
            "times_us": [200.0, 300.0, 100.0],
            "wrong": {"wrong_elements": 1, "elements": 4, "first_index": 2, "expected": 3.0, "got": 1003.0},
        },
    ]
    row = make_row("all_reduce", 1_000_000, per_rank)
    assert row.rank_time_us == (100.0, 200.0)
    assert row.time_us == pytest.approx(150.0)
    assert row.time_min_us == 90.0 and row.time_max_us == 300.0
    assert row.algbw_gbps == pytest.approx(1e6 / 150e-6 / 1e9)
    assert row.busbw_gbps == pytest.approx(row.algbw_gbps * 1.0)  # 2(n-1)/n = 1 for n = 2
    assert not row.correct and row.wrong[0]["rank"] == 1
    assert Row.from_json(row.to_json()) == Row.from_json(Row.from_json(row.to_json()).to_json())
    assert "nccl-tests" in SIZE_CONVENTION


CFG = Config()


def test_expectation_nvlink4_h100_is_360() -> None:
    t = Topology(backend="nccl", world_size=8, gpu_name="H100", nvlink_links=18, nvlink_version=4)
    e = expected(t, CFG)
    assert e.busbw_gbps == pytest.approx(360.0)
    assert "18 NVLink4 links x 25 GB/s = 450 GB/s" in e.why and "0.8" in e.why


def test_expectation_direct_nvlink_that_misses_gpus_falls_back_to_pcie() -> None:
    bridged = Topology(
        backend="nccl",
        world_size=4,
        nvlink_links=12,
        nvlink_version=4,
        nvswitch=False,
        nvlink_peers=1,
        pcie_gen=5,
        pcie_width=16,
    )
    e = expected(bridged, CFG)
    assert e.busbw_gbps == pytest.approx(3.938 * 16 * 0.6) and "crosses PCIe" in e.why
    pair = expected(
        Topology(
            backend="nccl",
            world_size=2,
            nvlink_links=12,
            nvlink_version=4,
            nvswitch=False,
            nvlink_peers=1,
            pcie_gen=5,
            pcie_width=16,
        ),
        CFG,
    )
    assert pair.busbw_gbps == pytest.approx(12 * 25 * 0.8)
    switched = expected(
        Topology(
            backend="nccl", world_size=8, nvlink_links=18, nvlink_version=4, nvswitch=True, nvlink_peers=0
        ),
        CFG,
    )
    assert switched.busbw_gbps == pytest.approx(360.0) and "via NVSwitch" in switched.why


def test_expectation_pcie_network_gloo_and_override() -> None:
    pcie = expected(Topology(backend="nccl", world_size=4, pcie_gen=4, pcie_width=16), CFG)
    assert pcie.busbw_gbps == pytest.approx(1.969 * 16 * 0.6)
    multi = expected(
        Topology(
            backend="nccl",
            world_size=16,
            nodes=2,
            nvlink_links=18,
            nvlink_version=4,
            nic_ports=8,
            nic_gbps=8 * 50.0,
        ),
        CFG,
    )
    assert multi.busbw_gbps == pytest.approx(320.0) and "8 NIC port(s)" in multi.why
    no_nic = expected(
        Topology(backend="nccl", world_size=16, nodes=2, nvlink_links=18, nvlink_version=4), CFG
    )
    assert no_nic.busbw_gbps is None
    gloo = expected(Topology(backend="gloo", world_size=2, host_memcpy_gbps=20.0), CFG)
    assert gloo.busbw_gbps == pytest.approx(0.2) and "memory-copy" in gloo.why
    assert expected(Topology(backend="nccl", world_size=1), CFG).busbw_gbps is None
    over = expected(Topology(backend="nccl", world_size=2), Config({"collectives.expected_busbw_gbps": 42.0}))
    assert over.busbw_gbps == 42.0 and "config" in over.why


def test_ident_from_torchrun_slurm_and_errors() -> None:
    tr = ident_from_env(
        {
            "RANK": "1",
            "WORLD_SIZE": "4",
            "LOCAL_RANK": "1",
            "MASTER_ADDR": "n1",
            "MASTER_PORT": "29500",
            "TORCHELASTIC_RUN_ID": "abc",
            "TORCHELASTIC_USE_AGENT_STORE": "True",
        }
    )
    assert (tr.rank, tr.world_size, tr.launcher, tr.agent_store) == (1, 4, "torchrun", True)
    assert tr.prefix.endswith("/abc/0")
    sl = ident_from_env(
        {
            "SLURM_PROCID": "3",
            "SLURM_NTASKS": "8",
            "SLURM_LOCALID": "3",
            "SLURM_JOB_NODELIST": "gpu[07-08]",
            "SLURM_JOB_ID": "123456",
        }
    )
    assert (sl.rank, sl.world_size, sl.local_rank, sl.launcher) == (3, 8, 3, "slurm")
    assert sl.master_addr == "gpu07" and sl.master_port == 20000 + 123456 % 10000
    with pytest.raises(ValueError, match="rank"):
        ident_from_env({})
    with pytest.raises(ValueError, match="outside"):
        ident_from_env({"RANK": "4", "WORLD_SIZE": "4", "MASTER_ADDR": "a", "MASTER_PORT": "1"})
    with pytest.raises(ValueError, match="MASTER_ADDR"):
        ident_from_env({"RANK": "0", "WORLD_SIZE": "2"})


def test_spawned_ranks_get_loopback_and_lose_outer_launcher() -> None:
    env = spawn_env({"RANK": "5", "TORCHELASTIC_RUN_ID": "x", "PATH": "/bin"}, SweepSpec(), 1, 2, 4242)
    assert env["RANK"] == "1" and env["MASTER_ADDR"] == "127.0.0.1" and env["MASTER_PORT"] == "4242"
    assert "TORCHELASTIC_RUN_ID" not in env and env["GLOO_SOCKET_IFNAME"] == "lo" and env["PATH"] == "/bin"
    assert ident_from_env(env).launcher == "spawn"
    assert node_count({"RANK": "0", "WORLD_SIZE": "16", "LOCAL_WORLD_SIZE": "8"}) == 2


def test_fault_hook_parsing() -> None:
    assert [f.kind for f in parse_faults("corrupt:1:all_reduce, hang:0:broadcast")] == ["corrupt", "hang"]
    for bad in ("corrupt:x:all_reduce", "explode:1:x", "hang:1"):
        with pytest.raises(ValueError):
            parse_faults(bad)


def test_stage_words() -> None:
    spec = SweepSpec(ops=("all_reduce",), min_bytes=8, max_bytes=16)
    assert [describe_stage(spec, 2, s) for s in (-1, 0, 1, 2, 3, 5)] == [
        "init",
        "the first collective",
        "all_reduce 8 B",
        "gather of all_reduce 8 B",
        "all_reduce 16 B",
        "finish",
    ]


def _run() -> CollRun:
    return CollRun("spawn", "gloo", 3, 0, SweepSpec(ops=("all_reduce",), max_bytes=64))


def test_absorb_names_the_rank_that_never_arrived() -> None:
    run = _run()
    waiting = {
        "rank": 0,
        "status": "hang",
        "stage": 3,
        "own_stage": 3,
        "what": "all_reduce 16 B",
        "timeout_s": 2.0,
        "missing_ranks": [2],
        "present_ranks": [0, 1],
        "rows": [],
    }
    also = dict(waiting, rank=1)
    late = {
        "rank": 2,
        "status": "hang",
        "stage": 3,
        "own_stage": 2,
        "what": "all_reduce 16 B",
        "timeout_s": 2.0,
        "missing_ranks": [2],
        "present_ranks": [0, 1],
        "rows": [],
    }
    _absorb(run, {0: waiting, 1: also, 2: late}, {})
    (p,) = run.problems
    assert p["kind"] == "hang" and p["ranks"] == [2] and p["waiting_ranks"] == [0, 1] and not p["all_entered"]


def test_absorb_prefers_a_report_that_read_the_store_over_a_guess() -> None:
    """Rank 1 never reached init; rank 0 read every stage from the store and named it, then exited
    (taking the store with it). Rank 1's watcher, a moment later, could not reach the store and
    could only guess "rank 0" (worker._diagnose): the guess must not name rank 0 as well."""
    run = CollRun("spawn", "gloo", 2, 0, SweepSpec(ops=("all_reduce",), max_bytes=64))
    informed = {
        "rank": 0,
        "status": "hang",
        "stage": -1,
        "what": "init",
        "timeout_s": 4.0,
        "missing_ranks": [1],
        "present_ranks": [0],
        "stages": {"0": -1, "1": -2},
        "rows": [],
    }
    guess = {
        "rank": 1,
        "status": "hang",
        "stage": -1,
        "what": "init",
        "timeout_s": 4.0,
        "missing_ranks": [0],
        "present_ranks": [1],
        "note": "rendezvous store at 127.0.0.1:29500 unreachable: connection refused",
        "rows": [],
    }
    _absorb(run, {0: informed, 1: guess}, {})
    (p,) = run.problems
    assert p["phase"] == "init" and p["ranks"] == [1] and p["waiting_ranks"] == [0], p


def test_absorb_reports_dead_and_silent_ranks() -> None:
    run = _run()
    ok = {
        "rank": 0,
        "status": "error",
        "what": "all_reduce 8 B",
        "error": "RuntimeError: Connection closed by peer",
        "rows": [],
    }
    exits = {
        0: {"returncode": 4, "timed_out": False, "stderr": "", "duration_s": 1.0},
        1: {"returncode": -9, "timed_out": False, "stderr": "frame #0: x\nKilled", "duration_s": 1.0},
        2: {"returncode": None, "timed_out": True, "stderr": "", "duration_s": 9.0},
    }
    _absorb(run, {0: ok}, exits, 9.0)
    kinds = {p["kind"]: p for p in run.problems}
    assert kinds["crash"]["ranks"] == [1] and "signal 9" in kinds["crash"]["exit"]
    assert _stderr_tail("frame #0: x\n<omitting python frames>\nKilled\n") == "Killed"  # C++ frames dropped
    assert kinds["hang"]["ranks"] == [2] and kinds["error"]["ranks"] == [0]


def test_ranks_stopped_after_a_peer_was_sigkilled_are_not_a_hang() -> None:
    """One rank SIGKILLed (the OOM killer): its peers wait in the collective until pgdoctor stops
    them, a grace period after the death. They are the dead rank's consequence; no hang with
    the whole sweep's backstop as an invented timeout."""
    run = _run()
    exits = {
        0: {"returncode": None, "timed_out": True, "stderr": "", "duration_s": 4.1},
        1: {"returncode": -9, "timed_out": False, "stderr": "", "duration_s": 1.0},
        2: {"returncode": None, "timed_out": True, "stderr": "", "duration_s": 4.1},
    }
    _absorb(run, {}, exits, 8610.0)
    (p,) = run.problems
    assert p["kind"] == "crash" and p["ranks"] == [1] and p["waiting_ranks"] == [0, 2]
    assert "SIGKILL" in p["exit"]
    snap = _snap([], run.problems, world=3)
    assert hang(snap, CFG) == []
    (f,) = rank_failed(snap, CFG)
    assert f.scope.rank == 1 and "8610" not in f.message and "rank(s) 0, 2 waited" in f.message


def test_ranks_killed_at_the_deadline_report_the_time_they_ran() -> None:
    run = _run()
    exits = {r: {"returncode": None, "timed_out": True, "stderr": "", "duration_s": 16.0} for r in range(3)}
    _absorb(run, {}, exits, 16.0)
    (p,) = run.problems
    assert p["kind"] == "hang" and p["ranks"] == [0, 1, 2] and p["timeout_s"] == 16.0


def _snap(
    rows: list[Row],
    problems: list[dict] | None = None,
    backend: str = "gloo",
    world: int = 2,
    extra: tuple[Measurement, ...] = (),
) -> Snapshot:
    run = CollRun("spawn", backend, world, 0, SweepSpec(backend=backend), rows=rows, problems=problems or [])
    ms = (*run.to_measurements(), *extra)
    return Snapshot(
        "h", 0.0, "0", "standard", (ProbeResult("collectives", "collectives", Status.PASSED, "", 1.0, ms),)
    )


def _row(op: str, nbytes: int, times: list[float], wrong: dict | None = None, wrong_rank: int = 1) -> Row:
    per = [{"times_us": [t], "wrong": (wrong if r == wrong_rank else None)} for r, t in enumerate(times)]
    return make_row(op, nbytes, per)


def test_wrong_result_finding_names_rank_and_op() -> None:
    w = {"wrong_elements": 1, "elements": 2, "first_index": 1, "expected": 29.0, "got": 1029.0}
    (f,) = wrong_results(
        _snap([_row("all_reduce", 8, [10, 10], w), _row("all_reduce", 16, [10, 10], w)]), CFG
    )
    assert f.code == "COL101" and f.category == "data_corruption" and f.severity.value == "fail"
    assert f.scope.rank == 1 and f.facts["op"] == "all_reduce" and f.facts["bytes"] == [8, 16]
    assert "rank 1" in f.message and "1029" in f.message
    assert wrong_results(_snap([_row("all_reduce", 8, [10, 10])]), CFG) == []


def test_slow_rank_needs_a_majority_of_sizes() -> None:
    rows = [_row("all_reduce", 8 << i, [300.0, 300.0, 2000.0]) for i in range(4)]
    (f,) = slow_rank(_snap(rows, world=3), CFG)
    assert f.code == "COL104" and f.scope.rank == 2
    noisy = [_row("all_reduce", 8, [300.0, 300.0, 2000.0])] + [
        _row("all_reduce", 8 << i, [300, 310, 305]) for i in range(1, 4)
    ]
    assert slow_rank(_snap(noisy, world=3), CFG) == []
    tiny = [
        _row("all_reduce", 8 << i, [10.0, 10.0, 60.0]) for i in range(4)
    ]  # 6x but only 50 us: noise floor
    assert slow_rank(_snap(tiny, world=3), CFG) == []


def test_latency_uses_the_best_small_size() -> None:
    spiky = [_row("all_reduce", 8, [5000.0, 5000.0]), _row("all_reduce", 64, [200.0, 200.0])]
    assert latency_high(_snap(spiky), CFG) == []
    slow = [_row("all_reduce", 8, [5000.0, 5000.0]), _row("all_reduce", 64, [4000.0, 4000.0])]
    (f,) = latency_high(_snap(slow), CFG)
    assert f.code == "COL103" and f.facts["time_us"] == 4000.0


def test_busbw_judged_only_on_a_plateau_size() -> None:
    memcpy = (Measurement("collectives.host_memcpy_gbps", 20.0),)
    small = [_row("all_reduce", 1 << 20, [1e6, 1e6])]  # 1 MiB: below the gloo plateau size
    assert busbw_below_expected(_snap(small, extra=memcpy), CFG) == []
    big = [_row("all_reduce", 16 << 20, [1e6, 1e6])]  # 0.017 GB/s vs 0.2 expected
    (f,) = busbw_below_expected(_snap(big, extra=memcpy), CFG)
    assert f.code == "COL102" and f.facts["expected_busbw_gbps"] == pytest.approx(0.2)
    fast = [_row("all_reduce", 16 << 20, [1e4, 1e4])]
    assert busbw_below_expected(_snap(fast, extra=memcpy), CFG) == []


def test_hang_finding_names_ranks_and_all_entered_case() -> None:
    p = {
        "kind": "hang",
        "phase": "collective",
        "what": "all_gather 8 B",
        "ranks": [1],
        "all_entered": False,
        "waiting_ranks": [0],
        "timeout_s": 3.0,
    }
    (f,) = hang(_snap([], [p]), CFG)
    assert f.code == "COL105" and f.category == "collective_timeout" and f.scope.rank == 1
    assert "rank(s) 1 never reached all_gather 8 B" in f.message
    stuck = dict(p, ranks=[0, 1], all_entered=True)
    (g,) = hang(_snap([], [stuck]), CFG)
    assert "every rank (0, 1) entered" in g.message


def test_topology_reads_the_gpu_and_ib_probes() -> None:
    from pgdoctor.checks.collectives import topology
    from pgdoctor.model import Scope

    gpu = [
        Measurement("gpu.name", "NVIDIA H100 PCIe", scope=Scope(gpu_index=0)),
        Measurement("gpu.pci_bus_id", "00000000:3B:00.0", scope=Scope(gpu_index=0)),
        Measurement("gpu.pci_bus_id", "00000000:AF:00.0", scope=Scope(gpu_index=1)),
        Measurement("gpu.pcie.link_gen_max", 5, scope=Scope(gpu_index=0)),
        Measurement("gpu.pcie.link_width_max", 16, scope=Scope(gpu_index=0)),
    ]
    for link in range(12):
        s = Scope(gpu_index=0, link=str(link))
        gpu += [
            Measurement("gpu.nvlink.active", True, scope=s),
            Measurement("gpu.nvlink.version", 4, scope=s),
            Measurement("gpu.nvlink.remote_bus_id", "00000000:af:00.0", scope=s),
        ]
    ib = [
        Measurement(
            "net.ib.ports",
            {
                "mlx5_0:1": {"state": "ACTIVE", "rate_gbps": 400.0},
                "mlx5_1:1": {"state": "DOWN", "rate_gbps": 400.0},
            },
        )
    ]
    snap = Snapshot(
        "h",
        0.0,
        "0",
        "standard",
        (
            ProbeResult("gpu", "gpu", Status.PASSED, "", 0.1, tuple(gpu)),
            ProbeResult("ib", "net", Status.PASSED, "", 0.1, tuple(ib)),
        ),
    )
    t = topology(snap, "nccl", 2)
    assert (t.gpu_name, t.nvlink_links, t.nvlink_version, t.nvswitch, t.nvlink_peers) == (
        "NVIDIA H100 PCIe",
        12,
        4,
        False,
        1,
    )
    assert (t.pcie_gen, t.pcie_width, t.nic_ports, t.nic_gbps) == (5, 16, 1, 50.0)


def test_summary_gives_peak_latency_and_names_wrong_ranks_and_missing_ops() -> None:
    from rich.console import Console

    from pgdoctor.render.collectives import summary

    w = {"wrong_elements": 1, "elements": 2, "first_index": 1, "expected": 29.0, "got": 1029.0}
    rows = [
        _row("all_reduce", 8, [50.0, 50.0]),
        _row("all_reduce", 1 << 20, [1000.0, 1000.0]),
        _row("all_reduce", 2 << 20, [4000.0, 4000.0]),
        _row("broadcast", 8, [40.0, 40.0], w),
        _row("broadcast", 64, [40.0, 40.0]),
    ]
    console = Console(width=120)
    with console.capture() as captured:
        console.print(summary(rows, {"all_reduce": 3, "broadcast": 3, "all_gather": 3}))
    text = captured.get()
    by_op = {line.split()[0]: line for line in text.splitlines()[2:] if line.strip()}
    # all_reduce peaks at 1 MiB (1.049 GB/s); its latency is the 8 B time
    assert by_op["all_reduce"].split()[1:6] == ["1.049", "1", "MiB", "50.0", "8"] and "ok (3 sizes)" in text
    assert "WRONG on rank 1 (1 of 2 sizes); 1 of 3 sizes never ran" in by_op["broadcast"]
    assert "not measured: 0 of 3 sizes ran" in by_op["all_gather"]


def test_console_report_draws_the_sweep_plot_unless_the_caller_has_drawn_it() -> None:
    import io

    from pgdoctor.engine.runner import Selection, build_report
    from pgdoctor.render.console import render

    report = build_report(
        "check",
        _snap([_row("all_reduce", 8 << i, [100.0, 100.0]) for i in range(3)]),
        CFG,
        Selection(only=("collectives",)),
    )
    shown, bare = io.StringIO(), io.StringIO()
    render(report, shown)
    render(report, bare, details=False)
    assert shown.getvalue().count("busbw vs size: all_reduce") == 1  # pgdoctor check: the plot under the area
    assert "busbw vs size" not in bare.getvalue() and "no findings on h.\n" in bare.getvalue()


def test_the_row_log_counts_finished_rows_and_waits_for_a_torn_line(tmp_path) -> None:
    """Rank 0 appends a line per finished row; the parent reads only what is new, counts a line
    once it is whole, and keeps the rows for an interrupted sweep's report."""
    from pgdoctor.probes.collectives.launch import _RowLog

    path = tmp_path / "p.progress"
    path.write_text("")
    seen: list[tuple[int, int, str]] = []
    log = _RowLog(str(path), lambda d, t, w: seen.append((d, t, w)))
    row = json.dumps(_row("all_reduce", 8, [10, 10]).to_json())
    with open(path, "a") as fh:
        fh.write(f"1 4 all_reduce 8 {row}\n1 4 all_red")
    assert log.poll() == 1 and seen == [(1, 4, "all_reduce 8 B")]
    with open(path, "a") as fh:
        fh.write(f"uce 16 {row}\n")
    assert log.poll() == 2 and len(log.rows) == 2 and log.rows[0].op == "all_reduce"


def test_latency_is_the_small_message_plateau_not_the_warm_up_of_the_first_size() -> None:
    """The figures of one gloo run: 789 us at 8 B (the first collectives on fresh connections),
    about 300 us from 16 B to 1 KiB. nccl-tests users read latency from that plateau."""
    from pgdoctor.knowledge.collectives import latency, small_rows

    times = {
        8: 789.0,
        16: 301.0,
        32: 296.0,
        64: 305.0,
        128: 298.0,
        256: 310.0,
        512: 303.0,
        1024: 299.0,
        1 << 20: 2500.0,
    }
    rows = [_row("all_reduce", n, [t, t]) for n, t in times.items()]
    lat = latency(rows, "all_reduce")
    assert lat is not None and 295.0 <= lat.time_us <= 310.0
    assert [r.bytes for r in small_rows(rows, "all_reduce")] == [8, 16, 32, 64, 128, 256, 512, 1024]
    # two small sizes: the faster one; no small size: the smallest size there is
    assert latency(rows[:2], "all_reduce").time_us == 301.0  # type: ignore[union-attr]
    assert latency(rows[-1:], "all_reduce").bytes == 1 << 20  # type: ignore[union-attr]
