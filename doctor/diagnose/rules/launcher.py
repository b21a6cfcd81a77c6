"""Exit records and cascade markers from launchers: who died first, with which code.

These are not findings by themselves: `causality` uses them to pick the root rank, to decide
that a Python exception killed its rank, and as the finding of last resort when a rank exited
without saying why.

Formats: torchrun (torch/distributed/elastic/multiprocessing/errors/__init__.py,
error_handler.py) "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:" then a
table with "Failures:" / "Root Cause (first observed failure):" entries "[0]:", "  time      :
2024-01-01_12:00:00", "  host      : node-1", "  rank      : 3 (local_rank: 1)", "  exitcode  : -9
(pid: 1234)", "  error_file: <N/A>", "  traceback : Signal 9 (SIGKILL) received by PID 1234";
torchrun agent (multiprocessing/api.py) "failed (exitcode: -9) local_rank: 0 (pid: 1234) of
binary: /usr/bin/python" and "Sending process 1235 closing signal SIGTERM"; DeepSpeed launcher
(deepspeed/launcher/launch.py) "Killing subprocess 1234" and "[...] exits with return code =
-9"; Open MPI "mpirun noticed that process rank 3 with PID 1234 on node n1 exited on signal 9
(Killed)." and its first-failure summary "Process name: [[1234,1],3]" / "Exit code: 137" (128 + 9);
Slurm "srun: error: node-3: task 5: Killed" / "task 5: Exited with exit code 1" / "Out Of
Memory"; torch.multiprocessing.spawn "process 1 terminated with signal SIGKILL" / "with exit code
1"; subprocess's "returned non-zero exit status -9" (older DeepSpeed, Accelerate). torchrun's
table is also read when only one entry of it was pasted ("exitcode : -11 (pid: 6421)").

A teardown alone (`teardown`) still says a worker died: torchrun SIGTERMs only the workers still
alive (the dead one is the pid missing from the list), DeepSpeed's sigkill_handler kills all.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit, event
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.diagnose.text.normalize import Line
from pgdoctor.knowledge.ranks import MAX_PID, bounded, span_gaps
from pgdoctor.knowledge.signals import SIGNAL_NAMES, STRSIGNAL
from pgdoctor.model import lazy_re

EXIT = "exit"
MARKER = "marker"
# A key of the table, also behind a prefix the normaliser does not know (a log collector's "[2024-03-21
# 17:04:45] node1: "): the prefix ends in "]" or ":" and a blank. 1.9 names the traceback "msg".
_TABLE_KEY = lazy_re.compile(
    r"^(?:.{0,80}?[\]:]\s+)??\s*(time|host|rank|exitcode|error_file|traceback|msg)\s*:\s*(.*)$"
)
_ENTRY = lazy_re.compile(r"^(?:.{0,80}?[\]:]\s+)??\s*\[(\d+)\]:\s*$")
# The same line with its local rank and pid garbled by a paste ("failed (exitcode: -9) local_rankroot/...")
# still names the exit code; so does the line cut after the code (a thread's title, the writer's own words
# glued after it in any language: "failed (exitcode: -7) 这个错误是因为什么"), kept when the code is a
# signal's (-N) or the line names the agent's logger (torch.distributed.elastic.multiprocessing.api). A title
# retyped by hand moves the blanks ("failed ( exitcode:-9)").
_AGENT = lazy_re.compile(r"failed \( ?exitcode: ?(-?\d+) ?\)(?: ?local_rank(?:: (\d+) \(pid: (\d+)\))?)?")
_DS_EXIT = lazy_re.compile(r"exits with return code = (-?\d+)")
_DS_LOCAL = lazy_re.compile(r"--local_rank=(\d+)|LOCAL_RANK=(\d+)")
# Open MPI 1.2's "mpirun noticed that job rank 0 with PID 1234 on node n1 exited on signal 15 (Terminated).",
# 1.3+ "process rank", PRRTE (Open MPI 5) "prterun noticed that process rank ..."; a pasted log often has the
# PID blanked ("with PID xxxxxx").
_MPI = lazy_re.compile(r"(?:process|job) rank (\d+) with PID (\w+) on node (\S+) exited on signal (\d+)")
# torch.multiprocessing.spawn: "process 1 terminated with signal SIGKILL" / "... with exit code 1"
# (ProcessExitedException; a plain Exception before 1.7).
_SPAWN = lazy_re.compile(r"[Pp]rocess (\d+) terminated with (?:signal (SIG[A-Z]+)|exit code (-?\d+))")
_SIGNUMS = {v: k for k, v in SIGNAL_NAMES.items()}
# Lightning's _ChildProcessObserver (lightning/fabric/strategies/launchers/subprocess_script.py, 2.0+) when a
# child of its subprocess launcher ends: "Child process with PID 4242 terminated with code -9. Forcefully
# terminating all other processes to avoid zombies" (Popen's returncode: -N for signal N).
_LIGHTNING = lazy_re.compile(r"Child process with PID (\d+) terminated with code (-?\d+)")
# subprocess.CalledProcessError.__str__ (torch 1.x torch.distributed.launch raises it for the
# first worker that failed; DeepSpeed < 0.5 and Accelerate too): "Command '[...]' returned non-zero
# exit status 1.", for a signal "Command '[...]' died with <Signals.SIGKILL: 9>." and, for a
# number Python has no name for, "died with unknown signal 77.".
_CALLED = lazy_re.compile(
    r"returned non-zero exit status (-?\d+)|died with <Signals\.(SIG[A-Z0-9]+)(?:: (\d+)>)?|"
    r"died with unknown signal (\d+)"
)
_SRUN = lazy_re.compile(
    r"srun: error: (\S+): tasks? (\d[\d,\-]*): (Killed|Exited with exit code (\d+)|Segmentation fault|"
    r"Aborted|Out Of Memory|Bus error|Terminated|Hangup|Interrupt|Illegal instruction|"
    r"User defined signal [12])"
)
# Open MPI's summary of the first process that failed: "Process name: [[1234,1],3]" then "Exit code: 137";
# horovodrun's gloo launcher (horovod/runner/gloo_run.py) copies it: "Process name: 1" / "Exit code: 137",
# in elastic mode the slot "Process name: elastic-test-worker-1[0]" (host and local rank).
_MPI_NAME = lazy_re.compile(r"Process name:\s*(?:\[\[\d+,\d+\],(\d+)\]|(\d+)\s*$|(\S+)\[(\d+)\]\s*$)")
_MPI_EXIT = lazy_re.compile(r"^\s*Exit code:\s*(\d+)\s*$")
# The agent's "Received %s death signal, shutting down workers" of a signal.Signals: "Received 15 death
# signal" (Python 3.11+, and torch 1.x's int) or "Received Signals.SIGTERM death signal" (Python <= 3.10).
# Its SignalException says "Process 81061 got signal: 1" (elastic/multiprocessing/api.py, 1.9-2.x); a retyped
# paste keeps the raise line's argument name or spacing ("got sigval:1", "got signal : 1").
_SIGNALLED = lazy_re.compile(
    r"Received (\d+) death signal|got (?:signal|sigval) ?: ?(\d+)|Received Signals\.(SIG[A-Z]+) death signal"
)
# torch.multiprocessing.spawn (2.2+) stops the survivors the same way: "W0803 08:51:23.747000 2888
# torch/multiprocessing/spawn.py:169] Terminating process 2965 via signal SIGTERM".
_TEARDOWN_PID = lazy_re.compile(r"(?:Sending process|Killing subprocess|Terminating process) (\d+)")
_MARKERS = lazy_re.compile(
    r"Sending process \d+ closing signal SIG\w+|Killing subprocess \d+|got (?:signal|sigval) ?: ?\d+|"
    r"Terminating process \d+ via signal SIG\w+|"
    r"Received (?:\d+|Signals\.SIG[A-Z]+) death signal|"
    r"terminate called after throwing|NCCL communicator was aborted|SignalException|"
    r"RendezvousClosedError|CalledProcessError"
)


def exit_event(hit: Hit, facts: dict[str, Any], rank: Optional[int]) -> Event:
    code = facts.get("exitcode")
    ev = event(
        hit,
        EXIT,
        f"rank {rank} exited with {code}",
        facts,
        tier=3,
        rank=rank,
        dedupe=(EXIT, rank, facts.get("local_rank"), facts.get("host"), code, facts.get("pid")),
    )
    return ev


def _table(hit: Hit) -> list[Event]:
    out: list[Event] = []
    section = "failures"
    cur: dict[str, Any] = {}

    used: list[Line] = []

    def flush() -> None:
        if "exitcode" in cur:
            f = dict(cur)
            f["root"] = section == "root"
            f["reporter"] = "torchrun"
            ev = exit_event(hit, f, f.get("rank"))
            # The table's own lines (rank, exitcode, traceback) are the evidence, after its header.
            ev.evidence = hit.evidence([hit.line, *used])
            out.append(ev)
        cur.clear()
        used.clear()

    for ln in hit.after(46, same_rank=False):
        s = ln.text
        if "Root Cause" in s:
            flush()
            section = "root"
            continue
        if _ENTRY.match(s):
            flush()
            continue
        m = _TABLE_KEY.match(s)
        if not m:
            if s.startswith("=====") and section == "root" and cur:
                break
            continue
        key, val = m.group(1), m.group(2).strip()
        if key in ("host", "rank", "exitcode", "traceback", "msg"):
            used.append(ln)
        if key == "rank":
            r = re.match(r"(\d+)(?: \(local_rank: (\d+)\))?", val)
            if r:
                cur["rank"] = int(r.group(1))
                if r.group(2):
                    cur["local_rank"] = int(r.group(2))
        elif key == "exitcode":
            e = re.match(r"(-?\d+)(?: \(pid: (\d+)\))?", val)
            if e:
                cur["exitcode"] = int(e.group(1))
                if e.group(2):
                    cur["pid"] = int(e.group(2))
        elif key == "host":
            cur["host"] = val
        elif key == "time":
            cur["time"] = val
            try:
                cur["_ts"] = _dt.datetime.strptime(val, "%Y-%m-%d_%H:%M:%S").timestamp()
            except ValueError:
                pass
        elif key in ("traceback", "msg") and val and "To enable traceback" not in val:
            cur["traceback"] = val.strip('"')[:200]
    flush()
    return out


def _deepspeed_exit(hit: Hit, text: str) -> list[Event]:
    m = _DS_EXIT.search(text)
    if not m:
        return []
    facts: dict[str, Any] = {"exitcode": int(m.group(1)), "reporter": "deepspeed"}
    lr = _DS_LOCAL.search(text)
    if lr:
        facts["local_rank"] = int(lr.group(1) or lr.group(2))
    return [exit_event(hit, facts, None)]


def _fragment(hit: Hit) -> list[Event]:
    """An entry of torchrun's table pasted without its header: "  rank : 0 (local_rank: 0)",
    "  exitcode : -11 (pid: 6421)", "  traceback : Signal 11 (SIGSEGV) received by PID 6421"."""
    # The header's own hit (ChildFailedError) reads the whole table; a table pasted from its "train.py
    # FAILED" or "Root Cause (first observed failure):" down, without that line, is read here.
    if any("ChildFailedError" in ln.text for ln in hit.before(40, same_rank=False)):
        return []
    start = hit.idx
    for k in range(hit.idx - 1, max(-1, hit.idx - 6), -1):
        if not _TABLE_KEY.match(hit.lines[k].text):
            break
        start = k
    sub = Hit(hit.source, hit.lines, start, hit.source_index)
    head = Hit(
        hit.source, [Line("ChildFailedError:", hit.lines[start].no), *hit.lines[start:]], 0, hit.source_index
    )
    evs = _table(head)
    for ev in evs:
        ev.line = sub.line.no
        ev.facts["root"] = True
        ev.facts["table_fragment"] = True
    return evs


def _launcher_signalled(mk: Event) -> Event:
    """The agent's "SignalException: Process 8665 got signal: 1" alone: the job was stopped from outside."""
    num = mk.facts["signalled"]
    name = SIGNAL_NAMES.get(num, f"signal {num}")
    why = (
        "its SSH/terminal session closed (use nohup, tmux or the scheduler)"
        if num == 1
        else "a cancel or kill"
    )
    msg = f"the launcher received {name} and ended the job from outside ({why}); no worker failed first"
    facts = {"launcher_signal": name, "signal": name, "teardown_only": True}
    ded = (C.RANK_EXITED.code, "teardown")
    return Event(
        C.RANK_EXITED.code,
        mk.source,
        mk.line,
        mk.source_index,
        msg,
        mk.rank,
        facts,
        list(mk.evidence),
        mk.ts,
        2,
        ded,
    )


def teardown(markers: list[Event]) -> Optional[Event]:
    """An excerpt that holds only the launcher's teardown (torchrun's "Sending process N closing
    signal SIGTERM", DeepSpeed's "Killing subprocess N"): a worker died first, and it is the one
    the launcher did not have to stop. Named when the stopped pids leave exactly one gap."""
    pids: list[int] = []
    first: Optional[Event] = None
    for mk in sorted(markers, key=lambda e: e.position):
        m = _TEARDOWN_PID.search(mk.facts.get("marker", ""))
        pid = bounded(m.group(1), MAX_PID) if m else None
        if pid is not None:  # a "pid" past Linux's limit is not one: never a span to walk
            first = first or mk
            pids.append(pid)
    if first is None:
        told = next((mk for mk in sorted(markers, key=lambda e: e.position) if "signalled" in mk.facts), None)
        return _peer_hung_up(markers) if told is None else _launcher_signalled(told)
    nums = [mk.facts["signalled"] for mk in markers if "signalled" in mk.facts]
    stopped = sorted(set(pids))
    if nums:
        num = nums[0]
        name = SIGNAL_NAMES.get(num, f"signal {num}")
        return Event(
            C.RANK_EXITED.code,
            first.source,
            first.line,
            first.source_index,
            f"the launcher itself received {name} and stopped its {len(stopped)} worker(s): the job was "
            f"ended "
            "from outside (a scheduler's cancel or time limit, preemption, Ctrl-C), no worker failed first",
            first.rank,
            {"launcher_signal": name, "signal": name, "stopped_pids": stopped, "teardown_only": True},
            list(first.evidence),
            first.ts,
            2,
            (C.RANK_EXITED.code, "teardown"),
        )
    pid_list = f"{', '.join(map(str, stopped[:8]))}{', ...' if len(stopped) > 8 else ''}"
    if "Killing" in first.facts["marker"]:
        # DeepSpeed's sigkill_handler kills every worker, the failed one included, then prints
        # "<cmd> exits with return code = N" for the one that failed (not in this excerpt).
        facts: dict[str, Any] = {"killed_pids": stopped, "reporter": "deepspeed", "teardown_only": True}
        msg = (
            f"DeepSpeed's launcher killed its {len(stopped)} worker(s) (pids {pid_list}) because one of them "
            "exited with an error; its 'exits with return code' line is not in the excerpt (-9: most often "
            "the "
            "kernel's OOM killer, see dmesg)"
        )
    else:
        # torchrun sends SIGTERM only to the workers still alive: the dead one is not in the list.
        gaps = span_gaps(stopped, 1) or []  # pair by pair: a log's pids may be 10**30 apart
        who = "torch.multiprocessing.spawn" if "Terminating process" in first.facts["marker"] else "torchrun"
        facts = {"stopped_pids": stopped, "reporter": who, "teardown_only": True}
        msg = (
            f"{who} stopped {len(stopped)} worker(s) (SIGTERM to pids {pid_list}) after another worker "
            f"died; "
            "the excerpt holds only this teardown"
        )
        if len(gaps) == 1:
            facts["pid"] = gaps[0]
            facts["suspect_pid"] = gaps[0]
            msg += f": pid {gaps[0]} is the one that got no SIGTERM, so it died first"
        else:
            msg += (
                ": the worker that died is the pid missing from that list "
                "(its own log; dmesg for the OOM killer)"
            )
    return Event(
        C.RANK_EXITED.code,
        first.source,
        first.line,
        first.source_index,
        msg,
        first.rank,
        facts,
        list(first.evidence),
        first.ts,
        0,
        (C.RANK_EXITED.code, "teardown"),
    )


# torchrun's table flattened onto one line by a paste or a log collector: "... Root Cause (first
# observed failure): [0]: time : 2024-01-01_12:00:00 host : node-1 rank : 3 (local_rank: 3) exitcode :
# -9 (pid: 1234) error_file: <N/A> traceback : Signal 9 (SIGKILL) received by PID 1234".
# Glued (the line breaks dropped, no blank left between the fields: "host      : node-1rank      : 3
# (local_rank: 3)exitcode  : -9 (pid: 1234)") it is read the same way.
_FLAT = lazy_re.compile(
    r"(?:host\s*:\s*(?P<host>\S+?)\s*)?(?<!local_)rank\s*:\s*(?P<rank>\d+)"
    r"(?:\s*\(local_rank:\s*(?P<lr>\d+)\))?\s*"
    r"exitcode\s*:\s*(?P<code>-?\d+)(?:\s*\(pid:\s*(?P<pid>\d+)\))?"
)


def _flat_table(hit: Hit) -> list[Event]:
    text = " ".join([hit.text] + [ln.text for ln in hit.after(4, same_rank=False) if "exitcode" in ln.text])
    root_at = text.find("Root Cause")
    out = []
    for m in _FLAT.finditer(text):
        facts: dict[str, Any] = {
            "exitcode": int(m.group("code")),
            "rank": int(m.group("rank")),
            "reporter": "torchrun",
            "root": root_at >= 0 and m.start() > root_at,
            "table_flattened": True,
        }
        if m.group("lr"):
            facts["local_rank"] = int(m.group("lr"))
        if m.group("pid"):
            facts["pid"] = int(m.group("pid"))
        if m.group("host"):
            facts["host"] = m.group("host")
        out.append(exit_event(hit, facts, facts["rank"]))
    return out


def _child_failed(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "rror:" not in hit.text:
        return None
    return _table(hit) or _flat_table(hit) or None


def _table_entry(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return _fragment(hit)


def _agent(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "local_rank" not in m.group(0) and not (m.group(1).startswith("-") or "multiprocessing" in hit.text):
        return None  # "failed (exitcode: 1)" alone: any tool's words
    return [
        exit_event(
            hit,
            {
                "exitcode": int(m.group(1)),
                **({"local_rank": int(m.group(2)), "pid": int(m.group(3))} if m.group(2) else {}),
                "reporter": "torchrun",
                "first": True,
            },
            None,
        )
    ]


def _called(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    # DeepSpeed before 0.5 and other launchers: subprocess.CalledProcessError for the failed worker
    # (a title or a retyped line may cut "<Signals.SIGSEGV: 11>." after the name: the name gives the number)
    num = m.group(3) or m.group(4) or _SIGNUMS.get(m.group(2) or "", 0)
    code = int(m.group(1)) if m.group(1) else -int(num)
    if not code:
        return None
    facts: dict[str, Any] = {"exitcode": code, "reporter": "launcher", "first": True}
    if 128 < code < 160:  # a shell's status for its child killed by signal N (bash -c, a wrapper script)
        facts.update(exit_status=code, exitcode=-(code - 128))
    if m.group(2):
        facts["signal"] = m.group(2)
    lr = _DS_LOCAL.search(hit.text)
    if lr:
        facts["local_rank"] = int(lr.group(1) or lr.group(2))
    return [exit_event(hit, facts, None)]


def _spawn(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    code = -_SIGNUMS.get(m.group(2), 0) if m.group(2) else int(m.group(3))
    facts: dict[str, Any] = {
        "exitcode": code,
        "local_rank": int(m.group(1)),
        "reporter": "torch.multiprocessing.spawn",
        "first": True,
    }
    if m.group(2):
        facts["signal"] = m.group(2)
    return [exit_event(hit, facts, None)]


def _lightning(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"exitcode": int(m.group(2)), "pid": int(m.group(1)), "reporter": "lightning"}
    return [exit_event(hit, facts, None)]


# Huawei CANN's TBE operator-compile workers (te_fusion parallel_compilation) watch the process that
# started them: "[ERROR] TBE Subprocess[task distribute] raise error[], main process disappeared!" is
# printed when that training process is gone without a word of its own (killed from outside: most
# often the host's OOM killer, which leaves its record in the kernel log only).
_TBE_ORPHAN = lazy_re.compile(r"TBE Subprocess\W.{0,60}?main process disappeared")


def _tbe_orphan(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "the main training process disappeared under its CANN compile workers: it was killed "
            "from outside (most often the host's OOM killer; see dmesg)",
            {"reporter": "cann_tbe", "kind": "main_process_gone"},
            dedupe=(row.code, "tbe_orphan"),
        )
    ]


def _mpi(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {
        "exitcode": -int(m.group(4)),
        "host": m.group(3),
        "reporter": "mpirun",
        "rank": int(m.group(1)),
    }
    if m.group(2).isdigit():
        facts["pid"] = int(m.group(2))
    return [exit_event(hit, facts, int(m.group(1)))]


# srun's words for how a task ended (src/srun/launch.c: strsignal() of the signal) -> the exit code
_SRUN_EXITS = lazy_re.ByText({**{k: -n for k, n in STRSIGNAL.items()}, "Out Of Memory": -9})


def _srun(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    tasks = m.group(2)
    first = int(re.split(r"[,\-]", tasks)[0])
    what = m.group(3)
    code = int(m.group(4)) if m.group(4) else _SRUN_EXITS[what]
    facts: dict[str, Any] = {
        "exitcode": code,
        "host": m.group(1),
        "reporter": "srun",
        "rank": first,
        "tasks": tasks,
    }
    if what.lower() == "out of memory":
        facts["killer"] = "slurm_cgroup"  # Slurm's task/cgroup plugin saw the OOM kill
    return [exit_event(hit, facts, first)]


def _mpi_exit(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    name = next((n for n in (_MPI_NAME.search(ln.text) for ln in hit.before(3, same_rank=False)) if n), None)
    if name is None:
        return None
    rank = int(name.group(1) or name.group(2)) if (name.group(1) or name.group(2)) else None
    status = int(m.group(1))
    # a shell-style status: 128 + N is "killed by signal N"
    code = -(status - 128) if 128 < status < 160 else status
    facts: dict[str, Any] = {"exitcode": code, "exit_status": status, "first": True}
    facts["reporter"] = "mpirun" if name.group(1) else "horovodrun"
    if rank is not None:
        facts["rank"] = rank
    else:
        facts["host"], facts["local_rank"] = name.group(3), int(name.group(4))
    return [exit_event(hit, facts, rank)]


def _ds_exits(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return _deepspeed_exit(hit, hit.text)


def _ds_killing(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    # DeepSpeed's launcher logs the exit code on the next lines ("[ERROR] ... exits with
    # return code = -9"), which carry no anchor of their own.
    for ln in hit.after(12, same_rank=False):
        if "exits with return code" in ln.text:
            return _deepspeed_exit(hit, ln.text)
    return None


def _marker(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = hit.text
    facts: dict[str, Any] = {"marker": m.group(0)}
    # torchrun's agent logs "Received 15 death signal, shutting down workers" around its SIGTERMs
    # when it was itself told to stop: then no worker failed first.
    for ln in [hit.line, *hit.before(6, same_rank=False), *hit.after(6, same_rank=False)]:
        s = _SIGNALLED.search(ln.text)
        if s:
            facts["signalled"] = int(s.group(1) or s.group(2) or _SIGNUMS.get(s.group(3), 15))
            break
    return [row.event(hit, t.strip()[:200], facts, dedupe=(MARKER, hit.line.no, hit.source))]


def _peer_hung_up(markers: list[Event]) -> Optional[Event]:
    """Open MPI's "peer process has unexpectedly disconnected" with nothing else: a rank on the peer
    host died first, without its own error in the excerpt."""
    peer = next(
        (
            mk
            for mk in sorted(markers, key=lambda e: e.position)
            if _MPI_PEER.search(mk.facts.get("marker", ""))
        ),
        None,
    )
    if peer is None:
        return None
    host = peer.facts.get("peer_host")
    facts: dict[str, Any] = {"reporter": "mpirun", "teardown_only": True}
    if host:
        facts["peer_host"] = facts["host"] = host
    msg = (
        f"Open MPI saw a peer process{' on ' + host if host else ''} disconnect without finishing (it "
        f"crashed or "
        "was killed): that rank died first; its own log (and dmesg for the OOM killer) says why"
    )
    return Event(
        C.RANK_EXITED.code,
        peer.source,
        peer.line,
        peer.source_index,
        msg,
        peer.rank,
        facts,
        list(peer.evidence),
        peer.ts,
        0,
        (C.RANK_EXITED.code, "mpi_peer"),
    )


# Open MPI's TCP transport (help-mpi-btl-tcp.txt, "peer hung up"): "An MPI communication peer process has
# unexpectedly disconnected.  This usually indicates a failure in the peer process (e.g., a crash or
# otherwise exiting without calling MPI_FINALIZE first)." then "Peer host: <host>": a rank elsewhere died.
_MPI_PEER = lazy_re.compile(r"MPI communication peer process has unexpectedly disconnected")
_PEER_HOST = lazy_re.compile(r"^\s*Peer host:\s*(\S+)")


def _mpi_peer(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    evs = _marker(row, hit, m) or []
    for ln in hit.after(16, same_rank=False):
        h = _PEER_HOST.match(ln.text)
        if h:
            for ev in evs:
                ev.facts["peer_host"] = h.group(1)
            break
    return evs


SIGNATURES = (
    Signature(
        "mpi peer disconnected",
        _MPI_PEER,
        _mpi_peer,
        MARKER,
        tier=3,
        anchors=(b"unexpectedly disconnected",),
        worth=(rb"unexpectedly disconnected",),
    ),
    Signature(
        "torchrun failure table",
        lazy_re.compile(r"ChildFailedError"),
        _child_failed,
        EXIT,
        tier=3,
        anchors=(b"rror",),
        worth=(rb"Error\b",),
    ),
    Signature(
        "torchrun table entry",
        lazy_re.compile(r"^\s*exitcode\s*:\s*(.*)$"),
        _table_entry,
        EXIT,
        tier=3,
        anchors=(b"xitcode",),
        worth=(rb"exitcode",),
    ),
    Signature("torchrun agent", _AGENT, _agent, EXIT, tier=3, anchors=(b"xitcode",), worth=(rb"exitcode",)),
    Signature(
        "called process",
        _CALLED,
        _called,
        EXIT,
        tier=3,
        anchors=(b"rror", b"SIG"),
        worth=(rb"Error\b", rb"SIG[A-Z]{3,4}"),
        anchor_from="the 'subprocess.CalledProcessError: ' before the message",
        examples=(
            "subprocess.CalledProcessError: Command '['/usr/bin/python', '-u', 'train.py', "
            "'--local_rank=1']' returned non-zero exit status -9.",
        ),
    ),
    Signature(
        "multiprocessing spawn",
        _SPAWN,
        _spawn,
        EXIT,
        tier=3,
        anchors=(b"SIG", b"xit code"),
        worth=(rb"SIG[A-Z]{3,4}", rb"xit code"),
    ),
    Signature(
        "cann tbe workers lost their main process",
        _TBE_ORPHAN,
        _tbe_orphan,
        C.RANK_EXITED.code,
        tier=3,
        anchors=(b"main process disappeared",),
        worth=(rb"main process disappeared",),
    ),
    Signature(
        "lightning child process",
        _LIGHTNING,
        _lightning,
        EXIT,
        tier=3,
        anchors=(b"terminated with code",),
        worth=(rb"terminated with code",),
    ),
    Signature(
        "mpirun signal",
        _MPI,
        _mpi,
        EXIT,
        tier=3,
        # the record's head too: a terminal's 80-column wrap often cuts "exited on sign|al 4"
        anchors=(b"Kill", b"SIG", b"xited on signal", b"noticed that process rank", b"noticed that job rank"),
        worth=(rb"Kill", rb"SIG[A-Z]{3,4}", rb"xited on signal", rb"noticed that (?:process|job) rank"),
        anchor_from="the signal's name after the number ('exited on signal 9 (Killed)')",
        examples=(
            "mpirun noticed that process rank 3 with PID 1234 on node n1 exited on signal 9 (Killed).",
        ),
    ),
    Signature("srun task", _SRUN, _srun, EXIT, tier=3, anchors=(b"rror",), worth=(rb"\berror\b",)),
    Signature(
        "mpirun exit code", _MPI_EXIT, _mpi_exit, EXIT, tier=3, anchors=(b"xit code",), worth=(rb"xit code",)
    ),
    Signature(
        "deepspeed exit",
        lazy_re.compile(r"exits with return code"),
        _ds_exits,
        EXIT,
        tier=3,
        anchors=(b"return code",),
        worth=(rb"return code",),
    ),
    Signature(
        "deepspeed teardown",
        lazy_re.compile(r"Killing subprocess"),
        _ds_killing,
        EXIT,
        tier=3,
        anchors=(b"Kill",),
    ),
    Signature(
        "cascade marker",
        _MARKERS,
        _marker,
        MARKER,
        tier=3,
        # torch 2.x's agent line "Received 1 death signal, shutting down workers" carries no
        # "SIG": its number (Python 3.11+) is the only text (elastic/agent/server/api.py).
        anchors=(b"SIG", b"Kill", b"xception", b"rror", b"death signal"),
        worth=(rb"SIG[A-Z]{3,4}", rb"Kill", rb"Exception\b", rb"Error\b", rb"death signal"),
        anchor_from=(
            "'SIGTERM' or an exception type in the same line ('what():  ...Error', 'SignalException')"
        ),
        examples=(
            "Sending process 1235 closing signal SIGTERM",
            "W1229 16:43:25.650000 190834 torch/distributed/elastic/agent/server/api.py:723] Received 1 "
            "death signal, shutting down workers",
            "terminate called after throwing an instance of 'c10::DistBackendError'",
            "torch.distributed.elastic.multiprocessing.api.SignalException: Process 12 got signal: 15",
        ),
    ),
)

parse = gated_reader(SIGNATURES)
