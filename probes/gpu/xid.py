"""Xid events from the kernel log: /dev/kmsg, else the journal, else dmesg.

The first source that can be read wins and is named in `gpu.xid.source`; when none can be read
`gpu.xid.events` is Unavailable with each source's reason, so "no Xid" is never claimed without
a log.
Only `NVRM: Xid` lines inside the window (config gpu.xid_window_s) are kept.
"""

from __future__ import annotations

import errno
import os
from dataclasses import asdict
from datetime import datetime
from typing import Callable, Optional

from pgdoctor.knowledge.xid import parse_xid_line
from pgdoctor.model import Measurement, Reason, Unavailable
from pgdoctor.probes.base import ProbeContext, probe
from pgdoctor.probes.commands import CommandNotFound, CommandTimeout

DEFAULT_WINDOW_S = 86400.0
MAX_EVENTS = 200  # newest kept; a looping Xid can print thousands of lines
MAX_KMSG_BYTES = 32 << 20
COMMAND_TIMEOUT_S = 5.0

# (time_unix or None, text) per log line
Lines = list[tuple[Optional[float], str]]


class SourceError(Exception):
    def __init__(self, reason: Reason, detail: str):
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def _os_reason(exc: OSError) -> Reason:
    if exc.errno in (errno.EACCES, errno.EPERM):
        return Reason.NO_PERMISSION
    if exc.errno == errno.ENOENT:
        return Reason.NOT_PRESENT
    return Reason.ERROR


def _read_nonblocking(path: str) -> bytes:
    """/dev/kmsg hands out one record per read() and blocks at the end: read without blocking
    until EAGAIN. A regular file (a test fixture) ends with an empty read instead."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    chunks: list[bytes] = []
    size = 0
    try:
        while size < MAX_KMSG_BYTES:
            try:
                chunk = os.read(fd, 8192)
            except BlockingIOError:
                break
            except OSError as exc:
                if exc.errno == errno.EPIPE:  # records overwritten while reading: carry on
                    continue
                raise
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)


def read_kmsg(ctx: ProbeContext, now: float) -> Lines:
    """Records look like `6,1234,5678901234,-;NVRM: Xid ...` (priority, sequence, microseconds
    since boot, flags; text); continuation lines start with a space."""
    try:
        raw = _read_nonblocking(str(ctx.fs.path("/dev/kmsg")))
        uptime = float(ctx.fs.read_text("/proc/uptime").split()[0])
    except OSError as exc:
        raise SourceError(_os_reason(exc), f"/dev/kmsg: {exc.strerror or exc}") from None
    except (ValueError, IndexError):
        raise SourceError(Reason.ERROR, "/proc/uptime is unreadable") from None
    boot = now - uptime
    out: Lines = []
    for line in raw.decode("utf-8", "replace").splitlines():
        head, sep, text = line.partition(";")
        if not sep or line.startswith(" "):
            continue
        fields = head.split(",")
        try:
            when: Optional[float] = boot + int(fields[2]) / 1e6
        except (IndexError, ValueError):
            when = None
        out.append((when, text))
    return out


def _run(ctx: ProbeContext, argv: list[str]) -> str:
    try:
        res = ctx.commands.run(argv, COMMAND_TIMEOUT_S)
    except CommandNotFound:
        raise SourceError(Reason.NOT_PRESENT, f"{argv[0]}: command not found") from None
    except CommandTimeout as exc:
        raise SourceError(Reason.TIMEOUT, str(exc)) from None
    if res.returncode != 0:
        msg = (res.stderr.strip().splitlines() or [f"exit status {res.returncode}"])[-1]
        reason = Reason.NO_PERMISSION if "not permitted" in msg or "ermission" in msg else Reason.ERROR
        raise SourceError(reason, f"{argv[0]}: {msg}")
    return res.stdout


def read_journal(ctx: ProbeContext, now: float, since: float) -> Lines:
    """`journalctl -k -o short-unix`: `1700000000.123456 host kernel: NVRM: Xid ...`."""
    text = _run(
        ctx, ["journalctl", "-k", "-o", "short-unix", "--no-pager", "-q", "--since", f"@{int(since)}"]
    )
    out: Lines = []
    for line in text.splitlines():
        stamp, _, rest = line.partition(" ")
        try:
            out.append((float(stamp), rest))
        except ValueError:
            out.append((None, line))
    return out


def read_dmesg(ctx: ProbeContext, now: float) -> Lines:
    """`dmesg --time-format iso`: `2024-05-01T12:00:00,123456+00:00 NVRM: Xid ...`."""
    text = _run(ctx, ["dmesg", "--time-format", "iso"])
    out: Lines = []
    for line in text.splitlines():
        stamp, _, rest = line.partition(" ")
        try:
            out.append((datetime.fromisoformat(stamp.replace(",", ".")).timestamp(), rest))
        except ValueError:
            out.append((None, line))
    return out


def xid_events(lines: Lines, since: float) -> list[dict[str, object]]:
    events = []
    for when, text in lines:
        if when is not None and when < since:
            continue
        ev = parse_xid_line(text)
        if ev is None:
            continue
        d: dict[str, object] = asdict(ev)
        d["time_unix"] = round(when, 3) if when is not None else None
        d["line"] = text[text.find("NVRM:") :].strip()
        events.append(d)
    return events[-MAX_EVENTS:]


@probe("gpu_xid", area="gpu", level="quick", timeout_s=20.0)
def gpu_xid(ctx: ProbeContext) -> list[Measurement]:
    now = ctx.clock()
    window = float(ctx.config.get("gpu.xid_window_s", DEFAULT_WINDOW_S))
    since = now - window
    sources: list[tuple[str, Callable[[], Lines]]] = [
        ("/dev/kmsg", lambda: read_kmsg(ctx, now)),
        ("journalctl", lambda: read_journal(ctx, now, since)),
        ("dmesg", lambda: read_dmesg(ctx, now)),
    ]
    failures: list[SourceError] = []
    for name, read in sources:
        try:
            lines = read()
        except SourceError as exc:
            failures.append(exc)
            continue
        tried = "; ".join(f.detail for f in failures)
        return [
            Measurement(
                "gpu.xid.source", name, source=f"kernel log ({tried} first)" if tried else "kernel log"
            ),
            Measurement("gpu.xid.window_s", window, unit="s"),
            Measurement("gpu.xid.events", xid_events(lines, since), source=name),
        ]
    # No readable log is common (non-root with kernel.dmesg_restrict=1): record why, as data, so
    # the GPU area stays complete and the check can say that Xids were not looked at.
    reasons = {f.reason for f in failures}
    reason = Reason.NO_PERMISSION if Reason.NO_PERMISSION in reasons else failures[0].reason
    missing = Unavailable(reason, "kernel log not readable: " + "; ".join(f.detail for f in failures))
    return [
        Measurement("gpu.xid.source", missing),
        Measurement("gpu.xid.window_s", window, unit="s"),
        Measurement("gpu.xid.events", missing),
    ]
