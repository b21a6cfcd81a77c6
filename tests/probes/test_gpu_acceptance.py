"""The GPU acceptance run (scripts/gpu-acceptance.sh): its dry run here, and the parts of its steps
that run without a GPU (the NVML recorder over a replay, the flight-recorder child over gloo, the
format comparison, the tree linking). The run itself needs an NVIDIA GPU (docs/gpu.md)."""

from __future__ import annotations

import io
import json
import os
import pickle
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from scripts.gpu_acceptance import fr_format, tree, wheels
from scripts.gpu_acceptance.parse_check import parse
from scripts.gpu_acceptance.steps import BUDGET_S, STEPS, total_s
from tests.helpers.paths import FIXTURES, ROOT


def _dry(wheel_dir: Path | str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "scripts/gpu-acceptance.sh", "--dry-run", "--wheels", str(wheel_dir)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHON": sys.executable},
    )


def _wheel(folder: Path, fname: str, tag: str) -> None:
    name, version = fname.split("-")[:2]
    with zipfile.ZipFile(folder / fname, "w") as zf:
        zf.writestr(
            f"{name}-{version}.dist-info/WHEEL", f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {tag}\n"
        )
        zf.writestr(
            f"{name}-{version}.dist-info/METADATA",
            f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n",
        )
        zf.writestr(f"{name}-{version}.dist-info/RECORD", "")


def _carried(folder: Path) -> Path:
    """A wheels folder laid out as scripts/gpu-wheels.sh leaves it (the real file names it got)."""
    folder.mkdir()
    _wheel(
        folder,
        "hyperscan-0.9.1-cp312-cp312-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
        "cp312-cp312-manylinux_2_17_x86_64",
    )
    _wheel(
        folder,
        "nvtx-0.2.17-cp312-cp312-manylinux2014_x86_64.manylinux_2_17_x86_64.manylinux_2_28_x86_64.whl",
        "cp312-cp312-manylinux_2_28_x86_64",
    )
    _wheel(
        folder,
        "py_spy-0.4.3-py2.py3-none-manylinux1_x86_64.manylinux_2_5_x86_64.whl",
        "py2.py3-none-manylinux_2_5_x86_64",
    )
    _wheel(
        folder,
        "pystack-1.7.2-cp312-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
        "cp312-abi3-manylinux_2_17_x86_64",
    )
    return folder


def test_dry_run_ready_with_the_carried_wheels(tmp_path: Path) -> None:
    r = _dry(_carried(tmp_path / "wheels"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "dry run: ready" in r.stdout
    assert f"of {BUDGET_S} s" in r.stdout and "commands of 6 steps parse" in r.stdout


def test_dry_run_says_clearly_that_the_wheels_are_absent(tmp_path: Path) -> None:
    r = _dry(tmp_path / "nowhere")
    assert r.returncode == 1
    assert f"wheels folder {tmp_path / 'nowhere'} is absent: run `bash scripts/gpu-wheels.sh`" in r.stderr
    assert "Traceback" not in r.stderr and "dry run: 1 problem(s)" in r.stdout


def test_dry_run_rejects_wheels_for_another_python_or_platform(tmp_path: Path) -> None:
    folder = _carried(tmp_path / "wheels")
    (
        folder
        / "nvtx-0.2.17-cp312-cp312-manylinux2014_x86_64.manylinux_2_17_x86_64.manylinux_2_28_x86_64.whl"
    ).unlink()
    _wheel(folder, "nvtx-0.2.17-cp311-cp311-manylinux2014_x86_64.whl", "cp311-cp311-manylinux2014_x86_64")
    (folder / "pystack-1.7.2-cp312-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl").unlink()
    # A renamed file: the name says cp312 x86_64, the wheel itself says aarch64.
    _wheel(folder, "pystack-1.7.2-cp312-abi3-manylinux2014_x86_64.whl", "cp312-abi3-manylinux2014_aarch64")
    r = _dry(folder)
    assert r.returncode == 1
    assert "nvtx-0.2.17-cp311-cp311-manylinux2014_x86_64.whl: does not install on CPython 3.12" in r.stderr
    assert (
        "pystack-1.7.2-cp312-abi3-manylinux2014_x86_64.whl: its WHEEL tags (cp312-abi3-manylinux2014_aarch64)"
        in r.stderr
    )


def test_gpu_wheels_downloads_the_pinned_cp312_x86_64_wheels(tmp_path: Path) -> None:
    """scripts/gpu-wheels.sh against a local index instead of PyPI (no network): of the versions
    and platforms offered it takes exactly the pinned CPython 3.12 x86_64 ones, and checks them."""
    index = _carried(tmp_path / "index")
    _wheel(index, "nvtx-0.2.16-cp312-cp312-manylinux2014_x86_64.whl", "cp312-cp312-manylinux2014_x86_64")
    _wheel(index, "pystack-1.7.2-cp312-abi3-manylinux2014_aarch64.whl", "cp312-abi3-manylinux2014_aarch64")
    dest = tmp_path / "got"
    r = subprocess.run(
        ["bash", "scripts/gpu-wheels.sh", str(dest)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(index)},
    )
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in dest.iterdir()) == sorted(
        p.name for p in _carried(tmp_path / "want").iterdir()
    )
    assert wheels.check(str(dest)) == []


def test_wheel_tags() -> None:
    assert wheels.python_ok("cp312", "cp312") and wheels.python_ok("py2.py3", "none")
    assert wheels.python_ok("cp38", "abi3") and not wheels.python_ok("cp313", "abi3")
    assert not wheels.python_ok("cp311", "cp311")
    assert wheels.platform_ok("manylinux2014_x86_64.manylinux_2_17_x86_64") and wheels.platform_ok("any")
    assert not wheels.platform_ok("manylinux2014_aarch64") and not wheels.platform_ok("macosx_11_0_x86_64")


def test_the_steps_fit_the_budget_and_the_output_limits() -> None:
    assert total_s() <= BUDGET_S
    assert [s.number for s in STEPS] == [1, 2, 3, 4, 5, 6]
    assert len(STEPS) + 2 <= 8  # a bundle per step, summary.json, log.txt
    assert all(c.timeout_s > 0 for s in STEPS for c in s.cmds)


def test_the_parse_check_fails_on_what_the_cli_would_refuse() -> None:
    assert parse(["pgdoctor", "bench", "collectives", "--backend", "nccl", "--nproc", "1"]) == ""
    assert "--nproc" in parse(["pgdoctor", "repro", "oom", "--nproc", "1"])
    assert "No such option" in parse(["pgdoctor", "check", "--levle", "full"])
    assert "nccl2" in parse(["pgdoctor", "verify", "m:f", "--backend", "nccl2"])


def test_the_tree_is_linked_as_pyproject_lays_it_out(tmp_path: Path) -> None:
    layout = tree.layout(ROOT)
    assert layout["pgdoctor"] == ROOT / "doctor" and layout["pgdoctor.checks.gpu"] == ROOT / "checks" / "gpu"
    assert all(src.is_dir() for src in layout.values())
    assert tree.link(ROOT, tmp_path) == ["pgdoctor"]
    r = subprocess.run(
        [str(tmp_path / "bin" / "pgdoctor"), "explain", "GPU101"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        cwd=tmp_path,
    )
    assert r.returncode == 0 and "GPU101" in r.stdout


def test_nvml_recorder_of_a_replay_replays_identically(tmp_path: Path) -> None:
    """Step 1's recorder, fed by the strict fake instead of a GPU: the fixture it writes must replay
    to the very same measurements (the check it makes on the real NVML)."""
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "scripts.gpu_acceptance.nvml_step",
            str(tmp_path),
            "--from",
            str(FIXTURES / "nvml" / "h100_pcie_2gpu.json"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    report = json.loads((tmp_path / "nvml_replay.json").read_text())
    assert report["replay_identical"] and report["measurements"] > 100
    fixture = json.loads((tmp_path / report["fixture"]).read_text())
    assert fixture["calls"] == json.loads((FIXTURES / "nvml" / "h100_pcie_2gpu.json").read_text())["calls"]
    assert "torch" in fixture["source"] and "recorded on" in fixture["source"]


def test_nvml_recorder_without_nvml_says_why(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "scripts.gpu_acceptance.nvml_step", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if r.returncode == 0:
        pytest.skip("this machine has NVML")
    assert r.returncode == 3 and "NVML did not start" in r.stderr and "Traceback" not in r.stderr


def _gloo_dump() -> dict:
    with tarfile.open(FIXTURES / "fr" / "clean_legal.tar") as tf:
        fh = tf.extractfile("rank0.pkl")
        assert fh is not None
        return pickle.load(io.BytesIO(fh.read()))


def test_format_comparison() -> None:
    from scripts.gpu_acceptance.fr_child import reference

    ref = reference()
    assert fr_format.compare(ref, ref) == []
    real = _gloo_dump()
    diffs = fr_format.compare(real, ref)
    # A real gloo dump of torch 2.13 against the NCCL-format writer: the names' prefix differs, and
    # nothing else at the level of fields and types.
    assert diffs == ["profiling_name prefixes: real ['gloo'], fixtures ['nccl']"], diffs
    broken = {
        **real,
        "entries": [{**e, "collective_seq_id": str(e["collective_seq_id"])} for e in real["entries"]],
    }
    assert any(
        "'collective_seq_id' is int/str" in d or "'collective_seq_id' is str" in d
        for d in fr_format.compare(broken, ref)
    )


@pytest.mark.slow
def test_flight_recorder_child_over_gloo(tmp_path: Path, no_leftover_children: None) -> None:
    """Step 4's child on CPU: a real 1-rank gloo job, dumped through the in-process API."""
    r = subprocess.run(
        [sys.executable, "-m", "scripts.gpu_acceptance.fr_child", str(tmp_path), "--backend", "gloo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    report = json.loads((tmp_path / "fr_report.json").read_text())
    assert report["summary"]["entries"] >= 9 and report["log"]["all_reduce"] == "ok"
    assert (tmp_path / "dumps" / "nccl_trace_rank_0").stat().st_size > 0
    d = subprocess.run(
        [
            sys.executable,
            "-m",
            "pgdoctor",
            "diagnose",
            "--flight-recorder",
            str(tmp_path / "dumps"),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert d.returncode == 0, d.stdout[-2000:]


def test_the_docs_state_the_budget_the_steps_have() -> None:
    doc = (ROOT / "docs" / "gpu.md").read_text()
    assert f"({total_s():.0f} s in all," in doc
    for step in STEPS:
        assert f"| {step.number} {step.name} |" in doc
