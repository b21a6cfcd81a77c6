"""MPI and UCX transports of a running job (Open MPI, UCX under Horovod, MPI-based TF/MXNet jobs): the
fabric or the node under a rank failed.

Formats:
- Open MPI's runtime (orte/mca/errmgr, help-errmgr-base.txt; PRRTE in Open MPI 5): "ORTE has lost
  communication with a remote daemon." then "HNP daemon   : [[64112,0],0] on node n1" / "Remote daemon:
  [[64112,0],1] on node 10.126.10.10" and "This is usually due to either a failure of the TCP network
  connection to the node, or possibly an internal failure of the daemon itself." The launch had worked:
  the node or its network went away during the job (RUN174).
- UCX's InfiniBand completion errors (uct/ib/mlx5/ib_mlx5_log.c, UCX 1.x, one text per CQE syndrome:
  "Local length", "Local QP operation", "Local protection", "Local access", "Invalid request", "Remote
  access", "Remote QP", "Transport retry count exceeded", "Receive-no-ready retry count exceeded", "Remote
  side aborted", "Bad response", "Memory window bind", "Generic"): "Local protection on
  mlx5_0:1/IB (synd 0x4 vend 0x56 hw_synd 0/0)", "Remote access on mlx5_2:1/RoCE ...", "Transport retry
  count exceeded on ..." behind "[1701234567.123456] [node2:12345:0] ib_mlx5_log.c:177 UCX ERROR" or
  "[node1:12345:0:12345]"; the verbs transports (uct/ib/rc/verbs) print "send completion with error: local
  protection error"; Open MPI's openib BTL "error polling LP CQ with status RETRY EXCEEDED ERROR status
  number 12 for wr_id ...", and rdma-core's own "mlx5: host: got completion with error:" hex dump (tier
  1: the library's line names the error). An InfiniBand/RoCE failure (RUN173); a local protection error is
  the memory registration under it (GPUDirect RDMA, peer memory module) refusing the buffer.
- A message longer than the buffer posted for it (Open MPI's error handler "*** An error occurred in
  MPI_Allreduce" ... "*** MPI_ERR_TRUNCATE: message truncated"; MPICH / Intel MPI "Fatal error in
  PMPI_Allreduce: Message truncated, error stack: ... Message from rank 1 and tag 14 truncated; 8 bytes
  received but buffer size is 4"; MPICH 3.2 "Exception: Message truncated, error stack: ... Message
  truncated; 1536 bytes received but buffer size is 1024"; MPICH 4.x / Intel MPI 2021+ name the internal
  entry point: "Abort(536998158) on node 0 (rank 0 in comm 0): Fatal error in internal_Recv: Message
  truncated, error stack: internal_Recv(15956): MPI_Recv(buf=0x..., count=25706, ...) failed"): the ranks
  called the collective with different sizes (Horovod's MPI controller, mpi4py, a torch `mpi` backend), a
  desync (RUN201) as NCCL's and gloo's truncated messages.
- Open MPI's TCP BTL between ranks (opal/mca/btl/tcp, 1.x-5.x): the old BTL_ERROR line
  "[node1][[5135,1],0][btl_tcp_endpoint.c:626:mca_btl_tcp_endpoint_recv_connect_ack] received unexpected
  process identifier [[5135,1],3]" (5.x: "... identifier: got [[56247,2],0] expected [[56247,1],0]"; the
  daemons' OOB: "tcp_peer_recv_connect_ack: received unexpected process identifier [[7,0],1] from ..."): a
  rank answered on an address that belongs to another, because the hosts share an interface's address
  (docker0/virbr0's 172.17.0.1 or 192.168.122.1) and the BTL used it; and the help texts of
  help-mpi-btl-tcp.txt (4.x-5.x) "WARNING: Open MPI failed to TCP connect to a peer MPI process." and
  "WARNING: Open MPI failed to handshake with a connecting peer MPI process over TCP." The network between the
  ranks, or the interfaces the BTL chose (btl_tcp_if_include): RUN174.
- UCX finding no transport to a peer (ucp/wireup/select.c, ucp_ep.c, UCX 1.x): "UCX  ERROR   no active
  messages transport to <no debug data>: self/memory - Destination is unreachable, ..." (also "no
  remote-memory-access transport to ..."), and "ucp_ep_create() failed: Destination is unreachable": UCX_TLS
  or UCX_NET_DEVICES leave no transport that spans the nodes, or one node lacks the device (RUN174).
- CUDA IPC between ranks of one node (Open MPI's smcuda BTL and common_cuda, 1.7-5.x; UCX's cuda_ipc):
  "[host:pid] Failed to register remote memory, rc=-1" (btl_smcuda.c, the peer's IPC handle could not be
  registered), help-mpi-common-cuda.txt's "The call to cuIpcOpenMemHandle failed. This is an unrecoverable
  error and will cause the program to abort." with "cuIpcOpenMemHandle return value:   205", UCX's
  "cuIpcOpenMemHandle() failed: invalid argument": a rank cannot map a peer's GPU memory, because the GPU is
  not visible to it (Slurm's --gpus-per-task binds one GPU per task, one GPU per container, no shared IPC
  namespace) or the platform has no peer IPC (a VM, MIG). The same refusal as NCCL's P2P transport
  (RUN291, driver_env). ("The call to cuIpcGetMemHandle failed. This means the GPU RDMA protocol cannot be
  used." is a warning: Open MPI falls back to copies and the job goes on.)
- MPICH's ch4:ofi netmod (MPICH 3.3+, Intel MPI 2019+, Cray MPICH) at MPI_Init, the last record of its error
  stack: "find_provider(2819)..........: OFI fi_getinfo() failed (ofi_init.c:2819:find_provider:No data
  available)" (Intel MPI 2019-2021: "MPIDI_OFI_mpi_init_hook(1627): OFI addrinfo() failed
  (ofi_init.c:1627:MPIDI_OFI_mpi_init_hook:No data available)")
  (older: "open_fabric(1559): OFI fi_getinfo() failed (ofi_init.c:1559:open_fabric:No data
  available)"): libfabric matched no provider (I_MPI_OFI_PROVIDER / FI_PROVIDER names one that is not there,
  FI_PROVIDER_PATH points nowhere, the EFA / verbs device is missing), the class of NCCL's and oneCCL's
  missing provider (RUN294).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_CUDA_IPC = lazy_re.compile(
    r"Failed to register remote memory, rc=(?P<rc>-?\d+)"
    r"|cuIpcOpenMemHandle(?:\(\))? (?:failed|return value:\s*(?P<ret>\d+))"
)
_IPC_RET = lazy_re.compile(r"cuIpc\w+ return value:\s*(\d+)")


def _cuda_ipc(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"transport": "cuda_ipc", "call": "cuIpcOpenMemHandle"}
    if m.group("rc"):
        facts |= {"library": "open_mpi", "rc": int(m.group("rc"))}
    for ln in [hit.line, *hit.after(8, same_rank=False)]:
        r = _IPC_RET.search(ln.text)
        if r:
            facts["cuda_result"] = int(r.group(1))
            break
    return [
        row.event(
            hit,
            f"{hit.who()}: CUDA IPC to a peer rank on this node failed ({facts['call']}"
            + (f", CUresult {facts['cuda_result']}" if "cuda_result" in facts else "")
            + "): this rank cannot map the peer's GPU memory - the GPU is not visible to it (one GPU per "
            "task or per container: request the node's GPUs for every task and pick one per rank) or the "
            "platform has no peer IPC (VM, MIG); disabling the CUDA IPC path (smcuda / cuda_ipc) avoids it",
            facts,
            dedupe=(row.code, "cuda_ipc"),
        )
    ]


_MPICH_OFI = lazy_re.compile(r"OFI (?:fi_getinfo|addrinfo)\(\) failed(?: \((?P<where>[^)]*)\))?")


def _mpich_ofi(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"problem": "ofi_provider_missing", "library": "mpich_ofi"}
    where = (m.group("where") or "").split(":")
    if len(where) >= 4 and where[-1].strip():
        facts["fi_error"] = where[-1].strip()
    return [
        row.event(
            hit,
            f"{hit.who()}: MPI_Init's OFI netmod found no libfabric provider (fi_getinfo failed"
            + (f": {facts['fi_error']}" if "fi_error" in facts else "")
            + "): I_MPI_OFI_PROVIDER / FI_PROVIDER names one that is not installed, FI_PROVIDER_PATH points "
            "nowhere, or the fabric's device (EFA, verbs) is missing on this node",
            facts,
            dedupe=(row.code, "mpich_ofi"),
        )
    ]


_ORTE = lazy_re.compile(r"\b(?P<rt>ORTE|PRTE) has lost communication with a remote daemon")
_NODE = lazy_re.compile(r"Remote daemon\s*:\s*\S+ on node (?P<node>\S+)")
_MLX5 = lazy_re.compile(
    r"(?P<err>Local (?:length|QP operation|protection|access)|Remote (?:QP|invalid request|access|operation)|"
    r"Invalid request|Transport retry count exceeded|Receive-no-ready retry count exceeded|"
    r"Remote side aborted|Bad response|Memory window bind|Generic)"
    r" on (?P<dev>\w+):(?P<port>\d+)/(?P<link>IB|RoCE)"
)
# UCX's verbs-level completion check (uct/ib/base/ib_iface.h UCT_IB_IFACE_VERBS_COMPLETION_MSG, UCX 1.10-1.19,
# under rc_verbs, ud_verbs and the EFA SRD transport srd_iface.c): "send completion[0] with error on
# rdmap132s0/0x55cf4425cfb0: Work Request Flushed Error, vendor_err 0x1 wr_id 0x7f8b20022480" (also "receive
# completion[N]"); rc_verbs_iface.c "send completion with error: transport retry counter exceeded [qpn 0x1a
# ...]"; ud_verbs.c's fatal "Send completion (wr_id=0x1 with error: local protection error". The text is
# libibverbs' ibv_wc_status_str (rdma-core verbs.c). "Work Request Flushed Error" is the echo of an earlier
# error on the same queue pair (a peer that died, or the first failed completion): tier 1.
_VERBS = lazy_re.compile(
    r"completion(?:\[\d+\])? (?:\(wr_id=0x[0-9a-fA-F]+ )?with error"
    r"(?: on (?P<vdev>[\w.-]+)/0x[0-9a-fA-F]+)?: "
    r"(?P<err>local protection error|remote access error|remote operation error|"
    r"transport retry counter exceeded|RNR retry counter exceeded|local length error|"
    r"local QP operation error|Work Request Flushed Error|bad response error|local access error|"
    r"remote invalid request error|remote invalid RD request|fatal error|response timeout error|"
    r"general error|aborted error|memory management operation error)"
)
_TRUNCATE = lazy_re.compile(
    r"MPI_ERR_TRUNCATE: message truncated|Fatal error in (?:P?MPI|internal)_(?P<op>\w+): Message truncated|"
    r"(?:Message from rank (?P<src>\d+) and tag \d+ truncated|Message truncated); (?P<got>\d+) bytes "
    r"received but buffer size is (?P<buf>\d+)|"
    r"\bException: Message truncated, error stack"
)
_MPI_OP = lazy_re.compile(r"An error occurred in P?MPI_(\w+)|^\s*P?MPI_(\w+)\(\d+\)\.*: ")
# rdma-core's mlx5 provider dumps the failed completion itself before any library reads it: "mlx5:
# softiron-2: got completion with error:" then four lines of hex (under UCX, Open MPI's openib, NCCL's IB).
# (the line normaliser may take "mlx5: host:" for a prefix of its own and keep only the words after it)
_MLX5_DUMP = lazy_re.compile(r"(?:\bmlx[45]: (?P<host>[^\s:]+): )?\bgot completion with error\b")
_BTL_TCP = lazy_re.compile(
    r"received unexpected process identifier:? (?:got )?(?P<peer>\[\[\d+,\d+\],\d+\])|"
    r"Open MPI failed to (?P<what>TCP connect to|handshake with a connecting) (?:a )?peer MPI"
)
_BTL_MSG = lazy_re.compile(r"^\s*(?:Message|Error):\s+(?P<v>\S.*)$")
_UCX_UNREACH = lazy_re.compile(
    r"no (?P<kind>active messages|remote-memory-access|auxiliary) transport to (?P<peer>.+?): .*?"
    r"Destination is unreachable|"
    r"(?P<create>ucp_ep_create\(\)|ucp_wireup\w*) failed: Destination is unreachable"
)
_OPENIB = lazy_re.compile(
    r"error polling [LH]P CQ with status (?P<err>[A-Z][A-Z ]+?) status number (?P<num>\d+)"
)

# UCX's UD transport when a peer stops answering (uct/ib/ud/base/ud_ep.c, UCX 1.x, a ucs_fatal): "[node1:4242
# :0:4242]  ud_ep.c:278  Fatal: UD endpoint 0x1234 to <no debug data>: unhandled timeout error" (also "UD
# endpoint 0x1234 to 10.0.0.2:5678: unhandled timeout error"); and the libfabric EFA provider's completion
# errors (prov/efa, efa_errno.h texts: "Unresponsive receiver", "Unreachable remote", "Remote unknown peer",
# "Destination QP does not exist"), behind "libfabric:4242:1701234567::efa:cq:...():107<warn>". Both say the
# peer's adapter went silent: the fabric, or a peer that died (facts peer_may_have_died).
_UCX_UD = lazy_re.compile(r"\bUD endpoint \S+ to .{1,80}?: unhandled timeout error")
_EFA = lazy_re.compile(
    r"\b(?P<err>Unresponsive receiver|Unreachable remote|Remote unknown peer|Destination QP does not exist)\b"
)


def _peer_silent(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = hit.text
    if row.name.startswith("efa") and "efa" not in t.lower() and "libfabric" not in t and "OFI" not in t:
        return None  # the words alone, outside a libfabric/EFA line
    err = m.groupdict().get("err") or "UD endpoint timeout"
    facts: dict[str, Any] = {
        "problem": "peer_unresponsive",
        "transport": "efa" if row.name.startswith("efa") else "ucx_ud",
        "fabric_error": err,
        "peer_may_have_died": True,
    }
    return [
        row.event(
            hit,
            f"the fabric lost a peer ({err}): its adapter stopped answering; the link failed or the peer "
            "process died",
            facts,
            dedupe=(row.code, "peer_silent"),
        )
    ]


# Open MPI's out-of-band TCP channel (the daemons' and ranks' own wire-up, not the MPI traffic) that found no
# address of a peer it could connect to (orte/mca/oob/tcp/oob_tcp_connection.c, 1.8-4.1, printed with
# opal_output between dashed rules, not show_help): "A process or daemon was unable to complete a TCP
# connection" / "to another process:" / "  Local host:    n1" / "  Remote host:   n2" / "This is usually
# caused by a firewall on the remote host. ..."; PRRTE (Open MPI 5: src/mca/oob/tcp 2.x-3.0, src/rml/oob 3.1+)
# says "A daemon was unable to complete a TCP connection" / "to another daemon:". The errmgr's [no-connect]
# help (help-errmgr-base.txt, ORTE 2.x-4.x; PRRTE's copy): "ORTE is unable to establish a communication
# connection to the" / "specified daemon located on the indicated node:" / "  my node:   n1" / "  target node:
# n2" / "This is usually due to a lack of common network interfaces and/or no route found between them." Both
# are the network between two nodes (a firewall, an interface that does not route): RUN174, the remote host as
# fact.
_OOB_TCP = lazy_re.compile(
    r"\bA (?P<who>process or daemon|daemon) was unable to complete a TCP connection|"
    r"\b(?P<rt>ORTE|PRTE) is unable to establish a communication connection to the"
)
_OOB_LOCAL = lazy_re.compile(r"^\s*(?:Local host|my node):\s*(?P<h>\S+)")
_OOB_REMOTE = lazy_re.compile(r"^\s*(?:Remote host|target node):\s*(?P<h>\S+)")


def _oob_tcp(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {
        "problem": "mpi_oob_connect_failed" if m.group("who") else "mpi_daemon_unreachable",
        "reporter": m.group("rt") or ("PRTE" if m.group("who") == "daemon" else "ORTE"),
        "fix_env": "--mca oob_tcp_if_include",
    }
    for ln in hit.after(8, same_rank=False):
        loc, rem = _OOB_LOCAL.match(ln.text), _OOB_REMOTE.match(ln.text)
        if loc:
            facts["host"] = loc.group("h")  # the node that printed it
        if rem and rem.group("h") != "<unknown>":
            facts["peer_host"] = rem.group("h")
    src = f" on {facts['host']}" if "host" in facts else ""
    dst = facts.get("peer_host", "another node")
    return [
        row.event(
            hit,
            f"Open MPI's out-of-band TCP channel{src} could not connect to {dst}: a firewall on that node "
            "(iptables, a security group) blocks the ports, or the interfaces Open MPI chose do not route "
            "between the nodes (docker0, a private NIC); open the ports between the nodes or pin a routable "
            "interface with --mca oob_tcp_if_include / btl_tcp_if_include",
            facts,
            dedupe=(row.code, "oob_tcp", facts.get("peer_host")),
        )
    ]


def _orte(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"problem": "mpi_daemon_lost", "reporter": m.group("rt")}
    for ln in hit.after(6, same_rank=False):
        n = _NODE.search(ln.text)
        if n:
            facts["host"] = n.group("node")
            break
    on = f" on {facts['host']}" if "host" in facts else ""
    return [
        row.event(
            hit,
            f"Open MPI lost its daemon{on} during the job: that node went down or its TCP connection to "
            "the launching node failed",
            facts,
            dedupe=(row.code, "orte_lost"),
        )
    ]


def _btl_tcp(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"transport": "open_mpi_btl_tcp"}
    if m.group("peer"):
        facts.update(problem="unexpected_peer_identity", peer=m.group("peer"))
        what = (
            f"Open MPI's TCP transport reached process {m.group('peer')} on an address it expected another "
            "rank at: several hosts share an interface's address (docker0, virbr0, a bridge); restrict it "
            "with --mca btl_tcp_if_include <the real interface>"
        )
    else:
        said = [v.group("v").strip() for v in map(_BTL_MSG.match, (ln.text for ln in hit.after(9))) if v]
        facts["problem"] = "tcp_connect_failed" if "connect to" in m.group("what") else "tcp_handshake_failed"
        if said:
            facts["error"] = "; ".join(said)[:160]
        what = (
            "Open MPI's TCP transport could not "
            + ("connect to" if "connect to" in m.group("what") else "handshake with")
            + " a peer rank"
            + (f" ({facts['error']})" if "error" in facts else "")
            + ": a firewall, an unroutable interface, or the peer died; pin the interface with "
            "--mca btl_tcp_if_include"
        )
    return [row.event(hit, what, facts, dedupe=(row.code, "btl_tcp"))]


def _ucx_unreach(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"transport": "ucx", "problem": "ucx_no_transport"}
    peer = (m.group("peer") or "").strip()
    if peer and peer != "<no debug data>":
        facts["peer"] = peer
    return [
        row.event(
            hit,
            "UCX found no transport that reaches a peer (Destination is unreachable): UCX_TLS / "
            "UCX_NET_DEVICES leave none that spans the nodes, or a node lacks the device; check "
            "`ucx_info -d` on both sides",
            facts,
            dedupe=(row.code, "ucx_unreachable"),
        )
    ]


def _ib(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = m.group("err")
    facts: dict[str, Any] = {"problem": "ib_completion_error", "ib_error": err}
    names = m.groupdict()
    if names.get("dev"):
        facts["ib_device"] = m.group("dev")
        facts["link"] = m.group("link")
    if names.get("num"):
        facts["wc_status"] = int(m.group("num"))
    if names.get("vdev"):
        facts["ib_device"] = m.group("vdev")
        if m.group("vdev").startswith("rdmap") or "srd_iface" in hit.text:
            facts["fabric"] = "efa"
    if "flushed" in err.lower():
        facts["echo"] = True
        dev = f" on {facts['ib_device']}" if "ib_device" in facts else ""
        return [
            row.event(
                hit,
                f"RDMA work requests were flushed{dev} (Work Request Flushed Error): the queue pair to a "
                "peer went into error, after a peer died or an earlier completion failed (look for the first "
                "error on any rank; on EFA check the peer's health and FI_EFA_* / UCX_TLS settings)",
                facts,
                tier=1,
                dedupe=(row.code, "wr_flushed"),
            )
        ]
    why = (
        ": the adapter refused the buffer's memory registration (GPUDirect RDMA / peer-memory module, "
        "or a buffer freed while in flight)"
        if "protection" in err.lower()
        else ": the InfiniBand/RoCE link or the peer's adapter failed"
    )
    dev = f" on {facts['ib_device']}" if "ib_device" in facts else ""
    return [row.event(hit, f"an InfiniBand work completion failed ({err}){dev}{why}", facts)]


def _truncate(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"kind": "mpi_truncate"}
    op = m.group("op")
    near = [*hit.before(6, same_rank=False), hit.line, *hit.after(8, same_rank=False)]
    for ln in near:
        o = _MPI_OP.search(ln.text)
        if o and not op:
            op = o.group(1) or o.group(2)
        t = _TRUNCATE.search(ln.text)
        if t and t.group("got"):
            facts.update(bytes=int(t.group("got")), buffer=int(t.group("buf")))
            if t.group("src"):
                facts["peer_rank"] = int(t.group("src"))
    if op:
        facts["op"] = op
    on = f" in MPI_{op}" if op else ""
    return [
        row.event(
            hit,
            f"MPI received a message longer than the buffer posted for it{on}: the ranks called the "
            "collective with different sizes or in a different order",
            facts,
            dedupe=(row.code, "mpi_truncate"),
        )
    ]


def _mlx5_dump(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"problem": "ib_completion_error"}
    if m.group("host"):
        facts["host"] = m.group("host")
    on = f" on {facts['host']}" if "host" in facts else ""
    return [
        row.event(
            hit,
            f"the InfiniBand adapter's driver{on} dumped a failed work completion (the line a library prints "
            "after it names the error)",
            facts,
            dedupe=(row.code, "mlx5_dump"),
        )
    ]


SIGNATURES = (
    Signature(
        "mpich ofi netmod without a provider",
        _MPICH_OFI,
        _mpich_ofi,
        C.NCCL_NET_PROVIDER_MISSING.code,
        anchors=(b"OFI fi_getinfo() failed", b"OFI addrinfo() failed"),
        words=("ofi fi_getinfo() failed", "ofi addrinfo() failed"),
    ),
    Signature(
        "cuda ipc to a peer rank",
        _CUDA_IPC,
        _cuda_ipc,
        C.PEER_ACCESS_UNSUPPORTED.code,
        anchors=(b"Failed to register remote memory", b"cuIpcOpenMemHandle"),
        words=("failed to register remote memory", "cuipcopenmemhandle"),
    ),
    Signature(
        "mpi message truncated",
        _TRUNCATE,
        _truncate,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"MPI_ERR_TRUNCATE", b"Message truncated", b"bytes received but buffer size is"),
        worth=(rb"MPI_ERR_TRUNCATE", rb"Message truncated", rb"bytes received but buffer size"),
        words=("truncate",),
    ),
    Signature(
        "open mpi lost a daemon",
        _ORTE,
        _orte,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"has lost communication with a remote daemon",),
        worth=(rb"lost communication with a remote daemon",),
        words=("lost communication",),
    ),
    Signature(
        "open mpi oob tcp connect",
        _OOB_TCP,
        _oob_tcp,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(
            b"was unable to complete a TCP connection",
            b"is unable to establish a communication connection",
        ),
        words=("unable to complete a tcp connection", "unable to establish a communication connection"),
    ),
    Signature(
        "open mpi tcp btl peer",
        _BTL_TCP,
        _btl_tcp,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"received unexpected process identifier", b"Open MPI failed to "),
        worth=(rb"received unexpected process identifier", rb"Open MPI failed to (?:TCP connect|handshake)"),
        words=("unexpected process identifier", "open mpi failed to"),
    ),
    Signature(
        "ucx no transport to a peer",
        _UCX_UNREACH,
        _ucx_unreach,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"Destination is unreachable",),
        worth=(rb"Destination is unreachable",),
        words=("destination is unreachable",),
    ),
    Signature(
        "ucx mlx5 completion error",
        _MLX5,
        _ib,
        C.NCCL_IB_ERROR.code,
        # the error's own words, never "/IB": every NCCL INFO line of an InfiniBand job says NET/IB
        anchors=(
            b"Local length",
            b"Local QP operation",
            b"Local protection",
            b"Local access",
            b"Remote QP",
            b"Remote invalid request",
            b"Remote access",
            b"Remote operation",
            b"Invalid request",
            b"retry count exceeded",
            b"Remote side aborted",
            b"Bad response",
            b"Memory window bind",
            b"Generic on",
        ),
        worth=(rb" on \w+:\d+/(?:IB|RoCE)",),
        words=("/ib", "/roce"),
    ),
    Signature(
        "verbs completion error",
        _VERBS,
        _ib,
        C.NCCL_IB_ERROR.code,
        anchors=(b"with error",),
        worth=(rb"ompletion(?:\[\d+\])? (?:\(wr_id=0x[0-9a-fA-F]+ )?with error",),
        words=("with error",),
    ),
    Signature(
        "mlx5 provider completion dump",
        _MLX5_DUMP,
        _mlx5_dump,
        C.NCCL_IB_ERROR.code,
        tier=1,
        anchors=(b"got completion with error",),
        worth=(rb"got completion with error",),
        words=("got completion with error",),
    ),
    Signature(
        "ucx ud endpoint timeout",
        _UCX_UD,
        _peer_silent,
        C.NCCL_IB_ERROR.code,
        anchors=(b"unhandled timeout error",),
        worth=(rb"unhandled timeout error",),
        words=("unhandled timeout error",),
    ),
    Signature(
        "efa completion error",
        _EFA,
        _peer_silent,
        C.NCCL_IB_ERROR.code,
        anchors=(b"Unresponsive receiver", b"Unreachable remote", b"Remote unknown peer", b"Destination QP"),
        worth=(
            rb"Unresponsive receiver",
            rb"Unreachable remote",
            rb"Remote unknown peer",
            rb"Destination QP",
        ),
        words=("unresponsive receiver", "unreachable remote", "remote unknown peer", "destination qp"),
    ),
    Signature(
        "open mpi openib completion error",
        _OPENIB,
        _ib,
        C.NCCL_IB_ERROR.code,
        anchors=(b"CQ with status",),
        worth=(rb"CQ with status",),
        words=("cq with status",),
    ),
)
parse = gated_reader(SIGNATURES)
