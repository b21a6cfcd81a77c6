"""host_oom from the userspace OOM killers, which act before the kernel's (a desktop or workstation
that trains, a systemd service): systemd-oomd, systemd's own record of a unit the kernel's killer hit,
and earlyoom. Their lines name the unit or process and why; the kernel's records are read by `host_oom`.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gate, read
from pgdoctor.knowledge.clip import clip

# Userspace killers that act before the kernel's: systemd-oomd (src/oom/oomd-util.c, v247+)
# "systemd-oomd[601]: Killed /user.slice/.../app.scope due to memory pressure for /user.slice/... being
# 62.19% > 50.00% for > 20s with reclaim activity" / "... due to memory used (15.2G) / total (15.5G) and
# swap used (...) / total (...) being more than 90.00%" / "... due to swap used ..."; systemd's record of
# a unit the kernel's OOM killer hit (src/core/unit.c, v243+): "train.service: A process of this unit has
# been killed by the OOM killer." and "train.service: Failed with result 'oom-kill'."; earlyoom
# (rfjakob/earlyoom kill.c): "low memory! at or below SIGTERM limits: mem 10.00%, swap 10.00%" and "sending
# SIGTERM to process 4242 uid 1000 "python": badness 900, VmRSS 60000 MiB" (no uid before v1.3; v1.8+
# "...: oom_score 712, oom_score_adj 0, VmRSS 4514 MiB").
_USERSPACE = re.compile(
    r"(?P<oomd>systemd-oomd)\S*:? Killed (?P<unit>\S+) due to (?P<why>memory pressure|memory used|swap used)|"
    r"(?P<sdunit>[\w@.-]+): (?:A process of this unit has been killed by the OOM killer|"
    r"Failed with result 'oom-kill')|"
    r"(?P<early>low memory! at or below SIG[A-Z]+ limits)|"
    r"sending SIG(?:TERM|KILL) to process (?P<epid>\d+)(?: uid \d+)? \"(?P<ename>[^\"]*)\": "
    r"(?:badness|oom_score)"
)


def _userspace(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    g = m.groupdict()
    if g["oomd"]:
        facts: dict[str, Any] = {"killer": "systemd-oomd", "unit": g["unit"], "reason": g["why"]}
        msg = f"systemd-oomd killed {clip(g['unit'], 80)} because of {g['why']}"
    elif g["sdunit"]:
        facts = {"killer": "kernel_oom_killer", "unit": g["sdunit"], "reporter": "systemd"}
        msg = f"systemd reports that the kernel's OOM killer killed a process of {g['sdunit']}"
    else:
        facts = {"killer": "earlyoom"}
        if g["epid"]:
            facts.update(pid=int(g["epid"]), process=g["ename"])
        msg = (
            "earlyoom killed "
            + (f"pid {g['epid']} ({g['ename']})" if g["epid"] else "a process")
            + (": host memory was nearly exhausted")
        )
    return [row.event(hit, msg, facts, dedupe=(row.code, facts["killer"]))]


K = C.HOST_OOM_KILLED.code
SIGNATURES = (
    Signature(
        "userspace oom killer",
        _USERSPACE,
        _userspace,
        K,
        anchors=(b"Kill", b"oom-kill", b"low memory!", b"badness", b"oom_score"),
        worth=(rb"Kill", rb"oom-kill", rb"low memory!", rb"badness", rb"oom_score"),
        words=("killed", "oom-kill", "low memory", "badness", "oom_score"),
        anchor_from="the unit's 'oom-kill' or 'Killed' (systemd), 'badness' (earlyoom)",
        examples=(
            "systemd-oomd[601]: Killed /user.slice/user-1000.slice/session-3.scope due to memory used "
            "(15.2G) / total (15.5G) and swap used (4.0G) / total (4.0G) being more than 90.00%",
            "systemd[1]: train.service: Failed with result 'oom-kill'.",
            "systemd[1]: train.service: A process of this unit has been killed by the OOM killer.",
            "earlyoom[812]: low memory! at or below SIGTERM limits: mem 10.00%, swap 10.00%",
            'earlyoom[812]: sending SIGTERM to process 4242 uid 1000 "python": badness 900, VmRSS 60000 MiB',
        ),
    ),
)
_WORDS = gate(SIGNATURES)


def parse(hit: Hit) -> list[Event]:
    if _WORDS is not None and not hit.may_hold(_WORDS):
        return []
    return read(hit, SIGNATURES)
