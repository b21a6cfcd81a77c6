"""From a source's bytes to events: scan for hits, normalise the lines around each, and let the
category modules read them (first module that recognises a hit wins; pyexc runs last)."""

from __future__ import annotations

import bisect
import functools
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Optional

from pgdoctor.diagnose.text.reader import Source, needs_decoding
from pgdoctor.model import lazy_re

if TYPE_CHECKING:
    from pgdoctor.diagnose.event import Event, Hit
    from pgdoctor.diagnose.text.normalize import Line
    from pgdoctor.diagnose.text.scan import Window

# The rule catalogue, the scanner, the events and the worker pool are imported when a log is
# read, not with this module: compiling the rows' patterns is most of diagnose's start-up
# (0.2 s), and an input of profiler traces or Nsight exports alone never needs them.

__all__ = ["hit_events", "source_events", "sources_events"]


@functools.cache
def _modules() -> tuple[ModuleType, ...]:
    from pgdoctor.diagnose.rules import MODULES

    return tuple(MODULES)


@dataclass
class SourceStats:
    name: str
    index: int
    bytes: int = 0
    lines: int = 0
    hits: int = 0
    counted: dict[str, int] = field(default_factory=dict)  # hits counted, not read (budget.py)


def hit_events(hit: Hit) -> list[Event]:
    for mod in _modules():
        evs = mod.parse(hit)
        if evs:
            return evs
    return []


# Windows of hits a few lines apart overlap: a run of them is normalised once, as one block of
# lines, instead of every line once per window (a log with a hit on every line cost 73 times the
# work). Only runs of short lines are merged, where every window holds the same bytes of a line.
RUN_MAX_LINES = 2048
RUN_MAX_LINE_BYTES = 4096


def _runs(windows: Iterator[Window]) -> Iterator[list[Window]]:
    run: list[Window] = []
    end = -1
    for w in windows:
        last = w.first_line + len(w.lines) - 1
        if run and (w.first_line > end + 1 or last - run[0].first_line >= RUN_MAX_LINES):
            yield run
            run, end = [], -1
        run.append(w)
        end = max(end, last)
    if run:
        yield run


def _normalised(run: list[Window]) -> Iterator[tuple[Window, list[Line], list[int]]]:
    """Each window of the run with its logical lines and their line numbers."""
    from pgdoctor.diagnose.text.normalize import logical_lines

    first = run[0].first_line
    raw = list(run[0].lines)
    merged = len(run) > 1 and all(len(line) <= RUN_MAX_LINE_BYTES for line in raw)
    for w in run[1:] if merged else ():
        end = first + len(raw)  # first line number not yet in the block
        tail = w.lines[end - w.first_line :] if first <= w.first_line <= end else None
        if tail is None or any(len(line) > RUN_MAX_LINE_BYTES for line in tail):
            merged = False  # not one contiguous block of short lines: the windows one by one
            break
        raw.extend(tail)
    if not merged:
        for w in run:
            lines = logical_lines(w.lines, w.first_line)
            yield w, lines, [ln.no for ln in lines]
        return
    lines = logical_lines(raw, first)
    nos = [ln.no for ln in lines]
    for w in run:
        lo = bisect.bisect_left(nos, w.first_line)
        hi = bisect.bisect_right(nos, w.first_line + len(w.lines) - 1)
        yield w, lines[lo:hi], nos[lo:hi]


LOG = "log"


def sources_events(
    sources: Sequence[Source],
    kind_of: Optional[Callable[[Source], str]] = None,
) -> Iterator[tuple[str, list[Event], SourceStats]]:
    """(kind, events, stats) of every source, in order. `kind_of(source)` says what a file is
    (LOG when not given; it runs where the file is read, so a job directory's files are told
    apart by the workers too); only logs are read, the others come back without events. Many
    files are shared among worker processes (a thousand ranks' logs on a many-core login node),
    a few are read here. Events carry the source's index in `sources`."""
    workers = files_workers(sources)
    if workers <= 1:
        for i, src in enumerate(sources):
            yield from _batch_events([(i, src)], kind_of, nested=True)
        return
    job = functools.partial(_batch_events, kind_of=kind_of)
    # Sixteen tasks per worker: few enough that handing out tasks and taking back results costs
    # the parent little (a task per 16 of 10,000 files cost it a second of CPU that the workers
    # needed), enough that no worker idles long at the end.
    per_task = max(FILES_PER_TASK, -(-len(sources) // (16 * workers)))
    batches = [
        [(i, sources[i]) for i in range(k, min(len(sources), k + per_task))]
        for k in range(0, len(sources), per_task)
    ]
    from pgdoctor.diagnose.text.parallel import map_in_workers

    for batch in map_in_workers(job, batches, workers):
        yield from batch


FILES_PER_TASK = 16


def files_workers(sources: Sequence[Source]) -> int:
    """Worker processes for a set of files: one unless there are many files (or much data) to read."""
    on_disk = [s for s in sources if s.path]
    if len(on_disk) < 2 * FILES_PER_TASK:
        return 1
    from pgdoctor.diagnose.text.parallel import MIN_PARALLEL_BYTES, default_workers

    size = 0
    for s in on_disk:
        try:
            size += os.path.getsize(s.path or "")
        except OSError:
            pass
    return default_workers(max(size, MIN_PARALLEL_BYTES) if len(on_disk) >= 256 else size, files=True)


def _batch_events(
    batch: list[tuple[int, Source]], kind_of: Optional[Callable[[Source], str]], nested: bool = False
) -> list[tuple[str, list[Event], SourceStats]]:
    """`nested`: in the parent, where a big file may be scanned by workers of its own."""
    out: list[tuple[str, list[Event], SourceStats]] = []
    for i, src in batch:
        kind = kind_of(src) if kind_of is not None else LOG
        if kind != LOG:
            out.append((kind, [], SourceStats(src.name, i)))
        else:
            out.append((kind, *source_events(src, i, nested=nested)))
    return out


def source_events(source: Source, index: int, nested: bool = True) -> tuple[list[Event], SourceStats]:
    """Events of one source; `nested=False` in a worker process, which may not start its own."""
    if source.caseless:  # a paste retyped in lower case (text/recase.py): every row reads it caselessly
        with lazy_re.caseless():
            return _source_events(source, index, nested)
    return _source_events(source, index, nested)


def _source_events(source: Source, index: int, nested: bool) -> tuple[list[Event], SourceStats]:
    from pgdoctor.diagnose.event import Hit
    from pgdoctor.diagnose.text.parallel import MIN_PARALLEL_BYTES, default_workers, scan_file
    from pgdoctor.diagnose.text.scan import ScanStats, scan_chunks

    scan = ScanStats()
    events: list[Event] = []
    by_line: dict[int, list[Event]] = {}
    windows: Iterator[Window]
    size = os.path.getsize(source.path) if nested and source.path and os.path.isfile(source.path) else 0
    workers = default_workers(size) if size >= MIN_PARALLEL_BYTES else 1
    if source.path and workers > 1 and not needs_decoding(source.path):
        windows = scan_file(source.path, workers, scan)
    else:
        windows = scan_chunks(source.chunks(), scan)
    for run in _runs(windows):
        for win, lines, nos in _normalised(run):
            target = win.hit_line
            lo, hi = bisect.bisect_left(nos, target), bisect.bisect_right(nos, target)
            # the hit line's logical lines; none when it was joined to a wrapped line before it
            idxs = list(range(lo, hi)) if hi > lo else ([lo - 1] if lo > 0 else [])
            for i in idxs:
                evs = hit_events(Hit(source.name, lines, i, index))
                events.extend(evs)
                if evs:
                    by_line.setdefault(target, []).extend(evs)
    # Copies of a line that were counted instead of read are occurrences of what it said; they go
    # to the first event of the source with the same identity, which deduplication keeps.
    if scan.budget.repeats_of:
        first: dict[tuple[object, ...], Event] = {}
        for ev in events:
            first.setdefault(ev.dedupe, ev)
        for line_no, extra in scan.budget.repeats_of.items():
            for ev in by_line.get(line_no, ()):
                rep = first[ev.dedupe]
                rep.facts["occurrences"] = rep.facts.get("occurrences", 1) + extra
    counted = {k: v for k, v in scan.budget.summary().items() if v}
    return events, SourceStats(source.name, index, scan.bytes, scan.lines, scan.hits, counted)


def cap_notes(sources: list[dict[str, Any]]) -> list[str]:
    """Info notes for the report: where a source reached the cap of windows read, and what was
    counted instead of read after it. A cap never changes the answer silently."""
    notes = []
    for s in sources:
        if "cap_reads" not in s:
            continue
        # the counts come with their zeros left out (sources_events keeps what is non-zero)
        notes.append(
            f"{s['name']}: {s['cap_reads']} hit lines were read in full by line {s.get('cap_line', 0)}; "
            "after it "
            f"{s.get('past_cap_read', 0)} line(s) of a kind not seen before were read and "
            f"{s.get('past_cap_counted', 0)} "
            "repeating a kind already read were counted"
            + (
                f", {s['past_cap_unsorted']} counted without sorting (too many kinds)"
                if s.get("past_cap_unsorted")
                else ""
            )
        )
    return notes
