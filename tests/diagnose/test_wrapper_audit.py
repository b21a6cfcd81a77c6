"""Distributed failures as the training frameworks wrap and report them, audited at their source: each row
is a message as it reaches a log (written from the format string of the code named in its family's comment),
and the class an engineer gives it. A kill or fatal signal is process_killed (host_oom or process_crash); a
wrapper that carries the worker's own error is that error's class (a RayTaskError holding a CUDA OOM is
cuda_oom); a launcher record that only says a worker exited 1, with no worker error, is a decoy (no
finding, or process_crash at most). Every row is also read behind the prefixes launchers put on every line.
"""

from __future__ import annotations

from typing import Any, Optional

import pytest

from tests.helpers.diagnose_root import root_finding
from tests.helpers.elastic_record import child_failed_table

KILLED = {"host_oom", "process_crash"}
DECOY = {None, "process_crash"}


def _accepted(want: Optional[str]) -> set[Optional[str]]:
    if want == "process_killed":
        return KILLED
    return DECOY if want is None else {want}


_RAY_ACTOR_DIED = (
    "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n"
    "\tclass_name: RayTrainWorker\n"
    "\tactor_id: 5a3f1c\n"
    "\tpid: 4242\n"
    "\tnamespace: 9e\n"
    "\tip: 10.0.0.12\n"
    "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR"
    " Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of"
    " file. There are some potential root causes. (1) The process is killed by SIGKILL by"
    " OOM killer due to high memory usage. (2) ray stop --force is called. (3) The worker is"
    " crashed unexpectedly due to SIGSEGV or other unexpected errors.\n"
)

# (family, message as rendered, expected class); None: a decoy
ROWS = [
    # mp.spawn: torch/multiprocessing/spawn.py (1.4: plain Exception; 1.7+: ProcessExitedException /
    # ProcessRaisedException)
    (
        "mp.spawn",
        (
            "Traceback (most recent call last):\n"
            '  File "train.py", line 90, in <module>\n'
            "    mp.spawn(main, nprocs=4)\n"
            "torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with signal"
            " SIGKILL\n"
        ),
        "process_killed",
    ),
    (
        "mp.spawn",
        ("torch.multiprocessing.spawn.ProcessExitedException: process 2 terminated with signal SIGSEGV\n"),
        "process_killed",
    ),
    (
        "mp.spawn",
        ("Exception: process 1 terminated with signal SIGKILL\n"),
        "process_killed",
    ),
    (
        "mp.spawn",
        ("torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with exit code 1\n"),
        None,
    ),
    (
        "mp.spawn",
        (
            "torch.multiprocessing.spawn.ProcessRaisedException: \n"
            "\n"
            "-- Process 1 terminated with the following error:\n"
            "Traceback (most recent call last):\n"
            '  File "/usr/lib/python3/dist-packages/torch/multiprocessing/spawn.py", line 69, in'
            " _wrap\n"
            "    fn(i, *args)\n"
            "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 15.78 GiB total"
            " capacity; 13.10 GiB already allocated; 1.02 GiB free; 13.50 GiB reserved in total by"
            " PyTorch)\n"
        ),
        "cuda_oom",
    ),
    (
        "mp.spawn",
        (
            "Exception: \n"
            "\n"
            "-- Process 0 terminated with the following error:\n"
            "Traceback (most recent call last):\n"
            '  File "/opt/conda/lib/python3.7/site-packages/torch/multiprocessing/spawn.py", line'
            " 19, in _wrap\n"
            "    fn(i, *args)\n"
            "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:514,"
            " unhandled system error, NCCL version 2.7.8\n"
        ),
        "nccl_network",
    ),
    # lightning: lightning/fabric/strategies/launchers/subprocess_script.py _ChildProcessObserver (2.1+);
    # launchers/multiprocessing.py runs mp.start_processes (its ProcessExitedException)
    (
        "lightning",
        (
            "[rank: 0] Child process with PID 5123 terminated with code -9. Forcefully terminating"
            " all other processes to avoid zombies 🧟\n"
        ),
        "process_killed",
    ),
    (
        "lightning",
        (
            "Child process with PID 5123 terminated with code 1. Forcefully terminating all other"
            " processes to avoid zombies 🧟\n"
        ),
        None,
    ),
    (
        "lightning",
        (
            '  File "/usr/local/lib/python3.10/dist-packages/lightning/fabric/strategies/launchers/su'
            'bprocess_script.py", line 99, in launch\n'
            "torch.multiprocessing.spawn.ProcessExitedException: process 3 terminated with signal"
            " SIGKILL\n"
        ),
        "process_killed",
    ),
    # deepspeed: deepspeed/launcher/launch.py sigkill_handler (0.5-0.14); launcher/runner.py over pdsh
    (
        "deepspeed",
        (
            "[2023-06-01 10:00:00,123] [INFO] [launch.py:315:sigkill_handler] Killing subprocess"
            " 4242\n"
            "[2023-06-01 10:00:00,456] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3',"
            " '-u', 'train.py', '--local_rank=1'] exits with return code = -9\n"
        ),
        "process_killed",
    ),
    (
        "deepspeed",
        (
            "node-2: [2023-06-01 10:00:00,456] [ERROR] [launch.py:321:sigkill_handler]"
            " ['/usr/bin/python3', '-u', 'train.py', '--local_rank=1'] exits with return code = -11\n"
        ),
        "process_killed",
    ),
    (
        "deepspeed",
        (
            "[2023-06-01 10:00:00,456] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3',"
            " '-u', 'train.py', '--local_rank=1'] exits with return code = 1\n"
        ),
        None,
    ),
    (
        "deepspeed",
        ("pdsh@node-1: node-2: ssh exited with exit code 1\n"),
        None,
    ),
    (
        "deepspeed",
        ("[2024-01-01 00:00:00,000] [INFO] [launch.py:351:main] Main process received SIGTERM, exiting\n"),
        None,
    ),
    # accelerate: accelerate/commands/launch.py simple_launcher: subprocess.CalledProcessError (0.x-1.x)
    (
        "accelerate",
        (
            "Traceback (most recent call last):\n"
            '  File "/usr/local/bin/accelerate", line 8, in <module>\n'
            "    sys.exit(main())\n"
            '  File "/usr/local/lib/python3.10/site-packages/accelerate/commands/launch.py", line'
            " 1008, in launch_command\n"
            "    simple_launcher(args)\n"
            "subprocess.CalledProcessError: Command '['/usr/bin/python3', 'train.py']' died with"
            " <Signals.SIGKILL: 9>.\n"
        ),
        "process_killed",
    ),
    (
        "accelerate",
        (
            "subprocess.CalledProcessError: Command '['/usr/bin/python3', 'train.py']' returned"
            " non-zero exit status 1.\n"
        ),
        None,
    ),
    (
        "accelerate",
        (
            "subprocess.CalledProcessError: Command '['/usr/bin/python3', 'train.py']' returned"
            " non-zero exit status -9.\n"
        ),
        "process_killed",
    ),
    (
        "accelerate",
        (
            "subprocess.CalledProcessError: Command '['/usr/bin/python3', 'train.py']' returned"
            " non-zero exit status 137.\n"
        ),
        "process_killed",
    ),
    # ray: python/ray/exceptions.py (0.8-2.x), raylet node_manager.cc, gcs_node_manager.cc,
    # ray/train/base_trainer.py
    (
        "ray",
        _RAY_ACTOR_DIED,
        "process_killed",
    ),
    (
        "ray",
        ("ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.\n"),
        "process_killed",
    ),
    (
        "ray",
        (
            "(TorchTrainer pid=311) ray.exceptions.ActorDiedError: The actor died unexpectedly"
            " before finishing this task.\n"
        ),
        "process_killed",
    ),
    (
        "ray",
        (
            "ray.exceptions.WorkerCrashedError: The worker died unexpectedly while executing this"
            " task. Check python-core-worker-*.log files for more information.\n"
        ),
        "process_killed",
    ),
    (
        "ray",
        (
            "(raylet) A worker died or was killed while executing a task by an unexpected system"
            " error. To troubleshoot the problem, check the logs for the dead worker. RayTask ID:"
            " ffff Worker ID: 3d2f Node ID: 9a1c Worker IP address: 10.0.0.3 Worker port: 10003"
            " Worker PID: 12345 Worker exit type: SYSTEM_ERROR Worker exit detail: Worker"
            " unexpectedly exits with a connection error code 2. End of file.\n"
        ),
        "process_killed",
    ),
    (
        "ray",
        ("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n"),
        "host_oom",
    ),
    (
        "ray",
        (
            "ray.exceptions.RayTaskError(OutOfMemoryError): ray::_RayTrainWorker__execute.get_next()"
            " (pid=4242, ip=10.0.0.12, actor_id=5a3f,"
            " repr=<ray.train._internal.worker_group.RayTrainWorker object at 0x7f>)\n"
            '  File "train.py", line 40, in train_func\n'
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has"
            " a total capacity of 79.15 GiB of which 3.06 MiB is free.\n"
        ),
        "cuda_oom",
    ),
    (
        "ray",
        (
            "ray.exceptions.RayTaskError(DistBackendError): ray::_RayTrainWorker__execute.get_next()"
            " (pid=4242, ip=10.0.0.12)\n"
            "torch.distributed.DistBackendError: NCCL error in:"
            " ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run"
            " with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\n"
            "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or"
            " device error. \n"
            "Last error:\n"
            "socketStartConnect: Connect to 10.0.0.13<45321> failed : Software caused connection"
            " abort\n"
        ),
        "nccl_network",
    ),
    (
        "ray",
        (
            "ray.train.base_trainer.TrainingFailedError: The Ray Train run failed. Please inspect"
            " the previous error messages for a cause. After fixing the issue (assuming that the"
            " error is not caused by your own application logic, but rather an error such as OOM),"
            " you can restart the run from scratch or continue this run.\n"
        ),
        None,
    ),
    (
        "ray",
        ("ray.tune.error.TuneError: ('Trials did not complete', [TorchTrainer_8d1f0_00000])\n"),
        None,
    ),
    (
        "ray",
        (
            "(RayTrainWorker pid=4242, ip=10.0.0.12) [E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog"
            " caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=1,"
            " NumelOut=1, Timeout(ms)=1800000) ran for 1800521 milliseconds before timing out.\n"
        ),
        "collective_timeout",
    ),
    (
        "ray",
        (
            "The node with node id: 7c1e and address: 10.0.0.13 and node name: 10.0.0.13 has been"
            " marked dead because the detector has missed too many heartbeats from it. This can"
            " happen when a \t(1) raylet crashes unexpectedly (OOM, preempted node, etc.) \n"
            "\t(2) raylet has lagging heartbeats due to slow network or busy workload.\n"
        ),
        "process_killed",
    ),
    # vllm: vllm/executor/multiproc_worker_utils.py WorkerMonitor (0.4-0.8),
    # v1/executor/multiproc_executor.py,
    # worker/worker_base.py, v1/engine/core.py
    (
        "vllm",
        (
            "ERROR 05-01 10:00:00 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 4243"
            " died, exit code: -9\n"
        ),
        "process_killed",
    ),
    (
        "vllm",
        (
            "ERROR 05-01 10:00:00 [multiproc_executor.py:140] Worker proc VllmWorker-1 died"
            " unexpectedly, shutting down executor.\n"
        ),
        "process_killed",
    ),
    (
        "vllm",
        (
            "(RayWorkerWrapper pid=4243) ERROR 05-01 10:00:00 worker_base.py:382] Error executing"
            " method init_device. This might cause deadlock in distributed execution.\n"
            "(RayWorkerWrapper pid=4243) ERROR 05-01 10:00:00 worker_base.py:382]"
            " torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 224.00 MiB. GPU 1 has a"
            " total capacity of 23.55 GiB of which 98.06 MiB is free.\n"
        ),
        "cuda_oom",
    ),
    (
        "vllm",
        (
            "ERROR 05-01 10:00:00 [core.py:396] EngineCore failed to start.\n"
            "RuntimeError: Engine core initialization failed. See root cause above. Failed core"
            " proc(s): {}\n"
        ),
        None,
    ),
    (
        "vllm",
        (
            "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack"
            " trace (above) for the root cause.\n"
        ),
        None,
    ),
    # sglang: sglang/srt/managers/scheduler.py run_scheduler_process, launch_server sigquit handler
    (
        "sglang",
        (
            "[2025-01-01 10:00:00 TP1] Scheduler hit an exception: Traceback (most recent call"
            " last):\n"
            '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 1748, in'
            " run_scheduler_process\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 1 has a"
            " total capacity of 79.10 GiB of which 512.00 MiB is free.\n"
        ),
        "cuda_oom",
    ),
    (
        "sglang",
        ("[2025-01-01 10:00:00] Received sigquit from a child process. It usually means the child failed.\n"),
        None,
    ),
    # openmpi: Open MPI orte/tools/orterun help-orterun.txt (1.x-4.x) / prte
    (
        "openmpi",
        (
            "--------------------------------------------------------------------------\n"
            "mpirun noticed that process rank 3 with PID 0 on node gpu-7 exited on signal 9"
            " (Killed).\n"
            "--------------------------------------------------------------------------\n"
        ),
        "process_killed",
    ),
    (
        "openmpi",
        (
            "mpirun noticed that process rank 0 with PID 5512 on node gpu-1 exited on signal 11"
            " (Segmentation fault).\n"
        ),
        "process_killed",
    ),
    (
        "openmpi",
        (
            "--------------------------------------------------------------------------\n"
            "Primary job  terminated normally, but 1 process returned\n"
            "a non-zero exit code. Per user-direction, the job has been aborted.\n"
            "--------------------------------------------------------------------------\n"
            "--------------------------------------------------------------------------\n"
            "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
            "the job to be terminated. The first process to do so was:\n"
            "\n"
            "  Process name: [[41018,1],2]\n"
            "  Exit code:    1\n"
            "--------------------------------------------------------------------------\n"
        ),
        None,
    ),
    (
        "openmpi",
        (
            "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
            "the job to be terminated. The first process to do so was:\n"
            "\n"
            "  Process name: [[41018,1],2]\n"
            "  Exit code:    137\n"
        ),
        "process_killed",
    ),
    # horovod: horovod/runner/gloo_run.py (0.20+), mpirun --tag-output prefixes
    (
        "horovod",
        (
            "RuntimeError: Horovod detected that one or more processes exited with non-zero status,"
            " thus causing the job to be terminated. The first process to do so was:\n"
            "Process name: 1\n"
            "Exit code: 1\n"
        ),
        None,
    ),
    (
        "horovod",
        (
            "RuntimeError: Horovod detected that one or more processes exited with non-zero status,"
            " thus causing the job to be terminated. The first process to do so was:\n"
            "Process name: 1\n"
            "Exit code: 137\n"
        ),
        "process_killed",
    ),
    (
        "horovod",
        (
            "[1,1]<stderr>:RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 1;"
            " 10.76 GiB total capacity; 9.1 GiB already allocated; 300.00 MiB free; 9.4 GiB reserved"
            " in total by PyTorch)\n"
        ),
        "cuda_oom",
    ),
    (
        "horovod",
        (
            "[1]<stderr>:[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation"
            " timeout: WorkNCCL(SeqNum=3, OpType=BROADCAST, NumelIn=10, NumelOut=10,"
            " Timeout(ms)=600000) ran for 600123 milliseconds before timing out.\n"
        ),
        "collective_timeout",
    ),
    # slurm: Slurm src/srun/libsrun/... 'task N: Killed', slurmstepd task/cgroup oom-kill, job cancel
    (
        "slurm",
        ("srun: error: gpu-node-3: task 5: Killed\n"),
        "process_killed",
    ),
    (
        "slurm",
        (
            "srun: error: gpu-node-3: tasks 4-7: Killed\n"
            "srun: launch/slurm: _step_signal: Terminating StepId=812.0\n"
        ),
        "process_killed",
    ),
    (
        "slurm",
        ("srun: error: gpu-node-3: task 0: Exited with exit code 1\n"),
        None,
    ),
    (
        "slurm",
        ("srun: error: gpu-node-3: task 2: Out Of Memory\n"),
        "host_oom",
    ),
    (
        "slurm",
        (
            "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=812.0 cgroup. Some of your"
            " processes may have been killed by the cgroup out-of-memory handler.\n"
        ),
        "host_oom",
    ),
    (
        "slurm",
        (
            "slurmstepd: error: Detected 2 oom_kill events in StepId=812.batch. Some of your"
            " processes may have been killed by the cgroup out-of-memory handler.\n"
        ),
        "host_oom",
    ),
    (
        "slurm",
        (
            "slurmstepd: error: *** JOB 812 ON gpu-node-3 CANCELLED AT 2024-03-01T10:00:00 DUE TO"
            " TIME LIMIT ***\n"
        ),
        "process_killed",
    ),
    (
        "slurm",
        (
            "slurmstepd: error: *** STEP 812.0 ON gpu-node-3 CANCELLED AT 2024-03-01T10:00:00 DUE TO"
            " NODE FAILURE ***\n"
        ),
        "process_killed",
    ),
    # k8s: kubectl describe pod (Last State: Terminated / Reason: OOMKilled), kubectl exec
    (
        "k8s",
        ("    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n"),
        "host_oom",
    ),
    (
        "k8s",
        ("command terminated with exit code 137\n"),
        "process_killed",
    ),
    (
        "k8s",
        ("    Last State:     Terminated\n      Reason:       Error\n      Exit Code:    1\n"),
        None,
    ),
    # paddle: paddle/distributed/launch/controllers/controller.py + job/container.py (2.3+),
    # fleet/launch_utils.py (ABORT!!!), fluid/platform/init.cc (FatalError), ResourceExhaustedError
    (
        "paddle",
        (
            "LAUNCH ERROR 2023-05-01 10:00:00,000 controller.py:110] Container failed !!!\n"
            "Container rank 1 status failed cmd ['python', '-u', 'train.py'] code -9 log"
            " log/workerlog.1\n"
        ),
        "process_killed",
    ),
    (
        "paddle",
        (
            "ABORT!!! Out of all 4 trainers, the trainer process with rank=[1] was aborted. Please"
            " check its log.\n"
        ),
        None,
    ),
    (
        "paddle",
        (
            "----------------------\n"
            "Error Message Summary:\n"
            "----------------------\n"
            "FatalError: `Segmentation fault` is detected by the operating system.\n"
            '  [TimeInfo: *** Aborted at 1690000000 (unix time) try "date -d @1690000000" if you are'
            " using GNU date ***]\n"
            "  [SignalInfo: *** SIGSEGV (@0x0) received by PID 4242 (TID 0x7f3c) from PID 0 ***]\n"
        ),
        "process_killed",
    ),
    (
        "paddle",
        (
            "ResourceExhaustedError: \n"
            "\n"
            "Out of memory error on GPU 0. Cannot allocate 1.000000GB memory on GPU 0, 31.500000GB"
            " memory has been allocated and available memory is only 250.000000MB.\n"
        ),
        "cuda_oom",
    ),
    # colossalai: colossalai/cli/launcher/run.py (multinode runner over fabric)
    (
        "colossalai",
        (
            "Error: failed to run torchrun --nproc_per_node=8 --nnodes=1 --node_rank=0 train.py on"
            " 127.0.0.1, is localhost: True, exception: Encountered a bad command exit code!\n"
            "\n"
            "Command: 'cd /root && torchrun train.py'\n"
            "\n"
            "Exit code: 1\n"
        ),
        None,
    ),
]

# accelerate/commands/launch.py multi_gpu_launcher (0.20+) re-raises torch's ChildFailedError.
_ACCELERATE_TB = (
    "Traceback (most recent call last):\n"
    '  File "/usr/local/bin/accelerate", line 8, in <module>\n'
    "    sys.exit(main())\n"
    '  File "/usr/local/lib/python3.10/dist-packages/accelerate/commands/launch.py", line'
    " 1168, in launch_command\n"
    "    multi_gpu_launcher(args)\n"
    '  File "/usr/local/lib/python3.10/dist-packages/accelerate/commands/launch.py", line'
    " 763, in multi_gpu_launcher\n"
    "    distrib_run.run(args)\n"
)

# More shapes of the same families (the second pass of the audit).
MORE_ROWS = [
    # accelerate: accelerate/commands/launch.py multi_gpu_launcher re-raises torch's ChildFailedError
    # (0.20+)
    (
        "accelerate",
        (_ACCELERATE_TB + child_failed_table(1, -9, 950)),
        "process_killed",
    ),
    (
        "accelerate",
        (_ACCELERATE_TB + child_failed_table(1, 1, 950)),
        None,
    ),
    # lightning: pytorch_lightning/strategies/launchers/multiprocessing.py _wrapping_function (1.6+);
    # subprocess_script.py
    (
        "lightning",
        (
            "torch.multiprocessing.spawn.ProcessRaisedException: \n"
            "\n"
            "-- Process 0 terminated with the following error:\n"
            "Traceback (most recent call last):\n"
            '  File "/usr/local/lib/python3.10/site-packages/torch/multiprocessing/spawn.py", line'
            " 74, in _wrap\n"
            "    fn(i, *args)\n"
            '  File "/usr/local/lib/python3.10/site-packages/pytorch_lightning/strategies/launchers/m'
            'ultiprocessing.py", line 147, in _wrapping_function\n'
            "torch.distributed.DistBackendError: NCCL error in:"
            " ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, unhandled cuda error (run"
            " with NCCL_DEBUG=INFO for details), NCCL version 2.18.1\n"
            "ncclUnhandledCudaError: Call to CUDA function failed.\n"
            "Last error:\n"
            "Cuda failure 'out of memory'\n"
        ),
        "cuda_oom",
    ),
    # ray: RayTaskError glued on one line; ray/train/v2 WorkerGroupError; ActorDiedError exit types
    (
        "ray",
        (
            "ray.exceptions.RayTaskError(OutOfMemoryError):"
            " ray::RayTrainWorker._RayTrainWorker__execute() (pid=4242, ip=10.0.0.12, actor_id=5a3f,"
            " repr=<ray.train._internal.worker_group.RayTrainWorker object at 0x7f>)"
            " torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a"
            " total capacity of 79.15 GiB of which 1.06 GiB is free.\n"
        ),
        "cuda_oom",
    ),
    (
        "ray",
        (
            "ray.train.v2.api.exceptions.WorkerGroupError: Training failed due to worker errors:\n"
            "[Rank 0 Error Snippet]:\n"
            "Traceback (most recent call last):\n"
            '  File "train.py", line 40, in train_func\n'
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a"
            " total capacity of 79.15 GiB of which 3.06 MiB is free.\n"
        ),
        "cuda_oom",
    ),
    (
        "ray",
        (
            "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n"
            "\tclass_name: RayTrainWorker\n"
            "\tactor_id: 5a3f1c\n"
            "\tpid: 4242\n"
            "\tnamespace: 9e\n"
            "\tip: 10.0.0.12\n"
            "The actor is dead because its worker process has died. Worker exit type:"
            " NODE_OUT_OF_MEMORY Worker exit detail: Task was killed due to the node running low on"
            " memory.\n"
            "Memory on the node (IP: 10.0.0.12, ID: 9a1c) where the task (actor ID: 5a3f,"
            " name=RayTrainWorker.__init__, pid=4242, memory used=60.1GB) was running was 62.5GB /"
            " 64.0GB (0.976), which exceeds the memory usage threshold of 0.95.\n"
        ),
        "host_oom",
    ),
    (
        "ray",
        (
            "ray.exceptions.ActorDiedError: The actor died because of an error raised in its"
            " creation task, ray::RayTrainWorker.__init__() (pid=4242, ip=10.0.0.12, actor_id=5a3f)\n"
            "torch.distributed.DistBackendError: NCCL error in:"
            " ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled system error (run with"
            " NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
            "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or"
            " device error. \n"
            "Last error:\n"
            "socketStartConnect: Connect to 10.0.0.13<45321> failed : Software caused connection"
            " abort\n"
        ),
        "nccl_network",
    ),
    # vllm: vllm/distributed/device_communicators/pynccl_wrapper.py NCCL_CHECK under RayWorkerWrapper
    (
        "vllm",
        (
            "(RayWorkerWrapper pid=4243) ERROR 05-01 10:00:00 worker_base.py:382] RuntimeError: NCCL"
            " error: unhandled system error (run with NCCL_DEBUG=INFO for details)\n"
        ),
        "nccl_network",
    ),
    # sglang: sglang/srt/managers/tokenizer_manager.py health check
    (
        "sglang",
        ("[2025-01-01 10:00:00] Rank 0 scheduler is dead. Please check if there are relevant logs.\n"),
        None,
    ),
    # slurm: srun's task status (strsignal text), slurmstepd's memory limit and plain cancel (a user's
    # scancel)
    (
        "slurm",
        ("srun: error: gpu-node-3: task 3: Segmentation fault (core dumped)\n"),
        "process_killed",
    ),
    (
        "slurm",
        ("srun: error: gpu-node-3: task 3: Aborted (core dumped)\n"),
        "process_killed",
    ),
    (
        "slurm",
        ("slurmstepd: error: Exceeded job memory limit at some point.\n"),
        "host_oom",
    ),
    (
        "slurm",
        ("slurmstepd: error: *** STEP 812.0 ON gpu-node-3 CANCELLED AT 2024-03-01T10:00:00 ***\n"),
        None,
    ),
    # k8s: the pod's status as JSON (kubectl get pod -o json)
    (
        "k8s",
        (
            '{"containerStatuses":[{"name":"pytorch","lastState":{"terminated":{"exitCode":137,"reaso'
            'n":"OOMKilled","startedAt":"2024-01-01T00:00:00Z"}}}]}\n'
        ),
        "host_oom",
    ),
    # openmpi: Open MPI 5 (prterun), mpiexec alias, SIGABRT, 128+11 exit status
    (
        "openmpi",
        ("prterun noticed that process rank 3 with PID 1234 on node gpu-7 exited on signal 9 (Killed).\n"),
        "process_killed",
    ),
    (
        "openmpi",
        ("mpiexec noticed that process rank 3 with PID 1234 on node gpu-7 exited on signal 9 (Killed).\n"),
        "process_killed",
    ),
    (
        "openmpi",
        ("mpirun noticed that process rank 2 with PID 0 on node gpu-7 exited on signal 6 (Aborted).\n"),
        "process_killed",
    ),
    (
        "openmpi",
        (
            "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
            "the job to be terminated. The first process to do so was:\n"
            "\n"
            "  Process name: [[41018,1],2]\n"
            "  Exit code:    139\n"
        ),
        "process_killed",
    ),
    # mpich: MPICH / Intel MPI Hydra (pm/pmiserv, ui/mpich/utils.c, 3.x-4.x)
    (
        "mpich",
        (
            "\n"
            "===================================================================================\n"
            "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
            "=   RANK 3 PID 1234 RUNNING AT gpu-node-2\n"
            "=   KILLED BY SIGNAL: 9 (Killed)\n"
            "===================================================================================\n"
        ),
        "process_killed",
    ),
    (
        "mpich",
        (
            "\n"
            "===================================================================================\n"
            "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
            "=   PID 1234 RUNNING AT gpu-node-2\n"
            "=   EXIT CODE: 139\n"
            "=   CLEANING UP REMAINING PROCESSES\n"
            "=   YOU CAN IGNORE THE BELOW CLEANUP MESSAGES\n"
            "===================================================================================\n"
        ),
        "process_killed",
    ),
    (
        "mpich",
        (
            "\n"
            "===================================================================================\n"
            "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
            "=   PID 1234 RUNNING AT gpu-node-2\n"
            "=   EXIT CODE: 1\n"
            "=   CLEANING UP REMAINING PROCESSES\n"
            "===================================================================================\n"
        ),
        None,
    ),
    # deepspeed: deepspeed/launcher/launch.py: the teardown alone, and SIGABRT behind a pdsh prefix
    (
        "deepspeed",
        (
            "[2023-06-01 10:00:00,123] [INFO] [launch.py:315:sigkill_handler] Killing subprocess"
            " 4242\n"
            "[2023-06-01 10:00:00,124] [INFO] [launch.py:315:sigkill_handler] Killing subprocess"
            " 4243\n"
        ),
        "process_killed",
    ),
    (
        "deepspeed",
        (
            "node-2: [2023-06-01 10:00:00,456] [ERROR] [launch.py:321:sigkill_handler]"
            " ['/usr/bin/python3', '-u', 'train.py', '--local_rank=1'] exits with return code = -6\n"
        ),
        "process_killed",
    ),
    # mp.spawn: torch/multiprocessing/spawn.py: SIGABRT and a shell-style 137
    (
        "mp.spawn",
        ("torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with signal SIGABRT\n"),
        "process_killed",
    ),
    (
        "mp.spawn",
        ("torch.multiprocessing.spawn.ProcessExitedException: process 3 terminated with exit code 137\n"),
        "process_killed",
    ),
    # lightning: pytorch_lightning/strategies/launchers/multiprocessing.py _wrapping_function (1.6+);
    # subprocess_script.py
    (
        "lightning",
        (
            "[rank: 1] Child process with PID 5124 terminated with code -11. Forcefully terminating"
            " all other processes to avoid zombies 🧟\n"
        ),
        "process_killed",
    ),
    (
        "lightning",
        (
            "[rank: 1] Child process with PID 5124 terminated with code 137. Forcefully terminating"
            " all other processes to avoid zombies 🧟\n"
        ),
        "process_killed",
    ),
    # third pass: Ray's exit type of a memory-monitor kill, vLLM's WorkerMonitor, spawn's SIGTERM (a teardown)
    (
        "ray",
        (
            "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n"
            "\tclass_name: RayTrainWorker\n\tpid: 4242\n"
            "The actor is dead because its worker process has died. Worker exit type: NODE_OUT_OF_MEMORY "
            "Worker exit detail: The actor's worker was killed by Ray's memory monitor.\n"
        ),
        "host_oom",
    ),
    (
        "vllm",
        "ERROR 05-01 10:00:00 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 4243 died, "
        "exit code: -11\n",
        "process_killed",
    ),
    (
        "vllm",
        "ERROR 05-01 10:00:00 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 4243 died, "
        "exit code: 1\n",
        None,
    ),
    (
        "mp.spawn",
        "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGTERM\n",
        None,
    ),
    # torch elastic's ChildFailedError table re-typed by hand (layout lost, "signal" in lower case), as
    # Accelerate and DeepSpeed re-raise it
    (
        "accelerate",
        (
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\ntrain.py FAILED\nFailures:\n"
            "<NO OTHER FAILURES>\nRoot Cause (first observed failure) :\n[0]:\ntime\nhost\n"
            "rank2 (local rank: 2)exitcode: -9 (pid: 36071)error file: <N/A>\n"
            "traceback : signal 9 (SIGKILL) received by PID 36071\n"
        ),
        "process_killed",
    ),
]


# Prefixes that launchers and collectors put on every line: torchrun --tee / Megatron-LM's "[default0]:",
# pdsh's "node-1: ", Ray's worker prefix, a collector's ISO timestamp, mpirun --tag-output's "[1,0]<stderr>:".
PREFIXES = [
    "",
    "[default0]:",
    "node-1: ",
    "(RayTrainWorker pid=123, ip=10.0.0.1) ",
    "2024-05-01T10:00:00.123Z ",
    "[1,0]<stderr>:",
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(
    ("family", "message", "want"),
    ROWS + MORE_ROWS,
    ids=[f"{r[0]}-{i}" for i, r in enumerate(ROWS + MORE_ROWS)],
)
def test_wrapped_failure_gets_its_class(family: str, message: str, want: Optional[str], prefix: str) -> None:
    log = "".join(prefix + ln + "\n" for ln in message.rstrip("\n").split("\n"))
    root = root_finding(log)
    got = root.category if root else None
    assert got in _accepted(want), (family, got, root.code if root else None)


def test_paddle_container_record_carries_rank_and_signal() -> None:
    root = root_finding(
        "LAUNCH ERROR 2023-05-01 10:00:00,000 controller.py:110] Container failed !!!\n"
        "Container rank 3 status failed cmd ['python', '-u', 'train.py'] code -9 log log/workerlog.3\n"
    )
    assert root.code == "RUN121"
    assert (root.facts["rank"], root.facts["exitcode"], root.facts["signal"]) == (3, -9, "SIGKILL")


def test_paddle_termination_signal_is_a_teardown_not_a_cause() -> None:
    assert root_finding("FatalError: `Termination signal` is detected by the operating system.\n") is None


def test_paddle_fatal_signal_names_signal_and_pid() -> None:
    root = root_finding(
        "FatalError: `Erroneous arithmetic operation` is detected by the operating system.\n"
        "  [SignalInfo: *** SIGFPE (@0x7d67) received by PID 77 (TID 0x7f) from PID 0 ***]\n"
    )
    assert root.code == "RUN131" and root.facts["signal"] == "SIGFPE" and root.facts["pid"] == 77


def test_horovod_gloo_summary_names_the_rank_and_the_kill() -> None:
    root = root_finding(
        "RuntimeError: Horovod detected that one or more processes exited with non-zero status, thus causing "
        "the job to be terminated. The first process to do so was:\nProcess name: 2\nExit code: 137\n"
    )
    assert root.code == "RUN121" and root.facts["rank"] == 2 and root.facts["exitcode"] == -9


def test_ray_lost_node_names_its_address_and_yields_to_the_kill_record() -> None:
    dead = (
        "2023-03-03 05:15:30,774 WARNING worker.py:1866 -- The node with node id: 9426f445 and address: "
        "10.130.0.113 and node name: 10.130.0.113 has been marked dead because the detector has missed too "
        "many heartbeats from it.\n"
    )
    root = root_finding(dead)
    assert root.category == "process_crash" and root.facts["host"] == "10.130.0.113"
    oom = "Out of memory: Killed process 4242 (python) total-vm:9000kB, anon-rss:8000kB, file-rss:0kB\n"
    assert root_finding(dead + oom).category == "host_oom"


@pytest.mark.parametrize(
    ("tail", "code", "exitcode", "rank"),
    [
        (
            "=   RANK 3 PID 1234 RUNNING AT gpu-node-2\n=   KILLED BY SIGNAL: 11 (Segmentation fault)\n",
            "RUN131",
            -11,
            3,
        ),
        ("=   PID 1234 RUNNING AT gpu-node-2\n=   EXIT CODE: 139\n", "RUN131", -11, None),
        ("=   RANK 0 PID 1234 RUNNING AT gpu-node-2\n=   EXIT CODE: 9\n", "RUN133", 9, 0),
    ],
)
def test_hydra_frame_names_the_process_and_its_end(tail: str, code: str, exitcode: int, rank: Any) -> None:
    root = root_finding("=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n" + tail)
    assert root.code == code and root.facts["exitcode"] == exitcode and root.facts.get("rank") == rank
    assert (root.facts["pid"], root.facts["host"]) == (1234, "gpu-node-2")


def test_hydra_exit_code_without_its_frame_is_not_an_exit_record() -> None:
    assert root_finding("=   EXIT CODE: 139\n") is None


def test_horovod_elastic_summary_names_the_slot() -> None:
    root = root_finding(
        "RuntimeError: Horovod detected that one or more processes exited with non-zero status, thus causing "
        "the job to be terminated. The first process to do so was:\nProcess name: elastic-test-worker-1[0]\n"
        "Exit code: 137\n"
    )
    assert root.code == "RUN121" and root.facts["exitcode"] == -9
    assert (root.facts["host"], root.facts["local_rank"]) == ("elastic-test-worker-1", 0)
