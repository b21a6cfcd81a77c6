"""Child processes that pgdoctor starts (local ranks of a probe, a lab run): started in their
own session, watched against a deadline, and killed as a group when the deadline passes, when
pgdoctor is interrupted, or when it exits. Nothing pgdoctor starts outlives it.
"""

from __future__ import annotations

import atexit
import math
import os
import re
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional, Union

_LIVE: set[subprocess.Popen[bytes]] = set()
_LOCK = threading.Lock()
_TERMINATION = threading.Event()


def note_termination() -> None:
    """Called by the SIGTERM handler: every wait loop of pgdoctor stops at its next poll."""
    _TERMINATION.set()


def termination_requested() -> bool:
    return _TERMINATION.is_set()


def kill_group(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
    """A signal to the child's whole process group (the child leads it: own session). Safe only
    while the child is not reaped: its unreaped pid keeps the group id from being reused."""
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def reap_with_group(proc: subprocess.Popen[bytes]) -> Optional[int]:
    """Popen.poll(), but a child that has exited takes its process group with it first: helpers
    it started (a data loader's workers, a server the user's code spawned) share its group and
    would outlive it. The group is killed while the child is still a zombie (waitid WNOWAIT), so
    its id cannot have been reused by then."""
    if proc.returncode is None:
        try:
            exited = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            exited = None
        if exited is not None:
            kill_group(proc)
    return proc.poll()


# A guarded child (run_children(guarded=True)) -> the write end of its guard's pipe, held by this
# process only: closing it (or this process dying) makes the guard kill all it started and exit.
_GUARD_PIPES: dict[subprocess.Popen[bytes], int] = {}
# How long a guard gets to kill its job and exit before its group is SIGKILLed instead.
GUARD_WAIT_S = 5.0


def end_children(procs: Sequence[subprocess.Popen[bytes]]) -> None:
    """Kill and reap each child with everything it started. A guarded child's guard is told through
    its pipe and kills every descendant of its command, in whatever session they are (a SIGKILL to
    the group would kill the guard before it could); the group is SIGKILLed after it, or instead of
    it after GUARD_WAIT_S."""
    with _LOCK:
        pipes = [_GUARD_PIPES.pop(p) for p in procs if p in _GUARD_PIPES]
    for fd in pipes:
        os.close(fd)
    end = time.monotonic() + (GUARD_WAIT_S if pipes else 0.0)
    left = [p for p in procs if reap_with_group(p) is None]
    while left and time.monotonic() < end:
        time.sleep(0.01)
        left = [p for p in left if reap_with_group(p) is None]
    for p in left:
        kill_group(p)
    for p in procs:
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        with _LOCK:
            _LIVE.discard(p)


def kill_all_children() -> None:
    """Kill every child (and its group, or its guard's job) this process started and has not reaped yet."""
    with _LOCK:
        procs = list(_LIVE)
    end_children(procs)


atexit.register(kill_all_children)


def track(proc: subprocess.Popen[bytes]) -> None:
    """A child started elsewhere (in its own session) that must die with pgdoctor too."""
    with _LOCK:
        _LIVE.add(proc)


def untrack(proc: subprocess.Popen[bytes]) -> None:
    with _LOCK:
        _LIVE.discard(proc)


# Temporary files of work that runs in probe threads: on Ctrl-C the main thread exits and takes
# the daemon threads with it before their `finally` blocks run, so the process removes them.
_TEMP: set[str] = set()


# The owner of a temp directory holds an exclusive flock on OWNER_LOCK inside it for as long as
# it lives; the kernel drops the lock when the owner dies, however it dies. Unlike the pid in the
# name, the lock cannot be fooled by a reused pid or by an owner in another pid namespace that
# shares /tmp (which looks dead from here and lost its live directory to the sweep).
OWNER_LOCK = "owner.lock"
# A directory without its lock file is one being created right now, or one of an older
# pgdoctor; past this age (and without a pid to ask) it is nobody's.
UNLOCKED_AGE_S = 600.0
_HELD: dict[str, int] = {}  # path -> the fd holding its owner lock


def temp_file(prefix: str, suffix: str) -> str:
    fd, path = tempfile.mkstemp(prefix=f"{prefix}{os.getpid()}-", suffix=suffix)
    os.close(fd)
    with _LOCK:
        _TEMP.add(path)
    return path


def owned_dir(prefix: str, tracked: bool = False) -> str:
    """A fresh temp directory under `prefix`, locked by this process (OWNER_LOCK) until
    remove_temp; clean_stale_temp removes it once its owner is gone. `tracked`: also removed at
    this process's exit (a directory of work that runs in a probe thread)."""
    import fcntl

    path = tempfile.mkdtemp(prefix=prefix)
    fd = os.open(os.path.join(path, OWNER_LOCK), os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, f"{os.getpid()}\n".encode())
    with _LOCK:
        _HELD[path] = fd
        if tracked:
            _TEMP.add(path)
    return path


def temp_dir(kind: str, tracked: bool = False) -> str:
    """A temporary directory named `pgdoctor-KIND-PID-...`, owned as owned_dir says."""
    return owned_dir(f"pgdoctor-{kind}-{os.getpid()}-", tracked)


def remove_temp(path: str) -> None:
    """Remove a file of temp_file or a directory of owned_dir/temp_dir (and stop tracking it)."""
    import shutil

    with _LOCK:
        _TEMP.discard(path)
        fd = _HELD.pop(path, None)
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.unlink(path)
        except OSError:
            pass
    if fd is not None:
        os.close(fd)  # after the removal: a sweep never sees it unlocked while it exists


_OWNED = re.compile(r"^pgdoctor-[a-z]+(?:-[a-z]+)*-(\d+)-")
# Owned directories whose names carry no pid (verify's run directories).
UNNAMED_PREFIXES = ("pgdoctor-verify-",)


def _owner_gone(path: str, name: str) -> Optional[bool]:
    """Whether the owner of a temp entry is gone: its lock when it has one, else the pid in its
    name, else (a directory of UNNAMED_PREFIXES) its age. None: not an entry of ours."""
    import fcntl

    pid = _OWNED.match(name)
    if os.path.isdir(path):
        try:
            fd = os.open(os.path.join(path, OWNER_LOCK), os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            if pid is None:
                if not name.startswith(UNNAMED_PREFIXES):
                    return None
                return time.time() - os.stat(path).st_mtime > UNLOCKED_AGE_S
            fd = -1
        if fd >= 0:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except OSError:
                return False  # its owner is alive
            finally:
                os.close(fd)
    if pid is None:
        return None
    try:
        os.kill(int(pid.group(1)), 0)
        return False  # its owner still runs
    except ProcessLookupError:
        return True
    except (OSError, ValueError, OverflowError):
        return None


def clean_stale_temp(root: Optional[str] = None) -> list[str]:
    """Remove pgdoctor's temporary files and directories whose owning process is gone (SIGKILL,
    OOM kill, a node's reboot): ours by name and by user, and gone by _owner_gone. The one sweep,
    run at every command's start and before every verify run. Returns what it removed."""
    import shutil

    root = root or tempfile.gettempdir()
    removed: list[str] = []
    try:
        entries = os.scandir(root)
    except OSError:
        return removed
    with entries:
        for entry in entries:
            if not entry.name.startswith("pgdoctor-"):
                continue
            try:
                if entry.is_symlink() or entry.stat(follow_symlinks=False).st_uid != os.getuid():
                    continue
                if not _owner_gone(entry.path, entry.name):
                    continue
            except OSError:
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                try:
                    os.unlink(entry.path)
                except OSError:
                    continue
            removed.append(entry.path)
    return removed


@atexit.register
def _remove_all_temp() -> None:
    with _LOCK:
        paths = list(_TEMP)
    for path in paths:
        remove_temp(path)


@dataclass(frozen=True)
class ChildOutcome:
    index: int
    argv: tuple[str, ...]
    returncode: Optional[int]  # None: killed by us at the deadline
    timed_out: bool
    duration_s: float
    stdout: str
    stderr: str
    # The kernel's state letter when we killed it (/proc/PID/stat): T stopped, D in
    # uninterruptible sleep (a driver or file-system call), S sleeping, R running; "" not killed.
    state_at_kill: str = ""
    # time.monotonic() when the parent saw it end (CLOCK_MONOTONIC is one clock for every
    # process of the machine, so it compares with times the children record themselves).
    ended_at: float = 0.0

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


# Third-party warnings that say nothing about the job: torch's CPU wheels warn at import that
# NumPy is missing (torch works without it). Kept out of the user's output, in pgdoctor's own
# process (pgdoctor.cli) and in every child it starts.
QUIET_WARNINGS = ("Failed to initialize NumPy",)


def quiet_env(env: Mapping[str, str]) -> dict[str, str]:
    extra = ",".join(f"ignore:{m}:UserWarning" for m in QUIET_WARNINGS)
    mine = env.get("PYTHONWARNINGS", "")
    return {**env, "PYTHONWARNINGS": f"{mine},{extra}" if mine else extra}


PR_SET_PDEATHSIG = 1


# A child killed by its own deadline ends with this signal (returncode -14).
OWN_DEADLINE_SIGNAL = signal.SIGALRM
# The child's own deadline comes this long after the parent's, so that normally the parent,
# which reports what it saw, is the one that kills.
OWN_DEADLINE_MARGIN_S = 5.0


def _start_guarded(
    argv: Sequence[str], env: dict[str, str], cwd: Optional[str], out: Any, err: Any, preexec: Any
) -> subprocess.Popen[bytes]:
    """`argv` as the command of a guard (probes/guard.py), the guard in a session of its own."""
    from pgdoctor.probes import guard

    read, write = os.pipe()
    try:
        p = subprocess.Popen(
            guard.argv(read, argv),
            env=guard.own_env(),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
            preexec_fn=preexec,
            pass_fds=(read,),
        )
    except BaseException:  # catches-interrupts: closes the pipe and re-raises
        os.close(write)
        raise
    finally:
        os.close(read)
    with _LOCK:
        _LIVE.add(p)
        _GUARD_PIPES[p] = write
    # At once, not in a thread that could still write once end_children closed the fd (and its
    # number went to another file): the guard reads it first thing, so only a larger environment
    # than the pipe's buffer waits, for a few milliseconds.
    guard.send_env(write, env)
    return p


def die_with_parent(
    own_deadline_s: Optional[float] = None, death_signal: bool = True
) -> Optional[Callable[[], None]]:
    """A preexec function that makes the kernel SIGKILL the child when pgdoctor dies, however it
    dies (the OOM killer, Slurm after its grace period): no rank outlives its parent. prctl is
    looked up here, before the fork, so the child only calls into libc.

    With `own_deadline_s`, the child also carries its own deadline: an alarm, which survives
    exec and whose default action ends the process in the kernel, even while the child's
    Python is stuck in a C call holding the GIL. It covers what the death signal cannot: a
    parent that is alive but stuck, or stopped."""
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux: the atexit and signal cleanup still apply
        prctl = None
    parent = os.getpid()
    if not death_signal:
        prctl = None
    alarm_s = max(1, math.ceil(own_deadline_s + OWN_DEADLINE_MARGIN_S)) if own_deadline_s is not None else 0

    def arm() -> None:
        if prctl is not None and death_signal:
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died between fork and prctl
            os._exit(1)
        if alarm_s:  # exec resets a handler the parent may have to the default action
            signal.alarm(alarm_s)

    return arm if prctl is not None or alarm_s else None


def describe_exit(returncode: Optional[int]) -> str:
    """'status 1', 'status -9 (signal 9, SIGKILL: ...)', 'status -14 (own deadline passed)'."""
    if returncode is None:
        return "killed at the deadline"
    if returncode == -OWN_DEADLINE_SIGNAL:
        return f"status {returncode} (own deadline passed)"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            return f"status {returncode} (signal {-returncode})"
        if name == "SIGKILL":  # nothing in the process sends it: look outside (dmesg, the scheduler)
            name += ": usually the kernel's OOM killer or the scheduler"
        return f"status {returncode} (signal {-returncode}, {name})"
    return f"status {returncode}"


def process_started() -> float:
    """When this process started, on the time.monotonic() clock (both count from boot on
    Linux); now when /proc cannot say."""
    now = time.monotonic()
    try:
        with open("/proc/self/stat", encoding="ascii", errors="replace") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime", encoding="ascii") as fh:
            uptime = float(fh.read().split()[0])
        age = uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return now
    return now - age if 0 <= age < 3600 else now


def process_state(pid: int) -> str:
    """The state letter of a live process ("" when it cannot be read)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            stat = fh.read()
    except OSError:
        return ""
    # The command name in parentheses may hold spaces and parentheses: the state follows the last ')'.
    rest = stat[stat.rfind(")") + 1 :].split()
    return rest[0] if rest else ""


_GIVEN_PORTS: set[int] = set()
# How far below the kernel's ephemeral range the ports are drawn (1024 is the floor).
_PORT_SPAN = 12000


def ephemeral_low() -> int:
    """The first port of the kernel's ephemeral range (Linux's default when it cannot be read)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as fh:
            return int(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on `host` now, for ranks that bind it only after seconds of importing torch:
    drawn below the kernel's ephemeral range and never given twice by this process. A port from
    bind(port 0) lies in the ephemeral range, which every outgoing connection of the host draws from
    too: on a busy host one took the ranks' MASTER_PORT in that window (EADDRINUSE)."""
    import random

    low = ephemeral_low()
    for _ in range(200):
        port = random.randrange(max(1024, low - _PORT_SPAN), max(1025, low))
        if port in _GIVEN_PORTS:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind((host, port))
            except OSError:
                continue
        _GIVEN_PORTS.add(port)
        return port
    raise OSError(f"no free TCP port on {host} below the ephemeral range ({low})")


_PORT_TAKEN = re.compile(r"EADDRINUSE|address already in use", re.IGNORECASE)


def port_taken(outcomes: Sequence[ChildOutcome], port: int) -> bool:
    """A rank said `port` was in use: a line of its stderr names the port and EADDRINUSE (torch's
    TCPStore, probes/store.py's listen), not any "address already in use" of the user's own code."""
    digits = re.compile(rf"(?<!\d){port}(?!\d)")
    return any(
        _PORT_TAKEN.search(line) and digits.search(line) for o in outcomes for line in o.stderr.splitlines()
    )


def with_free_port(
    spawn: Callable[[int], list[ChildOutcome]], port: Optional[int] = None
) -> list[ChildOutcome]:
    """`spawn(port)` with a port from free_port (or `port`, tried first), spawned once more with a
    new port when a rank reports the first one in use: the port is free when chosen, but the ranks
    bind it seconds later (after importing torch), and any process of the host may bind it between."""
    first = free_port() if port is None else port
    outcomes = spawn(first)
    if port_taken(outcomes, first):
        outcomes = spawn(free_port())
    return outcomes


@dataclass(frozen=True)
class WaitPolicy:
    """How long run_children waits for its children, and what ends the wait early."""

    timeout_s: float
    """The deadline from the start (restarted by progress, see `progress`)."""
    grace_s: float = 0.0
    """Once any child has failed, the others get this long (0: until the deadline)."""
    progress: Optional[Callable[[], int]] = None
    """Polled about every 0.2 s: units of work finished; each increase restarts the deadline."""
    stop_on: Collection[int] = ()
    """Exit statuses that end the wait at once (no grace): the others are killed."""
    hard_timeout_s: Optional[float] = None
    """Bounds the whole wait however the progress goes (default: timeout_s without progress)."""
    unit_timeout_s: Optional[float] = None
    """The deadline after a unit of progress when the first unit costs more (start-up)."""
    give_up: Optional[Callable[[], bool]] = None
    """Polled with `progress`: True ends the wait as the deadline does (the rest are killed)."""


def run_children(
    argvs: Sequence[Sequence[str]],
    envs: Sequence[Mapping[str, str]],
    wait: Union[WaitPolicy, float],
    cwd: Optional[str] = None,
    output_limit: int = 4 << 20,
    guarded: bool = False,
) -> list[ChildOutcome]:
    """Start one process per argv (with its env), wait for all as `wait` says (a WaitPolicy, or
    a plain timeout in seconds), kill the rest.

    Output goes to temp files (not pipes, which deadlock when a child writes more than the pipe
    holds while we wait on another child); the files are removed before returning. With
    `grace_s` > 0, once any child has failed the others get that long before being killed:
    they are usually blocked in a collective with the dead one. With `progress` (polled about
    every 0.2 s: how many units of work the children have finished, e.g. the runs of a batch),
    the deadline restarts, `timeout_s` (or `unit_timeout_s`, when the first unit costs more
    than the others, e.g. it includes the start-up) from then, each time it grows.
    A child that exits with a status in `stop_on` ends the wait at once (no grace): the others
    are killed. `hard_timeout_s` bounds the whole wait however the progress goes (default:
    `timeout_s` without `progress`, unbounded with it).

    Every child dies with this process (PR_SET_PDEATHSIG) and, where the whole wait is bounded,
    also at its own deadline a few seconds after ours (see die_with_parent).

    `guarded`: each child runs under a guard (probes/guard.py, as `pgdoctor run`'s job does), a
    child subreaper that kills every descendant of the child when it ends, when it is killed here, or
    when this process dies: what the child started in a session of its own (os.setsid,
    start_new_session: a user's server) leaves its process group, but not the guard's tree.
    """
    assert len(argvs) == len(envs)
    w = wait if isinstance(wait, WaitPolicy) else WaitPolicy(float(wait))
    timeout_s, grace_s, progress, stop_on = w.timeout_s, w.grace_s, w.progress, w.stop_on
    hard_timeout_s, unit_timeout_s = w.hard_timeout_s, w.unit_timeout_s
    procs: list[subprocess.Popen[bytes]] = []
    files = []
    start = time.monotonic()
    deadline = start + timeout_s
    hard = hard_timeout_s if hard_timeout_s is not None else (timeout_s if progress is None else None)
    hard_end = start + hard if hard is not None else math.inf
    # A guard dies by its pipe closing, not by the death signal, which would leave its job behind.
    preexec = die_with_parent(hard, death_signal=not guarded)
    ends: dict[int, float] = {}
    timed_out: set[int] = set()
    states: dict[int, str] = {}
    done, polled, stopped = 0, start, False
    try:
        for argv, env in zip(argvs, envs):
            # Closed after the children are reaped, below; a with-block would close them too early.
            out = tempfile.TemporaryFile()  # noqa: SIM115
            err = tempfile.TemporaryFile()  # noqa: SIM115
            files.append((out, err))
            if guarded:
                p = _start_guarded(argv, quiet_env(env), cwd, out, err, preexec)
            else:
                p = subprocess.Popen(
                    list(argv),
                    env=quiet_env(env),
                    cwd=cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    start_new_session=True,
                    preexec_fn=preexec,
                )
                with _LOCK:
                    _LIVE.add(p)
            procs.append(p)
        first_failure: Optional[float] = None
        while len(ends) < len(procs):
            if _TERMINATION.is_set() and threading.current_thread() is threading.main_thread():
                raise KeyboardInterrupt  # the handler's own exception was lost (see note_termination)
            now = time.monotonic()
            if progress is not None and now - polled >= 0.2:
                polled = now
                units = progress()
                if units > done:
                    done, deadline = (
                        units,
                        now + (unit_timeout_s if unit_timeout_s is not None else timeout_s),
                    )
                if w.give_up is not None and w.give_up():
                    deadline = now
            for i, p in enumerate(procs):
                if i not in ends and reap_with_group(p) is not None:
                    ends[i] = now
                    if p.returncode != 0 and first_failure is None:
                        first_failure = now
                    if p.returncode in stop_on:
                        stopped = True
            limit = min(deadline, hard_end)
            if first_failure is not None and grace_s > 0:
                limit = min(limit, first_failure + grace_s)
            if stopped:
                limit = now
            if now >= limit:
                for i, p in enumerate(procs):
                    if i not in ends:
                        states[i] = process_state(p.pid)
                        ends[i] = now
                        timed_out.add(i)
                end_children([p for i, p in enumerate(procs) if i in timed_out])
                break
            time.sleep(0.02)
    finally:
        end_children(procs)  # those still running; the pipes of guards that have ended
    outcomes = []
    for i, (p, (out, err)) in enumerate(zip(procs, files)):
        texts = []
        for fh in (out, err):
            fh.seek(0)
            texts.append(fh.read(output_limit).decode("utf-8", "replace"))
            fh.close()
        outcomes.append(
            ChildOutcome(
                index=i,
                argv=tuple(p.args),  # type: ignore[arg-type]
                returncode=None if i in timed_out else p.returncode,  # type: ignore[arg-type]
                timed_out=i in timed_out,
                duration_s=ends.get(i, time.monotonic()) - start,
                stdout=texts[0],
                stderr=texts[1],
                state_at_kill=states.get(i, ""),
                ended_at=ends.get(i, time.monotonic()),
            )
        )
    return outcomes
