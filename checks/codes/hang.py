"""Codes of `pgdoctor hang` and `pgdoctor run`: the roll-call of a job's live ranks (or of the
evidence `hang --save` wrote, read again by `diagnose`). Emitted by pgdoctor.diagnose.stacks."""

from __future__ import annotations

from pgdoctor.checks.base import register_code

AREA = "hang"

HANG_CULPRIT = register_code(
    "HNG101",
    "hang-culprit-rank",
    "fail",
    "hang",
    "Hang: the other ranks wait for ranks that are somewhere else",
    AREA,
)
HANG_ALL_WAITING = register_code(
    "HNG102",
    "hang-all-ranks-waiting",
    "fail",
    "hang",
    "Hang: every rank seen waits in the same collective; the late rank is not among them",
    AREA,
)
HANG_STACKS_UNAVAILABLE = register_code(
    "HNG103",
    "hang-stacks-unavailable",
    "warn",
    "hang",
    "Hang: the Python stacks of some ranks could not be read",
    AREA,
)
HANG_PROGRESSING = register_code(
    "HNG104",
    "hang-job-progressing",
    "info",
    "hang",
    "Hang: the job makes progress (frames move or CPU time grows); not a hang",
    AREA,
)
