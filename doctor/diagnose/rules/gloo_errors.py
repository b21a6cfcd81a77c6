"""nccl_network for gloo: its TCP transport's socket failures as gloo prints them, without an
exception type in the line.

Formats: gloo/transport/tcp/pair.cc raises IoException with GLOO_ERROR_MSG, "[<path>/gloo/transport/
tcp/pair.cc:<line>] " before the text: "connect [127.0.1.1]:60817: Connection refused" (strerror of
connect(2)), "Connect timeout [10.0.0.2]:5678", "Connection closed by peer [10.0.0.2]:5678", "Read
error [10.0.0.2]:5678: Connection reset by peer", "Write error ...", "read ..." / "writev [..]:port:
Broken pipe", "Socket unexpectedly closed [..]:port"; the uv transport (gloo/transport/uv) the same
words. Torch re-raises them as "RuntimeError: [...pair.cc:598] ..." (read by nccl_errors, which
wants the error word); a log line of just gloo's text is read here. gloo's "Timed out waiting
1800000ms for recv operation" (unbound_buffer.cc) is a timeout, and connectFullMesh's "no error"
is nccl_errors'.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gate, read

_PAIR = re.compile(r"\[[^\]]*gloo/transport/(?:tcp|uv)/(?P<file>\w+\.cc):(?P<line>\d+)\]\s*"
                   r"(?P<what>(?:connect|Connect timeout|Connection closed by peer|Read error|Write error|read|writev?|"
                   r"Socket unexpectedly closed)\b.*)$")
_ADDR = re.compile(r"\[([0-9a-fA-F.:]+)\]:(\d+)")


def _pair(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "connectFullMesh" in hit.text:
        return None  # process-group setup: nccl_errors' "gloo full mesh" row says more
    what = m.group("what").strip()
    facts: dict[str, Any] = {"backend": "gloo", "gloo_error": what[:200], "gloo_source": f"{m.group('file')}:{m.group('line')}"}
    a = _ADDR.search(what)
    if a:
        facts["peer"], facts["peer_port"] = a.group(1), int(a.group(2))
    tier = 1  # a dropped or refused connection is most often the echo of a peer that died first
    if a and a.group(1).startswith("127.") and what.startswith("connect"):
        # a peer's address that is loopback: /etc/hosts maps the host name to 127.0.1.1 (Debian/Ubuntu)
        facts["likely_cause"] = "host_name_resolves_to_loopback"
        tier = 0
    return [row.event(hit, f"{hit.who()}: gloo's connection to a peer failed: {what[:160]}", facts, tier=tier,
                      dedupe=(row.code, hit.rank, "gloo_pair"))]


SIGNATURES = (
    Signature("gloo transport socket failure", _PAIR, _pair, C.NCCL_SOCKET_ERROR.code, tier=1,
              anchors=(b"gloo/transport/",), worth=(rb"gloo/transport/",), words=("gloo/transport/",)),
)
_WORDS = gate(SIGNATURES)


def parse(hit: Hit) -> list[Event]:
    if _WORDS is not None and not hit.may_hold(_WORDS):
        return []
    return read(hit, SIGNATURES)
