"""Finding codes of `pgdoctor diagnose` from RUN650 on (run5.py holds RUN500-RUN649 and is near the
700-line limit): checks/codes/run.py re-exports every name here too, so a rule reads all its codes as
`run.X`. Categories as in run.py; the range says nothing about the category. Each block below is one
session's writer's range.
"""

from __future__ import annotations

from pgdoctor.checks.base import register_code

AREA = "run"


# --- w2 (RUN655-RUN659): rendezvous misses of v21's held-out and v22's dev halves, read as families ---

# Category rendezvous: c10d's FileStore (init_method='file://...') could not open or lock its file
# (FileStore.cpp SYSASSERT: "open(/shared/f): No such file or directory", "flock: Function not implemented"):
# the file is not on a file system every rank sees, a rank deleted it, or the mount has no flock(2).
FILE_STORE_UNUSABLE = register_code(
    "RUN655",
    "file-store-unusable",
    "fail",
    "rendezvous",
    "The file:// rendezvous store could not open or lock its file",
    AREA,
)
# Category rendezvous: a trainer's own set-up read one of Slurm's compressed per-node counts
# (SLURM_TASKS_PER_NODE / SLURM_STEP_TASKS_PER_NODE / SLURM_JOB_CPUS_PER_NODE, "2(x4)") with int():
# "ValueError: invalid literal for int() with base 10: '1(x2)'". Only Slurm writes "(xN)" in a count.
SLURM_COUNT_FORMAT = register_code(
    "RUN656",
    "slurm-count-format",
    "fail",
    "rendezvous",
    "The process-group set-up read a compressed Slurm per-node count ('2(x4)') as a number",
    AREA,
)
