"""The NVML seam and the gpu probe: error translation, the strict replay fake, recording, and the
probe's reading of every field over recordings built from NVML's documented types."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pynvml
import pytest

from pgdoctor.model import Reason, Unavailable
from pgdoctor.probes.base import ProbeContext, ProbeUnavailable
from pgdoctor.probes.gpu.health import cpu_list, gpu_probe, read_all, sysfs_bus_id
from pgdoctor.probes.gpu.nvml import (
    ERROR_REASONS,
    FUNCTIONS,
    LiveBackend,
    NvmlError,
    RecordingBackend,
    ReplayBackend,
    UnrecordedCall,
    translate_error,
)
from pgdoctor.probes.sysfs import FsReader
from tests.helpers import make_nvml_fixtures as fixtures
from tests.helpers.paths import FIXTURES

NVML_DIR = FIXTURES / "nvml"

# Every NVML error class pgdoctor distinguishes, by its return code in nvml.h.
CLASS_CASES = [
    (pynvml.NVML_ERROR_NOT_SUPPORTED, "NVMLError_NotSupported", Reason.NOT_SUPPORTED),
    (pynvml.NVML_ERROR_NO_PERMISSION, "NVMLError_NoPermission", Reason.NO_PERMISSION),
    (pynvml.NVML_ERROR_GPU_IS_LOST, "NVMLError_GpuIsLost", Reason.GPU_LOST),
    (pynvml.NVML_ERROR_LIBRARY_NOT_FOUND, "NVMLError_LibraryNotFound", Reason.LIBRARY_NOT_FOUND),
    (pynvml.NVML_ERROR_DRIVER_NOT_LOADED, "NVMLError_DriverNotLoaded", Reason.DRIVER_NOT_LOADED),
    (pynvml.NVML_ERROR_FUNCTION_NOT_FOUND, "NVMLError_FunctionNotFound", Reason.FUNCTION_NOT_FOUND),
    (pynvml.NVML_ERROR_INVALID_ARGUMENT, "NVMLError_InvalidArgument", Reason.ERROR),
    (pynvml.NVML_ERROR_UNKNOWN, "NVMLError_Unknown", Reason.ERROR),
    (pynvml.NVML_ERROR_TIMEOUT, "NVMLError_Timeout", Reason.ERROR),
]


def fake_pynvml(**behaviour: Any) -> types.SimpleNamespace:
    """A module double for LiveBackend: the real pynvml error classes, scripted functions."""
    handles = {i: f"handle{i}" for i in range(4)}
    ns = types.SimpleNamespace(
        NVMLError=pynvml.NVMLError,
        nvmlInit=lambda: None,
        nvmlShutdown=lambda: None,
        nvmlDeviceGetHandleByIndex=lambda i: handles[i],
    )
    for name, fn in behaviour.items():
        setattr(ns, name, fn)
    return ns


def raising(code: int) -> Any:
    def fn(*args: Any) -> Any:
        raise pynvml.NVMLError(code)

    return fn


@pytest.mark.parametrize("code,cls,reason", CLASS_CASES, ids=[c[1] for c in CLASS_CASES])
def test_every_nvml_error_class_maps_to_its_reason(code: int, cls: str, reason: Reason) -> None:
    exc = pynvml.NVMLError(code)
    assert type(exc).__name__ == cls  # pynvml hands out the subclass for the code
    assert translate_error(exc, "nvmlDeviceGetTemperature").reason is reason
    live = LiveBackend(fake_pynvml(nvmlDeviceGetTemperature=raising(code)))
    live.init()
    with pytest.raises(NvmlError) as err:
        live.call("nvmlDeviceGetTemperature", 0, 0)
    assert err.value.reason is reason
    assert err.value.function == "nvmlDeviceGetTemperature"
    assert err.value.error_name == cls.removeprefix("NVMLError_")


def test_reason_table_covers_the_six_named_classes() -> None:
    assert set(ERROR_REASONS) == {
        "NotSupported",
        "NoPermission",
        "GpuIsLost",
        "LibraryNotFound",
        "DriverNotLoaded",
        "FunctionNotFound",
    }
    for name in ERROR_REASONS:
        assert hasattr(pynvml, f"NVMLError_{name}"), name


def test_live_backend_errors_on_handle_and_init_go_through_the_same_choke_point() -> None:
    lost = LiveBackend(fake_pynvml(nvmlDeviceGetHandleByIndex=raising(pynvml.NVML_ERROR_GPU_IS_LOST)))
    lost.init()
    with pytest.raises(NvmlError) as err:
        lost.call("nvmlDeviceGetName", 3)
    assert (err.value.reason, err.value.function) == (Reason.GPU_LOST, "nvmlDeviceGetHandleByIndex")
    broken = LiveBackend(fake_pynvml(nvmlInit=raising(pynvml.NVML_ERROR_DRIVER_NOT_LOADED)))
    with pytest.raises(NvmlError) as err:
        broken.init()
    assert err.value.reason is Reason.DRIVER_NOT_LOADED


def test_live_backend_old_binding_without_a_function_is_function_not_found() -> None:
    live = LiveBackend(fake_pynvml())  # no nvmlDeviceGetNumaNodeId attribute at all
    live.init()
    with pytest.raises(NvmlError) as err:
        live.call("nvmlDeviceGetNumaNodeId", 0)
    assert err.value.reason is Reason.FUNCTION_NOT_FOUND


def test_live_backend_unexpected_exception_in_one_field_is_an_error_value() -> None:
    def broken(h: Any) -> Any:
        raise TypeError("argument 2: wrong type")

    live = LiveBackend(fake_pynvml(nvmlDeviceGetSerial=broken))
    live.init()
    with pytest.raises(NvmlError) as err:
        live.call("nvmlDeviceGetSerial", 0)
    assert err.value.reason is Reason.ERROR and "TypeError" in err.value.detail


def test_live_backend_converts_structs_to_plain_values_and_maps_device_args() -> None:
    seen: list[tuple[Any, ...]] = []
    mem = types.SimpleNamespace(total=100, free=60, used=40)
    proc = types.SimpleNamespace(pid=7, usedGpuMemory=None)
    live = LiveBackend(
        fake_pynvml(
            nvmlDeviceGetMemoryInfo=lambda h: mem,
            nvmlDeviceGetComputeRunningProcesses=lambda h: [proc],
            nvmlDeviceGetPciInfo=lambda h: types.SimpleNamespace(busId=b"00000000:3B:00.0"),
            nvmlDeviceGetP2PStatus=lambda a, b, idx: seen.append((a, b, idx)) or 0,
        )
    )
    live.init()
    assert live.call("nvmlDeviceGetMemoryInfo", 1) == {"total": 100, "free": 60, "used": 40}
    assert live.call("nvmlDeviceGetComputeRunningProcesses", 1) == [{"pid": 7, "usedGpuMemory": None}]
    assert live.call("nvmlDeviceGetPciInfo", 0) == "00000000:3B:00.0"
    assert live.call("nvmlDeviceGetP2PStatus", 0, 2, 0) == 0
    assert seen == [("handle0", "handle2", 0)]  # two device arguments become handles, the enum stays


def test_live_backend_on_this_machine_without_a_driver_is_library_not_found() -> None:
    with pytest.raises(ProbeUnavailable) as err:
        gpu_probe(ProbeContext(env={}))
    assert err.value.reason is Reason.LIBRARY_NOT_FOUND
    assert err.value.detail == "NVML library not found (no NVIDIA driver)"


def test_replay_is_strict() -> None:
    replay = ReplayBackend({"nvmlDeviceGetCount()": 1})
    with pytest.raises(UnrecordedCall):
        replay.call("nvmlDeviceGetCount")  # before init
    replay.init()
    assert replay.call("nvmlDeviceGetCount") == 1
    with pytest.raises(UnrecordedCall, match=r"nvmlDeviceGetName\(0\)"):
        replay.call("nvmlDeviceGetName", 0)
    with pytest.raises(UnrecordedCall, match="not an NVML function"):
        replay.call("nvmlDeviceGetTemprature", 0, 0)  # a typo fails loudly, unlike a MagicMock


@pytest.mark.parametrize(
    "error,reason",
    [
        ("NotSupported", Reason.NOT_SUPPORTED),
        ("NoPermission", Reason.NO_PERMISSION),
        ("GpuIsLost", Reason.GPU_LOST),
        ("Unknown", Reason.ERROR),
    ],
)
def test_replay_injects_an_error_into_one_call(error: str, reason: Reason) -> None:
    replay = ReplayBackend({"nvmlDeviceGetTemperature(0,0)": 40, "nvmlDeviceGetTemperature(1,0)": 41})
    replay.inject("nvmlDeviceGetTemperature", 0, 0, error=error)
    replay.init()
    with pytest.raises(NvmlError) as err:
        replay.call("nvmlDeviceGetTemperature", 0, 0)
    assert err.value.reason is reason
    assert replay.call("nvmlDeviceGetTemperature", 1, 0) == 41


def test_replay_init_error_makes_the_probe_unavailable_with_a_plain_reason() -> None:
    ctx = ProbeContext(env={}, options={"nvml_backend": ReplayBackend({}, init_error="DriverNotLoaded")})
    with pytest.raises(ProbeUnavailable) as err:
        gpu_probe(ctx)
    assert err.value.reason is Reason.DRIVER_NOT_LOADED
    assert "driver not loaded" in err.value.detail


def _probe(replay: ReplayBackend, fs: FsReader | None = None) -> dict[tuple[str, Any, Any], Any]:
    ctx = ProbeContext(env={}, fs=fs or FsReader("/nonexistent"), options={"nvml_backend": replay})
    return {(m.key, m.scope.gpu_index, m.scope.link): m for m in gpu_probe(ctx)}


@pytest.fixture(scope="module")
def node8() -> dict[str, Any]:
    return json.loads((NVML_DIR / "h100_sxm_8gpu.json").read_text())


def test_probe_reads_every_field_of_eight_gpus(node8: dict[str, Any]) -> None:
    replay = ReplayBackend(node8["calls"])
    ms = _probe(replay)
    assert ms[("gpu.count", None, None)].value == 8
    assert ms[("gpu.driver_version", None, None)].value == "550.54.15"
    assert ms[("gpu.cuda_driver_version", None, None)].value == "12.4"
    g3 = {k[0]: m for k, m in ms.items() if k[1] == 3 and k[2] is None}
    assert g3["gpu.name"].value == "NVIDIA H100 80GB HBM3"
    assert g3["gpu.name"].scope.gpu_uuid == g3["gpu.uuid"].value
    assert g3["gpu.pci_bus_id"].value == "00000000:5D:00.0"
    assert g3["gpu.power.limit_w"].value == 700.0 and g3["gpu.power.limit_w"].unit == "W"
    assert (
        g3["gpu.memory.free_bytes"].value + g3["gpu.memory.used_bytes"].value
        == g3["gpu.memory.total_bytes"].value
    )
    assert g3["gpu.throttle.gpu_idle"].value is True and g3["gpu.throttle.hw_slowdown"].value is False
    assert g3["gpu.nvlink.count"].value == 18
    assert g3["gpu.cpu_affinity"].value == "0-55,112-167"
    assert g3["gpu.numa_node"].value == 0 and g3["gpu.lost"].value is False
    # H100 has no page retirement (row remapping replaced it): unavailable, not 0.
    assert g3["gpu.retired_pages.dbe"].value == Unavailable(
        Reason.NOT_SUPPORTED, "nvmlDeviceGetRetiredPages: NotSupported"
    )
    assert ms[("gpu.nvlink.errors.crc_flit", 3, "17")].value == 0
    topo = ms[("gpu.topology", None, None)].value
    assert len(topo) == 28
    assert {"a": 0, "b": 4, "ancestor": "system", "p2p_read": "ok", "p2p_nvlink": "ok"} in topo
    # Every recorded call was needed: the fixture holds nothing the probe does not ask.
    assert set(replay.log) == set(node8["calls"])


def test_every_function_the_probe_calls_exists_in_pynvml(node8: dict[str, Any]) -> None:
    used = {key.split("(")[0] for key in node8["calls"]}
    assert used <= set(FUNCTIONS)
    missing = [f for f in FUNCTIONS if not hasattr(pynvml, f)]
    assert not missing, missing


def test_a_lost_gpu_stops_being_queried_and_the_others_are_read(node8: dict[str, Any]) -> None:
    replay = ReplayBackend(node8["calls"])
    replay.inject("nvmlDeviceGetTotalEccErrors", 2, 0, 0, error="GpuIsLost")
    ms = _probe(replay)
    assert ms[("gpu.lost", 2, None)].value is True
    assert ms[("gpu.temp_c", 2, None)].value.reason is Reason.GPU_LOST
    assert not [c for c in replay.log if c.startswith("nvmlDeviceGetTemperature(2,")]
    assert not [c for c in replay.log if c.startswith("nvmlDeviceGetTopologyCommonAncestor(2,")]
    assert ms[("gpu.temp_c", 3, None)].value == 33
    assert ms[("gpu.lost", 3, None)].value is False


def test_unsupported_and_forbidden_fields_are_unavailable_not_zero(node8: dict[str, Any]) -> None:
    replay = ReplayBackend(node8["calls"])
    replay.inject("nvmlDeviceGetPowerUsage", error="NotSupported")
    replay.inject("nvmlDeviceGetRemappedRows", 1, error="NoPermission")
    ms = _probe(replay)
    assert ms[("gpu.power.draw_w", 0, None)].value.reason is Reason.NOT_SUPPORTED
    for key in ("gpu.remap.correctable", "gpu.remap.uncorrectable", "gpu.remap.pending", "gpu.remap.failed"):
        assert ms[(key, 1, None)].value.reason is Reason.NO_PERMISSION
    assert ms[("gpu.remap.pending", 0, None)].value is False


def test_nvlink_absent_and_unreadable(node8: dict[str, Any]) -> None:
    calls = fixtures.calls_for([fixtures.GpuSpec(nvlink_links=0), fixtures.GpuSpec(bus="00000000:2A:00.0")])
    replay = ReplayBackend(calls)
    replay.inject("nvmlDeviceGetNvLinkState", 1, 0, error="NoPermission")
    ms = _probe(replay)
    assert ms[("gpu.nvlink.count", 0, None)].value == 0  # a PCIe card: no links is a fact
    assert ms[("gpu.nvlink.count", 1, None)].value.reason is Reason.NO_PERMISSION


def test_numa_node_falls_back_to_sysfs_on_old_drivers(tmp_path: Path) -> None:
    calls = fixtures.calls_for([fixtures.GpuSpec(bus="00000000:3B:00.0")])
    (tmp_path / "sys/bus/pci/devices/0000:3b:00.0").mkdir(parents=True)
    (tmp_path / "sys/bus/pci/devices/0000:3b:00.0/numa_node").write_text("1\n")
    replay = ReplayBackend(calls)
    replay.inject("nvmlDeviceGetNumaNodeId", 0, error="FunctionNotFound")
    m = _probe(replay, FsReader(tmp_path))[("gpu.numa_node", 0, None)]
    assert (m.value, m.source) == (1, "sysfs:/sys/bus/pci/devices/0000:3b:00.0/numa_node")


def test_recording_backend_round_trips_through_replay(node8: dict[str, Any]) -> None:
    inner = ReplayBackend(node8["calls"])
    inner.inject("nvmlDeviceGetSerial", 5, error="NoPermission")
    rec = RecordingBackend(inner)
    rec.init()
    first = read_all(rec, ProbeContext(env={}))
    fixture = json.loads(json.dumps(rec.fixture("test")))
    assert fixture["calls"]["nvmlDeviceGetSerial(5)"] == {"nvml_error": "NoPermission"}
    replay = ReplayBackend(fixture["calls"])
    replay.init()
    again = read_all(replay, ProbeContext(env={}))
    assert [m.to_json() for m in first] == [m.to_json() for m in again]


def test_helpers() -> None:
    assert cpu_list([0b1011, 0, 1]) == "0-1,3,128"
    assert cpu_list([0]) == ""
    assert sysfs_bus_id("00000000:3B:00.0") == "0000:3b:00.0"


def test_committed_nvml_recordings_and_code_fixtures_are_current() -> None:
    """The fixtures are generated: regenerate with `python -m tests.helpers.make_nvml_fixtures`."""
    for name, gpus in (
        ("h100_sxm_8gpu.json", fixtures.h100_sxm_node(8)),
        ("h100_pcie_2gpu.json", fixtures.h100_pcie_pair()),
    ):
        committed = json.loads((NVML_DIR / name).read_text())
        assert committed["calls"] == fixtures.calls_for(gpus), name
    from tests.helpers import gpu_codes

    assert gpu_codes.main(check_only=True) == []


def test_pgdoctor_help_does_not_import_pynvml_or_torch() -> None:
    code = (
        "import sys, pgdoctor.probes as p; p.load_all(); import pgdoctor.checks as c; c.load_all(); "
        "print('pynvml' in sys.modules, 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["False", "False"], out.stderr


def _pci_device(root: Path, bdf: str, vendor: str, cls: str, driver: str | None) -> None:
    d = root / "sys/bus/pci/devices" / bdf
    d.mkdir(parents=True)
    (d / "vendor").write_text(vendor + "\n")
    (d / "class").write_text(cls + "\n")
    if driver:
        target = root / "sys/bus/pci/drivers" / driver
        target.mkdir(parents=True, exist_ok=True)
        (d / "driver").symlink_to(target)


def test_pci_probe_counts_gpus_not_switches_or_passthrough(tmp_path: Path) -> None:
    from pgdoctor.probes.gpu.pci import gpu_pci

    _pci_device(tmp_path, "0000:18:00.0", "0x10de", "0x030200", "nvidia")
    _pci_device(
        tmp_path, "0000:2a:00.0", "0x10de", "0x030200", None
    )  # driver failed to bind: still a GPU here
    _pci_device(tmp_path, "0000:3a:00.0", "0x10de", "0x030200", "vfio-pci")  # given to a VM
    _pci_device(tmp_path, "0000:05:00.0", "0x10de", "0x068000", None)  # NVSwitch
    _pci_device(tmp_path, "0000:00:00.0", "0x8086", "0x060000", None)
    out = {m.key: m.value for m in gpu_pci(ProbeContext(env={}, fs=FsReader(tmp_path)))}
    assert out == {"gpu.pci.count": 2, "gpu.pci.bus_ids": ["0000:18:00.0", "0000:2a:00.0"]}
    with pytest.raises(ProbeUnavailable) as err:
        gpu_pci(ProbeContext(env={}, fs=FsReader(tmp_path / "empty")))
    assert err.value.reason is Reason.NOT_PRESENT
