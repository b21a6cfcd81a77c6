"""host_oom: host memory exhausted.

Formats: the kernel's OOM killer (mm/oom_kill.c) "Out of memory: Killed process 1234 (python)
total-vm:..kB, anon-rss:..kB, file-rss:..kB, shmem-rss:..kB, UID:0 pgtables:..kB
oom_score_adj:0" (before 5.0: "Out of memory: Kill process 1234 (python) score 900 or
sacrifice child"; cgroups: "Memory cgroup out of memory: Killed process ..."); Slurm's
"slurmstepd: error: Detected 1 oom_kill event in StepId=..."/"oom-kill event(s)"; Kubernetes
"OOMKilled"; the shell's "Killed" for a SIGKILLed child; PyTorch's CPU allocator
(c10/core/impl/alloc_cpu.cpp) "DefaultCPUAllocator: can't allocate memory: you tried to allocate
N bytes. Error code 12 (Cannot allocate memory)"; Python's MemoryError.
"""

from __future__ import annotations

import re
from typing import Any

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit, event
from pgdoctor.knowledge.units import fmt_bytes

_KERNEL = re.compile(
    r"(?P<cg>Memory cgroup )?[Oo]ut of memory:? Kill(?:ed)? process (?P<pid>\d+) \((?P<name>[^)]*)\)"
    r"(?:.*?anon-rss:(?P<anon>\d+)kB)?")
_SLURM = re.compile(r"Detected (\d+) oom[-_]kill event")
_K8S = re.compile(r"\bOOMKilled\b")
# bash/sh job control: "<script>: line 12: 45678 Killed    python train.py", or a lone "Killed"
# for a foreground job.
_SHELL = re.compile(r"(?:line \d+: +(?P<pid>\d+) +Killed\s+(?P<cmd>\S.*)$|^Killed$)")
_CPU = re.compile(r"DefaultCPUAllocator: (?:can't allocate memory|not enough memory): you tried to allocate (\d+) bytes")
_MEMERR = re.compile(r"^(?:builtins\.)?MemoryError\b")


def parse(hit: Hit) -> list[Event]:
    t = hit.text
    m = _KERNEL.search(t)
    if m:
        facts: dict[str, Any] = {"pid": int(m.group("pid")), "process": m.group("name"), "killer": "kernel_oom_killer"}
        if m.group("anon"):
            facts["anon_rss_bytes"] = int(m.group("anon")) * 1024
        if m.group("cg"):
            facts["cgroup"] = True
        msg = (f"the kernel's OOM killer killed pid {facts['pid']} ({facts['process']})"
               + (f" holding {fmt_bytes(facts['anon_rss_bytes'])} anonymous memory" if "anon_rss_bytes" in facts else "")
               + (" (memory cgroup limit)" if m.group("cg") else ""))
        return [event(hit, C.HOST_OOM_KILLED.code, msg, facts, tier=0,
                      dedupe=(C.HOST_OOM_KILLED.code, facts["pid"]))]
    m = _SLURM.search(t)
    if m:
        return [event(hit, C.HOST_OOM_KILLED.code, f"Slurm detected {m.group(1)} OOM-kill event(s) in the job step",
                      {"killer": "slurm_cgroup", "oom_kill_events": int(m.group(1))},
                      dedupe=(C.HOST_OOM_KILLED.code, "slurm"))]
    if _K8S.search(t):
        return [event(hit, C.HOST_OOM_KILLED.code, "the container was OOMKilled (memory limit)",
                      {"killer": "container_limit"}, dedupe=(C.HOST_OOM_KILLED.code, "k8s"))]
    m = _CPU.search(t)
    if m:
        n = int(m.group(1))
        return [event(hit, C.HOST_ALLOC_FAILED.code,
                      f"PyTorch's CPU allocator could not allocate {fmt_bytes(n)} of host memory",
                      {"requested_bytes": n, "bytes": n}, dedupe=(C.HOST_ALLOC_FAILED.code, hit.rank, n))]
    if _MEMERR.search(t):
        return [event(hit, C.HOST_ALLOC_FAILED.code, "Python raised MemoryError (host allocation failed)",
                      {"exception": "MemoryError"}, dedupe=(C.HOST_ALLOC_FAILED.code, hit.rank))]
    m = _SHELL.search(t)
    if m and "Killing" not in t:
        facts = {"killer": "sigkill", "command": (m.group("cmd") or "").strip()[:200]}
        if m.group("pid"):
            facts["pid"] = int(m.group("pid"))
        return [event(hit, C.HOST_OOM_KILLED.code,
                      f"the shell reports the command was Killed (SIGKILL): {facts['command'][:80]}",
                      facts, dedupe=(C.HOST_OOM_KILLED.code, "shell", facts.get("pid")))]
    return []
