"""The client of a rank's cooperative socket (pgdoctor.trace.live): one connect, one JSON answer
with its stacks, open ranges and flight recorder. No ptrace: it works where py-spy is refused,
for a process of the same uid (the directory is 0700). Paths go through /proc/PID/root, so a rank
in a container of this node is reached at its own /tmp, by the PID it has there."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Mapping
from typing import Any, Optional

from pgdoctor.probes.torch_server import listening_paths

MAX_ANSWER = 64 << 20


def own_pids(pid: int, proc: str = "/proc") -> list[str]:
    """The PIDs the process has, this namespace's first: a rank in a container (a PID namespace of
    its own) names its socket by the PID it sees itself, the last of /proc/PID/status's NSpid."""
    pids = [str(pid)]
    try:
        with open(f"{proc}/{pid}/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("NSpid:"):
                    pids += [p for p in reversed(line.split()[1:]) if p not in pids]
                    break
    except OSError:
        pass
    return pids


def socket_path(pid: int, uid: int, environ: Optional[Mapping[str, str]]) -> Optional[str]:
    base = (environ or {}).get("PGDOCTOR_LIVE_DIR") or f"/tmp/pgdoctor-live-{uid}"
    pids = own_pids(pid)
    # A namespace's PID may be another process's PID here: such a name counts only where the
    # process itself listens on it (by its socket's inode, in /proc/PID/net/unix).
    mine = listening_paths(pid) if len(pids) > 1 else []
    for own in pids:
        if own != str(pid) and f"{base}/{own}.sock" not in mine:
            continue
        for candidate in (f"{base}/{own}.sock", f"/proc/{pid}/root{base}/{own}.sock"):
            if len(candidate) < 104 and os.path.exists(candidate):
                return candidate
    return None


def ask(path: str, timeout_s: float, request: str = "full") -> Optional[dict[str, Any]]:
    """The rank's answer, or None (no answer within the timeout: it holds the GIL, or it is gone).
    `request` "progress" asks for the small answer (step counter, collective sequence number)."""
    end = time.monotonic() + max(0.05, timeout_s)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(max(0.05, timeout_s))
            s.connect(path)
            s.sendall(request.encode() + b"\n")
            chunks, size = [], 0
            while size < MAX_ANSWER:
                s.settimeout(max(0.01, end - time.monotonic()))
                chunk = s.recv(1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        data = json.loads(b"".join(chunks))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
