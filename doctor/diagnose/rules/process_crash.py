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
from typing import Any

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit, event

_SHELL = re.compile(r"(?:^|\s)(?:(?P<pid>\d+)\s+)?(?P<sig>Segmentation fault|Illegal instruction|Aborted|Bus error)"
                    r"(?:\s+\(core dumped\))?(?:\s+(?P<cmd>\S.*))?$")
_FAULTHANDLER = re.compile(r"Fatal Python error: (?P<sig>Segmentation fault|Aborted|Bus error|Illegal instruction|"
                           r"Floating point exception)")
_FH_FRAME = re.compile(r'File "([^"]+)", line (\d+) in (\S+)')
SIGNALS = {"Segmentation fault": "SIGSEGV", "Illegal instruction": "SIGILL", "Aborted": "SIGABRT",
           "Bus error": "SIGBUS", "Floating point exception": "SIGFPE"}


def _tier(sig: str) -> int:
    """SIGABRT is how a process ends after an uncaught C++ exception: the NCCL watchdog's own
    abort after a timeout or a CUDA error ("terminate called after throwing ..."). The error
    it ends on is the cause; the abort is a consequence, the root only when nothing else shows."""
    return 2 if sig == "SIGABRT" else 0


def parse(hit: Hit) -> list[Event]:
    t = hit.text
    m = _FAULTHANDLER.search(t)
    if m:
        sig = SIGNALS[m.group("sig")]
        facts: dict[str, Any] = {"signal": sig, "reporter": "faulthandler"}
        for ln in hit.after(12):
            f = _FH_FRAME.search(ln.text)
            if f:
                facts["frame"] = f"{f.group(1)}:{f.group(2)} in {f.group(3)}"
                break
        where = f" in {facts['frame']}" if "frame" in facts else ""
        return [event(hit, C.FATAL_SIGNAL.code, f"{hit.who()} died on {sig}{where}",
                      facts, tier=_tier(sig), dedupe=(C.FATAL_SIGNAL.code, hit.rank, sig))]
    m = _SHELL.search(t)
    if m and (m.group("pid") or "core dumped" in t or t.strip() == m.group("sig")):
        sig = SIGNALS[m.group("sig")]
        facts = {"signal": sig, "reporter": "shell"}
        if m.group("pid"):
            facts["pid"] = int(m.group("pid"))
        if m.group("cmd"):
            facts["command"] = m.group("cmd").replace("(core dumped)", "").strip()[:200]
        return [event(hit, C.FATAL_SIGNAL.code, f"a process died on {sig} ({m.group('sig')})", facts,
                      tier=_tier(sig), dedupe=(C.FATAL_SIGNAL.code, hit.rank, sig, facts.get("pid")))]
    return []
