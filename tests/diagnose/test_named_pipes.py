"""A pipe named on the command line (`diagnose <(kubectl logs ...)`, a FIFO): read once and kept for
the second reading lookahead does (reopening a FIFO whose writer is gone blocked until --timeout,
600 s by default), and a FIFO nothing writes to is a one-line error, not a wait."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pgdoctor.diagnose.text.reader import SourceError, _open_pipe, open_sources

# A failed connect is a failure only if no communicator came up later: lookahead reads the log again.
LOG = (
    "[W socket.cpp:663] [c10d] The client socket has failed to connect to [node-3]:29500 "
    "(errno: 111 - Connection refused).\n"
    "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity)\n"
)


def _write_later(path: Path, data: str, delay_s: float = 0.0) -> threading.Thread:
    def write() -> None:
        with open(path, "w") as fh:  # blocks until the reader opens the FIFO
            time.sleep(delay_s)
            fh.write(data)

    t = threading.Thread(target=write, daemon=True)
    t.start()
    return t


def test_a_fifo_is_read_once_and_diagnosed_when_its_writer_has_gone(tmp_path: Path) -> None:
    fifo = tmp_path / "job.log"
    os.mkfifo(fifo)
    _write_later(fifo, LOG)
    p = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "diagnose", "--json", str(fifo)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 1, p.stderr
    assert '"RUN101"' in p.stdout


def test_a_fifo_nothing_writes_to_is_an_error_after_the_wait(tmp_path: Path) -> None:
    fifo = tmp_path / "never"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    with pytest.raises(
        SourceError, match=r"cannot read .*never: no process wrote to this pipe within 0\.3 s"
    ):
        _open_pipe(str(fifo), wait_s=0.3)
    assert time.monotonic() - t0 < 30


def test_a_writer_that_is_slow_to_write_is_waited_for_and_nothing_is_lost(tmp_path: Path) -> None:
    fifo = tmp_path / "slow"
    os.mkfifo(fifo)
    writer = _write_later(fifo, LOG, delay_s=0.6)
    (src,) = open_sources([str(fifo)])
    first = b"".join(src.chunks())
    writer.join(10)
    assert first.decode() == LOG
    assert b"".join(src.chunks()) == first  # the second reading is the kept copy, not a reopen


def test_an_anonymous_pipe_named_by_its_fd_path_is_read(tmp_path: Path) -> None:
    r, w = os.pipe()
    try:
        os.write(w, LOG.encode())
        os.close(w)
        w = -1
        (src,) = open_sources([f"/proc/self/fd/{r}"])
        assert b"".join(src.chunks()).decode() == LOG
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)
