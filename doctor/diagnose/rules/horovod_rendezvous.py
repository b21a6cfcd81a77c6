"""rendezvous of a Horovod job on its Gloo controller: the ranks meet in the HTTP key-value store that
horovodrun (or horovod.spark / Ray's Horovod) serves on HOROVOD_GLOO_RENDEZVOUS_ADDR:PORT, as torch's ranks
meet in the TCPStore.

Formats: the store client in C++ (horovod/common/gloo/http_store.cc, 0.19-0.28), thrown as gloo::IoException
and printed by std::terminate: "what():  [horovod/common/gloo/http_store.cc:53] Wait timeout for key(s): 0"
(0.19-0.20), "[.../http_store.cc:57] Wait timeout after 30 seconds for key(s): 0. You may want to increase the
timeout via HOROVOD_GLOO_TIMEOUT_SECONDS" (0.21+): some rank never put its key (it did not start, died first,
or cannot reach the server) - RUN221, tier 1 so that a death found elsewhere leads. The Python side
(horovod/runner/http/http_client.py, elastic and the runner's own rendezvous): "RuntimeError: ('Put data input
KVStore server failed.', URLError(...))" and "Read data from KVStore server failed." - the rendezvous server
could not be reached or dropped the connection (RUN222). The C++ client's retries of one request
(http_store.cc PerformHTTP, 0.20-0.28: MAX_RETRY_TIMES tries 500 ms apart) end in "HTTP GET request failed too
many times, aborting. See exception message above." (said for PUT and DELETE too) and "what():  HTTP request
failed.": the rendezvous server stopped answering - horovodrun's driver gone or not reachable (RUN222, tier 1:
a rank's death that took the driver down leads).
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_HTTP_STORE_WAIT = lazy_re.compile(
    r"Wait timeout(?: after (?P<s>\d+) seconds)? for key\(s\): (?P<keys>[^\s.]+)"
)
# The store's own file name on the line or just before it (a wrapped what() line splits them); without it the
# same words may be another store's.
_HVD_CONTEXT = lazy_re.compile(r"http_st|gloo::IoException|HOROVOD_GLOO")
_HTTP_RETRIES = lazy_re.compile(r"HTTP (?P<op>GET|PUT|DELETE) request failed too many times")
_KVSTORE = lazy_re.compile(r"(?P<op>Put data input|Read data from) KVStore server failed\.?(?P<rest>.*)")


def _http_store_wait(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not any(
        _HVD_CONTEXT.search(t) for t in [*(ln.text for ln in hit.before(3, same_rank=False)), hit.text]
    ):
        return None
    facts: dict[str, object] = {"problem": "horovod_gloo_rendezvous", "keys": m.group("keys")}
    if m.group("s"):
        facts["timeout_s"] = int(m.group("s"))
    return [
        row.event(
            hit,
            f"{hit.who()}: Horovod's Gloo rendezvous timed out waiting for the keys of other ranks "
            f"({m.group('keys')}) in the HTTP store: some rank never reached it (not started, died first, "
            "or cannot reach HOROVOD_GLOO_RENDEZVOUS_ADDR); raise HOROVOD_GLOO_TIMEOUT_SECONDS only for slow "
            "starts",
            facts,
            dedupe=(row.code, "horovod_gloo"),
        )
    ]


def _kvstore(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    why = clip(m.group("rest").strip(" ,')(\""), 100)
    op = "write to" if m.group("op").startswith("Put") else "read from"
    return [
        row.event(
            hit,
            f"{hit.who()}: could not {op} Horovod's rendezvous KV store (the horovodrun / driver HTTP server)"
            + (f": {why}" if why else "")
            + "; the driver went away or its address is not reachable from this host",
            {"problem": "horovod_kvstore", "error": why},
            dedupe=(row.code, "horovod_kv"),
        )
    ]


def _http_retries(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: Horovod's Gloo rendezvous client gave up on the HTTP store after its retries: "
            "the rendezvous server (horovodrun's driver at HOROVOD_GLOO_RENDEZVOUS_ADDR:PORT) went away or "
            "is not reachable from this host",
            {"problem": "horovod_http_store_unreachable", "framework": "horovod"},
            dedupe=(row.code, "horovod_kv"),
        )
    ]


SIGNATURES = (
    Signature(
        "horovod gloo http store wait timeout",
        _HTTP_STORE_WAIT,
        _http_store_wait,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=1,
        anchors=(b"Wait timeout",),
        worth=(rb"Wait timeout (?:after \d+ seconds )?for key\(s\)",),
        words=("for key(s):",),
    ),
    Signature(
        "horovod kv store request failed",
        _KVSTORE,
        _kvstore,
        C.STORE_UNREACHABLE.code,
        tier=1,
        anchors=(b"KVStore server failed",),
        worth=(rb"KVStore server failed",),
        words=("kvstore server failed",),
    ),
    Signature(
        "horovod http store retries exhausted",
        _HTTP_RETRIES,
        _http_retries,
        C.STORE_UNREACHABLE.code,
        tier=1,
        anchors=(b"request failed too many times",),
        worth=(rb"HTTP (?:GET|PUT|DELETE) request failed too many times",),
        words=("request failed too many times",),
    ),
)
parse = gated_reader(SIGNATURES)
