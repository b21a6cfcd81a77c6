"""Structured values as a person reads them in one line, never as a Python repr:
`{'eth0': {'operstate': 'up', 'mtu': 1400}}` reads `eth0 (operstate up, mtu 1400)`,
`['Float']` reads `Float`, `{'0': 2070, '1': 2069}` reads `0: 2070, 1: 2069`. Long results are
cut between tokens with an ellipsis (knowledge/clip.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pgdoctor.knowledge.clip import clip


def _one(value: Any, depth: int) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, Mapping):
        if not value:
            return "none"
        if depth:
            return "(" + ", ".join(f"{k} {_one(v, depth + 1)}" for k, v in value.items()) + ")"
        return ", ".join(
            f"{k} {_one(v, depth + 1)}" if isinstance(v, Mapping) else f"{k}: {_one(v, depth + 1)}"
            for k, v in value.items()
        )
    if isinstance(value, (list, tuple)):
        if not value:
            return "none"
        inner = ", ".join(_one(v, depth + 1) for v in value)
        return f"[{inner}]" if depth else inner
    return str(value)


def readable(value: Any, limit: int = 300) -> str:
    """`value` in one line of at most `limit` characters."""
    return clip(_one(value, 0), limit)
