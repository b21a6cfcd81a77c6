"""accel_hangs: a GPU or accelerator that hung under the job and was reset, or stayed wedged, as the
kernel drivers and runtimes outside NVIDIA's and AMD's say it (those are rules/gpu_hardware.py's and
gpu_runtime.py's).

Formats: Intel's xe and i915 kernel drivers (job timeouts, engine and GT resets, a GPU declared wedged) and
the runtimes' DEVICE_LOST statuses (Level Zero, SYCL's Unified Runtime, Vulkan) (RUN355); a Tenstorrent
board that reads all ones over PCIe, whose ARC firmware stopped answering or that tt-smi could not bring
back after a reset (RUN293); an Intel Gaudi that the habanalabs driver could not initialise (RUN293).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.gpu_hardware import PCI
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

# An Intel GPU's kernel driver finding a job hung and resetting the engine or the GPU, and the runtimes'
# word for a device gone after it (RUN355). Sources: Linux drivers/gpu/drm/xe/xe_guc_submit.c (6.8-6.16):
# "Timedout job: seqno=%u, guc_id=%d, flags=0x%lx" (6.8), "... lrc_seqno=%u, guc_id=%d, flags=0x%lx in %s
# [%d]" (6.10+, "in no process [-1]" for a kernel job), "Engine reset: engine_class=%s, logical_mask: 0x%x,
# guc_id=%d" (later with ", state=0x%x"), "Kernel-submitted job timed out", "VM job timed out on non-killed
# execqueue", "Engine memory CAT error [%d]: class=%s, ..." (a GPU page fault of the context); xe_gt.c
# "reset failed (%pe)!"; xe_device.c "CRITICAL: Xe has declared device %s as wedged."; i915
# (i915_gpu_error.c, gt/intel_reset.c, 3.x-6.x): "GPU HANG: ecode %d:%x:%08x, in %s [%d]" (3.x: ", reason:
# Ring hung, action: reset"), "Resetting chip for hang on rcs0", "Resetting chip for stopped heartbeat on
# rcs0", "Resetting rcs0 for preemption time out", "python[42] context reset due to GPU hang", "drm/i915:
# Resetting chip after gpu hang", "Failed to reset chip"; Level Zero / SYCL Unified Runtime / Vulkan status
# names: ZE_RESULT_ERROR_DEVICE_LOST, UR_RESULT_ERROR_DEVICE_LOST, VK_ERROR_DEVICE_LOST (vulkan.hpp's
# "vk::Queue::submit: ErrorDeviceLost"). The devcoredump and "reset queued / started / done" lines around
# them are the same event and are not matched.
_GPU_HANG = lazy_re.compile(
    r"Timedout job: seqno=(?P<seqno>\d+)(?:, lrc_seqno=\d+)?, guc_id=\d+(?:, flags=0x[0-9a-fA-F]+)?"
    r"(?: in (?P<proc>no process|[^\s\[]+) ?\[(?P<pid>-?\d+)\])?|"
    r"Engine reset: engine_class=(?P<engine>\w+)|"
    r"(?P<kjob>Kernel-submitted job timed out|VM job timed out on non-killed execqueue)|"
    r"Engine memory CAT error \[\d+\]: class=(?P<cat>\w+)|"
    r"GPU HANG: ecode [0-9a-fA-Fx]+:[0-9a-fA-Fx]+:[0-9a-fA-Fx]+"
    r"(?:, in (?P<iproc>[^\[\]]+?) ?\[(?P<ipid>\d+)\])?|"
    r"Resetting (?:chip )?(?:for (?:hang|stopped heartbeat) on (?P<ieng>\w+)|"
    r"(?P<ieng2>\w+) for preemption time out|after gpu hang)|context reset due to GPU hang|"
    r"(?P<fail>\[drm\] (?:Tile\d+: )?GT\d+: reset failed|Failed to reset chip|declared device \S+ as wedged)|"
    r"(?P<lost>(?:ZE|UR|VK)_(?:RESULT_)?ERROR_DEVICE_LOST|ErrorDeviceLost)"
)


_XE_JOB_PROC = lazy_re.compile(r"Timedout job: seqno=\d+[^\[\]]*? in ([^\s\[]+) ?\[(\d+)\]")


def _gpu_hang(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    g = m.groupdict()
    t = hit.text
    facts: dict[str, Any] = {"reason": "gpu_hang"}
    bus = PCI.search(t)
    if bus:
        facts["pci_bus_id"] = bus.group(1).lower()
    if g["lost"]:
        facts["driver"] = {"Z": "level_zero", "U": "sycl_ur"}.get(g["lost"][0], "vulkan")
        facts["status"] = g["lost"]
        msg = (
            f"the GPU runtime says the device was lost ({g['lost']}): the GPU hung or was reset under the job"
        )
    else:
        xe = (
            bool(g["seqno"] or g["engine"] or g["kjob"] or g["cat"])
            or "GT" in (g["fail"] or "")
            or "wedged" in t
        )
        facts["driver"] = "xe" if xe and "i915" not in t else "i915"
        engine = g["engine"] or g["cat"] or g["ieng"] or g["ieng2"]
        if engine:
            facts["engine"] = engine
        proc, pid = (g["proc"], g["pid"]) if g["proc"] else (g["iproc"], g["ipid"])
        if not proc and not g["iproc"] and (g["engine"] or g["seqno"]):
            # the job's own record names the process, maybe wrapped ("flags=0x20 in\n python [42]")
            joined = " ".join([t, *(ln.text.strip() for ln in hit.after(4, same_rank=False))])
            j = _XE_JOB_PROC.search(joined)
            if j:
                proc, pid = j.group(1), j.group(2)
        if proc and proc != "no process":
            facts["process"] = proc.strip()
        if pid and int(pid) > 0:
            facts["pid"] = int(pid)
        if g["seqno"]:
            facts["seqno"] = int(g["seqno"])
        if g["fail"]:
            facts["reason"] = "gpu_reset_failed"
            msg = (
                f"the {facts['driver']} driver could not recover a hung GPU ({clip(g['fail'], 60)}): "
                "the GPU needs a reset or a node reboot"
            )
        elif g["cat"]:
            msg = (
                f"the {facts['driver']} driver caught a GPU page fault on engine {g['cat']} (CAT "
                "error) and reset the engine"
            )
        else:
            what = f"engine {engine}" if engine else "a GPU job"
            msg = (
                f"the {facts['driver']} driver timed out {what} and reset it (a GPU hang"
                + (f" in {facts['process']}" if "process" in facts else "")
                + ")"
            )
    where = f" on {facts['pci_bus_id']}" if "pci_bus_id" in facts else ""
    return [
        row.event(hit, msg + where, facts, tier=0, dedupe=(row.code, "gpu_hang", facts.get("pci_bus_id")))
    ]


# A Tenstorrent board (Wormhole, Blackhole) that stopped answering or could not be reset (RUN293). Sources:
# tt-umd's TTDevice/PCIDevice::detect_hang_read, older "Read 0xffffffff from PCIE: you should reset the
# board.", newer TTDevice::is_pcie_hung "Read 0xffffffff over PCIe ID 21: the board should be reset"; its ARC
# wait "Timed out after waiting 1000 ms for ARC to respond"; tt-smi's galaxy reset (tt_smi/tt_smi_reset.py)
# "Error: POST_RESET failed for device 23." and newer "POST_RESET failed for devices: [4, 9]".
_TT_WEDGED = lazy_re.compile(
    r"Read 0xffffffff (?:from PCIE|over PCIe ID (?P<id>\d+))|"
    r"POST_RESET failed for devices?:? (?P<dev>\[[^\]]*\]|\S+?)\.?\s*$|"
    r"Timed out after waiting (?P<ms>\d+) ms for ARC to respond"
)


def _tt_wedged(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"accelerator": "tenstorrent"}
    if m.group("dev"):
        facts.update({"reason": "reset_failed", "device": m.group("dev")})
        msg = (
            f"tt-smi could not bring Tenstorrent device {m.group('dev')} back after the board reset "
            "(POST_RESET failed): the chip stays wedged until a power cycle or service"
        )
    elif m.group("ms"):
        facts.update({"reason": "arc_timeout", "arc_timeout_ms": int(m.group("ms"))})
        msg = "a Tenstorrent chip's ARC firmware stopped answering (ARC timeout): the board needs a reset"
    else:
        facts["reason"] = "pcie_hung"
        if m.group("id"):
            facts["pcie_id"] = int(m.group("id"))
        msg = (
            "a Tenstorrent board reads all ones over PCIe (Read 0xffffffff"
            + (f", PCIe ID {m.group('id')}" if m.group("id") else "")
            + "): the chip hung and must be reset (tt-smi -r) before any job can use it"
        )
    # the ARC timeout comes before the PCIe read that names the board: below it
    tier = 1 if m.group("ms") else 0
    return [
        row.event(hit, msg, facts, tier=tier, dedupe=(row.code, "tt", facts.get("pcie_id"), facts["reason"]))
    ]


# Intel Gaudi's kernel driver (habanalabs, drivers/misc/habanalabs 5.x then drivers/accel/habanalabs 6.2+)
# failing a device at probe or after a reset: device.c "Failed to initialize hl%d. Device is NOT usable !"
# (later "Device%s is NOT usable !" with the status, accel%d on 6.3+), "Failed to reset! Device is NOT
# usable", the heartbeat "Device heartbeat failed!"; the ASIC code's "Failed to communicate with Device CPU
# (CPU-CP timeout)" (Gaudi; Goya's "ARM CPU (ArmCP timeout)"), then "failed to initialize CPU H/W queues -5"
# and "failed to initialize the H/W" (read with the driver's name on the line). The card's firmware CPU does
# not answer: a board to reset or service, whatever the job (RUN293).
_HL = lazy_re.compile(
    r"Failed to initialize (?:hl|accel)(?P<idx>\d+)\. Device[^\n]{0,60}? is NOT usable|"
    r"Failed to reset! Device is NOT usable|"
    r"Failed to communicate with (?:Device|ARM) CPU \((?:CPU-CP|ArmCP) timeout\)|"
    r"habanalabs [^:\s]+: (?:failed to initialize (?:CPU H/W queues|the H/W)|Device heartbeat failed)"
)
_HL_DEV = lazy_re.compile(r"habanalabs (hl\d+|accel\d+|[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d)")


def _habana(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    dev = _HL_DEV.search(hit.text)
    name = f"hl{m.group('idx')}" if m.group("idx") else dev.group(1) if dev else None
    facts: dict[str, Any] = {"accelerator": "gaudi", "driver": "habanalabs", "reason": "device_not_usable"}
    if name:
        facts["device"] = name
    return [
        row.event(
            hit,
            f"the habanalabs driver could not bring up Gaudi device {name or '?'} "
            f"({clip(m.group(0), 90)}): its firmware CPU does not answer; reset the card (hl-smi -r) or "
            "service it",
            facts,
            dedupe=(row.code, "habanalabs", name),
        )
    ]


SIGNATURES = (
    Signature(
        "intel gpu hang",
        _GPU_HANG,
        _gpu_hang,
        C.GPU_ENGINE_HANG.code,
        anchors=(
            b"Timedout job",
            b"Engine reset: ",
            b"job timed out",
            b"CAT error",
            b"GPU HANG",
            b"GPU hang",
            b"Resetting ",
            b"reset failed",
            b"Failed to reset chip",
            b"wedged",
            b"DEVICE_LOST",
            b"DeviceLost",
        ),
        worth=(
            rb"Timedout job|Engine reset: engine_class|job timed out|CAT error|GPU HANG|GPU hang|"
            rb"Resetting \S+ for|Resetting chip|GT\d+: reset failed|Failed to reset chip|as wedged|"
            rb"DEVICE_LOST|DeviceLost",
        ),
        words=(
            "timedout job",
            "engine reset:",
            "job timed out",
            "cat error",
            "gpu hang",
            "resetting",
            "reset failed",
            "failed to reset chip",
            "as wedged",
            "device_lost",
            "devicelost",
        ),
    ),
    Signature(
        "tenstorrent board wedged",
        _TT_WEDGED,
        _tt_wedged,
        C.GPU_INIT_FAILED.code,
        anchors=(b"Read 0xffffffff ", b"POST_RESET failed", b"for ARC to respond"),
        worth=(rb"Read 0xffffffff (?:from|over) PCI", rb"POST_RESET failed", rb"for ARC to respond"),
        words=("read 0xffffffff", "post_reset failed", "for arc to respond"),
    ),
    Signature(
        "gaudi device not usable",
        _HL,
        _habana,
        C.GPU_INIT_FAILED.code,
        anchors=(b"is NOT usable", b"CPU-CP timeout", b"ArmCP timeout", b"habanalabs "),
        worth=(
            rb"is NOT usable|\((?:CPU-CP|ArmCP) timeout\)|"
            rb"habanalabs \S+: (?:failed to initialize (?:CPU H/W queues|the H/W)|Device heartbeat failed)",
        ),
        words=("is not usable", "cpu-cp timeout", "armcp timeout", "habanalabs "),
    ),
)

parse = gated_reader(SIGNATURES)
