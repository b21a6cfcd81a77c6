"""Finding codes of `pgdoctor diagnose` from RUN500 on (RUN300-RUN399 are spent: run3.py, run3b.py;
RUN401-RUN409 are the lab's, checks/codes/lab.py): checks/codes/run.py re-exports every name here too,
so a rule reads all its codes as `run.X`. Categories as in run.py; the range says nothing about the
category.
"""

from __future__ import annotations

from pgdoctor.checks.base import register_code

AREA = "run"

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
# Category driver_env: DeepSpeed's launcher (runner.py) printed "Detected CUDA_VISIBLE_DEVICES=... but
# ignoring it because one or several of --include/--exclude/--num_gpus/--num_nodes cl args were used" and
# ran the ranks on GPUs the user had excluded. Remedy: --include localhost:<ids> instead of --num_gpus.
DEEPSPEED_VISIBLE_DEVICES_IGNORED = register_code(
    "RUN501",
    "deepspeed-visible-devices-ignored",
    "warn",
    "driver_env",
    "DeepSpeed's launcher ignored CUDA_VISIBLE_DEVICES: the ranks run on other GPUs than the ones set",
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
