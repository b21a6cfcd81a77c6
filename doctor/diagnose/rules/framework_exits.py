"""Exit and fatal-signal records of the PaddlePaddle launcher and runtime, and of MPICH's Hydra launcher.

Formats: `python -m paddle.distributed.launch` (paddle/distributed/launch/controllers/controller.py and
job/container.py, Paddle 2.3+) logs the first failed worker as "LAUNCH ERROR 2022-07-21 11:58:59,452
Container failed !!!" then "Container rank 6 status failed cmd ['/usr/bin/python', '-u', 'train.py'] code
-9 log log/workerlog.6" (the code is Popen's returncode: -N for a signal); Paddle's C++ signal handler
(paddle/fluid/platform/init.cc SignalHandle) prints "Error Message Summary:" then "FatalError:
`Segmentation fault` is detected by the operating system." and "[SignalInfo: *** SIGSEGV (@0x0) received
by PID 4242 (TID 0x7f3c) from PID 0 ***]". The exit record is a launcher record (an `exit` event that
causality turns into the rank's exit finding); the signal is the rank's own crash. MPICH's and Intel MPI's
mpiexec (Hydra, pm/pmiserv and ui/mpich/utils.c, MPICH 3.x-4.x) frame the first failed process: "=   BAD
TERMINATION OF ONE OF YOUR APPLICATION PROCESSES", "=   RANK 3 PID 1234 RUNNING AT node-2" (older: "=   PID
1234 RUNNING AT node-2"), then "=   KILLED BY SIGNAL: 11 (Segmentation fault)" or "=   EXIT CODE: 139"
(1.x-3.0: no PID line; the signal in "APPLICATION TERMINATED WITH THE EXIT STRING: Bus error (signal 7)", read
alone too). MVAPICH2's mpispawn: "MPI process (rank: 3, pid: 23456) terminated with signal 11 -> abort job".

Paddle's handler prints the C++ stack it was stopped in above its summary ("C++ Traceback (most recent call
last):", numbered frames "8   ncclAllReduce", "10  ncclBarrierEnqueueWait(ncclComm*)"). A SIGTERM is
someone stopping the process (a launcher's teardown, a user ending a hung job): a teardown, unless the
innermost frames are a collective's or a GPU synchronisation's wait, which makes the stack a dump of a rank
stuck in that collective when the hang was ended (RUN297, stuck_stacks' waits; RCCL #429).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.launcher import EXIT, exit_event
from pgdoctor.diagnose.rules.stuck_stacks import NATIVE_WAIT
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_CONTAINER = lazy_re.compile(r"Container rank (\d+) status (\w+) cmd (.*?) code (-?\d+) log (\S+)")
# init.cc's table of the signals it handles: their error_string as printed between the backquotes.
_PADDLE_SIGNALS = lazy_re.ByText(
    {
        "Segmentation fault": "SIGSEGV",
        "Illegal instruction": "SIGILL",
        "Erroneous arithmetic operation": "SIGFPE",
        "Process abort signal": "SIGABRT",
        "Access to an undefined portion of a memory object": "SIGBUS",
        "Termination signal": "SIGTERM",
    }
)
_FATAL = lazy_re.compile(
    r"FatalError: `(" + "|".join(map(re.escape, _PADDLE_SIGNALS)) + r")` is detected by the operating"
)
# Paddle's elastic manager (paddle/distributed/fleet/elastic/manager.py LauncherInterface._check_procs, 2.2+)
# after "ABORT!!! ABORT!!! ABORT!!!": "ERROR rank 1 error with exit code -9, check log for detail." (Popen's
# returncode, -N for a signal).
_ELASTIC = lazy_re.compile(r"ERROR rank (\d+) error with exit code (-?\d+), check log for detail")
_SIGNAL_INFO = lazy_re.compile(r"received by PID (\d+)")
_HYDRA = lazy_re.compile(r"=\s+(?:KILLED BY SIGNAL: (\d+)|EXIT CODE: (\d+))\b")
_HYDRA_WHO = lazy_re.compile(r"=\s+(?:RANK (\d+) )?PID (\d+) RUNNING AT (\S+)")
# hydra/ui/mpich/mpiexec.c: "APPLICATION TERMINATED WITH THE EXIT STRING: %s (signal %d)" (1.x-3.0), "YOUR
# APPLICATION TERMINATED ..." (3.1+; Intel MPI's copy of Hydra likewise), printed after the frame or alone.
_EXIT_STRING = lazy_re.compile(r"TERMINATED WITH THE EXIT STRING: .*\(signal (\d+)\)")
# MVAPICH2's mpispawn (src/pm/mpirun/mpispawn.c child_handler, 1.x-2.3) for the first rank that ended: "[gpu1:
# mpispawn_0][child_handler] MPI process (rank: 3, pid: 23456) terminated with signal 11 -> abort job", "...
# exited with status 1".
_MPISPAWN = lazy_re.compile(
    r"MPI process \(rank: (\d+), pid: (\d+)\) (?:terminated with signal (\d+)|exited with status (\d+))"
)
_HYDRA_BANNER = lazy_re.compile(r"=\s+BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES")


# The launcher of Paddle 1.8-2.x (paddle/distributed/utils.py and fleet/launch_utils.py, watch_local_trainers)
# when a trainer exited non-zero: "ABORT!!! Out of all 2 trainers, the trainer process with rank=[0, 1] was
# aborted. Please check its log." (the ranks are a Python list; their own logs, workerlog.N, say why).
_PADDLE_ABORT = lazy_re.compile(
    r"ABORT!!! Out of all (\d+) trainers, the trainer process with rank=\[([\d, ]*)\] was aborted"
)


def _paddle_abort(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    ranks = [int(r) for r in re.findall(r"\d+", m.group(2))]
    facts: dict[str, Any] = {
        "world_size": int(m.group(1)),
        "ranks": ranks,
        "reporter": "paddle.distributed.launch",
    }
    if len(ranks) == 1:
        facts["rank"] = ranks[0]
    who = f"rank {ranks[0]}" if len(ranks) == 1 else f"ranks {ranks}"
    return [
        row.event(
            hit,
            f"paddle.distributed.launch: trainer {who} of {m.group(1)} exited non-zero and the launcher "
            "aborted "
            "the job; the trainer's own log (log/workerlog.N) says why",
            facts,
            # the launcher's summary: any cause a trainer's own lines show is above it
            tier=2,
            dedupe=(row.code, "paddle_abort"),
        )
    ]


def _container(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    rank, code = int(m.group(1)), int(m.group(4))
    if code == 0:
        return None
    facts: dict[str, Any] = {
        "exitcode": code,
        "rank": rank,
        "reporter": "paddle.distributed.launch",
        "log_file": m.group(5),
        "first": True,
    }
    return [exit_event(hit, facts, rank)]


def _elastic(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    rank, code = int(m.group(1)), int(m.group(2))
    if code == 0:
        return None
    facts: dict[str, Any] = {"exitcode": code, "rank": rank, "reporter": "paddle elastic", "first": True}
    return [exit_event(hit, facts, rank)]


def _hydra(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    before = hit.before(3, same_rank=False)
    who = next((w for w in (_HYDRA_WHO.search(ln.text) for ln in before) if w), None)
    if who is None and not any(_HYDRA_BANNER.search(ln.text) for ln in before):
        return None  # Hydra's frame is what says this is a process's end, not some program's own output
    status = int(m.group(2)) if m.group(2) else 0
    # a shell-style status: 128 + N is "killed by signal N"
    code = -int(m.group(1)) if m.group(1) else (-(status - 128) if 128 < status < 160 else status)
    # Hydra before 3.3 (its frame names no RANK; 1.x-3.0's names no PID either) prints a signalled process's
    # raw wait status as its "EXIT CODE" (9 for SIGKILL) and names the signal after the frame: "YOUR
    # APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)"; 3.3+ prints "KILLED BY SIGNAL: 9"
    # instead, and its EXIT CODE is the code.
    said = next(
        (s for s in (_EXIT_STRING.search(ln.text) for ln in hit.after(6, same_rank=False)) if s), None
    )
    if m.group(2) and said:
        code = -int(said.group(1))
    elif m.group(2) and status == 9 and not (who and who.group(1)):
        code = -9
    rank = int(who.group(1)) if who and who.group(1) else None
    facts: dict[str, Any] = {"exitcode": code}
    if who:
        facts.update({"pid": int(who.group(2)), "host": who.group(3)})
    facts.update({"reporter": "mpiexec (Hydra)", "first": True})
    if rank is not None:
        facts["rank"] = rank
    if m.group(2):
        facts["exit_status"] = status
    return [exit_event(hit, facts, rank)]


def _mpispawn(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    rank = int(m.group(1))
    code = -int(m.group(3)) if m.group(3) else int(m.group(4))
    facts: dict[str, Any] = {"exitcode": code, "pid": int(m.group(2)), "rank": rank}
    facts.update({"reporter": "mvapich2 mpispawn", "first": True})
    return [exit_event(hit, facts, rank)]


def _exit_string(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    # The line alone (its frame was not pasted): Hydra's own summary of how the job's first process ended,
    # strsignal's words and the number ("Bus error (signal 7)"; macOS: "Segmentation fault: 11 (signal 11)").
    if any(_HYDRA.search(ln.text) for ln in hit.before(8, same_rank=False)):
        return []  # the frame above was read with it
    facts = {"exitcode": -int(m.group(1)), "reporter": "mpiexec (Hydra)", "first": True}
    return [exit_event(hit, facts, None)]


# A frame of Paddle's C++ traceback: its number, then the function ("8   ncclAllReduce", "6   paddle::
# imperative::NCCLParallelContext::AllReduceByStream(...)").
_PADDLE_FRAME = lazy_re.compile(r"^\s*\d+\s+(?P<fn>[A-Za-z_][\w:~<>]*)")
_NCCL_FN = lazy_re.compile(r"^(?:__device_stub__)?nccl\w+$")


def _stuck_frame(hit: Hit) -> Optional[str]:
    """The innermost waiting frame of the C++ traceback Paddle printed above its summary, if it waits."""
    frames: list[str] = []
    for ln in hit.before(48):
        if "C++ Traceback" in ln.text:
            frames = []
        f = _PADDLE_FRAME.match(ln.text)
        if f:
            frames.append(f.group("fn"))
    inner = frames[-4:][::-1]  # most recent call last
    waits = [fn for fn in inner if NATIVE_WAIT.search(fn) or (_NCCL_FN.match(fn) and "Wait" in fn)]
    calls = [fn for fn in inner if _NCCL_FN.match(fn)]
    found = waits or calls
    return found[0] if found else None


def _fatal(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    sig = _PADDLE_SIGNALS[m.group(1)]
    if sig == "SIGTERM":
        stuck = _stuck_frame(hit)
        if stuck is None:
            return None  # the launcher stopping the other workers after one failed: a teardown, not a cause
        return [
            row.event(
                hit,
                f"{hit.who()} was stopped (SIGTERM) while waiting in {stuck}, as the C++ traceback above "
                "Paddle's summary shows: it was stuck in a collective that the other ranks never completed "
                "(a hang ended from outside); the ranks that did not reach it, or reached another, are the "
                "cause",
                {"signal": sig, "reporter": "paddle", "frame": stuck, "from_stack": True},
                code=C.STUCK_IN_COLLECTIVE.code,
                tier=1,
                dedupe=(C.STUCK_IN_COLLECTIVE.code, hit.rank),
            )
        ]
    facts: dict[str, Any] = {"signal": sig, "reporter": "paddle"}
    # the indented "[SignalInfo: ...]" line may come joined to the hit line as its continuation
    for text in [hit.text, *(ln.text for ln in hit.after(4))]:
        p = _SIGNAL_INFO.search(text)
        if p:
            facts["pid"] = int(p.group(1))
            break
    return [
        row.event(
            hit,
            f"{hit.who()} died on {sig} ({m.group(1)}, Paddle's signal handler); the C++ traceback above "
            "it names the operator",
            facts,
            # SIGABRT ends a process after an uncaught C++ exception: the exception is the cause
            tier=2 if sig == "SIGABRT" else 0,
            dedupe=(row.code, hit.rank, sig),
        )
    ]


SIGNATURES = (
    Signature(
        "paddle container exit",
        _CONTAINER,
        _container,
        EXIT,
        tier=3,
        anchors=(b"Container rank",),
        worth=(rb"Container rank \d+ status",),
    ),
    Signature(
        "paddle elastic exit",
        _ELASTIC,
        _elastic,
        EXIT,
        tier=3,
        anchors=(b"error with exit code",),
        worth=(rb"ERROR rank \d+ error with exit code",),
        words=("error with exit code",),
    ),
    Signature(
        "paddle launcher abort",
        _PADDLE_ABORT,
        _paddle_abort,
        C.RANK_EXITED.code,
        anchors=(b"ABORT!!! Out of all",),
        worth=(rb"ABORT!!! Out of all \d+ trainers",),
        words=("abort!!! out of all",),
    ),
    Signature(
        "hydra exit",
        _HYDRA,
        _hydra,
        EXIT,
        tier=3,
        anchors=(b"KILLED BY SIGNAL", b"EXIT CODE:"),
        worth=(rb"KILLED BY SIGNAL|EXIT CODE:",),
    ),
    Signature(
        "mvapich2 mpispawn exit",
        _MPISPAWN,
        _mpispawn,
        EXIT,
        tier=3,
        anchors=(b"MPI process (rank: ",),
        worth=(rb"MPI process \(rank: \d",),
        words=("mpi process (rank: ",),
    ),
    Signature(
        "hydra exit string",
        _EXIT_STRING,
        _exit_string,
        EXIT,
        tier=3,
        anchors=(b"EXIT STRING",),
        worth=(rb"EXIT STRING",),
        words=("exit string",),
    ),
    Signature(
        "paddle fatal signal",
        _FATAL,
        _fatal,
        C.FATAL_SIGNAL.code,
        anchors=(b"FatalError: `",),
        worth=(rb"FatalError: `",),
    ),
)

parse = gated_reader(SIGNATURES)
