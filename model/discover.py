"""Import every public submodule of a package once: how checks and probes register themselves."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable

_DONE: set[str] = set()


def import_submodules(package: str, path: Iterable[str]) -> None:
    if package in _DONE:
        return
    for info in sorted(pkgutil.iter_modules(list(path)), key=lambda i: i.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{package}.{info.name}")
    _DONE.add(package)
