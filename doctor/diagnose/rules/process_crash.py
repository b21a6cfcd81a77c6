"""process_crash: a rank that died on a fatal signal, as the shell, Python's faulthandler and the
launchers print it (exit records are read by `launcher`, Python exceptions by `pyexc`).

Formats: bash/sh job-control messages from strsignal(): "<script>: line 12: 4567 Segmentation
fault      (core dumped) python train.py", "Illegal instruction (core dumped)", "Aborted (core
dumped)", "Bus error (core dumped)"; faulthandler: "Fatal Python error: Segmentation fault",
"Fatal Python error: Aborted", followed by frames "  File "x.py", line 12 in forward".
SIGABRT is a consequence (tier 2) of the error the process aborted on; see `_tier`.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.knowledge.signals import signal_of_exitcode
from pgdoctor.model import lazy_re

# A progress bar's last redraw (tqdm's "[00:00<?, ?it/s]", "[01:02<03:04,  1.50s/it]") ends without a newline
# when the process dies, so the shell's message is glued to its closing bracket.
_SHELL = lazy_re.compile(
    r"(?:^|\s|(?P<bar>(?<=it/s\])|(?<=s/it\])))(?:(?P<pid>\d+)\s+)?"
    r"(?P<sig>Segmentation fault|Illegal instruction|Aborted|Abort trap|Bus error)(?:: (?P<num>\d+))?"
    r"(?:\s*\(core dumped\))?(?:\s+(?P<cmd>\S.*))?$"
)
# strsignal() on macOS/BSD and MXNet's SIGSEGV handler (src/initialize.cc: "\nSegmentation fault: %d\n\n",
# then "Stack trace:" and "  [bt] (0) .../libmxnet.so(+0x..)") put the signal's number after its name:
# "Segmentation fault: 11", "Bus error: 10" (7 on Linux), "Illegal instruction: 4", "Abort trap: 6".
_SHELL_NUM = {"SIGSEGV": {"11"}, "SIGBUS": {"7", "10"}, "SIGILL": {"4"}, "SIGABRT": {"6"}}
_FAULTHANDLER = lazy_re.compile(
    r"Fatal Python error: (?P<sig>Segmentation fault|Aborted|Bus error|Illegal instruction|"
    r"Floating point exception)"
)
_FH_FRAME = lazy_re.compile(r'File "([^"]+)", line (\d+) in (\S+)')
# UCX's signal handler (ucs/debug), which Open MPI / HPC-X and NCCL's UCX plugin install:
# "[node:332629:0:332629]
# Caught signal 11 (Segmentation fault: address not mapped to object at address 0x10)", "Caught signal 7 (Bus
# error: nonexistent physical address)", then "==== backtrace (tid: 5704) ====".
_UCX = lazy_re.compile(
    r"Caught signal (?P<num>\d+) \((?P<sig>Segmentation fault|Bus error|Aborted|Illegal instruction|"
    r"Floating point exception)\b[^)]*\)"
)
# gdb's stop record when the debugged rank faults: "Thread 1 "python" received signal SIGSEGV, Segmentation
# fault." ("Program received signal ..." for a single-threaded one), then the faulting frame "0x.. in
# ncclIbDeregMr (comm=0x0, ...) at transport/net_ib.cc:906". SIGINT / SIGTRAP / SIGUSR* are gdb's own stops.
_GDB_STOP = lazy_re.compile(
    r"(?:Thread \d+ \"[^\"]*\"|Program) received signal (?P<name>SIG(?:SEGV|ABRT|BUS|ILL|FPE)), "
    r"(?P<sig>Segmentation fault|Aborted|Bus error|Illegal instruction|Arithmetic exception)"
)
_GDB_FRAME = lazy_re.compile(r"(?:^#\d+\s+)?0x[0-9a-fA-F]+ in ([\w:~<>]+) ?\(")
# A gdb backtrace pasted without its stop line ("(gdb) bt" on a core file, or the faulting thread of
# `thread apply all bt`): "#0  0x.. in ncclIbDeregMr (comm=0x0, mhandle=0x0) at transport/net_ib.cc:906".
# Frame #0 is where the thread stopped. It is a crash when the kernel's signal frame is on the stack ("#2
# <signal handler called>": the frame below it faulted), when the thread is in abort()/raise() (SIGABRT),
# or when frame #0 is in ordinary code, not a wait, with a null pointer among its arguments (a NULL
# dereference: SIGSEGV). A thread waiting (futex, poll, a collective's synchronize) is a hang: stuck_stacks.
_BT_TOP = lazy_re.compile(r"^#0\s+(?:0x[0-9a-fA-F]+ in )?(?P<fn>[\w:~<>.]+)\s*\((?P<args>[^)]*)")
_BT_HANDLER = lazy_re.compile(r"^#\d+\s+<signal handler called>")
_BT_FN = lazy_re.compile(r"^#\d+\s+(?:0x[0-9a-fA-F]+ in )?(?P<fn>[\w:~<>.]+)\s*\(")
_ABORTING = lazy_re.compile(r"^(?:__GI_)?(?:raise|abort|gsignal)$|^(?:__GI___)?pthread_kill|^__pthread_kill")
_WAITING = lazy_re.compile(
    r"wait|poll|futex|sleep|select|lll_lock|sched_yield|syscall|pthread_\w*join|Synchronize|"
    r"^(?:__libc_|__GI___libc_)?(?:read|recv\w*|accept\w*|pause)$",
    re.IGNORECASE,
)
_NULL_ARG = lazy_re.compile(r"\b\w+=0x0\b")
_SPINNING = lazy_re.compile(r"[Pp]rogress|spin|yield|poll|[Ll]oop", re.IGNORECASE)
_THREAD_HEAD = lazy_re.compile(r"^Thread \d+ \(")
_BT_WATCHDOG = lazy_re.compile(
    r"ncclCommWatchdog|workCleanupLoop|watchdogHandler|Watchdog::run|eartbeatMonitor"
)
# c10's fatal signal handler (c10/util/signal_handler.cpp), installed where a program asks for it
# (torch._C._set_print_stack_traces_on_fatal_signal(True), as torch's distributed tests do): "SIGSEGV(11),
# PID: 3154296, Thread 3154392: " then " frame #0: c10::FatalSignalHandler::stacktraceSignalHandler(bool)
# + 0x8b (...)", one block per thread.
_C10_FATAL = lazy_re.compile(
    r"\b(?P<name>SIG(?:SEGV|BUS|ILL|FPE|ABRT))\((?P<num>\d+)\), PID: (?P<pid>\d+), Thread \d+:"
)
# The kernel's record of a user process's fatal fault (arch/x86/mm/fault.c show_signal_msg, traps.c):
# "python[12345]: segfault at 0 ip 00007f.. sp 00007ff.. error 4 in libnccl.so.2[7f..+1a2000]", "traps:
# python[12345] general protection fault ip:7f.. sp:7ff.. error:0 in libc.so.6[7f..+..]", "traps: python[1]
# trap invalid opcode ip:.. sp:.. error:0 in libtorch_cpu.so[..]", "... trap divide error ip:...".
# (?<![^\s\[\]]): the leftmost match starts where the run of the comm's characters does (linear search)
_KERNEL_FAULT = lazy_re.compile(
    r"(?<![^\s\[\]])(?P<comm>[^\s\[\]]+)\[(?P<pid>\d+)\]:? (?:(?P<segv>segfault) at \w+|(?:trap )?"
    r"(?P<trap>general protection fault|invalid opcode|divide error|int3|stack segment))\b"
    r"(?:.*? in (?P<lib>[^\s\[]+)\[)?"
)
# The NVIDIA user-space driver's libraries as the kernel names them in a fault record ("libcuda.so.418.67",
# "libcuda.so.1", "libnvidia-ptxjitcompiler.so.535.104.05", "libnvidia-ml.so.1").
_DRIVER_LIB = lazy_re.compile(r"lib(?:cuda|nvidia-[\w-]+)\.so\b")
_DRIVER_LIB_FAULT = lazy_re.compile(r"(?:segfault at \w+|general protection fault).*? in lib(?:cuda|nvidia-)")
_TRAP_SIGNAL = {
    "general protection fault": "SIGSEGV",
    "invalid opcode": "SIGILL",
    "divide error": "SIGFPE",
    "int3": "SIGTRAP",
    "stack segment": "SIGBUS",
}
SIGNALS = lazy_re.ByText(
    {
        "Segmentation fault": "SIGSEGV",
        "Illegal instruction": "SIGILL",
        "Aborted": "SIGABRT",
        "Bus error": "SIGBUS",
        "Floating point exception": "SIGFPE",
        "Abort trap": "SIGABRT",
    }
)


def _tier(sig: str) -> int:
    """SIGABRT is how a process ends after an uncaught C++ exception: the NCCL watchdog's own
    abort after a timeout or a CUDA error ("terminate called after throwing ..."). The error
    it ends on is the cause; the abort is a consequence, the root only when nothing else shows."""
    return 2 if sig == "SIGABRT" else 0


# NCCL's shared-memory transport maps its segments from /dev/shm; when the mount is smaller than they are
# (a container's 64 MB default), the first touch past its end raises SIGBUS in the process. A bus error
# whose frames or neighbouring lines are NCCL's says so (likely_cause=shared_memory) and stays the crash it
# is: the corpora label that shape a killed process 3 times of 4, the fix is the mount either way.
_NCCL_CONTEXT = lazy_re.compile(r"libnccl|\bnccl[A-Z]\w*\b|NCCL (?:INFO|WARN)|ProcessGroupNCCL")
_NCCL_FN = lazy_re.compile(r"\bnccl[A-Z]\w*")
# NCCL's segment open itself (misc/shmutils.cc ncclShmOpen 2.12+, include/shm.h shmOpen / shmSetup 2.4-2.11):
# the fault is the segment's first touch past the end of /dev/shm, the same failure as NCCL's "Error while
# creating shared memory segment" (RUN360, not a crash of the program).
_SHM_FN = lazy_re.compile(r"\b(?:ncclShm\w*|shmOpen|shmSetup)\b")


def _nccl_shm(row: Signature, hit: Hit, facts: dict[str, Any]) -> Optional[list[Event]]:
    """The bus error with NCCL's /dev/shm as its likely cause when NCCL is around it, else None."""
    if facts.get("signal") != "SIGBUS":
        return None
    near = [ln.text for ln in (*hit.before(20, same_rank=False), *hit.after(16, same_rank=False))]
    # the faulting frame: the one the reporter read, or the first lines below the signal
    top = [str(facts.get("frame", "")), *(ln.text for ln in hit.after(4, same_rank=False))]
    shm = next((f.group(0) for f in (_SHM_FN.search(t) for t in top) if f), None)
    # A shared-memory open frame is itself most of the evidence: any mention of NCCL near it (a library
    # path "libnccl.so.2", "nccl_net", a lower-case logger name) is enough, where the branch below, with no
    # such frame, needs _NCCL_CONTEXT's program words.
    if shm and (shm.startswith("ncclShm") or any("nccl" in t.lower() for t in [*top, *near])):
        return [
            row.event(
                hit,
                f"{hit.who()} died on SIGBUS in NCCL's shared-memory segment open ({shm}): /dev/shm is "
                "smaller than NCCL's segments (a container without --shm-size or --ipc=host)",
                {**facts, "frame": shm, "likely_cause": "shared_memory"},
                code=C.SHARED_MEMORY_TOO_SMALL.code,
                dedupe=(C.SHARED_MEMORY_TOO_SMALL.code, hit.rank),
            )
        ]
    if not any(_NCCL_CONTEXT.search(t) for t in near):
        return None
    fn = next((f.group(0) for f in (_NCCL_FN.search(t) for t in near) if f), None)
    if fn:
        facts = {**facts, "frame": fn}
    return [
        row.event(
            hit,
            f"{hit.who()} died on SIGBUS inside NCCL"
            + (f" ({facts['frame']})" if facts.get("frame") else "")
            + ": most likely NCCL's shared-memory segments ran past the size of /dev/shm (a container "
            "without --shm-size or --ipc=host)",
            {**facts, "likely_cause": "shared_memory"},
            tier=_tier("SIGBUS"),
            dedupe=(row.code, hit.rank, "SIGBUS", facts.get("pid")),
        )
    ]


def _faulthandler(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    sig = SIGNALS[m.group("sig")]
    facts: dict[str, Any] = {"signal": sig, "reporter": "faulthandler"}
    for ln in hit.after(12):
        f = _FH_FRAME.search(ln.text)
        if f:
            facts["frame"] = f"{f.group(1)}:{f.group(2)} in {f.group(3)}"
            break
    where = f" in {facts['frame']}" if "frame" in facts else ""
    return _nccl_shm(row, hit, facts) or [
        row.event(
            hit, f"{hit.who()} died on {sig}{where}", facts, tier=_tier(sig), dedupe=(row.code, hit.rank, sig)
        )
    ]


def _ucx(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    sig = SIGNALS[m.group("sig")]
    facts: dict[str, Any] = {"signal": sig, "signal_number": int(m.group("num")), "reporter": "ucx"}
    where = re.match(r"\s*\[([\w.-]+):(\d+)", hit.text)
    if where:
        facts["host"], facts["pid"] = where.group(1), int(where.group(2))
    for ln in hit.after(8, same_rank=False):
        fr = re.search(r"0x[0-9a-f]+ (\w+)\(\)", ln.text)
        if fr and fr.group(1) not in ("killpg", "raise", "abort"):
            facts["frame"] = fr.group(1)
            break
    return _handler_death(row, hit, facts, "a process", "UCX's signal handler")


def _handler_death(row: Signature, hit: Hit, facts: dict[str, Any], who: str, handler: str) -> list[Event]:
    """A death a library's signal handler reported (facts carry the signal, and the frame when one was
    read), or the shared-memory failure of NCCL it was."""
    sig = facts["signal"]
    return _nccl_shm(row, hit, facts) or [
        row.event(
            hit,
            f"{who} died on {sig} ({handler})" + (f" in {facts['frame']}" if "frame" in facts else ""),
            facts,
            tier=_tier(sig),
            dedupe=(row.code, hit.rank, sig, facts.get("pid")),
        )
    ]


# Open MPI's own signal handler (opal/util/stacktrace.c, 1.x-5.x), installed in every rank by MPI_Init, so
# also under Horovod and mpi4py: "[node:194925] *** Process received signal ***", "[node:194925] Signal:
# Segmentation fault (11)", "Signal code: Address not mapped (1)", "Failing at address: 0xb", the frames "[ 0]
# /usr/lib64/libpthread.so.0(+0xf6d0)[0x2aaaab2446d0]" and "*** End of error message ***". mpirun's
# "[1,0]<stderr>:" prefix is the text layer's. The signal line after a header or under a "[host:pid]" prefix;
# a paste that dropped the prefix keeps the blank before it (" *** Process received signal ***").
_OPAL = lazy_re.compile(
    r"(?:^\s*|\]\s*)Signal: (?P<sig>Segmentation fault|Bus error|Aborted|Illegal instruction|"
    r"Floating point exception) \((?P<num>\d+)\)"
)
_OPAL_WHO = lazy_re.compile(r"\[([\w.-]+):(\d+)\] Signal: ")
_OPAL_FRAME = lazy_re.compile(
    r"\[\s*\d+\]\s+(?:\[[^\]]*\]<\w+>:)?\S*?/?(lib[\w.+-]+\.so[\w.]*|[\w.-]+\.py)\("
)
_OPAL_LIBC = lazy_re.compile(r"^lib(?:pthread|c|dl)\.so")


def _opal(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    who = _OPAL_WHO.search(hit.text)
    if who is None and not any("Process received signal" in ln.text for ln in hit.before(3)):
        return None
    sig = SIGNALS[m.group("sig")]
    facts: dict[str, Any] = {"signal": sig, "signal_number": int(m.group("num")), "reporter": "open mpi"}
    if who:
        facts["host"], facts["pid"] = who.group(1), int(who.group(2))
    for ln in hit.after(12, same_rank=False):
        fr = _OPAL_FRAME.search(ln.text)
        if fr and not _OPAL_LIBC.match(fr.group(1)):
            facts["frame"] = fr.group(1)
            break
        if "End of error message" in ln.text:
            break
    return _handler_death(row, hit, facts, hit.who(), "Open MPI's signal handler")


# torch elastic's ProcessFailure (elastic/multiprocessing/errors) printed as its repr by an agent or a wrapper
# (DLRover's "The worker fails with {0: ProcessFailure(local_rank=0, pid=54, exitcode=-7, error_file='<N/A>',
# error_file_data={'message': '<NONE>'}, message='Signal 7 (SIGBUS) received by PID 54', timestamp=...)}",
# RunResult(state=FAILED, failures={...})): a negative exitcode is the signal that ended the worker. SIGKILL
# is host_oom's, SIGTERM / SIGINT a kill from outside; only the fatal signals are read here.
_PROCESS_FAILURE = lazy_re.compile(
    r"ProcessFailure\(local_rank=(?P<lr>\d+), pid=(?P<pid>\d+), exitcode=-(?P<num>\d+)\b"
)
_FATAL = frozenset(SIGNALS.values())


def _process_failure(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    sig = signal_of_exitcode(-int(m.group("num")))
    if sig not in _FATAL:
        return None
    facts: dict[str, Any] = {
        "signal": sig,
        "exitcode": -int(m.group("num")),
        "local_rank": int(m.group("lr")),
        "pid": int(m.group("pid")),
        "reporter": "torch elastic ProcessFailure",
    }
    hint = (
        ": a bus error in a worker is most often /dev/shm too small for what it maps (a container's 64 MB "
        "default)"
        if sig == "SIGBUS"
        else ""
    )
    return _nccl_shm(row, hit, facts) or [
        row.event(
            hit,
            f"local rank {m.group('lr')} (pid {m.group('pid')}) died on {sig}{hint}",
            facts,
            tier=_tier(sig),
            dedupe=(row.code, int(m.group("lr")), sig, facts["pid"]),
        )
    ]


# gdb's faulting frame in a library without symbols: "0x00007fffdba8de67 in ?? () from /lib64/libcuda.so",
# "#0  0x00007fff4402c640 in ?? () from /lib/x86_64-linux-gnu/libcuda.so.1".
_GDB_LIB_FRAME = lazy_re.compile(r"0x[0-9a-fA-F]+ in \?\? \(\) from \S*?/?(lib[\w.+-]+\.so[\w.]*)")


def _gdb_stop(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    sig = m.group("name")
    facts: dict[str, Any] = {"signal": sig, "reporter": "gdb"}
    for ln in hit.after(6, same_rank=False):
        f = _GDB_FRAME.search(ln.text)
        if f:
            facts["frame"] = f.group(1)
            break
        lib = _GDB_LIB_FRAME.search(ln.text)
        if lib:
            facts["library"] = lib.group(1)
            break
    if sig == "SIGSEGV" and _DRIVER_LIB.match(facts.get("library", "")):
        return [
            row.event(
                hit,
                f"{hit.who()} crashed inside the NVIDIA user-space driver under gdb ({facts['library']}, "
                f"{sig}): a driver fault or a GPU left in a bad state; check the node's kernel log for Xids",
                facts,
                code=C.GPU_DRIVER_CRASH.code,
                dedupe=(C.GPU_DRIVER_CRASH.code,),
            )
        ]
    where = f" in {facts['frame']}" if "frame" in facts else ""
    return _nccl_shm(row, hit, facts) or [
        row.event(
            hit,
            f"{hit.who()} died on {sig} under gdb{where}",
            facts,
            tier=_tier(sig),
            dedupe=(row.code, hit.rank, sig),
        )
    ]


def _bt_frames(hit: Hit) -> list[str]:
    """The frames of the backtrace the hit line is in, from #0 on, up to the first line that is not one."""
    out = [hit.text.strip()]
    for ln in hit.after(48, same_rank=False):
        t = ln.text.strip()
        if not t.startswith("#"):
            break
        out.append(t)
    return out


def _backtrace(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    frames = (
        _bt_frames(hit) if m.re == _BT_TOP else [hit.text.strip(), *[ln.text.strip() for ln in hit.after(2)]]
    )
    if any(_BT_WATCHDOG.search(f) for f in frames):
        return None  # the NCCL watchdog's abort: a timeout's consequence (stuck_stacks reads it)
    if m.re == _BT_TOP and any(_BT_HANDLER.match(f) for f in frames):
        return []  # the "<signal handler called>" frame's own hit reads it
    fns = [f.group("fn") for f in (_BT_FN.match(x) for x in frames) if f]
    facts: dict[str, Any] = {"reporter": "gdb", "from_stack": True}
    if m.re == _BT_HANDLER:
        # the frame below the kernel's signal frame is the one that faulted
        where = next((f.group("fn") for f in (_BT_FN.match(x) for x in frames[1:]) if f), None)
        if where:
            facts["frame"] = where
        msg = (
            f"{hit.who()}: a gdb backtrace holds the kernel's signal frame: the thread died on a fatal signal"
            + (f" in {where}" if where else "")
        )
        return [row.event(hit, msg, facts, tier=1, dedupe=(row.code, hit.rank, "bt"))]
    top = m.group("fn")
    if any(_ABORTING.search(f) for f in fns[:5]):
        where = next(
            (f for f in fns if not _ABORTING.search(f) and "terminate" not in f and "?" not in f), top
        )
        facts.update(signal="SIGABRT", frame=where)
        msg = (
            f"{hit.who()}: a gdb backtrace of a thread in abort(): the process aborted (SIGABRT) from {where}"
        )
        return [row.event(hit, msg, facts, tier=_tier("SIGABRT"), dedupe=(row.code, hit.rank, "bt"))]
    if _WAITING.search(top) or any(_WAITING.search(f) for f in fns) or not _NULL_ARG.search(m.group("args")):
        return None  # a thread that waits, or no sign of a fault: not a crash
    around = [ln.text for ln in [*hit.before(40, same_rank=False), *hit.after(60, same_rank=False)]]
    if _SPINNING.search(top) or any(_THREAD_HEAD.match(t.strip()) for t in around):
        return None  # a progress loop, or one thread of a whole dump (`thread apply all bt`): a hang's stack
    facts.update(signal="SIGSEGV", frame=top, null_argument=True)
    msg = (
        f"{hit.who()}: a gdb backtrace stops in {top} with a null pointer argument: the thread crashed there "
        "(SIGSEGV; the signal line is not in the excerpt)"
    )
    return [row.event(hit, msg, facts, tier=1, dedupe=(row.code, hit.rank, "bt"))]


def _c10_fatal(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    sig, pid = m.group("name"), int(m.group("pid"))
    facts: dict[str, Any] = {
        "signal": sig,
        "signal_number": int(m.group("num")),
        "pid": pid,
        "reporter": "c10",
    }
    return [
        row.event(
            hit,
            f"{hit.who()} died on {sig} (pid {pid}; c10's fatal signal handler printed every thread's stack)",
            facts,
            tier=_tier(sig),
            dedupe=(row.code, pid, sig),
        )
    ]


def _kernel_fault(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    sig = "SIGSEGV" if m.group("segv") else _TRAP_SIGNAL[m.group("trap")]
    facts: dict[str, Any] = {
        "signal": sig,
        "pid": int(m.group("pid")),
        "process": m.group("comm"),
        "reporter": "kernel",
    }
    if m.group("lib"):
        facts["library"] = m.group("lib")
    where = f" in {facts['library']}" if "library" in facts else ""
    if _DRIVER_LIB.match(facts.get("library", "")):
        # the NVIDIA user-space driver itself crashed (a driver fault or a GPU in a bad state)
        n = sum(1 for ln in hit.lines if _DRIVER_LIB_FAULT.search(ln.text))
        facts["faults_in_driver"] = max(n, 1)
        return [
            row.event(
                hit,
                f"pid {facts['pid']} ({facts['process']}) crashed inside the NVIDIA user-space driver "
                f"({facts['library']}, {sig})"
                + (f", {n} such crashes in the log" if n > 1 else "")
                + ": a driver fault or a GPU left in a bad state; check the node's kernel log for Xids",
                facts,
                code=C.GPU_DRIVER_CRASH.code,
                dedupe=(C.GPU_DRIVER_CRASH.code,),
            )
        ]
    return [
        row.event(
            hit,
            f"the kernel logged a fatal {m.group('segv') or m.group('trap')} of pid {facts['pid']} "
            f"({facts['process']}){where}: {sig}",
            facts,
            dedupe=(row.code, facts["pid"], sig),
        )
    ]


def _shell(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = hit.text
    sig = SIGNALS[m.group("sig")]
    if m.group("num") and m.group("num") not in _SHELL_NUM.get(sig, ()):
        return None
    end = m.end("num") if m.group("num") else m.end("sig")
    alone = t.strip() == t[m.start("sig") : end] or (m.group("bar") is not None and not t[end:].strip())
    if not (m.group("pid") or "core dumped" in t or alone):
        return None
    facts: dict[str, Any] = {"signal": sig, "reporter": "shell"}
    if m.group("pid"):
        facts["pid"] = int(m.group("pid"))
    if m.group("cmd"):
        facts["command"] = m.group("cmd").replace("(core dumped)", "").strip()[:200]
    return _nccl_shm(row, hit, facts) or [
        row.event(
            hit,
            f"a process died on {sig} ({m.group('sig')})",
            facts,
            tier=_tier(sig),
            dedupe=(row.code, hit.rank, sig, facts.get("pid")),
        )
    ]


# A runner's record of a child that ended on a fatal signal (exit status 128 + N), with no traceback: the same
# phrasings as host_oom's 137 (GNU time, kubectl exec / describe, docker, CI runners, make, IDEs' "Process
# finished with exit code 139 (interrupted by signal 11: SIGSEGV)", horovodrun's "Process 3 exit with status
# code 139."), for SIGSEGV 139, SIGABRT 134, SIGBUS 135, SIGILL 132, SIGFPE 136. SIGTERM's 143 is not read: a
# launcher's teardown of the survivors says it too (a decoy). A launcher's own record (srun, mpirun,
# torchrun's table, CalledProcessError, deepspeed) is `launcher`'s: it names the rank.
_STATUS_SIG = {139: "SIGSEGV", 134: "SIGABRT", 135: "SIGBUS", 132: "SIGILL", 136: "SIGFPE"}
_EXIT_FATAL = lazy_re.compile(
    r"\b(?:[Ee]xit(?:ed)? (?:with )?(?:status )?(?:[Cc]ode|status)|[Ee]xit [Cc]ode|[Rr]eturn [Cc]ode|"
    r"returncode|non-zero status)[:=]?\s+(?P<st>139|134|135|132|136)\b|\bExited \((?P<dk>139|134)\)|"
    r"\*\*\* \[[^\]]*\] Error (?P<mk>139|134)\b|\binterrupted by signal (?P<num>\d+): (?P<name>SIG[A-Z]+)"
)
_RUNNER_OWNED = lazy_re.compile(
    r"srun: |mpirun|exitcode\s*:|ChildFailedError|CalledProcessError|exits with return code|Process name:"
)


def _exit_fatal(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    rec = hit.text.strip()
    if _RUNNER_OWNED.search(rec) or any("Process name:" in ln.text for ln in hit.before(3, same_rank=False)):
        return None
    if m.group("name"):
        sig, status = m.group("name"), 128 + int(m.group("num"))
    else:
        status = int(m.group("st") or m.group("dk") or m.group("mk"))
        sig = _STATUS_SIG[status]
    if sig not in _STATUS_SIG.values():
        return None
    facts: dict[str, Any] = {"signal": sig, "exit_status": status, "record": rec[:200]}
    return [
        row.event(
            hit,
            f"a process died on {sig} (exit status {status}): {clip(rec, 120)}",
            facts,
            tier=max(1, _tier(sig)),
            dedupe=(row.code, hit.rank, sig, "status"),
        )
    ]


# torch.multiprocessing.spawn's ProcessContext.join (spawn.py 1.7-2.x) raises ProcessExitedException when a
# child ended without a Python exception of its own (a child's exception is ProcessRaisedException with its
# traceback): "if exitcode < 0: name = signal.Signals(-exitcode).name; raise ProcessExitedException("process
# %d terminated with signal %s" % ...)", else "... terminated with exit code %d". A paste cut before the
# exception line still ends in that raise; IPython's traceback ("--> 140     raise ProcessExitedException(")
# shows the branch around it (the "if exitcode < 0:" above, the message's format below). The message itself,
# when present, is launcher's row.
_SPAWN_RAISE = lazy_re.compile(r"raise ProcessExitedException\(")
_SPAWN_SIGNAL = lazy_re.compile(r"if exitcode < 0:|terminated with signal %s|signal\.Signals\(-exitcode\)")
_SPAWN_CODE = lazy_re.compile(r"terminated with exit code %d")
_SPAWN_MESSAGE = lazy_re.compile(
    r"[Pp]rocess \d+ terminated with|ProcessExitedException:|^\s*[\w.]*(?:Error|Exception)\b"
)


def _spawn_raise(row: Signature, hit: Hit, _m: re.Match[str]) -> Optional[list[Event]]:
    after = hit.after(48, same_rank=False)
    if any(_SPAWN_MESSAGE.search(ln.text) for ln in after):
        return None  # the exception line is there: its own rows read it
    near = [*hit.before(3, same_rank=False), hit.line, *after[:3]]
    signal = any(_SPAWN_SIGNAL.search(ln.text) for ln in near)
    code = not signal and any(_SPAWN_CODE.search(ln.text) for ln in near)
    how = (
        "on a signal" if signal else "with a non-zero exit code" if code else "on a signal or a non-zero exit"
    )
    return [
        row.event(
            hit,
            f"a process started by torch.multiprocessing.spawn died {how} without a Python exception of its "
            "own (the traceback is cut at spawn's raise of ProcessExitedException; a segfault, an abort or a "
            "kill from outside: read that child's own output and dmesg)",
            {
                "reporter": "torch.multiprocessing.spawn",
                "kind": "child_exited",
                "signal_branch": signal,
                "cut": True,
            },
            tier=2,
            dedupe=(row.code, "spawn_raise"),
        )
    ]


SIGNATURES = (
    Signature(
        "spawn join raise cut before its message",
        _SPAWN_RAISE,
        _spawn_raise,
        C.RANK_EXITED.code,
        anchors=(b"raise ProcessExitedException(",),
        words=("processexitedexception",),
    ),
    Signature(
        "faulthandler",
        _FAULTHANDLER,
        _faulthandler,
        C.FATAL_SIGNAL.code,
        anchors=(b"rror",),
        worth=(rb"Error\b",),
    ),
    Signature(
        "ucx signal handler",
        _UCX,
        _ucx,
        C.FATAL_SIGNAL.code,
        anchors=(b"ation fault", b"rror"),
        worth=(rb"Segmentation fault", rb"\berror\b"),
        anchor_from="the signal's own name: 'Segmentation fault', 'Bus error' (others when the line has "
        "another "
        "anchor)",
        examples=(
            "[gpu-node09:332629:0:332629] Caught signal 11 (Segmentation fault: "
            "address not mapped to object at address 0x10)",
            "[09677202c889:5283 :0:5704] Caught signal 7 (Bus error: nonexistent physical address)",
        ),
    ),
    Signature(
        "open mpi signal handler",
        _OPAL,
        _opal,
        C.FATAL_SIGNAL.code,
        anchors=(b"Signal: ",),
        worth=(rb"Signal: [A-Z][a-z ]+ \(\d+\)",),
        words=("signal: ",),
    ),
    Signature(
        "elastic process failure",
        _PROCESS_FAILURE,
        _process_failure,
        C.FATAL_SIGNAL.code,
        anchors=(b"ProcessFailure(",),
        worth=(rb"ProcessFailure\(local_rank=",),
        words=("processfailure(",),
    ),
    Signature(
        "gdb stop on a fatal signal",
        _GDB_STOP,
        _gdb_stop,
        C.FATAL_SIGNAL.code,
        anchors=(b"received signal",),
        worth=(rb"received signal SIG",),
    ),
    Signature(
        "gdb backtrace of a crashed thread",
        _BT_TOP,
        _backtrace,
        C.FATAL_SIGNAL.code,
        anchors=(b"#0",),
        worth=(rb"^\s*#0\s",),
    ),
    Signature(
        "gdb signal frame",
        _BT_HANDLER,
        _backtrace,
        C.FATAL_SIGNAL.code,
        anchors=(b"<signal handler called>",),
        worth=(rb"<signal handler called>",),
        anchor_from="gdb's '<signal handler called>' after the frame number",
        examples=("#2  <signal handler called>",),
    ),
    Signature(
        "c10 fatal signal handler",
        _C10_FATAL,
        _c10_fatal,
        C.FATAL_SIGNAL.code,
        anchors=(b"), PID: ",),
        worth=(rb"\), PID: \d+, Thread",),
        anchor_from="the handler's '(11), PID: ' after the signal's name",
        examples=("SIGSEGV(11), PID: 3154296, Thread 3154392: ",),
    ),
    Signature(
        "kernel fault record",
        _KERNEL_FAULT,
        _kernel_fault,
        C.FATAL_SIGNAL.code,
        anchors=(
            b"segfault at",
            b"general protection",
            b"invalid opcode",
            b"divide error",
            b"int3",
            b"stack segment",
        ),
        worth=(
            rb"segfault at",
            rb"general protection",
            rb"invalid opcode",
            rb"divide error",
            rb"\]:? (?:trap )?int3",
            rb"stack segment",
        ),
    ),
    Signature(
        "shell signal",
        _SHELL,
        _shell,
        C.FATAL_SIGNAL.code,
        anchors=(b"ation fault", b"core dumped", b"Abort", b"Bus error", b"Illegal instruction"),
        worth=(
            rb"Segmentation fault",
            rb"core dumped",
            rb"(?:Aborted|Bus error|Illegal instruction|Abort trap)(?:: \d+)?\s*$",
        ),
        anchor_from="the signal's name: alone on its line, after a pid, or before '(core dumped)'",
        examples=(
            "train.sh: line 12: 4567 Segmentation fault      (core dumped) python train.py",
            "Illegal instruction (core dumped)",
            "Aborted (core dumped)",
            "Bus error (core dumped)",
            "Bus error: 10",
            "Illegal instruction: 4",
            "Abort trap: 6",
        ),
    ),
    Signature(
        "fatal signal exit status",
        _EXIT_FATAL,
        _exit_fatal,
        C.FATAL_SIGNAL.code,
        anchors=(b"xit", b"eturn", b"non-zero status", b"rror 13", b"interrupted by signal"),
        worth=(rb"\b(?:139|134|135|132|136)\b", rb"interrupted by signal"),
        words=("139", "134", "135", "132", "136", "interrupted by signal"),
    ),
)

parse = gated_reader(SIGNATURES)
