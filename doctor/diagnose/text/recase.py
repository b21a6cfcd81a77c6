"""A paste with no capital letter at all, given back the casing of the words the rules read.

A thread's title or a paste retyped in lower case ("runtimeerror: cuda out of memory. tried to allocate
...") says what the program printed, but the rules read the program's casing ("RuntimeError", "CUDA",
"NCCL", "WorkNCCL(SeqNum=..."): of the evidence lines of the dev cases diagnosed right, 41 % kept their
diagnosis lower-cased. A source of at most LIMIT bytes without one capital ASCII letter is given, word by
word, the casing the rows' own examples and anchors use most (benchmarks/bench_excerpts.py: 64 %; no
lower-cased decoy of the dev corpora became a finding). A source with any capital letter is left as it
is, so a log a program wrote never changes here.
"""

from __future__ import annotations

import functools
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator

LIMIT = 64 << 10  # a title or a short paste; a log that big in lower case was not typed by a person
_UPPER = re.compile(rb"[A-Z]")
_LOWER = re.compile(rb"[a-z]")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


@functools.cache
def _casing() -> dict[str, str]:
    """lower-case word -> the casing the rows' examples and anchors use most, for the words they never
    write in lower case."""
    from pgdoctor.diagnose.rules import MODULES  # the catalogue, only for a source that needs it

    seen: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for module in MODULES:
        for row in getattr(module, "SIGNATURES", ()):
            texts = [*row.examples, *(a.decode("utf-8", "replace") for a in row.anchors)]
            for word in (w for text in texts for w in _WORD.findall(text)):
                seen[word.lower()][word] += 1
    # only words programs never print in lower case: "cuda execution failed" (spconv) and torchrun's
    # "local_rank: 0" are lower case as printed, and a casing given to them broke their rows
    return {low: forms.most_common(1)[0][0] for low, forms in seen.items() if low not in forms}


def restored(data: bytes) -> bytes:
    """`data` with each word the rows know in their casing; `data` itself when it has a capital letter."""
    if _UPPER.search(data) or not _LOWER.search(data):
        return data
    casing = _casing()
    text = data.decode("utf-8", "surrogateescape")
    return _WORD.sub(lambda m: casing.get(m.group(0), m.group(0)), text).encode("utf-8", "surrogateescape")


def recased(chunks: Callable[[], Iterator[bytes]]) -> Callable[[], Iterator[bytes]]:
    """The chunks of a source, restored when the whole source is small and has no capital letter; a
    larger source streams through unchanged after its first LIMIT bytes were held. A partial, not a
    closure: the sources of a job directory are sent to worker processes."""
    return functools.partial(_read, chunks)


def _read(chunks: Callable[[], Iterator[bytes]]) -> Iterator[bytes]:
    held: list[bytes] = []
    size = 0
    stream = chunks()
    for chunk in stream:
        held.append(chunk)
        size += len(chunk)
        if size > LIMIT:
            yield from held
            yield from stream
            return
    if held:
        yield restored(b"".join(held))
