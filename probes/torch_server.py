"""The client of torch's own per-rank worker server (torch.distributed.elastic.control_plane):
a rank that runs inside `worker_main()` with TORCH_WORKER_SERVER_SOCKET set serves HTTP on that
Unix socket, with the handlers `dump_traceback` (faulthandler's text of every thread),
`fr_trace_json` (its flight recorder), `pyspy_dump`, `wait_counter_values` and `ping` (torch 2.13;
`GET /handler/` lists them). No ptrace, no code of pgdoctor's in the job, and it works with gloo on
a CPU. The TCP servers of `torch.distributed.debug.start_debug_server` are not used: pgdoctor
opens no TCP connection to a job.

torchrun gives every local rank the same value, and two ranks cannot serve one path, so a job
makes it per rank (`.../ws` -> `.../ws-rank3.sock`): the rank's listening Unix sockets whose
path is the value or starts with it are its server (found through /proc/PID/fd and
/proc/PID/net/unix; paths through /proc/PID/root for a rank in a container)."""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
from collections.abc import Mapping
from typing import Any, Optional

VAR = "TORCH_WORKER_SERVER_SOCKET"
MAX_ANSWER = 64 << 20
_ACCEPTCON = 0x10000  # /proc/net/unix Flags: __SO_ACCEPTCON, a listening socket
_THREAD = re.compile(r"^(Current thread|Thread) (0x[0-9a-f]+)")
_FRAME = re.compile(r'^\s+File "(.*)", line (\d+) in (.*)$')


def listening_paths(pid: int) -> list[str]:
    """The paths of the Unix sockets this process listens on."""
    try:
        inodes = set()
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
        with open(f"/proc/{pid}/net/unix", encoding="utf-8", errors="replace") as fh:
            rows = fh.read().splitlines()[1:]
    except OSError:
        return []
    out = []
    for row in rows:
        cols = row.split()
        if len(cols) >= 8 and cols[6] in inodes and int(cols[3], 16) & _ACCEPTCON:
            out.append(cols[7])
    return out


def server_path(pid: int, environ: Optional[Mapping[str, str]]) -> Optional[str]:
    """The rank's worker-server socket, reachable from here, or None."""
    want = (environ or {}).get(VAR)
    if not want:
        return None
    found = [p for p in listening_paths(pid) if p == want or p.startswith(want)]
    for path in sorted(found, key=lambda p: p != want):
        for candidate in (path, f"/proc/{pid}/root{path}"):
            if len(candidate) < 108 and os.path.exists(candidate):
                return candidate
    return None


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout_s: float):
        super().__init__("localhost", timeout=timeout_s)
        self.path = path

    def connect(self) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self.path)
        self.sock = s


def ask(path: str, handler: str, timeout_s: float) -> Optional[bytes]:
    """One handler's answer (POST /handler/NAME), or None (no server, an error status, a timeout)."""
    conn = _UnixConnection(path, max(0.05, timeout_s))
    try:
        conn.request("POST", f"/handler/{handler}")
        resp = conn.getresponse()
        body = resp.read(MAX_ANSWER)
        return body if resp.status == 200 else None
    except (OSError, http.client.HTTPException):
        return None
    finally:
        conn.close()


def main_thread_stack(text: str) -> Optional[list[dict[str, Any]]]:
    """The main thread's frames (innermost first) from faulthandler's text of all threads: the
    last thread listed (CPython lists the newest first), never the handler's own "Current thread"."""
    blocks: list[tuple[str, list[dict[str, Any]]]] = []
    for line in text.splitlines():
        head = _THREAD.match(line)
        if head:
            blocks.append((head.group(1), []))
            continue
        m = _FRAME.match(line)
        if m and blocks:
            blocks[-1][1].append({"file": m.group(1), "line": int(m.group(2)), "function": m.group(3)})
    others = [frames for kind, frames in blocks if kind == "Thread"]
    return others[-1] if others else None


def read(path: str, timeout_s: float) -> tuple[Optional[list[dict[str, Any]]], Optional[Any]]:
    """The main thread's stack and the flight recorder (either None where not given)."""
    tb = ask(path, "dump_traceback", timeout_s)
    stack = main_thread_stack(tb.decode("utf-8", "replace")) if tb is not None else None
    fr_raw = ask(path, "fr_trace_json", timeout_s)
    try:
        fr = json.loads(fr_raw) if fr_raw else None
    except ValueError:
        fr = None
    return stack, fr if isinstance(fr, dict) and fr.get("entries") is not None else None
