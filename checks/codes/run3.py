"""Finding codes of `pgdoctor diagnose` from RUN300 on: the families read from other stacks, platforms and
runtimes after RUN101-RUN299 (checks/codes/run.py, which re-exports every name here so that a rule reads
all its codes as `run.X`). Categories as in run.py; the range says nothing about the category.
"""

from __future__ import annotations

from pgdoctor.checks.base import register_code

AREA = "run"

# nccl-tests' own check of the results (-c 1, the default): a collective returned wrong values on a
# GPU. Nothing failed or raised; NCCL, the GPU or the path between GPUs corrupted data.
NCCL_WRONG_RESULTS = register_code(
    "RUN327",
    "nccl-wrong-results",
    "fail",
    "nccl_usage",
    "A collective returned wrong values (nccl-tests' result check failed)",
    AREA,
)

# A CUDA call failed while NCCL was creating the communicator (the wrapper names ncclCommInitRank /
# ncclCommInitAll, or the framework's communicator set-up is on the stack: Paddle's collective_helper.cc,
# init_parallel_env, ParallelExecutor's constructor), with no CUDA error text of its own. Before any user
# tensor is touched, the CUDA calls NCCL makes are about the platform (context, device, IPC/P2P handles,
# host registration), and the threads that carry these show a libnccl built for another CUDA, a driver
# older than the runtime, or GPUs that cannot share memory in that container: the environment, not usage.
NCCL_INIT_CUDA_FAILURE = register_code(
    "RUN313",
    "nccl-init-cuda-failure",
    "fail",
    "driver_env",
    "A CUDA call failed while NCCL created its communicator (driver, CUDA and NCCL builds, or GPU sharing)",
    AREA,
)

# torch.distributed's own checks of the program's calls (process group, backend, device, arguments),
# before any backend runs: the same category as NCCL's invalid usage, not a NCCL error.
C10D_INVALID_USAGE = register_code(
    "RUN301",
    "c10d-invalid-usage",
    "fail",
    "nccl_usage",
    "torch.distributed rejected a call: unknown process group, backend, device or arguments",
    AREA,
)

# ps-lite's KVWorker (the dist kvstore of MXNet, BytePS) refusing a pull whose buffers do not match the keys:
# the caller's keys / values / lengths disagree with what the servers hold, not the network.
KVSTORE_PULL_MISMATCH = register_code(
    "RUN345",
    "kvstore-pull-size-mismatch",
    "fail",
    "nccl_usage",
    "A ps-lite kvstore pull returned sizes that do not match the keys and buffers the caller passed",
    AREA,
)

# NCCL's topology XML (NCCL_TOPO_FILE / NCCL_GRAPH_FILE, or the file a cloud's network plugin hands
# it) that it cannot parse or that lacks what it needs: the platform's file, not the program.
NCCL_TOPOLOGY_FILE = register_code(
    "RUN302",
    "nccl-topology-file",
    "fail",
    "driver_env",
    "NCCL could not use the topology XML it was given (NCCL_TOPO_FILE or the network plugin's)",
    AREA,
)

# The multi-node launcher (DeepSpeed's runner over pdsh/ssh, mpirun's daemons, MPICH's hydra proxies) could
# not start the ranks on another node: ssh refused, unreachable, unresolved or unauthorised. The ranks never
# ran, so no store was ever tried; the fix is the launcher's access to the nodes, not MASTER_ADDR.
REMOTE_LAUNCH_FAILED = register_code(
    "RUN303",
    "remote-launch-failed",
    "fail",
    "rendezvous",
    "The launcher could not start the ranks on another node (ssh, pdsh, mpirun or hydra could not reach it)",
    AREA,
)

# The scheduler or launcher could not start the job's processes at all (srun's step or task launch, mpirun's
# executable or slots, hydra's execvp): no rank ran, so nothing of the rendezvous was tried yet.
LAUNCH_FAILED = register_code(
    "RUN304",
    "launch-failed",
    "fail",
    "rendezvous",
    "The scheduler or launcher could not start the job's processes "
    "(srun step or task launch, mpirun, hydra, a hostfile)",
    AREA,
)

# A process of a JAX / TensorFlow multi-host job re-registered with the coordination service under a
# new incarnation (the XLA/TSL service's "unexpectedly tried to connect with a different incarnation",
# "Incarnation ID mismatch"): it restarted after it had joined (a crash and a restart by the scheduler, a
# second copy of the job on the same coordinator address and port). The service aborts every task.
RENDEZVOUS_MEMBER_RESTARTED = register_code(
    "RUN312",
    "rendezvous-member-restarted",
    "fail",
    "rendezvous",
    "A process re-joined the job's coordination service as a new incarnation (it restarted, or another "
    "job uses the same coordinator address)",
    AREA,
)

# Category gpu_hardware: dcgmi nvlink --link-status shows a GPU's NVLinks Down (D), not Disabled or Not
# Supported: the links trained down (a failed link, a GPU or baseboard fault, Fabric Manager not running).
GPU_NVLINK_DOWN = register_code(
    "RUN346", "nvlink-links-down", "fail", "gpu_hardware", "A GPU's NVLinks are down", AREA
)

# Category gpu_hardware: cudaErrorUnknown (999) surfacing after kernels ran (torch's "CUDA error: unknown
# error" from a kernel launch, a synchronisation or the NCCL watchdog's event query): the driver lost the
# context without naming why (a GPU hang, an Xid, a wedged device), not an error of the program's calls.
CUDA_UNKNOWN_ERROR = register_code(
    "RUN323",
    "cuda-unknown-error-at-runtime",
    "fail",
    "gpu_hardware",
    "The CUDA runtime reported an unknown error while kernels ran",
    AREA,
)

# Category gpu_hardware: the kernel's PCIe AER driver reported an uncorrected error on a GPU's link (or the
# port above it), or could not recover the GPU from one: the link, the riser or the board, not software.
PCIE_UNCORRECTED = register_code(
    "RUN324",
    "pcie-uncorrected-error",
    "fail",
    "gpu_hardware",
    "The PCIe link of a GPU (or the port above it) reported an uncorrected error",
    AREA,
)

# Category driver_env: cudart's 801 cudaErrorNotSupported / the driver's CUDA_ERROR_NOT_SUPPORTED raised
# through torch or a CUDA library: the driver or the platform (a vGPU, WSL, Jetson, a driver older than the
# feature: kernels with large parameters need R530 under CUDA 12.1+) refuses an operation the job uses
# (expandable segments' cuMem calls, IPC, a kernel launch). Through NCCL it is RUN292.
CUDA_OPERATION_NOT_SUPPORTED = register_code(
    "RUN307",
    "cuda-operation-not-supported",
    "fail",
    "driver_env",
    "The driver or platform does not support a CUDA operation the job uses",
    AREA,
)

# Category driver_env: Intel oneCCL could not start its worker (progress) threads at communicator set-up
# (src/common/utils/... base_thread.cpp: "error while creating worker thread #0 pthread_create returns 22",
# exec.cpp's "failed to start worker # 0"): the CPU affinity it asked for (CCL_WORKER_AFFINITY, or the
# default last cores) lies outside the process's cpuset, or the thread limit is reached.
ONECCL_WORKER_START_FAILED = register_code(
    "RUN330",
    "oneccl-worker-start-failed",
    "fail",
    "driver_env",
    "oneCCL could not start its worker threads (CPU affinity outside the cpuset, or a thread limit)",
    AREA,
)

# Category gpu_hardware: the NVIDIA user-space driver (libcuda, libnvidia-*) itself crashed: the kernel
# logged a process's segfault inside it ("python[3551]: segfault at 1378 ip ... error 4 in
# libcuda.so.418.67[...]"). Repeated on one node it is a driver fault or a GPU left in a bad state, not the
# program's code.
GPU_DRIVER_CRASH = register_code(
    "RUN331",
    "gpu-driver-crashed",
    "fail",
    "gpu_hardware",
    "A process crashed inside the NVIDIA user-space driver (libcuda)",
    AREA,
)

# Category process_crash: a kernel of the program faulted in a way only code does (cudaErrorMisalignedAddress
# 716, cudaErrorIllegalInstruction 715, cudaErrorHardwareStackError 714, cudaErrorInvalidPc 718), raised in
# the program's own call (torch.cuda.synchronize, a tensor op): the program's or a library's kernel bug.
CUDA_KERNEL_FAULT = register_code(
    "RUN332",
    "cuda-kernel-code-fault",
    "fail",
    "process_crash",
    "A kernel of the program faulted on the GPU (misaligned address, illegal instruction): a code bug",
    AREA,
)

# Category driver_env: a process forked after its parent had initialised CUDA (a DataLoader worker, a
# multiprocessing pool, vLLM's fork start method) touched CUDA: torch/cuda/__init__.py's _lazy_init refuses
# ("Cannot re-initialize CUDA in forked subprocess"); the launch set-up, not the GPU or the program's maths.
CUDA_FORKED_CHILD = register_code(
    "RUN308",
    "cuda-init-in-forked-process",
    "fail",
    "driver_env",
    "A process forked after CUDA was initialised tried to use CUDA",
    AREA,
)

# Category gpu_hardware: NCCL's topology check found two GPUs joined by NVLink whose P2P the driver
# reports disabled (graph/paths.cc; NCCL itself calls it "probably due to a hardware issue").
GPU_NVLINK_P2P_DISABLED = register_code(
    "RUN310",
    "gpu-nvlink-p2p-disabled",
    "fail",
    "gpu_hardware",
    "Two NVLink-connected GPUs report peer-to-peer disabled",
    AREA,
)

# Ascend NPUs (HCCL): a device-side wait of an HCCL operation that ran past HCCL_EXEC_TIMEOUT /
# HCCL_CONNECT_TIMEOUT (EI0002 notify wait, EI0006 link set-up, the runtime's stream and event waits).
# Its own code, like gloo's: the knobs, the logs to read (plog) and the tools differ from NCCL's.
HCCL_TIMEOUT = register_code(
    "RUN311",
    "hccl-execution-timeout",
    "fail",
    "collective_timeout",
    "An HCCL collective on an Ascend NPU waited past its timeout for a peer",
    AREA,
)

# Category driver_env: an accelerator other than an NVIDIA GPU could not be opened by this process: Intel
# Gaudi's device acquire ("synStatus=20 [Device already acquired] Device acquire failed"), a Cloud TPU that
# another process holds ("The TPU is already in use by process with pid N", "Couldn't open device:
# /dev/accel0"), an Ascend NPU the CANN runtime cannot reach ("driver error:no valid device") or that
# another process uses (npu-smi's dcmi -8020).
ACCEL_DEVICE_UNAVAILABLE = register_code(
    "RUN333",
    "accelerator-device-unavailable",
    "fail",
    "driver_env",
    "A Gaudi, TPU or Ascend device could not be opened (held by another process, or not passed in)",
    AREA,
)

# Category gpu_hardware: the NVSwitch driver's fatal SXid record ("nvidia-nvswitch3: SXid (PCI:0000:c3:00.0):
# 24007, Fatal, Link 30 ..."): the NVLink fabric of an HGX/DGX baseboard failed; Fabric Manager and a reset
# of the switches (or the node) are the remedy, not the job.
NVSWITCH_FATAL = register_code(
    "RUN347",
    "nvswitch-fatal-sxid",
    "fail",
    "gpu_hardware",
    "An NVSwitch reported a fatal SXid error (the NVLink fabric failed)",
    AREA,
)

# Category gpu_hardware: a GPU's InfoROM (the board's non-volatile store of ECC counts, retired pages and row
# remaps) is corrupted, as DCGM's diagnostic reports it ("A corrupt InfoROM has been detected in GPU 3.").
# A board to reflash or replace.
GPU_INFOROM = register_code(
    "RUN348",
    "gpu-inforom-corrupt",
    "fail",
    "gpu_hardware",
    "A GPU's InfoROM is corrupted",
    AREA,
)

# Category gpu_hardware: a TPU chip, its driver or its host failed under the job, as libtpu, the TPU driver or
# the slice's health daemon records it ("Bad hardware status: 0x1", "!!!! FATAL ERROR !!!! for
# [/dev/accel0 ...]", "Detected failure SLICE_FAILURE_CHIP_DRIVER_ERROR", "TPU node-v3-32 is not HEALTHY
# yet").
# The TPU VM or slice to recreate or report, not the program.
TPU_HARDWARE_FAULT = register_code(
    "RUN337",
    "tpu-hardware-fault",
    "fail",
    "gpu_hardware",
    "A TPU chip, its driver or its host failed (the runtime reported a hardware fault)",
    AREA,
)

# Category driver_env: the framework build or environment has no collective backend for what the job asks
# (Ray's cupy NCCL binding missing, TurboMind built without NCCL, c10d without an XCCL/HCCL backend for an
# accelerator's device type, DeepSpeed's comm layer never initialised).
COLLECTIVE_BACKEND_MISSING = register_code(
    "RUN334",
    "collective-backend-missing",
    "fail",
    "driver_env",
    "The framework has no usable collective backend for this device or build",
    AREA,
)

# Category driver_env: one replicated program over GPUs of different models (XLA: "executable is built for
# device CUDA:0 of type ...; cannot run it on device CUDA:1 of type ...").
MIXED_GPU_MODELS = register_code(
    "RUN335",
    "mixed-gpu-models",
    "fail",
    "driver_env",
    "The job spans GPUs of different models that one compiled program cannot run on",
    AREA,
)

# Category driver_env: a rank died on a fatal signal inside a library of the stack, not the job's code: a
# SIGSEGV whose first frame is an MPI entry point (a broken or mixed MPI installation), a SIGFPE (integer
# divide by zero in native code: cuBLAS 12.1 on H20/H800-class GPUs), or a stack library failing on its own
# (PMIx's shared-memory data store OUT-OF-RESOURCE under Open MPI 4.0).
STACK_LIBRARY_CRASH = register_code(
    "RUN336",
    "stack-library-crash",
    "fail",
    "driver_env",
    "A library of the software stack (MPI, PMIx, cuBLAS) crashed or failed inside itself",
    AREA,
)

# Category collective_timeout: PyTorch's multi-process test harness
# (torch/testing/_internal/common_distributed.py, MultiProcessTestCase._check_return_codes) found a rank
# process still running when the test's timeout ran out: "RuntimeError: Process 0 terminated or timed out
# after 300.07 seconds" (1.x "Process 0 timed out after 300 seconds"; forks: "Rank 0 terminated or timed
# out after ..."): the ranks hung, in a collective most often.
DIST_TEST_HANG = register_code(
    "RUN338",
    "distributed-test-rank-hung",
    "fail",
    "collective_timeout",
    "A rank of a multi-process distributed test was still running at the test's timeout (it hung)",
    AREA,
)

# Category driver_env: CUDA's 702 cudaErrorLaunchTimeout ("the launch timed out and was terminated", 6 before
# CUDA 10.1; the driver's CUDA_ERROR_LAUNCH_TIMEOUT, HIP's hipErrorLaunchTimeOut): the driver's kernel
# watchdog killed a kernel that ran longer than it allows, which it only does on a GPU with the watchdog
# on (kernelExecTimeoutEnabled: a GPU that drives a display, X or a desktop; Windows' TDR, 2 s by default).
CUDA_LAUNCH_TIMEOUT = register_code(
    "RUN342",
    "cuda-launch-timeout-watchdog",
    "fail",
    "driver_env",
    "The display driver's watchdog killed a long kernel (CUDA launch timed out)",
    AREA,
)

# Category driver_env: PSM/PSM2/OPX waited in vain for /dev/hfi1_0 or /dev/ipath (driver, fabric).
FABRIC_DEVICE_MISSING = register_code(
    "RUN350", "fabric-device-missing", "fail", "driver_env", "Omni-Path / InfiniPath device missing", AREA
)

# Category driver_env: SYCL's "Native API failed" on an Intel GPU: driver or compute runtime (not OOM).
SYCL_RUNTIME_FAILURE = register_code(
    "RUN351", "sycl-runtime-failure", "fail", "driver_env", "SYCL / Level Zero native call failed", AREA
)

# Category driver_env: oneCCL's getenv_local_coord under a launcher it does not know.
ONECCL_LOCAL_COORD = register_code(
    "RUN352", "oneccl-local-coord-unknown", "fail", "driver_env", "oneCCL local rank/count unknown", AREA
)

# Category driver_env: CANN's EC0010 / InitTbeFunc / ACL init env failed: set_env.sh, Python, TBE deps.
CANN_PYTHON_ENV = register_code(
    "RUN353", "cann-python-env-broken", "fail", "driver_env", "CANN Python components not importable", AREA
)

# Category driver_env: RCCL's "Missing iommu=pt" warning before an init that never came up.
ROCM_IOMMU_NOT_PT = register_code(
    "RUN354", "rocm-iommu-not-passthrough", "warn", "driver_env", "RCCL init stalled without iommu=pt", AREA
)

# Category gpu_hardware: a GPU kernel driver timed out a job and reset the engine or the whole GPU (Intel xe:
# "Timedout job: seqno=..", "Engine reset: engine_class=ccs"; i915: "GPU HANG: ecode .."), or the user-space
# runtime says the device was lost (Level Zero / SYCL UR / Vulkan DEVICE_LOST): a GPU hang, not a code error.
GPU_ENGINE_HANG = register_code(
    "RUN355",
    "gpu-engine-hang",
    "fail",
    "gpu_hardware",
    "The GPU driver timed out a job and reset the GPU (GPU hang, device lost)",
    AREA,
)

# Category gpu_hardware: DCGM's health watch or diagnostic found a GPU slowed by heat or power (clocks event /
# clock throttling due to a thermal or power violation, thermal violations over a test, a temperature over
# the limit): cooling or power delivery, not the job.
GPU_THERMAL_VIOLATION = register_code(
    "RUN356",
    "gpu-thermal-violation",
    "fail",
    "gpu_hardware",
    "A GPU ran into a thermal or power violation (cooling or power delivery)",
    AREA,
)

# Category nccl_network: /dev/shm smaller than the shared-memory segments of UCX's mm transport, Open MPI's
# backing file or NCCL (SIGBUS in ncclShmOpen): a container's 64 MiB default, a pod without a Memory emptyDir.
SHARED_MEMORY_TOO_SMALL = register_code(
    "RUN360",
    "shared-memory-too-small",
    "fail",
    "nccl_network",
    "/dev/shm is too small for the communication library's shared memory (NCCL, UCX, Open MPI)",
    AREA,
)

# Category nccl_network: the GPUDirect-TCPX net plugin waited past its timeout ("rx rx ctrl timeout cnt N").
NET_PLUGIN_TIMEOUT = register_code(
    "RUN361",
    "nccl-net-plugin-timeout",
    "fail",
    "nccl_network",
    "The NCCL network plugin (GPUDirect-TCPX/TCPXO) timed out waiting on a peer's NIC",
    AREA,
)

# Category rendezvous: NVSHMEM's bootstrap (UID sockets, MPI, PMI module) failed ("bootstrap_init failed").
NVSHMEM_BOOTSTRAP = register_code(
    "RUN362",
    "nvshmem-bootstrap-failed",
    "fail",
    "rendezvous",
    "NVSHMEM could not initialise: its bootstrap between the processes failed",
    AREA,
)

# Category nccl_network: XLA's "Failed to get NCCL comm": NCCL's init failed and its reason was dropped.
NCCL_COMM_NOT_CREATED = register_code(
    "RUN363",
    "nccl-comm-not-created",
    "fail",
    "nccl_network",
    "The framework could not create its NCCL communicator (NCCL's own reason was not kept)",
    AREA,
)

# Category nccl_network: a tensor exchanged between workers over gRPC was larger than the transport carries
# (protobuf's 2 GB serialisation limit on TF's RecvBuf/RecvTensor responses).
GRPC_MESSAGE_TOO_LARGE = register_code(
    "RUN364",
    "grpc-message-too-large",
    "fail",
    "nccl_network",
    "A tensor sent between workers exceeded the gRPC transport's message size limit (protobuf 2 GB)",
    AREA,
)

# Category nccl_network: oneCCL's transport failed (an ATL call returned "atl_status: FAILURE"), or the GPU
# fabric ports it runs collectives over (Intel Xe Link) report failed ("port issue: { status: failed }").
ONECCL_TRANSPORT_FAILURE = register_code(
    "RUN365",
    "oneccl-transport-failure",
    "fail",
    "nccl_network",
    "oneCCL's transport failed (ATL status FAILURE, or its Xe Link fabric ports failed)",
    AREA,
)

# Category driver_env: an RDMA engine outside NCCL (MoRI, Mooncake, UCX) could not register a buffer with the
# NIC (ibv_reg_mr refused GPU memory: no nvidia_peermem / amdgpu peer-memory module, no DMA-BUF path; or the
# locked-memory limit): the machine's RDMA stack cannot pin that memory, whatever the job does.
RDMA_MEMORY_REGISTRATION = register_code(
    "RUN385",
    "rdma-memory-registration-failed",
    "fail",
    "driver_env",
    "An RDMA engine could not register memory with the NIC (GPUDirect RDMA module, DMA-BUF or memlock)",
    AREA,
)

# Category gpu_hardware: a device failed a hardware test of its vendor's diagnostic (NVIDIA's nvvs / dcgmi
# diag: "Memory GPU6 ..... FAIL", "| GPU Memory | Fail - GPU: 6 |").
GPU_DIAG_FAILED = register_code(
    "RUN386",
    "gpu-diagnostic-failed",
    "fail",
    "gpu_hardware",
    "A GPU failed a hardware test of the vendor's diagnostic (DCGM / nvvs)",
    AREA,
)

# Category nccl_usage: the program set up the framework's collectives after its runtime had started
# (TensorFlow's configure_collective_ops once the eager context exists: a MultiWorkerMirroredStrategy made
# after the first op; JAX's distributed.initialize after the first computation).
COLLECTIVES_CONFIGURED_LATE = register_code(
    "RUN387",
    "collectives-configured-late",
    "fail",
    "nccl_usage",
    "The program set up collectives after the framework's runtime had started (create the strategy first)",
    AREA,
)

# Category nccl_network: NVSHMEM's network transport between GPUs of different nodes failed to come up or
# failed while running (its ibgda / ibrc / ibdevx / ucx / libfabric modules: "ibgda.cpp:1345: non-zero status:
# 121 Error in mlx5dv_devx_obj_modify for INIT2RTR_QP", "transport.cpp:400: non-zero status: 7 connect EPS
# failed"): the RDMA fabric under DeepEP's internode kernels, not NCCL's and not the job's code.
NVSHMEM_TRANSPORT_FAILED = register_code(
    "RUN393",
    "nvshmem-transport-failed",
    "fail",
    "nccl_network",
    "NVSHMEM's network transport (IBGDA, IBRC, UCX, libfabric) failed to connect the GPUs' endpoints",
    AREA,
)

# Category nccl_network: TensorFlow's collective health check (MultiWorkerMirroredStrategy's _check_health)
# could not reach a peer worker ("/job:worker/replica:0/task:7 seems down, retrying 1/3", "Cluster check alive
# failed, ... is down, aborting collectives"), and aborts every collective with it.
TF_COLLECTIVE_PEER_DOWN = register_code(
    "RUN394",
    "tf-collective-peer-down",
    "fail",
    "nccl_network",
    "TensorFlow's collective health check could not reach a peer worker (the worker or the link is down)",
    AREA,
)

# Category process_crash: a data-loading worker could not write its batch into shared memory (torch's
# "unable to write to file </torch_...>: No space left on device (28)", the shared-memory segment it could not
# open or map): /dev/shm is full or too small (a container's 64 MB default), and the worker or the rank dies.
DATALOADER_SHM_EXHAUSTED = register_code(
    "RUN388",
    "dataloader-shared-memory-exhausted",
    "fail",
    "process_crash",
    "A data-loading worker ran out of shared memory (/dev/shm full or too small for its batches)",
    AREA,
)

# Category driver_env: the shell or Python could not find the launcher or tool the job runs (torchrun,
# deepspeed, accelerate, mpirun, srun, python): it is not installed in this environment or not on the PATH of
# the shell that ran it (sudo's PATH, a non-interactive ssh shell, a container without the conda env).
LAUNCHER_NOT_FOUND = register_code(
    "RUN389",
    "launcher-command-not-found",
    "fail",
    "driver_env",
    "The launcher or tool the job runs was not found on the PATH (torchrun, deepspeed, mpirun, python...)",
    AREA,
)

# Category driver_env: a launcher's resource pool has no such GPU slot or host (DeepSpeed's runner: "No slot
# '4' specified on host 'localhost'", "Hostname 'x' not found in hostfile", a malformed hostfile): the GPUs or
# hosts asked for are not the ones the launcher sees.
LAUNCHER_RESOURCES = register_code(
    "RUN390",
    "launcher-resource-not-available",
    "fail",
    "driver_env",
    "The launcher was asked for a GPU slot or host its resource pool (hostfile, detected GPUs) does not have",
    AREA,
)

# Category driver_env: an NVML call failed (pynvml / nvidia-ml-py's NVMLError_InvalidArgument, NoPermission,
# FunctionNotFound, Unknown...): the GPU index asked for does not exist here, NVML is blocked in this
# container, or the driver is older than the bindings.
NVML_CALL_FAILED = register_code(
    "RUN391",
    "nvml-call-failed",
    "fail",
    "driver_env",
    "An NVML call failed (a GPU index that does not exist, no permission, a driver older than the bindings)",
    AREA,
)

# Category nccl_usage: a collective library was called after the program had shut it down (rabit's "Doing
# rabit call after Finalize", Open MPI's "The MPI_Allreduce() function was called after MPI_FINALIZE was
# invoked"), or set up twice (rabit's "can only call Init once"): the program's order of calls.
COLLECTIVE_AFTER_FINALIZE = register_code(
    "RUN378",
    "collective-after-finalize",
    "fail",
    "nccl_usage",
    "A collective library was called after the program finalized it (or initialised it twice)",
    AREA,
)

# Category nccl_usage: JAX refused a pmap whose mapped axis does not match the local devices on a
# multi-process run ("the input to pmapped functions must have leading axis size equal to the number of
# local devices"), or a collective over an axis name no pmap / shard_map binds ("unbound axis name: i").
JAX_PMAP_USAGE = register_code(
    "RUN379",
    "jax-pmap-collective-usage",
    "fail",
    "nccl_usage",
    "JAX rejected a pmap or collective: its mapped axis does not match the local devices or is unbound",
    AREA,
)

# Category nccl_usage: a CUDA graph capture failed in a worker of a multi-GPU job (vLLM's tensor-parallel
# workers, a rank of torch.distributed): a collective issued while the stream was capturing that the
# capture cannot take (NCCL/pynccl/custom all-reduce on another stream, NCCL < 2.9.6) invalidated it.
COLLECTIVE_IN_GRAPH_CAPTURE = register_code(
    "RUN380",
    "collective-in-graph-capture",
    "fail",
    "nccl_usage",
    "A CUDA graph capture failed in a multi-GPU worker (a collective the capture cannot record)",
    AREA,
)

# Category rendezvous: PyTorch/XLA's XRT mesh service (third_party/xla_client/mesh_service.cc, torch_xla
# 1.5-1.x on TPU VMs and pods): a worker could not reach the mesh master that hands out the mesh
# configuration and meets xm.rendezvous ("Failed to connect to client mesh master: host:port", "Failed to
# retrieve mesh configuration", "Failed to meet rendezvous '<tag>'").
XLA_MESH_UNREACHABLE = register_code(
    "RUN371",
    "xla-mesh-master-unreachable",
    "fail",
    "rendezvous",
    "A PyTorch/XLA worker could not reach the XRT mesh master (mesh configuration or xm.rendezvous)",
    AREA,
)

# Category driver_env: Slurm could not authenticate a request of srun / sbatch / salloc (the MUNGE
# credential): munged not running or its socket absent on this machine, a munge.key that differs between
# nodes, or clocks apart ("Munge encode failed", "auth_g_create: ... has authentication error", "Protocol
# authentication error"). No job step was ever allocated: the scheduler's environment, not the job.
SLURM_AUTH_FAILED = register_code(
    "RUN374",
    "slurm-auth-failed",
    "fail",
    "driver_env",
    "Slurm could not authenticate the job's request (MUNGE daemon, key or clock)",
    AREA,
)

# Category driver_env: a POSIX-only part of the stack ran on native Windows: a launcher that execs /bin/sh,
# a module Windows has no build of (fcntl, resource, pwd, termios), POSIX signals or process calls
# (signal.SIGKILL, os.setsid, os.fork). Run it under Linux or WSL2, or use the framework's Windows path.
POSIX_ONLY_ON_WINDOWS = register_code(
    "RUN375",
    "posix-only-on-windows",
    "fail",
    "driver_env",
    "A POSIX-only launcher or module ran on native Windows (no /bin/sh, fork, POSIX signals or modules)",
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
