"""Transfer libraries outside NCCL that move GPU data over RDMA themselves (UCCL's EP and P2P engines,
Mooncake's transfer engine and store, their benchmarks): a failed RDMA completion in the library's own words
(RUN173), and Mooncake's store giving up on a transfer (RUN585). Both nccl_network.

Formats, read at their sources:
- A library polling its own completion queue prints libibverbs' ibv_wc_status_str (rdma-core
  libibverbs/verbs.c: "transport retry counter exceeded", "RNR retry counter exceeded", "local protection
  error", "local QP operation error", "remote invalid request error", "remote access error", "remote operation
  error", "Work Request Flushed Error", "bad response error", "local access error", "local length error",
  "response timeout error", ...; its "fatal error" and "general error" are read nowhere, too common alone)
  after its own words: UCCL ep/src/rdma.cpp "CQE ERROR wr_id=3 status=12(transport retry counter exceeded)
  opcode=1 byte_len=0 vendor_err=0xa qp_num=0x2c10" (also "[thread=3] CQE ERROR ..."), its benchmarks' "WC
  error: ...", "CQE error: ...", "RDMA error: ...", "poll_cq: ..."; Mooncake's rdma_transport/worker_pool.cpp
  "Worker: Process failed for slice (opcode: 0, source_addr: 0x7f.., length: 65536, dest_addr: 0x7f..,
  local_nic: mlx5_0, peer_nic: node-2@mlx5_0, dest_rkey: 1234, retry_cnt: 0, max_retry_cnt: 3): transport
  retry counter exceeded". A queue pair to a peer failed on the fabric (the link, the peer's NIC or process,
  RoCE routing / PFC): RUN173. "Work Request Flushed Error" is the echo of an earlier error on the same queue
  pair: tier 1. The kernel's, UCX's and NCCL's own reports of the same completion are read by
  transport_faults, mpi_fabric and nccl_errors first.
- Mooncake's store client (mooncake-store, 2025-2026): the old client.cpp's "Transfer failed for task0",
  "transfer_incomplete max_attempts=3" after its "Transfer incomplete, retrying... (attempt 3/3)" (a retry
  notice alone stays silent), "Failed to complete transfers after 60 seconds" (transfer_task.cpp: "... after
  60000 milliseconds for batch 7"), client_service.cpp's "Transfer failed for key: k with error: -800", and
  the binding's "Put operation failed with error: TRANSFER_FAIL" (Get / Upsert / batch alike): the transfer
  engine could not move the data to or from the peer's segment (RUN585). Other ErrorCodes of the store
  (OBJECT_NOT_FOUND, NO_AVAILABLE_HANDLE, ...) are its own state, not the fabric's, and stay silent.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

# texts only an RDMA completion says, and texts that say it only beside a verbs word on the line
_WC_OWN = (
    r"transport retry counter exceeded|RNR retry counter exceeded|local protection error|"
    r"local QP operation error|remote invalid request error|Work Request Flushed Error|"
    r"remote invalid RD request|local EE context operation error|local RDD violation error|"
    r"invalid EE context (?:number|state)"
)
_WC_SHARED = (
    r"remote access error|remote operation error|bad response error|local access error|local length error|"
    r"response timeout error|memory management operation error"
)
_WC = lazy_re.compile(rf"(?P<own>{_WC_OWN})|(?P<shared>{_WC_SHARED})")
_VERBS_WORDS = lazy_re.compile(
    r"\bCQE\b|\bcqe\b|\bWC\b|\bwc\b|\bstatus[=:]\s*\d+\s*\(|[Cc]ompletion|poll_cq|\bibv_|\bRDMA\b|\bQP\b|"
    r"\bqp_num\b|Process failed for slice"
)
_LIB = lazy_re.compile(r"(?P<uccl>\bCQE ERROR\b)|(?P<mooncake>Process failed for slice)")
_STATUS_NUM = lazy_re.compile(r"\bstatus[=:]\s*(?P<num>\d+)\s*\(")

_MOONCAKE = lazy_re.compile(
    r"(?P<task>Transfer failed for task\d+)\b|"
    r"(?P<attempts>transfer_incomplete max_attempts=(?P<n>\d+))|"
    r"(?P<after>Failed to complete transfers after \d+ (?:seconds|milliseconds))|"
    r"(?P<key>Transfer failed for key: (?P<k>\S+) with error: (?P<code>-?\d+))|"
    r"(?P<op>\b[A-Z][\w ]{0,40}? (?:operation|object) failed with error: TRANSFER_FAIL)\b"
)


def _completion(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = hit.text
    if m.group("shared") and not _VERBS_WORDS.search(t):
        return None
    err = m.group(0)
    facts: dict[str, Any] = {"fabric_error": err}
    lib = _LIB.search(t)
    reporter = "an RDMA library"
    if lib and lib.group("uccl"):
        reporter = "UCCL"
    elif lib and lib.group("mooncake"):
        reporter = "Mooncake's transfer engine"
    facts["reporter"] = reporter
    num = _STATUS_NUM.search(t)
    if num:
        facts["wc_status"] = int(num.group("num"))
    flushed = err == "Work Request Flushed Error"
    msg = (
        f"{hit.who()}: {reporter} got an RDMA completion with error ({err}): a queue pair to a peer failed "
        "on "
        "the fabric (the link or switch, RoCE routing / PFC, or the peer's NIC or process)"
    )
    return [row.event(hit, msg, facts, tier=1 if flushed else None, dedupe=(row.code, "lib_wc", err))]


def _mooncake(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"engine": "mooncake", "record": clip(m.group(0), 100)}
    if m.group("n"):
        facts["attempts"] = int(m.group("n"))
    if m.group("code"):
        facts["error_code"] = int(m.group("code"))
    if m.group("k"):
        facts["key"] = clip(m.group("k"), 60)
    msg = (
        f"{hit.who()}: Mooncake's store could not move data between nodes ({clip(m.group(0), 80)}): its "
        "transfer "
        "engine's RDMA / TCP path to the peer's segment failed (the NICs it chose, a link, or the peer)"
    )
    return [row.event(hit, msg, facts, dedupe=(row.code, "mooncake"))]


SIGNATURES = (
    Signature(
        "rdma completion error in a library's words",
        _WC,
        _completion,
        C.NCCL_IB_ERROR.code,
        anchors=(
            b"retry counter exceeded",
            b"local protection error",
            b"local QP operation error",
            b"remote invalid request error",
            b"Work Request Flushed Error",
            b"remote invalid RD request",
            b"local EE context operation error",
            b"local RDD violation error",
            b"invalid EE context ",
            b"remote access error",
            b"remote operation error",
            b"bad response error",
            b"local access error",
            b"local length error",
            b"response timeout error",
            b"memory management operation error",
        ),
        words=(
            "retry counter exceeded",
            "protection error",
            "operation error",
            "request error",
            "flushed error",
            "rd request",
            "violation error",
            "ee context",
            "access error",
            "response error",
            "length error",
            "timeout error",
            "management operation error",
        ),
        examples=(
            "CQE ERROR wr_id=3 status=12(transport retry counter exceeded) opcode=1 byte_len=0 "
            "vendor_err=0xa "
            "qp_num=0x2c10",
            "E0523 06:50:40.084792   223 worker_pool.cpp:245] Worker: Process failed for slice (opcode: 0, "
            "source_addr: 0x7f3a, length: 65536, dest_addr: 0x7f4b, local_nic: mlx5_0, peer_nic: "
            "node-2@mlx5_0, "
            "dest_rkey: 1234, retry_cnt: 0, max_retry_cnt: 3): transport retry counter exceeded",
            "WC error: remote access error",
        ),
    ),
    Signature(
        "mooncake store transfer failed",
        _MOONCAKE,
        _mooncake,
        C.TRANSFER_ENGINE_FAILED.code,
        anchors=(
            b"Transfer failed for task",
            b"transfer_incomplete max_attempts=",
            b"Failed to complete transfers after ",
            b"Transfer failed for key: ",
            b"failed with error: TRANSFER_FAIL",
        ),
        words=("transfer failed for", "transfer_incomplete", "failed to complete transfers", "transfer_fail"),
        examples=(
            "E0523 06:50:40.074718   223 client.cpp:444] Transfer failed for task0",
            "E0523 06:50:40.084792   223 client.cpp:460] transfer_incomplete max_attempts=3",
            "E0523 06:50:40.085733   223 store_py.cpp:367] Put operation failed with error: TRANSFER_FAIL",
            "E0611 01:02:03.000000  77 transfer_task.cpp:882] Failed to complete transfers after 60000 "
            "milliseconds for batch 7",
        ),
    ),
)
parse = gated_reader(SIGNATURES)
