"""A symptom that holds only if its communicator never came up: look further down its log.

NCCL's socket connect retries and its interface list naming docker bridges / veth pairs
(rules/net_texts.py), and c10d's warning of one failed attempt to reach the store (rules/rendezvous.py:
every rank reached the store once any communicator of the job came up) are failures only when the log
ends, or the job fails, before this process's communicator finished its init ("Init COMPLETE",
"Connected all rings" / "trees"). A rule sees the 48
lines after its hit (text/scan.py), and a healthy init of 8 GPUs on each of two nodes prints hundreds of
channel and ring lines between the interface list and its "Init COMPLETE". So such a row marks its
event with the process whose init it waits for (facts[UNTIL_UP]: NCCL's "host:pid:" prefix, or "" for
any process), and here the rest of that log is read once per source (bytes in chunks; only lines that
hold one of NCCL's up-markers are looked at): the event stays only if no up-marker of that process
follows it. A failure of the job in between needs nothing here: the symptom's tier puts it behind.
A source that cannot be read again (standard input) keeps its events.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from pgdoctor.diagnose.event import UNTIL_UP, Event
from pgdoctor.diagnose.text.reader import Source

# What NCCL prints once a communicator is up (init.cc, graph/connect.cc, 2.4-2.29).
_UP_MARKERS = (b"Init COMPLETE", b"Connected all rings", b"Connected all trees", b"Init SUCCESS")


def _up_lines(src: Source, after: int) -> Optional[list[tuple[int, bytes]]]:
    """(line number, line) of every line past physical line `after` that holds an up-marker, or None
    when the source cannot be read again."""
    try:
        chunks = src.chunks()
    except OSError:
        return None
    out: list[tuple[int, bytes]] = []
    seen = 0  # newlines before `carry`
    carry = b""
    try:
        for chunk in chunks:
            data = carry + chunk
            cut = data.rfind(b"\n") + 1
            whole, carry = data[:cut], data[cut:]
            _collect(whole, seen, after, out)
            seen += whole.count(b"\n")
    except OSError:
        return None
    _collect(carry, seen, after, out)
    return out


def _collect(data: bytes, seen: int, after: int, out: list[tuple[int, bytes]]) -> None:
    if not data or not any(m in data for m in _UP_MARKERS):
        return
    for k, line in enumerate(data.split(b"\n")):
        no = seen + k + 1
        if no > after and any(m in line for m in _UP_MARKERS):
            out.append((no, line))


def settle(events: list[Event], sources: Sequence[Source]) -> list[Event]:
    """`events` without those whose process's communicator came up further down their log."""
    pending: dict[int, list[Event]] = {}
    for e in events:
        if UNTIL_UP in e.facts and 0 <= e.source_index < len(sources):
            pending.setdefault(e.source_index, []).append(e)
    if not pending:
        return events
    gone: set[int] = set()
    for index, evs in pending.items():
        ups = _up_lines(sources[index], min(e.line for e in evs))
        if ups is None:
            continue
        for e in evs:
            proc = str(e.facts[UNTIL_UP]).encode()
            if any(no > e.line and proc in line for no, line in ups):
                gone.add(id(e))
    return [e for e in events if id(e) not in gone]
