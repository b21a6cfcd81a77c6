"""Families read at their source (r2, s17): DeepSpeed ZeRO-3's runtime (rules/zero3_runtime.py: deepspeed
0.9.5 / 0.12.6 / 0.16.9 runtime/zero/partitioned_param_coordinator.py, parameter_offload.py,
partition_parameters.py, stage3.py), frameworks' OOM reports (rules/oom_frameworks.py: fairseq/trainer.py of
2018, 2019, 2020 and 0.12; MindSpore's op_runner.cc / kernel_runtime.cc / memory managers), glog's check of
an NCCL 1.x result (NCCL v1.3.4-1 src/nccl.h, core.cu ncclGetErrorString; NVCaffe's NCCL_CHECK), vLLM's
multiproc workers around a broken CUDA graph capture (vllm executor/multiproc_worker_utils.py), and a gdb
stack hung in NCCL's communicator teardown (init.cc ncclCommAbort -> commReclaim, 2.14+).
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = ["", "[rank3]: ", "node7: ", "[1,0]<stderr>:", "2025-01-02 03:04:05,678 - ERROR - "]

_SUMMARY = (
    "{'id': 723, 'status': 'AVAILABLE', 'numel': 4194304, 'ds_numel': 4194304, 'shape': (512, 8192), "
    "'ds_shape': (512, 8192), 'requires_grad': True, 'grad_shape': None, 'persist': False, "
    "'active_sub_modules': set(), 'ds_tensor.shape': torch.Size([1398102])}"
)

CASES = [
    # reset_step (0.6-0.14)
    (f"RuntimeError: still have inflight params [{_SUMMARY}]", "RUN510", {"param_id": 723}),
    ("RuntimeError: still have inflight params []", "RUN510", {"kind": "zero3_inflight_params"}),
    # fetch_sub_module's trace check (0.9-0.16), its first line as raised
    ("RuntimeError: tracing error at step 3: ", "RUN510", {"step": 3}),
    (
        "expected the next 2 parameters in the parameter fetch queue to be ({'id': 'name=layers.0.w id=5'}) ",
        "RUN510",
        {"kind": "zero3_tracing_error"},
    ),
    # the status asserts (assert param.ds_status == ..., param.ds_summary())
    (
        "AssertionError: " + _SUMMARY.replace("'AVAILABLE'", "'NOT_AVAILABLE'"),
        "RUN510",
        {"param_status": "NOT_AVAILABLE"},
    ),
    (
        "AssertionError: expected param "
        + _SUMMARY.replace("'AVAILABLE'", "'NOT_AVAILABLE'")
        + " to be inflight",
        "RUN510",
        {"kind": "zero3_param_status"},
    ),
    (f"RuntimeError: param {_SUMMARY} still in flight", "RUN510", {"param_status": "AVAILABLE"}),
    (f"RuntimeError: {_SUMMARY} expected to be released", "RUN510", {"param_id": 723}),
    (f"RuntimeError: {_SUMMARY} already in registry", "RUN510", {"param_id": 723}),
    (
        "RuntimeError: attempted to add non-inflight parameter to registry " + _SUMMARY,
        "RUN510",
        {"kind": "zero3_param_status"},
    ),
    (
        "RuntimeError: expect param.ds_status == ZeroParamStatus.NOT_AVAILABLE, got" + _SUMMARY,
        "RUN510",
        {"param_status": "AVAILABLE"},
    ),
    (
        "RuntimeError: attempted to record trace when status = ZeRoTraceMode.COMPLETE",
        "RUN510",
        {"trace_mode": "ZeRoTraceMode.COMPLETE"},
    ),
    ("RuntimeError: expected trace to be complete", "RUN510", {"kind": "zero3_trace_state"}),
    ("RuntimeError: attempted to invalidate already invalid trace", "RUN510", {"kind": "zero3_trace_state"}),
    # stage3.py step's memory-pressure warning, both remedy wordings
    (
        "[2022-07-13 21:09:13,651] [WARNING] [stage3.py:2391:step] 2 pytorch "
        "allocator cache flushes since last "
        "step. this happens when there is high memory pressure and is detrimental to performance. if this is "
        "happening frequently consider adjusting settings to reduce memory consumption. If you are unable to "
        "make the cache flushes go away consider adding torch.cuda.empty_cache() calls in your training loop "
        "to ensure that all ranks flush their caches at the same time",
        "RUN511",
        {"cache_flushes": 2},
    ),
    (
        "[WARNING] [stage3.py:2134:step] 10 pytorch allocator cache flushes "
        "since last step. this happens when "
        "there is high memory pressure and is detrimental to performance. if this is happening frequently "
        "consider adjusting settings to reduce memory consumption. If you are "
        "unable to make the cache flushes "
        "go away consider adding get_accelerator().empty_cache() calls in your training loop",
        "RUN511",
        {"cache_flushes": 10},
    ),
    # fairseq's trainer, old prints and logging
    ("| WARNING: ran out of memory, skipping batch", "RUN101", {"framework": "fairseq"}),
    ("| WARNING: ran out of memory, retrying batch", "RUN101", {"recovered": True}),
    ("| WARNING: OOM in all workers, skipping update", "RUN101", {"framework": "fairseq"}),
    (
        "2020-11-05 19:30:05 | WARNING | fairseq.trainer | attempting to "
        "recover from OOM in forward/backward "
        "pass",
        "RUN101",
        {"recovered": True},
    ),
    (
        "2021-01-01 00:00:00 | WARNING | fairseq.trainer | ran out of memory "
        "in validation step, retrying batch",
        "RUN101",
        {"framework": "fairseq"},
    ),
    (
        "2021-01-01 00:00:00 | ERROR | fairseq.trainer | OOM during optimization, irrecoverable",
        "RUN101",
        {"recovered": False},
    ),
    # MindSpore's device memory
    (
        "RuntimeError: Malloc for kernel output failed, Memory isn't enough, node:Default/Cast-op446",
        "RUN101",
        {"node": "Default/Cast-op446", "framework": "mindspore"},
    ),
    (
        "RuntimeError: Malloc for kernel input failed, Memory isn't enough, node:Default/ReduceMean-op0",
        "RUN101",
        {"buffer": "kernel input"},
    ),
    (
        "RuntimeError: Device memory isn't enough and alloc failed, alloc size:1048576",
        "RUN101",
        {"requested_bytes": 1048576},
    ),
    (
        "RuntimeError: Out of Memory!!! Request memory size: 33100113920B, Memory Statistic:",
        "RUN101",
        {"requested_bytes": 33100113920},
    ),
    # glog CHECK of an ncclResult_t: NCCL 1.x numbers past 7 read by their text or their 1.x number
    (
        "F0103 16:20:49.668439  6024 parallel.cpp:204] Check failed: result == "
        "ncclSuccess (13 vs. 0)  invalid "
        "data type",
        "RUN191",
        {"nccl_result": 13},
    ),
    (
        "F0103 16:20:49.668439  6024 parallel.cpp:204] Check failed: result == "
        "ncclSuccess (8 vs. 0)  invalid "
        "device index",
        "RUN191",
        {"nccl_error": "invalid device index"},
    ),
    (
        "F0103 16:20:49.668439  6024 parallel.cpp:204] Check failed: result == ncclSuccess (14 vs. 0)",
        "RUN191",
        {"nccl_error": "invalid reduction operations"},
    ),
    (
        "F0103 16:20:49.668439  6024 parallel.cpp:204] Check failed: result == ncclSuccess (11 vs. 0)  "
        "parameter mismatch between ranks",
        "RUN201",
        {"nccl_result": 11},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(("line", "code", "facts"), CASES)
def test_zero3_and_oom_family(prefix: str, line: str, code: str, facts: dict[str, object]) -> None:
    _check(prefix + line + "\n", code, facts)


def test_inflight_source_line_and_exception_read_once() -> None:
    log = (
        '  File "/x/deepspeed/runtime/zero/partitioned_param_coordinator.py", line 204, in reset_step\n'
        '    raise RuntimeError(f"still have inflight params "\n'
        f"RuntimeError: still have inflight params [{_SUMMARY}]\n"
    )
    _check(log, "RUN510", {"param_id": 723})


def test_glued_glog_lines_of_several_threads() -> None:
    log = (
        "F0103 16:20:49.668428  6023 parallel.cpp:204] Check failed: result == "
        "ncclSuccess (13 vs. 0)  invalid "
        "data typeF0103 16:20:49.668442  6022 parallel.cpp:204] Check failed: F0 0103 08 in\n"
    )
    _check(log, "RUN191", {"nccl_error": "invalid data type"})


def test_cache_flushes_stay_behind_a_failure() -> None:
    log = (
        "[WARNING] [stage3.py:2134:step] 3 pytorch allocator cache flushes "
        "since last step. this happens when "
        "there is high memory pressure\n"
        "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, unhandled "
        "system error, NCCL version 2.14.3\n"
    )
    root = _root(log)
    assert root is not None and root.code != "RUN511"


def test_vllm_capture_failure_with_multiproc_workers() -> None:
    log = (
        "ERROR 03-25 12:23:00 [engine.py:448]     super().capture_end()\n"
        "ERROR 03-25 12:23:00 [engine.py:448] RuntimeError: CUDA error: operation failed due to a previous "
        "error during capture\n"
        "ERROR 03-25 12:23:01 [multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 25756 died, exit "
        "code: -15\n"
    )
    _check(log, "RUN380", {"worker": "VllmWorkerProcess"})


@pytest.mark.parametrize("fn", ["ncclCommAbort", "ncclCommDestroy"])
def test_gdb_stack_hung_in_communicator_teardown(fn: str) -> None:
    log = (
        "#0  0x00007fc349513d2d in __GI___pthread_timedjoin_ex (threadid=140471077381888, thread_return=0x0, "
        "abstime=0x0, block=<optimized out>) at pthread_join_common.c:89\n"
        "#1  0x00007fc204d33e27 in commReclaim(ncclComm*) () from /usr/lib/libnccl.so.2\n"
        f"#2  0x00007fc204d345fd in {fn} () from /usr/lib/libnccl.so.2\n"
    )
    _check(log, "RUN297", {"in_teardown": True})


QUIET = [
    # a ds_summary printed by a debug line, not an error
    "[rank0] -fetch: param " + _SUMMARY.replace("'AVAILABLE'", "'NOT_AVAILABLE'"),
    # other programs' status dicts
    "INFO - Lifespan: Received message from worker 0: {'status': 'ready'}",
    # fairseq's healthy lines around OOM handling
    "2021-01-01 00:00:00 | INFO | fairseq.trainer | NOTE: overflow detected, setting loss scale to: 64.0",
    "| epoch 001 | loss 7.5 | oom 0 | wps 12000",
]


@pytest.mark.parametrize("line", QUIET)
def test_quiet(line: str) -> None:
    assert _root(line + "\n") is None


# KeyboardInterrupt of a wait (rules/interrupted_waits.py): torch 1.x-2.x torch/multiprocessing/spawn.py
# (start_processes -> join -> multiprocessing.connection.wait), torch/distributed/elastic/agent/server/api.py
# (_invoke_run -> time.sleep(monitor_interval)), torch/distributed/launch.py <= 1.8 (main -> process.wait()),
# and a rank in distributed_c10d.py's barrier.
_SPAWN = (
    "^CTraceback (most recent call last):\n"
    '  File "train_net.py", line 93, in <module>\n'
    "    args=(args,),\n"
    '  File "/opt/conda/lib/python3.8/site-packages/torch/multiprocessing/spawn.py", line 230, in spawn\n'
    "    return start_processes(fn, args, nprocs, join, daemon, start_method='spawn')\n"
    '  File "/opt/conda/lib/python3.8/site-packages/torch/multiprocessing/spawn.py", line 188, in '
    "start_processes\n"
    "    while not context.join():\n"
    '  File "/opt/conda/lib/python3.8/site-packages/torch/multiprocessing/spawn.py", line 101, in join\n'
    "    timeout=timeout,\n"
    '  File "/opt/conda/lib/python3.8/multiprocessing/connection.py", line 920, in wait\n'
    "    ready = selector.select(timeout)\n"
    "KeyboardInterrupt\n"
)
_TORCHRUN = (
    "Traceback (most recent call last):\n"
    '  File "/usr/local/bin/torchrun", line 8, in <module>\n'
    "    sys.exit(main())\n"
    '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/elastic/agent/server/api.py", line '
    "727, in run\n"
    "    result = self._invoke_run(role)\n"
    '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/elastic/agent/server/api.py", line '
    "868, in _invoke_run\n"
    "    time.sleep(monitor_interval)\n"
    "KeyboardInterrupt\n"
)
_OLD_LAUNCH = (
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.7/site-packages/torch/distributed/launch.py", line 253, in main\n'
    "    process.wait()\n"
    '  File "/opt/conda/lib/python3.7/subprocess.py", line 1019, in wait\n'
    "    return self._wait(timeout=timeout)\n"
    "KeyboardInterrupt\n"
)
_RANK_BARRIER = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 88, in <module>\n'
    "    dist.barrier()\n"
    '  File "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", line 3439, in barrier\n'
    "    work.wait()\n"
    "KeyboardInterrupt\n"
)


@pytest.mark.parametrize(
    ("log", "facts"),
    [
        (_SPAWN, {"waits_in": "launcher", "launcher": "spawn"}),
        (_TORCHRUN, {"waits_in": "launcher", "launcher": "elastic"}),
        (_OLD_LAUNCH, {"waits_in": "launcher", "launcher": "launch"}),
        (_RANK_BARRIER, {"waits_in": "collective", "frame": "barrier"}),
    ],
)
def test_interrupted_wait(log: str, facts: dict[str, object]) -> None:
    _check(log, "RUN512", facts)


def test_interrupt_of_training_code_is_not_a_hang() -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 120, in <module>\n'
        "    loss.backward()\n"
        '  File "/usr/lib/python3/dist-packages/torch/_tensor.py", line 487, in backward\n'
        "    torch.autograd.backward(\n"
        "KeyboardInterrupt\n"
    )
    root = _root(log)
    assert root is None or root.code != "RUN512"


def test_interrupt_behind_an_error() -> None:
    log = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n" + _SPAWN
    root = _root(log)
    assert root is not None and root.code == "RUN101"


# TF base_rendezvous_mgr.cc Cleanup(step_id): a collective pending when the step was cleaned up
@pytest.mark.parametrize(
    "line",
    [
        "2019-11-01 18:37:50.385293: W tensorflow/core/common_runtime/base_collective_executor.cc:216] "
        "BaseCollectiveExecutor::StartAbort Aborted: [_Derived_]Cleanup 95609632845199527",
        "2021-01-01 00:00:00.000000: W tensorflow/core/common_runtime/base_collective_executor.cc:249] "
        "BaseCollectiveExecutor::StartAbort ABORTED: Cleanup 42",
    ],
)
def test_tf_collective_pending_at_cleanup(line: str) -> None:
    _check(line + "\n\t [[{{node CollectiveReduce}}]]\n", "RUN201", {"node": "CollectiveReduce"})


# autograd _make_grads under a pipeline schedule (ColossalAI, DeepSpeed pipe, Megatron)
_GRAD = (
    "RuntimeError: Mismatch in shape: grad_output[0] has a shape of torch.Size([1, 128, 768]) and output[0] "
    "has a shape of torch.Size([1, 129, 768]).\n"
)


@pytest.mark.parametrize(
    "frame",
    [
        '  File "/x/colossalai/booster/plugin/hybrid_parallel_plugin.py", line 809, in backward_by_grad\n',
        '  File "/x/deepspeed/runtime/pipe/engine.py", line 739, in _exec_backward_pass\n',
        '  File "/x/megatron/core/pipeline_parallel/schedules.py", line 240, in backward_step\n',
    ],
)
def test_pipeline_grad_shape(frame: str) -> None:
    log = (
        frame
        + '  File "/x/torch/autograd/__init__.py", line 88, in _make_grads\n    raise RuntimeError(\n'
        + _GRAD
    )
    _check(log, "RUN513", {"grad_shape": "torch.Size([1, 128, 768])"})


def test_grad_shape_outside_a_pipeline_is_not_a_mismatch() -> None:
    log = '  File "train.py", line 50, in step\n    loss.backward(grad)\n' + _GRAD
    root = _root(log)
    assert root is None or root.code != "RUN513"


# deepspeed 0.9.5, 0.12.6, 0.16.9 runtime/zero/stage_1_and_2.py: assert self.ignore_unused_parameters
_UNUSED_ASSERT = (
    "Traceback (most recent call last):\n"
    '  File "/x/deepspeed/runtime/zero/stage_1_and_2.py", line 1312, in reduce_ipg_grads\n'
    '    assert self.ignore_unused_parameters, """\n'
    "AssertionError: \n"
    "                        This assert indicates that your module has parameters that\n"
    "                        were not used in producing loss.\n"
    "                        You can avoid this assert by\n"
    "                        (1) enable ignore_unused_parameters option in zero_optimization config;\n"
    "                        (2) making sure all trainable parameters and `forward` function\n"
    "                            outputs participate in calculating loss.\n"
)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_zero_unused_parameters_assert(prefix: str) -> None:
    log = "".join(prefix + ln + "\n" for ln in _UNUSED_ASSERT.splitlines())
    _check(log, "RUN202", {"kind": "zero_unused_parameters"})
