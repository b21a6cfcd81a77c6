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
import io
import pickle
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


def loads(data: bytes) -> Any:
    """Plain data from a pickle, or UnsafePickleError / pickle.UnpicklingError; never runs code."""
    if len(data) > MAX_PICKLE_BYTES:
        raise UnsafePickleError(f"refused: pickle of {len(data)} bytes is larger than {MAX_PICKLE_BYTES}")
    try:
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
