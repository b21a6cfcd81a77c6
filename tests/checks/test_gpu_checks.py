"""GPU rules beyond the bad/good fixture pairs: where expectations come from, what stays silent,
severities that depend on the data, and the command line on this machine (no driver)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from pgdoctor.checks import load_all
from pgdoctor.checks.base import Config
from pgdoctor.checks.gpu.compute import datasheet
from pgdoctor.cli.check import with_cli_overrides
from pgdoctor.engine.runner import run_checks
from pgdoctor.model import Severity, Snapshot
from tests.helpers import gpu_codes
from tests.helpers.gpu_codes import MASTER, Variant, _both, _set
from tests.helpers.paths import FIXTURES

load_all()
GiB = 1 << 30


def findings(v: Variant, **config: Any) -> list[Any]:
    found, results = run_checks(gpu_codes.snapshot(v), Config(config))
    assert not [r for r in results if r.status.value == "crashed"], results
    return [f for f in found if f.area == "gpu"]  # launch-variable findings belong to others


def codes(v: Variant, **config: Any) -> list[str]:
    return sorted(f.code for f in findings(v, **config))


def test_healthy_pair_has_no_findings() -> None:
    assert codes(Variant()) == []


def test_expected_count_from_config_is_exact_and_from_launch_env_is_a_minimum() -> None:
    assert codes(Variant(), **{"expect.gpus": 4}) == ["GPU110"]
    assert codes(Variant(), **{"expect.gpus": 1}) == ["GPU110"]  # exact: more than expected is wrong too
    assert codes(Variant(), **{"expect.gpus": 2}) == []
    assert codes(Variant(env={"LOCAL_WORLD_SIZE": "1", "RANK": "0", "WORLD_SIZE": "1", **MASTER})) == []
    assert codes(Variant(env={"SLURM_GPUS_ON_NODE": "4"})) == ["GPU110"]


def test_cli_expect_gpus_overrides_config() -> None:
    assert Config()["expect.gpus"] == -1
    assert with_cli_overrides(Config(), 8)["expect.gpus"] == 8
    assert with_cli_overrides(Config({"expect.gpus": 4}), None)["expect.gpus"] == 4


def test_gpu_on_pci_bus_but_missing_from_nvml_is_a_count_mismatch() -> None:
    v = Variant()
    snap = gpu_codes.snapshot(v)
    data = snap.to_json()
    pci = next(p for p in data["probes"] if p["name"] == "gpu_pci")
    pci["measurements"][0]["value"] = 3
    found, _ = run_checks(Snapshot.from_json(data), Config())
    assert [(f.code, f.facts["source"]) for f in found] == [("GPU110", "PCI bus")]


def test_memory_size_mix_of_one_model() -> None:
    f = findings(Variant(_set(1, memory_total=42949672960)))
    assert [x.code for x in f] == ["GPU111"] and "memory sizes" in f[0].message


def test_nvlink_down_is_silent_when_no_link_on_the_node_is_up() -> None:
    assert codes(Variant(_both(nvlink_inactive=(0, 1, 2, 3)))) == []
    assert codes(Variant(_set(0, nvlink_inactive=(0, 1, 2, 3)))) == ["GPU150"]
    assert codes(Variant(_both(nvlink_links=0))) == []  # PCIe cards without bridges


def test_nvlink_error_threshold_is_configurable() -> None:
    v = Variant(_set(1, nvlink_errors={(2, 2): 5}))
    assert codes(v) == ["GPU151"]
    assert codes(v, **{"gpu.nvlink_error_max": 10}) == []


def test_idle_pcie_generation_drop_is_not_flagged() -> None:
    assert codes(Variant(_both(pcie=(1, 5, 16, 16)))) == []


def test_foreign_process_severity_and_own_pid() -> None:
    small = Variant(
        _set(0, memory_used=2 * GiB, processes=[{"pid": 9, "usedGpuMemory": GiB, "name": "nvtop"}])
    )
    f = findings(small)
    assert [(x.code, x.severity) for x in f] == [("GPU170", Severity.WARN)]
    assert "pid 9 nvtop 1.0 GiB" in f[0].message
    own = Variant(
        _set(0, memory_used=74 * GiB, processes=[{"pid": 4242, "usedGpuMemory": 73 * GiB, "name": "me"}])
    )
    assert codes(own) == ["GPU171"]  # pgdoctor's own context is not a stranger; the memory is still gone
    unknown = Variant(_set(0, processes=[{"pid": 11, "usedGpuMemory": None, "name": ""}]))
    assert "pid 11 ? (size unknown)" in findings(unknown)[0].message


def test_driver_vs_torch_major_fails_minor_warns() -> None:
    assert [(f.code, f.severity) for f in findings(Variant(torch_cuda="13.0"))] == [("GPU180", Severity.FAIL)]
    assert [(f.code, f.severity) for f in findings(Variant(torch_cuda="12.8"))] == [("GPU180", Severity.WARN)]
    assert codes(Variant(torch_cuda="11.8")) == []


def test_mig_pending_and_allowed() -> None:
    assert codes(Variant(_set(1, mig=(0, 1)))) == ["GPU162"]
    assert codes(Variant(_set(1, mig=(1, 1))), **{"gpu.allow_mig": True}) == []


def test_prohibited_compute_mode_always_blocks() -> None:
    assert codes(Variant(_set(0, compute_mode=2))) == ["GPU161"]


def test_temperature_margin_is_configurable() -> None:
    v = Variant(_set(0, temp_c=78, throttle=0))
    assert codes(v) == []
    assert codes(v, **{"gpu.temp_margin_c": 8.0}) == ["GPU130"]


def test_compute_peers_need_two_gpus_and_datasheet_matching() -> None:
    one = Variant(compute=[dict(gpu_codes.HEALTHY_COMPUTE[0], **{"gpu.compute.bf16_tflops": 100.0})])
    assert codes(one) == ["GPU191"]  # alone: no peer to compare, but far below the H100 PCIe datasheet
    assert datasheet("NVIDIA H100 PCIe").bf16_tflops == 756.0  # type: ignore[union-attr]
    assert datasheet("NVIDIA H100 80GB HBM3").bf16_tflops == 989.0  # type: ignore[union-attr]
    assert datasheet("NVIDIA A100-SXM4-80GB").membw_gbps == 2039.0  # type: ignore[union-attr]
    assert datasheet("NVIDIA H200").membw_gbps == 4800.0  # type: ignore[union-attr]
    assert datasheet("NVIDIA B200") is not None and datasheet("NVIDIA L40S") is not None
    assert datasheet("Tesla V100-SXM2-32GB") is None


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pgdoctor", *argv], capture_output=True, text=True, timeout=120
    )


def test_cli_without_driver_reports_gpu_unavailable_and_exits_0_unless_asked() -> None:
    asked = run("check", "--only", "gpu")
    assert asked.returncode == 3, asked.stdout + asked.stderr
    assert (
        "[-] GPU health (NVML) - library_not_found: NVML library not found (no NVIDIA driver)" in asked.stdout
    )
    whole = run("check", "--level", "quick", "--skip", "net,collectives", "--json")
    report = json.loads(whole.stdout)
    gpu = next(r for r in report["results"] if r["name"] == "gpu")
    assert (gpu["status"], gpu["reason"]) == (
        "unavailable",
        "library_not_found: NVML library not found (no NVIDIA driver)",
    )
    # Not asked for by name: the GPU area adds nothing to the exit code (no incomplete reason, no finding).
    assert not [r for r in report["incomplete"] if "gpu" in r]
    assert not [f for f in report["findings"] if f["area"] == "gpu"]


def test_cli_from_snapshot_with_expect_gpus() -> None:
    path = str(FIXTURES / "codes" / "GPU100" / "good.json")
    assert run("check", "--from", path, "--only", "gpu").returncode == 0
    out = run("check", "--from", path, "--only", "gpu", "--expect-gpus", "8")
    assert out.returncode == 1 and "GPU110" in out.stdout


@pytest.mark.parametrize("code", sorted(gpu_codes.PAIRS))
def test_explain_renders_every_gpu_playbook(code: str) -> None:
    from pgdoctor.playbooks import find

    pb = find(code)
    assert pb is not None and pb.sections["Fix"] and "pgdoctor" in pb.sections["Verify"]


def test_runner_collects_the_gpu_area_through_the_replay_backend(tmp_path: Any) -> None:
    """The whole path a live `check --only gpu` takes, with NVML, sysfs and the kernel log faked."""
    from pathlib import Path

    from pgdoctor.engine.config import load_config
    from pgdoctor.engine.runner import Selection, build_report, collect
    from pgdoctor.probes.base import ProbeContext
    from pgdoctor.probes.commands import ReplayRunner
    from pgdoctor.probes.gpu.nvml import ReplayBackend
    from pgdoctor.probes.sysfs import FsReader
    from tests.helpers.make_nvml_fixtures import recording

    v = Variant(_set(1, ecc={"volatile.uncorrected": 1}))
    root = Path(tmp_path)
    gpu_codes.pci_tree(root, v.gpus)
    (root / "dev").mkdir()
    (root / "proc").mkdir()
    (root / "dev/kmsg").write_text(gpu_codes.kmsg_text([(60.0, gpu_codes.XID79)]))
    (root / "proc/uptime").write_text("7200.0 1.0\n")
    config = load_config(None)
    ctx = ProbeContext(
        env={},
        fs=FsReader(root),
        commands=ReplayRunner({}),
        clock=lambda: gpu_codes.NOW,
        level="quick",
        config=config,
        options={"nvml_backend": ReplayBackend(recording(v.gpus, "test")["calls"])},
    )
    selection = Selection(only=("gpu",))
    snap = collect(ctx, selection, timeout_s=30)
    assert {p.name: p.status.value for p in snap.probes if p.area == "gpu"} == {
        "gpu": "passed",
        "gpu_pci": "passed",
        "gpu_xid": "passed",
    }
    report = build_report("check", Snapshot.loads(snap.dumps()), config, selection)
    assert sorted(f.code for f in report.findings) == ["GPU101", "GPU120"]
    assert {f.scope.gpu_index for f in report.findings} == {1}
    assert not report.incomplete
