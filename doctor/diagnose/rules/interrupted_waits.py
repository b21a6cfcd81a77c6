"""collective_timeout from a job a person interrupted while it waited: the KeyboardInterrupt (Ctrl-C, "^C")
traceback of a launcher waiting on its ranks, or of a rank waiting in a collective. Nobody stops a job
that is making progress in the middle of a wait and then pastes the traceback into an issue: the job hung.

Where the launchers wait, read at their source (torch 1.8-2.x):
- torch.multiprocessing.spawn (torch/multiprocessing/spawn.py): start_processes' "while not context.join():"
  and ProcessContext.join's multiprocessing.connection.wait on the children's sentinels (then
  selectors.select); detectron2's, fairseq's and mmcv's launchers call it;
- torchrun / torch.distributed.launch >= 1.9 (torch/distributed/elastic/agent/server/api.py): _invoke_run's
  "time.sleep(monitor_interval)" between two _monitor_workers; elastic/multiprocessing/api.py's wait/_poll;
- torch.distributed.launch <= 1.8 (torch/distributed/launch.py main: "process.wait()", then subprocess.py's
  wait/_wait/_try_wait), DeepSpeed's launcher (deepspeed/launcher/launch.py and runner.py) and accelerate's
  (accelerate/commands/launch.py), which wait on their children the same way.
Where a rank waits: a frame of torch.distributed's collectives (distributed_c10d.py barrier, all_reduce,
...), or a work's or the device's wait (torch/cuda/__init__.py synchronize).
Where a rank waits for rank 0 to finish first: the frameworks' "main process first" context managers, whose
body is a barrier - ultralytics/yolov5's torch_distributed_zero_first (utils/torch_utils.py: the other ranks
call dist.barrier before the block, rank 0 after it), transformers' TrainingArguments.main_process_first,
accelerate's main_process_first / local_main_process_first (state.py _goes_first: wait_for_everyone) - the
frame named so, or a "with torch_distributed_zero_first(rank):" line with only contextlib's __enter__ /
__exit__ under it (the interrupt came in the context manager, not in the block's own work).
Tier 2 and a warning (RUN512): any error line of the log is the better record. (Python's multiprocessing
frames alone, popen_fork's poll at exit, are any program's and are not read.)
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.diagnose.text.normalize import Line
from pgdoctor.knowledge.dist_calls import COLLECTIVE_CALLS
from pgdoctor.model import lazy_re

_INTERRUPT = lazy_re.compile(r"^\s*(?:\^C)?KeyboardInterrupt\s*$")
_FRAME = lazy_re.compile(r'^\s*(?:\^C)?File "(?P<file>[^"]+)", line \d+, in (?P<fn>\S+)')
_LAUNCHER = lazy_re.compile(
    r"(?P<spawn>torch/multiprocessing/spawn\.py)|(?P<elastic>torch/distributed/elastic/(?:agent/server|"
    r"multiprocessing)/api\.py)|(?P<launch>torch/distributed/(?:launch|run)\.py)|"
    r"(?P<deepspeed>deepspeed/launcher/\w+\.py)|(?P<accelerate>accelerate/commands/launch\.py)"
)
_LAUNCHER_WAITS = frozenset(
    {"join", "start_processes", "spawn", "_invoke_run", "run", "wait", "_poll", "main", "launch_agent"}
)
# and torch.cuda.synchronize: a rank waiting on its own stream
_COLLECTIVES = COLLECTIVE_CALLS | {"synchronize"}
_FIRST_FNS = frozenset({"torch_distributed_zero_first", "main_process_first", "local_main_process_first"})
_FIRST = lazy_re.compile(rf"^\s*with\s+(?:[\w.]+\.)?({'|'.join(sorted(_FIRST_FNS))})\(")
_CONTEXTLIB = lazy_re.compile(r"[/\\]contextlib\.py$")
_WAITER = lazy_re.compile(r"torch/distributed/distributed_c10d\.py|torch/cuda/__init__\.py|deepspeed/comm/")
# Where a rank waits for its peers to meet, before any collective: torch's init_process_group (its store
# and its store-based barrier, distributed_c10d.py 1.x-2.x), the rendezvous handlers
# (distributed/rendezvous.py) and the elastic agent's rendezvous (elastic/rendezvous/*.py: dynamic, static
# TCP, etcd), torch.distributed.rpc's init_rpc, DeepSpeed's init_distributed (deepspeed/comm/comm.py),
# BytePS's init (byteps/common/__init__.py: byteps_lazy_init waits in ps-lite's Postoffice for the
# scheduler and the other workers) and Horovod's (horovod/common/basics.py init: its controller's
# rendezvous with the runner).
_MEETING = lazy_re.compile(
    r"torch/distributed/distributed_c10d\.py:(?:init_process_group|_store_based_barrier)$|"
    r"torch/distributed/rendezvous\.py:\w+$|torch/distributed/elastic/rendezvous/\w+\.py:\w+$|"
    r"torch/distributed/rpc/(?:__init__|api)\.py:(?:init_rpc|_init_rpc_backend)$|"
    r"deepspeed/comm/comm\.py:init_distributed$|"
    r"byteps/(?:common|torch|tensorflow|mxnet)/__init__\.py:(?:init|_init)$|horovod/common/basics\.py:init$"
)


# A person's stop of the job (Ctrl-C): the terminal's "^C" echo, Python's KeyboardInterrupt, torchrun's agent
# ("Received 2 death signal, shutting down workers"; "Received Signals.SIGINT death signal" on Python <= 3.10;
# "Sending process 21287 closing signal SIGINT" to its workers), torch's SignalException ("Process 1359 got
# signal: 2"), DeepSpeed's launcher (launch.py's sigkill_handler: "Main process received SIGINT, exiting").
# What follows it (the launcher's traceback of its wait, the workers' teardown) is the stop's echo, not the
# run's progress.
_HAND_STOP = lazy_re.compile(
    r"^\s*\^C|^\s*KeyboardInterrupt\s*$|Received (?:2|Signals\.SIGINT) death signal|"
    r"closing signal SIGINT\b|\bgot signal: 2\b|\breceived SIGINT\b"
)


def before_hand_stop(lines: list[Line]) -> tuple[list[Line], bool]:
    """`lines` up to a person's stop of the job (Ctrl-C), and whether one came: a wait that the log ends in
    reads the same with the stop's echo after it (rdzv_values.py's hang at the process group's start)."""
    for i, ln in enumerate(lines):
        if _HAND_STOP.search(ln.text):
            return lines[:i], True
    return lines, False


def _frames(hit: Hit) -> list[re.Match[str]]:
    """The frames of the traceback the interrupt ends, innermost last (up to its header)."""
    out: list[re.Match[str]] = []
    for ln in reversed(hit.before(60, same_rank=False)):
        if "Traceback (most recent call last)" in ln.text or _INTERRUPT.match(ln.text):
            break
        f = _FRAME.match(ln.text)
        if f:
            out.append(f)
    return out[::-1]


def _first_wait(hit: Hit) -> Optional[str]:
    """The "main process first" context manager the innermost frames wait in, if any (see the docstring)."""
    code: Optional[str] = None  # the code line under the frame read last (walking outwards)
    for ln in reversed(hit.before(60, same_rank=False)):
        if "Traceback (most recent call last)" in ln.text:
            return None
        f = _FRAME.match(ln.text)
        if not f:
            code = ln.text
            continue
        if _CONTEXTLIB.search(f.group("file")):
            code = None
            continue
        if f.group("fn") in _FIRST_FNS:
            return f.group("fn")
        w = _FIRST.match(code or "")
        return w.group(1) if w else None
    return None


def _interrupt(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    frames = _frames(hit)
    launcher = next(
        (
            (next(k for k, v in lm.groupdict().items() if v), f.group("fn"))
            for f in frames
            if (lm := _LAUNCHER.search(f.group("file").replace("\\", "/")))
            and f.group("fn") in _LAUNCHER_WAITS
        ),
        None,
    )
    waiter = next(
        (
            f.group("fn")
            for f in reversed(frames)
            if f.group("fn") in _COLLECTIVES and _WAITER.search(f.group("file").replace("\\", "/"))
        ),
        None,
    )
    meeting = next(
        (
            f.group("fn")
            for f in reversed(frames)
            if _MEETING.search(f.group("file").replace("\\", "/") + ":" + f.group("fn"))
        ),
        None,
    )
    if waiter is None and meeting is not None:
        return [
            row.event(
                hit,
                f"{hit.who()}: the process was interrupted (KeyboardInterrupt) while it waited in {meeting}, "
                "where the ranks meet: it hung there - not every rank (or node, or the scheduler) reached "
                "the rendezvous, or they were given different addresses, ports or world sizes",
                {"interrupted": True, "waits_in": "rendezvous", "frame": meeting},
                code=C.RENDEZVOUS_TIMEOUT.code,
                dedupe=(C.RENDEZVOUS_TIMEOUT.code, "interrupted"),
            )
        ]
    waiter = waiter or _first_wait(hit)
    if launcher is None and waiter is None:
        return []
    if waiter is not None:
        facts = {"interrupted": True, "waits_in": "collective", "frame": waiter}
        msg = (
            f"{hit.who()}: the job was interrupted (KeyboardInterrupt) while this rank waited in "
            f"{waiter}: it hung there; the rank that never joined that collective is the culprit (dump "
            "every rank's stack with py-spy to find it)"
        )
        if waiter in _FIRST_FNS:
            msg = (
                f"{hit.who()}: the job was interrupted (KeyboardInterrupt) in {waiter}, the barrier where "
                "the other ranks wait for rank 0 to finish the block first (dataset caching, a download): "
                "it hung there - rank 0 was stuck, slow past the timeout or dead in that block"
            )
    else:
        assert launcher is not None
        facts = {"interrupted": True, "waits_in": "launcher", "launcher": launcher[0], "frame": launcher[1]}
        msg = (
            f"the launcher ({launcher[0]}) was interrupted (KeyboardInterrupt) while it waited on its ranks: "
            "the job hung and was stopped by hand; the ranks' own output (or a py-spy dump of each) says "
            "where they waited"
        )
    return [row.event(hit, msg, facts, dedupe=(row.code, "interrupted"))]


SIGNATURES = (
    Signature(
        "keyboard interrupt of a wait",
        _INTERRUPT,
        _interrupt,
        C.INTERRUPTED_WHILE_WAITING.code,
        tier=2,
        anchors=(b"KeyboardInterrupt",),
        worth=(rb"^\s*(?:\^C)?KeyboardInterrupt\s*$",),
        words=("keyboardinterrupt",),
    ),
)

parse = gated_reader(SIGNATURES)
