"""rendezvous of JAX and TensorFlow multi-host jobs: the XLA/TSL coordination service (the leader task
that every process registers with, JAX's `jax.distributed.initialize` and TF's multi-worker runtime)
timed out on a barrier because some tasks never reached it.

Formats (tsl/distributed_runtime/coordination/coordination_service.cc, wrapped by jaxlib's
`XlaRuntimeError` / `JaxRuntimeError` or TF's `DeadlineExceededError`, often with the gRPC status
record of `/tensorflow.CoordinationService/Barrier` after it): "DEADLINE_EXCEEDED: Barrier timed out.
Barrier_id: PjRT_Client_Connect. Timed out task names:" then one "/job:jax_worker/replica:0/task:N" per
line (older), "Barrier timed out. Id: [Init]Wait_for_all_tasks_to_register::0. This usually happens
because a task triggered the barrier too early or too slowly." (newer), and the leader's own
"Stopping coordination service as cluster registration failed." The service is the job's rendezvous
store, as a TCPStore is torch's: a barrier of it that times out is the store-based barrier's timeout,
whatever barrier it was (the start-up ones, `[Init]...` and `PjRT_Client_Connect`, mean processes
never started or never reached the leader; a user barrier such as `multihost_broadcast_sync` means a
process stopped before it). The tasks it names are the ones that did not arrive.

The service's RPCs failing around start-up and shutdown (coordination_service_agent.cc, jaxlib's
xla/pjrt/distributed/client.cc; TF 2.8+ tsl, JAX 0.3-0.7): "Failed to connect to distributed JAX controller:
waited too long for some tasks to show up" / "...: DEADLINE_EXCEEDED: ...", the agent's error callback
"Coordination service agent in error status: DEADLINE_EXCEEDED: Deadline Exceeded", the gRPC detail line
"Additional GRPC error information from remote target unknown_target_for_coordination_leader while calling
/tensorflow.CoordinationService/RegisterTask:" (newer: "RPC: /tensorflow.CoordinationService/RegisterTask"),
the shutdown's "Failed to disconnect from coordination service with status: DEADLINE_EXCEEDED ... Proceeding
with agent shutdown anyway.", the watch thread's "WatchTasksAsync failed for task 3: UNAVAILABLE: failed to
connect to all addresses", jaxlib's "Distributed task shutdown result: DEADLINE_EXCEEDED: ..." (not "OK"),
and jaxlib's XlaRuntimeError / JaxRuntimeError raised from jax/_src/distributed.py's initialize / connect /
shutdown. DEADLINE_EXCEEDED is the rendezvous timing out
(RUN221); UNAVAILABLE, a connection refused or "failed to connect to all addresses" is the coordinator not
reachable (RUN222). A shutdown that cannot disconnect follows an earlier failure when there is one (tier 2);
heartbeat and error-polling RPCs (a task that died mid-run) are not read here.

jax.distributed.initialize's own checks of its settings (jax/_src/distributed.py, 0.3-0.7), after it tried to
detect them from the cluster (Slurm, Open MPI, Cloud TPU, Kubernetes): "ValueError: coordinator_address should
be defined.", "Number of processes must be defined.", "The process id of the current process must be
defined.", and the Cloud TPU detection's "Number of workers does not equal the number of processes. Auto
detecting process_id is not possible." (RUN224: the rendezvous settings are missing, as torch's env:// ones),
and the leader's "Unexpected task registered with task_name=/job:jax_worker/replica:0/task:4" (a process id
outside the cluster the service was told of: the same settings, wrong).

JAX's distributed runtime before the coordination service (xla/pjrt/distributed/service.cc and client.cc,
jaxlib 0.1.6x-0.4.x, the default until the service replaced it): the leader's "DEADLINE_EXCEEDED: Timed out
after 5m0s waiting for all nodes to call Connect()" (and "... EnumerateDevices()", the topology exchange after
it), the client's "DEADLINE_EXCEEDED: Connect() timed out after 5m0s with 30 attempts. Most recent failure
was: UNAVAILABLE: Socket closed" (RUN221; RUN222 where the last failure is the coordinator unreachable), the
shutdown's "... waiting for all nodes to call Shutdown()" (tier 2: a process was gone before it), and the
leader's checks of the ids it was given: "ABORTED: Duplicate node ID 1" (two processes with one process_id,
or a task restarted while the others waited) and "Invalid node ID 4, must be in the range [0, 4)" / "...,
must be non-negative" (RUN224).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_BARRIER = lazy_re.compile(r"Barrier timed out\.?\s*(?:Barrier_id|Id)\s*:\s*(?P<id>[^\s.]+(?:\.\w+)?)?")
_REGISTRATION = lazy_re.compile(
    r"[Cc]oordination service as cluster registration failed|cluster registration failed"
)
_TASK = lazy_re.compile(r"/job:(?P<job>[\w-]+)/replica:\d+/task:(?P<task>\d+)")
# Barriers the service itself runs while the processes start: not reaching them is a rendezvous
# that never completed.
_STARTUP = lazy_re.compile(r"Wait_for_all_tasks_to_register|PjRT_Client_Connect|\[Init\]", re.I)


def _tasks(hit: Hit) -> list[int]:
    """The tasks the record names as timed out: on its own line and the ones after it."""
    found: list[int] = []
    for text in [hit.text, *(ln.text for ln in hit.after(40, same_rank=False))]:
        for m in _TASK.finditer(text):
            if int(m.group("task")) not in found:
                found.append(int(m.group("task")))
        if found and not _TASK.search(text):
            break  # the list ended
    return sorted(found)


def _barrier(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    barrier = (m.group("id") or "").rstrip(".")
    startup = bool(_STARTUP.search(hit.text))
    tasks = _tasks(hit)
    who = f"; tasks that never arrived: {', '.join(map(str, tasks))}" if tasks else ""
    what = (
        "the processes never all registered with the coordination service (some did not start, crashed "
        "before connecting, or cannot reach the coordinator address)"
        if startup or not barrier
        else "a process stopped or fell behind before this barrier"
    )
    return [
        row.event(
            hit,
            f"the JAX/XLA coordination service timed out on barrier {barrier or '(unnamed)'}: {what}{who}",
            {"problem": "coordination_barrier", "barrier": barrier, "startup": startup, "ranks": tasks},
            dedupe=(row.code, "coordination"),
        )
    ]


def _registration(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if any(_BARRIER.search(ln.text) for ln in [hit.line, *hit.after(6, same_rank=False)]):
        return []  # the barrier's own record is read: it names the barrier and the missing tasks
    return [
        row.event(
            hit,
            "the JAX/XLA coordination service stopped because cluster registration failed: not every "
            "process registered within the initialization timeout",
            {"problem": "coordination_registration", "startup": True},
            dedupe=(row.code, "coordination"),
        )
    ]


_RPC = lazy_re.compile(
    r"Failed to connect to distributed JAX controller:?\s*(?P<why>.*)|"
    r"Failed to (?P<op>connect to|disconnect from) coordination service(?: with status)?:?\s*(?P<why2>.*)|"
    r"Coordination service agent in error status:\s*(?P<why3>.*)|"
    r"(?:while calling|RPC:) /?(?:tensorflow|xla|tsl)\.CoordinationService/(?P<rpc>\w+)|"
    r"(?P<watch>Watch(?:Tasks|JobState)Async) failed for task (?P<task>\d+):\s*(?P<why4>.*)|"
    r"(?:XlaRuntimeError|JaxRuntimeError):\s*(?P<why5>(?:DEADLINE_EXCEEDED|UNAVAILABLE)\b.*)|"
    r"Distributed task (?P<down>shutdown) result:\s*(?P<why6>(?!OK\b)[A-Z_]{4,}.*)"
)
# gRPC's own words for a channel that never connected: only read where the coordination service is named
# in the window (Ray's GCS and other gRPC services say the same).
_GRPC_DOWN = lazy_re.compile(
    r"(?P<why>UNAVAILABLE:\s*failed to connect to all addresses|"
    r"Failed to connect to remote host: Connection refused)"
)
_CONTEXT = lazy_re.compile(
    r"CoordinationService|[Cc]oordination service|coordination_service|jax_worker|distributed JAX|"
    r"WatchTasks|PjRT_Client|jax/_src/distributed\.py|jax\.distributed\.initialize"
)
_STARTUP_RPC = {"RegisterTask", "WaitForAllTasks", "Barrier"}
_SHUTDOWN_RPC = {"ShutdownTask"}
_RUNTIME_RPC = {"Heartbeat", "PollForError", "ReportErrorToTask", "ReportErrorToService"}
_FRAME_OP = lazy_re.compile(r"jax/_src/distributed\.py\S*,? line \d+, in (?P<op>\w+)")
_ADDR = lazy_re.compile(r"ipv[46]:(?P<addr>\[?[\w.:]+?\]?):(?P<port>\d{2,5})\b")
_STATUS = lazy_re.compile(r"\b(DEADLINE_EXCEEDED|UNAVAILABLE|ALREADY_EXISTS|ABORTED|INTERNAL|CANCELLED)\b")


def _near(hit: Hit, n: int = 12) -> list[str]:
    return [ln.text for ln in [*hit.before(n, same_rank=False), hit.line, *hit.after(n, same_rank=False)]]


def _phase(hit: Hit, rpc: str, op: str, near: list[str]) -> str:
    """start-up, shutdown or runtime: from the RPC, the agent's verb or jax's frame that raised it."""
    if rpc in _STARTUP_RPC or op == "connect to":
        return "startup"
    if rpc in _SHUTDOWN_RPC or op == "disconnect from":
        return "shutdown"
    if rpc in _RUNTIME_RPC:
        return "runtime"
    for text in reversed(near):
        f = _FRAME_OP.search(text)
        if f:
            return "shutdown" if f.group("op") == "shutdown" else "startup"
    for text in near:
        r = re.search(r"CoordinationService/(\w+)", text)
        if r and r.group(1) in _STARTUP_RPC | _SHUTDOWN_RPC:
            return "startup" if r.group(1) in _STARTUP_RPC else "shutdown"
        if "Failed to disconnect from coordination service" in text or "agent shutdown" in text:
            return "shutdown"
    return "startup" if any(w in " ".join(near) for w in ("RegisterTask", "initialize", "connect()")) else ""


# A call the client will make again ("...; will retry", "Retrying"): a start-up that waits for a coordinator
# still starting. The call that gives up says so in its own line (DEADLINE_EXCEEDED, "waited too long").
_RETRY = lazy_re.compile(r"\bwill retry\b|\b[Rr]etrying\b")


def _rpc_event(row: Signature, hit: Hit, why: str, rpc: str, op: str) -> Optional[list[Event]]:
    if _RETRY.search(hit.text):
        return []  # the row's line, and no failure
    near = _near(hit)
    phase = _phase(hit, rpc, op, near)
    if phase == "runtime":
        return None  # a heartbeat or error poll failing mid-run: a task died; its own record says why
    joined = " ".join([why, *near])
    st = _STATUS.search(why) or _STATUS.search(joined)
    status = st.group(1) if st else ""
    unreachable = status == "UNAVAILABLE" or "failed to connect to all addresses" in why or "refused" in why
    facts: dict[str, Any] = {"problem": "coordination_rpc", "status": status, "phase": phase or "unknown"}
    if rpc:
        facts["rpc"] = rpc
    a = _ADDR.search(joined)
    if a:
        facts["coordinator"] = f"{a.group('addr')}:{a.group('port')}"
        facts["port"] = int(a.group("port"))
    where = f" at {facts['coordinator']}" if "coordinator" in facts else ""
    if unreachable:
        what = (
            f"the JAX/XLA coordination service{where} could not be reached "
            f"({status or 'connection failed'}): the coordinator (process 0) is not running or not listening "
            "yet, the address or port is wrong, "
            "or the network between the hosts blocks it"
        )
        code = C.STORE_UNREACHABLE.code
    elif phase == "shutdown":
        what = (
            f"the JAX/XLA coordination service did not answer the shutdown ({status or 'error'}): the "
            "coordinator (process 0) or another task had already failed or gone; an earlier error is the "
            "cause when the log shows one"
        )
        code = C.RENDEZVOUS_TIMEOUT.code
    else:
        what = (
            f"the JAX/XLA coordination service{where} timed out while the processes registered "
            f"({status or 'error'}"
            + (f" in {rpc}" if rpc else "")
            + "): not every process reached the coordinator in time (some did not start, crashed first, "
            "point at another coordinator address, or start late)"
        )
        code = C.RENDEZVOUS_TIMEOUT.code
    return [
        row.event(
            hit,
            what,
            facts,
            tier=2 if phase == "shutdown" else 1,
            code=code,
            dedupe=(code, "coordination"),
        )
    ]


def _rpc(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    why = (
        next((g for g in (m.group(k) for k in ("why", "why2", "why3", "why4", "why5", "why6")) if g), "")
        or ""
    )
    if m.group("why5") is not None and not any(_FRAME_OP.search(t) for t in _near(hit, 30)):
        return None  # an XlaRuntimeError raised elsewhere (a collective, a compile): not the service's
    op = m.group("op") or ("disconnect from" if m.group("down") else "")
    if m.group("why") is not None:
        op = "connect to"  # jaxlib's client: its Connect() failed
        if "waited too long" in why:
            why = "DEADLINE_EXCEEDED: " + why  # the client's own words for IsDeadlineExceeded
    if m.group("watch"):
        why = f"task {m.group('task')}: {why}"
    return _rpc_event(row, hit, why.strip(), m.group("rpc") or "", op)


def _grpc_down(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not any(_CONTEXT.search(t) for t in _near(hit, 30)):
        return None
    return _rpc_event(row, hit, m.group("why"), "", "")


_OLD_RUNTIME = lazy_re.compile(
    r"Timed out after (?P<t>\S+) waiting for all nodes to call "
    r"(?P<call>Connect|EnumerateDevices|Shutdown)\(\)|"
    r"Connect\(\) timed out after (?P<t2>\S+) with (?P<n>\d+) attempts"
    r"(?:\. Most recent failure was: (?P<why>.*))?|"
    r"ABORTED: Duplicate node ID (?P<dup>\d+)|"
    r"Invalid node ID (?P<bad>-?\d+), must be (?:in the range \[0, (?P<nodes>\d+)\)|non-negative)"
)
_UNREACHABLE = lazy_re.compile(r"UNAVAILABLE|[Ss]ocket closed|[Cc]onnection refused|failed to connect")


def _old_runtime(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("dup") or m.group("bad"):
        node = m.group("dup") or m.group("bad")
        why = (
            "two processes were given the same process_id (or one restarted while the others waited)"
            if m.group("dup")
            else f"a process_id outside the {m.group('nodes')} processes the coordinator was told of"
            if m.group("nodes")
            else "a negative process_id"
        )
        return [
            row.event(
                hit,
                f"JAX's distributed runtime refused node {node}: {why} (jax.distributed.initialize's "
                "num_processes / process_id)",
                {"problem": "jax_node_id", "node_id": int(node)},
                code=C.RENDEZVOUS_CONFIG.code,
                dedupe=(C.RENDEZVOUS_CONFIG.code, "jax_settings"),
            )
        ]
    call = m.group("call") or "Connect"
    facts: dict[str, Any] = {
        "problem": "jax_distributed_connect",
        "call": call,
        "timeout": m.group("t") or m.group("t2"),
    }
    if m.group("n"):
        facts["attempts"] = int(m.group("n"))
    why = (m.group("why") or "").strip()
    if why and _UNREACHABLE.search(why):
        facts["last_error"] = why[:120]
        msg = (
            f"the JAX distributed client could not reach the coordinator ({why[:80]}): process 0 is not "
            "running or not listening yet, the coordinator address or port is wrong, or the network blocks it"
        )
        return [
            row.event(
                hit,
                msg,
                facts,
                code=C.STORE_UNREACHABLE.code,
                dedupe=(C.STORE_UNREACHABLE.code, "coordination"),
            )
        ]
    shutdown = call == "Shutdown"
    msg = (
        f"JAX's distributed runtime timed out after {facts['timeout']} waiting for every process to call "
        f"{call}(): "
        + (
            "a process was gone before the shutdown (an earlier error is the cause when the log shows one)"
            if shutdown
            else "not every process reached the coordinator (some did not start, crashed first, were given "
            "another num_processes or coordinator address, or started late)"
        )
    )
    return [row.event(hit, msg, facts, tier=2 if shutdown else 1, dedupe=(row.code, "coordination"))]


_JAX_SETTINGS = lazy_re.compile(
    r"(?P<what>coordinator_address should be defined|Number of processes must be defined|"
    r"The process id of the current process must be defined|"
    r"Number of workers does not equal the number of processes|"
    # jax 0.4.3x-0.10 (jax/_src/distributed.py; clusters/ompi_cluster.py, k8s_cluster.py): the settings given
    # disagree, or the cluster's auto-detection could not read them from the launcher / the pod's Job.
    r"process_id and num_processes must be nonnegative, with process_id < num_processes|"
    r"Could not parse coordinator IP address from Open MPI environment|"
    r"jobs must be indexed by setting `?completionMode|"
    r"Cannot automatically initialize distributed workload: pod \S+ does not have a controller|"
    r"In K8s, cluster automatic bootstrap only supports Job/JobSet|"
    r"It appears that the Kubernetes service account \(SA\)|"
    # the leader's RegisterTask (tsl coordination_service.cc, TF 2.8+ / jaxlib 0.3+): a task whose id is not
    # in the cluster it was configured with (process_id >= num_processes, a TF_CONFIG with fewer tasks)
    r"Unexpected task registered with task_name=)"
)
_JAX_NAME = {
    "coordinator_address": "the coordinator address (coordinator_address / JAX_COORDINATOR_ADDRESS)",
    "Number of processes": "the number of processes (num_processes)",
    "The process id": "this process's id (process_id)",
    "Number of workers": "this process's id (the TPU workers and num_processes disagree)",
    "process_id and": "a process id below num_processes (process_id must be < num_processes)",
    "Could not parse": "the coordinator address (mpirun's environment held no parsable HNP URI)",
    "jobs must be indexed": "this process's id (the Kubernetes Job is not completionMode: Indexed)",
    "Cannot automatically": "the coordinator address (the pod belongs to no Job / JobSet)",
    "In K8s": "the coordinator address (the pod belongs to no Job / JobSet)",
    "It appears that the Kubernetes": "the coordinator address (the pod's service account may not read pods)",
    "Unexpected task registered": "this process's id (a task outside the configured cluster registered: "
    "process_id >= num_processes, or a task of another job at the same coordinator address)",
}


def _jax_settings(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    what = m.group("what")
    missing = next(v for k, v in _JAX_NAME.items() if what.startswith(k))
    return [
        row.event(
            hit,
            f"jax.distributed.initialize could not start: {missing} is missing or wrong and could not be "
            "detected from the cluster (not launched under Slurm / mpirun / a TPU pod / an indexed Job, "
            "or the variables are missing)",
            {"problem": "jax_settings_missing", "setting": what},
            dedupe=(row.code, "jax_settings"),
        )
    ]


SIGNATURES = (
    Signature(
        "coordination service barrier timeout",
        _BARRIER,
        _barrier,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=1,
        anchors=(b"Barrier timed out",),
        worth=(rb"Barrier timed out",),
        words=("barrier timed out",),
    ),
    Signature(
        "coordination service registration failed",
        _REGISTRATION,
        _registration,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=1,
        anchors=(b"registration failed",),
        worth=(rb"cluster registration failed",),
        words=("registration failed",),
    ),
    Signature(
        "coordination service rpc failed",
        _RPC,
        _rpc,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=1,
        anchors=(
            b"distributed JAX controller",
            b"coordination service",
            b"CoordinationService/",
            b"failed for task",
            b"RuntimeError:",
            b"Distributed task shutdown result",
        ),
        worth=(
            rb"Failed to connect to distributed JAX controller",
            rb"Failed to (?:connect to|disconnect from) coordination service",
            rb"Coordination service agent in error status",
            rb"CoordinationService/",
            rb"Async failed for task",
            rb"RuntimeError: (?:DEADLINE_EXCEEDED|UNAVAILABLE)",
            rb"Distributed task shutdown result: [A-Z_]{4,}",
        ),
        words=(
            "jax controller",
            "coordination service",
            "coordinationservice/",
            "failed for task",
            "runtimeerror",
            "distributed task shutdown",
        ),
        anchor_from="the 'RuntimeError:' of XlaRuntimeError / JaxRuntimeError",
        examples=("jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Deadline Exceeded",),
    ),
    Signature(
        "jax distributed runtime before the coordination service",
        _OLD_RUNTIME,
        _old_runtime,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=1,
        anchors=(
            b"waiting for all nodes to call",
            b"Connect() timed out after",
            b"Duplicate node ID",
            b"Invalid node ID",
        ),
        words=(
            "waiting for all nodes to call",
            "connect() timed out after",
            "duplicate node id",
            "invalid node id",
        ),
    ),
    Signature(
        "grpc channel to the coordinator down",
        _GRPC_DOWN,
        _grpc_down,
        C.STORE_UNREACHABLE.code,
        tier=1,
        anchors=(b"failed to connect to all addresses", b"Failed to connect to remote host"),
        worth=(rb"failed to connect to all addresses", rb"Failed to connect to remote host"),
        words=("failed to connect to all addresses", "failed to connect to remote host"),
    ),
    Signature(
        "jax.distributed settings missing",
        _JAX_SETTINGS,
        _jax_settings,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(
            b"should be defined",
            b"must be defined",
            b"does not equal the number of processes",
            b"process_id < num_processes",
            b"coordinator IP address from Open MPI",
            b"completionMode",
            b"does not have a controller",
            b"only supports Job/JobSet",
            b"Kubernetes service account (SA)",
            b"Unexpected task registered with",
        ),
        worth=(
            rb"should be defined",
            rb"must be defined",
            rb"does not equal the number of processes",
            rb"process_id < num_processes",
            rb"coordinator IP address from Open MPI",
            rb"completionMode",
            rb"does not have a controller",
            rb"only supports Job/JobSet",
            rb"Kubernetes service account \(SA\)",
            rb"Unexpected task registered with",
        ),
        words=(
            "should be defined",
            "must be defined",
            "does not equal the number of processes",
            "process_id < num_processes",
            "coordinator ip address from open mpi",
            "completionmode",
            "does not have a controller",
            "only supports job/jobset",
            "kubernetes service account (sa)",
            "unexpected task registered with",
        ),
    ),
)
parse = gated_reader(SIGNATURES)
