"""rendezvous: ranks that never met (torch/distributed/elastic/rendezvous, c10d TCPStore in
torch/csrc/distributed/c10d/socket.cpp and TCPStore.cpp, distributed_c10d.py).

Formats: "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError"; "DistStoreError:
Timed out after 901 seconds waiting for clients. 1/2 clients joined."; "Timed out initializing
process group in store based barrier on rank: 0, for key: store_based_barrier_key:1
(world_size=2, worker_count=1, timeout=0:30:00)"; "The client socket has timed out after
900000ms while trying to connect to (10.0.0.1, 29500)." (newer "after 60s"); "The client socket
has failed to connect to [host]:29500 (errno: 111 - Connection refused)."; "The server socket
has failed to listen on any local network address. ... (errno: 98 - Address already in use)"
and "useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use"; store errors
"store->get('0') got error: Socket Timeout" while setting up a NCCL communicator; name
resolution "Name or service not known" / "Temporary failure in name resolution".

socket.cpp prints one record per address it tried ("failed to bind to [::]:29500 (errno: 98 -
...)", "failed to connect to [h]:p (errno: 110 - ...)", on Windows "(system error: 10049 - ...)")
and then its summary ("failed to listen on any local network address", "failed to connect to any
network address of (h, p)", "timed out after ..."); a refused connect (errno 111) is retried by
design and is no failure - at warning level, with c10d's "[c10d]" tag. The same record without the tag is the
text of the exception socket.cpp raised (its per-address errors joined after "failed to connect to any network
address of (h, p)", 1.1x "... on (h, p)") or the message a user quoted as their error: ending the paste, it is
the failure whatever its errno (v10 "The client socket has failed to connect to [ip6-localhost]:24355 (errno:
99 - ...)" alone). Before 1.11 TCPStore said "connect() timed out. Original timeout was
60000 ms." and "Socket Timeout"; 2.x "wait timeout after 300000ms, keys: ...". 1.6-1.9 said only
"connect() timed out."; 2.x's store-based barrier
says "on rank 3 ... (world_size=4, num_workers_joined=3, ...)"; 2.1+ Utils.hpp "Failed to recv, got 0
bytes. Connection was likely closed." (a store peer that went away: tier 1, its death is the cause);
torchelastic's etcd backend fails with python-etcd's "EtcdConnectionFailed: Connection to etcd failed".
A per-family record ("The IPv6 network addresses of (h, p) cannot be retrieved") followed by the connect
that worked, and a bind that failed for one family while the other listens, are steps socket.cpp goes
past, not failures.
The store's reads and waits that fail after it was reached, the elastic backend's connection (c10d
store, etcd) and name resolution are store_errors.py's rows; missing settings (env:// variables, RUN224) are
rdzv_config.py's; TCPStore.cpp's connect loop and socket.cpp's waitForInput are store_client.py's.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import UNTIL_UP, Event, Hit, event
from pgdoctor.diagnose.rules.remote_launch import LAUNCH_FAILED
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

# torchelastic 0.1-0.2 (the package before it moved into torch 1.9) named them ...Exception.
_RDZV_TIMEOUT = lazy_re.compile(
    r"RendezvousTimeoutError|RendezvousTimeoutException|"
    # TCPStore's server (TCPStore.cpp 1.8-2.x): "... waiting for clients. 1/2 clients joined."; a paste or a
    # title may keep only the head ("Timed out after 901 seconds waiting for clients").
    r"Timed out after (\d+) seconds waiting for (?:clients|workers)(?:\. (\d+)/(\d+) (?:clients|workers))?|"
    r"rendezvous has timed out after \d"
    r"|[Tt]imed out initializing process group in store based barrier"
    # etcd_rendezvous.py (1.9-2.x) logs this, spelled "occured", right before it raises RendezvousTimeoutError
    r"|Rendezvous timeout occur+ed in EtcdRendezvousHandler"
)
# 1.x "(world_size=2, worker_count=1, timeout=0:30:00)",
# 2.x "(world_size=4, num_workers_joined=3, timeout=...".
_BARRIER = lazy_re.compile(r"world_size=(\d+), (?:worker_count|num_workers_joined)=(\d+)")
# Logged every few seconds while the store-based barrier waits (distributed_c10d.py, 1.x-2.x).
_BARRIER_WAIT = lazy_re.compile(r"Waiting in store based barrier to initialize process group for rank: (\d+)")
# socket.cpp: "after 900000ms" (1.1x-2.0), "after 60s" / "after 1800000ms" later; "(host, port)" or
# "host:port".
# The address may be missing: a title cut after "connect to", a record cut mid-word ("... after 900s whi"),
# or a placeholder the user put in ("(PRIVATE_IP, PORT)").
_CLIENT_TIMEOUT = lazy_re.compile(
    r"client socket has timed out after (\d+)\s*(ms|s)\b(?: while trying to connect to"
    r"(?: \(?\[?([^,\s\]()]+)\]?(?:, |:)(\w+)\)?)?)?"
)
_CONNECT_ANY = lazy_re.compile(
    r"client socket has failed to connect to any network address (?:of|on) \(([^,]+), (\d+)\)"
)
# errno on POSIX; Windows prints "(system error: 10049 - unknown error)".
_CONNECT_FAIL = lazy_re.compile(
    r"client socket has failed to connect to \[?([^\]\s]+?)\]?:(\d+) "
    r"\((?:errno|system error): (\d+) - ([^)]*)\)"
)
# torch 1.x TCPStore reads: "RuntimeError: Socket Timeout" (c10d/Utils.hpp), raised while a
# process group waits for its peers' store keys.
# ECONNREFUSED / ECONNRESET (and Winsock's 10061 / 10054): the store is not up yet; retried.
_RETRIED = frozenset({111, 104, 10061, 10054})
# EADDRNOTAVAIL (and Winsock's 10049) for the IPv6 loopback that localhost also resolves to.
_NO_ADDR = frozenset({99, 10049})
# EINVAL (and Winsock's 10022) from connect(): an address of the other family (an IPv6 record of a
# host name on a node without IPv6 routing); socket.cpp logs it at [W] and goes on to the next address.
_WRONG_FAMILY = frozenset({22, 10022})
LOOPBACK_NAMES = frozenset({"localhost", "::1", "ip6-localhost", "localhost.localdomain"})
# What may stand before an exception line that the rows below anchor at its start: a logging level that
# the prefix reader leaves ("2025-01-02 03:04:05,678 - ERROR - KeyError: 'RANK'" keeps "ERROR - ").
LEAD = r"^\s*(?:(?:ERROR|CRITICAL|WARNING|FATAL)\s*[-:|]\s*)?"
# torch 1.x TCPStore (c10d/Utils.cpp): "connect() timed out." (1.6-1.9, kConnectTimeoutMsg), then
# "connect() timed out. Original timeout was 60000 ms." (1.10-1.11).
_OLD_CONNECT = lazy_re.compile(r"connect\(\) timed out\.(?: Original timeout was (\d+) ms)?")
# Server side: bind/listen per address (errno text), the summary, libuv's EADDRINUSE record,
# and torch 1.x's bare "Address already in use".
_SERVER = lazy_re.compile(
    r"server socket has failed to (?:bind to|listen on) (\S+?)(?:\.)? \(errno: (\d+) - ([^)]*)\)"
)
_SERVER_ANY = lazy_re.compile(
    r"server socket has failed to listen on any local " + lazy_re.cut_tail("network address") + r"|"
    r"server could not be initialized on any address for port=(\d+)"
)
_IN_USE = lazy_re.compile(r"[Aa]ddress already in use|EADDRINUSE|errno: 98\b|system error: 10048\b")
# Not the source line of c10d's log prefix ("[E socket.cpp:462] ") or of gloo's ("[.../pair.cc:176] bind:").
_PORT = lazy_re.compile(r"(?:\]:|port: |port=|(?<!\.cpp)(?<!\.hpp)(?<!\.cc)(?<!\.h):)(\d{2,5})\b")
# torchrun's agent after its own workers ended: "Local worker group finished (SUCCEEDED). Waiting 300
# seconds for other agents to finish" / "Error waiting on exit barrier. Elapsed: 300.05 seconds".
_EXIT_BARRIER = lazy_re.compile(
    r"Waiting \d+ seconds for other agents to finish|Error waiting on exit barrier|_exit_barrier"
)
# socket.cpp's listen that worked after a failed bind of one family: "[I socket.cpp:480] [c10d] The server
# socket has started to listen on 0.0.0.0:29500."
_LISTENING = lazy_re.compile(r"server socket has started to listen on \S*?:(\d+)")


def _server(hit: Hit, t: str) -> list[Event]:
    """The store's server socket could not listen: a port clash (EADDRINUSE) or another bind error."""
    m = _SERVER.search(t)
    facts: dict[str, Any] = {}
    if m:
        facts["address"] = m.group(1)
        facts["errno"] = int(m.group(2))
        facts["error"] = m.group(3).strip()
    p = _PORT.search(m.group(1)) if m else _PORT.search(t)
    if p:
        facts["port"] = int(p.group(1))
    if "failed to bind to" in t and "port" in facts and _listening_later(hit, facts["port"]):
        return []  # one family's bind failed, the other's listens: socket.cpp goes on with it
    if _IN_USE.search(t) or facts.get("errno") in (98, 10048):
        return [
            event(
                hit,
                C.ADDRESS_IN_USE.code,
                f"the store could not bind port {facts.get('port', '?')}: address already in use "
                "(another job or a leftover process holds MASTER_PORT, or two ranks both host the store)",
                facts,
                dedupe=(C.ADDRESS_IN_USE.code,),
            )
        ]
    if m or _SERVER_ANY.search(t):
        why = facts.get("error", "no address could be bound")
        return [
            event(
                hit,
                C.STORE_UNREACHABLE.code,
                f"the store's server socket could not listen: {why}",
                facts,
                dedupe=(C.STORE_UNREACHABLE.code, "listen"),
            )
        ]
    return []


# DGL's distributed RPC (src/rpc/network/tcp_socket.cc, 0.5-2.x): TCPSocket::Bind logs "Failed bind on
# 10.0.0.1:30050 , error: Address already in use" (strerror(errno); "error: Success" when the glog call
# cleared errno first), TCPSocket::Listen "Failed listen on socket fd: 12 , error: ...". A server of the
# DistGraph (tools/launch.py) whose port is held (most often by a server of an earlier run still alive) or
# whose IP is not this host's ("Cannot assign requested address").
_DGL_BIND = lazy_re.compile(
    r"Failed (?:bind on (?P<addr>\S+?):(?P<port>\d{1,5})|listen on socket fd: \d+) ?,\s*"
    r"(?:error: (?P<err>[^\n`]*)|errno=(?P<errno>\d+))|"
    r"(?:socket_communicator|rpc)\.cc:\d+: Cannot bind to (?P<addr2>\S+?):(?P<port2>\d{1,5})\b"
)


def _dgl_bind(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = (m.group("err") or "").strip().rstrip("`.").strip()
    errno = int(m.group("errno")) if m.group("errno") else None
    facts: dict[str, Any] = {"framework": "DGL"}
    if err:
        facts["error"] = err
    if errno is not None:
        facts["errno"] = errno
    addr, port = m.group("addr") or m.group("addr2"), m.group("port") or m.group("port2")
    if port:
        facts["port"] = int(port)
        facts["address"] = addr
    where = f"{addr}:{port}" if port else "its socket"
    if "assign requested address" in err or errno == 99:
        return [
            event(
                hit,
                C.STORE_UNREACHABLE.code,
                f"a DGL RPC server could not bind {where}: {err or 'errno 99, EADDRNOTAVAIL'} (the IP in "
                "ip_config.txt is not this host's)",
                facts,
                dedupe=(C.STORE_UNREACHABLE.code, "listen"),
            )
        ]
    why = f"error: {err}" if err else (f"errno {errno}" if errno is not None else "bind failed")
    return [
        event(
            hit,
            C.ADDRESS_IN_USE.code,
            f"a DGL RPC server could not bind {where} ({why}): the port is held, most often by a "
            "server of an earlier run still alive (kill it, or change the port in ip_config.txt)",
            facts,
            dedupe=(C.ADDRESS_IN_USE.code,),
        )
    ]


def _listening_later(hit: Hit, port: int) -> bool:
    for ln in hit.after(200, same_rank=True):
        c = _LISTENING.search(ln.text)
        if c and int(c.group(1)) == port:
            return True
    return False


# Another rank's own death in the same paste: its exception line ("[rank1]: ModuleNotFoundError: ...",
# not a distributed error of its own) or a launcher's record of a signal ("exitcode: -9", "Signals.SIGKILL").
_PEER_EXC = lazy_re.compile(r"^\s*(?:\w+\.)*(?!Dist\w*Error)\w+(?:Error|Exception): ")
_SIGNAL_EXIT = lazy_re.compile(
    r"exitcode: -\d+|died with <Signals\.SIG|Signal \d+ \(SIG\w+\) received by PID"
)


def _peer_died(hit: Hit, facts: dict[str, Any]) -> bool:
    """The barrier counted fewer ranks than the world and another rank died in the paste: the missing
    rank never arrived because it died (an import error, a kill), so the timeout is that death's echo."""
    if facts.get("joined", 0) >= facts.get("expected", 0):
        return False
    for ln in [*hit.before(200, same_rank=False), *hit.after(200, same_rank=False)]:
        if _SIGNAL_EXIT.search(ln.text):
            return True
        t = ln.text
        if (
            ln.rank not in (None, hit.rank)
            and _PEER_EXC.match(t)
            and not re.search(r"[Tt]imed out|timeout", t)
        ):
            return True
    return False


def _launch_failed(hit: Hit) -> bool:
    """The launcher could not start the ranks of another node (remote_launch.py's records) in the paste: the
    agents that did start wait for them until their rendezvous times out."""
    return any(LAUNCH_FAILED.search(ln.text) for ln in [*hit.before(400, False), *hit.after(400, False)])


def _rdzv_timeout(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = hit.text
    facts: dict[str, Any] = {}
    if m.group(1):
        facts = {"timeout_s": int(m.group(1))}
        if m.group(2):
            facts.update(joined=int(m.group(2)), expected=int(m.group(3)))
    b = _BARRIER.search(t)
    if b:
        facts = {"expected": int(b.group(1)), "joined": int(b.group(2))}
    on = re.search(r"barrier on rank:? (\d+)", t)
    who = f" ({facts['joined']}/{facts['expected']} joined)" if "joined" in facts else ""
    if facts.get("joined", 0) > facts.get("expected", 1 << 30):
        # More ranks counted than the world has: the barrier key was shared - two jobs on one
        # MASTER_PORT or init file (a file:// store left from an earlier run), or each launched task
        # spawning its own world of ranks (srun -n2 with mp.spawn of 2 per task).
        facts["oversubscribed"] = True
        who += (
            ": more ranks counted than world_size, so another job or a stale init file shares the "
            "store, or the launcher started more processes than the world"
        )
    if any(_EXIT_BARRIER.search(ln.text) for ln in [*hit.before(24, same_rank=False), hit.line]):
        # elastic/agent/server/api.py _exit_barrier: this agent's workers finished (or failed) and it
        # waited for the other agents, which had died or hung: a consequence of their failure.
        facts["exit_barrier"] = True
        return [
            row.event(
                hit,
                f"the agent's exit barrier timed out waiting for the other agents{who} (they "
                "failed or hung first)",
                facts,
                tier=2,
                dedupe=(row.code, "exit_barrier"),
            )
        ]
    return [
        row.event(
            hit,
            f"rendezvous timed out waiting for the other ranks{who}",
            facts,
            rank=int(on.group(1)) if on else None,
            tier=1 if _peer_died(hit, facts) or _launch_failed(hit) else None,
            dedupe=(row.code,),
        )
    ]


def _barrier_wait(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if any("Completed store-based barrier" in ln.text for ln in hit.after(48, same_rank=False)):
        return []  # a healthy start prints the wait once or twice, then the completion
    b = _BARRIER.search(hit.text)
    facts = {"expected": int(b.group(1)), "joined": int(b.group(2))} if b else {}
    who = f" ({facts['joined']}/{facts['expected']} ranks arrived)" if facts else ""
    if facts and facts["joined"] > facts["expected"]:
        facts["oversubscribed"] = True  # see _rdzv_timeout: the key is shared with other processes
        who += ": more than world_size, so another job or a stale init file shares the store"
    return [
        row.event(
            hit,
            f"ranks wait in the store-based barrier for the others{who}",
            facts,
            rank=int(m.group(1)),
            dedupe=(row.code,),
        )
    ]


def _client_timeout(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    ms = int(m.group(1)) * (1 if m.group(2) == "ms" else 1000)
    facts: dict[str, Any] = {"timeout_ms": ms}
    where = "the store"
    if m.group(3) and m.group(4).isdigit():
        facts["master_addr"], facts["master_port"] = m.group(3).strip(), int(m.group(4))
        where = f"the store at {facts['master_addr']}:{facts['master_port']}"
    return [
        row.event(
            hit,
            f"could not connect to {where} within {ms} ms",
            facts,
            dedupe=(row.code,),
        )
    ]


def _old_connect(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    within = f" within {m.group(1)} ms" if m.group(1) else ""
    return [
        row.event(
            hit,
            f"could not connect to the store{within} (TCPStore connect() timed out)",
            {"timeout_ms": int(m.group(1))} if m.group(1) else {},
            dedupe=(row.code,),
        )
    ]


def _server_socket(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = hit.text
    if not ("socket" in t or "initialized" in t):
        return None
    return _server(hit, t) or None


# Another server's port clash, not the store's (unless a rank's prefix is on the line, see _ranked): Python's
# own errno form ("OSError: [Errno 98] Address
# already in use" of a web app's socket.bind), asyncio / uvicorn ("[Errno 98] error while attempting to bind
# on address ('0.0.0.0', 7860): address already in use"), ZeroMQ ("ZMQError: Address already in use
# (addr='tcp://*:5555')"). torch's store says it through c10d (RuntimeError / DistNetworkError, socket.cpp's
# errno text, libuv's name).
_OTHER_SERVER = lazy_re.compile(r"\[Errno 98\]|ZMQError|attempting to bind on address")
# Frames or records of the process group's store near such a line (a torch script that binds through Python).
_TORCH_STORE = lazy_re.compile(r"TCPStore|rendezvous|init_process_group|c10d|MASTER_PORT|torch/distributed")


def _in_use(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = hit.text
    if _DGL_BIND.search(t):
        return []  # DGL's RPC server: its own row reads the address and port
    if not ("socket" in t or "store" in t.lower() or "Error" in t or "bind" in t or "EADDRINUSE" in t):
        return None
    if _OTHER_SERVER.search(t) and not any(
        _TORCH_STORE.search(ln.text) for ln in [*hit.before(16), hit.line]
    ):
        # an engine's worker (vLLM's "(Worker_TP11 pid=113)") binds ZMQ for the workers' own wiring
        who = f"{hit.line.proc or ''} {t}"
        worker = "ZMQError" in t and re.search(
            r"^(?:Vllm)?Worker|\((?:Vllm)?Worker|multiproc_exec|shm_broadcast", who
        )
        if not worker and (not _ranked(hit) or re.search(r"ZMQError|attempting to bind on address", t)):
            # a web server's (uvicorn names its address) or a message queue's port, not the ranks' store
            return []
        return [
            row.event(
                hit,
                f"{hit.who()} could not bind the port of its own server at start: address already in use "
                "(another job or a leftover process on the node holds it)",
                {"errno": 98, "server": "the rank's own"},
                dedupe=(row.code,),
            )
        ]
    return _server(hit, t)


def _ranked(hit: Hit) -> bool:
    """Whether the line is a rank's of a multi-process job (mpirun's "[1,31]<stderr>:", torchrun's "[rank3]:"
    or "[default0]:"): a port that a rank's own server (a parameter server, the job's per-node helper) cannot
    bind at start is the ranks' meeting failing, whoever serves it; a web app alone prints no such prefix."""
    return hit.line.rank is not None or hit.line.local_rank is not None


# Accelerate's launcher (commands/launch.py, utils/launch.py) checks MASTER_PORT before it starts
# torchrun: "ConnectionError: Tried to launch distributed communication on port `29500`, but another
# process is utilizing it." (multi-node, or before 1.x's standalone fallback; one node now warns "Port
# `29500` is already in use" and goes on with a free port).
_ACCELERATE_PORT = lazy_re.compile(
    r"Tried to launch distributed communication on port `?(\d+)`?, but another process"
)


def _accelerate_port(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    port = int(m.group(1))
    return [
        row.event(
            hit,
            f"accelerate launch found port {port} (main_process_port / MASTER_PORT) taken by another "
            "process: a previous run still holds it, or two jobs share it; pass --main_process_port (0 picks "
            "a free one)",
            {"port": port, "launcher": "accelerate"},
            dedupe=(row.code,),
        )
    ]


# socket.cpp's own record of the attempt that worked: "[I socket.cpp:787] [c10d] The client socket has
# connected to [node-1]:29500 on [node-2]:51234." A failed attempt to the same port followed by it is a
# retry that succeeded (the store came up later), not a failure.
_CONNECTED = lazy_re.compile(r"client socket has connected to \[?[^\]\s]+?\]?:(\d+)")


def connected_later(hit: Hit, port: int) -> bool:
    for ln in hit.after(400, same_rank=True):
        c = _CONNECTED.search(ln.text)
        if c and int(c.group(1)) == port:
            return True
    return False


def _went_on(hit: Hit) -> bool:
    """Whether the run printed its own lines after socket.cpp's record (a traceback next is the raise)."""
    later = [ln.text for ln in hit.after(20, same_rank=True) if ln.text.strip() and "socket" not in ln.text]
    return bool(later) and not later[0].startswith("Traceback (most recent call last)")


def _quoted_bare(hit: Hit) -> bool:
    """The record without c10d's logger tag: socket.cpp logs every attempt as "[W socket.cpp:601] [c10d] The
    client socket has failed to connect to ..." (a retry of a running start-up), while the same words without
    the tag are the text of the exception it raised (its per-address errors, joined after "failed to connect
    to any network address", or the tail of that message wrapped onto its own line) or the message a user
    quoted as their error."""
    return "[c10d]" not in hit.text and "socket.cpp" not in hit.text


def _retry_step(hit: Hit, errno: int, host: str) -> bool:
    """A failed attempt socket.cpp goes past at warning level (it tries the next address, or retries)."""
    if errno in _RETRIED:
        return True  # the server is not listening yet: socket.cpp retries until its timeout
    if errno in _NO_ADDR and host.lower() in LOOPBACK_NAMES:
        return True  # "localhost" tried over IPv6 on a host without it, then over IPv4: harmless
    if errno in _NO_ADDR and _went_on(hit):
        # One address the host cannot use, at warning level: socket.cpp goes on to the store's next
        # address (and retries until its timeout, whose own record is the failure). A run that printed
        # its own lines next went on. Seen in healthy runs of every era: a host name whose IPv6 record
        # the node cannot use (errno 99 - "Cannot assign requested address"), Windows' link-local IPv6
        # (10049) before the IPv4 one connects ("[W socket.cpp:764] [c10d] The client socket has failed
        # to connect to [Auronya]:50175 (system error: 10049 - ...)"). The same record repeated to the end
        # of the paste is a client that never connects, kept.
        return True
    # one resolved address of a family the host cannot use; socket.cpp tries the next one
    return errno in _WRONG_FAMILY


def _connect_fail(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    errno = int(m.group(3))
    if connected_later(hit, int(m.group(2))):
        return []
    if not (_quoted_bare(hit) and not _went_on(hit)) and _retry_step(hit, errno, m.group(1)):
        # (the message itself at the paste's end is the failure the user met, whatever its errno)
        return []
    facts = {"master_addr": m.group(1), "master_port": int(m.group(2)), "errno": errno, "error": m.group(4)}
    # Its process's next lines may lie past the window (sixteen ranks' start-up interleaved): a
    # communicator that came up later in the log (lookahead.py) says every rank reached the store.
    facts[UNTIL_UP] = ""
    # One address failed; the client tries the others and retries until its timeout, whose
    # own record ("failed to connect to any network address", "timed out") is the failure.
    return [
        row.event(
            hit,
            f"could not connect to the store at {m.group(1)}:{m.group(2)}: {m.group(4)}",
            facts,
            dedupe=(row.code,),
        )
    ]


def _connect_any(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if connected_later(hit, int(m.group(2))):
        return []
    facts = {"master_addr": m.group(1), "master_port": int(m.group(2))}
    return [
        row.event(
            hit,
            f"could not connect to the store at {m.group(1)}:{m.group(2)} on any of its addresses",
            facts,
            dedupe=(row.code,),
        )
    ]


# The launcher's record of a stop signal (launcher.py reads it): "Received 15 death signal, shutting
# down workers", "Received Signals.SIGTERM death signal", "SignalException: Process 1359 got signal: 15".
_STOPPED = lazy_re.compile(r"Received (?:\d+|Signals\.SIG[A-Z]+) death signal|got signal: \d+")


# A task's failed exit (srun's, torchrun's record): "srun: error: node1: task 1: Exited with exit code 1".
_FAILED_EXIT = lazy_re.compile(r"Exited with exit code [1-9]|exitcode: [1-9]|exit status [1-9]")


def _stopped_first(hit: Hit) -> bool:
    """A stop signal before the error, or after it with no task failing in between (a task that exited
    with 1 first died of the closed rendezvous, and the signal is the launcher's teardown after it)."""
    if any(_STOPPED.search(ln.text) for ln in hit.before(60, False)):
        return True
    for ln in hit.after(60, False):
        if _FAILED_EXIT.search(ln.text):
            return False
        if _STOPPED.search(ln.text):
            return True
    return False


def _closed(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if _stopped_first(hit):
        # An agent told to stop (a scheduler's SIGTERM, a node scaled away) closes the rendezvous on its
        # way out (dynamic_rendezvous.py's shutdown), so a RendezvousClosedError is its echo: the launcher's
        # record of the signal (launcher.py) is the finding.
        return []
    return [
        row.event(
            hit,
            "the elastic rendezvous was closed: an agent shut it (a failed or stopped node, or the "
            "restarts ran out), so this agent cannot join; the agent that closed it says why",
            {"problem": "rendezvous_closed"},
            dedupe=(row.code, "closed"),
        )
    ]


R, S = C.RENDEZVOUS_TIMEOUT.code, C.STORE_UNREACHABLE.code
_EXC = "the exception type ('...Error: ') before torch's message"
SIGNATURES = (
    Signature(
        "rendezvous timeout",
        _RDZV_TIMEOUT,
        _rdzv_timeout,
        R,
        anchors=(b"rror", b"imed out", b"RendezvousTimeoutException", b"in EtcdRendezvousHandler"),
        worth=(rb"Error\b", rb"[Tt]imed out", rb"RendezvousTimeoutException", rb"in EtcdRendezvousHandler"),
        words=("rendezvous", "timed out after", "store based barrier"),
    ),
    Signature(
        "store barrier wait",
        _BARRIER_WAIT,
        _barrier_wait,
        R,
        tier=1,
        anchors=(b"imeout",),
        worth=(rb"\btimeout\b",),
        words=("store based barrier",),
        anchor_from="the '(world_size=2, worker_count=1, timeout=0:30:00)' at its end",
        examples=(
            "INFO:torch.distributed.distributed_c10d:Waiting in store based barrier to initialize process "
            "group for rank: 0, key: store_based_barrier_key:1 (world_size=2, worker_count=1, "
            "timeout=0:30:00)",
        ),
    ),
    Signature(
        "client socket timeout",
        _CLIENT_TIMEOUT,
        _client_timeout,
        S,
        anchors=(b"imed out",),
        worth=(rb"[Tt]imed out",),
        words=("client socket",),
    ),
    Signature(
        "tcpstore connect timeout (1.x)",
        _OLD_CONNECT,
        _old_connect,
        S,
        anchors=(b"imed out",),
        worth=(rb"[Tt]imed out",),
        words=("connect() timed out",),
    ),
    Signature(
        "server socket",
        lazy_re.compile(r"server"),
        _server_socket,
        C.ADDRESS_IN_USE.code,
        # socket.cpp's own words too: a record quoted without its prefix, or the middle of a message that a
        # terminal wrapped ("address. The server socket has failed to bind to [::]:29600 (errno: 98 - ...")
        anchors=(b"[c10d]", b"rror", b"server socket has failed"),
        worth=(
            rb"errno: ?\d",
            rb"\[c10d\][^\n]*(?:failed|timed out|cannot)",
            rb"Error\b",
            rb"server socket has failed",
        ),
        words=("server",),
        anchor_from="c10d's '[c10d] ' logger prefix, the exception type, or socket.cpp's 'server socket has "
        "failed'",
        examples=(
            "[W socket.cpp:436] [c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - "
            "Address already in use).",
            "RuntimeError: The server socket has failed to listen on any local network address.",
            "The server socket has failed to bind to 0.0.0.0:29500 (errno: 98 - Address already in use).",
            "The server socket has failed to listen on any local network address.",
        ),
    ),
    Signature(
        "dgl rpc bind",
        _DGL_BIND,
        _dgl_bind,
        C.ADDRESS_IN_USE.code,
        anchors=(b"Failed bind on", b"Failed listen on socket", b"Cannot bind to"),
        worth=(rb"Failed bind on", rb"Failed listen on socket", rb"Cannot bind to"),
        words=("failed bind on", "failed listen on socket", "cannot bind to"),
        examples=(
            "[14:49:15] /opt/dgl/src/rpc/network/tcp_socket.cc:76: Failed bind on 10.0.0.5:34567 , "
            "error: Success",
            "Failed bind on 172.31.2.4:30050 , error: Address already in use",
            "Failed listen on socket fd: 12 , error: Address already in use",
        ),
    ),
    Signature(
        "address in use",
        _IN_USE,
        _in_use,
        C.ADDRESS_IN_USE.code,
        anchors=(b"rror",),
        worth=(rb"already in use",),
        words=("address already in use", "eaddrinuse", "errno: 98"),
        anchor_from="the exception type or 'errno' text around the socket's message",
        examples=(
            "RuntimeError: Address already in use",
            "useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use [Error]",
        ),
    ),
    Signature(
        "accelerate port in use",
        _ACCELERATE_PORT,
        _accelerate_port,
        C.ADDRESS_IN_USE.code,
        anchors=(b"Tried to launch distributed communication",),
        worth=(rb"Tried to launch distributed communication",),
        words=("tried to launch distributed communication",),
    ),
    Signature(
        "client connect failed on every address",
        _CONNECT_ANY,
        _connect_any,
        S,
        anchors=(b"[c10d]", b"rror", b"client socket has failed to connect"),
        worth=(
            rb"\[c10d\][^\n]*(?:failed|timed out|cannot)",
            rb"Error\b",
            rb"client socket has failed to connect",
        ),
        words=("client socket",),
        anchor_from="c10d's '[c10d] ' logger prefix, the exception type, or socket.cpp's own words",
        examples=(
            "[c10d] The client socket has failed to connect to any network address of (node-1, 29500).",
            "The client socket has failed to connect to any network address of (node-1, 29500).",
        ),
    ),
    Signature(
        "client connect failed",
        _CONNECT_FAIL,
        _connect_fail,
        S,
        tier=1,
        anchors=(b"[c10d]", b"client socket has failed to connect"),
        worth=(rb"(?:errno|system error): ?\d",),
        words=("client socket",),
        anchor_from="c10d's '[c10d] ' logger prefix, or socket.cpp's own words",
        examples=(
            "[W socket.cpp:601] [c10d] The client socket has failed to connect to [node-1]:29500 "
            "(errno: 110 - Connection timed out).",
        ),
    ),
    Signature(
        "rendezvous closed",
        # also the agent's JSON error file (error_handler.py): '"message": "RendezvousClosedError: ",'
        lazy_re.compile(
            r"(?:"
            + LEAD
            + r'|^\s*"message": ")(?:\w+\.)*(?:RendezvousClosedError|RendezvousClosedException)\b'
        ),
        _closed,
        R,
        anchors=(b"rror", b"RendezvousClosedException"),
        worth=(rb"Error\b", rb"RendezvousClosedException"),
        words=("rendezvous",),
    ),
)
# Every pattern of parse() needs one of its row's words in the line (lower case; checked before any of them).
parse = gated_reader(SIGNATURES)
