"""From a source's bytes to events: scan for hits, normalise the lines around each, and let the
category modules read them (first module that recognises a hit wins; pyexc runs last)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules import (
    cuda_oom,
    driver_env,
    gpu_hardware,
    host_oom,
    launcher,
    mismatch,
    nccl_errors,
    process_crash,
    pyexc,
    rendezvous,
    timeouts,
)
from pgdoctor.diagnose.text.normalize import logical_lines
from pgdoctor.diagnose.text.parallel import default_workers, scan_file
from pgdoctor.diagnose.text.reader import Source, needs_decoding
from pgdoctor.diagnose.text.scan import ScanStats, Window, scan_chunks

# Order matters where two modules could read the same line: specific before generic.
MODULES = (gpu_hardware, host_oom, cuda_oom, nccl_errors, driver_env, mismatch, rendezvous,
           timeouts, process_crash, launcher, pyexc)


@dataclass
class SourceStats:
    name: str
    index: int
    bytes: int = 0
    lines: int = 0
    hits: int = 0


def hit_events(hit: Hit) -> list[Event]:
    for mod in MODULES:
        evs = mod.parse(hit)
        if evs:
            return evs
    return []


def source_events(source: Source, index: int) -> tuple[list[Event], SourceStats]:
    scan = ScanStats()
    events: list[Event] = []
    windows: Iterator[Window]
    workers = default_workers(os.path.getsize(source.path)) if source.path and os.path.isfile(source.path) else 1
    if source.path and workers > 1 and not needs_decoding(source.path):
        windows = scan_file(source.path, workers, scan)
    else:
        windows = scan_chunks(source.chunks(), scan)
    for win in windows:
        lines = logical_lines(win.lines, win.first_line)
        target = win.hit_line
        idxs = [i for i, ln in enumerate(lines) if ln.no == target]
        if not idxs:  # the hit line was joined to a wrapped line before it
            before = [i for i, ln in enumerate(lines) if ln.no < target]
            idxs = before[-1:]
        for i in idxs:
            events.extend(hit_events(Hit(source.name, lines, i, index)))
    return events, SourceStats(source.name, index, scan.bytes, scan.lines, scan.hits)
