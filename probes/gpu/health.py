"""GPU health through NVML: one quick probe that reads every field the GPU checks judge.

No torch here: the probe must finish in about a second on an 8-GPU node. Values keep NVML's
meaning; only units change where the name says so (mW -> W in `*_w`). A field one GPU does not
support is Unavailable(not_supported), never 0. Once a GPU answers "GPU is lost", its remaining
fields are Unavailable(gpu_lost) without asking NVML again (each such call can take seconds).

The `nvidia-smi` equivalent of each field is named in FIELD_DOCS for people cross-checking.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Callable, Optional

from pgdoctor.model import Measurement, Reason, Scope, Unavailable
from pgdoctor.probes.base import ProbeContext, ProbeUnavailable, probe
from pgdoctor.probes.gpu.nvml import LiveBackend, NvmlBackend, NvmlError

# NVML enum values used below (nvml.h); pynvml's own constants are not imported at module load.
TEMPERATURE_GPU = 0
THRESHOLD_SHUTDOWN, THRESHOLD_SLOWDOWN = 0, 1
CLOCK_SM, CLOCK_MEM = 1, 2
ECC_CORRECTED, ECC_UNCORRECTED = 0, 1
ECC_VOLATILE, ECC_AGGREGATE = 0, 1
RETIRE_SBE, RETIRE_DBE = 0, 1
P2P_READ, P2P_NVLINK = 0, 2
NVLINK_COUNTERS = {"replay": 0, "recovery": 1, "crc_flit": 2, "crc_data": 3}
NVLINK_MAX_LINKS = 18  # NVLink 4/5 parts have 18; links are numbered from 0 without gaps
CPU_SET_WORDS = 16  # 64-bit words of the CPU mask NVML fills: 1024 CPUs

THROTTLE_BITS = {
    "gpu_idle": 0x1,
    "sw_power_cap": 0x4,
    "hw_slowdown": 0x8,
    "sync_boost": 0x10,
    "sw_thermal": 0x20,
    "hw_thermal": 0x40,
    "hw_power_brake": 0x80,
}
COMPUTE_MODES = {0: "default", 1: "exclusive_thread", 2: "prohibited", 3: "exclusive_process"}
TOPOLOGY_LEVELS = {0: "internal", 10: "single", 20: "multiple", 30: "hostbridge", 40: "node", 50: "system"}
P2P_STATUS = {
    0: "ok",
    1: "chipset_not_supported",
    2: "gpu_not_supported",
    3: "ioh_topology_not_supported",
    4: "disabled_by_regkey",
    5: "not_supported",
    6: "unknown",
}

FIELD_DOCS: dict[str, str] = {
    "gpu.memory.*_bytes": "nvmlDeviceGetMemoryInfo; nvidia-smi --query-gpu=memory.total,memory.used,memory.fr"
    "ee",
    "gpu.ecc.*": "nvmlDeviceGetTotalEccErrors; nvidia-smi -q -d ECC",
    "gpu.remap.*": "nvmlDeviceGetRemappedRows; nvidia-smi -q -d ROW_REMAPPER",
    "gpu.retired_pages.*": "nvmlDeviceGetRetiredPages; nvidia-smi -q -d PAGE_RETIREMENT",
    "gpu.temp_*": "nvmlDeviceGetTemperature(Threshold); nvidia-smi -q -d TEMPERATURE",
    "gpu.power.*": "nvmlDeviceGetPowerUsage/...Limit; nvidia-smi -q -d POWER",
    "gpu.clocks.*": "nvmlDeviceGetClockInfo/MaxClockInfo; nvidia-smi -q -d CLOCK",
    "gpu.throttle.*": "nvmlDeviceGetCurrentClocksThrottleReasons; nvidia-smi -q -d PERFORMANCE",
    "gpu.pcie.*": "nvmlDeviceGetCurr/MaxPcieLink*; nvidia-smi -q (GPU Link Info)",
    "gpu.nvlink.*": "nvmlDeviceGetNvLink*; nvidia-smi nvlink -s / -e",
    "gpu.topology": (
        "nvmlDeviceGetTopologyCommonAncestor, nvmlDeviceGetP2PStatus; nvidia-smi topo -m / -p2p r"
    ),
}

INIT_DETAILS = {
    Reason.LIBRARY_NOT_FOUND: "NVML library not found (no NVIDIA driver)",
    Reason.DRIVER_NOT_LOADED: "NVIDIA driver not loaded (the kernel module is missing or failed to load)",
    Reason.NO_PERMISSION: "no permission to open the NVIDIA device files",
}


def backend_for(ctx: ProbeContext) -> NvmlBackend:
    """Tests and the recorder pass a backend in options["nvml_backend"]; otherwise the real one."""
    backend = ctx.options.get("nvml_backend")
    return backend if backend is not None else LiveBackend()


class _Reader:
    """Collects measurements for one scope; turns NvmlError into Unavailable values."""

    def __init__(self, backend: NvmlBackend, out: list[Measurement], scope: Scope):
        self.backend = backend
        self.out = out
        self.scope = scope
        self.lost: Optional[NvmlError] = None

    def raw(self, function: str, *args: int) -> Any:
        """The NVML answer or an Unavailable; GPU loss short-circuits later calls."""
        if self.lost is not None:
            return Unavailable(Reason.GPU_LOST, f"GPU lost earlier ({self.lost.detail})")
        try:
            return self.backend.call(function, *args)
        except NvmlError as exc:
            if exc.reason is Reason.GPU_LOST:
                self.lost = exc
            return Unavailable(exc.reason, exc.detail)

    def add(
        self, key: str, value: Any, unit: str = "", source: str = "", scope: Optional[Scope] = None
    ) -> None:
        self.out.append(Measurement(key, value, unit, scope or self.scope, source))

    def field(
        self,
        key: str,
        function: str,
        *args: int,
        unit: str = "",
        convert: Callable[[Any], Any] = lambda v: v,
        scope: Optional[Scope] = None,
    ) -> Any:
        value = self.raw(function, *args)
        if not isinstance(value, Unavailable):
            value = convert(value)
        self.add(key, value, unit, f"nvml:{function}", scope)
        return value

    def split(
        self, raw: Any, function: str, parts: Mapping[str, Callable[[Any], Any]], unit: str = ""
    ) -> None:
        """Several measurements from one NVML struct; all unavailable together."""
        for key, pick in parts.items():
            self.add(key, raw if isinstance(raw, Unavailable) else pick(raw), unit, f"nvml:{function}")


def _mw_to_w(v: int) -> float:
    return round(v / 1000.0, 3)


def _cuda_version(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


def cpu_list(words: list[int]) -> str:
    """NVML's CPU mask (64-bit words, CPU 0 = bit 0 of word 0) as Linux's list format, 0-31,64-95."""
    cpus = [w * 64 + b for w, word in enumerate(words) for b in range(64) if word >> b & 1]
    ranges: list[str] = []
    start = prev = None
    for c in [*cpus, None]:
        if start is not None and (c is None or c != prev + 1):  # type: ignore[operator]
            ranges.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = None
        if c is not None and start is None:
            start = c
        prev = c
    return ",".join(ranges)


def sysfs_bus_id(nvml_bus_id: str) -> str:
    """NVML's 00000000:3B:00.0 as sysfs and the kernel write it: 0000:3b:00.0."""
    domain, _, rest = nvml_bus_id.partition(":")
    try:
        return f"{int(domain, 16):04x}:{rest.lower()}"
    except ValueError:
        return nvml_bus_id.lower()


def _read_gpu(backend: NvmlBackend, index: int, ctx: ProbeContext, out: list[Measurement]) -> None:
    r = _Reader(backend, out, Scope(gpu_index=index))
    uuid = r.raw("nvmlDeviceGetUUID", index)
    r.scope = Scope(gpu_index=index, gpu_uuid=None if isinstance(uuid, Unavailable) else uuid)
    r.add("gpu.uuid", uuid, source="nvml:nvmlDeviceGetUUID")
    r.field("gpu.name", "nvmlDeviceGetName", index)
    bus = r.field("gpu.pci_bus_id", "nvmlDeviceGetPciInfo", index)
    r.field("gpu.serial", "nvmlDeviceGetSerial", index)

    mem = r.raw("nvmlDeviceGetMemoryInfo", index)
    r.split(
        mem,
        "nvmlDeviceGetMemoryInfo",
        {
            "gpu.memory.total_bytes": lambda m: m["total"],
            "gpu.memory.used_bytes": lambda m: m["used"],
            "gpu.memory.free_bytes": lambda m: m["free"],
        },
        unit="B",
    )

    procs = r.raw("nvmlDeviceGetComputeRunningProcesses", index)
    if not isinstance(procs, Unavailable):
        procs = [
            {"pid": p["pid"], "name": _process_name(r, p["pid"]), "used_bytes": p["usedGpuMemory"]}
            for p in procs
        ]
    r.add("gpu.processes", procs, source="nvml:nvmlDeviceGetComputeRunningProcesses")

    ecc = r.raw("nvmlDeviceGetEccMode", index)
    r.split(
        ecc,
        "nvmlDeviceGetEccMode",
        {"gpu.ecc.mode_current": lambda v: bool(v[0]), "gpu.ecc.mode_pending": lambda v: bool(v[1])},
    )
    for counter, counter_id in (("volatile", ECC_VOLATILE), ("aggregate", ECC_AGGREGATE)):
        for kind, kind_id in (("corrected", ECC_CORRECTED), ("uncorrected", ECC_UNCORRECTED)):
            r.field(f"gpu.ecc.{counter}.{kind}", "nvmlDeviceGetTotalEccErrors", index, kind_id, counter_id)

    r.field("gpu.retired_pages.sbe", "nvmlDeviceGetRetiredPages", index, RETIRE_SBE, convert=len)
    r.field("gpu.retired_pages.dbe", "nvmlDeviceGetRetiredPages", index, RETIRE_DBE, convert=len)
    r.field("gpu.retired_pages.pending", "nvmlDeviceGetRetiredPagesPendingStatus", index, convert=bool)
    rows = r.raw("nvmlDeviceGetRemappedRows", index)
    r.split(
        rows,
        "nvmlDeviceGetRemappedRows",
        {
            "gpu.remap.correctable": lambda v: v[0],
            "gpu.remap.uncorrectable": lambda v: v[1],
            "gpu.remap.pending": lambda v: bool(v[2]),
            "gpu.remap.failed": lambda v: bool(v[3]),
        },
    )

    r.field("gpu.temp_c", "nvmlDeviceGetTemperature", index, TEMPERATURE_GPU, unit="C")
    r.field("gpu.temp_slowdown_c", "nvmlDeviceGetTemperatureThreshold", index, THRESHOLD_SLOWDOWN, unit="C")
    r.field("gpu.temp_shutdown_c", "nvmlDeviceGetTemperatureThreshold", index, THRESHOLD_SHUTDOWN, unit="C")

    r.field("gpu.power.draw_w", "nvmlDeviceGetPowerUsage", index, unit="W", convert=_mw_to_w)
    r.field("gpu.power.limit_w", "nvmlDeviceGetPowerManagementLimit", index, unit="W", convert=_mw_to_w)
    r.field(
        "gpu.power.default_limit_w",
        "nvmlDeviceGetPowerManagementDefaultLimit",
        index,
        unit="W",
        convert=_mw_to_w,
    )
    r.field(
        "gpu.power.enforced_limit_w", "nvmlDeviceGetEnforcedPowerLimit", index, unit="W", convert=_mw_to_w
    )

    r.field("gpu.clocks.sm_mhz", "nvmlDeviceGetClockInfo", index, CLOCK_SM, unit="MHz")
    r.field("gpu.clocks.mem_mhz", "nvmlDeviceGetClockInfo", index, CLOCK_MEM, unit="MHz")
    r.field("gpu.clocks.sm_max_mhz", "nvmlDeviceGetMaxClockInfo", index, CLOCK_SM, unit="MHz")
    r.field("gpu.clocks.mem_max_mhz", "nvmlDeviceGetMaxClockInfo", index, CLOCK_MEM, unit="MHz")

    mask = r.field("gpu.throttle.reasons_mask", "nvmlDeviceGetCurrentClocksThrottleReasons", index)
    for name, bit in THROTTLE_BITS.items():
        r.add(
            f"gpu.throttle.{name}",
            mask if isinstance(mask, Unavailable) else bool(mask & bit),
            source="nvml:nvmlDeviceGetCurrentClocksThrottleReasons",
        )

    r.field("gpu.pcie.link_gen", "nvmlDeviceGetCurrPcieLinkGeneration", index)
    r.field("gpu.pcie.link_gen_max", "nvmlDeviceGetMaxPcieLinkGeneration", index)
    r.field("gpu.pcie.link_width", "nvmlDeviceGetCurrPcieLinkWidth", index)
    r.field("gpu.pcie.link_width_max", "nvmlDeviceGetMaxPcieLinkWidth", index)
    r.field("gpu.pcie.replay_counter", "nvmlDeviceGetPcieReplayCounter", index)

    _read_nvlinks(r, index)

    r.field("gpu.persistence_mode", "nvmlDeviceGetPersistenceMode", index, convert=bool)
    r.field(
        "gpu.compute_mode", "nvmlDeviceGetComputeMode", index, convert=lambda v: COMPUTE_MODES.get(v, str(v))
    )
    mig = r.raw("nvmlDeviceGetMigMode", index)
    r.split(
        mig,
        "nvmlDeviceGetMigMode",
        {"gpu.mig.mode_current": lambda v: bool(v[0]), "gpu.mig.mode_pending": lambda v: bool(v[1])},
    )

    r.field("gpu.cpu_affinity", "nvmlDeviceGetCpuAffinity", index, CPU_SET_WORDS, convert=cpu_list)
    numa = r.raw("nvmlDeviceGetNumaNodeId", index)
    if isinstance(numa, Unavailable) and numa.reason is not Reason.GPU_LOST and isinstance(bus, str):
        # Older drivers lack nvmlDeviceGetNumaNodeId; the kernel knows the same from the PCI device.
        path = f"/sys/bus/pci/devices/{sysfs_bus_id(bus)}/numa_node"
        try:
            r.add("gpu.numa_node", int(ctx.fs.read_stripped(path)), source=f"sysfs:{path}")
        except (OSError, ValueError):
            r.add("gpu.numa_node", numa, source="nvml:nvmlDeviceGetNumaNodeId")
    else:
        r.add("gpu.numa_node", numa, source="nvml:nvmlDeviceGetNumaNodeId")

    r.add("gpu.lost", r.lost is not None, source="nvml:nvmlDeviceGetHandleByIndex")


def _process_name(r: _Reader, pid: int) -> str:
    name = r.raw("nvmlSystemGetProcessName", pid)
    return "" if isinstance(name, Unavailable) else name


def _read_nvlinks(r: _Reader, index: int) -> None:
    """Links are numbered from 0; the first link NVML refuses ends the list. A GPU without
    NVLink refuses link 0 with not_supported: count 0, which is a fact, not a failure."""
    count: Any = 0
    for link in range(NVLINK_MAX_LINKS):
        state = r.raw("nvmlDeviceGetNvLinkState", index, link)
        if isinstance(state, Unavailable):
            if link == 0 and state.reason is not Reason.NOT_SUPPORTED:
                count = state
            break
        count = link + 1
        ls = Scope(gpu_index=index, gpu_uuid=r.scope.gpu_uuid, link=str(link))
        r.add("gpu.nvlink.active", bool(state), source="nvml:nvmlDeviceGetNvLinkState", scope=ls)
        if not state:
            continue
        r.field("gpu.nvlink.version", "nvmlDeviceGetNvLinkVersion", index, link, scope=ls)
        r.field("gpu.nvlink.remote_bus_id", "nvmlDeviceGetNvLinkRemotePciInfo", index, link, scope=ls)
        for name, counter in NVLINK_COUNTERS.items():
            r.field(
                f"gpu.nvlink.errors.{name}", "nvmlDeviceGetNvLinkErrorCounter", index, link, counter, scope=ls
            )
    r.add("gpu.nvlink.count", count, source="nvml:nvmlDeviceGetNvLinkState")


def _read_topology(backend: NvmlBackend, indices: list[int], out: list[Measurement]) -> None:
    r = _Reader(backend, out, Scope())
    pairs = []
    for a in indices:
        for b in indices:
            if b <= a:
                continue
            ancestor = r.raw("nvmlDeviceGetTopologyCommonAncestor", a, b)
            read = r.raw("nvmlDeviceGetP2PStatus", a, b, P2P_READ)
            nvlink = r.raw("nvmlDeviceGetP2PStatus", a, b, P2P_NVLINK)
            r.lost = None  # one lost GPU must not blank the pairs of the others
            pairs.append(
                {
                    "a": a,
                    "b": b,
                    "ancestor": _json(ancestor, lambda v: TOPOLOGY_LEVELS.get(v, str(v))),
                    "p2p_read": _json(read, lambda v: P2P_STATUS.get(v, str(v))),
                    "p2p_nvlink": _json(nvlink, lambda v: P2P_STATUS.get(v, str(v))),
                }
            )
    r.add("gpu.topology", pairs, source="nvml:nvmlDeviceGetTopologyCommonAncestor")


def _json(value: Any, convert: Callable[[Any], Any]) -> Any:
    return value.to_json() if isinstance(value, Unavailable) else convert(value)


def read_all(backend: NvmlBackend, ctx: ProbeContext) -> list[Measurement]:
    out: list[Measurement] = []
    host = _Reader(backend, out, Scope())
    # So the checks can tell pgdoctor's own CUDA context (inside a job) from a stranger's.
    host.add("gpu.own_pids", [os.getpid(), os.getppid()], source="os.getpid")
    host.field("gpu.driver_version", "nvmlSystemGetDriverVersion")
    host.field("gpu.cuda_driver_version", "nvmlSystemGetCudaDriverVersion", convert=_cuda_version)
    count = host.field("gpu.count", "nvmlDeviceGetCount")
    if isinstance(count, Unavailable):
        return out
    for i in range(count):
        _read_gpu(backend, i, ctx, out)
    lost = {m.scope.gpu_index for m in out if m.key == "gpu.lost" and m.value is True}
    _read_topology(backend, [i for i in range(count) if i not in lost], out)
    return out


@probe("gpu", area="gpu", level="quick", timeout_s=15.0)
def gpu_probe(ctx: ProbeContext) -> list[Measurement]:
    """Every NVML field of every GPU; unavailable as a whole when NVML cannot start."""
    backend = backend_for(ctx)
    try:
        backend.init()
    except NvmlError as exc:
        raise ProbeUnavailable(
            exc.reason, INIT_DETAILS.get(exc.reason, f"NVML did not start: {exc.detail}")
        ) from None
    try:
        return read_all(backend, ctx)
    finally:
        backend.shutdown()
