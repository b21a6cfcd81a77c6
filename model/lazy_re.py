"""Regular expressions compiled at their first use, not at import.

The diagnose catalogue declares several hundred patterns at module level; compiling them all at
import was most of the start-up of every `pgdoctor diagnose` call (about 75 ms of 190 ms), while
one log reaches the rows of a few modules only. `compile` returns a `LazyPattern`: its `pattern`
is there at once (other patterns are built from it at import), and the first other attribute
(`search`, `match`, `flags`, ...) compiles it with the standard `re` module and keeps the compiled
pattern's methods on the instance, so later calls cost what a compiled pattern's cost.
"""

from __future__ import annotations

import re
from typing import Any, AnyStr, cast


class LazyPattern:
    """A stand-in for `re.Pattern` that compiles on first use and delegates everything to it."""

    def __init__(self, pattern: str | bytes, flags: int) -> None:
        self.pattern = pattern
        self._flags = flags

    def compiled(self) -> re.Pattern[Any]:
        rx = self.__dict__.get("_rx")
        if rx is None:
            rx = re.compile(self.pattern, self._flags)
            # The hot methods as plain instance attributes: no __getattr__ on later calls.
            for name in ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split"):
                self.__dict__[name] = getattr(rx, name)
            self.__dict__["_rx"] = rx
        return rx

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_rx":
            raise AttributeError(name)
        return getattr(self.compiled(), name)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyPattern):
            other = other.compiled()
        return self.compiled() == other

    def __hash__(self) -> int:
        return hash(self.compiled())

    def __reduce__(self) -> tuple[Any, ...]:
        return (LazyPattern, (self.pattern, self._flags))

    def __repr__(self) -> str:
        return f"lazy_re.compile({self.pattern!r}, {self._flags})"


def compile(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """`re.compile`, deferred to the first use. Typed as the pattern it stands in for: every
    attribute of `re.Pattern` is there, by delegation."""
    return cast("re.Pattern[AnyStr]", LazyPattern(pattern, flags))


def is_pattern(obj: object) -> bool:
    """A compiled pattern, deferred or not (`isinstance(x, re.Pattern)` misses the deferred)."""
    return isinstance(obj, (re.Pattern, LazyPattern))
