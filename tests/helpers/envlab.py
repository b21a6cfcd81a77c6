"""Run pgdoctor's real foundation probes against a chosen environment, file-system tree and
process limits, and return the snapshot. Tests use it to trigger each finding by setting
exactly the variable, limit or file it names; tests/helpers/make_env_fixtures.py uses it
to write the bad/good fixture snapshots."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Optional

from pgdoctor.engine.runner import Selection, collect
from pgdoctor.model import Snapshot
from pgdoctor.probes.base import ProbeContext
from pgdoctor.probes.sysfs import FsReader

MEMINFO = "MemTotal:       263855104 kB\nMemFree:        200000000 kB\nMemAvailable:   250000000 kB\n"
FOUNDATION_AREAS = ("software", "launch", "knobs", "host")


def make_tree(
    root: Path,
    gpus: int = 0,
    rdma: int = 0,
    ifaces: Optional[Mapping[str, tuple[str, int]]] = None,
    meminfo: str = MEMINFO,
) -> Path:
    """A minimal /proc and /sys: meminfo, NVIDIA GPUs known to the driver, RDMA devices,
    network interfaces as name -> (operstate, flags)."""
    files: dict[str, str] = {"proc/meminfo": meminfo}
    for i in range(gpus):
        files[f"proc/driver/nvidia/gpus/0000:{0x18 + i:02x}:00.0/information"] = (
            "Model: NVIDIA H100 80GB HBM3\n"
        )
    if gpus:
        files["proc/driver/nvidia/version"] = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15\n"
    for i in range(rdma):
        files[f"sys/class/infiniband/mlx5_{i}/ports/1/state"] = "4: ACTIVE\n"
    for name, (state, flags) in (ifaces or {"lo": ("unknown", 0x9), "eth0": ("up", 0x1003)}).items():
        files[f"sys/class/net/{name}/operstate"] = state + "\n"
        files[f"sys/class/net/{name}/flags"] = f"{flags:#x}\n"
        files[f"sys/class/net/{name}/mtu"] = "1500\n"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "dev" / "shm").mkdir(parents=True, exist_ok=True)
    return root


def snapshot_in_process(
    env: Mapping[str, str], root: Path, level: str = "quick", areas: tuple[str, ...] = FOUNDATION_AREAS
) -> Snapshot:
    ctx = ProbeContext(env=dict(env), fs=FsReader(root), level=level)
    return collect(ctx, Selection(only=areas), timeout_s=30, host="fixture-host")


SHADOW_CODE = """
import os, site, sys, sysconfig, tempfile
# A site directory with every installed distribution but torch: this Python has no torch. The
# child runs with its site already set up (no -S: in a venv, -S would leave the base prefix and
# lose the venv's packages, pgdoctor among them), so the real site directories come off sys.path.
paths = sysconfig.get_paths()
real = sorted({paths["purelib"], paths["platlib"], site.getusersitepackages()})
real = [d for d in real if os.path.isdir(d)]
shadow = tempfile.mkdtemp(prefix="pgdoctor-notorch-")
import atexit, shutil
atexit.register(shutil.rmtree, shadow, True)
for d in real:
    for name in os.listdir(d):
        if name.split("-")[0].split(".")[0] in ("torch", "torchgen", "functorch"):
            continue
        if not os.path.exists(os.path.join(shadow, name)):
            os.symlink(os.path.join(d, name), os.path.join(shadow, name))
sys.path[:] = [p for p in sys.path if p not in real]
site.addsitedir(shadow)
"""


def snapshot_for(case, level: str, workdir: Path) -> Snapshot:  # type: ignore[no-untyped-def]
    """Build the tree, limits and listeners a tests.env_scenarios.Case describes, probe for real,
    then apply the case's documented overrides."""
    import shutil
    from contextlib import ExitStack

    from pgdoctor.model import Measurement, ProbeResult
    from tests.helpers.env_scenarios import listening

    root = make_tree(
        workdir / "root", gpus=case.gpus, rdma=case.rdma, ifaces=case.ifaces, meminfo=case.meminfo or MEMINFO
    )
    env = case.full_env()
    with ExitStack() as stack:
        if case.shm_bytes is not None:
            shm = root / "dev" / "shm"
            subprocess.run(
                ["mount", "-t", "tmpfs", "-o", f"size={case.shm_bytes}", "pgdoctor-test", str(shm)],
                check=True,
                timeout=10,
            )
            stack.callback(subprocess.run, ["umount", "-l", str(shm)], timeout=10)
        if case.listen_master_port:
            stack.enter_context(listening(int(env["MASTER_PORT"])))
        if case.needs_child:
            snap = _child(env, root, dict(case.rlimits), case.cpus, level, case.hide_torch)
        else:
            snap = snapshot_in_process(env, root, level)
    shutil.rmtree(workdir / "root", ignore_errors=True)
    if not case.override:
        return snap
    probes = []
    for p in snap.probes:
        ms = [
            Measurement(m.key, case.override[m.key], m.unit, m.scope, m.source)
            if m.key in case.override
            else m
            for m in p.measurements
        ]
        probes.append(ProbeResult(p.name, p.area, p.status, p.reason, p.duration_s, tuple(ms)))
    return Snapshot(snap.host, snap.time_unix, snap.pgdoctor_version, snap.level, tuple(probes))


def _child(
    env: Mapping[str, str],
    root: Path,
    rlimits: dict[str, int],
    cpus: Optional[list[int]],
    level: str,
    hide_torch: bool,
) -> Snapshot:
    code = (SHADOW_CODE if hide_torch else "") + textwrap.dedent(f"""
        import json, os, resource, sys
        for name, soft in {rlimits!r}.items():
            res = getattr(resource, "RLIMIT_" + name.upper())
            _, hard = resource.getrlimit(res)
            resource.setrlimit(res, (soft, hard))
        if {cpus!r} is not None:
            os.sched_setaffinity(0, {cpus!r})
        from tests.helpers.envlab import snapshot_in_process
        from pathlib import Path
        snap = snapshot_in_process(json.loads(sys.argv[1]), Path(sys.argv[2]), {level!r})
        print(snap.dumps())
    """)
    argv = [sys.executable, "-c", code, json.dumps(dict(env)), str(root)]
    proc = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    if proc.returncode != 0:
        raise RuntimeError(f"probe child failed: {proc.stderr[-2000:]}")
    return Snapshot.loads(proc.stdout)
