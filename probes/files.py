"""The one way pgdoctor reads a file a user names (--from, --config, --model): regular files only,
up to a size bound, so /dev/zero, a FIFO or a 50 GB file is a one-line error and never a hang or
an exhausted host."""

from __future__ import annotations

import codecs
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


# Named text inputs written on Windows or by an editor start with a byte-order mark: Notepad's
# UTF-8 one, PowerShell 5's `>` writes UTF-16 with one. json and tomllib refuse any BOM, and a
# config.json that `cat` shows fine was "not JSON: Unexpected UTF-8 BOM". UTF-32's BOMs go first:
# UTF-32-LE's starts with UTF-16-LE's.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def read_text_input(path: str, what: str, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """The file as text: UTF-8, or UTF-8, UTF-16 or UTF-32 with a byte-order mark (the mark dropped)."""
    data = read_input(path, what, max_bytes)
    encoding = next((enc for bom, enc in _BOMS if data.startswith(bom)), "utf-8")
    try:
        return data.decode(encoding)
    except UnicodeDecodeError:
        raise InputError(f"{what} {path} is not text in UTF-8 (nor UTF-16 or UTF-32 with a BOM)") from None
