"""Stable entry points of log diagnosis (used by `pgdoctor diagnose` and by the failure lab).

    diagnose_sources([(name, text), ...], flight_recorder_dirs=()) -> list[Finding]
    diagnose_paths([path, ...], flight_recorder_dirs=()) -> Report

Findings come root cause first; every later finding has facts["cascade_of"] = the root's code.
Facts are structured (rank, op, seq, bytes, requested_bytes, free_bytes, ...) and evidence
carries file and line numbers.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterable, Sequence
from typing import Any

from pgdoctor.diagnose.analyze import source_events
from pgdoctor.diagnose.causality import assemble
from pgdoctor.diagnose.event import Event
from pgdoctor.diagnose.flight import collectives, dump
from pgdoctor.diagnose.text.reader import Source, is_binary, is_pgdoctor_report, open_sources, text_sources
from pgdoctor.model import Finding, Report

FlightError = dump.DumpError


def _diagnose(sources: Iterable[Source], flight_recorder_dirs: Sequence[str]) -> tuple[list[Finding], dict[str, Any]]:
    events: list[Event] = []
    lines: dict[str, int] = {}
    meta_sources = []
    t0 = time.perf_counter()
    # Dumps found among the logs (a whole job directory was given) go to the flight recorder.
    found_dumps = []
    logs = []
    skipped_binary = []
    skipped_reports: list[str] = []
    for src in sources:
        if src.path and dump.looks_like_dump(src.path):
            found_dumps.append(src.path)
        elif src.listed and src.path and is_binary(src.path):
            skipped_binary.append(src.path)  # checkpoints, cores, images in a job directory
        elif src.listed and src.path and is_pgdoctor_report(src.path):
            skipped_reports.append(src.path)
        else:
            logs.append(src)
    flight_recorder_dirs = [*flight_recorder_dirs, *found_dumps]
    for i, src in enumerate(logs):
        evs, stats = source_events(src, i)
        events.extend(evs)
        lines[src.name] = stats.lines
        meta_sources.append({"name": src.name, "bytes": stats.bytes, "lines": stats.lines, "hits": stats.hits})
    meta: dict[str, Any] = {"sources": meta_sources}
    if skipped_binary:
        meta["skipped_binary_files"] = skipped_binary
    if skipped_reports:
        meta["skipped_pgdoctor_reports"] = skipped_reports
    if flight_recorder_dirs:
        rep = dump.read_dumps(flight_recorder_dirs)
        events.extend(collectives.analyze(rep, ",".join(flight_recorder_dirs)))
        meta["flight_recorder"] = {"dumps": [{"path": d.path, "rank": d.rank} for d in rep.dumps],
                                   "skipped": rep.skipped}
    findings = assemble(events, lines)
    meta["duration_s"] = round(time.perf_counter() - t0, 3)
    return findings, meta


def diagnose_sources(sources: Iterable[tuple[str, str]], flight_recorder_dirs: Sequence[str] = ()) -> list[Finding]:
    """Findings for logs already in memory as (name, text) pairs; root cause first."""
    findings, _ = _diagnose(text_sources(sources), flight_recorder_dirs)
    return findings


def diagnose_paths(paths: Sequence[str], flight_recorder_dirs: Sequence[str] = ()) -> Report:
    """A Report (command "diagnose", no snapshot) for log files, directories, '-' or gzip files.
    Raises reader.SourceError / flight.DumpError for a path that does not exist."""
    unreadable: list[str] = []
    findings, meta = _diagnose(open_sources(paths, skipped=unreadable), flight_recorder_dirs)
    if unreadable:
        meta["skipped_unreadable_files"] = unreadable
    meta["host"] = socket.gethostname()
    meta["paths"] = list(paths)
    meta["flight_recorder_dirs"] = list(flight_recorder_dirs)
    return Report(command="diagnose", snapshot=None, findings=tuple(findings), meta=meta)
