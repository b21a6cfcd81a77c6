"""Sizes as people type them: `7B` parameters, `80GiB` of memory, `25` GB/s of bandwidth.

Counts use decimal suffixes (K=1e3, M=1e6, B=G=1e9, T=1e12), as model cards do. Byte sizes
distinguish GB (1e9) from GiB (2**30), because GPU datasheets say "80 GB" for 80 GiB-ish cards
and the difference is 7%: enough to turn a fit into an OOM.
"""

from __future__ import annotations

import re

_COUNT = {"": 1, "K": 10**3, "M": 10**6, "B": 10**9, "G": 10**9, "T": 10**12}
_BYTES = {
    "": 1, "B": 1,
    "K": 10**3, "KB": 10**3, "M": 10**6, "MB": 10**6, "G": 10**9, "GB": 10**9, "T": 10**12, "TB": 10**12,
    "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40,
}
_NUMBER = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*$")

GB = 10**9
GIB = 2**30


def _split(text: str, what: str) -> tuple[float, str]:
    m = _NUMBER.match(str(text))
    if not m:
        raise ValueError(f"{what} {text!r} is not a number with an optional unit")
    return float(m.group(1)), m.group(2).upper()


def parse_count(text: str) -> int:
    """`7B` -> 7_000_000_000; `1.3B`, `125M`, `350K`, `1e9`, `1000` accepted."""
    value, suffix = _split(text, "count")
    if suffix not in _COUNT:
        raise ValueError(f"count {text!r}: unknown suffix {suffix!r} (use K, M, B or T)")
    n = round(value * _COUNT[suffix])
    if n <= 0:
        raise ValueError(f"count {text!r} must be positive")
    return n


def parse_bytes(text: str) -> int:
    """`80GiB` -> 85899345920; `80GB` -> 80e9; a bare number is bytes."""
    value, suffix = _split(text, "size")
    if suffix not in _BYTES:
        raise ValueError(f"size {text!r}: unknown unit {suffix!r} (use B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)")
    n = round(value * _BYTES[suffix])
    if n <= 0:
        raise ValueError(f"size {text!r} must be positive")
    return n


def parse_gbps(text: str) -> float:
    """Bandwidth in GB/s (decimal, bytes): `25`, `25GB/s`, `200Gbit/s` (bits divided by 8)."""
    raw = str(text).strip()
    m = re.match(r"^([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z/]*)$", raw)
    if not m:
        raise ValueError(f"bandwidth {text!r} is not a number in GB/s")
    value = float(m.group(1))
    scale = {
        "": 1.0, "gb/s": 1.0, "gbs": 1.0, "mb/s": 1e-3,
        "gbit/s": 1 / 8, "gbit": 1 / 8, "gbps": 1 / 8, "mbit/s": 1e-3 / 8, "mbit": 1e-3 / 8, "mbps": 1e-3 / 8,
    }.get(m.group(2).lower())
    if scale is None:
        raise ValueError(f"bandwidth {text!r}: unknown unit (use GB/s, MB/s, Gbit/s or a bare number in GB/s)")
    if value <= 0:
        raise ValueError(f"bandwidth {text!r} must be positive")
    return value * scale


def fmt_count(n: float) -> str:
    for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.3g}{suffix}"
    return f"{n:.0f}"


def fmt_gb(n: float) -> str:
    """Decimal GB, the unit GPU memory is usually quoted in next to GiB."""
    return f"{n / GB:.1f} GB"


def fmt_gib(n: float) -> str:
    return f"{n / GIB:.1f} GiB"


def fmt_seconds(s: float) -> str:
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e6:.0f} us"
