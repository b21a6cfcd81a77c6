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
  number 12 for wr_id ...". An InfiniBand/RoCE failure (RUN173); a local protection error is the memory
  registration under it (GPUDirect RDMA, peer memory module) refusing the buffer.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader

_ORTE = re.compile(r"\b(?P<rt>ORTE|PRTE) has lost communication with a remote daemon")
_NODE = re.compile(r"Remote daemon\s*:\s*\S+ on node (?P<node>\S+)")
_MLX5 = re.compile(
    r"(?P<err>Local (?:length|QP operation|protection|access)|Remote (?:QP|invalid request|access|operation)|"
    r"Invalid request|Transport retry count exceeded|Receive-no-ready retry count exceeded|"
    r"Remote side aborted|Bad response|Memory window bind|Generic)"
    r" on (?P<dev>\w+):(?P<port>\d+)/(?P<link>IB|RoCE)"
)
_VERBS = re.compile(
    r"completion with error: (?P<err>local protection error|remote access error|remote operation error|"
    r"transport retry counter exceeded|RNR retry counter exceeded|local length error|"
    r"local QP operation error)"
)
_OPENIB = re.compile(r"error polling [LH]P CQ with status (?P<err>[A-Z][A-Z ]+?) status number (?P<num>\d+)")


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


def _ib(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = m.group("err")
    facts: dict[str, Any] = {"problem": "ib_completion_error", "ib_error": err}
    names = m.groupdict()
    if names.get("dev"):
        facts["ib_device"] = m.group("dev")
        facts["link"] = m.group("link")
    if names.get("num"):
        facts["wc_status"] = int(m.group("num"))
    why = (
        ": the adapter refused the buffer's memory registration (GPUDirect RDMA / peer-memory module, "
        "or a buffer freed while in flight)"
        if "protection" in err.lower()
        else ": the InfiniBand/RoCE link or the peer's adapter failed"
    )
    dev = f" on {facts['ib_device']}" if "ib_device" in facts else ""
    return [row.event(hit, f"an InfiniBand work completion failed ({err}){dev}{why}", facts)]


SIGNATURES = (
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
        "ucx mlx5 completion error",
        _MLX5,
        _ib,
        C.NCCL_IB_ERROR.code,
        anchors=(b"/IB", b"/RoCE"),
        worth=(rb" on \w+:\d+/(?:IB|RoCE)",),
        words=("/ib", "/roce"),
    ),
    Signature(
        "verbs completion error",
        _VERBS,
        _ib,
        C.NCCL_IB_ERROR.code,
        anchors=(b"completion with error",),
        worth=(rb"completion with error",),
        words=("completion with error",),
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
