"""JAX / XLA (and TensorFlow's multi-worker runtime) after start-up: a collective whose participants never
all arrived, and a peer task that died while the job ran.

Formats:
- XLA's in-process rendezvous of the devices that join one collective (xla/service/rendezvous.cc, jaxlib
  0.4.x-0.5): the warning "This thread has been waiting for `first call to collective operation 4;
  run_id=12` for 20 seconds and may be stuck. All 8 threads must join the rendezvous, however only 7 of
  them arrived on time." (in 2021, collective_ops_utils.h: "This thread has been waiting for 5000ms for and
  may be stuck: participant for device ordinal 1, stream 0x55 waiting for all participants to arrive at
  rendezvous RendezvousKey{run_id=RunId: 85034, global_devices=[0,1,2,3], num_local_participants=4, ...}"),
  and the abort "Termination timeout for `...` of 40 seconds exceeded. Exiting to ensure a consistent
  program state. Expected 8 threads to join the rendezvous, but only 7 of them joined the rendezvous." A
  participant never reached the collective: a collective timeout (RUN151); the warning alone is tier 1 (a
  stuck rank's own error, when shown, is the cause), the abort tier 0.
- The coordination service (tsl/distributed_runtime/coordination, wrapped by jaxlib's XlaRuntimeError,
  TF's UnavailableError/AbortedError) once every task had registered: the leader's "Task
  /job:worker/replica:0/task:1 heartbeat timeout. This indicates that the remote task has failed, got
  preempted, or crashed unexpectedly." (and "[/job:...] Task heartbeat timeout"), the newer "The
  following tasks are unhealthy (stopped sending heartbeats):" with the task names after it, and jaxlib's
  client.cc "Terminating process because the JAX distributed service detected fatal errors. This most
  likely indicates that another task died" (older: "... because the coordinator detected missing
  heartbeats.", and on the other side "... because of missing heartbeat response from the coordinator. This
  most likely indicates that the coordinator task died"). The job's start-up barrier is another family
  (coordination_service.py): here a task that was running died, so its own log holds the cause. Like Open
  MPI's "peer process has unexpectedly disconnected" it is that rank's exit (RUN133), tier 2: any failure
  the log shows outranks it. The agent's side says the same of the leader: "Failed to send RPC to
  coordination service. Either the leader task died or the network connection is broken." A leader without a
  channel to the tasks stops itself instead: "Stopping coordination service as heartbeat has timed out for
  /job:jax_worker/replica:0/task:1 and there is no service-to-client connection" (the same loss).
- The key-value store of the same service (below, `_KV_GET`).
- A task that joined the service again as a new process (coordination_service.cc, TF 2.8+ / jaxlib 0.3+):
  the leader's "/job:jax_worker/replica:0/task:1 unexpectedly tried to connect with a different
  incarnation. It has likely restarted." (then "Use error polling to propagate the following error to all
  tasks: ABORTED: ..."), the heartbeat's "Incarnation ID mismatch: expecting 123 but got 456. This means the
  remote task has restarted." (newer: "<task> Heartbeat: Incarnation ID mismatch: ... The task has restarted
  and likely crashed earlier"), "<task> unexpectedly tried to connect while it is already in error.
  ResetTask() should be called before a subsequent connect attempt." (a new process of a task the service had
  set to ERROR), and the agent's "Leader incarnation ID mismatch: the coordination leader has
  restarted." The job's membership broke (RUN312): the task was restarted by its scheduler after a crash, or a
  second job registers at the same coordinator address and port. Tier 1: the crash that made it restart,
  when the log shows it, is the cause.
- PyTorch/XLA's replication setup (torch_xla/core/xla_model.py xla_replication_devices, 1.5-2.x; the same
  text in lazy_tensor_core's copy), raised in every process xmp.spawn started ("Exception in device=TPU:0:
  Cannot replicate if number of devices (1) is different from 8"), and its sibling "Cannot replicate across
  different device types: devices=...": the device was acquired in the parent before xmp.spawn
  (xm.xla_device() at import, a strategy that touched it), so each child sees one device (RUN359).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_STUCK = lazy_re.compile(
    r"This thread has been waiting for (?:`(?P<name>[^`]*)` for )?(?P<secs>\d+) ?(?P<unit>ms|s|seconds)"
    r"(?: for)? and may be stuck"
)
_TERMINATION = lazy_re.compile(
    r"Termination timeout for `(?P<name>[^`]*)` of (?P<secs>\d+) seconds exceeded|"
    r"Exiting to ensure a consistent program state"
)
_ARRIVED = lazy_re.compile(
    r"(?:All|Expected) (?P<want>\d+) threads (?:must|to) join the rendezvous, (?:however|but) only "
    r"(?P<got>\d+) of them"
)
# XLA of 2021 (collective_ops_utils.h) names the device and the rendezvous key instead.
_ORDINAL = lazy_re.compile(r"participant for device ordinal (?P<dev>\d+)")
_LOCAL = lazy_re.compile(r"num_local_participants=(?P<n>\d+)")
_TASK = lazy_re.compile(r"/job:(?P<job>[\w-]+)/replica:\d+/task:(?P<task>\d+)")
_HEARTBEAT = lazy_re.compile(
    r"(?:Task (?P<who>\S+) heartbeat timeout|Task heartbeat timeout)\. This indicates that the remote task "
    r"has failed|tasks are unhealthy \(stopped sending heartbeats\)|"
    r"Terminating process because (?:the (?:JAX distributed service detected fatal errors|coordinator "
    r"detected missing heartbeats)|of missing heartbeat response from the coordinator)|"
    r"Failed to send RPC to coordination service\. Either the leader task died|"
    # the leader without a service-to-client channel (coordination_service.cc, TF 2.9+ / jaxlib 0.4.x) stops
    # itself instead of telling the others: "Stopping coordination service as heartbeat has timed out for
    # /job:jax_worker/replica:0/task:1 and there is no service-to-client connection"
    r"Stopping coordination service as heartbeat has timed out for (?P<stale>\S+)"
)
# The NCCL communicator's unique id that JAX exchanges through the coordination service's key-value store
# when a collective first runs (xla/pjrt/gpu, jaxlib 0.4.x): "DEADLINE_EXCEEDED: GetKeyValue() timed out
# with key: cuda:gpu_nccl_unique_id:0 and duration: -1ms". The rank that should have published the id never
# did (it died or runs another program): the store-based exchange of torch's NCCL init timing out.
_KV_GET = lazy_re.compile(r"GetKeyValue\(\) timed out with key:?\s*(?P<key>\S+)")


# rendezvous.cc (2024+) after a stuck warning whose rendezvous completed before the termination timeout:
# "Thread is unstuck! Warning above was a false-positive. Perhaps the timeout is too short." The warning
# was a slow participant, not a hang.
_UNSTUCK = lazy_re.compile(r"Thread is unstuck! Warning above was a false-positive")


def _collective(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not row.name.endswith("abort") and any(
        _UNSTUCK.search(ln.text) for ln in hit.after(40, same_rank=False)
    ):
        return []
    facts: dict[str, Any] = {"framework": "xla", "problem": "xla_rendezvous"}
    text = " ".join([hit.text, *(ln.text for ln in hit.after(3))])
    if m.group("name"):
        facts["op"] = m.group("name")
    if m.group("secs"):
        secs = int(m.group("secs"))
        facts["waited_s"] = secs / 1000 if m.groupdict().get("unit") == "ms" else secs
    d, n = _ORDINAL.search(hit.text), _LOCAL.search(hit.text)
    if d:
        facts["device"] = int(d.group("dev"))
    if n:
        facts["participants"] = int(n.group("n"))
    a = _ARRIVED.search(text)
    if a:
        facts["participants"], facts["arrived"] = int(a.group("want")), int(a.group("got"))
    who = f" ({facts['arrived']} of {facts['participants']} arrived)" if a else ""
    fatal = row.name.endswith("abort")
    return [
        row.event(
            hit,
            f"XLA {'aborted' if fatal else 'is stuck'}: not every device thread joined the rendezvous of "
            f"a collective{who}; one participant never reached it (a hang, a crash or a different "
            "program on that device)",
            facts,
            dedupe=(row.code, "xla_rendezvous"),
        )
    ]


# The stuck-thread dump XLA's rendezvous prints with (or instead of, in an excerpt) its "may be stuck"
# warning (xla/service/rendezvous.cc, 2024): "E1002 05:16:35.729531 5068 rendezvous.cc:43] Stack for
# thread tf_replicas/5068:" then absl's symbolised frames "   @      xla/service/gpu/runtime/
# nccl_all_to_all_thunk.cc:313 xla::gpu::RunMemCpyAllToAll()". The thread waits in the collective
# named by its thunk frame.
_STACK_HEAD = lazy_re.compile(r"rendezvous\.cc:\d+\] Stack for thread (?P<thread>\S+?):?\s*$")
_THUNK_FRAME = lazy_re.compile(r"^\s*@\s.*?xla::gpu::(?P<thunk>\w*?(?:Nccl|Collective)\w*Thunk)\b")
_THUNK_OPS = {
    "AllToAll": "all-to-all",
    "AllReduce": "all-reduce",
    "AllGather": "all-gather",
    "ReduceScatter": "reduce-scatter",
    "CollectivePermute": "collective-permute",
    "Send": "send",
    "Recv": "recv",
}


def _stack(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "xla", "problem": "xla_rendezvous", "thread": m.group("thread")}
    for ln in hit.after(40):
        f = _THUNK_FRAME.search(ln.text)
        if f:
            facts["frame"] = f.group("thunk")
            op = next((v for k, v in _THUNK_OPS.items() if k in f.group("thunk")), None)
            if op:
                facts["op"] = op
            break
    what = f"the {facts['op']} collective" if "op" in facts else "a collective"
    return [
        row.event(
            hit,
            f"XLA dumped the stack of device thread {m.group('thread')}, stuck in the rendezvous of {what}: "
            "one participant never reached it or never finished (a hang, a crash or a different program on "
            "that device)",
            facts,
            dedupe=(row.code, "xla_rendezvous"),
        )
    ]


def _tasks(hit: Hit) -> list[int]:
    found: list[int] = []
    for text in [hit.text, *(ln.text for ln in hit.after(12, same_rank=False))]:
        found.extend(int(t.group("task")) for t in _TASK.finditer(text) if int(t.group("task")) not in found)
    return sorted(found)


def _heartbeat(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    tasks = _tasks(hit)
    facts: dict[str, Any] = {"problem": "peer_task_died", "framework": "xla coordination service"}
    if tasks:
        facts["ranks"] = tasks
    who = f" (task(s) {', '.join(map(str, tasks))})" if tasks else ""
    return [
        row.event(
            hit,
            f"the coordination service lost the heartbeat of a running task{who}: that task died or was "
            "preempted; its own log (or dmesg for the OOM killer) says why",
            facts,
            dedupe=(row.code, "peer_task_died"),
        )
    ]


def _kv_get(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    key = m.group("key").rstrip(";")
    # the clique's id key: "cuda:gpu_nccl_unique_id:0" (0.4.1x), "devices=[0,1,...]; stream=0; ..." (0.5+)
    nccl = "nccl_unique_id" in key or key.startswith("devices=")
    what = "the NCCL communicator's id" if nccl else f"key {key}"
    return [
        row.event(
            hit,
            f"a process waited in vain for {what} in the coordination service's key-value store: the process "
            "that should publish it died, hangs, or runs a different program",
            {"problem": "coordination_kv_timeout", "key": key},
            dedupe=(row.code, "kv_get", key),
        )
    ]


_INCARNATION = lazy_re.compile(
    r"unexpectedly tried to connect with a different incarnation|"
    # the same task registering again after the service had set it to ERROR (a heartbeat timeout, a reported
    # error): a new process of a task that died, started again by its scheduler
    r"unexpectedly tried to connect while it is already in error|"
    r"Incarnation ID mismatch: expecting \S+ but got \S+\.? (?:This means|The task has restarted)|"
    r"Leader incarnation ID mismatch: the coordination leader has restarted"
)


def _incarnation(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = _TASK.search(hit.text)
    leader = m.group(0).startswith("Leader")
    facts: dict[str, Any] = {
        "problem": "coordination_task_restarted",
        "framework": "xla coordination service",
    }
    if t:
        facts["ranks"] = [int(t.group("task"))]
    who = "the coordination leader" if leader else (f"task {t.group('task')}" if t else "a task")
    return [
        row.event(
            hit,
            f"{who} re-joined the coordination service as a new process: it restarted after joining (a crash "
            "and a restart by the scheduler) or another job uses the same coordinator address and port; the "
            "service aborts every task",
            facts,
            dedupe=(row.code, "incarnation"),
        )
    ]


def _unstuck(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return []  # owned as no failure: the word net must not read "timeout is too short" as a hang


_XLA_REPLICATE = lazy_re.compile(
    r"Cannot replicate if number of devices \((?P<have>\d+)\) is different from (?P<want>\d+)|"
    r"Cannot replicate across different device types"
)


def _xla_replicate(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "torch_xla"}
    said = "devices of different types"
    if m.group("have"):
        facts.update(local_devices=int(m.group("have")), replication_devices=int(m.group("want")))
        said = f"{m.group('have')} device(s) where the replication needs {m.group('want')}"
    return [
        row.event(
            hit,
            f"PyTorch/XLA cannot set up replication: this process sees {said}: the XLA device was acquired "
            "before xmp.spawn (call xm.xla_device() only inside the spawned function)",
            facts,
            dedupe=(row.code, "xla_replicate"),
        )
    ]


SIGNATURES = (
    Signature(
        "torch_xla replication device count",
        _XLA_REPLICATE,
        _xla_replicate,
        C.XLA_REPLICATION_DEVICES.code,
        anchors=(b"Cannot replicate ",),
        words=("cannot replicate ",),
    ),
    Signature(
        "xla rendezvous unstuck",
        _UNSTUCK,
        _unstuck,
        C.WATCHDOG_TIMEOUT.code,
        anchors=(b"Thread is unstuck",),
        worth=(rb"Thread is unstuck",),
        words=("thread is unstuck",),
    ),
    Signature(
        "coordination service task restarted",
        _INCARNATION,
        _incarnation,
        C.RENDEZVOUS_MEMBER_RESTARTED.code,
        tier=1,
        anchors=(
            b"different incarnation",
            b"ncarnation ID mismatch",
            b"connect while it is already in error",
        ),
        worth=(
            rb"different incarnation",
            rb"ncarnation ID mismatch",
            rb"connect while it is already in error",
        ),
        words=("different incarnation", "incarnation id mismatch", "connect while it is already in error"),
    ),
    Signature(
        "xla rendezvous abort",
        _TERMINATION,
        _collective,
        C.WATCHDOG_TIMEOUT.code,
        anchors=(b"Termination timeout for", b"consistent program state"),
        worth=(rb"Termination timeout for", rb"consistent program state"),
        words=("termination timeout", "consistent program state"),
    ),
    Signature(
        "xla rendezvous stuck",
        _STUCK,
        _collective,
        C.WATCHDOG_TIMEOUT.code,
        tier=1,
        anchors=(b"and may be stuck",),
        worth=(rb"and may be stuck",),
        words=("may be stuck",),
    ),
    Signature(
        "xla rendezvous stuck thread stack",
        _STACK_HEAD,
        _stack,
        C.WATCHDOG_TIMEOUT.code,
        tier=1,
        anchors=(b"] Stack for thread",),
        worth=(rb"rendezvous\.cc:\d+\] Stack for thread",),
        words=("stack for thread",),
        examples=("E1002 05:16:35.729531    5068 rendezvous.cc:43] Stack for thread tf_replicas/5068:",),
    ),
    Signature(
        "coordination service heartbeat loss",
        _HEARTBEAT,
        _heartbeat,
        C.RANK_EXITED.code,
        tier=2,
        anchors=(
            b"heartbeat timeout",
            b"stopped sending heartbeats",
            b"Terminating process because",
            b"Either the leader task died",
            b"heartbeat has timed out for",
        ),
        worth=(
            rb"heartbeat timeout\. This",
            rb"stopped sending heartbeats",
            rb"Terminating process because",
            rb"leader task died",
            rb"heartbeat has timed out for",
        ),
        words=(
            "heartbeat timeout",
            "stopped sending heartbeats",
            "terminating process because",
            "leader task died",
            "heartbeat has timed out for",
        ),
    ),
    Signature(
        "coordination service key-value get timeout",
        _KV_GET,
        _kv_get,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=1,
        anchors=(b"GetKeyValue() timed out",),
        worth=(rb"GetKeyValue\(\) timed out",),
        words=("getkeyvalue() timed out",),
    ),
)
parse = gated_reader(SIGNATURES)
