"""Workers lost to memory or to a peer's death outside PyTorch's launcher, GPU memory exhausted inside
Thrust/RMM/XGBoost, and collectives whose callers disagreed (rules/worker_losses.py). Each case is written
from the text at its source:
- dask distributed/nanny.py <= 2022.01 ("Worker exceeded %d%% memory budget. Restarting") and
  distributed/worker_memory.py 2022.02+ ("Worker {addr} (pid={pid}) exceeded {frac:.0%} memory budget.
  Restarting..."); distributed/scheduler.py KilledWorker (2022+ message, and the older bare tuple repr);
- Google Cloud ML Engine / Vertex AI's replica status; Kubernetes' "OOMKilling" event and "OOMKill" reason;
  Kubeflow mpi-operator v2 pkg/controller/mpi_job_controller.go ("%d/%d workers are evicted",
  MPIJobEvicted); Spark's YarnAllocator.scala ("Container killed by YARN for exceeding [physical|virtual]
  memory limits"), Hadoop ContainersMonitorImpl ("is running beyond physical memory limits. Current usage"),
  Spark 3.3+ ExecutorPodsLifecycleManager ("exited with exit code 137(SIGKILL, possible container OOM)");
- Thrust thrust/system/cuda/detail/*.h throw_on_error(status, "<algo> failed") (CUDA <= 10 "out of memory",
  11+ "cudaErrorMemoryAllocation: out of memory"); RMM pool_memory_resource.hpp RMM_FAIL("Maximum pool size
  exceeded"); XGBoost device_helpers.cuh ThrowOOMError ("Memory allocation error on worker %d") and its
  older dh::safe_cuda ("<file>(<line>): out of memory");
- rabit src/allreduce_robust.cc ("Allreduce Recovered data size do not match the specification of function
  call", "Too many nodes went down and we cannot recover"); XGBoost rabit/internal/utils.h ("Allreduce
  failed");
- TensorFlow core/common_runtime/base_collective_executor.cc ("Instance %d found no source for broadcast.
  This could mean that there were group_size=%d BcastRecvs but no BcastSend.");
- PyTorch torch/csrc/cuda/comm.cpp gather: 0.3 "gather got an input of invalid size: got 1x1, but expected
  3x1", 0.4-1.5 "Gather got an input of invalid size: got [..], but expected [..]", 1.6+ "Input tensor at
  index 1 has invalid shape [..], but expected [..]".
The lines of a healthy run stay silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, failure_findings, prefixed, root_finding

OOM, GPU_OOM, MISMATCH, EXITED = "RUN121", "RUN101", "RUN201", "RUN133"

CASES: list[tuple[str, str, dict[str, Any]]] = [
    (
        "distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting\n"
        "distributed.nanny - INFO - Worker process 79862 was killed by signal 15",
        OOM,
        {"framework": "dask", "terminate_pct": 95},
    ),
    (
        "2023-01-05 10:00:00,000 - distributed.worker_memory - WARNING - Worker tcp://127.0.0.1:40123 "
        "(pid=4242) exceeded 95% memory budget. Restarting...",
        OOM,
        {"pid": 4242, "worker": "tcp://127.0.0.1:40123"},
    ),
    (
        "distributed.scheduler.KilledWorker: Attempted to run task 'train_part-abc' on 4 different workers, "
        "but all those workers died while running it. The last worker that attempt to run the task was "
        "tcp://10.0.0.5:40123.",
        EXITED,
        {"task": "train_part-abc", "attempts": 4},
    ),
    ("KilledWorker: ('train_part-2166870f97e063bb06fb6d64d0ff334c', 'tcp://127.0.0.1:37263')", EXITED, {}),
    (
        "Google Cloud ML: The replica master 0 ran out-of-memory "
        "and exited with a non-zero status of 9(SIGKILL)",
        OOM,
        {"replica": "master 0", "exitcode": 9, "signal": 9},
    ),
    (
        "The replica workerpool0-0 ran out-of-memory and exited with a non-zero status of 137.",
        OOM,
        {"replica": "workerpool0-0", "exitcode": 137},
    ),
    ("> **Restart Reason**: OOMKill (memory exceeded limit, SIGKILL)", OOM, {"reason": "OOMKilled"}),
    (
        "  Warning  OOMKilling  3m  kernel-monitor, gpu-node-3 "
        " Memory cgroup out of memory: Kill process 4242",
        OOM,
        {},
    ),
    (
        "    message: 1/8 workers are evicted\n    reason: MPIJobEvicted",
        OOM,
        {"evicted_workers": 1, "workers": 8},
    ),
    (
        "18/05/16 00:46:24 WARN YarnAllocator: Container killed "
        "by YARN for exceeding memory limits. 8.3 GB of "
        "8 GB physical memory used. Consider boosting spark.yarn.executor.memoryOverhead.",
        OOM,
        {"platform": "yarn"},
    ),
    (
        "Container killed by YARN for exceeding physical memory "
        "limits. 10.4 GB of 10 GB physical memory used.",
        OOM,
        {"memory": "physical"},
    ),
    (
        "Container [pid=4321,containerID=container_1_0001_01_000002] "
        "is running beyond physical memory limits. "
        "Current usage: 2.1 GB of 2 GB physical memory used; 4.0 GB of 4.2 GB virtual memory used. Killing "
        "container.",
        OOM,
        {"used": "2.1 GB", "limit": "2 GB"},
    ),
    (
        "The executor with id 3 exited with exit code 137(SIGKILL, possible container OOM).",
        OOM,
        {"executor": 3},
    ),
    (
        "terminate called after throwing an instance of 'thrust::system::system_error'\n"
        "  what():  parallel_for failed: out of memory",
        GPU_OOM,
        {"op": "parallel_for"},
    ),
    (
        "terminate called after throwing an instance of 'thrust::system::system_error'\n"
        "  what():  radix_sort: failed on 1st step: cudaErrorMemoryAllocation: out of memory",
        GPU_OOM,
        {},
    ),
    (
        "xgboost.core.XGBoostError: [18:41:03] /workspace/src/tree/updater_gpu_hist.cu:1004: Exception in "
        "gpu_hist: parallel_for failed: out of memory",
        GPU_OOM,
        {},
    ),
    (
        "MemoryError: std::bad_alloc: out_of_memory: RMM failure at:/opt/conda/include/rmm/mr/device/"
        "pool_memory_resource.hpp:196: Maximum pool size exceeded",
        GPU_OOM,
        {},
    ),
    (
        "ml.dmlc.xgboost4j.java.XGBoostError: [22:22:41] /workspace/src/tree/updater_gpu_hist.cu:712: "
        "Exception "
        "in gpu_hist: [22:22:41] /workspace/src/common/device_helpers.cuh:428: Memory allocation error on "
        "worker 3: Caching allocator\n- Free memory: 224067584\n- Requested memory: 878511352",
        GPU_OOM,
        {"device": 3},
    ),
    (
        "terminate called after throwing an instance of 'thrust::system::system_error'\n"
        "  what():  /home/u/xgboost/src/tree/../common/device_helpers.cuh(456): out of memory",
        GPU_OOM,
        {},
    ),
    (
        "Fault tolerance not work: Allreduce Recovered data size "
        "do not match the specification of function call",
        MISMATCH,
        {"framework": "rabit"},
    ),
    (
        "Too many nodes went down and we cannot recover.., shutting down process",
        EXITED,
        {"reason": "workers_down"},
    ),
    (
        "XGBoostError: rabit/internal/utils.h:90: Allreduce failed",
        EXITED,
        {"op": "allreduce"},
    ),
    (
        "2019-09-26 10:51:21.474402: W tensorflow/core/common_runtime/base_collective_executor.cc:203] "
        "BaseCollectiveExecutor::StartAbort Internal: Instance "
        "0 found no source for broadcast.  This could mean "
        "that there were group_size=2 BcastRecvs but no BcastSend.",
        MISMATCH,
        {"instance": 0, "group_size": 2},
    ),
    (
        "InternalError: Instance 7 already has source 0, received second claim from 1",
        MISMATCH,
        {"kind": "broadcast_two_sources", "rank": 1},
    ),
    (
        "tensorflow.python.framework.errors_impl.InternalError: Collective instance 3 expected type 0 and "
        "data_type 1 but got type 2 and data_type 1",
        MISMATCH,
        {"kind": "instance_type_mismatch", "instance": 3},
    ),
    (
        "InternalError: Device /job:worker/replica:0/task:2/device:GPU:0 is joining a group that is already "
        "full (group_key=1)",
        MISMATCH,
        {"kind": "group_full", "group_key": 1},
    ),
    (
        "RuntimeError: Gather got an input of invalid size: got [2, 1, 20, 256, 64], but expected "
        "[2, 2, 20, 256, 64] (gather at /AWS-PyTorch/torch/csrc/cuda/comm.cpp:231)",
        MISMATCH,
        {"got": "[2, 1, 20, 256, 64]", "expected": "[2, 2, 20, 256, 64]"},
    ),
    ("ValueError: gather got an input of invalid size: got 1x1, but expected 3x1", MISMATCH, {"got": "1x1"}),
    (
        "RuntimeError: Input tensor at index 1 has invalid shape [1, 5, 256], but expected [1, 6, 256]",
        MISMATCH,
        {"device_index": 1},
    ),
]


@pytest.mark.parametrize(("text", "code", "facts"), CASES, ids=[f"c{i}" for i in range(len(CASES))])
@pytest.mark.parametrize("prefix", ["", LAUNCHER_PREFIXES[4]], ids=["bare", "host"])
def test_worker_loss_shapes(prefix: str, text: str, code: str, facts: dict[str, Any]) -> None:
    root = root_finding(prefixed(prefix, text))
    assert root is not None and root.code == code, (text, root)
    for k, v in facts.items():
        assert root.facts.get(k) == v, (k, root.facts)


def test_the_nannys_budget_leads_its_signal_echo() -> None:
    log = (
        "distributed.worker - WARNING - Worker is at 84% memory "
        "usage. Pausing worker.  Process memory: 6.39 GB "
        "-- Worker memory limit: 7.26 GB\n"
        "distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting\n"
        "distributed.nanny - INFO - Worker process 79862 was killed by signal 15\n"
        "distributed.nanny - WARNING - Restarting worker\n"
    )
    root = root_finding(log)
    assert root is not None and root.code == OOM and root.facts.get("framework") == "dask", root


HEALTHY = [
    "distributed.worker - WARNING - Worker is at 84% memory usage. Pausing worker.  Process memory: 6.39 GB "
    "-- Worker memory limit: 7.26 GB",
    "distributed.worker - INFO - Worker is at 45% memory usage. Resuming worker.",
    "distributed.nanny - WARNING - Restarting worker",
    "    lastState: {}\n    reason: MPIJobRunning\n    message: MPIJob default/pi is running.",
    "The replica master 0 exited with a non-zero status of 0.",
    "Container killed on request. Exit code is 143",
    "spark.yarn.executor.memoryOverhead=4096",
    "gather: dim=0 output_device=0",
    "memory budget: 7.26 GB per worker",
    "Instance 0 broadcast source is worker 0",
    "group_key=1 group_size=2 (current devices)=(,/job:worker/replica:0/task:0/device:GPU:0)",
    "[LightGBM] [Info] Finished loading data in 1.2 seconds",
]


@pytest.mark.parametrize("text", HEALTHY, ids=[f"h{i}" for i in range(len(HEALTHY))])
def test_healthy_lines_stay_silent(text: str) -> None:
    assert not failure_findings(text + "\n"), text
