"""Stream the events of a Chrome/Kineto trace without loading the file: gzip transparently.

    for kind, item in scan(path):   # ("meta", (key, value)) or ("event", {...})

The top-level object is walked key by key; `traceEvents` is decoded one element at a time
with the json module's C scanner over a sliding text buffer, so memory is the buffer plus one
event, whatever the file's size. Flow, instant and counter events are stepped over unread, and
on a GPU trace (`gpu_only`) one C regex pass finds the few kinds of event a breakdown reads.
benchmarks/bench_traces.py measures this reader against json.load and ijson's C backend
(yajl2_c) on the largest shared traces; it is the fastest of the three there (docs/diagnose.md).
Also reads pgdoctor's own `rank<N>.events.jsonl` (one event per line). Standard library only:
the benchmark loads this file on its own.
"""

from __future__ import annotations

import gzip
import io
import json
import json.scanner
import re
import zlib
from collections.abc import Iterator
from typing import IO, Any

CHUNK = 1 << 20
_BLANKS = re.compile(r"[ \t\n\r]*")  # matches the empty string too: never None
_SEP = re.compile(r"[ \t\n\r,]*")  # matches the empty string too: never None
# Events no analysis here reads, which Kineto writes with "ph" first: flows (s, f: a third of a
# GPU trace), instants (i) and counters (C). They are stepped over without decoding when they
# are flat or hold one flat object (args); anything else is decoded as usual.
_SKIP = re.compile(r'\{\s*"ph":\s*"[sfiC]"')
# The start of every event a GPU breakdown reads, as Kineto writes it ("ph", "cat", "name" first).
_GPU_WANTED = re.compile(
    r'\{\s*"ph":\s*"X",\s*"cat":\s*"(?:kernel|gpu_memcpy|gpu_memset|cuda_runtime|cuda_driver|'
    r'user_annotation|cpu_op",\s*"name":\s*"(?i:ProfilerStep|enumerate\(DataLoader|'
    r'[^"]*DataLoader[^"]*__next__|data))'
)
_TAIL = 256  # a wanted event's start that the buffer's end may cut
_TRAILER = 1 << 16  # Kineto's keys after traceEvents: a few hundred bytes
_BASE_TIME = re.compile(r'"baseTimeNanoseconds"\s*:\s*(\d{1,21})')
_MAX_EVENT = 8 << 20
_DECODER = json.JSONDecoder()
# The C scanner itself (what raw_decode calls, minus a Python frame per event).
_SCAN_ONCE = json.scanner.make_scanner(_DECODER)  # type: ignore[attr-defined,arg-type]


class TraceError(ValueError):
    """The file is not a readable trace (truncated, not JSON, no traceEvents)."""


def open_text(path: str) -> IO[str]:
    raw = open(path, "rb")  # noqa: SIM115  (the wrapper returned owns it and closes it)
    stream: Any = gzip.GzipFile(fileobj=raw) if raw.peek(2)[:2] == b"\x1f\x8b" else raw
    return io.TextIOWrapper(stream, encoding="utf-8", errors="replace")


class _Buffer:
    def __init__(self, f: IO[str]):
        self.f = f
        self.text = ""
        self.pos = 0
        self.eof = False

    def more(self) -> bool:
        if self.eof:
            return False
        chunk = self.f.read(CHUNK)
        if not chunk:
            self.eof = True
            return False
        self.text = self.text[self.pos :] + chunk
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next non-blank character ('' at the end of the file)."""
        while True:
            # One C regex match per buffer: a Python loop per blank took a minute for the
            # gigabyte of blanks that 1 MB of gzip holds.
            n = len(self.text)
            self.pos = _BLANKS.match(self.text, self.pos).end()  # type: ignore[union-attr]
            if self.pos < n:
                return self.text[self.pos]
            if not self.more():
                return ""

    def expect(self, char: str) -> None:
        got = self.peek()
        if got != char:
            raise TraceError(f"expected {char!r}, found {got or 'end of file'!r}")
        self.pos += 1

    def value(self) -> Any:
        self.peek()
        while True:
            try:
                obj, end = _DECODER.raw_decode(self.text, self.pos)
            except json.JSONDecodeError as exc:
                # A value cut by the buffer's end decodes after more text; at EOF it is an error.
                # Each refill decodes again from its start: past _MAX_EVENT that is no trace.
                if len(self.text) - self.pos > _MAX_EVENT:
                    raise TraceError(f"a value larger than {_MAX_EVENT >> 20} MiB") from None
                if self.more():
                    continue
                raise TraceError(f"not JSON: {exc.msg}") from None
            # A number at the buffer's end may continue in the next chunk.
            if end == len(self.text) and not self.eof and self.more():
                continue
            self.pos = end
            return obj


def scan(path: str, gpu_only: bool = False) -> Iterator[tuple[str, Any]]:
    """("meta", (key, value)) for each top-level key but traceEvents, ("event", dict) for each event.
    `gpu_only` (a Kineto trace of a GPU run): only the events a GPU breakdown reads are decoded
    (GPU events, runtime calls, annotations, the steps and DataLoader ops among the CPU ops),
    found by one C regex pass over the text; the keys after traceEvents are not read."""
    if path.endswith(".jsonl"):
        yield from _scan_lines(path)
        return
    with open_text(path) as f:
        buf = _Buffer(f)
        first = buf.peek()
        if first == "":
            raise TraceError("an empty file: the profiler did not write the trace (a rank stopped before it)")
        if first == "[":  # the bare-array form of the Chrome trace format
            yield from (_gpu_events(buf) if gpu_only else _events(buf))
            return
        buf.expect("{")
        if buf.peek() == "}":
            return
        while True:
            key = buf.value()
            buf.expect(":")
            if key == "traceEvents":
                if gpu_only:
                    buf.expect("[")
                    yield from _gpu_events(buf)
                    return
                yield from _events(buf)
            else:
                yield "meta", (key, buf.value())
            nxt = buf.peek()
            if nxt == "}":
                return
            buf.expect(",")


def _events(buf: _Buffer) -> Iterator[tuple[str, Any]]:
    buf.expect("[")
    # The hot loop: one raw_decode per event, separators skipped by one regex match; the buffer
    # is refilled only when an event runs past its end.
    decode, sep, skip = _SCAN_ONCE, _SEP.match, _SKIP.match
    text, pos = buf.text, buf.pos
    while True:
        pos = sep(text, pos).end()  # type: ignore[union-attr]
        if pos >= len(text):
            buf.pos = pos
            if not buf.more():
                raise TraceError("traceEvents: end of file before ']'")
            text, pos = buf.text, buf.pos
            continue
        if text[pos] == "]":
            buf.text, buf.pos = text, pos + 1
            return
        if skip(text, pos):
            after = _skipped_end(text, pos)
            if after:
                pos = after
                continue
        try:
            ev, end = decode(text, pos)
        except (StopIteration, json.JSONDecodeError):
            buf.pos = pos
            if len(text) - pos > _MAX_EVENT:  # decoded again at each refill: bounded
                raise TraceError(f"traceEvents: an event larger than {_MAX_EVENT >> 20} MiB") from None
            if buf.more():
                text, pos = buf.text, buf.pos
                continue
            raise TraceError(f"traceEvents: not JSON at character {pos}") from None
        if end == len(text) and not buf.eof:  # a number may go on in the next chunk
            buf.pos = pos
            if buf.more():
                text, pos = buf.text, buf.pos
                continue
        pos = end
        if type(ev) is dict:
            yield "event", ev


def _gpu_events(buf: _Buffer) -> Iterator[tuple[str, Any]]:
    decode, find = _SCAN_ONCE, _GPU_WANTED.finditer
    text, pos = buf.text, buf.pos
    while True:
        for m in find(text, pos):
            start = m.start()
            try:
                ev, end = decode(text, start)
            except (StopIteration, json.JSONDecodeError):
                if len(text) - start > _MAX_EVENT or buf.eof:
                    raise TraceError(f"traceEvents: not JSON at character {start}") from None
                pos = start  # cut by the buffer's end: decoded again after the refill
                break
            pos = end
            yield "event", ev
        else:
            pos = max(pos, len(text) - _TAIL)
        buf.pos = pos
        if not buf.more():
            # Kineto writes its trailer after traceEvents; its time base puts the events on the
            # wall clock (runs.py tells runs apart by it). The last chunk is still in the buffer.
            base = _BASE_TIME.search(text, max(0, len(text) - _TRAILER))
            if base:
                yield "meta", ("baseTimeNanoseconds", int(base.group(1)))
            return
        text, pos = buf.text, buf.pos


def _skipped_end(text: str, pos: int) -> int:
    """Where a skippable event starting at pos ends, or 0 to decode it instead (nested deeper,
    cut by the buffer, or a brace inside a string that would put the next event off its start)."""
    close = text.find("}", pos + 1)
    if close < 0:
        return 0
    inner = text.find("{", pos + 1, close)
    if inner >= 0:  # one nested object (args): the event ends at the brace after it
        if text.find("{", inner + 1, close) >= 0:
            return 0
        close = text.find("}", close + 1)
        if close < 0 or text.find("{", inner + 1, close) >= 0:
            return 0
    after = _SEP.match(text, close + 1).end()  # type: ignore[union-attr]
    if after >= len(text) or text[after] not in "{]":
        return 0
    return after


def _scan_lines(path: str) -> Iterator[tuple[str, Any]]:
    with open_text(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                ev = json.loads(line)
            except json.JSONDecodeError:
                continue  # a rank killed mid-write leaves a partial last line
            if isinstance(ev, dict):
                yield "event", ev


def looks_like_trace(path: str, head_bytes: int = 65536) -> bool:
    """By content: a JSON object whose first keys include traceEvents or Kineto's header keys,
    or a pgdoctor rank event file. Cheap: reads the first 64 KiB only."""
    if path.endswith(PROFILER_SUFFIXES):
        return True
    head = _head_text(path, head_bytes)
    text = head.lstrip()
    if text.startswith("["):  # the bare-array form of the Chrome trace format: events from the start
        first = text[1:].lstrip()
        return first.startswith("{") and '"ph"' in head and '"ts"' in head
    if not text.startswith("{"):
        return False
    return '"traceEvents"' in head or ('"schemaVersion"' in head and '"deviceProperties"' in head)


def _head_text(path: str, head_bytes: int) -> str:
    """The first `head_bytes` characters, gunzipped when gzip. A gzip cut short gives what it
    holds (GzipFile raises EOFError instead, and a truncated trace was then read as an empty
    log): the trace reader names it as skipped with its reason."""
    try:
        with open(path, "rb") as raw:
            data = raw.read(1 << 20)
    except OSError:
        return ""
    if data[:2] == b"\x1f\x8b":
        try:
            data = zlib.decompressobj(47).decompress(data, head_bytes)
        except zlib.error:
            return ""
    return data[:head_bytes].decode("utf-8", "replace")


# File names a trace can have: torch.profiler's `*.pt.trace.json(.gz)`, export_chrome_trace's
# `*.json`, pgdoctor's rank event files. Only these are opened to look at their content.
TRACE_SUFFIXES = (".json", ".json.gz", ".events.jsonl")
# Names only a profiler writes (tensorboard_trace_handler, pgdoctor.instrument): traces whatever
# their content, so an empty one (a rank killed before its profiler wrote) or one cut at its start
# is a `skipped:` line with its reason, not an empty log that passes as "no failure found".
PROFILER_SUFFIXES = (".pt.trace.json", ".pt.trace.json.gz", ".events.jsonl")
# Nsight Systems exports are SQLite databases, recognised by this header whatever their name.
SQLITE_MAGIC = b"SQLite format 3\x00"
