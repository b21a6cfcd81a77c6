"""The environment variables that decide how a distributed job launches and communicates.

Only variables with these prefixes or names are recorded (never the whole environment), and
values of names that look like credentials are redacted before they enter a snapshot.
"""

from __future__ import annotations

from pgdoctor.knowledge.launchenv import OMPI_VARS, SLURM_VARS, TORCH_VARS
from pgdoctor.model import Measurement
from pgdoctor.model.redact import redact_env
from pgdoctor.probes.base import ProbeContext, probe

PREFIXES = ("NCCL_", "TORCH_", "GLOO_", "CUDA_", "PYTORCH_", "NVIDIA_", "UCX_", "FI_", "TORCHELASTIC_")
NAMES = (
    *TORCH_VARS,
    *SLURM_VARS,
    *OMPI_VARS,
    "GROUP_RANK",
    "ROLE_RANK",
    "OMP_NUM_THREADS",
    "LD_LIBRARY_PATH",
    "CUDA_HOME",
    "SLURM_STEP_NODELIST",
    "SLURM_CPUS_PER_TASK",
)


def relevant_env(env: dict[str, str]) -> dict[str, str]:
    picked = {k: v for k, v in env.items() if k.startswith(PREFIXES) or k in NAMES}
    return dict(sorted(redact_env(picked).items()))


@probe("environment", area="launch", level="quick")
def environment(ctx: ProbeContext) -> list[Measurement]:
    return [Measurement("env.vars", relevant_env(dict(ctx.env)), source="environ")]
