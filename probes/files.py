"""The one way pgdoctor reads a file a user names (--from, --config, --model): regular files only,
up to a size bound, so /dev/zero, a FIFO or a 50 GB file is a one-line error and never a hang or
an exhausted host."""

from __future__ import annotations

import os
import stat

MAX_INPUT_BYTES = 256 << 20  # a snapshot of a large node is a few MB; a config a few KB


class InputError(ValueError):
    """A file the user named cannot be read as input (the CLI turns it into exit 2)."""


def read_input(path: str, what: str, max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    try:
        # O_NONBLOCK: opening a FIFO with no writer would otherwise block before fstat can refuse it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise InputError(f"cannot read {what} {path}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = (
                "a directory"
                if stat.S_ISDIR(st.st_mode)
                else "a FIFO"
                if stat.S_ISFIFO(st.st_mode)
                else "a device or socket"
            )
            raise InputError(f"{what} {path} is {kind}, not a regular file")
        if st.st_size > max_bytes:
            raise InputError(f"{what} {path} is {st.st_size} bytes; the limit is {max_bytes}")
        chunks, left = [], max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > max_bytes:  # it grew while we read it
            raise InputError(f"{what} {path} is over the limit of {max_bytes} bytes")
        return data
    except OSError as exc:
        raise InputError(f"cannot read {what} {path}: {exc.strerror}") from None
    finally:
        os.close(fd)


def read_text_input(path: str, what: str, max_bytes: int = MAX_INPUT_BYTES) -> str:
    data = read_input(path, what, max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{what} {path} is not UTF-8 text") from None
