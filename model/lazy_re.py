"""Regular expressions compiled at their first use, not at import.

The diagnose catalogue declares several hundred patterns at module level; compiling them all at
import was most of the start-up of every `pgdoctor diagnose` call (about 75 ms of 190 ms), while
one log reaches the rows of a few modules only. `compile` returns a `LazyPattern`: its `pattern`
is there at once (other patterns are built from it at import), and the first other attribute
(`search`, `match`, `flags`, ...) compiles it with the standard `re` module and keeps the compiled
pattern's methods on the instance, so later calls cost what a compiled pattern's cost.

`caseless()` reads with every deferred pattern compiled case-insensitively for as long as it lasts: a paste
retyped in lower case ("runtime error: expected to have finished reduction ...") is read by the same rows
that read the program's casing (doctor/diagnose/text/recase.py says when). The switch is process-wide: the
bound methods of every live pattern are dropped on entry and exit, so the hot path pays nothing for it.

`use_compiler()` swaps the function that compiles a deferred pattern (`re.compile` by default): the CLI
installs one that keeps each pattern's compiled code on disk between runs (doctor/diagnose/text/sre_cache.py).
"""

from __future__ import annotations

import contextlib
import re
import weakref
from collections.abc import Callable, Iterator
from typing import Any, AnyStr, TypeVar, cast

_HOT = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")
_LIVE: weakref.WeakSet[LazyPattern] = weakref.WeakSet()
_caseless = False
Compiler = Callable[[Any, int], "re.Pattern[Any]"]
_compile: Compiler = re.compile


class LazyPattern:
    """A stand-in for `re.Pattern` that compiles on first use and delegates everything to it."""

    def __init__(self, pattern: str | bytes, flags: int) -> None:
        self.pattern = pattern
        self._flags = flags
        _LIVE.add(self)

    def compiled(self) -> re.Pattern[Any]:
        key = "_rx_i" if _caseless else "_rx"
        rx = self.__dict__.get(key)
        if rx is None:
            rx = _compile(self.pattern, self._flags | (re.IGNORECASE if _caseless else 0))
            self.__dict__[key] = rx
        if "search" not in self.__dict__:
            # The hot methods as plain instance attributes: no __getattr__ on later calls.
            for name in _HOT:
                self.__dict__[name] = getattr(rx, name)
        return rx

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_rx", "_rx_i"):
            raise AttributeError(name)
        return getattr(self.compiled(), name)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyPattern):
            return (self.pattern, self._flags) == (other.pattern, other._flags)
        return self.compiled() == other

    def __hash__(self) -> int:
        # the declared pattern, not the compiled one: the same in a caseless reading as outside it
        return hash((self.pattern, self._flags))

    def __reduce__(self) -> tuple[Any, ...]:
        return (LazyPattern, (self.pattern, self._flags))

    def __repr__(self) -> str:
        return f"lazy_re.compile({self.pattern!r}, {self._flags})"


def compile(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """`re.compile`, deferred to the first use. Typed as the pattern it stands in for: every
    attribute of `re.Pattern` is there, by delegation."""
    return cast("re.Pattern[AnyStr]", LazyPattern(pattern, flags))


def use_compiler(compiler: Compiler) -> None:
    """Every deferred pattern compiled from now on is compiled by `compiler(pattern, flags)`, which must
    return what `re.compile` returns for them."""
    global _compile
    _compile = compiler


def is_pattern(obj: object) -> bool:
    """A compiled pattern, deferred or not (`isinstance(x, re.Pattern)` misses the deferred)."""
    return isinstance(obj, (re.Pattern, LazyPattern))


def _rebind(caseless_now: bool) -> None:
    global _caseless
    _caseless = caseless_now
    for p in list(_LIVE):
        if "search" in p.__dict__:
            for name in _HOT:
                del p.__dict__[name]


@contextlib.contextmanager
def caseless() -> Iterator[None]:
    """Every deferred pattern matches case-insensitively inside the block (nesting is allowed)."""
    if _caseless:
        yield
        return
    _rebind(True)
    try:
        yield
    finally:
        _rebind(False)


def is_caseless() -> bool:
    """Whether a caseless() block is being read (the scanner then searches the anchors lower-cased)."""
    return _caseless


V = TypeVar("V")


class ByText(dict[str, V]):
    """A table keyed by a program's text (a signal's name, an NCCL result's name) that a caseless reading
    also finds by the text lower-cased, as such a reading captures it: `table[m.group(1)]` then reads a
    paste retyped in lower case as it reads the program's own line. Keys are as the program prints them."""

    def __init__(self, table: dict[str, V]) -> None:
        super().__init__(table)
        self._folded = {k.lower(): v for k, v in table.items()}

    def __missing__(self, key: str) -> V:
        return self._folded[key.lower()]

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        return self[key] if key in self or key.lower() in self._folded else default


def cut_tail(words: str) -> str:
    """A pattern for `words` whole, or for a cut of them inside a word that ends the line: a paste whose last
    line stops mid-word ("... on any local network addres") still says what it began to. A cut at a word's
    end ("... on any local network" then a newline) is not one: a wrapped line ends there too, and the next
    line holds the rest. So "network address" reads "n", "netw", "network a", "network addres" and the whole
    (then anything), not "network" alone nor "network adress"."""
    cuts = [
        re.escape(words[:i])
        for i in range(len(words) - 1, 0, -1)
        if words[i - 1].isalnum() and words[i].isalnum()
    ]
    return f"(?:{re.escape(words)}" + "".join(f"|{c}$" for c in cuts) + ")"
