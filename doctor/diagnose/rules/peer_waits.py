"""Peers that never answered, and transports between ranks that broke, in stacks other than torch's c10d
(and a few torch/NCCL texts cut or joined by a paste).

Read at their sources:
- TensorFlow 1.x/2.x distributed runtime (core/distributed_runtime/master.cc, DeviceFinder::Wait, every
  kLoggingPeriodMs = 10 s): "I tensorflow/core/distributed_runtime/master.cc:221] CreateSession still
  waiting for response from worker: /job:ps/replica:0/task:0" (line 221 in 1.4, 267 in 1.12). A healthy
  start prints it until the task's server is up ("Start master session ..." follows); a log that ENDS in
  it is a task that never started or that the master cannot reach (ClusterSpec address, firewall, a pod
  not scheduled): RUN221 (tier 1). The same DeviceFinder's answer when a task's GetStatus failed
  (master.cc WhenFound, 1.0-2.x): "E tensorflow/core/distributed_runtime/master.cc:272] CreateSession failed
  because worker /job:worker/replica:0/task:1 returned error: Unavailable: OS Error" (absl's "UNAVAILABLE:
  ..." in 2.13+, "Deadline Exceeded" / "DEADLINE_EXCEEDED" where the wait ran out), and the master's own
  start "master.cc:269] Master init: Unavailable: OS Error": the cluster's tasks did not all meet at session
  creation (a worker started before its parameter servers, a task not up or unreachable at its ClusterSpec
  address): RUN221, the cause, ahead of the UnavailableError the coordinator reports next (grpc_transport's).
  MonitoredSession retries ("A new session will be created"): a log that then starts its master session
  ("Start master session ...") met after all and is silent.
- PaddlePaddle's wait_server_ready (fluid/transpiler/details/..., distributed/fleet/base/
  private_helper_function.py 1.x-2.6): "server not ready, wait 3 sec to retry..." then "not ready
  endpoints:['10.10.11.51:6070', ...]" every 3 s until every trainer endpoint accepts a connect. Also a
  healthy start's first lines; a log that ends in them is a trainer (another node's) that never
  listened: RUN221 (tier 1). Its TCP store (paddle/fluid/distributed/store/tcp_utils.cc 2.3+, phi/core/
  distributed/store/tcp_utils.cc 2.5+): "I1127 21:34:05 tcp_utils.cc:107] Retry to connect to
  0.1.68.146:63314 while the server is not yet listening." every few seconds: the same, for the master's
  store (a wrong master IP, a node that never started): RUN221 (tier 1) when the log ends in it.
- DMLC ps-lite's Manager::Run (src/manager.cc): "F0915 12:14:57 manager.cc:55] Timeout (500 sec) to wait
  all other nodes initialized. See commmets for more information": the scheduler never saw every worker /
  server register (DMLC_NUM_WORKER / DMLC_NUM_SERVER, DMLC_PS_ROOT_URI): RUN221.
- LightGBM's socket wrapper (src/network/socket_wrapper.hpp, 2.x-4.x): "[LightGBM] [Fatal] Socket recv
  error, code: 54" / "Socket send error, code: 104" (3.x+ POSIX: "Socket recv error, Connection reset by
  peer (code: 104)", Windows: "Socket send error (code: 10054)"), the
  errno of recv()/send() on the link to another machine (54 ECONNRESET on macOS, 104 on Linux, 10054
  WSAECONNRESET): a peer worker died or the network dropped the link: RUN174.
- Open MPI's UCX PML (ompi/mca/pml/ucx/pml_ucx.c, 3.x-5.x): "[host:pid] pml_ucx.c:419  Error:
  ucp_ep_create(proc=1) failed: Endpoint timeout" and "pml_ucx.c:472  Error: Failed to resolve UCX endpoint
  for rank 1": no UCX transport reached the peer rank (UCX_TLS / UCX_NET_DEVICES, a RoCE GID or the
  fabric): RUN174. UCX's own endpoint timeout (uct/ib/ud/base/ud_iface.c "UCX Fatal: transport error:
  Endpoint timeout"; ucp_worker.c "UCX  ERROR Error Endpoint timeout was not handled for ep 0x..."): the peer
  stopped answering on the fabric (it died, or the link / the UD path between them failed): RUN174.
- libfabric's EFA provider aborting on an error it has no event queue to report to (prov/efa/src/rxr/rxr.h
  efa_eq_write_error, 1.9-1.15; efa_base_ep / efa_rdm_ep in 1.16+): "Unable to write to EQ: Missing or
  unavailable event queue. err: Cannot allocate memory (-12) prov_errno: Cannot allocate memory (-12)
  ./prov/efa/src/rxr/rxr.h:683", under aws-ofi-nccl: the EFA transport failed (err names how: memory
  registration / queue resources for -12, an unreachable peer for -113): RUN173.
- NCCL 2.23+'s connect that failed, quoted without its ", retrying (n/34) ..." tail (misc/socket.cc
  socketPollConnect "connect to 10.0.0.2<43251> returned Connection refused"): RUN174, tier 1, dropped
  once the communicator comes up (net_texts.until_up).
- torch's C10D_NCCL_CHECK text with its newlines flattened by a paste ("NCCL error: .../NCCLUtils.hpp:268,
  NCCL version 2.22.3 ncclSystemError: System call (e.g. socket, malloc) or external library call failed
  or device error. Last error:"; ncclRemoteError "A call failed possibly due to a network error or a
  remote process exiting prematurely."): the ncclResult's own description mid-line (RUN171 / RUN172).
- OpenSSH's own failed login with the user and host it tried (sshconnect2.c, OpenSSH 7.x+: "root@worker-1.svc:
  Permission denied (publickey,password)."), as an MPI launcher (mpirun's rsh agent, Kubeflow's mpi-operator
  launcher pod, horovodrun) prints it for a worker it cannot log in to: the ranks there never started
  (RUN303). A git remote's "git@github.com: Permission denied (publickey)." is not a launch.
- ProcessGroupNCCL's watchdog record wrapped over two lines by a terminal or a quote: "WorkNCCL(SeqNum=1,
  OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000)" then "  ran for 721595 milliseconds before
  timing out" (ProcessGroupNCCL.cpp 1.13-2.x): RUN151.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import LINES_AFTER, UNTIL_UP, Event, Hit
from pgdoctor.diagnose.rules.nccl_detail import network_facts
from pgdoctor.diagnose.rules.net_texts import until_up
from pgdoctor.diagnose.rules.paste_session import job_lines_after
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge import nccl_version
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_TF_WAIT = lazy_re.compile(
    r"CreateSession still waiting for response from worker:\s*(?P<task>/job:[\w-]+/replica:\d+/task:\d+)"
)
_PADDLE_WAIT = lazy_re.compile(
    r"server not ready, wait \d+ sec to retry|not ready endpoints:\s*\[(?P<eps>[^\]]*)\]"
)
_PADDLE_STORE = lazy_re.compile(
    r"Retry to connect to (?P<peer>\S+?):(?P<port>\d+) while the server is not yet listening"
)
# The lines a waiting loop prints; a window of nothing else after the hit is a log that ended waiting.
_WAITING = lazy_re.compile(
    r"CreateSession still waiting for response|server not ready, wait \d+ sec|not ready endpoints:|"
    r"while the server is not yet listening|\bmaster not ready\s*$|Waiting peer start\.\.\."
)
# paddle.distributed.launch 2.3+ (launch/controllers/master.py sync_peers, collective.py run): a pod waits
# for the job's master ("Waiting peer start...", then "LAUNCH WARNING 2023-03-01 10:30:00,123 master not
# ready" every 5 s while the master's HTTP/etcd server does not answer), then for every pod to register
# ("Waiting peer ready...", and on elastic_timeout x10 "peer not ready Job: default, mode collective, replicas
# 2[2:2], elastic False" - 2.3-2.4 without "mode" - after which it gives up and exits).
_PADDLE_PEERS = lazy_re.compile(
    r"peer not ready Job: (?P<job>\S+?), (?:mode \w+, )?replicas (?P<rep>\d+)\[(?P<min>\d+):(?P<max>\d+)\]|"
    r"(?P<master>\bmaster not ready)\s*$"
)
_PSLITE = lazy_re.compile(r"Timeout \((?P<secs>\d+) sec\) to wait all other nodes initialized")
_LGBM = lazy_re.compile(
    r"Socket recv error(?:, code: |(?:, [^()\n]*?)?\s*\(code:\s*)(?P<rcode>-?\d+)|"
    r"Socket send error(?:, code: |(?:, [^()\n]*?)?\s*\(code:\s*)(?P<scode>-?\d+)"
)
_PML_UCX = lazy_re.compile(
    r"pml_ucx\.c:\d+\s+Error:\s*(?:ucp_ep_create\(proc=(?P<proc>\d+)\) failed:\s*(?P<why>[^\r\n]+?)\s*$|"
    r"Failed to resolve UCX endpoint for rank (?P<rank>\d+))"
)
_UCX_EP_TIMEOUT = lazy_re.compile(r"UCX\s+(?:Fatal:\s+transport error:|ERROR\s+Error)\s+Endpoint timeout")
_EFA_EQ = lazy_re.compile(
    r"Unable to write to EQ: [^.\n]*\.\s*err: (?P<err>[^(\n]+?)\s*\((?P<code>-?\d+)\)"
    r"(?:\s*prov_errno:\s*(?P<perr>[^(\n]*?)\s*\((?P<pcode>-?\d+)\))?"
)
_ERRNO = r"Connection refused|Connection timed out|No route to host|Network is unreachable"
_CONNECT_BARE = lazy_re.compile(
    r"(?P<fn>\w+): connect to (?P<peer>\S+) returned (?P<err>" + _ERRNO + r")\.?\s*$"
)
# Read from the start of each line (the match takes its leading blanks): the leftmost match of "\S.*?"
# began at a line's first non-space character anyway, and the groups are the same; from every
# non-space character, search was quadratic (3.7 s on a 10 KB line).
_RESULT_MID = lazy_re.compile(
    r"(?m)^[^\S\n]*\S.*?\b(?:(?P<sys>ncclSystemError: System call \(e\.g\. socket, malloc\))|"
    r"(?P<remote>ncclRemoteError: A call failed possibly due to a network error))"
)
_RAN_ALONE = lazy_re.compile(r"^\s*ran\s+for\s+(?P<ran>\d+) milliseconds before timing out")
_WORK_TAIL = lazy_re.compile(r"Work[NH]CCL\((?P<work>[^()]*(?:\([^()]*\)[^()]*)*)\)\s*$")
_SSH_LOGIN = lazy_re.compile(
    r"^\s*(?P<user>[\w.-]+)@(?P<host>[\w.-]+): Permission denied \((?P<methods>[\w,-]+)\)\.?\s*$"
)
_GIT = lazy_re.compile(r"git@|Could not read from remote repository|git clone|fatal: |github|gitlab")
_KV = lazy_re.compile(r"(\w+(?:\(ms\))?)=([^,\s)]+)")

# errno values recv()/send() report for a link the peer closed or reset (Linux, macOS/BSD, Windows).
_ERRNO_NAMES = {
    104: "ECONNRESET",
    54: "ECONNRESET",
    10054: "WSAECONNRESET",
    32: "EPIPE",
    110: "ETIMEDOUT",
    60: "ETIMEDOUT",
    10060: "WSAETIMEDOUT",
    111: "ECONNREFUSED",
    61: "ECONNREFUSED",
    113: "EHOSTUNREACH",
}


def _ended_waiting(hit: Hit) -> bool:
    """True when nothing but the waiting loop's own lines (or blank ones) follows the hit: the log
    ended while the job still waited for its peers (a shell or interpreter session the person pasted after it,
    `kubectl get pods`, is not the job going on)."""
    return all(not ln.text.strip() or _WAITING.search(ln.text) for ln in job_lines_after(hit, LINES_AFTER))


_TF_SESSION = lazy_re.compile(
    r"(?:Master init|CreateSession failed because worker (?P<task>/job:[\w-]+/replica:\d+/task:\d+) returned "
    r"error): (?P<status>Unavailable|UNAVAILABLE|Deadline Exceeded|DEADLINE_EXCEEDED|DeadlineExceeded):?"
    r"\s*(?P<msg>.*)"
)
_TF_SESSION_UP = lazy_re.compile(r"Start master session \w+")


def _tf_session(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if any(_TF_SESSION_UP.search(ln.text) for ln in hit.after(LINES_AFTER, same_rank=False)):
        return []  # MonitoredSession's retry met the cluster: the session started
    task = m.group("task") or "the cluster's tasks"
    status = f"{m.group('status')}: {m.group('msg').strip()}".rstrip(": ")
    return [
        row.event(
            hit,
            f"TensorFlow's master could not reach {task} when it created the session ({clip(status, 80)}): "
            "that task's server was not up yet (a worker started before its parameter servers) or is "
            "unreachable at its ClusterSpec address (wrong host:port, a firewall, a pod not scheduled)",
            {"framework": "tensorflow", "waiting_for": task, "grpc_error": status},
            dedupe=(row.code, "tf_createsession"),
        )
    ]


def _tf_wait(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _ended_waiting(hit):
        return []  # the task answered later (or something else happened): a healthy start's line
    task = m.group("task")
    facts: dict[str, Any] = {"framework": "tensorflow", "waiting_for": task}
    return [
        row.event(
            hit,
            f"TensorFlow's master is still waiting for {task} to answer CreateSession and the log ends "
            "there: that task's server never started or is unreachable at its ClusterSpec address "
            "(wrong host:port, a firewall, a pod not scheduled)",
            facts,
            dedupe=(row.code, "tf_createsession"),
        )
    ]


def _paddle_wait(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _ended_waiting(hit):
        return []
    facts: dict[str, Any] = {"framework": "paddle"}
    eps = m.group("eps")
    if eps is None:
        for ln in hit.after(3, same_rank=False):
            m2 = _PADDLE_WAIT.search(ln.text)
            if m2 and m2.group("eps") is not None:
                eps = m2.group("eps")
                break
    if eps:
        facts["endpoints"] = clip(eps.replace("'", "").strip(), 200)
    where = f" ({facts['endpoints']})" if "endpoints" in facts else ""
    return [
        row.event(
            hit,
            f"Paddle's launcher kept waiting for trainer endpoints that never accepted a connection{where} "
            "and the log ends there: those trainers never started or their node is unreachable on those "
            "ports",
            facts,
            dedupe=(row.code, "paddle_wait_server_ready"),
        )
    ]


def _paddle_store(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    peer, port = m.group("peer"), m.group("port")
    # The retrying process is the one that must connect: tcp_connect prints "Successfully connected to
    # h:p" (VLOG(0), the retry's own level) once it does. A paste of two nodes shows the master's own client
    # connected to the same h:p while the other node still retries (yeyupiaoling/PPASR#142), so the glog
    # thread id names whose success settles this wait; without the glog prefix, any success to that h:p.
    tid = _GLOG_TID.match(hit.text)
    until = f" {tid.group(1)} tcp_utils.cc:" if tid else f"connected to {peer}:{port}"
    if not (_ended_waiting(hit) or (tid and _other_connected(hit, f"connected to {peer}:{port}", until))):
        return []  # the job went on (a healthy start's line): only another process is seen connected
    facts: dict[str, Any] = {"framework": "paddle", "host": peer, "port": int(port), UNTIL_UP: until}
    return [
        row.event(
            hit,
            f"Paddle's TCP store kept retrying {peer}:{port}, where no server listens, and never "
            "connected: the master's address is wrong (a bad interface IP, 127.0.1.1 from /etc/hosts) or "
            "the master never started",
            facts,
            dedupe=(row.code, "paddle_tcp_store"),
        )
    ]


def _other_connected(hit: Hit, to: str, own: str) -> bool:
    """Whether another process's client is seen connecting to the same store after the hit (a second
    node's log pasted below) and this one's is not."""
    ups = [ln.text for ln in hit.after(LINES_AFTER, same_rank=False) if to in ln.text]
    return bool(ups) and not any(own in text for text in ups)


# glog's prefix: level and date, time, thread id, file ("I0224 13:50:30.278173 1512912 tcp_utils.cc:107] ")
_GLOG_TID = lazy_re.compile(r"\s*[IWEF]\d{4} [\d:.]+\s+(\d+) tcp_utils\.cc:")


def _paddle_peers(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "paddle", "launcher": "paddle.distributed.launch"}
    if m.group("master"):
        if not _ended_waiting(hit):
            return []  # the master answered later: a pod that started first
        facts["waiting_for"] = "master"
        what = (
            "paddle.distributed.launch kept waiting for the job's master (--master, the first of --ips) and "
            "the log ends there: the master pod never started, or its address/port is wrong or blocked"
        )
    else:
        facts.update(waiting_for="peers", job=m.group("job"), replicas=int(m.group("rep")))
        what = (
            f"paddle.distributed.launch gave up waiting for the pods of job {m.group('job')} "
            f"({m.group('min')} to {m.group('max')} expected): a node never started its launcher, uses "
            "another --job_id/--master, or cannot reach the master"
        )
    return [row.event(hit, what, facts, dedupe=(row.code, "paddle_launch_peers"))]


def _pslite(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    secs = int(m.group("secs"))
    return [
        row.event(
            hit,
            f"ps-lite's scheduler waited {secs} s for every worker and server to register and timed out: "
            "a node never started or cannot reach DMLC_PS_ROOT_URI:DMLC_PS_ROOT_PORT",
            {"framework": "ps-lite", "timeout_s": secs},
            dedupe=(row.code, "pslite"),
        )
    ]


def _lgbm(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    op = "recv" if m.group("rcode") is not None else "send"
    code = int(m.group("rcode") if op == "recv" else m.group("scode"))
    facts: dict[str, Any] = {"framework": "lightgbm", "socket_op": op, "errno": code}
    name = _ERRNO_NAMES.get(code)
    if name:
        facts["errno_name"] = name
    named = f" {code} ({name})" if name else f" {code}"
    return [
        row.event(
            hit,
            f"LightGBM's socket {op} to another machine failed with errno{named}: a peer worker "
            "died (its own log holds why) or the network between the machines dropped the link",
            facts,
            dedupe=(row.code, "lightgbm_socket"),
        )
    ]


def _pml_ucx(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    rank = m.group("proc") or m.group("rank")
    facts: dict[str, Any] = {"transport": "ucx", "peer_rank": int(rank)}
    if m.group("why"):
        facts["error"] = clip(m.group("why"), 80)
    why = f" ({facts['error']})" if "error" in facts else ""
    return [
        row.event(
            hit,
            f"Open MPI's UCX layer could not reach rank {rank}{why}: no UCX transport spans the nodes "
            "(UCX_TLS / UCX_NET_DEVICES, the RoCE GID index, or the fabric between them)",
            facts,
            dedupe=(row.code, "pml_ucx"),
        )
    ]


def _ucx_timeout(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "UCX timed out an endpoint: the peer process stopped answering on the fabric (it died - its own "
            "log holds why - or the InfiniBand/RoCE path between the nodes failed)",
            {"transport": "ucx", "error": "Endpoint timeout"},
            dedupe=(row.code, "ucx_ep_timeout"),
        )
    ]


def _efa_eq(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = m.group("err").strip()
    facts: dict[str, Any] = {
        "library": "libfabric",
        "provider": "efa",
        "error": err,
        "errno": int(m.group("code")),
    }
    if m.group("pcode") is not None:
        facts["prov_errno"] = int(m.group("pcode"))
    hint = (
        ": the provider ran out of memory registrations or queue resources (locked memory, huge pages)"
        if abs(int(m.group("code"))) == 12
        else ""
    )
    return [
        row.event(
            hit,
            f"libfabric's EFA provider hit an error it could not report ({err}){hint}; the OFI network under "
            "NCCL failed",
            facts,
            dedupe=(row.code, "efa_eq"),
        )
    ]


def _connect_bare(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    pending = until_up(hit)
    if pending is None:
        return []
    facts: dict[str, Any] = {"socket_error": m.group("err"), **pending}
    facts.update(network_facts(f"to {m.group('peer')}"))
    return [
        row.event(
            hit,
            f"NCCL's connect to {m.group('peer')} failed ({m.group('err')}): the peer never listened there "
            "(it died or is still starting) or the interface NCCL chose cannot reach it",
            facts,
            dedupe=(row.code, "nccl_connect_bare"),
        )
    ]


def _result_mid(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"nccl_error": "ncclRemoteError" if m.group("remote") else "ncclSystemError"}
    v = nccl_version.find(hit.text)
    if v:
        facts.update(v.facts())
    if m.group("remote"):
        return [
            row.event(
                hit,
                "NCCL reported a remote error: a peer process exited or the network between the ranks failed",
                facts,
                code=C.NCCL_REMOTE_ERROR.code,
                dedupe=(C.NCCL_REMOTE_ERROR.code, "mid"),
            )
        ]
    return [
        row.event(
            hit,
            "NCCL unhandled system error (a socket, memory or device call failed)",
            facts,
            dedupe=(row.code, "mid"),
        )
    ]


def _ran_alone(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    prev = [ln for ln in hit.before(2, same_rank=False) if ln.text.strip()]
    if not prev:
        return None
    w = _WORK_TAIL.search(prev[-1].text)
    if not w:
        return None
    kv = dict(_KV.findall(w.group("work")))
    facts: dict[str, Any] = {"ran_ms": int(m.group("ran"))}
    for key, name in (("SeqNum", "seq"), ("OpType", "op"), ("Timeout(ms)", "timeout_ms")):
        if key in kv:
            val = kv[key]
            facts[name] = int(val) if val.lstrip("-").isdigit() else val
    op = f" {facts['op']}" if "op" in facts else ""
    seq = f" (SeqNum {facts['seq']})" if "seq" in facts else ""
    return [
        row.event(
            hit,
            f"a collective{op}{seq} ran for {facts['ran_ms']} ms and the NCCL watchdog timed it out: a rank "
            "stopped calling collectives or is stuck (its own log holds why)",
            facts,
            lines=[prev[-1], hit.line],
            dedupe=(row.code, "ran_alone"),
        )
    ]


def _ssh_login(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    near = [*hit.before(20, same_rank=False), hit.line, *hit.after(20, same_rank=False)]
    if m.group("user") == "git" or any(_GIT.search(ln.text) for ln in near):
        return None
    host = m.group("host")
    facts: dict[str, Any] = {
        "launcher": "ssh",
        "host": host,
        "error": f"Permission denied ({m.group('methods')})",
    }
    return [
        row.event(
            hit,
            f"the launcher's ssh login as {m.group('user')} to {host} was refused (Permission denied "
            f"({m.group('methods')})): passwordless ssh to that node is not set up (its key is not in "
            "authorized_keys or the ssh secret is not mounted), so its ranks never started",
            facts,
            dedupe=(row.code, host),
        )
    ]


SIGNATURES = (
    Signature(
        "tf createsession still waiting",
        _TF_WAIT,
        _tf_wait,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=1,
        anchors=(b"CreateSession still waiting",),
        worth=(rb"CreateSession still waiting",),
        words=("createsession still waiting",),
    ),
    Signature(
        "tf session creation failed",
        _TF_SESSION,
        _tf_session,
        C.RENDEZVOUS_TIMEOUT.code,
        anchors=(b"CreateSession failed because worker", b"Master init"),
        words=("createsession failed", "master init:"),
    ),
    Signature(
        "paddle server not ready",
        _PADDLE_WAIT,
        _paddle_wait,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=1,
        anchors=(b"server not ready, wait", b"not ready endpoints:"),
        worth=(rb"server not ready, wait", rb"not ready endpoints:"),
        words=("server not ready", "not ready endpoints"),
    ),
    Signature(
        "paddle tcp store retry",
        _PADDLE_STORE,
        _paddle_store,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=1,
        anchors=(b"while the server is not yet listening",),
        worth=(rb"while the server is not yet listening",),
        words=("while the server is not yet listening",),
    ),
    Signature(
        "paddle launch peers not ready",
        _PADDLE_PEERS,
        _paddle_peers,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=1,
        anchors=(b"peer not ready Job:", b"master not ready"),
        worth=(rb"peer not ready Job:", rb"master not ready"),
        words=("peer not ready job:", "master not ready"),
    ),
    Signature(
        "ps-lite nodes not initialized",
        _PSLITE,
        _pslite,
        C.RENDEZVOUS_TIMEOUT.code,
        anchors=(b"to wait all other nodes initialized",),
        worth=(rb"to wait all other nodes initialized",),
        words=("to wait all other nodes initialized",),
    ),
    Signature(
        "lightgbm socket error",
        _LGBM,
        _lgbm,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"Socket recv error", b"Socket send error"),
        worth=(rb"Socket (?:recv|send) error",),
        words=("socket recv error", "socket send error"),
    ),
    Signature(
        "open mpi pml_ucx endpoint",
        _PML_UCX,
        _pml_ucx,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"pml_ucx.c:",),
        worth=(rb"pml_ucx\.c:\d+",),
        words=("pml_ucx.c:",),
    ),
    Signature(
        "ucx endpoint timeout",
        _UCX_EP_TIMEOUT,
        _ucx_timeout,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"Endpoint timeout",),
        worth=(rb"UCX\s+(?:Fatal|ERROR)",),
        words=("endpoint timeout",),
    ),
    Signature(
        "libfabric efa eq write error",
        _EFA_EQ,
        _efa_eq,
        C.NCCL_IB_ERROR.code,
        anchors=(b"Unable to write to EQ",),
        worth=(rb"Unable to write to EQ",),
        words=("unable to write to eq",),
    ),
    Signature(
        "nccl connect failed without retry tail",
        _CONNECT_BARE,
        _connect_bare,
        C.NCCL_SOCKET_ERROR.code,
        tier=1,
        anchors=(b": connect to ",),
        worth=(rb": connect to \S+ returned",),
        words=(": connect to ",),
    ),
    Signature(
        "ncclResult description mid-line",
        _RESULT_MID,
        _result_mid,
        C.NCCL_SYSTEM_ERROR.code,
        anchors=(b"ncclSystemError: System call", b"ncclRemoteError: A call failed"),
        worth=(rb"ncclSystemError: System call", rb"ncclRemoteError: A call failed"),
        words=("ncclsystemerror: system call", "ncclremoteerror: a call failed"),
    ),
    Signature(
        "ssh login refused user@host",
        _SSH_LOGIN,
        _ssh_login,
        C.REMOTE_LAUNCH_FAILED.code,
        anchors=(b": Permission denied (",),
        worth=(rb"@[\w.-]+: Permission denied \(",),
        words=(": permission denied (",),
    ),
    Signature(
        "watchdog record wrapped before ran for",
        _RAN_ALONE,
        _ran_alone,
        C.WATCHDOG_TIMEOUT.code,
        anchors=(b"milliseconds before timing out",),
        worth=(rb"ran\s+for\s+\d+\s+milliseconds\s+before\s+timing\s+out",),
        words=("milliseconds before timing out",),
    ),
)
parse = gated_reader(SIGNATURES)
