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
from typing import Any

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit, event
from pgdoctor.knowledge.units import fmt_bytes

_KERNEL = re.compile(
    r"(?P<cg>Memory cgroup )?[Oo]ut of memory:? Kill(?:ed)? process (?P<pid>\d+) \((?P<name>[^)]*)\)"
    r"(?:.*?anon-rss:(?P<anon>\d+)kB)?")
_SLURM = re.compile(r"Detected (\d+) oom[-_]kill event")
# Slurm's accounting (jobacct_gather) killing a step over its memory limit, older and newer words.
_SLURM_LIMIT = re.compile(r"Exceeded (?:job|step) memory limit|exceeded memory limit \((\d+) > (\d+)\), being killed")
_K8S = re.compile(r"\bOOMKilled\b")
# kubelet evicting a pod for node memory pressure: "The node was low on resource: memory. Container
# trainer was using 123Gi, which exceeds its request of 0."
_EVICTED = re.compile(r"The node was low on resource: memory")
# bash/sh job control: "<script>: line 12: 45678 Killed    python train.py", or a lone "Killed"
# for a foreground job.
_SHELL = re.compile(r"(?:line \d+: +(?P<pid>\d+) +Killed\s+(?P<cmd>\S.*)$|^Killed$)")
_CPU = re.compile(r"DefaultCPUAllocator: (?:can't allocate memory|not enough memory): you tried to allocate (\d+) bytes")
_MEMERR = re.compile(r"^(?:builtins\.)?MemoryError\b")
# Rust's and other native allocators abort with this (HF tokenizers, safetensors); two ranks'
# copies are often interleaved mid-line, so the number is read from a clean occurrence.
_NATIVE = re.compile(r"memory allocation of (\d+) bytes failed")
_NATIVE_ANY = re.compile(r"memory allocation of .*bytes failed")
_OSERR = re.compile(r"\[Errno 12\] Cannot allocate memory")
# deepspeed/runtime/utils.py see_memory_usage: the host's memory as psutil sees it. A report at the
# machine's limit is the host running out even when the OOM killer's own line is not in the logs.
_DS_MEMORY = re.compile(r"CPU Virtual Memory:\s*used = ([\d.]+) GB, percent = ([\d.]+)%")
HOST_MEMORY_LIMIT_PERCENT = 95.0


# Every pattern above needs one of these in the line (lower case; checked before any of them).
_WORDS = ("out of memory", "oom", "exceeded", "low on resource", "defaultcpuallocator", "virtual memory",
          "memory allocation of", "cannot allocate memory", "memoryerror", "killed")


def parse(hit: Hit) -> list[Event]:
    if not hit.may_hold(_WORDS):
        return []
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
    m = _SLURM_LIMIT.search(t)
    if m:
        facts = {"killer": "slurm_memory_limit"}
        if m.group(1):
            facts.update(used_kib=int(m.group(1)), limit_kib=int(m.group(2)))
        return [event(hit, C.HOST_OOM_KILLED.code, "Slurm killed the step for exceeding its memory limit (--mem)", facts,
                      dedupe=(C.HOST_OOM_KILLED.code, "slurm"))]
    if _EVICTED.search(t):
        return [event(hit, C.HOST_OOM_KILLED.code, "Kubernetes evicted the pod: the node ran low on memory",
                      {"killer": "kubelet_eviction"}, dedupe=(C.HOST_OOM_KILLED.code, "k8s"))]
    if _K8S.search(t):
        return [event(hit, C.HOST_OOM_KILLED.code, "the container was OOMKilled (memory limit)",
                      {"killer": "container_limit"}, dedupe=(C.HOST_OOM_KILLED.code, "k8s"))]
    m = _CPU.search(t)
    if m:
        n = int(m.group(1))
        return [event(hit, C.HOST_ALLOC_FAILED.code,
                      f"PyTorch's CPU allocator could not allocate {fmt_bytes(n)} of host memory",
                      {"requested_bytes": n, "bytes": n}, dedupe=(C.HOST_ALLOC_FAILED.code, hit.rank, n))]
    m = _DS_MEMORY.search(t)
    if m:
        used, pct = float(m.group(1)), float(m.group(2))
        later = [ln for ln in hit.after(48, same_rank=False) if _DS_MEMORY.search(ln.text)]
        if pct < HOST_MEMORY_LIMIT_PERCENT or later:
            return []  # below the limit, or not the last report: the last one decides
        return [event(hit, C.HOST_OOM_KILLED.code, f"host memory reached {pct:.1f}% ({used:.1f} GB used) in the last "
                      "memory report: the host ran out of memory (the kernel's OOM killer ends such a process)",
                      {"host_memory_percent": pct, "host_memory_used_bytes": int(used * (1 << 30)), "killer": "host_memory_full"},
                      dedupe=(C.HOST_OOM_KILLED.code, "memory_report"))]
    m = _NATIVE.search(t)
    if m or _NATIVE_ANY.search(t):
        if t.count("memory allocation of") > 1:  # two processes' copies glued: read a clean one nearby
            m = next((c for c in (_NATIVE.search(ln.text) for ln in hit.after(4, same_rank=False)
                                  if ln.text.count("memory allocation of") == 1) if c), None)
        facts = {"requested_bytes": int(m.group(1)), "bytes": int(m.group(1))} if m and len(m.group(1)) < 16 else {}
        facts["allocator"] = "native"
        return [event(hit, C.HOST_ALLOC_FAILED.code, "a native allocator could not allocate "
                      + (fmt_bytes(facts["bytes"]) if "bytes" in facts else "host memory") + " and aborted the process",
                      facts, dedupe=(C.HOST_ALLOC_FAILED.code, hit.rank, "native"))]
    if _OSERR.search(t):
        return [event(hit, C.HOST_ALLOC_FAILED.code, "the kernel refused a host allocation (ENOMEM: Cannot allocate memory)",
                      {"errno": 12}, dedupe=(C.HOST_ALLOC_FAILED.code, hit.rank, "enomem"))]
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
