"""--json: exactly one JSON object on stdout, nothing else."""

from __future__ import annotations

import time
from typing import TextIO

from pgdoctor import __version__
from pgdoctor.model import Report, numbers


def render(report: Report, out: TextIO, color: bool = False) -> None:
    doc = report.to_json()
    # A report without a snapshot (diagnose, repro) says which pgdoctor wrote it, and when.
    doc.setdefault("pgdoctor_version", __version__)
    doc.setdefault("time_unix", round(time.time(), 3))
    # One write: json.dump writes every token on its own (340,000 writes, 0.4 s, for a job
    # directory of 10,000 logs).
    out.write(numbers.dumps(doc, indent=1, default=str) + "\n")
