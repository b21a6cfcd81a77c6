"""port_clash: a port of the job's meeting already taken, in the words rendezvous.py does not read (RUN223).

Formats, read at their sources: Ray's port plan of a node (ray/_private/node.py, 2.x, checked before any
component starts): "ValueError: Ray component worker_ports is trying to use a port number 16379 that is used
by other components." then "Port information: {...}" - two components (gcs_server, dashboard, metrics_export,
the worker_ports range 10002-19999, ...) were given the same port: --port inside the worker range, or two
pinned ports equal. Windows' WSAEADDRINUSE as Python raises it ("OSError: [WinError 10048] Only one usage of
each socket address (protocol/network address/port) is normally permitted", localised: "[WinError 10048]
通常每个套接字地址(协议/网络地址/端口)只允许使用一次。") and Python's errno 98 with a localised strerror
("OSError: [Errno 98] Adresse déjà utilisée", "[Errno 98] Die Adresse wird bereits verwendet"): read as
rendezvous.py reads the English "[Errno 98] Address already in use" - only where the store or the ranks are
in sight (a TCPStore / init_process_group / rendezvous frame in the 16 lines before, or a rank's prefix); a
web app's own port (gradio, uvicorn) is no failure of the job. A server that checks its port before it binds
and says so in its own words: DGL-KE's kvstore server (dglke/kvserver.py start_server, 0.1.x, after
check_port_available) "Error: port 30050 is not available." and exit(): a port of its ip_config taken by a
stale server or another job.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.rendezvous import _ranked
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_RAY_PORTS = lazy_re.compile(
    r"Ray component (?P<comp>\w+) is trying to use a port number (?P<port>\d+) that is used by other"
)
_PORT_TAKEN = lazy_re.compile(r"(?:^|\s)Error: port (?P<port>\d{1,5}) is not available\.?\s*$")
_WIN_IN_USE = lazy_re.compile(
    r"\[WinError 10048\]|\bWSAEADDRINUSE\b|\[Errno 98\] (?![Aa]ddress already in use)(?P<text>\S[^\n]*)"
)
_TORCH_STORE = lazy_re.compile(
    r"TCPStore|rendezvous|init_process_group|c10d|MASTER_PORT|torch[/\\]distributed|torchrun|accelerate"
)
# Python's EADDRNOTAVAIL ("OSError: [Errno 99] Cannot assign requested address"): a bind to an address that is
# not this host's (MASTER_ADDR, a launcher's ip_config or hostfile naming another machine), or the launcher's
# own probe of this host's interfaces (dgl-ke's dist_train local_ip4_addr_list: SIOCGIFADDR on an interface
# without an IPv4 address). Read where a launcher's or the store's frames are in sight.
_ADDR_NOT_AVAIL = lazy_re.compile(r"\[Errno 99\] Cannot assign requested address")
_LAUNCH_CONTEXT = lazy_re.compile(
    r"TCPStore|rendezvous|init_process_group|c10d|MASTER_ADDR|torch[/\\]distributed|torchrun|dist_train|"
    r"ip_config|hostfile|local_ip|get_ip|horovod|dgl|deepspeed|launch\.py|launcher",
    re.I,
)
_WEB_OR_QUEUE = lazy_re.compile(r"attempting to bind on address|ZMQError|zmq", re.I)
_PORT = lazy_re.compile(r"(?:port[ =:]+|:)(\d{2,5})\b")


def _ray_ports(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    port = int(m.group("port"))
    return [
        row.event(
            hit,
            f"Ray's node could not start: its component {m.group('comp')} was given port {port}, which "
            "another component of the same node also uses (--port inside the worker port range 10002-19999, "
            "or two pinned ports equal); move --port below 10000 or set --min-worker-port/--max-worker-port",
            {"port": port, "component": m.group("comp"), "framework": "ray"},
            dedupe=(row.code, "ray"),
        )
    ]


def _win_in_use(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    near = [*hit.before(16), hit.line]
    if _WEB_OR_QUEUE.search(hit.text):
        return []  # uvicorn's / asyncio's or ZeroMQ's own port (rendezvous.py's reading of them)
    if not (_ranked(hit) or any(_TORCH_STORE.search(ln.text) for ln in near)):
        return []  # a web app's or a tool's own port: not the job's meeting
    facts: dict[str, Any] = {"errno": 10048 if "98]" not in m.group(0) else 98}
    for ln in reversed(near):
        p = _PORT.search(ln.text)
        if p:
            facts["port"] = int(p.group(1))
            break
    return [
        row.event(
            hit,
            f"{hit.who()} could not bind the port of the job's store or server: address already in use "
            "(another job or a leftover process holds MASTER_PORT, or two ranks both host the store)",
            facts,
            dedupe=(row.code,),
        )
    ]


def _addr_not_avail(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    near = [*hit.before(24), hit.line]
    if _WEB_OR_QUEUE.search(hit.text) or not (
        _ranked(hit) or any(_LAUNCH_CONTEXT.search(ln.text) for ln in near)
    ):
        return []
    return [
        row.event(
            hit,
            f"{hit.who()} could not use an address of the job's meeting: EADDRNOTAVAIL, the address is not "
            "this host's (MASTER_ADDR, ip_config or the hostfile names another machine, or the interface the "
            "launcher probes has no IPv4 address)",
            {"errno": 99, "error": "Cannot assign requested address"},
            code=C.STORE_UNREACHABLE.code,
            dedupe=(C.STORE_UNREACHABLE.code, "addr_not_avail"),
        )
    ]


def _port_taken(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    port = int(m.group("port"))
    return [
        row.event(
            hit,
            f"the server's port {port} is already taken on this host (a server of an earlier run still up, "
            "or another job): stop it (ss -ltnp | grep :PORT) or give the servers other ports",
            {"port": port},
            dedupe=(row.code, port),
        )
    ]


SIGNATURES = (
    Signature(
        "ray port plan clash",
        _RAY_PORTS,
        _ray_ports,
        C.ADDRESS_IN_USE.code,
        anchors=(b"is trying to use a port number",),
        words=("is trying to use a port number",),
    ),
    Signature(
        "windows or localised address in use",
        _WIN_IN_USE,
        _win_in_use,
        C.ADDRESS_IN_USE.code,
        anchors=(b"WinError 10048", b"WSAEADDRINUSE", b"[Errno 98] "),
        worth=(rb"WinError 10048", rb"WSAEADDRINUSE", rb"\[Errno 98\] "),
        words=("winerror 10048", "wsaeaddrinuse", "[errno 98] "),
    ),
    Signature(
        "server's port check",
        _PORT_TAKEN,
        _port_taken,
        C.ADDRESS_IN_USE.code,
        anchors=(b"Error: port ",),
        worth=(rb"Error: port \d+ is not available",),
        words=("is not available",),
    ),
    Signature(
        "address not this host's",
        _ADDR_NOT_AVAIL,
        _addr_not_avail,
        C.STORE_UNREACHABLE.code,
        anchors=(b"[Errno 99] Cannot assign",),
        words=("[errno 99] cannot assign",),
    ),
)
parse = gated_reader(SIGNATURES)
