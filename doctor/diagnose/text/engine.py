"""The anchor search: where in a buffer the literal anchors start.

This is the only per-byte work of log diagnosis, so the engine is chosen by measurement
(benchmarks/bench_diagnose.py prints both beside grep): Hyperscan matches all anchors in one
pass over the bytes (about 2 GB/s on one core, faster than `grep -c -E` with the same
alternation); CPython's `re` follows the anchors' trie as one pattern (about 10 MiB/s with the ~1,100
anchors of the catalogue). Hyperscan is used when the `hyperscan` package imports and compiles the anchors;
otherwise `re`. `PGDOCTOR_SCAN_ENGINE=re` forces the fallback (the tests compare the two).

Both engines give the same first anchor of every line, which is all the scanner uses: an
anchor never spans a newline, so the leftmost occurrence inside a line is found by a
left-to-right non-overlapping search as well as by one that reports every overlap.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
from collections.abc import Callable, Sequence
from typing import Any, Optional, TypeVar

from pgdoctor.diagnose.text.cache import read_cached, write_cached
from pgdoctor.model import lazy_re

Finder = Callable[[bytes, int, int], list[int]]


def _trie(anchors: Sequence[bytes]) -> bytes:
    """The anchors as one regex shaped like their trie: `re` then follows one branch per byte instead of
    trying every anchor at every position (4x one literal pass per anchor with ~1,100 anchors, 40x one flat
    alternation). Where an anchor ends the branch stops: a longer anchor with it as prefix starts at the
    same offset, and the start is all a finder reports."""
    root: dict[int, Any] = {}
    for a in anchors:
        node = root
        for b in a:
            node = node.setdefault(b, {})
        node[-1] = {}

    def branch(node: dict[int, Any]) -> bytes:
        if -1 in node:
            return b""
        alts = [re.escape(bytes([b])) + branch(node[b]) for b in sorted(node)]
        return alts[0] if len(alts) == 1 else b"(?:" + b"|".join(alts) + b")"

    return branch(root)


def _re_finder(anchors: Sequence[bytes], caseless: bool = False) -> Finder:
    """Where Hyperscan is not installed (Linux aarch64: no wheel of hyperscan >= 0.9). Leftmost
    non-overlapping matches of the trie: every line's first anchor, which is all the scanner uses (an
    anchor never spans a newline, so no match hides the first anchor of the next line)."""
    rx = re.compile(_trie(anchors), re.IGNORECASE if caseless else 0) if anchors else None

    def find(buf: bytes, start: int, end: int) -> list[int]:
        return [m.start() for m in rx.finditer(buf, start, end)] if rx is not None else []

    return find


# Compiling the catalogue's ~700 literal anchors takes Hyperscan 20-30 ms, a tenth of a CLI call on
# a pasted log; loading the serialized database takes 0.1 ms. So the compiled database is kept in the
# user's cache under a name that hashes everything it depends on (the anchors, the Hyperscan build,
# the machine), and a file that does not load (another libhs, a CPU without the features it was built
# for, a truncated or corrupted file: libhs checks its own CRC) is compiled again and replaced.
_HS_CACHE = "scan"


def _hyperscan_db_name(hyperscan: Any, anchors: Sequence[bytes], caseless: bool = False) -> str:
    h = hashlib.sha256()
    for part in (hyperscan.__version__.encode(), platform.machine().encode(), *anchors):
        h.update(len(part).to_bytes(4, "little") + part)
    return f"anchors-{h.hexdigest()[:32]}{'-i' if caseless else ''}.hsdb"


def _hyperscan_literal_db(hyperscan: Any, anchors: Sequence[bytes], caseless: bool = False) -> Any:
    name = _hyperscan_db_name(hyperscan, anchors, caseless)
    saved = read_cached(_HS_CACHE, name)
    if saved is not None:
        try:
            db = hyperscan.loadb(saved, hyperscan.HS_MODE_BLOCK)
            db.scratch = hyperscan.Scratch(db)  # a loaded database comes without its scratch space
            return db
        except Exception:  # not loadable here: compiled again below, and the file replaced
            pass
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(
        expressions=list(anchors),
        ids=list(range(len(anchors))),
        elements=len(anchors),
        flags=[hyperscan.HS_FLAG_CASELESS if caseless else 0] * len(anchors),
        literal=True,
    )
    write_cached(_HS_CACHE, name, hyperscan.dumpb(db))
    return db


def _hyperscan_finder(anchors: Sequence[bytes], caseless: bool = False) -> Optional[Finder]:
    try:
        import hyperscan
    except ImportError:
        return None
    try:
        db = _hyperscan_literal_db(hyperscan, anchors, caseless)
    except Exception:  # an old libhs without the literal compiler, or a build that cannot run here
        return None
    lengths = [len(a) for a in anchors]

    def find(buf: bytes, start: int, end: int) -> list[int]:
        if end <= start:
            return []
        out: list[int] = []
        add = out.append

        # Hyperscan reports where a literal ends; its start follows from the literal's length.
        def on_match(ident: int, _from: int, to: int, _flags: int, _ctx: Any) -> None:
            add(start + to - lengths[ident])

        view: Any = memoryview(buf)[start:end]  # no copy of an 8 MiB chunk
        db.scan(view, match_event_handler=on_match)
        out.sort()
        return out

    return find


LineTest = Callable[[bytes, int, int], bool]


# libhs refuses one expression longer than 16,000 bytes ("Pattern length exceeds limit"); the scanner's
# WORTH passed 18,000 with 747 fragments. Its top-level alternatives go in as several expressions of one
# database instead: a line matches when any of them does, as it matches the alternation.
_HS_EXPRESSION_BYTES = 8000


def top_level_alternatives(pattern: bytes) -> list[bytes]:
    """The pattern's alternatives at its top level (`a|(b|c)|[|]` -> a, (b|c), [|]): a `|` inside
    a group, a character class or after a backslash does not split."""
    out: list[bytes] = []
    depth, start, i, in_class = 0, 0, 0, False
    while i < len(pattern):
        c = pattern[i : i + 1]
        if c == b"\\":
            i += 2
            continue
        if in_class:
            in_class = c != b"]"
        elif c == b"[":
            in_class = True
            if pattern[i + 1 : i + 2] == b"^":
                i += 1
            if pattern[i + 1 : i + 2] == b"]":  # a literal "]" first in the class
                i += 1
        elif c == b"(":
            depth += 1
        elif c == b")":
            depth -= 1
        elif c == b"|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
        i += 1
    out.append(pattern[start:])
    return out


def _hs_expressions(pattern: bytes) -> list[bytes]:
    """The pattern as expressions each under libhs's length limit (alternatives grouped in order)."""
    if len(pattern) <= _HS_EXPRESSION_BYTES:
        return [pattern]
    out: list[bytes] = []
    cur: list[bytes] = []
    size = 0
    for alt in top_level_alternatives(pattern):
        if cur and size + len(alt) + 1 > _HS_EXPRESSION_BYTES:
            out.append(b"|".join(cur))
            cur, size = [], 0
        cur.append(alt)
        size += len(alt) + 1
    out.append(b"|".join(cur))
    return out


def _hyperscan_line_test(pattern: bytes, caseless: bool = False) -> Optional[LineTest]:
    try:
        import hyperscan
    except ImportError:
        return None
    expressions = _hs_expressions(pattern)
    try:
        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        db.compile(
            expressions=expressions,
            ids=list(range(len(expressions))),
            elements=len(expressions),
            flags=[hyperscan.HS_FLAG_SINGLEMATCH | (hyperscan.HS_FLAG_CASELESS if caseless else 0)]
            * len(expressions),
        )
    except Exception:  # a construct this libhs does not compile: `re` decides
        return None

    def test(buf: bytes, start: int, end: int) -> bool:
        found = [False]

        def on_match(_ident: int, _from: int, _to: int, _flags: int, _ctx: Any) -> None:
            found[0] = True

        view: Any = memoryview(buf)[start:end]
        db.scan(view, match_event_handler=on_match)
        return found[0]

    return test


_CHOSEN: dict[tuple[str, str, object], tuple[str, Any]] = {}
F = TypeVar("F")


def _chosen(what: str, key: object, fast: Callable[[], Optional[F]], slow: Callable[[], F]) -> tuple[str, F]:
    """("hyperscan", fast()) unless PGDOCTOR_SCAN_ENGINE=re or fast() gives None, else ("re",
    slow()); built once per engine setting, `what` and `key`."""
    want = os.environ.get("PGDOCTOR_SCAN_ENGINE", "auto")
    cache_key = (want, what, key)
    hit = _CHOSEN.get(cache_key)
    if hit is None:
        hs = fast() if want != "re" else None
        hit = _CHOSEN[cache_key] = ("hyperscan", hs) if hs is not None else ("re", slow())
    return hit


def line_test(rx: re.Pattern[bytes]) -> tuple[str, LineTest]:
    """(engine name, test(buf, start, end) -> whether rx matches inside buf[start:end]) for a
    whole line [start, end): preceded by a newline or the start of the data, followed by a
    newline or its end. Both engines search the slice, so "^" and \\b see the line's start."""
    # A caseless reading (model/lazy_re.caseless) matches a deferred pattern case-insensitively: its own test.
    caseless = lazy_re.is_caseless() and not isinstance(rx, re.Pattern)
    return _chosen(
        "line test",
        (rx.pattern, caseless),
        lambda: _deferred_line_test(rx, caseless),
        lambda: _re_line_test(rx),
    )


# Compiling the scanner's WORTH for Hyperscan takes 0.5-0.8 s, more than a whole CLI run on a pasted
# log, so a source that asks for few line tests gets `re`. Hyperscan is compiled once a process has asked
# for this many. The break-even moved with WORTH: at 40 alternatives `re` took 11 us a line and the
# switch came after 10,000 lines; at 1,787 (the rows of 2026-12) it takes about 700 us against
# Hyperscan's 1.3, so the 10,000 lines cost 7 s of `re` in every process that read many logs (a test
# worker, a job directory of many ranks) before the switch. Break-even is now about 1,100 lines.
HYPERSCAN_LINE_TEST_AFTER = 1_000


def _re_line_test(rx: re.Pattern[bytes]) -> LineTest:
    # The slice, as Hyperscan sees it: `rx.search(buf, start, end)` would not let "^" match at
    # `start` (a gdb frame "#3  0x..." was dropped by `re` and kept by Hyperscan).
    return lambda buf, start, end: rx.search(buf[start:end]) is not None


def _deferred_line_test(rx: re.Pattern[bytes], caseless: bool) -> Optional[LineTest]:
    """`re` for the first HYPERSCAN_LINE_TEST_AFTER lines, then Hyperscan (both agree on whole
    lines: tests/diagnose/test_scan_caps.py); None when Hyperscan is not installed."""
    try:
        import hyperscan  # noqa: F401
    except ImportError:
        return None
    slow = _re_line_test(rx)
    calls = 0
    fast: Optional[LineTest] = None

    def test(buf: bytes, start: int, end: int) -> bool:
        nonlocal calls, fast
        if fast is not None:
            return fast(buf, start, end)
        calls += 1
        if calls > HYPERSCAN_LINE_TEST_AFTER:
            fast = _hyperscan_line_test(rx.pattern, caseless) or slow
        return slow(buf, start, end)

    return test


def finder(anchors: Sequence[bytes], caseless: bool = False) -> tuple[str, Finder]:
    """(engine name, find(buf, start, end) -> sorted start offsets of every anchor found); `caseless`:
    found in any casing (a caseless reading, model/lazy_re.caseless)."""
    return _chosen(
        "finder",
        (tuple(anchors), caseless),
        lambda: _hyperscan_finder(anchors, caseless),
        lambda: _re_finder(anchors, caseless),
    )


def available() -> str:
    """The engine `finder` picks on this machine, asked with a one-literal list through the same
    choice (PGDOCTOR_SCAN_ENGINE, the import, the literal compiler) instead of the rule
    catalogue's anchors, whose import is most of diagnose's start-up. A report that read no log
    names it."""
    return finder((b"pgdoctor",))[0]
