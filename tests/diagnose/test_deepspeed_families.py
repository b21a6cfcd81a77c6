"""DeepSpeed source sweep (s7): every message DeepSpeed prints that says why a distributed job failed or is
about to, read in deepspeed 0.9.5, 0.14.4 and 0.19.8 (PyPI sdists): launcher/runner.py (hostfile, resource
filters, CUDA_VISIBLE_DEVICES, ssh check, master address), launcher/launch.py (rank exits, sigkill_handler),
launcher/multinode_runner.py (OpenMPI/MPICH/IMPI/MVAPICH/Slurm validate_args), launcher/launcher_helper.py,
comm/comm.py (init_distributed, mpi_discovery), accelerator/real_accelerator.py, runtime/engine.py
(LOCAL_RANK checks, checkpoint DP world size), elasticity/elasticity.py, runtime/zero/ (stage_1_and_2.py,
stage3.py, partition_parameters.py, partitioned_param_coordinator.py, utils.py), runtime/pipe/topology.py,
and pdsh's exit line. Each message as a user pastes it: behind DeepSpeed's logger prefix
"[2024-05-01 12:00:00,123] [LEVEL] [file.py:N:func]" (alone and behind torchrun's "[default0]:"), or raised
(a traceback through the DeepSpeed frame, and the exception line alone). `accepted` is the set of classes a
right answer may have (None: the line must stay silent). ZeRO-3's "allocator cache flushes" and "still have
inflight params" are another sweep's and are not here."""

from __future__ import annotations

from typing import Optional

import pytest

from tests.helpers.diagnose_root import failure_findings

N = None
PC = "process_crash"
TS = "[2024-05-01 12:00:00,123]"
# (id, accepted classes, shape, where, message); shape "log": where = LEVEL:file.py:line:func; "raise":
# where = Exception:path under deepspeed/:line:func; "print" / "multi": the message is the whole paste.
CASES = [
    # ---- launcher/runner.py (0.9.5, 0.14.4, 0.19.8)
    (
        "run-cvd-ignored-09",
        {"driver_env"},
        "print",
        "",
        "Detected CUDA_VISIBLE_DEVICES=2,4,5,7 but ignoring it because one or several of --include/--exclude/--num_gpus/--num_nodes cl args were used. If you want to use CUDA_VISIBLE_DEVICES don't pass any of these arguments to deepspeed.",
    ),
    (
        "run-cvd-ignored-019",
        {"driver_env"},
        "print",
        "",
        "Detected VISIBLE_DEVICES=0,1 but ignoring it because one or several of --include/--exclude/--num_gpus/--num_nodes cl args were used. If you want to use CUDA_VISIBLE_DEVICES don't pass any of these arguments to deepspeed.",
    ),
    (
        "run-cvd-setting",
        {N},
        "print",
        "",
        "Detected CUDA_VISIBLE_DEVICES=0,1,2,3: setting --include=localhost:0,1,2,3",
    ),
    (
        "run-cvd-setting-019",
        {N},
        "print",
        "",
        "Detected VISIBLE_DEVICES=0,1: setting --include=localhost:0,1",
    ),
    (
        "run-no-hostfile",
        {N},
        "log",
        "WARNING:runner.py:202:fetch_hostfile",
        "Unable to find hostfile, will proceed with training with local resources only.",
    ),
    (
        "run-hostfile-dup",
        {"driver_env", "rendezvous"},
        "raise",
        "ValueError:launcher/runner.py:232:_parse_hostfile",
        "Hostfile contains multiple entries for worker-1, unable to proceed with launching",
    ),
    (
        "run-hostfile-bad",
        {"driver_env", "rendezvous"},
        "raise",
        "ValueError:launcher/runner.py:236:_parse_hostfile",
        "Hostfile contains a bad entry: worker-1 slot=8, unable to proceed with launching",
    ),
    (
        "run-hostfile-bad-log",
        {"driver_env", "rendezvous"},
        "log",
        "ERROR:runner.py:235:_parse_hostfile",
        "Bad hostfile text: ['worker-1 slot=8\\n', 'worker-2 slots=8\\n']",
    ),
    (
        "run-hostfile-empty",
        {"driver_env", "rendezvous"},
        "raise",
        "ValueError:launcher/runner.py:240:_parse_hostfile",
        "Hostfile is empty or not formatted correctly, unable to proceed with launching.",
    ),
    (
        "run-host-not-found",
        {"driver_env", "rendezvous"},
        "raise",
        "ValueError:launcher/runner.py:299:parse_resource_filter",
        "Hostname 'worker-3' not found in hostfile",
    ),
    (
        "run-no-slot",
        {"driver_env", "rendezvous"},
        "raise",
        "ValueError:launcher/runner.py:302:parse_resource_filter",
        "No slot '9' specified on host 'localhost'",
    ),
    (
        "run-inc-exc",
        {"driver_env", "rendezvous"},
        "raise",
        "ValueError:launcher/runner.py:276:parse_resource_filter",
        "include_str and exclude_str are mutually exclusive.",
    ),
    (
        "run-numgpus-include",
        {"driver_env", "rendezvous"},
        "raise",
        "ValueError:launcher/runner.py:411:main",
        "Cannot specify num_nodes/gpus with include/exclude",
    ),
    (
        "run-no-gpu",
        {"driver_env"},
        "raise",
        "RuntimeError:launcher/runner.py:418:main",
        "Unable to proceed, no GPU resources available",
    ),
    (
        "run-nodes-gt1",
        {"driver_env", "rendezvous"},
        "raise",
        "ValueError:launcher/runner.py:424:main",
        "Num nodes is >1 but no extra nodes available via hostfile",
    ),
    (
        "run-ssh-unreachable",
        {"rendezvous"},
        "raise",
        "RuntimeError:launcher/runner.py:439:main",
        "Using hostfile at /job/hostfile but host=worker-1 was not reachable via ssh. If you are running with a single node please remove /job/hostfile or setup passwordless ssh.",
    ),
    (
        "run-master-addr-log",
        {"rendezvous"},
        "log",
        "ERROR:runner.py:454:main",
        "Unable to detect suitable master address via 'hostname -I', please manually specify one via --master_addr",
    ),
    (
        "run-master-addr",
        {"rendezvous"},
        "raise",
        "RuntimeError:launcher/runner.py:460:main",
        "Unable to detect suitable master address via `hostname -I`, please manually specify one via --master_addr",
    ),
    (
        "run-launcher-missing",
        {"driver_env"},
        "raise",
        "RuntimeError:launcher/runner.py:533:main",
        "launcher 'pdsh' not installed.",
    ),
    (
        "run-minmax",
        {"driver_env", "rendezvous"},
        "raise",
        "RuntimeError:launcher/runner.py:381:parse_num_nodes",
        "MIN:MAX format is only supported in elastic training",
    ),
    (
        "run-no-ssh-node-rank",
        {"driver_env", "rendezvous"},
        "raise",
        "AssertionError:launcher/runner.py:532:main",
        "Launching training without ssh, but --node_rank is not set correctly.",
    ),
    ("run-using-ip", {N}, "log", "INFO:runner.py:568:main", "Using IP address of 10.0.0.1 for node worker-0"),
    (
        "run-cmd",
        {N},
        "log",
        "INFO:runner.py:570:main",
        "cmd = pdsh -S -f 1024 -w worker-0,worker-1 export NCCL_DEBUG=INFO; cd /workspace; /usr/bin/python -u -m deepspeed.launcher.launch --world_info=eyJ3b3JrZXItMCI6IFswXX0= --node_rank=%n --master_addr=10.0.0.1 --master_port=29500 train.py",
    ),
    ("run-world-info", {N}, "log", "INFO:runner.py:555:main", "deepspeed_env file = /root/.deepspeed_env"),
    # ---- launcher/launch.py
    (
        "launch-exit-1",
        {PC},
        "log",
        "ERROR:launch.py:325:sigkill_handler",
        "['/usr/bin/python3', '-u', 'train.py', '--local_rank=3', '--deepspeed', 'ds.json'] exits with return code = 1",
    ),
    (
        "launch-exit-m9",
        {PC, "host_oom"},
        "log",
        "ERROR:launch.py:321:sigkill_handler",
        "['/usr/bin/python', '-u', 'train.py', '--local_rank=7'] exits with return code = -9",
    ),
    (
        "launch-exit-m11",
        {PC},
        "log",
        "ERROR:launch.py:259:sigkill_handler",
        "['/usr/bin/python', '-u', 'train.py', '--local_rank=0'] exits with return code = -11",
    ),
    (
        "launch-exit-m6",
        {PC},
        "log",
        "ERROR:launch.py:325:sigkill_handler",
        "['/usr/bin/python', '-u', 'train.py', '--local_rank=2'] exits with return code = -6",
    ),
    (
        "launch-kill-then-exit",
        {PC},
        "multi",
        "",
        "[2024-05-01 12:00:00,123] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 4101\n"
        "[2024-05-01 12:00:00,124] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 4102\n"
        "[2024-05-01 12:00:00,130] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', '--local_rank=1'] exits with return code = 1",
    ),
    ("launch-exit-ok", {N}, "log", "INFO:launch.py:351:main", "Process 4101 exits successfully."),
    (
        "launch-spawned",
        {N},
        "log",
        "INFO:launch.py:256:main",
        "process 4101 spawned with command: ['/usr/bin/python', '-u', 'train.py', '--local_rank=0']",
    ),
    (
        "launch-world",
        {N},
        "log",
        "INFO:launch.py:146:main",
        "WORLD INFO DICT: {'localhost': [0, 1, 2, 3, 4, 5, 6, 7]}",
    ),
    ("launch-nnodes", {N}, "log", "INFO:launch.py:152:main", "nnodes=2, num_local_procs=8, node_rank=0"),
    (
        "launch-setting-cvd",
        {N},
        "log",
        "INFO:launch.py:168:main",
        "Setting CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
    ),
    (
        "launch-mapping",
        {N},
        "log",
        "INFO:launch.py:163:main",
        "global_rank_mapping=defaultdict(<class 'list'>, {'localhost': [0, 1, 2, 3]})",
    ),
    ("launch-dist-ws", {N}, "log", "INFO:launch.py:164:main", "dist_world_size=16"),
    ("launch-nccl-env", {N}, "log", "INFO:launch.py:139:main", "0 NCCL_VERSION=2.18.3"),
    (
        "launch-sigterm",
        {PC, N},
        "log",
        "INFO:launch.py:328:sigkill_handler",
        "Main process received SIGTERM, exiting",
    ),
    (
        "launch-helper-rank",
        {"rendezvous"},
        "raise",
        "OSError:launcher/launcher_helper.py:64:env_mapping",
        "rank number is not in current env!",
    ),
    (
        "launch-helper-rank2",
        {"rendezvous"},
        "raise",
        "OSError:launcher/launcher_helper.py:62:env_mapping",
        "rank number doesn't match!",
    ),
    (
        "launch-helper-lrank",
        {"rendezvous"},
        "raise",
        "OSError:launcher/launcher_helper.py:73:env_mapping",
        "local_rank number doesn't match!",
    ),
    (
        "mpi-same-devices",
        {"driver_env", "rendezvous"},
        "raise",
        "ValueError:launcher/multinode_runner.py:199:validate_args",
        "MPICH requires same number of devices per node",
    ),
    (
        "mpi-impi-same",
        {"driver_env", "rendezvous"},
        "raise",
        "ValueError:launcher/multinode_runner.py:271:validate_args",
        "Intel MPI requires same number of devices per node",
    ),
    (
        "mpi-mvapich-same",
        {"driver_env", "rendezvous"},
        "raise",
        "ValueError:launcher/multinode_runner.py:434:validate_args",
        "mvapich requires same number of devices per node",
    ),
    (
        "mpi-no-include",
        {"driver_env", "rendezvous"},
        "raise",
        "ValueError:launcher/multinode_runner.py:137:validate_args",
        "openmpi backend does not support worker include/exclusion",
    ),
    (
        "mpi-no-limit",
        {"driver_env", "rendezvous"},
        "raise",
        "ValueError:launcher/multinode_runner.py:139:validate_args",
        "openmpi backend does not support limiting num nodes/gpus",
    ),
    (
        "pdsh-ssh-refused",
        {"rendezvous"},
        "print",
        "",
        "worker-1: ssh: connect to host worker-1 port 22: Connection refused\npdsh@worker-0: worker-1: ssh exited with exit code 255",
    ),
    ("pdsh-exit-1", {PC}, "print", "", "pdsh@worker-0: worker-1: ssh exited with exit code 1"),
    (
        "pdsh-perm-denied",
        {"rendezvous"},
        "print",
        "",
        "worker-1: Permission denied (publickey,password).\npdsh@worker-0: worker-1: ssh exited with exit code 255",
    ),
    # ---- comm/comm.py, utils/distributed.py
    (
        "comm-not-launchers",
        {N},
        "log",
        "INFO:comm.py:652:init_distributed",
        "Not using the DeepSpeed or dist launchers, attempting to detect MPI environment...",
    ),
    (
        "comm-init-backend",
        {N},
        "log",
        "INFO:comm.py:668:init_distributed",
        "Initializing TorchBackend in DeepSpeed with backend nccl",
    ),
    ("comm-cdb", {N}, "log", "INFO:comm.py:637:init_distributed", "cdb=None"),
    (
        "comm-already",
        {N},
        "log",
        "INFO:comm.py:662:init_distributed",
        "Distributed backend already initialized",
    ),
    (
        "comm-mpi-discovery",
        {N},
        "log",
        "INFO:comm.py:702:mpi_discovery",
        "Discovered MPI settings of world_rank=3, local_rank=3, world_size=8, master_addr=10.0.0.1, master_port=29500",
    ),
    (
        "comm-mpi-rank",
        {"rendezvous"},
        "raise",
        "AssertionError:comm/comm.py:708:mpi_discovery",
        "MPI rank 0 does not match torch rank 3",
    ),
    (
        "comm-mpi-ws",
        {"rendezvous"},
        "raise",
        "AssertionError:comm/comm.py:709:mpi_discovery",
        "MPI world size 1 does not match torch world size 8",
    ),
    (
        "comm-mpi4py",
        {"driver_env", "rendezvous", N},
        "raise",
        "ModuleNotFoundError:comm/comm.py:681:mpi_discovery",
        "No module named 'mpi4py'",
    ),
    (
        "comm-not-set",
        {"driver_env", "nccl_usage", "rendezvous"},
        "raise",
        "AssertionError:comm/comm.py:183:broadcast",
        "DeepSpeed backend not set, please initialize it using init_process_group()",
    ),
    (
        "comm-aml",
        {N},
        "log",
        "INFO:comm.py:748:patch_aml_env_for_torch_nccl_backend",
        "NCCL_SOCKET_IFNAME original value = eth0",
    ),
    (
        "comm-rs-fallback",
        {N},
        "log",
        "WARNING:comm.py:266:reduce_scatter_fn",
        "unable to find torch.distributed.reduce_scatter_tensor. will fall back to torch.distributed.reduce_scatter which will result in suboptimal performance. please consider upgrading your pytorch installation.",
    ),
    (
        "comm-ag-fallback",
        {N},
        "log",
        "WARNING:comm.py:323:allgather_fn",
        "unable to find torch.distributed.all_gather_into_tensor. will fall back to torch.distributed.all_gather which will result in suboptimal performance. please consider upgrading your pytorch installation.",
    ),
    (
        "comm-dist-timeout",
        {"rendezvous"},
        "multi",
        "",
        'Traceback (most recent call last):\n  File "/workspace/train.py", line 20, in <module>\n    deepspeed.init_distributed()\n'
        '  File "/usr/local/lib/python3.10/dist-packages/deepspeed/comm/comm.py", line 670, in init_distributed\n    cdb = TorchBackend(dist_backend, timeout, init_method, rank, world_size)\n'
        '  File "/usr/local/lib/python3.10/dist-packages/deepspeed/comm/torch.py", line 121, in __init__\n    self.init_process_group(backend, timeout, init_method, rank, world_size)\n'
        '  File "/usr/local/lib/python3.10/dist-packages/deepspeed/comm/torch.py", line 149, in init_process_group\n    torch.distributed.init_process_group(backend,\n'
        "torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 1/2 clients joined.",
    ),
    # ---- accelerator
    (
        "acc-auto",
        {N},
        "log",
        "INFO:real_accelerator.py:203:get_accelerator",
        "Setting ds_accelerator to cuda (auto detect)",
    ),
    (
        "acc-override",
        {N},
        "log",
        "INFO:real_accelerator.py:161:get_accelerator",
        "Setting ds_accelerator to cuda (override)",
    ),
    (
        "acc-bad-name",
        {"driver_env"},
        "raise",
        "ValueError:accelerator/real_accelerator.py:98:get_accelerator",
        "DS_ACCELERATOR must be one of ['cuda', 'cpu', 'xpu', 'xpu.external', 'npu', 'mps', 'hpu', 'mlu']. Value \"gpu\" is not supported",
    ),
    (
        "acc-npu",
        {"driver_env"},
        "raise",
        "ValueError:accelerator/real_accelerator.py:81:get_accelerator",
        "NPU_Accelerator requires torch_npu, which is not installed on this system.",
    ),
    (
        "acc-xpu",
        {"driver_env"},
        "raise",
        "ValueError:accelerator/real_accelerator.py:66:get_accelerator",
        "XPU_Accelerator requires intel_extension_for_pytorch, which is not installed on this system.",
    ),
    # ---- engine
    (
        "eng-local-rank",
        {"rendezvous", "driver_env"},
        "raise",
        "AssertionError:runtime/engine.py:999:_do_args_sanity_check",
        "DeepSpeed requires the LOCAL_RANK environment variable, it is set by the deepspeed launcher, deepspeed.init_distributed, or the torch's launcher. If using a different launcher please ensure LOCAL_RANK is set prior to initializing deepspeed.",
    ),
    (
        "eng-ompi-lrank",
        {"rendezvous"},
        "raise",
        "AssertionError:runtime/engine.py:989:_set_distributed_vars",
        "LOCAL_RANK (0) != OMPI_COMM_WORLD_LOCAL_RANK (1), not sure how to proceed as we're seeing conflicting local rank info.",
    ),
    (
        "eng-ckpt-dp",
        {PC, N},
        "raise",
        "deepspeed.runtime.zero.utils.ZeRORuntimeException:runtime/engine.py:2949:_load_zero_checkpoint",
        "The checkpoint being loaded used a DP world size of 8 but the current world size is 16. Automatic adjustment of ZeRO's optimizer state partitioning with a new world size is not currently supported.",
    ),
    (
        "eng-elastic-ws",
        {PC, N, "rendezvous"},
        "raise",
        "deepspeed.elasticity.config.ElasticityIncompatibleWorldSize:elasticity/elasticity.py:349:compute_elastic_config",
        "World size (12) is not valid with the current list of valid GPU counts: [8, 16, 32]",
    ),
    (
        "eng-batch",
        {PC, N},
        "raise",
        "AssertionError:runtime/config.py:1000:_batch_assertion",
        "Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size 256 != 4 * 8 * 4",
    ),
    (
        "eng-dsinfo",
        {N},
        "log",
        "INFO:logging.py:96:log_dist",
        "[Rank 0] DeepSpeed info: version=0.14.4, git-hash=unknown, git-branch=unknown",
    ),
    (
        "eng-flops",
        {N},
        "log",
        "INFO:engine.py:1307:_configure_optimizer",
        "Using DeepSpeed Optimizer param name adamw as basic optimizer",
    ),
    (
        "eng-step",
        {N},
        "log",
        "INFO:logging.py:96:log_dist",
        "[Rank 0] step=10, skipped=0, lr=[1e-05], mom=[(0.9, 0.999)]",
    ),
    (
        "eng-overflow",
        {N},
        "log",
        "INFO:loss_scaler.py:183:update_scale",
        "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768",
    ),
    (
        "eng-timer",
        {N},
        "log",
        "INFO:timer.py:260:stop",
        "epoch=0/micro_step=20/global_step=20, RunningAvgSamplesPerSec=12.3, CurrSamplesPerSec=12.1, MemAllocated=10.2GB, MaxMemAllocated=30.1GB",
    ),
    (
        "eng-ckpt-load",
        {N},
        "log",
        "INFO:torch_checkpoint_engine.py:27:load",
        "[Torch] Loading checkpoint from /ckpt/global_step100/mp_rank_00_model_states.pt...",
    ),
    (
        "eng-ckpt-missing",
        {N},
        "log",
        "WARNING:engine.py:2800:load_checkpoint",
        "Unable to find latest file at /ckpt/latest, if trying to load latest checkpoint please ensure this file exists or pass an explicit checkpoint tag when loading a checkpoint.",
    ),
    # ---- ZeRO
    (
        "zero-disagree",
        {"collective_mismatch"},
        "raise",
        "RuntimeError:runtime/zero/utils.py:88:assert_ints_same_as_other_ranks",
        "disagreement between rank0 and rank3: rank0: [12, 13, 14], rank3: [12, 15, 14]",
    ),
    (
        "zero-tracing",
        {"collective_mismatch"},
        "raise",
        "RuntimeError:runtime/zero/partitioned_param_coordinator.py:339:fetch_sub_module",
        "tracing error at step 3: \nmodule id: 12, training: True\nexpected the next 2 parameters in the parameter fetch queue to be ({'id': 'name=layers.3.w:id=40', 'status': 'AVAILABLE'},) \nbut got \n ({'id': 'name=layers.4.w:id=44', 'status': 'NOT_AVAILABLE'},).",
    ),
    (
        "zero-reduced-twice",
        {"collective_mismatch", "nccl_usage"},
        "raise",
        "AssertionError:runtime/zero/stage_1_and_2.py:900:reduce_independent_p_g_buckets_and_remove_grads",
        "The parameter 112 has already been reduced. Gradient computed twice for this partition. Multiple gradient reduction is currently not supported",
    ),
    (
        "zero-unused",
        {"collective_mismatch", "nccl_usage", PC},
        "raise",
        "AssertionError:runtime/zero/stage_1_and_2.py:1298:complete_grad_norm_calculation_for_cpu_offload",
        "\n                        This assert indicates that your module has parameters that\n                        were not used in producing loss.\n                        You can avoid this assert by\n                        (1) enable ignore_unused_parameters option in zero_optimization config;\n                        (2) making sure all trainable parameters and `forward` function\n                            outputs participate in calculating loss.\n                    ",
    ),
    (
        "zero-scatter-size",
        {"collective_mismatch", PC, N},
        "raise",
        "RuntimeError:runtime/zero/stage3.py:1255:__reduce_and_partition_ipg_grads",
        "4096 != 2048 Cannot reduce scatter gradients whose size is not same as the params",
    ),
    (
        "zero-fp16-noaccel",
        {"driver_env"},
        "raise",
        "SystemError:runtime/zero/stage_1_and_2.py:165:__init__",
        "Accelerator is not detected, cannot perform low precision training (e.g., fp16, bf16).",
    ),
    (
        "zero-fp16-noaccel3",
        {"driver_env"},
        "raise",
        "SystemError:runtime/zero/stage3.py:142:__init__",
        "Cannot use fp16 without accelerator.",
    ),
    (
        "zero-init-comm",
        {"rendezvous", "nccl_usage", PC, N},
        "raise",
        "AssertionError:runtime/zero/partition_parameters.py:941:__init__",
        "Parameters cannot be scattered without initializing deepspeed.comm",
    ),
    ("zero-info-stage3", {N}, "log", "INFO:stage3.py:130:__init__", "Reduce bucket size 500000000"),
    ("zero-info-prefetch", {N}, "log", "INFO:stage3.py:131:__init__", "Prefetch bucket size 50000000"),
    (
        "zero-info-init",
        {N},
        "log",
        "INFO:partition_parameters.py:345:__exit__",
        "finished initializing model - num_params = 291, num_elems = 6.74B",
    ),
    ("zero-info-mem", {N}, "log", "INFO:utils.py:802:see_memory_usage", "Stage 3 initialize beginning"),
    (
        "zero-info-mem2",
        {N},
        "log",
        "INFO:utils.py:803:see_memory_usage",
        "MA 12.55 GB         Max_MA 12.55 GB         CA 12.57 GB         Max_CA 13 GB ",
    ),
    (
        "zero-info-cpu",
        {N},
        "log",
        "INFO:utils.py:810:see_memory_usage",
        "CPU Virtual Memory:  used = 61.33 GB, percent = 12.2%",
    ),
    ("zero-info-opt", {N}, "log", "INFO:stage_1_and_2.py:148:__init__", "Reduce bucket size 500,000,000"),
    ("zero-info-offload", {N}, "log", "INFO:stage_1_and_2.py:150:__init__", "CPU Offload: False"),
    ("zero-info-states", {N}, "log", "INFO:stage_1_and_2.py:543:__init__", "optimizer state initialized"),
    (
        "zero-info-unused",
        {N},
        "log",
        "INFO:config.py:988:print",
        "  zero_optimization ............ stage=3 contiguous_gradients=True reduce_scatter=True reduce_bucket_size=500000000 overlap_comm=True offload_param=None offload_optimizer=None",
    ),
    (
        "zero-warn-init-cfg",
        {N},
        "log",
        "WARNING:partition_parameters.py:931:__init__",
        "zero.Init: the `config` argument is deprecated. Please use `config_dict_or_path` instead.",
    ),
    (
        "zero-leaf",
        {PC, N},
        "raise",
        "RuntimeError:runtime/zero/stage3.py:1191:forward_post_hook",
        "A module cannot be set as a leaf module when it does not have any input tensors that require gradients and has output tensors that require gradients. This is because the gradient reduction hook will not be called in this case.",
    ),
    # ---- OOM through DeepSpeed frames
    (
        "oom-zero3",
        {"cuda_oom"},
        "multi",
        "",
        'Traceback (most recent call last):\n  File "/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/zero/stage3.py", line 2117, in step\n    self._optimizer_step(sub_group_id)\n'
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacty of 79.15 GiB of which 1.02 GiB is free.",
    ),
    (
        "oom-cpu-offload",
        {"host_oom"},
        "multi",
        "",
        'Traceback (most recent call last):\n  File "/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/zero/stage3.py", line 823, in _create_fp32_partitions\n    self.fp32_partitioned_groups_flat.append(self.fp16_partitioned_groups_flat[i].to(self.subgroup_to_device[i]).clone().float().detach())\n'
        "RuntimeError: [enforce fail at alloc_cpu.cpp:83] : DefaultCPUAllocator: can't allocate memory: you tried to allocate 27959886848 bytes. Error code 12 (Cannot allocate memory)",
    ),
    (
        "oom-pin",
        {"host_oom", "cuda_oom"},
        "multi",
        "",
        'Traceback (most recent call last):\n  File "/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/zero/stage_1_and_2.py", line 483, in __init__\n    self.single_partition_of_fp32_groups[i] = self.single_partition_of_fp32_groups[i].pin_memory()\n'
        "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
    ),
    # ---- pipeline
    (
        "pipe-topo",
        {PC, N},
        "raise",
        "ValueError:runtime/pipe/topology.py:125:get_coord",
        "rank 17 not found in topology.",
    ),
    (
        "pipe-info",
        {N},
        "log",
        "INFO:module.py:375:_partition_layers",
        "Partitioning pipeline stages with method parameters",
    ),
    ("pipe-info2", {N}, "log", "INFO:engine.py:145:__init__", "CONFIG: micro_batches=8 micro_batch_size=1"),
    (
        "pipe-stage-info",
        {N},
        "print",
        "",
        "stage=0 layers=18\n     0: EmbeddingPipe\n     1: ParallelTransformerLayerPipe",
    ),
    (
        "run-slurm-ids",
        {"driver_env", "rendezvous"},
        "raise",
        "ValueError:launcher/multinode_runner.py:380:validate_args",
        "slurm backend cannot select specific device ids, got {'worker-0': [0, 1]}",
    ),
    (
        "run-slurm-slots",
        {"driver_env", "rendezvous"},
        "raise",
        "ValueError:launcher/multinode_runner.py:384:validate_args",
        "slurm backend needs the same slot count on every host, got {8, 4}.",
    ),
    (
        "run-elastic-master",
        {"rendezvous"},
        "raise",
        "AssertionError:launcher/launch.py:190:main",
        "Master Addr is required when elastic training is enabled",
    ),
    (
        "acc-xpu-019",
        {"driver_env"},
        "raise",
        "ValueError:accelerator/real_accelerator.py:70:get_accelerator",
        "XPU_Accelerator requires PyTorch with XPU support: No module named 'torch.xpu'",
    ),
    (
        "acc-mlu",
        {"driver_env"},
        "log",
        "ERROR:real_accelerator.py:99:get_accelerator",
        "MLU_Accelerator requires torch_mlu, which is not installed on this system.",
    ),
    (
        "mpi4py-own",
        {"driver_env", PC, N},
        "multi",
        "",
        "Traceback (most recent call last):\n  File \"/workspace/run.py\", line 3, in <module>\n    from mpi4py import MPI\nModuleNotFoundError: No module named 'mpi4py'",
    ),
    (
        "comm-mpi4py-log",
        {"rendezvous"},
        "multi",
        "",
        "[2024-05-01 12:00:00,123] [INFO] [comm.py:652:init_distributed] Not using the DeepSpeed or dist launchers, attempting to detect MPI environment...\nTraceback (most recent call last):\n  File \"/workspace/train.py\", line 9, in <module>\n    deepspeed.init_distributed()\nModuleNotFoundError: No module named 'mpi4py'",
    ),
    ("pdsh-exit-0", {N}, "print", "", "pdsh@worker-0: worker-1: ssh exited with exit code 0"),
]
CASES += [
    # ---- round 2: engine's rank-agreement check, checkpoint loads, ZeRO-3 param state, torch errors under DeepSpeed frames
    (
        "eng-tag-assert",
        {"collective_mismatch"},
        "raise",
        "AssertionError:runtime/engine.py:3047:_checkpoint_tag_validation",
        "[rank=3] The checkpoint tag name 'global_step100_rank3' is not consistent across all ranks. Including rank unique information in checkpoint tag could cause issues when restoring with different world sizes.",
    ),
    (
        "eng-tag-warn",
        {"collective_mismatch"},
        "log",
        "WARNING:engine.py:3049:_checkpoint_tag_validation",
        "[rank=3] The checkpoint tag name '2024-05-01_12:00:01' is not consistent across all ranks. Including rank unique information in checkpoint tag could cause issues when restoring with different world sizes.",
    ),
    (
        "eng-ckpt-file-missing",
        {PC, N},
        "multi",
        "",
        'Traceback (most recent call last):\n  File "/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/engine.py", line 2990, in _get_all_zero_checkpoint_state_dicts\n    _state = self.checkpoint_engine.load(\n'
        '  File "/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/checkpoint_engine/torch_checkpoint_engine.py", line 28, in load\n    partition = torch.load(path, map_location=map_location)\n'
        "FileNotFoundError: [Errno 2] No such file or directory: '/ckpt/global_step500/zero_pp_rank_8_mp_rank_00_optim_states.pt'",
    ),
    (
        "eng-universal",
        {PC, N},
        "raise",
        "ValueError:runtime/engine.py:2747:_get_ckpt_name",
        "Invalid for universal checkpoint: /ckpt/latest_universal does not exist",
    ),
    (
        "eng-loss-scale-min",
        {PC, N},
        "raise",
        "Exception:runtime/fp16/loss_scaler.py:176:update_scale",
        "Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.",
    ),
    (
        "eng-overflow-fp16",
        {N},
        "log",
        "INFO:fused_optimizer.py:362:_update_scale",
        "[deepspeed] fp16 dynamic loss scale overflow! Skipping step. Attempted loss scale: 65536, reducing to 32768",
    ),
    (
        "eng-overflow-zero",
        {N},
        "log",
        "INFO:stage_1_and_2.py:1784:step",
        "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 4294967296, reducing to 2147483648",
    ),
    (
        "eng-untested-opt",
        {N},
        "log",
        "WARNING:engine.py:1179:_configure_optimizer",
        "**** You are using ZeRO with an untested optimizer, proceed with caution *****",
    ),
    (
        "eng-pp-overlap",
        {N},
        "log",
        "WARNING:engine.py:1505:_configure_zero_optimizer",
        "Pipeline parallelism does not support overlapped communication, will be disabled.",
    ),
    (
        "eng-nebula",
        {N},
        "log",
        "ERROR:engine.py:930:_configure_checkpointing",
        "No torch_nebula was found! Will fall back to torch.save. Details: No module named 'torch_nebula'",
    ),
    (
        "eng-save-failed",
        {PC, N},
        "log",
        "ERROR:engine.py:3270:save_checkpoint",
        "Failed saving model checkpoint to /ckpt with tag global_step100",
    ),
    (
        "zero3-expected-avail",
        {PC, N, "collective_mismatch"},
        "raise",
        "RuntimeError:runtime/zero/partition_parameters.py:48:wait",
        "expected param {'id': 12, 'status': 'NOT_AVAILABLE', 'numel': 0, 'ds_numel': 4096, 'shape': (0,), 'ds_shape': (64, 64), 'requires_grad': True, 'grad_shape': None, 'persist': True, 'active_sub_modules': {3}} to be available",
    ),
    (
        "zero3-still-flight",
        {PC, N, "collective_mismatch"},
        "raise",
        "RuntimeError:runtime/zero/partitioned_param_coordinator.py:412:release_sub_module",
        "param {'id': 7, 'status': 'INFLIGHT', 'numel': 4096, 'ds_numel': 4096} still in flight",
    ),
    (
        "zero3-registry",
        {PC, N, "collective_mismatch"},
        "raise",
        "RuntimeError:runtime/zero/partitioned_param_coordinator.py:56:push",
        "{'id': 7, 'status': 'INFLIGHT'} already in registry",
    ),
    (
        "zero3-trace-complete",
        {PC, N, "collective_mismatch"},
        "raise",
        "RuntimeError:runtime/zero/partitioned_param_coordinator.py:490:__all_gather_params",
        "expected trace to be complete",
    ),
    (
        "zero3-invalidate-alone",
        {N, "collective_mismatch"},
        "print",
        "",
        "Invalidate trace cache @ step 0 and module 0: cache has only 0 modules",
    ),
    (
        "zero3-invalidate-then-steps",
        {N},
        "print",
        "",
        "Invalidate trace cache @ step 0 and module 0: cache has only 0 modules\n[2024-05-01 12:00:00,123] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=0, lr=[1e-05], mom=[(0.9, 0.999)]",
    ),
    (
        "zero-none-grad",
        {PC, N},
        "raise",
        "AssertionError:runtime/zero/stage_1_and_2.py:955:average_tensor",
        "rank 2 - Invalid to reduce Param 118 with None gradient",
    ),
    (
        "pipe-partition",
        {PC, N},
        "raise",
        "RuntimeError:runtime/pipe/module.py:316:_partition_layers",
        "Partitioning 'transformer' found no valid layers to partition.",
    ),
    (
        "pipe-stages",
        {PC, N},
        "raise",
        "RuntimeError:runtime/pipe/module.py:138:__init__",
        "must provide num_stages or topology",
    ),
    (
        "ds-nccl-under-comm",
        {"nccl_network"},
        "multi",
        "",
        'Traceback (most recent call last):\n  File "/usr/local/lib/python3.10/dist-packages/deepspeed/comm/comm.py", line 117, in log_wrapper\n    return func(*args, **kwargs)\n'
        '  File "/usr/local/lib/python3.10/dist-packages/deepspeed/comm/torch.py", line 222, in all_reduce\n    return torch.distributed.all_reduce(tensor=tensor, op=op, group=group, async_op=async_op)\n'
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\n"
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \nLast error:\nsocketStartConnect: Connect to 10.0.0.2<45123> failed : Software caused connection abort",
    ),
    (
        "ds-watchdog",
        {"collective_timeout"},
        "multi",
        "",
        "[2024-05-01 12:00:00,123] [INFO] [logging.py:96:log_dist] [Rank 0] step=120, skipped=0, lr=[1e-05], mom=[(0.9, 0.999)]\n"
        "[rank3]:[E501 12:30:00.456789 1234 ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9012, OpType=_ALLGATHER_BASE, NumelIn=1048576, NumelOut=8388608, Timeout(ms)=1800000) ran for 1800095 milliseconds before timing out.",
    ),
    (
        "ds-calledprocess",
        {PC},
        "multi",
        "",
        'Traceback (most recent call last):\n  File "/usr/local/lib/python3.8/dist-packages/deepspeed/launcher/launch.py", line 171, in <module>\n    main()\n'
        '  File "/usr/local/lib/python3.8/dist-packages/deepspeed/launcher/launch.py", line 165, in main\n    raise subprocess.CalledProcessError(returncode=process.returncode,\n'
        "subprocess.CalledProcessError: Command '['/usr/bin/python3', '-u', 'train.py', '--local_rank=1', '--deepspeed']' returned non-zero exit status 1.",
    ),
    (
        "ds-killed-9",
        {"host_oom", PC},
        "multi",
        "",
        "[2024-05-01 12:00:00,123] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 4101\n"
        "[2024-05-01 12:00:00,130] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', '--local_rank=0'] exits with return code = -9",
    ),
    ("launch-env-nccl", {N}, "log", "INFO:launch.py:139:main", "0 NCCL_IB_DISABLE=1"),
    ("launch-env-nccl2", {N}, "log", "INFO:launch.py:139:main", "0 NCCL_SOCKET_IFNAME=eth0"),
    ("launch-env-debug", {N}, "log", "INFO:launch.py:139:main", "0 NCCL_DEBUG=INFO"),
    (
        "run-workers",
        {N},
        "log",
        "INFO:runner.py:571:main",
        "Running on the following workers: worker-0,worker-1",
    ),
    (
        "run-env-file",
        {N},
        "log",
        "INFO:multinode_runner.py:80:get_cmd",
        "Running on the following workers: worker-0,worker-1",
    ),
    (
        "elastic-disable",
        {N},
        "log",
        "INFO:launch.py:191:main",
        "Disabling elastic training support as PyTorch version should be greater than 1.11.x",
    ),
    ("ds-config-print", {N}, "log", "INFO:config.py:1000:print", "  world_size ................... 16"),
    ("ds-config-comm", {N}, "log", "INFO:config.py:1000:print", "  communication_data_type ...... None"),
    (
        "ds-config-timeout",
        {N},
        "log",
        "INFO:config.py:1000:print",
        "  timers_config ................ enabled=True synchronized=True",
    ),
    (
        "ds-comm-summary",
        {N},
        "print",
        "",
        "Comm. Op            Message Size        Count               Total Latency(ms)   Avg Latency(ms)     tput_avg (Gbps)     busbw_avg (Gbps)\nall_reduce\n                    8.0 MB              10                  12.34               1.23                54.3                101.8",
    ),
]
CASES += [
    # ---- round 3: shapes seen in DeepSpeed logs of the released corpora (not their sentences)
    (
        "comm-nccl-not-impl",
        {N},
        "log",
        "WARNING:comm.py:633:init_deepspeed_backend",
        "NCCL backend in DeepSpeed not yet implemented",
    ),
    (
        "comm-mpi-not-impl",
        {N},
        "log",
        "WARNING:comm.py:635:init_deepspeed_backend",
        "MPI backend in DeepSpeed not yet implemented",
    ),
    (
        "launch-exit-wrapped",
        {PC},
        "multi",
        "",
        "[2024-05-01 12:00:00,130] [ERROR] [launch.py:321:sigkill_handler] ['/data/project/venv/bin/python', '-m',\n"
        " 'mii.launch.multi_gpu_server', '--deployment-name', 'llama', '--load-balancing-port', '50050',\n"
        " '--local_rank=1'] exits with return code = 1",
    ),
    (
        "launch-exit-wrapped-m9",
        {"host_oom", PC},
        "multi",
        "",
        "[2024-05-01 12:00:00,130] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', 'main.py', '--local_rank=7', '--data_path', 'Dahoas/rm-static',\n"
        " '--per_device_train_batch_size', '8', '--zero_stage', '3', '--deepspeed', '--output_dir', './output'] exits with return code = -9",
    ),
    (
        "launch-exit-m7",
        {PC},
        "log",
        "ERROR:launch.py:325:sigkill_handler",
        "['/usr/bin/python', '-u', 'train.py', '--local_rank=2'] exits with return code = -7",
    ),
    (
        "launch-exit-m15",
        {PC, N},
        "log",
        "ERROR:launch.py:325:sigkill_handler",
        "['/usr/bin/python', '-u', 'train.py', '--local_rank=2'] exits with return code = -15",
    ),
    (
        "launch-exit-2",
        {PC},
        "log",
        "ERROR:launch.py:325:sigkill_handler",
        "['/usr/bin/python', '-u', 'train.py', '--local_rank=0'] exits with return code = 2",
    ),
    (
        "launch-exit-m4",
        {PC},
        "log",
        "ERROR:launch.py:325:sigkill_handler",
        "['/usr/bin/python', '-u', 'train.py', '--local_rank=0'] exits with return code = -4",
    ),
    (
        "launch-exit-m8",
        {PC},
        "log",
        "ERROR:launch.py:325:sigkill_handler",
        "['/usr/bin/python', '-u', 'train.py', '--local_rank=0'] exits with return code = -8",
    ),
]
CASES += [
    # ---- round 4: op_builder/builder.py, async_io.py, sparse_attn.py (0.9.5, 0.14.4, 0.19.8): printed with
    # WARNING = "\033[93m [WARNING] \033[0m" at import or ds_report in healthy runs; the raises stop the job
    (
        "op-aio-warn",
        {N},
        "print",
        "",
        " [WARNING]  async_io requires the dev libaio .so object and headers but these were not found.",
    ),
    (
        "op-aio-warn-color",
        {N},
        "print",
        "",
        "\x1b[93m [WARNING] \x1b[0m async_io requires the dev libaio .so object and headers but these were not found.",
    ),
    ("op-aio-pkg", {N}, "print", "", " [WARNING]  async_io: please install the libaio-dev package with apt"),
    (
        "op-aio-flags",
        {N},
        "print",
        "",
        " [WARNING]  If libaio is already installed (perhaps from source), try setting the CFLAGS and LDFLAGS environment variables to where it can be found.",
    ),
    (
        "op-sparse",
        {N},
        "print",
        "",
        " [WARNING]  sparse_attn requires a torch version >= 1.5 and < 2.0 but detected 2.1",
    ),
    (
        "op-triton",
        {N},
        "print",
        "",
        " [WARNING]  using untested triton version (2.1.0), only 1.0.0 is known to be compatible",
    ),
    (
        "op-triton2",
        {N},
        "print",
        "",
        " [WARNING]  please install triton==1.0.0 if you want to use sparse attention",
    ),
    ("op-sparse-cuda", {N}, "print", "", " [WARNING]  sparse_attn cuda is not available from torch"),
    (
        "op-cpuinfo",
        {N},
        "print",
        "",
        " [WARNING]  cpu_adam attempted to use `py-cpuinfo` but failed (exception type: <class 'ModuleNotFoundError'>, No module named 'cpuinfo'), falling back to `lscpu` to get this information.",
    ),
    (
        "op-skip-cuda-check",
        {N},
        "print",
        "",
        " [WARNING]  DeepSpeed Op Builder: Installed CUDA version 12.2 does not match the version torch was compiled with 12.1.Detected `DS_SKIP_CUDA_CHECK=1`: Allowing this combination of CUDA, but it may result in unexpected behavior.",
    ),
    (
        "op-cuda-home",
        {"driver_env"},
        "raise",
        "deepspeed.ops.op_builder.builder.MissingCUDAException:ops/op_builder/builder.py:50:installed_cuda_version",
        "CUDA_HOME does not exist, unable to compile CUDA op(s)",
    ),
    (
        "op-cuda-mismatch",
        {"driver_env"},
        "raise",
        "deepspeed.ops.op_builder.builder.CUDAMismatchException:ops/op_builder/builder.py:101:assert_no_cuda_mismatch",
        ">- DeepSpeed Op Builder: Installed CUDA version 11.5 does not match the version torch was compiled with 12.1, unable to compile cuda/cpp extensions without a matching cuda version.",
    ),
    (
        "op-torch-mismatch",
        {"driver_env"},
        "raise",
        "RuntimeError:ops/op_builder/builder.py:149:validate_torch_version",
        "PyTorch version mismatch! DeepSpeed ops were compiled and installed with a different version than what is being used at runtime. Please re-install DeepSpeed or switch torch versions. Install torch version=2.0, Runtime torch version=2.1",
    ),
    (
        "op-cuda-rt-mismatch",
        {"driver_env"},
        "raise",
        "RuntimeError:ops/op_builder/builder.py:161:validate_torch_op_version",
        "CUDA version mismatch! DeepSpeed ops were compiled and installed with a different version than what is being used at runtime. Please re-install DeepSpeed or switch torch versions. Install CUDA version=11.8, Runtime CUDA version=12.1",
    ),
    (
        "op-ninja",
        {"driver_env"},
        "raise",
        "RuntimeError:ops/op_builder/builder.py:518:jit_load",
        "Unable to JIT load the fused_adam op due to ninja not being installed.",
    ),
    (
        "op-incompatible",
        {"driver_env"},
        "raise",
        "RuntimeError:ops/op_builder/builder.py:512:jit_load",
        "Unable to JIT load the async_io op due to it not being compatible due to hardware/software issue. async_io requires the dev libaio .so object and headers but these were not found.",
    ),
    (
        "op-ds-report",
        {N},
        "print",
        "",
        "async_io ............... [NO] ....... [NO]\nfused_adam ............. [NO] ....... [OKAY]\ncpu_adam ............... [NO] ....... [OKAY]",
    ),
    (
        "op-ds-report2",
        {N},
        "print",
        "",
        "DeepSpeed general environment info:\ntorch install path ............... ['/usr/local/lib/python3.10/dist-packages/torch']\ntorch cuda version ............... 12.1\nnvcc version ..................... 12.1\ndeepspeed wheel compiled w. ...... torch 2.1, cuda 12.1",
    ),
]
CASES += [
    # ---- round 5: utils/groups.py, runtime/pipe/p2p.py, comm/torch.py, elasticity/elastic_agent.py (0.9.5-0.19.8)
    (
        "groups-dist-not-init",
        {"rendezvous", "nccl_usage", PC, N},
        "raise",
        "AssertionError:utils/groups.py:269:_create_expert_and_data_parallel",
        "dist is not initialized",
    ),
    (
        "groups-divisible",
        {PC, N, "driver_env", "rendezvous"},
        "raise",
        "AssertionError:utils/groups.py:61:_ensure_divisibility",
        "8 is not divisible by 3",
    ),
    (
        "groups-a2a",
        {PC, N, "driver_env", "rendezvous"},
        "raise",
        "AssertionError:utils/groups.py:384:_get_local_all_to_all_group",
        "num_nodes<2 cannot initialize All-To-All",
    ),
    (
        "p2p-no-pp",
        {PC, N},
        "raise",
        "AssertionError:runtime/pipe/p2p.py:31:init_process_groups",
        "There is no pipeline parallelism",
    ),
    (
        "p2p-adjacent",
        {PC, N, "nccl_usage", "collective_mismatch"},
        "raise",
        "AssertionError:runtime/pipe/p2p.py:40:_is_valid_send_recv",
        "Functionality currently limited to send and receive between adjacent ranks only",
    ),
    ("comm-prof-off", {N}, "log", "WARNING:torch.py:175:reduce", "REDUCE is OFF"),
    ("comm-ag-off", {N}, "log", "WARNING:torch.py:205:all_gather", "All Gather is OFF"),
    (
        "comm-coalesced",
        {PC, N, "driver_env"},
        "raise",
        "RuntimeError:comm/torch.py:166:all_reduce_coalesced",
        "Current torch version does not have all_reduce_coalesced api (torch.__version__: 1.12.1)",
    ),
    # FAILED / UNHEALTHY are handled above the raise (restart or stop): only INIT / STOPPED / UNKNOWN reach it
    (
        "elastic-unknown",
        {PC, N},
        "raise",
        "Exception:elasticity/elastic_agent.py:188:_invoke_run",
        "[trainer] Worker group in UNKNOWN state",
    ),
    (
        "elastic-restart",
        {PC, N},
        "print",
        "",
        "INFO:torch.distributed.elastic.agent.server.api:[trainer] Worker group FAILED. 2/100 attempts left; will restart worker group",
    ),
    (
        "torch-pg-not-init",
        {"rendezvous", "nccl_usage", PC, N},
        "multi",
        "",
        'Traceback (most recent call last):\n  File "/usr/local/lib/python3.10/dist-packages/deepspeed/comm/torch.py", line 286, in get_rank\n    return torch.distributed.get_rank(group=group)\n'
        "ValueError: Default process group has not been initialized, please make sure to call init_process_group.",
    ),
]
CASES += [
    (
        "op-skip-cuda-check-then-nccl",
        {"nccl_network"},
        "multi",
        "",
        " [WARNING]  DeepSpeed Op Builder: Installed CUDA version 12.2 does not match the version torch was compiled with 12.1.Detected `DS_SKIP_CUDA_CHECK=1`: Allowing this combination of CUDA, but it may result in unexpected behavior.\ntorch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3",
    ),
    (
        "op-skip-cuda-check-wrapped",
        {N},
        "multi",
        "",
        " [WARNING]  DeepSpeed Op Builder: Installed CUDA version 12.2 does not match the version torch was compiled with 12.1.\nDetected `DS_SKIP_CUDA_CHECK=1`: Allowing this combination of CUDA, but it may result in unexpected behavior.",
    ),
    (
        "op-cuda-mismatch-095",
        {"driver_env"},
        "raise",
        "Exception:ops/op_builder/builder.py:96:assert_no_cuda_mismatch",
        ">- DeepSpeed Op Builder: Installed CUDA version 11.5 does not match the version torch was compiled with 11.7, unable to compile cuda/cpp extensions without a matching cuda version.",
    ),
]


def _render(shape: str, where: str, msg: str) -> list[str]:
    if shape in ("print", "multi"):
        return [msg]
    if shape == "log":
        lvl, f, ln, fn = where.split(":")
        line = f"{TS} [{lvl}] [{f}:{ln}:{fn}] {msg}"
        return [line, "[default0]:" + line]
    exc, path, ln, fn = where.split(":")
    tb = (
        'Traceback (most recent call last):\n  File "/usr/local/bin/deepspeed", line 6, in <module>\n    main()\n'
        f'  File "/usr/local/lib/python3.10/dist-packages/deepspeed/{path}", line {ln}, in {fn}\n'
        f"    raise {exc.split('.')[-1]}(...)\n{exc}: {msg}"
    )
    return [tb, f"{exc}: {msg}"]


PASTES = [
    pytest.param(log, accepted, id=f"{cid}-{i}")
    for cid, accepted, shape, where, msg in CASES
    for i, log in enumerate(_render(shape, where, msg))
]


def _root(log: str) -> tuple[Optional[str], str]:
    found = failure_findings(log)
    return (found[0].category, found[0].code) if found else (None, "-")


@pytest.mark.parametrize("log,accepted", PASTES)
def test_deepspeed_message_gets_its_class(log: str, accepted: set[Optional[str]]) -> None:
    got, code = _root(log)
    assert got in accepted, (log, got, code)


# The rows added by the sweep, their codes and the facts the line shows.
ROWS = [
    (
        "Detected CUDA_VISIBLE_DEVICES=2,4,5,7 but ignoring it because one or several of --include/--exclude/"
        "--num_gpus/--num_nodes cl args were used. If you want to use CUDA_VISIBLE_DEVICES don't pass any of "
        "these arguments to deepspeed.",
        "RUN530",
        {"visible_devices": "2,4,5,7"},
    ),
    ("pdsh@worker-0: worker-3: ssh exited with exit code 1", "RUN133", {"host": "worker-3", "exitcode": 1}),
    (
        "ValueError: NPU_Accelerator requires torch_npu, which is not installed on this system.",
        "RUN531",
        {"package": "torch_npu"},
    ),
    ("RuntimeError: tracing error at step 7: \nmodule id: 3, training: True", "RUN510", {"step": 7}),
    ("SystemError: Cannot use fp16 without accelerator.", "RUN262", {}),
    (
        "RuntimeError: PyTorch version mismatch! DeepSpeed ops were compiled and installed with a different "
        "version than what is being used at runtime. Please re-install DeepSpeed or switch torch versions. "
        "Install torch version=2.0, Runtime torch version=2.1",
        "RUN296",
        {"built_with": "2.0", "runtime": "2.1"},
    ),
    (
        "RuntimeError: Unable to JIT load the fused_adam op due to ninja not being installed.",
        "RUN296",
        {"op": "fused_adam"},
    ),
    (
        "AssertionError: [rank=5] The checkpoint tag name 'step10_rank5' is not consistent across all ranks.",
        "RUN201",
        {"rank": 5, "tag": "step10_rank5"},
    ),
    ("AssertionError: MIN:MAX format is only supported in elastic training", "RUN390", {}),
]


@pytest.mark.parametrize("log,code,facts", ROWS)
def test_sweep_rows_codes_and_facts(log: str, code: str, facts: dict[str, object]) -> None:
    found = failure_findings(log)
    assert found and found[0].code == code, (log, found)
    for k, v in facts.items():
        assert found[0].facts.get(k) == v, (k, found[0].facts)


def test_visible_devices_warning_yields_to_the_failure_it_leads_to() -> None:
    log = (
        "Detected CUDA_VISIBLE_DEVICES=2,3 but ignoring it because one or several of --include/--exclude/"
        "--num_gpus/--num_nodes cl args were used. If you want to use CUDA_VISIBLE_DEVICES don't pass any of "
        "these arguments to deepspeed.\n"
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity of 79.15 GiB of which 1.02 GiB is free."
    )
    assert _root(log)[0] == "cuda_oom"
