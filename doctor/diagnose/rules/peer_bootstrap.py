"""rendezvous of the other stacks a distributed job may run on: the nodes could not find, bind or reach one
another before any collective, in a layer that is not torch's store.

Formats: ps-lite's van (dmlc/ps-lite src/van.cc, zmq_van.h; the dist kvstore of MXNet, BytePS), a glog CHECK
raised through the framework ("mxnet.base.MXNetError: [13:30:33] src/van.cc:63: Check failed: !ip.empty()
failed to get ip", "... failed to get the interface", "... failed to get a port", "... bind failed",
zmq_van.h's "connect to tcp://10.0.0.1:9091 failed: Connection refused") and dmlc's "Check notnull:
Environment::Get()->find("DMLC_PS_ROOT_URI")" for a scheduler address never set; a C++ server's own bind
check (Paddle's pserver, LightNetwork.cpp: "F1027 16:29:05.697548 5717 LightNetwork.cpp:194] Check failed:
bind(socket_, (struct sockaddr *)&serv_addr, sizeof(serv_addr)) >= 0 ERROR on binding 10.76.78.44"); PCCL's
status raised by its Python binding ("pcclConnect failed with error: MASTER_CONNECTION_FAILED: ...");
Paddle's exchange of the NCCL/BKCL unique id (platform/gen_comm_id_helper.cc, 2.0+): its retry record
"connect addr=10.0.0.1:6170 failed 3 times with reason: Connection refused retry after 1.5 seconds" (a step,
unless the log ends in it), the raise after 900 s "(Unavailable) connect addr=10.0.0.1:6170 timeout, failed
reason: Connection refused" / "bind addr=... timeout, failed reason: Address already in use", "Fail to get
host by name node-2.", "The endpoint should contain host and port, but got node-2.".

Ray's cluster store, the GCS on the head node (src/ray/rpc/gcs/gcs_rpc_client.h, rpc_client.h, Ray 2.x;
python/ray/_private/services.py): "[2024-03-01 22:48:01,851 E 6578 6578] gcs_rpc_client.h:151: Failed to
connect to GCS at address 10.0.0.1:6379 within 5 seconds.", Python's "Failed to connect to GCS at
address=...", "Timed out while waiting for GCS to become available." - a worker or driver that cannot reach
the head (not started, a wrong address, a port blocked: RUN222, tier 1, since its client retries and a W
record of it is followed by the connection on a healthy start) - and ray.init's "ConnectionError: Could not
find any running Ray instance. Please specify the one to connect to by setting `--address` flag or
`RAY_ADDRESS` environment variable." (older "by setting `address`"): no head to join and no address given
(RUN224).

Ray 1.x's GCS client giving up ("Couldn't reconnect to GCS server. The last attempted GCS server address was
10.42.0.44:43507", a fatal record), services.py's "Unable to connect to GCS at ..." and the Redis era's
"Unable to connect to Redis at ... after 12 retries" are the same head out of reach (RUN222), and so are
2.5+'s "Unable to connect to GCS (ray head) at ..." and Ray Client's "ConnectionError: ray client connection
timeout" (after its "UserWarning: Ray Client connection timed out. Ensure that the Ray Client port ...": ray://
addresses, the head's client server port 10001). Dask's connect
to its scheduler (distributed/comm/core.py: "Timed out trying to connect to 'tcp://10.0.0.5:8786' after 10 s:
...", "Timed out during handshake while connecting to ...", comm/tcp.py's "in <TCPConnector object at 0x..>:
ConnectionRefusedError: ...") is RUN222 too. A raised resolver error with no store words beside it and no
download around it ("socket.gaierror: [Errno -2] Name or service not known" at the end of getaddrinfo's
frames) is a node's or the master's name that does not resolve (RUN222, tier 1; store_errors reads it when the
store is named).

A port that the node's own server cannot bind is RUN223 (most often another job holds it; glog's check does
not say the errno); an address it cannot find or a master it cannot reach is RUN222; a variable of the
launcher never set is RUN224. These are the first things such a job does: there is no earlier failure to
yield to.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.paste_session import job_lines_after
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_VAN = lazy_re.compile(
    r"(?P<src>\w*van\.(?:cc|h)):\d+:? Check failed: [^\n]*?"
    r"(?P<what>failed to get the interface|failed to get ip|failed to get a port|bind failed|"
    r"connect to (?P<addr>\S+) failed(?::[^\n]*)?)"
)
_VAN_ENV = lazy_re.compile(
    r"Check notnull:\s*Environment::Get\(\)->find\(\"(?P<var>(?:DMLC|PS|BYTEPS)_\w+)\"\)"
)


def _van(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    what = m.group("what")
    facts: dict[str, Any] = {"framework": "ps-lite", "problem": clip(what, 120)}
    if what == "bind failed" or what == "failed to get a port":
        return [
            row.event(
                hit,
                f"the ps-lite node could not take a port for its van ({what}): another process holds the "
                "port (PORT / DMLC_PS_ROOT_PORT) or none is free",
                facts,
                code=C.ADDRESS_IN_USE.code,
                dedupe=(C.ADDRESS_IN_USE.code, "van"),
            )
        ]
    if m.group("addr"):
        facts["address"] = m.group("addr")
        msg = (
            f"the ps-lite node could not connect to {m.group('addr')}: the scheduler (DMLC_PS_ROOT_URI:"
            "DMLC_PS_ROOT_PORT) or the peer is not up, the address is wrong, or a firewall drops it"
        )
    else:
        msg = (
            f"the ps-lite node could not find an address of its own to announce ({what}): set DMLC_INTERFACE "
            "(or DMLC_NODE_HOST) to the interface the nodes reach each other on"
        )
    return [row.event(hit, msg, facts, dedupe=(row.code, "van"))]


def _van_env(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    var = m.group("var")
    return [
        row.event(
            hit,
            f"the ps-lite node was started without {var} (the launcher of the dist kvstore sets it): it "
            "cannot find its scheduler",
            {
                "framework": "ps-lite",
                "missing_variable": var,
                "problem": f"environment variable {var} not set",
            },
            dedupe=(row.code, "van_env"),
        )
    ]


# A C/C++ server's check of its own bind() (glog's "Check failed: bind(...) >= 0", the sockets tutorial's
# "ERROR on binding"), as Paddle's pserver prints it.
_BIND_CHECK = lazy_re.compile(r"Check failed: (?:::)?bind\(|ERROR on binding\b ?(?P<addr>[\w.:\[\]-]*)")


def _bind_check(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    addr = re.search(r"ERROR on binding ([\w.:\[\]-]+)", hit.text)
    facts: dict[str, Any] = {"problem": "bind failed"}
    if addr:
        facts["address"] = addr.group(1)
    at = f" on {addr.group(1)}" if addr else ""
    return [
        row.event(
            hit,
            f"{hit.who()}: the node's server could not bind its port{at} (the check does not print the "
            "errno: most often another job on the node holds the port, else the address is not this host's)",
            facts,
            dedupe=(row.code, "bind_check"),
        )
    ]


# PCCL's Python binding raises the C API's status: "pcclConnect failed with error: MASTER_CONNECTION_FAILED".
_PCCL = lazy_re.compile(
    r"(?P<call>pccl\w+) failed with error: (?P<status>MASTER_CONNECTION_FAILED|RANK_CONNECTION_FAILED)"
)


def _pccl(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    call, status = m.group("call"), m.group("status")
    if status == "RANK_CONNECTION_FAILED" and call != "pcclConnect":
        return None  # a peer lost later (a topology update) is the network's, not the meeting's
    who = "its master node" if status == "MASTER_CONNECTION_FAILED" else "the other peers"
    return [
        row.event(
            hit,
            f"PCCL could not connect to {who} ({call}: {status}): the master's address or port is wrong, the "
            "master is not running, or the port is not reachable from this node",
            {"framework": "pccl", "pccl_call": call, "pccl_status": status},
            dedupe=(row.code, "pccl"),
        )
    ]


_PADDLE_ID = lazy_re.compile(
    r"(?P<op>connect|bind) addr=(?P<ep>\S+?) "
    r"(?:(?P<timeout>timeout, failed reason: )|failed (?P<n>\d+) times with reason: )"
    r"(?P<why>[^\n]*?)(?: retry after [\d.]+ seconds)?\s*(?:\[Hint:|$)"
)
_PADDLE_HOST = lazy_re.compile(r"Fail to get host by name (?P<host>[^\s.]+(?:\.[^\s.]+)*)\.?")
_PADDLE_EP = lazy_re.compile(r"The endpoint should contain host and port, but got (?P<ep>\S*?)\.?\s*(?:\[|$)")
# paddle.distributed.fleet.launch_utils (get_cluster, 1.8-2.6; also its parameter-server launcher) asserts
# this host is in --ips: "AssertionError: Can't find your local ip {10.0.0.5} in node_ips: {['10.0.0.1',
# ...]}" - the node list names another address of this host (another interface) or forgets it.
_PADDLE_IP = lazy_re.compile(
    r"Can't find your local ip \{(?P<ip>[^{}]*)\} in (?P<where>node_ips|args\.servers)"
)


# paddle.distributed.launch's teardown after a trainer exited (launch_utils.py 2.0-2.x): "terminate all the
# procs", "ABORT!!! Out of all 4 trainers, the trainer process with rank=[1, 2, 3] was aborted. Please check
# its log."; the 2.3+ launcher (launch/controllers/controller.py): "Pod failed", "Container failed !!!", the
# container's line, "---- ERROR LOG DETAIL ----" (the failed trainer's log tail follows it), "Exit code 1",
# "Terminating with signal 15" - the run did not go on past the retries; it ended in them.
_PADDLE_TEARDOWN = lazy_re.compile(
    r"terminate all the procs|ABORT!!! Out of all \d+ trainers|launch_utils\.py|"
    r"LAUNCH (?:INFO|ERROR|WARNING)|Pod (?:failed|FAILED)|Container failed !!!|ERROR LOG DETAIL|"
    r"Container rank \d+ status|Exit code -?\d+|"
    r"(?:Terminating|Exit) with signal \d+|Force quit in \d+ seconds"
)


def _paddle_id(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    op, ep, why = m.group("op"), m.group("ep"), m.group("why").strip()
    facts: dict[str, Any] = {"framework": "paddle", "endpoint": ep, "error": clip(why, 80)}
    tier = None
    if not m.group("timeout"):
        # the retry record: the run went on (the peer came up) unless the log ends in these records
        later = [ln.text for ln in job_lines_after(hit, 30, same_rank=True) if ln.text.strip()]
        if any(not _PADDLE_ID.search(t) and not _PADDLE_TEARDOWN.search(t) for t in later):
            return []
        tier = 1
    in_use = op == "bind" or "already in use" in why
    code = C.ADDRESS_IN_USE.code if in_use else C.STORE_UNREACHABLE.code
    what = (
        f"Paddle's trainer could not bind {ep} to hand out the communicator id ({why})"
        if op == "bind"
        else f"Paddle's trainer could not connect to {ep} to get the communicator id ({why}): that trainer "
        "is not up, or the endpoint list (PADDLE_TRAINER_ENDPOINTS) is wrong"
    )
    return [row.event(hit, what, facts, code=code, tier=tier, dedupe=(code, "paddle_id"))]


# Paddle 1.x-2.0's dygraph NCCL context (imperative/nccl_context.cc, before gen_comm_id_helper.cc): trainer 0
# connects to every other trainer's endpoint to send the NCCL id, logging "Socket connect worker
# 127.0.0.1:52199 failed, try again after 3 seconds." per try. A run that ends in it (or in the launcher's
# teardown) never reached that trainer.
# The same record quoted without its tail ("... failed" ending a line or a title) reads the same.
_PADDLE_WORKER = lazy_re.compile(r"Socket connect worker (?P<ep>\S+?) failed(?:, try again after|\.?\s*$)")


def _paddle_worker(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    later = [ln.text for ln in job_lines_after(hit, 30, same_rank=True) if ln.text.strip()]
    if any(not _PADDLE_WORKER.search(t) and not _PADDLE_TEARDOWN.search(t) for t in later):
        return []  # the peer came up: the run went on past the retries
    ep = m.group("ep")
    return [
        row.event(
            hit,
            f"Paddle's trainer 0 could not connect to trainer endpoint {ep} to send the NCCL id, and the run "
            "ended in its retries: that trainer is not up (it died first: read its workerlog) or the "
            "endpoint list (PADDLE_TRAINER_ENDPOINTS, --ips) is wrong",
            {"framework": "paddle", "endpoint": ep, "error": "connect failed"},
            tier=1,
            dedupe=(row.code, "paddle_id"),
        )
    ]


def _paddle_host(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    host = m.group("host")
    return [
        row.event(
            hit,
            f"Paddle's trainer could not resolve {host}, a host of its endpoint list "
            "(PADDLE_TRAINER_ENDPOINTS)",
            {"framework": "paddle", "host": host, "error": "name resolution"},
            dedupe=(row.code, "paddle_host"),
        )
    ]


def _paddle_ep(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    ep = m.group("ep")
    return [
        row.event(
            hit,
            f"Paddle's endpoint '{ep}' has no port: the trainer endpoints (PADDLE_TRAINER_ENDPOINTS / "
            "--ips) are malformed",
            {"framework": "paddle", "endpoint": ep, "problem": "endpoint without port"},
            code=C.RENDEZVOUS_CONFIG.code,
            dedupe=(C.RENDEZVOUS_CONFIG.code, "paddle_ep"),
        )
    ]


def _paddle_ip(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    ip = m.group("ip")
    return [
        row.event(
            hit,
            f"paddle.distributed.launch found this host's address {ip} nowhere in --ips: the node list names "
            "another interface's address of this host, or leaves it out (set --ips to the addresses the "
            "nodes reach each other on, or POD_IP)",
            {"framework": "paddle", "host": ip, "problem": "local ip not in --ips"},
            dedupe=(row.code, "paddle_ip"),
        )
    ]


_RAY_GCS = lazy_re.compile(
    r"Failed to connect to GCS(?: at address[= ]?(?P<addr>[\w.:\[\]-]+))?(?: within (?P<s>\d+) seconds)?|"
    r"(?P<wait>Timed out while waiting for GCS to become available)|"
    r"(?P<none>Could not find any running Ray instance)|"
    # Ray 1.x's GCS client (service_based_gcs_client.cc ReconnectGcsServer, RAY_LOG(FATAL), a "C" record
    # and a glog stack after it): "Couldn't reconnect to GCS server. The last attempted GCS server address
    # was 10.42.0.44:43507" - its pings of the address it was given ran out of retries.
    r"Couldn't reconnect to GCS server\.?(?: The last attempted GCS server address was "
    r"(?P<addr2>[\w.:\[\]-]+))?|"
    # python/ray/_private/services.py (1.11+, `ray start --address` / ray.init): "Unable to connect to GCS at
    # 10.0.0.1:6379. Check that (1) Ray GCS with matching version started successfully at the specified
    # address, and (2) there is no firewall setting preventing access."; before the GCS held the cluster
    # table (Ray <= 1.10, Redis on the head): "Unable to connect to Redis at 10.0.0.1:6379 after 12 retries."
    # (Redis only with its retries: other programs' Redis clients say "Unable to connect to Redis" too)
    # 2.5+ (_private/utils.py): "Unable to connect to GCS (ray head) at 172.17.0.2:6379. Check that (1) Ray
    # with matching version started successfully at the specified address, (2) this node can reach ...".
    # Ray Client (util/client/worker.py, 1.x-2.x) out of retries on the head's client port (ray://h:10001):
    # "UserWarning: Ray Client connection timed out. Ensure that the Ray Client port on the head node is
    # reachable from your local machine." then "ConnectionError: ray client connection timeout".
    r"(?P<client>ConnectionError: ray client connection timeout\s*$|"
    r"Ray Client connection timed out\. Ensure that the Ray Client port)|"
    r"Unable to connect to (?:GCS (?:\(ray head\) )?at (?P<addr3>[\w.:\[\]-]+)|"
    r"Redis at (?P<addr4>[\w.:\[\]-]+) after \d+ retries)"
)
# The driver or worker joined after all: Ray's own records of a connected node, or the run's progress.
_RAY_UP = lazy_re.compile(
    r"Connected to (?:Ray cluster|GCS)|Started a local Ray instance|Ray runtime started|"
    r"Started training worker group|\b[Ee]poch\b|\bstep\b|\bloss\b"
)


def _ray_gcs(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("none"):
        return [
            row.event(
                hit,
                "ray.init found no running Ray cluster to join and was given no address: start the head "
                "(`ray start --head`) first, or pass address= / RAY_ADDRESS of the head's GCS",
                {"framework": "ray", "problem": "ray_no_cluster"},
                code=C.RENDEZVOUS_CONFIG.code,
                tier=0,
                dedupe=(C.RENDEZVOUS_CONFIG.code, "ray_no_cluster"),
            )
        ]
    if any(_RAY_UP.search(ln.text) for ln in hit.after(80, same_rank=False)):
        return []  # a retry on the way to a connection that came up
    facts: dict[str, Any] = {"framework": "ray", "problem": "ray_gcs_unreachable"}
    if m.group("client"):
        facts["problem"] = "ray_client_unreachable"
    addr = m.group("addr") or m.group("addr2") or m.group("addr3") or m.group("addr4")
    if addr:
        facts["address"] = addr.rstrip(".")
    at = f" at {facts['address']}" if "address" in facts else ""
    return [
        row.event(
            hit,
            f"this Ray node could not reach the cluster's GCS{at}: the head is not running (or died), the "
            "address or port is wrong, or a firewall blocks it",
            facts,
            dedupe=(row.code, "ray_gcs"),
        )
    ]


# Dask distributed's connect (distributed/comm/core.py connect()): the client, a worker or its nanny reaching
# the scheduler (or a peer) within distributed.comm.timeouts.connect. <= 2.x "OSError: Timed out trying to
# connect to 'tcp://172.17.0.4:8786' after 10 s: in <distributed.comm.tcp.TCPConnector object at
# 0x7f87a4569da0>: ConnectionRefusedError: [Errno 111] Connection refused" (the last error after it; 1.2x
# "...: connect() didn't finish in time"), 2021+ "OSError: Timed out trying to connect to tcp://10.0.0.5:8786
# after 30 s" (the error chained above it), "Timed out during handshake while connecting to
# tcp://10.0.0.5:8786 after 10 s"; the TCP connector's own raise (comm/tcp.py convert_stream_closed_error)
# "CommClosedError: in <TCPConnector object at 0x..>: ConnectionRefusedError: [Errno 111] Connection refused".
# A connect to the scheduler (its port 8786, or the client's or a worker's start-up beside it) is the
# cluster's meeting; a connect to another worker's address in the middle of a run is the echo of that worker's
# death (tier 1).
_DASK_CONNECT = lazy_re.compile(
    r"Timed out (?:trying to connect to|during handshake while connecting to) '?"
    r"(?P<addr>(?:tcp|tls|ucx|ws|wss|inproc)://[^\s',]+)'? after (?P<s>[\d.]+) ?s\b(?::\s*(?P<why>.*))?|"
    # (the error after it may be cut onto a line of its own)
    r"in <(?:distributed\.comm\.\w+\.)?TCPConnector object at 0x[0-9a-fA-F]+>:?(?:\s*(?P<err>\w+(?:Error|"
    r"Exception)\b.*))?"
)
_DASK_START = lazy_re.compile(
    r"scheduler|Client\(|dask[-_ ]worker|Waiting to connect to|LocalCluster|distributed\.client\b", re.I
)


def _dask_connect(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    addr = m.group("addr")
    why = (m.group("why") or m.group("err") or "").strip()
    facts: dict[str, Any] = {"framework": "dask", "problem": "dask_connect"}
    if addr:
        facts["address"] = addr.rstrip(".")
        facts["connect_timeout_s"] = float(m.group("s"))
    if why:
        facts["error"] = clip(why, 200)
    port = re.search(r":(\d+)$", facts.get("address", ""))
    near = [hit.text, *(ln.text for ln in hit.before(24, same_rank=False)), *(ln.text for ln in hit.after(8))]
    scheduler = bool(port and port.group(1) == "8786") or any(_DASK_START.search(t) for t in near)
    at = f" at {facts['address']}" if addr else ""
    said = f" ({clip(why, 100)})" if why else ""
    if scheduler:
        msg = (
            f"Dask could not connect to its scheduler{at}{said}: the scheduler is not running (or not yet), "
            "the address or port is wrong, or a firewall blocks it"
        )
    else:
        msg = (
            f"Dask could not connect to a peer{at}{said}: the scheduler or the worker at that address is not "
            "running (it died, or never started), or the network between them blocks it"
        )
    return [row.event(hit, msg, facts, tier=0 if scheduler else 1, dedupe=(row.code, "dask_connect"))]


# A download or another service's client around the lookup: its host is not the job's (urllib3's
# NameResolutionError "Failed to resolve 'huggingface.co'", requests' "Max retries exceeded with url", pip).
_OTHER_HOST = lazy_re.compile(
    r"https?://|HTTPS?Connection|requests\.|urllib|aiohttp|httpx|huggingface|hf_hub|snapshot_download|"
    r"download|\bpip\b|wandb|mlflow|\bs3://|\bgs://|NameResolutionError|Max retries exceeded|smtp|ftp",
    re.I,
)
# A raised resolver error: Python's socket.gaierror (or an exception that quotes it) on the line.
_RAISED_DNS = lazy_re.compile(r"gaierror|\b\w+(?:Error|Exception)\b")


_DNS = lazy_re.compile(
    r"Name or service not known|Temporary failure in name resolution|nodename nor servname|"
    r"No address associated with hostname"
)


def _bare_dns(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    """A raised resolver error with no store words beside it ("socket.gaierror: [Errno -2] Name or service not
    known" under getaddrinfo's frames, a paste that kept only the traceback's end): in a distributed job's log
    the names it resolves are its peers' and its master's (a node's host name, MASTER_ADDR, a cluster head),
    unless a download or another service's client is around it. Tier 1: any other finding of the log leads."""
    if not _RAISED_DNS.search(hit.text):
        return None
    near = [hit.text, *(ln.text for ln in hit.before(24, same_rank=False)), *(ln.text for ln in hit.after(8))]
    if any(_OTHER_HOST.search(t) for t in near):
        return None
    return [
        row.event(
            hit,
            "a host name does not resolve (getaddrinfo failed): a node's or the master's address "
            "(MASTER_ADDR, the cluster head, a peer's host name) that DNS or /etc/hosts does not know here",
            {"error": "name resolution", "context": "none"},
            tier=1,
            dedupe=(row.code, "dns"),
        )
    ]


S = C.STORE_UNREACHABLE.code
SIGNATURES = (
    Signature(
        "ps-lite van",
        _VAN,
        _van,
        S,
        anchors=(b"Check failed",),
        worth=(rb"Check failed",),
        words=("van.",),
    ),
    Signature(
        "ps-lite scheduler variable",
        _VAN_ENV,
        _van_env,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"Check notnull",),
        worth=(rb"Check notnull",),
        words=("check notnull",),
    ),
    Signature(
        "server bind check",
        _BIND_CHECK,
        _bind_check,
        C.ADDRESS_IN_USE.code,
        anchors=(b"Check failed", b"ERROR on binding"),
        worth=(rb"Check failed", rb"ERROR on binding"),
        words=("check failed: bind(", "check failed: ::bind(", "error on binding"),
    ),
    Signature(
        "paddle communicator id exchange",
        _PADDLE_ID,
        _paddle_id,
        S,
        anchors=(b" addr=",),
        worth=(rb"(?:connect|bind) addr=\S+ (?:timeout|failed \d+ times)",),
        words=("addr=",),
    ),
    Signature(
        "paddle nccl context connect",
        _PADDLE_WORKER,
        _paddle_worker,
        S,
        anchors=(b"Socket connect worker",),
        words=("socket connect worker",),
    ),
    Signature(
        "paddle host name",
        _PADDLE_HOST,
        _paddle_host,
        S,
        anchors=(b"Fail to get host by name",),
        worth=(rb"Fail to get host by name",),
        words=("fail to get host by name",),
    ),
    Signature(
        "paddle endpoint without port",
        _PADDLE_EP,
        _paddle_ep,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"endpoint should contain host and port",),
        worth=(rb"endpoint should contain host and port",),
        words=("endpoint should contain host and port",),
    ),
    Signature(
        "paddle local ip not in ips",
        _PADDLE_IP,
        _paddle_ip,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"Can't find your local ip",),
        worth=(rb"Can't find your local ip",),
        words=("can't find your local ip",),
    ),
    Signature(
        "ray gcs unreachable",
        _RAY_GCS,
        _ray_gcs,
        S,
        tier=1,
        anchors=(
            b"Failed to connect to GCS",
            b"waiting for GCS",
            b"running Ray instance",
            b"reconnect to GCS server",
            b"Unable to connect to GCS",
            b"Unable to connect to Redis",
            b"ray client connection timeout",
            b"Ray Client connection timed out",
        ),
        words=("to gcs", "for gcs", "running ray instance", "to redis at", "ray client connection"),
    ),
    Signature(
        "dask connect",
        _DASK_CONNECT,
        _dask_connect,
        S,
        anchors=(b"Timed out trying to connect to", b"while connecting to", b"TCPConnector object at"),
        words=("timed out trying to connect", "while connecting to", "tcpconnector"),
    ),
    Signature(
        "host name unresolved",
        _DNS,
        _bare_dns,
        S,
        tier=1,
        anchors=(b"rror",),
        worth=(rb"Error\b", rb"\berror\b", rb"gaierror"),
        words=(
            "name or service not known",
            "name resolution",
            "nodename nor servname",
            "no address associated",
        ),
        anchor_from="the exception type ('socket.gaierror: ', '...Error: ') before the resolver's message",
        examples=(
            "socket.gaierror: [Errno -2] Name or service not known",
            "socket.gaierror: [Errno -3] Temporary failure in name resolution",
        ),
    ),
    Signature(
        "pccl connect",
        _PCCL,
        _pccl,
        S,
        anchors=(b"failed with error: ",),
        worth=(rb"pccl\w+ failed with error",),
        words=("pccl",),
    ),
)
parse = gated_reader(SIGNATURES)
