"""The Xid table line by line against real kernel-log formats, and the kernel-log sources."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgdoctor.checks.base import Config
from pgdoctor.checks.gpu.xid import bus_key, xid_events
from pgdoctor.knowledge.xid import ACTIONS, SEVERITIES, XID_TABLE, describe_xid, parse_xid_line
from pgdoctor.model import Measurement, ProbeResult, Reason, Snapshot, Status, Unavailable
from pgdoctor.probes.base import ProbeContext
from pgdoctor.probes.commands import CommandNotFound, CommandOutput, ReplayRunner
from pgdoctor.probes.gpu.xid import gpu_xid
from pgdoctor.probes.sysfs import FsReader

# Lines in the formats the NVIDIA driver prints (open-gpu-kernel-modules, nvRmXid / the
# `NVRM: Xid (PCI:<domain:bus:device>): <code>, pid=<pid>, name=<comm>, <text>` format; older
# drivers omit name=, kernel-context events print pid='<unknown>'), with the texts of each code.
REAL_LINES: list[tuple[str, int, str, object, str, str, str]] = [
    # line, code, bus, pid, name, expected severity, expected action
    (
        "NVRM: Xid (PCI:0000:18:00): 13, pid=12345, name=python, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): "
        "Out Of Range Address",
        13,
        "0000:18:00",
        12345,
        "python",
        "warn",
        "application",
    ),
    (
        "NVRM: Xid (PCI:0000:01:00): 31, pid=2512, name=python3, Ch 00000008, intr 10000000. MMU Fault: ENGINE GRAPHICS "
        "GPCCLIENT_T1_0 faulted @ 0x7f3c_8d400000. Fault is of type FAULT_PDE ACCESS_TYPE_READ",
        31,
        "0000:01:00",
        2512,
        "python3",
        "warn",
        "application",
    ),
    (
        "NVRM: Xid (PCI:0000:3b:00): 43, pid=8812, name=pt_main_thread, Ch 00000010",
        43,
        "0000:3b:00",
        8812,
        "pt_main_thread",
        "info",
        "application",
    ),
    (
        "NVRM: Xid (PCI:0000:3b:00): 45, pid=8812, name=pt_main_thread, Ch 00000010",
        45,
        "0000:3b:00",
        8812,
        "pt_main_thread",
        "info",
        "none",
    ),
    (
        "NVRM: Xid (PCI:0000:b3:00): 48, pid=4521, name=python, An uncorrectable double bit error (DBE) has been "
        "detected on GPU in the framebuffer at partition 4, subpartition 0.",
        48,
        "0000:b3:00",
        4521,
        "python",
        "fail",
        "reset",
    ),
    (
        "NVRM: Xid (PCI:0000:3b:00): 61, pid='<unknown>', name=<unknown>, Internal micro-controller breakpoint/warning "
        "(PMU)",
        61,
        "0000:3b:00",
        None,
        "",
        "warn",
        "reset",
    ),
    (
        "NVRM: Xid (PCI:0000:3b:00): 62, pid='<unknown>', name=<unknown>, 0000000d 00000007 00000000",
        62,
        "0000:3b:00",
        None,
        "",
        "fail",
        "reset",
    ),
    (
        "NVRM: Xid (PCI:0000:86:00): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row (0x0000000000a3c2f0) "
        "Marked for Remapping, reset gpu to activate.",
        63,
        "0000:86:00",
        None,
        "",
        "warn",
        "reset",
    ),
    (
        "NVRM: Xid (PCI:0000:86:00): 64, pid='<unknown>', name=<unknown>, Row Remapper Error: Failed to remap row",
        64,
        "0000:86:00",
        None,
        "",
        "fail",
        "drain",
    ),
    (
        "NVRM: Xid (PCI:0000:3b:00): 68, pid=19877, name=ffmpeg, NVDEC0 Exception: Error code 00000004",
        68,
        "0000:3b:00",
        19877,
        "ffmpeg",
        "warn",
        "reset",
    ),
    (
        "NVRM: Xid (PCI:0000:3b:00): 69, pid=2214, name=python, Class Error: ChId 0010, Class 0000c6c0, Offset 00000d04, "
        "Data 00000000, ErrorCode 00000004",
        69,
        "0000:3b:00",
        2214,
        "python",
        "warn",
        "application",
    ),
    (
        "NVRM: Xid (PCI:0000:5d:00): 74, pid=3301, name=python, NVLink: fatal error detected on link 5(0x10000, 0x0, "
        "0x0, 0x0, 0x0, 0x0, 0x0)",
        74,
        "0000:5d:00",
        3301,
        "python",
        "fail",
        "reset",
    ),
    (
        "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.",
        79,
        "0000:3b:00",
        1234,
        "",
        "fail",
        "reboot",
    ),
    (
        "NVRM: Xid (PCI:0000:3b:00): 92, pid='<unknown>', name=<unknown>, High single-bit ECC error rate",
        92,
        "0000:3b:00",
        None,
        "",
        "warn",
        "drain",
    ),
    (
        "NVRM: Xid (PCI:0000:9a:00): 94, pid=77102, name=python, Contained: SM (0x1). RST: No, D-RST: No",
        94,
        "0000:9a:00",
        77102,
        "python",
        "warn",
        "reset",
    ),
    (
        "NVRM: Xid (PCI:0000:9a:00): 95, pid=77102, name=python, Uncontained: FBHUB. RST: Yes, D-RST: No",
        95,
        "0000:9a:00",
        77102,
        "python",
        "fail",
        "reset",
    ),
    (
        "NVRM: Xid (PCI:0000:ab:00): 119, pid=1830, name=nvidia-smi, Timeout after 6s of waiting for RPC response from "
        "GPU1 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20801702 0x4).",
        119,
        "0000:ab:00",
        1830,
        "nvidia-smi",
        "fail",
        "reset",
    ),
    (
        "NVRM: Xid (PCI:0000:ab:00): 120, pid='<unknown>', name=<unknown>, GSP task timeout @ pc:0x4c1c92e, "
        "task: 1",
        120,
        "0000:ab:00",
        None,
        "",
        "fail",
        "reset",
    ),
    (
        "NVRM: Xid (PCI:0000:db:00): 140, pid='<unknown>', name=<unknown>, An uncorrectable ECC error detected "
        "(possible firmware handling failure) DRAM:-1840691831, LTC:0, MMU:0, PCIE:0",
        140,
        "0000:db:00",
        None,
        "",
        "fail",
        "reset",
    ),
]

PREFIXES = [
    "",  # raw
    "[ 1234.567890] ",  # dmesg
    "[Sat Nov 29 21:00:01 2025] ",  # dmesg -T
    "2025-11-29T21:00:01.123456+00:00 gpu-node-01 kernel: ",  # journalctl -o short-iso
    "Nov 29 21:00:01 gpu-node-01 kernel: ",  # syslog
    "4,1207,1234567890,-;",  # /dev/kmsg record
]


@pytest.mark.parametrize(
    "line,code,bus,pid,name,severity,action", REAL_LINES, ids=[f"xid{r[1]}" for r in REAL_LINES]
)
@pytest.mark.parametrize("prefix", PREFIXES, ids=["raw", "dmesg", "dmesg-T", "journal", "syslog", "kmsg"])
def test_table_line_by_line(
    prefix: str, line: str, code: int, bus: str, pid: object, name: str, severity: str, action: str
) -> None:
    ev = parse_xid_line(prefix + line + "\n")
    assert ev is not None
    assert (ev.code, ev.pci_bus_id, ev.pid, ev.process_name) == (code, bus, pid, name)
    assert ev.message and "NVRM" not in ev.message
    info = describe_xid(ev.code)
    assert info is not None and ev.info == info
    assert (info.severity, info.action) == (severity, action)


def test_table_is_well_formed_and_covers_the_required_codes() -> None:
    required = {13, 31, 43, 45, 48, 61, 62, 63, 64, 68, 69, 74, 79, 92, 94, 95, 119, 120, 140}
    assert required <= set(XID_TABLE)
    for code, info in XID_TABLE.items():
        assert info.code == code and info.meaning
        assert info.severity in SEVERITIES and info.action in ACTIONS
    assert describe_xid(99999) is None


@pytest.mark.parametrize(
    "line",
    [
        "NVRM: GPU at PCI:0000:3b:00: GPU-5f1e0000-7c3a-4e21-9d55-a00000000001",
        "NVRM: GPU Board Serial Number: 1321123000001",
        "NVRM: Xid: not a real event",
        "nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver",
    ],
)
def test_other_nvrm_lines_are_not_events(line: str) -> None:
    assert parse_xid_line(line) is None


def test_older_driver_line_without_pid() -> None:
    ev = parse_xid_line("NVRM: Xid (0000:3b:00): 79, GPU has fallen off the bus.")
    assert ev is not None and (ev.code, ev.pid, ev.message) == (79, None, "GPU has fallen off the bus.")


NOW = 1_764_460_800.0


def _kmsg_root(tmp_path: Path, text: str, uptime: float = 7200.0) -> FsReader:
    (tmp_path / "dev").mkdir()
    (tmp_path / "proc").mkdir()
    (tmp_path / "dev/kmsg").write_text(text)
    (tmp_path / "proc/uptime").write_text(f"{uptime} 1.0\n")
    return FsReader(tmp_path)


def _ctx(fs: FsReader, runner: ReplayRunner, window: float = 3600.0) -> ProbeContext:
    return ProbeContext(
        env={}, fs=fs, commands=runner, clock=lambda: NOW, config={"gpu.xid_window_s": window}
    )


def _by_key(ms: list[Measurement]) -> dict[str, object]:
    return {m.key: m.value for m in ms}


def test_kmsg_records_inside_the_window_with_times(tmp_path: Path) -> None:
    # usec since boot: boot was 7200 s ago; one event 2 h old (outside a 1 h window), one 10 min old.
    text = (
        "6,100,1000000,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15\n"
        f"3,101,2000000,-;{REAL_LINES[12][0]}\n"
        " SUBSYSTEM=pci\n DEVICE=+pci:0000:3b:00.0\n"
        f"3,102,{int(6600e6)},-;{REAL_LINES[0][0]}\n"
    )
    out = _by_key(gpu_xid(_ctx(_kmsg_root(tmp_path, text), ReplayRunner({}))))
    assert out["gpu.xid.source"] == "/dev/kmsg"
    events = out["gpu.xid.events"]
    assert isinstance(events, list) and [e["code"] for e in events] == [13]
    assert events[0]["time_unix"] == pytest.approx(NOW - 600.0)
    assert events[0]["line"].startswith("NVRM: Xid (PCI:0000:18:00): 13")


def test_journal_is_used_when_kmsg_is_unreadable(tmp_path: Path) -> None:
    since = int(NOW - 3600)
    argv = ("journalctl", "-k", "-o", "short-unix", "--no-pager", "-q", "--since", f"@{since}")
    journal = (
        f"{NOW - 120:.6f} gpu-node-01 kernel: {REAL_LINES[16][0]}\n"
        f"{NOW - 60:.6f} gpu-node-01 kernel: nvidia-nvswitch: probe\n"
    )
    runner = ReplayRunner({argv: CommandOutput(argv, 0, journal, "")})
    out = _by_key(gpu_xid(_ctx(FsReader(tmp_path), runner)))  # no dev/kmsg under this root
    assert out["gpu.xid.source"] == "journalctl"
    assert [(e["code"], e["pci_bus_id"]) for e in out["gpu.xid.events"]] == [(119, "0000:ab:00")]


def test_dmesg_is_the_last_resort(tmp_path: Path) -> None:
    since = int(NOW - 3600)
    jargv = ("journalctl", "-k", "-o", "short-unix", "--no-pager", "-q", "--since", f"@{since}")
    dargv = ("dmesg", "--time-format", "iso")
    dmesg = (
        "2025-11-29T23:58:00,000000+00:00 " + REAL_LINES[4][0] + "\n"
        "2025-11-28T10:00:00,000000+00:00 " + REAL_LINES[12][0] + "\n"
    )
    runner = ReplayRunner(
        {jargv: CommandNotFound("journalctl: command not found"), dargv: CommandOutput(dargv, 0, dmesg, "")}
    )
    out = _by_key(gpu_xid(_ctx(FsReader(tmp_path), runner)))
    assert out["gpu.xid.source"] == "dmesg"
    assert [e["code"] for e in out["gpu.xid.events"]] == [48]  # the day-old 79 is outside the window


def test_no_readable_source_is_recorded_as_unavailable_events(tmp_path: Path) -> None:
    since = int(NOW - 3600)
    jargv = ("journalctl", "-k", "-o", "short-unix", "--no-pager", "-q", "--since", f"@{since}")
    dargv = ("dmesg", "--time-format", "iso")
    runner = ReplayRunner(
        {
            jargv: CommandOutput(
                jargv, 1, "", "No journal files were opened due to insufficient permissions."
            ),
            dargv: CommandOutput(dargv, 1, "", "dmesg: read kernel buffer failed: Operation not permitted"),
        }
    )
    events = _by_key(gpu_xid(_ctx(FsReader(tmp_path), runner)))["gpu.xid.events"]
    assert isinstance(events, Unavailable) and events.reason is Reason.NO_PERMISSION
    assert "/dev/kmsg" in events.detail and "journalctl" in events.detail and "dmesg" in events.detail


def _xid_snapshot(events: list[dict[str, object]]) -> Snapshot:
    probes = (
        ProbeResult("gpu_pci", "gpu", Status.PASSED, "", 0.0, (Measurement("gpu.pci.count", 1),)),
        ProbeResult(
            "gpu_xid",
            "gpu",
            Status.PASSED,
            "",
            0.0,
            (Measurement("gpu.xid.source", "dmesg"), Measurement("gpu.xid.events", events)),
        ),
    )
    return Snapshot("h", NOW, "0.1.0", "quick", probes)


def test_check_groups_by_code_and_gpu_and_reports_unknown_codes_as_warnings() -> None:
    events = [dict(code=79, pci_bus_id="0000:3b:00", pid=None, message="GPU has fallen off the bus.")] * 3
    events.append(dict(code=4242, pci_bus_id="0000:3b:00", pid=9, message="future code"))
    findings = xid_events(_xid_snapshot(events), Config())
    assert [(f.code, f.facts["xid"], f.facts["count"]) for f in findings] == [
        ("GPU120", 79, 3),
        ("GPU121", 4242, 1),
    ]
    assert "reboot" in findings[0].message


def test_bus_key_matches_kernel_and_nvml_spellings() -> None:
    assert bus_key("0000:3b:00") == bus_key("00000000:3B:00.0") == "0000:3b:00"
