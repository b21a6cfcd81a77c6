"""Killed and crashed processes in every shape their reporters print, and stacks pasted without their
message line. Each case is written from the text at its source (named beside it), not from one log:
torch's distributed/launch.py (1.x) and elastic agent, DeepSpeed's and Lightning's launchers, the
kernel's mm/oom_kill.c and memcontrol.c, systemd-oomd, earlyoom, Ray's memory monitor, Slurm, LSF, PBS,
Kubernetes and docker, bash/glibc, gdb, and ProcessGroupNCCL's watchdog frames. Decoys stay silent: a
launcher's record of exit code 1 without the worker's error is not a kill.
"""

from __future__ import annotations

from typing import Any, Optional

import pytest

from pgdoctor.diagnose.api import diagnose_sources
from tests.helpers.elastic_record import child_failed_table


def _root(text: str) -> tuple[Optional[str], dict[str, Any]]:
    real = [f for f in diagnose_sources([("job.log", text)]) if f.severity.value != "info"]
    return (real[0].code, dict(real[0].facts)) if real else (None, {})


# torch/distributed/launch.py (1.0-1.8): `raise subprocess.CalledProcessError(returncode=process.returncode,
# cmd=cmd)` after a traceback through launch.py's main().
_LAUNCH_TB = (
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.7/site-packages/torch/distributed/launch.py", line 260, in <module>\n'
    "    main()\n"
    '  File "/opt/conda/lib/python3.7/site-packages/torch/distributed/launch.py", line 256, in main\n'
    "    cmd=cmd)\n"
)
_CMD = "Command '['/opt/conda/bin/python', '-u', 'train.py', '--local_rank=3']'"

# The ChildFailedError table of torch elastic 1.10+ (without its last newline, as a paste ends).
_TABLE = child_failed_table(3, -9, 950).rstrip("\n")
_TABLE_FACTS = {"exitcode": -9, "rank": 3, "local_rank": 3, "pid": 950, "host": "gpu-node-1"}

# 1.9.0's table: "Root Cause:" and a "msg:" key.
_TABLE_19 = (
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
    "***************************************\n"
    "            train.py FAILED            \n"
    "=======================================\n"
    "Root Cause:\n"
    "[0]:\n"
    "  time: 2021-08-10_08:00:00\n"
    "  rank: 0 (local_rank: 0)\n"
    "  exitcode: -11 (pid: 3045)\n"
    "  error_file: <N/A>\n"
    '  msg: "Signal 11 (SIGSEGV) received by PID 3045"\n'
    "=======================================\n"
)

LAUNCHERS = [
    # launch.py 1.x
    (
        _LAUNCH_TB + f"subprocess.CalledProcessError: {_CMD} died with <Signals.SIGKILL: 9>.",
        "RUN121",
        {
            "exitcode": -9,
            "local_rank": 3,
            "signal": "SIGKILL",
        },
    ),
    (
        _LAUNCH_TB + f"subprocess.CalledProcessError: {_CMD} died with <Signals.SIGSEGV: 11>.",
        "RUN131",
        {
            "exitcode": -11,
            "signal": "SIGSEGV",
        },
    ),
    # a shell wrapper's status 128 + 9 through CalledProcessError
    (
        "subprocess.CalledProcessError: Command 'bash run.sh' returned non-zero exit status 137.",
        "RUN121",
        {
            "exitcode": -9,
            "exit_status": 137,
        },
    ),
    # elastic/multiprocessing/api.py: the agent's line behind glog (2.2+), a host prefix, a timestamp
    (
        "node-17: E0423 12:00:00.123000 140234 torch/distributed/elastic/multiprocessing/api.py:826] "
        "failed (exitcode: -9) local_rank: 0 (pid: 1234) of binary: /usr/bin/python",
        "RUN121",
        {"exitcode": -9, "local_rank": 0, "pid": 1234, "host": "node-17"},
    ),
    (
        "[2024-01-01 10:00:00,123] torch.distributed.elastic.multiprocessing.api: [ERROR] failed "
        "(exitcode: -7) local_rank: 2 (pid: 4321) of binary: /opt/conda/bin/python",
        "RUN131",
        {"exitcode": -7, "signal": "SIGBUS"},
    ),
    # the table vertical, behind a log collector's prefix on every line, flattened, glued
    (_TABLE, "RUN121", _TABLE_FACTS),
    (
        "\n".join("[2024-03-21 17:04:45] gpu-node-1: " + ln for ln in _TABLE.splitlines()),
        "RUN121",
        _TABLE_FACTS,
    ),
    (" ".join(ln.strip() for ln in _TABLE.splitlines()), "RUN121", _TABLE_FACTS),
    ("".join(ln.strip() for ln in _TABLE.splitlines()), "RUN121", _TABLE_FACTS),
    (_TABLE_19, "RUN131", {"exitcode": -11, "rank": 0, "pid": 3045, "signal": "SIGSEGV"}),
    # deepspeed/launcher/launch.py sigkill_handler, behind pdsh's host prefix
    (
        "node2: [2023-07-10 04:26:35,999] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', "
        "'train.py', '--local_rank=7'] exits with return code = -9",
        "RUN121",
        {"exitcode": -9, "local_rank": 7, "host": "node2"},
    ),
    # lightning/fabric/strategies/launchers/subprocess_script.py _ChildProcessObserver
    (
        "[rank: 1] Child process with PID 4242 terminated with code -9. Forcefully terminating all other "
        "processes to avoid zombies 🧟",
        "RUN121",
        {"exitcode": -9, "pid": 4242, "reporter": "lightning"},
    ),
    (
        "Child process with PID 4242 terminated with code -11. Forcefully terminating all other processes to "
        "avoid zombies 🧟",
        "RUN131",
        {"exitcode": -11, "signal": "SIGSEGV"},
    ),
]


@pytest.mark.parametrize(("text", "code", "facts"), LAUNCHERS)
def test_launcher_records_give_the_signal_and_where(text: str, code: str, facts: dict[str, Any]) -> None:
    got, f = _root(text)
    assert got == code, (got, f)
    for k, v in facts.items():
        assert f.get(k) == v, (k, f)


KERNEL_AND_PLATFORM = [
    # mm/oom_kill.c before 4.14: the record's second line alone; 2.6's "vsz:"; the reaper (4.6+)
    (
        "[ 1234.5] Killed process 4242 (python) total-vm:123456kB, anon-rss:98765kB, file-rss:0kB",
        {"pid": 4242},
    ),
    ("[ 99.1] Out of memory: kill process 4242 (python) score 900 or a child", {"pid": 4242}),
    ("Dec  4 12:00:00 node1 kernel: Killed process 1235 (python)", {"pid": 1235, "host": "node1"}),
    (
        "[ 1234.6] oom_reaper: reaped process 4242 (python), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB",
        {
            "pid": 4242,
            "process": "python",
        },
    ),
    # the call trace cut above oom_kill_process
    ("[ 1.1]  out_of_memory+0x1cf/0x4d0\n[ 1.1]  mem_cgroup_out_of_memory+0xc4/0xe0", {"cgroup": True}),
    # mm/memcontrol.c mem_cgroup_print_oom_info, cgroup v1 (3.x-4.18)
    (
        "[ 1.5] Task in /docker/abcdef killed as a result of limit of /docker/abcdef\n"
        "[ 1.5] memory: usage 16777216kB, limit 16777216kB, failcnt 1234",
        {"cgroup": True, "limit_bytes": 16777216 * 1024},
    ),
    # systemd-oomd (oomd-util.c), systemd unit.c, earlyoom kill.c (old and v1.8 wording)
    (
        "systemd-oomd[601]: Killed /user.slice/user-1000.slice/session-3.scope due to memory pressure for "
        "/user.slice/user-1000.slice being 62.19% > 50.00% for > 20s with reclaim activity",
        {"killer": "systemd-oomd", "reason": "memory pressure"},
    ),
    ("systemd[1]: train.service: Failed with result 'oom-kill'.", {"unit": "train.service"}),
    (
        'earlyoom[904]: sending SIGTERM to process 2232050 uid 1000 "python": oom_score 712, '
        "oom_score_adj 0, VmRSS 4514 MiB",
        {"killer": "earlyoom", "pid": 2232050, "process": "python"},
    ),
    # Ray 0.8-1.13 python/ray/memory_monitor.py, wrapped after "on node"
    (
        "ray.memory_monitor.RayOutOfMemoryError: More than 95% of the memory on node\n"
        "gpu-host-3 is used (11.8 / 12.3 GB). The top 5 memory consumers are:",
        {"killer": "ray_memory_monitor", "host": "gpu-host-3"},
    ),
    # schedulers and containers; newer slurmstepd names its node in its prefix
    (
        "slurmstepd-gpu20-15: error: Detected 1 oom-kill event(s) in StepId=9411285.0. Some of your "
        "processes may have been killed by the cgroup out-of-memory handler.",
        {"killer": "slurm_cgroup", "host": "gpu20-15"},
    ),
    ("       1234            train  OUT_OF_ME+    0:125 ", {"killer": "slurm_cgroup"}),
    (
        "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.\nExited with exit code 143.",
        {"killer": "lsf_memory_limit"},
    ),
    ("=>> PBS: job killed: mem 4194304kb exceeded limit 4194304kb", {"killer": "pbs_memory_limit"}),
    (
        "    Last State:     Terminated\n      Reason:       Error\n      Exit Code:    137",
        {"exit_status": 137},
    ),
    ("abc123   pytorch:latest   Exited (137) 5 minutes ago   trainer", {"exit_status": 137}),
    ("make: *** [Makefile:10: train] Error 137", {"exit_status": 137}),
    ("Command exited with non-zero status 137", {"exit_status": 137}),
    # -9 as an unsigned byte from a wrapper's sys.exit(-9) (determined.ai's "exit with status code 247")
    ("Process 10 exit with status code 247", {"exit_status": 247}),
    ("YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)", {"signal": "SIGKILL"}),
    # kubelet's OOM watcher (pkg/kubelet/oom), Colab's and Kaggle's notebook front ends
    (
        "Warning  SystemOOM  3m57s  kubelet  System OOM encountered, victim process: python, pid: 3103923",
        {
            "pid": 3103923,
            "process": "python",
        },
    ),
    ("Your session crashed after using all available RAM.", {"killer": "notebook_host"}),
    (
        "Your notebook tried to allocate more memory than is available. It has restarted.",
        {"killer": "notebook_host"},
    ),
    # Python's multiprocessing.Process repr
    (
        "AssertionError: <Process name='Process-3' pid=4242 parent=1 stopped exitcode=-SIGKILL>",
        {"signal": "SIGKILL"},
    ),
    # bash's job report, strsignal(SIGKILL) translated by glibc (zh_CN, ja, de)
    ("run.sh: 行 12: 45678 已杀死                  python train.py", {"pid": 45678}),
    ("Epoch 3:  10%\n強制終了", {"killer": "sigkill"}),
    ("Getötet", {"killer": "sigkill"}),
]


@pytest.mark.parametrize(("text", "facts"), KERNEL_AND_PLATFORM)
def test_kernel_userspace_and_scheduler_oom_records(text: str, facts: dict[str, Any]) -> None:
    got, f = _root(text)
    assert got == "RUN121", (got, f)
    for k, v in facts.items():
        assert f.get(k) == v, (k, f)


# gdb's bt of a core or of the faulting thread, without its "received signal" stop line.
_GDB_NULL = (
    "(gdb) bt\n"
    "#0  0x00001554ff97c269 in ncclIbDeregMr (comm=0x0, mhandle=0x0) at transport/net_ib.cc:906\n"
    "#1  0x00001554ff985869 in ncclNetDeregMr (comm=0x555595122d00, mhandle=<optimized out>) at "
    "include/net.h:31\n"
    "#2  0x00001555554f0609 in start_thread (arg=<optimized out>) at pthread_create.c:477\n"
    "#3  0x00001555552b0293 in clone () at ../sysdeps/unix/sysv/linux/x86_64/clone.S:95"
)
_GDB_HANDLER = (
    "#0  0x00007f1 in __pthread_kill_implementation () from /lib/x86_64-linux-gnu/libc.so.6\n"
    "#1  0x00007f2 in raise () from /lib/x86_64-linux-gnu/libc.so.6\n"
    "#2  <signal handler called>\n"
    "#3  0x00007f3 in at::native::index_put_ (self=...) at aten/src/ATen/native/TensorAdvancedIndexing.cpp:12"
)
# The same process waiting: not a crash (a null argument in a wait is a timeout's NULL, not a fault).
_GDB_WAIT = (
    "#0  0x00007f1 in __futex_abstimed_wait_common64 (futex_word=0x0) at ./nptl/futex-internal.c:57\n"
    "#1  0x00007f2 in pthread_cond_timedwait () from /lib/x86_64-linux-gnu/libc.so.6\n"
    "#2  0x00007f3 in start_thread (arg=<optimized out>) at pthread_create.c:477"
)
# ProcessGroupNCCL's watchdog thread, 1.x-2.1 (workCleanupLoop, handleNCCLGuard), 2.2-2.6 (watchdogHandler,
# checkTimeout), 2.7+ (Watchdog::run / runLoop), in c10's "frame #N:" shape and in gdb's.
_WD_C10_OLD = (
    "frame #0: c10d::ProcessGroupNCCL::WorkNCCL::handleNCCLGuard(c10d::ErrorHandlingMode) + 0x1c3 (0x7f in "
    "libtorch_cuda.so)\n"
    "frame #1: c10d::ProcessGroupNCCL::workCleanupLoop() + 0x1a1 (0x7f in libtorch_cuda.so)\n"
    "frame #2: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x78 (0x7f in libtorch_cuda.so)"
)
_WD_C10_NEW = (
    "terminate called after throwing an instance of 'c10::DistBackendError'\n"
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x98 (0x7f in libc10.so)\n"
    "frame #1: <unknown function> + 0x11e3b7a (0x7f in libtorch_cuda.so)\n"
    "frame #2: c10d::ProcessGroupNCCL::Watchdog::runLoop() + 0x8d9 (0x7f in libtorch_cuda.so)\n"
    "frame #3: c10d::ProcessGroupNCCL::Watchdog::run() + 0xd2 (0x7f in libtorch_cuda.so)"
)
_WD_HEADER = (
    "Exception raised from ncclCommWatchdog at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1418 "
    "(most recent call first):\n"
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7f in libc10.so)\n"
    "frame #1: <unknown function> + 0xe32119 (0x7f in libtorch_cuda.so)"
)
_WD_GDB_ABORT = (
    "#3  0x00007f in __GI_raise (sig=sig@entry=6) at ../sysdeps/posix/raise.c:26\n"
    "#4  0x00007f in __GI_abort () at ./stdlib/abort.c:79\n"
    "#6  0x00007f in std::terminate() () from /lib/x86_64-linux-gnu/libstdc++.so.6\n"
    "#7  0x00007f in c10d::ProcessGroupNCCL::ncclCommWatchdog() () from libtorch_cuda.so\n"
    "#8  0x00007f in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442"
)
# The watchdog threw a CUDA error it found (CUDAException.cpp, isCompleted): not a timeout.
_WD_CUDA = (
    "frame #2: c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool) + 0x118 "
    "(0x7f in libc10_cuda.so)\n"
    "frame #3: c10d::ProcessGroupNCCL::WorkNCCL::finishedGPUExecutionInternal() const + 0x56 (0x7f in "
    "libtorch_cuda.so)\n"
    "frame #4: c10d::ProcessGroupNCCL::WorkNCCL::isCompleted() + 0x58 (0x7f in libtorch_cuda.so)\n"
    "frame #5: c10d::ProcessGroupNCCL::watchdogHandler() + 0x77c (0x7f in libtorch_cuda.so)\n"
    "frame #6: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x10c (0x7f in libtorch_cuda.so)\n\n"
    "Exception raised from ncclCommWatchdog at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1418"
)
# An idle watchdog in a thread dump of a healthy process: nothing thrown.
_WD_IDLE = (
    'Thread 5 (Thread 0x7f00 (LWP 1234) "pt_nccl_watchdg"):\n'
    "#0  0x00007f in pthread_cond_clockwait () from /lib/x86_64-linux-gnu/libc.so.6\n"
    "#1  0x00007f in c10d::ProcessGroupNCCL::watchdogHandler() () from libtorch_cuda.so\n"
    "#2  0x00007f in c10d::ProcessGroupNCCL::ncclCommWatchdog() () from libtorch_cuda.so"
)

# arch/x86/mm/fault.c show_signal_msg and traps.c: the kernel's record of a user process's fatal fault
_KERNEL_SEGV = (
    "[12345.678] python[4242]: segfault at 0 ip 00007f1234 sp 00007ffd1234 error 4 in "
    "libnccl.so.2[7f0000000000+1a2000]"
)
_KERNEL_GPF = (
    "[ 99.1] traps: python[4242] general protection fault ip:7f12 sp:7ff1 error:0 in libc.so.6[7f00+195000]"
)
_KERNEL_ILL = "traps: pt_main_thread[77] trap invalid opcode ip:7f sp:7f error:0 in libtorch_cpu.so[7f+10]"
# c10/util/signal_handler.cpp's FatalSignalHandler, one block per thread
_C10_HANDLER = (
    "SIGSEGV(11), PID: 3154296, Thread 3154392: \n"
    " frame #0: c10::FatalSignalHandler::stacktraceSignalHandler(bool) + 0x8b (0x7f5a5ceaf51b in libc10.so)\n"
    "frame #1: <unknown function> + 0x14420 (0x7f5aa430c420 in /lib/x86_64-linux-gnu/libpthread.so.0)"
)

# The heartbeat monitor's thread ending the process (2.2-2.6 heartbeatMonitor, 2.7+ HeartbeatMonitor::runLoop)
_HB_GDB = (
    "#0  0x00007f in __GI_abort () at ./stdlib/abort.c:79\n"
    "#1  0x00007f in c10d::ProcessGroupNCCL::terminateProcess(std::string const&) () from libtorch_cuda.so\n"
    "#2  0x00007f in c10d::ProcessGroupNCCL::heartbeatMonitor() () from libtorch_cuda.so"
)
_HB_C10 = (
    "frame #0: c10d::ProcessGroupNCCL::terminateProcess(std::string const&) + 0x1a (0x7f in "
    "libtorch_cuda.so)\n"
    "frame #1: c10d::ProcessGroupNCCL::HeartbeatMonitor::runLoop() + 0x9d1 (0x7f in libtorch_cuda.so)"
)

STACKS = [
    (_HB_GDB, "RUN152", {"frame": "heartbeatMonitor"}),
    (_HB_C10, "RUN152", {"frame": "HeartbeatMonitor::runLoop"}),
    (_KERNEL_SEGV, "RUN131", {"signal": "SIGSEGV", "pid": 4242, "library": "libnccl.so.2"}),
    (_KERNEL_GPF, "RUN131", {"signal": "SIGSEGV", "process": "python", "library": "libc.so.6"}),
    (_KERNEL_ILL, "RUN131", {"signal": "SIGILL", "pid": 77}),
    (_C10_HANDLER, "RUN131", {"signal": "SIGSEGV", "pid": 3154296}),
    (_GDB_NULL, "RUN131", {"signal": "SIGSEGV", "frame": "ncclIbDeregMr"}),
    (_GDB_HANDLER, "RUN131", {"frame": "at::native::index_put_"}),
    (_WD_C10_OLD, "RUN151", {"frame": "handleNCCLGuard"}),
    (_WD_C10_NEW, "RUN151", {"frame": "Watchdog::runLoop"}),
    (_WD_HEADER, "RUN151", {"frame": "ncclCommWatchdog"}),
    (_WD_GDB_ABORT, "RUN151", {"frame": "ncclCommWatchdog"}),
]


@pytest.mark.parametrize(("text", "code", "facts"), STACKS)
def test_stacks_without_their_message_line(text: str, code: str, facts: dict[str, Any]) -> None:
    got, f = _root(text)
    assert got == code, (got, f)
    for k, v in facts.items():
        assert f.get(k) == v, (k, f)


def test_a_watchdog_that_threw_a_cuda_error_is_not_a_timeout() -> None:
    assert _root(_WD_CUDA)[0] != "RUN151"


# One thread of `thread apply all bt` in a progress loop with a null argument: a hang's dump, not a fault.
_GDB_DUMP = (
    "Thread 3 (Thread 0x7f00 (LWP 12)):\n"
    "#0  0x00007f in ncclSocketProgressOpt (op=0, ptr=0x0) at misc/socket.cc:10\n"
    "#1  0x00007f in ncclProxyProgress (proxyState=0x55) at proxy.cc:900"
)


@pytest.mark.parametrize(
    "text", [_GDB_WAIT, _WD_IDLE, _GDB_DUMP], ids=["waiting thread", "idle watchdog", "thread dump"]
)
def test_waiting_threads_are_not_crashes(text: str) -> None:
    assert _root(text)[0] not in ("RUN131", "RUN151")


DECOYS = [
    # a launcher's record of exit code 1 (the worker's own error is elsewhere): no kill
    _LAUNCH_TB + f"subprocess.CalledProcessError: {_CMD} returned non-zero exit status 1.",
    "Child process with PID 4242 terminated with code 1. Forcefully terminating all other processes to avoid "
    "zombies 🧟",
    "[2023-07-10 04:26:35,999] [ERROR] [launch.py:324:sigkill_handler] ['/usr/bin/python3', '-u', "
    "'train.py', '--local_rank=1'] exits with return code = 1",
    # docker inspect's State block says the container was not OOM-killed
    '"State": {\n    "Status": "exited",\n    "OOMKilled": false,\n    "ExitCode": 0',
]


# The job's own progress lines (wenet's logger, RETURNN's memory line): resident memory growing until the
# log stops is a host OOM; a large but steady RSS, or a job that goes on after it, is not.
_RSS = "2022-03-23 23:57:28,855 DEBUG TRAIN Batch 0/185100 loss 4.57 rank 0 RSS MEM USE: {}G"


def test_rss_growing_until_the_log_stops_is_a_host_oom() -> None:
    got, f = _root("\n".join(_RSS.format(v) for v in (5.11, 5.11, 46.51, 105.61, 212.04)))
    assert got == "RUN121" and f["killer"] == "host_memory_growth" and f["readings"] == 5
    assert f["rss_last_bytes"] == int(212.04 * (1 << 30))


@pytest.mark.parametrize(
    "values,tail",
    [((100, 101, 102, 103), ""), ((5, 20, 60), "\nEpoch 3 done" * 6), ((60, 20, 5), "")],
    ids=["steady", "went on", "shrinking"],
)
def test_rss_readings_that_do_not_end_the_job_are_silent(values: tuple[int, ...], tail: str) -> None:
    assert _root("\n".join(_RSS.format(v) for v in values) + tail)[0] is None


@pytest.mark.parametrize("sig", ["Signals.SIGTERM", "15"])
def test_an_agent_told_to_stop_is_no_worker_failure(sig: str) -> None:
    # elastic/agent/server/api.py: "Received %s death signal" of a signal.Signals, which Python <= 3.10
    # prints "Signals.SIGTERM" and 3.11+ "15"; the SIGTERMs that follow are its own teardown
    text = (
        f"W0616 00:44:57.731000 4026234 torch/distributed/elastic/agent/server/api.py:719] Received {sig} "
        "death signal, shutting down workers\n"
        + "\n".join(
            "W0616 00:44:57.732000 4026234 torch/distributed/elastic/multiprocessing/api.py:900] "
            f"Sending process {pid} closing signal SIGTERM"
            for pid in (4026322, 4026324)
        )
    )
    got, f = _root(text)
    assert got == "RUN133" and f["launcher_signal"] == "SIGTERM" and "suspect_pid" not in f


def test_spawn_teardown_alone_names_the_pid_it_did_not_stop() -> None:
    # torch/multiprocessing/spawn.py (2.2+) join(): SIGTERM to the survivors of the first failure
    text = "\n".join(
        "W0803 08:51:23.747000 2888 torch/multiprocessing/spawn.py:169] "
        f"Terminating process {pid} via signal SIGTERM"
        for pid in (2965, 2966, 2968)
    )
    got, f = _root(text)
    assert got == "RUN133" and f["reporter"] == "torch.multiprocessing.spawn" and f["suspect_pid"] == 2967


@pytest.mark.parametrize("text", DECOYS)
def test_an_exit_code_1_record_is_not_a_kill(text: str) -> None:
    got, _ = _root(text)
    assert got not in ("RUN121", "RUN131"), got
