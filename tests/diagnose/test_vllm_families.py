"""vLLM's multi-GPU failure messages, read at their source in three releases (PyPI wheels vllm 0.4.3,
0.6.6 and 0.34.0), each written as a user pastes it: vLLM's logger prefix ("ERROR 05-01 12:00:00
file.py:123]" up to 0.6, "[file.py:123]" since 0.7), the worker's prefix ("(VllmWorkerProcess pid=N)" of
0.4-0.6 multiproc_worker_utils.py, "(VllmWorker rank=N pid=N)" / "(Worker_TP1 pid=N)" of v1
multiproc_executor.py, "(EngineCore_DP0 pid=N)", Ray's "(RayWorkerWrapper pid=N)") and the traceback
where the message is raised. Sources:

- distributed/device_communicators/pynccl_wrapper.py: "Failed to load NCCL library from %s ..." (logged
  at ERROR, then the OSError re-raised; 0.4.3 glues its sentences without spaces) and NCCL_CHECK's
  "RuntimeError: NCCL error: <ncclGetErrorString>" (+ "Last error:" since 0.6);
- distributed/device_communicators/custom_all_reduce.py: the "Custom allreduce is disabled because/due
  to ..." warnings (healthy: vLLM falls back to NCCL) and custom_all_reduce_utils.py's P2P test
  ("Error happened when batch testing peer-to-peer access from ... to ...");
- distributed/device_communicators/shm_broadcast.py, distributed/utils.py (stateless barrier);
- executor/multiproc_worker_utils.py 0.4-0.6 ("Worker %s pid %s died, exit code: %s", "Exception in
  worker %s while processing method %s"), worker/worker_base.py ("Error executing method %s. This might
  cause deadlock in distributed execution."), v1/executor/multiproc_executor.py ("Worker proc %s died
  unexpectedly", "WorkerProc failed to start.", "WorkerProc initialization failed due to an exception in a
  background process", "RPC call to %s timed out.", "Worker failed with error '%s'"),
  v1/engine/core_client.py / utils.py ("Engine core initialization failed. See root cause above.",
  "Engine core proc %s died unexpectedly"), executor/ray_utils.py (placement groups, unique IPs, GPUs on
  the driver node), config/parallel.py ("World size (%d) is larger than the number of available GPUs");
- worker/worker.py, v1/core/kv_cache_utils.py, v1/worker/gpu_worker.py, v1/utils (GPU memory checks).

`python -m tests.diagnose.test_vllm_families` prints the sweep's table (expected class vs got).
"""

from __future__ import annotations

import sys
from typing import Optional

import pytest

from tests.helpers.diagnose_root import failure_findings

TS = "05-01 12:00:00"
W04 = "(VllmWorkerProcess pid=4321) "
WV1 = "(VllmWorker rank=1 pid=4321) "
WTP = "(Worker_TP1 pid=4321) "
ENG = "(EngineCore_DP0 pid=1234) "
RAY = "(RayWorkerWrapper pid=5678) "
SGT = "[2025-01-01 12:00:00 TP1] "


def _v0(level: str, where: str, msg: str, prefix: str = "") -> str:
    """vLLM up to 0.6: 'ERROR 05-01 12:00:00 file.py:123] msg' on every line of the record."""
    return "\n".join(f"{prefix}{level} {TS} {where}] {ln}" for ln in msg.split("\n"))


def _v1(level: str, where: str, msg: str, prefix: str = "") -> str:
    """vLLM 0.7+: 'ERROR 05-01 12:00:00 [file.py:123] msg'."""
    return "\n".join(f"{prefix}{level} {TS} [{where}] {ln}" for ln in msg.split("\n"))


def _tb(frames: str, last: str) -> str:
    return "Traceback (most recent call last):\n" + frames + last


_INIT_DEVICE = (
    '  File "/usr/local/lib/python3.10/dist-packages/vllm/worker/worker_base.py", line 465, in '
    "execute_method\n    return executor(*args, **kwargs)\n"
    '  File "/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py", line 132, in init_device\n'
    "    init_worker_distributed_environment(self.parallel_config, self.rank,\n"
)
_PYNCCL = (
    '  File "/usr/local/lib/python3.10/dist-packages/vllm/distributed/device_communicators/pynccl.py", '
    "line 99, in __init__\n    self.comm: ncclComm_t = self.nccl.ncclCommInitRank(\n"
    '  File "/usr/local/lib/python3.10/dist-packages/vllm/distributed/device_communicators/'
    'pynccl_wrapper.py", line 277, in ncclCommInitRank\n    self.NCCL_CHECK(self._funcs["ncclCommInitRank"]'
    "(ctypes.byref(comm),\n"
    '  File "/usr/local/lib/python3.10/dist-packages/vllm/distributed/device_communicators/'
    'pynccl_wrapper.py", line 256, in NCCL_CHECK\n    raise RuntimeError(f"NCCL error: {error_str}")\n'
)
_KV = (
    '  File "/usr/local/lib/python3.10/dist-packages/vllm/engine/llm_engine.py", line 389, in '
    "_initialize_kv_caches\n    self.model_executor.initialize_cache(num_gpu_blocks, num_cpu_blocks)\n"
    '  File "/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py", line 231, in '
    "initialize_cache\n    raise_if_cache_size_invalid(num_gpu_blocks,\n"
)
_KV1 = (
    '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/core/kv_cache_utils.py", line 699, in '
    "check_enough_kv_cache_memory\n    raise ValueError(\n"
)
_LOAD = (
    '  File "/usr/local/lib/python3.10/dist-packages/vllm/distributed/device_communicators/'
    'pynccl_wrapper.py", line 192, in __init__\n    lib = ctypes.CDLL(so_file)\n'
    '  File "/usr/lib/python3.10/ctypes/__init__.py", line 374, in __init__\n'
    "    self._handle = _dlopen(self._name, mode)\n"
)
_NCCL_LOAD_04 = (
    "Failed to load NCCL library from libnccl.so.2 .It is expected if you are not running on NVIDIA/AMD "
    "GPUs.Otherwise, the nccl library might not exist, be corrupted or it does not support the current "
    "platform Linux-5.15.0-105-generic-x86_64-with-glibc2.35.If you already have the library, please set "
    "the environment variable VLLM_NCCL_SO_PATH to point to the correct nccl library path."
)
_NCCL_LOAD_034 = (
    "Failed to load NCCL library from libnccl.so.2. It is expected if you are not running on NVIDIA/AMD "
    "GPUs.Otherwise, the nccl library might not exist, be corrupted or it does not support the current "
    "platform Linux-6.8.0-x86_64-with-glibc2.39. If you already have the library, please set the "
    "environment variable VLLM_NCCL_SO_PATH to point to the correct nccl library path."
)
_CAR = "To silence this warning, specify disable_custom_all_reduce=True explicitly."
_OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 896.00 MiB. GPU 1 has a total capacity "
    "of 79.15 GiB of which 612.06 MiB is free. Process 4321 has 78.54 GiB memory in use. Of the allocated "
    "memory 76.80 GiB is allocated by PyTorch, and 1.01 GiB is reserved by PyTorch but unallocated."
)
_ENGINE_INIT = (
    "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}"
)

# (id, expected class or None for a healthy line, paste)
CASES: list[tuple[str, Optional[str], str]] = [
    # -- NCCL library loading (pynccl_wrapper.py) -------------------------------------------------------
    (
        "nccl_load_04",
        "driver_env",
        _v0("ERROR", "pynccl_wrapper.py:196", _NCCL_LOAD_04, W04)
        + "\n"
        + _tb(_LOAD, "OSError: libnccl.so.2: cannot open shared object file: No such file or directory"),
    ),
    ("nccl_load_034_line", "driver_env", _v1("ERROR", "pynccl_wrapper.py:388", _NCCL_LOAD_034, WV1)),
    (
        "nccl_load_034_symbol",
        "driver_env",
        _v1("ERROR", "pynccl_wrapper.py:388", _NCCL_LOAD_034, WTP)
        + "\n"
        + _tb(
            _LOAD, "OSError: /usr/lib/x86_64-linux-gnu/libnccl.so.2: undefined symbol: ncclCommWindowRegister"
        ),
    ),
    (
        "nccl_load_uid",
        "driver_env",
        _tb(_LOAD, "OSError: libnccl.so.2: cannot open shared object file: No such file or directory\n\n")
        + "The above exception was the direct cause of the following exception:\n\n"
        + _tb("", "RuntimeError: failed to load the NCCL library for unique-id rendezvous"),
    ),
    # -- pynccl's NCCL_CHECK: vLLM's own wording of an NCCL result --------------------------------------
    (
        "pynccl_system",
        "nccl_network",
        _v0(
            "ERROR",
            "multiproc_worker_utils.py:226",
            "Exception in worker VllmWorkerProcess while processing method init_device: NCCL error: "
            "unhandled system error (run with NCCL_DEBUG=INFO for details), Traceback (most recent "
            "call last):",
            W04,
        )
        + "\n"
        + _tb(
            _INIT_DEVICE + _PYNCCL,
            "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)",
        ),
    ),
    (
        "pynccl_remote",
        "nccl_network",
        RAY
        + _v0(
            "ERROR",
            "worker_base.py:467",
            "Error executing method init_device. This might cause deadlock in distributed execution.",
        )
        + "\n"
        + "\n".join(
            RAY + ln
            for ln in _tb(
                _INIT_DEVICE + _PYNCCL,
                "RuntimeError: NCCL error: remote process exited or there was a network error\nLast error:\n"
                "socketProgress: Connection closed by remote peer node2<50412>",
            ).split("\n")
        ),
    ),
    (
        "pynccl_invalid_usage",
        "nccl_usage",
        _tb(
            _PYNCCL,
            "RuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)\nLast error:\n"
            "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000",
        ),
    ),
    # -- custom all-reduce ------------------------------------------------------------------------------
    (
        "car_p2p_test_failed",
        "driver_env",
        _tb(
            '  File "/usr/local/lib/python3.10/dist-packages/vllm/distributed/device_communicators/'
            'custom_all_reduce_utils.py", line 231, in gpu_p2p_access_check\n    raise RuntimeError(\n',
            "RuntimeError: Error happened when batch testing peer-to-peer access from (0, 0, 1, 1) to "
            "(0, 1, 0, 1):\nRuntimeError: CUDA error: peer access is not supported between these two devices",
        ),
    ),
    # -- worker and engine deaths -----------------------------------------------------------------------
    (
        "mp_worker_died_kill9",
        "host_oom",
        _v0("ERROR", "multiproc_worker_utils.py:120", "Worker VllmWorkerProcess pid 4321 died, exit code: -9")
        + "\n"
        + _v0("INFO", "multiproc_worker_utils.py:123", "Killing local vLLM worker processes"),
    ),
    (
        "mp_worker_died_segv",
        "process_crash",
        _v0(
            "ERROR", "multiproc_worker_utils.py:120", "Worker VllmWorkerProcess pid 4321 died, exit code: -11"
        )
        + "\n"
        + _v0("INFO", "multiproc_worker_utils.py:123", "Killing local vLLM worker processes"),
    ),
    (
        "v1_worker_died",
        "process_crash",
        _v1(
            "ERROR",
            "multiproc_executor.py:140",
            "Worker proc VllmWorker-1 died unexpectedly, shutting down executor.",
            ENG,
        ),
    ),
    (
        "v1_worker_died_exitcode",
        "process_crash",
        _v1(
            "ERROR",
            "multiproc_executor.py:404",
            "Worker proc VllmWorker-1 died unexpectedly (exit code: -11), shutting down executor.",
            ENG,
        ),
    ),
    (
        "engine_core_died",
        "process_crash",
        _v1(
            "ERROR",
            "core_client.py:564",
            "Engine core proc EngineCore_DP0 died unexpectedly, shutting down client.",
        ),
    ),
    (
        "engine_init_over_oom",
        "cuda_oom",
        _v1("ERROR", "multiproc_executor.py:470", "WorkerProc failed to start.", WV1)
        + "\n"
        + "\n".join(
            WV1 + ln
            for ln in _tb(
                '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_model_runner.py", line '
                "1734, in load_model\n    self.model = model_loader.load_model(\n",
                _OOM,
            ).split("\n")
        )
        + "\n"
        + _tb(
            '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core_client.py", line 80, in '
            "make_client\n",
            _ENGINE_INIT,
        ),
    ),
    (
        "engine_init_over_nccl",
        "nccl_network",
        _v1("ERROR", "multiproc_executor.py:470", "WorkerProc failed to start.", WTP)
        + "\n"
        + "\n".join(
            WTP + ln
            for ln in _tb(
                _PYNCCL,
                "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)",
            ).split("\n")
        )
        + "\n"
        + _v1(
            "ERROR",
            "core.py:708",
            "EngineCore failed to start.\nException: WorkerProc initialization failed due to an exception in "
            "a background process. See stack trace for root cause.",
            ENG,
        )
        + "\n"
        + _tb("", _ENGINE_INIT),
    ),
    (
        "ray_actor_died_oom",
        "host_oom",
        "ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.\n"
        "\tclass_name: RayWorkerWrapper\n\tactor_id: 8c3ec1a1f6b7e43d6ee2c4a601000000\n\tpid: 5678\n"
        "\tnamespace: 2b8c\n\tip: 10.0.0.2\nThe actor is dead because its worker process has died. "
        "Worker exit "
        "type: NODE_OUT_OF_MEMORY Worker exit detail: Task was killed due to the node running low on memory.",
    ),
    # -- placement and GPU count
    # ---------------------------------------------------------------------------------------------------
    (
        "ray_gpus_exceed_pg",
        "driver_env",
        _tb(
            '  File "/usr/local/lib/python3.10/dist-packages/vllm/executor/ray_utils.py", line 160, in '
            "initialize_ray_cluster\n",
            "ValueError: The number of required GPUs exceeds the total number of available GPUs in the "
            "placement group.",
        ),
    ),
    (
        "ray_no_gpu_driver",
        "driver_env",
        _tb(
            '  File "/usr/lib/py3/site-packages/vllm/executor/ray_gpu_executor.py", line 170, in '
            "_init_workers_ray\n",
            "ValueError: Ray does not allocate any GPUs on the driver node. Consider adjusting the Ray "
            "placement group or running the driver on a GPU node.",
        ),
    ),
    (
        "ray_pg_timeout",
        "driver_env",
        _tb(
            '  File "/usr/local/lib/python3.10/dist-packages/vllm/executor/ray_utils.py", line 192, in '
            "_wait_until_pg_ready\n",
            "ValueError: Cannot provide a placement group of placement_group_specs=[{'GPU': 1.0, "
            "'node:10.0.0.1': 0.001}, {'GPU': 1.0}, {'GPU': 1.0}, {'GPU': 1.0}] within 1800 seconds. See "
            "`ray status` to make sure the cluster has enough resources.",
        ),
    ),
    (
        "ray_unique_ip",
        "rendezvous",
        _tb(
            '  File "/usr/lib/py3/site-packages/vllm/executor/ray_gpu_executor.py", line 229, in '
            "_init_workers_ray\n",
            "RuntimeError: Every node should have a unique IP address. Got 2 nodes with node ids "
            "['a1b2', 'c3d4'] and 1 unique IP addresses {'172.17.0.2': ['a1b2', 'c3d4']}. Please check your "
            "network configuration. If you set `VLLM_HOST_IP` environment variable, make sure it is unique "
            "for each node.",
        ),
    ),
    (
        "world_size_gpus",
        "driver_env",
        _tb(
            '  File "/usr/local/lib/python3.12/dist-packages/vllm/config/parallel.py", line 1164, in '
            "__post_init__\n",
            "ValueError: World size (8) is larger than the number of available GPUs (4) in this node. If "
            "this is intentional and you are using:\n- ray, set '--distributed-executor-backend ray'.\n"
            "- multiprocessing, set '--nnodes' appropriately.",
        ),
    ),
    # -- GPU memory checks (released corpora label them cuda_oom)
    # ---------------------------------------------------------------------------------------------------
    (
        "kv_no_blocks_ray",
        "cuda_oom",
        "\n".join(
            RAY + ln
            for ln in (
                _v0(
                    "ERROR",
                    "worker_base.py:467",
                    "Error executing method initialize_cache. This might cause deadlock in "
                    "distributed execution.",
                )
                + "\n"
                + _tb(
                    _KV,
                    "ValueError: No available memory for the cache blocks. Try increasing "
                    "`gpu_memory_utilization` when initializing the engine.",
                )
            ).split("\n")
        ),
    ),
    (
        "kv_max_seq",
        "cuda_oom",
        _tb(
            _KV,
            "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens "
            "that can "
            "be stored in KV cache (20848). Try increasing `gpu_memory_utilization` or decreasing "
            "`max_model_len` when initializing the engine.",
        ),
    ),
    (
        "kv_v1_needed",
        "cuda_oom",
        "\n".join(
            ENG + f"ERROR {TS} [core.py:708] " + ln
            for ln in _tb(
                _KV1,
                "ValueError: To serve at least one request with the models's max seq len (131072), "
                "(16.00 GiB "
                "KV cache is needed, which is larger than the available KV cache memory (9.50 GiB). Based on "
                "the available memory, the estimated maximum model length is 77824. Try increasing "
                "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
            ).split("\n")
        ),
    ),
    (
        "startup_free_memory",
        "cuda_oom",
        _tb(
            '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_worker.py", line 190, in '
            "init_device\n    raise ValueError(\n",
            "ValueError: Free memory on device cuda:1 (31.44/79.19 GiB) on startup is less than desired GPU "
            "memory utilization (0.9, 71.27 GiB). Decrease GPU memory utilization or reduce GPU "
            "memory used by "
            "other processes.",
        ),
    ),
    (
        "memory_profiling",
        "cuda_oom",
        _tb(
            '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_worker.py", line 755, in '
            "determine_available_memory\n    assert init_free_memory >= free_gpu_memory, (\n",
            "AssertionError: Error in memory profiling. Initial free memory 70.12 GiB, current free memory "
            "71.30 GiB. This happens when other processes sharing the same container release GPU "
            "memory while "
            "vLLM is profiling during initialization. To fix this, ensure consistent GPU memory "
            "allocation or "
            "isolate vLLM in its own container.",
        ),
    ),
    (
        "worker_oom",
        "cuda_oom",
        _v0(
            "ERROR",
            "multiproc_worker_utils.py:226",
            "Exception in worker VllmWorkerProcess while processing method determine_num_available_blocks.",
            W04,
        )
        + "\n"
        + "\n".join(W04 + ln for ln in _tb(_KV, _OOM).split("\n")),
    ),
    # -- timeouts
    # ---------------------------------------------------------------------------------------------------
    (
        "rpc_timeout",
        "collective_timeout",
        _v1("ERROR", "core.py:708", "EngineCore encountered a fatal error.", ENG)
        + "\n"
        + "\n".join(
            ENG + f"ERROR {TS} [core.py:708] " + ln
            for ln in _tb(
                '  File "/usr/lib/py3/site-packages/vllm/v1/executor/multiproc_executor.py", line '
                '264, in get_response\n    raise TimeoutError(f"RPC call to {method} timed out.") from e\n',
                "TimeoutError: RPC call to execute_model timed out.",
            ).split("\n")
        ),
    ),
    (
        "shm_broadcast_stuck",
        "collective_timeout",
        "\n".join(
            _v1(
                "WARNING",
                "shm_broadcast.py:466",
                "No available shared memory broadcast block found in 60 seconds. This typically happens when "
                "some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv "
                "cache quantization).",
                WV1 if i % 2 else "",
            )
            for i in range(4)
        ),
    ),
    (
        "stateless_barrier",
        "collective_timeout",
        _tb(
            '  File "/usr/lib/py3/site-packages/vllm/distributed/utils.py", line 466, in barrier\n',
            "RuntimeError: Barrier timed out after 30.00 seconds",
        ),
    ),
    (
        "worker_failed_watchdog",
        "collective_timeout",
        _tb(
            '  File "/usr/lib/py3/site-packages/vllm/v1/executor/multiproc_executor.py", line '
            "549, in get_response\n",
            "RuntimeError: Worker failed with error '[Rank 1] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=1207, OpType=ALLREDUCE, NumelIn=8192, NumelOut=8192, "
            "Timeout(ms)=600000) ran for "
            "600003 milliseconds before timing out.', please check the stack trace above for the root cause",
        ),
    ),
    (
        "shm_broadcast_06",
        "collective_timeout",
        _v0(
            "WARNING",
            "shm_broadcast.py:386",
            "No available shared memory broadcast block found in 60 second.",
            W04,
        ),
    ),
    (
        "v0_iteration_timeout",
        "collective_timeout",
        _v0("ERROR", "async_llm_engine.py:865", "Engine iteration timed out. This should never happen!")
        + "\n"
        + _tb(
            '  File "/usr/local/lib/python3.10/dist-packages/vllm/engine/async_llm_engine.py", line 851, in '
            "run_engine_loop\n",
            "asyncio.exceptions.TimeoutError",
        ),
    ),
    (
        "unique_ip_title",
        "rendezvous",
        "Every node should have a unique IP address. Got 2 nodes with node ids ['a1', 'b2'] and 1 unique IP "
        "addresses",
    ),
    (
        "v1_worker_died_kill9",
        "host_oom",
        _v1(
            "ERROR",
            "multiproc_executor.py:404",
            "Worker proc VllmWorker-3 died unexpectedly (exit code: -9), shutting down executor.",
            ENG,
        ),
    ),
    (
        "driver_node_not_in_pg",
        "driver_env",
        "RuntimeError: driver node id 5f2e is not included in a placement group 0a1b. Node id -> bundles "
        "{'7c3d': [0, 1]}. You don't have enough GPUs available in a current node. Check `ray status` to see "
        "if you have available GPUs in a node 5f2e before starting an vLLM engine.",
    ),
    (
        "world_size_title",
        "driver_env",
        "ValueError: World size (2) is larger than the number of available GPUs (1) in this node.",
    ),
    (
        "memory_profiling_04",
        "cuda_oom",
        "AssertionError: Error in memory profiling. This happens when the GPU memory was not "
        "properly cleaned "
        "up before initializing the vLLM instance.",
    ),
    (
        "memory_profiling_06",
        "cuda_oom",
        _v0(
            "ERROR",
            "worker_base.py:467",
            "Error executing method determine_num_available_blocks. This might cause deadlock in distributed "
            "execution.",
            RAY,
        )
        + "\n"
        + RAY
        + "AssertionError: Error in memory profiling. Initial free memory 23318626304, current free memory "
        "23318626304. This happens when the GPU memory was not properly cleaned up before initializing the "
        "vLLM instance.",
    ),
    # -- data-parallel engines (v1/engine/utils.py, core.py 0.9-0.34) -----------------------------------
    (
        "dp_master_resources",
        "driver_env",
        "ValueError: Not enough resources to allocate 4 DP ranks on DP master node 10.0.0.1, possible to fit "
        "2 DP ranks.",
    ),
    (
        "dp_placement_groups",
        "driver_env",
        "ValueError: Not enough resources to allocate 8 placement groups, only created 4 placement groups. "
        "Available resources: {'CPU': 192.0, 'GPU': 4.0, 'memory': 1.2e+12}",
    ),
    (
        "dp_config_mismatch",
        "collective_mismatch",
        "RuntimeError: Configuration mismatch detected for engine 1. All DP workers must have identical "
        "configurations for parameters that affect collective communication (e.g., enable_eplb, "
        "eplb_config.log_balancedness). Worker hash: 5e1f, Expected hash: 9a0c (engine 0). Please ensure all "
        "workers are started with the same command-line arguments.",
    ),
    (
        "dp_handshake",
        "rendezvous",
        _tb(
            '  File "/usr/lib/py3/site-packages/vllm/v1/engine/core.py", line 1594, in startup_handshake\n',
            "RuntimeError: Did not receive response from front-end process within 5 minutes",
        ),
    ),
    # -- wrappers alone, and the known environment faults under them -------------------------------------
    ("engine_init_alone", "process_crash", _ENGINE_INIT),
    (
        "workerproc_init_alone",
        "process_crash",
        "Exception: WorkerProc initialization failed due to an exception in a background process. See stack "
        "trace for root cause.",
    ),
    (
        "fork_reinit",
        "driver_env",
        _v0(
            "ERROR",
            "multiproc_worker_utils.py:226",
            "Exception in worker VllmWorkerProcess while processing method init_device: Cannot re-initialize "
            "CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start "
            "method, Traceback (most recent call last):",
            W04,
        ),
    ),
    (
        "car_peer_access",
        "driver_env",
        "\n".join(
            WTP
            + "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:307 'peer access is not supported "
            "between these two devices'"
            for _ in range(2)
        ),
    ),
    (
        "pynccl_dev_shm",
        "nccl_network",
        "\n".join(
            W04 + f"ERROR {TS} multiproc_worker_utils.py:226] " + ln
            for ln in [
                "Exception in worker VllmWorkerProcess while processing method init_device: NCCL error: "
                "unhandled system error (run with NCCL_DEBUG=INFO for details)",
                "Last error:",
                "Error while creating shared memory segment /dev/shm/nccl-bWHyCi (size 9637888), Traceback "
                "(most recent call last):",
            ]
        ),
    ),
    (
        "ray_actor_died_system",
        "process_crash",
        "ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.\n"
        "\tclass_name: RayWorkerWrapper\n\tactor_id: 8c3ec1a1\n\tpid: 5678\n\tnamespace: 2b8c\n\tip: "
        "10.0.0.2\nThe actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR "
        "Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. There "
        "are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high "
        "memory usage. (2) ray stop --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV "
        "or other unexpected errors.",
    ),
    # -- SGLang (PyPI wheels sglang 0.3.6, 0.4.3, 0.5.23): its logger's "[2025-01-01 12:00:00 TP1] " --------
    (
        "sg_not_enough_memory",
        "cuda_oom",
        "\n".join(
            SGT + ln
            for ln in _tb(
                '  File "/usr/lib/py3/site-packages/sglang/srt/model_executor/model_runner.py", line 629, in '
                "init_memory_pool\n",
                "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current "
                "value: "
                "mem_fraction_static=0.88",
            ).split("\n")
        ).replace(SGT + "Traceback", SGT + "Scheduler hit an exception: Traceback", 1),
    ),
    (
        "sg_unbalanced",
        "cuda_oom",
        _tb(
            '  File "/usr/lib/py3/site-packages/sglang/srt/model_executor/model_runner.py", line 280, in '
            "init_torch_distributed\n",
            "ValueError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes. "
            "pre_model_load_memory=12.5, local_gpu_memory=78.9, local_gpu_memory * 0.9=71.01",
        ),
    ),
    (
        "sg_rank_died_kill9",
        "host_oom",
        "RuntimeError: Rank 1 scheduler died during initialization (exit code: -9). If exit code is -9 "
        "(SIGKILL), a common cause is the OS OOM killer. Run `dmesg -T | grep -i oom` to check.",
    ),
    (
        "sg_subprocess_segv",
        "process_crash",
        "[2025-01-01 12:00:00] Subprocess scheduler_1 (pid=4321) crashed with exit code -11. Triggering "
        "SIGQUIT for cleanup...\n[2025-01-01 12:00:00] Received sigquit from a child process. It usually "
        "means the child failed.",
    ),
    (
        "sg_rank_dead",
        "process_crash",
        "Exception: Rank 0 scheduler is dead. Please check if there are relevant logs.",
    ),
    (
        "sg_sigquit_alone",
        "process_crash",
        "[2025-01-01 12:00:00] Received sigquit from a child proces. It usually means the child failed.",
    ),
    (
        "sg_watchdog_04",
        "collective_timeout",
        SGT + "Watchdog timeout (self.watchdog_timeout=300)",
    ),
    (
        "sg_watchdog_05",
        "collective_timeout",
        SGT + "Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)",
    ),
    (
        "sg_init_failed",
        "process_crash",
        "Exception: Initialization failed. Please see the error messages above.",
    ),
    (
        "sg_pynccl",
        "nccl_network",
        "\n".join(
            SGT + ln
            for ln in _tb(
                _PYNCCL.replace("vllm", "sglang/srt"),
                "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)",
            ).split("\n")
        ).replace(SGT + "Traceback", SGT + "Scheduler hit an exception: Traceback", 1),
    ),
    (
        "sg_worker_oom",
        "cuda_oom",
        SGT + "TpModelWorkerClient hit an exception: Traceback (most recent call last):\n" + SGT + _OOM,
    ),
    ("ok_sg_dist", None, SGT + "Init torch distributed begin."),
    (
        "ok_sg_load",
        None,
        SGT
        + "Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=60.12 GB, mem usage=15.30 "
        "GB.\n" + SGT + "Memory pool end. avail mem=8.10 GB\n" + SGT + "max_total_num_tokens=400000, "
        "chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=2048, context_len=131072",
    ),
    (
        "ok_sg_ready",
        None,
        SGT
        + "Capture cuda graph begin. This can take up to several minutes.\n[2025-01-01 12:00:00] The server "
        "is fired up and ready to roll!\n"
        + SGT
        + "Prefill batch. #new-seq: 1, #new-token: 7, #cached-token: 0, "
        "token usage: 0.00, #running-req: 0, #queue-req: 0",
    ),
    (
        "ok_sg_mem_fraction",
        None,
        "[2025-01-01 12:00:00] Automatically reduce --mem-fraction-static to 0.855 because this is a "
        "multimodal model.",
    ),
    (
        "ok_sg_car",
        None,
        SGT
        + "Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs. "
        + _CAR,
    ),
    (
        "sg_oom_then_sigquit",
        "cuda_oom",
        SGT + "Scheduler hit an exception: Traceback (most recent call last):\n" + SGT + _OOM + "\n"
        "[2025-01-01 12:00:01] Received sigquit from a child process. It usually means the child failed.",
    ),
    (
        "sg_subprocess_kill9",
        "host_oom",
        "[2025-01-01 12:00:00] Subprocess scheduler_0 (pid=4321) crashed with exit code -9. Triggering "
        "SIGQUIT for cleanup...",
    ),
    (
        "shm_space",
        "nccl_network",
        _tb(
            '  File "/usr/lib/py3/site-packages/vllm/distributed/device_communicators/shm_broadcast.py", '
            "line 267, in check_shm_space\n",
            "RuntimeError: Insufficient space in /dev/shm for MessageQueue buffer: 1024 MiB required, 64 MiB "
            "free. Increase /dev/shm (e.g. --shm-size or --ipc=host).",
        ),
    ),
    (
        "engine_dead_alone",
        "process_crash",
        "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) "
        "for the root cause.",
    ),
    (
        "async_engine_dead_alone",
        "process_crash",
        "vllm.engine.async_llm_engine.AsyncEngineDeadError: Task finished unexpectedly. This should never "
        "happen! Please open an issue on Github. See stack trace above for the actual cause.",
    ),
    (
        "engine_process_failed_06",
        "process_crash",
        "RuntimeError: Engine process failed to start. See stack trace for the root cause.",
    ),
    (
        "workerproc_hit_alone",
        "process_crash",
        _v1("ERROR", "multiproc_executor.py:1223", "WorkerProc hit an exception.", WV1),
    ),
    (
        "worker_failed_oom",
        "cuda_oom",
        "RuntimeError: Worker failed with error 'CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
        "total capacity of 79.15 GiB of which 1.20 GiB is free.', please check the stack trace above for the "
        "root cause",
    ),
    (
        "ok_same_node_ignored",
        None,
        _v1(
            "ERROR",
            "parallel_state.py:2672",
            "Error ignored in is_in_the_same_node: [Errno 2] No such file or directory: '/psm_3c4e5f60'",
        ),
    ),
    (
        "ray_pg_requiring_034",
        "driver_env",
        "ValueError: Cannot provide a placement group requiring 8 GPUs (placement_group_specs=[{'GPU': 1.0, "
        "'node:10.0.0.1': 0.001}, {'GPU': 1.0}]) within 1800 seconds.\nTensor parallel size may exceed "
        "available GPUs in your cluster. Check resources with `ray status` and `ray list nodes`.",
    ),
    (
        "ray_required_devices_034",
        "driver_env",
        "ValueError: The number of required GPUs exceeds the total number of available GPUs in the placement "
        "group. Required number of devices: 8. Total number of devices: 4.",
    ),
    (
        "ray_v2_worker_died",
        "process_crash",
        _v1(
            "ERROR",
            "ray_executor_v2.py:522",
            "RayWorkerProc rank=[1] died unexpectedly, shutting down executor.",
            ENG,
        ),
    ),
    (
        "sg_scheduler_hit_alone",
        "process_crash",
        SGT + "Scheduler hit an exception: Traceback (most recent call last):",
    ),
    # -- healthy lines: vLLM's INFO/WARNING of a run that works -----------------------------------------
    (
        "ok_shm_during_compile",
        None,
        _v1(
            "WARNING",
            "shm_broadcast.py:466",
            "No available shared memory broadcast block found in 60 seconds. This typically happens "
            "when some "
            "processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache "
            "quantization).",
        )
        + "\n"
        + "\n".join(
            _v1("INFO", "gpu_model_runner.py:2100", f"Capturing CUDA graph shape {n}", WV1) for n in range(60)
        )
        + "\n"
        + _v1(
            "INFO",
            "core.py:210",
            "init engine (profile, create kv cache, warmup model) took 181.52 seconds",
            ENG,
        )
        + "\nINFO:     Application startup complete.",
    ),
    ("ok_nccl_version", None, _v0("INFO", "pynccl.py:63", "vLLM is using nccl==2.20.5", W04)),
    ("ok_found_nccl", None, _v0("INFO", "utils.py:660", "Found nccl from library libnccl.so.2", W04)),
    (
        "ok_p2p_cache",
        None,
        _v1(
            "INFO",
            "custom_all_reduce_utils.py:244",
            "reading GPU P2P access cache from /root/.cache/vllm/gpu_p2p_access_cache_for_0,1,2,3.json",
            WV1,
        ),
    ),
    (
        "ok_car_pcie",
        None,
        _v0(
            "WARNING",
            "custom_all_reduce.py:134",
            "Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs. "
            + _CAR,
            W04,
        ),
    ),
    (
        "ok_car_p2p",
        None,
        _v1(
            "WARNING",
            "custom_all_reduce.py:285",
            "Custom allreduce is disabled because your platform lacks GPU P2P capability or P2P test failed. "
            + _CAR,
            WTP,
        ),
    ),
    (
        "ok_car_world_size",
        None,
        _v1(
            "WARNING",
            "custom_all_reduce.py:214",
            "Custom allreduce is disabled due to an unsupported world size: 3. Supported world sizes: "
            "[2, 4, 6, 8]. " + _CAR,
            WV1,
        ),
    ),
    (
        "ok_car_nodes",
        None,
        _v0(
            "WARNING",
            "custom_all_reduce.py:83",
            "Custom allreduce is disabled because this process group spans across nodes.",
            RAY,
        ),
    ),
    (
        "ok_car_library",
        None,
        _v1(
            "WARNING",
            "custom_all_reduce.py:191",
            "Custom allreduce is disabled because of missing custom allreduce library",
            WTP,
        ),
    ),
    (
        "ok_mq_handle",
        None,
        _v1(
            "INFO",
            "shm_broadcast.py:289",
            "vLLM message queue communication handle: Handle(local_reader_ranks=[1, 2, 3], buffer_handle=(3, "
            "4194304, 6, 'psm_3c4e5f60'), local_subscribe_addr=ipc:///tmp/7f1c, remote_subscribe_addr=None, "
            "remote_addr_ipv6=False)",
        ),
    ),
    (
        "ok_torch_threads",
        None,
        _v0(
            "WARNING",
            "multiproc_worker_utils.py:312",
            "Reducing Torch parallelism from 32 threads to 1 to avoid unnecessary CPU contention. Set "
            "OMP_NUM_THREADS in the external environment to tune this value as needed.",
        ),
    ),
    (
        "ok_spawn",
        None,
        _v0(
            "WARNING",
            "multiproc_worker_utils.py:280",
            "CUDA was previously initialized. We must use the `spawn` multiprocessing start method. Setting "
            "VLLM_WORKER_MULTIPROC_METHOD to 'spawn'. See https://docs.vllm.ai/en/latest/getting_started/"
            "debugging.html#python-multiprocessing for more information.",
        ),
    ),
    (
        "ok_pg_wait",
        None,
        _v0(
            "INFO",
            "ray_utils.py:184",
            "Waiting for creating a placement group of specs for 10 seconds. specs=[{'GPU': 1.0, "
            "'node:10.0.0.1': 0.001}, {'GPU': 1.0}]. Check `ray status` to see if you have enough resources.",
        ),
    ),
    (
        "ok_ray_tp_warning",
        None,
        _v1(
            "WARNING",
            "ray_utils.py:294",
            "Tensor parallel size (8) exceeds available GPUs (4). This may result in Ray placement group "
            "allocation failures. Consider reducing tensor_parallel_size to 4 or less, or ensure your Ray "
            "cluster has 8 GPUs available.",
        ),
    ),
    (
        "ok_ranks",
        None,
        _v1(
            "INFO",
            "parallel_state.py:1208",
            "rank 1 in world size 4 is assigned as DP rank 0, PP rank 0, TP rank 1, EP rank 1",
            WTP,
        ),
    ),
    (
        "ok_world",
        None,
        _v1(
            "INFO",
            "parallel_state.py:1935",
            "world_size=4 rank=1 local_rank=1 distributed_init_method=tcp://127.0.0.1:45678 backend=nccl",
            WTP,
        ),
    ),
    (
        "ok_gloo_fallback",
        None,
        _v1(
            "WARNING",
            "parallel_state.py:1948",
            "Distributed backend nccl is not available; falling back to gloo.",
        ),
    ),
    (
        "ok_shutdown",
        None,
        _v0("INFO", "multiproc_worker_utils.py:140", "Terminating local vLLM worker processes")
        + "\n"
        + _v0("INFO", "multiproc_worker_utils.py:247", "Worker exiting", W04)
        + "\n"
        + _v1(
            "WARNING",
            "multiproc_executor.py:626",
            "[shutdown] Executor: workers still running after grace period; sending SIGTERM count=2",
        ),
    ),
    (
        "ok_blocks",
        None,
        _v0("INFO", "distributed_gpu_executor.py:57", "# GPU blocks: 27000, # CPU blocks: 8192")
        + "\n"
        + _v1("INFO", "kv_cache_utils.py:1087", "Maximum concurrency for 32,768 tokens per request: 12.54x")
        + "\n"
        + _v1("INFO", "gpu_worker.py:276", "Available KV cache memory: 50.21 GiB", WV1),
    ),
    (
        "ok_uneven_layers",
        None,
        _v1(
            "INFO",
            "utils.py:246",
            "Hidden layers were unevenly partitioned: [15,17]. This can be manually overridden using the "
            "VLLM_PP_LAYER_PARTITION environment variable",
        ),
    ),
]


def _got(log: str) -> Optional[str]:
    found = failure_findings(log)
    return found[0].category if found else None


@pytest.mark.parametrize("want,log", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_vllm_message_names_its_class(want: Optional[str], log: str) -> None:
    assert _got(log) == want, log


def main() -> int:
    wrong = 0
    for name, want, log in CASES:
        found = failure_findings(log)
        got = found[0].category if found else None
        code = found[0].code if found else "-"
        wrong += got != want
        print(f"{'ok ' if got == want else 'BAD'} {name:28s} want {want!s:20s} got {got!s:20s} {code}")
    print(f"checked {len(CASES)} wrong {wrong}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
