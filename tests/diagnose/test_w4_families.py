"""GPU memory exhaustion and dead ranks read as families (v20's held-out half and v21's dev half, released).

- PaddlePaddle 1.x's first GPU chunk (platform/gpu_info.cc GpuMaxChunkSize: the pool asks
  FLAGS_fraction_of_gpu_memory_to_use of a GPU with less free memory) in its three wordings: 1.0-1.1 "enforce
  allocating <= available failed, A > B", 1.2-1.5 "Insufficient GPU memory to allocation.", 1.6+ its hint
  "Expected allocating <= available, but received allocating:A > available:B"; and the source location of an
  enforce thrown by Paddle's CUDA allocator (memory/allocation/cuda_allocator.cc, cuda_managed_allocator.cc;
  phi/core/memory/ in 3.x; "(at ...)" in 2.x, "at [...]" in 1.x), kept where the message above it is cut:
  cuda_oom. The allocator's FreeImpl check ("GPU memory is freed in incorrect device"), a glog record of
  that file and another Paddle file's location stay silent.
- Open MPI's / PRRTE's [proc-aborted-signal] record cut before its signal ("mpirun noticed that process rank 1
  with PID 0", "... on node n1", "... exited"): no other ORTE/PRRTE text says "noticed that process rank N
  with PID P", so the rank died on a signal (RUN131, tier 3, fact `signal` None); a continuation on the next
  line is that exit record (signal 9: host_oom).
- A thread's title naming the crash as strsignal() or a person says it ("Segmentation fault when using NCCL in
  MultiWorkerMirroredStrategy", "segfault in ncclCommInitRank"): process_crash; a denial, a question, a
  handler or a test with those words stays silent.
- The killed row's SIGKILL in a title retyped in lower case beside capitals ("[BUG] 多卡微调遇到sigkill
  无报错退出"): host_oom, as its upper-case spelling already was.
- A CJK writer's GPU memory ("显存") with its use named before the overflow ("显存占用明显溢出了"), in one
  clause: cuda_oom; a rate ("显存利用率不足"), a denial ("显存没有溢出") stay silent.
- A thread's title pasted as the first line above its log ("CUDA OUT OF MEMORY with dist_train.sh", then a
  traceback cut in init_process_group): the device-OOM title words (never the other classes'), ahead of
  the phase guess of the cut traceback; the same words on a later line, or a first line that is a
  program's record, stay as before.

Session of 2026-12-07 (late), v21's held-out and v22's dev halves:
- RMM's exceptions (rmm/error.hpp: "std::bad_alloc: out_of_memory: " + message; older "std::bad_alloc: CUDA
  error at: ... cudaErrorMemoryAllocation"; Thrust's "std::bad_alloc: cudaErrorMemoryAllocation: out of
  memory"; "terminate called ... 'rmm::out_of_memory'"), Python's MemoryError around them, a paste cut inside
  the class name ("std::bad_alloc: out_of_m"): cuda_oom, ahead of host_oom's MemoryError; a bare
  std::bad_alloc stays the host's.
- cuDNN's internal error (torch's "cuDNN error: CUDNN_STATUS_INTERNAL_ERROR", Caffe's check, MXNet's,
  Paddle's, cuDNN 9's _DEVICE_ALLOCATION_FAILED, a title): cuda_oom tier 1 beside NOT_INITIALIZED; cuDNN 9's
  other internal sub-statuses, a denial and the other statuses stay as they were.
- The ResourceExhaustedError type with its message cut (a title above the log, Python's wrap, TF's and
  Paddle's module paths): cuda_oom tier 1; a message that follows on the line (gRPC's "Received message
  larger than max") and an `except` clause are not read.
- Titles: "OOM" glued to CJK ("在使用deepspeed后会OOM"), a GPU named by its model ("four Titanxp", "8xA100",
  "RTX 3090") or its card (单卡 / 多卡 / 显卡), OOM with DeepSpeed / ZeRO / FSDP: cuda_oom; "room", "zoom",
  "oom_score_adj", a denial, DeepSpeed's CPU offload stay silent.
- The machine itself went down under GPU load (a title: "PC restarts without warning while Multi-GPU
  training", "Computer dies suddenly with 3 or 4 GPUs", "System shutdown with Multiple GPUs training";
  Windows' Kernel-Power 41 text): RUN665 (gpu_hardware); a question, a command, a service's server, a
  Jupyter kernel, the training that restarts, a title without GPUs stay silent.
- Rich's boxed traceback (Accelerate's, DeepSpeed's, typer's pretty errors) cut inside DeepSpeed's or
  Accelerate's set-up of the model on the GPUs, its rows joined by the reader or not: cuda_oom tier 2 as
  cut_phases reads the plain stack; the box followed by its exception line, a frame outside the set-up, a
  set-up source line that broadcasts stay as they were.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LINE_PREFIXES, check_root, failure_findings, prefixed, root_finding

PADDLE_OOM = [
    # 1.0-1.1, raised from GpuMaxChunkSize (v21G-cuda_oom-009)
    "paddle.fluid.core.EnforceNotMet: enforce allocating <= available failed, 2413512130 > 1833238272\n"
    " at [/paddle/Paddle/paddle/fluid/platform/gpu_info.cc:119]\n",
    "EnforceNotMet: enforce allocating <= available failed, 1827927622 > 1359806208\n",
    # 1.2-1.5
    "paddle.fluid.core_avx.EnforceNotMet: Insufficient GPU memory to allocation. at "
    "[/paddle/paddle/fluid/platform/gpu_info.cc:262]\n",
    # 1.6+ with its hint
    "ResourceExhaustedError: Insufficient GPU memory to allocation.\n"
    "  [Hint: Expected allocating <= available, but received allocating:16106127360 > "
    "available:15032385536.] (at /paddle/paddle/fluid/platform/gpu_info.cc:283)\n",
    # the CUDA allocator's location alone, its message cut (v20D-cuda_oom-004)
    " (at /paddle/paddle/fluid/memory/allocation/cuda_allocator.cc:69)\n"
    ". (at /paddle/paddle/fluid/imperative/tracer.cc:172)\n\n[INFO]: train job failed! train_ret: 1\n",
    "  at [/paddle/paddle/fluid/memory/allocation/cuda_allocator.cc:41]\n",
    "  (at /paddle/paddle/phi/core/memory/allocation/cuda_allocator.cc:74)\n",
    "  (at /paddle/paddle/fluid/memory/allocation/cuda_managed_allocator.cc:60)\n",
]


@pytest.mark.parametrize("log", PADDLE_OOM)
def test_paddles_gpu_chunk_and_allocator_site_are_cuda_oom(log: str) -> None:
    check_root(log, "RUN101", {"reported_by": "PaddlePaddle", "likely_cause": "insufficient_memory"})


def test_the_chunks_sizes_are_read() -> None:
    check_root(PADDLE_OOM[0], "RUN101", {"requested_bytes": 2413512130, "free_bytes": 1833238272})


PADDLE_QUIET = [
    # FreeImpl's check: a bug, not memory
    "PermissionDenied: GPU memory is freed in incorrect device. This may be a bug\n"
    "  (at /paddle/paddle/fluid/memory/allocation/cuda_allocator.cc:32)\n",
    # a glog record of the allocator's file, another file's location
    "I0325 10:00:00.000 1234 cuda_allocator.cc:40] init CUDAAllocator on GPU 0\n",
    "  (at /paddle/paddle/fluid/memory/allocation/allocator_facade.cc:212)\n",
    "export FLAGS_fraction_of_gpu_memory_to_use=0.1\n",
    "GpuMaxChunkSize 14.217000GB\n",
]


@pytest.mark.parametrize("log", PADDLE_QUIET)
def test_paddle_near_misses_stay_silent(log: str) -> None:
    assert failure_findings(log) == [], log


MPI_CUT = [
    "mpirun noticed that process rank 1 with PID 0\n",
    "mpirun noticed that process rank 1 with PID 0 on node gpu3\n",
    "mpirun noticed that process rank 3 with PID 4242 on node gpu3 exited\n",
    "prterun noticed that process rank 3 with PID 4242 on node n1\n",
    "mpirun noticed that job rank 0 with PID 1234\n",
    "[1,0]<stderr>:loss 0.3\n----------------------------------\n"
    "mpirun noticed that process rank 1 with PID xxxxxx\n----------------------------------\n",
]


@pytest.mark.parametrize("log", MPI_CUT)
def test_an_mpirun_signal_record_cut_before_its_number_is_a_death_on_a_signal(log: str) -> None:
    check_root(log, "RUN131", {"reporter": "mpirun", "signal": None, "signal_cut": True})


@pytest.mark.parametrize(
    "log, code",
    [
        # its continuation on the next line is the exit record
        (
            "mpirun noticed that process rank 1 with PID 4242\non node n1 exited on signal 9 (Killed).\n",
            "RUN121",
        ),
        (
            "mpirun noticed that process rank 1 with PID 4242 on node n1 exited on\nsignal 9 (Killed).\n",
            "RUN121",
        ),
        (
            "mpirun noticed that process rank 1 with PID 4242 on node n1 exited on signal 11 (Segmentation "
            "fault).\n",
            "RUN131",
        ),
        # a cause in the paste wins over the cut record (tier 3)
        (
            "[1,1]<stderr>:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
            "mpirun noticed that process rank 1 with PID 4242\n",
            "RUN101",
        ),
    ],
)
def test_the_whole_record_and_a_cause_beside_it_keep_their_reading(log: str, code: str) -> None:
    check_root(log, code)


@pytest.mark.parametrize(
    "log",
    [
        # [proc-exit-no-sync] and the non-zero-exit summary say "process rank" without "noticed that"
        "mpirun has exited due to process rank 3 with PID 1234 on\nnode n1 exiting improperly.\n"
        "There are three reasons this could occur:\n",
        "mpirun noticed that the job aborted, but has no info as to the process\n",
        "Primary job  terminated normally, but 1 process returned\n",
    ],
)
def test_the_other_mpirun_records_are_not_read_as_a_signal(log: str) -> None:
    root = root_finding(log)
    assert root is None or root.code != "RUN131", (log, root)


CRASH_TITLES = [
    "Segmentation fault when using NCCL in MultiWorkerMirroredStrategy",
    "segfault in ncclCommInitRank with 8 GPUs",
    "[Bug] Segfault when training with DDP on A100",
    "Training crashes with Segmentation fault (core dumped) after 3 epochs",
    "SEGMENTATION FAULT with torchrun on 2 nodes",
    "DeepSpeed ZeRO-3 seg fault at the first step",
    "Bus error (core dumped) with 8 dataloader workers",
]


@pytest.mark.parametrize("title", CRASH_TITLES)
def test_a_title_that_names_the_crash_is_process_crash(title: str) -> None:
    check_root(title + "\n", "RUN131")


QUIET_TITLES = [
    "No segfault after upgrading NCCL",
    "How to debug a segmentation fault in NCCL",
    "Enable faulthandler to print segfault tracebacks",
    "faulthandler segfault handler registered",
    "test_segfault passed",
    "Runs without a segmentation fault on 1 GPU",
    # the words on a line of a longer log, without a marker
    "epoch 1 done\nsegfault_guard: armed\nepoch 2 done",
]


@pytest.mark.parametrize("title", QUIET_TITLES)
def test_a_denial_a_question_a_handler_or_a_test_stays_silent(title: str) -> None:
    assert failure_findings(title + "\n") == [], title


@pytest.mark.parametrize(
    "title, code",
    [
        ("[BUG] 多卡微调遇到sigkill 无报错退出", "RUN121"),
        ("[Question] Training got Sigkill on 8 GPUs", "RUN121"),
        ("DDP job receives sigkill on node 2", "RUN121"),
        ("单机2张A5000卡训练baichuan13B，训练到一半时看到显存占用明显溢出了，报错ChildFailedError", "RUN101"),
        ("训练时显存突然爆了", "RUN101"),
        ("多卡训练显存占用不够", "RUN101"),
    ],
)
def test_a_titles_killed_and_cjk_memory_words_reach_their_class(title: str, code: str) -> None:
    check_root(title + "\n", code)


@pytest.mark.parametrize(
    "title",
    [
        "训练时显存利用率不足",
        "显存没有溢出，但是报错了",
        "显存占用24G，训练正常",
    ],
)
def test_a_rate_a_denial_or_a_healthy_use_of_gpu_memory_stays_silent(title: str) -> None:
    assert failure_findings(title + "\n") == [], title


CUT_IN_INIT = (
    "*****************************************\n"
    "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default\n"
    "*****************************************\n"
    "Traceback (most recent call last):\n"
    '  File "./tools/train.py", line 156, in <module>\n'
    "    main()\n"
    '  File "./tools/train.py", line 98, in main\n'
    "    init_dist(args.launcher, **cfg.dist_params)\n"
    '  File "/usr/lib/python3.7/site-packages/torch/distributed/distributed_c10d.py", line 423, in '
    "init_process_group\n"
    "    store, rank, world_size = next(rendezvous_iterator)\n"
)


@pytest.mark.parametrize(
    "head",
    [
        "CUDA OUT OF MEMORY with dist_train.sh",
        "GPU OOM when training with 8 GPUs",
        "[Bug] cuda out of memory during validation",
    ],
)
def test_a_title_above_its_log_names_the_oom_before_the_phase_guess(head: str) -> None:
    check_root(head + "\n" + CUT_IN_INIT, "RUN101")


@pytest.mark.parametrize(
    "log",
    [
        # the title's words on a later line: the phase's guess stands
        "epoch 1\nCUDA OUT OF MEMORY with dist_train.sh\n" + CUT_IN_INIT,
        # a program's record as the first line, a setting, another class's title words
        "2024-01-01 10:00:00 INFO reserved memory to avoid out of memory on GPU\n" + CUT_IN_INIT,
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True avoids out of memory\n" + CUT_IN_INIT,
        "How to avoid GPU OOM with dist_train.sh\n" + CUT_IN_INIT,
        "NCCL timeout with dist_train.sh\n" + CUT_IN_INIT,
    ],
)
def test_other_first_lines_leave_the_reading_as_it_was(log: str) -> None:
    root = root_finding(log)
    assert root is not None and root.code == "RUN221", (log, root)


# --- 2026-12-07 (late) ------------------------------------------------------------------------------------

RMM_OOM = [
    # cuml#5936 (v22H-cuda_oom-002): the paste cut inside the class's name, under dask-cuda's host_to_device
    '  File "device_buffer.pyx", line 98, in rmm._lib.device_buffer.DeviceBuffer.__cinit__\n'
    "MemoryError: std::bad_alloc: out_of_m",
    "MemoryError: std::bad_alloc: out_of_memory: CUDA error at: /opt/conda/include/rmm/mr/device/"
    "cuda_memory_resource.hpp:60: cudaErrorMemoryAllocation out of memory",
    # rmm 24.x: "CUDA error (failed to allocate N bytes) at:"
    "MemoryError: std::bad_alloc: out_of_memory: CUDA error (failed to allocate 8388608 bytes) at: "
    "/usr/include/rmm/mr/device/cuda_memory_resource.hpp:62: cudaErrorMemoryAllocation out of memory",
    # rmm before its out_of_memory class (0.1x): rmm::bad_alloc
    "MemoryError: std::bad_alloc: CUDA error at: /conda/include/rmm/mr/device/cuda_memory_resource.hpp:69: "
    "cudaErrorMemoryAllocation out of memory",
    # Thrust's bad_alloc under XGBoost, the C++ abort
    "terminate called after throwing an instance of 'thrust::system::detail::bad_alloc'\n"
    "  what():  std::bad_alloc: cudaErrorMemoryAllocation: out of memory",
    "terminate called after throwing an instance of 'rmm::out_of_memory'\n"
    "  what():  std::bad_alloc: out_of_memory: RMM failure at:/opt/rmm/include/rmm/mr/device/"
    "pool_memory_resource.hpp:196: Maximum pool size exceeded",
]


@pytest.mark.parametrize("prefix", LINE_PREFIXES)
@pytest.mark.parametrize("log", RMM_OOM)
def test_rmm_and_thrust_bad_alloc_is_the_devices_memory(log: str, prefix: str) -> None:
    check_root(prefixed(prefix, log), "RUN101")


@pytest.mark.parametrize(
    "log",
    [
        "MemoryError: std::bad_alloc",
        "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc",
    ],
)
def test_a_bare_bad_alloc_stays_the_hosts(log: str) -> None:
    root = root_finding(log)
    assert root is not None and root.category == "host_oom", (log, root)


CUDNN_INTERNAL = [
    # mmsegmentation#69 (v22D-cuda_oom-003)
    '  File "/usr/lib/python3.7/site-packages/torch/nn/modules/conv.py", line 346, in _conv_forward\n'
    "    self.padding, self.dilation, self.groups)\nRuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR",
    "F0412 10:00:00.000 1234 cudnn_conv_layer.cpp:53] Check failed: status == CUDNN_STATUS_SUCCESS "
    "(4 vs. 0)  CUDNN_STATUS_INTERNAL_ERROR",
    "mxnet.base.MXNetError: [10:00:00] src/operator/nn/./cudnn/cudnn_convolution-inl.h:156: Check failed: "
    "e == CUDNN_STATUS_SUCCESS (4 vs. 0) cuDNN: CUDNN_STATUS_INTERNAL_ERROR",
    "ExternalError: CUDNN error(4), CUDNN_STATUS_INTERNAL_ERROR.",
    "RuntimeError: cuDNN Frontend error: CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED",
    "CUDNN_STATUS_INTERNAL_ERROR with batch size 40 on 8x2080RTX",
]


@pytest.mark.parametrize("log", CUDNN_INTERNAL)
def test_cudnns_internal_error_is_read_as_memory_first(log: str) -> None:
    check_root(log, "RUN101", {"reported_by": "cuDNN", "likely_cause": "insufficient_memory"})


@pytest.mark.parametrize(
    "log",
    [
        "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED",
        "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED",
        "no CUDNN_STATUS_INTERNAL_ERROR after setting allow_growth",
    ],
)
def test_cudnns_other_internal_statuses_are_not_read_as_memory(log: str) -> None:
    root = root_finding(log)
    assert root is None or root.code != "RUN101", (log, root)


EXHAUSTED_TYPE = [
    # PaddleYOLO#19 (v22G-cuda_oom-007): the title above the launch log
    "ResourceExhaustedError\nlaunch proc_id:20498 idx:0\nTraceback (most recent call last):\n"
    '  File "tools/train.py", line 172, in <module>\n    main()',
    "RuntimeError: ResourceExhaustedError:",
    "paddle.fluid.core_avx.ResourceExhaustedError",
    "tensorflow.python.framework.errors_impl.ResourceExhaustedError",
    "ResourceExhaustedError (see above for traceback):",
]


@pytest.mark.parametrize("log", EXHAUSTED_TYPE)
def test_resource_exhausted_with_its_message_cut_is_cuda_oom(log: str) -> None:
    check_root(log, "RUN101", {"exception": "ResourceExhaustedError"})


@pytest.mark.parametrize(
    "log",
    [
        "ResourceExhaustedError: Received message larger than max (46234234 vs. 4194304)",
        "except tf.errors.ResourceExhaustedError:",
        "from tensorflow.errors import ResourceExhaustedError",
    ],
)
def test_resource_exhausted_with_another_message_or_in_code_is_not_read(log: str) -> None:
    root = root_finding(log)
    assert root is None or root.code != "RUN101", (log, root)


OOM_TITLES = [
    "单卡能微调的模型，在使用deepspeed后会OOM",  # LlamaFactory#2706 (v22G-cuda_oom-003)
    "多卡训练OOM",
    "OOM when using deepspeed zero3",
    "OOM with FSDP on llama-70b",
    "out of memory on 8xA100",
    "RTX 3090 out of memory with batch size 2",
    "V100 OOM",
]


@pytest.mark.parametrize("title", OOM_TITLES)
def test_titles_that_name_the_gpu_by_model_card_or_trainer_are_cuda_oom(title: str) -> None:
    check_root(title + "\n", "RUN101")


def test_a_title_naming_the_gpu_model_above_its_log_is_cuda_oom() -> None:
    # insightface#115 (v22G-cuda_oom-002)
    log = (
        "out of memory when run with four Titanxp even per-batch-size is 1\ngpu num: 4\nnum_layers 50\n"
        "init resnet 50\nloading bin 0\nloading bin 1000\n"
    )
    check_root(log, "RUN101")


@pytest.mark.parametrize(
    "title",
    [
        "room temperature zoom bloom",
        "oom_score_adj 0",
        "no OOM with deepspeed zero3",
        "deepspeed zero3 cpu offload OOM",
        "oom 0",
    ],
)
def test_other_words_and_the_hosts_oom_stay_out_of_the_device(title: str) -> None:
    root = root_finding(title + "\n")
    assert root is None or root.code != "RUN101", (title, root)


MACHINE_RESETS = [
    "PC restarts without warning while Multi-GPU training",  # darknet#2731 (v21B-gpu_hardware-001)
    "Windows 10 Computer dies suddenly with 3 or 4 GPUs (but not 1 or 2)",  # CNTK#3016 (v21G)
    "System shutdown with Multiple GPUs training",  # lightning#16849 (v22A-gpu_hardware-001)
    "多卡训练时电脑自动重启",
    "Machine reboots when training on 4 GPUs",
    "Server suddenly powers off during 8xA100 training",
    "Ubuntu reboots automatically when I use two RTX 3090",
    "Workstation shuts down under full load with 2 GPUs",
    "Computer turns off when training with multiple GPUs",
    "The system has rebooted without cleanly shutting down first. This error could be caused if the system "
    "stopped responding, crashed, or lost power unexpectedly.",
]


@pytest.mark.parametrize("title", MACHINE_RESETS)
def test_the_machine_going_down_under_gpu_load_is_gpu_hardware(title: str) -> None:
    check_root(title + "\n", "RUN665", {"kind": "machine_reset"})


def test_a_reset_title_above_its_log_is_read_too() -> None:
    log = "Machine reboots when training on 4 GPUs\nTraceback (most recent call last):\n"
    log += '  File "train.py", line 3, in <module>\n    main()\n'
    check_root(log, "RUN665")


@pytest.mark.parametrize(
    "title",
    [
        "How to restart training on multiple GPUs",
        "Training restarts from epoch 0 with multiple GPUs",
        "restart the server with 4 GPUs",
        "Inference server shuts down when using 2 GPUs",
        "Jupyter kernel dies with multiple GPUs",
        "System restart required",
        "PC restarts without warning while training",
        "shutdown script for multi-GPU server",
        "Automatically shutdown the machine after training finishes on 4 GPUs",
        "2024-01-01 10:00:00 INFO server restarting workers on 4 GPUs",
    ],
)
def test_a_command_a_service_or_no_gpus_is_no_machine_reset(title: str) -> None:
    root = root_finding(title + "\n")
    assert root is None or root.code != "RUN665", (title, root)


def _box(rows: list[str], width: int = 98) -> str:
    return "".join("│ " + r.ljust(width) + " │\n" for r in rows)


_SP = "/srv/conda/lib/python3.10/site-packages/"
RICH_SETUP = [
    # BELLE#110 (v21B-cuda_oom-002): rows of one width (the reader joins them), the function on its own row
    _box(
        [
            _SP + "deepspeed/runtime/engine.py:297 in",
            "__init__",
            "",
            "❱  297 │   │   self._configure_distributed_model(model)",
            "",
            _SP + "deepspeed/runtime/engine.py:1146 in",
            "_configure_distributed_model",
        ]
    ),
    # rows of their own widths, the function on the frame's row, the source line shown
    "╭───── Traceback (most recent call last) ─────╮\n"
    + f"│ {_SP}accelerate/accelerator.py:1202 in prepare │\n"
    + "│ ❱ 1202 │   │   result = tuple(self._prepare_one(obj) for obj in args) │\n"
    + f"│ {_SP}accelerate/accelerator.py:1088 in _prepare_one │\n"
    + "│ ❱ 1088 │   │   return self.prepare_model(obj) │\n",
    f"│ {_SP}deepspeed/runtime/zero/stage3.py:310 in __init__ │\n"
    + "│ ❱ 310 │   │   self._setup_for_real_optimizer() │\n",
]


@pytest.mark.parametrize("log", RICH_SETUP)
def test_a_rich_stack_cut_in_the_gpu_set_up_is_cuda_oom(log: str) -> None:
    check_root(log, "RUN101", {"phase": "model_and_optimizer_setup", "format": "rich"})


@pytest.mark.parametrize(
    "log",
    [
        # the exception line under the box: its own reading
        RICH_SETUP[2] + "╰──────────────────╯\nValueError: ZeRO stage 3 requires an optimizer\n",
        # a frame outside the set-up, a set-up line that broadcasts
        f"│ {_SP}deepspeed/runtime/engine.py:1800 in forward │\n│ ❱ 1800 │   loss = self.module(*inputs) │\n",
        f"│ {_SP}deepspeed/runtime/engine.py:1146 in _configure_distributed_model │\n"
        "│ ❱ 1146 │   │   self._broadcast_model() │\n",
    ],
)
def test_a_rich_stack_elsewhere_or_with_its_exception_is_not_read_as_set_up(log: str) -> None:
    root = root_finding(log)
    assert root is None or root.facts.get("format") != "rich", (log, root)
