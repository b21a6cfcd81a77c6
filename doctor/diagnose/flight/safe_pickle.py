"""A pickle reader for files pgdoctor did not write (flight-recorder dumps from a user's job).

`pickle.load` on such a file runs whatever the file says: a pickle names callables (GLOBAL,
STACK_GLOBAL, INST, OBJ, EXT*) and calls them (REDUCE, NEWOBJ, BUILD). Every one of those
routes goes through `find_class` (or `persistent_load`), so refusing both leaves only the opcodes
that build plain containers and scalars: dict, list, tuple, set, frozenset, str, bytes, int,
float, bool, None (and the four constructors protocols 0-2 need for sets and bytes, each called
with plain arguments only). The result is checked again to be exactly that.
"""

from __future__ import annotations

import codecs
import functools
import io
import pickle
import pickletools
import re
from typing import Any, NoReturn, Optional

MAX_PICKLE_BYTES = 1 << 30


class UnsafePickleError(pickle.UnpicklingError):
    """The pickle wants something other than plain containers and scalars."""


# Protocols 0-2 cannot write sets or bytes without naming a callable; these build exactly those
# types from plain arguments and do nothing else.
_CONSTRUCTORS = {
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "bytearray"): bytearray,
    ("_codecs", "encode"): codecs.encode,
}


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        ctor = _CONSTRUCTORS.get(("builtins" if module == "__builtin__" else module, name))
        if ctor is None:
            raise UnsafePickleError(
                f"refused: the pickle refers to {module}.{name} (only plain data is read)"
            )
        return _checked(ctor)

    def persistent_load(self, pid: Any) -> NoReturn:
        raise UnsafePickleError("refused: the pickle uses persistent ids (only plain data is read)")


def _checked(ctor: Any) -> Any:
    """The constructor, refusing arguments that are not plain data (no smuggled objects)."""

    def call(*args: Any) -> Any:
        _check(args)
        if ctor is codecs.encode and (len(args) != 2 or args[1] not in ("latin1", "latin-1")):
            raise UnsafePickleError("refused: _codecs.encode is admitted only as protocol 2 writes bytes")
        return ctor(*args)

    return call


# A few hundred bytes of pickle can describe a structure of fan^depth nodes by sharing one list
# many times; everything downstream (json.dumps of sizes, the analysis) walks it as a tree. So the
# check measures the tree that sharing implies, in time linear in the distinct objects, and
# refuses past this many nodes (a real 2,000-entry dump is well under a million) or any cycle.
MAX_TREE_NODES = 20_000_000


_SCALARS = (str, bytes, bytearray, int, float, bool, type(None))
_CONTAINERS = (dict, list, tuple, set, frozenset)


def _children(o: Any) -> list[Any]:
    if isinstance(o, dict):
        return [*o.keys(), *o.values()]
    return list(o)


def _check(obj: Any) -> None:
    # Only containers are pushed (scalars, most of a dump, count one node each on the spot).
    size: dict[int, int] = {}  # id -> nodes of the tree under it; ids stay valid while obj lives
    open_: set[int] = set()
    if type(obj) in _SCALARS:
        return
    if type(obj) not in _CONTAINERS:
        raise UnsafePickleError(f"refused: the pickle produced a {type(obj).__name__}")
    # (container, its children once expanded): the second visit sums what the first one pushed.
    stack: list[tuple[Any, Optional[list[Any]]]] = [(obj, None)]
    while stack:
        o, kids = stack.pop()
        key = id(o)
        if kids is not None:
            open_.discard(key)
            total = 1
            for c in kids:
                total += size[id(c)] if type(c) in _CONTAINERS else 1
            if total > MAX_TREE_NODES:
                raise UnsafePickleError(f"refused: the pickle expands to more than {MAX_TREE_NODES} objects")
            size[key] = total
            continue
        if key in size:
            continue
        if key in open_:
            raise UnsafePickleError("refused: the pickle refers to itself (a cycle)")
        children = _children(o)
        open_.add(key)
        stack.append((o, children))
        for c in children:
            tc = type(c)
            if tc in _CONTAINERS:
                stack.append((c, None))
            elif tc not in _SCALARS:
                raise UnsafePickleError(f"refused: the pickle produced a {tc.__name__}")


# The C unpickler grows its memo to twice the index a PUT names (8 bytes a slot, each one cleared):
# 12 bytes of LONG_BINPUT 0x3FFFFFFF took 16 GiB and 38 s before any check could see the result. A
# writer numbers its memo 0, 1, 2... and each memo entry costs at least two bytes of pickle, so an
# index past half its own offset was never written by a pickler: the opcodes are walked first and
# such a pickle is refused, which bounds the memo at 8 bytes a byte of input.
_ARG_BYTES: list[Optional[int]] = [None] * 256  # opcode -> bytes of its argument; < 0: how it is sized
_LINE, _LINES2, _LEN1, _LEN4, _LEN8 = -1, -2, -3, -4, -5
for _op in pickletools.opcodes:
    _n = _op.arg.n if _op.arg is not None else 0
    _ARG_BYTES[ord(_op.code)] = {
        pickletools.UP_TO_NEWLINE: _LINE,
        pickletools.TAKEN_FROM_ARGUMENT1: _LEN1,
        pickletools.TAKEN_FROM_ARGUMENT4: _LEN4,
        pickletools.TAKEN_FROM_ARGUMENT4U: _LEN4,
        pickletools.TAKEN_FROM_ARGUMENT8U: _LEN8,
    }.get(_n, _n)
_ARG_BYTES[ord("c")] = _ARG_BYTES[ord("i")] = _LINES2  # GLOBAL, INST: module and name, a line each
_STOP, _PUT, _LONG_BINPUT = ord("."), ord("p"), ord("r")
# A memo index this small is admitted without looking further (its memo is at most 16 MiB).
_SMALL_INDEX = 1 << 20


@functools.lru_cache(maxsize=1)
def _plain_run() -> re.Pattern[bytes]:
    """A run of opcodes the walk needs not look at one by one, matched in C: those with a fixed
    argument (LONG_BINPUT only with an index under _SMALL_INDEX) and the strings, bytes and longs
    under 256 bytes (1- or 4-byte length). What it stops at is read in Python; a dump of 6 MB is
    walked in about the time its unpickling takes."""

    def one_of(ops: list[int]) -> bytes:
        return b"[" + b"".join(re.escape(bytes([o])) for o in ops) + b"]"

    fixed: dict[int, list[int]] = {}
    for op, n in enumerate(_ARG_BYTES):
        if n is not None and n >= 0 and op not in (_STOP, _LONG_BINPUT):
            fixed.setdefault(n, []).append(op)
    alts = [one_of(ops) + (b".{%d}" % n if n else b"") for n, ops in sorted(fixed.items())]
    alts.append(b"r..[\x00-\x0f]\x00")
    for size, pad in ((_LEN1, b""), (_LEN4, b"\x00\x00\x00")):
        lengths = b"|".join(re.escape(bytes([n])) + pad + (b".{%d}" % n if n else b"") for n in range(256))
        alts.append(one_of([op for op, n in enumerate(_ARG_BYTES) if n == size]) + b"(?:" + lengths + b")")
    return re.compile(b"(?:" + b"|".join(alts) + b")*+", re.DOTALL)


def _walk(data: bytes) -> None:
    """Refuses a memo index that no pickler writes (see above) and an argument longer than what is
    left; the rest of the grammar is the unpickler's to judge."""
    plain, n, i = _plain_run().match, len(data), 0
    while True:
        run = plain(data, i)  # always matches (a run may be empty)
        i = run.end() if run else i
        if i >= n:
            raise pickle.UnpicklingError("pickle data was truncated")
        op = data[i]
        arg = _ARG_BYTES[op]
        i += 1
        if op == _STOP:
            return
        if arg is None:
            raise pickle.UnpicklingError(f"invalid load key, {bytes([op])!r}")
        index = None
        if arg >= 0:
            if op == _LONG_BINPUT:
                index = int.from_bytes(data[i : i + 4], "little")
            i += arg
        elif arg in (_LEN1, _LEN4, _LEN8):
            width = {_LEN1: 1, _LEN4: 4, _LEN8: 8}[arg]
            i += width + int.from_bytes(data[i : i + width], "little")
        else:
            end = data.find(b"\n", i)
            if arg == _LINES2 and end >= 0:
                end = data.find(b"\n", end + 1)
            if end < 0:
                raise pickle.UnpicklingError("pickle data was truncated")
            if op == _PUT:
                digits = data[i:end].strip()
                index = int(digits) if digits.isdigit() and len(digits) < 20 else -1
            i = end + 1
        if index is not None and not 0 <= index <= max(_SMALL_INDEX, i // 2):
            raise UnsafePickleError(
                f"refused: the pickle names memo slot {index} at byte {i}, more than a pickle of that "
                "size can have filled (it would make the reader allocate gigabytes)"
            )


def loads(data: bytes) -> Any:
    """Plain data from a pickle, or UnsafePickleError / pickle.UnpicklingError; never runs code."""
    if len(data) > MAX_PICKLE_BYTES:
        raise UnsafePickleError(f"refused: pickle of {len(data)} bytes is larger than {MAX_PICKLE_BYTES}")
    try:
        _walk(data)
        obj = _PlainUnpickler(io.BytesIO(data)).load()
    except UnsafePickleError:
        raise
    except RecursionError:
        raise UnsafePickleError("refused: the pickle nests too deeply") from None
    except (
        pickle.UnpicklingError,
        EOFError,
        ValueError,
        TypeError,
        IndexError,
        KeyError,
        AttributeError,
        MemoryError,
        UnicodeDecodeError,
        OverflowError,
    ) as exc:
        raise pickle.UnpicklingError(f"not a readable pickle: {type(exc).__name__}: {exc}") from None
    _check(obj)
    return obj
