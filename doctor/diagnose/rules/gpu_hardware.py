"""gpu_hardware: what the driver and the CUDA runtime say about a failing GPU.

Formats: kernel log "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen
off the bus." (meaning from pgdoctor.knowledge.xid); "NVRM: GPU 0000:3b:00.0: GPU has fallen off the
bus." / "NVRM: The NVIDIA GPU 0000:3b:00.0 (PCI ID: 10de:20b0) installed in this system has
fallen off the bus and is not responding to commands."; CUDA runtime error strings
(cudaGetErrorString): "uncorrectable ECC error encountered", "an illegal memory access was
encountered", "unspecified launch failure", "an illegal instruction was encountered",
"misaligned address", also inside NCCL's "Cuda failure '...'".
"""

from __future__ import annotations

import re

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit, event
from pgdoctor.knowledge.xid import parse_xid_line

_OFF_BUS = re.compile(r"(?:GPU (?P<a>[0-9a-fA-F:.]+)[: ].*?|NVIDIA GPU (?P<b>[0-9a-fA-F:.]+) .*?)fallen off the bus")
_ECC = re.compile(r"uncorrectable ECC error", re.I)
_ILLEGAL = re.compile(r"an illegal memory access was encountered|unspecified launch failure|"
                      r"an illegal instruction was encountered|misaligned address|cudaErrorIllegalAddress|"
                      r"cudaErrorLaunchFailure")
# Xids that mean the memory is bad (48 DBE, 63/64 row remapping, 94/95 contained/uncontained ECC)
_ECC_XIDS = frozenset({48, 63, 64, 94, 95})


def parse(hit: Hit) -> list[Event]:
    t = hit.text
    if "Xid" in t:
        x = parse_xid_line(t)
        if x is not None:
            info = x.info
            facts = {"xid": x.code, "pci_bus_id": x.pci_bus_id, "xid_meaning": info.meaning if info else "unknown Xid",
                     "xid_severity": info.severity if info else "warn", "xid_action": info.action if info else "none"}
            if x.pid is not None:
                facts["pid"] = x.pid
            if x.process_name:
                facts["process"] = x.process_name
            code = C.GPU_OFF_BUS if x.code == 79 else C.GPU_ECC if x.code in _ECC_XIDS else C.GPU_XID
            msg = f"Xid {x.code} on GPU {x.pci_bus_id}: {facts['xid_meaning']}"
            if info and info.action == "application":
                msg += " (usually caused by the application, e.g. a kernel bug or bad memory access)"
            return [event(hit, code.code, msg, facts, dedupe=(code.code, x.pci_bus_id, x.code))]
    m = _OFF_BUS.search(t)
    if m:
        bus = (m.group("a") or m.group("b") or "").lower()
        return [event(hit, C.GPU_OFF_BUS.code, f"GPU {bus} has fallen off the bus (no longer answers on PCIe)",
                      {"pci_bus_id": bus}, dedupe=(C.GPU_OFF_BUS.code, bus))]
    if _ECC.search(t):
        return [event(hit, C.GPU_ECC.code, "the CUDA runtime reports an uncorrectable ECC error",
                      {"cuda_error": "uncorrectable ECC error encountered"}, dedupe=(C.GPU_ECC.code, hit.rank))]
    m = _ILLEGAL.search(t)
    if m:
        _text, used = hit.block(3)
        return [event(hit, C.CUDA_ILLEGAL_ACCESS.code,
                      f"CUDA error: {m.group(0)} (often a software bug: an out-of-bounds index in a kernel or a "
                      "library; hardware only when Xid 13/31/43/48 or ECC errors accompany it)",
                      {"cuda_error": m.group(0)}, used, dedupe=(C.CUDA_ILLEGAL_ACCESS.code, hit.rank))]
    return []
