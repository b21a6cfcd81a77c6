"""The only code that touches the system. Importing a submodule registers its probes; no
submodule imports torch or pynvml at import time."""

from __future__ import annotations

import importlib
import pkgutil

_LOADED = False


def load_all() -> None:
    global _LOADED
    if _LOADED:
        return
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    _LOADED = True
