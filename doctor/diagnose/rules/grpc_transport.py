"""TensorFlow's multi-worker runtime and JAX after start-up: a gRPC call between workers failed in the
transport (a worker died, a node dropped off the network, a connection was reset).

Formats: TF raises the gRPC status as `tensorflow.python.framework.errors_impl.UnavailableError: Socket
closed` (also "Stream removed", "Connection reset by peer", "Broken pipe", "failed to connect to all
addresses", "keepalive watchdog timeout", "GOAWAY received", "Network is unreachable", "Endpoint read
failed"), often inside "Collective ops is aborted by: ..." or with the status record "Additional GRPC error
information from remote target /job:worker/replica:0/task:1: :{"created":"@1600000000.1","description":
"Error received from peer ipv4:10.0.0.2:2222","file":"external/com_github_grpc_grpc/src/core/lib/surface/
call.cc","file_line":1056,"grpc_message":"Socket closed","grpc_status":14}" (14 is UNAVAILABLE). The
lines of the start-up exchange (RegisterTask, jax.distributed.initialize, the coordination service's
connect) are the rendezvous family's (coordination_service.py and the vocabulary net), not this one.

gRPC core's own record of a subchannel that could not connect (src/core/ext/filters/client_channel/
subchannel.cc, logged where GRPC_VERBOSITY lets it, as TF 1.x's I-level lines): 1.x "subchannel.cc:677]
Connect failed: {"created":"@1521525449.30","description":"Failed to connect to remote host: OS Error",
"errno":111,...,"os_error":"Connection refused","syscall":"connect","target_address":"ipv4:10.0.1.4:14417"}",
then "Retry in 998 milliseconds" and "Failed to connect to channel, retrying"; 1.2x+ "subchannel.cc:806]
subchannel 0x5631 {address=ipv4:10.0.1.4:14417, args=...}: connect failed (UNAVAILABLE: ...: Failed to connect
to remote host: Connection refused), backing off for 1000 ms". A task whose peer is not listening: a healthy
start-up logs the same while the other tasks come up, so it is the job's meeting that failed (RUN222, tier 1)
only when nothing of the job's progress follows it (event.UNTIL_UP, diagnose/lookahead.py).

gRPC Python's exception for a call that never reached its server (grpc/_channel.py, 1.0-1.6x): 1.0-1.2x
"<_Rendezvous of RPC that terminated with (StatusCode.UNAVAILABLE, Connect Failed)>", then the multi-line
repr of _Rendezvous / _InactiveRpcError / _MultiThreadedRendezvous: "status = StatusCode.UNAVAILABLE" and
"details = "failed to connect to all addresses"" (1.2x+, "...; last error: UNKNOWN: ipv4:10.0.0.1:50051:
Failed to connect to remote host: Connection refused" in 1.5x+; "Connect Failed" before 1.19; "DNS
resolution failed for ..." / "Name resolution failure" for a name). A trainer's client to its parameter
servers, master or coordinator that never connected: the server was not up yet (a worker started before them)
or is not at that address: the job's meeting (RUN222, tier 1: a death found elsewhere is the cause). The
details of a connection that broke ("Socket closed", "Connection reset by peer") are the transport rows'.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import UNTIL_UP, Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_WORDS = (
    r"Socket closed|Stream removed|Connection reset by peer|Broken pipe|failed to connect to all addresses|"
    r"keepalive watchdog timeout|GOAWAY received|Network is unreachable|Endpoint read failed|"
    r"Connection refused|No route to host|OS Error\b|EOF\b"
)
# TF 1.x (grpc core 1.0-1.3) names the status by its record's description, "OS Error" or "EOF"
# (iomgr/tcp_posix.c: the read of a socket whose peer went away): "Unavailable:
# {"created":"@1487751897.19","description":"EOF",
# "file":"external/grpc/src/core/lib/iomgr/tcp_posix.c","file_line":235,"grpc_status":14}", and the
# Supervisor's "Error reported to Coordinator: <class 'tensorflow.python.framework.errors_impl.
# UnavailableError'>, OS Error" (the exception's class, then its message).
_STATUS = lazy_re.compile(
    rf"(?:UnavailableError'>,|UnavailableError:|\bUNAVAILABLE:|\bUnavailable:)\s*(?:\[_Derived_\])?\s*"
    rf'(?:\{{"created":"@[\d.]+","description":")?(?P<what>{_WORDS})|'
    rf'"grpc_message":"(?P<what2>{_WORDS})[^"]*","grpc_status":14'
)
# The start-up exchange with the coordinator: a rendezvous that never completed, not a running job's link.
# The coordination service's own calls (connect, heartbeat, error polling, the disconnect at shutdown) are
# the rendezvous family's and xla_runtime.py's: a gRPC status inside them is read there.
_STARTUP = lazy_re.compile(
    r"RegisterTask|jax\.distributed\.initialize|client\.connect\(\)|PjRT_Client_Connect|"
    r"Wait_for_all_tasks_to_register|CoordinationService/(?:RegisterTask|Barrier)|"
    r"initialize_multi_client|_initialize_multi_worker|"
    r"[Cc]oordination[ _]?[Ss]ervice|coordination_leader|jax/_src/distributed\.py"
)
# Words of a connection that was never made (the peer not up yet), as opposed to one that broke.
_CONNECT = lazy_re.compile(
    r"failed to connect to all addresses|Connection refused|No route to host|Network is unreachable"
)
_RETRY = lazy_re.compile(r"(?i)\bretry(?:ing)?\b|will try again")
_PEER = lazy_re.compile(
    r"(?:remote target|peer) (?P<peer>/job:[\w-]+/replica:\d+/task:\d+|ipv[46]:[\d.:\[\]a-f]+)"
)


_PY_NEVER = r"failed to connect to all addresses|Connect Failed|DNS resolution failed|Name resolution failure"
_PY_UNAVAILABLE = lazy_re.compile(
    rf'(?:^|\s)details = "(?P<d>{_PY_NEVER})|'
    rf"of RPC that terminated with \(StatusCode\.UNAVAILABLE, (?P<d2>{_PY_NEVER})"
)
_PY_STATUS = lazy_re.compile(r"status = StatusCode\.UNAVAILABLE\b")
_PY_TARGET = lazy_re.compile(r"(?:ipv[46]:|target_address\W+)(?P<peer>[\w.:\[\]-]+:\d+)")


def _py_unavailable(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("d") is not None and not any(
        _PY_STATUS.search(ln.text) for ln in hit.before(3, same_rank=False)
    ):
        return None  # another status's details: not this row's
    what = m.group("d") or m.group("d2")
    facts: dict[str, Any] = {"problem": "grpc_never_connected", "grpc_error": what}
    for ln in [hit.line, *hit.after(2, same_rank=False)]:
        p = _PY_TARGET.search(ln.text)
        if p:
            facts["peer"] = p.group("peer")
            break
    at = f" at {facts['peer']}" if "peer" in facts else ""
    return [
        row.event(
            hit,
            f"a gRPC client never reached its server{at} (UNAVAILABLE: {what}): the parameter server, master "
            "or coordinator it calls was not up yet (this process started before it) or is not at that "
            "address",
            facts,
            tier=1,
            dedupe=(row.code, "grpc_py"),
        )
    ]


def _status(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    near = [*hit.before(20, same_rank=False), hit.line, *hit.after(6, same_rank=False)]
    if any(_STARTUP.search(ln.text) for ln in near):
        return None  # the start-up exchange: rendezvous, read by its own family
    what = m.group("what") or m.group("what2")
    if _CONNECT.fullmatch(what) and _RETRY.search(hit.text):
        return []  # a connect retried while the peers come up: a failure only if nothing follows it
    facts: dict[str, Any] = {"problem": "grpc_unavailable", "grpc_error": what}
    for ln in [hit.line, *hit.after(4, same_rank=False)]:
        p = _PEER.search(ln.text)
        if p:
            facts["peer"] = p.group("peer")
            break
    peer = f" with {facts['peer']}" if "peer" in facts else ""
    return [
        row.event(
            hit,
            f"a gRPC call between workers failed in the transport ({what}){peer}: the peer worker died or "
            "the network between the nodes dropped the connection",
            facts,
            dedupe=(row.code, "grpc", what),
        )
    ]


# A call between workers that ran out of its deadline (grpc_status 4): the peer worker hangs in or never
# reached the step the call belongs to, TF's collective timing out (its "Collective ops is aborted by:
# Deadline Exceeded" is the same wait, read by the collective rows).
_DEADLINE = lazy_re.compile(
    r'DeadlineExceededError: Deadline Exceeded|"grpc_message":"Deadline Exceeded","grpc_status":4'
)
_REMOTE = lazy_re.compile(r"remote target /job:|Error received from peer")


def _deadline(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    near = [*hit.before(20, same_rank=False), hit.line, *hit.after(4, same_rank=False)]
    if any(_STARTUP.search(ln.text) for ln in near):
        return None
    if not any(_REMOTE.search(ln.text) for ln in [hit.line, *hit.after(4, same_rank=False)]):
        return None  # a deadline of the job's own, not a call between workers
    facts: dict[str, Any] = {"problem": "grpc_deadline"}
    for ln in [hit.line, *hit.after(4, same_rank=False)]:
        p = _PEER.search(ln.text)
        if p:
            facts["peer"] = p.group("peer")
            break
    peer = f" to {facts['peer']}" if "peer" in facts else ""
    return [
        row.event(
            hit,
            f"a gRPC call between workers{peer} ran out of its deadline: the peer worker hangs or never "
            "reached the step the call belongs to",
            facts,
            dedupe=(row.code, "grpc_deadline"),
        )
    ]


# protobuf's serialisation limit (message_lite.cc: "<type> exceeded maximum protobuf size of 2GB: <bytes>") on
# a message of TF's worker service: the RecvBuf response of a collective over gRPC (RecvBufResponse,
# RecvBufRespExtra, TF 2.x), the RecvTensor response of a parameter server / between-graph replica
# (RecvTensorResponse), a RunGraph request or response. The peer's call fails and what follows (a worker
# "seems down", "aborting collectives: Deadline Exceeded") is its symptom. A GraphDef or TensorProto over
# 2 GB is another limit (saving a model), not the transport.
_TOO_LARGE = lazy_re.compile(
    r"(?P<msg>tensorflow\.(?:RecvBuf\w*|RecvTensor\w*|RunGraph\w*|\w*Collective\w*)) exceeded maximum "
    r"protobuf size of 2GB(?::\s*(?P<size>\d{1,20}))?"
)


def _too_large(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "tensorflow", "problem": "grpc_message_too_large"}
    facts["message_type"] = m.group("msg")
    size = ""
    if m.group("size"):
        facts["message_bytes"] = int(m.group("size"))
        size = f" ({int(m.group('size')) / 2**30:.1f} GiB)"
    return [
        row.event(
            hit,
            f"a tensor sent between workers over gRPC ({m.group('msg')}){size} is larger than protobuf's "
            "2 GB limit: the response is never sent and the peer's call fails (the worker then looks down "
            "or the collective times out); shard the tensor or use the NCCL collective implementation",
            facts,
            dedupe=(row.code, "grpc_too_large"),
        )
    ]


_SUBCHANNEL = lazy_re.compile(
    r"subchannel\.cc:\d+\]\s+(?:Connect failed: |subchannel 0x[0-9a-fA-F]+ [^\n]*?connect failed)"
    r"(?P<rest>.*)$"
)
_SUB_ADDR = lazy_re.compile(r'(?:"target_address":"|address=)(?P<addr>ipv[46]:[^",}\s]+)')
_SUB_WHY = lazy_re.compile(
    r'"os_error":"(?P<os>[^"]+)"|(?P<why>Connection refused|No route to host|Network is unreachable|'
    r"Connection timed out|Host is unreachable)"
)


def _subchannel(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    rest = m.group("rest")
    w = _SUB_WHY.search(rest)
    if not w:
        return None  # a connect that failed for another reason (TLS, a resolver) is not a peer not listening
    why = w.group("os") or w.group("why")
    facts: dict[str, Any] = {"problem": "grpc_connect", "error": why, UNTIL_UP: ""}
    a = _SUB_ADDR.search(hit.text)
    if a:
        facts["peer"] = a.group("addr")
    at = f" {facts['peer']}" if "peer" in facts else " its peer"
    return [
        row.event(
            hit,
            f"a gRPC channel could not connect to{at} ({why}) and the log never shows the job going on: "
            "that task (a parameter server or a worker) is not running or not listening on its address, "
            "the cluster spec names a wrong host or port, or a firewall blocks it",
            facts,
            tier=1,
            dedupe=(row.code, "grpc_connect"),
        )
    ]


SIGNATURES = (
    Signature(
        "grpc python client never connected",
        _PY_UNAVAILABLE,
        _py_unavailable,
        C.STORE_UNREACHABLE.code,
        anchors=(b"details = ", b"of RPC that terminated with ("),
        worth=(rb'details = "', rb"of RPC that terminated with \(StatusCode"),
        words=(
            "failed to connect to all addresses",
            "connect failed",
            "dns resolution failed",
            "name resolution",
        ),
    ),
    Signature(
        "protobuf limit on a worker message",
        _TOO_LARGE,
        _too_large,
        C.GRPC_MESSAGE_TOO_LARGE.code,
        anchors=(b"exceeded maximum protobuf size",),
        worth=(rb"tensorflow\.\w+ exceeded maximum protobuf size",),
        words=("exceeded maximum protobuf size",),
    ),
    Signature(
        "grpc deadline between workers",
        _DEADLINE,
        _deadline,
        C.WATCHDOG_TIMEOUT.code,
        tier=1,
        anchors=(b"DeadlineExceededError", b'"grpc_status":4'),
        worth=(rb"DeadlineExceededError: Deadline Exceeded", rb'"grpc_status":4'),
        words=("deadline exceeded",),
    ),
    Signature(
        "grpc subchannel connect",
        _SUBCHANNEL,
        _subchannel,
        C.STORE_UNREACHABLE.code,
        tier=1,
        anchors=(b"subchannel.cc:",),
        worth=(rb"subchannel\.cc:\d+\]\s+(?:Connect failed|subchannel 0x)",),
        words=("subchannel.cc",),
    ),
    Signature(
        "grpc unavailable transport",
        _STATUS,
        _status,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"UnavailableError", b"UNAVAILABLE", b"Unavailable", b'"grpc_status":14'),
        worth=(rb"UnavailableError|UNAVAILABLE:|Unavailable:", rb'"grpc_status":14'),
        words=("unavailable", "grpc_status"),
    ),
)
parse = gated_reader(SIGNATURES)
