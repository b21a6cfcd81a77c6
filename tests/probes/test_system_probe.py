"""The support bundle's machine facts (probe `system`): OS, kernel, CPU model, libc, container,
cgroup limits, LD_LIBRARY_PATH, the CUDA/NCCL libraries ldconfig knows, every installed Python
distribution; and check --json says which pgdoctor wrote it and when. A fixture file tree and a
recorded ldconfig stand in for the machine."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pgdoctor.probes.base import ProbeContext
from pgdoctor.probes.commands import CommandNotFound, CommandOutput, ReplayRunner
from pgdoctor.probes.sysfs import FsReader
from pgdoctor.probes.system import system

LDCONFIG = """1234 libs found in cache `/etc/ld.so.cache'
\tlibnccl.so.2 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnccl.so.2
\tlibcudnn.so.9 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.9
\tlibcudart.so.12 (libc6,x86-64) => /usr/local/cuda/lib64/libcudart.so.12
\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1
"""


def _tree(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        p = root / path.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def _values(root: Path, ldconfig: object, env: dict[str, str]) -> dict[str, object]:
    runner = ReplayRunner({("ldconfig", "-p"): ldconfig})  # type: ignore[dict-item]
    ctx = ProbeContext(env=env, fs=FsReader(root), commands=runner, level="quick")
    return {m.key: m.value for m in system(ctx)}


def test_a_kubernetes_node_with_cgroup_v2_limits_and_cuda_libraries(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "/etc/os-release": 'NAME="Ubuntu"\nVERSION_ID="22.04"\nPRETTY_NAME="Ubuntu 22.04.4 LTS"\n',
        "/proc/sys/kernel/osrelease": "5.15.0-105-generic\n",
        "/proc/cpuinfo": "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n",
        "/sys/fs/cgroup/memory.max": "68719476736\n",
        "/sys/fs/cgroup/cpu.max": "1600000 100000\n",
        "/sys/fs/cgroup/pids.max": "max\n",
    })
    v = _values(tmp_path, CommandOutput(("ldconfig", "-p"), 0, LDCONFIG, ""),
                {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "LD_LIBRARY_PATH": "/usr/local/cuda/lib64"})
    assert v["system.os"] == "Ubuntu 22.04.4 LTS" and v["system.kernel"] == "5.15.0-105-generic"
    assert v["system.cpu_model"] == "Intel(R) Xeon(R) Platinum 8480+"
    assert v["system.container"] == "kubernetes"
    assert v["system.cgroup"] == {"version": 2, "memory_max": "68719476736", "cpu_max": "16.00 CPUs", "pids_max": "max"}
    assert v["system.ld_library_path"] == "/usr/local/cuda/lib64"
    assert v["system.cuda_libraries"] == {"libnccl.so.2": "/usr/lib/x86_64-linux-gnu/libnccl.so.2",
                                          "libcudnn.so.9": "/usr/lib/x86_64-linux-gnu/libcudnn.so.9",
                                          "libcudart.so.12": "/usr/local/cuda/lib64/libcudart.so.12"}
    packages = v["system.python_packages"]
    assert isinstance(packages, list) and any(p.startswith("pgdoctor ") for p in packages)
    assert str(v["system.libc"]).startswith("glibc")


def test_a_bare_host_says_what_it_could_not_read(tmp_path: Path) -> None:
    _tree(tmp_path, {"/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
                     "/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1\n", "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n"})
    v = _values(tmp_path, CommandNotFound("ldconfig"), {})
    assert getattr(v["system.os"], "reason", None).value == "not_present"  # type: ignore[union-attr]
    assert v["system.cgroup"] == {"version": 1, "memory_max": "9223372036854771712", "cpu_max": "max"}
    assert getattr(v["system.cuda_libraries"], "reason", None).value == "library_not_found"  # type: ignore[union-attr]
    assert v["system.container"] == "none detected"


def test_check_json_carries_the_bundle_the_version_and_the_time() -> None:
    res = subprocess.run([sys.executable, "-m", "pgdoctor", "check", "--level", "quick", "--only", "host", "--json"],
                         capture_output=True, text=True, timeout=120)
    doc = json.loads(res.stdout)
    keys = {m["key"] for m in doc["measurements"]}
    assert {"system.os", "system.kernel", "system.cpu_model", "system.libc", "system.python_packages",
            "system.cuda_libraries", "system.cgroup"} <= keys
    assert doc["pgdoctor_version"] and doc["time_unix"] > 1.7e9
