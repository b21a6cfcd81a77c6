"""NCCL's InfiniBand async-event thread reporting the subnet manager reconfiguring a port (RUN173, tier 1),
and NCCL's verbs wrapper's failures quoted without their WARN head (RUN173, below).

Formats, read at the source (NVIDIA/nccl src/transport/net_ib.cc ncclIbAsyncThreadMain, 2.4-2.22; net_ib/
common.cc since 2.23): each ibv_get_async_event() is printed as a WARN with libibverbs' ibv_event_type_str:
"NET/IB : Got async event : client reregistration" (2.4-2.18), "NET/IB : mlx5_0:1 Got async event : LID
change" (2.19-2.22, the device and port named), "NET/IB : mlx5_0:1 Got non-fatal async event: SM change(9)"
(2.23+, with the event number). The events with an error word ("port error", "local catastrophic error",
"local access violation work queue error", 2.23's "async fatal event") are nccl_errors' (RUN173, tier 0). Read
here: the subnet manager's own reconfiguration of the port, "client reregistration" (the SM asks the port to
register again: it restarted, failed over, or the port bounced), "LID change", "SM change", "P_Key change":
NCCL goes on, but a job that then hangs or loses a peer right after all ranks of a node printed them lost its
fabric under it, so it is a cause behind any error that names one (tier 1). "GID table change" (2.23+: "GID
table changed", a RoCE address added or removed, e.g. by a container network) and "port active" stay silent,
as do "communication established", "send queue drained", "last WQE reached" and "SRQ limit reached".
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_SM_EVENT = lazy_re.compile(
    r"NET/IB\s*:\s*(?:(?P<dev>[\w.-]+):(?P<port>\d+)\s+)?Got (?:non-fatal )?async event\s*:\s*"
    r"(?P<ev>client reregistration|LID change|SM change|P_Key change)\b"
)


def _sm_event(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    ev = m.group("ev")
    facts: dict[str, object] = {"ib_async_event": ev}
    if m.group("dev"):
        facts["device"] = f"{m.group('dev')}:{m.group('port')}"
    on = f" on {facts['device']}" if "device" in facts else ""
    msg = (
        f"{hit.who()}: NCCL's InfiniBand event thread got '{ev}'{on}: the subnet manager reconfigured the "
        "port "
        "during the run (it restarted or failed over, or the link bounced); a job that hangs or loses a peer "
        "after it lost its fabric path"
    )
    return [row.event(hit, msg, facts, dedupe=(row.code, "ib_sm_event", ev))]


# NCCL's verbs wrapper (misc/ibvwrap.cc 2.4-2.27, include/ibvwrap.h) words every failed verbs call "Call to
# ibv_modify_qp failed with error No such device" (2.4+; 2.19+ also "failed with 110 Connection timed out, on
# dev mlx5_0:1, curr state INIT, next state RTR, ..."), "Call to ibv_reg_mr failed" and "Call to
# ibv_poll_cq() returned -1". With the WARN head nccl_errors reads them; a thread's title or a paste without
# the head keeps only this text, which no other program prints. The INFO retries of 2.19+ ("... retrying 1/7
# after 100 msec of sleep") and the INFO probes of optional calls ("Call to mlx5dv_... failed with error
# Operation not supported") are not failures and are not read.
_VERBS_CALL = lazy_re.compile(
    r"\bCall to ibv_(?P<call>\w+)(?:\(\))? (?:failed\b(?: with (?:error )?(?P<err>.*))?|returned -\d+)"
)


def _verbs_call(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = hit.text
    if "WARN" in t:
        return None  # nccl_errors' WARN row reads it with its site
    if "NCCL INFO" in t or "retrying" in t:
        return []
    err = (m.group("err") or "").strip()
    call = "ibv_" + m.group("call")
    facts: dict[str, object] = {"verbs_call": call}
    if err:
        facts["verbs_error"] = err[:120]
    said = f": {err[:120]}" if err else ""
    return [
        row.event(
            hit,
            f"{hit.who()}: NCCL's InfiniBand verbs call {call} failed{said} (the RDMA NIC, its "
            "driver or the fabric)",
            facts,
            dedupe=(row.code, "verbs_call", call),
        )
    ]


SIGNATURES = (
    Signature(
        "nccl ib subnet-manager async event",
        _SM_EVENT,
        _sm_event,
        C.NCCL_IB_ERROR.code,
        tier=1,
        anchors=(b"async event",),
        worth=(rb"Got (?:non-fatal )?async event\s*:\s*(?:client rereg|LID change|SM change|P_Key change)",),
        words=("async event",),
        examples=(
            "gpu1:5021:5386 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : client "
            "reregistration",
            "node-2:4242:4300 [3] transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_1:1 Got async event : LID "
            "change",
            "[2025-01-03 10:00:01] node-2:4242:4300 [3] transport/net_ib/common.cc:179 NCCL WARN NET/IB : "
            "mlx5_1:1 Got non-fatal async event: SM change(9)",
        ),
    ),
    Signature(
        "nccl verbs call without its warn head",
        _VERBS_CALL,
        _verbs_call,
        C.NCCL_IB_ERROR.code,
        anchors=(b"Call to ibv_",),
        words=("call to ibv_",),
    ),
)
parse = gated_reader(SIGNATURES)
