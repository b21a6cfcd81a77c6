"""Launcher/wrapper layer sweep (accelerate, deepspeed, lightning), read at their sources (pip download):

- deepspeed 0.14.4 / 0.16.2 deepspeed/launcher/multinode_runner.py (MPICH/IMPI/MVAPICH validate_args):
  "MPICH requires same number of devices per node": RUN390;
- deepspeed 0.14.4 / 0.16.2 deepspeed/launcher/runner.py main: "Unable to detect suitable master address via
  `hostname -I`, please manually specify one via --master_addr" (logger.error, then raised): RUN224;
- deepspeed 0.14.4 / 0.16.2 deepspeed/launcher/launcher_helper.py: "rank number is not in current env!",
  "rank number doesn't match!", "local_rank number doesn't match!": RUN224;
- accelerate 0.34.2 / 1.2.1 accelerate/utils/launch.py prepare_simple_launcher_cmd_env: "mpirun or mpiexec
  were not found": RUN389;
- accelerate 0.34.2 / 1.2.1 accelerate/utils/operations.py verify_operation: "One or more of the tensors
  passed to ... were not on the cpu while the `Accelerator` is configured for cuda": RUN301;
- accelerate 0.34.2 / 1.2.1 accelerate/state.py PartialState: "Your assigned backend nccl is not avaliable,
  please use gloo": RUN334;
- lightning 2.4.0 / pytorch_lightning 1.9.5 lightning(_fabric)/accelerators/cuda.py
  find_usable_cuda_devices: "no visible CUDA devices", "only N are currently available ... occupied by other
  processes" (RUN262), "this machine only has N GPUs" (RUN264); fabric/utilities/device_parser.py "GPUs
  requested but none are available." (RUN262); pytorch_lightning 1.9.5 tuner/auto_gpu_select.py "You
  requested 4 GPUs but your machine only has 2 GPUs." (RUN264);
- lightning 2.4.0 fabric/plugins/environments/slurm.py: "You set `num_nodes=1` in Lightning, but the number
  of nodes configured in SLURM `--nodes=2` does not match" (was taken as a node-count observation): RUN224;
- lightning 2.4.0 / 1.9.5 fabric/plugins/environments/lsf.py: "Did not find the environment variable
  `LSB_DJOB_RANKFILE`", "... is empty", "Could not find job id in environment variable LSB_JOBID": RUN224.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = ["", "[rank3]: ", "node7: ", "[1,0]<stderr>:", "2025-01-02 03:04:05,678 - ERROR - "]

CASES = [
    # deepspeed launcher/multinode_runner.py
    ("ValueError: MPICH requires same number of devices per node", "RUN390", {"launcher": "deepspeed"}),
    ("ValueError: Intel MPI requires same number of devices per node", "RUN390", {}),
    ("ValueError: mvapich requires same number of devices per node", "RUN390", {}),
    # deepspeed launcher/runner.py
    (
        "[2024-05-01 10:00:00,123] [ERROR] [runner.py:487:main] Unable to detect suitable master address via "
        "`hostname -I`, please manually specify one via --master_addr",
        "RUN224",
        {"reason": "launcher_env_missing"},
    ),
    (
        "RuntimeError: Unable to detect suitable master address via `hostname -I`, please manually "
        "specify one via --master_addr",
        "RUN224",
        {},
    ),
    # deepspeed launcher/launcher_helper.py
    ("OSError: rank number is not in current env!", "RUN224", {}),
    ("EnvironmentError: rank number doesn't match!", "RUN224", {}),
    ("OSError: local_rank number doesn't match!", "RUN224", {}),
    # accelerate utils/launch.py, state.py
    (
        "OSError: mpirun or mpiexec were not found. Ensure that Intel MPI, Open MPI, or MVAPICH are "
        "installed.",
        "RUN389",
        {"command": "mpirun"},
    ),
    (
        "ValueError: Your assigned backend nccl is not avaliable, please use gloo",
        "RUN334",
        {"backend": "nccl", "usable_backend": "gloo"},
    ),
    # accelerate utils/operations.py verify_operation (0.34.2, 1.2.1)
    (
        "accelerate.utils.operations.DistributedOperationException: One or more of the tensors passed to "
        "accelerate.utils.operations.gather were not on the cpu while the `Accelerator` is configured for "
        "cuda. Please move it to the cuda before calling accelerate.utils.operations.gather.",
        "RUN301",
        {"usage_check": "device"},
    ),
    # lightning fabric/accelerators/cuda.py
    (
        "ValueError: You requested to find 4 devices but there are no visible CUDA devices on this machine.",
        "RUN262",
        {},
    ),
    (
        "ValueError: You requested to find 8 devices but this machine only has 4 GPUs.",
        "RUN264",
        {"requested_gpus": 8, "visible_gpus": 4},
    ),
    (
        "RuntimeError: You requested to find 4 devices but only 2 are currently available. The devices "
        "[2, 3] are occupied by other processes and can't be used at the moment.",
        "RUN262",
        {"reason": "device_busy"},
    ),
    # fabric/utilities/device_parser.py; pytorch_lightning 1.9.5 tuner/auto_gpu_select.py
    (
        "lightning_fabric.utilities.exceptions.MisconfigurationException: GPUs requested but none are "
        "available.",
        "RUN262",
        {},
    ),
    (
        "lightning_fabric.utilities.exceptions.MisconfigurationException: You requested 4 GPUs but your "
        "machine only has 2 GPUs.",
        "RUN264",
        {"requested_gpus": 4, "visible_gpus": 2},
    ),
    # fabric/plugins/environments/slurm.py, lsf.py
    (
        "ValueError: You set `num_nodes=1` in Lightning, but the number of nodes configured in SLURM "
        "`--nodes=2` does not match. HINT: Set `num_nodes=2`.",
        "RUN224",
        {},
    ),
    ("ValueError: Did not find the environment variable `LSB_DJOB_RANKFILE`", "RUN224", {}),
    ("ValueError: The environment variable `LSB_DJOB_RANKFILE` is empty", "RUN224", {}),
    ("ValueError: Could not find job id in environment variable LSB_JOBID", "RUN224", {}),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line,code,facts", CASES)
def test_wrapper_sweep_family(prefix: str, line: str, code: str, facts: dict[str, object]) -> None:
    _check(prefix + line + "\n", code, facts)


def test_deepspeed_master_address_with_its_ssh_error() -> None:
    log = (
        "[2024-05-01 10:00:00,123] [ERROR] [runner.py:487:main] Unable to detect suitable master address via "
        "`hostname -I`, please manually specify one via --master_addr\n"
        "subprocess.CalledProcessError: Command '['ssh', 'worker-1', 'hostname', '-I']' returned non-zero "
        "exit status 255.\n"
    )
    _check(log, "RUN224")


QUIET = [
    # a healthy DeepSpeed start without a hostfile, and accelerate's defaults warning
    "[2024-05-01 10:00:00,123] [WARNING] [runner.py:215:fetch_hostfile] Unable to find hostfile, will "
    "proceed with training with local resources only.",
    "[2024-05-01 10:00:00,124] [INFO] [runner.py:568:main] Using IP address of 10.0.0.1 for node worker-1",
    "The following values were not passed to `accelerate launch` and had defaults used instead:",
    "[2024-05-01 10:00:00,125] [INFO] [launch.py:146:main] WORLD INFO DICT: {'localhost': [0, 1, 2, 3]}",
    "Using RTX 4000 series which doesn't support faster communication speedups. Ensuring P2P and IB "
    "communications are disabled.",
    "srun: SLURM_NNODES=2 --nodes=2 num_nodes=2",
]


@pytest.mark.parametrize("line", QUIET)
def test_wrapper_sweep_quiet(line: str) -> None:
    assert _root(line + "\n") is None
