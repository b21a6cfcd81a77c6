"""Open MPI's runtime and openib help texts that name what ended a running job: a rank that left without
MPI_Finalize, a node or daemon the launcher lost, a process over its memory limit, the InfiniBand fabric.

Formats (read at the source: Open MPI v2.1.6 / v3.1.6 / v4.1.8 orte/tools/orterun/help-orterun.txt and
opal/mca/btl/openib/help-mpi-btl-openib.txt; PRRTE (Open MPI 5) src/mca/schizo/prte/help-prun.txt, which
prints them with "prterun" / "prun" for "%s"):
- [proc-exit-no-sync]: "mpirun has exited due to process rank 3 with PID 1234 on" / "node n1 exiting
  improperly. There are three reasons this could occur:" (PRRTE wraps it "... on node n1 exiting" /
  "improperly."): a rank ended without MPI_Finalize (a Python exception, sys.exit, a crash its own lines say
  more about): RUN133 at tier 2, the echo of that rank's end, with rank, pid and host.
- [proc-comm-failed] "A critical communication path was lost to:" with "Process name:" / "Node:", and
  [proc-heartbeat-failed] "mpirun failed to receive scheduled heartbeat communications from a remote
  process:": the launcher lost a node's daemon or process mid-run (the node went down, its network failed);
  [daemon-died-during-execution] "mpirun has detected that a required daemon terminated during execution of
  the application with a non-zero status.": RUN174 (tier 1 for the daemon's death, whose cause is on its
  node), as errmgr's "ORTE has lost communication with a remote daemon" (mpi_fabric).
- [timeout] "The user-provided time limit for job execution has been reached:": mpirun's --timeout killed
  the job (RUN133 at tier 2, a consequence like a scheduler's time limit).
- [proc-mem-exceeded] "A process exceeded memory limits:" with "Node:": the runtime's memory sensor killed
  it (RUN121).
- openib's [pp retry exceeded] "The InfiniBand retry count between two MPI processes has been exceeded.",
  [pp rnr retry exceeded] / [srq rnr retry exceeded] 'The OpenFabrics "receiver not ready" retry count on a
  per-peer connection between two MPI processes has been exceeded.' (or "... on a shared receive queue or XRC
  receive queue ..."), each with "Local host:" / "Local device:" / "Peer host:", and [of error event] "The
  OpenFabrics stack has reported a network error event." with "Error number:      10 (IBV_EVENT_PORT_ERR)":
  the InfiniBand fabric between two hosts (RUN173).
- PRRTE's own shapes of two records launcher.py reads for ORTE: [prun:proc-aborted-strsignal] wraps "prterun
  noticed that process rank 3 with PID 4242 on node n1 exited on" / "signal 9 (Killed)." (the signal on the
  next line), and [prun:non-zero-exit] names the process "[prterun-node1-4242@1,3]" (namespace@job,rank)
  above "Exit code:    1": the same exit events (tier 3) as ORTE's one-line forms.
- The same record cut before its signal (a search excerpt or a thread's title: "mpirun noticed that process
  rank 1 with PID 0", "... on node n1", "... on node n1 exited"): ORTE's and PRRTE's only texts that say
  "noticed that process rank N with PID P" are [proc-aborted-signal] / [proc-aborted-strsignal], so the rank
  died on a signal; which one is cut off: RUN131 at tier 3 (an exit record's tier: any cause the paste names
  wins), fact `signal` None. A continuation on the next line ("on node n1 exited on signal 9 (Killed).") is
  the exit record.
- A UCX operation that failed on the link to a peer (UCX's ucs_status_string, src/ucs/type/status.c):
  "Endpoint timeout" (UCS_ERR_ENDPOINT_TIMEOUT), "Connection reset by remote peer", "Endpoint is not
  connected", "Destination is unreachable", "Input/output error", as Open MPI's UCX PML prints them after a
  send or receive ("[n1:4242] pml_ucx.c:865  Error: ucx send failed: Endpoint timeout", also "ucx recv",
  "ucx bsend", "ucx msg recv"; ucp_ep.c's own "error '<status>' on <lane> will not be handled" line is
  read elsewhere, by its lane): the transport to that peer failed or the peer died - a network failure
  (RUN174, tier 1), not a collective's timeout.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.launcher import EXIT, exit_event
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_PRTE_SIGNAL = lazy_re.compile(
    r"noticed that (?:process|job) rank (\d+) with PID (\w+) on node (\S+) exited on\s*$"
)
_NEXT_SIGNAL = lazy_re.compile(r"^\s*signal (\d+)")


def _prte_signal(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    nxt = hit.after(1, same_rank=False)
    s = _NEXT_SIGNAL.match(nxt[0].text) if nxt else None
    if s is None:
        return None
    rank = int(m.group(1))
    facts: dict[str, Any] = {
        "exitcode": -int(s.group(1)),
        "host": m.group(3),
        "reporter": "mpirun",
        "rank": rank,
    }
    if m.group(2).isdigit():
        facts["pid"] = int(m.group(2))
    return [exit_event(hit, facts, rank)]


_MPI_CUT = lazy_re.compile(
    r"noticed that (?:process|job) rank (\d+) with PID (\w+)(?: on node (\S+))?(?: exited(?: on)?)?\s*$"
)
_MPI_REST = lazy_re.compile(r"^\s*(?:on node (\S+)\s+)?(?:exited on\s+)?signal (\d+)")


def _mpi_cut(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    rank = int(m.group(1))
    facts: dict[str, Any] = {"reporter": "mpirun", "rank": rank}
    if m.group(2).isdigit() and len(m.group(2)) < 10:
        facts["pid"] = int(m.group(2))
    nxt = hit.after(1, same_rank=False)
    rest = _MPI_REST.match(nxt[0].text) if nxt else None
    host = m.group(3) or (rest.group(1) if rest else None)
    if host:
        facts["host"] = host
    if rest is not None:
        return [exit_event(hit, {**facts, "exitcode": -int(rest.group(2)[:3])}, rank)]
    return [
        row.event(
            hit,
            f"mpirun saw rank {rank} die on a signal (the record is cut before the signal's number: read "
            "that rank's own output, dmesg for the OOM killer, or a core dump)",
            {**facts, "signal": None, "signal_cut": True},
            rank=rank,
            dedupe=(row.code, rank, "mpirun_signal_cut"),
        )
    ]


_PRTE_EXIT = lazy_re.compile(r"^\s*Exit code:\s*(\d+)\s*$")
_PRTE_NAME = lazy_re.compile(r"Process name:\s*\[[\w.-]+@\d+,(\d+)\]")


def _prte_exit(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    name = next((n for n in (_PRTE_NAME.search(ln.text) for ln in hit.before(3, same_rank=False)) if n), None)
    if name is None:
        return None  # ORTE's and horovodrun's names: launcher.py
    status, rank = int(m.group(1)), int(name.group(1))
    code = -(status - 128) if 128 < status < 160 else status  # 128 + N: killed by signal N
    facts: dict[str, Any] = {"exitcode": code, "exit_status": status, "first": True, "reporter": "mpirun"}
    facts["rank"] = rank
    return [exit_event(hit, facts, rank)]


_NO_SYNC = lazy_re.compile(
    r"\b(?P<who>mpirun|mpiexec|orterun|prterun|prun|\S+) has exited due to process rank (?P<rank>\d+) with "
    r"PID "
    r"(?P<pid>\d+) on(?:\s+node (?P<node>\S+))?"
)
_NODE_NEXT = lazy_re.compile(r"^\s*(?:node )?(?P<node>\S+) exiting\b")


def _no_sync(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    rank = int(m.group("rank"))
    facts: dict[str, Any] = {"reporter": "mpirun", "exited_rank": rank, "problem": "exit_without_finalize"}
    if m.group("pid") != "0":
        facts["pid"] = int(m.group("pid"))
    node = m.group("node")
    if not node:
        nxt = hit.after(1, same_rank=False)
        n = _NODE_NEXT.match(nxt[0].text) if nxt else None
        node = n.group("node") if n else None
    if node:
        facts["host"] = node
    on = f" on {node}" if node else ""
    return [
        row.event(
            hit,
            f"mpirun saw rank {rank}{on} exit without MPI_Finalize: that rank ended first (an exception, "
            "sys.exit or a crash before the job's end); its own last lines say why",
            facts,
            rank=rank,
            dedupe=(row.code, "mpi_no_sync", rank),
        )
    ]


_LOST = lazy_re.compile(
    r"\bA critical communication path was lost to\b|"
    r"\bfailed to receive scheduled heartbeat communications from a remote|"
    r"\bhas detected that a required daemon terminated during execution"
)
_NODE = lazy_re.compile(r"^\s*Node:\s*(?P<node>\S+)")
_PNAME = lazy_re.compile(r"^\s*Process name:\s*(?P<name>\S+)")


def _lost(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    text = m.group(0)
    kind = (
        "comm_path_lost" if "critical" in text else "heartbeat_lost" if "heartbeat" in text else "daemon_died"
    )
    facts: dict[str, Any] = {"reporter": "mpirun", "problem": kind}
    for ln in hit.after(6, same_rank=False):
        n, p = _NODE.match(ln.text), _PNAME.match(ln.text)
        if n:
            facts["host"] = n.group("node")
        if p:
            facts["process_name"] = p.group("name")
    on = f" on {facts['host']}" if "host" in facts else ""
    what = {
        "comm_path_lost": f"mpirun lost its connection to a process{on} mid-run",
        "heartbeat_lost": f"mpirun stopped receiving the heartbeats of a process{on}",
        "daemon_died": "one of mpirun's node daemons died during the job (non-zero status)",
    }[kind]
    return [
        row.event(
            hit,
            f"{what}: that node went down or its network connection to the launching node failed; the node's "
            "own log (dmesg, the OOM killer, a reboot) says which",
            facts,
            tier=1 if kind == "daemon_died" else None,
            dedupe=(row.code, "mpi_lost", facts.get("host")),
        )
    ]


# [orterun:timeout] (orterun --timeout / MPIEXEC_TIMEOUT, 1.8-4.x; PRRTE's prun the same): "The user-provided
# time limit for job execution has been reached:" then "  Timeout: 600 seconds": mpirun killed the job at the
# user's limit, as a scheduler's time limit does (a consequence: why it ran so long is elsewhere, a hang).
_TIMEOUT = lazy_re.compile(r"\bThe user-provided time limit for job execution has been reached\b")
_SECS = lazy_re.compile(r"^\s*Timeout:\s*(\d+) seconds")


def _timeout(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"reporter": "mpirun", "reason": "time limit"}
    secs = next((t for t in (_SECS.match(ln.text) for ln in hit.after(3, same_rank=False)) if t), None)
    if secs:
        facts["timeout_s"] = int(secs.group(1))
    msg = "mpirun killed the job at the user's --timeout limit: why it ran so long is elsewhere"
    return [row.event(hit, msg, facts, tier=2, dedupe=(row.code, "mpi_timeout"))]


_MEM = lazy_re.compile(r"\bA process exceeded memory limits:")


def _mem(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"reporter": "mpirun", "killer": "orte_memory_sensor"}
    for ln in hit.after(5, same_rank=False):
        n, p = _NODE.match(ln.text), _PNAME.match(ln.text)
        if n:
            facts["host"] = n.group("node")
        if p:
            facts["process_name"] = p.group("name")
    on = f" on {facts['host']}" if "host" in facts else ""
    return [
        row.event(
            hit,
            f"Open MPI's runtime killed a process{on} over its memory limit: it used more host memory than "
            "the job allows",
            facts,
            dedupe=(row.code, "mpi_mem", facts.get("host")),
        )
    ]


_OPENIB = lazy_re.compile(
    r"\bThe InfiniBand retry count between two MPI processes has been|"
    r"\bThe OpenFabrics \"receiver not ready\" retry count on a (?P<rnr>per-peer|shared receive)|"
    r"\bThe OpenFabrics stack has reported a network error event"
)
_LOCAL = lazy_re.compile(r"^\s*Local (?P<k>host|device):\s*(?P<v>\S+)")
_PEER = lazy_re.compile(r"^\s*Peer host:\s*(?P<v>\S+)")
_EVENT = lazy_re.compile(r"^\s*Error number:\s*(?P<n>\d+)(?: \((?P<name>\w+)\))?")


def _openib(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    text = m.group(0)
    kind = "rnr_retry_exceeded" if m.group("rnr") else "retry_exceeded" if "retry" in text else "async_event"
    facts: dict[str, Any] = {"transport": "open_mpi_openib", "problem": kind}
    for ln in hit.after(30, same_rank=False):
        lo, pe, ev = _LOCAL.match(ln.text), _PEER.match(ln.text), _EVENT.match(ln.text)
        if lo:
            facts["host" if lo.group("k") == "host" else "ib_device"] = lo.group("v")
        elif pe:
            facts["peer_host"] = pe.group("v")
        elif ev:
            facts["ib_event"] = ev.group("name") or int(ev.group("n"))
    between = f" between {facts['host']} and {facts['peer_host']}" if "peer_host" in facts else ""
    what = {
        "retry_exceeded": f"InfiniBand's transport retry count was exceeded{between}",
        "rnr_retry_exceeded": f"InfiniBand's receiver-not-ready retry count was exceeded{between}",
        "async_event": "the OpenFabrics stack reported a network error event"
        + (f" ({facts['ib_event']})" if "ib_event" in facts else ""),
    }[kind]
    return [
        row.event(
            hit,
            f"Open MPI's openib transport: {what}: a link, switch port or adapter of the InfiniBand fabric "
            "failed, or the peer stopped answering (check ibstat / the subnet manager's logs for those "
            "hosts)",
            facts,
            dedupe=(row.code, "openib", kind),
        )
    ]


_UCX_LINK = lazy_re.compile(
    r"\bucx (?P<op>send|recv|bsend|msg recv) failed: (?P<why>Endpoint timeout|Connection reset by remote "
    r"peer|Endpoint is not connected|Destination is unreachable|Input/output error)\b"
)


def _ucx_link(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {
        "transport": "ucx",
        "op": m.group("op"),
        "error": m.group("why"),
        "peer_may_have_died": True,
    }
    return [
        row.event(
            hit,
            f"{hit.who()}: a UCX {m.group('op')} to a peer failed ({m.group('why')}): the transport to that "
            "rank broke (a link, a port, the fabric) or the peer process died first",
            facts,
            tier=1,
            dedupe=(row.code, "ucx_link"),
        )
    ]


SIGNATURES = (
    Signature(
        "ucx operation failed on the link to a peer",
        _UCX_LINK,
        _ucx_link,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(
            b"ucx send failed",
            b"ucx recv failed",
            b"ucx bsend failed",
            b"ucx msg recv failed",
        ),
        worth=(rb"ucx (?:send|recv|bsend|msg recv) failed: ",),
        words=("ucx send failed", "ucx recv failed", "ucx bsend failed", "ucx msg recv failed"),
    ),
    Signature(
        "prterun signal wrapped before its number",
        _PRTE_SIGNAL,
        _prte_signal,
        EXIT,
        tier=3,
        anchors=(b"noticed that process rank", b"noticed that job rank"),
        worth=(rb"noticed that (?:process|job) rank",),
        words=("noticed that",),
    ),
    Signature(
        "mpirun signal record cut before its number",
        _MPI_CUT,
        _mpi_cut,
        C.FATAL_SIGNAL.code,
        tier=3,
        anchors=(b"noticed that process rank", b"noticed that job rank"),
        worth=(rb"noticed that (?:process|job) rank",),
        words=("noticed that",),
    ),
    Signature(
        "prterun first failed process",
        _PRTE_EXIT,
        _prte_exit,
        EXIT,
        tier=3,
        anchors=(b"xit code",),
        worth=(rb"xit code",),
        words=("exit code",),
    ),
    Signature(
        "mpirun rank exited without finalize",
        _NO_SYNC,
        _no_sync,
        C.RANK_EXITED.code,
        tier=2,
        anchors=(b"has exited due to process rank",),
        words=("has exited due to process rank",),
    ),
    Signature(
        "mpirun lost a process or daemon",
        _LOST,
        _lost,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(
            b"critical communication path was lost",
            b"scheduled heartbeat communications",
            b"required daemon terminated during execution",
        ),
        words=(
            "critical communication path was lost",
            "scheduled heartbeat communications",
            "required daemon terminated during execution",
        ),
    ),
    Signature(
        "mpirun user time limit",
        _TIMEOUT,
        _timeout,
        C.RANK_EXITED.code,
        anchors=(b"time limit for job execution has been reached",),
        words=("time limit for job execution",),
    ),
    Signature(
        "mpirun memory sensor",
        _MEM,
        _mem,
        C.HOST_OOM_KILLED.code,
        anchors=(b"A process exceeded memory limits",),
        words=("a process exceeded memory limits",),
    ),
    Signature(
        "open mpi openib fabric error",
        _OPENIB,
        _openib,
        C.NCCL_IB_ERROR.code,
        anchors=(
            b"InfiniBand retry count between two MPI processes",
            b'"receiver not ready" retry count',
            b"OpenFabrics stack has reported a network error event",
        ),
        words=(
            "infiniband retry count between two mpi processes",
            '"receiver not ready" retry count',
            "openfabrics stack has reported a network error event",
        ),
    ),
)
parse = gated_reader(SIGNATURES)
