"""rendezvous: the ranks' meeting as other runtimes and older releases report it, read from their sources.

Formats:
- PyTorch/XLA's XRT mesh service (third_party/xla_client/mesh_service.cc and computation_client.cc, torch_xla
  1.5-1.13, TPU VMs and pods; its errors come through tf_logging or a RuntimeError of XLA_CHECK): the client's
  constructor logs "Waiting to connect to client mesh master (300 seconds) 10.164.0.6:8477" and checks
  "impl_->channel->WaitForConnected(...)" with "Failed to connect to client mesh master: host:port" after the
  native stack; the worker's "Failed to retrieve mesh configuration: <grpc message> (13)"; xm.rendezvous's
  "Failed to meet rendezvous '<tag>': Socket closed (14)". The master ordinal's process hosts the mesh master:
  not listening (the parent called xm.rendezvous after xmp.spawn returned, the master VM's port blocked, a
  worker of another run) - RUN371; a rendezvous that failed once the mesh existed is a process that left
  first (tier 1).
- TCPStore's server wait as a title or a message cut to its tail: "torch.distributed.DistStoreError: 16/32
  clients joined" (TCPStore.cpp 2.x "Timed out after {} seconds waiting for clients. {}/{} clients joined.",
  rendezvous.py reads the whole sentence) - RUN221, tier 1 when another rank's death is in the paste.
- distributed_c10d.py's store-based barrier (1.x-2.0) "Timed out initializing process group in store based
  barrier on rank: 0, ..." told in a person's words, its tail gone or replaced ("RuntimeError: Timed out
  initializing process group with --num_nodes=2 in DeepSpeed"): init_process_group's meeting never
  completed - RUN221 (rendezvous.py reads the message whole).
- TCPStore's libuv server (TCPStoreLibUvBackend.cpp, torch 2.4+ default): "The server socket has failed to
  bind. port: 29500, useIpv6: 0, code: -99, name: EADDRNOTAVAIL, message: cannot assign requested address"
  and "... failed to listen on provided socket. socket: 12, code: -22, name: EINVAL, ..." (libuv's error name;
  EADDRINUSE is rendezvous.py's port clash): the store's host could not open its port - RUN222, or RUN224
  for EACCES (a port below 1024 without the privilege).
- Paddle's TCPStore sockets (phi/core/distributed/store/tcp_utils.cc, 2.4-2.6+, raised through PADDLE_THROW
  under init_parallel_env): "Network 10.0.0.1:6170 cannot be connected." after its connect retries ("Retry
  to connect to ... while the server is not yet listening", peer_waits.py), "Create socket to connect h:p
  failed. Details: ...", "IPv4 network node-1:6170 cannot be obtained. Details: ..." (name resolution) -
  RUN222; "Bind network on 10.0.0.1:6170 failed." - the master's port (PADDLE_MASTER, --master) held or not
  this host's address, RUN223.
- torch 0.3-0.4's THD init (torch/lib/THD/process_group/General.cpp): "RuntimeError: more than one node have
  assigned same rank" - two processes were given the same rank (RANK / --rank, the launcher's node rank):
  RUN224.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.rendezvous import _peer_died
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_MESH = lazy_re.compile(
    r"Failed to connect to client mesh master: (?P<addr>\S+)|"
    r"Failed to retrieve mesh configuration: (?P<why>[^\n]*)|"
    r"mesh_service\.cc:\d+ : Check failed: impl_->channel->WaitForConnected|"
    r"Failed to meet rendezvous '(?P<tag>[^']*)': (?P<rwhy>[^\n]*)"
)
# A rendezvous whose connection dropped ("Socket closed (14)", "Connection reset by peer (14)": gRPC's
# UNAVAILABLE) after the log shows the job running (the processes' own progress lines before it): the mesh
# master or a peer process left mid-run, a peer's death rather than a meeting that never happened.
_CLOSED = lazy_re.compile(r"Socket closed|Connection reset by peer|\(14\)")
_RAN = lazy_re.compile(r"[Ee]poch\b|\b[Ss]tep\b|\b[Ll]oss\b|\b[Tt]raining\b|\b[Ee]val(?:uation)?\b")
_MESH_AT = lazy_re.compile(r"(?:client mesh master(?: \(\d+ seconds\))?:?|from mesh service at) (\S+)")


def _mesh(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "torch_xla", "runtime": "xrt"}
    addr = m.group("addr")
    if not addr:
        for ln in [*hit.after(40, same_rank=True), *reversed(hit.before(12, same_rank=True))]:
            a = _MESH_AT.search(ln.text)
            if a:
                addr = a.group(1)
                break
    if addr:
        facts["mesh_master"] = addr
    at = f" at {addr}" if addr else ""
    if m.group("tag") is not None:
        why = clip(m.group("rwhy").strip(), 80)
        facts.update(rendezvous_tag=m.group("tag"), error=why)
        if _CLOSED.search(why) and any(_RAN.search(ln.text) for ln in hit.before(24, same_rank=False)):
            # the mesh had served the job's earlier rendezvous and its steps: a peer process went away
            facts.update(problem="peer_process_gone", peer_may_have_died=True)
            return [
                row.event(
                    hit,
                    f"{hit.who()}: xm.rendezvous('{m.group('tag')}') lost its connection ({why}) after the "
                    "job had run: a process of the mesh died first (killed - often host memory at a save or "
                    "an evaluation - or crashed); its own log and dmesg say why",
                    facts,
                    tier=1,
                    code=C.RANK_EXITED.code,
                    dedupe=(C.RANK_EXITED.code, "xla_mesh_rdzv"),
                )
            ]
        return [
            row.event(
                hit,
                f"{hit.who()}: xm.rendezvous('{m.group('tag')}') failed ({why}): a process of the mesh left "
                "(crashed first) or never reached the same rendezvous; its own error is the cause",
                facts,
                tier=1,
                dedupe=(row.code, "xla_mesh_rdzv"),
            )
        ]
    if m.group("why") is not None:
        facts["error"] = clip(m.group("why").strip(), 80)
        what = f"could not get the mesh configuration from the mesh master{at} ({facts['error']})"
    else:
        what = f"could not connect to the XRT mesh master{at} within XRT_MESH_CONNECT_WAIT"
    return [
        row.event(
            hit,
            f"{hit.who()}: {what}: the master ordinal's process is not serving it (xm.rendezvous / xm.save "
            "called outside the processes xmp.spawn runs, the master VM's port blocked, or a worker of "
            "another run)",
            facts,
            dedupe=(row.code, "xla_mesh"),
        )
    ]


_JOINED = lazy_re.compile(r"\b(\d+)/(\d+) clients joined")


def _joined(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"joined": int(m.group(1)), "expected": int(m.group(2))}
    if facts["joined"] >= facts["expected"]:
        return None
    return [
        row.event(
            hit,
            "the store's server timed out waiting for clients "
            f"({facts['joined']}/{facts['expected']} joined): the other ranks never started, died before "
            "init_process_group, or cannot reach MASTER_ADDR:MASTER_PORT",
            facts,
            tier=1 if _peer_died(hit, facts) else None,
            dedupe=(row.code,),
        )
    ]


_INIT_TIMEOUT = lazy_re.compile(
    r"[Tt]imed out initializing (?:the )?(?:default )?process group\b|"
    r"[Tt]imed out while initializing (?:the )?(?:default )?process group\b"
)


def _init_timeout(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "init_process_group timed out before every rank had joined: the other ranks never started, died "
            "before it, or cannot reach MASTER_ADDR:MASTER_PORT (or were told another world size)",
            {"phase": "init_process_group"},
            dedupe=(row.code,),
        )
    ]


_UV_BIND = lazy_re.compile(
    r"server socket has failed to (?P<op>bind|listen on provided socket)\.\s*"
    r"(?:(?:port|socket): (?P<port>\d+), )?(?:useIpv6: \w+, )?"
    r"code: (?P<code>-?\d+), name: (?P<name>\w+), message: (?P<msg>[^\n]*)"
)


def _uv_bind(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    name = m.group("name")
    if name == "EADDRINUSE":
        return None  # rendezvous.py's port clash (RUN223)
    facts: dict[str, Any] = {"errno": abs(int(m.group("code"))), "error": f"{name}: {m.group('msg').strip()}"}
    if m.group("port") and m.group("op") == "bind":
        facts["port"] = int(m.group("port"))
    where = f"port {facts['port']}" if "port" in facts else "its socket"
    if name == "EACCES":
        return [
            row.event(
                hit,
                f"the store's server could not bind {where} (EACCES): a port below 1024 needs privileges; "
                "set MASTER_PORT / --master-port to a free port above 1024",
                facts,
                code=C.RENDEZVOUS_CONFIG.code,
                dedupe=(C.RENDEZVOUS_CONFIG.code, "bind"),
            )
        ]
    return [
        row.event(
            hit,
            f"the store's server (libuv) could not {m.group('op')} {where}: {name}, {m.group('msg').strip()} "
            "(MASTER_ADDR is not an address of this host, or the socket handed to it is not usable)",
            facts,
            dedupe=(row.code, "listen"),
        )
    ]


_PADDLE_NET = lazy_re.compile(
    r"(?P<conn>Network (?P<ep>\S+?:\d+) cannot be connected)|"
    r"(?P<sock>Create socket to connect (?P<ep2>\S+?:\d+) failed\. Details: (?P<why>[^.\n]*))|"
    r"(?P<res>IPv[46] network (?P<ep3>\S+?:\d+) cannot be obtained\. Details: (?P<why3>[^.\n]*))|"
    r"(?P<bind>Bind network on (?P<ep4>\S+?:\d+) failed)|"
    # the store's socket after it was up (tcp_utils.h send_bytes/receive_bytes, tcp_utils.cc tcp_accept):
    # "TCP receive error. Details: Connection reset by peer." - the master trainer went away
    # (3.0 adds "TCP connection reset by peer. Details: ...")
    r"(?P<io>TCP (?P<dir>receive error|send error|connection reset by peer)\. Details: (?P<why5>[^.\n]*))|"
    r"(?P<acc>The server failed to accept a new connection\. Details: (?P<why6>[^.\n]*))"
)


def _paddle_net(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    ep = m.group("ep") or m.group("ep2") or m.group("ep3") or m.group("ep4")
    facts: dict[str, Any] = {"framework": "paddle", "store": "tcp_store", "endpoint": ep}
    if m.group("bind"):
        return [
            row.event(
                hit,
                f"Paddle's TCPStore master could not bind {ep}: the port is held (another job, a leftover "
                "trainer) or the address is not this host's (PADDLE_MASTER / --master)",
                facts,
                code=C.ADDRESS_IN_USE.code,
                dedupe=(C.ADDRESS_IN_USE.code,),
            )
        ]
    if m.group("io") or m.group("acc"):
        why = (m.group("why5") or m.group("why6") or "").strip()
        side = (
            f"its TCPStore connection broke ({m.group('dir')}: {why})"
            if m.group("io")
            else f"the TCPStore master could not accept a trainer's connection ({why})"
        )
        return [
            row.event(
                hit,
                f"{hit.who()}: Paddle {side}: the master trainer (rank 0, which hosts the store) exited "
                "or the network between them dropped; rank 0's own log says why",
                {"framework": "paddle", "store": "tcp_store", "store_error": clip(why, 80)},
                dedupe=(row.code, "paddle_store"),
            )
        ]
    why = m.group("why") or m.group("why3")
    if why:
        facts["error"] = clip(why.strip(), 80)
    what = (
        f"could not resolve {ep} ({facts.get('error', '')})"
        if m.group("res")
        else f"could not connect to the TCPStore master at {ep}" + (f" ({facts['error']})" if why else "")
    )
    return [
        row.event(
            hit,
            f"{hit.who()}: Paddle {what}: the master trainer is not up (it died first) or the master's "
            "address and port (PADDLE_MASTER, --master, the first of --ips) are wrong or blocked",
            facts,
            dedupe=(row.code, "paddle_store"),
        )
    ]


_THD_SAME_RANK = lazy_re.compile(r"more than one node have assigned same rank")


def _thd_same_rank(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "THD's init_process_group found two processes with the same rank: each process needs its own "
            "--rank / RANK (a launcher that sets it per process, e.g. apex.parallel.multiproc or "
            "torch.distributed.launch, and a distinct node rank on every node)",
            {"problem": "duplicate rank", "backend": "thd"},
            dedupe=(row.code, "dup_rank"),
        )
    ]


SIGNATURES = (
    Signature(
        "xla xrt mesh master",
        _MESH,
        _mesh,
        C.XLA_MESH_UNREACHABLE.code,
        anchors=(b"mesh master", b"mesh configuration", b"WaitForConnected", b"Failed to meet rendezvous"),
        words=("mesh master", "mesh configuration", "waitforconnected", "failed to meet rendezvous"),
    ),
    Signature(
        "tcpstore clients joined, tail",
        _JOINED,
        _joined,
        C.RENDEZVOUS_TIMEOUT.code,
        anchors=(b"clients joined",),
        words=("clients joined",),
    ),
    Signature(
        "process group initialisation timed out, in other words",
        _INIT_TIMEOUT,
        _init_timeout,
        C.RENDEZVOUS_TIMEOUT.code,
        anchors=(b"imed out initializing ", b"imed out while initializing "),
        worth=(rb"imed out (?:while )?initializing (?:the )?(?:default )?process group",),
        words=("timed out initializing", "timed out while initializing"),
    ),
    Signature(
        "tcpstore libuv server bind",
        _UV_BIND,
        _uv_bind,
        C.STORE_UNREACHABLE.code,
        anchors=(b"server socket has failed to",),
        words=("server socket has failed to",),
    ),
    Signature(
        "paddle tcpstore socket",
        _PADDLE_NET,
        _paddle_net,
        C.STORE_UNREACHABLE.code,
        anchors=(
            b"cannot be connected",
            b"Create socket to connect",
            b"cannot be obtained",
            b"Bind network on",
            b"TCP receive error",
            b"TCP send error",
            b"TCP connection reset by peer",
            b"failed to accept a new connection",
        ),
        words=(
            "cannot be connected",
            "create socket to connect",
            "cannot be obtained",
            "bind network on",
            "tcp receive error",
            "tcp send error",
            "tcp connection reset by peer",
            "failed to accept a new connection",
        ),
    ),
    Signature(
        "thd duplicate rank",
        _THD_SAME_RANK,
        _thd_same_rank,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"assigned same rank",),
        words=("assigned same rank",),
    ),
)
parse = gated_reader(SIGNATURES)
