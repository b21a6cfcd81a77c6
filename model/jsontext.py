"""JSON from untrusted text: bounded nesting (the json module recurses, so 100,000 brackets are a
RecursionError), and no NaN or Infinity, which are not JSON and break every consumer."""

from __future__ import annotations

import json
import re
from typing import Any

from pgdoctor.model import numbers

MAX_DEPTH = 200


class JsonInputError(ValueError):
    pass


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(r"[\[\]{}]")


def nesting_depth(text: str, limit: int = MAX_DEPTH) -> int:
    """Deepest bracket nesting outside strings, stopping at limit + 1. Strings go first, at
    regex speed, so the Python loop sees brackets only."""
    depth = deepest = 0
    for m in _BRACKET.finditer(_STRING.sub("", text)):
        if m.group() in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        else:
            depth -= 1
    return deepest


def _no_constant(name: str) -> Any:
    raise JsonInputError(f"{name} is not a JSON number")


def loads(text: str, max_depth: int = MAX_DEPTH) -> Any:
    if nesting_depth(text, max_depth) > max_depth:
        raise JsonInputError(f"nested deeper than {max_depth} levels")
    try:
        # 1e400 (infinity) and 5,000-digit integers are refused by model.numbers' hooks, like NaN.
        return json.loads(
            text, parse_constant=_no_constant, parse_float=numbers.json_float, parse_int=numbers.json_int
        )
    except json.JSONDecodeError as exc:
        raise JsonInputError(str(exc)) from None
    except ValueError as exc:  # numbers.NumberError, or Python's own digit limit for int parsing
        raise JsonInputError(str(exc).splitlines()[0]) from None
