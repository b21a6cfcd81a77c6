"""Ascend NPUs: HCCL (Huawei's collective library), the CANN runtime under it, and the frameworks
that print them (torch_npu's ProcessGroupHCCL, MindSpore, vLLM-Ascend, MindIE), by root cause.

How they print. CANN's error manager writes one record per failure: a code of two letters and four
digits, the letters naming the component (EI: HCCL, EE: runtime, EJ: HCCP / tsd, EL: driver, EH and
EZ others), then the text: "EI0002: [PID: 7277] 2024-11-28-11:59:30.645.648 The wait execution of the
Notify register times out. Reason: ...", and a code ending in 9999 for an inner error whose real text
follows ("EE9999: Inner Error!" then "EE9999[PID: 818] ... (EE9999):  The error from device(chipId:5,
...), ... event wait timeout occurred during task execution, ... timeout=234s."). torch_npu raises
"<fn>:<file>:<line> NPU function error: aclrtSynchronizeDevice, error code is 507046" (runtime
numbers, torch_npu/csrc/core/npu/NPUErrorCodes.h), "HCCL function error: hcclCommInitRootInfoConfig(
...), error code is 9" (HcclResult, hccl_types.h) or "OPS function error: HcclAllreduce, error code is
6", then its own record "[ERROR] 2024-09-26-16:06:40 (PID:2671581, Device:2, RankID:2) ERR00100 PTA
call acl api failed" (ERR<module><code>: 00 PTA, 01 OPS, 02 DIST; 100 acl, 200 hccl), then the
runtime's "[Error]: <the number's text>" and the CANN record. HCCL's own plog lines are "[ERROR]
HCCL(1041081,all_reduce_test):2000-03-15-01:20:01.624.966 [topoinfo_exchange_server.cc:314] ...".
The CANN record, when the excerpt holds it, says more than the number, so both give one event.

Families (the code the root cause gets):
- collective timeout (RUN311): a device-side wait of an HCCL operation ran out (HCCL_EXEC_TIMEOUT,
  default 1800 s; HCCL_CONNECT_TIMEOUT for link set-up, 120 s): EI0002 "The wait execution of the
  Notify register times out", EI0006 "Getting socket times out" and the plog's "wait socket establish
  timeout" (links of an operation's first run: a peer that never came to it), the runtime's stream or
  event waits ("event wait timeout occurred during task execution", EE1002 "Stream synchronize
  timeout", numbers 507046 / 507047 / 507048 and 107020, which torch_npu's own exception hook treats
  as the NPU timeout), and HCCL's cluster summary "ExceptionType:[Heartbeat Lost Occurred]" naming
  the device whose process exited or whose network dropped (that device is the suspect). The cause
  is on the rank that did not arrive, as for an NCCL timeout. torch_npu's watchdog records
  ("Watchdog caught collective operation timeout: WorkHCCL(...)") are timeouts.py's rows.
- rendezvous (RUN221): the communicator's start-up exchange of root info / topology did not gather
  every rank ("topo exchange server get socket timeout", "TopoDetect ERROR occur", "rank num[8]is
  different with rank list size[4]"), and hcclCommInitRootInfo failing with HCCL_E_TIMEOUT (9); the
  rank table refused (RUN224): EI0004, MindSpore's "Init plugin so failed, ret = 1343225860".
- network (RUN172): EI0009 "Transport init error ... Create Dest error" (a link to a named peer could
  not be created); the address in use (RUN223): HCCL's listen on its port failed ("listen on ip[...]
  and specific port[...] fail").
- device (RUN295): the NPU itself (EL0001 "Device_Absent/Abnormal", "Device[0] lost heartbeat", 507010
  "The task scheduler loses the heartbeat", HBM multi-bit ECC / UCE errors torch_npu names).
- driver and environment (RUN262): EJ0001 "Failed to initialize the HCCP process" (a previous
  process still holds the NPU).
A bare RuntimeError of these (RUN132) and the SIGABRT that may follow are their consequences: the raise
line builds its event from the record below it, or, without one, from the HcclResult of the call when
that number names a cause (_INIT_RESULTS, _OP_RESULTS). torch_npu's remarks on its timeout settings are
owned as no failure, so that no other reading takes their words for a timeout.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

# torch_npu's record after each error: "(PID:13075, Device:0, RankID:8) ERR00100" (RankID -1: not yet
# in a process group).
_NPU_RECORD = lazy_re.compile(r"\(PID:(?P<pid>\d+), Device:(?P<dev>-?\d+), RankID:(?P<rank>-?\d+)\) ERR\d{5}")
# HCCL's group information in a record: "group information: [group:[...], ..., rankSize[8], rankId[4].]"
_GROUP_RANK = lazy_re.compile(r"rankSize\[\d+\], rankId\[(\d+)\]")
_CHIP = lazy_re.compile(r"chipId:(\d+)|device_id=(\d+)|Device\[(\d+)\]")
# The operation an HCCL task belongs to: "tag[AllReduce_90.90.92.240%enp189s0f0_60000_0_17327...]".
_TAG_OP = lazy_re.compile(r"tag\[(?P<op>[A-Za-z]+)_")
_TIMEOUT_S = lazy_re.compile(r"timeout(?:\[|=)(\d+)\s*s?\]?", re.I)
# EI0002's reason: "has not received the Notify record from remote rank [1]" ("[unknown]" or
# "[4294967295]" when HCCL cannot tell).
_REMOTE = lazy_re.compile(r"from remote rank:? ?\[(\d+)\]")
_IS_RECORD = lazy_re.compile(r"\bE[A-Z]\d{4}\b")
_ERRNO = lazy_re.compile(r"(?:error code is|runtime result =) (\d+)")
# The CANN record's own code (not the 9999 "inner error" wrapper, whose text says what happened).
_CANN_CODE = lazy_re.compile(r"\b(E[A-Z](?!9999)\d{4})\b")

# Runtime numbers that are a wait running out (NPUErrorCodes.h; 107020 is the one torch_npu's exception
# hook names "npu timeout" and gives the other ranks time to exit on).
TIMEOUT_NUMBERS = {
    107019: "task execution timed out",
    107020: "the wait for a stream or event timed out",
    507046: "a stream did not complete within the synchronize timeout",
    507047: "an event did not complete within the synchronize timeout",
    507048: "an internal task (a communication task) timed out",
}

_NOTIFY = lazy_re.compile(
    r"\bEI0002\b|wait execution of the Notify register times out|hccl fftsplus task timeout occurred|"
    r"Notify wait execute failed|"
    # EI0002's own "Possible Cause" (the catalogue's text), which names HCCL_EXEC_TIMEOUT: the record's
    # tail when a paste cut its first line
    r"too slow to complete a communication operation within the timeout interval"
)
_SOCKET = lazy_re.compile(
    r"\bEI0006\b|Getting socket times out|wait socket establish timeout|Communication_Error_Get_Socket|"
    r"connected p2p timeout"
)
_STREAM = lazy_re.compile(
    r"event wait timeout occurred|[Ss]tream synchronize timeout|reason=\[?stream sync timeout|\bEE1002\b|"
    r"The execution of the internal task times out|"
    r"In the specified timeout waiting event, all tasks in the specified stream are not completed|"
    r"During the specified event synchronization waiting time, the event is not executed completely|"
    r"NPU (?:function )?error[:,].*error code is (?P<num>107019|107020|507046|507047|507048)\b|"
    r"NPU warning, error code is (?P<warn>507046|507047|507048|107020)\b|"
    r"runtime result = (?:107019|107020|507046|507047|507048)\b|reason=\[?task timeout\]?"
)
_HEARTBEAT = lazy_re.compile(
    r"Cluster Exception Location\[IP/ID\]:\[(?P<where>[^\]]*)\].*?ExceptionType:\[Heartbeat Lost Occurred\]|"
    r"ExceptionType:\[Heartbeat Lost Occurred\]"
)
_TOPO = lazy_re.compile(
    r"topo exchange server get socket timeout|TopoDetect ERROR occur|"
    r"rank num\[(?P<want>\d+)\]\s*is different with rank list size\[(?P<got>\d+)\]|"
    r"HCCL function error: [Hh]cclCommInitRootInfo\w*\(.*error code is 9\b"
)
# EI0004: the rank table (RANK_TABLE_FILE: device, rank and server ids of every rank) is invalid or does
# not match the machine - HCCL's rendezvous settings are wrong (MindSpore's init_hccl(), torch_npu's
# RANK_TABLE_FILE path).
# MindSpore's "Init plugin so failed, ret = 1343225860" is HCCL's initialisation refusing the rank table
# (its FAQ: a wrong rank_table.json).
_RANKTABLE = lazy_re.compile(
    r"\bEI0004\b|[Rr]anktable is invalid|[Rr]ank table is invalid|Init plugin so failed, ret = 1343225860"
)
_CONNECTED = lazy_re.compile(r"total connected num is \[(\d+)\]")
_NEED = lazy_re.compile(r"need connect rankNum is \[(\d+)\]")
_TRANSPORT = lazy_re.compile(r"\bEI0009\b|Transport init error|\[Create\]\[DestLink\]Create Dest error")
_DST = lazy_re.compile(r"dst_rank\[(\d+)\].*?remote_ip_addr\[([^\]]*)\]")
_LISTEN = lazy_re.compile(
    r"\[HcclSocket\]\[Listen\].*?listen on ip\[(?P<ip>[^\]]*)\] and specific port\[(?P<port>\d+)\] fail"
)
_DEVICE = lazy_re.compile(
    r"Device_Absent/Abnormal\(EL0001\)|\bEL0001\b|Device\[\d+\] lost heartbeat|reason=lost heartbeat|"
    r"The task scheduler loses the heartbeat|HBM MULTI BIT ECC ERROR|\bUCE ERROR\b"
)
# torch_npu's raise: "NPU function error: aclrtSynchronizeDevice, error code is 507046", "HCCL function
# error: hcclCommInitRootInfoConfig(...), error code is 1", "OPS function error: HcclAllreduce, error code
# is 6", ProcessGroupHCCL's "[ERROR] HCCL error in: torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:64".
_RAISE = lazy_re.compile(
    r"\b(?:NPU|HCCL|OPS) function error: |HCCL error in: |ACL stream synchronize failed|"
    r"Call runtime aclrtSynchronize\w* error"
)
_HCCP = lazy_re.compile(r"\bEJ0001\b|Failed to initialize the HCCP process")


def _npu_facts(hit: Hit, span: int = 8) -> dict[str, Any]:
    """Rank, device and pid from torch_npu's record or the device's chip id, on the hit line or near it."""
    f: dict[str, Any] = {"backend": "hccl"}
    for ln in [hit.line, *hit.after(span), *reversed(hit.before(span))]:
        m = _NPU_RECORD.search(ln.text)
        if m:
            f.setdefault("pid", int(m.group("pid")))
            if int(m.group("dev")) >= 0:
                f.setdefault("device", int(m.group("dev")))
            if int(m.group("rank")) >= 0:
                f.setdefault("rank", int(m.group("rank")))
        g = _GROUP_RANK.search(ln.text)
        if g:
            f.setdefault("group_rank", int(g.group(1)))  # the rank in that communicator, not the global one
        c = _CHIP.search(ln.text)
        if c and "device" not in f:
            f["device"] = int(next(g for g in c.groups() if g is not None))
    if hit.rank is not None:
        f["rank"] = hit.rank
    return f


def _timeout_facts(hit: Hit, kind: str) -> dict[str, Any]:
    f = _npu_facts(hit)
    f["phase"] = kind
    t = hit.text
    op = _TAG_OP.search(t)
    if op:
        f["op"] = op.group("op")
    remote = _REMOTE.search(t)
    if remote and int(remote.group(1)) < 1 << 31:  # 4294967295: HCCL does not know which peer
        f["suspect_ranks"] = [int(remote.group(1))]
    code = _CANN_CODE.search(t)
    if code:
        f["error_code"] = code.group(1)
    s = _TIMEOUT_S.search(t)
    if s:
        f["timeout_s"] = int(s.group(1))
    for ln in [hit.line, *hit.after(4), *hit.before(4)]:
        n = _ERRNO.search(ln.text)
        if n and int(n.group(1)) in TIMEOUT_NUMBERS:
            f["npu_error"] = int(n.group(1))
            break
    return f


# The rows whose record says more than the device's stream wait above it (by name: rows are ordered
# causes first, and an order is no index).
_HCCL_RECORDS = ("HCCL notify wait timeout", "HCCL link set-up timeout", "HCCL heartbeat lost")
_STREAM_ROW = "NPU stream or event wait timeout"


def _record_below(hit: Hit, rows: tuple[Signature, ...], n: int = 16) -> Optional[list[Event]]:
    """The events of the first line below the hit (same rank, up to n lines) that one of `rows` reads:
    the CANN record that says more than the line above it. None when there is none."""
    for ln in hit.after(n):
        for row in rows:
            m = row.pattern.search(ln.text)
            if m is not None:
                evs = row.build(row, hit.moved_to(ln), m)
                if evs is not None:
                    return evs
    return None


def _timeout(what: str, kind: str, stream_below: bool = True) -> Any:
    def build(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
        if kind == "stream_wait":
            # The stream wait is how the device reports an HCCL task that waited too long: an HCCL record
            # below it (EI0002 / EI0006 / the heartbeat summary) names the operation and the peer, and
            # below torch_npu's raise or the runtime's "[Error]:" text the CANN record says more (a stream
            # record found so reads only HCCL records: a run of them is no chain of nested reads).
            below = stream_below and not _IS_RECORD.search(hit.text)
            shallow = dataclasses.replace(row, build=_timeout(what, kind, stream_below=False))
            rows = tuple(
                shallow if r is row else r
                for r in SIGNATURES
                if r.name in _HCCL_RECORDS or (below and r is row)
            )
            deeper = _record_below(hit, rows)
            if deeper:
                return deeper
        facts = _timeout_facts(hit, kind)
        for ln in hit.after(12, same_rank=False):  # HCCL's cluster summary inside the same record
            h = _HEARTBEAT.search(ln.text)
            if h and h.group("where"):
                facts["suspect_device"] = h.group("where")
        r = facts.get("rank")
        where = f" (device {facts['device']})" if "device" in facts else ""
        op = f" in {facts['op']}" if "op" in facts else ""
        if facts.get("npu_error") in TIMEOUT_NUMBERS:
            op += f" (error code {facts['npu_error']}: {TIMEOUT_NUMBERS[facts['npu_error']]})"
        if "suspect_device" in facts:
            op += (
                f"; HCCL lost the heartbeat of device {facts['suspect_device']} "
                "(its process exited or its network dropped)"
            )
        return [
            row.event(
                hit,
                f"{hit.who(r)}{where}: {what}{op}; a peer did not reach the same HCCL operation in time "
                "(it died, hung or took another code path): its log holds the cause",
                facts,
                rank=r,
                dedupe=(row.code, "hccl_timeout", r),
            )
        ]

    return build


def _heartbeat(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts = _npu_facts(hit)
    facts["phase"] = "heartbeat_lost"
    where = m.group("where") if m.groupdict().get("where") else None
    if where:
        facts["suspect_device"] = where
    r = facts.get("rank")
    return [
        row.event(
            hit,
            "HCCL lost the heartbeat of "
            + (f"device {where}" if where else "a device of the job")
            + ": its process exited or its network dropped, and the others timed out waiting for it",
            facts,
            rank=r,
            dedupe=(row.code, "hccl_timeout", r),
        )
    ]


def _topo(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    # the same fact names as hccl_rootinfo.py, which reads the root-info server's own records first
    facts: dict[str, Any] = {"backend": "hccl", "problem": "hccl_rootinfo"}
    if m.group("want"):
        facts["expected_ranks"], facts["connected_ranks"] = int(m.group("want")), int(m.group("got"))
    for ln in [hit.line, *hit.after(6, same_rank=False)]:
        c, n = _CONNECTED.search(ln.text), _NEED.search(ln.text)
        if c:
            facts.setdefault("connected_ranks", int(c.group(1)))
        if n:
            facts.setdefault("expected_ranks", int(n.group(1)))
    seen = (
        f" ({facts['connected_ranks']} of {facts['expected_ranks']} ranks arrived)"
        if "expected_ranks" in facts
        else ""
    )
    return [
        row.event(
            hit,
            "HCCL's communicator start-up did not gather every rank's root/topology info"
            + seen
            + ": some ranks never started, crashed before init, or cannot reach the root's address",
            facts,
            dedupe=(row.code, "hccl_topology"),
        )
    ]


# HcclResult (hccl_types.h) of an HCCL call torch_npu raised, when no CANN record says more: what each
# number means for the communicator's start-up (hcclCommInitRootInfo*, HcclGetRootInfo: the exchange with
# the root is HCCL's rendezvous) and for an operation (HcclAllreduce, ...; 1, 2 and 5 there are the
# caller's arguments, RUN191). Other numbers (4 internal (bare for an operation; at start-up the analogue
# of ncclInternalError, RUN192), 6 not found, 15 runtime, ...) say nothing about the cause: the exception
# stays bare.
_INIT_RESULTS = {9: ("rendezvous_timeout", "timed out"), 11: ("root_unreachable", "could not connect (TCP)")}
_OP_RESULTS = {
    9: ("timeout", "timed out (HCCL_E_TIMEOUT)"),
    11: ("tcp_connect", "could not connect to a peer (HCCL_E_TCP_CONNECT)"),
    12: ("roce_connect", "could not connect to a peer over RoCE (HCCL_E_ROCE_CONNECT)"),
    13: ("tcp_transfer", "failed a TCP transfer (HCCL_E_TCP_TRANSFER)"),
    14: ("roce_transfer", "failed a RoCE transfer (HCCL_E_ROCE_TRANSFER)"),
    19: ("network", "failed a network call (HCCL_E_NETWORK)"),
    21: ("error_cqe", "got an error completion from the RDMA NIC (HCCL_E_REMOTE)"),
    # the caller's arguments refused by the operation (hccl_types.h: HCCL_E_PARA "parameter error",
    # HCCL_E_PTR "empty pointer", HCCL_E_NOT_SUPPORT "not support feature"): the analogue of
    # ncclInvalidArgument / ncclInvalidUsage (a dtype, reduce op, count or group HCCL does not take).
    1: ("invalid_argument", "refused its arguments (HCCL_E_PARA: a parameter error)"),
    2: ("invalid_argument", "was given an empty pointer (HCCL_E_PTR)"),
    5: (
        "not_supported",
        "was asked for a feature HCCL does not support (HCCL_E_NOT_SUPPORT: a dtype, op or mode)",
    ),
}
_OP_USAGE = (1, 2, 5)
_HCCL_CALL = lazy_re.compile(
    r"(?:HCCL|OPS) function error: (?P<fn>[A-Za-z_:]*[Hh]ccl\w*)\b.*?error code is (?P<num>\d+)"
)
_INIT_CALL = lazy_re.compile(r"[Hh]cclCommInit|HcclGetRootInfo|hcclGetRootInfo")


def _raise(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    # torch_npu's RuntimeError names a function and a number; the CANN record printed under it (or the
    # runtime's text of the number) is the failure. Without one, the HcclResult of an HCCL call says what
    # it can; otherwise it is a bare exception (pyexc's).
    below = _record_below(hit, tuple(r for r in SIGNATURES if r.name != row.name))
    if below is not None:
        return below
    call = _HCCL_CALL.search(hit.text)
    if not call:
        return None
    fn, num = call.group("fn").rsplit(":", 1)[-1], int(call.group("num"))
    facts = _npu_facts(hit)
    facts.update({"hccl_function": fn, "hccl_error": num})
    r = facts.get("rank")
    if _INIT_CALL.search(fn):
        if num == 4:  # HCCL_E_INTERNAL (hccl_types.h) at start-up: the analogue of ncclInternalError
            code = C.NCCL_INTERNAL_ERROR.code
            facts["problem"] = "hccl_internal"
            msg = f"{hit.who(r)}: HCCL's communicator start-up ({fn}) failed with HCCL_E_INTERNAL (4)"
            return [row.event(hit, msg, facts, rank=r, code=code, dedupe=(code, "hccl_init", r))]
        if num not in _INIT_RESULTS:
            return None
        facts["problem"], what = _INIT_RESULTS[num]
        code = C.RENDEZVOUS_TIMEOUT.code if num == 9 else C.STORE_UNREACHABLE.code
        msg = f"{hit.who(r)}: HCCL's communicator start-up ({fn}) {what} exchanging root info with the others"
        return [row.event(hit, msg, facts, rank=r, code=code, dedupe=(code, "hccl_init", r))]
    if num not in _OP_RESULTS:
        return None
    facts["problem"], what = _OP_RESULTS[num]
    code = (
        T
        if num == 9
        else C.NCCL_IB_ERROR.code
        if num in (12, 14, 21)
        else C.NCCL_INVALID_USAGE.code
        if num in _OP_USAGE
        else C.NCCL_REMOTE_ERROR.code
    )
    return [
        row.event(
            hit,
            f"{hit.who(r)}: {fn} {what}",
            facts,
            rank=r,
            code=code,
            dedupe=(code, "hccl_timeout" if code == T else "hccl_op", r),
        )
    ]


def _ranktable(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts = _npu_facts(hit)
    facts["problem"] = "hccl_rank_table"
    return [
        row.event(
            hit,
            "HCCL rejected the rank table (EI0004): its device, rank or server ids are wrong, repeated or "
            "do not match this machine, or the ranks started do not match it",
            facts,
            dedupe=(row.code, "hccl_rank_table"),
        )
    ]


def _transport(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts = _npu_facts(hit)
    d = _DST.search(hit.text)
    if d:
        facts["peer_rank"], facts["peer_address"] = int(d.group(1)), d.group(2)
    r = facts.get("rank")
    peer = f" to rank {facts['peer_rank']} ({facts['peer_address']})" if d else ""
    return [
        row.event(
            hit,
            f"{hit.who(r)}: HCCL could not create its transport link{peer} (EI0009): the peer's NPU or "
            "process failed, or the link between them is down",
            facts,
            rank=r,
            dedupe=(row.code, "hccl_transport", r),
        )
    ]


def _listen(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts = {"backend": "hccl", "address": m.group("ip"), "port": int(m.group("port"))}
    return [
        row.event(
            hit,
            f"HCCL could not listen on {m.group('ip')}:{m.group('port')}: the port is taken (another job or "
            "a leftover process on this host)",
            facts,
            dedupe=(row.code, "hccl_listen", m.group("port")),
        )
    ]


def _device(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts = _npu_facts(hit)
    facts["npu_fault"] = clip(m.group(0), 60)
    where = f"NPU {facts['device']}" if "device" in facts else "an NPU"
    return [
        row.event(
            hit,
            f"{where} failed: {clip(hit.text.strip(), 160)} (the device itself: absent, lost heartbeat or "
            "memory fault)",
            facts,
            dedupe=(row.code, "npu_device", facts.get("device")),
        )
    ]


def _hccp(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts = _npu_facts(hit)
    # the device's "busy or unavailable" (driver_env's name for a CUDA device held by another process)
    facts.update(reason="device_busy", error_code="EJ0001", runtime="ascend")
    where = f"NPU {facts['device']}" if "device" in facts else "the NPU"
    return [
        row.event(
            hit,
            f"HCCL could not start its HCCP process on {where} (CANN EJ0001): an earlier training process "
            "most likely still holds the device; end its processes on that NPU, wait about 10 s and start "
            "again",
            facts,
            dedupe=(row.code, "hccp", facts.get("device")),
        )
    ]


# torch_npu's own remarks on its timeout settings (ProcessGroupHCCL.cpp: TORCH_NPU_WARN at start-up, the
# dispatch watch that reports an op not yet sent to the device and then that it was): settings, not a
# failure. The rows own them so that no other reading takes their words for a timeout.
_SETTINGS = lazy_re.compile(
    r"The value of HCCL_(?:EVENT|EXEC)_TIMEOUT|"
    r"The watchdog timeout \d+ms\(which is set by init_process_group\)|"
    r"The HCCL execution timeout was set to 0|"
    r"recommended to set the timeout duration of HCCL_CONNECT_TIMEOUT|"
    r"Process group work \w+, seq_num (?P<seq>\d+) dispatch (?P<state>timeout|success)"
)


def _settings(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("state") == "timeout":
        # not yet dispatched: a remark while the op is sent later ("dispatch success" for the same seq)
        done = f"seq_num {m.group('seq')} dispatch success"
        if not any(done in ln.text for ln in hit.after(48, same_rank=False)):
            return None
    return []


T = C.HCCL_TIMEOUT.code
# Causes before symptoms: a line that glues several records (a paste that lost its line breaks) is read by
# the first row that matches.
SIGNATURES = (
    Signature(
        "NPU device fault",
        _DEVICE,
        _device,
        C.GPU_HW_EXCEPTION.code,
        tier=0,
        anchors=(
            b"EL0001",
            b"lost heartbeat",
            b"loses the heartbeat",
            b"HBM MULTI BIT ECC ERROR",
            b"UCE ERROR",
        ),
        worth=(
            rb"EL0001",
            rb"lost heartbeat",
            rb"loses the heartbeat",
            rb"HBM MULTI BIT ECC ERROR",
            rb"UCE ERROR",
        ),
        words=("el0001", "heartbeat", "ecc error", "uce error"),
    ),
    Signature(
        "HCCP process start failed",
        _HCCP,
        _hccp,
        C.NO_CUDA_DEVICE.code,
        tier=0,
        anchors=(b"EJ0001", b"HCCP process"),
        worth=(rb"EJ0001", rb"HCCP process"),
        words=("ej0001", "hccp process"),
    ),
    Signature(
        "HCCL listen port taken",
        _LISTEN,
        _listen,
        C.ADDRESS_IN_USE.code,
        tier=0,
        anchors=(b"[HcclSocket][Listen]",),
        words=("hcclsocket",),
    ),
    Signature(
        "HCCL transport init error",
        _TRANSPORT,
        _transport,
        C.NCCL_REMOTE_ERROR.code,
        tier=1,
        anchors=(b"EI0009", b"Transport init error", b"Create Dest error"),
        worth=(rb"EI0009", rb"Transport init error", rb"Create Dest error"),
        words=("ei0009", "transport init error", "create dest error"),
    ),
    Signature(
        "HCCL rank table invalid",
        _RANKTABLE,
        _ranktable,
        C.RENDEZVOUS_CONFIG.code,
        tier=0,
        anchors=(b"EI0004", b"anktable is invalid", b"ank table is invalid", b"Init plugin so failed"),
        worth=(rb"EI0004", rb"anktable is invalid", rb"ank table is invalid", rb"Init plugin so failed"),
        words=("ei0004", "ranktable is invalid", "rank table is invalid", "init plugin so failed"),
    ),
    Signature(
        "HCCL topology exchange at start-up",
        _TOPO,
        _topo,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=1,
        anchors=(
            b"topo exchange server",
            b"TopoDetect ERROR",
            b"is different with rank list size",
            b"cclCommInitRootInfo",
        ),
        worth=(
            rb"topo exchange server",
            rb"TopoDetect ERROR",
            rb"different with rank list size",
            rb"cclCommInitRootInfo",
        ),
        words=("topo", "rank list size", "commInitRootInfo".lower()),
    ),
    Signature(
        "HCCL notify wait timeout",
        _NOTIFY,
        _timeout("an HCCL task's notify wait timed out (HCCL_EXEC_TIMEOUT)", "notify_wait"),
        T,
        tier=1,
        anchors=(
            b"EI0002",
            b"Notify register times out",
            b"fftsplus task timeout",
            b"Notify wait execute failed",
            b"too slow to complete a communication operation",
        ),
        worth=(
            rb"EI0002",
            rb"Notify register times out",
            rb"fftsplus task timeout",
            rb"Notify wait execute failed",
            rb"too slow to complete a communication operation",
        ),
        words=("ei0002", "notify register", "fftsplus", "notify wait execute", "too slow to complete a comm"),
    ),
    Signature(
        "HCCL link set-up timeout",
        _SOCKET,
        _timeout(
            "HCCL timed out setting up the links of an operation (EI0006, HCCL_CONNECT_TIMEOUT)", "link_setup"
        ),
        T,
        tier=1,
        anchors=(
            b"EI0006",
            b"Getting socket times out",
            b"wait socket establish timeout",
            b"Get_Socket",
            b"connected p2p timeout",
        ),
        worth=(
            rb"EI0006",
            rb"Getting socket times out",
            rb"socket establish timeout",
            rb"Get_Socket",
            rb"connected p2p timeout",
        ),
        words=("ei0006", "socket", "p2p timeout"),
    ),
    Signature(
        "NPU stream or event wait timeout",
        _STREAM,
        _timeout("a device stream or event wait of the NPU timed out", "stream_wait"),
        T,
        tier=1,
        anchors=(
            b"event wait timeout",
            b"tream synchronize timeout",
            b"stream sync timeout",
            b"EE1002",
            b"internal task times out",
            b"specified timeout waiting event",
            b"event synchronization waiting time",
            b"error code is 10",
            b"error code is 50",
            b"runtime result = ",
            b"task timeout",
        ),
        worth=(
            rb"event wait timeout",
            rb"tream synchronize timeout",
            rb"stream sync timeout",
            rb"EE1002",
            rb"internal task times out",
            rb"specified timeout waiting event",
            rb"event synchronization waiting time",
            rb"error code is (?:10701|10702|5070)",
            rb"runtime result = (?:10701|10702|5070)",
            rb"task timeout",
        ),
        words=("timeout", "times out", "waiting", "ee1002", "error code is", "runtime result"),
    ),
    Signature(
        "HCCL heartbeat lost",
        _HEARTBEAT,
        _heartbeat,
        T,
        tier=1,
        anchors=(b"Heartbeat Lost Occurred",),
        worth=(rb"Heartbeat Lost Occurred",),
        words=("heartbeat lost",),
    ),
    Signature(
        "torch_npu timeout settings",
        _SETTINGS,
        _settings,
        T,
        tier=1,
        anchors=(
            b"The value of HCCL_",
            b"The watchdog timeout ",
            b"The HCCL execution timeout",
            b"duration of HCCL_CONNECT_TIMEOUT",
            b"Process group work ",
        ),
        worth=(
            rb"The value of HCCL_",
            rb"The watchdog timeout ",
            rb"The HCCL execution timeout",
            rb"duration of HCCL_CONNECT_TIMEOUT",
            rb"Process group work ",
        ),
        words=("hccl_", "hccl execution timeout", "process group work"),
    ),
    Signature(
        "torch_npu error raised",
        _RAISE,
        _raise,
        T,
        tier=1,
        anchors=(b"function error: ", b"HCCL error in:", b"stream synchronize failed", b"Call runtime aclrt"),
        worth=(
            rb"function error: ",
            rb"HCCL error in:",
            rb"stream synchronize failed",
            rb"Call runtime aclrt",
        ),
        words=("function error", "hccl error in", "stream synchronize failed", "call runtime aclrt"),
    ),
)
parse = gated_reader(SIGNATURES)
