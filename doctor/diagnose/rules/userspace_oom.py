"""host_oom from the killers that act before the kernel's or above it: systemd-oomd, systemd's own
record of a unit the kernel's killer hit, earlyoom (a workstation or a systemd service that trains), and
the batch schedulers other than Slurm (LSF, PBS/Torque) that end a job over its memory limit, hosted
notebooks (Colab, Kaggle) and the kubelet's OOM watcher. Their lines name the unit, process or limit;
the kernel's and Slurm's records are read by `host_oom`. Also here: the kernel's panics on memory (a node
that went down rather than kill), and the host allocation failures of C++ programs and the shell.
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
    # the program's name is gone where the line reader took off a journal's "Dec 07 10:00:00 host
    # systemd-oomd[567]: " prefix: "Killed <cgroup> due to memory pressure ..." alone says the same
    r"(?P<oomd>(?:systemd-oomd\S*:? )?Killed (?P<unit>\S+) due to "
    r"(?P<why>memory pressure|memory used|swap used))|"
    # systemd's record of a unit systemd-oomd killed in (src/core/unit.c, v248+; "some" before v252)
    # (the unit's name may be gone too: "session-1.scope: " reads as a host's prefix)
    r"(?P<oomdk>(?:(?<![\w@.-])(?P<oomdunit>[\w@.-]+): )?systemd-oomd killed (?P<n>\d+|some) process\(es\) "
    r"in this unit)|"
    # (?<![\w@.-]): this branch's leftmost match starts where the run of [\w@.-] does (linear search)
    r"(?<![\w@.-])(?P<sdunit>[\w@.-]+): (?:A process of this unit has been killed by the OOM killer|"
    r"Failed with result 'oom-kill')|"
    r"(?P<early>low memory! at or below SIG[A-Z]+ limits)|"
    r"sending SIG(?:TERM|KILL) to process (?P<epid>\d+)(?: uid \d+)? \"(?P<ename>[^\"]*)\": "
    r"(?:badness|oom_score)"
)


def _userspace(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    g = m.groupdict()
    facts: dict[str, Any]
    if g["oomdk"]:
        unit = g["oomdunit"] or "a unit"
        facts = {"killer": "systemd-oomd", "unit": unit, "reporter": "systemd"}
        if g["n"].isdigit():
            facts["processes"] = int(g["n"])
        msg = f"systemd-oomd killed {g['n']} process(es) of {clip(unit, 80)} (memory pressure or use)"
    elif g["oomd"]:
        facts = {"killer": "systemd-oomd", "unit": g["unit"], "reason": g["why"]}
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
    r"System OOM encountered(?:, victim process: (?P<name>[^,\s]+)(?:, pid: (?P<pid>\d+))?)?|"
    # `docker events`: "2023-05-01T10:00:00.000000000Z container oom 3f2a9c1b7d4e (image=..., name=trainer)"
    r"\bcontainer oom (?P<cid>[0-9a-f]{12,64})\b"
)


def _hosted(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("cid"):
        facts0: dict[str, Any] = {
            "killer": "kernel_oom_killer",
            "reporter": "docker",
            "container": m.group("cid"),
        }
        msg0 = f"Docker reports an OOM event in container {m.group('cid')[:12]}: it hit its memory limit"
        return [row.event(hit, msg0, facts0, dedupe=(row.code, "docker_oom"))]
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


# The kernel's panics on memory (mm/oom_kill.c, 2.6-6.x): "Kernel panic - not syncing: Out of memory and no
# killable processes...", "System is deadlocked on memory", and with vm.panic_on_oom set "Out of memory:
# system-wide panic_on_oom is enabled" / "Out of memory: compulsory panic_on_oom is enabled" (older: "out of
# memory. panic_on_oom is selected"). The node went down instead of killing one process: the job's ranks on it
# are lost with it (the other nodes then report a lost peer).
_PANIC = lazy_re.compile(
    r"Out of memory and no killable processes|System is deadlocked on memory|"
    r"(?i:out of memory)[:.] (?:(?:system-wide|compulsory) )?panic_on_oom is (?:enabled|selected)|"
    # the OOM killer's records when its victim is already dying (4.x-6.x): "Memory cgroup out of memory: OOM
    # victim 1234 (python) is already exiting. Skip killing the task", "oom_reaper: unable to reap pid:1234
    # (python)": an OOM kill took place
    r"(?P<victim>OOM victim (?P<vpid>\d+) \((?P<vname>[^)]*)\) is already exiting|"
    r"oom_reaper: unable to reap pid:(?P<rpid>\d+) \((?P<rname>[^)]*)\)|"
    # 2.6's capitalised "Out of Memory: Kill process 1234 (python) score 950 and children." (host_oom's
    # kernel row reads the lower-case forms)
    r"Out of Memory: Kill process (?P<opid>\d+) \((?P<oname>[^)]*)\))"
)


def _panic(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("victim"):
        pid = m.group("vpid") or m.group("rpid") or m.group("opid")
        name = m.group("vname") or m.group("rname") or m.group("oname")
        facts0: dict[str, Any] = {"killer": "kernel_oom_killer", "pid": int(pid), "process": name}
        msg0 = f"the kernel's OOM killer acted on pid {pid} ({name}): the host or cgroup ran out of memory"
        return [row.event(hit, msg0, facts0, dedupe=(row.code, "kernel_oom_victim"))]
    facts: dict[str, Any] = {"killer": "kernel_panic", "panic": clip(m.group(0), 80)}
    msg = f"the node's kernel panicked on memory ({clip(m.group(0), 60)}): the host ran out of memory"
    return [row.event(hit, msg, facts, dedupe=(row.code, "kernel_panic"))]


# Host allocations that failed in a C++ program or the shell: libstdc++'s terminate handler for an uncaught
# std::bad_alloc (a native extension, a data loader's C++ reader: "terminate called after throwing an
# instance of 'std::bad_alloc'", then "  what():  std::bad_alloc"; pybind11 turns a caught one into
# "MemoryError: std::bad_alloc", host_oom's; torch's own bindings catch it as a std::exception: "RuntimeError:
# std::bad_alloc"), glibc's loader failing to allocate a thread's TLS at dlopen/thread start ("cannot allocate
# memory for thread-local data: ABORT", elf/dl-tls.c), and bash's fork failing for memory ("bash: fork: Cannot
# allocate memory", "fork: retry: Cannot allocate memory"; "fork: retry: Resource temporarily unavailable"
# is the process limit, not memory). An allocation of a garbage size (a corrupt length read from a file)
# throws bad_alloc too: tier 1, behind any other finding. Windows' commit limit (ERROR_COMMITMENT_LIMIT,
# 1455): "OSError: [WinError 1455] The paging file is too small for this operation to complete. Error
# loading "...\\torch\\lib\\cudnn_cnn_infer64_8.dll"", "ImportError: DLL load failed while importing _C: The
# paging file is too small ..." (each DataLoader worker maps torch's CUDA DLLs again: RAM plus page file ran
# out; tier 0).
_NATIVE_HOST = lazy_re.compile(
    r"terminate called after throwing an instance of '(?:std::)?bad_alloc'|"
    r"what\(\):\s+std::bad_alloc\s*$|\bRuntimeError: std::bad_alloc\s*$|"
    r"cannot allocate memory for thread-local data|"
    r"\bfork: (?:retry: )?Cannot allocate memory|"
    r"(?P<paging>The paging file is too small for this operation to complete)"
)


def _native_host(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("paging"):
        facts0: dict[str, Any] = {"allocator": "windows commit", "error_line": clip(hit.text.strip(), 160)}
        msg0 = (
            "Windows could not commit memory (WinError 1455, the paging file is too small): RAM plus page "
            "file ran out; fewer DataLoader workers, a larger page file"
        )
        return [row.event(hit, msg0, facts0, dedupe=(row.code, "windows_commit"))]
    fork = "fork" in m.group(0)
    facts: dict[str, Any] = {
        "allocator": "fork" if fork else "c++ operator new",
        "error_line": clip(m.group(0), 120),
    }
    msg = (
        "the shell could not fork for lack of host memory"
        if fork
        else "a C++ allocation failed (std::bad_alloc): host memory ran out, or a garbage size was requested"
    )
    return [row.event(hit, msg, facts, tier=1, dedupe=(row.code, "native_host_alloc"))]


# A framework's own check on its host allocator: MXNet's CPU storage (src/storage/cpu_device_storage.h,
# 0.x-1.9: "LOG(FATAL) << \"Failed to allocate CPU Memory\"" after a failed malloc / posix_memalign, as
# "[12:00:01] src/storage/./cpu_device_storage.h:73: Failed to allocate CPU Memory" or inside
# "mxnet.base.MXNetError: ..."), and the same words of other C++ programs ("Failed to allocate CPU memory:
# <err>", "failed to allocate host memory"). A warning that falls back ("Failed to allocate CPU memory pool",
# "..., falling back to ...") is not a failure.
_FRAMEWORK_HOST = lazy_re.compile(r"\b[Ff]ailed to allocate (?:CPU|[Hh]ost) [Mm]emory\b(?! pool)")
_FALLS_BACK = lazy_re.compile(r"\bWARN|[Ff]all(?:ing)? ?back|\bretry|\bretrying", re.IGNORECASE)


def _framework_host(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if _FALLS_BACK.search(hit.text):
        return []
    facts: dict[str, Any] = {
        "allocator": "framework host allocator",
        "error_line": clip(hit.text.strip(), 160),
    }
    if "cpu_device_storage" in hit.text or "MXNet" in hit.text or "mxnet" in hit.text:
        facts["framework"] = "mxnet"
    msg = (
        "the framework could not allocate host (CPU) memory: RAM ran out (a dataset or record file loaded "
        "whole, too many workers or ranks on the node)"
    )
    return [row.event(hit, msg, facts, dedupe=(row.code, "framework_host_alloc"))]


K = C.HOST_OOM_KILLED.code
SIGNATURES = (
    Signature(
        "kernel panic on memory",
        _PANIC,
        _panic,
        K,
        anchors=(
            b"no killable processes",
            b"deadlocked on memory",
            b"panic_on_oom is",
            b"is already exiting",
            b"unable to reap pid:",
            b"Out of Memory: Kill process",
        ),
        words=(
            "no killable processes",
            "deadlocked on memory",
            "panic_on_oom is",
            "already exiting",
            "reap pid:",
            "out of memory: kill process",
        ),
        examples=(
            "Kernel panic - not syncing: Out of memory and no killable processes...",
            "Kernel panic - not syncing: Out of memory: system-wide panic_on_oom is enabled",
        ),
    ),
    Signature(
        "native host allocation failed",
        _NATIVE_HOST,
        _native_host,
        C.HOST_ALLOC_FAILED.code,
        anchors=(
            b"bad_alloc",
            b"Cannot allocate memory",
            b"cannot allocate memory for thread-local",
            b"paging file is too small",
        ),
        worth=(
            rb"throwing an instance of '(?:std::)?bad_alloc'",
            rb"what\(\):\s+std::bad_alloc",
            rb"fork: (?:retry: )?Cannot allocate memory",
            rb"RuntimeError: std::bad_alloc",
            rb"cannot allocate memory for thread-local data",
            rb"paging file is too small for this operation",
        ),
        words=("bad_alloc", "cannot allocate memory", "paging file is too small"),
        examples=(
            "terminate called after throwing an instance of 'std::bad_alloc'",
            "  what():  std::bad_alloc",
            "-bash: fork: Cannot allocate memory",
        ),
    ),
    Signature(
        "framework host allocation failed",
        _FRAMEWORK_HOST,
        _framework_host,
        C.HOST_ALLOC_FAILED.code,
        anchors=(b"ailed to allocate CPU", b"ailed to allocate host", b"ailed to allocate Host"),
        words=("failed to allocate cpu memory", "failed to allocate host memory"),
        anchor_from="'Failed to allocate' with the memory it names (CPU, host): one anchor per spelling",
        examples=(
            "[12:00:01] src/storage/./cpu_device_storage.h:73: Failed to allocate CPU Memory",
            "Failed to allocate host memory",
        ),
    ),
    Signature(
        "hosted notebook or kubelet oom",
        _HOSTED,
        _hosted,
        K,
        anchors=(
            b"all available RAM",
            b"more memory than is available",
            b"System OOM encountered",
            b"container oom ",
        ),
        worth=(
            rb"all available RAM",
            rb"more memory than is available",
            rb"System OOM encountered",
            rb"container oom ",
        ),
        words=("available ram", "more memory than is available", "system oom encountered", "container oom "),
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
        anchors=(b"Kill", b"oom-kill", b"oomd killed", b"low memory!", b"badness", b"oom_score"),
        worth=(rb"Kill", rb"oom-kill", rb"oomd killed", rb"low memory!", rb"badness", rb"oom_score"),
        words=("killed", "oom-kill", "low memory", "badness", "oom_score"),
        anchor_from="the unit's 'oom-kill' or 'Killed' (systemd), 'badness' (earlyoom)",
        examples=(
            "systemd-oomd[601]: Killed /user.slice/user-1000.slice/session-3.scope due to memory used "
            "(15.2G) / total (15.5G) and swap used (4.0G) / total (4.0G) being more than 90.00%",
            "systemd[1]: train.service: Failed with result 'oom-kill'.",
            "systemd[1]: train.service: A process of this unit has been killed by the OOM killer.",
            "systemd[1]: session-3.scope: systemd-oomd killed 291 process(es) in this unit.",
            "Killed /user.slice/user-1000.slice/session-3.scope due to memory pressure for /user.slice/"
            "user-1000.slice being 92.45% > 50.00% for > 20s with reclaim activity",
            "earlyoom[812]: low memory! at or below SIGTERM limits: mem 10.00%, swap 10.00%",
            'earlyoom[812]: sending SIGTERM to process 4242 uid 1000 "python": badness 900, VmRSS 60000 MiB',
        ),
    ),
)
parse = gated_reader(SIGNATURES)
