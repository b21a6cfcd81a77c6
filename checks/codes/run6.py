"""Finding codes of `pgdoctor diagnose` from RUN650 on (run5.py holds RUN500-RUN649 and is near the
700-line limit): checks/codes/run.py re-exports every name here too, so a rule reads all its codes as
`run.X`. Categories as in run.py; the range says nothing about the category. Each block below is one
session's writer's range.
"""

from __future__ import annotations

from pgdoctor.checks.base import register_code

AREA = "run"

# --- w1 (RUN650-RUN654): the environment's versions (driver_env misses, v21 held-out and v22 dev) ---

# Category driver_env: a launcher's argument parser rejected a flag of a newer launcher:
# torch.distributed.launch before PyTorch 1.9 ("launch.py: error: unrecognized arguments:
# --rdzv_endpoint=...", the elastic agent's flags) or torchrun before 2.3 ("--local-ranks-filter",
# "--logs-specs"). The installed PyTorch is older than the command line (rules/env_versions.py).
LAUNCHER_OLDER_THAN_FLAG = register_code(
    "RUN650",
    "launcher-older-than-flag",
    "fail",
    "driver_env",
    "The launcher of the installed PyTorch is older than the flags the command passes (--rdzv_*, ...)",
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
    "NCCL or the multi-GPU job failed on WSL, whose GPU driver lacks peer access, full NVML, a big /dev/shm",
    AREA,
)

# Category driver_env: dask distributed 2023.4+'s get_worker() raised "ValueError: No worker found" inside a
# library's Client.run function (raft_dask's get_ucx, cugraph's get_handle): the installed distributed is
# newer than the RAPIDS library that calls it (rules/env_versions.py).
DASK_DISTRIBUTED_SKEW = register_code(
    "RUN652",
    "dask-distributed-newer-than-library",
    "fail",
    "driver_env",
    "A library called dask's get_worker() as older distributed allowed (No worker found): versions skewed",
    AREA,
)


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

# --- s27 envfam (RUN720-RUN724): driver_env families of the released sets' misses, read at their sources ---

# Category driver_env: a CUDA tensor could not be handed to another process (torch.multiprocessing's
# reduce_tensor -> storage._share_cuda_ -> cudaIpcGetMemHandle, torch/csrc/generic/StorageSharing.cpp):
# "cuda runtime error (801) : operation not supported at ...StorageSharing.cpp:247" (71 before CUDA 10,
# 63 / 304 "OS call failed or operation not supported on this OS"). CUDA IPC does not exist on native
# Windows (nor under WSL): a DataLoader worker, an mp.Process or a Queue that carries CUDA tensors
# (rules/platform_env.py). Keep CUDA tensors in one process (num_workers=0, move to the GPU after the
# loader), share CPU tensors, or run on Linux.
CUDA_IPC_UNSUPPORTED = register_code(
    "RUN720",
    "cuda-ipc-unsupported",
    "fail",
    "driver_env",
    "CUDA tensors could not be shared between processes: this platform has no CUDA IPC (Windows, WSL)",
    AREA,
)

# Category driver_env: DeepEP's host thread gave up waiting for the token counts its notify kernel writes
# into mapped host memory (csrc/deep_ep.cpp / csrc/legacy/buffer.hpp: "DeepEP error: timeout (dispatch
# CPU)" internode, "DeepEP error: CPU recv timeout" intranode, after NUM_CPU_TIMEOUT_SECS): the kernel's
# NVSHMEM / NVLink exchange with the peers never completed - NVSHMEM's IBGDA or GPUDirect RDMA set-up (driver
# PeerMappingOverride, nvidia_peermem, NVSHMEM version), not the model (rules/nvshmem_transport.py).
DEEPEP_HOST_WAIT_TIMEOUT = register_code(
    "RUN721",
    "deepep-host-wait-timeout",
    "fail",
    "driver_env",
    "DeepEP's host timed out waiting for the dispatch counts (NVSHMEM / IBGDA / GPUDirect RDMA set-up)",
    AREA,
)

# Category nccl_usage: Torch7's (and PyTorch 0.x's) GPU check of one op's tensors failed: cutorch's
# THAssert(THCudaTensor_checkGPU(...)) and THCAssertSameGPU / THCUNN_assertSameGPU ("Some of
# weight/gradient/input tensors are located on different GPUs. Please move them to a single one."): a
# multi-GPU module (DataParallelTable, nn.GPU, a model split by hand, threads per GPU) fed a tensor that lives
# on another GPU than the op's (rules/caffe_multigpu.py).
TENSORS_ON_DIFFERENT_GPUS = register_code(
    "RUN722",
    "tensors-on-different-gpus",
    "fail",
    "nccl_usage",
    "One op's tensors live on different GPUs (Torch7 / THC's GPU check in a multi-GPU model)",
    AREA,
)
