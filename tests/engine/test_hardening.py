"""pgdoctor reads; it never changes GPU or system settings, and files it reads are data only."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(p for d in ("doctor", "probes", "checks") for p in (ROOT / d).rglob("*.py"))

# NVML calls that change device state, and commands that change the system.
MUTATING_NVML = re.compile(r"nvml(Device|Unit|Gpm|Vgpu)?(Set|Reset|Clear|Modify|Register|Freeze|Reset)\w*")
MUTATING_ARGV = {"nvidia-smi", "sysctl", "modprobe", "rmmod", "ip", "tc", "ethtool", "mount", "scontrol"}


def _calls(path: Path) -> list[ast.Call]:
    return [n for n in ast.walk(ast.parse(path.read_text(), str(path))) if isinstance(n, ast.Call)]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_nvml_call_changes_device_state(path: Path) -> None:
    names = set()
    for call in _calls(path):
        f = call.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if MUTATING_NVML.fullmatch(name):
            names.add(name)
    strings = {
        n.value
        for n in ast.walk(ast.parse(path.read_text()))
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and MUTATING_NVML.fullmatch(n.value)
    }
    assert not names and not strings, f"{path.name} calls state-changing NVML functions {names | strings}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_command_that_changes_the_system_is_run(path: Path) -> None:
    bad = []
    for call in _calls(path):
        for arg in call.args[:1]:
            first = arg.elts[0] if isinstance(arg, (ast.List, ast.Tuple)) and arg.elts else None
            if isinstance(first, ast.Constant) and first.value in MUTATING_ARGV:
                bad.append(first.value)
    assert not bad, f"{path.name} runs {bad}"


def test_the_scan_catches_a_setter(tmp_path: Path) -> None:
    probe = tmp_path / "p.py"
    probe.write_text(
        "import pynvml\npynvml.nvmlDeviceSetPersistenceMode(h, 1)\nrun(['nvidia-smi', '-pm', '1'])\n"
    )
    assert any(
        MUTATING_NVML.fullmatch(c.func.attr) for c in _calls(probe) if isinstance(c.func, ast.Attribute)
    )


def test_check_from_treats_every_string_as_data(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    payloads = [
        f"$(touch {marker})",
        f"`touch {marker}`",
        f"__import__('os').system('touch {marker}')",
        f"{{{{ ''.__class__ }}}} ; touch {marker}",
    ]
    snap = {
        "schema_version": 1,
        "kind": "pgdoctor.snapshot",
        "pgdoctor_version": "x",
        "host": payloads[0],
        "time_unix": 0,
        "level": "quick",
        "probes": [
            {
                "name": "environment",
                "area": "launch",
                "status": "passed",
                "measurements": [
                    {
                        "key": "env.vars",
                        "value": {
                            "NCCL_SOCKET_IFNAME": payloads[1],
                            "CUDA_VISIBLE_DEVICES": payloads[2],
                            "MASTER_ADDR": payloads[3],
                        },
                    }
                ],
            }
        ],
    }
    path = tmp_path / "s.json"
    path.write_text(json.dumps(snap))
    for fmt in ("console", "json", "html", "junit", "prometheus"):
        proc = subprocess.run(
            [sys.executable, "-m", "pgdoctor", "check", "--from", str(path), "--format", fmt],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode in (0, 1), proc.stderr
        assert "Traceback" not in proc.stderr
    assert not marker.exists()
