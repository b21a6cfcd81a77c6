"""Bad/good snapshot fixtures for every GPU code, made by running the real probes.

The gpu probe runs over the replay backend on a variant of make_nvml_fixtures.h100_pcie_pair(); the Xid probe
reads a /dev/kmsg text in the kernel's record format from a fixture root; the launch environment
and torch's CUDA runtime are the measurements the foundation probes record. The compute probe
needs CUDA, so its measurements are written as it records them. Run through make_nvml_fixtures.py.
"""

from __future__ import annotations

import copy
import json
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Optional

from pgdoctor.model import Measurement, ProbeResult, Scope, Snapshot, Status
from pgdoctor.probes.base import ProbeContext, ProbeUnavailable
from pgdoctor.probes.commands import CommandOutput, ReplayRunner
from pgdoctor.probes.gpu.health import gpu_probe, sysfs_bus_id
from pgdoctor.probes.gpu.nvml import ReplayBackend
from pgdoctor.probes.gpu.pci import gpu_pci
from pgdoctor.probes.gpu.xid import gpu_xid
from pgdoctor.probes.sysfs import FsReader
from tests.helpers.make_nvml_fixtures import GpuSpec, h100_pcie_pair, recording

CODES_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "codes"
NOW = 1764460800.0  # 2025-11-30 00:00 UTC
UPTIME_S = 7200.0
GiB = 1 << 30


class Variant:
    """A node state: GPU specs changed from the healthy pair, plus the other probes' inputs."""

    def __init__(
        self,
        edit: Optional[Callable[[list[GpuSpec]], None]] = None,
        *,
        env: Optional[dict[str, str]] = None,
        kmsg: Optional[list[tuple[float, str]]] = None,
        torch_cuda: Optional[str] = None,
        compute: Optional[list[dict[str, float]]] = None,
        nvml_init_error: Optional[str] = None,
        xid_unreadable: bool = False,
    ):
        self.gpus = h100_pcie_pair()
        for g in self.gpus:  # 4 of the 12 bridge links: keeps each fixture small, changes no rule
            g.nvlink_links = 4
        if edit:
            edit(self.gpus)
        self.env = env
        self.kmsg = kmsg
        self.torch_cuda = torch_cuda
        self.compute = compute
        self.nvml_init_error = nvml_init_error
        self.xid_unreadable = xid_unreadable


def kmsg_text(records: list[tuple[float, str]]) -> str:
    """`prio,seq,usec-since-boot,flags;text` as /dev/kmsg hands them out; ages in seconds."""
    boot = NOW - UPTIME_S
    lines = []
    for seq, (age_s, text) in enumerate(records, 1200):
        usec = int((NOW - age_s - boot) * 1e6)
        lines.append(f"3,{seq},{usec},-;{text}")
    return "\n".join(lines) + "\n"


def pci_tree(root: Path, gpus: list[GpuSpec]) -> None:
    """/sys/bus/pci/devices as the kernel lays it out: the GPUs, a host bridge and an NVIDIA bridge
    function (class 0x0680, as NVSwitches show up) that must not count as a GPU."""
    devices = {sysfs_bus_id(g.bus): ("0x10de", "0x030200") for g in gpus}
    devices["0000:00:00.0"] = ("0x8086", "0x060000")
    devices["0000:05:00.0"] = ("0x10de", "0x068000")
    for bdf, (vendor, cls) in devices.items():
        d = root / "sys" / "bus" / "pci" / "devices" / bdf
        d.mkdir(parents=True)
        (d / "vendor").write_text(vendor + "\n")
        (d / "class").write_text(cls + "\n")
        if vendor == "0x10de":  # bound to the nvidia driver, as the kernel links it
            drv = root / "sys" / "bus" / "pci" / "drivers" / "nvidia"
            drv.mkdir(parents=True, exist_ok=True)
            (d / "driver").symlink_to(drv)


def snapshot(v: Variant) -> Snapshot:
    backend = ReplayBackend(recording(v.gpus, "code fixture")["calls"], init_error=v.nvml_init_error)
    ctx = ProbeContext(env={}, clock=lambda: NOW, options={"nvml_backend": backend})
    try:
        gpu_ms = [
            m if m.key != "gpu.own_pids" else Measurement(m.key, [4242], m.unit, m.scope, m.source)
            for m in gpu_probe(ctx)
        ]
        probes = [ProbeResult("gpu", "gpu", Status.PASSED, "", 0.0, tuple(gpu_ms))]
    except ProbeUnavailable as exc:  # as the runner records it
        gpu_ms = []
        probes = [ProbeResult("gpu", "gpu", Status.UNAVAILABLE, f"{exc.reason.value}: {exc.detail}", 0.0)]
    with tempfile.TemporaryDirectory() as root:
        pci_tree(Path(root), v.gpus)
        fctx = ProbeContext(env={}, fs=FsReader(root), commands=ReplayRunner({}), clock=lambda: NOW)
        probes.append(ProbeResult("gpu_pci", "gpu", Status.PASSED, "", 0.0, tuple(gpu_pci(fctx))))
        if v.xid_unreadable:  # no /dev/kmsg under the root; journal and dmesg refuse a non-root user
            since = f"@{int(NOW - 86400)}"
            jargv = ("journalctl", "-k", "-o", "short-unix", "--no-pager", "-q", "--since", since)
            dargv = ("dmesg", "--time-format", "iso")
            fctx.commands = ReplayRunner(
                {
                    jargv: CommandOutput(
                        jargv, 1, "", "No journal files were opened due to insufficient permissions."
                    ),
                    dargv: CommandOutput(
                        dargv, 1, "", "dmesg: read kernel buffer failed: Operation not permitted"
                    ),
                }
            )
            probes.append(ProbeResult("gpu_xid", "gpu", Status.PASSED, "", 0.0, tuple(gpu_xid(fctx))))
        elif v.kmsg is not None:
            (Path(root) / "dev").mkdir()
            (Path(root) / "proc").mkdir()
            (Path(root) / "dev" / "kmsg").write_text(kmsg_text(v.kmsg))
            (Path(root) / "proc" / "uptime").write_text(f"{UPTIME_S:.2f} 12345.67\n")
            probes.append(ProbeResult("gpu_xid", "gpu", Status.PASSED, "", 0.0, tuple(gpu_xid(fctx))))
    if v.env is not None:
        probes.append(
            ProbeResult(
                "environment",
                "launch",
                Status.PASSED,
                "",
                0.0,
                (Measurement("env.vars", v.env, source="environ"),),
            )
        )
    if v.torch_cuda is not None:
        probes.append(
            ProbeResult(
                "software",
                "software",
                Status.PASSED,
                "",
                0.0,
                (
                    Measurement(
                        "software.torch.version",
                        f"2.7.0+cu{v.torch_cuda.replace('.', '')}",
                        source="importlib.metadata",
                    ),
                    Measurement("software.torch.cuda_runtime", v.torch_cuda, source="file:torch/version.py"),
                ),
            )
        )
    if v.compute is not None:
        uuids = {m.scope.gpu_index: m.value for m in gpu_ms if m.key == "gpu.uuid"}
        ms = []
        for i, row in enumerate(v.compute):
            scope = Scope(gpu_index=i, gpu_uuid=str(uuids[i]))
            for key, value in row.items():
                unit = {"bf16_tflops": "TFLOP/s", "link_gen_loaded": ""}.get(key.rsplit(".", 1)[-1], "GB/s")
                ms.append(
                    Measurement(
                        key,
                        value,
                        unit,
                        scope,
                        "torch" if "compute" in key else "nvml:nvmlDeviceGetCurrPcieLinkGeneration",
                    )
                )
        probes.append(ProbeResult("gpu_compute", "gpu", Status.PASSED, "", 0.0, tuple(ms)))
    return Snapshot(
        host="gpu-node-01", time_unix=NOW, pgdoctor_version="0.1.0", level="full", probes=tuple(probes)
    )


def dumps(snap: Snapshot) -> str:
    """One measurement per line: small enough to commit, still readable in a diff."""
    data = snap.to_json()
    probes = data.pop("probes")
    head = json.dumps(data, indent=1)[:-2]
    parts = []
    for p in probes:
        ms = p.pop("measurements")
        body = ",\n".join("    " + json.dumps(m) for m in ms)
        parts.append("  " + json.dumps(p)[:-1] + ', "measurements": [\n' + body + "\n  ]}")
    return head + ',\n "probes": [\n' + ",\n".join(parts) + "\n ]\n}\n"


def _set(index: int, **fields: Any) -> Callable[[list[GpuSpec]], None]:
    def edit(gpus: list[GpuSpec]) -> None:
        for k, v in fields.items():
            setattr(gpus[index], k, copy.deepcopy(v))

    return edit


def _both(**fields: Any) -> Callable[[list[GpuSpec]], None]:
    def edit(gpus: list[GpuSpec]) -> None:
        for g in gpus:
            for k, v in fields.items():
                setattr(g, k, copy.deepcopy(v))

    return edit


XID79 = "NVRM: Xid (PCI:0000:af:00): 79, pid=48213, name=python, GPU has fallen off the bus."
XID31 = (
    "NVRM: Xid (PCI:0000:3b:00): 31, pid=48213, name=python, Ch 00000010, intr 10000000. MMU Fault: "
    "ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f3c_8d400000. Fault is of type FAULT_PDE ACCESS_TYPE_READ"
)
XID13 = (
    "NVRM: Xid (PCI:0000:3b:00): 13, pid=48213, name=python, Graphics SM Warp Exception on "
    "(GPC 0, TPC 1, SM 0): Out Of Range Address"
)
XID45 = "NVRM: Xid (PCI:0000:3b:00): 45, pid=48213, name=python, Ch 00000010"
MASTER = {
    "MASTER_ADDR": "10.0.0.1",
    "MASTER_PORT": "29500",
    "NCCL_DEBUG": "WARN",
    "TORCH_FR_BUFFER_SIZE": "2000",
}
HEALTHY_COMPUTE = [
    {
        "gpu.compute.bf16_tflops": 612.0,
        "gpu.compute.dtod_gbps": 1690.0,
        "gpu.compute.htod_gbps": 52.1,
        "gpu.compute.dtoh_gbps": 53.0,
        "gpu.pcie.link_gen_loaded": 5,
    }
] * 2

PAIRS: dict[str, tuple[Variant, Variant]] = {
    "GPU100": (Variant(_set(1, lost=True)), Variant()),
    "GPU101": (
        Variant(
            _set(0, ecc={"volatile.uncorrected": 2, "aggregate.uncorrected": 2}, remapped_rows=(0, 2, 1, 0))
        ),
        Variant(),
    ),
    "GPU102": (Variant(_set(0, ecc={"aggregate.uncorrected": 1}, remapped_rows=(0, 1, 0, 0))), Variant()),
    "GPU103": (
        Variant(_set(0, ecc={"aggregate.uncorrected": 1}, remapped_rows=(0, 1, 1, 0))),
        Variant(_set(0, ecc={"aggregate.uncorrected": 1}, remapped_rows=(0, 1, 0, 0))),
    ),
    "GPU104": (
        Variant(_set(0, ecc={"aggregate.uncorrected": 9}, remapped_rows=(0, 8, 0, 1))),
        Variant(_set(0, remapped_rows=(2, 0, 0, 0))),
    ),
    "GPU110": (
        Variant(env={"LOCAL_WORLD_SIZE": "4", "WORLD_SIZE": "8", "RANK": "0", "LOCAL_RANK": "0", **MASTER}),
        Variant(env={"LOCAL_WORLD_SIZE": "2", "WORLD_SIZE": "4", "RANK": "0", "LOCAL_RANK": "0", **MASTER}),
    ),
    "GPU111": (Variant(_set(1, name="NVIDIA A100 80GB PCIe", memory_total=85899345920)), Variant()),
    "GPU112": (Variant(nvml_init_error="DriverNotLoaded"), Variant()),
    "GPU120": (Variant(kmsg=[(600.0, XID79)]), Variant(kmsg=[(3 * 86400.0, XID79)])),
    "GPU121": (Variant(kmsg=[(900.0, XID13), (899.0, XID31)]), Variant(kmsg=[])),
    "GPU122": (Variant(kmsg=[(300.0, XID45)]), Variant(kmsg=[])),
    "GPU123": (Variant(xid_unreadable=True), Variant(kmsg=[])),
    "GPU130": (
        Variant(_set(0, temp_c=82, throttle=0x0, power_mw=330000)),
        Variant(_set(0, temp_c=61, throttle=0x0)),
    ),
    "GPU131": (
        Variant(_set(0, throttle=0x8 | 0x40, clocks=(645, 1593, 1755, 1593), temp_c=79)),
        Variant(_set(0, throttle=0x4, clocks=(1620, 1593, 1755, 1593), power_mw=349000)),
    ),
    "GPU132": (Variant(_both(power_limit_mw=250000, power_enforced_mw=250000)), Variant()),
    "GPU140": (Variant(_set(1, pcie=(4, 5, 8, 16))), Variant()),  # good: idle gen 1 of 5 at full width
    "GPU141": (
        Variant(
            compute=[
                HEALTHY_COMPUTE[0],
                dict(HEALTHY_COMPUTE[1], **{"gpu.pcie.link_gen_loaded": 3, "gpu.compute.htod_gbps": 24.8}),
            ]
        ),
        Variant(compute=HEALTHY_COMPUTE),
    ),
    "GPU142": (Variant(_set(0, pcie_replays=5120)), Variant(_set(0, pcie_replays=12))),
    "GPU150": (Variant(_set(0, nvlink_inactive=(3, 7))), Variant()),
    "GPU151": (Variant(_set(1, nvlink_errors={(2, 0): 15, (2, 1): 2})), Variant()),
    "GPU160": (Variant(_both(persistence=0)), Variant()),
    "GPU161": (
        Variant(
            _both(compute_mode=3),
            env={"LOCAL_WORLD_SIZE": "4", "WORLD_SIZE": "4", "RANK": "0", "LOCAL_RANK": "0", **MASTER},
        ),
        Variant(
            _both(compute_mode=3),
            env={"LOCAL_WORLD_SIZE": "2", "WORLD_SIZE": "2", "RANK": "0", "LOCAL_RANK": "0", **MASTER},
        ),
    ),
    "GPU162": (Variant(_set(0, mig=(1, 1))), Variant()),
    "GPU170": (
        Variant(
            _set(
                0,
                memory_used=74 * GiB,
                processes=[{"pid": 48213, "usedGpuMemory": 73 * GiB, "name": "/usr/bin/python3"}],
            )
        ),
        Variant(),
    ),
    "GPU171": (Variant(_set(0, memory_used=30 * GiB)), Variant()),
    "GPU180": (Variant(torch_cuda="13.0"), Variant(torch_cuda="12.4")),
    "GPU190": (
        Variant(compute=[HEALTHY_COMPUTE[0], dict(HEALTHY_COMPUTE[1], **{"gpu.compute.bf16_tflops": 402.0})]),
        Variant(compute=[HEALTHY_COMPUTE[0], dict(HEALTHY_COMPUTE[1], **{"gpu.compute.bf16_tflops": 590.0})]),
    ),
    "GPU191": (
        Variant(compute=[dict(r, **{"gpu.compute.bf16_tflops": 301.0}) for r in HEALTHY_COMPUTE]),
        Variant(compute=HEALTHY_COMPUTE),
    ),
}


def main(check_only: bool = False) -> list[str]:
    """Write (or, with check_only, compare) every fixture; returns the paths that differ."""
    stale = []
    for code, (bad, good) in sorted(PAIRS.items()):
        for name, v in (("bad", bad), ("good", good)):
            path = CODES_DIR / code / f"{name}.json"
            text = dumps(snapshot(v))
            if check_only:
                if not path.exists() or path.read_text(encoding="utf-8") != text:
                    stale.append(str(path))
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    return stale


if __name__ == "__main__":
    sys.exit(1 if main(check_only="--check" in sys.argv) else 0)
