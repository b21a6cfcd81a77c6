"""rendezvous, the store client's own records in torch 2.4+: TCPStore.cpp's connect loop and socket.cpp's
wait for a reply.

Formats (TCPStore.cpp, 2.4+, the client validates the server with a ping after connecting):
"[W426 16:56:01.831 TCPStore.cpp:347] [c10d] TCP client failed to connect/validate to host 100.64.0.1:59782
- retrying (try=6, timeout=1800000ms, delay=5241ms): Connection reset by peer" and, when its deadline
passed, "... - timed out (try=N, timeout=Nms): ..." before the error is raised. socket.cpp (2.6+):
"[c10d] waitForInput: poll for socket SocketImpl(fd=11, addr=[host]:38674, remote=[::ffff:10.0.0.1]:23456)
returned 0, likely a timeout" then "waitForInput: socket SocketImpl(...) timed out after 900000ms": a store
request (a get or wait of the rendezvous, of the store-based barrier) got no answer in time.

A connect retry that the run goes past (its store came up, the next records are the run's own) is no
failure; one repeated until the paste ends is. A store read that timed out is most often a peer that
never came or died (tier 1: a death found elsewhere is the cause).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.rendezvous import connected_later
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip

_CONNECT_LOOP = re.compile(
    r"TCP client failed to connect/validate to host \[?([^\s\]]+?)\]?:(\d+) - (retrying|timed out) "
    r"\(try=(\d+), timeout=(\d+)ms(?:, delay=\d+ms)?\):?\s*(.*)"
)
_WAIT_TIMEOUT = re.compile(
    r"waitForInput: socket SocketImpl\([^)]*remote=\[?([^\s\]]+?)\]?:(\d+)\) timed out after (\d+)\s*ms"
)
# What a paste shows below a c10d record that is still the same record: the C++ frames of the error
# ("Exception raised from recvBytes at ...", "frame #3: c10d::TCPStore::ping() + 200"), other c10d records.
_SAME_RECORD = re.compile(r"^\s*(?:frame #\d+|Exception raised from|\[[WIE]\S* [^\]]*\] \[c10d\])")


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


def _wait_timeout(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    host, port, ms = m.group(1), int(m.group(2)), int(m.group(3))
    host = host.removeprefix("::ffff:")
    return [
        row.event(
            hit,
            f"a store request to {host}:{port} got no answer within {ms} ms: the rendezvous or barrier "
            "waited for ranks (or an agent) that never came",
            {"master_addr": host, "master_port": port, "timeout_ms": ms},
            dedupe=(row.code, "wait_timeout"),
        )
    ]


S = C.STORE_UNREACHABLE.code
SIGNATURES = (
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
        anchors=(b"imed out",),
        worth=(rb"[Tt]imed out",),
        words=("waitforinput",),
    ),
)
parse = gated_reader(SIGNATURES)
