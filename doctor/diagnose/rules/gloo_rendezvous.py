"""rendezvous for gloo: the meeting of gloo's own context and stores, read at their source (third_party/gloo,
gloo/context.cc and gloo/rendezvous/*.cc, 2017-2025), raised through GLOO_ENFORCE ("[enforce fail at
<path>/gloo/context.cc:23] rank < size. 4 vs 4") or GLOO_THROW_IO_EXCEPTION ("[<path>/gloo/rendezvous/
redis_store.cc:25] Connecting to Redis: Connection refused"), under torch's RuntimeError or a program that
drives gloo itself (Ray's collective groups, Horovod's gloo controller, pygloo).

- context.cc's checks of the rank and size it was given: "rank >= 0. -1 vs 0", "rank < size. 4 vs 4", "size
  >= 1. 0 vs 1": the process was told a rank outside the world (RANK / --node_rank / WORLD_SIZE that
  disagree, a rank counted from 1) - RUN224.
- rendezvous/redis_store.cc: "Connecting to Redis: <hiredis error>" - the rendezvous store (Redis) could
  not be reached - RUN222.
- rendezvous/context.cc: "Backing context not fully connected" (and its "Missing pair in backing context"):
  a context built over another whose ranks never all connected - RUN221.
The stores' "Wait timeout for key(s): [...]" (file_store.cc, hash_store.cc) is rendezvous.py's; the pairs'
socket errors and timeouts are gloo_errors.py's.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_CONTEXT_RANK = lazy_re.compile(
    r"gloo/context\.cc:\d+\]\s*(?P<check>rank >= 0|rank < size|size >= 1)\.\s*(?P<a>-?\d+) vs (?P<b>-?\d+)"
)
_REDIS = lazy_re.compile(r"gloo/rendezvous/redis_store\.cc:\d+\]\s*Connecting to Redis: (?P<err>[^\n]*)")
_BACKING = lazy_re.compile(
    r"gloo/rendezvous/context\.cc:\d+\]\s*(?:\S+\.\s*)?(?:Backing context not fully connected|"
    r"Missing pair in backing context)"
)


def _context_rank(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    check, a, b = m.group("check"), int(m.group("a")), int(m.group("b"))
    facts: dict[str, Any] = {"check": check}
    if check == "rank < size":
        facts.update(rank=a, world_size=b)
        said = f"rank {a} in a world of size {b}"
    elif check == "rank >= 0":
        facts["rank"] = a
        said = f"rank {a}"
    else:
        facts["world_size"] = a
        said = f"a world of size {a}"
    return [
        row.event(
            hit,
            f"gloo's context was given {said}: the process's rank and the world size disagree (RANK, "
            "--node_rank, --nproc_per_node or WORLD_SIZE set differently on some process, or ranks counted "
            "from 1)",
            facts,
            dedupe=(row.code, "gloo_context_rank"),
        )
    ]


def _redis(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = clip(m.group("err").strip(), 80)
    return [
        row.event(
            hit,
            f"gloo's rendezvous store (Redis) could not be reached ({err}): check the Redis host and port "
            "the ranks were given and that it runs",
            {"store": "redis", "error": err},
            dedupe=(row.code, "gloo_redis"),
        )
    ]


def _backing(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "gloo's rendezvous over a backing context found it not fully connected: some ranks never joined "
            "the first meeting",
            {"backend": "gloo"},
            dedupe=(row.code, "gloo_backing"),
        )
    ]


SIGNATURES = (
    Signature(
        "gloo context rank outside the world",
        _CONTEXT_RANK,
        _context_rank,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"gloo/context.cc:",),
        worth=(rb"gloo/context\.cc:\d+\]\s*(?:rank|size) [<>]",),
        words=("gloo/context.cc",),
    ),
    Signature(
        "gloo redis store unreachable",
        _REDIS,
        _redis,
        C.STORE_UNREACHABLE.code,
        anchors=(b"Connecting to Redis: ",),
        words=("connecting to redis",),
    ),
    Signature(
        "gloo backing context not connected",
        _BACKING,
        _backing,
        C.RENDEZVOUS_TIMEOUT.code,
        anchors=(b"Backing context not fully connected", b"Missing pair in backing context"),
        words=("backing context",),
    ),
)
parse = gated_reader(SIGNATURES)
