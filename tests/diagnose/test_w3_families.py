"""Timeouts and desyncs read as families (session of 2026-12-07, misses of v20's held-out and v21's dev half).

- DDP's model check (reducer.cpp verify_params_across_processes) by its head alone, as a title keeps it:
  "DDP expects same model across all ranks" (collective_mismatch, RUN201);
- PaddlePaddle DataParallel's reducer (imperative/reducer.cc 2.0-2.4, distributed/collective/reducer.cc
  EagerReducer 2.3+): the unfinished reduction (2.0 "... must participate in the calculation of losses ...",
  2.1+ "A serious error has occurred here. Please set find_unused_parameters=True ...") is RUN202, the
  gradient ready twice ("Error happened, when parameter[12][w] has been ready before") RUN203; the
  reducer's warnings stay silent;
- the watchdog's record cut inside its first words ("[E ProcessGroupNCCL.cpp:587] [Rank 1] Watchdog c"):
  error level only (RUN151);
- a KeyboardInterrupt in a "main process first" context manager (yolov5/ultralytics'
  torch_distributed_zero_first, transformers' / accelerate's main_process_first): the ranks waited at its
  barrier for rank 0 (RUN512); the block's own work interrupted is not a wait;
- a gdb frame of NCCL's kernel launch inside libnccl ("cudart::cudaApiLaunchKernel ... from libnccl.so.2"):
  a rank stuck in a collective (RUN297); the same launch from libcudart / libcuda is any kernel's;
- a title that says multi-GPU training timed out ("多卡训练超时问题", "Timeout in multi-node training"):
  RUN151; a socket, store, loader or start-up timeout, a setting and a question are not;
- a person's mark that the log hangs ("*hangs*") right under NCCL's lines of a communicator that came up:
  RUN151; under the bootstrap or any other line it says nothing.

Session of 2026-12-07 (late), misses of v21's held-out and v22's dev half (the tables at the end):
- a title of training on several GPUs that hangs (misspellings of "stuck" too): RUN151;
- a title of a hang when one rank alone meets a condition of its data (SyncBatchNorm, an empty batch): RUN201;
- a stack cut at DDP 2.x forward's `self._pre_forward(*inputs, **kwargs)`, plain or in rich's box: RUN202;
- Ray's report of a dead worker (its "Worker PID: N", ActorDiedError's "pid: N") is the consequence of a
  failure that process logged behind Ray's "(RayWorker pid=N)" prefix.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, check_root, prefixed, root_finding

DDP_MODEL = [
    ("DDP expects same model across all ranks", None),
    ("RuntimeError: DDP expects same model across all ranks", None),
    (
        "RuntimeError: DDP expects same model across all ranks, but Rank 1 has 166 params, while rank 0 has "
        "inconsistent 0 params.",
        [0, 1],
    ),
]


@pytest.mark.parametrize("line,ranks", DDP_MODEL)
def test_ddp_model_check_by_its_head_is_a_mismatch(line: str, ranks: object) -> None:
    check_root(line + "\n", "RUN201", {"kind": "ddp_model_mismatch", "ranks": ranks})


_SHARED = (
    "Please set find_unused_parameters=True to traverse backward graph in each step to prepare reduce in "
    "advance."
)
_REASONS = (
    " If you have set, There may be several reasons for this error: 1) Please note that all forward outputs "
    "derived from the module parameters must participate in the calculation of losses and subsequent "
    "gradient calculations. If not, the wrapper will hang, waiting for autograd to generate gradients for "
    "these parameters."
)
PADDLE_REDUCER = [
    # 2.1+ PrepareForBackward (legacy and eager reducer)
    (
        "RuntimeError: (PreconditionNotMet) A serious error has occurred here. " + _SHARED + _REASONS,
        "RUN202",
    ),
    # 2.0 PrepareForBackward
    (
        "RuntimeError: (PreconditionNotMet) Please note that all ``forward`` outputs derived from the module "
        "parameters must participate in the calculation of losses and subsequent gradient calculations. If "
        "not, the wrapper will hang, waiting for autograd to generate gradients for these parameters. you "
        "can use detach or stop_gradient to make the unused parameters detached from the autograd graph.",
        "RUN202",
    ),
    # C++ trace's type, no Python wrapper
    ("PreconditionNotMetError: A serious error has occurred here. " + _SHARED, "RUN202"),
    # MarkVarReady: ready twice (eager and legacy, the blog's quoted spacing)
    (
        "RuntimeError: (PreconditionNotMet) Error happened, when parameter[385][linear_12.w_0] has been "
        "ready before. "
        + _SHARED
        + " If you have set, there may be several reasons for this error: 1) In multiple "
        "reentrant backward phase, some parameters are reused.2) Using model parameters outside of forward "
        "function.",
        "RUN203",
    ),
    ("Error happened, when parameter[385]  [linear_12.w_0@GRAD] has been ready before.", "RUN203"),
    # the shared sentence alone: the reasons after it say which
    (
        _SHARED + " If you have set, there may be several reasons for this error: 1) In multiple reentrant "
        "backward phase, some parameters are reused.",
        "RUN203",
    ),
    (_SHARED, "RUN202"),
]
PADDLE_REDUCER_SILENT = [
    "W1205 10:00:00.123456 1234 reducer.cc:694] All parameters are involved in the backward pass. It is "
    "recommended to set find_unused_parameters to False to improve performance.",
    "W1205 10:00:00.123456 1234 reducer.cc:700] There is no parameter in the device involved in the backward "
    "calculation. If there are parameters on other devices involved in the backward, then a serious error "
    "will occur here.",
    "model = paddle.DataParallel(model, find_unused_parameters=True)",
    "find_unused_parameters (bool, optional): Whether to traverse the entire backward graph from the output.",
]


@pytest.mark.parametrize("prefix", ["", "[1,0]<stderr>:", "2025-01-02 03:04:05,678 - ERROR - "])
@pytest.mark.parametrize("line,code", PADDLE_REDUCER)
def test_paddle_reducer_errors_are_ddp_reducer_mismatches(prefix: str, line: str, code: str) -> None:
    check_root(prefixed(prefix, line), code, {"framework": "paddle"})


@pytest.mark.parametrize("line", PADDLE_REDUCER_SILENT)
def test_paddle_reducer_warnings_and_settings_are_silent(line: str) -> None:
    assert root_finding(line + "\n") is None


WATCHDOG_CUT = [
    "[E ProcessGroupNCCL.cpp:587] [Rank 1] Watchdog c",
    "[E ProcessGroupNCCL.cpp:587] [Rank 1] Watchdog caught",
    "[E ProcessGroupNCCL.cpp:828] [Rank 3] Watchdog caught co",
    "[rank1]:[E327 23:04:00.815080959 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog ca",
    "[E ProcessGroupNCCL.cpp:587] [Rank 1] Watchdog caught collective operati",
]
WATCHDOG_CUT_SILENT = [
    "[I ProcessGroupNCCL.cpp:587] [Rank 1] Watchdog c",
    "[E ProcessGroupNCCL.cpp:587] [Rank 1] Watchdog",
    "Watchdog c",
    "[W ProcessGroupNCCL.cpp:587] [Rank 1] Watchdog caught",
]


@pytest.mark.parametrize("line", WATCHDOG_CUT)
def test_watchdog_record_cut_in_its_first_words_is_the_timeout(line: str) -> None:
    check_root("train: Caching images 85%|########4 | 35595/41999\n" + line + "\n", "RUN151")


@pytest.mark.parametrize("line", WATCHDOG_CUT_SILENT)
def test_watchdog_cut_without_error_level_is_silent(line: str) -> None:
    assert root_finding(line + "\n") is None


def _interrupted(frames: str) -> str:
    return "Traceback (most recent call last):\n" + frames + "KeyboardInterrupt\n"


ZERO_FIRST = [
    # ultralytics 8.x: the with line, then contextlib's __enter__
    (
        '  File "/x/ultralytics/models/yolo/detect/train.py", line 48, in get_dataloader\n'
        "    with torch_distributed_zero_first(rank):  # init dataset *.cache only once if DDP\n"
        '  File "/usr/lib/python3.9/contextlib.py", line 119, in __enter__\n'
        "    return next(self.gen)\n",
        "torch_distributed_zero_first",
    ),
    # yolov5: the generator's own frame shown
    (
        '  File "/yolov5/train.py", line 100, in train\n'
        "    with torch_distributed_zero_first(LOCAL_RANK):\n"
        '  File "/usr/lib/python3.8/contextlib.py", line 113, in __enter__\n'
        "    return next(self.gen)\n"
        '  File "/yolov5/utils/torch_utils.py", line 37, in torch_distributed_zero_first\n'
        "    dist.barrier(device_ids=[local_rank])\n",
        "torch_distributed_zero_first",
    ),
    # transformers' TrainingArguments.main_process_first, exiting the block
    (
        '  File "/w/run_clm.py", line 400, in main\n'
        '    with training_args.main_process_first(desc="dataset map tokenization"):\n'
        '  File "/usr/lib/python3.10/contextlib.py", line 142, in __exit__\n'
        "    next(self.gen)\n",
        "main_process_first",
    ),
    # accelerate's PartialState.local_main_process_first
    (
        '  File "/w/train.py", line 88, in main\n'
        "    with accelerator.local_main_process_first():\n"
        '  File "/usr/lib/python3.10/contextlib.py", line 135, in __enter__\n'
        "    return next(self.gen)\n",
        "local_main_process_first",
    ),
]
ZERO_FIRST_SILENT = [
    # rank 0 in the block's own work (caching the dataset): not a wait
    '  File "/x/ultralytics/models/yolo/detect/train.py", line 48, in get_dataloader\n'
    "    with torch_distributed_zero_first(rank):  # init dataset *.cache only once if DDP\n"
    '  File "/x/ultralytics/data/build.py", line 90, in build_yolo_dataset\n'
    "    return YOLODataset(\n"
    '  File "/x/ultralytics/data/dataset.py", line 60, in cache_labels\n'
    "    for im_file, lb, shape in pbar:\n",
    # any other context manager
    '  File "/w/train.py", line 88, in main\n'
    "    with torch.no_grad():\n"
    '  File "/usr/lib/python3.10/contextlib.py", line 135, in __enter__\n'
    "    return next(self.gen)\n",
]


@pytest.mark.parametrize("frames,fn", ZERO_FIRST)
def test_interrupt_in_a_main_process_first_barrier_is_a_hang(frames: str, fn: str) -> None:
    check_root(_interrupted(frames), "RUN512", {"waits_in": "collective", "frame": fn})


@pytest.mark.parametrize("frames", ZERO_FIRST_SILENT)
def test_interrupt_outside_such_a_barrier_is_silent(frames: str) -> None:
    assert root_finding(_interrupted(frames)) is None


NCCL_LAUNCH = [
    "#9  0x00007f6b2e8057cb in cudart::cudaApiLaunchKernel(void const*, dim3, dim3, void**, unsigned long, "
    "CUstream_st*) () from /usr/local/cuda/lib64/libnccl.so.2",
    "#4  0x00007f6b2e8057cb in cudaLaunchKernel () from /usr/lib/x86_64-linux-gnu/libnccl.so.2",
    "#6  0x00007f6b2e8057cb in cudart::cudaApiLaunchKernelCommon(void const*, dim3, dim3, void**, unsigned "
    "long, CUstream_st*, bool) () from /opt/conda/lib/python3.10/site-packages/nvidia/nccl/lib/libnccl.so.2",
]
NCCL_LAUNCH_SILENT = [
    "#9  0x00007f6b2e8057cb in cudart::cudaApiLaunchKernel(void const*, dim3, dim3, void**, unsigned long, "
    "CUstream_st*) () from /usr/local/cuda/lib64/libcudart.so.11.0",
    "#8  0x00007f6939a424f3 in cuLaunchKernel () from /usr/local/nvidia/cpu_lib/libcuda.so.1",
    "#5  0x00007f6b2e8057cb in ncclTopoGetSystem () from /usr/lib/x86_64-linux-gnu/libnccl.so.2",
]


@pytest.mark.parametrize("line", NCCL_LAUNCH)
def test_gdb_frame_of_nccls_kernel_launch_is_a_stuck_collective(line: str) -> None:
    title = "Multi-machine training torch hang on A100\n"
    check_root(title + line + "\n", "RUN297", {"waits_in": "collective"})
    check_root(line + "\n", "RUN297")


@pytest.mark.parametrize("line", NCCL_LAUNCH_SILENT)
def test_other_launch_frames_are_silent(line: str) -> None:
    assert root_finding(line + "\n") is None


TRAINING_TIMEOUT = [
    "多卡训练超时问题",
    "分布式训练超时",
    "多机多卡训练时超时退出",
    "Timeout in multi-node training",
    "Multi GPU training timeout",
    "DDP training times out",
    "Training with 4 GPUs timed out after 30 minutes",
    "[Bug] distributed fine-tuning timed out",
]
TRAINING_TIMEOUT_SILENT = [
    "使用原生DDP训练后，15min后显示sockettimeout。",
    "Multi-GPU training: DataLoader timed out",
    "How to set timeout for multi-GPU training",
    "multi-gpu training timeout=1800",
    "Increase the timeout for distributed training",
    "Multi-node training: TCPStore client timed out",
    "Distributed training timeout should be configurable",
    "Timeout downloading the model for multi-GPU training",
]


@pytest.mark.parametrize("title", TRAINING_TIMEOUT)
def test_a_title_of_multi_gpu_training_timing_out_is_the_watchdog(title: str) -> None:
    check_root(title + "\n", "RUN151", {"read_as": "title", "kind": "training_timeout"})


@pytest.mark.parametrize("title", TRAINING_TIMEOUT_SILENT)
def test_other_timeouts_of_training_are_not_read_as_collective(title: str) -> None:
    root = root_finding(title + "\n")
    assert root is None or root.category != "collective_timeout", (title, root)


NCCL_UP = [
    "neuromancer:13802:13802 [0] INFO Launch mode Group/CGMD",
    "host1:1234:1234 [0] NCCL INFO comm 0x55d5 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE",
    "host1:1234:1234 [0] NCCL INFO Channel 01 : 1[1] -> 0[0] via P2P/IPC",
    "host1:1234:1234 [0] NCCL INFO Connected all rings",
    "host1:1234:1234 [0] NCCL INFO 2 coll channels, 0 collnet channels, 0 nvls channels, 2 p2p channels",
    # (a line this long followed by a lower-case one reads as a terminal's hard wrap: kept short)
    "h:12:12 [0] NCCL INFO ncclCommInitRank comm 0x7f rank 0 nranks 8 cudaDev 0 - Init COMPLETE",
]
MARKS = ["*hangs*", "(stuck here)", "it hangs forever...", "<hang>", "卡住了", "（卡在这里）"]


@pytest.mark.parametrize("up", NCCL_UP)
@pytest.mark.parametrize("mark", MARKS)
def test_a_hang_marked_after_nccl_came_up_is_a_collective_hang(up: str, mark: str) -> None:
    check_root(up + "\n" + mark + "\n", "RUN151", {"inferred_from": "mark"})


@pytest.mark.parametrize(
    "above",
    [
        "host1:1234:1234 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
        "Epoch 1: 100%|##########| 10/10 [00:01<00:00]",
        "    loss.backward()",
        "",
    ],
)
def test_a_hang_mark_elsewhere_is_silent(above: str) -> None:
    assert root_finding(above + "\n*hangs*\n") is None


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES[:2])
def test_a_healthy_nccl_start_cut_there_is_silent(prefix: str) -> None:
    log = "\n".join(NCCL_UP[1:])
    assert root_finding(prefixed(prefix, log)) is None


# --- session of 2026-12-07 (late): v21's held-out and v22's dev misses, read as families ------------------

# Training on several GPUs that hangs, in a title (hang_titles' "title: multi-gpu training hangs"): RUN151.
# The released ones: "Marian hangs on multiple GPUs, GPU utilization remains at constant 100%",
# "多卡训练卡住，单卡GPU利用率为0，其余100%"; the others here are not in any corpus.
TRAINING_HANG = [
    "Marian hangs on multiple GPUs, GPU utilization remains at constant 100%",
    "多卡训练卡住，单卡GPU利用率为0，其余100%",
    "Training hangs on multiple GPUs",
    "Training stuck when using 4 GPUs",
    "多机训练卡死",
    "Model freezes during multi-node training",
    "DDP training freezes after a few epochs",
    "Hang with multi-GPU training on A100",
    "[Bug] fine-tuning hangs across 2 nodes",
    # the misspellings of "stuck" a title keeps
    "Struk during training on multi-GPUs with deepspeed, but work with single GPU",
    "Training stucked on multiple GPUs",
    "training stuk with 2 GPUs",
]
TRAINING_HANG_SILENT = [
    "Training hangs on multiple GPUs at initialization",
    "multi-GPU training stuck at loading checkpoint shards",
    "多卡推理卡住",
    "How to avoid a hang in multi-GPU training?",
    "Multi-GPU training hangs with num_workers > 0",
    "Multi-GPU training may hang if NCCL_P2P is enabled",
    "Set timeout to avoid multi-GPU training hang",
    "multi-GPU training no longer hangs after upgrade",
    "Training hangs on a single GPU",
    "Struck by a bug in multi-GPU training",
    "Loss stuck at 0.69 when training on multiple GPUs",
    "Accuracy stuck during multi-GPU training",
    "Multi-GPU training: gradients stuck at zero",
]


@pytest.mark.parametrize("title", TRAINING_HANG)
def test_a_title_of_multi_gpu_training_that_hangs_is_the_watchdog(title: str) -> None:
    check_root(title + "\n", "RUN151", {"read_as": "title", "kind": "training_hang"})


@pytest.mark.parametrize("title", TRAINING_HANG_SILENT)
def test_other_hangs_of_several_gpus_are_not_read(title: str) -> None:
    assert root_finding(title + "\n") is None


@pytest.mark.parametrize(
    "title",
    ["vLLM inference hangs on multiple GPUs", "vLLM Distributed Inference stuck when using multi -GPU"],
)
def test_an_inference_engine_that_hangs_on_several_gpus_is_not_a_training_hang(title: str) -> None:
    # Silent here once; since three released threads labelled driver_env (v21G-driver_env-004,
    # v23B-driver_env-006, v23C-driver_env-005) and vLLM's troubleshooting guide, the peer-to-peer path
    # (rules/env_prose.py, tests/diagnose/test_p1_families.py): never the training loop's watchdog
    f = root_finding(title + "\n")
    assert f is not None and f.code == "RUN590", f


def test_a_hang_in_the_set_up_of_several_gpus_is_the_meeting_not_the_training() -> None:
    # the ranks' meeting (rules/meeting_titles.py), not a collective of the training loop
    check_root("stuck in dist_util.setup_dist() when trying multiGPUs training.\n", "RUN221")


def test_a_hang_at_the_end_of_the_data_stays_the_uneven_inputs() -> None:
    check_root("Training hangs at the end of epoch on multiple GPUs\n", "RUN201", {"kind": "uneven_inputs"})


# A hang that comes when one rank alone meets a condition of its data: the ranks disagree (RUN201). Released:
# the SyncBatchNorm title below (NeuralRecon#139); the others are not in any corpus.
ONE_RANK_HANG = [
    'The SyncBatchNorm function will stop, when one of multi-GPU run into "no valid points". '
    "How to solve it?",
    "Training hangs when one of the GPUs gets an empty batch",
    "SyncBatchNorm hangs if only one rank has no valid samples",
    "DDP freezes when one of the ranks skips the backward",
    "All-reduce stuck when one process has no data",
    "训练卡住，当某张卡没有数据时",
    "Early stopping when one process hits patience hangs the others",
]
ONE_RANK_HANG_NOT_DESYNC = [
    "Training hangs when one of the GPUs runs out of memory",
    "Training hangs when one of the nodes crashes",
    "Training hangs on one GPU only",
    "Training stops when one of the GPUs reports an error",
    "Stop training when one of the ranks reaches the target",
    "How to stop all ranks when one of the GPUs finishes early?",
    "It would hang when one of the ranks is slow",
]


@pytest.mark.parametrize("title", ONE_RANK_HANG)
def test_a_hang_when_one_rank_alone_meets_a_condition_is_a_desync(title: str) -> None:
    check_root(title + "\n", "RUN201", {"read_as": "title", "kind": "one_rank_diverged"})


@pytest.mark.parametrize("title", ONE_RANK_HANG_NOT_DESYNC)
def test_a_rank_that_fails_or_a_request_is_no_desync(title: str) -> None:
    root = root_finding(title + "\n")
    assert root is None or root.code != "RUN201", (title, root)


# A stack cut right after DDP's forward called _pre_forward (2.0+), whose body raises the reducer's
# "Expected to
# have finished reduction in the prior iteration": RUN202 (every released stack that reached it was).
# Released:
# the Firefly QLoRA paste (dist-packages, python3.10); the others are other versions, paths and prefixes.
def _ddp_stack(
    path: str, line: int, source: str = "inputs, kwargs = self._pre_forward(*inputs, **kwargs)"
) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 235, in <module>\n'
        "    main()\n"
        '  File "train.py", line 224, in main\n'
        "    loss = model(**inputs)\n"
        f'  File "{path}/torch/nn/modules/module.py", line 1511, in _call_impl\n'
        "    return forward_call(*args, **kwargs)\n"
        f'  File "{path}/torch/nn/parallel/distributed.py", line {line}, in forward\n'
        f"    {source}\n"
    )


PRE_FORWARD = [
    ("", _ddp_stack("/usr/local/lib/python3.10/dist-packages", 1513)),
    ("", _ddp_stack("/opt/conda/lib/python3.11/site-packages", 1589)),
    ("[rank1]: ", _ddp_stack("/home/u/miniconda3/envs/t/lib/python3.12/site-packages", 1636)),
    ("node7: ", _ddp_stack("/usr/lib/python3/dist-packages", 1156)),
    ("", _ddp_stack("C:/Users/a/env/lib/site-packages", 1519).replace("/", "\\")),
]
PRE_FORWARD_SILENT = [
    # FSDP's own _pre_forward (its unshard's all-gather), not DDP's reducer
    _ddp_stack("/opt/conda/lib/python3.10/site-packages", 839).replace(
        "nn/parallel/distributed.py", "distributed/fsdp/fully_sharded_data_parallel.py"
    ),
    # a user's module of that name
    _ddp_stack("/opt/conda/lib/python3.10/site-packages", 80).replace(
        "/opt/conda/lib/python3.10/site-packages/torch/nn/parallel/distributed.py", "/work/mymodel/wrapper.py"
    ),
    # the stack goes on below _pre_forward, into the buffers' broadcast
    _ddp_stack("/opt/conda/lib/python3.10/site-packages", 1513)
    + '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/parallel/distributed.py", line 1438, in '
    "_pre_forward\n    self._sync_buffers()\n",
]


@pytest.mark.parametrize("prefix,stack", PRE_FORWARD)
def test_a_stack_cut_at_ddp_pre_forward_is_the_unfinished_reduction(prefix: str, stack: str) -> None:
    check_root(prefixed(prefix, stack.rstrip("\n")), "RUN202", {"cut": True})


@pytest.mark.parametrize("stack", PRE_FORWARD_SILENT)
def test_other_pre_forward_frames_are_not_the_reducer(stack: str) -> None:
    root = root_finding(stack)
    assert root is None or root.code != "RUN202", root


# rich's boxed traceback (transformers', accelerate's): the frame's head above its "❱" source line
_RICH = (
    "╭───────────────────── Traceback (most recent call last) ─────────────────────╮\n"
    "│ /work/train.py:88 in main                                                    │\n"
    "│                                                                              │\n"
    "│ ❱ 88 │   loss = model(batch)                                                 │\n"
    "│                                                                              │\n"
    "│ {path}:{line} in forward                                                     │\n"
    "│                                                                              │\n"
    "│   1516 │   │   │   output = None                                              │\n"
    "│ ❱ {line} │   │   │   inputs, kwargs = self._pre_forward(*inputs, **kwargs)       │\n"
)
_DDP_PY = "/opt/conda/lib/python3.10/site-packages/torch/nn/parallel/distributed.py"


@pytest.mark.parametrize("prefix", ["", "[rank0]: "])
def test_a_rich_stack_cut_at_ddp_pre_forward_is_the_unfinished_reduction(prefix: str) -> None:
    log = _RICH.format(path=_DDP_PY, line=1519)
    check_root(prefixed(prefix, log.rstrip("\n")), "RUN202", {"cut": True, "phase": "ddp_reducer_check"})


def test_a_rich_stack_going_on_below_pre_forward_is_not_read_so() -> None:
    log = _RICH.format(path=_DDP_PY, line=1519) + (
        "│                                                                              │\n"
        f"│ {_DDP_PY}:1438 in _pre_forward                                                │\n"
        "│ ❱ 1438 │   │   │   self._sync_buffers()                                         │\n"
    )
    root = root_finding(log)
    assert root is None or root.code != "RUN202", root
    other = _RICH.format(path="/work/mymodel/wrapper.py", line=80)
    root = root_finding(other)
    assert root is None or root.code != "RUN202", root


def test_a_pre_forward_stack_with_its_exception_line_is_that_exception() -> None:
    log = _ddp_stack("/opt/conda/lib/python3.10/site-packages", 1513) + (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity "
        "of 79.15 GiB of which 3.62 MiB is free.\n"
    )
    check_root(log, "RUN101")


# Ray's report that a worker died names its pid ("Worker PID: 1080651"); the failure that same process logged
# behind Ray's "(RayWorker pid=1080651) " prefix is why it died (vLLM#1846: the watchdog's timeout, then its
# abort of the process). The prefixes: Ray's actor names of vLLM 0.2 / 0.3-0.4 / 0.5+, with and without an ip.
_RAY_DIED = (
    "2023-11-30 10:19:23,769 WARNING worker.py:2074 -- A worker died or was killed while executing a "
    "task by an "
    "unexpected system error. To troubleshoot the problem, check the logs for the dead worker. RayTask ID: "
    "ffffffffffffffffba61971047f999e0f9ceaab101000000 Worker ID: "
    "0e4b1eeade4874f7080db5807059e066cc128f27de4d14 "
    "Node ID: 9c6f827858d621904b3d1cfb06057c57480da46c3edab524030f1e58 Worker IP address: 10.9.70.181 Worker "
    "port: 34011 Worker PID: {pid} Worker exit type: SYSTEM_ERROR Worker exit detail: Worker "
    "unexpectedly exits "
    "with a connection error code 2. End of file. There are some potential root causes. (1) The process is "
    "killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) "
    "The worker "
    "is crashed unexpectedly due to SIGSEGV or other unexpected errors.\n"
)
_WATCHDOG = (
    "[E ProcessGroupNCCL.cpp:474] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, "
    "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800305 milliseconds "
    "before timing "
    "out.\n"
    "[E ProcessGroupNCCL.cpp:488] Some NCCL operations have failed or timed out. Due to the "
    "asynchronous nature "
    "of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.\n"
    "[E ProcessGroupNCCL.cpp:494] To avoid data inconsistency, we are taking the entire process down.\n"
)
RAY_PREFIXES = [
    "(RayWorker pid={pid}) ",
    "(RayWorkerVllm pid={pid}, ip=10.9.70.181) ",
    "(RayWorkerWrapper pid={pid}) ",
]


@pytest.mark.parametrize("prefix", RAY_PREFIXES)
def test_a_ray_worker_death_after_its_own_watchdog_timeout_is_the_timeouts(prefix: str) -> None:
    log = _RAY_DIED.format(pid=1080651) + prefixed(prefix.format(pid=1080651), _WATCHDOG.rstrip("\n"))
    check_root(log, "RUN151", {"op": "ALLREDUCE", "proc_pid": 1080651})


@pytest.mark.parametrize("prefix", RAY_PREFIXES)
def test_a_ray_worker_death_of_another_process_still_leads(prefix: str) -> None:
    log = _RAY_DIED.format(pid=1080650) + prefixed(prefix.format(pid=1080651), _WATCHDOG.rstrip("\n"))
    check_root(log, "RUN133", {"reporter": "ray", "worker_pid": 1080650})


# Ray 2.x's ActorDiedError names the actor's pid on a line under it ("\tpid: 2370037"; verl's WorkerDict).
_ACTOR_DIED = (
    "Traceback (most recent call last):\n"
    '  File "/x/verl/single_controller/ray/base.py", line 42, in func\n'
    "    output = ray.get(output)\n"
    "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n"
    "\tclass_name: create_colocated_worker_cls.<locals>.WorkerDict\n"
    "\tactor_id: 944845519790ea751c6613aa01000000\n"
    "\tpid: 2370037\n"
    "\tname: UpWnbxWorkerDict_0:0\n"
    "\tip: 172.18.103.5\n"
)


@pytest.mark.parametrize("pid,code", [(2370037, "RUN151"), (2370038, "RUN133")])
def test_ray_actor_died_error_names_the_pid_whose_own_failure_explains_it(pid: int, code: str) -> None:
    log = _ACTOR_DIED + prefixed(f"(WorkerDict pid={pid}) ", _WATCHDOG.rstrip("\n"))
    check_root(log, code)


# Ray's prefix before a rank's ("(WorkerDict pid=2370037) [rank0]:[E ...]", torch 2.2+ under verl / vLLM) is
# read as Ray's (its pid kept), not as a short tag before "[rank0]:".
@pytest.mark.parametrize("pid,code", [(2370037, "RUN151"), (2370038, "RUN133")])
def test_ray_prefix_before_a_rank_prefix_keeps_its_pid(pid: int, code: str) -> None:
    log = _ACTOR_DIED + prefixed(f"(WorkerDict pid={pid}) [rank0]:", _WATCHDOG.rstrip("\n"))
    check_root(log, code)
