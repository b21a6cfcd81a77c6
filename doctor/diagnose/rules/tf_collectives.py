"""TensorFlow's collective ops (MultiWorkerMirroredStrategy, CollectiveAllReduceStrategy, DTensor): a
collective that timed out, and a collective aborted by a failure of the transport between workers.

Formats (core/common_runtime/base_collective_executor.cc, collective_param_resolver_distributed.cc, TF
2.x): "DeadlineExceededError: Collective has timed out during execution." and "Collective has timed out
waiting for other workers." (the `timeout_seconds` of the CommunicationOptions ran out: RUN151); once a
collective failed, every later one on that worker is aborted with the first error's text after
"Collective ops is aborted by: " (logged by "BaseCollectiveExecutor::StartAbort <Status>", also wrapped as
"[_Derived_]"): "Collective ops is aborted by: Deadline Exceeded" is a timeout, "Socket closed",
"Connection reset by peer", "failed to connect to all addresses" and the other gRPC transport words
are the network between the workers (RUN174). An NCCL text after it ("NCCL: unhandled system error") is
read by the NCCL rows, which are offered the line first; any other text is left to the rows of its words.

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
    """A collective aborted by a timeout (the row's code) or by a lost worker or connection (RUN174)."""
    if timed_out:
        return [
            row.event(
                hit,
                message,
                {**facts, "problem": "tf_collective_timeout"},
                dedupe=(row.code, "tf_collective"),
            )
        ]
    return [
        row.event(
            hit,
            message,
            {**facts, "problem": "grpc_unavailable"},
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


SIGNATURES = (
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
