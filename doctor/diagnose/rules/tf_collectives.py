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


def _aborted(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "tensorflow", "aborted_by": m.group("deadline") or m.group("net")}
    if m.group("deadline"):
        return [
            row.event(
                hit,
                "TensorFlow's collectives were aborted by a timeout: some worker never reached the "
                "collective or hangs in it",
                {**facts, "problem": "tf_collective_timeout"},
                dedupe=(row.code, "tf_collective"),
            )
        ]
    return [
        row.event(
            hit,
            "TensorFlow's collectives were aborted by a failed connection between workers "
            f"({m.group('net')}): a worker died or the network between the nodes dropped the connection",
            {**facts, "problem": "grpc_unavailable"},
            code=C.NCCL_SOCKET_ERROR.code,
            dedupe=(C.NCCL_SOCKET_ERROR.code, "tf_collective"),
        )
    ]


SIGNATURES = (
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
)
parse = gated_reader(SIGNATURES)
