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
import hashlib
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
    _FILE = f"sre2-{sys.implementation.name}-{sys.version.split()[0]}-{_sre.MAGIC}-{_sre.CODESIZE}.bin"
except Exception:  # another interpreter's `re`: every pattern is compiled by `re.compile`
    _FILE = ""

_SUB = "sre"
MAX_BYTES = 16 << 20  # past this, a saved table keeps only the entries of the run that saves it
_MAGIC = b"pgdoctor-sre-2\n"
# what one entry holds: the flags of the compiled pattern, its code as bytes, groups, groupindex, indexgroup
Entry = tuple[int, bytes, int, dict[str, int], tuple[Optional[str], ...]]
# The file: _MAGIC, the index's length (8 bytes), the index {key: (offset, length)} marshalled, then each
# entry marshalled. A run unmarshals the index (keys are 16-byte digests, not the patterns: WORTH's text
# alone is 100 KB) and only the entries it uses; the whole table unmarshalled took 20-40 ms at 2,000 entries.
_data: Optional[bytes] = None
_base = 0  # where the entries start in _data
_index: dict[bytes, tuple[int, int]] = {}
_new: dict[bytes, bytes] = {}  # key -> the entry marshalled, compiled by this run
_used: set[bytes] = set()


def _key(pattern: Any, flags: int) -> bytes:
    text = pattern if isinstance(pattern, bytes) else pattern.encode("utf-8", "surrogatepass")
    kind = b"b" if isinstance(pattern, bytes) else b"s"
    return hashlib.blake2b(kind + str(flags).encode() + b"\0" + text, digest_size=16).digest()


def _load() -> None:
    global _data, _index, _base
    if _data is not None:
        return
    data = read_cached(_SUB, _FILE) or b""
    _data, _index = b"", {}
    try:
        if data.startswith(_MAGIC):
            start = len(_MAGIC) + 8
            size = int.from_bytes(data[len(_MAGIC) : start], "little")
            index = marshal.loads(data[start : start + size])
            if isinstance(index, dict):
                _data, _index, _base = data, index, start + size
    except Exception:  # a cut or foreign file: built again, and replaced at exit
        pass


def _stored(key: bytes) -> Optional[Entry]:
    blob = _new.get(key) or _blob(key)
    if blob is None:
        return None
    entry = marshal.loads(blob)
    return entry if isinstance(entry, tuple) and len(entry) == 5 else None


def _pack(blobs: dict[bytes, bytes]) -> bytes:
    """The file for these marshalled entries (offsets counted from the end of the index)."""
    index: dict[bytes, tuple[int, int]] = {}
    at = 0
    for key, blob in blobs.items():
        index[key] = (at, len(blob))
        at += len(blob)
    packed = marshal.dumps(index)
    return b"".join([_MAGIC, len(packed).to_bytes(8, "little"), packed, *blobs.values()])


def _blob(key: bytes) -> Optional[bytes]:
    where = _index.get(key)
    if where is None or _data is None:
        return None
    offset, length = where
    return _data[_base + offset : _base + offset + length]


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
    flags = int(flags)
    if not _FILE or flags & re.DEBUG:
        return re.compile(pattern, flags)
    _load()
    key = _key(pattern, flags)
    try:
        entry = _stored(key)
        if entry is not None:
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
    _new[key] = marshal.dumps(entry)
    _used.add(key)
    return rx


def save() -> None:
    """Writes the table when this run compiled a pattern it did not hold (at exit; errors are swallowed)."""
    if not _new or _data is None:
        return
    try:
        blobs = {k: b for k in _index if k not in _new and (b := _blob(k)) is not None}
        blobs.update(_new)
        if sum(map(len, blobs.values())) > MAX_BYTES:
            blobs = {k: v for k, v in blobs.items() if k in _used}
        data = _pack(blobs)
    except Exception:
        return
    _new.clear()
    write_cached(_SUB, _FILE, data)


def install() -> None:
    """Deferred patterns (model/lazy_re.py) compile through this cache from now on; the table is saved
    at exit."""
    lazy_re.use_compiler(compile)
    atexit.register(save)
