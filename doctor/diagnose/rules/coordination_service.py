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
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader

_BARRIER = re.compile(r"Barrier timed out\.?\s*(?:Barrier_id|Id)\s*:\s*(?P<id>[^\s.]+(?:\.\w+)?)?")
_REGISTRATION = re.compile(
    r"[Cc]oordination service as cluster registration failed|cluster registration failed"
)
_TASK = re.compile(r"/job:(?P<job>[\w-]+)/replica:\d+/task:(?P<task>\d+)")
# Barriers the service itself runs while the processes start: not reaching them is a rendezvous
# that never completed.
_STARTUP = re.compile(r"Wait_for_all_tasks_to_register|PjRT_Client_Connect|\[Init\]", re.I)


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
)
parse = gated_reader(SIGNATURES)
