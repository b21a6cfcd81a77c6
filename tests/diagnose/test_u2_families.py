"""Families of u2's session (issue 26): hangs whose paste shows the mechanism, not the watchdog's message line,
each read at its source and pinned with the thread's real lines:

- DeepEP's kernels' own timeouts (csrc/kernels/intranode.cu, internode.cu: "DeepEP dispatch NVL receiver
  timeout, channel: ...", "DeepEP timeout for dispatch senders, rank ...", "DeepEP timeout check failed: ...",
  "DeepEP combine (scale-up wait) timeout, ...") before the trap's "unspecified launch failure": RUN560, not
  the GPU (RUN244);
- the NCCL watchdog's c10 record from a build without symbols (its header cut off): a libtorch_cuda.so thread's
  entry right on std::thread's trampoline, start_thread and clone, and the process ended by SIGABRT: RUN151;
- a traceback cut inside a collective (distributed_c10d's calls, past c10d_logger's wrapper; DDP's initial
  parameter broadcast): RUN151 at tier 2.
Near-misses that stay silent or keep their own code: a DeepEP settings line that says "timeout", the same
frames without an abort or with an NCCL error in the record, a thread of libtorch_cpu, DDP's shape check.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

# https://github.com/deepseek-ai/DeepEP/issues/274
DEEPEP_274 = """WARN: IB: read failed in ib_roce_get_version_num: Invalid argument
WARN: IB: read failed in ib_roce_get_version_num: Invalid argument
DeepEP dispatch NVL receiver timeout, channel: 6, RDMA: 0, nvl: 0, src NVL: 5, head: 315, tail: 315
DeepEP dispatch NVL receiver timeout, channel: 10, RDMA: 0, nvl: 0, src NVL: 5, head: 300, tail: 300
terminate called after throwing an instance of 'EPException'
  what():  Failed: CUDA error /workspace/DeepEP/csrc/deep_ep.cpp:83 'unspecified launch failure'
"""
TRAP = (
    "terminate called after throwing an instance of 'EPException'\n"
    "  what():  Failed: CUDA error /workspace/DeepEP/csrc/deep_ep.cpp:83 'unspecified launch failure'\n"
)


@pytest.mark.parametrize(
    ("line", "kernel"),
    [
        (
            "DeepEP dispatch NVL receiver timeout, channel: 6, RDMA: 0, nvl: 0, src NVL: 5, head: 315, tail: 315",
            "dispatch NVL receiver",
        ),
        (
            "DeepEP dispatch NVL receiver timeout (prefix), channel: 3, RDMA: 1, nvl: 2, src RDMA: 0, src nvl: 4",
            None,
        ),
        ("DeepEP timeout for dispatch senders, rank 3, responsible_channel = 2", "for dispatch senders"),
        ("DeepEP timeout check failed: rank = 3, thread = 1, value = 1)", "barrier (timeout check)"),
        ("DeepEP timeout check failed: 7 (rank = 3)", "barrier (timeout check)"),
        ("DeepEP combine (scale-up wait) timeout, scale-out: 0/2, scale-up: 1/8, channel: 3, lane: 1", None),
        ("DeepEP dispatch forwarder timeout (RDMA check), channel: 2, RDMA: 1, nvl: 3, dst NVL: 4", None),
        ("DeepEP combine NVL sender timeout, channel: 1, RDMA: 0, nvl: 2, dst NVL: 3, RDMA lane: 0", None),
        ("DeepEP combine_pcie sender timeout, channel: 1, rank: 2, warp: 3", "combine_pcie sender"),
    ],
)
def test_deepep_kernel_timeouts_lead_the_trap(line: str, kernel: str | None) -> None:
    facts: dict[str, object] = {"framework": "deepep"}
    if kernel:
        facts["kernel"] = kernel
    _check(line + "\n" + TRAP, "RUN560", facts)
    _check(line + "\n", "RUN560", facts)


def test_deepep_issue_274() -> None:
    _check(DEEPEP_274, "RUN560", {"kernel": "dispatch NVL receiver", "channel": 6})


@pytest.mark.parametrize(
    "line",
    [
        "DeepEP low latency timeout set to 100 s",
        "[config] DeepEP buffer: dispatch timeout = 100, combine timeout = 100",
        "DeepEP dispatch (FP8) passed: 43.81 GB/s (RDMA), no timeout",
    ],
)
def test_deepep_settings_lines_stay_silent(line: str) -> None:
    assert _root(line + "\n") is None


# https://github.com/huggingface/diffusers/issues/9501 (Flux DreamBooth: rank 0 saved for 15 minutes)
STRIPPED = """frame #1: <unknown function> + 0xe5aa84 (0x7fe885173a84 in /usr/local/lib/python3.8/dist-packages/torch/lib/libtorch_cuda.so)
frame #2: <unknown function> + 0xd6df4 (0x7fe93330edf4 in /lib/x86_64-linux-gnu/libstdc++.so.6)
frame #3: <unknown function> + 0x8609 (0x7fe93704e609 in /lib/x86_64-linux-gnu/libpthread.so.0)
frame #4: clone + 0x43 (0x7fe937188353 in /lib/x86_64-linux-gnu/libc.so.6)
"""
DIFFUSERS_9501 = (
    STRIPPED
    + """
E0923 15:13:20.499235 139957517330240 torch/distributed/elastic/multiprocessing/api.py:833] failed (exitcode: -6) local_rank: 0 (pid: 127496) of binary: /usr/bin/python
Traceback (most recent call last):
  File "/usr/local/bin/accelerate", line 8, in <module>
    sys.exit(main())
"""
)
# glibc 2.34+: start_thread and clone are in libc.so.6
STRIPPED_NEW_GLIBC = """frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f6fa0f6c446 in /usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so)
frame #1: <unknown function> + 0xe52cc1 (0x7f6fa22a8cc1 in /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so)
frame #2: <unknown function> + 0xdc253 (0x7f6fee4b0253 in /lib/x86_64-linux-gnu/libstdc++.so.6)
frame #3: <unknown function> + 0x94ac3 (0x7f6ff0060ac3 in /lib/x86_64-linux-gnu/libc.so.6)
frame #4: <unknown function> + 0x126850 (0x7f6ff00f2850 in /lib/x86_64-linux-gnu/libc.so.6)
"""


@pytest.mark.parametrize(
    "log",
    [
        DIFFUSERS_9501,
        STRIPPED + "Fatal Python error: Aborted\n",
        "terminate called after throwing an instance of 'c10::DistBackendError'\n" + STRIPPED_NEW_GLIBC,
        STRIPPED_NEW_GLIBC + "\n[E ProcessGroup] ... \nAborted (core dumped)\n",
        "".join("[rank3]:" + ln + "\n" for ln in STRIPPED.splitlines())
        + "W0923 torch/distributed/elastic/multiprocessing/api.py:833] failed (exitcode: -6) local_rank: 3\n",
    ],
)
def test_watchdog_record_without_symbols(log: str) -> None:
    _check(log, "RUN151", {"from_stack": True, "thread": "nccl_watchdog"})


@pytest.mark.parametrize(
    "log",
    [
        STRIPPED,  # no abort: nothing says the process ended by it
        # a thread of libtorch_cpu (autograd's engine), not of the NCCL process group
        STRIPPED.replace("libtorch_cuda.so", "libtorch_cpu.so") + "Aborted (core dumped)\n",
        # a deeper stack: another call threw in that thread
        "frame #0: c10d::Foo::bar() + 0x10 (0x7f in /x/torch/lib/libtorch_cuda.so)\n"
        + STRIPPED.replace("frame #1", "frame #2", 1)
        + "Aborted (core dumped)\n",
    ],
)
def test_other_stacks_are_not_the_watchdog(log: str) -> None:
    root = _root(log)
    assert root is None or root.code != "RUN151", root


# https://github.com/zcablii/LSKNet/issues/97 (DDP's first broadcast hung, then raised; the paste ends there)
LSKNET_97 = """2025-02-03 19:47:57,910 - mmcv - INFO -
roi_head.bbox_head.shared_fcs.1.bias - torch.Size([1024]):
XavierInit: gain=1, distribution=normal, bias=0

Traceback (most recent call last):
  File "./tools/train.py", line 192, in <module>
    main()
  File "./tools/train.py", line 181, in main
    train_detector(
  File "/media//DiskB/zh/LSKNet/mmrotate/apis/train.py", line 54, in train_detector
    model = MMDistributedDataParallel(
  File "/home//anaconda3/envs/LSKnet/lib/python3.8/site-packages/torch/nn/parallel/distributed.py", line 446, in __init__
    self._sync_params_and_buffers(authoritative_rank=0)
  File "/home//anaconda3/envs/LSKnet/lib/python3.8/site-packages/torch/nn/parallel/distributed.py", line 457, in _sync_params_and_buffers
    self._distributed_broadcast_coalesced(
  File "/home//anaconda3/envs/LSKnet/lib/python3.8/site-packages/torch/nn/parallel/distributed.py", line 1155, in _distributed_broadcast_coalesced
"""
HEAD = 'Traceback (most recent call last):\n  File "/workspace/train.py", line 41, in <module>\n    main()\n'
C10D = "/opt/conda/lib/python3.10/site-packages/torch/distributed/"


@pytest.mark.parametrize(
    ("log", "op"),
    [
        (LSKNET_97, "_distributed_broadcast_coalesced"),
        (
            HEAD
            + f'  File "{C10D}c10d_logger.py", line 75, in wrapper\n    return func(*args, **kwargs)\n'
            + f'  File "{C10D}distributed_c10d.py", line 2050, in all_reduce\n    work = group.allreduce([tensor], opts)\n',
            "all_reduce",
        ),
        (
            HEAD
            + f'  File "{C10D}distributed_c10d.py", line 3685, in barrier\n    work.wait()\n'
            + f'  File "{C10D}c10d_logger.py", line 75, in wrapper\n    return func(*args, **kwargs)\n',
            "barrier",
        ),
        (
            HEAD
            + f'  File "{C10D}utils.py", line 304, in _sync_module_states\n    _sync_params_and_buffers(\n',
            "_sync_module_states",
        ),
    ],
)
def test_traceback_cut_inside_a_collective(log: str, op: str) -> None:
    _check(log, "RUN151", {"cut": True, "op": op})
    # the paste starts mid-traceback (no header), or its line breaks were lost
    frames = log[log.index("Traceback (most recent call last):") :].split("\n", 1)[1]
    _check(frames, "RUN151", {"cut": True, "op": op})
    _check(" ".join(frames.split("\n")) + "\n", "RUN151", {"cut": True, "op": op})


@pytest.mark.parametrize(
    "log",
    [
        # DDP's shape check raises on a mismatch, not on a wait
        HEAD
        + f'  File "{C10D}utils.py", line 280, in _verify_param_shape_across_processes\n'
        + "    return dist._verify_params_across_processes(process_group, tensors, logger)\n",
        # the exception line follows: its own rows read it
        LSKNET_97 + "    dist._broadcast_coalesced(\nValueError: bad bucket\n",
        # a non-collective call of distributed_c10d
        HEAD + f'  File "{C10D}distributed_c10d.py", line 1520, in get_rank\n    return group.rank()\n',
        # a collective inside the process group's start: the ranks' meeting, not a collective of the run
        HEAD
        + f'  File "{C10D}distributed_c10d.py", line 900, in init_process_group\n    barrier()\n'
        + f'  File "{C10D}distributed_c10d.py", line 3685, in barrier\n    work.wait()\n',
        # the same stack without its header
        f'  File "{C10D}distributed_c10d.py", line 1520, in get_rank\n    return group.rank()\n',
    ],
)
def test_cut_tracebacks_elsewhere_are_not_a_timeout(log: str) -> None:
    root = _root(log)
    assert root is None or root.code != "RUN151", root


@pytest.mark.parametrize(
    "log",
    [
        "2025-02-03 19:47:57,910 - mmcv - INFO - roi_head.bbox_head.shared_fcs.1.bias - torch.Size([1024])\n",
        "{'loss': 0.9832, 'learning_rate': 0.00013799323562570462, 'epoch': 0.96}\n",
    ],
)
def test_healthy_lines_stay_silent(log: str) -> None:
    assert _root(log) is None
