"""Builds NVML recordings (the replay backend's input) from NVML's documented types.

No GPU was at hand when these fixtures were written, so every answer below follows the NVML API
reference (nvml.h / docs.nvidia.com/deploy/nvml-api): the C function, its argument order, the
enum values it takes and the type and unit it returns, with values typical of the named product
(datasheet power limits and clocks, nvidia-smi output of such nodes). A recording made on real
hardware with `python -m pgdoctor.probes.gpu.record OUT.json` has the same shape.

Run `python -m tests.helpers.make_nvml_fixtures` to rewrite the committed recordings and the GPU code
fixtures under tests/fixtures/codes/GPU*/ (the tests check that the committed files are current).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "nvml"
NOT_SUPPORTED = {"nvml_error": "NotSupported"}


@dataclass
class GpuSpec:
    """One GPU as NVML would describe it. Defaults: an idle, healthy H100 SXM5 80 GB."""

    name: str = "NVIDIA H100 80GB HBM3"
    bus: str = "00000000:18:00.0"
    serial: str = "1652322000001"
    memory_total: int = 85520809984  # 81559 MiB, as nvmlDeviceGetMemoryInfo reports an H100 80GB
    memory_used: int = 556793856  # ~531 MiB: driver reservation on an idle GPU
    processes: list[dict[str, Any]] = field(default_factory=list)  # {"pid", "usedGpuMemory", "name"}
    ecc_mode: tuple[int, int] = (1, 1)
    ecc: dict[str, int] = field(default_factory=dict)  # "volatile.uncorrected" -> count
    retired_pages: Optional[tuple[int, int, int]] = None  # (sbe, dbe, pending); None: not supported (A100+)
    remapped_rows: tuple[int, int, int, int] = (0, 0, 0, 0)  # correctable, uncorrectable, pending, failure
    temp_c: int = 33
    temp_slowdown_c: int = 89
    temp_shutdown_c: int = 92
    power_mw: int = 71000
    power_limit_mw: int = 700000
    power_default_mw: int = 700000
    power_enforced_mw: int = 700000
    clocks: tuple[int, int, int, int] = (345, 2619, 1980, 2619)  # sm, mem, sm max, mem max (MHz)
    throttle: int = 0x1  # GpuIdle
    pcie: tuple[int, int, int, int] = (1, 5, 16, 16)  # gen, gen max, width, width max (gen 1 at idle)
    pcie_replays: int = 0
    nvlink_links: int = 18
    nvlink_version: int = 4
    nvlink_inactive: tuple[int, ...] = ()
    nvlink_remote: str = "00000000:05:00.0"  # an NVSwitch
    nvlink_errors: dict[tuple[int, int], int] = field(default_factory=dict)  # (link, counter) -> count
    persistence: int = 1
    compute_mode: int = 0
    mig: tuple[int, int] = (0, 0)
    cpu_words: tuple[int, ...] = (0x00FFFFFFFFFFFFFF, 0xFFFF000000000000, 0x000000FFFFFFFFFF)
    numa: int = 0
    uuid: str = ""
    lost: bool = False


def h100_sxm_node(n: int = 8) -> list[GpuSpec]:
    """A DGX/HGX H100-like node: GPUs 0-3 on NUMA 0, 4-7 on NUMA 1, all links to NVSwitches."""
    buses = ["18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"]
    return [
        GpuSpec(
            bus=f"00000000:{buses[i]}:00.0",
            serial=f"165232200000{i}",
            numa=0 if i < 4 else 1,
            cpu_words=(0x00FFFFFFFFFFFFFF, 0xFFFF000000000000, 0x000000FFFFFFFFFF)
            if i < 4
            else (0xFF00000000000000, 0x0000FFFFFFFFFFFF, 0xFFFFFF0000000000, 0xFFFF),
        )
        for i in range(n)
    ]


def h100_pcie_pair() -> list[GpuSpec]:
    """Two H100 PCIe cards joined by NVLink bridges (12 links each, the remote is the other card)."""
    a = GpuSpec(
        name="NVIDIA H100 PCIe",
        bus="00000000:3B:00.0",
        serial="1321123000001",
        memory_total=85520809984,
        temp_slowdown_c=85,
        temp_shutdown_c=90,
        power_mw=48000,
        power_limit_mw=350000,
        power_default_mw=350000,
        power_enforced_mw=350000,
        clocks=(345, 1593, 1755, 1593),
        nvlink_links=12,
        nvlink_remote="00000000:AF:00.0",
        cpu_words=(0xFFFFFFFF,),
        numa=0,
    )
    b = copy.deepcopy(a)
    b.bus, b.serial, b.nvlink_remote, b.cpu_words, b.numa = (
        "00000000:AF:00.0",
        "1321123000002",
        a.bus,
        (0xFFFFFFFF << 32,),
        1,
    )
    return [a, b]


def _uuid(spec: GpuSpec, i: int) -> str:
    return (
        spec.uuid or f"GPU-{0x5F1E0000 + i:08x}-7c3a-4e21-9d55-{0xA00000000000 + int(spec.serial[-6:]):012x}"
    )


def calls_for(gpus: list[GpuSpec], driver: str = "550.54.15", cuda: int = 12040) -> dict[str, Any]:
    """Every call the gpu probe makes, answered as NVML would for these GPUs."""
    c: dict[str, Any] = {
        "nvmlSystemGetDriverVersion()": driver,
        "nvmlSystemGetCudaDriverVersion()": cuda,
        "nvmlDeviceGetCount()": len(gpus),
    }
    for i, g in enumerate(gpus):
        if g.lost:
            c[f"nvmlDeviceGetUUID({i})"] = {"nvml_error": "GpuIsLost"}
            continue
        d = lambda fn, *a, i=i: f"{fn}({','.join(str(x) for x in (i, *a))})"  # noqa: E731
        c[d("nvmlDeviceGetUUID")] = _uuid(g, i)
        c[d("nvmlDeviceGetName")] = g.name
        c[d("nvmlDeviceGetPciInfo")] = g.bus
        c[d("nvmlDeviceGetSerial")] = g.serial
        c[d("nvmlDeviceGetMemoryInfo")] = {
            "total": g.memory_total,
            "free": g.memory_total - g.memory_used,
            "used": g.memory_used,
        }
        c[d("nvmlDeviceGetComputeRunningProcesses")] = [
            {"pid": p["pid"], "usedGpuMemory": p["usedGpuMemory"]} for p in g.processes
        ]
        for p in g.processes:
            c[f"nvmlSystemGetProcessName({p['pid']})"] = p["name"]
        c[d("nvmlDeviceGetEccMode")] = list(g.ecc_mode)
        for counter, counter_id in (("volatile", 0), ("aggregate", 1)):
            for kind, kind_id in (("corrected", 0), ("uncorrected", 1)):
                c[d("nvmlDeviceGetTotalEccErrors", kind_id, counter_id)] = g.ecc.get(f"{counter}.{kind}", 0)
        if g.retired_pages is None:
            for key in (
                d("nvmlDeviceGetRetiredPages", 0),
                d("nvmlDeviceGetRetiredPages", 1),
                d("nvmlDeviceGetRetiredPagesPendingStatus"),
            ):
                c[key] = NOT_SUPPORTED
        else:
            sbe, dbe, pending = g.retired_pages
            c[d("nvmlDeviceGetRetiredPages", 0)] = [0x1000 * (k + 1) for k in range(sbe)]
            c[d("nvmlDeviceGetRetiredPages", 1)] = [0x100000 * (k + 1) for k in range(dbe)]
            c[d("nvmlDeviceGetRetiredPagesPendingStatus")] = pending
        c[d("nvmlDeviceGetRemappedRows")] = list(g.remapped_rows)
        c[d("nvmlDeviceGetTemperature", 0)] = g.temp_c
        c[d("nvmlDeviceGetTemperatureThreshold", 1)] = g.temp_slowdown_c
        c[d("nvmlDeviceGetTemperatureThreshold", 0)] = g.temp_shutdown_c
        c[d("nvmlDeviceGetPowerUsage")] = g.power_mw
        c[d("nvmlDeviceGetPowerManagementLimit")] = g.power_limit_mw
        c[d("nvmlDeviceGetPowerManagementDefaultLimit")] = g.power_default_mw
        c[d("nvmlDeviceGetEnforcedPowerLimit")] = g.power_enforced_mw
        sm, mem, sm_max, mem_max = g.clocks
        c[d("nvmlDeviceGetClockInfo", 1)], c[d("nvmlDeviceGetClockInfo", 2)] = sm, mem
        c[d("nvmlDeviceGetMaxClockInfo", 1)], c[d("nvmlDeviceGetMaxClockInfo", 2)] = sm_max, mem_max
        c[d("nvmlDeviceGetCurrentClocksThrottleReasons")] = g.throttle
        gen, gen_max, width, width_max = g.pcie
        c[d("nvmlDeviceGetCurrPcieLinkGeneration")] = gen
        c[d("nvmlDeviceGetMaxPcieLinkGeneration")] = gen_max
        c[d("nvmlDeviceGetCurrPcieLinkWidth")] = width
        c[d("nvmlDeviceGetMaxPcieLinkWidth")] = width_max
        c[d("nvmlDeviceGetPcieReplayCounter")] = g.pcie_replays
        for link in range(g.nvlink_links):
            active = link not in g.nvlink_inactive
            c[d("nvmlDeviceGetNvLinkState", link)] = int(active)
            if not active:
                continue
            c[d("nvmlDeviceGetNvLinkVersion", link)] = g.nvlink_version
            c[d("nvmlDeviceGetNvLinkRemotePciInfo", link)] = g.nvlink_remote
            for counter in range(4):
                c[d("nvmlDeviceGetNvLinkErrorCounter", link, counter)] = g.nvlink_errors.get(
                    (link, counter), 0
                )
        if g.nvlink_links < 18:
            c[d("nvmlDeviceGetNvLinkState", g.nvlink_links)] = NOT_SUPPORTED
        c[d("nvmlDeviceGetPersistenceMode")] = g.persistence
        c[d("nvmlDeviceGetComputeMode")] = g.compute_mode
        c[d("nvmlDeviceGetMigMode")] = list(g.mig)
        c[d("nvmlDeviceGetCpuAffinity", 16)] = list(g.cpu_words) + [0] * (16 - len(g.cpu_words))
        c[d("nvmlDeviceGetNumaNodeId")] = g.numa
    alive = [i for i, g in enumerate(gpus) if not g.lost]
    for a in alive:
        for b in alive:
            if b <= a:
                continue
            same_numa = gpus[a].numa == gpus[b].numa
            c[f"nvmlDeviceGetTopologyCommonAncestor({a},{b})"] = 40 if same_numa else 50
            c[f"nvmlDeviceGetP2PStatus({a},{b},0)"] = 0
            c[f"nvmlDeviceGetP2PStatus({a},{b},2)"] = 0 if gpus[a].nvlink_links else 5
    return c


def recording(gpus: list[GpuSpec], source: str, **kw: Any) -> dict[str, Any]:
    return {"kind": "pgdoctor.nvml-recording", "version": 1, "source": source, "calls": calls_for(gpus, **kw)}


BUILT = (
    "built from NVML's documented types by tests/helpers/make_nvml_fixtures.py; not recorded on real hardware"
)


# The GPU tier of `pgdoctor hang`: two ranks of a hung job on the PCIe pair. Rank 0 (pid 4101)
# waits in an NCCL all_reduce whose kernel spins for its peer (100% SM); rank 1 (pid 4102), the
# culprit, is held on the host, and NVML holds no utilisation sample of it (NOT_FOUND: no kernel
# ran since the timestamp). Only the calls the tier makes; memory in bytes, utilisation in %.
HANG_PIDS = (4101, 4102)


def hang_pair_calls(pids: tuple[int, int] = HANG_PIDS) -> dict[str, Any]:
    return {
        "nvmlDeviceGetCount()": 2,
        "nvmlDeviceGetComputeRunningProcesses(0)": [{"pid": pids[0], "usedGpuMemory": 30 << 30}],
        "nvmlDeviceGetComputeRunningProcesses(1)": [{"pid": pids[1], "usedGpuMemory": 30 << 30}],
        "nvmlDeviceGetUtilizationRates(0)": {"gpu": 100, "memory": 3},
        "nvmlDeviceGetUtilizationRates(1)": {"gpu": 0, "memory": 0},
        "nvmlDeviceGetProcessUtilization(0,0)": [
            {
                "pid": pids[0],
                "timeStamp": 1733338800000000 + i * 166666,
                "smUtil": 100,
                "memUtil": 3,
                "encUtil": 0,
                "decUtil": 0,
            }
            for i in range(3)
        ],
        "nvmlDeviceGetProcessUtilization(1,0)": {"nvml_error": "NotFound"},
    }


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n", encoding="utf-8")


def main() -> None:
    write_json(
        HERE / "h100_sxm_8gpu.json", recording(h100_sxm_node(8), f"8x H100 SXM5 80GB (HGX), idle; {BUILT}")
    )
    write_json(
        HERE / "h100_pcie_2gpu.json",
        recording(h100_pcie_pair(), f"2x H100 PCIe with NVLink bridges, idle; {BUILT}"),
    )
    write_json(
        HERE / "h100_pcie_2gpu_hang.json",
        {
            "kind": "pgdoctor.nvml-recording",
            "version": 1,
            "source": "2x H100 PCIe, a hung 2-rank NCCL job (rank 0 spins, rank 1 held on the host); "
            f"{BUILT}",
            "calls": hang_pair_calls(),
        },
    )
    from tests.helpers import (
        gpu_codes,  # the code fixtures are snapshots of the real probe over variants of these nodes
    )

    gpu_codes.main()


if __name__ == "__main__":
    main()
