"""Python stacks of live processes through py-spy (`dump --json`, non-native: it pauses the
process for milliseconds), pystack where py-spy cannot read the interpreter, and, when neither
can attach, the one cause of the refusal with its fix.

Each tool runs in its own session under a timeout and is SIGKILLed by process group at it (a
py-spy stuck on a process in uninterruptible sleep must not hang pgdoctor); it is registered
with pgdoctor's child registry, so an interrupted pgdoctor kills it too. Stacks are lists of
{"file", "line", "function"}, innermost frame first, of the process's main thread.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

from pgdoctor.probes.processes import kill_all_children, track, untrack

CAP_SYS_PTRACE = 19


@dataclass(frozen=True)
class StackRead:
    frames: Optional[list[dict[str, Any]]]  # None: not read
    tool: str
    cause: str = ""  # why not (one line)
    fix: str = ""  # the one fix for that cause
    timed_out: bool = False


def find_tool(name: str) -> Optional[str]:
    """On PATH, else beside this Python (a venv's bin/ that is not on PATH)."""
    found = shutil.which(name)
    if found:
        return found
    here = os.path.join(os.path.dirname(sys.executable), name)
    return here if os.access(here, os.X_OK) else None


_STOP = threading.Event()


def stop_all() -> None:
    """pgdoctor is being interrupted: kill the running tools and start no new one (the worker
    threads would otherwise go on to the next tool while the process exits)."""
    _STOP.set()
    kill_all_children()


def run_tool(argv: Sequence[str], timeout_s: float) -> tuple[Optional[int], str, str]:
    """(returncode, stdout, stderr); returncode None when killed at the timeout or on interruption."""
    if _STOP.is_set():
        return None, "", ""
    proc = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    track(proc)
    try:
        out, err = proc.communicate(timeout=max(0.05, timeout_s))
        if _STOP.is_set():
            return None, "", ""
        return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return None, "", ""
    finally:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()
        untrack(proc)


def _main_thread(threads: list[dict[str, Any]], pid: int) -> Optional[dict[str, Any]]:
    for t in threads:
        if t.get("os_thread_id") == pid:
            return t
    for t in threads:
        if t.get("thread_name") == "MainThread":
            return t
    return threads[0] if threads else None


def parse_pyspy(text: str, pid: int) -> Optional[list[dict[str, Any]]]:
    try:
        threads = json.loads(text)
    except ValueError:
        return None
    if not isinstance(threads, list):
        return None
    t = _main_thread([t for t in threads if isinstance(t, dict)], pid)
    if t is None:
        return []
    frames = t.get("frames", [])
    if not isinstance(frames, list):
        return None  # not py-spy's shape: unread, never an empty stack (a thread with no Python)
    return [
        {"file": f.get("filename", ""), "line": int(f.get("line") or 0), "function": f.get("name", "")}
        for f in frames
        if isinstance(f, dict)
    ]


_PYSTACK_THREAD = re.compile(r"^Traceback for thread (\d+)")
_PYSTACK_EMPTY = re.compile(r"^The frame stack for thread \d+ is empty", re.M)
_PYSTACK_FRAME = re.compile(r'^\s*(?:\(Python\)\s*)?File "(.*)", line (\d+), in (.*)$')


def parse_pystack(text: str, pid: int) -> Optional[list[dict[str, Any]]]:
    threads: dict[int, list[dict[str, Any]]] = {}
    current: Optional[list[dict[str, Any]]] = None
    for line in text.splitlines():
        m = _PYSTACK_THREAD.match(line)
        if m:
            current = threads.setdefault(int(m.group(1)), [])
            continue
        m = _PYSTACK_FRAME.match(line)
        if m and current is not None:
            current.append({"file": m.group(1), "line": int(m.group(2)), "function": m.group(3).strip()})
    if not threads:
        # pystack's own words for a thread that runs no Python (an interpreter starting or exiting)
        return [] if _PYSTACK_EMPTY.search(text) else None
    frames = threads.get(pid) or next(iter(threads.values()))
    return list(reversed(frames))  # pystack prints the most recent call last


TOOLS = ("py-spy", "pystack")


def read_stack(pid: int, timeout_s: float, target_uid: int = -1, tools: Sequence[str] = TOOLS) -> StackRead:
    """The main thread's stack by py-spy, else pystack; the refusal's cause when neither reads."""
    tried = []
    last_err = ""
    for tool, argv, parse in (
        ("py-spy", ["dump", "--json", "--pid", str(pid)], parse_pyspy),
        ("pystack", ["remote", str(pid)], parse_pystack),
    ):
        if tool not in tools:
            continue
        exe = find_tool(tool)
        if exe is None:
            continue
        tried.append(tool)
        rc, out, err = run_tool([exe, *argv], timeout_s)
        if rc is None:
            return StackRead(
                None,
                tool,
                f"{tool} did not answer within {timeout_s:.1f} s (killed)",
                "look at the /proc state: a rank in D state waits on the driver or a file system; "
                "raise --timeout",
                timed_out=True,
            )
        frames = parse(out, pid) if rc == 0 else None
        if frames is not None:
            return StackRead(frames, tool)
        if not os.path.exists(f"/proc/{pid}"):
            return StackRead(None, tool, "the process exited", "")
        cause, fix = ptrace_refusal(target_uid)
        if cause:
            return StackRead(None, tool, cause, fix)
        if rc == 0:
            # It attached and answered, in a shape this parser does not know (another version, or a
            # wrapper of the same name): saying "exited with 0" would read as success.
            head = out.strip().splitlines()[0][:80] if out.strip() else "nothing"
            last_err = f"{tool} answered, but not in a shape pgdoctor reads: {head!r}"
        else:
            last_err = (err.strip().splitlines() or [f"{tool} exited with {rc}"])[-1][:200]
    if not tried:
        return StackRead(
            None,
            "",
            f"no stack tool: {' nor '.join(tools) or 'none'} installed or allowed",
            "pip install py-spy (a dependency of pgdoctor on Linux), or opt the job into "
            "pgdoctor's socket (pgdoctor.instrument())",
        )
    return StackRead(
        None, tried[-1], last_err, "see the tool's message; pgdoctor.instrument() in the job avoids ptrace"
    )


def _cap_eff() -> int:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("CapEff:"):
                    return int(line.split()[1], 16)
    except (OSError, ValueError):
        pass
    return 0


def ptrace_scope() -> Optional[int]:
    try:
        with open("/proc/sys/kernel/yama/ptrace_scope") as fh:
            return int(fh.read().strip())
    except (OSError, ValueError):
        return None


def ptrace_refusal(
    target_uid: int, euid: Optional[int] = None, cap_eff: Optional[int] = None, scope: Optional[int] = None
) -> tuple[str, str]:
    """Why the kernel refuses ptrace to this process, and the one fix; ('', '') when none of the
    known causes holds. Order: another uid (root needed whatever the rest), Yama's scope, the
    capability a container dropped."""
    euid = os.geteuid() if euid is None else euid
    cap_eff = _cap_eff() if cap_eff is None else cap_eff
    scope = ptrace_scope() if scope is None else scope
    has_cap = bool(cap_eff >> CAP_SYS_PTRACE & 1)
    if target_uid >= 0 and target_uid != euid and not has_cap:
        return (
            f"ptrace denied: the rank runs as uid {target_uid}, pgdoctor as uid {euid}",
            "run pgdoctor hang as root (sudo pgdoctor hang)"
            if target_uid == 0
            else f"run pgdoctor hang as that user (sudo -u '#{target_uid}' pgdoctor hang) or as root",
        )
    if scope == 3:
        return (
            "ptrace denied: kernel.yama.ptrace_scope is 3 (no attach at all until reboot)",
            "opt the job into pgdoctor's socket (pgdoctor.instrument() or pgdoctor run): it needs no ptrace",
        )
    if scope == 2 and not has_cap:
        return (
            "ptrace denied: kernel.yama.ptrace_scope is 2 (only CAP_SYS_PTRACE may attach)",
            "run pgdoctor hang as root (sudo pgdoctor hang)",
        )
    if scope == 1 and not has_cap:
        return (
            "ptrace denied: kernel.yama.ptrace_scope is 1 (only ancestors may attach)",
            "sudo pgdoctor hang, or (changes system state) sudo sysctl kernel.yama.ptrace_scope=0",
        )
    if euid == 0 and not has_cap:
        return (
            "ptrace denied: no CAP_SYS_PTRACE (a container that dropped it)",
            "add the capability: docker run --cap-add SYS_PTRACE; Kubernetes: "
            "securityContext.capabilities.add "
            "[SYS_PTRACE]",
        )
    return "", ""
