"""The catalogue's regular expressions compiled once per interpreter, not once per run.

`re` compiles a pattern in two steps: it parses the text and emits the regex engine's code (a list of
integers, in Python), then hands that code to the engine (`_sre.compile`), which checks it and builds the
pattern object. The first step is nearly all the cost: the scanner's WORTH expression (one alternation of
every row's anchors) takes 50-140 ms to parse and emit, 1 ms to hand over. A `pgdoctor diagnose` call on a
pasted log compiled some 50 deferred patterns that way, a third of the call.

This module keeps the first step's result on disk (text/cache.py's folder, one file per interpreter build)
and, for a pattern found there, does only the second. The result is the very pattern `re.compile` returns:
the engine compares patterns by their code, and tests/diagnose/test_sre_cache.py checks `==` for every row.
Nothing is trusted blindly: a file that does not load, an entry the engine refuses, an interpreter whose
`re` internals differ from what is read here: each falls back to `re.compile`. The file is keyed by the
interpreter's version and the engine's MAGIC and code size, and its entries by the pattern's text and
flags, so an upgraded pgdoctor or Python never reads another's code.
"""

from __future__ import annotations

import array
import atexit
import marshal
import re
import sys
from typing import Any, Optional

from pgdoctor.diagnose.text.cache import read_cached, write_cached
from pgdoctor.model import lazy_re

try:  # the parser and code emitter of `re`: private, but the same shape from 3.9 to 3.13
    import _sre

    try:
        from re import _compiler, _parser  # type: ignore[attr-defined]
    except ImportError:  # Python < 3.11
        import sre_compile as _compiler  # type: ignore[no-redef]
        import sre_parse as _parser  # type: ignore[no-redef]
    _TYPECODE = next(t for t in "IL" if array.array(t).itemsize == _sre.CODESIZE)
    _FILE = f"sre-{sys.implementation.name}-{sys.version.split()[0]}-{_sre.MAGIC}-{_sre.CODESIZE}.bin"
except Exception:  # another interpreter's `re`: every pattern is compiled by `re.compile`
    _FILE = ""

_SUB = "sre"
MAX_BYTES = 16 << 20  # past this, a saved table keeps only the entries of the run that saves it
# (pattern, flags) -> (flags of the compiled pattern, code as bytes, groups, groupindex, indexgroup)
Entry = tuple[int, bytes, int, dict[str, int], tuple[Optional[str], ...]]
_table: Optional[dict[tuple[Any, int], Entry]] = None
_used: set[tuple[Any, int]] = set()
_added = False


def _load() -> dict[tuple[Any, int], Entry]:
    global _table
    if _table is None:
        data = read_cached(_SUB, _FILE)
        try:
            table = marshal.loads(data) if data else {}
            _table = table if isinstance(table, dict) else {}
        except Exception:  # a cut or foreign file: built again, and replaced at exit
            _table = {}
    return _table


def _entry(pattern: Any, flags: int) -> Entry:
    """What re._compiler.compile hands to the engine for (pattern, flags), as it computes it."""
    parsed = _parser.parse(pattern, flags)
    code = array.array(_TYPECODE, [int(op) for op in _compiler._code(parsed, flags)])
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[Optional[str]] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return flags | parsed.state.flags, code.tobytes(), parsed.state.groups - 1, groupindex, tuple(indexgroup)


def _build(pattern: Any, entry: Entry) -> re.Pattern[Any]:
    flags, code, groups, groupindex, indexgroup = entry
    return _sre.compile(pattern, flags, array.array(_TYPECODE, code).tolist(), groups, groupindex, indexgroup)


def compile(pattern: Any, flags: int = 0) -> re.Pattern[Any]:
    """`re.compile(pattern, flags)`, from the saved code when this interpreter saved it before."""
    global _added
    flags = int(flags)
    if not _FILE or flags & re.DEBUG:
        return re.compile(pattern, flags)
    key = (pattern, flags)
    table = _load()
    entry = table.get(key)
    if entry is not None:
        try:
            rx = _build(pattern, entry)
            _used.add(key)
            return rx
        except Exception:  # not this engine's code after all: compiled again below
            pass
    try:
        entry = _entry(pattern, flags)
        rx = _build(pattern, entry)
    except re.error:
        raise
    except Exception:  # `re` internals other than those read here: the public way
        return re.compile(pattern, flags)
    table[key] = entry
    _used.add(key)
    _added = True
    return rx


def save() -> None:
    """Writes the table when this run compiled a pattern it did not hold (at exit; errors are swallowed)."""
    global _added
    if not _added or _table is None:
        return
    _added = False
    try:
        data = marshal.dumps(_table)
        if len(data) > MAX_BYTES:
            data = marshal.dumps({k: v for k, v in _table.items() if k in _used})
    except Exception:
        return
    write_cached(_SUB, _FILE, data)


def install() -> None:
    """Deferred patterns (model/lazy_re.py) compile through this cache from now on; the table is saved
    at exit."""
    lazy_re.use_compiler(compile)
    atexit.register(save)
