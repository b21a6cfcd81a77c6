"""A paste with no capital letter at all (or a one-line title in Title Case, lowered first: title_cased), read
again in the casing of the words the rules read, caselessly.

A thread's title or a paste retyped in lower case ("runtimeerror: cuda out of memory. tried to allocate
...") says what the program printed, but the rules read the program's casing ("RuntimeError", "WorkNCCL(
SeqNum=..."). Some programs print lower case themselves (NVSHMEM's "aborting due to error in
nvshmemi_init_thread", torchrun's "failed (exitcode: -9) local_rank: 0"), so nothing is changed up front:
when a diagnosis finds no failure and a source of at most LIMIT bytes has no capital ASCII letter,
diagnose/api.py reads it again, and keeps that reading only if it finds a failure. The second reading gives
each word the casing the rows' examples and anchors give it most (for the parsers outside the rows that
read a program's words as printed: knowledge/xid's "Xid", a table keyed by "Segmentation fault"), and reads
it with the anchors and every row's pattern matching caselessly (Source.caseless, model/lazy_re.caseless),
since one casing per word cannot serve two rows ("Expected to have finished reduction" and "expected
size") nor a type retyped as two words ("runtime error:"). Tables a row indexes with a captured word are
lazy_re.ByText, which finds the word lower-cased too. Evidence lines of the dev cases lower-cased keep their
diagnosis: 66.6 % with the casing alone, 89.9 % with the caseless reading (93.4 % keep it as printed:
benchmarks/bench_excerpts.py).
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
# A word inside a file or library name ("libnccl-net.so", ".../bin/python") keeps its case: "net" is NCCL's
# "NET/IB" elsewhere, and a library name given a casing the system never had reads as a missing library.
_NAMED = re.compile(r"(?<![-/])\b[A-Za-z][A-Za-z0-9_]*\b(?![-/])")


@functools.cache
def _casing() -> dict[str, str]:
    """lower-case word -> the casing the rows' examples and anchors use most, where that is not lower case
    (a second reading only: a program's own lower-case line was read as printed first)."""
    from pgdoctor.diagnose.rules import MODULES  # the catalogue, only for a source that needs it

    seen: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for module in MODULES:
        for row in getattr(module, "SIGNATURES", ()):
            texts = [*row.examples, *(a.decode("utf-8", "replace") for a in row.anchors)]
            for word in (w for text in texts for w in _WORD.findall(text)):
                seen[word.lower()][word] += 1
    best = {low: forms.most_common(1)[0][0] for low, forms in seen.items()}
    return {low: word for low, word in best.items() if word != low}


def restored(data: bytes) -> bytes:
    """`data` with each word the rows know in their casing; `data` itself when it has a capital letter."""
    if _UPPER.search(data) or not _LOWER.search(data):
        return data
    casing = _casing()
    text = data.decode("utf-8", "surrogateescape")
    return _NAMED.sub(lambda m: casing.get(m.group(0), m.group(0)), text).encode("utf-8", "surrogateescape")


def lower_case_only(chunks: Callable[[], Iterator[bytes]]) -> bool:
    """Whether a source is at most LIMIT bytes and has letters but not one capital ASCII letter."""
    size = 0
    letters = False
    for chunk in chunks():
        size += len(chunk)
        if size > LIMIT or _UPPER.search(chunk):
            return False
        letters = letters or _LOWER.search(chunk) is not None
    return letters


TITLE_LIMIT = 300  # a tracker's title
_TITLE_WORD = re.compile(rb"[A-Za-z][A-Za-z0-9_]{3,}")


def title_cased(chunks: Callable[[], Iterator[bytes]]) -> bool:
    """Whether a source is one line of at most TITLE_LIMIT bytes in a tracker's Title Case: three or more
    words of four letters or more, three in four of them opening with a capital ("Step3 Exits with Return
    Code = -6" for DeepSpeed's "exits with return code = -6"), and no colon (a program's records have one
    after their source, their level or their error's type). Such a title says the program's words in the
    writer's casing, as a lower-case one does, and is read the same second way (lowered, then recased)."""
    data = b""
    for chunk in chunks():
        data += chunk
        if len(data) > TITLE_LIMIT:
            return False
    if len(data.strip().splitlines()) != 1 or b":" in data:
        return (
            False  # a program's record ("snd_hda_intel 0000:63:00.1: PCIe Bus Error: ...") is read as printed
        )
    words = _TITLE_WORD.findall(data)
    upper = sum(1 for w in words if w[:1].isupper())
    return len(words) >= 3 and upper * 4 >= len(words) * 3


def recased(chunks: Callable[[], Iterator[bytes]]) -> Callable[[], Iterator[bytes]]:
    """The chunks of a source with the rows' casing restored (for a source lower_case_only() took). A
    partial, not a closure: the sources of a job directory are sent to worker processes."""
    return functools.partial(_read, chunks)


def _read(chunks: Callable[[], Iterator[bytes]]) -> Iterator[bytes]:
    yield restored(b"".join(chunks()).lower())  # a Title Case title (title_cased) is lowered first
