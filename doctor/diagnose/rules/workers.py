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
unexpectedly" and its WorkerMonitor's "Worker VllmWorkerProcess pid 4243 died, exit code: -11" (an exit
record); Ray's "Worker exit type: NODE_OUT_OF_MEMORY" (its memory monitor); Slurm cancelling the step
("*** STEP 12.0 ON node-3 CANCELLED AT ... DUE TO TIME LIMIT ***", "... DUE TO PREEMPTION ***", "... DUE
TO NODE FAILURE ***").
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit, event
from pgdoctor.diagnose.rules.launcher import EXIT, exit_event
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.knowledge.slurm import CANCEL as SLURM_CANCEL
from pgdoctor.knowledge.slurm import read_cancel
from pgdoctor.model import lazy_re

# PaddlePaddle's copy (paddle/fluid/imperative/data_loader.cc, 2.x): "ERROR: Unexpected BUS error encountered
# in DataLoader worker. This might be caused by insufficient shared memory (shm), please check whether
# use_shared_memory is set and storage space in /dev/shm is enough", "... segmentation fault encountered in
# DataLoader workers.", "... floating-point exception encountered in DataLoader worker.".
_DL_HANDLER = lazy_re.compile(
    r"Unexpected (bus error|BUS error|segmentation fault|floating-point exception) encountered in "
    r"(?:DataLoader )?workers?\b"
)
# The signal's strsignal() text: "Bus error", "Killed", "Segmentation fault", "Aborted", ...; PaddlePaddle's
# copy (paddle/fluid/imperative/data_loader.cc): "DataLoader process (pid 10222) exited is killed by signal:
# Killed."
_DL_KILLED = lazy_re.compile(
    r"Data[Ll]oader (?:worker|process) \(pid (\d+)\) (?:exited )?is killed by signal(?:ed)?: "
    r"(Bus error|Killed|Segmentation fault|"
    r"Aborted|Floating point exception|Illegal instruction|Terminated|[A-Z][a-z]+(?: [a-z]+)*)"
)
# torch/csrc/DataLoader.cpp (errorIfAnyWorkerFails, torch 0.4-2.x) for a worker that exited with a status:
# "DataLoader worker (pid 7948) exited unexpectedly with exit code 1. Details are lost due to
# multiprocessing. Rerunning with num_workers=0 may give better error trace." (an exception in the worker,
# e.g. /dev/shm full in a container).
_DL_EXITED = lazy_re.compile(
    r"DataLoader worker \(pid\(s\) ([\d, ]+)\) exited unexpectedly|"
    r"DataLoader worker \(pid (\d+)\) exited unexpectedly with exit code (-?\d+)"
)
# Ray 2.x's worker exit type when its memory monitor killed the worker (common.proto WorkerExitType), in
# ActorDiedError's text: "Worker exit type: NODE_OUT_OF_MEMORY Worker exit detail: ...".
_RAY_MEMORY = lazy_re.compile(
    r"node running low on memory|Ray killed this worker|OOM Killed|ray\.exceptions\.OutOfMemoryError|"
    r"exit type: NODE_OUT_OF_MEMORY"
)
# The raylet's summary of its memory monitor (node_manager.cc, Ray 2.x): "(raylet) node_manager.cc:3049:
# 10 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other
# reasons at node (ID: ..., IP: 10.0.62.231) ..."; and the task's own error "Memory on the node (IP:
# 10.0.0.1, ID: ...) where the task (...) was running was 29.30GB / 30.84GB (0.950027), which exceeds
# the memory usage threshold of 0.95. Ray killed this worker ...". A terminal may hard-wrap them.
_RAY_PRESSURE = lazy_re.compile(
    r"(\d+) Workers \(tasks / actors\) killed due to memory pressure \(OOM\)|"
    r"which exceeds the memory usage threshold of (\d+(?:\.\d+)?)|"
    # the same error cut before its threshold: its opening is Ray's own ("... where the task (task ID: ...,
    # name=head, pid=4503, memory used=...)" or "where the actor")
    r"Memory on the node \(IP: [\d.]+, ID: \w+\) where the (?:task|actor)"
)
# Ray 0.8-1.13's memory monitor (python/ray/memory_monitor.py) raised RayOutOfMemoryError before a task ran
# on a node over its threshold: "More than 95% of the memory on node ip-172-31-0-1 is used (14.77 / 15.46
# GB). The top 10 memory consumers are: ..."
# A terminal may wrap it after "on node": the row triggers on its opening and reads the joined lines.
_RAY1_MEMORY = lazy_re.compile(r"More than \d+% of the memory on\b")
_RAY1_WHOLE = lazy_re.compile(
    r"More than (\d+)% of the memory on\s+node\s+(\S+)\s+is used"
    r"(?: \((\d+(?:\.\d+)?) / (\d+(?:\.\d+)?) GB\))?"
)
_RAY_DIED = lazy_re.compile(
    # (Ray 0.7-0.8's raylet, pushed to the driver as a WARNING: "A worker died or was killed while executing
    # task ffffffffffffffffeb124b350200.")
    r"A worker died or was killed while executing (?:a task by an unexpected system error|task [0-9a-f]+)|"
    r"Worker unexpectedly exits with a connection error code (\d+)"
)
# Ray's actor-level report and vLLM's executor: "The actor died unexpectedly before finishing this
# task." (RayActorError), "Worker proc VllmWorker-0 died unexpectedly, shutting down executor." (v1
# multiproc_executor.py; 0.11+ adds "(exit code: -9)"), its client's "Engine core proc EngineCore_DP0 died
# unexpectedly, shutting down client." (v1/engine/core_client.py 0.8-0.34), its Ray executor v2's
# "RayWorkerProc rank=[1] died unexpectedly, shutting down executor." (0.34); Ray's
# task-level ones (python/ray/exceptions.py): "RayWorkerError: The worker died unexpectedly while executing
# this task." (0.x), "WorkerCrashedError: The worker died unexpectedly while executing this task. Check
# python-core-worker-*.log files ..." (1.x-2.x), "LocalRayletDiedError: The task's local raylet died."
# The same classes named by a task that depended on the dead process, whose message comes after the remote
# traceback (a paste cut before it): "ray.exceptions.RayTaskError(ActorDiedError): ray::main_task() (pid=
# 1042684, ip=10.0.0.1)" (RayTaskError(cause) names the cause's class), or the class alone on its line.
_ACTOR_DIED = lazy_re.compile(
    r"actor died unexpectedly|(?:Worker|Engine core) proc (\S+) died unexpectedly|worker process has died|"
    r"RayWorkerProc (rank=\S+) died unexpectedly|"
    r"worker died unexpectedly while executing|task's local raylet died|"
    r"\bRayTaskError\((?:ActorDiedError|RayActorError|WorkerCrashedError|LocalRayletDiedError)\)|"
    r"\bray\.exceptions\.(?:ActorDiedError|WorkerCrashedError)\s*$"
)
# The GCS when a whole node stops answering (gcs_node_manager.cc / monitor.cc, Ray 0.8-2.x), logged as a
# WARNING by the driver: "The node with node id: 7c1e and address: 10.0.0.13 and node name: 10.0.0.13 has
# been marked dead because the detector has missed too many heartbeats from it. This can happen when a
# (1) raylet crashes unexpectedly (OOM, preempted node, etc.) (2) raylet has lagging heartbeats ..."
# (older: "The node with node id <hex> has been marked dead ..."). A consequence tier: the node's own
# kill record (OOM killer, preemption), when the log has it, is the cause.
_NODE_DEAD = lazy_re.compile(
    r"The node with node id:? (\w+)(?: and address: ([\d.]+))?.{0,200}?has been marked dead because the "
    r"detector has missed too many heartbeats"
)
# The GCS's death cause of an actor whose node died (gcs_actor_manager.cc GenNodeDiedCause, Ray 2.10+), in
# ActorDiedError's text (Ray 2.0-2.9 "The actor is dead because its node has died. Node Id: 677d..."; an actor
# whose owner went with its node: "The actor is dead because its owner has died. Owner Id: ... Worker exit
# detail: Owner's node has crashed."): "The actor died because its node has died. Node Id: 699d..." then,
# on the next line, "\tthe actor's node was terminated expectedly: received SIGTERM" / "...terminated
# unexpectedly: health check failed due to missing too many heartbeats" / "...was preempted: <drain reason>".
# The raylet's
# agent when the raylet itself ended (dashboard/agent.py): "Raylet is terminated. Termination is unexpected.
# Possible reasons include: (1) SIGKILL by the user or system OOM killer, ..."; ObjectLostError's "All copies
# of 00ff have been lost due to node failure."; NodeDiedError (Ray 2.x) "...the node (...) dying".
_NODE_DIED = lazy_re.compile(
    r"actor (?:died|is dead) because its node has died\.?(?: Node Id: (?P<node>\w+))?|"
    r"(?P<owner>Owner's node has crashed)|"
    r"(?P<raylet>Raylet is terminated)[.:].{0,120}?Termination is unexpected|"
    r"(?P<lost>have been lost due to node failure)|"
    r"(?P<nodedied>NodeDiedError)\b"
)
_NODE_DEATH = lazy_re.compile(
    r"the actor's node was (?P<how>terminated expectedly|terminated unexpectedly|preempted): ?(?P<why>[^\n]*)"
)
# Process pools whose worker was killed (the OOM killer most often): concurrent.futures'
# "BrokenProcessPool: A process in the process pool was terminated abruptly while the future was running or
# pending.", joblib/loky's "TerminatedWorkerError: A worker process managed by the executor was unexpectedly
# terminated. ... The exit codes of the workers are {SIGKILL(-9)}" (the codes may come on a later line).
_POOL = lazy_re.compile(
    r"A process in the process pool was terminated abruptly|"
    r"A worker process managed by the executor was unexpectedly terminated|"
    r"The exit codes of the workers are \{(?P<codes>[^}]*)\}"
)
# vLLM's WorkerMonitor (vllm/executor/multiproc_worker_utils.py, 0.4-0.8) for a worker process that ended:
# "Worker VllmWorkerProcess pid 4243 died, exit code: -9" (multiprocessing's exitcode: -N for signal N).
_VLLM_WORKER = lazy_re.compile(r"Worker (\S+) pid (\d+) died, exit code: (-?\d+)")
_VLLM_EXITCODE = lazy_re.compile(r" \(exit code: (-?\d+)\)")
_SIG = {
    "bus error": "SIGBUS",
    "BUS error": "SIGBUS",
    "segmentation fault": "SIGSEGV",
    "floating-point exception": "SIGFPE",
    "Bus error": "SIGBUS",
    "Segmentation fault": "SIGSEGV",
    "Aborted": "SIGABRT",
    "Killed": "SIGKILL",
    "Floating point exception": "SIGFPE",
    "Illegal instruction": "SIGILL",
    "Terminated": "SIGTERM",
}


def _dataloader(hit: Hit, sig: str, facts: dict[str, Any]) -> list[Event]:
    facts = {**facts, "signal": sig, "process": "dataloader_worker"}
    if sig == "SIGKILL":
        facts["killer"] = "sigkill"
        return [
            event(
                hit,
                C.HOST_OOM_KILLED.code,
                "a DataLoader worker was killed by SIGKILL (most often the kernel's OOM killer: host memory)",
                facts,
                dedupe=(C.HOST_OOM_KILLED.code, "dataloader"),
            )
        ]
    msg = f"a DataLoader worker died on {sig}"
    if sig == "SIGBUS":
        facts["likely_cause"] = "shared_memory"
        msg += (
            " (out of shared memory: /dev/shm too small, e.g. a container without --shm-size or --ipc=host)"
        )
    return [event(hit, C.FATAL_SIGNAL.code, msg, facts, dedupe=(C.FATAL_SIGNAL.code, "dataloader", sig))]


def _slurm_cancel(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    c = read_cancel(m)  # every Slurm version's shape (knowledge/slurm.py)
    why = "a user's scancel" if c.reason == "scancel" else c.reason
    facts: dict[str, Any] = {
        "slurm_id": c.slurm_id,
        "cancelled_at": c.at,
        "reason": why,
        "reporter": "slurm",
    }
    on = ""
    if c.host:
        facts["host"] = c.host
        on = f" on {c.host}"
    # A preemption or a failed node ended the ranks from outside: a cause, whose echo the peers' dropped
    # connections are; a time limit or a user's scancel is the end of something else (a hang, a decision).
    outside = c.reason in ("preemption", "node failure")
    if outside:
        facts["preempted" if c.reason == "preemption" else "node_lost"] = True
    return [
        row.event(
            hit,
            f"Slurm cancelled {c.slurm_id}{on} ({why}): the scheduler ended the ranks"
            + (", not a failure of their own" if outside else ""),
            facts,
            tier=0 if outside else None,
            dedupe=(row.code, "slurm_cancel"),
        )
    ]  # a long silence before it is a hang: stalled_cancel.py reads that first


def _dl_handler(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return _dataloader(hit, _SIG[m.group(1)], {"reporter": "dataloader_worker"})


def _dl_killed(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return _dataloader(
        hit,
        _SIG.get(m.group(2).strip(), m.group(2).strip()),
        {"worker_pid": int(m.group(1)), "reporter": "dataloader"},
    )


def _dl_exited(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group(2):
        code = int(m.group(3))
        return [
            row.event(
                hit,
                f"DataLoader worker {m.group(2)} exited with code {code}: an exception inside the worker "
                "(its "
                "traceback is lost; rerun with num_workers=0). In a container the usual one is /dev/shm full "
                "(--shm-size / --ipc=host)",
                {"worker_pid": int(m.group(2)), "exitcode": code, "process": "dataloader_worker"},
                dedupe=(row.code, "dataloader"),
            )
        ]
    pids = [int(p) for p in re.findall(r"\d+", m.group(1))]
    return [
        row.event(
            hit,
            f"DataLoader worker(s) {pids} exited unexpectedly (killed: often the "
            "OOM killer or a crash in a dataset transform)",
            {"worker_pids": pids, "process": "dataloader_worker"},
            dedupe=(row.code, "dataloader"),
        )
    ]


def _ray_memory(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = hit.text
    if not ("Ray" in t or "ray" in t or "Task" in t or "NODE_OUT_OF_MEMORY" in t):
        return None
    return [
        row.event(
            hit,
            "Ray's memory monitor killed a worker: the node ran out of host memory",
            {"killer": "ray_memory_monitor"},
            dedupe=(row.code, "ray"),
        )
    ]


def _ray1_memory(row: Signature, hit: Hit, _m: re.Match[str]) -> Optional[list[Event]]:
    m = _RAY1_WHOLE.search(" ".join([hit.text, *(ln.text for ln in hit.after(2, same_rank=False))]))
    if m is None:
        return None
    return [
        row.event(
            hit,
            f"Ray's memory monitor found node {m.group(2)} over {m.group(1)}% host memory"
            + (f" ({m.group(3)} / {m.group(4)} GB)" if m.group(3) else "")
            + " and raised RayOutOfMemoryError",
            {
                "killer": "ray_memory_monitor",
                "host": m.group(2),
                "memory_usage_threshold": int(m.group(1)) / 100,
                **({"host_memory_used_bytes": int(float(m.group(3)) * 1e9)} if m.group(3) else {}),
            },
            dedupe=(row.code, "ray"),
        )
    ]


def _ray_pressure(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    text, used = hit.block(3, sep="")
    facts: dict[str, Any] = {"killer": "ray_memory_monitor"}
    if m.group(1):
        facts["workers_killed"] = int(m.group(1))
    if m.group(2):
        facts["memory_usage_threshold"] = float(m.group(2))
    ip = re.search(r"IP: ?(\d{1,3}(?:\.\d{1,3}){3})", text)
    if ip:
        facts["host"] = ip.group(1)
    return [
        row.event(
            hit,
            "Ray's memory monitor killed worker(s): the node ran out of host memory"
            + (f" ({facts['workers_killed']} killed)" if "workers_killed" in facts else ""),
            facts,
            used,
            dedupe=(row.code, "ray"),
        )
    ]


_ACTOR_PID = lazy_re.compile(r"^\s*pid: (\d{1,9})\s*$")


def _actor_died(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = hit.text
    if _RAY_DIED.search(t):
        return None
    worker = m.group(1) or m.group(2)
    facts: dict[str, Any] = {"reporter": "vllm" if worker else "ray"}
    if worker:
        facts["worker"] = worker
        # vLLM 0.11+ says the worker's exit code ("died unexpectedly (exit code: -9)"): an exit like its
        # multiproc_worker_utils.py's "Worker ... pid N died, exit code: -9" (a signal, the OOM killer's)
        ec = _VLLM_EXITCODE.match(t, m.end())
        if ec and int(ec.group(1)) != 0:
            facts["exitcode"] = int(ec.group(1))
            return [exit_event(hit, facts, None)]
    # Ray 2.x's ActorDiedError lists the actor under it ("\tclass_name: RayWorkerWrapper", "\tactor_id: ...",
    # "\tpid: 2370037"): the process whose own lines carry Ray's "(RayWorkerWrapper pid=2370037) " prefix
    if not worker:
        for ln in hit.after(8, same_rank=False):
            pid = _ACTOR_PID.match(ln.text)
            if pid:
                facts["worker_pid"] = int(pid.group(1))
                break
    return [
        row.event(
            hit,
            f"a worker process died unexpectedly ({clip(t.strip(), 120)}); its own log or "
            "dmesg (OOM killer) says why",
            facts,
            dedupe=(row.code, "ray"),
        )
    ]


def _vllm_worker(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    code = int(m.group(3))
    if code == 0:
        return None
    facts: dict[str, Any] = {
        "exitcode": code,
        "pid": int(m.group(2)),
        "worker": m.group(1),
        "reporter": "vllm",
    }
    return [exit_event(hit, facts, None)]


def _node_dead(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"reporter": "ray", "node_id": m.group(1)}
    if m.group(2):
        facts["host"] = m.group(2)
    return [
        row.event(
            hit,
            f"Ray lost node {m.group(2) or m.group(1)} (it missed its heartbeats): its raylet crashed, "
            "was OOM-killed or the machine was preempted; that node's dmesg and raylet.out say which",
            facts,
            dedupe=(row.code, "ray_node", m.group(1)),
        )
    ]


def _node_died(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"reporter": "ray"}
    if m.group("raylet"):
        facts["reason"] = "raylet died"
        msg = (
            "Ray's raylet on a node ended unexpectedly (SIGKILL by the OOM killer or the user, or a crash): "
            "the node's workers died with it"
        )
        return [row.event(hit, msg, facts, tier=1, dedupe=(row.code, "ray_node"))]
    if m.group("owner"):
        facts["reason"] = "owner node crashed"
        msg = "a Ray actor died with its owner, whose node crashed: the ranks ended with the node"
        return [row.event(hit, msg, facts, dedupe=(row.code, "ray_node"))]
    if m.group("lost") or m.group("nodedied"):
        facts["reason"] = "node failure"
        return [
            row.event(
                hit,
                f"a Ray node died and took the job's work with it ({clip(hit.text.strip(), 100)})",
                facts,
                tier=1,
                dedupe=(row.code, "ray_node"),
            )
        ]
    if m.group("node"):
        facts["node_id"] = m.group("node")
    text, used = hit.block(3, sep="\n")
    d = _NODE_DEATH.search(text)
    how = d.group("how") if d else ""
    why = d.group("why").strip() if d else ""
    if how == "preempted":
        facts.update(reason="preemption", preempted=True)
    elif how:
        facts["reason"] = "node terminated " + how.split()[1]
    else:
        facts["reason"] = "node died"
    if why:
        facts["death_detail"] = clip(why, 120)
    if "heartbeat" in why:
        facts["likely_cause"] = "node lost (raylet OOM-killed, crashed or preempted, or a network partition)"
    msg = (
        "a Ray actor's node died"
        + (f" ({clip(how + ': ' + why if why else how, 100)})" if how else "")
        + ": the ranks on it ended with the node, not by an error of their own; that node's dmesg and "
        "raylet.out say why it went"
    )
    return [row.event(hit, msg, facts, used, dedupe=(row.code, "ray_node", facts.get("node_id")))]


def _pool(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    used = [hit.line, *hit.after(6, same_rank=False)]
    text = " ".join(ln.text for ln in used)
    codes = _POOL.search(text[text.find("The exit codes") :]) if "The exit codes" in text else None
    sig = None
    if codes is not None and codes.group("codes"):
        s = re.search(r"SIG([A-Z]+)\(-?\d+\)", codes.group("codes"))
        sig = f"SIG{s.group(1)}" if s else None
    if sig == "SIGKILL":
        return [
            event(
                hit,
                C.HOST_OOM_KILLED.code,
                "a process pool's worker was killed by SIGKILL (most often the kernel's OOM killer: host "
                "memory)",
                {"signal": sig, "killer": "sigkill", "process": "pool_worker"},
                used,
                dedupe=(C.HOST_OOM_KILLED.code, "pool"),
            )
        ]
    if m.group("codes") is not None:
        return []  # the exit codes' line of a report its first line already gave
    facts: dict[str, Any] = {"process": "pool_worker"}
    if sig:
        facts["signal"] = sig
    return [
        row.event(
            hit,
            "a process pool's worker was terminated abruptly"
            + (f" ({sig})" if sig else " (killed: often the OOM killer, or a crash in native code)"),
            facts,
            used,
            dedupe=(row.code, "pool"),
        )
    ]


def _ray_died(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"reporter": "ray"}
    if m.group(1):
        facts["connection_error_code"] = int(m.group(1))
    pid = re.search(r"Worker PID: (\d{1,9})\b", hit.text)
    if pid:
        facts["worker_pid"] = int(pid.group(1))
    ip = re.search(r"Worker IP address: ([\d.]+)", hit.text)
    if ip:
        facts["host"] = ip.group(1)
    return [
        row.event(
            hit,
            "a Ray worker process died unexpectedly (Ray names the OOM killer's "
            "SIGKILL as the first suspect; check dmesg and the raylet's memory reports on that node)",
            facts,
            dedupe=(row.code, "ray"),
        )
    ]


_PREFIX = "the 'error:' / 'ERROR:' / '...Error:' its reporter puts before the message"
SIGNATURES = (
    Signature(
        "slurm cancel",
        SLURM_CANCEL,
        _slurm_cancel,
        C.RANK_EXITED.code,
        tier=2,
        anchors=(b"rror",),
        worth=(rb"\berror\b",),
        anchor_from="slurmstepd's 'error:' prefix",
        examples=(
            "slurmstepd: error: *** STEP 12.0 ON node-3 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT "
            "***",
        ),
    ),
    Signature(
        "dataloader handler",
        _DL_HANDLER,
        _dl_handler,
        C.FATAL_SIGNAL.code,
        anchors=(b"ERROR", b"rror"),
        worth=(rb"\bERROR\b",),
        anchor_from=_PREFIX,
        examples=(
            "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared "
            "memory (shm).",
        ),
    ),
    Signature(
        "dataloader killed",
        _DL_KILLED,
        _dl_killed,
        C.FATAL_SIGNAL.code,
        anchors=(b"rror",),
        worth=(rb"Error\b",),
        anchor_from=_PREFIX,
        examples=("RuntimeError: DataLoader worker (pid 3855) is killed by signal: Bus error.",),
    ),
    Signature(
        "dataloader exited",
        _DL_EXITED,
        _dl_exited,
        C.RANK_EXITED.code,
        # by the message's own words: a title or a wrapper's second line has no 'RuntimeError: ' before it
        anchors=(b"DataLoader worker (pid",),
        worth=(rb"DataLoader worker \(pid",),
        examples=(
            "RuntimeError: DataLoader worker (pid(s) 123, 456) exited unexpectedly",
            "RuntimeError: DataLoader worker (pid 7948) exited unexpectedly with exit code 1. Details "
            "are lost due "
            "to multiprocessing. Rerunning with num_workers=0 may give better error trace.",
        ),
    ),
    Signature(
        "ray memory monitor",
        _RAY_MEMORY,
        _ray_memory,
        C.HOST_OOM_KILLED.code,
        anchors=(b"rror", b"Kill", b"NODE_OUT_OF_MEMORY"),
        worth=(rb"Error\b", rb"Kill", rb"NODE_OUT_OF_MEMORY"),
        anchor_from="'ray.exceptions.OutOfMemoryError' or the 'OOM Killed' / 'Ray killed' of Ray's report",
        examples=("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",),
    ),
    Signature(
        "ray 1.x memory monitor",
        _RAY1_MEMORY,
        _ray1_memory,
        C.HOST_OOM_KILLED.code,
        anchors=(b"of the memory on",),
        worth=(rb"of the memory on",),
    ),
    Signature(
        "ray memory pressure",
        _RAY_PRESSURE,
        _ray_pressure,
        C.HOST_OOM_KILLED.code,
        anchors=(b".cc:", b"rror", b"Memory on the node"),
        worth=(rb"memory pressure", rb"Error\b", rb"Memory on the node"),
        anchor_from="the raylet's 'node_manager.cc:NNNN:' source location before its summary, or the task "
        "error's exception type",
        examples=(
            "(raylet) [2023-04-09 07:23:59,445 E 395 395] (raylet) node_manager.cc:3049: 10 Workers (tasks / "
            "actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node "
            "(ID: e5d9, IP: 10.0.62.231) over the last time period.",
            "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory. Memory "
            "on the node (IP: 10.0.0.1, ID: ab12) where the task (task ID: ff, name=train) was running was "
            "29.30GB / 30.84GB (0.950027), which exceeds the memory usage threshold of 0.95.",
        ),
    ),
    Signature(
        "ray node died",
        _NODE_DIED,
        _node_died,
        C.RANK_EXITED.code,
        anchors=(
            b"its node has died",
            b"node has crashed",
            b"Raylet is terminated",
            b"lost due to node failure",
            b"NodeDiedError",
        ),
        worth=(
            rb"its node has died",
            rb"node has crashed",
            rb"Raylet is terminated",
            rb"lost due to node failure",
            rb"NodeDiedError",
        ),
    ),
    Signature(
        "process pool worker terminated",
        _POOL,
        _pool,
        C.RANK_EXITED.code,
        tier=1,
        anchors=(b"terminated abruptly", b"unexpectedly terminated", b"exit codes of the workers"),
        worth=(rb"terminated abruptly", rb"unexpectedly terminated", rb"exit codes of the workers"),
    ),
    Signature(
        "actor died",
        _ACTOR_DIED,
        _actor_died,
        C.RANK_EXITED.code,
        tier=1,
        # Ray's sentences by their own words as well: Ray Train and Tune print the exception type on one
        # line and its message on the next, and a title quotes the message alone.
        anchors=(
            b"rror",
            b"actor died unexpectedly",
            b"died unexpectedly while executing",
            b"local raylet died",
        ),
        worth=(
            rb"Error\b",
            rb"actor died unexpectedly",
            rb"died unexpectedly while executing",
            rb"local raylet died",
        ),
        anchor_from="vLLM's 'ERROR' log level before 'Worker proc ... died unexpectedly' (Ray's sentences "
        "hold their own anchors)",
        examples=(
            "ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.",
            "ERROR 04-23 10:00:00 multiproc_executor.py:123] Worker proc VllmWorker-0 died unexpectedly",
            "ray.exceptions.WorkerCrashedError: The worker died unexpectedly while executing this task.",
            "ray.exceptions.LocalRayletDiedError: The task's local raylet died. Check raylet.out for more "
            "information.",
            "ray.exceptions.RayTaskError(ActorDiedError): ray::main_task() (pid=1042684, ip=10.0.0.1)",
        ),
    ),
    Signature(
        "vllm worker exit",
        _VLLM_WORKER,
        _vllm_worker,
        EXIT,
        tier=3,
        anchors=(b"died, exit code",),
        worth=(rb"died, exit code",),
    ),
    Signature(
        "ray node dead",
        _NODE_DEAD,
        _node_dead,
        C.RANK_EXITED.code,
        tier=2,
        anchors=(b"marked dead",),
        worth=(rb"marked dead",),
    ),
    Signature(
        "ray worker died",
        _RAY_DIED,
        _ray_died,
        C.RANK_EXITED.code,
        tier=1,
        anchors=(b"rror", b"A worker died or was killed"),
        worth=(rb"Error\b", rb"A worker died or was killed"),
        anchor_from="Ray's 'WorkerCrashedError:' / 'RaySystemError:' and the '(1) ... SIGKILL' of its "
        "explanation",
        examples=(
            "ray.exceptions.WorkerCrashedError: The worker died unexpectedly while executing this task. "
            "A worker died or was killed while executing a task by an unexpected system error.",
        ),
    ),
)

parse = gated_reader(SIGNATURES)
