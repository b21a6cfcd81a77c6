"""The console sink: every line pgdoctor prints to a terminal or a pipe (reports, notes, skipped
files, errors naming a file) passes through one writer that neutralises terminal control
(model/redact.py: console_safe), so no file name or log text can clear the screen, retitle the
window or overwrite a line, whichever renderer or message printed it. Installed once by main()
on sys.stdout and sys.stderr."""

from __future__ import annotations

import io
from typing import Any, TextIO

from pgdoctor.model.redact import console_safe


class ConsoleSink(io.TextIOBase):
    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, s: str) -> int:
        text = console_safe(s)
        try:
            self._stream.write(text)
        except UnicodeEncodeError:
            # A console that is not UTF-8 (LANG=C, PYTHONIOENCODING=ascii: cron, minimal images):
            # what its encoding cannot hold is written as \u escapes, never an exit 4.
            enc = self.encoding
            self._stream.write(text.encode(enc, "backslashreplace").decode(enc, "replace"))
        return len(s)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._stream, "encoding", "utf-8") or "utf-8"

    @property
    def errors(self) -> Any:  # type: ignore[override]
        return getattr(self._stream, "errors", "strict")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def install() -> None:
    import sys

    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, ConsoleSink):
            setattr(sys, name, ConsoleSink(stream))
