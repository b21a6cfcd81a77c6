"""p2p_probes: a person's own test of GPU peer-to-peer that says the platform refuses it (driver_env, RUN590).

Formats, read at their sources:
- cuda-samples' p2pBandwidthLatencyTest (Samples/5_Domain_Specific/p2pBandwidthLatencyTest, every release):
  `printf("Device=%d %s Access Peer Device=%d\n", i, can_access ? "CAN" : "CANNOT", j)` per pair, then the
  "P2P Connectivity Matrix" of 1s and 0s. A pair that CANNOT is a pair NCCL's P2P transport will not use
  (PCIe ACS or an IOMMU in the way, GPUs under different root complexes of a board that does not route P2P
  between them, a VM, a GeForce driver). The matrix rows ("     0\t     1     1     0     0") are not read
  alone: the CANNOT lines above them say the same.
- The same test stopped at its first measurement: the paste ends on a "Unidirectional P2P=Disabled Bandwidth
  Matrix (GB/s)" or "... P2P=Enabled ..." header with at most its "D\\D" column header after it (the copies
  never finished: the threads these come from hung there, an IOMMU not in passthrough). A matrix with its
  numbers is rules/platform_signs.py's reading (P2P slower than the host path).
- cuda-samples' simpleP2P: "> Peer access from Tesla K80 (GPU0) -> Tesla K80 (GPU1) : No" per pair, and, when
  no pair can, "Two or more GPUs with Peer-to-Peer access capability are required for simpleP2P." with
  "Peer to Peer access is not available amongst GPUs in the system, waiving test.". "Yes" is a healthy pair.
- The CUDA runtime's probe called by hand: cudaDeviceCanAccessPeer (cuda-python's `error, result =
  cudart.cudaDeviceCanAccessPeer(0, 1)` then `print(result)` -> "0"), torch.cuda.can_device_access_peer(0, 1)
  -> "False", answered on the REPL's next lines or on the call's own line (": 0", "= False"). 1 / True is a
  healthy pair.
- A program's own refusal after its P2P check (DistServe's ParaWorker, csrc/util/cuda_utils.h: "Error:
  Peer-to-peer access is unsupported on this platform." then "In the current version of distserve, it is
  necessary to use a platform that supports GPU P2P access." and "Exiting..."; the same words with "P2P" or
  "not supported", on this platform / system / machine). vLLM's warning that its custom all-reduce is off
  ("your platform lacks GPU P2P capability") is a healthy run's note and not read.
All are a warning at tier 2, as RUN590's other readings: many jobs run on the host path; it is the cause to
look at when the job hangs or crawls and the paste holds no error of its own.
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_CANNOT = lazy_re.compile(r"Device=(?P<a>\d+) CANNOT Access Peer Device=(?P<b>\d+)")
_PAIR_CANNOT = lazy_re.compile(r"Device=(\d+) CANNOT Access Peer Device=(\d+)")
_SIMPLE_NO = lazy_re.compile(
    r"Peer access from .{0,80}?\(GPU(?P<a>\d+)\) -> .{0,80}?\(GPU(?P<b>\d+)\) : No\b|"
    r"Two or more GPUs with Peer-to-Peer access capability are required|"
    r"Peer to Peer access is not available amongst GPUs"
)
_PROGRAM_REFUSED = lazy_re.compile(
    r"\b(?:GPU )?(?:[Pp]eer[- ]to[- ][Pp]eer|P2P) access is (?:unsupported|not supported) on this "
    r"(?:platform|system|machine)"
)
_STOPPED = lazy_re.compile(r"(?:Unidirectional|Bidirectional) P2P=(?:Disabled|Enabled) Bandwidth")
_COLUMNS = lazy_re.compile(r"^\s*(?:D\\D(?:\s+\d+)*)?\s*$")
_PROBE = lazy_re.compile(
    r"(?P<call>\b(?:cudaDeviceCanAccessPeer|cuDeviceCanAccessPeer|can_device_access_peer)\([^()\n]*\))"
    r"\s*(?:(?:[:=]|->)\s*(?P<answer>\w+))?"
)
_ARGS = lazy_re.compile(r"\((?:\w+\s*=\s*)?(\d+),\s*(?:\w+\s*=\s*)?(\d+)\)")
_PROMPT = lazy_re.compile(r"^\s*(?:>>>|\.\.\.|In \[\d+\]:)")


def _refused(row: Signature, hit: Hit, pairs: list[tuple[int, int]], how: str) -> list[Event]:
    gpus = sorted({g for p in pairs for g in p})
    named = ", ".join(f"{a}->{b}" for a, b in pairs[:6])
    if len(pairs) > 6:
        named += f" and {len(pairs) - 6} more"
    return [
        row.event(
            hit,
            f"{how}: CUDA refuses peer-to-peer between GPUs {named or '(no pair can)'}; NCCL takes the host "
            "path for those pairs (PCIe ACS / IOMMU, GPUs under different root complexes, a VM or a driver "
            "without P2P): where the job hangs or crawls, enable P2P in the platform or run with "
            "NCCL_P2P_DISABLE=1",
            {"reason": "p2p_refused", "gpus": gpus, "pairs": len(pairs)},
            dedupe=(row.code,),
        )
    ]


def _cannot(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    pairs = [(int(m.group("a")), int(m.group("b")))]
    for ln in hit.after(64, same_rank=False):
        p = _PAIR_CANNOT.search(ln.text)
        if p:
            pairs.append((int(p.group(1)), int(p.group(2))))
        elif "Access Peer" not in ln.text:
            break
    return _refused(row, hit, pairs, "p2pBandwidthLatencyTest")


def _simple_no(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    pairs = [(int(m.group("a")), int(m.group("b")))] if m.group("a") else []
    return _refused(row, hit, pairs, "simpleP2P")


def _program_refused(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return _refused(row, hit, [], "the program's own P2P check")


def _stopped(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    after = hit.after(6, same_rank=False)
    if not all(_COLUMNS.match(ln.text) for ln in after) or len(after) >= 6:
        return []  # the matrix has rows (platform_signs reads them), or the paste goes on
    return [
        row.event(
            hit,
            f"p2pBandwidthLatencyTest stopped at its first measurement ({m.group(0)}): the GPU-to-GPU copies "
            "never finished, as on a platform that routes P2P badly (an IOMMU not in passthrough, PCIe ACS); "
            "where training hangs too, boot with iommu=pt / turn ACS off, or run with NCCL_P2P_DISABLE=1",
            {"reason": "p2p_test_stopped"},
            dedupe=(row.code,),
        )
    ]


def _probe(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    answers = [m.group("answer")] if m.group("answer") else []
    if not answers:
        for ln in hit.after(6, same_rank=False):
            if _PROMPT.search(ln.text):
                continue
            answers.append(ln.text.strip())
    if "0" not in answers and "False" not in answers:
        return []
    if "1" in answers or "True" in answers:
        return []  # several probes, one pair answered yes: not read
    gpus = _ARGS.search(m.group("call"))
    pairs = [(int(gpus.group(1)), int(gpus.group(2)))] if gpus else []
    return _refused(row, hit, pairs, f"{m.group('call')} answered {'0' if '0' in answers else 'False'}")


SIGNATURES = (
    Signature(
        "p2p test cannot access peer",
        _CANNOT,
        _cannot,
        C.GPU_P2P_BROKEN_BY_PLATFORM.code,
        tier=2,
        anchors=(b"CANNOT Access Peer",),
        words=("cannot access peer",),
    ),
    Signature(
        "simplep2p peer access no",
        _SIMPLE_NO,
        _simple_no,
        C.GPU_P2P_BROKEN_BY_PLATFORM.code,
        tier=2,
        anchors=(b"Peer access from", b"Peer-to-Peer access capability", b"access is not available amongst"),
        words=("peer access from", "peer-to-peer access capability", "access is not available amongst"),
    ),
    Signature(
        "a program refuses the platform's p2p",
        _PROGRAM_REFUSED,
        _program_refused,
        C.GPU_P2P_BROKEN_BY_PLATFORM.code,
        tier=2,
        anchors=(b" access is unsupported on this ", b" access is not supported on this "),
        worth=(rb"(?i:peer[- ]to[- ]peer|P2P) access is (?:unsupported|not supported) on this",),
        words=("access is unsupported on this", "access is not supported on this"),
    ),
    Signature(
        "p2p test stopped at its first matrix",
        _STOPPED,
        _stopped,
        C.GPU_P2P_BROKEN_BY_PLATFORM.code,
        tier=2,
        anchors=(b"P2P=Disabled Bandwidth", b"P2P=Enabled Bandwidth"),
        words=("p2p=disabled bandwidth", "p2p=enabled bandwidth"),
    ),
    Signature(
        "peer access probe answered no",
        _PROBE,
        _probe,
        C.GPU_P2P_BROKEN_BY_PLATFORM.code,
        tier=2,
        anchors=(b"cudaDeviceCanAccessPeer(", b"cuDeviceCanAccessPeer(", b"can_device_access_peer("),
        words=("canaccesspeer(", "can_device_access_peer("),
    ),
)
parse = gated_reader(SIGNATURES)
