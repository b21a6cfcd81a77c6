"""A healthy multi-node training log as real runs print it: the decoy every rule must stay silent on.

Deterministic (a seed), 2 nodes x 8 GPUs by default, in the wordings of several NCCL releases and with
the prefixes launchers and log collectors put on lines (srun's task label, pdsh's host, torchrun --tee's
"[defaultN]:", Open MPI's "[1,N]<stdout>:", kubectl's pod prefix and --timestamps). The NCCL records are NCCL's own INFO format
strings (src/init.cc, bootstrap.cc, graph/connect.cc, graph/tuning.cc, transport/p2p.cc, net.cc,
net_ib.cc, proxy.cc) of 2.10, 2.18, 2.21 and 2.27, behind NCCL's "host:pid:tid [cudaDev] " prefix; the
rest is what a run that succeeded prints around them: torchrun's elastic agent records (old logging
"INFO:torch.distributed...:" and glog-style "I1203 ... api.py:...]" of torch 2.4+), the launcher's
OMP_NUM_THREADS banner, torch's UserWarnings / FutureWarnings and c10d's own warnings of a healthy run
(the process group not destroyed at exit, the barrier's guessed device, a client socket that retried
before the store came up), DeepSpeed's, Accelerate's and Lightning's start-up banners and config dumps
(which are full of words like "timeout", "error" and "oom"), progress bars and metric dicts, and the
teardown (NCCL's "Destroy COMPLETE" and its proxy's "Connection closed by localRank", the agent's
"worker group successfully finished").

`python -m tests.helpers.healthy_logs` prints, for every rule row (doctor/diagnose/rules), the healthy
lines its pattern matches at all: a row that matches a healthy line is a false alarm waiting for its
log, kept silent only by its build's checks.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass

NCCL_VERSIONS = ("2.10.3", "2.18.5", "2.21.5", "2.27.3")
PREFIXES = ("none", "srun", "pdsh", "tee", "timestamps", "mpirun", "kubectl")
FRAMEWORKS = ("torchrun", "deepspeed", "accelerate", "lightning")


@dataclass(frozen=True)
class Rec:
    """One line of the job: its text and who printed it (rank None: the launcher of `node`)."""

    text: str
    node: int
    rank: int | None = None


def _v(version: str) -> tuple[int, int]:
    major, minor, _patch = version.split(".")
    return int(major), int(minor)


class _Job:
    def __init__(self, nodes: int, gpus: int, seed: int, nccl: str, socket_ifaces: tuple[str, ...]) -> None:
        self.nodes, self.gpus, self.nccl = nodes, gpus, nccl
        self.world = nodes * gpus
        self.rnd = random.Random(seed)
        self.hosts = [f"gpu-node-{n + 1:02d}" for n in range(nodes)]
        self.ips = [f"10.1.{n}.{11 + n}" for n in range(nodes)]
        self.pids = [self.rnd.randrange(1000, 60000) for _ in range(self.world)]
        self.comms = [f"0x{self.rnd.randrange(16**11, 16**12):x}" for _ in range(self.world)]
        self.bus = ["18000", "2a000", "3a000", "5d000", "9a000", "ab000", "ba000", "db000"]
        self.comm_id = f"0x{self.rnd.randrange(16**15, 16**16):x}"
        self.socket_ifaces = socket_ifaces

    def node_of(self, rank: int) -> int:
        return rank // self.gpus

    def nccl_prefix(self, rank: int, main_thread: bool = True) -> str:
        pid = self.pids[rank]
        tid = pid if main_thread else pid + 100 + self.rnd.randrange(50)
        return f"{self.hosts[self.node_of(rank)]}:{pid}:{tid} [{rank % self.gpus}] NCCL INFO "


def _bus(job: _Job, rank: int) -> str:
    return job.bus[rank % job.gpus % len(job.bus)]


def nccl_init(job: _Job, rank: int) -> Iterator[str]:
    """One rank's NCCL records from the first collective to "Init COMPLETE", in its release's words."""
    p = job.nccl_prefix(rank)
    ver = _v(job.nccl)
    node = job.node_of(rank)
    ip = job.ips[node]
    dev = rank % job.gpus
    comm = job.comms[rank]
    if rank == 0:
        yield f"{p}NCCL version {job.nccl}+cuda12.2"
    if ver >= (2, 18):
        yield f"{p}cudaDriverVersion 12020"
    if job.socket_ifaces:
        ifs = "".join(
            f" [{i}]{n}:{ip if i == 0 else f'172.{17 + i}.0.1'}<0>" for i, n in enumerate(job.socket_ifaces)
        )
        yield f"{p}Bootstrap : Using {job.socket_ifaces[0]}:{ip}<0>"
    else:
        ifs = ""
        yield f"{p}Bootstrap : Using eth0:{ip}<0>"
    if ver >= (2, 18):
        call = "ncclCommInitRank " if ver >= (2, 21) else ""
        yield (
            f"{p}{call}comm {comm} rank {rank} nranks {job.world} cudaDev {dev} nvmlDev {dev} "
            f"busId {_bus(job, rank)} commId {job.comm_id} - Init START"
        )
    if ver < (2, 18):
        yield f"{p}NET/Plugin : No plugin found (libnccl-net.so), using internal implementation"
    elif ver < (2, 21):
        yield f"{p}NET/Plugin : No plugin found, using internal implementation"
    elif ver < (2, 23):
        yield f"{p}NET/Plugin: No plugin found (libnccl-net.so)"
        yield f"{p}TUNER/Plugin: No plugin found (libnccl-tuner.so)"
    else:
        yield f"{p}NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin."
        yield f"{p}TUNER/Plugin: Could not find: libnccl-tuner.so libnccl-net.so. Using internal tuner plugin."
    if job.socket_ifaces:
        yield f"{p}NET/IB : No device found."
        yield f"{p}NET/Socket : Using{ifs}"
        yield f"{p}Using network Socket"
    else:
        oob = f"eth0:{ip}<0>"
        if ver < (2, 18):
            yield f"{p}NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB ; OOB {oob}"
        else:
            yield f"{p}NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [RO]; OOB {oob}"
        if ver >= (2, 21):
            yield f"{p}Using non-device net plugin version 0"
        yield f"{p}Using network IB"
    if ver >= (2, 21):
        yield f"{p}DMA-BUF is available on GPU device {dev}"
    if ver >= (2, 23):
        yield f"{p}CC Off, workFifoBytes 1048576"
    yield f"{p}Setting affinity for GPU {dev} to ffffffff,00000000,ffffffff"
    if ver >= (2, 18):
        yield f"{p}NVLS multicast support is not available on dev {dev}"
    if ver >= (2, 21):
        yield (
            f"{p}comm {comm} rank {rank} nRanks {job.world} nNodes {job.nodes} localRanks {job.gpus} "
            f"localRank {dev} MNNVL 0"
        )
    nch = 16 if ver >= (2, 18) else 8
    if rank == 0:
        ring = " ".join(f"{r:3d}" for r in range(job.world))
        for c in range(nch):
            yield f"{p}Channel {c:02d}/{nch:02d} : {ring}"
    up, down = (rank + 1) % job.world, (rank - 1) % job.world
    trees = " ".join(f"[{c}] {up}/-1/-1->{rank}->{down}" for c in range(nch))
    yield f"{p}Trees {trees}"
    if ver >= (2, 18):
        yield f"{p}P2P Chunksize set to 131072"
    for c in range(nch):
        nxt = (rank + 1) % job.world
        if job.node_of(nxt) == node:
            if ver >= (2, 12):
                yield f"{p}Channel {c:02d}/0 : {rank}[{dev}] -> {nxt}[{nxt % job.gpus}] via P2P/IPC/read"
            else:
                yield f"{p}Channel {c:02d} : {rank}[{_bus(job, rank)}] -> {nxt}[{_bus(job, nxt)}] via P2P/IPC/read"
        else:
            net = "Socket/0" if job.socket_ifaces else "IB/0/GDRDMA"
            if ver >= (2, 12):
                yield f"{p}Channel {c:02d}/0 : {rank}[{dev}] -> {nxt}[{nxt % job.gpus}] [send] via NET/{net}"
            else:
                yield f"{p}Channel {c:02d} : {rank}[{_bus(job, rank)}] -> {nxt}[{_bus(job, nxt)}] [send] via NET/{net}"
    yield f"{p}Connected all rings"
    for c in range(min(nch, 4)):
        yield f"{p}Channel {c:02d}/0 : {rank}[{dev}] -> {up}[{up % job.gpus}] via P2P/IPC/read"
    yield f"{p}Connected all trees"
    if ver < (2, 18):
        yield f"{p}threadThresholds 8/8/64 | 128/8/64 | 512 | 512"
        yield f"{p}{nch} coll channels, {nch} p2p channels, 2 p2p channels per peer"
    elif ver < (2, 21):
        yield f"{p}threadThresholds 8/8/64 | 128/8/64 | 512 | 512"
        yield f"{p}{nch} coll channels, 0 nvls channels, {nch} p2p channels, 2 p2p channels per peer"
    else:
        yield f"{p}threadThresholds 8/8/64 | 128/8/64 | 512 | 512"
        yield f"{p}{nch} coll channels, 0 collnet channels, 0 nvls channels, {nch} p2p channels, 2 p2p channels per peer"
    if ver < (2, 18):
        yield f"{p}comm {comm} rank {rank} nranks {job.world} cudaDev {dev} busId {_bus(job, rank)} - Init COMPLETE"
        if rank == 0:
            yield f"{p}Launch mode Parallel"
    elif ver < (2, 21):
        yield (
            f"{p}comm {comm} rank {rank} nranks {job.world} cudaDev {dev} nvmlDev {dev} busId {_bus(job, rank)} "
            f"commId {job.comm_id} - Init COMPLETE"
        )
    else:
        yield (
            f"{p}ncclCommInitRank comm {comm} rank {rank} nranks {job.world} cudaDev {dev} nvmlDev {dev} "
            f"busId {_bus(job, rank)} commId {job.comm_id} - Init COMPLETE"
        )
        yield (
            f"{p}Init timings - ncclCommInitRank: rank {rank} nranks {job.world} total 1.42 (kernels 0.31, alloc "
            "0.05, bootstrap 0.62, allgathers 0.02, topo 0.27, graphs 0.01, connections 0.13, rest 0.01)"
        )


def nccl_teardown(job: _Job, rank: int) -> Iterator[str]:
    ver = _v(job.nccl)
    p = job.nccl_prefix(rank)
    if ver >= (2, 12):
        yield f"{job.nccl_prefix(rank, main_thread=False)}[Service thread] Connection closed by localRank {rank % job.gpus}"
    if ver >= (2, 18):
        yield f"{p}comm {job.comms[rank]} rank {rank} nranks {job.world} cudaDev {rank % job.gpus} busId {_bus(job, rank)} - Destroy COMPLETE"


def launcher_start(job: _Job, framework: str, node: int, modern_torch: bool) -> Iterator[str]:
    host0 = job.hosts[0]
    if framework == "deepspeed":
        yield f"[2024-06-03 10:12:{node:02d},101] [INFO] [real_accelerator.py:203:get_accelerator] Setting ds_accelerator to cuda (auto detect)"
        if node == 0:
            yield f"[2024-06-03 10:12:00,412] [INFO] [runner.py:568:main] cmd = /usr/bin/python -u -m deepspeed.launcher.launch --world_info=eyJncHUtbm9kZS0wMSI6IFswLCAxXX0= --node_rank=%n --master_addr={host0} --master_port=29500 train.py --deepspeed ds_config.json"
        yield f"[2024-06-03 10:12:01,012] [INFO] [launch.py:145:main] WORLD INFO DICT: {{'{job.hosts[0]}': [0, 1, 2, 3, 4, 5, 6, 7], '{job.hosts[-1]}': [0, 1, 2, 3, 4, 5, 6, 7]}}"
        yield f"[2024-06-03 10:12:01,012] [INFO] [launch.py:151:main] nnodes={job.nodes}, num_local_procs={job.gpus}, node_rank={node}"
        yield f"[2024-06-03 10:12:01,013] [INFO] [launch.py:163:main] dist_world_size={job.world}"
        yield "[2024-06-03 10:12:01,013] [INFO] [launch.py:165:main] Setting CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7"
        return
    if framework == "accelerate" and node == 0:
        yield "The following values were not passed to `accelerate launch` and had defaults used instead:"
        yield "\t`--num_processes` was set to a value of `16`"
        yield "\t\tMore than one GPU was found, enabling multi-GPU training."
        yield "\t\tIf this was unintended please pass in `--num_processes=1`."
        yield "\t`--mixed_precision` was set to a value of `'no'`"
        yield "\t`--dynamo_backend` was set to a value of `'no'`"
        yield "To avoid this warning pass in values for each of the problematic parameters or run `accelerate config`."
    if modern_torch:
        yield "W0603 10:12:01.517000 140213 torch/distributed/run.py:793] "
        yield "W0603 10:12:01.517000 140213 torch/distributed/run.py:793] *****************************************"
        yield (
            "W0603 10:12:01.517000 140213 torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable "
            "for each process to be 1 in default, to avoid your system being overloaded, please further tune the "
            "variable for optimal performance in your application as needed. "
        )
        yield "W0603 10:12:01.517000 140213 torch/distributed/run.py:793] *****************************************"
        yield (
            "I0603 10:12:01.520000 140213 torch/distributed/elastic/agent/server/api.py:870] [default] starting "
            "workers for entrypoint: python"
        )
        yield "I0603 10:12:01.520000 140213 torch/distributed/elastic/agent/server/api.py:693] [default] Rendezvous'ing worker group"
        return
    yield "WARNING:torch.distributed.run:"
    yield "*****************************************"
    yield (
        "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system "
        "being overloaded, please further tune the variable for optimal performance in your application as needed. "
    )
    yield "*****************************************"
    yield "INFO:torch.distributed.launcher.api:Starting elastic_operator with launch configs:"
    yield "  entrypoint       : train.py"
    yield f"  min_nodes        : {job.nodes}"
    yield f"  max_nodes        : {job.nodes}"
    yield f"  nproc_per_node   : {job.gpus}"
    yield "  run_id           : 4217"
    yield "  rdzv_backend     : c10d"
    yield f"  rdzv_endpoint    : {host0}:29500"
    yield "  rdzv_configs     : {'timeout': 900}"
    yield "  max_restarts     : 0"
    yield "  monitor_interval : 5"
    yield "  log_dir          : None"
    yield "  metrics_cfg      : {}"
    yield ""
    yield "INFO:torch.distributed.elastic.agent.server.local_elastic_agent:log directory set to: /tmp/torchelastic_k2d8_1fd/4217_q1t9yhd8"
    yield "INFO:torch.distributed.elastic.agent.server.api:[default] starting workers for entrypoint: python"
    yield "INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous'ing worker group"
    yield "INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous complete for workers. Result:"
    yield "  restart_count=0"
    yield f"  master_addr={host0}"
    yield "  master_port=29500"
    yield f"  group_rank={node}"
    yield f"  group_world_size={job.nodes}"
    yield f"  local_ranks={list(range(job.gpus))}"
    yield f"  role_ranks={list(range(node * job.gpus, (node + 1) * job.gpus))}"
    yield f"  global_ranks={list(range(node * job.gpus, (node + 1) * job.gpus))}"
    yield f"  role_world_sizes={[job.world] * job.gpus}"
    yield f"  global_world_sizes={[job.world] * job.gpus}"
    yield ""
    yield "INFO:torch.distributed.elastic.agent.server.api:[default] Starting worker group"
    yield (
        "INFO:torch.distributed.elastic.agent.server.local_elastic_agent:Environment variable "
        "'TORCHELASTIC_ENABLE_FILE_TIMER' not found. Do not start FileTimerServer."
    )
    for lr in range(job.gpus):
        yield (
            f"INFO:torch.distributed.elastic.multiprocessing:Setting worker{lr} reply file to: "
            f"/tmp/torchelastic_k2d8_1fd/4217_q1t9yhd8/attempt_0/{lr}/error.json"
        )


# What the job script prints before the launch: its settings, whose names hold "ERROR", "TIMEOUT", "DEBUG".
ENV_DUMP = (
    "NCCL_DEBUG=INFO",
    "NCCL_DEBUG_SUBSYS=INIT,NET",
    "NCCL_IB_TIMEOUT=22",
    "NCCL_IB_RETRY_CNT=7",
    "NCCL_SOCKET_IFNAME=eth0",
    "TORCH_NCCL_ASYNC_ERROR_HANDLING=1",
    "NCCL_ASYNC_ERROR_HANDLING=1",
    "TORCH_NCCL_BLOCKING_WAIT=0",
    "TORCH_NCCL_DUMP_ON_TIMEOUT=1",
    "TORCH_NCCL_TRACE_BUFFER_SIZE=2000",
    "CUDA_DEVICE_MAX_CONNECTIONS=1",
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
)


def rank_start(job: _Job, framework: str, rank: int, modern_torch: bool) -> Iterator[str]:
    """What one rank prints before its first collective."""
    if framework == "lightning":
        yield f"Initializing distributed: GLOBAL_RANK: {rank}, MEMBER: {rank + 1}/{job.world}"
        if rank == 0:
            yield "-" * 100
            yield "distributed_backend=nccl"
            yield f"All distributed processes registered. Starting with {job.world} processes"
            yield "-" * 100
            yield ""
            yield "GPU available: True (cuda), used: True"
            yield "TPU available: False, using: 0 TPU cores"
            yield "HPU available: False, using: 0 HPUs"
            yield (
                "You are using a CUDA device ('NVIDIA H100 80GB HBM3') that has Tensor Cores. To properly utilize "
                "them, you should set `torch.set_float32_matmul_precision('medium' | 'high')` which will trade-off "
                "precision for performance. For more details, read https://pytorch.org/docs/stable/generated/"
                "torch.set_float32_matmul_precision.html#torch.set_float32_matmul_precision"
            )
        yield f"LOCAL_RANK: {rank % job.gpus} - CUDA_VISIBLE_DEVICES: [0,1,2,3,4,5,6,7]"
    elif framework == "accelerate":
        yield "Distributed environment: MULTI_GPU  Backend: nccl"
        yield f"Num processes: {job.world}"
        yield f"Process index: {rank}"
        yield f"Local process index: {rank % job.gpus}"
        yield f"Device: cuda:{rank % job.gpus}"
        yield ""
        yield "Mixed precision type: bf16"
    elif framework == "deepspeed":
        yield "[2024-06-03 10:12:05,220] [INFO] [comm.py:637:init_distributed] cdb=None"
        if rank == 0:
            yield "[2024-06-03 10:12:05,220] [INFO] [comm.py:668:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl"
    if modern_torch:
        yield (
            "/usr/local/lib/python3.11/dist-packages/torch/distributed/distributed_c10d.py:4631: UserWarning: No "
            "device id is provided via `init_process_group` or `barrier `. Using the current device set by the user. "
        )
        yield "  warnings.warn(  # warn only once"
        # ProcessGroupNCCL::barrier's guess, in torch 2.4-2.5's words (no blank after "incorrect.") and 2.6+'s
        if _v(job.nccl) >= (2, 23):
            yield (
                f"[rank{rank}]:[W603 10:12:06.371204112 ProcessGroupNCCL.cpp:4561] [PG ID 0 PG GUID 0 Rank {rank}]  using "
                f"GPU {rank % job.gpus} to perform barrier as devices used by this process are currently unknown. This can "
                "potentially cause a hang if this rank to GPU mapping is incorrect. Specify device_ids in barrier() to "
                "force use of a particular device, or call init_process_group() with a device_id."
            )
        else:
            yield (
                f"[rank{rank}]:[W603 10:12:06.134661876 ProcessGroupNCCL.cpp:4115] [PG ID 0 PG GUID 0 Rank {rank}]  using "
                f"GPU {rank % job.gpus} to perform barrier as devices used by this process are currently unknown. This can "
                "potentially cause a hang if this rank to GPU mapping is incorrect.Specify device_ids in barrier() to force "
                "use of a particular device,or call init_process_group() with a device_id."
            )
    else:
        # torch 1.x's words for the same guess
        yield (
            f"[W ProcessGroupNCCL.cpp:2156] Rank {rank} using GPU {rank % job.gpus} to perform barrier as devices used "
            "by this process are currently unknown. This can potentially cause a hang if this rank to GPU mapping is "
            "incorrect.Specify device_ids in barrier() to force use of a particular device."
        )
        yield (
            f"[W socket.cpp:663] [c10d] The client socket has failed to connect to [{job.hosts[0]}]:29500 "
            "(errno: 99 - Cannot assign requested address)."
        )
        yield f"[I ProcessGroupNCCL.cpp:{835}] [Rank {rank}] ProcessGroupNCCL initialization options:NCCL_ASYNC_ERROR_HANDLING: 1, NCCL_DESYNC_DEBUG: 0, NCCL_ENABLE_TIMING: 0, NCCL_BLOCKING_WAIT: 0, TIMEOUT(ms): 1800000, USE_HIGH_PRIORITY_STREAM: 0, TORCH_DISTRIBUTED_DEBUG: OFF, NCCL_DEBUG: INFO"
        yield f"[I ProcessGroupNCCL.cpp:{842}] [Rank {rank}] NCCL watchdog thread started!"
        yield f"INFO:torch.distributed.distributed_c10d:Added key: store_based_barrier_key:1 to store for rank: {rank}"
        yield f"INFO:torch.distributed.distributed_c10d:Rank {rank}: Completed store-based barrier for key:store_based_barrier_key:1 with {job.world} nodes."


def rank0_config(framework: str) -> Iterator[str]:
    """Configuration dumps rank 0 prints: keys named timeout, error, oom, kill, fail."""
    if framework == "deepspeed":
        yield "[2024-06-03 10:12:09,004] [INFO] [logging.py:96:log_dist] [Rank 0] DeepSpeed info: version=0.14.2, git-hash=unknown, git-branch=unknown"
        yield "[2024-06-03 10:12:09,311] [INFO] [config.py:984:print] DeepSpeedEngine configuration:"
        for k, v in (
            (
                "activation_checkpointing_config",
                '{"partition_activations": false, "contiguous_memory_optimization": false, "cpu_checkpointing": false, "number_checkpoints": null, "synchronize_checkpoint_boundary": false, "profile": false}',
            ),
            ("checkpoint_parallel_write_pipeline", "False"),
            ("comms_config", "<deepspeed.comm.config.DeepSpeedCommsConfig object at 0x7f1c2c2e3d90>"),
            ("elasticity_enabled", "False"),
            (
                "flops_profiler_config",
                '{"enabled": false, "recompute_fwd_factor": 0.0, "profile_step": 1, "module_depth": -1, "top_modules": 1, "detailed": true, "output_file": null}',
            ),
            (
                "nebula_config",
                '{"enabled": false, "persistent_storage_path": null, "persistent_time_interval": 100, "num_of_version_in_retention": 2, "enable_nebula_load": true, "load_path": null}',
            ),
            ("timers_config", "enabled=True synchronized=True"),
            ("wall_clock_breakdown", "False"),
            (
                "zero_config",
                "stage=2 contiguous_gradients=True reduce_scatter=True reduce_bucket_size=500,000,000 overlap_comm=True offload_param=None offload_optimizer=None",
            ),
            ("zero_enabled", "True"),
        ):
            yield f"[2024-06-03 10:12:09,312] [INFO] [config.py:988:print]   {k} {'.' * max(2, 30 - len(k))} {v}"
        yield "Using /root/.cache/torch_extensions/py311_cu121 as PyTorch extensions root..."
        yield "Detected CUDA files, patching ldflags"
        yield "ninja: no work to do."
        yield "Loading extension module fused_adam..."
        yield "Time to load fused_adam op: 0.1128 seconds"
    if framework in ("accelerate", "torchrun"):
        yield "TrainingArguments("
        for k, v in (
            ("_n_gpu", "1"),
            ("dataloader_num_workers", "4"),
            ("ddp_backend", "None"),
            ("ddp_find_unused_parameters", "None"),
            ("ddp_timeout", "1800"),
            ("eval_strategy", "steps"),
            ("gradient_checkpointing", "True"),
            ("log_level", "passive"),
            ("log_on_each_node", "True"),
            ("logging_nan_inf_filter", "True"),
            ("save_on_each_node", "False"),
            ("skip_memory_metrics", "True"),
        ):
            yield f"{k}={v},"
        yield ")"
    yield (
        "config: {'timeout': 1800, 'max_error_rate': 0.01, 'oom_retry': False, 'kill_on_nan': True, "
        "'fail_fast': False, 'nccl_debug': 'WARN', 'abort_on_error': False}"
    )


def rank_warnings(rank: int, modern_torch: bool) -> Iterator[str]:
    """The warnings a rank of a healthy run prints once training starts."""
    if modern_torch:
        yield (
            "/workspace/train.py:142: FutureWarning: `torch.cuda.amp.GradScaler(args...)` is deprecated. Please "
            "use `torch.amp.GradScaler('cuda', args...)` instead."
        )
        yield "  scaler = torch.cuda.amp.GradScaler()"
        yield (
            "/usr/local/lib/python3.11/dist-packages/torch/utils/checkpoint.py:295: FutureWarning: "
            "`torch.cpu.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cpu', args...)` "
            "instead."
        )
    yield (
        "/usr/local/lib/python3.11/dist-packages/torch/utils/checkpoint.py:464: UserWarning: torch.utils.checkpoint: "
        "the use_reentrant parameter should be passed explicitly. In version 2.4 we will raise an exception if "
        "use_reentrant is not passed. use_reentrant=False is recommended, but if you need to preserve the current "
        "default behavior, you can pass use_reentrant=True. Refer to docs for more details on the differences "
        "between the two variants."
    )
    if rank == 0:
        yield (
            "/usr/local/lib/python3.11/dist-packages/torch/nn/modules/module.py:1747: UserWarning: Attempting to "
            "run cuBLAS, but there was no current CUDA context! Attempting to set the primary context... "
            "(Triggered internally at ../aten/src/ATen/cuda/CublasHandlePool.cpp:135.)"
        )
        yield (
            f"[rank{rank}]:[W603 10:12:20.104501245 reducer.cpp:1400] Warning: find_unused_parameters=True was "
            "specified in DDP constructor, but did not find any unused parameters in the forward pass. This flag "
            "results in an extra traversal of the autograd graph every iteration,  which can adversely affect "
            "performance. If your model indeed never has any unused parameters in the forward pass, consider "
            "turning this flag off. Note that this warning may be a false positive if your model has flow control "
            "causing later iterations to have unused parameters. (function operator())"
        )
        yield (
            "/usr/local/lib/python3.11/dist-packages/torch/optim/lr_scheduler.py:143: UserWarning: Detected call of "
            "`lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you should call them in "
            "the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will result "
            "in PyTorch skipping the first value of the learning rate schedule."
        )


# Lines of healthy runs whose words a loose rule reads as a failure: a download or a logger retrying, a
# loss scaler skipping a step, an allocator under pressure, deprecations naming error-handling settings,
# NCCL's echo of settings whose names hold TIMEOUT or ERROR, a driver-shutdown warning at exit.
NOISE = (
    "'(ReadTimeoutError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Read timed out. (read "
    "timeout=10)\"), '(Request ID: 0b3f7d2a-5c1e-4f2a-9d11-2f6c3a1b7e90)')' thrown while requesting HEAD "
    "https://huggingface.co/meta-llama/Llama-3.1-8B/resolve/main/config.json",
    "Retrying in 1s [Retry 1/5].",
    "wandb: Network error (ReadTimeout), entering retry loop.",
    "wandb: WARNING Connection lost, will retry in 2 seconds: failed to connect to api.wandb.ai",
    "Failed to fetch the latest checkpoint index, will retry (attempt 1/3)",
    "[2024-06-03 10:13:02,118] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping "
    "step. Attempted loss scale: 65536, reducing to 32768",
    "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0",
    "[2024-06-03 10:13:05,410] [WARNING] [stage3.py:2069:step] 1 pytorch allocator cache flushes since last "
    "step. this happens when there is high memory pressure and is detrimental to performance. if this is "
    "happening frequently consider adjusting settings to reduce memory consumption. If you are unable to make "
    "the cache flushes go away consider adding get_accelerator().empty_cache() calls in your training loop to "
    "ensure that all ranks flush their caches at the same time",
    "[W Utils.hpp:135] Warning: Environment variable NCCL_ASYNC_ERROR_HANDLING is deprecated; use "
    "TORCH_NCCL_ASYNC_ERROR_HANDLING instead (function getCvarInt)",
    "[W Utils.hpp:164] Warning: Environment variable NCCL_BLOCKING_WAIT is deprecated; use "
    "TORCH_NCCL_BLOCKING_WAIT instead (function getCvarBool)",
    "gpu-node-01:4242:4242 [0] NCCL INFO NCCL_IB_TIMEOUT set by environment to 22.",
    "gpu-node-01:4242:4242 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0",
    "gpu-node-01:4242:4242 [0] NCCL INFO NCCL_DEBUG_SUBSYS set by environment to INIT,NET.",
    "/usr/local/lib/python3.11/dist-packages/torch/utils/data/dataloader.py:617: UserWarning: This DataLoader "
    "will create 16 worker processes in total. Our suggested max number of worker in current system is 8, which "
    "is smaller than what this DataLoader is going to create. Please be aware that excessive worker creation "
    "might get DataLoader running slow or even freeze, lower the worker number to avoid potential "
    "slowness/freeze if necessary.",
    "Token indices sequence length is longer than the specified maximum sequence length for this model (1024 > "
    "512). Running this sequence through the model will result in indexing errors",
    "Map (num_proc=8): 100%|██████████| 5000/5000 [00:03<00:00, 1412.55 examples/s]",
    "Filter (num_proc=8): 100%|██████████| 5000/5000 [00:01<00:00, 3120.02 examples/s, dropped=0, oom=0]",
    "W0603 10:13:11.204000 140213 torch/_dynamo/convert_frame.py:844] torch._dynamo hit config.cache_size_limit (8)",
    "[W CUDAGuardImpl.h:119] Warning: CUDA warning: driver shutting down (function uncheckedSetDevice)",
    "gpu-node-01:4242:4242 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
    "gpu-node-01:4242:4242 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (no module)",
    "gpu-node-01:4242:4242 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to NVL",
    "export NCCL_DEBUG=WARN  # only errors and warnings",
    "TORCH_DISTRIBUTED_DEBUG=DETAIL TORCH_SHOW_CPP_STACKTRACES=1 TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=600",
    "{'auto_find_batch_size': True, 'cuda_oom_retries': 3, 'nccl_timeout_s': 1800, 'on_error': 'raise'}",
)


def training(rnd: random.Random, steps: int) -> Iterator[str]:
    loss = 2.31
    yield from NOISE[:12]
    for s in range(1, steps + 1):
        loss *= 0.97
        pct = 100 * s // steps
        yield (
            f"Epoch 0: {pct:3d}%|{'█' * (pct // 10):<10}| {s}/{steps} [00:{s:02d}<00:{steps - s:02d},  "
            f"1.{rnd.randrange(10, 99)}it/s, loss={loss:.4f}, v_num=0, oom_skipped=0, killed_samples=0]"
        )
        if s % 5 == 0:
            yield (
                f"{{'loss': {loss:.4f}, 'grad_norm': {rnd.uniform(0.2, 0.4):.4f}, 'learning_rate': "
                f"{9.8e-06 - s * 1e-8:.6e}, 'epoch': {s / steps:.2f}}}"
            )
    yield from NOISE[12:]
    yield "Evaluating: 100%|██████████| 50/50 [00:05<00:00,  9.71it/s]"
    yield f"{{'eval_loss': {loss * 1.05:.4f}, 'eval_runtime': 5.15, 'eval_samples_per_second': 155.2, 'epoch': 1.0}}"


def rank_end(job: _Job, rank: int, modern_torch: bool) -> Iterator[str]:
    if rank == 0:
        yield "`Trainer.fit` stopped: `max_epochs=1` reached."
    if modern_torch:
        yield (
            f"[rank{rank}]:[W603 10:14:40.118470922 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has "
            "NOT been destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should "
            "call destroy_process_group to ensure that any pending NCCL operations have finished in this process. "
            "In rare cases this process can exit before this point and block the progress of another member of the "
            "process group. This constraint has always been present,  but this warning has only recently been added "
            "since PyTorch 2.4 (function operator())"
        )


def launcher_end(job: _Job, framework: str, node: int, modern_torch: bool) -> Iterator[str]:
    if framework == "deepspeed":
        for lr in range(job.gpus):
            yield f"[2024-06-03 10:14:41,{100 + lr}] [INFO] [launch.py:347:main] Process {job.pids[node * job.gpus + lr]} exits successfully."
        return
    if modern_torch:
        yield (
            "I0603 10:14:41.305000 140213 torch/distributed/elastic/agent/server/api.py:879] [default] worker group "
            "successfully finished. Waiting 300 seconds for other agents to finish."
        )
        yield (
            "I0603 10:14:41.306000 140213 torch/distributed/elastic/agent/server/api.py:932] Local worker group "
            "finished (WorkerState.SUCCEEDED). Waiting 300 seconds for other agents to finish"
        )
        yield "I0603 10:14:41.307000 140213 torch/distributed/elastic/agent/server/api.py:946] Done waiting for other agents. Elapsed: 0.0012 seconds"
        return
    yield (
        "INFO:torch.distributed.elastic.agent.server.api:[default] worker group successfully finished. Waiting 300 "
        "seconds for other agents to finish."
    )
    yield (
        "INFO:torch.distributed.elastic.agent.server.api:Local worker group finished (WorkerState.SUCCEEDED). "
        "Waiting 300 seconds for other agents to finish"
    )
    yield "INFO:torch.distributed.elastic.agent.server.api:Done waiting for other agents. Elapsed: 0.0013 seconds"


def _interleave(rnd: random.Random, streams: list[list[Rec]]) -> list[Rec]:
    """Several processes' lines as one stream: each keeps its order, the picks between them are random."""
    out: list[Rec] = []
    pos = [0] * len(streams)
    live = [i for i, s in enumerate(streams) if s]
    while live:
        i = rnd.choice(live)
        take = rnd.randrange(1, 6)
        out.extend(streams[i][pos[i] : pos[i] + take])
        pos[i] += take
        if pos[i] >= len(streams[i]):
            live.remove(i)
    return out


def records(
    nccl: str = "2.21.5",
    framework: str = "torchrun",
    nodes: int = 2,
    gpus: int = 8,
    seed: int = 0,
    socket_ifaces: tuple[str, ...] = (),
    steps: int = 20,
) -> list[Rec]:
    """The job's lines in the order one merged log shows them."""
    job = _Job(nodes, gpus, seed, nccl, socket_ifaces)
    # torch 2.4+ ships NCCL 2.20+: its glog-style agent and rank-prefixed warnings; torch 2.1-2.3 (NCCL
    # 2.18) logs the agent as "[2024-03-12 08:22:56,575] torch.distributed.elastic.agent.server.api: [INFO] ",
    # torch 1.x-2.0 (NCCL 2.10) as "INFO:torch.distributed.elastic.agent.server.api:".
    modern = _v(nccl) >= (2, 21)
    mid = (2, 18) <= _v(nccl) < (2, 21)
    out: list[Rec] = [Rec(e, 0) for e in ENV_DUMP]
    for n in range(nodes):
        out.extend(Rec(_agent_era(t, mid), n) for t in launcher_start(job, framework, n, modern))
    starts = [
        [Rec(t, job.node_of(r), r) for t in rank_start(job, framework, r, modern)] for r in range(job.world)
    ]
    out.extend(_interleave(job.rnd, starts))
    out.extend(Rec(t, 0, 0) for t in rank0_config(framework))
    inits = [[Rec(t, job.node_of(r), r) for t in nccl_init(job, r)] for r in range(job.world)]
    out.extend(_interleave(job.rnd, inits))
    warns = [[Rec(t, job.node_of(r), r) for t in rank_warnings(r, modern)] for r in range(job.world)]
    out.extend(_interleave(job.rnd, warns))
    out.extend(Rec(t, 0, 0) for t in training(job.rnd, steps))
    ends = [
        [Rec(t, job.node_of(r), r) for t in [*rank_end(job, r, modern), *nccl_teardown(job, r)]]
        for r in range(job.world)
    ]
    out.extend(_interleave(job.rnd, ends))
    for n in range(nodes):
        out.extend(Rec(_agent_era(t, mid), n) for t in launcher_end(job, framework, n, modern))
    return out


_OLD_LOGGING = re.compile(r"^(INFO|WARNING):(torch\.[\w.]+):(.*)$")


def _agent_era(line: str, mid: bool) -> str:
    """An agent record of logging's default format, in torch 2.1-2.3's format when `mid`."""
    m = _OLD_LOGGING.match(line) if mid else None
    return f"[2024-06-03 10:12:01,517] {m.group(2)}: [{m.group(1)}] {m.group(3)}" if m else line


def _prefixed(rec: Rec, prefix: str, k: int, hosts: list[str], gpus: int) -> str:
    if prefix == "srun" and rec.rank is not None:
        return f"{rec.rank}: {rec.text}"
    if prefix == "pdsh":
        return f"{hosts[rec.node]}: {rec.text}"
    if prefix == "tee" and rec.rank is not None:
        return f"[default{rec.rank % gpus}]:{rec.text}"
    if prefix == "mpirun" and rec.rank is not None:  # Open MPI's --tag-output
        return f"[1,{rec.rank}]<stdout>:{rec.text}"
    if prefix == "kubectl":  # kubectl logs --prefix, one pod per node
        return f"[pod/trainer-worker-{rec.node}/pytorch] {rec.text}"
    if prefix == "timestamps":
        return f"2024-06-03T10:{12 + k // 3000:02d}:{(k // 50) % 60:02d}.{k % 1000:03d}412931Z {rec.text}"
    return rec.text


def healthy_log(
    nccl: str = "2.21.5",
    prefix: str = "none",
    framework: str = "torchrun",
    nodes: int = 2,
    gpus: int = 8,
    seed: int = 0,
    socket_ifaces: tuple[str, ...] = (),
) -> str:
    """The whole log of a job that succeeded, one string (lines end in "\\n")."""
    recs = records(nccl, framework, nodes, gpus, seed, socket_ifaces)
    hosts = [f"gpu-node-{n + 1:02d}" for n in range(nodes)]
    return "".join(_prefixed(r, prefix, k, hosts, gpus) + "\n" for k, r in enumerate(recs))


def all_variants() -> Iterator[tuple[str, str]]:
    """(name, log) of every NCCL wording x framework, each behind one of the prefixes in turn."""
    k = 0
    for nccl in NCCL_VERSIONS:
        for fw in FRAMEWORKS:
            prefix = PREFIXES[k % len(PREFIXES)]
            k += 1
            yield f"nccl{nccl}-{fw}-{prefix}", healthy_log(nccl, prefix, fw, seed=k)


def healthy_lines() -> list[str]:
    """The distinct lines of every variant, and of NCCL on sockets beside docker bridges."""
    lines: dict[str, None] = {}
    for _name, log in all_variants():
        for ln in log.splitlines():
            lines.setdefault(ln)
    for log in (healthy_log(v, socket_ifaces=("eth0", "docker0", "br-05ab815fa14e")) for v in NCCL_VERSIONS):
        for ln in log.splitlines():
            lines.setdefault(ln)
    return list(lines)


def _row_report() -> None:
    """Every rule row whose pattern matches a healthy line at all, with one such line."""
    from pgdoctor.diagnose.rules import MODULES

    lines = healthy_lines()
    print(f"{len(lines)} distinct healthy lines")
    for mod in MODULES:
        for row in getattr(mod, "SIGNATURES", ()):
            hits = [ln for ln in lines if row.pattern.search(ln)]
            if hits:
                print(
                    f"{mod.__name__.rsplit('.', 1)[-1]}: {row.name!r} ({row.code or '-'}, tier {row.tier}): "
                    f"{len(hits)} line(s), e.g. {hits[0][:140]!r}"
                )


if __name__ == "__main__":
    _row_report()
