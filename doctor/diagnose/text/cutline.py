"""A paste whose last line stops inside a word of a row's literal, read again with that literal completed.

Real logs are often copied from a search excerpt that stops partway through the decisive line, inside its
message ("RuntimeError: The connection to the C10d st", "Fatal Python error: Segmentat"). Each row's
pattern wants the whole literal and reads nothing. `model/lazy_re.cut_tail` lets a row accept such a cut of
one literal it names; this is the same reading for every row at once, without touching the patterns: when
a diagnosis finds no failure and a small source's last line ends inside a word, that word is completed
from the one literal of the catalogue that the line's end is a cut of, and the source is read again
(diagnose/api.py keeps that reading only when it finds a failure on that line).

A cut is taken only where it cannot be mistaken:
- the literal is long (at least LITERAL characters, two words or more) and the line holds most of it
  (at least HELD characters and at least half of it), so a few words that healthy prints share ("NCCL
  INFO", "Killing subpro") complete nothing;
- the part the line holds has two words with a space between them: a cut of a path or a name
  ("INFO:torch.distributed.distrib") is in every healthy print of that module;
- the cut is inside a word, in the line and in the literal: a line that ends at a word's end is a wrapped
  line or a complete message, as cut_tail reads it;
- every literal that the line's end is a cut of completes it the same way (otherwise the cut says less
  than which one);
- only the literal is completed: what the row wants after it (": ", a number, a quoted name) stays unsaid,
  so a row that needs it still reads nothing.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable, Iterator
from typing import Any, Optional

LIMIT = 64 << 10  # as text/recase.py: a paste or an excerpt, not a job's whole log
LITERAL = 16  # the shortest literal a cut may complete
HELD = 12  # the fewest characters of it the line must hold
_WORDS = re.compile(r"[A-Za-z]{2,}")
_PHRASE = re.compile(r"[A-Za-z]{2,}[ ]+[A-Za-z]{2,}")  # two words with a space between: a message's words


def _literals(parsed: Any) -> Iterator[str]:
    """The runs of literal characters of a parsed expression, at every depth."""
    from re import _constants as c  # type: ignore[attr-defined]

    run: list[str] = []
    for op, arg in parsed:
        if op is c.LITERAL:
            run.append(chr(arg))
            continue
        if run:
            yield "".join(run)
            run = []
        if op is c.SUBPATTERN:
            yield from _literals(arg[-1])
        elif op is c.BRANCH:
            for alt in arg[1]:
                yield from _literals(alt)
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            yield from _literals(arg[2])
        elif op in (c.ASSERT, c.ASSERT_NOT):
            continue
        elif op is c.ATOMIC_GROUP:
            yield from _literals(arg)
    if run:
        yield "".join(run)


# Bumped when the table's reading of the literals changes (the key also holds every pattern and the limits).
_TABLE_FORMAT = 1


@functools.cache
def _cuts() -> dict[str, Optional[str]]:
    """A cut of a literal (as a line's end holds it) -> the rest of the literal; None where two literals
    complete the same cut differently. Building it parses every row's pattern (about 175 ms on 2 cores),
    which each CLI run paid for a silent paste: the table is kept in the user's cache under a name that
    hashes every pattern and the limits, as the scan's compiled database is (text/engine.py)."""
    from pgdoctor.diagnose.rules import SIGNATURES  # the catalogue, only for a source that needs it
    from pgdoctor.diagnose.text.cache import read_cached, write_cached

    # a finder row (a table of strings from knowledge/) has no pattern to complete
    sources = [p for row in SIGNATURES if isinstance(p := getattr(row.pattern, "pattern", None), str)]
    key = hashlib.sha256(
        "\0".join([f"{_TABLE_FORMAT}:{LITERAL}:{HELD}:{_PHRASE.pattern}", *sources]).encode()
    ).hexdigest()[:32]
    saved = read_cached(_CACHE, f"{key}.json")
    if saved is not None:
        try:
            table = json.loads(saved)
            if isinstance(table, dict):
                return table
        except ValueError:
            pass  # a torn or foreign file: build it again
    table = _build(sources)
    write_cached(_CACHE, f"{key}.json", json.dumps(table, separators=(",", ":")).encode())
    return table


_CACHE = "cutline"


def _build(sources: list[str]) -> dict[str, Optional[str]]:
    from re import _parser  # type: ignore[attr-defined]

    table: dict[str, Optional[str]] = {}
    for source in sources:
        try:
            parsed = _parser.parse(source)
        except re.error:
            continue
        for lit in _literals(parsed):
            if len(lit) < LITERAL or len(_WORDS.findall(lit)) < 2:
                continue
            for i in range(max(HELD, (len(lit) + 1) // 2), len(lit)):
                if lit[i - 1].isalnum() and lit[i].isalnum():
                    cut, rest = lit[:i], lit[i:]
                    if not _PHRASE.search(cut):
                        continue  # a path or a name ("torch.distributed.distrib"): healthy prints hold it
                    table[cut] = rest if table.get(cut, rest) == rest else None
    return table


def completion(line: str) -> Optional[str]:
    """The rest of the literal that `line`'s end is a cut of, or None."""
    if not line or not line[-1].isalnum():
        return None
    table = _cuts()
    best: Optional[str] = None
    for size in range(min(len(line), 400), HELD - 1, -1):
        cut = line[-size:]
        if cut in table:
            rest = table[cut]
            if rest is None:
                return None
            if best is not None and best != rest:
                return None  # a shorter cut of another literal completes it otherwise
            best = rest
    return best


def last_line(data: bytes) -> tuple[int, str]:
    """The number (1-based) and text of the last line that holds something."""
    text = data.decode("utf-8", "surrogateescape").rstrip("\r\n")
    return text.count("\n") + 1, text.rsplit("\n", 1)[-1]


def completed(chunks: Callable[[], Iterator[bytes]]) -> Optional[tuple[int, Callable[[], Iterator[bytes]]]]:
    """(the completed line's number, the chunks of the source with it completed), or None when the source
    is large or its last line is no cut of a literal."""
    size = 0
    parts: list[bytes] = []
    for chunk in chunks():
        size += len(chunk)
        if size > LIMIT:
            return None
        parts.append(chunk)
    data = b"".join(parts)
    number, line = last_line(data)
    rest = completion(line)
    if rest is None:
        return None
    whole = data.decode("utf-8", "surrogateescape").rstrip("\r\n") + rest + "\n"
    return number, functools.partial(_read, whole.encode("utf-8", "surrogateescape"))


def _read(data: bytes) -> Iterator[bytes]:
    yield data
