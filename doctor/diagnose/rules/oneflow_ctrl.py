"""OneFlow's control plane at start-up: every process loads the master's gRPC control server before the job
runs, and retries while the master is not up yet (RUN222 when it gives up; the retries alone are silent).

Format, read at the source (Oneflow-Inc/oneflow oneflow/core/control/rpc_client.cpp, 0.x-1.x,
RpcClient::LoadServer): each attempt that gRPC answers UNAVAILABLE (14) logs a glog warning "W20240730
07:54:40.090461 27910 rpc_client.cpp:190] LoadServer 127.0.0.1 Failed at 0 times error_code 14 error_message
failed to connect to all addresses" and sleeps 10 s; after max_retry_num (60) attempts, ten minutes, the check
after the loop aborts the process: "Check failed: retry_idx < max_retry_num (60 vs. 60)" (glog's CHECK_LT;
some builds print the operands in parentheses). Another status code is LOG(FATAL) with gRPC's message alone.
The first attempts failing is the normal wait for the master to start (every rank of a healthy `python -m
oneflow.distributed.launch` run can print "Failed at 0 times"): only the last attempt ("Failed at 59 times")
and the check are the failure: the master (rank 0's address and port, MASTER_ADDR / MASTER_PORT) never
answered, because it died, is unreachable, or listens elsewhere.
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_LAST_ATTEMPT = 59  # rpc_client.cpp: max_retry_num = 60, counted from 0
_LOAD = lazy_re.compile(
    r"\bLoadServer (?P<addr>\S+) Failed at (?P<n>\d+) times error_code (?P<code>\d+)|"
    r"(?P<check>Check failed: \(?retry_idx\)? < \(?max_retry_num\)?)"
)


def _load(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, object] = {"framework": "oneflow"}
    # ranks' records of one width can be read as one wrapped line: the last record on it decides
    last = next(
        (x for x in _LOAD.finditer(hit.text) if x.group("check") or int(x.group("n")) >= _LAST_ATTEMPT), None
    )
    if last is None:
        return []  # retries while the master starts: owned, silent
    if not last.group("check"):
        facts.update(
            master=last.group("addr"), attempts=int(last.group("n")) + 1, grpc_code=int(last.group("code"))
        )
    msg = (
        f"{hit.who()}: OneFlow's control client gave up loading the master's control server"
        + (f" at {facts['master']}" if "master" in facts else "")
        + " after its retries (60 x 10 s): the master process never answered (it died, is unreachable, or "
        "listens on another address / port)"
    )
    return [row.event(hit, msg, facts, dedupe=(row.code, "oneflow_load_server"))]


SIGNATURES = (
    Signature(
        "oneflow control server load",
        _LOAD,
        _load,
        C.STORE_UNREACHABLE.code,
        anchors=(b"LoadServer ", b"Check failed: "),
        worth=(rb"LoadServer \S+ Failed at \d+ times", rb"Check failed: \(?retry_idx\)? <"),
        words=("loadserver", "retry_idx"),
        examples=(
            "W20240730 07:54:40.090461 27910 rpc_client.cpp:190] LoadServer 127.0.0.1 Failed at 59 times "
            "error_code 14 error_message failed to connect to all addresses",
            "F20240730 08:04:50.120000 27910 rpc_client.cpp:197] Check failed: retry_idx < max_retry_num (60 "
            "vs. 60)",
        ),
    ),
)
parse = gated_reader(SIGNATURES)
