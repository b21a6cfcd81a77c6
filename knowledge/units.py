"""Sizes and durations: as people type them (`7B` parameters, `80GiB` of memory, `25` GB/s), as
nccl-tests reads them (`64K` = 65536), as PyTorch, NCCL and the kernel print them, and as
pgdoctor prints them back.

Counts use decimal suffixes (K=1e3, M=1e6, B=G=1e9, T=1e12), as model cards do. Byte sizes
distinguish GB (1e9) from GiB (2**30), because GPU datasheets say "80 GB" for 80 GiB-ish cards
and the difference is 7%: enough to turn a fit into an OOM.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from pgdoctor.model import lazy_re, numbers

_COUNT = {"": 1, "K": 10**3, "M": 10**6, "B": 10**9, "G": 10**9, "T": 10**12}
_BYTES = {
    "": 1,
    "B": 1,
    "K": 10**3,
    "KB": 10**3,
    "M": 10**6,
    "MB": 10**6,
    "G": 10**9,
    "GB": 10**9,
    "T": 10**12,
    "TB": 10**12,
    "KIB": 2**10,
    "MIB": 2**20,
    "GIB": 2**30,
    "TIB": 2**40,
}
_NUMBER = lazy_re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*$")

GB = 10**9
GIB = 2**30
# A count or size typed or read past this is no size (10^18 parameters, an exabyte): refused
# before it meets round() or an int conversion (1e400 is infinity).
MAX_SCALED = 10**18


def _split(text: str, what: str) -> tuple[float, str]:
    m = _NUMBER.match(str(text))
    if not m:
        raise ValueError(f"{what} {text!r} is not a number with an optional unit")
    try:
        value = float(numbers.number(m.group(1), what, strings=True))
    except numbers.NumberError:
        raise ValueError(f"{what} {text!r} is not a finite number") from None
    return value, m.group(2).upper()


def _scaled(text: str, what: str, table: dict[str, int], known: str) -> int:
    value, suffix = _split(text, what)
    if suffix not in table:
        raise ValueError(
            f"{what} {text!r}: unknown {'suffix' if what == 'count' else 'unit'} {suffix!r} (use {known})"
        )
    scaled = value * table[suffix]
    if not scaled <= MAX_SCALED:
        raise ValueError(f"{what} {text!r} is larger than {MAX_SCALED:.0e}")
    n = round(scaled)
    if n <= 0:
        raise ValueError(f"{what} {text!r} must be positive")
    return n


def parse_count(text: str) -> int:
    """`7B` -> 7_000_000_000; `1.3B`, `125M`, `350K`, `1e9`, `1000` accepted."""
    return _scaled(text, "count", _COUNT, "K, M, B or T")


def parse_bytes(text: str) -> int:
    """`80GiB` -> 85899345920; `80GB` -> 80e9; a bare number is bytes."""
    return _scaled(text, "size", _BYTES, "B, KB, MB, GB, TB, KiB, MiB, GiB, TiB")


def parse_gbps(text: str) -> float:
    """Bandwidth in GB/s (decimal, bytes): `25`, `25GB/s`, `200Gbit/s` (bits divided by 8)."""
    raw = str(text).strip()
    m = re.match(r"^([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z/]*)$", raw)
    if not m:
        raise ValueError(f"bandwidth {text!r} is not a number in GB/s")
    value = float(m.group(1))
    if not value <= MAX_SCALED:  # also inf (1e400)
        raise ValueError(f"bandwidth {text!r} is larger than {MAX_SCALED:.0e} GB/s")
    scale = {
        "": 1.0,
        "gb/s": 1.0,
        "gbs": 1.0,
        "mb/s": 1e-3,
        "gbit/s": 1 / 8,
        "gbit": 1 / 8,
        "gbps": 1 / 8,
        "mbit/s": 1e-3 / 8,
        "mbit": 1e-3 / 8,
        "mbps": 1e-3 / 8,
    }.get(m.group(2).lower())
    if scale is None:
        raise ValueError(
            f"bandwidth {text!r}: unknown unit (use GB/s, MB/s, Gbit/s or a bare number in GB/s)"
        )
    if value <= 0:
        raise ValueError(f"bandwidth {text!r} must be positive")
    return value * scale


def fmt_seconds(s: float) -> str:
    """One duration in prose, in whichever unit reads best; a table column of them wants
    seconds_decimals and fmt_seconds_fixed instead, since units switching inside a column mislead."""
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e6:.0f} us"


def seconds_decimals(values: Sequence[float], digits: int = 2, least: int = 3, most: int = 6) -> int:
    """Decimal places that show the smallest nonzero duration with `digits` significant digits,
    between `least` and `most`. A table picks one count for all its time columns: cells with
    different units or precisions in one column cannot be compared by eye."""
    small = min((abs(v) for v in values if v), default=0.0)
    if small == 0.0:
        return least
    return max(least, min(most, math.ceil(-math.log10(small)) + digits - 1))


def fmt_seconds_fixed(s: float, decimals: int, zero: str = "-") -> str:
    """A duration in seconds with a fixed number of decimals and no unit (the header names it);
    `zero` for exactly nothing, `<0.0001` for something too small to show, never a false 0."""
    if s == 0:
        return zero
    floor = 10.0**-decimals
    if abs(s) < floor / 2:
        return f"<{floor:.{decimals}f}"
    return f"{s:.{decimals}f}"


# --- as nccl-tests' -b/-e read them: binary multiples ------------------------------------------

_BINARY = {
    "": 1,
    "B": 1,
    "K": 1 << 10,
    "KB": 1 << 10,
    "KIB": 1 << 10,
    "M": 1 << 20,
    "MB": 1 << 20,
    "MIB": 1 << 20,
    "G": 1 << 30,
    "GB": 1 << 30,
    "GIB": 1 << 30,
}


def parse_binary_bytes(text: str) -> int:
    """`8`, `64K`, `256M`, `1G` (binary multiples, as nccl-tests' -b/-e read them)."""
    raw = text.strip().upper().replace(" ", "")
    digits = raw.rstrip("KMGIB")
    suffix = raw[len(digits) :]
    try:
        value = float(digits)
    except ValueError:
        raise ValueError(f"not a size: {text!r} (examples: 8, 64K, 256M)") from None
    # `not value > 0` also refuses nan; the bound is the sizes' one (MAX_SCALED), checked after the
    # unit: 1e309 (inf) and 400 digits were an OverflowError, exit 4.
    if suffix not in _BINARY or not value > 0:
        raise ValueError(f"not a size: {text!r} (examples: 8, 64K, 256M)")
    scaled = value * _BINARY[suffix]
    if not scaled <= MAX_SCALED:
        raise ValueError(f"size {text!r} is larger than {MAX_SCALED:.0e}")
    return int(scaled)


# --- as PyTorch, NCCL and the kernel print them ---------------------------------------------------

_MULT = {
    "b": 1,
    "bytes": 1,
    "byte": 1,
    "kib": 1 << 10,
    "mib": 1 << 20,
    "gib": 1 << 30,
    "tib": 1 << 40,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
}
SIZE = r"(\d+(?:\.\d+)?)\s*(TiB|GiB|MiB|KiB|TB|GB|MB|KB|kB|bytes|B)\b"
_SIZE_RE = lazy_re.compile(SIZE)


def to_bytes(number: str, unit: str) -> int:
    return round(float(number) * _MULT[unit.lower()])


# --- as pgdoctor prints them ----------------------------------------------------------------------


def fmt_bytes(n: float) -> str:
    """Binary units, as people read /dev/shm and memory sizes."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def human_bytes(n: float) -> str:
    """Power-of-two sizes as nccl-tests users read them in tables and on axes: 8 B, 1 KiB, 64 MiB."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:g} {unit}" if n == int(n) else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")
