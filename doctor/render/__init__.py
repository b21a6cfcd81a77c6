"""Renderers: Report -> text. Each format is a module with `render(report, out, color)`."""

from __future__ import annotations

import importlib
from typing import Callable, TextIO

from pgdoctor.model import Report

Renderer = Callable[[Report, TextIO, bool], None]

# format name -> module under pgdoctor.render; imported only when that format is asked for.
FORMATS: dict[str, str] = {
    "console": "console",
    "json": "json_format",
    "junit": "junit",
    "prometheus": "prometheus",
    "html": "html",
}


def get_renderer(fmt: str) -> Renderer:
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    module = importlib.import_module(f"{__name__}.{FORMATS[fmt]}")
    return module.render  # type: ignore[no-any-return]
