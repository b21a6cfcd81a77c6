"""gpu_nvml: what NVML and nvidia-smi say about a failing GPU.

Formats: nvidia-smi's and NVML's "Unable to determine the device handle for GPU0000:03:00.0: Unknown Error"
/ "... GPU is lost. Reboot the system to recover this GPU", the same status as pynvml's NVMLError_GpuIsLost,
go-nvml's ERROR_GPU_IS_LOST, NCCL's and slurmstepd's lower-case "nvml ... GPU is lost" (RUN243); NVML's
NVML_ERROR_RESET_REQUIRED ("GPU requires restart", NVMLError_ResetRequired) (RUN293); `nvidia-smi -q`'s
memory-health fields that say Yes, and the summary table's "Volatile Uncorr. ECC" cell above zero on a GPU's
row ("|   0  Tesla V100S-PCI...  Off  | 00000000:00:07.0 Off |                    2 |", every layout since
the 3xx drivers: the cell ends the GPU's first row; 0 on a healthy GPU, N/A without ECC; tier 1) (RUN242);
DCGM's diagnostic verdicts (an Xid it detected, uncorrectable memory errors, a fatal NVSwitch SXID). The
kernel's records (NVRM, AER, amdgpu) are rules/gpu_hardware.py's, offered every hit first.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.gpu_hardware import CLEANUP_XIDS, PCI, record, record_reader, xid_code, xid_facts
from pgdoctor.diagnose.signature import Signature
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

# nvidia-smi / NVML when the GPU stopped answering: "Unable to determine the device handle for
# GPU0000:03:00.0: Unknown Error", "...: GPU is lost. Reboot the system to recover this GPU"; newer
# nvidia-smi puts the GPU's index before its bus id ("... for GPU1: 0000:02:00.0: Unknown Error").
# nvidia-smi.exe in a Windows guest says "Unable to detect the device handle for GPU0000:B1:00.0: Unknown
# Error"; a user may mask the bus id ("for ******: Unknown Error").
_NO_HANDLE = lazy_re.compile(
    r"Unable to (?:determine|detect) the device handle for (?:GPU|gpu )?\s*(?:\d{1,2}: )?"
    r"([0-9a-fA-F:.]+|\*+): (Unknown Error|GPU is lost)"
)
# The same sentence cut before its status, as a thread's title or a paste's last line gives it ("Unable to
# determine the device handle for GPU", "... for GPU0000:03:00.0:"): nvidia-smi prints it only when
# nvmlDeviceGetHandleByIndex failed on a GPU the driver enumerated, and the released corpora hold it 17 times,
# every one a GPU that stopped answering (Unknown Error / GPU is lost). It must end its line (quotes and
# punctuation aside): a sentence that goes on says its status, read by the row above, or is prose.
_NO_HANDLE_CUT = lazy_re.compile(
    r"Unable to (?:determine|detect) the device handle for (?:GPU|gpu)(?![A-Za-z])\s*(?:\d{1,2}: ?)?"
    r"([0-9a-fA-F:.]*)[\s\"'`*.:]*$"
)
# The long wordings of the same two statuses (nvidia-settings' and go-nvml's / the k8s device plugin's
# error texts): "The GPU has fallen off the bus or has otherwise become inaccessible"
# (NVML_ERROR_GPU_IS_LOST), "The GPU requires a reset before it can be used again"
# (NVML_ERROR_RESET_REQUIRED), with or without "nvml: " before them.
_LOST = lazy_re.compile(
    r"\bGPU is lost\b|\b(?:NVML_)?ERROR_GPU_IS_LOST\b|NVMLError_GpuIsLost|"
    r"GPU has fallen off the bus or has otherwise become inaccessible"
)
# "GPU is lost. Reboot the system to recover this GPU" (nvidia-smi), as users quote it ("GPU is lost. Please
# reboot to recover the gpu"): the reboot sentence makes it the driver's status, not a word in prose.
_LOST_REBOOT = lazy_re.compile(r"GPU is lost\W{1,4}(?:Please )?[Rr]eboot\b")
# DCGM's "dcgmi nvlink --link-status" (dcgmi/Nvlink.cpp, DCGM 2.x-4.x): a "NvLink Link Status" table, then
# "gpuId N:" and one letter per link, "Key: Up=U, Down=D, Disabled=X, Not Supported=_". A link marked D is
# present and trained down (X is switched off on purpose, _ has no link).
_DCGMI_NVLINK = lazy_re.compile(r"NvLink Link Status")
_DCGMI_GPU = lazy_re.compile(r"^\s*gpuId (\d+):\s*$")
_DCGMI_LINKS = lazy_re.compile(r"^\s*([UDX_](?: [UDX_])*)\s*$")


def _dcgmi_nvlink(row: Signature, hit: Hit, _m: re.Match[str]) -> Optional[list[Event]]:
    down: dict[int, int] = {}
    gpu: Optional[int] = None
    for ln in hit.after(40, same_rank=False):
        g = _DCGMI_GPU.match(ln.text)
        if g:
            gpu = int(g.group(1))
            continue
        links = _DCGMI_LINKS.match(ln.text)
        if links and gpu is not None:
            n = links.group(1).split().count("D")
            if n:
                down[gpu] = n
            gpu = None
        elif "NvSwitches" in ln.text or "Key:" in ln.text:
            break
    if not down:
        return None
    gpus = ", ".join(f"GPU {g} ({n} links)" for g, n in sorted(down.items()))
    return [
        row.event(
            hit,
            f"dcgmi shows NVLinks Down on {gpus}: the links are present but not trained (a link, GPU or "
            "baseboard fault, or Fabric Manager not running); P2P and NCCL fall back to PCIe or fail",
            {"gpus_down": sorted(down), "links_down": sum(down.values()), "tool": "dcgmi"},
            dedupe=(row.code, "dcgmi_nvlink"),
        )
    ]


# nvidia-smi's "nvlink --status" (-s): a "GPU N: <name> (UUID: ...)" header, then "\t Link L: 25.781 GB/s" per
# trained link and "\t Link L: <inactive>" per link that is not up (driver 418-570). An inactive link beside
# active ones of the same GPU is a link down (a link, GPU or baseboard fault); a GPU without any active link
# is a PCIe card or a bridge left off, not read.
_SMI_INACTIVE = lazy_re.compile(r"^\s*Link (\d+): <inactive>\s*$")
_SMI_ACTIVE = lazy_re.compile(r"^\s*Link \d+: [\d.]+ [GM]B/s\s*$")
_SMI_GPU = lazy_re.compile(r"^\s*GPU (\d+): ")


def _smi_nvlink(row: Signature, hit: Hit, _m: re.Match[str]) -> Optional[list[Event]]:
    gpu: Optional[int] = None
    block = []
    for ln in reversed(hit.before(24, same_rank=False)):
        g = _SMI_GPU.match(ln.text)
        if g:
            gpu = int(g.group(1))
            break
        block.append(ln.text)
    for ln in hit.after(24, same_rank=False):
        if _SMI_GPU.match(ln.text):
            break
        block.append(ln.text)
    if not any(_SMI_ACTIVE.match(t) for t in block):
        return None
    links = sorted({int(x.group(1)) for t in [*block, hit.text] if (x := _SMI_INACTIVE.match(t))})
    where = f"GPU {gpu}" if gpu is not None else "a GPU"
    return [
        row.event(
            hit,
            f"nvidia-smi shows NVLink {', '.join(map(str, links))} of {where} <inactive> beside active "
            "links: "
            "those links did not train (a link, GPU or baseboard fault); P2P and NCCL lose their bandwidth",
            {"gpu": gpu, "links_inactive": links, "tool": "nvidia-smi nvlink"},
            dedupe=(row.code, "smi_nvlink", gpu),
        )
    ]


# NVML's NVML_ERROR_RESET_REQUIRED ("GPU requires restart"), as pynvml's exception or nvidia-smi prints it.
_NVML_RESET = lazy_re.compile(
    r"NVMLError_ResetRequired|NVML_ERROR_RESET_REQUIRED|GPU requires restart|"
    r"GPU requires a reset before it can be used again"
)
# `nvidia-smi -q`'s memory-health fields when they say Yes: "Remapping Failure Occurred : Yes" (the HBM ran
# out of spare rows: the GPU must be replaced), "Pending Page Blacklist : Yes" (a page retirement waits for
# a reset) and "Pending : Yes" under "Remapped Rows" (a row remap waits for a reset). "No" is every
# healthy GPU's answer and is not matched.
_SMI_MEMORY = lazy_re.compile(
    r"^\s*(Remapping Failure Occurred|Pending Page Blacklist|Pending)\s*:\s*Yes\s*$"
)

# nvidia-smi's table, a GPU's first row: index, name, Persistence-M | Bus-Id, Disp.A | Volatile Uncorr. ECC.
_SMI_ROW_ECC = lazy_re.compile(
    r"^\|\s*(?P<idx>\d{1,2})\s+(?P<name>\S[^|]*?)\s+(?:On|Off|TCC|WDDM)\s*\|\s*"
    r"(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s+(?:On|Off)\s*\|\s*(?P<ecc>\d{1,9})\s*\|"
)

# `nvidia-smi -q`'s error sections of a healthy GPU: the headings ("ECC Errors", "Xid Errors") and counters
# at zero ("SRAM Uncorrectable : 0", "ECC errors: 0", "Xid errors: none"). Read here so that no reader of
# failure words takes a heading for a failure; a counter above zero is not matched.
_SMI_QUIET = lazy_re.compile(
    r"^\s*(?:ECC|Xid) Errors\s*$|"
    r"^\s*[\w ()/-]{0,60}?(?:ECC|Xid|[Uu]ncorrectable|[Cc]orrectable)\b[\w ()/-]{0,40}?\s*[:=]\s*"
    r"(?:0|[Nn]one|N/A)\s*$"
)


# DCGM's diagnostic and health verdicts (dcgm_errors.h, the DCGM_FR_*_MSG texts dcgmi diag / health and
# the tools built on them print): an Xid the driver raised for a GPU ("Detected XID 79 for GPU 3"), the
# memory faults it found ("GPU 2 had uncorrectable memory errors and row remapping failed.", "... and 3 rows
# were remapped", "Pending page retirements together with a DBE were detected on GPU 1.", "GPU had an
# uncontained error (XID 95)", "GPU 0 had memory errors and row remappings are pending") and an NVSwitch's
# fatal SXID ("Detected fatal NvSwitch SXID 20034").
_DCGM_XID = lazy_re.compile(r"Detected XID (\d{1,3}) for GPU (\d+)|GPU had an uncontained error \(XID (95)\)")
_DCGM_MEMORY = lazy_re.compile(
    r"GPU (\d+) had (?:uncorrectable )?memory errors and (row remapping failed|\d+ rows were remapped|"
    r"row remappings are pending)|Pending page retirements together with a DBE were detected on GPU (\d+)"
)
_DCGM_SXID = lazy_re.compile(r"Detected fatal NvSwitch SXID (\d+)")


# DCGM's thermal and power verdicts (dcgmlib/dcgm_errors.h: DCGM 2.x-3.1 "Detected clock throttling due to
# thermal violation in GPU %u.", 3.2+ "Detected clocks event due to thermal violation in GPU %u." and the
# same for "power violation"; DCGM_FR_THERMAL_VIOLATIONS(_TS) "There were thermal violations totaling %.1f
# seconds for GPU %u" / "Thermal violations totaling %.1f seconds started at %.1f seconds into the test for
# GPU %u"; DCGM_FR_TEMP_VIOLATION "Temperature %lld of GPU %u exceeded user-specified maximum allowed
# temperature %lld" (3.x+: "of %s %u", GPU or HBM memory); DCGM_FR_THROTTLING_VIOLATION "Clocks are being
# throttled for GPU %u because of clock throttling starting %.1f seconds into the test." / 3.2+
# DCGM_FR_CLOCKS_EVENT_VIOLATION "Clocks event for GPU %u because of clocks event starting ..."), printed by
# dcgmi diag and by the health watch (modules/health/DcgmHealthWatch.cpp: "Detected a WARNING in health
# system Thermal: '...'"): RUN356. Its double-bit ECC verdicts (DCGM_FR_VOLATILE_DBE_DETECTED "Detected %d
# volatile double-bit ECC error(s) in GPU %u.", DCGM_FR_CUDA_DBE "CUDA APIs have indicated that a double-bit
# ECC error has occured on GPU %u."): RUN242.
_DCGM_THERMAL = lazy_re.compile(
    r"Detected (?:clock throttling|clocks event) due to (?P<kind>thermal|power) violation in GPU (?P<g1>\d+)|"
    r"(?:There were thermal violations|Thermal violations) totaling (?P<secs>\d+(?:\.\d+)?) seconds "
    r"(?:started at [\d.]+ seconds into the test)?(?: ?for GPU (?P<g2>\d+))?|"
    r"Temperature (?P<temp>\d+) of (?:GPU|HBM memory|\w+) (?P<g3>\d+) exceeded user-specified "
    r"maximum allowed temperature (?P<max>\d+)|"
    r"(?:Clocks are being throttled|Clocks event) for GPU (?P<g4>\d+) because of "
    r"(?:clock throttling|clocks event)|"
    r"Detected (?P<dbe>\d+) volatile double-bit ECC error\(s\) in GPU (?P<g5>\d+)|"
    r"CUDA APIs have indicated that a double-bit ECC error has occur+ed on GPU (?P<g6>\d+)"
)


# nvidia-smi -q's "Clocks Event Reasons" (drivers 535+; before: "Clocks Throttle Reasons") section with a
# hardware or thermal reason Active: "HW Slowdown : Active", "HW Thermal Slowdown : Active", "HW Power Brake
# Slowdown : Active" (the board's power-brake signal: a PSU or the chassis), "SW Thermal Slowdown : Active".
# "SW Power Cap : Active" is GPU Boost at its power limit under load, and "Not Active" is health: not matched.
_SMI_SLOWDOWN = lazy_re.compile(
    r"(?<![\w-])(HW Thermal Slowdown|HW Power Brake Slowdown|SW Thermal Slowdown|HW Slowdown)"
    r"\s*:\s*Active\s*$"
)


def _smi_slowdown(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    reason = m.group(1)
    return [
        row.event(
            hit,
            f"nvidia-smi shows the GPU slowed by {reason} (Active): "
            + (
                "the board's power-brake input fired (PSU or chassis power)"
                if "Power Brake" in reason
                else "it ran too hot or the hardware pulled its clocks down; check its cooling"
            ),
            {"nvidia_smi": f"{reason}: Active", "violation": reason.lower().replace(" ", "_")},
            # the umbrella line stands below the line that names the reason
            tier=1 if reason == "HW Slowdown" else 0,
            dedupe=(row.code, "nvidia-smi-slowdown"),
        )
    ]


_GPU_BEFORE = lazy_re.compile(r"\bGPU (\d+)\b[^.]*$")


def _dcgm_thermal(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    g = m.groupdict()
    found = next((g[k] for k in ("g1", "g2", "g3", "g4", "g5", "g6") if g[k] is not None), None)
    if found is None:
        # a quote cut before "for GPU N" (DCGM issue 242: "GPU X Thermal violations totaling 0.0 seconds
        # started at 30.0 seconds into the test"): the GPU named before it, if any
        before = _GPU_BEFORE.search(hit.text[: m.start()])
        found = before.group(1) if before else None
    gpu: Any = int(found) if found is not None else "?"
    facts: dict[str, Any] = {"reported_by": "DCGM"}
    if found is not None:
        facts["gpu"] = gpu
    if g["g5"] is not None or g["g6"] is not None:
        if g["dbe"]:
            facts["dbe_count"] = int(g["dbe"])
        return [
            row.event(
                hit,
                f"DCGM found double-bit (uncorrectable) ECC errors on GPU {gpu}: drain the GPU and reset "
                "it or "
                "reboot the node",
                facts,
                code=C.GPU_ECC.code,
                tier=0,
                dedupe=(C.GPU_ECC.code, "dcgm", str(gpu)),
            )
        ]
    kind = g["kind"] or "thermal"
    if kind == "power":
        # GPU Boost runs a loaded GPU into its power limit by design: DCGM's health watch warns on any such
        # moment (DCGM issue 285), NVSentinel suppresses it; the power cap is a setting, not a failure
        return []
    facts["violation"] = kind
    if g["secs"]:
        facts["violation_seconds"] = float(g["secs"])
    if g["temp"]:
        facts.update({"temperature_c": int(g["temp"]), "max_temperature_c": int(g["max"])})
    if g["g4"] is not None:
        facts["violation"] = "clocks_event"
    if g["g4"] is not None:
        msg = (
            f"DCGM found GPU {gpu}'s clocks held down during the test ({clip(m.group(0), 90)}): a thermal "
            "or power slowdown; check its cooling and power delivery"
        )
    else:
        msg = (
            f"DCGM found GPU {gpu} slowed by heat ({clip(m.group(0), 90)}): check its cooling (fans, "
            "airflow, thermal interface)"
        )
    return [row.event(hit, msg, facts, tier=0, dedupe=(row.code, "dcgm", gpu, kind))]


def _dcgm_xid(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    xid = int(m.group(1) or m.group(3))
    facts: dict[str, Any] = {**xid_facts(xid), "xid_from": "dcgm"}
    if m.group(2):
        facts["gpu"] = int(m.group(2))
    code = xid_code(xid)
    return [
        row.event(
            hit,
            f"DCGM detected Xid {xid} on GPU {m.group(2) or '?'}: {facts['xid_meaning']}",
            facts,
            tier=2 if xid in CLEANUP_XIDS else 0,
            code=code.code,
            dedupe=(code.code, "dcgm", m.group(2), xid),
        )
    ]


def _dcgm_memory(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    gpu = m.group(1) or m.group(3)
    what = m.group(2) or "pending page retirements with a double-bit error"
    pending = what == "row remappings are pending"
    return [
        row.event(
            hit,
            f"DCGM found uncorrectable memory errors on GPU {gpu} ({what}): "
            + (
                "a memory repair waits for a GPU reset"
                if pending
                else "drain the GPU and reset or replace it"
            ),
            {"gpu": int(gpu), "dcgm": what},
            # a repair pending is the trace of an error another record names (an Xid 48/63/94): below it
            tier=1 if pending else 0,
            dedupe=(row.code, "dcgm", gpu),
        )
    ]


def _dcgm_sxid(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"DCGM detected a fatal NVSwitch error (SXID {m.group(1)}): the NVLink fabric of this node "
            "failed",
            {"sxid": int(m.group(1)), "xid_from": "dcgm"},
            dedupe=(row.code, "sxid", m.group(1)),
        )
    ]


def _smi_quiet(row: Signature, hit: Hit, _m: re.Match[str]) -> Optional[list[Event]]:
    return []


def _smi_memory(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    field = m.group(1)
    if field == "Pending" and not any("Remapped Rows" in ln.text for ln in hit.before(4, False)):
        return None
    failed = field == "Remapping Failure Occurred"
    return [
        row.event(
            hit,
            "nvidia-smi says the GPU's memory ran out of spare rows (Remapping Failure Occurred: Yes): the "
            "GPU must be replaced"
            if failed
            else f"nvidia-smi says a memory repair waits for a GPU reset ({field}: Yes): uncorrectable "
            "memory errors happened on this GPU",
            {"nvidia_smi": f"{field}: Yes"},
            # a repair pending is the trace of an error another record names (Xid 48/63/94): below it
            tier=0 if failed else 1,
            dedupe=(row.code, "nvidia-smi", field),
        )
    ]


def _smi_row_ecc(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    count = int(m.group("ecc"))
    if count == 0:
        return []  # a healthy GPU's row: owned, so that no reader of words takes the table for a failure
    bus = m.group("bus").lower()
    return [
        row.event(
            hit,
            f"nvidia-smi counts {count} volatile uncorrectable ECC error(s) on GPU {m.group('idx')} "
            f"({m.group('name').strip()}, {bus}) since the driver loaded: its memory failed under a job; "
            "drain the node, read `nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT`, reset the GPU",
            {
                "gpu": int(m.group("idx")),
                "pci_bus_id": bus,
                "uncorrectable_ecc": count,
                "nvidia_smi": "table",
            },
            # the trace of an error another record names (Xid 48/63/94/95): below it
            tier=1,
            dedupe=(row.code, "smi-table", bus),
        )
    ]


def _no_handle(row: Signature, hit: Hit, m: Optional[re.Match[str]]) -> Optional[list[Event]]:
    bus = m.group(1).lower() if m else ""
    facts = {"pci_bus_id": bus, "nvml_error": m.group(2) if m else "GPU is lost"}
    return [
        row.event(
            hit,
            f"the driver cannot reach GPU {bus or '?'} ({facts['nvml_error']}): the GPU "
            "stopped answering (lost from the bus, or wedged); see dmesg for Xid 79 / PCIe AER errors",
            facts,
            dedupe=(row.code, bus),
        )
    ]


def _no_handle_cut(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    bus = m.group(1).strip(":.").lower()
    facts = {"pci_bus_id": bus, "nvml_error": "status cut from the paste"}
    return [
        row.event(
            hit,
            f"nvidia-smi could not get a handle for GPU {bus or '?'} (its status cut from the paste): "
            "the GPU stopped answering (lost from the bus, or wedged); see dmesg for Xid 79 / PCIe AER "
            "errors",
            facts,
            dedupe=(row.code, bus),
        )
    ]


def _lost(row: Signature, hit: Hit, _m: re.Match[str]) -> Optional[list[Event]]:
    t = record(hit)[0]
    # nvidia-smi, NVML (pynvml's NVMLError_GpuIsLost, slurmstepd's "NVML: ...", NCCL's "nvmlX() failed:",
    # go-nvml's bare "ERROR_GPU_IS_LOST")
    if not (
        "nvidia-smi" in t
        or "NVML" in t
        or "nvml" in t
        or "Unable to determine" in t
        or "_IS_LOST" in t
        or "otherwise become inaccessible" in t  # NVML's own long text for GPU_IS_LOST
        or _LOST_REBOOT.search(t)  # nvidia-smi's second sentence, quoted or reworded in prose
    ):
        return None
    return _no_handle(row, hit, None)


def _nvml_reset(row: Signature, hit: Hit, _m: re.Match[str]) -> Optional[list[Event]]:
    bus = PCI.search(hit.text)
    facts: dict[str, Any] = {"nvml_error": "GPU requires restart", "reason": "reset_required"}
    if bus:
        facts["pci_bus_id"] = bus.group(1).lower()
    return [
        row.event(
            hit,
            "NVML says a GPU must be reset before it can be used (GPU requires restart): it is missing "
            "from the job until it is reset or serviced",
            facts,
            dedupe=(row.code, facts.get("pci_bus_id")),
        )
    ]


SIGNATURES = (
    Signature(
        "nvidia-smi memory health",
        _SMI_MEMORY,
        _smi_memory,
        C.GPU_ECC.code,
        anchors=(b"Occurred", b"Blacklist", b"Pending"),
        worth=(rb"(?:Occurred|Blacklist|Pending)\s*:\s*Yes",),
        words=("remapping failure occurred", "pending page blacklist", "pending"),
    ),
    Signature(
        "nvidia-smi table uncorrectable ecc",
        _SMI_ROW_ECC,
        _smi_row_ecc,
        C.GPU_ECC.code,
        anchors=(b"Off |", b"On |"),
        worth=(rb"\.[0-7]\s+(?:On|Off)\s*\|\s*\d{1,9}\s*\|",),
        words=("off |", "on |"),
        anchor_from="the Disp.A cell's 'Off |' / 'On |' before the ECC count",
        examples=(
            "|   0  Tesla V100S-PCI...  Off  | 00000000:00:07.0 Off |                    2 |",
            "|   3  NVIDIA A100-SXM4-80GB          On  |   00000000:4E:00.0 On |                    1 |",
        ),
    ),
    Signature(
        "nvidia-smi error sections at zero",
        _SMI_QUIET,
        _smi_quiet,
        C.GPU_ECC.code,
        anchors=(b"ECC", b"Xid", b"orrectable"),
        worth=(rb"ECC|Xid|orrectable",),
        words=("ecc", "xid", "correctable"),
    ),
    Signature(
        "dcgm xid",
        _DCGM_XID,
        _dcgm_xid,
        C.GPU_XID.code,
        anchors=(b"Detected XID", b"uncontained error"),
        worth=(rb"Detected XID|uncontained error",),
        words=("detected xid", "uncontained error"),
    ),
    Signature(
        "dcgm memory errors",
        _DCGM_MEMORY,
        _dcgm_memory,
        C.GPU_ECC.code,
        anchors=(b"memory errors and", b"Pending page retirements"),
        worth=(rb"memory errors and|Pending page retirements",),
        words=("memory errors and", "pending page retirements"),
    ),
    Signature(
        "nvidia-smi slowdown active",
        _SMI_SLOWDOWN,
        _smi_slowdown,
        C.GPU_THERMAL_VIOLATION.code,
        anchors=(b"Slowdown",),
        worth=(rb"Slowdown\s*:\s*Active",),
        words=("slowdown",),
    ),
    Signature(
        "dcgm thermal and power",
        _DCGM_THERMAL,
        _dcgm_thermal,
        C.GPU_THERMAL_VIOLATION.code,
        anchors=(
            b"violation in GPU",
            b"thermal violations totaling",
            b"Thermal violations totaling",
            b"user-specified maximum",
            b"because of clock",
            b"volatile double-bit ECC",
            b"double-bit ECC error has",
        ),
        worth=(
            rb"violation in GPU|hermal violations totaling|user-specified maximum|because of clock|"
            rb"double-bit ECC error",
        ),
        words=("violation", "user-specified maximum", "because of clock", "double-bit ecc"),
    ),
    Signature(
        "dcgm nvswitch sxid",
        _DCGM_SXID,
        _dcgm_sxid,
        C.GPU_XID.code,
        anchors=(b"NvSwitch SXID",),
        worth=(rb"NvSwitch SXID",),
        words=("nvswitch sxid",),
    ),
    Signature(
        "nvml reset required",
        _NVML_RESET,
        _nvml_reset,
        C.GPU_INIT_FAILED.code,
        anchors=(b"ResetRequired", b"RESET_REQUIRED", b"requires restart", b"requires a reset"),
        worth=(rb"ResetRequired|RESET_REQUIRED|requires restart|requires a reset",),
        words=("resetrequired", "reset_required", "gpu requires restart", "gpu requires a reset"),
    ),
    Signature(
        "no device handle",
        _NO_HANDLE,
        _no_handle,
        C.GPU_OFF_BUS.code,
        anchors=(b"rror", b"GPU is lost"),
        worth=(rb"Error\b", rb"GPU is lost"),
        words=("device handle",),
    ),
    Signature(
        "no device handle, status cut",
        _NO_HANDLE_CUT,
        _no_handle_cut,
        C.GPU_OFF_BUS.code,
        anchors=(b"device handle for",),
        words=("device handle",),
    ),
    Signature(
        "dcgmi nvlink links down",
        _DCGMI_NVLINK,
        _dcgmi_nvlink,
        C.GPU_NVLINK_DOWN.code,
        anchors=(b"NvLink Link Status",),
        worth=(rb"NvLink Link Status",),
        words=("nvlink link status",),
    ),
    Signature(
        "nvidia-smi nvlink inactive",
        _SMI_INACTIVE,
        _smi_nvlink,
        C.GPU_NVLINK_DOWN.code,
        anchors=(b"<inactive>",),
        words=("<inactive>",),
    ),
    Signature(
        "gpu is lost",
        _LOST,
        _lost,
        C.GPU_OFF_BUS.code,
        anchors=(b"GPU is lost", b"GPU_IS_LOST", b"GpuIsLost", b"otherwise become inaccessible"),
        worth=(rb"GPU is lost", rb"GPU_IS_LOST", rb"GpuIsLost", rb"otherwise become inaccessible"),
        words=("gpu is lost", "gpu_is_lost", "gpuislost", "otherwise become inaccessible"),
    ),
)


# Every finding needs one of its row's words in the hit line (lower case).
parse = record_reader(SIGNATURES)
