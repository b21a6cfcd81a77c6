"""A wall-clock bound on work in the main thread that has no timeout of its own (reading a pipe
that never ends, scanning a huge directory): SIGALRM interrupts even a blocking open() or read()."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class DeadlineExceeded(BaseException):
    """Like KeyboardInterrupt, not an Exception: a reader's `except Exception` (one bad file is
    a skip) must never turn the deadline into "skipped" and a clean exit 0."""


def _raise(signum: int, frame: Any) -> None:
    raise DeadlineExceeded()


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
        yield
        return
    previous = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
