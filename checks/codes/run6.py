"""Finding codes of `pgdoctor diagnose` from RUN650 on (run5.py holds RUN500-RUN649 and is near the
700-line limit): checks/codes/run.py re-exports every name here too, so a rule reads all its codes as
`run.X`. Categories as in run.py; the range says nothing about the category. Each block below is one
session's writer's range.
"""

from __future__ import annotations

from pgdoctor.checks.base import register_code

AREA = "run"

# --- w4 (RUN665-RUN669): GPU hardware and memory misses of v21's held-out and v22's dev halves ---

# Category gpu_hardware: the whole machine reset or lost power under GPU load: a thread's title "PC restarts
# without warning while Multi-GPU training", "Computer dies suddenly with 3 or 4 GPUs (but not 1 or 2)",
# "System shutdown with Multiple GPUs training", "多卡训练时电脑自动重启", or Windows' Kernel-Power event 41
# ("The system has rebooted without cleanly shutting down first ... or lost power unexpectedly"). Nothing in
# the job's log says it: the host went down with it. Cause: the power supply (or the circuit) cannot carry
# the GPUs' peaks (transients well above their rated board power), or a thermal trip. Remedy: cap the GPUs'
# power (`nvidia-smi -pl`), a larger PSU or separate rails, cooling; read the previous boot's kernel log and
# the BMC's event log.
MACHINE_RESET_UNDER_GPU_LOAD = register_code(
    "RUN665",
    "machine-reset-under-gpu-load",
    "fail",
    "gpu_hardware",
    "The machine rebooted or lost power under GPU load (power supply, power peaks or a thermal trip)",
    AREA,
)
