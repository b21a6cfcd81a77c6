"""`pgdoctor plan --from` a `bench scaling --json` result, and offload's CPU optimizer step."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pgdoctor.cli import main
from pgdoctor.model import Report
from pgdoctor.plan.comm import flops_per_step
from pgdoctor.verify.scaling import Row


def run_plan(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    with pytest.raises(SystemExit) as exc:
        main(["plan", *args, "--json"])
    out = capsys.readouterr().out
    return int(exc.value.code or 0), json.loads(out) if out.strip() else {}


def bench_result(path: Path) -> Path:
    """A report as `pgdoctor bench scaling ENTRY --nproc 1,2 --json` writes it (doctor/cli/bench.py)."""
    rows = [
        Row(
            nproc=1,
            step_s=0.010,
            data_s=0.0005,
            fwd_s=0.003,
            bwd_s=0.006,
            optim_s=0.0005,
            comm_s=0.0,
            exposed_s=0.0,
            samples=32,
            predicted_step_s=0.010,
            predicted_speedup=1.0,
        ),
        Row(
            nproc=2,
            step_s=0.020,
            data_s=0.0005,
            fwd_s=0.004,
            bwd_s=0.008,
            optim_s=0.0005,
            comm_s=0.012,
            exposed_s=0.010,
            samples=64,
            busbw_gbps=0.9,
            latency_us=40.0,
            buckets=1,
        ),
    ]
    report = Report(
        command="bench scaling",
        snapshot=None,
        findings=(),
        meta={
            "host": "bench-host",
            "entry": "pgdoctor.verify.examples:small_mlp",
            "backend": "gloo",
            "mode": "weak",
            "steps": 3,
        },
        extra={"scaling": {"rows": [r.to_json() for r in rows], "grad_bytes": 4 * 660_000, "mode": "weak"}},
    )
    path.write_text(json.dumps(report.to_json()))
    return path


def test_bench_scaling_result_replaces_the_presets_with_measured_numbers(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    res = bench_result(tmp_path / "scaling.json")
    common = ["--params", "125M", "--gpus-per-node", "2", "--gpu-memory", "16GiB", "--seq-len", "512"]
    rc, data = run_plan(capsys, *common, "--from", str(res))
    plan = data["plan"]
    assert rc == 0
    # The 2-rank row: its ranks' own all-reduce link, and 6 x 660K parameters x 32 samples per rank
    # in 4 + 8 ms of forward and backward.
    assert plan["interconnect"]["intra"]["busbw_gbps"] == 0.9 and plan["inputs"]["measured"] == [
        "intra",
        "tflops",
    ]
    assert plan["interconnect"]["intra"]["latency_us"] == 40.0
    assert plan["inputs"]["tflops"] == pytest.approx(6 * 660_000 * 32 / 0.012 / 1e12)
    assert (
        sum("measured:" in n and "bench scaling at 2 rank(s) on bench-host" in n for n in plan["notes"]) == 2
    )
    best = plan["recommended"]
    flops = flops_per_step(125_000_000, 12, 768, 512, best["tokens_per_step"], best["recompute"])
    assert best["compute_s"] == pytest.approx(flops / (2 * plan["inputs"]["tflops"] * 1e12))
    # Explicit options win over the measurement.
    rc, data = run_plan(capsys, *common, "--from", str(res), "--tflops", "100", "--bandwidth-intra", "5")
    assert (
        data["plan"]["inputs"]["tflops"] == 100 and data["plan"]["interconnect"]["intra"]["busbw_gbps"] == 5
    )
    assert data["plan"]["inputs"]["measured"] == []
    # Console: the notes say which numbers were measured.
    with pytest.raises(SystemExit):
        main(["plan", *common, "--from", str(res)])
    out = capsys.readouterr().out
    assert (
        "note: measured: intra-node busbw 0.9 GB/s" in out and "note: measured: 0.0106 TFLOP/s per GPU" in out
    )


def test_a_broken_from_file_is_a_usage_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"scaling": {"rows": []}}')
    with pytest.raises(SystemExit) as exc:
        main(["plan", "--params", "125M", "--gpu-memory", "16GiB", "--from", str(bad)])
    assert exc.value.code == 2 and "no rows" in capsys.readouterr().err


def test_offload_counts_the_cpu_optimizer_step_and_plans_pipelines(
    capsys: pytest.CaptureFixture[str],
) -> None:
    common = [
        "--params",
        "7B",
        "--gpus-per-node",
        "8",
        "--gpu-memory",
        "80GiB",
        "--seq-len",
        "4096",
        "--offload",
        "optimizer",
    ]
    _, data = run_plan(capsys, *common, "--zero", "2", "--cpu-optimizer-rate", "2e9")
    # 7B parameters over the node's 8 ranks at 2e9 parameters/s.
    assert data["plan"]["recommended"]["offload_cpu_step_s"] == pytest.approx(3.5, rel=1e-3)
    _, data = run_plan(capsys, *common, "--pp", "2")
    lays = data["plan"]["layouts"]
    assert lays and {(lay["pp"], lay["zero"]) for lay in lays} == {(2, 1)}
    lay = next(lay for lay in lays if lay["dp"] == 4 and lay["tp"] == 1)
    mem = lay["memory"]
    # ZeRO-1 under pp: 16-bit parameters and gradients stay on the GPU, the optimizer leaves it.
    assert mem["params"] == mem["grads"] > 0 and mem["master"] == mem["optimizer"] == 0
    # Host: the rank's shard of master, Adam moments and fp32 gradients, 16 B per parameter.
    assert mem["host"] == pytest.approx(16 * mem["params_numel"] / 4, rel=1e-3)
