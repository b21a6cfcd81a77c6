"""nccl_network texts that carry no NCCL WARN prefix and no torch wrapper around them.

Read at their sources:
- NCCL's socket layer retrying a connect at INFO level: "Call to connect returned Connection refused,
  retrying" (include/socket.h 2.4-2.11, misc/socket.cc 2.12-2.22; since 2.7 printed once per 1000
  refused tries) and "socketPollConnect: connect to 10.0.0.2<43251> returned Connection refused,
  retrying (3/34) after sleep for 300 msec" (misc/socket.cc 2.23+). A log that ends in them (no
  "Init COMPLETE" / "Connected all rings" after) is a peer or root that never listened: a symptom
  (tier 1) that any other failure outranks.
- (NCCL's shared memory segment quoted without its WARN prefix: rules/nccl_shm.py, every version's texts.)
- gloo's enforce in transport/tcp/pair.cc (caffe2 / torch <= 1.x): "[enforce fail at .../gloo/transport/
  tcp/pair.cc:498] optval == 0. 111 vs 0. SO_ERROR: Connection refused" - the connect's socket error.
- MSCCL++ (mscclpp's errors.hpp): "terminate called after throwing an instance of 'mscclpp::IbError'"
  with "what():  a work item failed: status 12 (Ib failure: Cannot allocate memory)": its IB transport.
- libfabric's "<warn> fi_getinfo: provider efa output empty list": the provider saw no device, and its EFA
  provider's completion errors ("efa_rdm_txe_handle_error():737<warn> err: 5, message: Invalid address ...").
- aws-ofi-nccl's standalone test programs (tests/test-common.h, functional_test.cpp), which print the
  plugin's own records without NCCL's logger: "WARN: Function: create_nccl_ofi_component Line: 459:
  NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid argument".
- The connect that gave up, quoted without its WARN prefix (misc/socket.cc 2.19-2.22 "socketStartConnect:
  exceeded retries (34)" / "exceeded timeouts (20000)"; 2.23+ "socketPollConnect: connect to 10.0.0.2<43251>
  returned Connection refused, exceeded error retry count after 35 attempts"): the final failure, not a retry.
- A connection refused for its socket type, quoted without its WARN prefix (misc/socket.cc 2.12+
  "socketFinalizeAccept: wrong type 3 != 4", ncclInternalError): ncclSocketType 0 unknown, 1 bootstrap,
  2 proxy, 3 NetSocket, 4 NetIb, 5 RAS; a NetSocket peer at a NetIb listener is two nodes that chose
  different network transports (IB on one, sockets on the other: NCCL_IB_DISABLE / NCCL_NET differ, or
  the IB devices of one node are unusable).
- The proxy service thread losing a local rank's socket (proxy.cc 2.12+: "[Service thread] Could not receive
  type from localRank 7, res=3, closed=0"), also with its file:line mangled into markdown links.
- "unhandled system error" (ncclSystemError's string) wrapped by a framework that names the NCCL call on
  the next line (HugeCTR's "Runtime error: unhandled system error" / "ncclGroupEnd() at ResourceManager...").
- NCCL's interface choice (net_socket.cc "NET/Socket : Using [0]bond0:192.168.1.161<0> [1]br-05ab...",
  bootstrap.cc "Bootstrap : Using br-05ab815fa14e:172.19.0.1<0>") naming docker bridges / veth pairs that
  the default NCCL_SOCKET_IFNAME does not exclude, in a log that ends before the communicator came up: a
  symptom (tier 1) of traffic sent over an interface the peer cannot reach.
The retries and the interface list are failures only if this process's communicator never came up
(no "Init COMPLETE" / "Connected all rings" of it later in the log): the window is read here, the rest
of the log by doctor/diagnose/lookahead.py (an 8-GPU init prints hundreds of channel lines first).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import LINES_AFTER, UNTIL_UP, Event, Hit
from pgdoctor.diagnose.rules.nccl_detail import network_facts
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_ERRNO = r"Connection refused|Connection timed out|No route to host|Network is unreachable"
_RETRY = lazy_re.compile(
    r"Call to connect returned (?P<err>" + _ERRNO + r"), retrying|"
    r"(?P<fn>\w+): connect to (?P<peer>\S+) returned (?P<err2>" + _ERRNO + r"), retrying"
)
# What NCCL prints once the communicator is up: the retries above then worked.
_UP = lazy_re.compile(
    r"Init COMPLETE|Connected all (?:rings|trees)|ncclCommInitRank\b.*\bsuccess|Init SUCCESS"
)
_PROC = lazy_re.compile(r"(?:^|\s)([\w.-]+:\d+):\d+ \[\d+\]")


def until_up(hit: Hit) -> Optional[dict[str, str]]:
    """None when the window shows the communicator coming up after the hit, else the pending fact
    (event.UNTIL_UP: the hit's NCCL "host:pid:", or "" when the line has none)."""
    if any(_UP.search(ln.text) for ln in hit.after(LINES_AFTER, same_rank=False)):
        return None
    m = _PROC.search(hit.text)
    return {UNTIL_UP: f"{m.group(1)}:" if m else ""}


def _retry(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    pending = until_up(hit)
    if pending is None:
        return []  # the connect was retried and then worked
    err = m.group("err") or m.group("err2")
    facts: dict[str, Any] = {"socket_error": err, "retrying": True, **pending}
    if m.group("peer"):
        facts.update(network_facts(f"to {m.group('peer')}"))
    return [
        row.event(
            hit,
            f"{hit.who()}: NCCL kept retrying a connect to a peer ({err}) and the log ends without the "
            "communicator coming up: the peer (or the bootstrap root) never listened on that address, "
            "or a firewall / wrong interface (NCCL_SOCKET_IFNAME) keeps it unreachable",
            facts,
            dedupe=(row.code, "retry"),
        )
    ]


_GLOO_SO_ERROR = lazy_re.compile(
    r"gloo/transport/(?:tcp|uv)/\w+\.cc:\d+\][^\n]*?SO_ERROR: (?P<err>[^\n]+?)\s*(?:-{3,}.*)?$"
)


def _gloo_so_error(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: gloo could not connect to a peer: {m.group('err').strip()}",
            {"backend": "gloo", "socket_error": m.group("err").strip()},
            dedupe=(row.code, hit.rank, "gloo_so_error"),
        )
    ]


_MSCCLPP = lazy_re.compile(r"mscclpp::(?P<kind>IbError|SysError)|\((?P<ib>Ib failure: [^)]+)\)")


def _mscclpp(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    text = " ".join([hit.text] + [ln.text for ln in hit.after(2)])
    ib = m.group("ib") or next(iter(re.findall(r"Ib failure: [^)\n]+", text)), "")
    if m.group("kind") == "SysError" and not ib:
        return None
    return [
        row.event(
            hit,
            f"{hit.who()}: MSCCL++'s InfiniBand transport failed" + (f" ({ib})" if ib else ""),
            {"library": "mscclpp", **({"ib_failure": ib} if ib else {}), **network_facts(text)},
            dedupe=(row.code, "mscclpp"),
        )
    ]


_OFI_TEST = lazy_re.compile(r"^WARN: Function: (?P<fn>\w+) Line: (?P<line>\d+): (?P<msg>NET/OFI .*)$")


def _ofi_test(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    msg = m.group("msg")
    if not re.search(r"[Ff]ail|[Ee]rr|[Cc]ouldn.t|[Uu]nable|[Cc]ould not", msg):
        return None
    return [
        row.event(
            hit,
            f"{hit.who()}: the AWS OFI plugin (libfabric / EFA) failed in {m.group('fn')}: {clip(msg, 160)}",
            {"nccl_warn": msg[:300], "function": m.group("fn")},
            dedupe=(row.code, "ofi_test"),
        )
    ]


# libfabric's own warning (core fi_getinfo_, printed at its default log level) that the RDMA provider the
# plugin asked for found no device: "libfabric:85:1747438790::core:core:fi_getinfo_():1392<warn> fi_getinfo:
# provider efa output empty list" - no EFA / verbs device visible (a container without /dev/infiniband, an
# instance without EFA). A symptom (tier 1), silent once NCCL's communicator came up anyway (on sockets).
_FI_EMPTY = lazy_re.compile(
    r"<warn> fi_getinfo: provider (?P<prov>efa|verbs|psm[23]|cxi|opx)\S* output empty list"
)


def _fi_empty(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if any(_UP.search(ln.text) for ln in hit.after(48, same_rank=False)):
        return []
    return [
        row.event(
            hit,
            f"libfabric's {m.group('prov')} provider found no device: the OFI plugin has no RDMA network "
            "(EFA / verbs devices not visible in this host or container: /dev/infiniband, the EFA driver)",
            {"provider": m.group("prov"), "library": "libfabric"},
            dedupe=(row.code, "fi_empty"),
        )
    ]


# libfabric's EFA provider reporting a failed completion (prov/efa efa_rdm_txe_handle_error /
# efa_rdm_rxe_handle_error / efa_rdm_pke_handle_*_error, at its default warn level): "libfabric:451707:
# 1708520807::efa:cq:efa_rdm_txe_handle_error():737<warn> err: 5, message: Invalid address My EFA addr: ...
# Peer EFA addr: ... (7)" - the fabric's own failure under aws-ofi-nccl, or its peer gone (an "Invalid
# address" / unreachable remote is what a dead peer's endpoint looks like: facts peer_may_have_died).
_FI_CQ_ERR = lazy_re.compile(
    r"::(?P<prov>efa|verbs|cxi)\w*:\w+:(?P<fn>\w*handle_\w*error)\(\):\d+<warn>\s*err: (?P<err>\d+), "
    r"message: (?P<msg>[^(]+?)(?:\s+My \w+ addr:.*?)?\s*\((?P<code>\d+)\)"
)


def _fi_cq_err(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: libfabric's {m.group('prov')} provider failed a transfer: "
            f"{m.group('msg').strip()} (err {m.group('err')}, provider error {m.group('code')}): the RDMA "
            "network, or the peer behind it gone",
            {
                "provider": m.group("prov"),
                "library": "libfabric",
                "fi_error": int(m.group("err")),
                "provider_error": int(m.group("code")),
                "fi_message": m.group("msg").strip()[:200],
                "peer_may_have_died": True,
            },
            dedupe=(row.code, hit.rank, "fi_cq"),
        )
    ]


_GAVE_UP = lazy_re.compile(
    r"(?P<fn>socket\w*Connect):? (?:connect to (?P<peer>\S+) returned (?P<err>[A-Z][\w ]+?), exceeded "
    r"error retry count after (?P<n>\d+) attempts|exceeded (?P<what>timeouts|retries) \((?P<n2>\d+)\))"
)


def _gave_up(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "NCCL WARN" in hit.text:
        return None  # the WARN rows read it with its prefix
    facts: dict[str, Any] = {"attempts": int(m.group("n") or m.group("n2"))}
    if m.group("err"):
        facts["socket_error"] = m.group("err")
    if m.group("peer"):
        facts.update(network_facts(f"to {m.group('peer')}"))
    err = m.group("err") or f"exceeded {m.group('what')}"
    return [
        row.event(
            hit,
            f"{hit.who()}: NCCL gave up connecting to a peer ({err}, {facts['attempts']} attempts): the peer "
            "(or the bootstrap root) is not listening on that address, or a firewall / wrong interface "
            "(NCCL_SOCKET_IFNAME) keeps it unreachable",
            facts,
            dedupe=(row.code, "gave_up"),
        )
    ]


_WRONG_TYPE = lazy_re.compile(r"socketFinalizeAccept: wrong type (?P<got>\d+) != (?P<want>\d+)")
_SOCKET_TYPES = {0: "unknown", 1: "bootstrap", 2: "proxy", 3: "NetSocket", 4: "NetIb", 5: "RAS"}


def _wrong_type(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    got, want = int(m.group("got")), int(m.group("want"))
    facts: dict[str, Any] = {
        "peer_socket_type": _SOCKET_TYPES.get(got, str(got)),
        "listener_socket_type": _SOCKET_TYPES.get(want, str(want)),
    }
    why = "a stray or mismatched connection reached this rank's listener"
    if {got, want} == {3, 4}:
        facts["transport_mismatch"] = True
        why = (
            "one side runs NCCL's socket transport and the other InfiniBand/RoCE: the nodes chose "
            "different network transports (NCCL_IB_DISABLE / NCCL_NET differ between them, or one "
            "node's IB devices are unusable); make them agree, or NCCL_IB_DISABLE=1 everywhere"
        )
    return [
        row.event(
            hit,
            f"{hit.who()}: NCCL refused a peer's connection of socket type "
            f"{facts['peer_socket_type']} at a {facts['listener_socket_type']} listener: {why}",
            facts,
            dedupe=(row.code, "wrong_type"),
        )
    ]


# 2.18+ adds ", res=R, closed=C"; 2.12-2.17 print "[Service thread] Could not receive type from localRank 3".
_PROXY_RECV = lazy_re.compile(
    r"\[Service thread\] Could not receive type from localRank (?P<lr>\d+)"
    r"(?:, res=(?P<res>\d+), closed=(?P<closed>\d+))?"
)


def _proxy_recv(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"peer_local_rank": int(m.group("lr"))}
    said = ""
    if m.group("res") is not None:
        facts["nccl_result"] = int(m.group("res"))
        said = f" (res={m.group('res')}, closed={m.group('closed')})"
    return [
        row.event(
            hit,
            f"{hit.who()}: NCCL's proxy service lost the socket of local rank {m.group('lr')}{said}: that "
            "process died or its connection broke",
            facts,
            dedupe=(row.code, "proxy_recv"),
        )
    ]


# The text after "error"/"failed" stops at the next "error"/"failed": a line matches exactly when it
# did (from its last such word before the tail instead of its first), and each character is read
# once, not once per "error" before it (quadratic in a long line).
_WRAPPED_SYS = lazy_re.compile(
    r"(?:[Ee]rror|[Ff]ailed)\W(?:(?![Ee]rror\W|[Ff]ailed\W)[^\n])*?\bunhandled system error\s*$"
)
_NCCL_CALL = lazy_re.compile(r"^\s*(?P<call>nccl[A-Z]\w+)\(")


def _wrapped_sys(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "NCCL" in hit.text:
        return None  # NCCL's and torch's own wordings have their rows
    nxt = hit.after(1)
    call = _NCCL_CALL.match(nxt[0].text) if nxt else None
    if not call:
        return None
    return [
        row.event(
            hit,
            f"{hit.who()}: {call.group('call')} returned ncclSystemError (unhandled system error): a socket, "
            "shared memory (/dev/shm) or network transport call failed",
            {"nccl_error": "unhandled system error", "nccl_call": call.group("call")},
            dedupe=(row.code, "wrapped_sys"),
        )
    ]


# NCCL 2.0-2.3 said it one interface a line: "NET : Using interface lo:127.0.0.1<0>", then "NET/Socket : 2
# interfaces found".
USING = lazy_re.compile(r"(?P<who>NET/Socket|Bootstrap|NET) : Using(?: interface(?= \w))?(?P<rest>.*)$")
_IFACE = lazy_re.compile(r"(?:\[\d+\]|^\s*)(?P<name>[A-Za-z][\w.-]*):[0-9a-fA-F.:]+(?:%\S+)?<\d+>")
_LOOPBACK = lazy_re.compile(r"(?:\[\d+\]|^\s*)lo\d*:(?:127\.|::1\b)")
_VIRTUAL = lazy_re.compile(r"^(?:br-[0-9a-f]+|veth\w+|docker\d*|virbr\d+|cni\d+|lxcbr\d+|flannel\.\d+)$")


# A job whose ranks all run on one host, as the log itself says: nccl-tests' device table on rank 0 ("#  Rank
# 0 Pid 17754 on node1 device 0 [0x06] Tesla V100", one row per rank of the world), or a single-node launch
# ("mpirun ... -H localhost:2", "--host localhost", torchrun --standalone / --nnodes=1). There "lo" is the
# interface every peer shares, not a misconfiguration.
_RANK_ROW = lazy_re.compile(r"^#\s*Rank\s+\d+\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(?P<host>\S+)\s+device")
_ONE_NODE_LAUNCH = lazy_re.compile(
    r"(?:\s-H|\s--host)\s+localhost(?::\d+)?(?:\s|$)|\s--standalone\b|\s--nnodes[= ]1(?:\s|$)"
)


def _one_node(hit: Hit) -> bool:
    lines = [*hit.before(24, same_rank=False), hit.line, *hit.after(48, same_rank=False)]
    hosts = [r.group("host") for ln in lines for r in [_RANK_ROW.match(ln.text.strip())] if r]
    if len(hosts) >= 2:
        return len(set(hosts)) == 1
    return any(_ONE_NODE_LAUNCH.search(ln.text) for ln in lines)


# The "host:pid:tid [dev] " head of an NCCL line.
_NCCL_HOST = lazy_re.compile(r"^\s*(?P<host>[\w.-]+):\d+:\d+ \[\d+\]")


def _hosts_seen(hit: Hit) -> set[str]:
    lines = [*hit.before(24, same_rank=False), hit.line, *hit.after(48, same_rank=False)]
    return {h.group("host") for ln in lines for h in [_NCCL_HOST.match(ln.text)] if h}


def virtual_iface(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    pending = until_up(hit)
    if pending is None:
        return None  # the communicator came up: the list is an observation (nccl_transport)
    if m.group("who") == "NET" and len(_hosts_seen(hit)) < 2:
        # NCCL <= 2.3 may list lo beside the real interface by itself: read only where the paste shows ranks
        # of two hosts, each told the other's loopback address
        return None
    after = hit.after(32, same_rank=False)
    texts = [m.group("rest")] + [ln.text for ln in after[:32] if re.match(r"^\s*\[\d+\]", ln.text)]
    names = [i.group("name") for t in texts for i in _IFACE.finditer(t)]
    virtual = [n for n in names if _VIRTUAL.match(n)]
    # The loopback interface: NCCL (misc/socket.cc ncclFindInterfaces) takes "lo" only when NCCL_SOCKET_IFNAME
    # names it or no other interface is up, so "NET/Socket : Using [0]lo:127.0.0.1<0> [1]eth0:..." in a job
    # that never comes up is a setting that lets peers be told 127.0.0.1.
    loop = [i.group("name") for t in texts for i in _IFACE.finditer(t) if _LOOPBACK.match(i.group(0))]
    if loop and not virtual and _one_node(hit):
        loop = []  # every rank on this host: loopback reaches them all
    if not virtual and not loop:
        return None
    facts: dict[str, Any] = {"interfaces": names[:32], "fix_env": "NCCL_SOCKET_IFNAME", **pending}
    if virtual:
        facts["virtual_interfaces"] = virtual[:32]
    if loop:
        facts["loopback_interfaces"] = loop[:8]
    shown = (virtual + loop)[:3]
    kind = "virtual interfaces" if virtual else "the loopback interface"
    return [
        row.event(
            hit,
            f"{hit.who()}: NCCL ({m.group('who')}) uses {kind} ({', '.join(shown)}"
            f"{', ...' if len(virtual + loop) > 3 else ''}) and the log ends before the communicator came "
            "up: "
            "set NCCL_SOCKET_IFNAME to the interface the peers share"
            + (" (and never include lo)" if loop else ""),
            facts,
            dedupe=(row.code, "virtual_iface"),
        )
    ]


SIGNATURES = (
    Signature(
        "nccl connect retries",
        _RETRY,
        _retry,
        C.NCCL_SOCKET_ERROR.code,
        tier=1,
        anchors=(b", retrying",),
        worth=(rb"returned [A-Z][a-z]+ ?[a-z ]*, retrying",),
        words=(", retrying",),
    ),
    Signature(
        "gloo enforce so_error",
        _GLOO_SO_ERROR,
        _gloo_so_error,
        C.NCCL_SOCKET_ERROR.code,
        tier=1,
        anchors=(b"gloo/transport/",),
        words=("so_error",),
    ),
    Signature(
        "mscclpp ib error",
        _MSCCLPP,
        _mscclpp,
        C.NCCL_IB_ERROR.code,
        anchors=(b"mscclpp::", b"Ib failure"),
        worth=(rb"mscclpp::", rb"Ib failure"),
        words=("mscclpp::", "ib failure"),
    ),
    Signature(
        "libfabric provider without devices",
        _FI_EMPTY,
        _fi_empty,
        C.NCCL_IB_ERROR.code,
        tier=1,
        anchors=(b"output empty list",),
        worth=(rb"output empty list",),
        words=("output empty list",),
    ),
    Signature(
        "libfabric completion error",
        _FI_CQ_ERR,
        _fi_cq_err,
        C.NCCL_IB_ERROR.code,
        anchors=(b"error():",),
        worth=(rb"handle_\w*error\(\):\d+<warn>",),
        words=("<warn> err:",),
    ),
    Signature(
        "aws-ofi-nccl test warn",
        _OFI_TEST,
        _ofi_test,
        C.NCCL_IB_ERROR.code,
        anchors=(b"NET/OFI",),
        worth=(rb"WARN: Function: ",),
        words=("net/ofi",),
    ),
    Signature(
        "nccl connect gave up",
        _GAVE_UP,
        _gave_up,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"exceeded",),
        worth=(rb"Connect:? (?:connect to \S+ returned|exceeded (?:timeouts|retries))",),
        words=("exceeded",),
    ),
    Signature(
        "nccl socket type mismatch",
        _WRONG_TYPE,
        _wrong_type,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"socketFinalizeAccept: wrong type",),
        words=("socketfinalizeaccept",),
        examples=("socketFinalizeAccept: wrong type 3 != 4",),
    ),
    Signature(
        "nccl proxy service recv",
        _PROXY_RECV,
        _proxy_recv,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"Could not receive type",),
        worth=(rb"Could not receive type from localRank",),
        words=("could not receive type",),
    ),
    Signature(
        "wrapped unhandled system error",
        _WRAPPED_SYS,
        _wrapped_sys,
        C.NCCL_SYSTEM_ERROR.code,
        anchors=(b"unhandled system error",),
        worth=(rb"unhandled system error",),
        words=("unhandled system error",),
    ),
)
parse = gated_reader(SIGNATURES)
