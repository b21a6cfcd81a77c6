"""NVSHMEM's network transports between GPUs of different nodes (DeepEP's internode and low-latency kernels,
cuFFTMp, NVSHMEM-based MoE): an RDMA endpoint that could not be created or connected (RUN393, nccl_network).

Formats (NVIDIA/nvshmem src/include/non_abi/nvshmemx_error.h, 2.x-3.x): NVSHMEMI_NZ_ERROR_JMP / _ERROR_JMP
print "<__FILE__>:<__LINE__>: non-zero status: <status> <message>" (NE_ERROR_JMP the same, EQ_ERROR_JMP "error
status: ", NULL_ERROR_JMP "NULL value "; ERROR_PRINT "<file>:<function>:<line>: ", as in transport.cpp's
"nvshmemi_transport_init:275: init failed for transport: IBGDA"), the file being the transport module's
source: src/modules/transport/ibgda/ibgda.cpp, ibrc/ibrc.cpp, ibdevx/ibdevx.cpp, ucx/ucx.cpp,
libfabric/libfabric.cpp, common/transport_ib_common.cpp / transport_mlx5_common.cpp, and the host side
src/host/transport/transport.cpp ("connect EPS failed", "transport create ep failed"). Ranks print at once,
so a status and its message arrive on separate lines ("transport.cpp:400: non-zero status: 7" then "connect
EPS failed"), or glued to another rank's line:
- ibgda.cpp: "non-zero status: 121 Error in mlx5dv_devx_obj_modify for INIT2RTR_QP with syndrome 29e0df",
  "non-zero status: 7 ibgda_rc_init2rtr failed on RC #0.", "ibgda_dci_init2rtr failed on DCI #3.";
- ibrc/ibdevx/common: "ibv_modify_qp failed", "ep_connect failed", "query_gid failed", "ibv_port_query
  failed", "get_device_list failed", "Unable to create ah.", "check_poll failed", "cq creation failed";
- ucx/libfabric: "UCX send request completed with error.", "Failed in UCX Transport during RMA operation.",
  libfabric's "fi_*" calls;
- init.cu: "nvshmem transport init failed", "nvshmem setup connections failed"; a title's "non-zero status: 22
  ibv_modify_qp failed" without the file; the WARN "init failed for remote transport: ibrc" (tier 1: NVSHMEM
  may go on with another transport).
The same macros report what is not the network: memory registration with the NIC ("mem registration failed",
"Error registering memory region", GDRCopy, nv_peer_mem / nvidia_peermem: the RDMA stack's, RUN385's class),
allocations, version checks and the user's settings (NVSHMEM_QP_DEPTH): those lines are left to other rows.
DeepEP's own assertion on NVSHMEM's init ("Failed: Assertion error .../buffer.hpp:264 'nvshmem_rank ==
nvshmem::init(...)'") follows whichever failed: tier 1, behind the transport's or the bootstrap's lines.

DeepEP's communication kernels (csrc/kernels/intranode.cu, internode.cu, internode_ll.cu and forks' ports)
spin on a peer's head/tail or credit and give up after NUM_TIMEOUT_CYCLES with a printf and trap(): "DeepEP
dispatch NVL receiver timeout, channel: 6, RDMA: 0, nvl: 0, src NVL: 5, head: 315, tail: 315", "... (prefix),
...", "DeepEP dispatch forwarder timeout (RDMA check), channel: ...", "DeepEP combine NVL sender timeout,
...", "DeepEP combine (scale-up wait) timeout, ...", "DeepEP combine_pcie sender timeout, ...", "DeepEP
timeout for dispatch senders, rank 3, responsible_channel = 2" ("DeepEP timeout for %s, ..."), the barrier's
"DeepEP timeout check failed: rank = 3, thread = 1, value = 1)" / "DeepEP timeout check failed: 7 (rank = 3)".
A peer never sent (it hangs elsewhere, or NVSHMEM's RDMA path drops its writes): RUN560, tier 0. The trap
reaches the host as "CUDA error ... 'unspecified launch failure'" (EPException), which is its consequence.
DeepEP's host side (csrc/deep_ep.cpp, later csrc/legacy/buffer.hpp, every release) spins on the token counts
the notify kernel writes into mapped host memory and throws after NUM_CPU_TIMEOUT_SECS: "DeepEP error:
timeout (dispatch CPU)" (internode, after printing "Global rank: N, num_recv_tokens: -1, ...") and "DeepEP
error: CPU recv timeout" (intranode), the only two "DeepEP error:" texts; a paste may cut it ("DeepEP error:
timeout (di"). The notify exchange over NVSHMEM / NVLink never completed: NVSHMEM's IBGDA or GPUDirect RDMA
set-up (driver PeerMappingOverride, nvidia_peermem, the NVSHMEM version) in the released threads (RUN721,
tier 1: a kernel's own timeout or a transport's error above it says more).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_MODULES = (
    r"ibgda|ibrc|ibdevx|ucx|libfabric|transport|transport_ib_common|transport_mlx5_common|transport_common"
)
_STATUS = lazy_re.compile(
    r"(?<![\w/.])(?P<path>\S*?(?P<mod>" + _MODULES + r")\.cpp):(?:(?P<fn>\w+):)?(?P<line>\d+): "
    r"(?:(?:non-zero|error) status: (?P<st>-?\d+):?|NULL value|(?P<init>init failed for))\s?(?P<msg>[^\n]*)$"
)
# the message when it arrives on a line of its own (ranks print at once), and the transport's own WARN
_MESSAGE = lazy_re.compile(
    r"connect EPS failed|ibgda_(?:rc|dci)_init2rtr failed|Unable to create ah\b|"
    r"Error in mlx5dv_devx_obj_modify for \w+ with syndrome|nvshmem transport init failed|"
    r"nvshmem setup connections failed|init failed for (?P<remote>remote )?transport: (?P<t>\w+)|"
    # a title keeps the status and the verbs call without the file: "non-zero status: 22 ibv_modify_qp failed"
    r"non-zero status: \d+ ibv_\w+ failed"
)
_NETWORK = lazy_re.compile(
    r"ibv_|mlx5|\bep_?connect|connect EPS|init2rtr|INIT2RTR|RTR2RTS|rtr2rts|_QP\b|\bqp\b|query_gid|"
    r"port_query|get_device_list|create ah|check_poll|poll_cq|cq creation|UCX|\bfi_\w+|[Ee]ndpoint|"
    r"transport init failed|Failed to initialize all selected devices|\bep_\w+ failed|create ep|syndrome|"
    r"init failed for|Unable to create ah|setup connections"
)
_NOT_NETWORK = lazy_re.compile(
    r"[Rr]egist|reg_mr|gdr|GDR|nv_peer_mem|nvidia_peermem|dmabuf|malloc|[Aa]llocat|[Vv]ersion|DEPTH|"
    r"not implemented|[Cc]uda|CUDA|cuMem|map memory|nvshmem_malloc"
)
# "DeepEP <kernel and role> timeout" or "DeepEP timeout for <role>" / "DeepEP timeout check failed"
# the kernel's own words before "timeout" name a dispatch / combine / barrier role, and the record goes on
# with its numbers after a comma ("timeout, channel: 6", "timeout (RDMA check), channel: 2")
_DEEPEP_TIMEOUT = lazy_re.compile(
    r"\bDeepEP (?:timeout (?:(?P<what>for [\w -]{1,40}?), rank\b|check failed\b)|"
    r"(?P<kernel>(?:dispatch|combine|notify|barrier|cached|low[ -]latency|ll)(?:_\w+)?\b[\w ()-]{0,50}?) "
    r"timeout(?: \([\w -]{1,30}\))?,)"
)
_DEEPEP_KV = lazy_re.compile(r"\b(?P<k>channel|rank|responsible_channel)(?:: | = )(?P<v>\d{1,6})\b")
_DEEPEP_INIT = lazy_re.compile(r"Assertion error \S+:\d+ '[^']*(?:nvshmem|internode)::init\(")


def _event(
    row: Signature, hit: Hit, msg: str, facts: dict[str, Any], tier: Optional[int] = None
) -> list[Event]:
    facts.setdefault("library", "nvshmem")
    return [
        row.event(
            hit,
            f"{hit.who()}: NVSHMEM's network transport failed ({clip(msg, 140)}): the RDMA endpoints "
            "between the GPUs' NICs could not be set up (RoCE GID / IB port state, the NICs NVSHMEM chose, "
            "IBGDA support)",
            facts,
            tier=tier,
            dedupe=(row.code,),
        )
    ]


def _status(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    msg = f"{m.group('init') or ''} {m.group('msg')}".strip()
    if not msg:
        # the message on a later line: the next one, or a few on when other ranks' records came between
        nxt = next((ln for ln in hit.after(8, same_rank=False) if _MESSAGE.search(ln.text)), None)
        if nxt is not None:
            msg = nxt.text.strip()
    if not msg or _NOT_NETWORK.search(msg) or not _NETWORK.search(msg):
        return None
    facts: dict[str, Any] = {
        "transport": m.group("mod"),
        "where": f"{m.group('path').rsplit('/', 1)[-1]}:{m.group('line')}",
        "error": clip(msg, 200),
    }
    if m.group("st"):
        facts["status"] = int(m.group("st"))
    return _event(row, hit, msg, facts)


def _message(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"error": clip(hit.text.strip(), 200)}
    if m.group("t"):
        facts["transport"] = m.group("t").lower()
    # "WARN: init failed for remote transport: ibrc" alone: NVSHMEM may go on with another transport
    return _event(row, hit, m.group(0), facts, tier=1 if m.group("remote") else None)


def _deepep_init(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return _event(row, hit, "DeepEP's NVSHMEM init did not return its rank", {"framework": "deepep"}, tier=1)


def _deepep_timeout(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    what = (m.group("kernel") or m.group("what") or "barrier (timeout check)").strip()
    facts: dict[str, Any] = {"framework": "deepep", "kernel": clip(what, 80)}
    for kv in _DEEPEP_KV.finditer(hit.text, m.end()):
        facts.setdefault(kv.group("k"), int(kv.group("v")))
    return [
        row.event(
            hit,
            f"{hit.who()}: a DeepEP kernel timed out waiting for a peer ({clip(m.group(0), 100)}) and "
            "trapped: a rank never reached the same dispatch/combine, or NVSHMEM's RDMA writes between the "
            "nodes never arrived; the 'unspecified launch failure' after it is the trap, not a GPU fault",
            facts,
            dedupe=(row.code,),
        )
    ]


# the host's wait for the notify kernel's counts (the only "DeepEP error:" texts), whole or cut after
# "timeout"
_DEEPEP_HOST = lazy_re.compile(
    r"\bDeepEP error: (?:timeout(?: \((?P<what>[a-z]{1,20})(?: CPU\))?)?|CPU recv timeout)"
)


def _deepep_host(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    what = (m.group("what") or "").strip()
    side = "internode dispatch" if what.startswith("di") else ("intranode" if "recv" in m.group(0) else "")
    facts: dict[str, Any] = {"framework": "deepep", "reason": "deepep_host_wait_timeout"}
    if side:
        facts["kernel"] = side
    return [
        row.event(
            hit,
            f"{hit.who()}: DeepEP's host gave up waiting for the token counts its notify kernel writes "
            f"({clip(m.group(0), 60)}): the kernel's NVSHMEM / NVLink exchange with the peers never "
            "completed; check NVSHMEM's IBGDA set-up (driver option PeerMappingOverride=1, nvidia_peermem "
            "loaded, NVSHMEM_IB_ENABLE_IBGDA), the NVSHMEM version DeepEP was built with, and run its "
            "test_internode / test_intranode alone",
            facts,
            tier=1,
            dedupe=(row.code,),
        )
    ]


SIGNATURES = (
    Signature(
        "deepep kernel timeout",
        _DEEPEP_TIMEOUT,
        _deepep_timeout,
        C.DEEPEP_KERNEL_TIMEOUT.code,
        tier=0,
        anchors=(b"DeepEP ",),
        worth=(rb"DeepEP .{0,60}timeout",),
        words=("deepep",),
        examples=(
            "DeepEP dispatch NVL receiver timeout, channel: 6, RDMA: 0, nvl: 0, src NVL: 5, head: 315",
            "DeepEP timeout for dispatch senders, rank 3, responsible_channel = 2",
            "DeepEP timeout check failed: rank = 3, thread = 1, value = 1)",
            "DeepEP combine (scale-up wait) timeout, scale-out: 0/2, scale-up: 1/8, channel: 3, lane: 1",
            "DeepEP dispatch forwarder timeout (RDMA check), channel: 2, RDMA: 1, nvl: 3, dst NVL: 4",
        ),
    ),
    Signature(
        "deepep host wait timeout",
        _DEEPEP_HOST,
        _deepep_host,
        C.DEEPEP_HOST_WAIT_TIMEOUT.code,
        tier=1,
        anchors=(b"DeepEP error: ",),
        words=("deepep error",),
    ),
    Signature(
        "nvshmem transport status",
        _STATUS,
        _status,
        C.NVSHMEM_TRANSPORT_FAILED.code,
        anchors=(b"non-zero status: ", b"error status: ", b"NULL value", b"init failed for"),
        words=("non-zero status", "error status", "null value", "init failed for"),
    ),
    Signature(
        "nvshmem transport message",
        _MESSAGE,
        _message,
        C.NVSHMEM_TRANSPORT_FAILED.code,
        anchors=(
            b"connect EPS failed",
            b"init2rtr failed",
            b"with syndrome",
            b"transport init failed",
            b"Unable to create ah",
            b"setup connections failed",
            b"init failed for",
            b"non-zero status: ",
        ),
        words=(
            "connect eps failed",
            "init2rtr failed",
            "with syndrome",
            "transport init failed",
            "unable to create ah",
            "setup connections failed",
            "init failed for",
            "non-zero status",
        ),
    ),
    Signature(
        "deepep nvshmem init assertion",
        _DEEPEP_INIT,
        _deepep_init,
        C.NVSHMEM_TRANSPORT_FAILED.code,
        anchors=(b"Assertion error",),
        words=("nvshmem::init(", "internode::init("),
    ),
)
parse = gated_reader(SIGNATURES)
