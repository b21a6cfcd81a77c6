"""Finding codes of `pgdoctor diagnose` from RUN300 on, continued (run3.py holds the first of them and
reached the 700-line module limit): checks/codes/run.py re-exports every name here too, so a rule reads
all its codes as `run.X`. Categories as in run.py; the range says nothing about the category.
"""

from __future__ import annotations

from pgdoctor.checks.base import register_code

AREA = "run"

# Category driver_env: the job runs its process group on gloo (native Windows, where torch has no NCCL, macOS,
# a CPU node, or a torch without NCCL) and was given an argument only NCCL takes: c10d's barrier "Function
# argument device_ids not supported for the selected backend gloo" (distributed_c10d.py 1.x; yolov5's
# torch_distributed_zero_first passes device_ids). Use NCCL on Linux / WSL2, or drop device_ids on gloo.
GLOO_REJECTS_NCCL_ARGUMENT = register_code(
    "RUN367",
    "gloo-rejects-nccl-argument",
    "fail",
    "driver_env",
    "The job runs on gloo (Windows, CPU or no NCCL), which rejects an NCCL-only argument (device_ids)",
    AREA,
)

# Category driver_env: Open MPI's shared-memory single copy (CMA: process_vm_readv / process_vm_writev
# between ranks of one node) was refused by the kernel: btl/vader's "Read -1, expected 36864, errno = 1" /
# "Wrote -1, expected ..., errno = 1" (opal/mca/btl/vader/btl_vader_get.c / _put.c, 2.x-4.x). errno 1
# (EPERM): a container without CAP_SYS_PTRACE or a Yama ptrace_scope that forbids it (Docker's default).
# --mca btl_vader_single_copy_mechanism none, or docker run --cap-add=SYS_PTRACE.
MPI_CMA_NOT_PERMITTED = register_code(
    "RUN368",
    "mpi-cma-not-permitted",
    "fail",
    "driver_env",
    "Open MPI's shared-memory single copy (CMA) between ranks was refused (container ptrace restrictions)",
    AREA,
)

# Category nccl_usage: a parameter-server kvstore (ps-lite under MXNet's dist_* kvstore, BytePS's server)
# used out of its contract: a second customer (kvstore) with an id that already exists in the process, or a
# push / pull of a key that the servers were never told to initialise. The program's calls, not the network.
KVSTORE_MISUSE = register_code(
    "RUN357",
    "kvstore-misuse",
    "fail",
    "nccl_usage",
    "A parameter-server kvstore was used out of its contract (a duplicate kvstore, a key never initialised)",
    AREA,
)

# Category collective_mismatch: a stack dump of a hung DeepSpeed ZeRO-3 rank waiting in the parameter fetch
# of a module's forward (fetch_sub_module's all-gather): each forward of a ZeRO-3 module is a collective,
# so a rank that runs fewer forwards than the others (generate() stopping early, an uneven last batch, a
# rank-dependent branch) leaves the others waiting in that all-gather for good.
ZERO3_FETCH_HANG = register_code(
    "RUN358",
    "zero3-fetch-hang",
    "fail",
    "collective_mismatch",
    "A ZeRO-3 rank hangs in a module's parameter fetch: the ranks ran different numbers of forwards",
    AREA,
)

# Category nccl_usage: PyTorch/XLA's replication setup (torch_xla/core/xla_model.py xla_replication_devices,
# called by xmp.spawn's _setup_replication) found that this process sees another number of devices than the
# replication needs: the XLA device was acquired before xmp.spawn (xm.xla_device() in the parent, a
# Lightning/Accelerate strategy that touched it), or the spawned processes were given other devices.
XLA_REPLICATION_DEVICES = register_code(
    "RUN359",
    "xla-replication-device-count",
    "fail",
    "nccl_usage",
    "PyTorch/XLA cannot replicate: this process sees another number of devices than the replication needs",
    AREA,
)

# Category driver_env: Open MPI's launcher (mpirun / mpiexec / orterun, PRRTE's prterun in 5.x) refuses to run
# as root ("mpirun has detected an attempt to run as root.") and exits before it starts a rank: a container
# that runs as root without --allow-run-as-root or OMPI_ALLOW_RUN_AS_ROOT=1 and
# OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1.
MPIRUN_AS_ROOT = register_code(
    "RUN392",
    "mpirun-refuses-root",
    "fail",
    "driver_env",
    "Open MPI's mpirun refused to run as root (no --allow-run-as-root / OMPI_ALLOW_RUN_AS_ROOT)",
    AREA,
)

# Category driver_env: srun or sbatch stopped at its inherited Slurm environment before it made a step: two
# SLURM_* variables that exclude each other ("SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are
# mutually exclusive.", "SLURM_GPUS_PER_TASK is mutually exclusive with --ntasks-per-gpu and
# SLURM_NTASKS_PER_GPU"): an srun inside an allocation, or a job submitted from one, inherits the outer job's.
SLURM_ENV_CONFLICT = register_code(
    "RUN395",
    "slurm-inherited-env-conflict",
    "fail",
    "driver_env",
    "srun/sbatch refused conflicting SLURM_* variables inherited from an outer allocation",
    AREA,
)
