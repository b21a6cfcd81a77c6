"""Transport failures between ranks reported below or beside the collective library: the kernel's RDMA
driver, UCX's socket transports (under NIXL, Open MPI, Horovod), TensorPipe's ibverbs transport, and Open
MPI's TCP BTL refusing a peer's connection.

Formats, read at their source:
- The kernel's mlx5 InfiniBand driver (drivers/infiniband/hw/mlx5/cq.c, dmesg / journalctl -k) on a
  completion with error: "mlx5_bond_0/1: QP 51291 error: local length error (0x8e 0x0 0x0)" (newer
  kernels) and "mlx5_0:dump_cqe:272:(pid 0): WC error: 12, Message: transport retry counter exceeded"
  (older); the message is ib_wc_status_msg() (drivers/infiniband/core/verbs.c: "local length error",
  "local QP operation error", "local protection error", "WR flushed", "bad response error", "local access
  error", "remote invalid request error", "remote access error", "remote operation error", "transport retry
  counter exceeded", "RNR retry counter exceeded", "response timeout error", "fatal error", "general
  error", ...). A queue pair to a peer failed on the fabric: RUN173 ("WR flushed" is the echo of another
  error on the same QP: tier 1).
- UCX's TCP transport and socket helpers (uct/tcp/tcp_ep.c, tcp_cm.c, ucs/sys/sock.c, UCX 1.9-1.18):
  "[1749803291.555759] [host:7053 :0] tcp_ep.c:1260 UCX  ERROR tcp_ep 0x3c502370 (state=CONNECTED):
  send(110) failed: Input/output error", "sock.c:325 UCX  ERROR connect(fd=48, dest_addr=10.0.0.2:38811)
  failed: Connection refused", "recv(fd=37) failed: Connection reset by peer"; and the status a UCX user
  reports for a peer's endpoint (NIXL's src/utils/ucx/ucx_utils.cpp: "Unexpected UCX error: Endpoint
  timeout"; "Connection reset by remote peer", "Input/output error"): the TCP link to a peer broke or never
  formed (the peer died, a firewall, UCX_NET_DEVICES / UCX_TLS chose an interface the peer cannot reach):
  RUN174. UCP's endpoint error with no user callback (ucp_ep.c: "ep 0x7f3c: error 'Endpoint timeout' on
  rc_mlx5/mlx5_0:1 will not be handled since no error callback is installed"): RUN173 on a verbs lane, else
  RUN174.
- TensorPipe's ibverbs transport (tensorpipe/common/ibv.h, tensorpipe/transport/ibv/*, the TP_THROW_SYSTEM
  texts "In operator() at tensorpipe/common/ibv.h:172 \"\": Invalid argument"), under torch.distributed.rpc
  (TensorPipe agent): a verbs call on the InfiniBand device failed at agent start or on a transfer: RUN173.
  Its uv (TCP) transport's failures, the same macro ("In initFromLoop at .../tensorpipe/transport/uv/
  listener.cc:126 \"rv < 0: invalid argument\"") or an operation's error ("ECONNREFUSED: connection refused
  (this error originated at tensorpipe/transport/uv/connection_impl.cc:132)"): RUN174, a closed peer tier 1.
- Open MPI's TCP BTL (opal/mca/btl/tcp, help-mpi-btl-tcp.txt "dropped inbound connection", 2.x-5.x): "Open
  MPI detected an inbound MPI TCP connection request from a peer that appears to be part of this MPI job
  (i.e., it identified itself as part of this Open MPI job), but it is from an IP address that is
  unexpected." with "Local host:", "Peer hostname: node2 ([[30832,1],1])", "Source IP of socket:", "Known
  IPs of peer:"; and "server accept cannot find guid": "WARNING: Open MPI accepted a TCP connection from what
  appears to be a another Open MPI process but cannot find a corresponding process entry for that peer.". The
  hosts reach each other through interfaces other than the ones they announced (a pod / overlay network, NAT,
  docker0): pin them with --mca btl_tcp_if_include (RUN174).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_WC_STATUS = (
    r"local length error|local QP operation error|local EE context operation error|local protection error|"
    r"WR flushed|memory management operation error|bad response error|local access error|"
    r"remote invalid request error|remote access error|remote operation error|transport retry counter "
    r"exceeded|RNR retry counter exceeded|local RDD violation error|remote invalid RD request|operation "
    r"aborted|invalid EE context number|invalid EE context state|fatal error|response timeout error|"
    r"general error"
)
_KERNEL_QP = lazy_re.compile(
    r"(?:\b(?P<dev>mlx[45]_\w+)(?:/(?P<port>\d+))?:\s*)?\bQP (?P<qp>(?:0x)?[0-9a-fA-F]+) error: "
    rf"(?P<err>{_WC_STATUS}) \(0x|"
    rf"\bWC error: (?P<num>\d+), Message: (?P<err2>{_WC_STATUS})"
)
_UCX_SOCK = lazy_re.compile(
    r"\b(?P<src>tcp_\w+|sock|sockcm_\w+)\.c:\d+\s+UCX\s+ERROR\s+(?P<msg>.*?\b(?P<call>send|recv|sendv|recvv|"
    r"connect|accept|sendmsg|recvmsg)\w*\(.{0,80}?\) failed: (?P<err>[A-Z][^\n]*?))\s*$"
)
_UCX_STATUS = lazy_re.compile(
    r"\bUnexpected UCX error: (?P<err>Endpoint timeout|Connection reset by remote peer|Input/output error|"
    r"Destination is unreachable)"
)
# UCP's endpoint error without a user callback (src/ucp/core/ucp_ep.c ucp_ep_set_failed, UCX 1.10-1.19): "ep
# 0x7f3c: error 'Endpoint timeout' on rc_mlx5/mlx5_0:1 will not be handled since no error callback is
# installed" - the status (ucs_status_string: "Endpoint timeout", "Connection reset by remote peer",
# "Input/output error", "Destination is unreachable", "Operation rejected by remote peer", "Endpoint is not
# connected", "Operation timed out") and the lane it failed on ("rc_mlx5/mlx5_0:1", "tcp/eth0",
# "srd/rdmap0s1"): the link to that peer broke (the peer died or the fabric failed).
_UCX_EP = lazy_re.compile(
    r"\bep (?:0x)?[0-9a-fA-F]+: error '(?P<err>[^'\n]{3,80})' on (?P<lane>\S+) will not be handled"
)
_TP_IBV = lazy_re.compile(
    r"\bIn (?P<fn>[\w:~<>()]+) at (?P<file>tensorpipe/(?:common/ibv\.(?:h|cc)|transport/ibv/\w+\.(?:h|cc))):"
    r"(?P<line>\d+) \"[^\"]*\": (?P<err>[A-Za-z][^\n]*?)\s*$"
)
# TensorPipe's uv (TCP) transport, the default of torch.distributed.rpc's TensorPipe agent
# (tensorpipe/transport/uv/uv.h TP_THROW_UV_IF, tensorpipe/common/defs.h TP_THROW: "In <function> at
# <file>:<line> \"<condition>: <uv_strerror>\""): "In initFromLoop at
# /pytorch/third_party/tensorpipe/tensorpipe/transport/uv/listener.cc: 126 \"rv < 0: invalid argument\"" (the
# listener could not bind the address TensorPipe guessed for this host: its host name resolves to an address
# that is not usable, e.g. IPv6 link-local), "rv < 0: address already in use", "address not available". An
# operation's error (common/error.cc Error::what, uv/error.cc): "<UV_ERR>: <uv_strerror> (this error
# originated at tensorpipe/transport/uv/connection_impl.cc:132)", "eof (this error originated at ...)" (the
# peer closed: it died or shut down first, tier 1), "no address found (...)" (no address for
# TP_SOCKET_IFNAME's interface or the host name).
_TP_UV = lazy_re.compile(
    r"\bIn (?P<fn>[\w:~<>()]+) at (?P<file>(?:\S*/)?tensorpipe/transport/uv/\w+\.(?:h|cc)):(?P<line>\d+) "
    r"\\?\"(?P<cond>[^\"\n:]*): (?P<err>[a-zA-Z][^\"\n]*?)\\?(?:\"|$)|"
    r"(?P<oerr>\b[A-Z][A-Z0-9_]+: [a-z][^()\n]*?|\beof|\bno address found|\bconnection closed) "
    r"\(this error originated at "
    r"(?P<ofile>(?:\S*/)?tensorpipe/transport/(?:uv|shm)/\w+\.(?:h|cc)):(?P<oline>\d+)\)"
)
# torch's TensorPipe agent (torch/csrc/distributed/rpc/tensorpipe_agent.cpp, 1.6-2.x, glog "[W
# tensorpipe_agent.cpp:939] "): "RPC agent for <self> encountered error when <op>: <Error::what()>", the
# tensorpipe error being "<text> (this error originated at <file>:<line>)" (tensorpipe/common/error.cc):
# "eof", "EOF: end of file" (uv), "async error on socket: Connection reset by peer" (SystemError, shm),
# "ECONNREFUSED: connection refused", "pipe closed", "transport retry counter exceeded" (ibv). Three of its
# operations have an exchange in flight: "sending outgoing request #N to <peer>" (the request never left),
# "reading incoming response from <peer>" (armed only while a request waits for its answer; every pending
# RPC to that peer fails with it) and "sending response to request #N to <peer>" (the caller is gone before
# its answer). A healthy shutdown prints none of them: the agent silences PipeClosedError after shutdown.
# "reading incoming request from <peer>" (every rpc.shutdown whose peer closes first; 1.8+ adds "(this is
# expected to happen during shutdown)") and "accepting incoming pipe" are left out.
_TP_AGENT = lazy_re.compile(
    r"\bRPC agent for (?P<self>\S+?) encountered error when "
    r"(?:(?P<op>sending outgoing request|sending response to request) #(?P<id>\d+) to (?P<peer>\S+?)|"
    r"(?P<rop>reading incoming response) from (?P<rpeer>\S+?)): (?P<err>[^\n]*?)"
    r"(?: \(this error originated at (?P<where>(?:\S*/)?tensorpipe/\S+?):(?P<line>\d+)\))?\s*$"
)
# The errors of a peer that went away (it ended, crashed, or closed its end): tensorpipe's EOFError "eof",
# libuv's "EOF: end of file", "ECONNRESET: connection reset by peer", "EPIPE: broken pipe", a SystemError of
# the shm transport ("async error on socket: Connection reset by peer", "writev: Broken pipe"),
# ConnectionClosedError / PipeClosedError ("connection closed", "pipe closed").
_TP_GONE = lazy_re.compile(
    r"^(?:eof|EOF\b|E(?:CONNRESET|PIPE)\b)|reset by peer|broken pipe|^(?:connection|pipe) closed", re.I
)
_OMPI_INBOUND = lazy_re.compile(
    r"Open MPI detected an inbound MPI TCP connection request from a peer|"
    r"(?P<guid>Open MPI accepted a TCP connection from what appears to be a(?:n| another)? Open MPI process)"
)
_OMPI_FIELD = lazy_re.compile(
    r"^\s*(?P<k>Local host|Peer hostname|Source IP of socket):\s*(?P<v>\S[^\n]*?)\s*$"
)


def _kernel_qp(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = m.group("err") or m.group("err2")
    facts: dict[str, Any] = {"reporter": "kernel mlx5_ib", "fabric_error": err}
    if m.group("dev"):
        facts["device"] = m.group("dev") + (f"/{m.group('port')}" if m.group("port") else "")
    if m.group("qp"):
        facts["qp"] = m.group("qp")
    on = f" on {facts['device']}" if "device" in facts else ""
    msg = (
        f"the kernel's mlx5 driver reports a queue pair failed{on} ({err}): the InfiniBand / RoCE "
        "transfer to a peer failed (the fabric, the peer's side, or a buffer the NIC could not use)"
    )
    flushed = err == "WR flushed"
    return [row.event(hit, msg, facts, tier=1 if flushed else None, dedupe=(row.code, "kernel_qp"))]


def _ucx_sock(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = m.group("err").strip()
    facts: dict[str, Any] = {"transport": "ucx_tcp", "call": m.group("call"), "error": err}
    msg = (
        f"UCX's TCP transport: {m.group('call')}() to a peer failed ({clip(err, 60)}): the link to that rank "
        "broke or never formed (the peer died, a firewall, or UCX_NET_DEVICES / UCX_TLS chose an "
        "interface the peer cannot reach)"
    )
    return [row.event(hit, msg, facts, dedupe=(row.code, "ucx_sock"))]


def _ucx_status(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = m.group("err")
    facts: dict[str, Any] = {"transport": "ucx", "error": err}
    msg = (
        f"UCX reported {err} on a peer's endpoint: the connection to that process broke (it died, or "
        "the network path between the nodes failed)"
    )
    return [row.event(hit, msg, facts, dedupe=(row.code, "ucx_status"))]


def _ucx_ep(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err, lane = m.group("err"), m.group("lane")
    facts: dict[str, Any] = {"transport": "ucx", "error": err, "lane": lane}
    tl, _, dev = lane.partition("/")
    verbs = bool(re.match(r"(?:rc|ud|dc|srd|cma|gga)", tl)) or dev.startswith(
        ("mlx", "rdmap", "bnxt", "irdma")
    )
    code = C.NCCL_IB_ERROR.code if verbs else row.code
    msg = (
        f"UCX reported {err} on its endpoint to a peer (lane {lane}) with no error handler: the connection "
        "to that process broke (it died first, or the "
        + ("InfiniBand / RDMA fabric" if verbs else "network")
        + " between the nodes failed); read the peer's log, then check the link"
    )
    return [row.event(hit, msg, facts, code=code, dedupe=(code, "ucx_ep"))]


def _tp_ibv(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = m.group("err").strip()
    facts: dict[str, Any] = {
        "library": "tensorpipe",
        "transport": "ibv",
        "where": f"{m.group('file')}:{m.group('line')}",
        "error": err,
    }
    msg = (
        f"TensorPipe's InfiniBand (ibv) transport failed in {m.group('file')}:{m.group('line')} "
        f"({clip(err, 60)}): a verbs call on the IB device failed; fix the device / driver, or restrict "
        "the RPC agent to the uv transport (TensorPipeRpcBackendOptions(_transports=['uv']))"
    )
    return [row.event(hit, msg, facts, dedupe=(row.code, "tp_ibv"))]


def _tp_uv(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = (m.group("err") or m.group("oerr")).strip()
    where = m.group("file") or m.group("ofile")
    where = where[where.index("tensorpipe/transport/") :] + ":" + (m.group("line") or m.group("oline"))
    # the shm transport (same node: a Unix socket beside shared-memory rings) raises the same errors
    kind = "shm" if "/transport/shm/" in where else "uv"
    label = "shared-memory (shm)" if kind == "shm" else "TCP (uv)"
    facts: dict[str, Any] = {"library": "tensorpipe", "transport": kind, "where": where, "error": err}
    low = err.lower()
    if "already in use" in low:
        msg = (
            f"TensorPipe's TCP (uv) transport could not bind its listening socket ({err}, {where}): another "
            "process holds the port; free it or pick another port"
        )
        return [
            row.event(hit, msg, facts, code=C.ADDRESS_IN_USE.code, dedupe=(C.ADDRESS_IN_USE.code, "tp_uv"))
        ]
    if _TP_GONE.search(err):
        if "encountered error when" in hit.text:
            # torch's TensorPipe agent warning ("RPC agent for worker1 encountered error when reading incoming
            # request from worker0: eof (this error originated at ...)"): printed by every healthy
            # rpc.shutdown whose peer closes first; a peer that died says so in its own lines
            return []
        facts["peer_may_have_died"] = True
        msg = (
            f"TensorPipe's {label} connection to a peer closed ({err}, {where}): the peer process ended or "
            "dropped the connection first (its log holds why)"
        )
        return [row.event(hit, msg, facts, tier=1, dedupe=(row.code, "tp_uv"))]
    facts["fix_env"] = "TP_SOCKET_IFNAME"
    msg = (
        f"TensorPipe's {label} transport failed in {where} ({clip(err, 60)}): the RPC agent could not bind "
        "or reach the address it chose for this host (its host name resolves to an unusable address, e.g. "
        "IPv6 link-local or loopback); set TP_SOCKET_IFNAME to the interface the nodes share (and "
        "GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME alike)"
    )
    return [row.event(hit, msg, facts, dedupe=(row.code, "tp_uv"))]


def _tp_agent(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = m.group("err").strip()
    op = m.group("op") or m.group("rop")
    peer = m.group("peer") or m.group("rpeer")
    facts: dict[str, Any] = {
        "library": "tensorpipe",
        "worker": m.group("self"),
        "peer": peer,
        "operation": op,
        "error": err,
    }
    if m.group("id"):
        facts["message_id"] = int(m.group("id"))
    code, tier = row.code, None
    where = m.group("where") or ""
    if where:
        inner = re.search(r"tensorpipe/(?:transport|core|channel|common)/\S+", where)
        where = inner.group(0) if inner else where[where.rindex("tensorpipe/") :]
        facts["where"] = f"{where}:{m.group('line')}"
        t = re.match(r"tensorpipe/transport/(\w+)/", where)
        if t:
            facts["transport"] = t.group(1)
    if facts.get("transport") == "ibv":
        # the verbs transport's own failure ("transport retry counter exceeded"): the fabric, as NCCL's NET/IB
        code = C.NCCL_IB_ERROR.code
        why = "the InfiniBand transfer to that peer failed (link, fabric or the peer's NIC)"
    elif _TP_GONE.search(err):
        tier = 1
        facts["peer_may_have_died"] = True
        why = f"{peer} ended or closed its end first (its own log holds why)"
    elif re.search(r"refused|unreachable|no route|timed out", err, re.I):
        facts["fix_env"] = "TP_SOCKET_IFNAME"
        why = (
            f"{peer} could not be reached at the address it published (not listening yet or any more, a "
            "firewall, or an interface the nodes do not share: set TP_SOCKET_IFNAME)"
        )
    else:
        why = "the connection to that peer failed"
    msg = (
        f"torch RPC (TensorPipe) worker {m.group('self')} lost its connection to {peer} with an RPC in "
        f"flight ({op}{' #' + m.group('id') if m.group('id') else ''}: {clip(err, 60)}): {why}"
    )
    return [row.event(hit, msg, facts, code=code, tier=tier, dedupe=(code, "tp_agent", peer))]


def _ompi_inbound(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"transport": "open_mpi_btl_tcp"}
    facts["problem"] = "inbound_peer_unknown" if m.group("guid") else "inbound_from_unexpected_ip"
    keys = lazy_re.ByText({"Local host": "host", "Peer hostname": "peer", "Source IP of socket": "source_ip"})
    for ln in hit.after(16, same_rank=False):
        f = _OMPI_FIELD.match(ln.text)
        if f and keys[f.group("k")] not in facts:
            facts[keys[f.group("k")]] = f.group("v")
    src = f" (from {facts['source_ip']})" if "source_ip" in facts else ""
    msg = (
        f"Open MPI's TCP transport dropped a peer rank's connection{src}: it arrived from an address "
        "the peer did not announce, so the hosts reach each other through other interfaces than the "
        "ones they listed (a pod or overlay network, NAT, docker0); pin them with --mca "
        "btl_tcp_if_include <interface or subnet>"
    )
    return [row.event(hit, msg, facts, dedupe=(row.code, "ompi_inbound"))]


SIGNATURES = (
    Signature(
        "kernel mlx5 queue pair error",
        _KERNEL_QP,
        _kernel_qp,
        C.NCCL_IB_ERROR.code,
        anchors=(b" error: ", b"WC error: "),
        worth=(rb"\bQP (?:0x)?[0-9a-fA-F]+ error: ", rb"WC error: \d+, Message"),
        words=("qp ", "wc error"),
    ),
    Signature(
        "ucx tcp transport failure",
        _UCX_SOCK,
        _ucx_sock,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b") failed: ",),
        worth=(rb"UCX\s+ERROR",),
        words=("ucx",),
    ),
    Signature(
        "ucx peer status",
        _UCX_STATUS,
        _ucx_status,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"Unexpected UCX error: ",),
        words=("unexpected ucx error",),
    ),
    Signature(
        "ucx endpoint error without a handler",
        _UCX_EP,
        _ucx_ep,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"will not be handled",),
        words=("will not be handled",),
    ),
    Signature(
        "tensorpipe rpc agent exchange broken",
        _TP_AGENT,
        _tp_agent,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"encountered error when",),
        worth=(rb"RPC agent for \S+ encountered error when (?:sending|reading incoming response)",),
        words=("encountered error when",),
    ),
    Signature(
        "tensorpipe ibv transport",
        _TP_IBV,
        _tp_ibv,
        C.NCCL_IB_ERROR.code,
        anchors=(b"tensorpipe/common/ibv", b"tensorpipe/transport/ibv/"),
        worth=(rb"tensorpipe/(?:common|transport)/ibv",),
        words=("tensorpipe/",),
    ),
    Signature(
        "tensorpipe uv transport",
        _TP_UV,
        _tp_uv,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"tensorpipe/transport/uv/", b"tensorpipe/transport/shm/"),
        worth=(rb"tensorpipe/transport/(?:uv|shm)/\w+\.(?:h|cc):\d",),
        words=("tensorpipe/",),
    ),
    Signature(
        "open mpi inbound tcp connection dropped",
        _OMPI_INBOUND,
        _ompi_inbound,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"inbound MPI TCP connection request", b"Open MPI accepted a TCP connection"),
        words=("inbound mpi tcp connection", "open mpi accepted a tcp connection"),
    ),
)

parse = gated_reader(SIGNATURES)
