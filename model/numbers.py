"""Numbers from outside, typed once. Every input format (snapshots, dumps, traces, bench results,
configs, options) reads its numbers through here, so a JSON `1e400` (infinity), a "NaN" string, a
5,000-digit integer, `true` where an int belongs (bool is an int to isinstance) or "12" where a
number belongs is a clear error or an absent value, never a number that an analysis divides by,
compares with or prints as the invalid JSON `NaN`. Output goes through `dumps`, which never
writes NaN or Infinity."""

from __future__ import annotations

import json
import math
from typing import Any, Optional, Union

# No number an input of pgdoctor's holds (byte counts, nanosecond times, sequence numbers) has
# more digits; `int()` of 5,000 digits costs more than the rest of a snapshot.
MAX_DIGITS = 40
Number = Union[int, float]
# The last second of year 9999: every renderer's date functions take it (1e308 breaks JUnit's).
MAX_TIME_UNIX = 253402300799


class NumberError(ValueError):
    """A value that is not the number it should be; the message names what and why."""


def _int_text(text: str) -> int:
    digits = text.lstrip("-")
    if len(digits) > MAX_DIGITS:
        raise NumberError(f"an integer of {len(digits)} digits (at most {MAX_DIGITS} are read)")
    return int(text)


def _float_text(text: str) -> float:
    if len(text) > MAX_DIGITS + 10:
        raise NumberError(f"a number written with {len(text)} characters")
    v = float(text)
    if not math.isfinite(v):
        raise NumberError(f"{text[:24]} is not a finite number")
    return v


# json.loads hooks: the parser hands every integer and real literal through these.
json_int = _int_text
json_float = _float_text


def _show(v: Number) -> str:
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e16 else f"{v:g}"


def number(
    value: Any,
    what: str,
    *,
    integer: bool = False,
    lo: Optional[Number] = None,
    hi: Optional[Number] = None,
    strings: bool = False,
) -> Number:
    """`value` as a finite int or float in [lo, hi], else NumberError naming `what`. Booleans are
    refused (true is not 1 here); strings only with `strings` (an option's or a config's text)."""
    if isinstance(value, bool):
        raise NumberError(f"{what}: {str(value).lower()} is a boolean, not a number")
    if isinstance(value, str):
        if not strings:
            raise NumberError(f"{what}: {value[:24]!r} is a string, not a number")
        text = value.strip().replace("_", "")
        try:
            value = _int_text(text) if text.lstrip("+-").isdigit() else _float_text(text)
        except NumberError as exc:
            raise NumberError(f"{what}: {exc}") from None
        except ValueError:
            raise NumberError(f"{what}: {value[:24]!r} is not a number") from None
    if not isinstance(value, (int, float)):
        raise NumberError(f"{what}: {type(value).__name__} is not a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise NumberError(f"{what}: {value} is not a finite number")
    if integer:
        if isinstance(value, float):
            if not value.is_integer():
                raise NumberError(f"{what}: {value} is not a whole number")
            value = int(value)
        elif len(str(abs(value))) > MAX_DIGITS:
            raise NumberError(f"{what}: an integer of more than {MAX_DIGITS} digits")
    if lo is not None and value < lo:
        raise NumberError(f"{what}: {_show(value)} is below {_show(lo)}")
    if hi is not None and value > hi:
        raise NumberError(f"{what}: {_show(value)} is above {_show(hi)}")
    return value


def maybe(
    value: Any,
    *,
    integer: bool = False,
    lo: Optional[Number] = None,
    hi: Optional[Number] = None,
    strings: bool = False,
) -> Optional[Number]:
    """`number` for analyses that read many values from a broken job's files: None (absent)
    instead of an error."""
    try:
        return number(value, "", integer=integer, lo=lo, hi=hi, strings=strings)
    except NumberError:
        return None


def finite(obj: Any) -> Any:
    """`obj` with every non-finite float replaced by None (the JSON null a reader can handle)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def dumps(obj: Any, **kwargs: Any) -> str:
    """json.dumps that never writes NaN or Infinity (not JSON: every strict reader fails on it)."""
    try:
        return json.dumps(obj, allow_nan=False, **kwargs)
    except ValueError:  # only here is the whole tree walked twice
        return json.dumps(finite(obj), allow_nan=False, **kwargs)
