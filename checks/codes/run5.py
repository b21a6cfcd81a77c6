"""Finding codes of `pgdoctor diagnose` from RUN500 on (RUN300-RUN399 are spent: run3.py, run3b.py;
RUN401-RUN409 are the lab's, checks/codes/lab.py): checks/codes/run.py re-exports every name here too,
so a rule reads all its codes as `run.X`. Categories as in run.py; the range says nothing about the
category.
"""

from __future__ import annotations

from pgdoctor.checks.base import register_code

AREA = "run"

# --- s7: DeepSpeed source sweep (RUN530-RUN539) ---

# Category driver_env: DeepSpeed's runner (deepspeed/launcher/runner.py 0.9-0.19, print()) "Detected
# CUDA_VISIBLE_DEVICES=2,4 but ignoring it because one or several of --include/--exclude/--num_gpus/
# --num_nodes cl args were used" (0.15+: "Detected VISIBLE_DEVICES=..."): the ranks run on GPUs 0..N-1, not
# the list the user set (accelerate launch passes --num_gpus itself). Remedy: --include localhost:2,4.
DS_VISIBLE_DEVICES_IGNORED = register_code(
    "RUN530",
    "deepspeed-visible-devices-ignored",
    "warn",
    "driver_env",
    "DeepSpeed's launcher ignored CUDA_VISIBLE_DEVICES because --include/--exclude/--num_gpus/--num_nodes "
    "was given",
    AREA,
)

# Category driver_env: DeepSpeed's accelerator layer (deepspeed/accelerator/real_accelerator.py 0.10-0.19)
# "DS_ACCELERATOR must be one of [...]" / "NPU_Accelerator requires torch_npu, which is not installed on this
# system." (XPU, MPS, HPU, MLU, SDAA alike). Remedy: install the vendor's torch extension or fix
# DS_ACCELERATOR.
DS_ACCELERATOR_UNAVAILABLE = register_code(
    "RUN531",
    "deepspeed-accelerator-unavailable",
    "fail",
    "driver_env",
    "DeepSpeed cannot set up the accelerator it was told or detected (extension not installed, "
    "bad DS_ACCELERATOR)",
    AREA,
)


# r1 (RUN500-RUN509), issue 26 sweep of rendezvous / driver_env misses.
# Category driver_env: the CUDA toolkit's NVML stub (lib64/stubs/libnvidia-ml.so) was loaded instead of the
# driver's library; it prints "You should always run with libnvidia-ml.so that is installed with your NVIDIA
# Display Driver ... is a stub library" and every NVML call fails. Remedy: stubs off LD_LIBRARY_PATH.
NVML_STUB_LIBRARY = register_code(
    "RUN500",
    "nvml-stub-library",
    "fail",
    "driver_env",
    "The process loaded the NVML stub library instead of the NVIDIA driver's libnvidia-ml.so",
    AREA,
)
# Category driver_env: Open MPI's help-opal-runtime.txt "It looks like opal_init failed for some reason; your
# parallel process is likely to abort." (opal_shmem_base_select / opal_os_dirpath_create / mca_base_open
# failed): the local OPAL layer, before any launch or peer. Remedy: repair the MPI install, /dev/shm, TMPDIR.
MPI_LOCAL_INIT_FAILED = register_code(
    "RUN502",
    "mpi-local-init-failed",
    "fail",
    "driver_env",
    "Open MPI's local layer (opal_init) could not start on this node: the MPI install or its environment",
    AREA,
)
