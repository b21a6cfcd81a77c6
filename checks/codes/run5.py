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


# -- s8: vLLM's multi-GPU engine (doctor/diagnose/rules/vllm_engine.py; read in vllm 0.4.3, 0.6.6, 0.34.0) --

# Category collective_timeout: vLLM's executor waited in vain for its workers (v1 multiproc_executor.py
# "TimeoutError: RPC call to execute_model timed out.", v0 async_llm_engine.py "Engine iteration timed out.
# This should never happen!"): a worker is stuck, usually in a tensor-parallel collective. Remedy: find the
# stuck worker (py-spy dump, NCCL_DEBUG=INFO), fix its peer; VLLM_RPC_TIMEOUT only if it was slow, not stuck.
VLLM_RPC_TIMEOUT = register_code(
    "RUN540",
    "vllm-worker-rpc-timeout",
    "fail",
    "collective_timeout",
    "vLLM's engine timed out waiting for its workers (a worker is stuck)",
    AREA,
)
# Category collective_timeout: shm_broadcast.py's "No available shared memory broadcast block found in 60
# seconds" with the engine never up after it (a long compile prints it in healthy runs): a worker hangs.
# Remedy: py-spy dump the workers; disable custom all-reduce / set NCCL_P2P_DISABLE=1 if they sit in it.
VLLM_SHM_BROADCAST_STALL = register_code(
    "RUN541",
    "vllm-shm-broadcast-stall",
    "warn",
    "collective_timeout",
    "vLLM's workers stopped reading the engine's shared-memory broadcasts (a worker hangs)",
    AREA,
)
# Category rendezvous: vLLM's Ray executor found several nodes behind one IP address ("Every node should
# have a unique IP address"): containers on a bridge network, or one VLLM_HOST_IP on every node. Remedy:
# host networking (docker --network host) and each node's own VLLM_HOST_IP / ray start --node-ip-address.
VLLM_DUPLICATE_NODE_IP = register_code(
    "RUN542",
    "vllm-nodes-share-an-ip",
    "fail",
    "rendezvous",
    "vLLM's Ray nodes share one IP address (bridge-network containers or a copied VLLM_HOST_IP)",
    AREA,
)
# Category rendezvous: a headless vLLM data-parallel engine never got its front-end's handshake
# (v1/engine/core.py "Did not receive response from front-end process within 5 minutes"). Remedy: start the
# front-end, point --data-parallel-address / --data-parallel-rpc-port at it, open the port between nodes.
VLLM_DP_HANDSHAKE_TIMEOUT = register_code(
    "RUN543",
    "vllm-dp-handshake-timeout",
    "fail",
    "rendezvous",
    "A headless vLLM data-parallel engine never heard from its front-end",
    AREA,
)
# Category collective_timeout: SGLang's scheduler watchdog saw no forward batch finish in --watchdog-timeout
# seconds (managers/scheduler.py 0.4 "Watchdog timeout (self.watchdog_timeout=300)", utils/watchdog.py 0.5
# "Scheduler watchdog timeout (...)"): a rank hangs, usually in a TP collective. Remedy: py-spy the
# schedulers, find the stuck or dead peer (NCCL_DEBUG=INFO), --disable-custom-all-reduce for P2P hangs.
SGLANG_WATCHDOG_TIMEOUT = register_code(
    "RUN544",
    "sglang-watchdog-timeout",
    "fail",
    "collective_timeout",
    "SGLang's watchdog found a forward batch that never finished (a rank hangs)",
    AREA,
)


# --- r2 (s17): DeepSpeed ZeRO-3's runtime, framework OOM reports, interrupted launcher waits ---
# Category collective_mismatch: DeepSpeed ZeRO-3's parameter coordinator (runtime/zero/
# partitioned_param_coordinator.py, parameter_offload.py, partition_parameters.py, 0.6-0.16) found parameters
# in flight or in the wrong state against the module trace it prefetches along ("still have inflight params",
# "tracing error at step N", "AssertionError: {'id': .., 'status': 'NOT_AVAILABLE', ...}"): the modules ran
# in another order or number than the recorded trace. Remedy: stage3_prefetch_bucket_size 0, the same
# submodules every step, another DeepSpeed release, or ZeRO-2.
ZERO3_TRACE_MISMATCH = register_code(
    "RUN510",
    "zero3-trace-mismatch",
    "fail",
    "collective_mismatch",
    "DeepSpeed ZeRO-3's parameter coordinator lost track of its prefetch trace (parameters in flight or in "
    "the wrong state)",
    AREA,
)
# Category cuda_oom: DeepSpeed ZeRO-3's stage3.py step warning "N pytorch allocator cache flushes since last
# step. this happens when there is high memory pressure" (0.3-0.16): torch's caching allocator had to free
# its cache and retry allocations. Remedy: lower the micro-batch / sequence length, stage3_max_live_parameters
# or the prefetch bucket, offload, or call get_accelerator().empty_cache() on all ranks together.
GPU_MEMORY_PRESSURE = register_code(
    "RUN511",
    "gpu-memory-pressure",
    "warn",
    "cuda_oom",
    "The GPU is at its memory limit: the allocator freed its cache and retried allocations",
    AREA,
)
# Category collective_timeout: a KeyboardInterrupt (Ctrl-C) traceback of a launcher waiting on its ranks
# (torch.multiprocessing.spawn's join, torchrun's _invoke_run, torch.distributed.launch's process.wait,
# DeepSpeed's / accelerate's launchers) or of a rank waiting in a collective (distributed_c10d.py barrier,
# all_reduce, torch.cuda.synchronize): the job hung and a person stopped it. Remedy: find where the ranks
# wait (py-spy dump of every rank, NCCL_DEBUG=INFO, TORCH_DISTRIBUTED_DEBUG=DETAIL, a shorter timeout).
INTERRUPTED_WHILE_WAITING = register_code(
    "RUN512",
    "interrupted-while-waiting",
    "warn",
    "collective_timeout",
    "The job was interrupted by hand (Ctrl-C) while it waited on its ranks or in a collective: it hung",
    AREA,
)
# Category collective_mismatch: autograd's "Mismatch in shape: grad_output[0] has a shape of X and output[0]
# has a shape of Y" under a pipeline schedule (ColossalAI backward_by_grad, DeepSpeed pipe engine, Megatron
# schedules, torch.distributed.pipelining): the gradient the next stage sent back has another shape than this
# stage's output. Remedy: make the stages agree on the exchanged shapes (pad to a fixed sequence length, turn
# off the p2p shape-metadata cache, equal micro-batch sizes).
PIPELINE_SHAPE_MISMATCH = register_code(
    "RUN513",
    "pipeline-shape-mismatch",
    "fail",
    "collective_mismatch",
    "Pipeline stages exchanged tensors of different shapes (a gradient does not match its stage's output)",
    AREA,
)


# --- r3 (RUN520-RUN529) ---

# Category nccl_network: aws-ofi-nccl (NCCL's libfabric / EFA plugin) refused a connection because the peer's
# connect message names another number of rails (EFA NICs behind the device) than this node has: "NET/OFI
# Unexpected number of remote rails for dev 3. Expected 4 but got 2" (rdma protocol, v1.7+; "remote control
# rails", v1.13+). Remedy: find the node with a missing / down EFA device (fi_info -p efa), or make the
# plugin's version and OFI_NCCL_* rail settings the same on every node.
NCCL_OFI_RAIL_MISMATCH = register_code(
    "RUN520",
    "nccl-ofi-rail-mismatch",
    "fail",
    "nccl_network",
    "NCCL's libfabric plugin (aws-ofi-nccl) and a peer disagree on the number of EFA rails",
    AREA,
)


# --- t1 (RUN550-RUN559): the launch environment a program is tied to ---

# Category driver_env: a script that reads a scheduler's or an MPI launcher's own variables to find its
# rank (os.environ["SLURM_PROCID"], Lightning's SLURMEnvironment plugin forced in the code:
# int(os.environ["SLURM_NODEID"]); OMPI_COMM_WORLD_*, PMI_*, MV2_COMM_WORLD_*) was started outside that
# scheduler or launcher, so os.py raised "KeyError: 'SLURM_NODEID'". torch's own variables (RANK,
# MASTER_ADDR: RUN224) are the rendezvous settings; these say the job runs in another environment than the
# code was written for. Remedy: start it under srun / mpirun, or drop the forced cluster environment and let
# the framework detect the launch.
SCHEDULER_ENV_MISSING = register_code(
    "RUN550",
    "scheduler-env-missing",
    "fail",
    "driver_env",
    "The program reads a scheduler's variables (Slurm, MPI) but was not started under that scheduler",
    AREA,
)


# --- the store backends a build lacks (RUN551) ---

# Category driver_env: TCPStore (torch 2.4+, TCPStore.cpp) was asked for its libuv backend, the default of
# torchrun and init_process_group since 2.4, and this PyTorch build has none: "use_libuv was requested but
# PyTorch was build without libuv support" (2.4-2.5; "built ..., run with USE_LIBUV=0 to disable it." later;
# DistStoreError from 2.5). The Windows wheels and some source builds lack libuv. Until 2026-12-06 this was
# RUN224 (rendezvous settings); three blind collections (v12, v16, v17) labelled it driver_env and the two
# rule writers' cases rendezvous (test_corpus.py LABEL_DECISIONS). Remedy: USE_LIBUV=0.
STORE_LIBUV_NOT_BUILT = register_code(
    "RUN551",
    "store-libuv-not-built",
    "fail",
    "driver_env",
    "The rendezvous store was asked for its libuv backend, which this PyTorch build lacks",
    AREA,
)


# --- u2 (RUN560-RUN564): hangs that a paste shows only by their mechanism ---

# Category collective_timeout: a DeepEP communication kernel (csrc/kernels/intranode.cu, internode.cu,
# internode_ll.cu) spun past its NUM_TIMEOUT_CYCLES waiting for a peer's data or credit and trapped: "DeepEP
# dispatch NVL receiver timeout, channel: 6, RDMA: 0, nvl: 0, ...", "DeepEP timeout for dispatch senders, rank
# 3, responsible_channel = 2", "DeepEP timeout check failed: rank = 3, thread = 1, value = 1)", "DeepEP
# combine (scale-up wait) timeout, ...", "DeepEP dispatch forwarder timeout (RDMA check), ...". The trap then
# surfaces as CUDA's "unspecified launch failure" (its consequence, not a GPU fault). Remedy: find the rank
# that never reached the same dispatch / combine (py-spy), check NVSHMEM's RDMA path between the nodes (IBGDA,
# RoCE GID, nvidia_peermem) and that every rank uses the same Buffer sizes and config.
DEEPEP_KERNEL_TIMEOUT = register_code(
    "RUN560",
    "deepep-kernel-timeout",
    "fail",
    "collective_timeout",
    "A DeepEP dispatch/combine kernel timed out waiting for a peer's data and trapped",
    AREA,
)


# --- u1 (RUN552-RUN556) ---

# Category driver_env: Open MPI's ess/slurm component (orte/mca/ess/slurm, ompi/mca/rte 2.x-5.x,
# help-ess-base.txt "slurm-error2" / "slurm-error") says "The application appears to have been direct
# launched using "srun", but OMPI was not built with SLURM's PMI support and therefore cannot execute." (older
# "... but OMPI was not built with SLURM support. This usually happens when OMPI was not configured
# --with-slurm ..."): the ranks were started by srun, and this Open MPI install has no PMI (PMI-1, PMI-2 or
# PMIx) that Slurm's launch offers, so MPI_Init cannot learn its rank. The install (a container's or a pip
# wheel's bundled Open MPI, HPC-X built without --with-pmix) does not fit the cluster's launcher. Remedy:
# launch with mpirun inside the allocation, srun --mpi=pmix with an Open MPI built --with-pmix, or use the
# cluster's MPI module.
MPI_WITHOUT_SLURM_PMI = register_code(
    "RUN552",
    "mpi-built-without-slurm-pmi",
    "fail",
    "driver_env",
    "srun started the ranks, but this Open MPI was built without Slurm's PMI support",
    AREA,
)


# --- u3 (RUN565-RUN569): failures named only in a report's words ---

# Category gpu_hardware: the paste is one short line in a person's words, a thread's title, that names a GPU
# of the job as failing, faulty, dead or broken ("One of the cluster GPUs is failing, it seems.", "GPU 3 is
# dead after the driver update", "faulty GPU on node-7"), with no driver record (Xid, ECC, fallen off the
# bus: RUN241-RUN243) to say which fault. Remedy: find the GPU with nvidia-smi -q (ECC counters, retired or
# remapped rows, Xid in dmesg), run dcgmi diag, and drain or reset it.
GPU_REPORTED_FAILING = register_code(
    "RUN565",
    "gpu-reported-failing",
    "fail",
    "gpu_hardware",
    "A report names a failing GPU; the paste holds no driver record of the fault",
    AREA,
)


# --- r4 (RUN585-RUN589): transfer engines, NVSHMEM's limits, gloo's own checks ---

# Category nccl_network: a KV-cache / tensor transfer engine outside NCCL gave up moving data between nodes.
# Mooncake's store client (mooncake-store client.cpp, client_service.cpp, real_client.cpp, transfer_task.cpp,
# 2025-2026) says so in glog records: "Transfer failed for task0" then "transfer_incomplete max_attempts=3",
# "Failed to complete transfers after 60 seconds" (later "... after 60000 milliseconds for batch 7"),
# "Transfer failed for key: k with error: -800", and the Python binding's "Put operation failed with error:
# TRANSFER_FAIL" (Get / Upsert / batch operations alike; ErrorCode::TRANSFER_FAIL = -800). Under it the
# transfer engine's RDMA (or TCP) path failed: a NIC or port down, the wrong NICs (MC_* / protocol settings),
# a peer that died. Remedy: read the engine's own lines (Worker: "Process failed for slice ...", QP /
# handshake errors), check the NICs and the peer, and the engine's protocol and device settings.
TRANSFER_ENGINE_FAILED = register_code(
    "RUN585",
    "transfer-engine-failed",
    "fail",
    "nccl_network",
    "A transfer engine outside NCCL (Mooncake) could not move data between nodes",
    AREA,
)

# Category nccl_usage: NVSHMEM (under DeepEP, cuFFTMp, NVSHMEM-based MoE kernels) ran out of a resource its
# own settings size, or was called out of its contract: src/host/team/team_internal.cpp "No more teams
# available (max = 7), try setting NVSHMEM_MAX_TEAMS environment variable" (NVSHMEMX_ERROR_OUT_OF_MEMORY, a
# team pool, not GPU memory), "Unable to allocate enough duplicate teams ... Please increase
# NVSHMEM_MAX_TEAMS", "Requested 40 teams, but only 32 are supported"; src/host/mem/mem_heap.cpp "nvshmem
# malloc failed (hint: check if total allocation has exceeded NVSHMEM symmetric size = N, ...
# NVSHMEM_SYMMETRIC_SIZE environment variable)" and the symmetry checks ("symmetry check for size failed": PEs
# asked for different sizes); init.cu "nvshmem API called before nvshmem_init". Remedy: raise the named
# setting (NVSHMEM_MAX_TEAMS, NVSHMEM_SYMMETRIC_SIZE) or create fewer teams / smaller buffers; call nvshmem
# the same way on every PE.
NVSHMEM_LIMIT_OR_USAGE = register_code(
    "RUN586",
    "nvshmem-limit-or-usage",
    "fail",
    "nccl_usage",
    "NVSHMEM ran out of a resource its settings size (teams, symmetric heap) or was called out of contract",
    AREA,
)

# Category nccl_usage: gloo's collective algorithms check their context and buffers before they run
# (gloo/allgather.cc, allgatherv.cc, allreduce.cc, reduce.cc, alltoall(v).cc, broadcast.cc, gather(v).cc,
# scatter.cc; GLOO_ENFORCE -> gloo::EnforceNotMet "[enforce fail at .../gloo/allgather.cc:31]
# context->getPair(recvRank). missing connection between rank 0 (this process) and rank 0"): the caller
# (Horovod's gloo controller, torch's ProcessGroupGloo, a program using gloo directly) gave a context without
# a connection to a peer (a single-process world on a gloo before size-1 support, a context never fully
# connected) or buffers whose sizes do not fit the collective. Remedy: upgrade gloo / Horovod (size 1),
# connect the full mesh, pass buffers of the sizes the collective needs.
GLOO_COLLECTIVE_CHECK = register_code(
    "RUN587",
    "gloo-collective-check-failed",
    "fail",
    "nccl_usage",
    "A gloo collective refused its context or buffers (a missing peer connection, sizes that do not fit)",
    AREA,
)


# --- r1 (RUN570-RUN574): what the last frames of a cut traceback tell ---

# Category driver_env: a distributed launch on native Windows or macOS (torchrun / torch.distributed.launch's
# agent, torch.multiprocessing.spawn or start_processes, accelerate launch: frames under C:\..., D:/...,
# /Users/..., /opt/homebrew/..., or torchrun's own "NOTE: Redirects are currently not supported in Windows or
# MacOs." above the stack) whose traceback the paste cut before its exception line. PyTorch has no NCCL
# backend on either platform and the Windows wheels no libuv store (torch 2.4+), so such a launch fails at
# start. Remedy: run under Linux or WSL2, or set backend="gloo" and USE_LIBUV=0 (one process per GPU still).
DIST_LAUNCH_ON_WINDOWS_OR_MACOS = register_code(
    "RUN570",
    "dist-launch-on-windows-or-macos",
    "fail",
    "driver_env",
    "A distributed launch on native Windows or macOS died at start (no NCCL there; no libuv store on "
    "Windows)",
    AREA,
)


# --- u1: verify, the loss value the ranks compute is not the one-process loss ---

# Category equivalence (pgdoctor verify): the training is equivalent (gradients and parameters match the
# one-process reference), yet the ranks' loss values, averaged, are not the reference's loss: the loss
# tensor was changed outside autograd after the forward, typically an in-place all-reduce on it for
# logging (`dist.all_reduce(loss.detach())`, `loss.data`) that sums over ranks without dividing by the
# world size. The logged loss is then world-size times too large (or otherwise off); the training is
# not. Remedy: all-reduce a copy (`loss.detach().clone()`) and divide by the world size (ReduceOp.AVG).
LOSS_VALUE_ALTERED = register_code(
    "VER116",
    "verify-loss-value-altered",
    "warn",
    "equivalence",
    "The ranks train as one process does, but the loss value they report is not the one-process loss",
    "verify",
)


# --- r1 (RUN590-RUN594): the platform under NCCL and its fabric plugin ---

# Category driver_env: NCCL's P2P transport (src/transport/p2p.cc p2pCanConnect, 2.x) found two GPUs its
# topology says should talk over PCIe or NVLink P2P, asked CUDA (cudaDeviceCanAccessPeer) and was refused:
# "NCCL INFO Could not enable P2P between dev 0(=1b0) and dev 3(=1e0)"; NVLink-connected GPUs so refused
# print "P2P is disabled between connected GPUs 0 and 1. You can repress this message with
# NCCL_IGNORE_DISABLED_P2P=1." (2.7-2.18; 2.19+ "... between NVLINK connected GPUs ..."). NCCL falls back to
# shared memory through the host, which is slower and, on the boards these threads came from (VMs with
# passed-through GPUs, PCIe ACS or an IOMMU in the way, consumer cards), where jobs hang after init.
# Remedy: enable P2P in the platform (ACS off, iommu=pt, a driver with P2P for these boards) or set
# NCCL_P2P_DISABLE=1 and accept the host path.
# The same platform fault measured: cuda-samples' p2pBandwidthLatencyTest printing a "P2P=Enabled" bandwidth
# matrix whose GPU pairs move data several times slower than its "P2P=Disabled" matrix (through the host):
# the peers "CAN Access" each other, yet P2P writes crawl (PCIe ACS redirecting them through the root
# complex, an IOMMU not in passthrough) and NCCL's P2P transport over them hangs or crawls.
GPU_P2P_BROKEN_BY_PLATFORM = register_code(
    "RUN590",
    "gpu-p2p-broken-by-platform",
    "warn",
    "driver_env",
    "GPU peer-to-peer between these GPUs is refused or broken by the platform (VM, PCIe ACS/IOMMU, board or "
    "driver)",
    AREA,
)

# Category driver_env: the NCCL OFI plugin (aws-ofi-nccl, nccl_ofi_*.c) set a libfabric endpoint option it
# was compiled to know (FI_OPT_EFA_SENDRECV_IN_ORDER_ALIGNED_128_BYTES, FI_OPT_EFA_WRITE_IN_ORDER_ALIGNED_128_
# BYTES, FI_OPT_CUDA_API_PERMITTED, FI_OPT_EFA_USE_DEVICE_RDMA, ...) and the libfabric it loaded at run time
# refused it with an error other than "not supported": "NET/OFI Couldn't set FI_OPT_... RC: -92, ERROR:
# Protocol not available". The plugin was built against a newer libfabric (the EFA installer's in the image)
# than the one the process loads (the host's, an older one first on LD_LIBRARY_PATH). Remedy: run with the
# libfabric the plugin was built against, or rebuild the plugin against the one that is loaded.
OFI_LIBFABRIC_OPTION_REJECTED = register_code(
    "RUN591",
    "ofi-libfabric-option-rejected",
    "fail",
    "driver_env",
    "The NCCL OFI plugin set a libfabric option that the loaded libfabric rejects (plugin and libfabric of "
    "different releases)",
    AREA,
)

# --- r3 (RUN600-RUN604): the server's own hardware event log ---

# Category gpu_hardware: the baseboard management controller (BMC) logged a hardware event in its System Event
# Log, as `ipmitool sel list` / `sel elist` prints it ("  1 | 04/09/2024 | 10:15:02 | Temperature #0x30 |
# Upper Critical going high | Asserted"): a temperature, voltage or fan past its threshold (the board, a PCIe
# retimer, a GPU baseboard sensor), an uncorrectable memory ECC error, a PCIe SERR/PERR or bus fatal error, a
# processor IERR or thermal trip, a failed power supply. A job that hangs, loses a GPU or a node, or a machine
# that locks up under load beside such events has a hardware cause. Remedy: read the whole SEL (`ipmitool sel
# elist`), fix the cooling, power or part it names (vendor service), and drain the node until then.
BMC_HARDWARE_EVENT = register_code(
    "RUN600",
    "bmc-hardware-event",
    "fail",
    "gpu_hardware",
    "The server's management controller logged a hardware event (over-temperature, voltage, ECC, PCIe fatal)",
    AREA,
)

# Category nccl_usage: Caffe's multi-GPU training (P2PSync / NCCL solvers of BVLC Caffe 1.0, NVCaffe, and the
# research forks built on them: FlowNet2, SSD, R-FCN) found that the GPUs' copies of the net disagree, and
# glog aborted the process: parallel.cpp's apply_buffers "Check failed: total_size == (ptr == buffer ? 1 : ptr
# - buffer) (118335438 vs. 117426126)" (a worker's net holds another number of learnable parameters than the
# root solver's net: a custom layer that shapes its blobs per instance or per device), or syncedmem.cpp's
# device check "Check failed: Caffe::current_device() == gpu_device_ (0 vs. 1)" (NVCaffe; BVLC's debug build:
# "Check failed: device == device_") - a blob's GPU memory touched from another GPU's thread (a layer or data
# transformer that keeps a static or shared buffer). Remedy: train on one GPU, or fix the layer so every net
# copy has the same parameters and keeps its memory on its own device.
CAFFE_MULTI_GPU_MISMATCH = register_code(
    "RUN601",
    "caffe-multi-gpu-mismatch",
    "fail",
    "nccl_usage",
    "Caffe's multi-GPU training found the GPUs' nets disagree (parameter sizes, memory on another GPU)",
    AREA,
)

# Category nccl_usage: a program that drives NCCL with MPI (NCCL's own MPI example and the programs that
# copied its MPICHECK macro: TensorRT-LLM's TLLM_MPI_CHECK, vLLM's and others' custom all-reduce tests, user
# benchmarks) printed "Failed: MPI error <file>:<line> '<n>'" for an MPI call that returned an
# invalid-argument class, numbered alike in MPICH and Open MPI: 1 MPI_ERR_BUFFER, 2 MPI_ERR_COUNT, 3
# MPI_ERR_TYPE, 4 MPI_ERR_TAG, 5 MPI_ERR_COMM, 6 MPI_ERR_RANK. The usual cause is the launch: fewer (or
# other) MPI ranks than the program's layout needs (a TensorRT-LLM engine built for tp_size 2 started
# without `mpirun -n 2`, a peer rank that does not exist), or MPI used before MPI_Init / after MPI_Finalize.
# Remedy: launch as many ranks as the engine or program was built for, and check the ranks it addresses.
MPI_CALL_INVALID_ARGUMENT = register_code(
    "RUN602",
    "mpi-call-invalid-argument",
    "fail",
    "nccl_usage",
    "An MPI call of an NCCL program failed on an invalid rank, communicator or argument (launch size)",
    AREA,
)

# --- r1 (RUN615-RUN619): NCCL's WARN sites swept across 2.3-2.27 ---

# Category nccl_network: NCCL's intra-node proxy passes CUDA memory handles (cuMem, 2.19+; the proxy's
# file-descriptor exchange) between the local ranks over a Unix domain socket in the abstract namespace, and
# that socket failed: misc/ipcsocket.cc "UDS: Receiving data over socket failed : 11" / "UDS: Sending data
# over socket /tmp/nccl-socket-1-e2c1 failed : Connection refused (111)" / "UDS: Socket creation error",
# proxy.cc "ncclProxyCallBlockingUDS call to tpRank 1(53b1e2c1) failed : 2", "ncclProxyClientGetFd call to
# tpRank 1 handle 0x7f8 failed : 2" (NCCL returns ncclSystemError; torch says "unhandled system error"). The
# local ranks cannot reach each other's proxy socket: they run in different network namespaces (one
# container per GPU, pods without a shared network namespace: abstract sockets are per namespace), a seccomp
# / AppArmor profile refuses SCM_RIGHTS, or the peer process already died (then its own error is the cause).
# Remedy: run the node's ranks in one network and IPC namespace (--net=host --ipc=host, one pod per node), or
# NCCL_CUMEM_ENABLE=0 (legacy CUDA IPC, no fd passing).
NCCL_PROXY_UDS_FAILED = register_code(
    "RUN615",
    "nccl-proxy-uds-failed",
    "fail",
    "nccl_network",
    "NCCL's local proxy could not pass CUDA memory handles over its Unix domain socket (cuMem, namespaces)",
    AREA,
)

# --- w6 (RUN645-RUN649): driver_env of v21's dev half, read as families ---

# Category driver_env: a framework's own RDMA transport (not NCCL's: NCCL logs "NET/IB : No device found." at
# INFO and falls back to sockets) asked libibverbs for the host's InfiniBand / RoCE devices and got none, and
# aborted: OneFlow's ibverbs comm net (ibverbs_comm_network.cpp, glog CHECK_GT: "Check failed: num_device > 0
# (0 vs. 0) No IB device found"), TensorFlow's grpc+verbs server (contrib/verbs/rdma.cc: "Check failed:
# dev_list No InfiniBand device found"), Gloo's ibverbs transport (transport/ibverbs/device.cc: "No ibverbs
# devices present"). The host (or the container) shows no RDMA device: no HCA, its driver (mlx5_ib) not
# loaded, or /dev/infiniband not passed into the container. Remedy: `ibv_devices` where the job runs; pass
# the devices in (--device=/dev/infiniband, the RDMA device plugin) or turn the framework's RDMA transport off
# (OneFlow's use_rdma, TensorFlow's protocol="grpc", Gloo's tcp transport).
RDMA_DEVICE_MISSING = register_code(
    "RUN645",
    "rdma-device-missing",
    "fail",
    "driver_env",
    "A framework's own RDMA transport found no InfiniBand / RoCE device on the host (ibverbs)",
    AREA,
)

# --- w1 (RUN620-RUN624): the stack where it says it does not fit (gloo's sysfs, torch's bindings) ---

# Category driver_env: gloo's Linux helpers (gloo/common/linux.cc, 2017 on, torch's third_party/gloo) read the
# PCI topology from sysfs to find the GPU nearest the NIC (cuda_private.h findCudaDevicePointerClosestToDevice
# -> pciDistance -> pciPath: readlink("/sys/bus/pci/devices/<bus id>")), and a read failed: "[enforce fail at
# .../gloo/common/linux.cc:103] rv != -1. -1 vs -1. Invalid argument" (111 since 2019; EINVAL: the interface
# gloo uses has no PCI device - a bridge, veth, bond, VPN or loopback - so its bus id is empty and the path is
# the directory itself), "No such file or directory" (sysfs not mounted in the container), and the directory
# and class-file reads of the same walk (dirp != nullptr, errno == 0, rv == 0, ifs.good()). Remedy: point
# GLOO_SOCKET_IFNAME at a physical NIC, mount /sys, or run CUDA tensors on NCCL.
GLOO_SYSFS_PCI_UNREADABLE = register_code(
    "RUN620",
    "gloo-sysfs-pci-unreadable",
    "fail",
    "driver_env",
    "gloo could not read the PCI topology of its network interface from /sys (virtual NIC, no sysfs)",
    AREA,
)

# Category driver_env: a pybind11 binding of torch's compiled part (torch._C, torch._C._distributed_c10d)
# refused a keyword that torch's own Python files pass to it: "__init__(): incompatible constructor arguments.
# The following argument types are supported: 1. torch._C._distributed_c10d.TCPStore(host_name: str, port:
# int, world_size: int, is_master: bool, timeout: ...) Invoked with: '127.0.0.1', 29500, 1, True, ...; kwargs:
# multi_tenant=True": the keyword is in none of the signatures the binding lists, so the .py files and the .so
# come from different torch releases (two installs over each other, a stale build dir on PYTHONPATH, a
# `pip install` that replaced part of a conda torch). A value of the wrong type for a listed argument is the
# caller's (RUN224). The same skew at import: "cannot import name 'X' from 'torch._C._distributed_c10d'
# (/.../_distributed_c10d...so)", "module 'torch._C._distributed_c10d' has no attribute 'X'" (the compiled
# library is older than torch's .py files or than a package built for a newer torch). Remedy: remove every
# torch and install one build again (and the packages built for it).
TORCH_BINDING_SKEW = register_code(
    "RUN621",
    "torch-binding-skew",
    "fail",
    "driver_env",
    "torch's compiled library is older than the Python code calling it (mixed installs: a keyword or name)",
    AREA,
)

# --- w5 (RUN640-RUN644): NCCL usage, network and hardware misses of v20's held-out and v21's dev halves ---

# Category nccl_usage: an inference engine's own all-reduce between the GPUs of one node (vLLM's and SGLang's
# custom_all_reduce.cuh, CUDA IPC instead of NCCL) stopped the worker with its CUDACHECK macro: "Failed: Cuda
# error /workspace/csrc/custom_all_reduce.cuh:455 'invalid argument'" (also 'invalid device pointer', 'invalid
# resource handle', 'operation not supported'; TensorRT-LLM's "CUDA runtime error in
# ::cudaIpcOpenMemHandle(...): invalid argument (.../ipcUtils.cpp:92)"). cudaIpcGetMemHandle /
# cudaIpcOpenMemHandle was handed memory it cannot share: buffers of the expandable-segments allocator
# (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True reserves virtual ranges, not cudaMalloc allocations), or
# GPUs outside the node's IPC reach (data-parallel and tensor-parallel ranks mixed up). The engine's "Worker
# proc ... died unexpectedly" follows. Remedy: unset expandable_segments for the engine, or
# --disable-custom-all-reduce.
CUSTOM_ALLREDUCE_CUDA_FAILURE = register_code(
    "RUN640",
    "custom-allreduce-cuda-failure",
    "fail",
    "nccl_usage",
    "An inference engine's custom all-reduce (CUDA IPC between GPUs) could not share its buffers",
    AREA,
)
