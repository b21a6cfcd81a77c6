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
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root, failure_findings, root_finding

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
