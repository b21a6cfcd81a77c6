"""Finding codes of `pgdoctor diagnose` (RUN101-RUN299 here; RUN300-RUN399 in run3.py and run3b.py,
RUN500-RUN649 in run5.py, RUN650 on in run6.py, re-exported at the end): failures read from the logs and
flight-recorder dumps of a run. One code per failure kind; the category is the failure vocabulary shared
with the lab (cuda_oom, host_oom, process_crash, collective_timeout, nccl_network, nccl_usage,
collective_mismatch, rendezvous, gpu_hardware, driver_env).

Ranges: 101-119 cuda_oom, 121-129 host_oom, 131-149 process_crash, 151-169 collective_timeout,
171-189 nccl_network, 191-199 nccl_usage (RUN195: driver_env), 201-219 collective_mismatch, 221-239
rendezvous,
241-259 gpu_hardware, 261-279 driver_env, 281-299 flight recorder and more driver_env (RUN294:
nccl_network).
"""

from __future__ import annotations

from pgdoctor.checks.base import register_code

AREA = "run"

CUDA_OOM = register_code(
    "RUN101",
    "cuda-out-of-memory",
    "fail",
    "cuda_oom",
    "CUDA out of memory: the job needs more GPU memory than the GPU has",
    AREA,
)
CUDA_OOM_FRAGMENTATION = register_code(
    "RUN102",
    "cuda-oom-fragmentation",
    "fail",
    "cuda_oom",
    "CUDA out of memory with enough memory reserved but fragmented",
    AREA,
)
CUDA_OOM_OTHER_PROCESS = register_code(
    "RUN103",
    "cuda-oom-other-process",
    "fail",
    "cuda_oom",
    "CUDA out of memory while another process holds the GPU's memory",
    AREA,
)

HOST_OOM_KILLED = register_code(
    "RUN121",
    "host-oom-killed",
    "fail",
    "host_oom",
    "A rank was killed by SIGKILL, most likely the kernel's OOM killer",
    AREA,
)
HOST_ALLOC_FAILED = register_code(
    "RUN122",
    "host-alloc-failed",
    "fail",
    "host_oom",
    "Host memory allocation failed (CPU allocator out of memory)",
    AREA,
)

FATAL_SIGNAL = register_code(
    "RUN131",
    "rank-fatal-signal",
    "fail",
    "process_crash",
    "A rank died on a fatal signal (SIGSEGV, SIGABRT, SIGILL, SIGBUS)",
    AREA,
)
PYTHON_EXCEPTION = register_code(
    "RUN132",
    "rank-python-exception",
    "fail",
    "process_crash",
    "A Python exception in one rank took the job down",
    AREA,
)
RANK_EXITED = register_code(
    "RUN133",
    "rank-exited-nonzero",
    "fail",
    "process_crash",
    "A rank exited with a non-zero code and the logs do not say why",
    AREA,
)
UNRECOGNISED_ERROR = register_code(
    "RUN134",
    "unrecognised-error",
    "info",
    "process_crash",
    "The logs hold an error that no diagnosis rule recognises",
    AREA,
)

WATCHDOG_TIMEOUT = register_code(
    "RUN151",
    "collective-watchdog-timeout",
    "fail",
    "collective_timeout",
    "A collective did not finish within the process group timeout",
    AREA,
)
HEARTBEAT_TIMEOUT = register_code(
    "RUN152",
    "nccl-heartbeat-timeout",
    "fail",
    "collective_timeout",
    "The NCCL watchdog itself hung and the heartbeat monitor killed the rank",
    AREA,
)
GLOO_TIMEOUT = register_code(
    "RUN153",
    "gloo-collective-timeout",
    "fail",
    "collective_timeout",
    "A gloo send/recv of a collective timed out",
    AREA,
)

NCCL_SYSTEM_ERROR = register_code(
    "RUN171",
    "nccl-system-error",
    "fail",
    "nccl_network",
    "NCCL unhandled system error (a socket, memory or device call failed)",
    AREA,
)
NCCL_REMOTE_ERROR = register_code(
    "RUN172",
    "nccl-remote-error",
    "fail",
    "nccl_network",
    "NCCL remote process exited or there was a network error",
    AREA,
)
NCCL_IB_ERROR = register_code(
    "RUN173",
    "nccl-ib-error",
    "fail",
    "nccl_network",
    "InfiniBand/RoCE transport error in NCCL (NET/IB, ibv_*)",
    AREA,
)
NCCL_SOCKET_ERROR = register_code(
    "RUN174",
    "nccl-socket-error",
    "fail",
    "nccl_network",
    "Connection between ranks refused, reset or closed (NCCL sockets, gloo)",
    AREA,
)

NCCL_INVALID_USAGE = register_code(
    "RUN191",
    "nccl-invalid-usage",
    "fail",
    "nccl_usage",
    "NCCL invalid usage: the program called NCCL in a way it rejects",
    AREA,
)
NCCL_INTERNAL_ERROR = register_code(
    "RUN192", "nccl-internal-error", "fail", "nccl_usage", "NCCL internal error", AREA
)
NCCL_DUPLICATE_GPU = register_code(
    "RUN193",
    "nccl-duplicate-gpu",
    "fail",
    "nccl_usage",
    "Two ranks of one communicator use the same GPU",
    AREA,
)
NCCL_CUDA_ERROR = register_code(
    "RUN194",
    "nccl-unhandled-cuda-error",
    "fail",
    "nccl_usage",
    "A CUDA call inside NCCL failed (unhandled cuda error)",
    AREA,
)
# The two below are NCCL's own error class (ncclUnhandledCudaError, ncclInvalidArgument) for a failure whose
# remedy is the platform's or the build's: classed nccl_usage as the reference corpora (v1, v2) label them.
NCCL_NVLS_CUDA_FAILURE = register_code(
    "RUN196",
    "nccl-nvls-cuda-failure",
    "fail",
    "nccl_usage",
    "A CUDA call on NVLS multicast memory inside NCCL failed with 'invalid argument'",
    AREA,
)
NCCL_CONFIG_FROM_OTHER_VERSION = register_code(
    "RUN197",
    "nccl-config-from-other-version",
    "fail",
    "nccl_usage",
    "NCCL rejected a communicator config built by another NCCL version's header",
    AREA,
)
# Category driver_env: a loaded libnccl that lacks what torch needs is an environment fault.
NCCL_VERSION = register_code(
    "RUN195",
    "nccl-version-problem",
    "fail",
    "driver_env",
    "NCCL version mismatch or a NCCL too old for the requested feature",
    AREA,
)


COLLECTIVE_MISMATCH = register_code(
    "RUN201",
    "collective-mismatch",
    "fail",
    "collective_mismatch",
    "Ranks called different collectives (TORCH_DISTRIBUTED_DEBUG=DETAIL)",
    AREA,
)
DDP_UNFINISHED_REDUCTION = register_code(
    "RUN202",
    "ddp-unused-parameters",
    "fail",
    "collective_mismatch",
    "DDP did not finish gradient reduction: unused parameters",
    AREA,
)
DDP_READY_TWICE = register_code(
    "RUN203",
    "ddp-param-ready-twice",
    "fail",
    "collective_mismatch",
    "DDP saw a parameter marked ready twice in one iteration",
    AREA,
)

RENDEZVOUS_TIMEOUT = register_code(
    "RUN221",
    "rendezvous-timeout",
    "fail",
    "rendezvous",
    "Rendezvous or store timed out waiting for the other ranks",
    AREA,
)
STORE_UNREACHABLE = register_code(
    "RUN222",
    "store-unreachable",
    "fail",
    "rendezvous",
    "Ranks could not connect to the rendezvous store (MASTER_ADDR:MASTER_PORT)",
    AREA,
)
ADDRESS_IN_USE = register_code(
    "RUN223",
    "store-address-in-use",
    "fail",
    "rendezvous",
    "The rendezvous store could not bind its port: address already in use",
    AREA,
)
RENDEZVOUS_CONFIG = register_code(
    "RUN224",
    "rendezvous-config-missing",
    "fail",
    "rendezvous",
    "init_process_group could not start: its rendezvous settings are missing",
    AREA,
)


GPU_XID = register_code(
    "RUN241", "gpu-xid-error", "fail", "gpu_hardware", "The NVIDIA driver reported an Xid error", AREA
)
GPU_ECC = register_code(
    "RUN242", "gpu-uncorrectable-ecc", "fail", "gpu_hardware", "Uncorrectable ECC error on a GPU", AREA
)
GPU_OFF_BUS = register_code(
    "RUN243", "gpu-fallen-off-bus", "fail", "gpu_hardware", "A GPU has fallen off the bus", AREA
)
CUDA_ILLEGAL_ACCESS = register_code(
    "RUN244",
    "cuda-illegal-memory-access",
    "fail",
    "gpu_hardware",
    "CUDA illegal memory access or unspecified launch failure",
    AREA,
)

DRIVER_TOO_OLD = register_code(
    "RUN261",
    "cuda-driver-too-old",
    "fail",
    "driver_env",
    "The NVIDIA driver is too old for the CUDA runtime of this PyTorch",
    AREA,
)
NO_CUDA_DEVICE = register_code(
    "RUN262", "no-cuda-device", "fail", "driver_env", "No CUDA-capable device is visible to the process", AREA
)
LIBRARY_MISSING = register_code(
    "RUN263",
    "cuda-library-missing",
    "fail",
    "driver_env",
    "A CUDA or NCCL shared library could not be loaded",
    AREA,
)
ARCH_UNSUPPORTED = register_code(
    "RUN265",
    "cuda-arch-unsupported",
    "fail",
    "driver_env",
    "This PyTorch or extension has no GPU code for this GPU's architecture",
    AREA,
)
DEVICE_MISMATCH = register_code(
    "RUN264",
    "device-count-mismatch",
    "fail",
    "driver_env",
    "A rank asked for a GPU that is not visible (CUDA_VISIBLE_DEVICES / nproc-per-node)",
    AREA,
)
PEER_ACCESS_UNSUPPORTED = register_code(
    "RUN291",
    "gpu-peer-access-unsupported",
    "fail",
    "driver_env",
    "Two GPUs cannot reach each other's memory (peer access not supported)",
    AREA,
)
NCCL_PLATFORM_FEATURE = register_code(
    "RUN292",
    "nccl-platform-feature-unsupported",
    "fail",
    "driver_env",
    "NCCL could not use a platform feature it turned on (NVLS multicast, DMA-BUF)",
    AREA,
)
# Category nccl_network: the network plugin NCCL loaded finds no fabric provider under it (no EFA here).
# A transport that fails at its own init is the network's, as the issue that set the classes says ("OFI/EFA
# and IB plugin init errors: network, not usage"); until 2026-12-06 this was driver_env.
NCCL_NET_PROVIDER_MISSING = register_code(
    "RUN294",
    "nccl-net-provider-missing",
    "fail",
    "nccl_network",
    "NCCL's network plugin found no usable fabric provider (libfabric / EFA)",
    AREA,
)
# Category driver_env: nvcc, CUDA_HOME or a companion package (torchvision, DeepSpeed's and apex's
# compiled ops) does not fit the CUDA this PyTorch was built with.
CUDA_TOOLKIT_MISMATCH = register_code(
    "RUN296",
    "cuda-toolkit-mismatch",
    "fail",
    "driver_env",
    "The CUDA toolkit or a companion package does not fit this PyTorch's CUDA",
    AREA,
)
# Category collective_timeout: a stack dump (gdb, pystack, py-spy, faulthandler) of a rank waiting in a
# collective or a GPU synchronisation, pasted while the job hangs.
STUCK_IN_COLLECTIVE = register_code(
    "RUN297",
    "rank-stack-stuck-in-collective",
    "fail",
    "collective_timeout",
    "A stack dump shows a rank waiting in a collective (the job hangs there)",
    AREA,
)
GPU_HW_EXCEPTION = register_code(
    "RUN295",
    "gpu-hw-exception",
    "fail",
    "gpu_hardware",
    "The GPU runtime reported a hardware exception (ROCm: GPU hang)",
    AREA,
)
GPU_INIT_FAILED = register_code(
    "RUN293",
    "gpu-init-failed",
    "fail",
    "gpu_hardware",
    "The driver could not initialise a GPU, or the GPU needs a reset",
    AREA,
)

FR_RANKS_MISSING = register_code(
    "RUN281",
    "fr-collective-ranks-missing",
    "fail",
    "collective_timeout",
    "Flight recorder: some ranks never entered a collective the others wait in",
    AREA,
)
FR_OP_MISMATCH = register_code(
    "RUN282",
    "fr-collective-op-mismatch",
    "fail",
    "collective_mismatch",
    "Flight recorder: ranks entered different collectives at the same sequence number",
    AREA,
)
FR_NOT_COMPLETED = register_code(
    "RUN283",
    "fr-collective-not-completed",
    "fail",
    "collective_timeout",
    "Flight recorder: all ranks entered a collective that did not complete",
    AREA,
)


# RUN300-RUN399 live in run3.py and run3b.py (one module per 700 lines), RUN500-RUN649 in run5.py, RUN650 on
# in run6.py (RUN4xx are the lab's); re-exported so that rules read them as `run.X`.
from pgdoctor.checks.codes.run3 import *  # noqa: E402, F403
from pgdoctor.checks.codes.run3b import *  # noqa: E402, F403
from pgdoctor.checks.codes.run5 import *  # noqa: E402, F403
from pgdoctor.checks.codes.run6 import *  # noqa: E402, F403
