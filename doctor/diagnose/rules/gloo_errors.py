"""nccl_network for gloo: process-group setup that cannot reach a peer, an interface without an
address, and its TCP transport's socket failures as gloo prints them.

Formats: gloo/transport/tcp/pair.cc raises IoException with GLOO_ERROR_MSG, "[<path>/gloo/transport/
tcp/pair.cc:<line>] " before the text: "connect [127.0.1.1]:60817: Connection refused" (strerror of
connect(2)), "Connect timeout [10.0.0.2]:5678", "Connection closed by peer [10.0.0.2]:5678", "Read
error [10.0.0.2]:5678: Connection reset by peer", "Write error ...", "read ..." / "writev [..]:port:
Broken pipe", "Socket unexpectedly closed [..]:port"; the uv transport (gloo/transport/uv) the same
words, and "Socket closed [..]:port", and its UV_ASSERT abort (uv/libuv.h: "[.../libuv.h:596] uv_accept:
invalid argument", then SIGABRT; tier 0, the abort's cause). A title may quote the text without its
bracket, and 2017's pair.cc put ": " before strerror ("gloo/transport/tcp/pair.cc:536] : Connection
refused"). Torch re-raises them as "RuntimeError: [...pair.cc:598] ..." (read by nccl_errors, which
wants the error word); a log line of just gloo's text is read here.
gloo's "Timed out waiting 1800000ms for recv operation" (unbound_buffer.cc) is a timeout, and so is
the pair's own "Read timeout [..]:port" / "Write timeout" / "Send timeout" (read here, as a timeout).
Setup: "address family mismatch" (pair.cc, IPv4 vs IPv6 peers), "Gloo connectFullMesh failed with ..."
and device.cc's "Unable to find address for: eth0"
(the rows moved here from nccl_errors); "Application timeout caused pair closure" (tcp/pair.cc) is
the process group's timeout closing the pair. The ibverbs transport's failures ("[.../gloo/transport/
ibverbs/device.cc:76] ibv_open_device: ...") are the RDMA fabric's (RUN173), like NCCL's NET/IB.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.nccl_detail import network_facts
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

# Every IoException of the tcp pair ends in the peer's address (pair.cc's
# GLOO_THROW_IO_EXCEPTION(..., peer_.str()) since 2017): the last alternative takes one whose words a paste
# garbled or retyped ("connectruntclosed by peer [172.16.0.5]:23211", lower-cased), but not a deadline's
# ("Read timeout [..]:N" is the timeout row's).
# The uv transport's UV_ASSERT (uv/libuv.h) prints "[<path>/gloo/transport/uv/libuv.h:596] uv_accept: invalid
# argument" and aborts the process: a socket call of the transport failed (uv_bind, uv_listen, uv_accept,
# uv_read_start, uv_tcp_getpeername ...). A title quotes the text without its opening bracket, and
# 2017's pair.cc put ": " before strerror ("gloo/transport/tcp/pair.cc:536] : Connection refused").
_PAIR = lazy_re.compile(
    r"(?:\[[^\]]*)?gloo/transport/(?:tcp|uv)/(?P<file>\w+\.(?:cc|h)):(?P<line>\d+)\]\s*"
    r"(?P<what>(?:connect|Connect timeout|Connection closed by peer|Read error|Write error|read|writev?|"
    r"Socket unexpectedly closed|Socket closed)\b.*|"
    r"(?P<uv>uv_(?:bind|listen|accept|read_start|write|tcp_\w+|shutdown)): \w.*|"
    r": (?:Connection (?:refused|reset by peer)|Broken pipe|No route to host|Network is unreachable)\b.*|"
    r"(?![^\n]*(?i:timeout|enforce))[a-z][^\[\]\n]*\[[^\]\s]+\]:\d+\s*)$"
)
# The pair's own deadline (tcp/pair.cc, uv/pair.cc since 2019): "Read timeout [10.0.0.2]:5678",
# "Write timeout ...", "Send timeout ..." - a peer that sent or read nothing within the process group's
# timeout (it is stuck or gone), like unbound_buffer.cc's "Timed out waiting": a timeout, not a network
# fault.
# "Application timeout caused pair closure" (tcp/pair.cc): the pair closed by the process group's own
# timeout while an operation waited on it - the same timeout, said by the transport. PaddlePaddle's copy
# of gloo (third_party/gloo, tcp/pair.cc) says "TIMEOUT self_rank = 0 pair_rank = 1 peer_str = [..]:port".
_PAIR_TIMEOUT = lazy_re.compile(
    r"gloo/transport/(?:tcp|uv)/(?P<file>\w+\.cc):(?P<line>\d+)\]\s*(?:(?P<dir>Read|Write|Send|Application) "
    r"timeout\b|TIMEOUT(?= self_rank))(?P<rest>.*)$"
)
# The ibverbs transport (gloo/transport/ibverbs/device.cc, pair.cc, buffer.cc): a verbs call that failed,
# raised through GLOO_ENFORCE ("[enforce fail at .../ibverbs/device.cc:76] ibv_open_device: ...") or
# IoException ("[.../ibverbs/pair.cc:464] ibv_post_send: Invalid argument"): the RDMA fabric or its setup.
# The same sentence without gloo's "[.../tcp/pair.cc:NNN] " (an application that prints str(e) of the
# IoException after its own words, "Rank 1 training step error: Application timeout caused pair closure",
# or a title): the sentence is gloo's alone (tcp/pair.cc since 2019, uv/pair.cc), and the peer's "Connection
# closed by peer" that follows it is the closure it caused, not a network fault.
_PAIR_TIMEOUT_BARE = lazy_re.compile(r"Application timeout caused pair closure")
# The exception type of that timeout in PaddlePaddle's copy of gloo (third_party/gloo: tcp/pair.cc throws
# gloo::TimeoutException for the "TIMEOUT self_rank = .." above; upstream gloo has no such type): the abort's
# "terminate called after throwing an instance of 'gloo::TimeoutException'" when the what() line is cut, a
# title that names it. A C++ handler that names the type (catch, a reference) is source code, not a failure.
_TIMEOUT_TYPE = lazy_re.compile(r"\bgloo::TimeoutException\b(?!\s*[&*])(?<!catch \(gloo::TimeoutException)")
_IBVERBS = lazy_re.compile(r"gloo/transport/ibverbs/(?P<file>\w+\.cc):(?P<line>\d+)\]\s*(?P<what>.*)$")
# Its deadlines (unbound_buffer.cc "Timed out waiting 1800000ms for recv operation to complete", pair.cc
# "Timeout waiting for memory region from [10.0.0.2]:1234", buffer.cc "Read timeout" / "Send timeout"): a
# peer that posted nothing in time, a timeout like the tcp transport's, not a fabric error.
_IBVERBS_TIMEOUT = lazy_re.compile(
    r"Timed out waiting|Timeout waiting for memory region|(?:Read|Send) timeout\b"
)
# Its completion check: "wc->status == IBV_WC_SUCCESS. 12 vs 0. Memory region send for slot 0: ..." - the
# number is libibverbs' enum ibv_wc_status (verbs.h), named here as NCCL's NET/IB names it.
_WC_STATUS = lazy_re.compile(r"wc->status == IBV_WC_SUCCESS\. (\d+) vs 0")
_WC_NAMES = [
    "SUCCESS",
    "LOC_LEN_ERR",
    "LOC_QP_OP_ERR",
    "LOC_EEC_OP_ERR",
    "LOC_PROT_ERR",
    "WR_FLUSH_ERR",
    "MW_BIND_ERR",
    "BAD_RESP_ERR",
    "LOC_ACCESS_ERR",
    "REM_INV_REQ_ERR",
    "REM_ACCESS_ERR",
    "REM_OP_ERR",
    "RETRY_EXC_ERR",
    "RNR_RETRY_EXC_ERR",
    "LOC_RDD_VIOL_ERR",
    "REM_INV_RD_REQ_ERR",
    "REM_ABORT_ERR",
    "INV_EECN_ERR",
    "INV_EEC_STATE_ERR",
    "FATAL_ERR",
    "RESP_TIMEOUT_ERR",
    "GENERAL_ERR",
]
# gloo's device.cc: "ifa != nullptr. Unable to find address for: eth0"
_GLOO_IFACE = lazy_re.compile(r"Unable to find address for:?\s*(\S+)")
# ProcessGroupGloo's constructor (1.x-2.x): "Gloo connectFullMesh failed with <gloo's error>", e.g.
# "[../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error" (a peer's address it cannot reach:
# the wrong interface, a firewall), "... Connection refused, remote=[127.0.1.1]:17308" (a host name
# that resolves to loopback), "... Connect timeout [none]". Network, at setup: no peer died yet.
# (a paste may elide the middle: "Gloo connectFullMesh failed ... timed out connecting: SO_ERROR: ..."; a
# thread's title ends the message or goes on in its own words: "Gloo connectFullMesh failed when ...")
_FULL_MESH = lazy_re.compile(
    r"Gloo connectFullMesh failed(?: with|\s*(?:\.\.\.|…)|(?P<title>\s*$| (?:when|while|on|in|after|with)\b))"
    r"\s*(?P<why>.*)$"
)
# ProcessGroupGloo's createDefaultDevice (torch 1.x-2.x) when the host name has no address at all: "Unable to
# resolve hostname to a (local) address. Using the loopback address as fallback. Manually set the network
# interface to bind to with GLOO_SOCKET_IFNAME." On one node that works; a peer on another node is then told
# 127.0.0.1 and refused. The cause is the name that does not resolve (the store's host-name family, RUN222),
# not the transport, when gloo's connect failure follows it.
_NO_HOSTNAME = lazy_re.compile(r"Unable to resolve hostname to a \(local\) address")


def _unresolved_host(row: Signature, hit: Hit, why: str, facts: dict[str, Any]) -> Optional[list[Event]]:
    if not any(_NO_HOSTNAME.search(ln.text) for ln in hit.before(12, same_rank=False)):
        return None
    facts["likely_cause"] = "host_name_unresolved"
    return [
        row.event(
            hit,
            f"{hit.who()}: the host name does not resolve, so gloo fell back to the loopback address and a "
            f"peer could not connect to it ({clip(why, 100)}): fix the host name's address (DNS, /etc/hosts) "
            "or set GLOO_SOCKET_IFNAME to the interface the nodes reach each other on",
            facts,
            code=C.STORE_UNREACHABLE.code,
            dedupe=(C.STORE_UNREACHABLE.code, "gloo_unresolved"),
        )
    ]


def _full_mesh(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    why = "" if m.group("title") is not None else m.group("why").strip()
    facts: dict[str, Any] = {
        "backend": "gloo",
        "phase": "connect_full_mesh",
        "gloo_error": why[:200],
        **network_facts(why),
    }
    src = re.search(r"\[([^\]]*gloo[^\]]*?):(\d+)\]", why)
    if src:
        facts["gloo_source"] = f"{src.group(1).rsplit('/', 1)[-1]}:{src.group(2)}"
    # (the peer's address on the next line when a paste re-wrapped the message)
    nxt = [ln.text for ln in hit.after(1)]
    if re.search(r"remote=\[?127\.", why) or (nxt and re.match(r"\s*remote=\[?127\.", nxt[0])):
        facts["likely_cause"] = "host_name_resolves_to_loopback"
    unresolved = _unresolved_host(row, hit, why, facts)
    if unresolved:
        return unresolved
    return [
        row.event(
            hit,
            f"{hit.who()}: gloo could not connect to every peer at process-group setup "
            f"(connectFullMesh: {clip(why, 120)}): an address of a peer is unreachable (interface, "
            "firewall, or a host name that resolves to loopback)",
            facts,
            dedupe=(row.code, "full_mesh"),
        )
    ]


_ADDR = lazy_re.compile(r"\[([0-9a-fA-F.:]+)\]:(\d+)")
_PAIR_RANKS = lazy_re.compile(r"self_rank\s*=\s*(\d+)\s+pair_rank\s*=\s*(\d+)")


def _pair(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "connectFullMesh" in hit.text:
        return None  # process-group setup: the "gloo full mesh" row says more
    what = m.group("what").strip(" :")
    facts: dict[str, Any] = {
        "backend": "gloo",
        "gloo_error": what[:200],
        "gloo_source": f"{m.group('file')}:{m.group('line')}",
    }
    a = _ADDR.search(what)
    if a:
        facts["peer"], facts["peer_port"] = a.group(1), int(a.group(2))
    # a dropped or refused connection is most often the echo of a peer that died first; a failed
    # UV_ASSERT aborts this process (its SIGABRT follows)
    tier = 0 if m.group("uv") else 1
    if a and a.group(1).startswith("127.") and what.startswith("connect"):
        # a peer's address that is loopback: /etc/hosts maps the host name to 127.0.1.1 (Debian/Ubuntu)
        facts["likely_cause"] = "host_name_resolves_to_loopback"
        tier = 0
        unresolved = _unresolved_host(row, hit, what, facts)
        if unresolved:
            return unresolved
    return [
        row.event(
            hit,
            f"{hit.who()}: gloo's connection to a peer failed: {clip(what, 160)}",
            facts,
            tier=tier,
            dedupe=(row.code, hit.rank, "gloo_pair"),
        )
    ]


def _pair_timeout(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "file" not in m.re.groupindex:  # the bare sentence (_PAIR_TIMEOUT_BARE)
        facts: dict[str, Any] = {"backend": "gloo", "direction": "application"}
        rest = hit.text[m.end() :]
    else:
        facts = {
            "backend": "gloo",
            "direction": (m.group("dir") or "pair").lower(),
            "gloo_source": f"{m.group('file')}:{m.group('line')}",
        }
        rest = m.group("rest")
    direction = facts["direction"]
    pair = _PAIR_RANKS.search(rest)
    if pair:  # Paddle's gloo: "self_rank = 0 pair_rank = 1"
        facts["rank"], facts["peer_rank"] = int(pair.group(1)), int(pair.group(2))
    a = _ADDR.search(rest)
    if a:
        facts["peer"], facts["peer_port"] = a.group(1), int(a.group(2))
    if direction == "application":
        return [
            row.event(
                hit,
                f"{hit.who()}: gloo closed its connection to a peer on the process group's timeout: the "
                "peer did not take part in the collective in time",
                facts,
                dedupe=(row.code, hit.rank),
            )
        ]
    return [
        row.event(
            hit,
            f"{hit.who(facts.get('rank'))}: gloo's {direction} to a peer"
            + (f" (rank {facts['peer_rank']})" if pair else "")
            + " timed out"
            + (f" ({a.group(1)}:{a.group(2)})" if a else "")
            + ": the peer did not take part in the collective within the process group's timeout",
            facts,
            dedupe=(row.code, hit.rank),
        )
    ]


_HANDLES = lazy_re.compile(r"(?i)\b(?:catch|except|handl)\w*\b[^.!?]{0,24}$")
_SETTING = lazy_re.compile(r"\b[A-Z_]*TIMEOUT[A-Z_]*\s*=")  # a line that names the deadline's setting


def _timeout_type(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if _HANDLES.search(hit.text[: m.start()]) or _SETTING.search(hit.text):
        return []  # code or a question that handles the type ("catch (gloo::TimeoutException& e)"), a setting
    if any(_PAIR_TIMEOUT.search(ln.text) for ln in hit.lines[hit.idx + 1 : hit.idx + 4]):
        return []  # its what() line follows: the pair row reads it, with the peer's rank
    return [
        row.event(
            hit,
            f"{hit.who()}: gloo raised its TimeoutException (PaddlePaddle's gloo): a pair's send or receive "
            "timed out: the peer did not take part in the collective within the timeout",
            {"backend": "gloo", "direction": "pair", "exception": "gloo::TimeoutException"},
            dedupe=(row.code, hit.rank),
        )
    ]


def _ibverbs(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    what = m.group("what").strip(" :")
    if what.startswith("No ibverbs devices present"):
        return None  # no RDMA device on the host at all: rules/node_devices.py (RUN645, driver_env)
    facts: dict[str, Any] = {
        "backend": "gloo",
        "transport": "ibverbs",
        "gloo_error": what[:200],
        "gloo_source": f"{m.group('file')}:{m.group('line')}",
    }
    verb = re.search(r"\b(ibv_\w+)", what)
    if verb:
        facts["ibv_call"] = verb.group(1)
    if _IBVERBS_TIMEOUT.match(what):
        # the transport's deadline, as in tcp/: the peer posted nothing in time (stuck or gone), a timeout
        return [
            row.event(
                hit,
                f"{hit.who()}: gloo's ibverbs transport timed out waiting for a peer: {clip(what, 160)}",
                facts,
                code=C.GLOO_TIMEOUT.code,
                tier=1,
                dedupe=(C.GLOO_TIMEOUT.code, hit.rank),
            )
        ]
    wc = _WC_STATUS.search(what)
    if wc:
        facts["wc_status"] = int(wc.group(1))
        if int(wc.group(1)) < len(_WC_NAMES):
            facts["wc_status_name"] = "IBV_WC_" + _WC_NAMES[int(wc.group(1))]
    return [
        row.event(
            hit,
            f"{hit.who()}: gloo's InfiniBand (ibverbs) transport failed: {clip(what, 160)}",
            facts,
            dedupe=(row.code, hit.rank, "gloo_ibverbs"),
        )
    ]


# The same words of the host-name path (tcp/device.cc CreateDevice by hostname): "rp != nullptr. Unable to
# find address for: node1" (the name resolves to no address) and "Unable to find address for node1; bind(2)
# for [10.0.0.9]:0 failed with: Cannot assign requested address" (it resolves, but to an address that is not
# this host's): a host name, not an interface.
_BIND2 = lazy_re.compile(r"; bind\(2\) for (\S+) failed with: ([^\n]+?)\s*$")


def _gloo_host(row: Signature, hit: Hit, name: str) -> list[Event]:
    facts: dict[str, Any] = {"backend": "gloo", "hostname": name, "interface_problem": True}
    b = _BIND2.search(hit.text)
    if b:
        facts.update(address=b.group(1), error=b.group(2))
        why = (
            f"it resolves to {b.group(1)}, which this host cannot bind ({b.group(2)}): fix /etc/hosts or DNS "
            "for that name, or set GLOO_SOCKET_IFNAME to the interface the nodes share"
        )
    else:
        why = "it resolves to no address: fix /etc/hosts or DNS, or set GLOO_SOCKET_IFNAME"
    return [
        row.event(
            hit,
            f"gloo cannot create its device for host name {name}: {why}",
            facts,
            dedupe=(row.code, "gloo_iface"),
        )
    ]


def _gloo_iface(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    name = m.group(1).rstrip(";")
    if "rp != nullptr" in hit.text or _BIND2.search(hit.text):
        return _gloo_host(row, hit, name)
    facts: dict[str, Any] = {"backend": "gloo", "interface": name, "interface_problem": True}
    why = "GLOO_SOCKET_IFNAME names a missing or unconfigured interface"
    if name[:1] in "^=":
        # NCCL_SOCKET_IFNAME's syntax ("^lo,docker" excludes, "=eth0" is exact): gloo takes the value as one
        # interface's name, or a comma list of names since torch 1.8, and no interface is called "^lo"
        facts["problem"] = "nccl_ifname_syntax"
        why = (
            "GLOO_SOCKET_IFNAME was given NCCL's exclusion / exact-match syntax, which gloo reads as an "
            "interface's name: give it the interface itself (e.g. eth0)"
        )
    return [
        row.event(
            hit,
            f"gloo cannot use interface {name}: it has no address ({why})",
            facts,
            dedupe=(row.code, "gloo_iface"),
        )
    ]


# gloo's own listening socket (the pair's, or the device's listener) could not bind or listen: tcp/pair.cc's
# GLOO_ERROR_MSG before gloo 2023 ("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:176] bind:
# Address already in use"), tcp/socket.cc's enforce since ("[enforce fail at
# ../third_party/gloo/gloo/transport/tcp/socket.cc:110] rv != -1. -1 vs -1. bind: Cannot assign requested
# address"). Not the rendezvous store's port: gloo binds an ephemeral port of GLOO_SOCKET_IFNAME's address (or
# the host name's), so a clash is a port range shared with another service, and EADDRNOTAVAIL an address that
# is not this host's.
_BIND = lazy_re.compile(
    r"gloo/transport/(?:tcp|uv)/(?P<file>\w+\.cc):\d+\][^\n]*?\b(?P<call>bind|listen): "
    r"(?P<err>[A-Z][A-Za-z ]+[a-z])"
)


def _bind(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = m.group("err")
    facts = {"backend": "gloo", "call": m.group("call"), "error": err, "where": m.group("file")}
    if "already in use" in err:
        # A port clash at process-group creation, as the store's own (RUN223): the released corpora label
        # it a rendezvous failure (p7c-rendezvous_init-008), so it keeps that code with gloo's facts.
        return [
            row.event(
                hit,
                f"gloo could not {m.group('call')} its socket: address already in use ({m.group('file')}): "
                "another process holds the port gloo picked; keep fixed ports out of the ephemeral range",
                facts,
                code=C.ADDRESS_IN_USE.code,
                dedupe=(C.ADDRESS_IN_USE.code,),
            )
        ]
    if "assign requested address" in err:
        why = (
            "the address is not this host's: GLOO_SOCKET_IFNAME or the host name resolves to another address"
        )
    else:
        why = "check GLOO_SOCKET_IFNAME and the host's address"
    return [
        row.event(
            hit,
            f"gloo could not {m.group('call')} its own socket ({err}, {m.group('file')}): {why}",
            facts,
            dedupe=(row.code, "gloo_bind"),
        )
    ]


# tcp/pair.cc's connect when the peer's address (from the store) is of another family than the local
# device's: "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:210] address family mismatch"
# (also without the location, torch 1.x): one host resolved its name to IPv6 and another to IPv4, or
# GLOO_SOCKET_IFNAME picks an interface of one family only. A network configuration fault, not a desync.
# The same mismatch found by Device::isInitiator (gloo/transport/tcp/device.cc since the single listening
# socket per device, 2022; gloo/transport/uv/device.cc): GLOO_ENFORCE_EQ(ss1.ss_family, ss2.ss_family) prints
# "[enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:276] ss1.ss_family == ss2.ss_family. 2
# vs 10" (this rank's family, then the peer's: 2 AF_INET, 10 AF_INET6 on Linux); a family it does not know
# is "Unknown address family: 1" there and "Unknown ai_family: 1" in the device's setup. Fixed in gloo by
# reusing the bound socket (pytorch/gloo#503); before that ADDR=0.0.0.0 or a host name with an IPv6 address
# first gives it.
_FAMILY = lazy_re.compile(
    r"\baddress family mismatch\b|\bss1\.ss_family == ss2\.ss_family\b\.?\s*(?:(\d+) vs (\d+))?|"
    r"\bUnknown address family: ?(?P<fam>\d+)|\bUnknown ai_family: ?(?P<aifam>\d+)"
)
_FAMILY_NAMES = {2: "AF_INET (IPv4)", 10: "AF_INET6 (IPv6)", 1: "AF_UNIX", 0: "AF_UNSPEC"}


def _family(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {
        "backend": "gloo",
        "interface_problem": True,
        "problem": "address_family_mismatch",
    }
    if m.group(1):
        local, peer = int(m.group(1)), int(m.group(2))
        facts.update(
            local_family=_FAMILY_NAMES.get(local, str(local)), peer_family=_FAMILY_NAMES.get(peer, str(peer))
        )
    elif m.group("fam") or m.group("aifam"):
        facts.update(problem="unknown_address_family", family=int(m.group("fam") or m.group("aifam")))
    src = re.search(r"gloo/transport/(\w+)/(\w+\.cc):(\d+)", hit.text)
    if src:
        facts["gloo_source"] = f"{src.group(1)}/{src.group(2)}:{src.group(3)}"
    said = (
        f" ({facts['local_family']} here, {facts['peer_family']} at the peer)"
        if "local_family" in facts
        else ""
    )
    return [
        row.event(
            hit,
            f"{hit.who()}: gloo could not connect a pair: the peer's address is of another family (IPv4 vs "
            f"IPv6){said} than this rank's; set GLOO_SOCKET_IFNAME to the same interface (family) on every "
            "host, or a MASTER_ADDR / host name that resolves to IPv4 everywhere (not 0.0.0.0)",
            facts,
            dedupe=(row.code, "gloo_family"),
        )
    ]


SIGNATURES = (
    Signature(
        "gloo bind",
        _BIND,
        _bind,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"gloo/transport/",),
        words=("bind: ", "listen: "),
    ),
    Signature(
        "gloo address family",
        _FAMILY,
        _family,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"address family mismatch", b"ss_family", b"Unknown address family", b"Unknown ai_family"),
        worth=(
            rb"address family mismatch",
            rb"ss1\.ss_family == ss2",
            rb"Unknown (?:address |ai_)family: ?\d",
        ),
        words=("address family mismatch", "ss_family", "unknown address family", "unknown ai_family"),
    ),
    Signature(
        "gloo full mesh",
        _FULL_MESH,
        _full_mesh,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"rror", b"connectFullMesh failed"),
        worth=(rb"Error\b", rb"\berror\b", rb"connectFullMesh failed"),
        words=("connectfullmesh",),
        anchor_from="the 'RuntimeError: ' torch raises it as (the '[E ProcessGroupGloo.cpp] ' log line "
        "before it "
        "is read when gloo's own text holds an error word: 'no error')",
        examples=(
            "RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:1"
            "44] "
            "Connection refused, remote=[127.0.1.1]:17308",
            "[E ProcessGroupGloo.cpp:143] Gloo connectFullMesh failed with "
            "[../third_party/gloo/gloo/transport/"
            "tcp/pair.cc:144] no error",
        ),
    ),
    Signature(
        "gloo interface",
        _GLOO_IFACE,
        _gloo_iface,
        C.NCCL_SOCKET_ERROR.code,
        # (its own words too: a paste that wraps the enforce text puts them on a line of their own)
        anchors=(b"rror", b"Unable to find address for"),
        worth=(rb"Error\b", rb"Unable to find address for"),
        words=("unable to find address for",),
        anchor_from="the exception type ('RuntimeError: ') before gloo's enforce message",
        examples=(
            "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != "
            "nullptr. Unable to find address for: eth0",
        ),
    ),
    Signature(
        "gloo transport timeout",
        _PAIR_TIMEOUT,
        _pair_timeout,
        C.GLOO_TIMEOUT.code,
        tier=1,
        anchors=(b"gloo/transport/",),
        words=("gloo/transport/",),
    ),
    Signature(
        "gloo pair closed on the application timeout (gloo's sentence alone)",
        _PAIR_TIMEOUT_BARE,
        _pair_timeout,
        C.GLOO_TIMEOUT.code,
        tier=1,
        anchors=(b"Application timeout caused pair closure",),
        words=("application timeout caused pair closure",),
    ),
    Signature(
        "gloo TimeoutException (the type alone)",
        _TIMEOUT_TYPE,
        _timeout_type,
        C.GLOO_TIMEOUT.code,
        tier=1,
        anchors=(b"gloo::TimeoutException",),
        words=("gloo::timeoutexception",),
    ),
    Signature(
        "gloo ibverbs transport",
        _IBVERBS,
        _ibverbs,
        C.NCCL_IB_ERROR.code,
        anchors=(b"gloo/transport/",),
        words=("gloo/transport/",),
    ),
    Signature(
        "gloo transport socket failure",
        _PAIR,
        _pair,
        C.NCCL_SOCKET_ERROR.code,
        tier=1,
        anchors=(b"gloo/transport/",),
        words=("gloo/transport/",),
    ),
)
parse = gated_reader(SIGNATURES)
