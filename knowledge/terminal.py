"""How wide pgdoctor's console output is: one decision, made once by the command line, for every
table and line it prints.

On a terminal the output fits its columns (`COLUMNS`, when set, wins over the terminal's size;
into a pipe it does not count, shells and readline export it to children): tables fold or drop
their least important columns and prose wraps between words. Into a pipe or a file nothing is
folded or wrapped (each renderer's own default width, lines whole for grep). `--wide` prints
every table at its full width and never wraps, also on a terminal.
"""

from __future__ import annotations

from typing import Optional

WIDE = 10_000
_columns: Optional[int] = None
_wide = False


def configure(columns: Optional[int], wide: bool = False) -> None:
    """columns: the terminal's (or COLUMNS'); None when the output is not a terminal."""
    global _columns, _wide
    _columns = columns if columns is None or columns >= 40 else 40
    _wide = wide


def width(default: int) -> int:
    """The width to lay out for; `default` when the output is not a terminal."""
    if _wide:
        return WIDE
    return _columns if _columns is not None else default


def fit() -> bool:
    """Whether output must fit a terminal: fold tables, wrap long lines between words."""
    return _columns is not None and not _wide


def wrap(text: str, indent: str = "", first: str = "") -> list[str]:
    """`text` as lines that fit (between words, never inside one), or as one line when nothing
    has to fit. `first` replaces `indent` on the first line."""
    lead = first or indent
    if not fit() or len(lead) + len(text) <= width(0):
        return [lead + text]
    import textwrap

    return textwrap.wrap(
        text,
        width=width(0),
        initial_indent=lead,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [lead]
