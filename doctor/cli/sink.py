"""The console sink: every line pgdoctor prints to a terminal or a pipe (reports, notes, skipped
files, errors naming a file) passes through one writer that neutralises terminal control
(model/redact.py: console_safe), so no file name or log text can clear the screen, retitle the
window or overwrite a line, whichever renderer or message printed it. Installed once by main()
on sys.stdout and sys.stderr.

What goes to stderr (errors, notes, progress) is also redacted here: an error line echoes what the
user typed or named (`explain hf_...`, `--only`, a path holding user:password@host), and no report's
scrub sees it. stdout is not: it carries reports and snapshots, scrubbed as data before rendering,
and documents such as `explain`'s playbooks whose examples must print as written.

A reader that leaves (`pgdoctor list | head -1`) ends the run as ReaderLeft, which is no OSError:
click answers an EPIPE it sees with sys.exit(1), which a script reads as "findings found"."""

from __future__ import annotations

import io
from typing import Any, TextIO

from pgdoctor.model.redact import console_safe, redact_text


class ReaderLeft(BaseException):
    """The reader of stdout or stderr went away (EPIPE). A BaseException, like KeyboardInterrupt: a
    handler's \"one bad file is a skip\" must not turn it into more writes into the closed pipe; main()
    ends the run with exit 0, as it did for BrokenPipeError."""


class ConsoleSink(io.TextIOBase):
    def __init__(self, stream: TextIO, redact: bool = False):
        self._stream = stream
        self._redact = redact

    def write(self, s: str) -> int:
        text = console_safe(redact_text(s) if self._redact else s)
        try:
            self._stream.write(text)
        except BrokenPipeError:
            raise ReaderLeft from None
        except UnicodeEncodeError:
            # A console that is not UTF-8 (LANG=C, PYTHONIOENCODING=ascii: cron, minimal images):
            # what its encoding cannot hold is written as \u escapes, never an exit 4.
            enc = self.encoding
            self._stream.write(text.encode(enc, "backslashreplace").decode(enc, "replace"))
        return len(s)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise ReaderLeft from None

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
            setattr(sys, name, ConsoleSink(stream, redact=name == "stderr"))
