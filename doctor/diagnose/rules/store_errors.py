"""rendezvous, continued: a store that the ranks reached and then lost, or could not name - its reads and
waits failing (torch/csrc/distributed/c10d/TCPStore.cpp, Utils.hpp), the elastic rendezvous's backend
unreachable (elastic/rendezvous/c10d_rendezvous_backend.py, etcd_rendezvous.py with python-etcd), and a
store host name that does not resolve. The rows follow rendezvous.py's (MODULES lists this module right
after it), so a line that module reads never reaches them.

Formats: 1.x "RuntimeError: Socket Timeout" (c10d/Utils.hpp) and "store->get('0') got error: Socket
Timeout"; 2.0-2.2 "RuntimeError: [../torch/csrc/distributed/c10d/TCPStore.cpp:1203] wait timeout after
1800000ms, keys: ..."; 2.x "DistStoreError: wait timeout after 300000ms, keys: ..."; 2.1+ Utils.hpp
recvBytes "DistNetworkError: Failed to recv, got 0 bytes. Connection was likely closed. Did the remote
server shutdown or crash?" and ProcessGroupNCCL's "[3] is setting up NCCL communicator and retrieving
ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: failed to recv,
got 0 bytes"; "DistNetworkError: Connection reset by peer" / "Broken pipe" under a store operation's
frame; "RendezvousConnectionError: The connection to the C10d store has failed" (and "... to etcd has
failed"); python-etcd's "EtcdConnectionFailed: Connection to etcd failed due to MaxRetryError(...)";
"Name or service not known" / "Temporary failure in name resolution" near the store's words. The client's
checks of the server's answers (TCPStore.cpp, 1.x-2.x): "Stop_waiting response is expected", "wait_canceled
response is expected", "ready or not_ready response expected", and 2.4+'s "Ping failed, invalid value returned
from server. Expected: N, Got: M": the client reached something that does not speak this job's store protocol
(another service or a stale job's store on MASTER_PORT, an empty or wrong MASTER_ADDR / MASTER_PORT, ranks of
different torch versions), or the store went away in the middle of a reply. Utils.hpp's send side says "Failed
to send, sent 0 bytes. Connection was likely closed." like its recv side.

A store that was reached and then lost is most often the echo of the process that hosted it dying
(rank 0, or its agent): those rows are tier 1, so the death found elsewhere in the log is the cause; inside
torchrun's exit barrier (the agent's workers had ended) they are tier 2. "RendezvousStateError: The
rendezvous state is corrupt" is a state that another job or torch version wrote on the same key. socket.cpp's
per-family lookup "The IPv6 network addresses of (h, p) cannot be retrieved (gai error: -2 ...)" once is a
step before IPv4, not a failure; the resolver failing (-3), a bracketed address, the same process repeating
it or a stack in _create_c10d_store beside it is.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.rendezvous import LEAD, LOOPBACK_NAMES, connected_later
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

# 1.x's message is that alone: a title quotes it ("T5-[ RuntimeError: Socket Timeout ]") or ends on it
_SOCKET_TIMEOUT = lazy_re.compile(
    LEAD
    + r"(?:\w+\.)*\w*Error: Socket Timeout\b|(?:^|[\s\[(\"'])RuntimeError: Socket Timeout\s*(?:$|[\])\"'])"
)
# also the c10d backend's file store (--rdzv-endpoint a path): "RendezvousError: The file creation for C10d
# store has failed. See inner exception for details."
_RDZV_CONN = lazy_re.compile(
    r"RendezvousConnectionError|connection to the C10d store has failed|"
    r"file creation for C10d store has failed"
)
# torch 2.0-2.2 raised the store's errors as RuntimeError with the TCPStore source before the text:
# "RuntimeError: [../torch/csrc/distributed/c10d/TCPStore.cpp:1203] wait timeout after 1800000ms, keys: ..."
_STORE_ERR = lazy_re.compile(
    # ProcessGroupNCCL's message, which a title or a cut paste may end mid-word ("... store->get('0') got e")
    r"store->get\('([^']*)'\) (?:got error: (.*)|" + lazy_re.cut_tail("got error:") + r"|got error$)|"
    r"(?:DistNetworkError|DistStoreError): (.*)|"
    r"c10d/TCPStore\w*\.cpp:\d+\] (.*)|"
    # 1.x's store get after its timeout: "RuntimeError: Timeout waiting for key: default_pg/0/0 after 1800000
    # ms"; TCPStore.cpp's wait without the [file:line] head (torch 2.13 builds, a trimmed paste):
    # "RuntimeError: wait timeout after 300000ms, keys: /default_pg/0//cuda//0"
    r"Error: ((?:Timeout waiting for key\b|wait timeout after \d+\s*ms, keys?:).*)"
)
_DNS = lazy_re.compile(
    r"Name or service not known|Temporary failure in name resolution|nodename nor servname|"
    r"No address associated with hostname"
)
# A store operation of the store-based barrier (distributed_c10d._store_based_barrier: store.add /
# store.wait / store.get) or of the rendezvous that lost its server: the traceback's frames name it.
STORE_OP = lazy_re.compile(
    r"_store_based_barrier|_set_sequence_number_for_group|\bstore\.(?:add|get|set|wait|compare_set|check)\(|T"
    r"CPStore|"
    r"rendezvous/(?:c10d|static_tcp|etcd)\w*\.py|_create_c10d_store|_create_tcp_store|"
    r"_(?:tcp|env)_rendezvous_handler|"
    # init_process_group itself (1.x raised the store's and gloo's connect errors straight from it): the
    # only network it does is the ranks' meeting (the store, then gloo's full mesh over it)
    r"distributed_c10d\.py\", line \d+, in init_process_group|"
    # torch 0.3-0.4's THD raised its TCP init's socket errors with its source after them ("RuntimeError:
    # Connection refused at /pytorch/torch/lib/THD/base/TCPUtils.cpp:45"): only the ranks' meeting is there
    # (its init and connect sources only: a data channel's reset while training is the network's)
    r"torch/lib/THD/(?:base/init_methods/|base/TCPUtils\.cpp|process_group/General\.cpp)"
)
# torch 1.x TCPStore's connect (c10d/Utils.cpp SYSCHECK): the socket's strerror raised as it is,
# "RuntimeError: Connection timed out" / "No route to host" / "Network is unreachable", under
# init_process_group's tcp:// or env:// handler (or the store's own frame): the store's address is
# unreachable from this node (a firewall, a wrong MASTER_ADDR, a down interface).
_CONNECT_ERRNO = lazy_re.compile(
    r"(?:Error|error): (Connection timed out|No route to host|Network is unreachable|Host is unreachable|"
    r"Cannot assign requested address|Address family not supported by protocol|"
    r"Resource temporarily unavailable)\b"
)
# A paste cut right after the elastic backend's raise: "File \".../c10d_rendezvous_backend.py\", line 115, in
# _call_store" and its source line "raise" (RendezvousConnectionError(...) on the lines cut off): the
# backend's only raise there is that error (c10d_rendezvous_backend.py, etcd_rendezvous_backend.py).
_BACKEND_RAISE = lazy_re.compile(
    r"rendezvous/(?P<backend>c10d|etcd)_rendezvous_backend\.py\", line \d+, in "
    r"(?:_call_store|_create_etcd_client)"
)
_PEER_DROPPED = lazy_re.compile(
    r"Connection reset by peer|Broken pipe|Connection closed by peer|Connection refused|"
    r"(?P<recv0>[Ff]ailed to (?:recv, got|send, sent) 0 bytes)"
)
# ProcessGroupNCCL's heartbeat monitor polls rank 0's TCPStore for a dump request (2.3+, logged [W]):
# 'Failed to check the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with
# error: Broken pipe' (or "Connection reset by peer", "failed to recv, got 0 bytes", ...). Rank 0 exiting
# first - also at the end of a healthy run - closes the store under it: no failure of its own, whichever
# socket error it quotes (nccl_errors' peer connection row honours it too).
SHUTDOWN_POLL = lazy_re.compile(r'Failed to check the "should dump" flag on TCPStore')
# Utils.hpp recvBytes (2.1+): "Failed to recv, got 0 bytes. Connection was likely closed. Did the remote
# server shutdown or crash?" - only c10d's store sockets say it, so it needs no traceback frame; but
# TCPStore's server logs it at [W] ("recvValue failed on SocketImpl(...): failed to recv, got 0 bytes")
# whenever a client hangs up, also at the end of a healthy run: only a raised error counts.
_RECV0_RAISED = lazy_re.compile(
    r"(?:Error|Exception)\b.{0,40}:\s*[Ff]ailed to (?:recv, got|send, sent) 0 bytes"
)
# The rank whose ncclUniqueId the store lookup waited for (ProcessGroupNCCL broadcastUniqueNCCLID):
# "[3] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store".
_UID_FROM = lazy_re.compile(r"retr(?:ie|ei)ving ncclUniqueId from \[(\d+)\]")  # 1.x spelled it "retreiving"
_UID_RANK = lazy_re.compile(r"\[(\d+)\] is setting up NCCL communicator")


def _uid_wait_facts(hit: Hit, facts: dict[str, Any]) -> Optional[int]:
    """The ncclUniqueId wait's two ranks from torch's message: sets `waited_for_rank` (the rank whose id
    was awaited) in facts and returns the rank that waited, or None when the message does not say."""
    uid = _UID_FROM.search(hit.text)
    if uid:
        facts["waited_for_rank"] = int(uid.group(1))
    me = _UID_RANK.search(hit.text)
    return int(me.group(1)) if me else None


# python-etcd's client (client.py) under torchelastic's etcd rendezvous (etcd_rendezvous.py, 0.2-2.x):
# "etcd.EtcdConnectionFailed: Connection to etcd failed due to MaxRetryError(\"HTTPConnectionPool(host=
# '10.0.0.1', port=2379): Max retries exceeded ...\")", "etcd.EtcdException: Could not get the list of
# servers, maybe you provided the wrong host(s) to connect to?".
# The etcd server the launcher starts itself (elastic/rendezvous/etcd_server.py) that never came up: "Timed
# out waiting for etcd server to be ready!".
_ETCD = lazy_re.compile(
    r"Etcd(?:ConnectionFailed|Exception): (?:Connection to etcd failed|Could not get the list of servers)|"
    r"Timed out waiting for etcd server to be ready"
)
_ETCD_ADDR = lazy_re.compile(r"host='([^']+)', port=(\d+)")
_STORE_CONTEXT = lazy_re.compile(
    r"MASTER_ADDR|TCPStore|c10d|rendezvous|store|init_process_group|network addresses of|gai error", re.I
)
_FAMILY_LOOKUP = lazy_re.compile(r"network addresses of \(([^,]+), (\d+)\) cannot be retrieved")


# The barrier the other ranks wait in while the main process works alone (preprocessing, a download, a
# dataset cache): transformers' TrainingArguments.main_process_first, accelerate's main_process_first /
# local_main_process_first / wait_for_everyone, YOLO's torch_distributed_zero_first. A store wait that
# times out there (the barrier's first NCCL communicator waits for rank 0's ncclUniqueId) means rank 0 did
# not reach the barrier within the timeout: a collective timeout, not a lost store.
MAIN_FIRST = lazy_re.compile(
    r"\b(main_process_first|local_main_process_first|wait_for_everyone|torch_distributed_zero_first)\b"
)
_TIMED_OUT = lazy_re.compile(r"Socket Timeout|wait timeout after|[Tt]imed out|[Tt]imeout waiting")


def _main_first_timeout(row: Signature, hit: Hit, error: str) -> Optional[list[Event]]:
    """The store timeout of a rank that waited in a main-process-first barrier, as a timeout; None when
    the error is no timeout or the traceback shows no such barrier."""
    if not _TIMED_OUT.search(error):
        return None
    where = next(
        (w for ln in hit.before(24, same_rank=False) for w in MAIN_FIRST.findall(ln.text)),
        None,
    )
    if where is None:
        return None
    facts: dict[str, Any] = {"kind": "main_process_first_barrier", "barrier": where, "store_error": error}
    rank = _uid_wait_facts(hit, facts)
    if rank is None:
        rank = hit.rank
    return [
        row.event(
            hit,
            f"{hit.who(rank)} waited in {where}'s barrier while the main process worked alone, and the wait "
            "ran past the process group timeout (the main rank's preprocessing took longer than the "
            "timeout)",
            facts,
            code=C.WATCHDOG_TIMEOUT.code,
            rank=rank,
            dedupe=(C.WATCHDOG_TIMEOUT.code, "main_first"),
        )
    ]


# torchrun's agent after its own workers ended (elastic/agent/server/api.py _exit_barrier, utils/store.py
# barrier / synchronize / get_all): its store read times out when the other agents died or hung first.
_EXIT_BARRIER_FRAME = lazy_re.compile(r"in _exit_barrier\b|Error waiting on exit barrier")


def _in_exit_barrier(hit: Hit) -> bool:
    return any(_EXIT_BARRIER_FRAME.search(ln.text) for ln in hit.before(16))


def _exit_barrier_event(row: Signature, hit: Hit, error: str) -> list[Event]:
    return [
        row.event(
            hit,
            f"the agent's exit barrier gave up waiting for the other agents ({error}): they failed or hung "
            "first, their own failure is the cause",
            {"store_error": error, "exit_barrier": True},
            tier=2,
            dedupe=(row.code, "exit_barrier"),
        )
    ]


def _socket_timeout(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if _in_exit_barrier(hit):
        return _exit_barrier_event(row, hit, "Socket Timeout")
    late = _main_first_timeout(row, hit, "Socket Timeout")
    if late is not None:
        return late
    return [
        row.event(
            hit,
            f"{hit.who()}: a store read timed out (Socket Timeout) while the "
            "process group waited for its peers",
            {"store_error": "Socket Timeout"},
            dedupe=(row.code, "store_err"),
        )
    ]


def _rdzv_conn(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"backend": "etcd"} if "etcd" in hit.text else {}
    what = "etcd server" if facts else "(c10d) store"
    if "failed to shutdown the rendezvous" in hit.text:
        # dynamic_rendezvous.py's WARNING when the agent, already stopping on another error, cannot mark
        # the rendezvous closed ("The node 'w1_17_0' has failed to shutdown the rendezvous 'none' due to an
        # error of type RendezvousConnectionError."): the error that stopped it says more.
        facts["during_shutdown"] = True
        return [
            row.event(
                hit,
                f"the agent could not close the rendezvous on its way out: the {what} was unreachable",
                facts,
                tier=1,
                dedupe=(row.code,),
            )
        ]
    return [row.event(hit, f"the connection to the rendezvous {what} failed", facts, dedupe=(row.code,))]


# dynamic_rendezvous.py / c10d_rendezvous_backend.py / etcd_rendezvous_backend.py (1.9-2.x): the rendezvous
# state read back from its store does not decode - "RendezvousStateError: The rendezvous state is corrupt. See
# inner exception for details." / "The state object is corrupt." Another job or agent of another torch version
# writes the same key (a shared --rdzv_id and --rdzv_endpoint).
_RDZV_STATE = lazy_re.compile(r"(?:\w+\.)*RendezvousStateError\b:?\s*(.*)")


def _rdzv_state(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    said = clip(m.group(1).strip(), 160)
    return [
        row.event(
            hit,
            "the elastic rendezvous could not read its state back from the store"
            + (f" ({said})" if said else "")
            + ": another job (or agents of another torch version) uses the same --rdzv_id and endpoint, or "
            "the store's value was overwritten",
            {"problem": "rendezvous_state", "store_error": said},
            dedupe=(row.code, "state"),
        )
    ]


def _dns(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    fam = _FAMILY_LOOKUP.search(hit.text)
    if fam and "IPv6 network addresses" in hit.text and connected_later(hit, int(fam.group(2))):
        # socket.cpp looks up each family in turn ("The IPv6 network addresses of (node-1, 29500) cannot be
        # retrieved (gai error: -2 ...)" for a name with only IPv4 records) and goes on with IPv4, which
        # connected. Without that record the paste ends at this line, and the labels of real logs read it
        # as the failure (a name that does not resolve, a stuck _create_c10d_store).
        return []
    if fam and "IPv6 network addresses" in hit.text and not _lookup_failed(hit, fam):
        # One IPv6 lookup with "no such name" for the family (EAI_NONAME / EAI_NODATA: the host has only
        # IPv4 records, a macOS ".local" name, an IPv4 literal): socket.cpp goes on with IPv4. Its
        # resolver failing (EAI_AGAIN), a bracketed literal, or the lookup repeated (the client loops on
        # it until its timeout) is the failure.
        return []
    if fam and fam.group(1).strip("[]").lower() in LOOPBACK_NAMES:
        # socket.cpp's per-family record for a loopback name ("The IPv6 network addresses of (localhost,
        # 51595) cannot be retrieved (gai error: -2 ...)") on a host without IPv6 for it: it goes on
        # with IPv4, which resolves. For any other name the store's host does not resolve.
        return []
    if not _STORE_CONTEXT.search(" ".join([hit.text] + [ln.text for ln in hit.before(6)])):
        return None  # no store words beside it: peer_bootstrap's bare host-name row reads it
    return [
        row.event(
            hit,
            "the store host name does not resolve (MASTER_ADDR)" + (f": {fam.group(1)}" if fam else ""),
            {
                "error": "name resolution",
                **({"master_addr": fam.group(1), "master_port": int(fam.group(2))} if fam else {}),
            },
            dedupe=(row.code, "dns"),
        )
    ]


# getaddrinfo's codes for "no address of this family for the name": EAI_NONAME (-2 glibc, 8 macOS, 11001
# Winsock WSAHOST_NOT_FOUND), EAI_NODATA (-5, 7 macOS, 11004 WSANO_DATA), EAI_ADDRFAMILY (-9, 1 macOS).
_GAI_NO_NAME = lazy_re.compile(r"gai error: (?:-2|8|11001|-5|7|11004|-9|1) - ")


_IN_STORE_CREATION = lazy_re.compile(r"_create_c10d_store|_create_tcp_store|TCPStore\(")
# A log aggregator's count of the same record folded into one line: Monarch's "[24 similar log lines] <line>"
# (hyperactor_mesh logging.rs, LogLine's Display). More than one is the lookup repeated by the client's loop.
_FOLDED = lazy_re.compile(r"^\s*\[(\d+) similar log lines\]")


def _lookup_failed(hit: Hit, fam: re.Match[str]) -> bool:
    """Whether socket.cpp's per-family record says more than "this name has no IPv6 address"."""
    if not _GAI_NO_NAME.search(hit.text) or fam.group(1).startswith("["):
        return True  # the resolver itself failed, or "[addr]" (URL syntax that no resolver accepts)
    folded = _FOLDED.search(hit.text)
    if folded and int(folded.group(1)) > 1:
        return True
    same = f"network addresses of ({fam.group(1)}, {fam.group(2)})"
    # the same lookup again by the same process (the client loops on it; each rank of a job printing its one
    # record once is not that), or a stack in the store's creation beside it (a py-spy dump or a traceback of
    # _create_c10d_store: the process is stuck or died there)
    if any(same in ln.text for ln in hit.after(40, same_rank=True)):
        return True
    near = [*hit.before(24, same_rank=False), *hit.after(40, same_rank=False)]
    return any(_IN_STORE_CREATION.search(ln.text) for ln in near)


def _op_name(op: re.Match[str]) -> str:
    if "THD" in op.group(0):
        return "THD's TCP init"
    return "init_process_group" if op.group(0).endswith("init_process_group") else op.group(0).rstrip("(")


def _store_dropped(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if SHUTDOWN_POLL.search(hit.text):
        return []
    op = next((o for o in (STORE_OP.search(ln.text) for ln in [*hit.before(16), hit.line]) if o), None)
    if m.group("recv0"):
        if not _RECV0_RAISED.search(hit.text):
            return None  # TCPStore's server-side [W] record of a client that hung up
    elif op is None or not re.search(r"Error|error", hit.text):
        return None
    if _in_exit_barrier(hit):
        return _exit_barrier_event(row, hit, m.group(0))
    where = f" in {_op_name(op)}" if op else ""
    facts = {"store_error": m.group(0)}
    if op:
        facts["store_op"] = _op_name(op)
    what = (
        "could not connect to the store (Connection refused): nothing listened on MASTER_ADDR:MASTER_PORT "
        "(the master rank had not started or had died, or the address or port is wrong)"
        if "refused" in m.group(0)
        else f"a store operation lost its connection ({m.group(0)}){where}: the store's host (rank 0's agent "
        "or process) went away or dropped the client"
    )
    return [
        row.event(
            hit,
            f"{hit.who()}: {what}",
            facts,
            dedupe=(row.code, "store_err"),
        )
    ]


def _connect_errno(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    op = next((o for o in (STORE_OP.search(ln.text) for ln in [*hit.before(16), hit.line]) if o), None)
    if op is None:
        return None
    if m.group(1).startswith("Address family"):
        # 1.x's store socket for IPv6 on a host where IPv6 is disabled (the listen on [::] of rank 0)
        return [
            row.event(
                hit,
                f"{hit.who()}: the store's socket could not be opened ({m.group(1)}) in {_op_name(op)}: IPv6 "
                "is disabled on this host; give MASTER_ADDR as an IPv4 address",
                {"store_error": m.group(1), "store_op": _op_name(op)},
                dedupe=(row.code, "store_err"),
            )
        ]
    # EAGAIN: 1.x's store socket timed out (SO_RCVTIMEO) waiting for its server or for a rank (PipeDream, v16)
    again = "unavailable" in m.group(1)
    return [
        row.event(
            hit,
            f"{hit.who()}: could not connect to the store ({m.group(1)}) in {_op_name(op)}: "
            + ("its socket timed out waiting for the store's host or another rank (" if again else "")
            + "MASTER_ADDR / the init_method's host is unreachable from this node (a firewall, a wrong "
            "address, a down interface)" + (", or a rank never started)" if again else ""),
            {"store_error": m.group(1), "store_op": _op_name(op)},
            dedupe=(row.code, "store_err"),
        )
    ]


def _backend_raise(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    after = [ln.text for ln in hit.after(4) if ln.text.strip()]
    if not after or not re.match(r"\s*raise\b", after[0]):
        return None
    if any(re.search(r"Error\b|Exception\b", t) for t in after[1:]):
        return None  # the exception line is there: its own row reads it
    backend = m.group("backend")
    return [
        row.event(
            hit,
            f"{hit.who()}: the traceback ends at the {backend} rendezvous backend's raise of "
            "RendezvousConnectionError (the paste is cut there): the agent lost its rendezvous store",
            {"backend": backend, "problem": "rendezvous_connection", "cut_traceback": True},
            dedupe=(row.code,),
        )
    ]


def _etcd(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    a = _ETCD_ADDR.search(hit.text)
    facts: dict[str, Any] = {"backend": "etcd", "store_error": clip(hit.text.strip(), 200)}
    if a:
        facts["etcd_host"], facts["etcd_port"] = a.group(1), int(a.group(2))
    at = f" at {a.group(1)}:{a.group(2)}" if a else ""
    return [
        row.event(
            hit,
            f"the elastic rendezvous could not reach its etcd server{at} (--rdzv_endpoint: the server is "
            "down, the address or port is wrong, or a firewall drops it)",
            facts,
            dedupe=(row.code, "etcd"),
        )
    ]


def _store_err(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    # A store read's message that ends the paste before (or in) its error: torch raised it, whatever it said.
    cut = m.group(1) is not None and (m.group(2) is None or not hit.after(1, same_rank=False))
    if cut and hit.text.endswith("got error") and hit.after(1, same_rank=False):  # wrapped, not cut: the next
        return None  # line holds the error; at the paste's end (a title) the read failed, whatever it said
    # TCPStore (TCPStore.cpp): "wait timeout after 300000ms, keys: /default_pg/0//cuda//0" in 2.x.
    if not cut and not re.search(
        # 1.x TCPStore's get: "Timeout waiting for key: default_pg/0/0 after 1800000 ms"
        r"Socket Timeout|timed out|wait timeout after|Timeout waiting for key|"
        r"Connection reset|Connection refused|Broken pipe|"
        r"[Ff]ailed to (?:recv|send)",
        hit.text,
    ):
        return None
    said = m.group(2) or m.group(3) or m.group(4) or m.group(5) or ""
    facts: dict[str, Any] = {"store_error": said.strip()[:200] or "(the message is cut before its error)"}
    if _in_exit_barrier(hit):
        return _exit_barrier_event(row, hit, clip(facts["store_error"], 80))
    if m.group(1) is not None:
        facts["store_key"] = m.group(1)
    late = _main_first_timeout(row, hit, facts["store_error"])
    if late is not None:
        return late
    me = _uid_wait_facts(hit, facts)
    if me is not None:
        facts["rank"] = me  # "[2] is setting up NCCL communicator": the rank that waited
    # A store read that times out while others wait for rank 0's ncclUniqueId: usually rank 0
    # died or hung first; a symptom unless nothing else is found.
    return [
        row.event(
            hit,
            f"{hit.who(facts.get('rank'))}: store request failed: {clip(facts['store_error'], 120)}",
            facts,
            dedupe=(row.code, "store_err"),
        )
    ]


# TCPStore.cpp's checks of the server's answers (1.x-2.x; "Ping failed" is 2.4+'s validation right after the
# connect). The words are the store client's own, so no frame is needed.
_PROTOCOL = lazy_re.compile(
    r"(?P<what>Stop_waiting response is expected|wait_canceled response is expected|"
    r"ready or not_ready response expected|Ping failed, invalid value returned from server)"
)
# The launcher's command line or environment around it with the store's address left empty: colossalai run's
# "failed to run torchrun ... --master_addr= --master_port= ...", an "export MASTER_ADDR=" echoed by a script.
_EMPTY_ADDR = lazy_re.compile(r"(?:--master[_-]addr[= ]|MASTER_ADDR=)(?:\s|$|''|\"\")")


def _protocol(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    near = [*hit.before(30, same_rank=False), hit.line, *hit.after(30, same_rank=False)]
    facts: dict[str, Any] = {"store_error": m.group("what"), "problem": "store_protocol"}
    why = (
        "something other than this job's TCPStore answered on MASTER_ADDR:MASTER_PORT (another service or a "
        "stale job's store on the port, ranks of different torch versions), or the store went away mid-reply"
    )
    if any(_EMPTY_ADDR.search(ln.text) for ln in near):
        facts["master_addr"] = ""
        why = (
            "the launcher's MASTER_ADDR / --master_addr is empty, so the client did not reach the job's store"
        )
    return [
        row.event(
            hit,
            f"{hit.who()}: the store's answer broke its protocol ({m.group('what')}): {why}",
            facts,
            dedupe=(row.code, "store_err"),
        )
    ]


# The file and hash stores' wait (c10d FileStore.cpp / HashStore.cpp 1.0-2.x "Wait timeout", gloo's
# rendezvous file_store.cc / hash_store.cc / redis_store.cc "Wait timeout for key(s): [...]"): the keys the
# other ranks write never came - they did not reach the rendezvous in time (dead, slow, another world size,
# another file path). A bare "Wait timeout" needs the store's source or a store / init_process_group frame.
# The bracket before the store's file holds no "[": tried from every "[" of a long stretch without "]",
# "[^\]]*" read each to the stretch's end (quadratic). No real line nests one there (the corpora read
# the same).
_STORE_WAIT = lazy_re.compile(
    r"(?P<src>\[[^\[\]]*(?:c10d/\w*Store|gloo/rendezvous/\w+_store)\.cc?p?p?:\d+\]\s*)?Wait timeout"
    r"(?: for key\(s\): (?P<keys>.*))?"
)


def _store_wait(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    above = " ".join(ln.text for ln in hit.before(8))
    if not m.group("src") and not (STORE_OP.search(above) or "ProcessGroupGloo(" in above):
        return None
    facts: dict[str, Any] = {"store_error": m.group(0).strip()[:200]}
    if m.group("keys"):
        facts["store_keys"] = m.group("keys").strip()[:200]
    return [
        row.event(
            hit,
            f"{hit.who()}: the rendezvous store's wait timed out: the keys the other ranks write never came "
            "(a rank that did not start, died, or was launched with another world size or store path)",
            facts,
            dedupe=(row.code, "store_wait"),
        )
    ]


S = C.STORE_UNREACHABLE.code
_EXC = "the exception type ('...Error: ') before torch's message"
SIGNATURES = (
    Signature(
        "socket timeout (1.x)",
        _SOCKET_TIMEOUT,
        _socket_timeout,
        S,
        tier=1,
        anchors=(b"rror",),
        worth=(rb"Error\b",),
        words=("socket timeout",),
    ),
    Signature(
        "rendezvous connection",
        _RDZV_CONN,
        _rdzv_conn,
        S,
        anchors=(b"rror",),
        worth=(rb"Error\b",),
        words=("rendezvous", "c10d store"),
        anchor_from=_EXC,
        examples=(
            "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the "
            "C10d store has failed. See inner exception for details.",
            "torch.distributed.elastic.rendezvous.api.RendezvousError: The file creation for C10d store has "
            "failed. See inner exception for details.",
        ),
    ),
    Signature(
        "rendezvous state",
        _RDZV_STATE,
        _rdzv_state,
        S,
        anchors=(b"rror",),
        worth=(rb"Error\b",),
        words=("rendezvousstateerror",),
    ),
    Signature(
        "store host name",
        _DNS,
        _dns,
        S,
        anchors=(b"rror", b"[c10d]"),
        worth=(rb"Error\b", rb"\berror\b", rb"gaierror"),
        words=(
            "name or service not known",
            "name resolution",
            "nodename nor servname",
            "no address associated",
        ),
        anchor_from=_EXC + " or c10d's '[c10d] ' logger prefix",
        examples=(
            "socket.gaierror: [Errno -2] Name or service not known",
            "ValueError: Error initializing torch.distributed: socket.gaierror: Temporary failure in name "
            "resolution",
        ),
    ),
    Signature(
        "store connection dropped",
        _PEER_DROPPED,
        _store_dropped,
        S,
        tier=1,
        anchors=(b"rror",),
        worth=(rb"Error\b",),
        words=(
            "connection reset by peer",
            "broken pipe",
            "connection closed by peer",
            "connection refused",
            "failed to recv, got 0 bytes",
            "failed to send, sent 0 bytes",
        ),
        anchor_from=(
            "the exception type ('RuntimeError: ', 'ConnectionResetError: ') before the socket's text"
        ),
        examples=(
            "RuntimeError: Connection reset by peer",
            "torch.distributed.DistNetworkError: Failed to recv, got 0 bytes. Connection was likely closed.",
        ),
    ),
    Signature(
        "store connect errno (1.x)",
        _CONNECT_ERRNO,
        _connect_errno,
        S,
        anchors=(b"rror",),
        worth=(rb"Error\b", rb"\berror\b"),
        words=(
            "connection timed out",
            "no route to host",
            "network is unreachable",
            "host is unreachable",
            "cannot assign requested address",
            "address family not supported",
            "resource temporarily unavailable",
        ),
    ),
    Signature(
        "rendezvous backend raise, paste cut",
        _BACKEND_RAISE,
        _backend_raise,
        S,
        anchors=(b"_rendezvous_backend.py",),
        words=("_rendezvous_backend.py",),
    ),
    Signature(
        "etcd connection",
        _ETCD,
        _etcd,
        S,
        anchors=(b"rror", b"Etcd", b"etcd server to be ready"),
        worth=(rb"Etcd\w*(?:Failed|Exception)", rb"etcd server to be ready"),
        words=("etcd",),
    ),
    Signature(
        "store protocol answer",
        _PROTOCOL,
        _protocol,
        S,
        tier=1,
        anchors=(b"rror", b"response is expected", b"not_ready response expected", b"Ping failed, invalid"),
        worth=(rb"response is expected", rb"not_ready response expected", rb"Ping failed, invalid"),
        words=("response is expected", "not_ready response expected", "ping failed, invalid"),
    ),
    Signature(
        "store request",
        _STORE_ERR,
        _store_err,
        S,
        tier=1,
        anchors=(b"rror",),
        worth=(rb"Error\b",),
        words=(
            "store->get",
            "diststoreerror",
            "distnetworkerror",
            "c10d/tcpstore",
            "timeout waiting for key",
        ),
        anchor_from=_EXC,
        examples=(
            "RuntimeError: [../torch/csrc/distributed/c10d/TCPStore.cpp:114] store->get('0') got error: "
            "Socket Timeout",
        ),
    ),
    Signature(
        "store wait timeout",
        _STORE_WAIT,
        _store_wait,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=1,
        anchors=(b"Wait timeout",),
        worth=(rb"Wait timeout",),
        words=("wait timeout",),
    ),
)
parse = gated_reader(SIGNATURES)
