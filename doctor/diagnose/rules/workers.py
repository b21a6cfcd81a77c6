"""Helper processes that died under a rank: DataLoader workers and Ray workers.

Formats: DataLoader's C++ signal handlers (torch/csrc/DataLoader.cpp), printed by the worker
itself: "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient
shared memory (shm).", "ERROR: Unexpected segmentation fault encountered in worker.", "ERROR:
Unexpected floating-point exception encountered in worker."; the main process
(torch/utils/data/_utils/signal_handling.py, dataloader.py): "RuntimeError: DataLoader worker
(pid 3855) is killed by signal: Bus error. It is possible that dataloader's workers are out of
shared memory.", "... is killed by signal: Killed.", "DataLoader worker (pid(s) 123, 456) exited
unexpectedly". Ray (raylet, core worker): "A worker died or was killed while executing a task by
an unexpected system error", "Worker unexpectedly exits with a connection error code 2. End of
file. ... (1) The process is killed by SIGKILL by OOM killer due to high memory usage.", and its
memory monitor "Task was killed due to the node running low on memory" / "OOM Killed"; Ray's
"The actor died unexpectedly before finishing this task" and vLLM's "Worker proc VllmWorker-0 died
unexpectedly"; Slurm cancelling the step ("*** STEP 12.0 ON node-3 CANCELLED AT ... DUE TO TIME
LIMIT ***", "... DUE TO PREEMPTION ***", "... DUE TO NODE FAILURE ***").
"""

from __future__ import annotations

import re
from typing import Any

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit, event

_DL_HANDLER = re.compile(r"Unexpected (bus error|segmentation fault|floating-point exception) encountered in worker")
# The signal's strsignal() text: "Bus error", "Killed", "Segmentation fault", "Aborted", ...
_DL_KILLED = re.compile(r"DataLoader worker \(pid (\d+)\) is killed by signal: (Bus error|Killed|Segmentation fault|"
                        r"Aborted|Floating point exception|Illegal instruction|Terminated|[A-Z][a-z]+(?: [a-z]+)*)")
_DL_EXITED = re.compile(r"DataLoader worker \(pid\(s\) ([\d, ]+)\) exited unexpectedly")
_RAY_MEMORY = re.compile(r"node running low on memory|Ray killed this worker|OOM Killed|ray\.exceptions\.OutOfMemoryError")
_RAY_DIED = re.compile(r"A worker died or was killed while executing a task by an unexpected system error|"
                       r"Worker unexpectedly exits with a connection error code (\d+)")
# Ray's actor-level report and vLLM's executor: "The actor died unexpectedly before finishing this
# task." (RayActorError), "Worker proc VllmWorker-0 died unexpectedly, shutting down executor."
_ACTOR_DIED = re.compile(r"actor died unexpectedly|Worker proc (\S+) died unexpectedly|worker process has died")
_SIG = {"bus error": "SIGBUS", "segmentation fault": "SIGSEGV", "floating-point exception": "SIGFPE",
        "Bus error": "SIGBUS", "Segmentation fault": "SIGSEGV", "Aborted": "SIGABRT", "Killed": "SIGKILL",
        "Floating point exception": "SIGFPE", "Illegal instruction": "SIGILL", "Terminated": "SIGTERM"}


def _dataloader(hit: Hit, sig: str, facts: dict[str, Any]) -> list[Event]:
    facts = {**facts, "signal": sig, "process": "dataloader_worker"}
    if sig == "SIGKILL":
        facts["killer"] = "sigkill"
        return [event(hit, C.HOST_OOM_KILLED.code, "a DataLoader worker was killed by SIGKILL (most often the kernel's "
                      "OOM killer: host memory)", facts, dedupe=(C.HOST_OOM_KILLED.code, "dataloader"))]
    msg = f"a DataLoader worker died on {sig}"
    if sig == "SIGBUS":
        facts["likely_cause"] = "shared_memory"
        msg += " (out of shared memory: /dev/shm too small, e.g. a container without --shm-size or --ipc=host)"
    return [event(hit, C.FATAL_SIGNAL.code, msg, facts, dedupe=(C.FATAL_SIGNAL.code, "dataloader", sig))]


_SLURM_CANCEL = re.compile(r"\*\*\* (?:JOB|STEP) (\S+) ON (\S+) CANCELLED AT (\S+)(?: DUE TO ([A-Z ]+?))? \*\*\*")


def parse(hit: Hit) -> list[Event]:
    t = hit.text
    m = _SLURM_CANCEL.search(t)
    if m:
        why = (m.group(4) or "a user's scancel").strip().lower()
        facts: dict[str, Any] = {"slurm_id": m.group(1), "host": m.group(2), "cancelled_at": m.group(3), "reason": why, "reporter": "slurm"}
        return [event(hit, C.RANK_EXITED.code, f"Slurm cancelled {m.group(1)} on {m.group(2)} ({why}): the scheduler "
                      "ended the ranks", facts, tier=2, dedupe=(C.RANK_EXITED.code, "slurm_cancel"))]  # often after a hang
    if "worker" in t:
        m = _DL_HANDLER.search(t)
        if m:
            return _dataloader(hit, _SIG[m.group(1)], {"reporter": "dataloader_worker"})
        m = _DL_KILLED.search(t)
        if m:
            return _dataloader(hit, _SIG.get(m.group(2).strip(), m.group(2).strip()),
                               {"worker_pid": int(m.group(1)), "reporter": "dataloader"})
        m = _DL_EXITED.search(t)
        if m:
            pids = [int(p) for p in re.findall(r"\d+", m.group(1))]
            return [event(hit, C.RANK_EXITED.code, f"DataLoader worker(s) {pids} exited unexpectedly (killed: often the "
                          "OOM killer or a crash in a dataset transform)", {"worker_pids": pids, "process": "dataloader_worker"},
                          dedupe=(C.RANK_EXITED.code, "dataloader"))]
    if _RAY_MEMORY.search(t) and ("Ray" in t or "ray" in t or "Task" in t):
        return [event(hit, C.HOST_OOM_KILLED.code, "Ray's memory monitor killed a worker: the node ran out of host memory",
                      {"killer": "ray_memory_monitor"}, dedupe=(C.HOST_OOM_KILLED.code, "ray"))]
    m = _ACTOR_DIED.search(t)
    if m and not _RAY_DIED.search(t):
        facts = {"reporter": "vllm" if m.group(1) else "ray"}
        if m.group(1):
            facts["worker"] = m.group(1)
        return [event(hit, C.RANK_EXITED.code, f"a worker process died unexpectedly ({t.strip()[:120]}); its own log or "
                      "dmesg (OOM killer) says why", facts, tier=1, dedupe=(C.RANK_EXITED.code, "ray"))]
    m = _RAY_DIED.search(t)
    if m:
        facts = {"reporter": "ray"}
        if m.group(1):
            facts["connection_error_code"] = int(m.group(1))
        ip = re.search(r"Worker IP address: ([\d.]+)", t)
        if ip:
            facts["host"] = ip.group(1)
        return [event(hit, C.RANK_EXITED.code, "a Ray worker process died unexpectedly (Ray names the OOM killer's "
                      "SIGKILL as the first suspect; check dmesg and the raylet's memory reports on that node)", facts,
                      dedupe=(C.RANK_EXITED.code, "ray"))]
    return []
