"""gpu_runtime: what a GPU runtime says about a fault of the device while kernels ran.

Formats: CUDA runtime error strings (cudaGetErrorString) and either enum name: "uncorrectable ECC
error encountered" (214), "uncorrectable NVLink error detected during the execution" (220), the
sticky kernel faults "an illegal memory access was encountered", "unspecified launch failure", "an
illegal instruction was encountered", "misaligned address", "hardware stack error", "invalid program
counter" (700, 714-719), also inside NCCL's "Cuda failure '...'"; ROCm's runtime "HW Exception by GPU
node-N (Agent handle: ...) reason :GPU Hang" and "Memory access fault by GPU node-N ... on address ...".
The kernel's own records of the same faults (NVRM Xid lines) are rules/gpu_hardware.py's, which is
offered every hit first.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import LINES_AFTER, ONE_PROCESS, Event, Hit
from pgdoctor.diagnose.rules.gpu_hardware import record_reader
from pgdoctor.diagnose.signature import Signature
from pgdoctor.model import lazy_re

# cudaErrorECCUncorrectable (214) by message or by the runtime's or the driver's enum name.
_ECC = lazy_re.compile(
    r"uncorrectable ECC error|cudaErrorECCUncorrectable|CUDA_ERROR_ECC_UNCORRECTABLE|"
    r"hipErrorECCNotCorrectable",
    re.I,
)
# cudaErrorNvlinkUncorrectable (220): the runtime's view of a fatal NVLink error (Xid 74 / 144-150);
# newer runtimes word a peer fault over the link "Invalid access of peer GPU memory over nvlink or a
# hardware error" (torch's "CUDA error: ..." prefix and its [rankN]: wrapping both carry it).
_NVLINK = lazy_re.compile(
    r"uncorrectable NVLink error|cudaErrorNvlinkUncorrectable|CUDA_ERROR_NVLINK_UNCORRECTABLE|"
    r"[Ii]nvalid access of peer GPU memory over [Nn][Vv][Ll]ink"
)
# The runtime's sticky kernel faults (cudart's table: 700, 714-719), by message or by either enum name.
_ILLEGAL = lazy_re.compile(
    r"an illegal memory access was encountered|unspecified launch failure|"
    r"an illegal instruction was encountered|misaligned address|hardware stack error|invalid program counter|"
    r"(?:cuda|hip)ErrorIllegalAddress|(?:cuda|hip)ErrorLaunchFailure|cudaErrorIllegalInstruction|"
    r"cudaErrorMisalignedAddress|"
    r"cudaErrorHardwareStackError|cudaErrorInvalidPc|"
    r"CUDA_ERROR_(?:ILLEGAL_ADDRESS|LAUNCH_FAILED|ILLEGAL_INSTRUCTION|MISALIGNED_ADDRESS|HARDWARE_STACK_ERROR|"
    r"INVALID_PC)\b"
)

# cudaErrorLaunchTimeout (702; 6 before CUDA 10.1), cudart's text "the launch timed out and was terminated"
# (driver_types.h / cudaGetErrorString, CUDA 9-12), the driver's CUDA_ERROR_LAUNCH_TIMEOUT (cuda.h) and HIP's
# hipErrorLaunchTimeOut (hip_runtime_api.h: ROCm < 5 prints the name for the text). Any wrapper carries it:
# torch's "CUDA error: ...", torch 0.4-1.x "cuda runtime error (6) : ...", NCCL's "Cuda failure '...'" /
# "Cuda failure 702 '...'", CuPy's "CUDADriverError: CUDA_ERROR_LAUNCH_TIMEOUT: ...".
_LAUNCH_TIMEOUT = lazy_re.compile(
    r"the launch timed out and was terminated|cudaErrorLaunchTimeout\b|hipErrorLaunchTimeOut\b|"
    r"CUDA_ERROR_LAUNCH_TIMEOUT\b"
)


def _launch_timeout(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: CUDA error 702: the launch timed out and was terminated: the driver's watchdog "
            "killed a long kernel, which it does on a GPU that drives a display (X / a desktop, Windows' "
            "TDR); train on a GPU without a display or raise the TDR delay",
            {"cuda_error": "the launch timed out and was terminated", "cuda_error_number": 702},
            dedupe=(row.code, "launch_timeout"),
        )
    ]


def _nvlink(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "the CUDA runtime reports an uncorrectable NVLink error (cudaErrorNvlinkUncorrectable"
            ", 220): a link between GPUs failed; look for Xid 74 or 144-150 in the kernel log",
            {"cuda_error": "uncorrectable NVLink error", "cuda_error_number": 220},
            dedupe=(row.code, "nvlink"),
        )
    ]


def _ecc(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "the CUDA runtime reports an uncorrectable ECC error",
            {"cuda_error": "uncorrectable ECC error encountered"},
            dedupe=(row.code, hit.rank),
        )
    ]


# A profiler that injects itself into the kernels (nvprof, Nsight Systems / Compute through CUPTI) and
# fails in the same run: its own records next to the fault ("==102728== Error: Internal profiling error
# 4054:1.", "======== Error: CUDA profiling error.", "CUPTI_ERROR_...") say the fault came with the
# instrumentation, not from the device or the job's own kernels; the run without it is the test.
_PROFILER_ERROR = lazy_re.compile(
    r"^=+(?:\d+=+)? (?:Error|Warning): (?:Internal profiling error|CUDA profiling error)|"
    r"\bCUPTI_ERROR_[A-Z_]+"
)


# Of the sticky faults, those of a kernel's own accesses and code (700 illegal address, 714 stack, 715
# illegal instruction, 716 misaligned address, 718 invalid program counter, by message or enum name): the
# program's kernel did it, far more often than the device. 719 "unspecified launch failure" (a kernel
# that crashed or was killed, the state an Xid 13/43 or a driver reset leaves) is not among them.
_PROGRAM_FAULT = lazy_re.compile(
    r"illegal memory access|illegal instruction|misaligned address|hardware stack error|"
    r"invalid program counter|IllegalAddress|IllegalInstruction|MisalignedAddress|HardwareStackError|"
    r"InvalidPc|ILLEGAL_ADDRESS|ILLEGAL_INSTRUCTION|MISALIGNED_ADDRESS|HARDWARE_STACK_ERROR|INVALID_PC"
)
# A device-side assertion of the program's kernels (ATen's "IndexKernel.cu:92: operator(): block:
# [..] Assertion `index out of bounds` failed.", "CUDA error: device-side assert triggered"): the fault
# that follows it is the program's, whatever reports it.
_DEVICE_ASSERT = lazy_re.compile(r"Assertion `.*` failed|device-side assert triggered")
# What shows a job of several processes around the fault: NCCL and c10d records, a rank's prefix or
# words, torch.distributed frames, a launcher's or DeepSpeed's lines, the worker processes of an engine
# (Ray's "(RayWorkerVllm pid=N)" and "(WorkerDict pid=N)", vLLM's "VllmWorkerProcess" and its
# worker_base.py logger), nccl-tests' own CUDA check ("Cuda failure common.cu:510 '...'"). Without any
# of it a program fault is one process's bug (a JIT-compiled fusion, a custom op, a diverged training
# step); a DataLoader's "worker" (lower case) is no second rank.
_DISTRIBUTED = lazy_re.compile(
    r"NCCL|nccl|ProcessGroup|c10d|[Dd]istributed|\[rank\d+\]|\b[Rr]ank[ =:]?\d+\b|local_rank|world_size|"
    r"\ball_?reduce|\ball_?gather|reduce_scatter|\bbroadcast\b|torchrun|elastic|deepspeed|DeepSpeed|"
    r"[A-Z]\w*Worker\w*|\bgloo\b|mpirun|\bsrun\b|comm\.reduce_add|\bcommon\.cu:\d+"
)


def device_assert_before(hit: Hit) -> bool:
    """A device-side assertion of the program's kernels in the lines before the hit: the sticky
    fault that follows (in torch, in NCCL, in the watchdog) is that assertion's consequence."""
    return any(_DEVICE_ASSERT.search(ln.text) for ln in hit.before(24, same_rank=False))


# The same evidence in a log's raw bytes (lookahead.py reads a whole log for it, prefixes included).
DISTRIBUTED_BYTES = lazy_re.compile(_DISTRIBUTED.pattern.encode() + rb"|worker_base\.py|multiproc_worker")


def one_process_fault(hit: Hit, fault: str) -> bool:
    """Whether a sticky fault is of the program-fault kind in a window that shows no second process
    (no rank, NCCL, c10d, launcher or worker line): then the rest of the log decides."""
    if not _PROGRAM_FAULT.search(fault):
        return False
    if hit.rank is not None or hit.line.local_rank is not None:
        return False
    return not any(_DISTRIBUTED.search(ln.text) or _worker_process(ln.proc) for ln in hit.lines)


def _whole_log(hit: Hit) -> bool:
    """The window starts at the log's first line and ends before its limit: it holds the whole log."""
    lines = hit.lines
    return bool(lines) and lines[0].no == 1 and lines[-1].no - hit.line.no < LINES_AFTER


def _worker_process(proc: Optional[str]) -> bool:
    """A line's prefix names a worker of a multi-process engine: any Ray actor ("(WorkerDict pid=9)"),
    or a Python logger's file that is a worker's (vLLM's worker_base.py, multiproc_worker_utils.py)."""
    if not proc:
        return False
    return not proc.endswith(".py") or "worker" in proc


# Of the program faults, those no device fault produces (cudart's documentation of 714-716 and 718: "a load
# or store instruction on a memory address which is not aligned", "an illegal instruction", "the call stack
# exceeded its limit", "the program counter contained an invalid address"): a failing GPU reports its faults
# as an Xid with 700, 719, 999, 214 or 220, never as these. 700 (an illegal address) stays RUN244.
_CODE_ONLY_FAULT = lazy_re.compile(
    r"misaligned address|illegal instruction|hardware stack error|invalid program counter|"
    r"MisalignedAddress|IllegalInstruction|HardwareStackError|InvalidPc|"
    r"MISALIGNED_ADDRESS|ILLEGAL_INSTRUCTION|HARDWARE_STACK_ERROR|INVALID_PC"
)


def _watchdog_report(hit: Hit) -> bool:
    """The fault is reported by NCCL or by c10d's watchdog (its line, or its line wrapped onto the hit)."""
    if "watchdog" in hit.text or "NCCL" in hit.text:
        return True
    prev = hit.before(1, same_rank=False)
    return bool(prev) and ("watchdog" in prev[-1].text or "ProcessGroupNCCL" in prev[-1].text)


def _code_fault(row: Signature, hit: Hit, m: re.Match[str]) -> list[Event]:
    """A code-only fault raised by the program's own call (not the NCCL watchdog's poll of its streams, which
    the released corpora keep as RUN244): the program's or a library's kernel."""
    return [
        row.event(
            hit,
            f"{hit.who()}: CUDA error: {m.group(0)} raised by the program's own call: a kernel of the "
            "program or of a library it calls has a bug (an unaligned vectorised access, a bad "
            "instruction); the GPU does not report its faults this way. CUDA_LAUNCH_BLOCKING=1 names the "
            "kernel",
            {
                "cuda_error": m.group(0),
                "reason": "kernel_code_fault",
                # one process's own fault: the rest of the log decides, as for RUN244 (lookahead.py)
                **(
                    {ONE_PROCESS: "whole" if _whole_log(hit) else "window"}
                    if one_process_fault(hit, m.group(0))
                    else {}
                ),
            },
            hit.block(3)[1],
            code=C.CUDA_KERNEL_FAULT.code,
            dedupe=(C.CUDA_KERNEL_FAULT.code, hit.rank),
        )
    ]


def _illegal(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    near = [*hit.before(3), *hit.after(4)]
    if any(_PROFILER_ERROR.search(ln.text) for ln in near):
        return None
    if device_assert_before(hit):
        return None  # the program's own assertion failed first: its bug, not the GPU's
    if _CODE_ONLY_FAULT.search(m.group(0)) and not _watchdog_report(hit):
        return _code_fault(row, hit, m)
    facts: dict[str, object] = {"cuda_error": m.group(0)}
    if one_process_fault(hit, m.group(0)):
        # Nothing distributed in the window: a single process's kernel bug unless another rank's file is
        # read with it or the rest of the log shows a job of several processes (lookahead.py). "whole":
        # the window is the whole file, so no second read is needed (standard input cannot be read twice).
        facts[ONE_PROCESS] = "whole" if _whole_log(hit) else "window"
    _text, used = hit.block(3)
    return [
        row.event(
            hit,
            f"CUDA error: {m.group(0)} (often a software bug: an out-of-bounds index in a kernel or a "
            "library; hardware only when Xid 13/31/43/48 or ECC errors accompany it)",
            facts,
            used,
            dedupe=(row.code, hit.rank),
        )
    ]


# ROCm's runtime (ROCR, HSA): its hardware-exception handler "HW Exception by GPU node-9 (Agent handle:
# 0x64ff272d8ab0) reason :GPU Hang" (the queue stopped answering and the kernel driver reset the GPU;
# "reason :ECC error" for memory), and its memory-fault handler "Memory access fault by GPU node-1 (Agent
# handle: 0x55d...) on address 0x7f00.... Reason: Page not present or supervisor privilege." (ROCm's
# illegal memory access: a kernel or library bug far more often than the hardware).
_HSA_HW = lazy_re.compile(r"HW Exception by GPU node-(\d+) \(Agent handle: [^)]*\) reason ?: ?(.+?)\s*$")
# ROCm 6.x drops the agent handle and may add "(may not be exact address)" and the reason on the same
# line: "Memory access fault by GPU node-2 on address 0x7f...(may not be exact address). Reason: ...".
_HSA_FAULT = lazy_re.compile(
    r"Memory access fault by GPU node-(\d+)(?: \(Agent handle: [^)]*\))? on address "
    r"(0x[0-9a-fA-F]+|\(nil\)|\S+?)(?:\(may not be exact address\))?\.?(?:\s|$)(?:\s*Reason: ([^.\n]+))?"
)


def _hsa_hw(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    node, reason = int(m.group(1)), m.group(2)
    facts = {"runtime": "rocm", "hsa_node": node, "reason": reason}
    if "ECC" in reason:
        return [
            row.event(
                hit,
                f"ROCm reports an ECC error on GPU node {node}",
                facts,
                code=C.GPU_ECC.code,
                dedupe=(C.GPU_ECC.code, node),
            )
        ]
    return [
        row.event(
            hit,
            f"ROCm reports a hardware exception on GPU node {node}: {reason} (the GPU stopped "
            "answering and was reset; see dmesg for amdgpu ring timeouts and resets)",
            facts,
            dedupe=(row.code, node),
        )
    ]


# ROCR runtime.cc VMFaultHandler's reasons (ROCm 4.x-6.x, on the record's line or the next) that are
# not a bad address: "DRAM ECC failure",
# "SRAM ECC failure", "ECC failure (if supported by HW)" (the GPU's memory) and "Generic hang recovery".
_HSA_FAULT_HW = lazy_re.compile(r"Reason: ((?:DRAM |SRAM )?ECC failure|Generic hang recovery)")


def _hsa_fault(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    """One reading of ROCR's memory-fault record in every ROCm version: the reason (same line or the
    next) decides whether it is the GPU's memory (ECC), a hang the driver recovered, or the program's
    illegal access."""
    node, addr = int(m.group(1)), m.group(2)
    hw = _HSA_FAULT_HW.search(hit.text)
    reason = (m.group(3) or (hw.group(1) if hw else "")).strip()
    facts: dict[str, Any] = {"runtime": "rocm", "hsa_node": node, "address": addr}
    if reason:
        facts["reason"] = reason
    if "ECC" in reason:
        return [
            row.event(
                hit,
                f"ROCm: memory fault by GPU node {node} for an ECC failure ({reason}): the GPU's memory",
                facts,
                code=C.GPU_ECC.code,
                dedupe=(C.GPU_ECC.code, node),
            )
        ]
    if "hang" in reason:
        return [
            row.event(
                hit,
                f"ROCm: GPU node {node} hung and was recovered ({reason})",
                facts,
                code=C.GPU_HW_EXCEPTION.code,
                dedupe=(C.GPU_HW_EXCEPTION.code, node),
            )
        ]
    because = f" ({reason})" if reason else ""
    return [
        row.event(
            hit,
            f"ROCm: memory access fault by GPU node {node} at {addr}{because}: its illegal memory access, "
            "most often a kernel or library bug",
            facts,
            dedupe=(row.code, hit.rank, "rocm"),
        )
    ]


# cudaErrorUnknown (999) as torch's c10 check prints it ("CUDA error: unknown error"; the driver API's
# "CUDA driver error: unknown error"; Triton's launcher "Triton Error [CUDA]: unknown error").
# nccl-tests' CUDACHECK quotes cudaGetErrorString after the source location: "Test CUDA failure
# common.cu:730 'unknown error'" (2.x, behind the host name), "Cuda failure common.cu:517 'unknown error'"
# (1.x).
_UNKNOWN = lazy_re.compile(
    r"(?:CUDA(?: driver)? error|Triton Error \[CUDA\]): unknown error\b|"
    # Paddle's enforce ("ExternalError: CUDA error(999), unknown error." / "(External) CUDA error(999), ...")
    r"CUDA error\(999\), unknown error\b|"
    r"(?P<test>(?:Test )?(?:CUDA|Cuda) failure \S+\.cu:\d+:? 'unknown error')"
)
# nccl-tests' own output once collectives ran: the results table's header ("out-of-place  in-place") or a
# row ("  8  2  float  sum  -1  31.54  0.00  0.00  0 ..."; before 2.10 without the root column). A CUDA
# failure before any of them came from the test's set-up (cudaGetDeviceCount, cudaSetDevice, its first
# allocation): no context could be made, the environment's failure.
_TEST_RAN = lazy_re.compile(r"out-of-place|^\s*\d+\s+\d+\s+\w+\s+\w+\s+(?:-?\d+\s+)?\d+\.\d+\s")
# Frames of device set-up: there 999 is the environment's (no context could be made), not a fault of a
# device that ran kernels.
_SETUP_FRAME = lazy_re.compile(
    r"_lazy_init|_cuda_init|set_device|cudaGetDeviceCount|_cuda_getDeviceCount|device_count|"
    # Paddle's device queries name their source file after the message ("(at /paddle/paddle/phi/backends/
    # gpu/cuda/cuda_info.cc:66)", older platform/gpu_info.cc)
    r"\bcuda_info\.cc|\bgpu_info\.cc"
)


def _unknown(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts = {"cuda_error": "unknown error", "cuda_error_number": 999, "cuda_error_name": "cudaErrorUnknown"}
    at_setup = (
        not any(_TEST_RAN.search(ln.text) for ln in hit.before(200, same_rank=False))
        if m.group("test")
        else any(
            _SETUP_FRAME.search(ln.text)
            # Paddle names the source file on the message's line or its hint's, after it
            for ln in [*hit.before(6), *([hit.line, *hit.after(2)] if "CUDA error(999)" in hit.text else [])]
        )
    )
    if at_setup:
        return [
            row.event(
                hit,
                "CUDA could not set up the device (CUDA error: unknown error at initialisation): the "
                "driver or the device state is broken for this process",
                {**facts, "reason": "device_init_failed"},
                code=C.NO_CUDA_DEVICE.code,
                tier=0,
                dedupe=(C.NO_CUDA_DEVICE.code, "device_init_failed"),
            )
        ]
    return [
        row.event(
            hit,
            f"{hit.who()}: CUDA error: unknown error after kernels ran (cudaErrorUnknown, 999): the driver "
            "lost the context without naming why (a GPU hang or reset, an Xid, a driver fault); look for "
            "an Xid in the kernel log at that time",
            facts,
            dedupe=(row.code, hit.rank),
        )
    ]


_CUDA = "'CUDA error: ' (or the exception type) before the runtime's message"
SIGNATURES = (
    Signature(
        "cuda launch timeout (display watchdog)",
        _LAUNCH_TIMEOUT,
        _launch_timeout,
        C.CUDA_LAUNCH_TIMEOUT.code,
        anchors=(b"timed out and was terminated", b"LaunchTimeout", b"LaunchTimeOut", b"LAUNCH_TIMEOUT"),
        worth=(rb"timed out and was terminated", rb"LaunchTime[Oo]ut", rb"LAUNCH_TIMEOUT"),
        words=("timed out and was terminated", "launchtimeout", "launch_timeout"),
    ),
    Signature(
        "cuda unknown error after kernels ran",
        _UNKNOWN,
        _unknown,
        C.CUDA_UNKNOWN_ERROR.code,
        # below any named cause: an Xid or an ECC record of the same GPU says what the 999 was
        tier=1,
        anchors=(b"rror",),
        worth=(rb"\berror\b",),
        words=("unknown error",),
    ),
    Signature(
        "nvlink uncorrectable",
        _NVLINK,
        _nvlink,
        C.GPU_XID.code,
        anchors=(b"rror", b"ERROR"),
        worth=(rb"Error\b", rb"\berror\b"),
        words=("nvlink",),
        anchor_from=_CUDA,
        examples=(
            "RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution",
            "RuntimeError: CUDA driver error: CUDA_ERROR_NVLINK_UNCORRECTABLE",
        ),
    ),
    Signature(
        "ecc uncorrectable",
        _ECC,
        _ecc,
        C.GPU_ECC.code,
        anchors=(b"rror", b"ERROR"),
        worth=(rb"\berror\b", rb"cudaError\w|CUDA_ERROR_\w|hipError\w"),
        words=("ecc error", "eccuncorrectable", "ecc_uncorrectable", "eccnotcorrectable"),
        anchor_from="the message's own 'error' (matched ignoring case), or the enum name's",
        examples=(
            "RuntimeError: CUDA error: uncorrectable ECC error encountered",
            "RuntimeError: CUDA driver error: CUDA_ERROR_ECC_UNCORRECTABLE",
            "cudaErrorECCUncorrectable",
        ),
    ),
    Signature(
        "rocm hardware exception",
        _HSA_HW,
        _hsa_hw,
        C.GPU_HW_EXCEPTION.code,
        anchors=(b"HW Exception",),
        worth=(rb"HW Exception",),
        words=("hw exception by gpu",),
    ),
    Signature(
        "rocm memory access fault",
        _HSA_FAULT,
        _hsa_fault,
        C.CUDA_ILLEGAL_ACCESS.code,
        anchors=(b"Memory access fault",),
        worth=(rb"Memory access fault",),
        words=("memory access fault by gpu",),
    ),
    Signature(
        "illegal access",
        _ILLEGAL,
        _illegal,
        C.CUDA_ILLEGAL_ACCESS.code,
        anchors=(b"rror", b"ERROR"),
        worth=(rb"\berror\b", rb"cudaError\w|CUDA_ERROR_\w|hipError\w"),
        words=(
            "illegal memory access",
            "unspecified launch failure",
            "illegal instruction",
            "misaligned address",
            "hardware stack error",
            "invalid program counter",
            "cudaerror",
            "cuda_error_",
            "hiperror",
        ),
        anchor_from=_CUDA + ", or the enum name's 'Error' / 'ERROR'",
        examples=(
            "RuntimeError: CUDA error: an illegal memory access was encountered",
            "RuntimeError: CUDA error: unspecified launch failure",
            "RuntimeError: CUDA error: hardware stack error",
            "RuntimeError: CUDA driver error: CUDA_ERROR_LAUNCH_FAILED",
            "cudaErrorIllegalInstruction",
        ),
    ),
)

# Every finding needs one of its row's words in the hit line (lower case).
parse = record_reader(SIGNATURES)
