"""process_crash: a rank that died on a fatal signal, as the shell, Python's faulthandler and the
launchers print it (exit records are read by `launcher`, Python exceptions by `pyexc`).

Formats: bash/sh job-control messages from strsignal(): "<script>: line 12: 4567 Segmentation
fault      (core dumped) python train.py", "Illegal instruction (core dumped)", "Aborted (core
dumped)", "Bus error (core dumped)"; faulthandler: "Fatal Python error: Segmentation fault",
"Fatal Python error: Aborted", followed by frames "  File "x.py", line 12 in forward".
SIGABRT is a consequence (tier 2) of the error the process aborted on; see `_tier`.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, read

_SHELL = re.compile(
    r"(?:^|\s)(?:(?P<pid>\d+)\s+)?(?P<sig>Segmentation fault|Illegal instruction|Aborted|Bus error)"
    r"(?:\s+\(core dumped\))?(?:\s+(?P<cmd>\S.*))?$"
)
_FAULTHANDLER = re.compile(
    r"Fatal Python error: (?P<sig>Segmentation fault|Aborted|Bus error|Illegal instruction|"
    r"Floating point exception)"
)
_FH_FRAME = re.compile(r'File "([^"]+)", line (\d+) in (\S+)')
# UCX's signal handler (ucs/debug), which Open MPI / HPC-X and NCCL's UCX plugin install:
# "[node:332629:0:332629]
# Caught signal 11 (Segmentation fault: address not mapped to object at address 0x10)", "Caught signal 7 (Bus
# error: nonexistent physical address)", then "==== backtrace (tid: 5704) ====".
_UCX = re.compile(
    r"Caught signal (?P<num>\d+) \((?P<sig>Segmentation fault|Bus error|Aborted|Illegal instruction|"
    r"Floating point exception)\b[^)]*\)"
)
# gdb's stop record when the debugged rank faults: "Thread 1 "python" received signal SIGSEGV, Segmentation
# fault." ("Program received signal ..." for a single-threaded one), then the faulting frame "0x.. in
# ncclIbDeregMr (comm=0x0, ...) at transport/net_ib.cc:906". SIGINT / SIGTRAP / SIGUSR* are gdb's own stops.
_GDB_STOP = re.compile(
    r"(?:Thread \d+ \"[^\"]*\"|Program) received signal (?P<name>SIG(?:SEGV|ABRT|BUS|ILL|FPE)), "
    r"(?P<sig>Segmentation fault|Aborted|Bus error|Illegal instruction|Arithmetic exception)"
)
_GDB_FRAME = re.compile(r"(?:^#\d+\s+)?0x[0-9a-fA-F]+ in ([\w:~<>]+) \(")
SIGNALS = {
    "Segmentation fault": "SIGSEGV",
    "Illegal instruction": "SIGILL",
    "Aborted": "SIGABRT",
    "Bus error": "SIGBUS",
    "Floating point exception": "SIGFPE",
}


def _tier(sig: str) -> int:
    """SIGABRT is how a process ends after an uncaught C++ exception: the NCCL watchdog's own
    abort after a timeout or a CUDA error ("terminate called after throwing ..."). The error
    it ends on is the cause; the abort is a consequence, the root only when nothing else shows."""
    return 2 if sig == "SIGABRT" else 0


def _faulthandler(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    sig = SIGNALS[m.group("sig")]
    facts: dict[str, Any] = {"signal": sig, "reporter": "faulthandler"}
    for ln in hit.after(12):
        f = _FH_FRAME.search(ln.text)
        if f:
            facts["frame"] = f"{f.group(1)}:{f.group(2)} in {f.group(3)}"
            break
    where = f" in {facts['frame']}" if "frame" in facts else ""
    return [
        row.event(
            hit, f"{hit.who()} died on {sig}{where}", facts, tier=_tier(sig), dedupe=(row.code, hit.rank, sig)
        )
    ]


def _ucx(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    sig = SIGNALS[m.group("sig")]
    facts: dict[str, Any] = {"signal": sig, "signal_number": int(m.group("num")), "reporter": "ucx"}
    where = re.match(r"\s*\[([\w.-]+):(\d+)", hit.text)
    if where:
        facts["host"], facts["pid"] = where.group(1), int(where.group(2))
    for ln in hit.after(8, same_rank=False):
        fr = re.search(r"0x[0-9a-f]+ (\w+)\(\)", ln.text)
        if fr and fr.group(1) not in ("killpg", "raise", "abort"):
            facts["frame"] = fr.group(1)
            break
    return [
        row.event(
            hit,
            f"a process died on {sig} (UCX's signal handler)"
            + (f" in {facts['frame']}" if "frame" in facts else ""),
            facts,
            tier=_tier(sig),
            dedupe=(row.code, hit.rank, sig, facts.get("pid")),
        )
    ]


def _gdb_stop(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    sig = m.group("name")
    facts: dict[str, Any] = {"signal": sig, "reporter": "gdb"}
    for ln in hit.after(6, same_rank=False):
        f = _GDB_FRAME.search(ln.text)
        if f:
            facts["frame"] = f.group(1)
            break
    where = f" in {facts['frame']}" if "frame" in facts else ""
    return [
        row.event(
            hit,
            f"{hit.who()} died on {sig} under gdb{where}",
            facts,
            tier=_tier(sig),
            dedupe=(row.code, hit.rank, sig),
        )
    ]


def _shell(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = hit.text
    if not (m.group("pid") or "core dumped" in t or t.strip() == m.group("sig")):
        return None
    sig = SIGNALS[m.group("sig")]
    facts: dict[str, Any] = {"signal": sig, "reporter": "shell"}
    if m.group("pid"):
        facts["pid"] = int(m.group("pid"))
    if m.group("cmd"):
        facts["command"] = m.group("cmd").replace("(core dumped)", "").strip()[:200]
    return [
        row.event(
            hit,
            f"a process died on {sig} ({m.group('sig')})",
            facts,
            tier=_tier(sig),
            dedupe=(row.code, hit.rank, sig, facts.get("pid")),
        )
    ]


SIGNATURES = (
    Signature(
        "faulthandler",
        _FAULTHANDLER,
        _faulthandler,
        C.FATAL_SIGNAL.code,
        anchors=(b"rror",),
        worth=(rb"Error\b",),
    ),
    Signature(
        "ucx signal handler",
        _UCX,
        _ucx,
        C.FATAL_SIGNAL.code,
        anchors=(b"ation fault", b"rror"),
        worth=(rb"Segmentation fault", rb"\berror\b"),
        anchor_from="the signal's own name: 'Segmentation fault', 'Bus error' (others when the line has "
        "another "
        "anchor)",
        examples=(
            "[gpu-node09:332629:0:332629] Caught signal 11 (Segmentation fault: "
            "address not mapped to object at address 0x10)",
            "[09677202c889:5283 :0:5704] Caught signal 7 (Bus error: nonexistent physical address)",
        ),
    ),
    Signature(
        "gdb stop on a fatal signal",
        _GDB_STOP,
        _gdb_stop,
        C.FATAL_SIGNAL.code,
        anchors=(b"received signal",),
        worth=(rb"received signal SIG",),
    ),
    Signature(
        "shell signal",
        _SHELL,
        _shell,
        C.FATAL_SIGNAL.code,
        anchors=(b"ation fault", b"core dumped"),
        worth=(rb"Segmentation fault", rb"core dumped"),
        anchor_from="'(core dumped)' after the signal's name (a line without it and without a pid is not "
        "read)",
        examples=(
            "train.sh: line 12: 4567 Segmentation fault      (core dumped) python train.py",
            "Illegal instruction (core dumped)",
            "Aborted (core dumped)",
            "Bus error (core dumped)",
        ),
    ),
)


def parse(hit: Hit) -> list[Event]:
    return read(hit, SIGNATURES)
