"""host_oom from the killers that act before the kernel's or above it: systemd-oomd, systemd's own
record of a unit the kernel's killer hit, earlyoom (a workstation or a systemd service that trains), and
the batch schedulers other than Slurm (LSF, PBS/Torque) that end a job over its memory limit, hosted
notebooks (Colab, Kaggle) and the kubelet's OOM watcher. Their lines name the unit, process or limit;
the kernel's and Slurm's records are read by `host_oom`.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

# Userspace killers that act before the kernel's: systemd-oomd (src/oom/oomd-util.c, v247+)
# "systemd-oomd[601]: Killed /user.slice/.../app.scope due to memory pressure for /user.slice/... being
# 62.19% > 50.00% for > 20s with reclaim activity" / "... due to memory used (15.2G) / total (15.5G) and
# swap used (...) / total (...) being more than 90.00%" / "... due to swap used ..."; systemd's record of
# a unit the kernel's OOM killer hit (src/core/unit.c, v243+): "train.service: A process of this unit has
# been killed by the OOM killer." and "train.service: Failed with result 'oom-kill'."; earlyoom
# (rfjakob/earlyoom kill.c): "low memory! at or below SIGTERM limits: mem 10.00%, swap 10.00%" and "sending
# SIGTERM to process 4242 uid 1000 "python": badness 900, VmRSS 60000 MiB" (no uid before v1.3; v1.8+
# "...: oom_score 712, oom_score_adj 0, VmRSS 4514 MiB").
_USERSPACE = lazy_re.compile(
    r"(?P<oomd>systemd-oomd)\S*:? Killed (?P<unit>\S+) due to (?P<why>memory pressure|memory used|swap used)|"
    # (?<![\w@.-]): this branch's leftmost match starts where the run of [\w@.-] does (linear search)
    r"(?<![\w@.-])(?P<sdunit>[\w@.-]+): (?:A process of this unit has been killed by the OOM killer|"
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


# IBM LSF's job report: "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit." (then "Exited with
# exit code 143." or 137), "TERM_SWAP: job killed after reaching LSF swap usage limit."; PBS Pro and Torque:
# "=>> PBS: job killed: mem 4194304kb exceeded limit 4194304kb", "PBS: job killed: vmem 10737418240 exceeded
# limit 8589934592" (also pmem, pvmem); Torque's mail: "Job exceeded a memory resource limit (vmem, pvmem,
# etc.). Job was aborted".
_SCHEDULER = lazy_re.compile(
    r"TERM_(?P<lsf>MEMLIMIT|SWAP): job killed after reaching LSF (?:memory|swap) usage limit|"
    r"PBS: job killed: (?P<what>p?v?mem) (?:job total )?(?P<used>\d+)(?P<unit>[kmg]?b)? exceeded limit|"
    r"(?P<torque>Job exceeded a memory resource limit)"
)


def _scheduler(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("what"):
        facts: dict[str, Any] = {"killer": "pbs_memory_limit", "limit_kind": m.group("what")}
        msg = f"PBS killed the job: its {m.group('what')} exceeded the job's limit"
    elif m.group("torque"):
        facts = {"killer": "pbs_memory_limit"}
        msg = "Torque aborted the job: it exceeded a memory resource limit (vmem, pvmem, ...)"
    else:
        facts = {"killer": "lsf_memory_limit"}
        what = "swap" if m.group("lsf") == "SWAP" else "memory"
        msg = f"LSF killed the job after it reached its {what} usage limit (TERM_{m.group('lsf')})"
    return [row.event(hit, msg, facts, dedupe=(row.code, facts["killer"]))]


# Hosted notebooks and the kubelet, which name the host's memory, not a limit of the job: Colab "Your session
# crashed after using all available RAM.", Kaggle "Your notebook tried to allocate more memory than is
# available. It has restarted.", the kubelet's OOM watcher event (pkg/kubelet/oom) "System OOM encountered,
# victim process: python, pid: 12345".
_HOSTED = lazy_re.compile(
    r"Your session crashed after using all available RAM|"
    r"Your notebook tried to allocate more memory than is available|"
    r"System OOM encountered(?:, victim process: (?P<name>[^,\s]+)(?:, pid: (?P<pid>\d+))?)?"
)


def _hosted(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group(0).startswith("System OOM"):
        facts: dict[str, Any] = {"killer": "kernel_oom_killer", "reporter": "kubelet"}
        if m.group("name"):
            facts["process"] = m.group("name")
        if m.group("pid"):
            facts["pid"] = int(m.group("pid"))
        who = f" (victim {m.group('name')}" + (f", pid {m.group('pid')})" if m.group("pid") else ")")
        who = who if m.group("name") else ""
        msg = f"the kubelet saw the node's kernel OOM killer act{who}: the node ran out of memory"
    else:
        facts = {"killer": "notebook_host"}
        msg = f"the hosted notebook ran out of host memory: {clip(m.group(0), 80)}"
    return [row.event(hit, msg, facts, dedupe=(row.code, facts["killer"]))]


K = C.HOST_OOM_KILLED.code
SIGNATURES = (
    Signature(
        "hosted notebook or kubelet oom",
        _HOSTED,
        _hosted,
        K,
        anchors=(b"all available RAM", b"more memory than is available", b"System OOM encountered"),
        worth=(rb"all available RAM", rb"more memory than is available", rb"System OOM encountered"),
        words=("available ram", "more memory than is available", "system oom encountered"),
    ),
    Signature(
        "batch scheduler memory limit",
        _SCHEDULER,
        _scheduler,
        K,
        anchors=(b"TERM_MEMLIMIT", b"TERM_SWAP", b"PBS: job killed", b"memory resource limit"),
        worth=(rb"TERM_MEMLIMIT", rb"TERM_SWAP", rb"PBS: job killed", rb"memory resource limit"),
        words=("term_memlimit", "term_swap", "pbs: job killed", "memory resource limit"),
    ),
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
parse = gated_reader(SIGNATURES)
