"""TensorFlow's collective ops (MultiWorkerMirroredStrategy, CollectiveAllReduceStrategy, DTensor): a
collective that timed out, and a collective aborted by a failure of the transport between workers; the
collectives set up after the runtime started (TF's and JAX's, RUN387, at the row).

Formats (core/common_runtime/base_collective_executor.cc, collective_param_resolver_distributed.cc, TF
2.x): "DeadlineExceededError: Collective has timed out during execution." and "Collective has timed out
waiting for other workers." (the `timeout_seconds` of the CommunicationOptions ran out: RUN151); once a
collective failed, every later one on that worker is aborted with the first error's text after
"Collective ops is aborted by: " (logged by "BaseCollectiveExecutor::StartAbort <Status>", also wrapped as
"[_Derived_]"): "Collective ops is aborted by: Deadline Exceeded" is a timeout, "Socket closed",
"Connection reset by peer", "failed to connect to all addresses" and the other gRPC transport words
are the network between the workers (RUN174). An NCCL text after it ("NCCL: unhandled system error") is
read by the NCCL rows, which are offered the line first; any other text is left to the rows of its words.

The eager context's cluster start-up (core/common_runtime/eager/context_distributed_manager.cc, TF 2.4-2.16:
EnableCollectiveOps, which MultiWorkerMirroredStrategy calls when it is created, and
UpdateContextWithServerDef, behind tf.config.experimental_connect_to_cluster) logs the status it fails on,
bare, before returning it: "E tensorflow/core/common_runtime/eager/context_distributed_manager.cc:737]
Deadline Exceeded", "...] failed to connect to all addresses", "...] UNKNOWN: Could not start gRPC server"
(the server's own status, GrpcServer::Init in distributed_runtime/rpc/grpc_server_lib.cc, also raised as
"UnknownError: Could not start gRPC server" by tf.distribute.Server and the strategies, after gRPC's "No
address added out of total 1 resolved"). The workers of TF_CONFIG did not all start and reach each other
(RUN221 for a timeout, RUN222 for a connection refused or unreachable), or this worker's server could not bind
its address (RUN223). The executor's "StartAbort DEADLINE_EXCEEDED" logged beside it is that start-up's echo
(tier 1), not a collective that hung.

A TensorFlow without NCCL (the Windows and macOS wheels, a CPU-only build, tensorflow-rocm before its RCCL
ops, a build with TF_NEED_NCCL=0): MirroredStrategy's default cross-device ops (NcclAllReduce) and
tf.raw_ops' Nccl* ops have no kernel there. The graph executor says "No OpKernel was registered to support
Op 'NcclAllReduce' used by {{node Adam/NcclAllReduce}} with these attrs: [...]" (TF 1.13-2.x; older "...
Op 'NcclAllReduce' with these attrs.  Registered devices: [CPU,GPU]"), followed by "Registered kernels:
<no registered kernels>", and a graph imported into a binary that lacks the op entirely "Op type not
registered 'NcclAllReduce' in binary running on <host>" (NotFoundError). The library is missing from the
build (RUN263): HierarchicalCopyAllReduce / ReductionToOneDevice, or a TF with NCCL, is the fix.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_TIMED_OUT = lazy_re.compile(r"Collective has timed out (?P<when>during execution|waiting for other workers)")
_TRANSPORT = (
    r"Socket closed|Stream removed|Connection reset by peer|Broken pipe|failed to connect to all addresses|"
    r"keepalive watchdog timeout|GOAWAY received|Network is unreachable|Endpoint read failed|"
    r"Connection refused|No route to host|Connection timed out"
)
_ABORTED = lazy_re.compile(
    r"Collective ops is aborted by:\s*(?:\[_Derived_\])?\s*(?:(?P<deadline>Deadline Exceeded|[^.]*timed out)|"
    rf"(?P<net>{_TRANSPORT}))"
)


# The collective implementation's own abort, logged before (or instead of) the "aborted by" line of later
# ops: ring_alg.cc's "Aborting RingReduce with Unavailable: OS Error" (RingGather likewise, TF 1.12-2.x),
# hierarchical_tree_broadcaster.cc's, and the executor's "BaseCollectiveExecutor::StartAbort <Status>".
# gRPC's UNAVAILABLE is a peer worker gone or the connection to it lost (RUN174); DEADLINE_EXCEEDED a
# timeout. Other statuses are not a cause of their own: "StartAbort Out of range: End of sequence" is the
# end of an input pipeline in a healthy run, "Cancelled" follows another failure.
_RING_ABORT = lazy_re.compile(
    r"(?:Aborting (?P<alg>Ring\w+|\w*Broadcast\w*) with|BaseCollectiveExecutor::StartAbort) "
    r"(?:(?P<deadline>Deadline ?Exceeded|DEADLINE_EXCEEDED)|(?P<net>Unavailable|UNAVAILABLE))\b"
    r":?\s*(?P<detail>.*)$"
)


# A collective aborted because the workers' tensors disagree: the ring's merge (an Add of a received chunk
# and the local one) fails on chunks of different shapes, "Aborting RingReduce with Invalid argument:
# Incompatible shapes: [0,64] vs. [0,256]" (also after "StartAbort" / "Collective ops is aborted by:"). The
# replicas fed different shapes to one collective (an uneven last batch, a per-worker variable): RUN201, as
# collective_param_resolver_local.cc's "Shape mismatch in the collective instance" (model_mismatch.py).
_SHAPES = lazy_re.compile(
    r"(?:Aborting (?P<alg>Ring\w+|\w*Broadcast\w*|\w*Gather\w*) with|StartAbort|"
    r"Collective ops is aborted by:)"
    r"\s*(?:\[_Derived_\])?\s*(?:[Ii]nvalid ?[Aa]rgument|INVALID_ARGUMENT):\s*(?P<what>Incompatible shapes: "
    r"(?P<a>\[[\d, ?-]*\]) vs\. (?P<b>\[[\d, ?-]*\]))"
)


# A collective still pending when its step's rendezvous was cleaned up: BaseRendezvousMgr::Cleanup(step_id)
# (distributed_runtime/base_rendezvous_mgr.cc, TF 1.x-2.x; tsl's rendezvous table in 2.13+) aborts it with
# "Aborted: Cleanup <step_id>", which the executor logs as "BaseCollectiveExecutor::StartAbort Aborted:
# [_Derived_]Cleanup 95609632845199527" above the op's "[[{{node CollectiveReduce}}]]" (or "Collective ops is
# aborted by: Cleanup ..."). The step ended on this worker while the op still waited for its group: the
# workers' collectives did not pair up (another worker ran a different step, instance or group key, or never
# issued it): RUN201 at tier 1, behind an error that says more.
_CLEANUP = lazy_re.compile(
    r"(?:BaseCollectiveExecutor::StartAbort|Collective ops is aborted by:)\s*(?:Aborted:\s*|ABORTED:\s*)?"
    r"(?:\[_Derived_\])?\s*Cleanup (?P<step>\d+)"
)
_NODE = lazy_re.compile(r"\[\[\{\{node (?P<node>[^}]+)\}\}")


def _cleanup(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "tensorflow", "problem": "tf_collective_step_cleaned_up"}
    if len(m.group("step")) <= 20:
        facts["step_id"] = int(m.group("step"))
    node = next((n.group("node") for ln in [hit.line, *hit.after(2)] if (n := _NODE.search(ln.text))), None)
    if node:
        facts["node"] = node
    return [
        row.event(
            hit,
            "TensorFlow aborted a collective"
            + (f" ({node})" if node else "")
            + " still waiting for its group when this worker's step was cleaned up: the workers' collectives "
            "did not pair up (a different step, instance key or group on another worker, or one that never "
            "issued it)",
            facts,
            tier=1,
            dedupe=(row.code, "tf_cleanup"),
        )
    ]


def _shapes(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "tensorflow", "problem": "tf_collective_shape_mismatch"}
    if m.group("alg"):
        facts["algorithm"] = m.group("alg")
    facts["shapes"] = [m.group("a"), m.group("b")]
    said = f"{m.group('a')} vs. {m.group('b')}"
    return [
        row.event(
            hit,
            f"TensorFlow's workers gave one collective tensors of different shapes ({said}): the replicas "
            "disagree on what they reduce (an uneven last batch, a per-worker variable or branch)",
            facts,
            dedupe=(row.code, "tf_shapes"),
        )
    ]


_CLUSTER_START = lazy_re.compile(r"context_distributed_manager\.cc(?::\d+)?\]\s*(?P<msg>\S.*)$")
# glog's level letter before the file: "I0525 11:10:57.934 12345 context_...", "...: W tensorflow/..."
_INFO_LEVEL = lazy_re.compile(r"(?:^|\s|\])[IW](?:\d{4} [\d:.]+ +\d+)? +\S*$")
_BIND = lazy_re.compile(r"Could not start gRPC server|Address already in use|Failed to add port", re.I)
_TIMEOUT = lazy_re.compile(r"Deadline ?Exceeded|DEADLINE_EXCEEDED|timed out|Barrier", re.I)
_UNREACHABLE = lazy_re.compile(
    rf"UNAVAILABLE|{_TRANSPORT}|Name resolution|DNS resolution failed|unreachable", re.I
)


def _cluster_start(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    msg = m.group("msg").strip()
    if _INFO_LEVEL.search(hit.text[: m.start()]) or msg.startswith("Remote worker "):
        return []  # an INFO/WARNING record (CheckRemoteAlive logs every probe), not its failure
    facts: dict[str, Any] = {"framework": "tensorflow", "problem": "tf_cluster_startup", "error": msg[:160]}
    if _BIND.search(msg):
        code = C.ADDRESS_IN_USE.code
        what = (
            f"TensorFlow could not start this worker's gRPC server ({msg[:80]}): its TF_CONFIG address is "
            "taken by another process or is not an address of this host"
        )
    elif _TIMEOUT.search(msg):
        code = C.RENDEZVOUS_TIMEOUT.code
        what = (
            f"TensorFlow's cluster start-up timed out ({msg[:80]}): the workers of TF_CONFIG did not all "
            "start and answer in time (every worker must run, with TF_CONFIG set before the strategy is "
            "created, and reach the others' address:port)"
        )
    elif _UNREACHABLE.search(msg):
        code = C.STORE_UNREACHABLE.code
        what = (
            f"TensorFlow's cluster start-up could not reach another worker ({msg[:80]}): a worker of "
            "TF_CONFIG is not running or its address:port is wrong or blocked"
        )
    else:
        return None
    return [row.event(hit, what, facts, code=code, dedupe=(code, "tf_cluster_start"))]


_GRPC_SERVER = lazy_re.compile(r"Could not start gRPC server")


def _grpc_server(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "TensorFlow could not start this worker's gRPC server: the host:port TF_CONFIG (or the "
            "ClusterSpec) gives this task is taken by another process, or is not an address of this host",
            {"framework": "tensorflow", "problem": "grpc_server_bind"},
            dedupe=(row.code, "tf_cluster_start"),
        )
    ]


def _in_startup(hit: Hit) -> bool:
    """The collective executor's abort logged beside the cluster start-up's own failure."""
    near = (*hit.before(8, same_rank=False), *hit.after(12, same_rank=False))
    return any("context_distributed_manager" in ln.text for ln in near)


# Every op of tensorflow/core/ops/nccl_ops.cc: NcclAllReduce, NcclReduce, NcclBroadcast, the _Nccl*Send/
# _Nccl*Recv pairs the graph rewrite makes of them.
_NO_NCCL_OP = lazy_re.compile(
    r"(?:No OpKernel was registered to support Op|Op type not registered) '(?P<op>_?Nccl\w+)'"
)


def _no_nccl_op(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    op = m.group("op")
    return [
        row.event(
            hit,
            f"this TensorFlow build has no NCCL (no kernel for its {op} op): MirroredStrategy's default "
            "all-reduce cannot run here (Windows/macOS or CPU-only wheels); use "
            "cross_device_ops=HierarchicalCopyAllReduce() or a TensorFlow built with NCCL",
            {"problem": "framework_without_nccl", "framework": "tensorflow", "op": op},
            dedupe=(row.code, "tf_no_nccl"),
        )
    ]


def _timed_out(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    when = m.group("when")
    what = "while the others had not all joined it" if "waiting" in when else "while it ran"
    return [
        row.event(
            hit,
            f"a TensorFlow collective timed out {what}: some worker never reached it or hangs in it",
            {"problem": "tf_collective_timeout", "framework": "tensorflow", "when": when},
            dedupe=(row.code, "tf_collective"),
        )
    ]


def _abort_event(
    row: Signature, hit: Hit, facts: dict[str, Any], timed_out: bool, message: str
) -> list[Event]:
    """A collective aborted by a timeout (the row's code) or by a lost worker or connection (RUN174); the
    echo (tier 1) of a cluster start-up that failed beside it."""
    tier = 1 if _in_startup(hit) else None
    if tier:
        facts = {**facts, "during_startup": True}
    if timed_out:
        return [
            row.event(
                hit,
                message,
                {**facts, "problem": "tf_collective_timeout"},
                tier=tier,
                dedupe=(row.code, "tf_collective"),
            )
        ]
    return [
        row.event(
            hit,
            message,
            {**facts, "problem": "grpc_unavailable"},
            tier=tier,
            code=C.NCCL_SOCKET_ERROR.code,
            dedupe=(C.NCCL_SOCKET_ERROR.code, "tf_collective"),
        )
    ]


def _aborted(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "tensorflow", "aborted_by": m.group("deadline") or m.group("net")}
    if m.group("deadline"):
        message = (
            "TensorFlow's collectives were aborted by a timeout: some worker never reached the collective or "
            "hangs in it"
        )
    else:
        message = (
            "TensorFlow's collectives were aborted by a failed connection between workers "
            f"({m.group('net')}): a worker died or the network between the nodes dropped the connection"
        )
    return _abort_event(row, hit, facts, bool(m.group("deadline")), message)


def _ring_abort(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    detail = m.group("detail").strip()[:120]
    facts: dict[str, Any] = {"framework": "tensorflow", "status": m.group("deadline") or m.group("net")}
    if m.group("alg"):
        facts["algorithm"] = m.group("alg")
    if detail:
        facts["detail"] = detail
    if m.group("deadline"):
        message = (
            "TensorFlow aborted its collectives on a timeout: some worker never reached the collective or "
            "hangs in it"
        )
    else:
        message = (
            "TensorFlow aborted its collectives because a worker became unavailable"
            + (f" ({detail})" if detail else "")
            + ": a worker died or the network between the nodes dropped the connection"
        )
    return _abort_event(row, hit, facts, bool(m.group("deadline")), message)


# The collectives set up after the runtime started, at their sources: TensorFlow's eager context
# (python/eager/context.py configure_collective_ops, TF 1.15-2.x, called by MultiWorkerMirroredStrategy's and
# CollectiveAllReduceStrategy's constructors): "RuntimeError: Collective ops must be configured at program
# startup" once the context is initialised (an op, a tensor or a model built before the strategy), and
# "ValueError: Collective ops are already configured." for a second strategy with another leader or
# implementation; JAX's jax/_src/distributed.py: "RuntimeError: jax.distributed.initialize() must be called
# before any JAX computations are executed." and "distributed.initialize should only be called once.".
_CONFIGURED_LATE = lazy_re.compile(
    r"Collective ops must be configured at program start-?up|Collective ops are already configured|"
    r"jax\.distributed\.initialize\(\) must be called before any JAX (?:computations|calls)|"
    r"distributed\.initialize should only be called once"
)


def _configured_late(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    jax = "jax" in m.group(0) or "initialize" in m.group(0)
    twice = "already" in m.group(0) or "only be called once" in m.group(0)
    what = (
        "set up twice (a second strategy or initialize call with other settings)"
        if twice
        else "set up after the runtime had started: create the strategy (or call jax.distributed.initialize) "
        "first thing in the program, before any op, tensor or model"
    )
    return [
        row.event(
            hit,
            f"{hit.who()}: {'JAX' if jax else 'TensorFlow'}'s collectives were {what}",
            {"framework": "jax" if jax else "tensorflow", "reason": "configured_twice" if twice else "late"},
            dedupe=(row.code,),
        )
    ]


SIGNATURES = (
    Signature(
        "collectives configured late",
        _CONFIGURED_LATE,
        _configured_late,
        C.COLLECTIVES_CONFIGURED_LATE.code,
        anchors=(b"Collective ops ", b"jax.distributed.initialize", b"distributed.initialize should"),
        worth=(
            rb"Collective ops (?:must be configured|are already configured)|"
            rb"jax\.distributed\.initialize\(\) must be called|distributed\.initialize should only",
        ),
        words=("collective ops must", "collective ops are already", "distributed.initialize"),
    ),
    Signature(
        "tf cluster start-up failed",
        _CLUSTER_START,
        _cluster_start,
        C.RENDEZVOUS_TIMEOUT.code,
        anchors=(b"context_distributed_manager",),
        worth=(rb"context_distributed_manager\.cc",),
        words=("context_distributed_manager",),
    ),
    Signature(
        "tf grpc server did not start",
        _GRPC_SERVER,
        _grpc_server,
        C.ADDRESS_IN_USE.code,
        anchors=(b"Could not start gRPC server",),
        worth=(rb"Could not start gRPC server",),
        words=("could not start grpc server",),
    ),
    Signature(
        "tf build without nccl ops",
        _NO_NCCL_OP,
        _no_nccl_op,
        C.LIBRARY_MISSING.code,
        anchors=(b"to support Op '", b"Op type not registered '"),
        worth=(rb"to support Op '", rb"Op type not registered '"),
        words=("to support op '", "op type not registered '"),
    ),
    Signature(
        "tf collective shapes differ",
        _SHAPES,
        _shapes,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"Incompatible shapes",),
        words=("incompatible shapes",),
        examples=("Aborting RingReduce with Invalid argument: Incompatible shapes: [0,64] vs. [0,256]",),
    ),
    Signature(
        "tf collective pending at step cleanup",
        _CLEANUP,
        _cleanup,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"StartAbort", b"aborted by:"),
        worth=(rb"(?:StartAbort|aborted by:).{0,40}Cleanup \d",),
        words=("startabort", "aborted by:"),
    ),
    Signature(
        "tf collective timed out",
        _TIMED_OUT,
        _timed_out,
        C.WATCHDOG_TIMEOUT.code,
        anchors=(b"Collective has timed out",),
        worth=(rb"Collective has timed out",),
        words=("collective has timed out",),
    ),
    Signature(
        "tf collective ops aborted",
        _ABORTED,
        _aborted,
        C.WATCHDOG_TIMEOUT.code,
        anchors=(b"Collective ops is aborted by",),
        worth=(rb"Collective ops is aborted by",),
        words=("collective ops is aborted by",),
    ),
    Signature(
        "tf collective implementation aborted",
        _RING_ABORT,
        _ring_abort,
        C.WATCHDOG_TIMEOUT.code,
        anchors=(b"Aborting ", b"StartAbort "),
        worth=(rb"Aborting \w+ with ", rb"StartAbort "),
        words=("aborting ", "startabort "),
    ),
)
parse = gated_reader(SIGNATURES)
