"""Pure rules: Snapshot -> Findings. Importing a submodule registers its codes and checks."""

from __future__ import annotations

import importlib
import pkgutil

_LOADED = False


def load_all() -> None:
    """Import every check module once, so CODES, CONFIG_KEYS and CHECKS are complete."""
    global _LOADED
    if _LOADED:
        return
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    _LOADED = True
