"""Workers lost to memory or to a peer's death outside PyTorch's launcher, and collectives whose callers
disagreed, in the words of the stacks that print them (XGBoost/rabit, Dask, RAPIDS, Thrust, Cloud ML,
Kubeflow's MPI operator, TensorFlow's collective executor, PyTorch's DataParallel).

Formats, read at their source:
- Dask's nanny (distributed/nanny.py <= 2022.01 "Worker exceeded %d%% memory budget. Restarting";
  distributed/worker_memory.py 2022.02+ "Worker tcp://10.0.0.5:40123 (pid=4242) exceeded 95% memory budget.
  Restarting..."): the worker's process went over `distributed.worker.memory.terminate` of its memory
  limit and the nanny killed it (host_oom, RUN121). Its "Worker process 79862 was killed by signal 15"
  after it is the echo. The nanny's own record of its worker's end (nanny.py _death_message, WARNING
  before 2021, INFO since): "Worker process 30448 was killed by signal 15", "Worker process 150 was killed
  by signal 9", "Worker process 512 was killed by unknown signal" (exit code 255), "Worker process 512 exited
  with status 1": SIGKILL is host_oom's (RUN121, the kernel's or a container's OOM killer, unless the nanny
  killed a worker that would not close), a fatal signal a crash (RUN131), SIGTERM or a status an end that
  another line explains (RUN133, tier 1).
- Google Cloud ML Engine / Vertex AI training (the job's error message): "The replica master 0 ran
  out-of-memory and exited with a non-zero status of 9(SIGKILL)", "The replica workerpool0-0 ran
  out-of-memory and exited with a non-zero status of 137" (RUN121).
- Kubernetes' OOMKill written without the pod status's "-ed": an event reason "OOMKilling", a
  restart reason "OOMKill" (RUN121; `host_oom` reads "OOMKilled").
- Kubeflow mpi-operator v2 (pkg/controller/mpi_job_controller.go): condition reason "MPIJobEvicted"
  with message "1/8 workers are evicted": the kubelet evicted worker pods, most often for node memory
  pressure (RUN121, tier 1: the kubelet's own event names the resource when it is in the log).
- Thrust (thrust/system/cuda/detail/*.h, `cuda_cub::throw_on_error(status, "parallel_for failed")`):
  a `thrust::system::system_error` whose what() is "<algorithm> failed: out of memory" (CUDA <= 10) or
  "<algorithm> failed: cudaErrorMemoryAllocation: out of memory" (CUDA 11+), under XGBoost, cuDF,
  cuML and every Thrust user; RMM's pool (rmm/mr/device/pool_memory_resource.hpp `RMM_FAIL("Maximum
  pool size exceeded", rmm::out_of_memory)`: "RMM failure at: <file>:<line>: Maximum pool size
  exceeded"); XGBoost's caching allocator (src/common/device_helpers.cuh ThrowOOMError: "Memory
  allocation error on worker 0: ..."): GPU memory ran out (RUN101).
- RMM's exceptions as C++ and Python print them (rmm/error.hpp: rmm::bad_alloc's what() is "std::bad_alloc: "
  + the message, rmm::out_of_memory's "std::bad_alloc: out_of_memory: " + the message; Cython turns both into
  Python's MemoryError): "MemoryError: std::bad_alloc: out_of_memory: CUDA error at: .../cuda_memory_resource
  .hpp:60: cudaErrorMemoryAllocation out of memory", "... out_of_memory: RMM failure at: ...: Maximum pool
  size exceeded", older rmm's "std::bad_alloc: CUDA error at: ...: cudaErrorMemoryAllocation out of memory",
  Thrust's bad_alloc ("std::bad_alloc: cudaErrorMemoryAllocation: out of memory"), "terminate called after
  throwing an instance of 'rmm::out_of_memory'", and a paste cut inside the class's name ("MemoryError:
  std::bad_alloc: out_of_m"): the device's allocator ran out, not the host's (RUN101; read before host_oom,
  whose MemoryError row would take the line). A bare "std::bad_alloc" is the host's.
- rabit (dmlc/rabit src/allreduce_robust.cc, XGBoost <= 1.7): "Allreduce Recovered data size do not
  match the specification of function call" (a recovered worker called a different collective sequence
  than the others: RUN201); "Too many nodes went down and we cannot recover.., shutting down process"
  (src/allreduce_base.cc / allreduce_robust.cc: workers died, RUN133 tier 1); XGBoost's
  "rabit/internal/utils.h:90: Allreduce failed" (a peer died or its link broke: RUN133, tier 2).
- TensorFlow (core/common_runtime/base_collective_executor.cc / collective_param_resolver_local.cc):
  "Instance 0 found no source for broadcast.  This could mean that there were group_size=2 BcastRecvs
  but no BcastSend." (the members of a collective instance disagree on who sends: RUN201).
- PyTorch DataParallel (torch/csrc/cuda/comm.cpp gather, 0.4-2.x): "Gather got an input of invalid size:
  got [2, 1, 20], but expected [2, 2, 20]" (the replicas returned outputs whose shapes differ beyond the
  gather dimension: RUN201).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.signals import signal_of_exitcode
from pgdoctor.model import lazy_re

_DASK = lazy_re.compile(
    r"Worker (?:(?P<addr>\S+) \(pid=(?P<pid>\d+)\) )?exceeded (?P<pct>\d+)%? memory budget\. Restarting"
)
_NANNY_DEATH = lazy_re.compile(
    r"Worker process (?P<pid>\d+) (?:was killed by (?:signal (?P<sig>\d+)|(?P<unknown>unknown signal))|"
    r"exited with status (?P<status>\d+))"
)
# The nanny killing its own worker: after the memory budget (the budget's row has it), or when the worker
# did not close in time on a restart or shutdown ("Worker process still alive after 4 seconds, killing").
_NANNY_KILLS = lazy_re.compile(r"memory budget|still alive after [\d.]+ seconds, killing")
_FATAL_SIGNALS = frozenset({"SIGSEGV", "SIGABRT", "SIGILL", "SIGBUS", "SIGFPE"})
_CLOUDML = lazy_re.compile(
    r"The replica (?P<replica>\S+(?: \d+)?) ran out-of-memory and exited with a non-zero status of "
    r"(?P<status>\d+)"
)
_OOMKILL = lazy_re.compile(r"\bOOMKill(?:ing)?\b(?!ed)")
_MPIJOB = lazy_re.compile(r"\b(?P<n>\d+)/(?P<of>\d+) workers are evicted\b|\bMPIJobEvicted\b")
_THRUST = lazy_re.compile(
    r"\b(?P<algo>parallel_for|for_each(?:_n)?|transform|reduce(?:_by_key)?|copy(?:_if)?|"
    r"(?:radix_|merge_|stable_)?sort(?:_by_key)?|(?:inclusive_|exclusive_)?scan(?:_by_key)?|fill|"
    r"uninitialized_fill|uninitialized_copy|unique(?:_by_key)?|partition|trivial_device_copy)\w*"
    r"(?: [\w>-]+)?:? failed(?: on \w+ step)?: (?:cudaErrorMemoryAllocation: )?out of memory"
)
_RMM = lazy_re.compile(r"RMM failure at:?\s*\S+:\d+: (?:Maximum pool size exceeded|Exceeded memory limit)")
_RMM_BAD_ALLOC = lazy_re.compile(
    r"std::bad_alloc: (?:out_of_m|(?:CUDA error\b[^\n]{0,300}?)?cudaErrorMemoryAllocation)|"
    r"\brmm::out_of_memory\b"
)
_XGB_ALLOC = lazy_re.compile(r"Memory allocation error on worker (?P<device>\d+)\b")
_KILLED_WORKER = lazy_re.compile(
    r"\bKilledWorker: (?:Attempted to run task '?(?P<task>[^'\s]+)'? on (?P<n>\d+) different workers|\()"
)
_YARN = lazy_re.compile(
    r"Container killed by YARN for exceeding (?:(?P<kind>physical|virtual) )?memory limits|"
    r"is running (?:\d+B )?beyond (?P<kind2>physical|virtual) memory "
    r"limits\. Current usage: (?P<used>[\d.]+ [KMGT]?B) of "
    r"(?P<limit>[\d.]+ [KMGT]?B)|"
    r"The executor with id (?P<executor>\d+) exited with exit code 137\(SIGKILL, possible container OOM\)"
)
_RABIT_MISMATCH = lazy_re.compile(r"Allreduce Recovered data size do not match the specification")
_RABIT_DOWN = lazy_re.compile(r"Too many nodes went down and we cannot recover")
_RABIT_FAILED = lazy_re.compile(r"rabit/internal/utils\.h:\d+: (?P<op>Allreduce|Broadcast|Allgather) failed")
# The same resolver's other disagreements (collective_param_resolver_local.cc, TF 2.x): two members claim the
# broadcast's source, a member calls another type or dtype under the same instance key, a device joins a
# group that already has group_size members ("Shape mismatch in the collective instance" is vocabulary's).
_TF_BCAST = lazy_re.compile(
    r"Instance (?P<instance>\d+) found no source for broadcast\.(?:\s+This could mean that there were "
    r"group_size=(?P<size>\d+) BcastRecvs but no BcastSend)?|"
    r"Instance (?P<instance2>\d+) already has source (?P<source>\d+), "
    r"received second claim from (?P<claim>\d+)|"
    r"Collective instance (?P<instance3>\d+) expected type (?P<want>\d+) and data_type \d+ but got type "
    r"(?P<got>\d+) and data_type|"
    r"Device (?P<device>\S+) is joining a group that is already full \(group_key=(?P<group>\d+)\)"
)
_DP_GATHER = lazy_re.compile(
    r"[Gg]ather got an input of invalid size: got (?P<got>\[[\d, ]*\]|\d+(?:x\d+)*), but expected "
    r"(?P<want>\[[\d, ]*\]|\d+(?:x\d+)*)|"
    r"Input tensor at index (?P<index>\d+) has invalid shape (?P<got2>\[[\d, "
    r"]*\]), but expected (?P<want2>\[[\d, ]*\])"
)
# XGBoost's dh::safe_cuda before its CUDA 11 builds (src/common/device_helpers.cuh throw_on_cuda_error,
# 0.7-0.90: a thrust::system_error of "<file>(<line>)"; common.h ThrowOnCudaError 1.0+: "<file>: <line>")
# whose what() ends with the CUDA error string; CUDA 11+ adds "cudaErrorMemoryAllocation: "
# (cuda_oom reads it).
_XGB_SAFE_CUDA = lazy_re.compile(r"\.cuh?(?:\((?P<line>\d+)\)|: (?P<line2>\d+)): out of memory\b")


def _dask(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "dask", "reason": "memory_budget", "terminate_pct": int(m["pct"])}
    if m["pid"]:
        facts["pid"] = int(m["pid"])
    if m["addr"]:
        facts["worker"] = m["addr"]
    msg = (
        f"Dask's nanny killed its worker: the process went over {m['pct']}% of the worker's memory limit "
        "(distributed.worker.memory.terminate); host memory ran out"
    )
    return [row.event(hit, msg, facts, dedupe=(row.code, "dask_budget"))]


def _nanny_death(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if any(_NANNY_KILLS.search(ln.text) for ln in hit.before(12, same_rank=False)):
        return []  # the nanny's own kill: the line before it says why
    pid = int(m["pid"])
    facts: dict[str, Any] = {"framework": "dask", "reporter": "dask nanny", "pid": pid}
    if m["status"]:
        facts["exitcode"] = int(m["status"])
        msg = f"a Dask worker process ({pid}) exited with status {m['status']} and its nanny restarts it"
        return [row.event(hit, msg, facts, tier=1, dedupe=(row.code, "dask_nanny"))]
    num = int(m["sig"]) if m["sig"] else None
    sig = signal_of_exitcode(-num) if num else None
    facts["signal"] = sig or "unknown"
    if sig == "SIGKILL":
        msg = (
            f"a Dask worker process ({pid}) was killed by SIGKILL: most likely the kernel's or the "
            "container's OOM killer (host memory)"
        )
        code = C.HOST_OOM_KILLED.code
        return [row.event(hit, msg, facts, code=code, dedupe=(code, "dask_nanny"))]
    if sig in _FATAL_SIGNALS:
        msg = f"a Dask worker process ({pid}) died on {sig}: it crashed"
        code = C.FATAL_SIGNAL.code
        return [row.event(hit, msg, facts, code=code, dedupe=(code, "dask_nanny"))]
    msg = (
        f"a Dask worker process ({pid}) was killed by {sig or 'an unknown signal'}: something stopped it "
        "from outside (the nanny's restart, the cluster closing, a batch scheduler)"
    )
    return [row.event(hit, msg, facts, tier=1, dedupe=(row.code, "dask_nanny"))]


def _cloudml(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    status = int(m["status"])
    facts: dict[str, Any] = {"platform": "cloud_ml", "replica": m["replica"], "exitcode": status}
    if status in (9, 137):
        facts["signal"] = 9
    msg = f"the training service says replica {m['replica']} ran out of host memory and was killed ({status})"
    return [row.event(hit, msg, facts, dedupe=(row.code, "cloudml", m["replica"]))]


def _oomkill(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    msg = "Kubernetes OOM-killed the container: it went over its memory limit"
    return [
        row.event(hit, msg, {"platform": "kubernetes", "reason": "OOMKilled"}, dedupe=(row.code, "oomkill"))
    ]


def _mpijob(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"platform": "kubernetes", "reason": "eviction", "operator": "mpi-operator"}
    if m["n"]:
        facts |= {"evicted_workers": int(m["n"]), "workers": int(m["of"])}
    msg = (
        "the MPI operator failed the job because the kubelet evicted worker pods (most often node memory "
        "pressure: `kubectl describe node` / the pod events name the resource)"
    )
    return [row.event(hit, msg, facts, dedupe=(row.code, "mpijob_evicted"))]


def _gpu_oom(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"allocator": row.name.split()[0]}
    gd = m.groupdict()
    algo = gd.get("algo") or gd.get("algo2")
    if algo:
        facts["op"] = algo
    if gd.get("device"):
        facts["device"] = int(gd["device"])
    msg = f"GPU memory ran out ({m.group(0).strip()[:120]}): the data or model does not fit the GPU"
    return [row.event(hit, msg, facts, dedupe=(row.code, "gpu_oom_lib"))]


def _killed_worker(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "dask", "reason": "workers_died"}
    if m["task"]:
        facts |= {"task": m["task"], "attempts": int(m["n"])}
    msg = (
        "Dask gave up on a task: every worker that ran it died (the workers' logs hold why: most often the "
        "worker's memory limit, then a crash in native code)"
    )
    return [row.event(hit, msg, facts, dedupe=(row.code, "dask_killed_worker"))]


def _yarn(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"reason": "container_memory_limit", "signal": 9}
    kind = m["kind"] or m["kind2"]
    if kind:
        facts["memory"] = kind
    if m["used"]:
        facts |= {"used": m["used"], "limit": m["limit"]}
    if m["executor"]:
        facts |= {"platform": "kubernetes", "executor": int(m["executor"]), "exitcode": 137}
        msg = f"Spark executor {m['executor']} was SIGKILLed (137), most likely its container's memory limit"
    else:
        facts["platform"] = "yarn"
        what = f"{kind} " if kind else ""
        msg = (
            f"YARN killed the container for going over its {what}memory limit (raise the executor memory "
            "or its memoryOverhead)"
        )
    return [row.event(hit, msg, facts, dedupe=(row.code, "container_memory"))]


def _rabit_mismatch(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    msg = (
        "rabit recovered a worker whose calls differ from the others' (the recovered data size does not "
        "match the call): the workers did not call the same collectives in the same order"
    )
    return [
        row.event(hit, msg, {"framework": "rabit", "kind": "recovery_mismatch"}, dedupe=(row.code, "rabit"))
    ]


def _rabit_down(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    msg = "rabit lost too many workers to recover: workers died (their own logs hold why; often memory)"
    return [
        row.event(hit, msg, {"framework": "rabit", "reason": "workers_down"}, dedupe=(row.code, "rabit_down"))
    ]


def _rabit_failed(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    msg = (
        f"an XGBoost (rabit) {m['op']} failed: a peer worker died or its connection broke (its log holds why)"
    )
    return [
        row.event(hit, msg, {"framework": "rabit", "op": m["op"].lower()}, dedupe=(row.code, "rabit_failed"))
    ]


def _tf_bcast(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "tensorflow"}
    inst = m["instance"] or m["instance2"] or m["instance3"]
    if inst:
        facts["instance"] = int(inst)
    if m["instance"]:
        facts["kind"] = "broadcast_no_source"
        if m["size"]:
            facts["group_size"] = int(m["size"])
        msg = (
            f"TensorFlow collective instance {inst}: every member is a broadcast receiver and none sends "
            "(the workers built different collective graphs, or no worker was the broadcast's source)"
        )
    elif m["instance2"]:
        facts |= {"kind": "broadcast_two_sources", "source_rank": int(m["source"]), "rank": int(m["claim"])}
        msg = (
            f"TensorFlow collective instance {inst}: ranks {m['source']} and {m['claim']} both claim to be "
            "the broadcast's source (the workers built different collective graphs)"
        )
    elif m["instance3"]:
        facts["kind"] = "instance_type_mismatch"
        msg = (
            f"TensorFlow collective instance {inst}: members called different collectives or dtypes under "
            "the same instance key (the workers' graphs differ)"
        )
    else:
        facts |= {"kind": "group_full", "device": m["device"], "group_key": int(m["group"])}
        msg = (
            f"TensorFlow collective group {m['group']} already had group_size members when {m['device']} "
            "joined: the workers disagree on the group's size or membership"
        )
    return [row.event(hit, msg, facts, dedupe=(row.code, "tf_resolver", facts["kind"]))]


def _dp_gather(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    got, want = m["got"] or m["got2"], m["want"] or m["want2"]
    facts: dict[str, Any] = {"framework": "DataParallel", "op": "gather", "got": got, "expected": want}
    if m["index"]:
        facts["device_index"] = int(m["index"])
    msg = (
        f"DataParallel's gather got outputs of different shapes from its replicas ({got} vs "
        f"{want}): the model's output size depends on the batch split (a batch not divisible by the "
        "GPU count, a batch-first/second mix-up)"
    )
    return [row.event(hit, msg, facts, dedupe=(row.code, "dp_gather"))]


SIGNATURES = (
    Signature(
        "dask nanny worker death",
        _NANNY_DEATH,
        _nanny_death,
        C.RANK_EXITED.code,
        anchors=(b"Worker process ",),
        worth=(rb"Worker process \d+ (?:was killed by|exited with status)",),
        words=("worker process",),
    ),
    Signature(
        "dask memory budget",
        _DASK,
        _dask,
        C.HOST_OOM_KILLED.code,
        anchors=(b"memory budget",),
        worth=(rb"exceeded \d+%? memory budget",),
        words=("memory budget",),
    ),
    Signature(
        "cloud ml replica oom",
        _CLOUDML,
        _cloudml,
        C.HOST_OOM_KILLED.code,
        anchors=(b"ran out-of-memory and exited",),
        worth=(rb"ran out-of-memory and exited",),
        words=("ran out-of-memory and exited",),
    ),
    Signature(
        "k8s oomkill",
        _OOMKILL,
        _oomkill,
        C.HOST_OOM_KILLED.code,
        anchors=(b"OOMKill",),
        worth=(rb"OOMKill(?:ing)?\b",),
        words=("oomkill",),
    ),
    Signature(
        "mpijob evicted",
        _MPIJOB,
        _mpijob,
        C.HOST_OOM_KILLED.code,
        tier=1,
        anchors=(b"workers are evicted", b"MPIJobEvicted"),
        worth=(rb"workers are evicted", rb"MPIJobEvicted"),
        words=("workers are evicted", "mpijobevicted"),
    ),
    Signature(
        "thrust oom",
        _THRUST,
        _gpu_oom,
        C.CUDA_OOM.code,
        anchors=(b"out of memory",),
        worth=(rb"failed(?: on \w+ step)?: (?:cudaErrorMemoryAllocation: )?out of memory",),
        words=("out of memory",),
    ),
    Signature(
        "rmm pool",
        _RMM,
        _gpu_oom,
        C.CUDA_OOM.code,
        anchors=(b"RMM failure at",),
        worth=(rb"RMM failure at",),
        words=("rmm failure at",),
    ),
    Signature(
        "rmm bad_alloc",
        _RMM_BAD_ALLOC,
        _gpu_oom,
        C.CUDA_OOM.code,
        anchors=(b"std::bad_alloc: out_of_m", b"cudaErrorMemoryAllocation", b"rmm::out_of_memory"),
        words=("bad_alloc", "rmm::out_of_memory"),
        anchor_from="the allocator's words: std::bad_alloc: out_of_m(emory), cudaErrorMemoryAllocation, "
        "rmm::out_of_memory",
        examples=(
            "MemoryError: std::bad_alloc: out_of_memory: CUDA error at: /opt/conda/include/rmm/mr/device/"
            "cuda_memory_resource.hpp:60: cudaErrorMemoryAllocation out of memory",
            "MemoryError: std::bad_alloc: out_of_m",
            "terminate called after throwing an instance of 'rmm::out_of_memory'",
        ),
    ),
    Signature(
        "xgboost allocator",
        _XGB_ALLOC,
        _gpu_oom,
        C.CUDA_OOM.code,
        anchors=(b"Memory allocation error on worker",),
        worth=(rb"Memory allocation error on worker",),
        words=("memory allocation error on worker",),
    ),
    Signature(
        "dask killed worker",
        _KILLED_WORKER,
        _killed_worker,
        C.RANK_EXITED.code,
        tier=1,
        anchors=(b"KilledWorker",),
        worth=(rb"KilledWorker: ",),
        words=("killedworker",),
    ),
    Signature(
        "container memory limit",
        _YARN,
        _yarn,
        C.HOST_OOM_KILLED.code,
        anchors=(b"memory limits", b"possible container OOM"),
        worth=(
            rb"for exceeding (?:\w+ )?memory limits",
            rb"beyond \w+ memory limits",
            rb"possible container OOM",
        ),
        words=("memory limits", "possible container oom"),
    ),
    Signature(
        "xgboost safe_cuda oom",
        _XGB_SAFE_CUDA,
        _gpu_oom,
        C.CUDA_OOM.code,
        anchors=(b": out of memory",),
        worth=(rb"\.cuh?(?:\(\d+\)|: \d+): out of memory",),
        words=("out of memory",),
    ),
    Signature(
        "rabit recovery mismatch",
        _RABIT_MISMATCH,
        _rabit_mismatch,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"Recovered data size do not match",),
        worth=(rb"Recovered data size do not match",),
        words=("recovered data size",),
    ),
    Signature(
        "rabit nodes down",
        _RABIT_DOWN,
        _rabit_down,
        C.RANK_EXITED.code,
        tier=1,
        anchors=(b"Too many nodes went down",),
        worth=(rb"Too many nodes went down",),
        words=("too many nodes went down",),
    ),
    Signature(
        "rabit op failed",
        _RABIT_FAILED,
        _rabit_failed,
        C.RANK_EXITED.code,
        tier=2,
        anchors=(b"rabit/internal/utils.h",),
        worth=(rb"rabit/internal/utils\.h:\d+: (?:Allreduce|Broadcast|Allgather) failed",),
        words=("rabit/internal/utils.h",),
    ),
    Signature(
        "tf broadcast no source",
        _TF_BCAST,
        _tf_bcast,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(
            b"found no source for broadcast",
            b"received second claim from",
            b" and data_type ",
            b"is joining a group that is already full",
        ),
        worth=(
            rb"found no source for broadcast",
            rb"received second claim from",
            rb"expected type \d+ and data_type",
            rb"is joining a group that is already full",
        ),
        words=(
            "found no source for broadcast",
            "received second claim from",
            "and data_type",
            "group that is already full",
        ),
    ),
    Signature(
        "dataparallel gather size",
        _DP_GATHER,
        _dp_gather,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"ather got an input of invalid size", b"has invalid shape"),
        worth=(rb"ather got an input of invalid size", rb"Input tensor at index \d+ has invalid shape"),
        words=("gather got an input of invalid size", "has invalid shape"),
    ),
)
parse = gated_reader(SIGNATURES)
