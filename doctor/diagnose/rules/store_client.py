"""rendezvous, the store client's own records in torch 2.4+: TCPStore.cpp's connect loop and socket.cpp's
wait for a reply.

Formats (TCPStore.cpp, 2.4+, the client validates the server with a ping after connecting): "[W426
16:56:01.831 TCPStore.cpp:347] [c10d] TCP client failed to connect/validate to host 100.64.0.1:59782 -
retrying (try=6, timeout=1800000ms, delay=5241ms): Connection reset by peer" and, when its deadline passed,
"... - timed out (try=N, timeout=Nms): ..." before the error is raised. socket.cpp (2.6+): "[c10d]
waitForInput: poll for socket SocketImpl(fd=11, addr=[host]:38674, remote=[::ffff:10.0.0.1]:23456) returned
0, likely a timeout" then "waitForInput: socket SocketImpl(...) timed out after 900000ms" (2.1-2.3: "While
waitForInput, poolFD failed with (errno: 0 - Success)."): a store request (a get or wait of the rendezvous,
of the store-based barrier) got no answer in time.

torch elastic's own store helpers (elastic/utils/distributed.py create_c10d_store, 1.9+;
elastic/utils/store.py barrier, 2.4+): "RuntimeError: on node-1, port: 29400 already in use" (after its
retries of a free port, or at once for a fixed one), "TimeoutError: timed out waiting for all 2 members to
join" (the agents' store never saw the others), "DistStoreError: Timed out waiting on barrier on rank 0, for
key prefix: torchelastic/agent/terminal_state (world_size=2, missing_ranks=[Rank 1 (host node-2)],
timeout=300)" - the agents' exit barrier when the prefix is the terminal state (a consequence of the others'
failure, tier 2), the members that never came otherwise. The agent's record of that exit barrier
failing (elastic/agent/server/api.py _exit_barrier, 1.9-2.x, logged with the store's exception under it):
"ERROR:torch.distributed.elastic.agent.server.api:Error waiting on exit barrier. Elapsed: 315.77 seconds"
(2.2+ "E0319 23:40:35.118955 1397 torch/distributed/elastic/agent/server/api.py:951] Error waiting on
exit barrier. ...").
Its workers had ended; the other agents had not reached the barrier (their workers failed or hung: that
failure, found elsewhere, is the cause) or the agent hosting the store had already exited (the known race of
torch issue 69520, a short Elapsed): tier 2. A stack that ends inside the agents' store exchange
(elastic/utils/store.py get_all / synchronize / barrier, the frame's function cut or not) before its
exception line is the same exchange: at start-up (_share_and_gather, the agents' meeting) or at the exit
barrier; either way the agents did not all meet at the store: tier 2. "Done waiting for other agents" and
"Waiting 300 seconds for other agents to finish" are the healthy records around it.

TCPStore.cpp's client (2.6+) logs a failed read or write of its connection before it raises: "[W822
03:54:49.636977195 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=15, addr=[node-1]:60560,
remote=[node-0]:29500): failed to recv, got 0 bytes" (and "sendBytes failed on ...: Broken pipe"). One such
record is often the end of a run (the store's host left first, a watchdog thread's poll saw it); the same
client connecting again and again from new local ports, each dropped, is a store it cannot talk to, and so
is one whose frames below it ("frame #3: c10d::TCPStore::ping()", "c10d::TCPStore::TCPStore(...)") show the
store still being built, whatever the run printed before (vLLM's init line, a launcher's banner).

ProcessGroupNCCL's store read of the ncclUniqueId (broadcastUniqueNCCLID, 1.8-2.x) ends its message after
the C++ frames of the store's error: "... store->get('0') got error: Socket Timeout / Exception raised from
... / frame #56: ... / . This may indicate a possible application crash on rank 0 or a network set up issue."
A paste that keeps only the frames' tail keeps that sentence: the rank that prints it waited for the named
rank's ncclUniqueId in the store and never got it.

A connect retry that the run goes past (its store came up, the next records are the run's own) is no
failure; one repeated until the paste ends is. A store read that timed out is most often a peer that
never came or died (tier 1: a death found elsewhere is the cause).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.init_stacks import ends_in_stack
from pgdoctor.diagnose.rules.rendezvous import connected_later
from pgdoctor.diagnose.rules.store_errors import MAIN_FIRST
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_CONNECT_LOOP = lazy_re.compile(
    r"TCP client failed to connect/validate to host \[?([^\s\]]+?)\]?:(\d+) - (retrying|timed out) "
    r"\(try=(\d+), timeout=(\d+)ms(?:, delay=\d+ms)?\):?\s*(.*)"
)
# socket.cpp 2.1-2.3's waitForInput when poll() gave nothing: "[W socket.cpp:432] [c10d] While waitForInput,
# poolFD failed with (errno: 0 - Success)." (errno 0: the poll timed out; the store request gets no answer).
_POLL_FAILED = lazy_re.compile(r"While waitForInput, poolFD failed with \(errno: (\d+) - ([^)]*)\)")
_WAIT_TIMEOUT = lazy_re.compile(
    r"waitForInput: socket SocketImpl\([^)]*remote=\[?([^\s\]]+?)\]?:(\d+)\) timed out after (\d+)\s*ms"
)
# socket.cpp 2.4+'s waitForInput before its own timeout record: "[c10d] waitForInput: poll for socket
# SocketImpl(fd=66, addr=[::ffff:10.0.0.78]:50434, remote=[::ffff:10.0.0.78]:29500) returned 0, likely a
# timeout" (also "... failed with res=-1, err=..."): a store request's poll gave nothing. Quoted alone as the
# error of a hang (LLaMA-Factory two-node torchrun, v16) it is the request that got no answer.
_POLL_ZERO = lazy_re.compile(
    r"waitForInput: poll for socket SocketImpl\([^)]*remote=\[?([^\s\]]+?)\]?:(\d+)\) "
    r"(returned 0, likely a timeout|failed with res=)"
)
# What a paste shows below a c10d record that is still the same record: the C++ frames of the error
# ("Exception raised from recvBytes at ...", "frame #3: c10d::TCPStore::ping() + 200"), other c10d records.
_SAME_RECORD = lazy_re.compile(r"^\s*(?:frame #\d+|Exception raised from|\[[WIE]\S* [^\]]*\] \[c10d\])")


_UID_TAIL = lazy_re.compile(
    r"(?:^|[\s.])This may indicate a possible application crash on rank (?P<rank>\d+) "
    r"or a network set ?up issue"
)


def _uid_tail(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if any("ncclUniqueId" in ln.text for ln in hit.before(80, same_rank=False)):
        return []  # the head of the record is in the paste: the store request row read it
    waited = int(m.group("rank"))
    return [
        row.event(
            hit,
            f"{hit.who()}: its NCCL communicator set-up could not read rank {waited}'s ncclUniqueId from the "
            f"c10d store (the message's head is cut; its end says rank {waited} crashed or the network "
            "between the ranks is not set up)",
            {"waited_for_rank": waited, "store_error": "ncclUniqueId store read failed"},
            dedupe=(row.code, "store_err"),
        )
    ]


def _went_past(hit: Hit) -> bool:
    """Whether the run printed its own lines after the record (not the same loop, its frames or c10d's)."""
    return any(
        ln.text.strip() and not _SAME_RECORD.match(ln.text) and "c10d" not in ln.text
        for ln in hit.after(30, same_rank=True)
    )


def _connect_loop(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    host, port, what, tries, timeout_ms, why = m.groups()
    if connected_later(hit, int(port)):
        return []
    facts: dict[str, Any] = {
        "master_addr": host,
        "master_port": int(port),
        "timeout_ms": int(timeout_ms),
        "tries": int(tries),
        "error": clip(why.strip(), 120),
    }
    if what == "retrying":
        if _went_past(hit):
            return []  # the store came up (or the client went on): a retry of the connect loop, not a failure
        msg = (
            f"the store client kept failing to connect to {host}:{port} (try {tries}: "
            f"{clip(why.strip(), 80)}) and the log ends in that loop: the store's host is wrong or "
            "unreachable, or something else answers on that port"
        )
        return [row.event(hit, msg, facts, tier=1, dedupe=(row.code, "connect_loop"))]
    msg = (
        f"the store client could not connect to {host}:{port} within {timeout_ms} ms ({tries} tries: "
        f"{clip(why.strip(), 80)})"
    )
    return [row.event(hit, msg, facts, dedupe=(row.code, "connect_loop"))]


def _main_first(row: Signature, hit: Hit, facts: dict[str, Any]) -> Optional[list[Event]]:
    """A store wait that ran out inside a main-process-first barrier (the traceback beside the record names
    it, also when the paste is cut before the exception line): a timeout of the ranks that waited while the
    main process worked alone, read as store_errors.py reads the raised error."""
    near = [*hit.before(24, same_rank=False), *hit.after(30, same_rank=False)]
    where = next((w for ln in near for w in MAIN_FIRST.findall(ln.text)), None)
    if where is None:
        return None
    return [
        row.event(
            hit,
            f"{hit.who()} waited in {where}'s barrier while the main process worked alone, and the store "
            "wait ran past the process group timeout (the main rank's preprocessing took longer than the "
            "timeout)",
            {**facts, "kind": "main_process_first_barrier", "barrier": where},
            code=C.WATCHDOG_TIMEOUT.code,
            tier=1,
            dedupe=(C.WATCHDOG_TIMEOUT.code, "main_first"),
        )
    ]


def _poll_failed(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    errno, text = int(m.group(1)), m.group(2).strip()
    if errno == 0:
        late = _main_first(row, hit, {"errno": errno})
        if late is not None:
            return late
    what = (
        "a store request got no answer in time (its poll returned nothing): the rendezvous or barrier waited "
        "for ranks (or an agent) that never came"
        if errno == 0
        else f"the poll of a store connection failed (errno {errno} - {text})"
    )
    return [row.event(hit, what, {"errno": errno, "error": text}, dedupe=(row.code, "wait_timeout"))]


def _poll_zero(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if any(_WAIT_TIMEOUT.search(ln.text) for ln in hit.after(6, same_rank=True)):
        return []  # its own timeout record follows: that row reads the request
    if _went_past(hit):
        return []  # the request was answered after all (a slow barrier), and the run went on
    host, port = m.group(1).removeprefix("::ffff:"), int(m.group(2))
    late = _main_first(row, hit, {})
    if late is not None:
        return late
    return [
        row.event(
            hit,
            f"a store request to {host}:{port} got no answer (socket.cpp's poll timed out): the rendezvous "
            "or barrier waited for ranks (or an agent) that never came, or the store's host is unreachable",
            {"master_addr": host, "master_port": port},
            dedupe=(row.code, "wait_timeout"),
        )
    ]


def _wait_timeout(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    host, port, ms = m.group(1), int(m.group(2)), int(m.group(3))
    host = host.removeprefix("::ffff:")
    late = _main_first(row, hit, {"timeout_ms": ms})
    if late is not None:
        return late
    return [
        row.event(
            hit,
            f"a store request to {host}:{port} got no answer within {ms} ms: the rendezvous or barrier "
            "waited for ranks (or an agent) that never came",
            {"master_addr": host, "master_port": port, "timeout_ms": ms},
            dedupe=(row.code, "wait_timeout"),
        )
    ]


# elastic/utils/distributed.py: the server's port taken ("port: 29400 already in use, attempt: [1/3]" is its
# WARNING before a retry with another free port; the raise names the host).
_ELASTIC_IN_USE = lazy_re.compile(r"\bon (\S+), port: (\d+) already in use")


def _elastic_in_use(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    host, port = m.group(1), int(m.group(2))
    return [
        row.event(
            hit,
            f"the agent could not host the rendezvous store on {host}:{port}: the port is already in use "
            "(another job or a leftover agent holds it; pick another --rdzv-endpoint / --master-port)",
            {"master_addr": host, "port": port, "errno": 98},
            dedupe=(row.code,),
        )
    ]


_MEMBERS = lazy_re.compile(r"timed out waiting for all (\d+) members to join")
_ELASTIC_BARRIER = lazy_re.compile(
    r"Timed out waiting on barrier on rank (\d+), for key prefix: (\S+) \(world_size=(\d+), "
    r"missing_ranks=\[([^\]]*)\]"
)
_MISSING = lazy_re.compile(r"Rank (\d+)(?: \(host ([^)]+)\))?")


def _members(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    n = int(m.group(1))
    return [
        row.event(
            hit,
            f"the agents' store did not see all {n} members join within its timeout: the other nodes' agents "
            "never reached the store (not started, a wrong --rdzv-endpoint / --master-addr, or a firewall)",
            {"expected": n},
            dedupe=(row.code,),
        )
    ]


def _elastic_barrier(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    rank, prefix, world = int(m.group(1)), m.group(2), int(m.group(3))
    missing = [(int(r), h) for r, h in _MISSING.findall(m.group(4))]
    facts: dict[str, Any] = {"expected": world, "key_prefix": prefix}
    if missing:
        facts["missing_ranks"] = [r for r, _ in missing]
        facts["missing_hosts"] = sorted({h for _, h in missing if h})
    who = ", ".join(f"{r}" + (f" ({h})" if h else "") for r, h in missing) or "some"
    if "terminal_state" in prefix:
        # the agent's _exit_barrier: its own workers had ended, the other agents' had not (failed or hung)
        facts["exit_barrier"] = True
        return [
            row.event(
                hit,
                f"the agent's exit barrier timed out waiting for agent(s) {who}: they failed or hung first",
                facts,
                rank=rank,
                tier=2,
                dedupe=(row.code, "exit_barrier"),
            )
        ]
    return [
        row.event(
            hit,
            f"a store barrier ({prefix}) timed out: rank(s) {who} of {world} never arrived",
            facts,
            rank=rank,
            dedupe=(row.code,),
        )
    ]


_CLIENT_IO = lazy_re.compile(
    r"(?P<op>recvValue|recvVector|recvBytes|sendBytes|receiveBits|receiveValue) failed on "
    r"SocketImpl\(fd=\d+, addr=\[?(?P<me>[^\s\]]+?)\]?:(?P<myport>\d+), "
    r"remote=\[?(?P<host>[^\s\]]+?)\]?:(?P<port>\d+)\):?\s*(?P<why>.*)"
)


# ProcessGroupNCCL's monitor polling the store of a process group that was up: "Failed to check the \"should
# dump\" flag on TCPStore, (maybe TCPStore server has shut down too early)" - the run was past its start.
_GROUP_UP = lazy_re.compile(r"should dump|shut down too early|ProcessGroupNCCL|heartbeat", re.I)


# What a paste puts around a record that is not the run's output: a code fence and its language tag, the
# opening of a wrapper's repr ("ray.exceptions.RayTaskError: RuntimeError(").
_PASTE_FRAME = lazy_re.compile(
    r"^\s*(?:`{3,}|~{3,})?\s*(?:text|log|logs|shell|bash|sh|console|plaintext|python)?\s*$|"
    r"(?:Error|Exception)\(['\"]?\s*$"
)


def _run_went_before(hit: Hit) -> bool:
    """Whether the job was past its start: any process printed lines of its own (not c10d's records or their
    frames) before this one, or a process group's monitor polled the store beside it."""
    near = [*hit.before(200, same_rank=False), *hit.after(200, same_rank=False)]
    if any(_GROUP_UP.search(ln.text) for ln in near):
        return True
    return any(
        ln.text.strip()
        and not _SAME_RECORD.match(ln.text)
        and "c10d" not in ln.text
        and not _PASTE_FRAME.search(ln.text)
        for ln in hit.before(200, same_rank=False)
    )


# The frames under the record that put it in the store's construction: the client's ping after it connected
# (TCPStore::ping, 2.2+), TCPStore::TCPStore itself, its validate / connect (2.4+ TCPClient::connect).
_CONSTRUCTING = lazy_re.compile(
    r"c10d::TCPStore::(?:TCPStore|ping|validate)\(|c10d::detail::TCPClient::connect\("
)


def _at_construction(hit: Hit) -> bool:
    """Whether the record's own frames (below it, before any other line) show the store being built."""
    for ln in hit.after(16, same_rank=False):
        if not _SAME_RECORD.match(ln.text):
            return False
        if _CONSTRUCTING.search(ln.text):
            return True
    return False


def _client_io(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    host, port = m.group("host").removeprefix("::ffff:"), int(m.group("port"))
    local = {m.group("myport")}
    for ln in [*hit.before(400, same_rank=True), *hit.after(400, same_rank=True)]:
        o = _CLIENT_IO.search(ln.text)
        if o and int(o.group("port")) == port:
            local.add(o.group("myport"))
    building = _at_construction(hit)
    if len(local) < 2 and not building and _run_went_before(hit):
        return []  # one dropped connection after the run's own lines: often the store's host leaving last
    why = clip(m.group("why").split(" Exception raised from")[0].strip(), 80)
    how = (
        f"s were dropped again and again ({len(local)} connections"
        if len(local) > 1
        else " was dropped while the store was being built (its ping after connecting; it said"
        if building
        else " was dropped before the run printed anything of its own (it said"
    )
    return [
        row.event(
            hit,
            f"the store client's connection{how}: {why}): it cannot talk to the store at {host}:{port} (the "
            "server closes them: another process or a store of another torch version on the port, or the "
            "store's host fails)",
            {"master_addr": host, "master_port": port, "connections": len(local), "error": why},
            tier=1,
            dedupe=(row.code, "client_io"),
        )
    ]


_EXIT_BARRIER_ERROR = lazy_re.compile(r"Error waiting on exit barrier\. Elapsed: (?P<s>[\d.]+) ?seconds")


def _exit_barrier_error(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    elapsed = float(m.group("s"))
    why = (
        "the other agents never reached it (their workers failed or hung: that failure is the cause)"
        if elapsed >= 60
        else "the store it reads was gone (the agent hosting it exited first, the exit race of torch issue "
        "69520) or the other agents' failure ended it"
    )
    return [
        row.event(
            hit,
            f"torchrun's agent failed waiting at its exit barrier after {elapsed:.0f} s: " + why,
            {"exit_barrier": True, "elapsed_s": round(elapsed, 1)},
            tier=2,
            dedupe=(row.code, "exit_barrier"),
        )
    ]


_AGENT_STORE_FRAME = lazy_re.compile(
    r'File "[^"]*/elastic/utils/store\.py", line \d+, in\b(?: (?P<func>\w+))?'
)
_EXIT_BARRIER_NEAR = lazy_re.compile(r"_exit_barrier\b|exit barrier")


def _agent_store_cut(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not ends_in_stack(hit):
        return None
    func = m.group("func") or "?"
    if any(_EXIT_BARRIER_NEAR.search(ln.text) for ln in hit.before(24, same_rank=False)):
        return [
            row.event(
                hit,
                f"a stack ends inside torchrun's exit barrier (utils/store.py in {func}) before its "
                "exception line: the other agents never reached it, or the agent hosting the store had "
                "exited",
                {"exit_barrier": True, "cut": True, "frame": f"store.py in {func}"},
                tier=2,
                dedupe=(row.code, "exit_barrier"),
            )
        ]
    return [
        row.event(
            hit,
            f"a stack ends inside torchrun's agents' store exchange (elastic/utils/store.py in {func}) "
            "before its exception line: the agents of the nodes did not all meet at the store (a node's "
            "agent not started, or unable to reach the store's host)",
            {"cut": True, "frame": f"store.py in {func}"},
            tier=2,
            dedupe=(row.code, "cut"),
        )
    ]


# TCPStore::ping (TCPStore.cpp 2.2-2.3, right after the client connects) before 2.4 worded it "Ping failed,
# invalid value returned from server" (store_errors): "RuntimeError: nonce == returnedNonce INTERNAL ASSERT
# FAILED at \"../torch/csrc/distributed/c10d/TCPStore.cpp\":409, please report a bug to PyTorch. Ping failed,
# invalid nonce returned". The client sent its pid and read back another number: something that is not this
# job's TCPStore answered on MASTER_ADDR:MASTER_PORT (another service or a stale store on the port, a wrong
# address that reaches another listener, ranks of different torch versions). Not a bug in torch.
_NONCE = lazy_re.compile(r"nonce == returnedNonce INTERNAL ASSERT FAILED|Ping failed, invalid nonce returned")


def _nonce(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: the store's ping came back with another nonce (TCPStore.cpp's 'nonce == "
            "returnedNonce' assert): something other than this job's TCPStore answers on "
            "MASTER_ADDR:MASTER_PORT (another service or a stale store on the port, an address that reaches "
            "another host, ranks of different torch versions)",
            {"store_error": m.group(0), "problem": "store_protocol"},
            dedupe=(row.code, "store_err"),
        )
    ]


# python-etcd's "etcd.EtcdKeyNotFound: Key not found : /torchelastic/p2p/run_<id>/rdzv/active_version"
# raised out of torchelastic's etcd rendezvous (etcd_rendezvous.py and forks of it) when a key of the
# rendezvous state is gone: its TTL lapsed (an agent stalled and stopped its keep-alive), the rendezvous was
# closed or set up again by another job with the same run_id, or the agents use different prefixes. The
# agent then "Attempting to join next rendezvous" and the round repeats. A key outside a rendezvous path is
# the application's own.
_ETCD_KEY = lazy_re.compile(r"EtcdKeyNotFound: Key not found : (?P<key>\S*/rdzv/\S*|/torchelastic/\S*)")


def _etcd_key(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    key = m.group("key")
    return [
        row.event(
            hit,
            f"the elastic rendezvous's state on etcd lost a key ({clip(key, 100)}): its TTL lapsed (an agent "
            "stalled and stopped its keep-alive), another job with the same run_id reset it, or the agents "
            "use different etcd prefixes",
            {"backend": "etcd", "store_error": "EtcdKeyNotFound", "key": key},
            tier=1,
            dedupe=(row.code, "etcd_key"),
        )
    ]


S = C.STORE_UNREACHABLE.code
SIGNATURES = (
    Signature(
        "store ping nonce",
        _NONCE,
        _nonce,
        S,
        anchors=(b"returnedNonce", b"invalid nonce returned"),
        words=("returnednonce", "invalid nonce returned"),
    ),
    Signature(
        "etcd rendezvous key not found",
        _ETCD_KEY,
        _etcd_key,
        S,
        anchors=(b"EtcdKeyNotFound: Key not found",),
        words=("etcdkeynotfound",),
    ),
    Signature(
        "store client connect loop",
        _CONNECT_LOOP,
        _connect_loop,
        S,
        anchors=(b"[c10d]",),
        worth=(rb"failed to connect/validate",),
        words=("failed to connect/validate",),
        anchor_from="c10d's '[c10d] ' logger prefix",
        examples=(
            "[W426 16:56:01.831041000 TCPStore.cpp:347] [c10d] TCP client failed to connect/validate to "
            "host 100.64.0.1:59782 - retrying (try=6, timeout=1800000ms, delay=5241ms): Connection reset by "
            "peer",
        ),
    ),
    Signature(
        "store request wait timeout",
        _WAIT_TIMEOUT,
        _wait_timeout,
        S,
        tier=1,
        anchors=(b"imed out", b"[c10d]"),
        worth=(rb"[Tt]imed out", rb"\[c10d\] waitForInput: socket"),
        words=("waitforinput",),
        anchor_from="c10d's '[c10d] ' logger prefix, or the record's 'timed out'",
        examples=(
            "[W228 18:45:15.741177013 socket.cpp:487] [c10d] waitForInput: socket SocketImpl(fd=11, "
            "addr=[node-2]:38674, remote=[::ffff:10.0.0.1]:23456) timed out after 900000ms",
        ),
    ),
    Signature(
        "store request poll gave nothing (2.4+)",
        _POLL_ZERO,
        _poll_zero,
        S,
        tier=1,
        anchors=(b"waitForInput: poll for socket",),
        words=("waitforinput",),
    ),
    Signature(
        "store request poll failed (2.1-2.3)",
        _POLL_FAILED,
        _poll_failed,
        S,
        # the record before the error the store raises: that error's own reading (a main-process-first
        # barrier's timeout, a peer's death) says more; alone in a paste it is still the finding
        tier=2,
        anchors=(b"[c10d]", b"poolFD failed"),
        # the record's start too: a terminal that wraps at 80 columns cuts "poolFD failed" off the physical
        # line that holds the prefix
        worth=(rb"poolFD failed", rb"\[c10d\] While waitForInput"),
        words=("poolfd failed",),
        anchor_from="c10d's '[c10d] ' logger prefix, or the record's own words",
        examples=("[W socket.cpp:432] [c10d] While waitForInput, poolFD failed with (errno: 0 - Success).",),
    ),
    Signature(
        "store client connection dropped, repeatedly",
        _CLIENT_IO,
        _client_io,
        S,
        anchors=(b"[c10d]", b"failed on SocketImpl"),
        worth=(
            rb"failed on SocketImpl",
            rb"\[c10d\] (?:recvValue|recvVector|recvBytes|sendBytes|receive\w+) failed",
        ),
        words=("failed on socketimpl",),
        anchor_from="c10d's '[c10d] ' logger prefix, or the record's own words",
        examples=(
            "[W822 03:54:49.636977195 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=15, "
            "addr=[node-1]:60560, remote=[node-0]:29500): failed to recv, got 0 bytes",
        ),
    ),
    Signature(
        "elastic store port in use",
        _ELASTIC_IN_USE,
        _elastic_in_use,
        C.ADDRESS_IN_USE.code,
        anchors=(b"rror",),
        worth=(rb"Error\b",),
        words=("already in use",),
        anchor_from="the exception type ('RuntimeError: ') before torch's message",
        examples=("RuntimeError: on node-1, port: 29400 already in use",),
    ),
    Signature(
        "elastic store members",
        _MEMBERS,
        _members,
        C.RENDEZVOUS_TIMEOUT.code,
        anchors=(b"rror", b"imed out"),
        worth=(rb"Error\b", rb"[Tt]imed out"),
        words=("members to join",),
    ),
    Signature(
        "elastic store barrier",
        _ELASTIC_BARRIER,
        _elastic_barrier,
        C.RENDEZVOUS_TIMEOUT.code,
        anchors=(b"rror", b"imed out"),
        worth=(rb"Error\b", rb"[Tt]imed out"),
        words=("timed out waiting on barrier",),
    ),
    Signature(
        "elastic agent exit barrier failed",
        _EXIT_BARRIER_ERROR,
        _exit_barrier_error,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=2,
        anchors=(b"Error waiting on exit barrier",),
        words=("error waiting on exit barrier",),
    ),
    Signature(
        "elastic agent store exchange, cut",
        _AGENT_STORE_FRAME,
        _agent_store_cut,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=2,
        anchors=(b"/elastic/utils/store.py",),
        # a traceback's frame only ("line 34, in get_all"): faulthandler's dump ("line 31 in get_all") is
        # stuck_stacks' to read, and a hit only where its own words allow
        worth=(rb'/elastic/utils/store\.py", line \d+, in',),
        words=("store.py",),
    ),
    Signature(
        "ncclUniqueId store read, tail",
        _UID_TAIL,
        _uid_tail,
        C.STORE_UNREACHABLE.code,
        tier=1,
        anchors=(b"possible application crash on rank",),
        worth=(rb"possible application crash on rank",),
        words=("possible application crash on rank",),
    ),
)
parse = gated_reader(SIGNATURES)
