"""Scanning one big plain file with several processes.

With CPython's `re` as the engine the anchor search is the only per-byte work and it holds the
GIL, so a large regular file is cut into byte ranges that worker processes search
independently. Each worker returns the offset of the first anchor of every line that may be
worth reading; the parent then runs the sequential scanner over the file with those offsets
instead of searching, so the windows, line numbers and counts are the sequential scanner's by
construction (a test compares them). Memory stays flat in every process (8 MiB reads).
Hyperscan searches faster than a worker could hand its results back, so with it the default is
one process. Gzip files and stdin are read sequentially.
"""

from __future__ import annotations

import bisect
import contextlib
import ctypes
import multiprocessing
import multiprocessing.pool
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Optional, TypeVar

from pgdoctor.diagnose.text.scan import (
    ANCHORS,
    MAX_LINE,
    ScanStats,
    Window,
    anchor_positions,
    engine_name,
    scan_chunks,
    worth,
)

MIN_PARALLEL_BYTES = 64 << 20
READ_BYTES = 8 << 20
_OVERLAP = max(len(a) for a in ANCHORS) - 1
T = TypeVar("T")
R = TypeVar("R")


def default_workers(size: int, files: bool = False) -> int:
    """Processes for `size` bytes: PGDOCTOR_SCAN_WORKERS when set; else one below 64 MiB, and one
    for a single file that Hyperscan searches faster than workers could return their results;
    else up to 4, one per CPU. `files`: many files, shared out whole."""
    env = os.environ.get("PGDOCTOR_SCAN_WORKERS")
    if env is not None:
        try:
            return max(1, int(env))
        except ValueError:
            return 1
    if (
        size < MIN_PARALLEL_BYTES
        or (engine_name() != "re" and not files)
        or ("fork" not in multiprocessing.get_all_start_methods())
    ):
        return 1
    return max(
        1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    )


# How long one worker's result may take before the rest is computed here. A forked child inherits the
# parent's locks as they were at the fork; one held by another thread then (a scan a deadline abandoned
# in a thread box) is never released in the child, which waits forever. Seen twice in a test run on a
# loaded host. A worker's share of a 1 GiB file takes about 40 s with CPython's re on one core.
WORKER_RESULT_TIMEOUT_S = 180.0


def map_in_workers(fn: Callable[[T], R], items: Sequence[T], workers: int) -> Iterator[R]:
    """fn over items in `workers` forked processes, results in order. The workers end with the
    call: when it finishes, raises (a deadline) or is abandoned, they are terminated. A result that
    does not come within WORKER_RESULT_TIMEOUT_S is computed here instead, with all that follow."""
    ctx = multiprocessing.get_context("fork")
    try:
        pool = ctx.Pool(
            min(workers, len(items)) or 1, initializer=_worker_init, initargs=(os.getpid(), _prctl())
        )
    except (OSError, RuntimeError):  # no process or thread to be had (ulimit -u, -v): in this process
        yield from map(fn, items)
        return
    try:
        results = pool.imap(fn, items)
        for done in range(len(items)):
            try:
                value = results.next(WORKER_RESULT_TIMEOUT_S)
            except multiprocessing.TimeoutError:
                _end(pool)
                yield from map(fn, items[done:])
                return
            yield value
    finally:
        _end(pool)


# A worker that SIGTERM does not end within this is killed: Pool.terminate() sends SIGTERM and then
# waits for every worker without a bound. A child that deadlocked right after the fork (see above) has
# not yet reset the parent's SIGTERM handler, a Python one that never runs while the child waits in C:
# terminate() then waited forever (a test worker sat 300 s in its join).
TERMINATE_GRACE_S = 2.0


def _end(pool: multiprocessing.pool.Pool) -> None:
    """pool.terminate(), SIGKILLing any worker still alive TERMINATE_GRACE_S after it began. The
    timer fires after terminate() has stopped the pool's worker handler (its first step), so no new
    worker is started in place of a killed one."""
    timer = threading.Timer(TERMINATE_GRACE_S, _kill_workers, (pool,))
    timer.daemon = True
    timer.start()
    try:
        pool.terminate()
    finally:
        timer.cancel()


def _kill_workers(pool: multiprocessing.pool.Pool) -> None:
    for proc in list(getattr(pool, "_pool", ())):  # the Pool's own list of its worker processes
        with contextlib.suppress(OSError, ValueError, AttributeError):
            proc.kill()


@contextlib.contextmanager
def beside(fn: Callable[[], R], enabled: bool = True) -> Iterator[Callable[[], R]]:
    """fn() computed in a forked process while the caller goes on with other work; the context
    gives a function that returns its result (waiting for it). The child sees the caller's memory
    as it was at the fork: nothing is pickled on the way in, only the result on the way back. It
    is killed when the context ends, and dies with its parent. When the child cannot give a
    result (it failed, or fork is missing), fn() runs here instead, so errors are the caller's.
    Not `enabled`: fn() runs here, when asked."""
    if not enabled or "fork" not in multiprocessing.get_all_start_methods():
        yield fn
        return
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    parent, prctl = os.getpid(), _prctl()

    def child() -> None:
        _worker_init(parent, prctl)
        code = 1  # no result: the parent computes it again and sees the error
        try:
            send.send(fn())
            code = 0
        finally:
            # Ended here, not by returning: multiprocessing would flush the stdio buffers this
            # process inherited, and the parent's unwritten output would appear twice.
            os._exit(code)

    proc = ctx.Process(target=child, daemon=True)
    try:
        proc.start()
    except OSError:  # no process to be had (ulimit -u, -v): here, when asked
        send.close()
        recv.close()
        yield fn
        return
    send.close()

    def result() -> R:
        try:
            return recv.recv()  # type: ignore[no-any-return]
        except (EOFError, OSError):  # the child ended without a result
            return fn()

    try:
        yield result
    finally:
        proc.kill()
        proc.join()
        recv.close()


def _prctl() -> Optional[Callable[..., int]]:
    """libc's prctl, looked up in the parent: dlopen in a child forked from a process with other
    threads can wait forever on the loader's lock as another thread held it at the fork."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl  # type: ignore[no-any-return]
    except (OSError, AttributeError):  # not Linux: the pool's pipes still end the worker
        return None


def _worker_init(parent: int, prctl: Optional[Callable[..., int]]) -> None:
    # The parent's handlers turn SIGTERM into an exception; a worker that the pool terminates
    # must just end, quietly. And it dies with its parent (a SIGKILLed pgdoctor leaves no worker).
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if prctl is not None:
        prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)


def _scan_range(path: str, start: int, end: int) -> list[int]:
    """File offsets of the first anchor of each line, for anchors that start in [start, end).
    A line is left out only when it is whole in the block and shows no failure word: the parent
    would skip it too. A line cut by a block edge, or longer than MAX_LINE, is the parent's call."""
    hits: list[int] = []
    with open(path, "rb") as fh:
        fh.seek(start)
        pos = start
        while pos < end:
            want = min(READ_BYTES, end - pos)
            block = fh.read(want + _OVERLAP)
            if not block:
                break
            limit = min(want, len(block))
            line_end = -1
            for off in anchor_positions(block, 0, len(block)):
                if off >= limit:
                    break
                if off < line_end:
                    continue  # one hit per line
                le = block.find(b"\n", off)
                ls = block.rfind(b"\n", 0, off) + 1
                line_end = le if le >= 0 else len(block)
                whole = le >= 0 and (ls > 0 or pos == 0) and le - ls < MAX_LINE - 1
                if whole and not worth(block, ls, le, True):
                    continue
                hits.append(pos + off)
            pos += limit
            fh.seek(pos)
    return hits


def _scan_range_of(job: tuple[str, int, int]) -> list[int]:
    return _scan_range(*job)


def scan_file(path: str, workers: int, stats: Optional[ScanStats] = None) -> Iterator[Window]:
    """Windows around every hit of a regular file, in file order, as scan.scan_chunks yields them."""
    size = os.path.getsize(path)
    step = -(-size // workers) if size else 1
    ranges = [(i, min(size, i + step)) for i in range(0, size, step)] or [(0, 0)]
    found: list[int] = []
    for part in map_in_workers(_scan_range_of, [(path, a, b) for a, b in ranges], len(ranges)):
        found.extend(part)

    def positions(start: int, end: int) -> list[int]:
        return found[bisect.bisect_left(found, start) : bisect.bisect_left(found, end)]

    with open(path, "rb") as fh:
        yield from scan_chunks(iter(lambda: fh.read(READ_BYTES), b""), stats, positions)
