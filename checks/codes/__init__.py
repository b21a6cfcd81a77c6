"""Codes whose findings come from analyses outside checks/ (diagnose, the lab, the planner).

They are registered here, with the rest, so that `pgdoctor list` and the playbook tests see every
code without importing those analyses.
"""

from __future__ import annotations

from pgdoctor.checks.codes import flight, hang, joblogs, lab, plan, profile, run, verify  # noqa: F401  (register the codes)
