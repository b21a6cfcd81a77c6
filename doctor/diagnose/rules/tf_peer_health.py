"""TensorFlow's collective health check: a peer worker that stopped answering (RUN394, nccl_network).

MultiWorkerMirroredStrategy (tensorflow/python/distribute/collective_all_reduce_strategy.py, TF 2.3+,
`_check_health`, also in forks and vendored copies) probes every task with
context.check_collective_ops_peer_health (eager/context.py; C++ CollectiveRemoteAccessDistributed::
CheckPeerHealth over gRPC). A probe that raises UnavailableError / FailedPreconditionError /
DeadlineExceededError is logged as a warning and retried ("WARNING:tensorflow:/job:worker/replica:0/task:7
seems down, retrying 1/3"; absl's "W1206 12:00:00.000 ... collective_all_reduce_strategy.py:NNN] ..." form),
and after the last retry as an error ("ERROR:tensorflow:Cluster check alive failed, /job:worker/replica:0/
task:1 is down, aborting collectives: <the status>"), then every collective is aborted with
errors.UNAVAILABLE "cluster check alive failed, /job:worker/replica:0/task:1 is down", which the ops raise
as "UnavailableError: Collective ops is aborted by: cluster check alive failed, ... is down" (also behind
"[_Derived_]", and in base_collective_executor's "StartAbort Unavailable: ..." line).

The peer did not answer: its process died (OOM-killed, preempted, crashed: its own log says which) or the
network between the workers dropped. A retry alone ("seems down, retrying 1/3") is read at tier 1: the
peer may still answer, and a failure named elsewhere leads.

A remote worker that no longer knows the client's eager context (eager_service_impl.cc GetServerContext, TF
2.0+: InvalidArgument "Unable to find a context_id matching the specified one (123). Perhaps the worker was
restarted?", later "..., or the context was GC'd?", Aborted since 2.4): the worker process is a new one (it
died and was started again by its scheduler, a preempted VM or pod) and the job's membership broke (RUN312,
as the coordination service's restarted task). Tier 1: the crash that made it restart leads when shown.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_PEER = r"(?P<peer>/job:(?P<job>[\w-]+)/replica:\d+/task:(?P<task>\d+))"
_RETRY = lazy_re.compile(_PEER + r" seems down, retrying (?P<n>\d+)/(?P<of>\d+)")
_DOWN = lazy_re.compile(
    r"[Cc]luster check alive failed,? " + _PEER + r" is down(?:, aborting collectives:?\s*(?P<why>.*))?"
)


_CONTEXT_GONE = lazy_re.compile(
    r"Unable to find a context_id matching the specified one \((?P<ctx>-?\d+)\)\. Perhaps the worker "
    r"was restarted"
)


def _facts(m: re.Match[str]) -> dict[str, Any]:
    return {"framework": "tensorflow", "peer": m.group("peer"), "peer_task": int(m.group("task"))}


def _retry(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts = {**_facts(m), "attempt": int(m.group("n")), "retries": int(m.group("of"))}
    return [
        row.event(
            hit,
            f"TensorFlow's collective health check could not reach {m.group('peer')} (attempt {m.group('n')} "
            f"of {m.group('of')}): that worker died or the network to it dropped; read its own log",
            facts,
            tier=1,
            dedupe=(row.code, m.group("peer")),
        )
    ]


def _down(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts = _facts(m)
    why = (m.group("why") or "").strip()
    if why:
        facts["status"] = clip(why, 200)
    said = f" ({clip(why, 100)})" if why else ""
    return [
        row.event(
            hit,
            f"TensorFlow's collective health check gave up on {m.group('peer')}{said} and aborted every "
            "collective: that worker died or the network to it dropped; read its own log",
            facts,
            dedupe=(row.code, m.group("peer")),
        )
    ]


def _context_gone(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "a TensorFlow worker no longer knows this client's eager context: the worker process was "
            "restarted "
            "(it died or was preempted and its scheduler started it again), so the cluster's "
            "membership broke; "
            "read that worker's log for why it stopped",
            {"framework": "tensorflow", "problem": "tf_worker_restarted", "context_id": m.group("ctx")},
            tier=1,
            dedupe=(row.code, "tf_context_gone"),
        )
    ]


SIGNATURES = (
    Signature(
        "tf cluster check alive failed",
        _DOWN,
        _down,
        C.TF_COLLECTIVE_PEER_DOWN.code,
        anchors=(b"luster check alive failed",),
        words=("cluster check alive failed",),
    ),
    Signature(
        "tf peer seems down",
        _RETRY,
        _retry,
        C.TF_COLLECTIVE_PEER_DOWN.code,
        anchors=(b" seems down, retrying",),
        words=("seems down, retrying",),
    ),
    Signature(
        "tf worker context gone (worker restarted)",
        _CONTEXT_GONE,
        _context_gone,
        C.RENDEZVOUS_MEMBER_RESTARTED.code,
        tier=1,
        anchors=(b"Unable to find a context_id matching",),
        words=("unable to find a context_id matching",),
    ),
)
parse = gated_reader(SIGNATURES)
