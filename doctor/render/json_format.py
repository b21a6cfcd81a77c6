"""--json: exactly one JSON object on stdout, nothing else."""

from __future__ import annotations

import json
from typing import TextIO

from pgdoctor.model import Report


def render(report: Report, out: TextIO, color: bool = False) -> None:
    json.dump(report.to_json(), out, indent=1, default=str)
    out.write("\n")
