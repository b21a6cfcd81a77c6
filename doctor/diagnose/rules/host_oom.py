"""host_oom: host memory exhausted.

Formats: the kernel's OOM killer (mm/oom_kill.c) "Out of memory: Killed process 1234 (python)
total-vm:..kB, anon-rss:..kB, file-rss:..kB, shmem-rss:..kB, UID:0 pgtables:..kB
oom_score_adj:0" (before 5.0: "Out of memory: Kill process 1234 (python) score 900 or
sacrifice child"; cgroups: "Memory cgroup out of memory: Killed process ..."); Slurm's
"slurmstepd: error: Detected 1 oom_kill event in StepId=..."/"oom-kill event(s)"; Kubernetes
"OOMKilled"; the shell's "Killed" for a SIGKILLed child; PyTorch's CPU allocator
(c10/core/impl/alloc_cpu.cpp) "DefaultCPUAllocator: can't allocate memory: you tried to allocate
N bytes. Error code 12 (Cannot allocate memory)"; Python's MemoryError; native allocators'
abort "memory allocation of 2097152 bytes failed" (Rust: HF tokenizers), even when two ranks'
copies are glued mid-line; "[Errno 12] Cannot allocate memory"; DeepSpeed's memory report
"CPU Virtual Memory:  used = 120.70 GB, percent = 97.9%" when the last one is at the host's limit.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.knowledge.units import fmt_bytes
from pgdoctor.model import lazy_re

_KERNEL = lazy_re.compile(
    r"(?P<cg>Memory cgroup )?[Oo]ut of memory:? [Kk]ill(?:ed)? process (?P<pid>\d+) \((?P<name>[^)]*)\)"
    r"(?:.*?anon-rss:(?P<anon>\d+)kB)?"
)
# The same record's second line in kernels before 4.14 ("Out of memory: Kill process N (x) score S or
# sacrifice child", then "Killed process N (x) total-vm:..kB, anon-rss:..kB, file-rss:..kB"; 2.6's "vsz:",
# older 2.6 the name alone: "Killed process 1235 (python)"), pasted alone; and the reaper's line after it
# (4.6+): "oom_reaper: reaped process N (x), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB". Both name the
# process the OOM killer chose.
_KILLED_ALONE = lazy_re.compile(
    r"(?:^|\]\s*|kernel:\s*)Killed process (?P<pid>\d+) \((?P<name>[^)]*)\)(?:,? (?:total-vm|vsz):"
    r"(?:.*?anon-rss:(?P<anon>\d+)kB)?|\s*$)|"
    r"oom_reaper: reaped process (?P<rpid>\d+) \((?P<rname>[^)]*)\)"
)
# The rest of the OOM killer's report (mm/oom_kill.c), for a paste that lacks the "Killed process"
# line: dump_header's "python invoked oom-killer: gfp_mask=0x...(GFP_KERNEL), order=0,
# oom_score_adj=0" with "CPU: 6 PID: 208253 Comm: python" and the call trace after it (the trace
# alone: "oom_kill_process+0x21c/0x430", "out_of_memory+0x114/0x4a0", "mem_cgroup_out_of_memory+..."
# for a cgroup limit); 4.19+'s summary "oom-kill:constraint=CONSTRAINT_MEMCG,...,task=python,pid=1234,
# uid=0". (The reaper's "oom_reaper: reaped process N" only follows a "Killed process" line.)
# (?<!\S): a match inside a run of non-space characters also matches from the run's start, so the
# leftmost match starts there anyway; without it, search tried every position of a long run (quadratic).
_INVOKED = lazy_re.compile(r"(?<!\S)(?P<comm>\S+) invoked oom-killer: gfp_mask=")
_SUMMARY = lazy_re.compile(
    r"oom-kill:constraint=(?P<constraint>\w+)\S*?,task=(?P<name>[^,\s]+),pid=(?P<pid>\d+)"
)
# The trace cut before oom_kill_process still holds the allocator's call into the killer:
# "out_of_memory+0x1cf/0x4d0", "mem_cgroup_out_of_memory+0xc4/0xe0" (".part.0" / ".cold" clones).
_TRACE = lazy_re.compile(
    r"\b(?:oom_kill_process|(?:mem_cgroup_)?out_of_memory)(?:\.(?:cold|part|isra|constprop)(?:\.\d+)?)*\+0x"
)
# cgroup v1's header of a memory-cgroup OOM (mem_cgroup_print_oom_info, 3.x-4.18): "Task in /docker/ab
# killed as a result of limit of /docker/ab", then "memory: usage 16777216kB, limit 16777216kB, failcnt
# 12"; 4.19+ prints the oom-kill: summary instead.
_MEMCG_V1 = lazy_re.compile(r"Task in (?P<cg>\S+) killed as a result of limit of (?P<limit>\S+)")
_COMM = lazy_re.compile(r"\bPID: (\d+) Comm: (\S+)")
# dump_tasks' table, which the OOM killer prints only when it runs (mm/oom_kill.c dump_task, 4.x+):
# "[  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name" under "Tasks state
# (memory values in pages):", one "[%7d] %5d %5d %8lu %8lu %8ld %8lu %5hd %s" row per task (3.x: seven
# numbers, nr_ptes and nr_pmds for pgtables_bytes). Pastes often keep the rows alone.
_TASK_ROW = lazy_re.compile(
    r"^\[\s*(\d+)\]\s+\d+\s+\d+\s+(\d+)\s+(\d+)\s+\d+\s+(\d+)(?:\s+\d+)?\s+(-?\d{1,4})\s+(\S.*?)\s*$"
)
_TASK_HEAD = lazy_re.compile(r"oom_score_adj name|Tasks state \(memory values in pages\)")
_SLURM = lazy_re.compile(r"Detected (\d+) oom[-_]kill event")
# Slurm's accounting (jobacct_gather) killing a step over its memory limit (RSS or virtual), in any version.
_SLURM_LIMIT = lazy_re.compile(
    r"Exceeded (?:job|step) memory limit|exceeded (?:virtual )?memory limit \((\d+) > (\d+)\), being killed"
)
_K8S = lazy_re.compile(r"\bOOMKilled\b")
# kubelet evicting a pod for node memory pressure: "The node was low on resource: memory. Container
# trainer was using 123Gi, which exceeds its request of 0."
_EVICTED = lazy_re.compile(r"The node was low on resource: memory")
# bash/sh job control: "<script>: line 12: 45678 Killed    python train.py", or a lone "Killed"
# for a foreground job (macOS's strsignal words it "Killed: 9"); the lone word retyped in another case
# ("killed", "KILLED") at the end of a pasted run says the same.
# An interactive shell's job table words it "[1]+  Killed                  python train.py".
_SHELL = lazy_re.compile(
    r"(?:line \d+: +(?P<pid>\d+) +Killed(?:: 9)?\s+(?P<cmd>\S.*)$|"
    r"^\[\d+\][+-]? +Killed(?:: 9)?\s+(?P<job>\S.*)$|^(?:Killed|killed|KILLED)(?:: 9)?$)"
)
# zsh words it in lower case: "zsh: killed     python train.py" for a foreground job, "[1]    12345
# killed     python train.py" in its job table.
# (the "[1]" may be read as a rank prefix and cut: the pid form wants zsh's column gap).
# The shell's word comes from strsignal(SIGKILL), translated by the C library under the user's locale
# (glibc po/: zh_CN "已杀死", ja "強制終了", de "Getötet"): "run.sh: 行 12: 45678 已杀死  python train.py".
_SHELL_LOCALE = lazy_re.compile(
    r"(?:^|\s)(?:(?P<pid>\d+)\s+)?(?:已杀死|強制終了|Getötet)(?:\s+(?P<cmd>\S.*))?$"
)
_ZSH = lazy_re.compile(r"^\s*(?:zsh: killed +|(?:\[\d+\][+-]? +)?(?P<pid>\d+) killed {2,})(?P<cmd>\S.*)$")
# A runner's record of a child that ended by SIGKILL (exit status 128 + 9), with no traceback: GNU time's
# "Command exited with non-zero status 137", kubectl exec "command terminated with exit code 137", kubectl
# describe's "Exit Code:    137", docker "exited with code 137" and docker ps's "Exited (137) 5 minutes
# ago", CI runners' "Process completed with exit code 137.", make's "*** [Makefile:10: train] Error 137",
# IDEs' "Process finished with exit code 137 (interrupted by signal 9: SIGKILL)", supervisors' "terminated
# by signal SIGKILL" / "killed by signal 9" / "died with signal SIGKILL", the signal's own number where a
# runner reports it negative ("exit code -9", "returncode -9") or as an unsigned byte (247: a wrapper's
# sys.exit(-9), "Process 10 exit with status code 247"), torch elastic's failure record "Signal 9 (SIGKILL)
# received by PID 811" when its "exitcode : -9" line is cut off (or the table was re-typed: "signal 9
# (SIGKILL) received by PID 811"), MPICH Hydra's "KILLED BY SIGNAL: 9
# (Killed)" (older Hydra: "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)"), Slurm's
# job state OUT_OF_MEMORY (sacct cuts it to "OUT_OF_ME+"), Python's multiprocessing repr "<Process
# name='Process-1' pid=12 parent=1 stopped exitcode=-SIGKILL>". Most often the kernel's or a cgroup's OOM
# killer whose own record is on another host's log; a symptom (tier 1) when anything in the log says more.
_EXIT_137 = lazy_re.compile(
    r"\b(?:[Ee]xit(?:ed)? (?:with )?(?:status )?(?:[Cc]ode|status)|[Ee]xit [Cc]ode|[Rr]eturn [Cc]ode|"
    r"returncode|non-zero status)[:=]?\s+(?:137|247|-9)\b|\bExited \(137\)|\*\*\* \[[^\]]*\] Error 137\b|"
    r"\bOUT_OF_ME(?:MORY\b|\+)|"
    r"\b(?:terminated|killed|interrupted) by signal (?:9\b|SIGKILL)|\bdied with signal (?:9\b|SIGKILL)|"
    r"\b[Ss]ignal 9 \(SIGKILL\) received by PID|KILLED BY SIGNAL: 9\b|"
    r"EXIT STRING: Killed \(signal 9\)|\bexitcode=-(?:SIGKILL|9)\b"
)
_CPU = lazy_re.compile(
    r"DefaultCPUAllocator: (?:can't allocate memory|not enough memory): you tried to allocate (\d+) bytes"
)
_MEMERR = lazy_re.compile(r"^(?:builtins\.)?MemoryError\b")
# Rust's and other native allocators abort with this (HF tokenizers, safetensors); two ranks'
# copies are often interleaved mid-line, so the number is read from a clean occurrence.
_NATIVE = lazy_re.compile(r"memory allocation of (\d+) bytes failed")
_NATIVE_ANY = lazy_re.compile(r"memory allocation of .*bytes failed")
_OSERR = lazy_re.compile(r"\[Errno 12\] Cannot allocate memory")
# deepspeed/runtime/utils.py see_memory_usage: the host's memory as psutil sees it. A report at the
# machine's limit is the host running out even when the OOM killer's own line is not in the logs.
_DS_MEMORY = lazy_re.compile(r"CPU Virtual Memory:\s*used = (\d+(?:\.\d+)?) GB, percent = (\d+(?:\.\d+)?)%")
HOST_MEMORY_LIMIT_PERCENT = 95.0


def _kernel(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {
        "pid": int(m.group("pid")),
        "process": m.group("name"),
        "killer": "kernel_oom_killer",
    }
    if m.group("anon"):
        facts["anon_rss_bytes"] = int(m.group("anon")) * 1024
    if m.group("cg"):
        facts["cgroup"] = True
    msg = (
        f"the kernel's OOM killer killed pid {facts['pid']} ({facts['process']})"
        + (
            f" holding {fmt_bytes(facts['anon_rss_bytes'])} anonymous memory"
            if "anon_rss_bytes" in facts
            else ""
        )
        + (" (memory cgroup limit)" if m.group("cg") else "")
    )
    return [row.event(hit, msg, facts, dedupe=(row.code, facts["pid"]))]


def _has_killed_line(hit: Hit) -> bool:
    """The record's own "Killed process N (name)" line is in the window: that line is the finding."""
    return any(
        _KERNEL.search(ln.text) for ln in [*hit.before(24, same_rank=False), *hit.after(48, same_rank=False)]
    )


def _oom_report(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if _has_killed_line(hit):
        return []
    gd = m.groupdict()
    facts: dict[str, Any] = {"killer": "kernel_oom_killer", "oom_record": row.name}
    if gd.get("pid"):
        facts["pid"] = int(gd["pid"])
    if gd.get("name") or gd.get("comm"):
        facts["process"] = gd.get("name") or gd.get("comm")
    around = [ln.text for ln in [*hit.before(24, same_rank=False), hit.line, *hit.after(24, same_rank=False)]]
    for t in around:
        c = _COMM.search(t)
        if c and "pid" not in facts:
            facts["pid"], facts["process"] = int(c.group(1)), facts.get("process", c.group(2))
        if "mem_cgroup_out_of_memory" in t or "CONSTRAINT_MEMCG" in t or "oom_memcg=/" in t:
            facts["cgroup"] = True
    who = (
        f"pid {facts['pid']} ({facts.get('process', '?')})"
        if "pid" in facts
        else f"a process ({facts['process']})"
        if "process" in facts
        else "a process"
    )
    msg = (
        f"the kernel's OOM killer ran for {who}"
        + (" (memory cgroup limit)" if facts.get("cgroup") else "")
        + f": its {row.name} is in the log, the 'Killed process' line is not"
    )
    return [row.event(hit, msg, facts, dedupe=(row.code, facts.get("pid", "record")))]


def _task_table(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if _has_killed_line(hit):
        return []
    lines = [*hit.before(64, same_rank=False), hit.line, *hit.after(64, same_rank=False)]
    rows = [r for r in (_TASK_ROW.match(ln.text.strip()) for ln in lines) if r]
    header = any(_TASK_HEAD.search(ln.text) for ln in lines)
    if len(rows) < 3 and not header:
        return []  # one line of numbers in brackets is not the table
    if m.re == _TASK_ROW and rows and rows[0].group(1) != m.group(1):
        return []  # the table is read once, at its first row
    # the killer's choice (oom_badness): the most resident + swapped pages, never oom_score_adj -1000
    victims = [r for r in rows if int(r.group(5)) > -1000]
    facts: dict[str, Any] = {"killer": "kernel_oom_killer", "oom_record": "task table", "tasks": len(rows)}
    who = "a process"
    if victims:
        v = max(victims, key=lambda r: int(r.group(3)) + int(r.group(4)))
        facts.update(pid=int(v.group(1)), process=v.group(6), rss_pages=int(v.group(3)))
        who = f"pid {facts['pid']} ({facts['process']}, {fmt_bytes(facts['rss_pages'] * 4096)} resident)"
    return [
        row.event(
            hit,
            f"the kernel's OOM killer printed its task table: host memory ran out; the largest task is {who}",
            facts,
            dedupe=(row.code, "task_table"),
        )
    ]


def _slurm(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"killer": "slurm_cgroup", "oom_kill_events": int(m.group(1))}
    host = hit.line.host or ""
    if host.startswith("slurmstepd-"):  # newer Slurm names the node: "slurmstepd-<node>:"
        facts["host"] = host[len("slurmstepd-") :]
    return [
        row.event(
            hit,
            f"Slurm detected {m.group(1)} OOM-kill event(s) in the job step",
            facts,
            dedupe=(row.code, "slurm"),
        )
    ]


def _slurm_limit(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"killer": "slurm_memory_limit"}
    if m.group(1):
        facts.update(used_kib=int(m.group(1)), limit_kib=int(m.group(2)))
    return [
        row.event(
            hit,
            "Slurm killed the step for exceeding its memory limit (--mem)",
            facts,
            dedupe=(row.code, "slurm"),
        )
    ]


def _evicted(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "Kubernetes evicted the pod: the node ran low on memory",
            {"killer": "kubelet_eviction"},
            dedupe=(row.code, "k8s"),
        )
    ]


def _k8s(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if re.match(r"\"?\s*:\s*false", hit.text[m.end() :]):
        return []  # docker inspect's State: "OOMKilled": false says it was not
    return [
        row.event(
            hit,
            "the container was OOMKilled (memory limit)",
            {"killer": "container_limit"},
            dedupe=(row.code, "k8s"),
        )
    ]


def _cpu(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    n = int(m.group(1))
    return [
        row.event(
            hit,
            f"PyTorch's CPU allocator could not allocate {fmt_bytes(n)} of host memory",
            {"requested_bytes": n, "bytes": n},
            dedupe=(row.code, hit.rank, n),
        )
    ]


def _ds_memory(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    used, pct = float(m.group(1)), float(m.group(2))
    later = [ln for ln in hit.after(48, same_rank=False) if _DS_MEMORY.search(ln.text)]
    if pct < HOST_MEMORY_LIMIT_PERCENT or later:
        return []  # below the limit, or not the last report: the last one decides
    return [
        row.event(
            hit,
            f"host memory reached {pct:.1f}% ({used:.1f} GB used) in the last "
            "memory report: the host ran out of memory (the kernel's OOM killer ends such a process)",
            {
                "host_memory_percent": pct,
                "host_memory_used_bytes": int(used * (1 << 30)),
                "killer": "host_memory_full",
            },
            dedupe=(row.code, "memory_report"),
        )
    ]


def _native(row: Signature, hit: Hit, _m: re.Match[str]) -> Optional[list[Event]]:
    t = hit.text
    m = _NATIVE.search(t)
    if t.count("memory allocation of") > 1:  # two processes' copies glued: read a clean one nearby
        m = next(
            (
                c
                for c in (
                    _NATIVE.search(ln.text)
                    for ln in hit.after(4, same_rank=False)
                    if ln.text.count("memory allocation of") == 1
                )
                if c
            ),
            None,
        )
    facts: dict[str, Any] = (
        {"requested_bytes": int(m.group(1)), "bytes": int(m.group(1))} if m and len(m.group(1)) < 16 else {}
    )
    facts["allocator"] = "native"
    return [
        row.event(
            hit,
            "a native allocator could not allocate "
            + (fmt_bytes(facts["bytes"]) if "bytes" in facts else "host memory")
            + " and aborted the process",
            facts,
            dedupe=(row.code, hit.rank, "native"),
        )
    ]


# faulthandler.enable() raises OSError ENOMEM when sigaltstack(2) refuses its alternate signal stack (CPython
# 3.9+ raises on that failure, bpo-37851; before it was ignored): the kernel says ENOMEM when the stack is
# smaller than the CPU's signal frame (x86 AMX tile state once torch / oneDNN enabled it, arm64 SVE/SME), not
# when host memory runs out. A Python exception of its own (RUN132), never the host OOM.
_SIGALTSTACK = lazy_re.compile(r"\bfaulthandler\.enable\(|\bsigaltstack\b|faulthandler\.py\b.*\benable\b")


def _oserr(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if any(_SIGALTSTACK.search(ln.text) for ln in [*hit.before(3, same_rank=False), hit.line]):
        return [
            row.event(
                hit,
                f"{hit.who()}: faulthandler.enable() failed with ENOMEM: not host memory - sigaltstack() "
                "refused Python's alternate signal stack as smaller than this CPU's signal frame (x86 AMX, "
                "arm64 SVE/SME); use a newer Python, or do not enable faulthandler (PYTHONFAULTHANDLER, the "
                "framework's own call)",
                {"errno": 12, "call": "faulthandler.enable", "problem": "sigaltstack_too_small"},
                code=C.PYTHON_EXCEPTION.code,
                dedupe=(C.PYTHON_EXCEPTION.code, hit.rank, "sigaltstack"),
            )
        ]
    return [
        row.event(
            hit,
            "the kernel refused a host allocation (ENOMEM: Cannot allocate memory)",
            {"errno": 12},
            dedupe=(row.code, hit.rank, "enomem"),
        )
    ]


# PaddlePaddle raises its ResourceExhaustedError as Python's MemoryError (pybind's bad_alloc mapping):
# "MemoryError: (ResourceExhausted) Out of memory error on GPU 0. ..." or "MemoryError: ResourceExhausted
# Error:" with the "Out of memory error on GPU 0" below it: the device's memory (rules/oom_layers.py).
_PADDLE_DEVICE = lazy_re.compile(r"ResourceExhausted|Out of memory error on (?:GPU|NPU|XPU)")


# Paddle 2.x puts its C++ traceback between the two ("MemoryError: " then "C++ Traceback (most recent call
# last):", its frames, and the "Error Message Summary:" block with "ResourceExhaustedError: ... Out of memory
# error on GPU 0"): the summary is read past the frames, up to the next Python traceback.
_PADDLE_CPP_TB = lazy_re.compile(r"C\+\+ Traceback \(most recent call last\)|C\+\+ Call Stacks")
_PY_TB = lazy_re.compile(r"^\s*Traceback \(most recent call last\)")


def _memerr(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    near = hit.after(4)
    if any(_PADDLE_DEVICE.search(ln.text) for ln in (hit.line, *near)):
        return None
    if any(_PADDLE_CPP_TB.search(ln.text) for ln in near):
        for ln in hit.after(120):
            if _PY_TB.search(ln.text):
                break
            if _PADDLE_DEVICE.search(ln.text):
                return None
    return [
        row.event(
            hit,
            "Python raised MemoryError (host allocation failed)",
            {"exception": "MemoryError"},
            dedupe=(row.code, hit.rank),
        )
    ]


def _shell(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "Killing" in hit.text:
        return None
    g = m.groupdict()
    facts: dict[str, Any] = {
        "killer": "sigkill",
        "signal": "SIGKILL",  # the shell's "Killed" is strsignal(SIGKILL)
        "command": (g.get("cmd") or g.get("job") or "").strip()[:200],
    }
    if g.get("pid"):
        facts["pid"] = int(g["pid"])
    return [
        row.event(
            hit,
            f"the shell reports the command was Killed (SIGKILL): {clip(facts['command'], 80)}",
            facts,
            dedupe=(row.code, "shell", facts.get("pid")),
        )
    ]


# A launcher's own record of the worker (torchrun's failure table flattened onto one line, Python's
# CalledProcessError): `launcher` reads its rank, pid and host.
_LAUNCHER_RECORD = lazy_re.compile(r"exitcode\s*:|ChildFailedError|non-zero exit status|died with <Signals")


def _exit_137(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    rec = hit.text.strip()
    if _LAUNCHER_RECORD.search(rec) or any(
        "Process name:" in ln.text for ln in hit.before(3, same_rank=False)
    ):
        return None  # Open MPI's first-failure summary names the rank above its "Exit code:": launcher
    if m.group(0).startswith("OUT_OF_ME"):
        return [
            row.event(
                hit,
                f"Slurm recorded the job's state OUT_OF_MEMORY: {clip(rec, 120)} - its cgroup's memory limit "
                "(--mem) was reached and the OOM killer ended a process",
                {"killer": "slurm_cgroup", "record": rec[:200]},
                dedupe=(row.code, "slurm"),
            )
        ]
    facts: dict[str, Any] = {"killer": "sigkill", "record": rec[:200]}
    pid = re.search(r"received by PID (\d+)", rec)
    if pid:
        facts["pid"] = int(pid.group(1))
    if m.group(0).endswith("-9"):
        facts.update(exitcode=-9, signal="SIGKILL")
    elif "137" in m.group(0):
        facts.update(exit_status=137, signal="SIGKILL")  # 128 + 9: the shell's code for a SIGKILL death
    elif "247" in m.group(0):
        # -9 as an unsigned byte: a wrapper's sys.exit(-9)
        facts.update(exit_status=247, signal="SIGKILL")
    else:
        facts["signal"] = "SIGKILL"
    return [
        row.event(
            hit,
            f"a process ended by SIGKILL (signal 9): {clip(rec, 120)} - most often "
            "the kernel's or the container's OOM killer",
            facts,
            dedupe=(row.code, "exit_137"),
        )
    ]


def _killed_alone(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    pid = int(m.group("pid") or m.group("rpid"))
    facts: dict[str, Any] = {
        "pid": pid,
        "process": m.group("name") or m.group("rname"),
        "killer": "kernel_oom_killer",
        "oom_record": "reaper" if m.group("rpid") else "killed process",
    }
    if m.group("anon"):
        facts["anon_rss_bytes"] = int(m.group("anon")) * 1024
    msg = f"the kernel's OOM killer killed pid {pid} ({facts['process']})" + (
        f" holding {fmt_bytes(facts['anon_rss_bytes'])} anonymous memory" if "anon_rss_bytes" in facts else ""
    )
    return [row.event(hit, msg, facts, dedupe=(row.code, pid))]  # the same key as the "Out of memory" line


def _memcg_v1(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if _has_killed_line(hit):
        return []
    facts: dict[str, Any] = {"killer": "kernel_oom_killer", "cgroup": True, "memcg": m.group("limit")}
    for ln in hit.after(6, same_rank=False):
        u = re.search(r"memory: usage (\d+)kB, limit (\d+)kB", ln.text)
        if u:
            facts.update(usage_bytes=int(u.group(1)) * 1024, limit_bytes=int(u.group(2)) * 1024)
            break
    limit = f" ({fmt_bytes(facts['limit_bytes'])})" if "limit_bytes" in facts else ""
    return [
        row.event(
            hit,
            f"the kernel's OOM killer ran in memory cgroup {m.group('limit')}: a task reached its "
            f"limit{limit}",
            facts,
            dedupe=(row.code, "memcg"),
        )
    ]


K, A = C.HOST_OOM_KILLED.code, C.HOST_ALLOC_FAILED.code
SIGNATURES = (
    Signature(
        "kernel oom killer",
        _KERNEL,
        _kernel,
        K,
        anchors=(b"ut of memory", b"Kill"),
        worth=(rb"[Oo]ut of memory", rb"Kill"),
        words=("out of memory",),
    ),
    Signature(
        "kernel oom killed process",
        _KILLED_ALONE,
        _killed_alone,
        K,
        anchors=(b"Killed process", b"reaped process"),
        worth=(rb"Killed process", rb"reaped process"),
        words=("killed process", "reaped process"),
    ),
    Signature(
        "memory cgroup v1 oom",
        _MEMCG_V1,
        _memcg_v1,
        K,
        anchors=(b"killed as a result of limit",),
        worth=(rb"killed as a result of limit",),
        words=("killed as a result of limit",),
    ),
    Signature(
        "oom killer header",
        _INVOKED,
        _oom_report,
        K,
        anchors=(b"oom-kill",),
        worth=(rb"oom-kill",),
        words=("oom",),
    ),
    Signature(
        "oom killer summary",
        _SUMMARY,
        _oom_report,
        K,
        anchors=(b"oom-kill",),
        worth=(rb"oom-kill",),
        words=("oom",),
    ),
    Signature(
        "oom killer call trace",
        _TRACE,
        _oom_report,
        K,
        anchors=(b"oom_kill_process", b"out_of_memory"),
        words=("oom",),
    ),
    Signature(
        "oom killer task table",
        lazy_re.compile(f"{_TASK_HEAD.pattern}|{_TASK_ROW.pattern}"),
        _task_table,
        K,
        anchors=(b"oom_score_adj name", b"Tasks state", b"]  "),
        worth=(rb"oom_score_adj name", rb"Tasks state", rb"\[\s*\d+\]\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+"),
        words=("oom_score_adj", "tasks state", "]"),
        anchor_from="the row's pid column, '[%7d]', then the uid's padding",
        examples=("[ 202779]  1000 202779 274650088 243385180 1957441536     7930          -998 python",),
    ),
    Signature(
        "slurm oom event",
        _SLURM,
        _slurm,
        K,
        anchors=(b"rror",),
        worth=(rb"\berror\b",),
        words=("oom",),
        anchor_from="slurmstepd's 'error:' prefix",
        examples=(
            "slurmstepd: error: Detected 1 oom_kill event in StepId=123.0. Some of your processes may have "
            "been killed by the cgroup out-of-memory handler.",
        ),
    ),
    Signature(
        "slurm memory limit",
        _SLURM_LIMIT,
        _slurm_limit,
        K,
        anchors=(b"rror",),
        worth=(rb"\berror\b",),
        words=("exceeded",),
        anchor_from="slurmstepd's 'error:' prefix",
        examples=("slurmstepd: error: Exceeded step memory limit at some point.",),
    ),
    Signature(
        "kubelet eviction",
        _EVICTED,
        _evicted,
        K,
        anchors=(b"low on resource",),
        worth=(rb"low on resource",),
        words=("low on resource",),
    ),
    Signature("container oomkilled", _K8S, _k8s, K, anchors=(b"Kill",), words=("oom",)),
    Signature(
        "cpu allocator",
        _CPU,
        _cpu,
        A,
        anchors=(b"rror",),
        worth=(rb"Error\b",),
        words=("defaultcpuallocator",),
        anchor_from="the 'RuntimeError: [enforce fail at alloc_cpu.cpp:...]' before it and its 'Error code "
        "12'",
        examples=(
            "RuntimeError: [enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate "
            "memory: you tried to allocate 1073741824 bytes. Error code 12 (Cannot allocate memory)",
        ),
    ),
    Signature(
        "deepspeed memory report",
        _DS_MEMORY,
        _ds_memory,
        K,
        anchors=(b"Virtual Memory:",),
        worth=(rb"Virtual Memory:",),
        words=("virtual memory",),
    ),
    Signature(
        "native allocator",
        _NATIVE_ANY,
        _native,
        A,
        anchors=(b"memory allocation of",),
        worth=(rb"memory allocation of",),
        words=("memory allocation of",),
    ),
    Signature(
        "enomem",
        _OSERR,
        _oserr,
        A,
        # Python's errno text by itself ("[Errno 12]" is OSError's own format): a title or a wrapper's second
        # line drops the 'OSError: ' before it
        anchors=(b"[Errno 12] Cannot allocate",),
        worth=(rb"\[Errno 12\] Cannot allocate",),
        words=("cannot allocate memory",),
        examples=("OSError: [Errno 12] Cannot allocate memory",),
    ),
    Signature(
        "memoryerror", _MEMERR, _memerr, A, anchors=(b"rror",), worth=(rb"Error\b",), words=("memoryerror",)
    ),
    Signature("shell killed", _SHELL, _shell, K, anchors=(b"Kill", b"killed", b"KILLED"), words=("killed",)),
    Signature("zsh killed", _ZSH, _shell, K, anchors=(b"killed",), words=("killed",)),
    Signature(
        "shell killed, translated",
        _SHELL_LOCALE,
        _shell,
        K,
        anchors=("已杀死".encode(), "強制終了".encode(), "Getötet".encode()),
        words=("已杀死", "強制終了", "getötet"),
    ),
    Signature(
        "sigkill exit status",
        _EXIT_137,
        _exit_137,
        K,
        tier=1,
        anchors=(
            b"xit",
            b"eturn",
            b"by signal",
            b"died with signal",
            b"SIGKILL",
            b"BY SIGNAL",
            b"rror 137",
            b"OUT_OF_ME",
            b"EXIT STRING",
            b"non-zero status",
        ),
        worth=(
            rb"\b137\b",
            rb"\b247\b",
            rb"by signal",
            rb"died with signal",
            rb"SIGKILL",
            rb"BY SIGNAL",
            rb"\s-9\b",
            rb"OUT_OF_ME",
            rb"EXIT STRING",
        ),
        words=("137", "247", "by signal", "died with signal", "sigkill", "-9", "out_of_me", "exit string"),
    ),
)
# Every pattern above needs one of its row's words in the line (lower case; checked before any of them).
parse = gated_reader(SIGNATURES)
