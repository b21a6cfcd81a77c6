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
"""

from __future__ import annotations

import re
from typing import Any

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit, event

_RDZV_TIMEOUT = re.compile(r"RendezvousTimeoutError|Timed out after (\d+) seconds waiting for clients\. (\d+)/(\d+) clients"
                           r"|Timed out initializing process group in store based barrier")
_BARRIER = re.compile(r"world_size=(\d+), worker_count=(\d+)")
_CLIENT_TIMEOUT = re.compile(r"client socket has timed out after (\d+)(ms|s) while trying to connect to \(([^,]+), (\d+)\)")
_CONNECT_FAIL = re.compile(r"client socket has failed to connect to \[?([^\]\s]+?)\]?:(\d+) \(errno: (\d+) - ([^)]*)\)")
_IN_USE = re.compile(r"[Aa]ddress already in use|EADDRINUSE")
_PORT = re.compile(r"(?:\]:|port: |:)(\d{2,5})\b")
_STORE_ERR = re.compile(r"store->get\('([^']*)'\) got error: (.*)|(?:DistNetworkError|DistStoreError): (.*)")
_DNS = re.compile(r"Name or service not known|Temporary failure in name resolution|nodename nor servname")
_STORE_CONTEXT = re.compile(r"MASTER_ADDR|TCPStore|c10d|rendezvous|store|init_process_group", re.I)


def parse(hit: Hit) -> list[Event]:
    t = hit.text
    m = _RDZV_TIMEOUT.search(t)
    if m:
        facts: dict[str, Any] = {}
        if m.group(1):
            facts = {"timeout_s": int(m.group(1)), "joined": int(m.group(2)), "expected": int(m.group(3))}
        b = _BARRIER.search(t)
        if b:
            facts = {"expected": int(b.group(1)), "joined": int(b.group(2))}
        who = f" ({facts['joined']}/{facts['expected']} joined)" if "joined" in facts else ""
        return [event(hit, C.RENDEZVOUS_TIMEOUT.code, f"rendezvous timed out waiting for the other ranks{who}", facts,
                      dedupe=(C.RENDEZVOUS_TIMEOUT.code,))]
    m = _CLIENT_TIMEOUT.search(t)
    if m:
        ms = int(m.group(1)) * (1 if m.group(2) == "ms" else 1000)
        facts = {"master_addr": m.group(3).strip(), "master_port": int(m.group(4)), "timeout_ms": ms}
        return [event(hit, C.STORE_UNREACHABLE.code,
                      f"could not connect to the store at {facts['master_addr']}:{facts['master_port']} "
                      f"within {ms} ms", facts, dedupe=(C.STORE_UNREACHABLE.code,))]
    if _IN_USE.search(t) and ("socket" in t or "store" in t.lower() or "Error" in t or "bind" in t):
        p = _PORT.search(t)
        facts = {"port": int(p.group(1))} if p else {}
        return [event(hit, C.ADDRESS_IN_USE.code,
                      f"the store could not bind port {facts.get('port', '?')}: address already in use "
                      "(another job or a leftover process holds MASTER_PORT)", facts,
                      dedupe=(C.ADDRESS_IN_USE.code,))]
    m = _CONNECT_FAIL.search(t)
    if m and ("Error" in t or "rror" in t):
        facts = {"master_addr": m.group(1), "master_port": int(m.group(2)), "errno": int(m.group(3)),
                 "error": m.group(4)}
        return [event(hit, C.STORE_UNREACHABLE.code,
                      f"could not connect to the store at {m.group(1)}:{m.group(2)}: {m.group(4)}", facts,
                      dedupe=(C.STORE_UNREACHABLE.code,))]
    if _DNS.search(t) and _STORE_CONTEXT.search(" ".join([t] + [ln.text for ln in hit.before(6)])):
        return [event(hit, C.STORE_UNREACHABLE.code, "the store host name does not resolve (MASTER_ADDR)",
                      {"error": "name resolution"}, dedupe=(C.STORE_UNREACHABLE.code, "dns"))]
    m = _STORE_ERR.search(t)
    if m and re.search(r"Socket Timeout|timed out|Connection reset|Connection refused|Broken pipe", t):
        facts = {"store_error": (m.group(2) or m.group(3) or "").strip()[:200]}
        if m.group(1) is not None:
            facts["store_key"] = m.group(1)
        # A store read that times out while others wait for rank 0's ncclUniqueId: usually rank 0
        # died or hung first; a symptom unless nothing else is found.
        return [event(hit, C.STORE_UNREACHABLE.code, f"{hit.who()}: store request failed: {facts['store_error'][:120]}",
                      facts, tier=1, dedupe=(C.STORE_UNREACHABLE.code, "store_err"))]
    return []
