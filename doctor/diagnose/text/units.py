"""Sizes as PyTorch, NCCL and the kernel print them, to bytes."""

from __future__ import annotations

import re
from typing import Optional

_MULT = {
    "b": 1, "bytes": 1, "byte": 1,
    "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
    "kb": 1000, "mb": 1000 ** 2, "gb": 1000 ** 3, "tb": 1000 ** 4,
}
SIZE = r"(\d+(?:\.\d+)?)\s*(TiB|GiB|MiB|KiB|TB|GB|MB|KB|kB|bytes|B)\b"
_SIZE_RE = re.compile(SIZE)


def to_bytes(number: str, unit: str) -> int:
    return round(float(number) * _MULT[unit.lower()])


def parse_size(text: str) -> Optional[int]:
    m = _SIZE_RE.search(text)
    return to_bytes(m.group(1), m.group(2)) if m else None
