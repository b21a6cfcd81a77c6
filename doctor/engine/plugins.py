"""Site plugins: extra probe and check modules named in PGDOCTOR_PLUGINS (comma-separated
import names). A cluster adds its own node checks this way without forking pgdoctor; the
modules register with the same @probe/@check/register_code decorators."""

from __future__ import annotations

import importlib
import os

from pgdoctor.engine.errors import UserError

_LOADED: set[str] = set()


def load_plugins(env_value: str | None = None) -> list[str]:
    raw = os.environ.get("PGDOCTOR_PLUGINS", "") if env_value is None else env_value
    names = [n.strip() for n in raw.split(",") if n.strip()]
    for name in names:
        if name in _LOADED:
            continue
        try:
            importlib.import_module(name)
        except Exception as exc:
            raise UserError(f"PGDOCTOR_PLUGINS: cannot import {name}: {type(exc).__name__}: {exc}") from None
        _LOADED.add(name)
    return names
