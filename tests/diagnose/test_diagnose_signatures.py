"""The signature rows own their triggers: the scanner's anchors and line test and the modules'
word gates are built from them, so a row whose lines the scanner would skip, or whose module gate
would turn them away, fails here, not on a corpus case.

- every alternative of every row's pattern holds, in its own literal text, one of the row's
  anchors; a row whose anchor is elsewhere in its lines (a prefix such as 'RuntimeError: ')
  says where (`anchor_from`) and shows it with example lines;
- every example line matches its row's pattern, holds an anchor, passes the line test, passes
  its row's words and its module's gate, and the scanner cuts a window around it.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from pgdoctor.checks.base import CODES
from pgdoctor.diagnose import rules
from pgdoctor.diagnose.event import Hit
from pgdoctor.diagnose.rules.launcher import EXIT, MARKER
from pgdoctor.diagnose.signature import Signature, gate, read
from pgdoctor.diagnose.text import shapes
from pgdoctor.diagnose.text.normalize import Line
from pgdoctor.diagnose.text.scan import ANCHORS, WORTH, scan_chunks
from pgdoctor.model import lazy_re

try:  # the expression parser of the re module (Python 3.11+; sre_parse before)
    import re._parser as sre_parse  # type: ignore[import-not-found]
    from re import _constants as sre_c  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import sre_constants as sre_c  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

ROWS = [(mod.__name__.rsplit(".", 1)[1], row) for mod in rules.MODULES for row in mod.SIGNATURES]
IDS = [f"{m}:{row.name}" for m, row in ROWS]


def _holds_anchor(items: Any, anchors: tuple[str, ...], run: str = "") -> bool:
    """Whether every string the parsed expression `items` matches holds one of `anchors`, judged
    from its literal text: groups are read inline, a branch counts when each of its alternatives
    (with what follows it) does, a repeat of at least one when its body does. Conservative: a
    class, a wildcard or an optional part ends a literal run."""
    items = list(items)
    for i, (op, av) in enumerate(items):
        if op is sre_c.LITERAL:
            run += chr(av)
            continue
        if op is sre_c.SUBPATTERN:
            return _holds_anchor(list(av[-1]) + items[i + 1 :], anchors, run)
        if op is sre_c.BRANCH:
            return all(_holds_anchor(list(b) + items[i + 1 :], anchors, run) for b in av[1])
        if any(a in run for a in anchors):
            return True
        run = ""
        if op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT) and av[0] >= 1 and _holds_anchor(av[2], anchors):
            return True
    return any(a in run for a in anchors)


def test_the_scanner_uses_exactly_the_rows_anchors_and_line_test() -> None:
    # the rows' anchors, and the markers of an encoded paste (text/shapes.py), nothing else
    assert set(ANCHORS) == {a for _, row in ROWS for a in row.anchors} | set(shapes.MARKERS)
    assert WORTH.pattern == rules.WORTH.pattern
    for frag in (f for _, row in ROWS for f in row.worth):
        assert WORTH.pattern.split(b"|").count(frag.split(b"|")[0]) >= 1


def test_signature_names_are_unique_within_a_module() -> None:
    seen = [f"{m}:{row.name}" for m, row in ROWS]
    assert len(seen) == len(set(seen))


@pytest.mark.parametrize(("module", "row"), ROWS, ids=IDS)
def test_every_row_declares_its_code_anchors_and_line_test(module: str, row: Signature) -> None:
    assert row.code in CODES or row.code in (EXIT, MARKER), row.code
    assert row.anchors, "a row without anchors is invisible to the scanner"
    assert row.worth, "a row without line-test fragments is dropped by the scanner"
    for frag in row.worth:
        re.compile(frag)
    if row.words is not None:
        assert row.words and all(w == w.lower() for w in row.words)


@pytest.mark.parametrize(("module", "row"), ROWS, ids=IDS)
def test_every_pattern_literal_is_covered_by_an_anchor(module: str, row: Signature) -> None:
    anchors = tuple(a.decode() for a in row.anchors)
    if not lazy_re.is_pattern(row.pattern):
        # a finder from knowledge/ (a table of strings): its lines are shown by examples
        assert row.anchor_from and row.examples, f"{row.name}: a finder row says where its anchor is"
        return
    if row.anchor_from:
        assert row.examples, f"{row.name}: anchor_from needs example lines that show it"
        return
    parsed = sre_parse.parse(row.pattern.pattern, row.pattern.flags)
    assert not row.pattern.flags & re.IGNORECASE, (
        f"{row.name}: a pattern matched ignoring case needs anchor_from"
    )
    assert _holds_anchor(list(parsed), anchors), (
        f"{module}:{row.name}: an alternative of {row.pattern.pattern!r} holds none of {anchors} in its "
        f"literal text; "
        "add the anchor its lines carry, or say where it is (anchor_from) with examples"
    )


EXAMPLES = [(m, row, ex) for m, row in ROWS for ex in row.examples]


@pytest.mark.parametrize(
    ("module", "row", "example"), EXAMPLES, ids=[f"{m}:{r.name}:{i}" for i, (m, r, _) in enumerate(EXAMPLES)]
)
def test_example_lines_reach_their_row(module: str, row: Signature, example: str) -> None:
    assert row.pattern.search(example), f"{row.name} does not match its own example"
    data = example.encode()
    assert any(a in data for a in ANCHORS), "no anchor in the example: the scanner never sees it"
    assert WORTH.search(data), "the scanner's line test drops the example"
    low = example.lower()
    if row.words is not None:
        assert any(w in low for w in row.words), "the row's words miss its own example"
    mod_gate = gate(getattr(rules, module).SIGNATURES)
    if mod_gate is not None:
        assert any(w in low for w in mod_gate)
    windows = list(scan_chunks([b"step 1 loss 0.5\n" + data + b"\nstep 2 loss 0.4\n"]))
    assert [w.hit_line for w in windows] == [2]


def test_a_build_that_returns_none_hands_the_line_to_the_next_row() -> None:
    """`read`: a row whose build says None is passed over; a row whose build gives [] ends the
    reading (a line the row owns but does not report)."""

    def never(row: Signature, hit: Hit, m: Any) -> None:
        return None

    def silent(row: Signature, hit: Hit, m: Any) -> list[Any]:
        return []

    def found(row: Signature, hit: Hit, m: Any) -> list[Any]:
        return [row.event(hit, f"{row.name} read it")]

    hit = Hit("x.log", [Line("RuntimeError: boom", 1)], 0)
    code = rules.pyexc.SIGNATURES[0].code
    a = Signature("a", re.compile("boom"), never, code, anchors=(b"rror",), worth=(rb"Error\b",))
    b = Signature("b", re.compile("boom"), found, code, anchors=(b"rror",), worth=(rb"Error\b",))
    c = Signature("c", re.compile("boom"), silent, code, anchors=(b"rror",), worth=(rb"Error\b",))
    assert [e.message for e in read(hit, (a, b))] == ["b read it"]
    assert read(hit, (c, b)) == []
    assert read(hit, (a,)) == []
