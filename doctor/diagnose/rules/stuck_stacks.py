"""collective_timeout from a stack dump of a stuck rank: what a user pastes when a job hangs and no
error was printed yet (gdb's `bt` / `thread apply all bt`, pystack, py-spy dump, faulthandler's
dump_traceback[_later]).

A dump, not a traceback: gdb frames "#3  0x00007f.. in c10d::ProcessGroupNCCL::WorkNCCL::synchronize()
(...) from .../libtorch_cuda.so" (or without the address: "#5  ncclGroupEnd () at ..."), pystack's
"(C) File "...", line 0, in cudaStreamSynchronize (libcudart.so.12)", py-spy dump's "    all_reduce
(torch/distributed/distributed_c10d.py:2050)" under "Thread 4242 (idle): "MainThread"" (or the thread's
address, "Thread 0x7FA6E7C01740 (idle): "MainThread""), faulthandler's
"  File "/.../distributed_c10d.py", line 2050 in all_reduce" under "Thread 0x00007f.. (most recent call
first):" (dump_traceback_later heads it with "Timeout (0:30:00)!"). A frame in the collective or
GPU-synchronisation layer (c10d Work wait/synchronize, cuda*Synchronize, NCCL's group or kernel
launch, gloo's buffer waits, torch.distributed's collectives) says the rank is waiting in a collective:
the job hangs there. Frames of the store (TCPStore wait/get, c10d's rendezvous) say it waits for the
other ranks to arrive: a rendezvous that does not complete. A Python exception's traceback ("Traceback
(most recent call last):") is not a dump and is not read here. Tier 2: any error line is the better
record.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.dist_calls import COLLECTIVE_CALLS
from pgdoctor.model import lazy_re

_GDB = lazy_re.compile(r"^#\d+\s+(?:0x[0-9a-fA-F]+ in )?(?P<fn>[\w:~<>]+(?:<[^()]*>)?)\s*\(")
_PYSTACK_C = lazy_re.compile(r'^\s*\(C\) File "[^"]*", line \d+, in (?P<fn>[\w:~<>]+)')
_PYSPY = lazy_re.compile(r"^\s+(?P<fn>\w+) \((?P<file>[\w./-]+\.py):\d+\)\s*$")
_FAULTHANDLER = lazy_re.compile(r'^\s*File "(?P<file>[^"]+\.py)", line \d+ in (?P<fn>\w+)\s*$')
# (pystack heads each thread "Traceback for thread 4242 (python) [Has the GIL] (most recent call last):")
_HEADER = lazy_re.compile(
    r"\(gdb\)|^Thread \d+ \(Thread 0x|^Thread 0x[0-9a-f]+ \(most recent call first\)|"
    r"^Traceback for thread \d+ \(|"
    r"^Thread (?:\d+|0x[0-9A-Fa-f]+) \((?:idle|active)[^)]*\)|^Timeout \(\d+:\d\d:\d\d\)!|^Current thread 0x"
)

# (framework_exits reads Paddle's C++ traceback under a SIGTERM with it too)
NATIVE_WAIT = lazy_re.compile(
    r"WorkNCCL::(?:wait|synchronize\w*|isCompleted)|ProcessGroupGloo::\w*Work::wait|"
    r"UnboundBuffer::wait(?:Recv|Send)|cu(?:da)?(?:Stream|Event|Device|Ctx)Synchronize|"
    # NCCL's API symbols also as their "p" aliases (core.h's NCCL_API defines pncclAllReduce beside the weak
    # ncclAllReduce; gdb names either: "#6 0x.. in pncclCommInitRankConfig () from libnccl.so.2")
    r"^p?nccl(?:GroupEnd|AllReduce|AllGather|ReduceScatter|Broadcast|Send|Recv|CommInitRank\w*)$|"
    r"ncclLaunch\w*|ncclStrongStream\w*|"
    # a communicator's teardown (2.14+ init.cc: ncclCommAbort / ncclCommDestroy -> commReclaim joins the
    # local ranks' teardown): it waits for the other ranks of the node to abort too
    r"^p?(?:ncclCommAbort|ncclCommDestroy|ncclCommFinalize)$|^commReclaim$"
)
# NCCL's kernel launch, as gdb names it inside libnccl (which links cudart statically): "#9  0x.. in
# cudart::cudaApiLaunchKernel(void const*, dim3, ...) () from /usr/local/cuda/lib64/libnccl.so.2". A launch
# that does not return is a full device queue behind a collective kernel that never completes. (The same
# symbols from libcudart or libcuda alone are any kernel's launch, and are not read.)
_NCCL_LAUNCH = lazy_re.compile(r"^(?:cudart::)?cu(?:da)?(?:Api)?LaunchKernel\w*$")
_FROM_NCCL = lazy_re.compile(r"\bfrom \S*libnccl\.so\b")
_NATIVE_STORE = lazy_re.compile(r"TCPStore::(?:wait|doWait|get|doGet)|TCPClient::receive\w*|bootstrap\w*")
_PY_COLLECTIVES = COLLECTIVE_CALLS | {"wait"}

# PyTorch's multi-process test harness (torch/testing/_internal/common_distributed.py,
# MultiProcessTestCase._check_return_codes, 1.8-2.x): a rank process whose exitcode is still None when
# the test's timeout ran out: "RuntimeError: Process 0 terminated or timed out after 300.0761675834656
# seconds" (2.x, f-string and .format), "Process 1 timed out after 100 seconds" (1.x), "Rank 0 terminated or
# timed out after ..." (forks: torch-xpu-ops, DeepSpeed's DistributedTest copies).
_TEST_HANG = lazy_re.compile(
    r"(?:RuntimeError: )?(?P<who>Process|Rank) (?P<rank>\d+) (?:terminated or )?timed out after "
    r"(?P<secs>\d+(?:\.\d+)?) seconds"
)


def _test_hang(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    secs = float(m.group("secs"))
    rank = int(m.group("rank"))
    facts: dict[str, Any] = {"rank": rank, "timeout_s": round(secs, 1), "harness": "common_distributed"}
    return [
        row.event(
            hit,
            f"rank {rank} of a multi-process distributed test was still running when the test's "
            f"{secs:.0f} s timeout ran out: the ranks hung (a collective, a barrier or a teardown that "
            "never returned)",
            facts,
            dedupe=(row.code, rank),
        )
    ]


def _frame(text: str) -> Optional[tuple[str, str]]:
    """(kind, function) of a frame in a dump that waits: kind "collective" or "store"."""
    for rx in (_GDB, _PYSTACK_C):
        m = rx.match(text)
        if m:
            fn = m.group("fn")
            if NATIVE_WAIT.search(fn) or (_NCCL_LAUNCH.match(fn) and _FROM_NCCL.search(text)):
                return "collective", fn
            if _NATIVE_STORE.search(fn):
                return "store", fn
            return None
    for rx in (_PYSPY, _FAULTHANDLER):
        m = rx.match(text)
        if m and m.group("fn") in _PY_COLLECTIVES:
            f = m.group("file")
            if "distributed_c10d" in f or "c10d_logger" in f:
                return "collective", m.group("fn")
            if "rendezvous" in f or "store" in f:
                return "store", m.group("fn")
    return None


# The NCCL watchdog thread's own frames (ProcessGroupNCCL.cpp): 1.x-2.1 ncclCommWatchdog -> workCleanupLoop
# -> WorkNCCL::handleNCCLGuard / handleException (which rethrow the work's error), 2.2-2.6 ncclCommWatchdog
# -> watchdogHandler -> WorkNCCL::checkTimeout, 2.7+ ProcessGroupNCCL::Watchdog::run -> runLoop; the c10
# record's header names the throwing function ("Exception raised from ncclCommWatchdog at
# ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1418 (most recent call first):"). In a gdb frame
# ("#7  0x.. in c10d::ProcessGroupNCCL::ncclCommWatchdog() () from libtorch_cuda.so") or a c10 frame
# ("frame #2: c10d::ProcessGroupNCCL::workCleanupLoop() + 0x1a1 (0x7f.. in libtorch_cuda.so)"). 2.7+'s
# Watchdog::run catches what runLoop threw and throws it again as a DistBackendError of its own, whose c10
# header has the bare function name: "Exception raised from run at /pytorch/torch/csrc/distributed/c10d/
# ProcessGroupNCCL.cpp:2063 (most recent call first):".
_WATCHDOG_FN = (
    r"(?P<fn>ncclCommWatchdog|workCleanupLoop|watchdogHandler|Watchdog::run(?:Loop)?|"
    r"run(?= at \S*ProcessGroupNCCL\.cpp:)|"
    r"handleNCCLGuard|WorkNCCL::handleException|checkTimeout|heartbeatMonitor|HeartbeatMonitor::runLoop)\b"
)
# The heartbeat monitor's thread (2.2-2.6 ProcessGroupNCCL::heartbeatMonitor, 2.7+ HeartbeatMonitor::runLoop)
# ends the process through terminateProcess when the watchdog itself stopped making progress: RUN152.
_HEARTBEAT_FN = lazy_re.compile(r"heartbeatMonitor|HeartbeatMonitor::runLoop")
_WATCHDOG_FRAME = lazy_re.compile(r"^(?:#\d+\s.*?|frame #\d+: .*?|Exception raised from )" + _WATCHDOG_FN)
# The watchdog thread threw or aborted (an idle watchdog in a thread dump only waits in wait_for).
_THROWN = lazy_re.compile(
    r"c10::Error|std::terminate|__cxa_throw|__cxa_rethrow|terminate called|Exception raised from|"
    r"\b(?:__GI_)?abort\b|\b(?:__GI_)?raise\b|__pthread_kill|handleNCCLGuard|handleException|checkTimeout|"
    r"DistBackendError|terminateProcess"
)
# What the watchdog threw, when the excerpt says: an NCCL or CUDA error (their own rows read it), not a
# timeout. A c10 record's header names where: checkForNCCLErrors, c10_cuda_check_implementation.
_OTHER_CAUSE = lazy_re.compile(
    r"NCCL error|CUDA error|nccl\w*Error\b|checkForNCCLErrors|checkAndSetException|c10_cuda_check|"
    r"finishedGPUExecution|CUDAException|illegal memory access|remote process exited|"
    r"caught collective operation timeout|ncclCommGetAsyncError"
)
# The heartbeat monitor (2.3-2.6) polls the store for the "should dump" flag of another rank each cycle: a
# c10 record "frame #4: c10d::TCPStore::check(...)" / "TCPStore::doGet" under heartbeatMonitor, after
# "recvValue failed ... Connection reset by peer", is that poll failing because the store's host (rank 0's
# agent or process) ended, which the monitor logs as 'Failed to check the "should dump" flag on TCPStore'.
_STORE_POLL = lazy_re.compile(r"TCPStore::(?:check|doGet|get|doWait)|TCPClient::receive|recvValue")
_THREAD_HEAD = lazy_re.compile(r"^Thread (?:\d+|0x[0-9A-Fa-f]+) ")
# 2.7+'s Watchdog::run throws a new error around the one runLoop threw, so its record ("Exception raised from
# run at") follows that record: the inner record says why (a timeout, a CUDA or NCCL error). When only its
# frames are in the excerpt above, its header cut off, the cause is not known.
_C10_FRAME = lazy_re.compile(r"frame #\d+: ")


# The same watchdog record from a build without symbols (or cut above its header): the thread's frames are
# only its entry in libtorch_cuda.so right on std::thread's trampoline (libstdc++'s
# execute_native_thread_routine), start_thread (libpthread, or libc since glibc 2.34) and clone: "frame #1:
# <unknown function> + 0xe5aa84 (0x7f.. in .../torch/lib/libtorch_cuda.so)", "frame #2: <unknown function> +
# 0xd6df4 (0x7f.. in /lib/x86_64-linux-gnu/libstdc++.so.6)", "frame #3: <unknown function> + 0x8609 (..
# libpthread.so.0)", "frame #4: clone + 0x43 (.. libc.so.6)". A c10 record ("frame #N: ") is only printed for
# an error; one whose thread was started by libtorch_cuda itself and that ended the process by SIGABRT
# (terminate, exit code -6) is ProcessGroupNCCL's watchdog (or 1.x-2.1's workCleanupLoop) rethrowing what it
# caught: RUN151 like the named frames, unless the record says an NCCL or CUDA error (_OTHER_CAUSE: those rows
# read it).
_C10_CUDA_ENTRY = lazy_re.compile(
    r"^frame #(?P<n>[0-2]): <unknown function> \+ 0x[0-9a-f]+ \(0x[0-9a-f]+ in \S*libtorch_cuda\.so\)\s*$"
)
_C10_TRAMPOLINE = (
    lazy_re.compile(r"^frame #\d+: .*\bin \S*libstdc\+\+\.so(?:\.\d+)*\)\s*$"),
    lazy_re.compile(r"^frame #\d+: .*\bin \S*lib(?:pthread|c)\.so(?:\.\d+)*\)\s*$"),
    lazy_re.compile(r"^frame #\d+: (?:__)?clone3? \+ 0x|^frame #\d+: .*\bin \S*libc\.so(?:\.\d+)*\)\s*$"),
)
# Frames above the entry that keep it the watchdog's record: c10's own (Error's constructor, TORCH_CHECK).
_C10_OWN = lazy_re.compile(r"^frame #\d+: .*\bin \S*libc10\.so\)\s*$")
_ABORTED = lazy_re.compile(
    r"terminate called after throwing|\(exitcode: -6\)|exitcode\s*:\s*-6\b|Signals\.SIGABRT|"
    r"\bSIGABRT\b|Fatal Python error: Aborted|Aborted \(core dumped\)"
)


def thread_block(hit: Hit, n: int = 40) -> list[str]:
    """The frames of the hit line's thread: the lines around it up to a thread header of gdb's
    `thread apply all bt` or faulthandler's dump (another thread's frames say nothing about this one)."""
    before = [ln.text for ln in hit.before(n, same_rank=False)]
    for k in range(len(before) - 1, -1, -1):
        if _THREAD_HEAD.match(before[k].strip()):
            before = before[k + 1 :]
            break
    after: list[str] = []
    for ln in hit.after(n, same_rank=False):
        if _THREAD_HEAD.match(ln.text.strip()):
            break
        after.append(ln.text)
    return [*before, hit.text, *after]


def _watchdog(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    block = thread_block(hit)
    if not any(_THROWN.search(t) for t in block) or any(_OTHER_CAUSE.search(t) for t in block):
        return []
    # the stack is read once, at its first watchdog frame
    first = next(i for i, t in enumerate(block) if t is hit.text or _WATCHDOG_FRAME.search(t.strip()))
    if block[first] is not hit.text:
        return []
    if m.group("fn") == "run" and any(_C10_FRAME.match(t.strip()) for t in block[:first]):
        return []  # 2.7+'s outer record after the frames of the one it wraps, whose header is cut off
    r = hit.rank
    if _HEARTBEAT_FN.search(m.group("fn")) and any(_STORE_POLL.search(t) for t in block):
        return []  # the monitor's poll of the store failed: the store's host went away (store rows)
    if _HEARTBEAT_FN.search(m.group("fn")):
        return [
            row.event(
                hit,
                f"{hit.who(r)}: a C++ stack of the NCCL heartbeat monitor ending the process "
                f"({m.group('fn')}): the watchdog itself stopped making progress (the monitor's message "
                "line is not in the excerpt)",
                {"from_stack": True, "frame": m.group("fn"), "thread": "nccl_heartbeat_monitor"},
                rank=r,
                code=C.HEARTBEAT_TIMEOUT.code,
                dedupe=(C.HEARTBEAT_TIMEOUT.code, r, "stack"),
            )
        ]
    return [
        row.event(
            hit,
            f"{hit.who(r)}: a C++ stack of the NCCL watchdog thread that threw and ended the process "
            f"({m.group('fn')}): a collective ran past its timeout (the watchdog's message line is not in "
            "the excerpt)",
            {"from_stack": True, "frame": m.group("fn"), "thread": "nccl_watchdog"},
            rank=r,
            dedupe=(row.code, r, "stack"),
        )
    ]


# DeepSpeed ZeRO-3's parameter fetch before a module's forward, as a dump shows it (faulthandler's 'File
# ".../deepspeed/runtime/zero/stage3.py", line 406 in fetch_sub_module', py-spy's "fetch_sub_module
# (deepspeed/runtime/zero/partitioned_param_coordinator.py:306)"): stage3.py in 0.3-0.5,
# partitioned_param_coordinator.py from 0.6 (0.16: fetch_sub_module(self, current_submodule, forward)). Every
# rank all-gathers each module's partitioned parameters before its forward, so a rank stuck there waits for
# ranks that did not run that forward: generate() without synced_gpus=True (ranks stop at different lengths),
# an eval or last batch some ranks do not have, a rank-dependent branch or MoE route (RUN358, tier 1: an
# error line of a rank is the better record).
_ZERO3_FETCH = lazy_re.compile(
    r'^\s*(?:File "(?P<file>[^"]*deepspeed/runtime/zero/\w+\.py)", line \d+ in fetch_sub_module\s*$|'
    r"fetch_sub_module \((?P<file2>\S*deepspeed/runtime/zero/\w+\.py):\d+\)\s*$)"
)


def _zero3_fetch(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    texts = [ln.text for ln in [*hit.before(40, same_rank=False), *hit.after(40, same_rank=False)]]
    if any("Traceback (most recent call last)" in t for t in texts):
        return []  # an exception raised in the fetch: its exception line is the record
    if not any(_HEADER.search(t) for t in texts):
        return []
    path = m.group("file") or m.group("file2")
    return [
        row.event(
            hit,
            f"{hit.who()}: a stack dump shows the rank waiting in DeepSpeed ZeRO-3's parameter fetch "
            f"(fetch_sub_module in {path.rsplit('/', 1)[-1]}): the ranks ran different numbers of forward "
            "passes, so this rank's all-gather has no partner (generate() needs synced_gpus=True; give every "
            "rank the same number of batches)",
            {"from_stack": True, "frame": "fetch_sub_module", "framework": "deepspeed", "zero_stage": 3},
            dedupe=(row.code, hit.rank, "zero3_fetch"),
        )
    ]


class _AnyOf:
    """Frame formats with the same group names as one row's finder (an alternation cannot repeat them)."""

    def __init__(self, *rxs: re.Pattern[str]) -> None:
        self.rxs = rxs
        self.pattern = " | ".join(rx.pattern for rx in rxs)

    def search(self, text: str) -> Optional[re.Match[str]]:
        for rx in self.rxs:
            m = rx.search(text)
            if m:
                return m
        return None


_TEARDOWN = frozenset({"ncclCommAbort", "ncclCommDestroy", "ncclCommFinalize", "commReclaim"})


def _dump(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    lines = [*hit.before(40, same_rank=False), hit.line, *hit.after(40, same_rank=False)]
    texts = [ln.text for ln in lines]
    if any("Traceback (most recent call last)" in t for t in texts):
        return []  # an exception's traceback: its exception line is the record
    if not any(_HEADER.search(t) for t in texts) and not _GDB.match(hit.text.strip()):
        return []  # py-spy / faulthandler frames need their dump's header around them
    found = _frame(hit.text)
    if found is None:
        return None
    kind, fn = found
    # the dump is read once, at its first waiting frame
    for t in texts[: len(hit.before(40, same_rank=False))]:
        if _frame(t) is not None:
            return []
    facts: dict[str, Any] = {"from_stack": True, "frame": fn, "waits_in": kind}
    if kind == "store":
        return [
            row.event(
                hit,
                f"{hit.who()}: a stack dump shows the rank waiting in the store ({fn}): the other ranks "
                "never arrived (a rendezvous that does not complete)",
                facts,
                code=C.RENDEZVOUS_TIMEOUT.code,
                dedupe=(C.RENDEZVOUS_TIMEOUT.code, hit.rank, "stack"),
            )
        ]
    if (fn[1:] if fn.startswith("pnccl") else fn) in _TEARDOWN:
        facts["in_teardown"] = True
        return [
            row.event(
                hit,
                f"{hit.who()}: a stack dump shows the rank hung in the communicator's teardown ({fn}): since "
                "NCCL 2.14 ncclCommAbort / ncclCommDestroy wait for the other ranks of the node to tear down "
                "too; abort or destroy the communicator on every local rank (or kill them all)",
                facts,
                dedupe=(row.code, hit.rank, "stack"),
            )
        ]
    return [
        row.event(
            hit,
            f"{hit.who()}: a stack dump shows the rank waiting in a collective ({fn}): the job hangs there; "
            "the rank that is not in the same collective is the culprit (dump every rank to find it)",
            facts,
            dedupe=(row.code, hit.rank, "stack"),
        )
    ]


def _stripped_watchdog(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    """A c10 record of a thread libtorch_cuda started, without symbols, that ended its process by SIGABRT."""
    nxt = [ln.text.strip() for ln in hit.after(6, same_rank=False) if ln.text.strip()][:3]
    if len(nxt) < 3 or not all(p.search(t) for p, t in zip(_C10_TRAMPOLINE, nxt)):
        return None
    k = int(m.group("n"))
    above = [ln.text.strip() for ln in hit.before(k, same_rank=False)] if k else []
    if any(not _C10_OWN.search(t) for t in above if t.startswith("frame #")):
        return None  # a deeper stack: some other call threw
    block = thread_block(hit)
    if any(_OTHER_CAUSE.search(t) for t in block):
        return []  # the record says an NCCL or CUDA error: its own rows read the message
    around = [ln.text for ln in (*hit.before(40, same_rank=False), *hit.after(16, same_rank=False))]
    if not any(_ABORTED.search(t) for t in around):
        return None
    r = hit.rank
    return [
        row.event(
            hit,
            f"{hit.who(r)}: a C++ stack (without symbols) of a thread of libtorch_cuda that threw and ended "
            "the process by SIGABRT: the NCCL watchdog's record after a collective ran past its timeout (the "
            "watchdog's message line is not in the excerpt)",
            {
                "from_stack": True,
                "frame": "<unknown function> in libtorch_cuda.so",
                "thread": "nccl_watchdog",
            },
            rank=r,
            dedupe=(row.code, r, "stack"),
        )
    ]


SIGNATURES = (
    Signature(
        "nccl watchdog thread frames without symbols",
        _C10_CUDA_ENTRY,
        _stripped_watchdog,
        C.WATCHDOG_TIMEOUT.code,
        tier=1,
        anchors=(b"libtorch_cuda.so)",),
        worth=(rb"frame #[0-2]: <unknown function> ",),
        words=("libtorch_cuda.so)",),
        examples=(
            "frame #1: <unknown function> + 0xe5aa84 (0x7fe885173a84 in "
            "/usr/local/lib/python3.8/dist-packages/torch/lib/libtorch_cuda.so)",
        ),
    ),
    Signature(
        "nccl watchdog thread frames",
        _WATCHDOG_FRAME,
        _watchdog,
        C.WATCHDOG_TIMEOUT.code,
        tier=1,
        anchors=(
            b"ncclCommWatchdog",
            b"workCleanupLoop",
            b"watchdogHandler",
            b"Watchdog::run",
            b"handleNCCLGuard",
            b"handleException",
            b"checkTimeout",
            b"eartbeatMonitor",
            b"raised from run at",
        ),
        words=(
            "watchdog",
            "raised from run at",
            "workcleanuploop",
            "handlenccl",
            "handleexception",
            "checktimeout",
            "heartbeatmonitor",
        ),
        anchor_from="each function's own name; 2.7+'s bare 'run' by the c10 header's 'raised from run at'",
        examples=(
            "Exception raised from ncclCommWatchdog at ../torch/csrc/distributed/c10d/"
            "ProcessGroupNCCL.cpp:1418 (most recent call first):",
            "Exception raised from run at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2063 "
            "(most recent call first):",
            "frame #2: c10d::ProcessGroupNCCL::workCleanupLoop() + 0x1a1 (0x7f00 in libtorch_cuda.so)",
            "#7  0x00007f in c10d::ProcessGroupNCCL::Watchdog::runLoop() () from libtorch_cuda.so",
        ),
    ),
    Signature(
        "gdb or pystack native frame",
        _AnyOf(_GDB, _PYSTACK_C),
        _dump,
        C.STUCK_IN_COLLECTIVE.code,
        tier=2,
        anchors=(
            b"Synchronize",
            b"WorkNCCL::",
            b"Work::wait",
            b"UnboundBuffer::wait",
            b"ncclGroupEnd",
            b"ncclLaunch",
            b"ncclStrongStream",
            b"ncclCommInitRank",
            b"ncclAllReduce",
            b"ncclAllGather",
            b"ncclReduceScatter",
            b"ncclBroadcast",
            b"ncclSend",
            b"ncclRecv",
            b"ncclCommAbort",
            b"ncclCommDestroy",
            b"ncclCommFinalize",
            b"commReclaim",
            b"TCPStore::",
            b"TCPClient::",
            b"bootstrap",
            b"libnccl.so",
        ),
        worth=(rb"^\s*#\d+\s", rb"^\s*\(C\) File"),
        words=(
            "synchronize",
            "work",
            "unboundbuffer",
            "nccl",
            "commreclaim",
            "tcpstore",
            "tcpclient",
            "bootstrap",
        ),
        anchor_from="the waiting function's name in the frame",
        examples=(
            "#3  0x00007f3a1c2b in c10d::ProcessGroupNCCL::WorkNCCL::synchronizeStream() () from "
            "/usr/lib/python3/dist-packages/torch/lib/libtorch_cuda.so",
            '    (C) File "???", line 0, in cudaStreamSynchronize (libcudart.so.12)',
        ),
    ),
    Signature(
        "py-spy or faulthandler python frame",
        _AnyOf(_PYSPY, _FAULTHANDLER),
        _dump,
        C.STUCK_IN_COLLECTIVE.code,
        tier=2,
        anchors=(b"distributed_c10d", b"c10d_logger", b"rendezvous"),
        worth=(rb"distributed_c10d\.py", rb"c10d_logger\.py", rb"rendezvous\.py"),
        words=("distributed_c10d", "c10d_logger", "rendezvous"),
        anchor_from="the torch.distributed module the frame is in",
        examples=(
            "    all_reduce (torch/distributed/distributed_c10d.py:2050)",
            '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", '
            "line 2050 in all_reduce",
        ),
    ),
    Signature(
        "deepspeed zero-3 parameter fetch in a dump",
        _ZERO3_FETCH,
        _zero3_fetch,
        C.ZERO3_FETCH_HANG.code,
        tier=1,
        anchors=(b"fetch_sub_module",),
        words=("fetch_sub_module",),
    ),
    Signature(
        "distributed test harness timeout",
        _TEST_HANG,
        _test_hang,
        C.DIST_TEST_HANG.code,
        tier=1,
        anchors=(b"timed out after",),
        worth=(rb"timed out after \d",),
        words=("timed out after",),
        examples=(
            "RuntimeError: Process 0 terminated or timed out after 300.0761675834656 seconds",
            "RuntimeError: Process 1 timed out after 100 seconds",
            "RuntimeError: Rank 0 terminated or timed out after 120.5 seconds",
        ),
    ),
)
parse = gated_reader(SIGNATURES)
