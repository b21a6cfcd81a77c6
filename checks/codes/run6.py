"""Finding codes of `pgdoctor diagnose` from RUN650 on (run5.py holds RUN500-RUN649 and is near the
700-line limit): checks/codes/run.py re-exports every name here too, so a rule reads all its codes as
`run.X`. Categories as in run.py; the range says nothing about the category. Each block below is one
session's writer's range.
"""

from __future__ import annotations

from pgdoctor.checks.base import register_code  # noqa: F401  (the blocks below register their codes)

AREA = "run"

# --- w1 (RUN650-RUN654): the environment's versions (driver_env misses of v21's held-out and v22's dev halves) ---

# Category driver_env: a launcher's argument parser rejected a flag of a newer launcher: torch.distributed.launch
# before PyTorch 1.9 ("launch.py: error: unrecognized arguments: --rdzv_endpoint=...", the elastic agent's
# flags) or torchrun before 2.3 ("--local-ranks-filter", "--logs-specs"). The installed PyTorch is older than
# the command line (rules/env_versions.py).
LAUNCHER_OLDER_THAN_FLAG = register_code(
    "RUN650",
    "launcher-older-than-flag",
    "fail",
    "driver_env",
    "The launcher of the installed PyTorch is older than the flags the command passes (--rdzv_*, --standalone)",
    AREA,
)

# Category driver_env: a thread's title names a failure of NCCL or the multi-GPU job on WSL ("Unhandled NCCL
# error when running on WSL2 with CUDA"): WSL2's GPU driver has no CUDA IPC / P2P between GPUs, a partial NVML
# and a small /dev/shm, so NCCL's multi-GPU transports fail there (rules/env_versions.py).
NCCL_ON_WSL = register_code(
    "RUN651",
    "nccl-on-wsl",
    "fail",
    "driver_env",
    "NCCL or the multi-GPU job failed on WSL, whose GPU driver lacks peer access, full NVML and a large /dev/shm",
    AREA,
)
