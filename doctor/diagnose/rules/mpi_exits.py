"""MPI jobs (Open MPI, MPICH, Intel MPI, MVAPICH; under Horovod, mpi4py, DeepSpeed's mpirun launcher, TF/MXNet
MPI jobs): how a rank's end is reported when mpirun / mpiexec took the job down, and the error stacks that say
the link to a peer broke.

Formats (read at source):
- Open MPI's abort help text (ompi/runtime/help-mpi-runtime.txt / help-mpi-api.txt "mpi-abort", 1.x-4.x):
  "MPI_ABORT was invoked on rank 2 in communicator MPI_COMM_WORLD" then "with errorcode 1." on the next line
  (one line when a paste unwrapped it), then "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI
  processes."; Open MPI 5 (PRRTE) keeps the first line and prints "  Proc: [[60364,1],2]" / "  Errorcode: 1"
  under it.
- MPICH's MPID_Abort (src/mpid/common, 3.x-4.x; Intel MPI and MVAPICH the same): "application called
  MPI_Abort(MPI_COMM_WORLD, 1) - process 0", behind "Abort(1) on node 0 (rank 0 in comm 0): " in MPICH 4 /
  Intel MPI 2019+ and behind "[cli_0]: aborting job:" in MPICH2's PMI.
- Hydra's summary box ("BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES") is read by framework_exits.py
  (its 3.x "EXIT CODE: 9" is the raw wait status of a SIGKILL, "... EXIT STRING: Killed (signal 9)" after it).
- MPICH2's mpd (1.0-1.2): "rank 0 in job 1  host_65327   caused collective abort of all ranks" then
  "  exit status of rank 0: killed by signal 9" (or "return code 1").
  These are exit records (the launcher's: `launcher.exit_event`, tier 3): a rank that called MPI_Abort
  (mpi4py's and Horovod's handlers do on an uncaught exception) or died; causality ranks any cause the log
  shows above them and falls back on them when none (a signal 9 is a kill, an exit code a crash).
- MPICH's error stack when the link to a peer broke (src/mpi/errhan/errnames.txt, 3.x-4.x; Intel MPI 2018+):
  "MPIDI_CH3U_Recvq_FDU_or_AEP(629): Communication error with rank 3" (**comm_fail), the ch3 sock channel's
  "MPIDU_Socki_handle_read(...): connection failure (set=0,sock=1,errno=104:Connection reset by peer)"
  (**sock|connfailed), and ch4/OFI's "MPIDI_OFI_handle_cq_error(1042): OFI poll failed
  (ofi_events.c:1044:MPIDI_OFI_handle_cq_error:Input/output error)" (**ofi_poll), under "Fatal error in
  PMPI_Allreduce: Unknown error class, error stack:" / "Other MPI error". The connection between the ranks
  broke (RUN174), tier 1: a peer that died first (its own error, an OOM kill) is the cause when the log
  shows it. An OFI completion error of "Message too long" (FI_ETRUNC; Cray MPICH on Slingshot prints it
  so) is a message longer than the receive posted for it: the ranks called the operation with different
  sizes (RUN201), as the ch3 "Message truncated" stack.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.launcher import EXIT, exit_event
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_OMPI_ABORT = lazy_re.compile(
    r"MPI_ABORT was invoked on rank (?P<rank>\d+) in communicator (?P<comm>[\w.-]+)"
)
_ERRORCODE = lazy_re.compile(r"(?:with errorcode|Errorcode:)\s*(?P<code>-?\d+)")
_MPICH_ABORT = lazy_re.compile(
    r"application called MPI_Abort\((?P<comm>[\w.-]+),\s*(?P<code>-?\d+)\)(?:\s*-\s*process (?P<rank>\d+))?"
)
# MPICH2's mpd (1.0-1.2): "rank 0 in job 1  host_65327   caused collective abort of all ranks" then
# "  exit status of rank 0: killed by signal 9" (or ": return code 1").
_MPD = lazy_re.compile(r"rank (?P<rank>\d+) in job \d+\s+\S+\s+caused collective abort of all ranks")
_MPD_STATUS = lazy_re.compile(
    r"exit status of rank \d+: (?:killed by signal (?P<sig>\d+)|return code (?P<code>-?\d+))"
)
# MPICH 4 / Intel MPI: "Abort(68275727) on node 1 (rank 1 in comm 0): Fatal error in PMPI_Allreduce: ..."
_MPICH_RANK = lazy_re.compile(r"\(rank (?P<rank>\d+) in comm \d+\)|\[cli_(?P<cli>\d+)\]")
# MPICH 4.1+ and Intel MPI 2021+ name the internal entry point: "Fatal error in internal_Allreduce: ..."
_FATAL_OP = lazy_re.compile(r"Fatal error in (?:P?MPI|internal)_(?P<op>\w+)")
_TOO_LONG = lazy_re.compile(r"Message too long|[Tt]runcat")


def _ompi_abort(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    rank = int(m.group("rank"))
    facts: dict[str, Any] = {"reporter": "mpi_abort", "communicator": m.group("comm"), "rank": rank}
    for ln in [hit.line, *hit.after(4, same_rank=False)]:
        c = _ERRORCODE.search(ln.text)
        if c:
            facts["exitcode"] = int(c.group("code"))
            break
    facts.setdefault("exitcode", 1)
    return [exit_event(hit, facts, rank)]


def _mpich_abort(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    rank: Optional[int] = int(m.group("rank")) if m.group("rank") else None
    if rank is None:
        r = _MPICH_RANK.search(hit.text)
        if r:
            rank = int(r.group("rank") or r.group("cli"))
    facts: dict[str, Any] = {
        "reporter": "mpi_abort",
        "communicator": m.group("comm"),
        "exitcode": int(m.group("code")),
    }
    if rank is not None:
        facts["rank"] = rank
    return [exit_event(hit, facts, rank)]


_COMM = lazy_re.compile(
    r"(?P<comm>Communication error with rank (?P<peer>\d+))|"
    r"(?P<sock>connection failure \(set=\d+,sock=\d+,errno=(?P<errno>\d+):(?P<why>[^)]*)\))|"
    r"(?P<ofi>OFI poll failed \((?P<ofi_why>[^)]*)\))"
)


def _comm(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"library": "mpich", "problem": "mpi_peer_link"}
    code = ""
    if m.group("peer"):
        facts["peer"] = int(m.group("peer"))
        what = f"the link to rank {m.group('peer')} failed"
    elif m.group("sock"):
        facts["errno"] = int(m.group("errno"))
        facts["error"] = m.group("why").strip()
        what = f"a socket to a peer failed ({clip(m.group('why').strip(), 60)})"
    else:
        facts["error"] = clip(m.group("ofi_why").split(":")[-1].strip(), 60)
        facts["transport"] = "ofi"
        what = f"the OFI (libfabric) transport failed a completion ({facts['error']})"
        if _TOO_LONG.search(facts["error"]):
            code = C.COLLECTIVE_MISMATCH.code  # FI_ETRUNC: a message longer than the buffer posted for it
    if code:
        facts["problem"] = "mpi_truncate"
        what += ": a rank sent more than its peer posted for, the ranks called it with different sizes"
    rank: Optional[int] = None
    for ln in [hit.line, *hit.before(30, same_rank=False)]:
        op = _FATAL_OP.search(ln.text)
        if op and "op" not in facts:
            facts["op"] = op.group("op")
        r = _MPICH_RANK.search(ln.text)
        if r and rank is None:
            rank = int(r.group("rank") or r.group("cli"))
        if "op" in facts and rank is not None:
            break
    where = f" in MPI_{facts['op']}" if "op" in facts else ""
    why = (
        ""
        if code
        else ": the network between the nodes (a firewall, the interface MPI chose, the fabric) or the peer "
        "process died"
    )
    ev = row.event(
        hit,
        f"MPI{where}: {what}{why}",
        facts,
        rank=rank,
        dedupe=(code or row.code, "mpich_comm", facts.get("peer")),
        code=code,
        tier=0 if code else None,
    )
    if rank is None and hit.line.rank is None:
        # "with rank 3" names the peer, not the rank that reports it
        ev.rank = None
        ev.facts.pop("rank", None)
    return [ev]


def _mpd(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    rank = int(m.group("rank"))
    facts: dict[str, Any] = {"reporter": "mpd", "rank": rank}
    for ln in [hit.line, *hit.after(3, same_rank=False)]:
        st = _MPD_STATUS.search(ln.text)
        if st:
            facts["exitcode"] = -int(st.group("sig")) if st.group("sig") else int(st.group("code"))
            return [exit_event(hit, facts, rank)]
    return None


SIGNATURES = (
    Signature(
        "open mpi abort invoked",
        _OMPI_ABORT,
        _ompi_abort,
        EXIT,
        tier=3,
        anchors=(b"MPI_ABORT was invoked",),
        worth=(rb"MPI_ABORT was invoked",),
        words=("mpi_abort was invoked",),
    ),
    Signature(
        "mpich abort called",
        _MPICH_ABORT,
        _mpich_abort,
        EXIT,
        tier=3,
        anchors=(b"application called MPI_Abort",),
        worth=(rb"application called MPI_Abort",),
        words=("application called mpi_abort",),
    ),
    Signature(
        "mpich mpd collective abort",
        _MPD,
        _mpd,
        EXIT,
        tier=3,
        anchors=(b"caused collective abort of all ranks",),
        worth=(rb"caused collective abort of all ranks",),
        words=("caused collective abort",),
    ),
    Signature(
        "mpich peer link failed",
        _COMM,
        _comm,
        C.NCCL_SOCKET_ERROR.code,
        tier=1,
        anchors=(b"Communication error with rank", b"connection failure (set=", b"OFI poll failed"),
        worth=(rb"Communication error with rank", rb"connection failure \(set=", rb"OFI poll failed"),
        words=("communication error with rank", "connection failure (set=", "ofi poll failed"),
    ),
)
parse = gated_reader(SIGNATURES)
