"""Signatures: one declarative row per kind of log line a rule module reads.

A row owns everything about its lines: the trigger `pattern` searched in the hit line, the
finding `code` and cause `tier` it yields, the scanner's literal `anchors` and line-test
fragments (`worth`) that make the scanner cut a window around such a line, the lower-case
`words` one of which every such line holds (the module's cheap gate), and `build`, which turns
a match into events with facts. The scanner's ANCHORS and WORTH (`rules/__init__.py`) and each
module's gate are built from the rows, so they cannot drift apart.

A module's `parse()` is `gated_reader(SIGNATURES)`, or, where some steps are truly procedural
(joining a record wrapped over lines, reading a table), its own function that does them and then
`read(hit, SIGNATURES)`. `build` returns None when the line is
not the row's after all (a condition the pattern cannot say): the next row is tried. It returns
a list, even an empty one, when the row owns the line: that ends the module's reading of it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Optional, Protocol

from pgdoctor.diagnose.event import Event, Hit, event
from pgdoctor.diagnose.text.normalize import Line


class Finder(Protocol):
    """What a row searches the line with: a compiled expression, or a finder from knowledge/ (a
    table of error strings) whose search gives a truthy result or None."""

    def search(self, text: str) -> Any: ...


# (row, hit, what pattern.search returned) -> events, or None: not this row's line after all.
Build = Callable[["Signature", Hit, Any], Optional[list[Event]]]


@dataclass(frozen=True)
class Signature:
    """One kind of line. `anchors`: literals (bytes) of the scanner that the row's lines carry;
    `worth`: regular-expression fragments (bytes) of the scanner's line test that they match
    (left out: the anchors themselves, escaped);
    `words`: lower-case words one of which is in every such line (None: no gate for the module);
    `anchor_from`: where the anchor is when it is outside the pattern's own literal text (the
    prefix a tool puts before the message), with `examples`: lines that show it."""

    name: str
    pattern: Finder
    build: Build
    code: str = ""
    tier: int = 0
    anchors: tuple[bytes, ...] = ()
    worth: tuple[bytes, ...] = ()
    words: Optional[tuple[str, ...]] = None
    anchor_from: str = ""
    examples: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # A row whose line test is just its anchors (most single-message rows) leaves `worth` out
        # and gets them escaped, so one literal is written once and cannot drift from its test.
        if not self.worth:
            object.__setattr__(self, "worth", tuple(re.escape(a) for a in self.anchors))

    def event(
        self,
        hit: Hit,
        message: str,
        facts: Optional[dict[str, Any]] = None,
        lines: Optional[list[Line]] = None,
        *,
        tier: Optional[int] = None,
        rank: Optional[int] = None,
        dedupe: tuple[Any, ...] = (),
        code: str = "",
    ) -> Event:
        """An event of this row's code and tier (either can be overridden for a line that says more)."""
        return event(
            hit,
            code or self.code,
            message,
            facts,
            lines,
            tier=self.tier if tier is None else tier,
            rank=rank,
            dedupe=dedupe,
        )


def read(hit: Hit, rows: Sequence[Signature], text: Optional[str] = None) -> list[Event]:
    """The events of the first row whose pattern matches the hit line (or `text`, the line as a
    module's routing joined it) and whose build takes it; [] when none does."""
    t = hit.text if text is None else text
    for row in rows:
        m = row.pattern.search(t)
        if m is not None:
            evs = row.build(row, hit, m)
            if evs is not None:
                return evs
    return []


def gate(rows: Iterable[Signature]) -> Optional[tuple[str, ...]]:
    """A module's gate words: the union of its rows' words (first seen first), or None when a row
    has none (then every hit line is read)."""
    out: list[str] = []
    for row in rows:
        if row.words is None:
            return None
        out.extend(w for w in row.words if w not in out)
    return tuple(out)


def gated_reader(rows: Sequence[Signature], *, unless: str = "") -> Callable[[Hit], list[Event]]:
    """A module's whole parse() when nothing in it is procedural: [] unless the hit line holds one
    of the rows' gate words (and not `unless`, a text whose lines belong to another module), then
    `read(hit, rows)`. The gate is built once, here, from the rows."""
    words = gate(rows)

    def parse(hit: Hit) -> list[Event]:
        if (unless and unless in hit.text) or (words is not None and not hit.may_hold(words)):
            return []
        return read(hit, rows)

    return parse


# Deduplicated in order with a dict: the catalogue's union (about 2,000 anchors) tested each against a list
# of those kept so far cost 75 ms of every CLI start.
def anchors_of(rows: Iterable[Signature]) -> tuple[bytes, ...]:
    return tuple(dict.fromkeys(a for row in rows for a in row.anchors))


def worth_of(rows: Iterable[Signature]) -> tuple[bytes, ...]:
    return tuple(dict.fromkeys(w for row in rows for w in row.worth))
