"""The job's guard: the parent of the command `pgdoctor run` starts, so that nothing the job starts
outlives the job or pgdoctor.

A process group is not enough. torchrun (elastic's SubprocessHandler, torch 2.x) starts every rank in a
session of its own, and so do daemons and `setsid`; a launcher killed with SIGKILL leaves them running,
and a shell that exits leaves its background jobs. The guard is a child subreaper
(PR_SET_CHILD_SUBREAPER): whatever below it loses its parent is re-parented to the guard, not to init,
so the job's processes stay the guard's descendants, whichever session they moved to. When the command
ends, the guard SIGKILLs every descendant and every member of its process group, reaps them, and exits
as the command did (its code, or the same signal), so `run` reads the command's own status.

It also ends the job when pgdoctor ends, however pgdoctor ends (the OOM killer, a scheduler's SIGKILL
after its grace period): it reads a pipe whose write end only pgdoctor holds, and the kernel closes
that end when pgdoctor dies. pgdoctor writes the job's environment on that pipe as one JSON line first,
so the guard itself runs with PATH (and LD_LIBRARY_PATH) alone and is never taken for a rank.

    python -I guard.py FD -- COMMAND [ARG...]

Standard library only, and nothing of pgdoctor's imported: it starts before the job does.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Callable, Optional

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
ENV_TIMEOUT_S = 30.0  # pgdoctor writes the environment at once; a guard nobody talks to goes
POLL_S = 0.1
KILL_ROUNDS = 100  # a process that forks while it is killed: look again, this many times at most


def _prctl() -> Optional[Callable[..., int]]:
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl  # type: ignore[no-any-return]
    except (OSError, AttributeError):  # not Linux: the process group is all there is
        return None


def _proc_table() -> dict[int, tuple[str, int, int]]:
    """pid -> (state, ppid, process group), from /proc/PID/stat (the fields after the command's
    last ')': a command may hold spaces and parentheses)."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            table[int(name)] = (fields[0], int(fields[1]), int(fields[2]))
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
    return table


def job_processes(me: int) -> list[int]:
    """Every live process of the job: the guard's descendants (orphans included: they are re-parented
    to the guard) and the members of its process group, the guard excepted."""
    table = _proc_table()
    group = table.get(me, ("", 0, os.getpgid(0)))[2]
    children: dict[int, list[int]] = {}
    for pid, (_, ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), [me]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    found |= {pid for pid, (_, _, pgrp) in table.items() if pgrp == group}
    found.discard(me)
    return sorted(pid for pid in found if table.get(pid, ("Z",))[0] not in ("Z", "X"))


def reap_others(keep: int) -> None:
    """Reap every exited child but `keep` (the command: Popen reads its status)."""
    while True:
        try:
            info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        if info is None or info.si_pid == keep:
            return  # a later exit behind the command's is reaped on the next look
        try:
            os.waitpid(info.si_pid, 0)
        except ChildProcessError:
            return


def kill_job(me: int, keep: int) -> None:
    for _ in range(KILL_ROUNDS):
        left = job_processes(me)
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.02)
        reap_others(keep)


def _exit_as(returncode: int) -> None:
    if returncode < 0:  # ended by a signal: end by the same one, so `run` reads what the command got
        signal.signal(-returncode, signal.SIG_DFL)
        os.kill(os.getpid(), -returncode)
        time.sleep(1)
        sys.exit(128 - returncode)
    sys.exit(returncode)


def _read_env(fd: int) -> Optional[dict[str, str]]:
    data = b""
    end = time.monotonic() + ENV_TIMEOUT_S
    while b"\n" not in data:
        left = end - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 65536)
        if not chunk:
            return None
        data += chunk
    env = json.loads(data.split(b"\n", 1)[0])
    return {str(k): str(v) for k, v in env.items()}


def argv(fd: int, command: Sequence[str]) -> list[str]:
    """How pgdoctor starts a guard over `command`, reading the pipe `fd` (its usage line above)."""
    return [sys.executable, "-I", __file__, str(fd), "--", *command]


def own_env() -> dict[str, str]:
    """The guard's own environment: what starting a Python needs (an interpreter of a module system may
    need LD_LIBRARY_PATH for its libpython), and nothing that could make it look like a rank."""
    env = {"PATH": os.environ.get("PATH", os.defpath)}
    if "LD_LIBRARY_PATH" in os.environ:
        env["LD_LIBRARY_PATH"] = os.environ["LD_LIBRARY_PATH"]
    return env


def send_env(fd: int, env: dict[str, str]) -> None:
    """The command's environment, one JSON line on the guard's pipe (past the pipe's buffer a write
    waits for the guard to read it)."""
    data = (json.dumps(env) + "\n").encode()
    try:
        while data:
            data = data[os.write(fd, data) :]
    except OSError:
        pass  # the guard is gone (it failed to start): the job's exit status says so


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--" or not argv[0].isdigit():
        print("usage: python -I guard.py FD -- COMMAND [ARG...]", file=sys.stderr)
        return 2
    fd, command, me = int(argv[0]), argv[2:], os.getpid()
    prctl = _prctl()
    if prctl is not None:
        prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    # `run` forwards a Ctrl-C or SIGTERM to the job's whole group, the guard included: the command
    # takes it, and the guard ends when the command does. A handler, not SIG_IGN: exec resets a
    # handler to the default, but an ignored signal would stay ignored in the command.
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(s, lambda signum, frame: None)
    env = _read_env(fd)
    if env is None:
        return 1  # pgdoctor went before it said what to run

    def die_with_guard() -> None:
        # The command goes when the guard goes, even by SIGKILL (the guard then cannot kill it).
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() != me:
                os._exit(1)

    try:
        job = subprocess.Popen(command, env=env, preexec_fn=die_with_guard)
    except OSError as exc:
        print(f"pgdoctor run: {command[0]}: {exc.strerror}", file=sys.stderr)
        return 126 if isinstance(exc, PermissionError) else 127
    while True:
        ready = select.select([fd], [], [], POLL_S)[0]
        if ready and not os.read(fd, 4096):  # pgdoctor has ended, or is done with the job
            kill_job(me, job.pid)
            job.wait()
            return 128 + signal.SIGKILL
        reap_others(job.pid)
        try:
            ended = os.waitid(os.P_PID, job.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            ended = None
        if ended is not None:
            # Killed while the command is still a zombie: its pid (and group id) cannot be reused yet.
            kill_job(me, job.pid)
            _exit_as(job.wait())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
