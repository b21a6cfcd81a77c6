"""gpu_hardware: what the kernel (the NVIDIA driver's NVRM records, PCIe AER, amdgpu) and the Kubernetes
device plugin say about a failing GPU.

Formats: kernel log "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus."
(meaning from pgdoctor.knowledge.xid); "NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus." / "NVRM: The
NVIDIA GPU 0000:3b:00.0 (PCI ID: 10de:20b0) installed in this system has fallen off the bus and is not
responding to commands.".

Also: an NVRM record wrapped over indented "NVRM:" continuation lines; Xid lines with a MIG instance
("(PCI:0000:01:00 GPU-I:05)") or a bus id the user redacted ("(PCI:...)"); cleanup Xids 43/45 that name
their cause ("caused by previous Xid 149": the finding is Xid 149) and are otherwise consequences; the
GSP's "Timeout waiting for RPC from GSP!" without its Xid 119; the kernel's PCIe AER records of an
uncorrected error ("AER: Uncorrected (Fatal) error received", "nvidia 0000:03:00.0: AER: can't
recover"); the amdgpu driver's ring timeout and GPU reset. NVML's and nvidia-smi's words are
rules/gpu_nvml.py's, the CUDA and ROCm runtimes' words for a device fault (ECC, NVLink, illegal access,
unknown error while kernels ran) rules/gpu_runtime.py's: the modules offered every hit next.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.vocabulary import _title
from pgdoctor.diagnose.signature import Signature, gate, read
from pgdoctor.diagnose.text.normalize import Line
from pgdoctor.knowledge.clip import clip
from pgdoctor.knowledge.xid import XidEvent, caused_by, describe_xid, parse_xid_line
from pgdoctor.model import lazy_re

_OFF_BUS = lazy_re.compile(
    r"(?:GPU (?:at )?(?P<a>[0-9a-fA-F:.]+)[: ].*?|NVIDIA GPU (?P<b>[0-9a-fA-F:.]+) .*?)fallen off the bus"
)
# Xids that mean the memory is bad (48 DBE, 63/64 row remapping, 94/95 contained/uncontained ECC,
# 140 unrecovered, 171/172 DRAM/SRAM uncorrectable)
_ECC_XIDS = frozenset({48, 63, 64, 94, 95, 140, 171, 172})
# Xids that only clean up after another error (43 a killed context, 45 preemptive teardown).
CLEANUP_XIDS = frozenset({43, 45})
# The resource manager's own status for a GPU that left the bus (RM's nvCheckOkFailedNoLog and friends):
# "NVRM: nvCheckOkFailedNoLog: Check failed: GPU lost from the bus [NV_ERR_GPU_IS_LOST] (0x0000000F)".
_RM_LOST = lazy_re.compile(r"GPU lost from the bus|NV_ERR_GPU_IS_LOST")
# nv.c's words for a GPU the driver found but could not bring up (power, VBIOS, BAR): "NVRM: GPU
# 0000:3b:00.0: GPU does not have the necessary power cables connected.", "... Failed to copy vbios to
# system memory.", "NVRM: This PCI I/O region assigned to your NVIDIA device is invalid".
_NOT_UP = lazy_re.compile(
    r"(?:GPU ([0-9a-fA-F]{4}:[0-9a-fA-F:.]+): )?(GPU does not have the necessary power cables connected|"
    r"Failed to copy vbios to system memory|This PCI I/O region assigned to your NVIDIA device is invalid)"
)
# A kernel record that the driver wrote over several lines: continuations are indented and carry
# "NVRM:" again but no timestamp of their own.
NVRM_CONT = lazy_re.compile(r"^\s+NVRM: ")
# GSP firmware that stopped answering, printed without its Xid 119 by some drivers:
# "NVRM: ... Timeout waiting for RPC from GSP!" / "Timeout after 45s of waiting for RPC response from GPU4
# GSP!"
_GSP = lazy_re.compile(
    r"NVRM: .*Timeout (?:after \d+s of )?waiting for RPC (?:response )?from (?:GPU\d+ )?GSP"
)


# The driver could not bring a GPU up (nv.c / RM): "NVRM: RmInitAdapter failed! (0x26:0xffff:1127)",
# "NVRM: rm_init_adapter failed for device bearing minor number 0", or says it must be reset first
# ("... [NV_ERR_RESET_REQUIRED]"). Hardware, or firmware state only a reset or a power cycle clears.
_INIT_FAILED = lazy_re.compile(
    r"RmInitAdapter failed!?(?: \(([0-9a-fx:]+)\))?|rm_init_adapter failed for device bearing "
    r"minor number (\d+)|NV_ERR_RESET_REQUIRED",
    re.I,
)


# nv.c's long messages start "NVRM: The NVIDIA GPU 0000:3b:00.0 (PCI ID: 10de:20b0)" and go on in lines
# that each carry the kernel's own prefix again ("[ 1000.12] NVRM: installed in this system has", "...
# NVRM: fallen off the bus and is not responding to commands."): not indented, so read by their start.
NV_GPU_START = lazy_re.compile(r"NVRM: The NVIDIA GPU ([0-9a-fA-F:.]+) \(PCI ID: ([0-9a-fA-F:]+)\)\s*$")
_NVRM_AT = lazy_re.compile(r"NVRM: (.*)$")


def nv_gpu_record(hit: Hit) -> tuple[str, list[Line]]:
    """An nv.c message that starts on the hit line, its prefixed continuation lines joined."""
    used = [hit.line]
    parts = [hit.text.strip()]
    for ln in hit.after(5):
        m = _NVRM_AT.search(ln.text)
        if not m or "Xid" in ln.text or "The NVIDIA GPU" in ln.text:
            break
        used.append(ln)
        parts.append(m.group(1).strip())
    return " ".join(parts), used


def _nvrm_record(hit: Hit) -> tuple[str, list[Line]]:
    if NV_GPU_START.search(hit.text):
        return nv_gpu_record(hit)
    used = [hit.line]
    for ln in hit.after(6):
        if not NVRM_CONT.match(ln.text):
            break
        used.append(ln)
    return " ".join(
        ln.text.strip().removeprefix("NVRM: ") if k else ln.text.strip() for k, ln in enumerate(used)
    ), used


def record(hit: Hit) -> tuple[str, list[Line]]:
    """The hit line, or the whole NVRM record it starts (continuation lines joined)."""
    if "NVRM" in hit.text and not NVRM_CONT.match(hit.text):
        return _nvrm_record(hit)
    return hit.text, [hit.line]


def record_reader(rows: Sequence[Signature]) -> Callable[[Hit], list[Event]]:
    """The parse() of a module whose rows read kernel records: the rows' gate words, then the whole
    record (an NVRM record wrapped over lines joined; its continuation lines are read with its first)."""
    words = gate(rows)

    def parse(hit: Hit) -> list[Event]:
        if words is not None and not hit.may_hold(words):
            return []
        if NVRM_CONT.match(hit.text):
            return []  # read with the record's first line
        return read(hit, rows, record(hit)[0])

    return parse


class _XidLine:
    """An Xid record, read by knowledge/xid's parser."""

    pattern = "NVRM: Xid (PCI:...): N, ... (knowledge/xid.py parse_xid_line)"

    @staticmethod
    def search(text: str) -> Optional[XidEvent]:
        return parse_xid_line(text) if "Xid" in text else None


# The faulting program's own stack printed right under an application-class Xid record (31 an MMU fault at
# a bad address, 13 a graphics exception, 43 the context killed after it): Python's frames ('File "...",
# line 12, in forward') or a sampler's / a server's abbreviated ones ("scheduler.py:3039  run_batch"). The
# record is then the driver's echo of that program's bad access (a kernel of its own, sgl-project/sglang's
# customised kernels), read with the program's error where it is shown, not a failing GPU. Records of
# several GPUs, or any hardware-class Xid in the paste, still say the hardware.
_APP_FRAME = lazy_re.compile(r'^\W{0,4}\s*(?:File "[^"]+", line \d+, in [\w<]|[\w.-]+\.py:\d+\s+\w+\s*$)')


def _application_stack_follows(hit: Hit, x: XidEvent, used: Sequence[Line]) -> bool:
    if x.info is None or x.info.action != "application":
        return False
    xids = [parse_xid_line(ln.text) for ln in hit.lines if "Xid" in ln.text]
    seen = [y for y in xids if y is not None]
    if any(y.info is None or y.info.action != "application" for y in seen):
        return False
    if len({y.pci_bus_id for y in seen}) > 1:
        return False
    after = [ln for ln in hit.after(len(used) + 3, same_rank=False) if ln not in used][:3]
    if not after or any("NVRM" in ln.text for ln in after):
        return False
    return any(_APP_FRAME.match(ln.text) for ln in after)


def _xid(row: Signature, hit: Hit, x: XidEvent) -> Optional[list[Event]]:
    _t, used = record(hit)
    if _application_stack_follows(hit, x, used):
        return []  # the program's own fault, its stack shown: no hardware finding
    root_xid = caused_by(x) if x.code in CLEANUP_XIDS else None
    if root_xid is not None:
        # "Xid 45 ... caused by previous Xid 149": the earlier Xid is the failure.
        info = describe_xid(root_xid)
        facts = {
            "xid": root_xid,
            "pci_bus_id": x.pci_bus_id,
            "reported_by_xid": x.code,
            "xid_meaning": info.meaning if info else "unknown Xid",
            "xid_severity": info.severity if info else "warn",
            "xid_action": info.action if info else "none",
        }
        if x.pid is not None:
            facts["pid"] = x.pid
        code = C.GPU_OFF_BUS if root_xid == 79 else C.GPU_ECC if root_xid in _ECC_XIDS else C.GPU_XID
        return [
            row.event(
                hit,
                f"Xid {root_xid} on GPU {x.pci_bus_id}: {facts['xid_meaning']} (named by the "
                f"Xid {x.code} cleanup that followed it)",
                facts,
                used,
                code=code.code,
                dedupe=(code.code, x.pci_bus_id, root_xid),
            )
        ]
    info = x.info
    facts = {
        "xid": x.code,
        "pci_bus_id": x.pci_bus_id,
        "xid_meaning": info.meaning if info else "unknown Xid",
        "xid_severity": info.severity if info else "warn",
        "xid_action": info.action if info else "none",
    }
    if x.pid is not None:
        facts["pid"] = x.pid
    if x.process_name:
        facts["process"] = x.process_name
    code = C.GPU_OFF_BUS if x.code == 79 else C.GPU_ECC if x.code in _ECC_XIDS else C.GPU_XID
    msg = f"Xid {x.code} on GPU {x.pci_bus_id}: {facts['xid_meaning']}"
    if info and info.action == "application":
        msg += " (usually caused by the application, e.g. a kernel bug or bad memory access)"
    # A cleanup Xid only follows another error: a consequence unless nothing else shows.
    tier = 2 if x.code in CLEANUP_XIDS else 0
    return [
        row.event(hit, msg, facts, used, tier=tier, code=code.code, dedupe=(code.code, x.pci_bus_id, x.code))
    ]


# NVIDIA's Kubernetes device plugin (internal/rm/health.go, and its older nvidia.go) logs the NVML Xid
# event it marks a GPU unhealthy for: "XidCriticalError: Xid=48 on Device=GPU-8f8e...; marking device as
# unhealthy." (older: "..., the device will go unhealthy.", "XidCriticalError: Xid=79, All devices will
# go unhealthy.").
_PLUGIN_XID = lazy_re.compile(r"XidCriticalError: Xid=(\d{1,3})(?: on Device=([\w-]+))?")
# An Xid named in a person's summary of dmesg ("`Xid 48 / 171`: uncorrectable double-bit ECC (DBE) in HBM",
# "Xid 79 (GPU has fallen off the bus)"): counted only beside words of the hardware fault it names, and
# below a log's own records (tier 1).
# Monitoring agents write it upper case ("XID 79(GPU has fallen off the bus) detected on PCI:0000:ae:00").
_PROSE_XID = lazy_re.compile(r"\b(?:Xids?|XIDs?) ?(\d{1,3})\b(?: ?/ ?(\d{1,3})\b)?")
# The driver's own record quoted without its "NVRM: Xid (PCI:...): " head names the fault by the unit's
# mnemonic after the number ("Xid 149, NETIR_LINK_DOWN Fatal XC0 i0 Link 14", "Xid 145, RLW_REMAP ...").
_PROSE_FAULT = lazy_re.compile(
    r"ECC|DBE|double[- ]bit|[Rr]ow [Rr]emap|fallen off|off the bus|NVLink|uncorrectable|GSP|HBM|"
    r"[Dd]rain and [Rr]eset|\b(?:Xid|XID) \d{1,3}, [A-Z]{2,}_[A-Z0-9_]{2,}\b"
)


# A question about, or a definition of, an Xid is not a report of one.
_PROSE_QUESTION = lazy_re.compile(r"\?|\bmeans?\b|\bprint\(|\bif\b")


def xid_code(xid: int) -> Any:
    """The finding code of an Xid (off the bus, an ECC-class error, or any other Xid)."""
    return C.GPU_OFF_BUS if xid == 79 else C.GPU_ECC if xid in _ECC_XIDS else C.GPU_XID


def xid_facts(xid: int) -> dict[str, Any]:
    """An Xid's number with its meaning, severity and action from the Xid table."""
    info = describe_xid(xid)
    return {
        "xid": xid,
        "xid_meaning": info.meaning if info else "unknown Xid",
        "xid_severity": info.severity if info else "warn",
        "xid_action": info.action if info else "none",
    }


def _plugin_xid(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    xid = int(m.group(1))
    facts = {**xid_facts(xid), "xid_from": "k8s-device-plugin"}
    if m.group(2):
        facts["gpu_uuid"] = m.group(2)
    code = xid_code(xid)
    return [
        row.event(
            hit,
            f"the Kubernetes device plugin marked GPU {m.group(2) or '(all)'} unhealthy for Xid {xid}: "
            f"{facts['xid_meaning']}",
            facts,
            tier=2 if xid in CLEANUP_XIDS else 0,
            code=code.code,
            dedupe=(code.code, m.group(2), xid),
        )
    ]


def _prose_xid(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "NVRM" in hit.text or not _PROSE_FAULT.search(hit.text) or _PROSE_QUESTION.search(hit.text):
        return None
    xid = int(m.group(1))
    facts = {**xid_facts(xid), "xid_from": "summary"}
    if m.group(2):
        facts["xids"] = [xid, int(m.group(2))]
    code = C.GPU_ECC if (xid in _ECC_XIDS or "ECC" in hit.text or "DBE" in hit.text) else xid_code(xid)
    return [
        row.event(
            hit,
            f"the log's summary names Xid {xid} ({facts['xid_meaning']}): {clip(hit.text.strip(), 100)}",
            facts,
            tier=1,
            code=code.code,
            dedupe=(code.code, "summary", xid),
        )
    ]


def _off_bus(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    bus = (m.group("a") or m.group("b") or "").lower().rstrip(":.")  # "GPU 0000:3b:00.0: GPU has ..."
    return [
        row.event(
            hit,
            f"GPU {bus} has fallen off the bus (no longer answers on PCIe)",
            {"pci_bus_id": bus},
            record(hit)[1],
            dedupe=(row.code, bus),
        )
    ]


# The same fault named without the kernel's record: a title, a monitoring agent's summary or a user's
# line ("GPU has fallen off the bus", "gpu fell off the bus after 3 hours", "GPUs falling off the bus").
_OFF_BUS_WORDS = lazy_re.compile(
    r"\b(?:GPU|gpu|Gpu|device)s? (?:has |have |had |keeps? |kept )?"
    r"(?:fallen|fell|falling|falls?) off (?:the bus|of the bus)"
)


def _off_bus_words(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if _PROSE_QUESTION.search(hit.text):  # "What does Xid 79 (GPU fallen off the bus) mean?", code
        return []
    return [
        row.event(hit, "A GPU has fallen off the bus (no longer answers on PCIe)", {}, dedupe=(row.code,))
    ]


# A thread's title (the whole paste, one short line: vocabulary's _title) that names a GPU as failing in a
# person's words: "One of the cluster GPUs is failing, it seems.", "GPU 3 died during training", "faulty GPU
# on node-7", "a bad GPU in the cluster". No healthy one-line print says a GPU is failing, dead or faulty;
# "GPU training failing" (a run, not a device) and a how-to question are not read.
_FAILING_WORDS = lazy_re.compile(
    r"(?i)\b(?:GPUs?|graphics cards?|video cards?)(?: ?\d+| \w+ \d+)? "
    r"(?:is|are|seems? to be|keeps?|has|have|was|went|got)? ?"
    r"(?:failing|faulty|defective|dead|died|broken|bad|degraded|unhealthy)\b(?! to\b)|"
    r"\b(?:failing|faulty|defective|dead|broken|bad|degraded|unhealthy) (?:GPU|graphics card)s?\b"
    r"(?! ?(?:utili|usage|perf|speed|memory|load|scal|support|compat|driver|kernel|code))|"
    # a GPU the node no longer lists ("gpu-2-12 has lost a GPU", "GPU lost"; zh "掉卡": a card dropped off)
    r"\b(?:has|have|had) lost (?:a |one |the |\d+ )?GPUs?\b|\AGPUs? (?:is |was |got )?lost\W*\Z|掉卡|显卡掉了"
)


def _failing_words(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _title(hit) or _PROSE_QUESTION.search(hit.text):
        return None
    return [
        row.event(
            hit,
            f'the report names a failing GPU ("{m.group(0)}") without the driver\'s record of the fault: '
            "check that GPU's ECC counters, remapped rows and Xid records",
            {"inferred_from": "title"},
            tier=1,
            dedupe=(row.code,),
        )
    ]


# The kernel's PCIe AER driver (drivers/pci/pcie/aer.c, err.c) across releases: "AER: Uncorrected (Fatal)
# error received: id=0010" (4.x), "AER: Multiple Uncorrected (Fatal) error received: 0000:00:03.0",
# "AER: Uncorrectable (Non-Fatal) error message received from 0000:63:00.0" (6.x), the detail line "PCIe Bus
# Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)", and err.c's "nvidia
# 0000:03:00.0: AER: can't recover (no error_detected callback)" (the NVIDIA driver has no AER handler: the
# GPU is lost). Corrected / Correctable errors are recovered by the link itself (not matched), Non-Fatal
# ones by the AER driver (read, silent).
_AER = lazy_re.compile(
    r"(?:AER: (?:Multiple )?|PCIe Bus Error: (?:severity=)?)Uncorrect(?:ed|able) \((Fatal|Non-Fatal)\)|"
    r"\bnvidia ([0-9a-fA-F]{4}:[0-9a-fA-F:.]+): AER: can't recover"
)
_AER_DEVICE = lazy_re.compile(r"\b(?:pcieport|nvidia) ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d)\b")


def _aer(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    dev = _AER_DEVICE.search(hit.text)
    facts: dict[str, Any] = {"pci_bus_id": (m.group(2) or (dev.group(1) if dev else "")).lower()}
    if m.group(2):
        facts["severity"] = "unrecoverable"
        what = (
            f"the kernel could not recover GPU {m.group(2)} from a PCIe error (the driver has no AER handler)"
        )
    elif m.group(1) == "Non-Fatal":
        return []  # the driver recovers those (and any device on the host reports them): not a failure
    else:
        facts["severity"] = "fatal"
        what = f"PCIe uncorrected (Fatal) error on {facts['pci_bus_id'] or 'a port'}"
    return [
        row.event(
            hit,
            f"{what}: the link, the riser or the board of a GPU failed (an Xid 79 follows when the GPU is "
            "lost)",
            facts,
            # below the driver's own record of the GPU (Xid 79)
            tier=1,
            dedupe=(row.code, facts["pci_bus_id"]),
        )
    ]


# The amdgpu kernel driver's side of a ROCm GPU hang (amdgpu_job.c): "[drm:amdgpu_job_timedout [amdgpu]]
# *ERROR* ring gfx timeout, signaled seq=1234, emitted seq=1236" (newer: "amdgpu 0000:03:00.0: [drm] *ERROR*
# ring gfx_0.0.0 timeout, ..."), then "amdgpu: GPU reset begin!". The runtime's "HW Exception by GPU
# node-N ... reason :GPU Hang" is the same event (gpu_runtime.py).
# Kernels 6.13+ print the timeout with dev_err, without "*ERROR*": "amdgpu 0000:c2:00.0: ring gfx_0.0.0
# timeout, signaled seq=166926, emitted seq=166928", then "Ring gfx_0.0.0 reset succeeded" (per-ring reset).
_AMDGPU_HANG = lazy_re.compile(
    r"\*ERROR\* ring (\S+) timeout|amdgpu(?: [0-9a-fA-F:.]+)?: (?:amdgpu: )?GPU reset begin|"
    r"amdgpu [0-9a-fA-F:.]+: ring (\S+) timeout, signaled seq"
)


# A reset that did not bring the GPU back (amdgpu_device.c, amdgpu_reset.c, amdgpu_psp.c, kernels 4.x-6.x):
# "amdgpu 0000:03:00.0: amdgpu: GPU mode1 reset failed", "ASIC reset failed with error, -121 for drm dev,
# 0000:83:00.0", "GPU reset(2) failed", "BACO reset failed", "GPU Recovery Failed: -110", and a reset that
# came back without the GPU's memory: "[drm] VRAM is lost due to GPU reset!" (kernels 4.19+; 4.18's
# amdgpu_device_gpu_recover printed "[drm:amdgpu_device_gpu_recover [amdgpu]] *ERROR* VRAM is lost!") (every
# buffer of the job is
# gone). "GPU reset succeeded, trying to resume" alone is a recovery and is not matched.
_AMDGPU_RESET_FAILED = lazy_re.compile(
    r"amdgpu(?: [0-9a-fA-F:.]+)?: (?:amdgpu: )?(?P<what>(?:GPU (?:mode\d |BACO )?|ASIC |BACO |mode\d )"
    r"reset(?:\(\d+\))? failed|GPU Recovery Failed)|(?P<vram>VRAM is lost(?: due to GPU reset|!))"
)


def _amdgpu_reset_failed(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("vram"):
        msg = "the amdgpu driver reset a GPU and its memory was lost: every process on it lost its buffers"
        facts = {"runtime": "rocm", "reason": "vram_lost_in_reset"}
    else:
        msg = (
            f"the amdgpu driver could not reset a GPU ({m.group('what')}): the GPU needs a node reboot or "
            "service before any job can use it"
        )
        facts = {"runtime": "rocm", "reason": "gpu_reset_failed", "what": m.group("what")}
    return [row.event(hit, msg, facts, tier=0, dedupe=(row.code, "amdgpu_reset"))]


def _amdgpu_hang(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    ring = m.group(1) or m.group(2)
    return [
        row.event(
            hit,
            f"the amdgpu driver found GPU ring {ring} hung and reset the GPU (a ROCm GPU hang)"
            if ring
            else "the amdgpu driver reset a GPU (a ROCm GPU hang or fault before it)",
            {"runtime": "rocm", "reason": "gpu_hang", **({"ring": ring} if ring else {})},
            # the reset alone follows some other fault: below a record that names it
            tier=0 if ring else 1,
            dedupe=(row.code, "amdgpu_hang"),
        )
    ]


def _gsp(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    info = describe_xid(119)
    facts = {
        "xid": 119,
        "xid_meaning": info.meaning if info else "GSP RPC timeout",
        "xid_from": "NVRM GSP record",
    }
    return [
        row.event(
            hit,
            f"the GPU's GSP firmware stopped answering the driver (as Xid 119): {facts['xid_meaning']}",
            facts,
            record(hit)[1],
            dedupe=(row.code, "gsp"),
        )
    ]


def _init_failed(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"nvrm": m.group(0)}
    if m.group(1):
        facts["rm_status"] = m.group(1)
    minor = m.group(2) or next(
        (g.group(2) for g in (_INIT_FAILED.search(ln.text) for ln in hit.after(4)) if g and g.group(2)), None
    )
    if minor is not None:
        facts["minor_number"] = int(minor)
    reset = "RESET_REQUIRED" in m.group(0).upper()
    return [
        row.event(
            hit,
            (
                "the driver says a GPU needs a reset before it can be used (NV_ERR_RESET_REQUIRED)"
                if reset
                else "the driver could not initialise a GPU (RmInitAdapter failed"
                + (f" {facts['rm_status']}" if "rm_status" in facts else "")
                + ")"
            )
            + (f"; /dev/nvidia{facts['minor_number']}" if "minor_number" in facts else "")
            + ": it is missing from the job until it is reset or serviced",
            facts,
            dedupe=(row.code, facts.get("minor_number")),
        )
    ]


def _rm_lost(row: Signature, hit: Hit, _m: re.Match[str]) -> Optional[list[Event]]:
    bus = PCI.search(record(hit)[0])
    facts = {"pci_bus_id": bus.group(1).lower() if bus else "", "nvrm": "NV_ERR_GPU_IS_LOST"}
    return [
        row.event(
            hit,
            f"the driver lost GPU {facts['pci_bus_id'] or '?'} from the bus (NV_ERR_GPU_IS_LOST): it no "
            "longer answers on PCIe",
            facts,
            record(hit)[1],
            dedupe=(row.code, facts["pci_bus_id"]),
        )
    ]


PCI = lazy_re.compile(r"\b([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.\d)?)\b")


def _not_up(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"nvrm": m.group(2)}
    if m.group(1):
        facts["pci_bus_id"] = m.group(1).lower()
    return [
        row.event(
            hit,
            f"the driver could not bring up GPU {facts.get('pci_bus_id', '?')} ({m.group(2)}): power, "
            "firmware or PCIe resources of the board",
            facts,
            record(hit)[1],
            dedupe=(row.code, facts.get("pci_bus_id")),
        )
    ]


SIGNATURES = (
    Signature(
        "xid",
        _XidLine(),
        _xid,
        C.GPU_XID.code,
        anchors=(b"VRM",),
        worth=(rb"NVRM",),
        words=("nvrm", "xid"),
        anchor_from="the kernel's 'NVRM: ' before every Xid record",
        examples=("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.",),
    ),
    Signature(
        "xid from the kubernetes device plugin",
        _PLUGIN_XID,
        _plugin_xid,
        C.GPU_XID.code,
        anchors=(b"XidCriticalError",),
        words=("xidcriticalerror",),
    ),
    Signature(
        "xid named in a summary",
        _PROSE_XID,
        _prose_xid,
        C.GPU_XID.code,
        anchors=(b"Xid", b"XID"),
        worth=(rb"\bXids? ?\d", rb"\bXIDs? ?\d"),
        words=("xid",),
    ),
    Signature(
        "fallen off the bus",
        _OFF_BUS,
        _off_bus,
        C.GPU_OFF_BUS.code,
        anchors=(b"VRM",),
        worth=(rb"NVRM",),
        words=("fallen off the bus",),
        anchor_from="the kernel's 'NVRM: ' before the record",
        examples=("NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.",),
    ),
    Signature(
        "fallen off the bus, in words",
        _OFF_BUS_WORDS,
        _off_bus_words,
        C.GPU_OFF_BUS.code,
        anchors=(b"off the bus", b"off of the bus"),
        words=("off the bus", "off of the bus"),
        examples=("GPU has fallen off the bus during training",),
    ),
    Signature(
        "title: a gpu named as failing",
        _FAILING_WORDS,
        _failing_words,
        C.GPU_REPORTED_FAILING.code,
        anchors=(
            b"ailing",
            b"aulty",
            b"efective",
            b"died",
            b"roken",
            b"egraded",
            b"nhealthy",
            b"is bad",
            b"are bad",
            b"went bad",
            b"is dead",
            b"are dead",
            b"was dead",
            b"ad GPU",
            b"ad gpu",
            b"ad graphics",
            b"lost",
            "掉卡".encode(),
            "显卡掉了".encode(),
        ),
        words=("gpu", "card", "掉卡", "显卡掉了"),
        anchor_from="the words that say the device fails, in their usual spellings (case aside)",
        examples=("One of the cluster GPUs is failing, it seems.",),
    ),
    Signature(
        "pcie uncorrected error",
        _AER,
        _aer,
        C.PCIE_UNCORRECTED.code,
        anchors=(b"AER: ", b"PCIe Bus Error"),
        worth=(rb"AER: ", rb"PCIe Bus Error"),
        words=("uncorrected", "uncorrectable", "can't recover"),
    ),
    Signature(
        "amdgpu ring timeout",
        _AMDGPU_HANG,
        _amdgpu_hang,
        C.GPU_HW_EXCEPTION.code,
        anchors=(b"ERROR* ring ", b"GPU reset begin", b"timeout, signaled seq"),
        worth=(rb"\*ERROR\* ring \S+ timeout", rb"GPU reset begin", rb"timeout, signaled seq"),
        words=("*error* ring", "gpu reset begin", "timeout, signaled seq"),
    ),
    Signature(
        "amdgpu reset failed",
        _AMDGPU_RESET_FAILED,
        _amdgpu_reset_failed,
        C.GPU_HW_EXCEPTION.code,
        anchors=(b"amdgpu", b"VRAM is lost"),
        worth=(rb"amdgpu.*(?:reset(?:\(\d+\))? failed|Recovery Failed)", rb"VRAM is lost"),
        words=("reset failed", ") failed", "recovery failed", "vram is lost"),
    ),
    Signature(
        "gsp timeout", _GSP, _gsp, C.GPU_XID.code, anchors=(b"VRM",), worth=(rb"NVRM",), words=("nvrm",)
    ),
    Signature(
        "gpu init failed",
        _INIT_FAILED,
        _init_failed,
        C.GPU_INIT_FAILED.code,
        anchors=(b"VRM",),
        worth=(rb"NVRM",),
        words=("rminitadapter", "rm_init_adapter", "nv_err_reset_required"),
        anchor_from="the kernel's 'NVRM: ' before the record",
        examples=(
            "[   38.773115] NVRM: RmInitAdapter failed! (0x26:0xffff:1127)",
            "[   38.773764] NVRM: rm_init_adapter failed for device bearing minor number 0",
            "NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required [NV_ERR_RESET_REQUIRED] "
            "(0x00000062)",
        ),
    ),
    Signature(
        "gpu lost from the bus (rm status)",
        _RM_LOST,
        _rm_lost,
        C.GPU_OFF_BUS.code,
        anchors=(b"VRM",),
        worth=(rb"NVRM",),
        words=("gpu lost from the bus", "nv_err_gpu_is_lost"),
        anchor_from="the kernel's 'NVRM: ' before the record",
        examples=(
            "NVRM: nvCheckOkFailedNoLog: Check failed: GPU lost from the bus [NV_ERR_GPU_IS_LOST] "
            "(0x0000000F) returned from intrServiceStall_HAL(pGpu, pIntr) @ intr.c:1249",
        ),
    ),
    Signature(
        "gpu not brought up",
        _NOT_UP,
        _not_up,
        C.GPU_INIT_FAILED.code,
        anchors=(b"VRM",),
        worth=(rb"NVRM",),
        words=("power cables", "copy vbios", "pci i/o region"),
        anchor_from="the kernel's 'NVRM: ' before the record",
        examples=(
            "NVRM: GPU 0000:3b:00.0: GPU does not have the necessary power cables connected.",
            "NVRM: GPU 0000:3b:00.0: Failed to copy vbios to system memory.",
        ),
    ),
)
# Every finding needs one of its row's words in the hit line (lower case; NVRM records first).
parse = record_reader(SIGNATURES)
