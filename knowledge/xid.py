"""NVIDIA Xid codes: what each means, how bad it is, and what to do about it.

Pure data plus a parser for the kernel's `NVRM: Xid` lines, shared by the live GPU probe (which
reads the kernel log) and the log diagnoser (which reads logs people paste). Meanings and actions
follow NVIDIA's Xid catalog and GPU debug guidelines (docs.nvidia.com/deploy/xid-errors and
.../gpu-debug-guidelines), condensed to one decision: who has to act.

Actions (closed set):
  none         informational, or a consequence of another error already reported
  application  the job itself did something wrong (bad address, killed context); fix or restart it
  reset        the GPU needs a reset (nvidia-smi -r, or a reboot where that is not possible)
  reboot       the node needs a reboot (the GPU is gone from the bus or the driver is wedged)
  drain        take the node out of the pool and open a hardware ticket (likely RMA)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Optional

XidSeverity = Literal["info", "warn", "fail"]
XidAction = Literal["none", "application", "reset", "reboot", "drain"]
ACTIONS: tuple[XidAction, ...] = ("none", "application", "reset", "reboot", "drain")
SEVERITIES: tuple[XidSeverity, ...] = ("info", "warn", "fail")


@dataclass(frozen=True)
class XidInfo:
    code: int
    meaning: str
    severity: XidSeverity
    action: XidAction


def _t(code: int, meaning: str, severity: XidSeverity, action: XidAction) -> tuple[int, XidInfo]:
    return code, XidInfo(code, meaning, severity, action)


XID_TABLE: dict[int, XidInfo] = dict(
    [
        _t(
            8,
            "GPU stopped processing (channel timeout); usually a hung kernel or driver problem",
            "warn",
            "reset",
        ),
        _t(
            13,
            "Graphics engine exception: an illegal instruction or out-of-range access in a kernel",
            "warn",
            "application",
        ),
        _t(
            31,
            "GPU memory page fault: a kernel touched an invalid address (illegal memory access)",
            "warn",
            "application",
        ),
        _t(32, "Invalid or corrupted push buffer stream (PCIe corruption or driver bug)", "fail", "reset"),
        _t(38, "Driver firmware error", "fail", "reset"),
        _t(
            43,
            "GPU stopped processing: the context was killed after a fault in the application",
            "info",
            "application",
        ),
        _t(45, "Preemptive cleanup after an earlier error or a killed process", "info", "none"),
        _t(48, "Double-bit (uncorrectable) ECC error in GPU memory", "fail", "reset"),
        _t(56, "Display engine error", "warn", "reset"),
        _t(57, "Error programming video memory interface", "fail", "drain"),
        _t(61, "Internal micro-controller breakpoint or warning (PMU)", "warn", "reset"),
        _t(62, "Internal micro-controller halt (PMU)", "fail", "reset"),
        _t(
            63,
            "ECC page retirement or row remapping recorded; takes effect after a GPU reset",
            "warn",
            "reset",
        ),
        _t(64, "ECC page retirement or row remapping could not be recorded", "fail", "drain"),
        _t(68, "Video processor (NVDEC) exception", "warn", "reset"),
        _t(69, "Graphics engine class error", "warn", "application"),
        _t(74, "NVLink error: a link reported a fatal or recovery-requiring error", "fail", "reset"),
        _t(79, "GPU has fallen off the bus: it no longer answers on PCIe", "fail", "reboot"),
        _t(92, "High single-bit ECC error rate", "warn", "drain"),
        _t(
            94,
            "Contained ECC error: the affected application was stopped, other work continues",
            "warn",
            "reset",
        ),
        _t(95, "Uncontained ECC error: every application on the GPU is affected", "fail", "reset"),
        _t(109, "Context switch timeout", "warn", "application"),
        _t(119, "GSP RPC timeout: the GPU System Processor stopped answering the driver", "fail", "reset"),
        _t(120, "GSP error: the GPU System Processor reported a fault", "fail", "reset"),
        _t(121, "C2C (chip-to-chip) link corrected error", "warn", "none"),
        _t(
            140,
            "Unrecovered ECC error: uncorrectable memory error the driver could not contain",
            "fail",
            "reset",
        ),
        _t(143, "GPU initialization failure", "fail", "reboot"),
        _t(154, "GPU recovery action changed: the driver asks for a reset or a reboot", "fail", "reboot"),
        # Newer catalogue entries (Hopper/Blackwell drivers): NVLink units, repair and retirement.
        _t(46, "GPU stopped processing (engine hang)", "fail", "reset"),
        _t(122, "SPI PMU RPC read failure", "warn", "reset"),
        _t(123, "SPI PMU RPC write failure", "warn", "reset"),
        _t(124, "SPI PMU RPC erase failure", "warn", "reset"),
        _t(
            137,
            "NVLink error: a link reported an access (privilege or fabric address) fault",
            "fail",
            "reset",
        ),
        _t(144, "NVLink error in the SAW unit of a link", "fail", "reset"),
        _t(145, "NVLink error in the RLW unit of a link", "fail", "reset"),
        _t(146, "NVLink error in the TLW unit of a link", "fail", "reset"),
        _t(147, "NVLink error in the TREX unit of a link", "fail", "reset"),
        _t(148, "NVLink error in the NVLPW unit of a link", "fail", "reset"),
        _t(149, "NVLink error in the NETIR unit of a link (fabric)", "fail", "reset"),
        _t(150, "NVLink error in the MSE unit of a link", "fail", "reset"),
        _t(156, "Resource retirement event: part of the GPU was retired", "warn", "reset"),
        _t(157, "Resource retirement failure", "fail", "drain"),
        _t(158, "GPU fatal timeout", "fail", "reset"),
        _t(160, "GPU memory marked for repair; the repair takes effect after a reset", "warn", "reset"),
        _t(171, "Uncorrectable ECC error in GPU DRAM", "fail", "reset"),
        _t(172, "Uncorrectable ECC error in on-chip SRAM", "fail", "reset"),
    ]
)


def describe_xid(code: int) -> Optional[XidInfo]:
    """The table's entry, or None for a code the table does not know (report it as unknown)."""
    return XID_TABLE.get(code)


@dataclass(frozen=True)
class XidEvent:
    """One `NVRM: Xid` line: the code, which GPU (PCI bus id), which process, and the driver's text."""

    code: int
    pci_bus_id: str
    pid: Optional[int]
    process_name: str
    message: str

    @property
    def info(self) -> Optional[XidInfo]:
        return describe_xid(self.code)


# The driver prints `NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, <text>`; older drivers
# omit name= or pid=, and a kernel-context event prints pid='<unknown>', name=<unknown>.
# MIG adds the GPU instance ("(PCI:0000:01:00 GPU-I:05)"); a paste may redact the bus ("(PCI:...)").
_XID_RE = re.compile(
    r"NVRM: Xid \((?:PCI:)?(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-7])?|[^)\s]*)"
    r"(?: GPU-I:\d+)?\): "
    r"(?P<code>\d+)"
    r"(?:, pid=(?P<pid>'[^']*'|[^,\s]*))?"
    r"(?:, name=(?P<name>[^,]*))?"
    r"(?:,\s*(?P<msg>.*))?$"
)


def parse_xid_line(line: str) -> Optional[XidEvent]:
    """The Xid event on this line (any prefix before `NVRM:` is ignored), or None."""
    m = _XID_RE.search(line.rstrip("\r\n"))
    if not m:
        return None
    pid_text = (m.group("pid") or "").strip("'")
    name = (m.group("name") or "").strip()
    if len(m.group("code")) > 6:
        return None
    return XidEvent(
        code=int(m.group("code")),
        pci_bus_id=m.group("bus").lower(),
        pid=int(pid_text) if pid_text.isdigit() else None,
        process_name="" if name == "<unknown>" else name,
        message=(m.group("msg") or "").strip(),
    )


_CAUSED_BY = re.compile(r"caused by previous Xid (\d{1,6})")


def caused_by(event: XidEvent) -> Optional[int]:
    """The earlier Xid that a cleanup Xid (43, 45) names as its cause ("... caused by previous Xid 149")."""
    m = _CAUSED_BY.search(event.message)
    return int(m.group(1)) if m else None
