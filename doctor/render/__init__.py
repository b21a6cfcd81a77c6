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


def report_areas(report: Report) -> list[str]:
    """The areas a report speaks about, in the catalogue's order: those with findings or with
    checks that the selection ran. A probe that ran only because a selected check reads it
    (software and host under --only gpu) does not make its own area part of the report."""
    from pgdoctor.knowledge.areas import AREAS

    areas = [
        a
        for a in AREAS
        if any(f.area == a for f in report.findings) or any(c.area == a for c in report.checks)
    ]
    return areas + sorted({f.area for f in report.findings} - set(areas))
