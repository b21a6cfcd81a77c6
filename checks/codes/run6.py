"""Finding codes of `pgdoctor diagnose` from RUN650 on (run5.py holds RUN500-RUN649 and is near the
700-line limit): checks/codes/run.py re-exports every name here too, so a rule reads all its codes as
`run.X`. Categories as in run.py; the range says nothing about the category. Each block below is one
session's writer's range.
"""

from __future__ import annotations

from pgdoctor.checks.base import register_code  # noqa: F401  (the blocks below register their codes)

AREA = "run"
