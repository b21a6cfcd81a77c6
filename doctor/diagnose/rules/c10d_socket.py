"""rendezvous, c10d's socket layer below the store: the records of torch/csrc/distributed/c10d/socket.cpp
(torch 1.13-2.9) that rendezvous.py and store_errors.py do not read (they read the connect, listen and bind
records and the exceptions raised from them). Listed after them.

Formats (socket.cpp, C10D_WARNING / C10D_ERROR, printed "[W socket.cpp:204] [c10d] ..." and, since 2.2,
"[W522 06:29:34.248915854 socket.cpp:204] [c10d] ..."):
- formatSockAddr: "The hostname of the client socket cannot be retrieved. err=-3": getnameinfo() could not
  turn a peer's address into a name (EAI_AGAIN -3: the DNS server did not answer; EAI_NONAME -2; EAI_FAIL
  -4; Windows WSANO_DATA 11004). The store's server formats every connection it accepts, so on rank 0 each
  rank's connect waits for the resolver's timeout (the reporters' 20 s between two records) and a start-up
  of many ranks outlasts init_process_group's; a run that goes on after it was only slowed. Read as the
  failure only when the log stops at it (nothing but such records and a traceback after it) and no
  communicator came up later (UNTIL_UP), at tier 1;
- SocketImpl::accept: "The server socket on {} is not listening for connections." and "The server socket
  on {} has failed to accept a connection {err}." (EMFILE "Too many open files" at scale), raised as
  SocketError: the store's server stopped taking ranks;
- the libuv server (TCPStoreLibUvBackend.cpp, 2.4+ default) says the accept's failure in libuv's words:
  "Failed to accept socket. code: -24, name: EMFILE, message: too many open files" (raised by UvTcpServer's
  accept, logged by the daemon's onConnect): read like the accept record above (other programs' "Failed to
  accept client" without libuv's code and name stay silent);
- the libuv server's records of a client that went away (TCPStoreLibUvBackend.cpp 2.4+): "[c10d - debug]
  Read callback failed. code:-104 name:ECONNRESET desc:connection reset by peer" and "Remote peer closed the
  connection." (debug level), "[c10d] Write to client failed. code:-32 name:EPIPE desc:broken pipe." and
  "Write setup to client failed. ...": the store's host saw a rank's connection end - every rank's, at the end
  of a healthy run - and why that rank left is in its own log. These rows own the lines and say nothing
  (the network words in them would otherwise be read as a network fault);
- tryConnect: "The server socket on {} has timed out, will retry." (the connect attempt's timeout, a
  warning before the next try): read like the hostname record, only when the log stops at it;
- tryListen's "The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use)."
  quoted without its errno (a thread's title, a cut paste: "The server socket has failed to bind to
  [::]:29500, deepspeed 端口被占用"): rendezvous.py reads the whole record; the address alone is read as the
  store's port taken, by far the bind's most frequent errno (RUN223).
- SocketConnectOp (1.11-1.12, "[W socket.cpp:558] [c10d] The client socket cannot be initialized to connect
  to [localhost]:29501 (errno: 97 - Address family not supported by protocol)."): the client tries every
  address of the store's host in each round of its connect loop, the IPv6 one first, whose socket cannot
  even be made on a host without IPv6 (errno 97, a warning, harmless once). One such record per process is
  a healthy start-up; the same target again is the loop's next round, the IPv4 address having been refused
  too: nothing listens on the store's port. Read only when repeated, the log stops at them and no client
  connected later (UNTIL_UP), at tier 1 (RUN222).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import UNTIL_UP, Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_HOSTNAME = lazy_re.compile(r"The hostname of the client socket cannot be retrieved\. err=(-?\d+)")
_ACCEPT = lazy_re.compile(
    r"The server socket on (?P<addr>.+?) (?:is not listening for connections|has failed to accept a "
    r"connection(?P<err> .+?)?)\.?\s*$"
)
_UV_ACCEPT = lazy_re.compile(
    r"Failed to accept socket\. code: ?(?P<code>-?\d+), name: ?(?P<name>E[A-Z]+)"
    r"(?:, message: ?(?P<msg>[^\n.]*))?"
)
_CLIENT_GONE = lazy_re.compile(
    r"Read callback failed\. code: ?-?\d+ name: ?\w+|Remote peer closed the connection\.|"
    r"Write (?:setup )?to client failed\. code: ?-?\d+ name: ?\w+"
)
_RETRY_TIMEOUT = lazy_re.compile(r"The server socket on (?P<addr>\S+) has timed out, will retry")
_BIND_BARE = lazy_re.compile(
    r"The server socket has failed to bind to (?P<addr>\[[^\]\s]*\]:\d+|[\w.-]+:\d+)(?!\d)"
)
_NO_FAMILY = lazy_re.compile(
    r"The client socket cannot be initialized to connect to (?P<addr>\S+?:\d+) \(errno: 97 - Address family "
    r"not supported by protocol\)"
)
# getnameinfo's EAI codes (glibc netdb.h) and Winsock's.
_GAI = {
    -2: "EAI_NONAME: the address has no name",
    -3: "EAI_AGAIN: the DNS server did not answer in time",
    -4: "EAI_FAIL: the DNS lookup failed",
    -5: "EAI_NODATA: no name for the address",
    -11: "EAI_SYSTEM",
    11001: "WSAHOST_NOT_FOUND",
    11002: "WSATRY_AGAIN",
    11004: "WSANO_DATA",
}
# A line of the same records (or of the traceback they end in) is no sign that the run went on.
_SAME = lazy_re.compile(r"socket|cannot be retrieved|^Traceback|^\s+File |^\s")


def _stopped_here(hit: Hit) -> bool:
    """The log holds nothing after the record but more socket records and the traceback they end in."""
    return not any(ln.text.strip() and not _SAME.search(ln.text) for ln in hit.after(48, same_rank=False))


def _hostname(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _stopped_here(hit):
        return []  # the run went on: the lookups only slowed its start-up
    err = int(m.group(1))
    why = _GAI.get(err, f"err={err}")
    facts: dict[str, Any] = {"gai_error": err, "error": why, UNTIL_UP: ""}
    return [
        row.event(
            hit,
            f"the store's server could not resolve the address of a connecting rank ({why}) and the start-up "
            "stopped there: every accepted connection waits for the resolver's timeout; give the nodes a "
            "working DNS (or /etc/hosts entries for every node's address), then rerun",
            facts,
            tier=1,
            dedupe=(row.code, "reverse_lookup"),
        )
    ]


def _accept(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = (m.group("err") or "").strip()
    facts: dict[str, Any] = {
        "store_address": clip(m.group("addr"), 80),
        "error": clip(err, 80) or "not listening",
    }
    return [
        row.event(
            hit,
            f"the store's server socket stopped accepting ranks ({clip(err, 80) or 'not listening'})"
            + ("; raise the open-files limit (ulimit -n) on rank 0's node" if "open files" in err else ""),
            facts,
            dedupe=(row.code, "accept"),
        )
    ]


def _uv_accept(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    name, msg = m.group("name"), (m.group("msg") or "").strip()
    err = f"{name}: {msg}" if msg else name
    return [
        row.event(
            hit,
            f"the store's libuv server could not accept a rank's connection ({clip(err, 80)})"
            + (
                "; raise the open-files limit (ulimit -n) on rank 0's node"
                if name in ("EMFILE", "ENFILE")
                else ""
            ),
            {"error": clip(err, 80), "uv_code": int(m.group("code"))},
            dedupe=(row.code, "accept"),
        )
    ]


def _client_gone(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return []  # the server's side of a rank that left: the rank's own log says why


def _retry_timeout(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _stopped_here(hit):
        return []
    return [
        row.event(
            hit,
            f"the connect to the store at {m.group('addr')} timed out and the log stops while it retries: "
            "the store's host does not answer on that port (firewall, wrong MASTER_ADDR, rank 0 not started)",
            {"store_address": m.group("addr"), UNTIL_UP: ""},
            tier=1,
            dedupe=(row.code, "connect_timeout"),
        )
    ]


def _no_family(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    addr = m.group("addr")
    rounds = 1 + sum(
        1
        for ln in [*hit.before(48, same_rank=False), *hit.after(48, same_rank=False)]
        if (o := _NO_FAMILY.search(ln.text)) and o.group("addr") == addr
    )
    if rounds < 2 or not _stopped_here(hit):
        return []  # one per process at a healthy start-up on a host without IPv6
    return [
        row.event(
            hit,
            f"the store client's connect loop went round {rounds} times for {addr} and the log stops there: "
            "its IPv6 try cannot even make a socket (errno 97, harmless) and the IPv4 address refused it "
            "every round: nothing listens on the store's port (the rank that hosts the store not started, "
            "another MASTER_ADDR / port / world size on some process)",
            {"store_address": addr, "connect_rounds": rounds, "error": "errno 97 on IPv6", UNTIL_UP: ""},
            tier=1,
            dedupe=(row.code, "connect_rounds"),
        )
    ]


def _bind_bare(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "errno" in hit.text or "[c10d]" in hit.text or "socket.cpp" in hit.text:
        return []  # the whole record: rendezvous.py's reading (or its silence) stands
    addr = m.group("addr")
    return [
        row.event(
            hit,
            f"the store could not bind {addr}: the port is most likely taken (another job or a leftover "
            "process of an earlier run holds MASTER_PORT); free it or pick another --master_port",
            {"store_address": addr, "master_port": int(addr.rsplit(":", 1)[1])},
            code=C.ADDRESS_IN_USE.code,
            dedupe=(C.ADDRESS_IN_USE.code,),
        )
    ]


SIGNATURES = (
    Signature(
        "c10d client connect rounds without IPv6",
        _NO_FAMILY,
        _no_family,
        C.STORE_UNREACHABLE.code,
        anchors=(b"client socket cannot be initialized to connect to",),
        words=("client socket cannot be initialized",),
    ),
    Signature(
        "c10d client hostname lookup",
        _HOSTNAME,
        _hostname,
        C.STORE_UNREACHABLE.code,
        anchors=(b"hostname of the client socket cannot be retrieved",),
        words=("hostname of the client socket",),
    ),
    Signature(
        "c10d server accept failed",
        _ACCEPT,
        _accept,
        C.STORE_UNREACHABLE.code,
        anchors=(b"The server socket on ",),
        worth=(rb"The server socket on .+ (?:is not listening for connections|has failed to accept)",),
        words=("not listening for connections", "failed to accept a connection"),
    ),
    Signature(
        "c10d libuv server accept failed",
        _UV_ACCEPT,
        _uv_accept,
        C.STORE_UNREACHABLE.code,
        anchors=(b"Failed to accept socket. code:",),
        words=("failed to accept socket",),
    ),
    Signature(
        "c10d libuv server saw a client leave",
        _CLIENT_GONE,
        _client_gone,
        C.STORE_UNREACHABLE.code,
        anchors=(
            b"Read callback failed. code:",
            b"Remote peer closed the connection.",
            b"to client failed. code:",
        ),
        words=("read callback failed", "remote peer closed the connection", "to client failed"),
    ),
    Signature(
        "c10d bind quoted without its errno",
        _BIND_BARE,
        _bind_bare,
        C.ADDRESS_IN_USE.code,
        anchors=(b"server socket has failed to bind to",),
        words=("has failed to bind to",),
    ),
    Signature(
        "c10d connect attempt timed out",
        _RETRY_TIMEOUT,
        _retry_timeout,
        C.STORE_UNREACHABLE.code,
        anchors=(b"has timed out, will retry",),
        words=("has timed out, will retry",),
    ),
)
parse = gated_reader(SIGNATURES)
