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
(Killed)."; Slurm "srun: error: node-3: task 5: Killed" / "task 5: Exited with exit code 1".
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any, Optional

from pgdoctor.diagnose.event import Event, Hit, event
from pgdoctor.diagnose.text.normalize import Line

EXIT = "exit"
MARKER = "marker"
SIGNAL_NAMES = {1: "SIGHUP", 2: "SIGINT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL",
                11: "SIGSEGV", 13: "SIGPIPE", 15: "SIGTERM"}
_TABLE_KEY = re.compile(r"^\s*(time|host|rank|exitcode|error_file|traceback)\s*:\s*(.*)$")
_ENTRY = re.compile(r"^\s*\[(\d+)\]:\s*$")
_AGENT = re.compile(r"failed \(exitcode: (-?\d+)\) local_rank: (\d+) \(pid: (\d+)\)")
_DS_EXIT = re.compile(r"exits with return code = (-?\d+)")
_DS_LOCAL = re.compile(r"--local_rank=(\d+)|LOCAL_RANK=(\d+)")
_MPI = re.compile(r"process rank (\d+) with PID (\d+) on node (\S+) exited on signal (\d+)")
_SRUN = re.compile(r"srun: error: (\S+): tasks? ([\d,\-]+): (Killed|Exited with exit code (\d+)|Segmentation fault|Aborted)")
_MARKERS = re.compile(r"Sending process \d+ closing signal SIG\w+|Killing subprocess \d+|got signal: \d+|"
                      r"terminate called after throwing|NCCL communicator was aborted|SignalException|"
                      r"RendezvousClosedError|CalledProcessError")


def _exit(hit: Hit, facts: dict[str, Any], rank: Optional[int]) -> Event:
    code = facts.get("exitcode")
    if isinstance(code, int) and code < 0:
        facts.setdefault("signal", SIGNAL_NAMES.get(-code, f"signal {-code}"))
    ev = event(hit, EXIT, f"rank {rank} exited with {code}", facts, tier=3, rank=rank,
               dedupe=(EXIT, rank, facts.get("local_rank"), facts.get("host"), code, facts.get("pid")))
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
            ev = _exit(hit, f, f.get("rank"))
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
        if key in ("host", "rank", "exitcode", "traceback"):
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
        elif key == "traceback" and val and "To enable traceback" not in val:
            cur["traceback"] = val[:200]
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
    return [_exit(hit, facts, None)]


def parse(hit: Hit) -> list[Event]:
    t = hit.text
    if "ChildFailedError" in t and "rror:" in t:
        return _table(hit)
    m = _AGENT.search(t)
    if m:
        return [_exit(hit, {"exitcode": int(m.group(1)), "local_rank": int(m.group(2)), "pid": int(m.group(3)),
                            "reporter": "torchrun", "first": True}, None)]
    m = _MPI.search(t)
    if m:
        return [_exit(hit, {"exitcode": -int(m.group(4)), "pid": int(m.group(2)), "host": m.group(3),
                            "reporter": "mpirun", "rank": int(m.group(1))}, int(m.group(1)))]
    m = _SRUN.search(t)
    if m:
        tasks = m.group(2)
        first = int(re.split(r"[,\-]", tasks)[0])
        what = m.group(3)
        code = int(m.group(4)) if m.group(4) else {"Killed": -9, "Segmentation fault": -11, "Aborted": -6}[what]
        return [_exit(hit, {"exitcode": code, "host": m.group(1), "reporter": "srun", "rank": first, "tasks": tasks},
                      first)]
    if "exits with return code" in t:
        return _deepspeed_exit(hit, t)
    if "Killing subprocess" in t:
        # DeepSpeed's launcher logs the exit code on the next lines ("[ERROR] ... exits with
        # return code = -9"), which carry no anchor of their own.
        for ln in hit.after(12, same_rank=False):
            if "exits with return code" in ln.text:
                return _deepspeed_exit(hit, ln.text)
    if _MARKERS.search(t):
        return [event(hit, MARKER, t.strip()[:200], {"marker": _MARKERS.search(t).group(0)}, tier=3,  # type: ignore[union-attr]
                      dedupe=(MARKER, hit.line.no, hit.source))]
    return []
