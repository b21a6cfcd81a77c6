"""The support bundle probes (system, libraries) on fixture trees written in the kernel's and the
loader's formats: OS and kernel, CPU model, cgroup v1 and v2 limits, container marks, the CUDA,
cuDNN and NCCL libraries in the loader's directories; the Python packages of this interpreter
against importlib.metadata; the version and time in `check --json`."""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

from pgdoctor.model import Unavailable
from pgdoctor.probes.base import ProbeContext
from pgdoctor.probes.libraries import canonical, libraries, packages
from pgdoctor.probes.sysfs import FsReader
from pgdoctor.probes.system import system

CPUINFO_X86 = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8480+
physical id\t: 0

processor\t: 1
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8480+
physical id\t: 1
"""
# arm64 kernels print no model name (Grace: implementer 0x41 Arm, part 0xd4f Neoverse V2).
CPUINFO_ARM = "processor\t: 0\nBogoMIPS\t: 2000.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd4f\n"


def tree(root: Path, files: dict[str, str]) -> FsReader:
    for path, text in files.items():
        p = root / path.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return FsReader(root)


def values(ms: list) -> dict:
    return {m.key: m.value for m in ms}


def test_system_on_a_cgroup_v2_container(tmp_path: Path) -> None:
    fs = tree(
        tmp_path,
        {
            "/etc/os-release": 'NAME="Ubuntu"\nVERSION="22.04.4 LTS (Jammy Jellyfish)"\nPRETTY_NAME="Ubuntu '
            '22.04.4 LTS"\n',
            "/proc/sys/kernel/osrelease": "5.15.0-105-generic\n",
            "/proc/version": "Linux version 5.15.0-105-generic (buildd@lcy02-amd64-054) #115-Ubuntu SMP\n",
            "/proc/cpuinfo": CPUINFO_X86,
            "/proc/self/cgroup": "0::/\n",
            "/proc/1/cgroup": "0::/\n",
            "/.dockerenv": "",
            "/sys/fs/cgroup/cgroup.controllers": "cpuset cpu io memory pids\n",
            "/sys/fs/cgroup/memory.max": "68719476736\n",
            "/sys/fs/cgroup/cpu.max": "1600000 100000\n",
            "/sys/fs/cgroup/pids.max": "max\n",
        },
    )
    v = values(system(ProbeContext(env={}, fs=fs)))
    assert v["host.os.name"] == "Ubuntu 22.04.4 LTS"
    assert v["host.kernel.release"] == "5.15.0-105-generic"
    assert v["host.cpu.model"] == "Intel(R) Xeon(R) Platinum 8480+" and v["host.cpu.sockets"] == 2
    assert v["host.container"] == "docker"
    cg = v["host.cgroup"]
    assert (cg["version"], cg["memory_max_bytes"], cg["cpu_quota_cpus"], cg["pids_max"]) == (
        2,
        64 << 30,
        16.0,
        "max",
    )
    assert cg["files"]["memory"] == "/sys/fs/cgroup/memory.max"


def test_system_on_a_cgroup_v1_kubernetes_pod(tmp_path: Path) -> None:
    pod = "/kubepods/burstable/pod1234/abcd"
    fs = tree(
        tmp_path,
        {
            "/usr/lib/os-release": 'NAME="Rocky Linux"\nVERSION="9.3 (Blue Onyx)"\n',
            "/proc/cpuinfo": CPUINFO_ARM,
            "/proc/self/cgroup": (
                f"12:pids:{pod}\n4:memory:{pod}\n3:cpu,cpuacct:{pod}\n1:name=systemd:{pod}\n"
            ),
            f"/sys/fs/cgroup/memory{pod}/memory.limit_in_bytes": "34359738368\n",
            f"/sys/fs/cgroup/cpu,cpuacct{pod}/cpu.cfs_quota_us": "-1\n",
            f"/sys/fs/cgroup/cpu,cpuacct{pod}/cpu.cfs_period_us": "100000\n",
            f"/sys/fs/cgroup/pids{pod}/pids.max": "4096\n",
        },
    )
    v = values(system(ProbeContext(env={}, fs=fs)))
    assert v["host.os.name"] == "Rocky Linux 9.3 (Blue Onyx)"  # no PRETTY_NAME: NAME VERSION
    assert v["host.cpu.model"] == "CPU implementer 0x41, part 0xd4f"
    assert isinstance(v["host.cpu.sockets"], Unavailable)
    assert isinstance(v["host.kernel.release"], Unavailable)
    assert v["host.container"] == "kubernetes"  # from the cgroup path, without the service variable
    cg = v["host.cgroup"]
    assert (cg["version"], cg["path"], cg["memory_max_bytes"], cg["cpu_quota_cpus"], cg["pids_max"]) == (
        1,
        pod,
        32 << 30,
        "max",
        4096,
    )


def test_cgroup_v1_unlimited_memory_and_bare_host(tmp_path: Path) -> None:
    fs = tree(
        tmp_path,
        {
            "/proc/self/cgroup": "4:memory:/user.slice\n",
            "/proc/1/cgroup": "4:memory:/init.scope\n",
            "/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
        },
    )
    v = values(system(ProbeContext(env={}, fs=fs)))
    assert v["host.cgroup"]["memory_max_bytes"] == "max"  # the v1 spelling of no limit, read at the root
    assert v["host.container"] is None
    assert (
        values(system(ProbeContext(env={}, fs=FsReader(tmp_path / "empty"))))["host.cgroup"]["version"]
        is None
    )


def test_libraries_in_loader_paths_and_ld_library_path(tmp_path: Path) -> None:
    fs = tree(
        tmp_path,
        {
            "/etc/ld.so.conf": "include ld.so.conf.d/*.conf\n",
            "/etc/ld.so.conf.d/cuda.conf": "# CUDA toolkit\n/usr/local/cuda-12.4/targets/x86_64-linux/lib\n",
            "/etc/ld.so.conf.d/ignored.txt": "/nowhere\n",
            "/usr/local/cuda-12.4/targets/x86_64-linux/lib/libcudart.so.12.4.127": "",
            "/usr/local/cuda-12.4/targets/x86_64-linux/lib/libcudart.so.12": "",
            "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15": "",
            "/usr/lib/x86_64-linux-gnu/libnccl.so.2.18.1": "",
            "/opt/nccl/lib/libnccl.so.2.21.5": "",
            "/opt/nccl/lib/libnccl.so": "",
            "/opt/cudnn/lib/libcudnn.so.9.1.0": "",
        },
    )
    env = {"LD_LIBRARY_PATH": "/opt/nccl/lib:/opt/cudnn/lib:/missing/lib", "CUDA_HOME": "/nonexistent"}
    v = values(libraries(ProbeContext(env=env, fs=fs)))
    libs = v["software.native_libraries"]
    # Two NCCLs: the one LD_LIBRARY_PATH puts first, then the system's.
    assert [(x["dir"], x["via"], x["version"]) for x in libs["nccl"]] == [
        ("/opt/nccl/lib", "LD_LIBRARY_PATH", "2.21.5"),
        ("/usr/lib/x86_64-linux-gnu", "default", "2.18.1"),
    ]
    assert libs["cudnn"][0]["version"] == "9.1.0"
    assert [(x["via"], x["version"]) for x in libs["cudart"]] == [("ld.so.conf", "12.4.127")]
    assert libs["cuda_driver"][0]["version"] == "550.54.15"
    assert v["software.ld_library_path"] == [
        {"dir": "/opt/nccl/lib", "exists": True},
        {"dir": "/opt/cudnn/lib", "exists": True},
        {"dir": "/missing/lib", "exists": False},
    ]


def test_packages_are_what_importlib_metadata_knows(tmp_path: Path) -> None:
    listed = packages()
    mine = {canonical(p.split("==")[0]): p.split("==")[1] for p in listed}
    truth = {canonical(d.metadata["Name"]): d.version for d in importlib.metadata.distributions()}
    assert mine == truth
    assert mine["pgdoctor"] == importlib.metadata.version("pgdoctor")
    assert listed == sorted(listed, key=lambda p: canonical(p.split("==")[0]))
    site = tmp_path / "site"
    (site / "Foo_Bar-1.2.dist-info").mkdir(parents=True)
    (site / "legacy.egg-info").mkdir()
    (site / "legacy.egg-info" / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: legacy\nVersion: 0.3\n")
    assert packages([str(site)]) == ["Foo_Bar==1.2", "legacy==0.3"]


def test_check_json_carries_the_bundle_version_and_time() -> None:
    from click.testing import CliRunner

    from pgdoctor import __version__
    from pgdoctor.cli import cli

    res = CliRunner().invoke(cli, ["check", "--level", "quick", "--only", "host,software", "--json"])
    assert res.exit_code in (0, 1, 3), res.output
    data = json.loads(res.stdout)
    assert data["pgdoctor_version"] == __version__ and data["time"].endswith("Z") and data["time_unix"] > 0
    keys = {m["key"] for m in data["measurements"]}
    assert {
        "host.os.name",
        "host.kernel.release",
        "host.cpu.model",
        "host.glibc.version",
        "host.cgroup",
        "host.container",
        "software.python.packages",
        "software.native_libraries",
        "software.ld_library_path",
    } <= keys


def test_torch_runtime_names_the_cudnn_torch_loaded() -> None:
    """At standard level torch is imported and says which cuDNN it loaded; the CPU build of the
    tests has none, which is an answer (null), not an unavailable measurement."""
    import pytest

    torch = pytest.importorskip("torch")
    from pgdoctor.probes.software import torch_runtime

    m = next(
        m
        for m in torch_runtime(ProbeContext(env={}, level="standard"))
        if m.key == "software.torch.cudnn_version"
    )
    assert m.ok and m.value == torch.backends.cudnn.version()
