"""accel_faults: device faults and memory exhaustion in the shapes the older rows do not read: the NVSwitch
driver's SXid records, the Xid 74 NVLink text pasted without its NVRM record, the amdgpu kernel driver's
GPU page faults, an Xid named with its verb in a person's or an agent's summary, ONNX Runtime's arena
allocation failure, cgroup memory.events counters with OOM kills, and Windows' commit limit (WinError 1455).

Formats (read at their source):
- NVSwitch driver (open-gpu-kernel-modules src/common/nvswitch, NVSWITCH_PRINT_SXID): "nvidia-nvswitch3:
  SXid (PCI:0000:c3:00.0): 24007, Fatal, Link 30 sourcetrack timeout error"; "Non-fatal" records are
  counted by the switch and corrected (silent here). Its second line, "SXid (PCI:0000:aa:00.0): 24007,
  Severity 1 Engine instance 12 Sub-engine instance 00" (severity 1 = fatal, 0 = non-fatal), is read alone
  when a paste lost the first; the third ("24007, Data {0x...}") says nothing of its severity.
- RM's robust-channel recovery for a critical error ("NVRM: krcRcAndNotifyAllChannels_IMPL: RC all channels
  for critical error 79."), read as the Xid it names when the paste lost the Xid record.
- The Xid 74 message body (RM knvlink): "NVLink: fatal error detected on link 2(0x0, 0x0, 0x10000, ...)",
  pasted alone (the NVRM Xid record itself is rules/gpu_hardware.py's).
- amdgpu gmc_v9_0.c / gmc_v10_0.c / gmc_v11_0.c: "amdgpu 0000:c1:00.0: amdgpu: [gfxhub0] no-retry page
  fault (src_id:0 ring:24 vmid:8 pasid:32769, for process python pid 12 thread python pid 12)" ("retry",
  "[mmhub0]"; kernels 6.x print "[gfxhub] page fault (src_id:0 ring:24 vmid:8 pasid:200)" with no kind and the
  process on the next line), and gmc_v7/v8's "amdgpu 0000:03:00.0: GPU fault detected: 146 0x0c08ec0c".
- An Xid that a summary or a monitoring agent names with a verb ("Xid 79 detected on GPU 0000:3b:00.0",
  "XID 48 occurred", "got Xid 94 errors"), for the Xids that mean the hardware (tier 1, below a record).
- ONNX Runtime bfc_arena.cc AllocateRawInternal: "Failed to allocate memory for requested buffer of size
  1073741824" (the CUDA execution provider's arena; ORT 1.x).
- cgroup v2 memory.events / v1 memory.oom_control read back by a person or a job script: "oom_kill 3".
- TensorFlow gpu_device.cc EigenGpuStreamDevice::allocate: "Ran out of GPU memory when allocating 1294336000
  bytes for ..." (or its LOG(FATAL) "EigenAllocator for GPU ran out of memory when allocating N").
- NumPy _ArrayMemoryError: "Unable to allocate 184. MiB for an array with shape (64, 26) and data type
  float32" (host memory; TF wraps it as "Resource exhausted: MemoryError: Unable to allocate ...").
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.gpu_hardware import CLEANUP_XIDS, xid_code, xid_facts
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.knowledge.xid import describe_xid
from pgdoctor.model import lazy_re

# -- NVSwitch SXid -----------------------------------------------------------------------------------------
_SXID = lazy_re.compile(
    r"(?:nvidia-nvswitch(?P<sw>\d+): )?SXid \(PCI:(?P<bus>[0-9a-fA-F:.]+)\): (?P<sxid>\d{1,6}), "
    r"(?:(?P<sev>Fatal|Non-fatal|Non-Fatal)(?:, Link (?P<link>\d+))?(?P<rest>[^\n]*)|"
    # the record's second line (_nvswitch_dump_error_entry, error_nvswitch.c): "Severity %d Engine instance
    # %02d Sub-engine instance %02d", NVSWITCH_ERROR_SEVERITY_FATAL being 1; pasted without its first line
    r"Severity (?P<sevn>[01]) Engine instance (?P<eng>\d+))"
)


_SW = lazy_re.compile(r"nvidia-nvswitch(\d+)")


def _sxid(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("sev") != "Fatal" and m.group("sevn") != "1":
        return []  # counted and corrected by the switch: not a failure
    # the "nvidia-nvswitch3: " before the record reads as a host prefix (text/normalize.py)
    sw = m.group("sw")
    if sw is None:
        g = _SW.search(hit.line.host or "")
        sw = g.group(1) if g else None
    facts: dict[str, Any] = {
        "sxid": int(m.group("sxid")),
        "pci_bus_id": m.group("bus").lower(),
        "severity": "fatal",
    }
    if sw is not None:
        facts["nvswitch"] = int(sw)
    if m.group("link"):
        facts["nvlink"] = int(m.group("link"))
    what = (m.group("rest") or "").strip(" ,.")
    return [
        row.event(
            hit,
            f"{'NVSwitch ' + str(sw) if sw is not None else 'an NVSwitch'} ({facts['pci_bus_id']}) reported "
            f"fatal SXid {facts['sxid']}"
            + (f" on link {facts['nvlink']}" if "nvlink" in facts else "")
            + (f" ({what})" if what else "")
            + ": the NVLink fabric failed under the job",
            facts,
            dedupe=(row.code, facts["pci_bus_id"], facts["sxid"]),
        )
    ]


# -- the Xid 74 text pasted without its NVRM record ------------------------------------------------------
_NVLINK_FATAL = lazy_re.compile(r"NVLink: fatal error detected on link (\d+)")


def _nvlink_fatal(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "?" in hit.text:
        return None
    info = describe_xid(74)
    facts: dict[str, Any] = {
        "xid": 74,
        "nvlink": int(m.group(1)),
        "xid_meaning": info.meaning if info else "NVLink error",
        "xid_from": "NVLink text",
    }
    return [
        row.event(
            hit,
            f"NVLink fatal error on link {m.group(1)} (the driver's Xid 74): a link of the GPU failed",
            facts,
            dedupe=(row.code, "nvlink", m.group(1)),
        )
    ]


# -- the resource manager's robust-channel recovery for a critical error -----------------------------------
# RM's krc (kernel_rc.c; kgsp on GSP drivers 525-545) logs, after the Xid record or in its place when the
# paste lost it: "NVRM: krcRcAndNotifyAllChannels_IMPL: RC all channels for critical error 79." (older:
# "kgspRcAndNotifyAllChannels_IMPL: ..."); the number is the Xid (79 off the bus, 119/120 GSP, 154 ...).
_RC_CRITICAL = lazy_re.compile(r"RC all channels for critical error (\d{1,3})\b")


def _rc_critical(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "?" in hit.text:
        return None  # a question about the record
    xid = int(m.group(1))
    code = xid_code(xid)
    facts = {**xid_facts(xid), "xid_from": "rc recovery"}
    return [
        row.event(
            hit,
            f"the driver reset every channel of the GPU for critical error {xid} ({facts['xid_meaning']})",
            facts,
            tier=2 if xid in CLEANUP_XIDS else 0,
            code=code.code,
            dedupe=(code.code, "rc", xid),
        )
    ]


# -- amdgpu GPU page faults --------------------------------------------------------------------------------
_AMDGPU_PF = lazy_re.compile(
    r"\[(?P<hub>(?:gfx|mm)hub\d*)\] (?:(?P<kind>retry|no-retry) )?page fault \(src_id:\d+ ring:\d+ "
    r"vmid:(?P<vmid>\d+) pasid:(?P<pasid>\d+)(?:, for process (?P<proc>\S*) pid (?P<pid>\d+))?|"
    r"amdgpu [0-9a-fA-F:.]+: GPU fault detected: (?P<src>\d+) (?P<status>0x[0-9a-fA-F]+)"
)


def _amdgpu_pf(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("hub") and (m.group("vmid") == "0" or m.group("pasid") == "0"):
        # VMID 0 / PASID 0 is the kernel's own GART space (display, firmware, OpenCL's CPC client): no
        # process's fault; desktops log thousands of them while every job succeeds (ROCm issue 2766)
        return []
    facts: dict[str, Any] = {"runtime": "rocm", "reason": "gpu_page_fault"}
    if m.group("hub"):
        facts["hub"] = m.group("hub")
        if m.group("kind"):
            facts["fault"] = m.group("kind")
    if m.group("pid"):
        facts["pid"] = int(m.group("pid"))
        if m.group("proc"):
            facts["process"] = m.group("proc")
    return [
        row.event(
            hit,
            "the amdgpu driver caught a GPU page fault (a kernel read or wrote an address not mapped for "
            "it): ROCm's illegal memory access, a kernel or library bug far more often than the hardware",
            facts,
            # the runtime's own record ("Memory access fault by GPU node-N") says more when it is there
            tier=1,
            dedupe=(row.code, "amdgpu_pf"),
        )
    ]


# -- an Xid named with its verb in a summary ---------------------------------------------------------------
# Xids that mean the hardware (or the firmware) whatever the application did.
_HW_XIDS = frozenset(
    {48, 54, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120, 121, 123, 140, 143, 154, 171, 172}
)
_XID_VERB = lazy_re.compile(
    r"\b(?:Xids?|XIDs?)[ :#=]?(\d{1,3})\b[^?\n]{0,40}?\b(?:detected|occurred|reported|observed|errors?|"
    r"events?|raised|seen|logged)\b|"
    r"\b(?:detected|got|hit|saw|observed|reported|found)\b[^?\n]{0,20}?\b(?:Xids?|XIDs?)[ :#=]?(\d{1,3})\b"
)
_XID_QUESTION = lazy_re.compile(r"\?|\bwhat\b|\bmeans?\b|\bif\b|\bprint\(|\bdef\b|==")


def _xid_verb(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "NVRM" in hit.text or _XID_QUESTION.search(hit.text):
        return None
    xid = int(m.group(1) or m.group(2))
    if xid not in _HW_XIDS:
        return None
    info = describe_xid(xid)
    code = (
        C.GPU_OFF_BUS if xid == 79 else C.GPU_ECC if xid in {48, 63, 64, 94, 95, 140, 171, 172} else C.GPU_XID
    )
    facts: dict[str, Any] = {
        "xid": xid,
        "xid_meaning": info.meaning if info else "unknown Xid",
        "xid_from": "summary",
    }
    return [
        row.event(
            hit,
            f"the log names Xid {xid} ({facts['xid_meaning']})",
            facts,
            tier=1,
            code=code.code,
            dedupe=(code.code, "summary", xid),
        )
    ]


# -- ONNX Runtime's arena ----------------------------------------------------------------------------------
# The status names its function before the sentence; a terminal's wrap can cut the sentence after it.
_ORT_ARENA = lazy_re.compile(
    r"Failed to allocate memory for requested buffer of size (\d+)|"
    r"BFCArena::AllocateRawInternal\b.*\bFailed to alloc"
)
_ORT_SIZE = lazy_re.compile(r"requested buffer of size (\d+)")


def _ort_arena(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    size = m.group(1)
    if size is None:
        g = _ORT_SIZE.search(hit.block(3, sep="")[0])
        if g is None:
            return None
        size = g.group(1)
    n = int(size)
    return [
        row.event(
            hit,
            f"ONNX Runtime's memory arena could not allocate {n} bytes on the device (its BFC arena is full)",
            {"reported_by": "ONNX Runtime", "requested_bytes": n, "format": "onnxruntime"},
            dedupe=(row.code, hit.rank, "ort"),
        )
    ]


# -- TensorFlow 1.x-2.x's Eigen allocator on the GPU (gpu_device.cc EigenGpuStreamDevice) -----------
_TF_EIGEN = lazy_re.compile(
    r"Ran out of GPU memory when allocating (\d+) bytes for|"
    r"EigenAllocator for GPU ran out of memory when allocating (\d+)"
)


def _tf_eigen(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    n = int(m.group(1) or m.group(2))
    return [
        row.event(
            hit,
            f"TensorFlow ran out of GPU memory allocating {n} bytes for an op (its Eigen GPU allocator)",
            {"reported_by": "TensorFlow", "requested_bytes": n, "format": "tf_eigen"},
            dedupe=(row.code, hit.rank, "tf_eigen"),
        )
    ]


# -- NumPy's host allocation (numpy/core/_exceptions.py _ArrayMemoryError.__str__, 1.17+) -------------------
_NP_ALLOC = lazy_re.compile(
    r"Unable to allocate ([\d.]+ ?[KMGTPE]?i?B) for an array with shape (\([^)]*\))(?: and data type (\w+))?"
)


def _np_alloc(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"size": m.group(1), "shape": m.group(2), "reported_by": "NumPy"}
    if m.group(3):
        facts["dtype"] = m.group(3)
    return [
        row.event(
            hit,
            f"NumPy could not allocate {m.group(1)} of host memory for an array of shape {m.group(2)}",
            facts,
            dedupe=(row.code, hit.rank, "numpy"),
        )
    ]


# -- cgroup memory.events ----------------------------------------------------------------------------------
_CG_OOM_KILL = lazy_re.compile(r"^\s*oom_kill (\d+)\s*$")
_CG_CONTEXT = lazy_re.compile(r"memory\.events|memory\.oom_control|^\s*(?:oom|max|under_oom) \d+\s*$")


def _cg_oom_kill(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    n = int(m.group(1))
    if n == 0:
        return []
    near = [*hit.before(6, same_rank=False), *hit.after(3, same_rank=False)]
    if not any(_CG_CONTEXT.search(ln.text) for ln in near):
        return None
    return [
        row.event(
            hit,
            f"the job's memory cgroup counted {n} OOM kill(s) (memory.events oom_kill): the kernel killed a "
            "process of the job at its memory limit",
            {"oom_kills": n, "source": "cgroup memory.events"},
            dedupe=(row.code, "cgroup_oom_kill"),
        )
    ]


# -- DCGM diagnostics' failure messages (dcgmlib/dcgm_errors.h, DCGM 2.x-4.x) -------------------------------
# The ones the rows above and gpu_nvml.py do not already read: the memory test's miscompares
# (DCGM_FR_FAULTY_MEMORY, DCGM_FR_MEMORY_MISMATCH), an NVSwitch's fatal link errors
# (DCGM_FR_NVSWITCH_FATAL_ERROR), links down (DCGM_FR_NVLINK_DOWN, DCGM_FR_NVSWITCH_DOWN,
# DCGM_FR_GPU_EXPECTED_NVLINKS_UP) and a corrupt InfoROM found by the diagnostic (DCGM_FR_CORRUPT_INFOROM;
# nvidia-smi's own banner "WARNING: infoROM is corrupted at gpu 0000:.." is a warning jobs run through, pinned
# silent in tests/diagnose/test_diagnose_platform_families.py).
_DCGM = lazy_re.compile(
    r"Found (?P<faulty>\d+) faulty memory elements on GPU (?P<g1>\d+)|"
    r"A memory mismatch was detected on GPU (?P<g2>\d+)|"
    r"Detected fatal errors on NvSwitch (?P<sw>\d+) link (?P<swlink>\d+)|"
    r"GPU (?P<g3>\d+)'s NvLink link (?P<link>\d+) is currently down|"
    r"NvSwitch physical ID (?P<sw2>\d+)'s NvLink port (?P<port>\d+) is currently down|"
    r"(?:NvSwitch \d+ - )?Only (?P<up>\d+) NvLinks are up out of the expected (?P<exp>\d+)|"
    r"A corrupt InfoROM has been detected in GPU (?P<g4>\d+)"
)
# DCGM's health watch lists every link of a GPU without NVLink as down (a PCIe card, no bridge: NVIDIA/
# NVSentinel#1481, DCGM 3.3-4.4): quiet where the report says all of them or names a PCIe GPU model.
_DCGM_ALL_LINKS = lazy_re.compile(r"\(all \d+ links\)|\b[AHLV]\d+\w*[- ](?:\d+GB )?PCIe\b|-PCIE-")


def _dcgm(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    g = m.groupdict()
    gpu = next((g[k] for k in ("g1", "g2", "g3", "g4") if g[k]), None)
    facts: dict[str, Any] = {"reported_by": "DCGM"}
    if gpu is not None:
        facts["gpu"] = int(gpu)
    if g["faulty"] or g["g2"]:
        if g["faulty"]:
            facts["faulty_elements"] = int(g["faulty"])
        code, tier = C.GPU_ECC.code, 0
        msg = f"DCGM's memory test found GPU {gpu}'s memory returning wrong data: a failing HBM/GDDR"
    elif g["sw"]:
        facts.update(nvswitch=int(g["sw"]), nvlink=int(g["swlink"]))
        code, tier = C.NVSWITCH_FATAL.code, 0
        msg = f"DCGM detected fatal errors on NVSwitch {g['sw']} link {g['swlink']}: the NVLink fabric failed"
    elif g["g3"] or g["sw2"] or g["up"]:
        near = [*hit.before(12, False), hit.line, *hit.after(12, False)]
        if g["g3"] and any(_DCGM_ALL_LINKS.search(ln.text) for ln in near):
            return []
        if g["link"]:
            facts["nvlink"] = int(g["link"])
        if g["sw2"]:
            facts.update(nvswitch=int(g["sw2"]), port=int(g["port"]))
        if g["up"]:
            facts.update(nvlinks_up=int(g["up"]), nvlinks_expected=int(g["exp"]))
        code, tier = C.GPU_NVLINK_DOWN.code, 0
        msg = f"DCGM found NVLinks down ({clip(m.group(0), 90)})"
    else:
        code, tier = C.GPU_INFOROM.code, 1
        msg = (
            f"DCGM found the InfoROM of GPU {gpu} corrupted (the board's ECC and page-retirement records "
            "cannot be trusted)"
        )
    return [row.event(hit, msg, facts, tier=tier, code=code, dedupe=(code, "dcgm", gpu, m.group(0)[:40]))]


# The result table of NVIDIA's diagnostic, a hardware test marked failed: nvvs (DCGM 1.x, `nvvs --configless`:
# "Memory GPU6 ........ FAIL" with the reason under it, "*** Unable to create CUDA context"; a test run on
# all GPUs at once "Diagnostic ........ FAIL"); dcgmi diag (DCGM 2.x-3.x: "| GPU Memory | Fail - GPU: 6 |",
# "| SM Stress | Fail - All |", a second GPU's result on a row of its own under the test's, "|  | Fail - GPU:
# 0 |"; 4.x names the tests in lower case, "| memory | Fail |", and each GPU under it, "|  | GPU0: Fail |").
# The table's first bar is often taken by the paste's. Only the tests that exercise the device: the
# deployment checks (software, driver, persistence mode, environment) are set-up.
_HW_TESTS = (
    r"Memory|GPU Memory|Diagnostic|SM Stress|Targeted Stress|Targeted Power|Memory Bandwidth|PCIe|"
    r"Pulse Test|EUD|Memtest|Context Create|NVBandwidth|"
    r"memory|diagnostic|sm_stress|targeted_stress|targeted_power|memory_bandwidth|pcie|pulse_test|eud|"
    r"memtest|context_create|nvbandwidth"
)
_HW_TEST_NAME = lazy_re.compile(rf"^(?:{_HW_TESTS})$")
_DIAG_FAIL = lazy_re.compile(
    rf"(?<![\w ])\s*(?P<test>{_HW_TESTS})(?: GPU(?P<g1>\d+))? \.{{3,}} FAIL\b|"
    rf"(?:^|\|)\s*(?P<test2>{_HW_TESTS})\s*\|\s*Fail(?: - (?:GPU: (?P<g2>\d+)|All))?\s*(?:\||$)|"
    r"^\s*\|?\s*\|\s*(?:Fail - GPU: (?P<g3>\d+)|GPU(?P<g4>\d+): Fail\b)"
)
# A row of the table with its first cell filled (the test a continuation row belongs to).
_DIAG_ROW = lazy_re.compile(r"^\s*\|?\s*([A-Za-z][\w /-]*?)\s*\|")
_DIAG_WHY = lazy_re.compile(r"^\s*\*\*\*\s*(\S.*?)\s*$")


def _test_above(hit: Hit) -> Optional[str]:
    """The test a continuation row ("|  | Fail - GPU: 0 |") belongs to: the nearest row above with a name
    in its first cell, past the Warning / Info rows and their wrapped lines."""
    for ln in reversed(hit.before(16, same_rank=False)):
        r = _DIAG_ROW.match(ln.text)
        if r and r.group(1) not in ("Warning", "Info", "Error"):
            return r.group(1)
    return None


def _diag_fail(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    test = m.group("test") or m.group("test2") or _test_above(hit)
    if test is None or not _HW_TEST_NAME.match(test):
        return None  # a deployment check's row, or no test above it
    gpu = m.group("g1") or m.group("g2") or m.group("g3") or m.group("g4")
    facts: dict[str, Any] = {"reported_by": "DCGM diagnostic", "test": test}
    if gpu is not None:
        facts["gpu"] = int(gpu)
    why = next(
        (w.group(1) for w in (_DIAG_WHY.match(ln.text) for ln in hit.after(2, same_rank=False)) if w), ""
    )
    if why:
        facts["detail"] = why
    on = f"GPU {gpu}" if gpu is not None else "a GPU"
    return [
        row.event(
            hit,
            f"NVIDIA's diagnostic failed {on} in its {test} test"
            + (f" ({clip(why, 80)})" if why else "")
            + ": that board is faulty or wedged; reset it, run the diagnostic again, and have it serviced if "
            "it fails again",
            facts,
            dedupe=(row.code, gpu, test),
        )
    ]


# -- the cloud's own record of a reclaimed VM ----------
# EC2's StateReason of a reclaimed Spot instance in `aws ec2 describe-instances` ("Server.SpotInstance
# Termination: Spot instance termination"), Azure's Scheduled Events document ('"EventType": "Preempt"').
# (GCE's "compute.instances.preempted: Instance was preempted." is rules/external_kills.py's.)
_CLOUD_RECLAIM = lazy_re.compile(r"\bServer\.SpotInstanceTermination\b|\"EventType\":\s*\"Preempt\"")


def _cloud_reclaim(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    cloud = "aws" if "Spot" in m.group(0) else "azure"
    return [
        row.event(
            hit,
            f"the cloud ({cloud}) reclaimed the VM under the job (spot/preemptible capacity): its processes "
            "were ended from outside, not by a failure of their own",
            {"reason": "preemption", "preempted": True, "reporter": cloud},
            dedupe=(row.code, "cloud_reclaim"),
        )
    ]


SIGNATURES = (
    Signature(
        "nvswitch sxid",
        _SXID,
        _sxid,
        C.NVSWITCH_FATAL.code,
        anchors=(b"SXid (PCI:",),
        worth=(rb"SXid \(PCI:",),
        words=("sxid (pci:",),
    ),
    Signature(
        "nvlink fatal text",
        _NVLINK_FATAL,
        _nvlink_fatal,
        C.GPU_XID.code,
        anchors=(b"NVLink: fatal error",),
        worth=(rb"NVLink: fatal error",),
        words=("nvlink: fatal error",),
    ),
    Signature(
        "rc all channels for a critical error",
        _RC_CRITICAL,
        _rc_critical,
        C.GPU_XID.code,
        anchors=(b"RC all channels for critical error",),
        words=("rc all channels",),
    ),
    Signature(
        "amdgpu page fault",
        _AMDGPU_PF,
        _amdgpu_pf,
        C.CUDA_ILLEGAL_ACCESS.code,
        anchors=(b"page fault (src_id", b"GPU fault detected"),
        worth=(rb"page fault \(src_id", rb"GPU fault detected"),
        words=("page fault (src_id", "gpu fault detected"),
        anchor_from="the hub and kind before 'page fault (src_id' ('[gfxhub0] no-retry ')",
        examples=(
            "amdgpu 0000:c1:00.0: amdgpu: [gfxhub0] no-retry page fault (src_id:0 ring:24 vmid:8 "
            "pasid:32769, for process python pid 12 thread python pid 12)",
            "amdgpu 0000:03:00.0: GPU fault detected: 146 0x0c08ec0c",
        ),
    ),
    Signature(
        "xid named with a verb",
        _XID_VERB,
        _xid_verb,
        C.GPU_XID.code,
        anchors=(b"Xid", b"XID"),
        worth=(rb"\bXids? ?\d", rb"\bXIDs? ?\d", rb"\bXIDs?[:#=]\d", rb"\bXids?[:#=]\d"),
        words=("xid",),
        anchor_from="'Xid'/'XID' with its number, in either order with the verb",
        examples=(
            "Xid 79 detected on GPU 0000:3b:00.0",
            "XID 48 occurred on node gpu-07",
            "got Xid 94 errors",
        ),
    ),
    Signature(
        "onnxruntime arena",
        _ORT_ARENA,
        _ort_arena,
        C.CUDA_OOM.code,
        anchors=(b"Failed to allocate memory for requested buffer", b"AllocateRawInternal"),
        worth=(
            rb"Failed to allocate memory for requested buffer",
            rb"AllocateRawInternal\b.*\bFailed to alloc",
        ),
        words=("failed to allocate memory for requested buffer", "allocaterawinternal"),
    ),
    Signature(
        "tensorflow eigen gpu allocator",
        _TF_EIGEN,
        _tf_eigen,
        C.CUDA_OOM.code,
        anchors=(b"Ran out of GPU memory when allocating", b"EigenAllocator for GPU ran out of memory"),
        worth=(rb"Ran out of GPU memory when allocating", rb"EigenAllocator for GPU ran out of memory"),
        words=("ran out of gpu memory when allocating", "eigenallocator for gpu ran out of memory"),
    ),
    Signature(
        "numpy array allocation",
        _NP_ALLOC,
        _np_alloc,
        C.HOST_ALLOC_FAILED.code,
        anchors=(b"Unable to allocate ",),
        worth=(rb"Unable to allocate [\d.]+ ?[KMGTPE]?i?B for an array",),
        words=("for an array with shape",),
        anchor_from="'Unable to allocate ' before the size",
        examples=(
            "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 184. MiB for an array with shape "
            "(64, 26, 26, 3, 371) and data type float32",
        ),
    ),
    Signature(
        "dcgm diagnostic test failed",
        _DIAG_FAIL,
        _diag_fail,
        C.GPU_DIAG_FAILED.code,
        anchors=(b"... FAIL", b"Fail - ", b"| Fail", b": Fail"),
        worth=(rb"\.\.\. FAIL\b", rb"\|\s*Fail(?: - (?:GPU|All)|\s*(?:\||$))", rb"\|\s*GPU\d+: Fail\b"),
        words=("... fail", "fail - gpu", "fail - all", "| fail", ": fail"),
        anchor_from="the dotted leader or the table's '| Fail' after the test's name",
        examples=(
            "\t\tMemory GPU6 ....................................... FAIL",
            "| GPU Memory                | Fail - GPU: 6                                  |",
            "| SM Stress                 | Fail - All                                     |",
            "| memory                    | Fail                                           |",
        ),
    ),
    Signature(
        "dcgm diagnostic failure",
        _DCGM,
        _dcgm,
        C.GPU_ECC.code,
        anchors=(
            b"faulty memory elements",
            b"memory mismatch was detected",
            b"Detected fatal errors on NvSwitch",
            b"is currently down",
            b"NvLinks are up out of the expected",
            b"corrupt InfoROM",
        ),
        worth=(
            rb"faulty memory elements",
            rb"memory mismatch was detected",
            rb"Detected fatal errors on NvSwitch",
            rb"NvLink (?:link|port) \d+ is currently down",
            rb"NvLinks are up out of the expected",
            rb"corrupt InfoROM",
        ),
        words=(
            "faulty memory elements",
            "memory mismatch was detected",
            "fatal errors on nvswitch",
            "is currently down",
            "nvlinks are up out of",
            "corrupt inforom",
        ),
    ),
    Signature(
        "cloud vm reclaimed",
        _CLOUD_RECLAIM,
        _cloud_reclaim,
        C.RANK_EXITED.code,
        anchors=(b"SpotInstanceTermination", b"Preempt"),
        worth=(rb"SpotInstanceTermination", rb"\"Preempt\""),
        words=("spotinstancetermination", "preempt"),
    ),
    Signature(
        "cgroup oom_kill counter",
        _CG_OOM_KILL,
        _cg_oom_kill,
        C.HOST_OOM_KILLED.code,
        anchors=(b"oom_kill ",),
        worth=(rb"\boom_kill [1-9]",),
        words=("oom_kill ",),
    ),
)
parse = gated_reader(SIGNATURES)
