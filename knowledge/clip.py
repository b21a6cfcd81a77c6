"""Text cut to a length for a person to read: at a token boundary, with an ellipsis that marks
the cut. A cut inside a token changes the fact it states (`Timeout(ms)=6000` of a log that says
600000), and a cut without a mark reads as the whole line."""

from __future__ import annotations

import re

ELLIPSIS = "…"
# Where a token ends: whitespace, or after a comma or semicolon (`a,b`). Not after `)`:
# `Timeout(ms)=600000` is one token.
_BOUNDARY = re.compile(r"\s+|(?<=[,;])")
# A boundary further back than this share of the length is not worth it: the cut is made there
# anyway (a 300-character token), still marked.
_MIN_KEEP = 0.3


def clip(text: str, limit: int) -> str:
    """`text` when it fits in `limit` characters; else its longest prefix that ends at a token
    boundary, followed by the ellipsis, `limit` characters at most in all."""
    if len(text) <= limit:
        return text
    room = max(1, limit - len(ELLIPSIS) - 1)
    cut = room
    for m in _BOUNDARY.finditer(text, 0, room + 1):
        if m.start() <= room:
            cut = m.start()
    if cut < room * _MIN_KEEP:
        cut = room
    head = text[:cut].rstrip()
    return f"{head} {ELLIPSIS}" if head else ELLIPSIS
