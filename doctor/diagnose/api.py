"""Stable entry points of log diagnosis (used by `pgdoctor diagnose` and by the failure lab).

    diagnose_sources([(name, text), ...], flight_recorder_dirs=()) -> list[Finding]
    diagnose_paths([path, ...], flight_recorder_dirs=(), all_steps=False) -> Report

Per-rank profiler traces among the paths (recognised by content) add Report.extra["traces"]
(breakdown per rank, the straggler) and RUN405-RUN409 findings after the logs' and dumps'.

Findings come root cause first; every later finding has facts["cascade_of"] = the root's code.
Facts are structured (rank, op, seq, bytes, requested_bytes, free_bytes, ...) and evidence
carries file and line numbers.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import os
import socket
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Optional

from pgdoctor.diagnose.analyze import LOG, cap_notes, sources_events
from pgdoctor.diagnose.flight import dump
from pgdoctor.diagnose.profile.reader import SQLITE_MAGIC, TRACE_SUFFIXES, looks_like_trace
from pgdoctor.diagnose.stacks.evidence import FILE_RE as EVIDENCE_NAME
from pgdoctor.diagnose.stacks.evidence import looks_like_evidence
from pgdoctor.diagnose.text import archives, cutline, recase
from pgdoctor.diagnose.text.head import read_head
from pgdoctor.diagnose.text.reader import (
    Source,
    SourceError,
    binary_kind,
    is_binary,
    is_pgdoctor_report,
    open_sources,
    text_sources,
)
from pgdoctor.model import Finding, Report, ReportExtra

if TYPE_CHECKING:
    from pgdoctor.diagnose.event import Event

FlightError = dump.DumpError


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """Python's cycle collector tuned for a diagnosis: what was imported is frozen (never scanned
    again) and the youngest generation is collected every 50,000 allocations instead of 700.
    Tens of thousands of events and lines are made and kept, and the default collector spent a
    sixth of a 10,000-file job scanning them and the compiled patterns again and again. Forked
    scan workers inherit the setting; cycles are still collected."""
    old = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)
    try:
        yield
    finally:
        gc.set_threshold(*old)
        gc.unfreeze()


# From this many events on, triage runs beside the root-cause analysis (a fork costs ~10 ms).
BESIDE_EVENTS = 5000
DUMP, TRACE, BINARY, REPORT = "flight-recorder dump", "profiler trace", "binary", "pgdoctor report"
HANG = "hang evidence"  # a rank's stacks that `pgdoctor hang --save` wrote


def kind_of(src: Source) -> str:
    """What a file is, from its head (read once): a flight-recorder dump, a profiler trace, or,
    in a job directory, a binary (checkpoint, core) or a report pgdoctor wrote; else a log."""
    if not src.path:
        return LOG
    path = src.path
    return _kind_by_head(read_head(path), path, src.listed, lambda: looks_like_trace(path))


def _kind_by_head(head: bytes, name: str, listed: bool, trace: Callable[[], bool]) -> str:
    """kind_of of a file that starts with `head`; `trace()` reads the file when its name is a trace's."""
    # --save's name (hang-rank<R>.json) is evidence whatever it holds: one cut before its first key,
    # empty or not JSON is listed as skipped with its reason, never read as a log.
    if looks_like_evidence(head) or EVIDENCE_NAME.match(os.path.basename(name)):
        return HANG
    if dump.looks_like_dump(dump.peek(head)):  # gzip -r of a dump directory too
        return DUMP
    if name.endswith(TRACE_SUFFIXES) and trace():
        return TRACE
    if head.startswith(SQLITE_MAGIC):  # an Nsight Systems export (or a clear line saying it is not one)
        return TRACE
    if is_binary(head):
        return BINARY
    if listed and is_pgdoctor_report(head):
        return REPORT
    return LOG


def binary_head(head: bytes, name: str) -> Optional[str]:
    """What an archive's member is when kind_of would skip it as a binary from its head alone (the
    member is then never unpacked: text/archives.py), else None. A name like a trace's is left to
    kind_of, which reads the file."""
    if _kind_by_head(head, name, True, lambda: True) != BINARY:
        return None
    return binary_kind(head)


def _diagnose(
    sources: Iterable[Source],
    flight_recorder_dirs: Sequence[str],
    all_steps: bool = False,
    config: Optional[Mapping[str, Any]] = None,
) -> tuple[list[Finding], dict[str, Any]]:
    files = list(sources)
    findings, meta = _diagnose_once(files, flight_recorder_dirs, all_steps, config)
    if _failed(findings):
        return findings, meta
    # No failure found: a small source without one capital letter (a title retyped in lower case) is read
    # again, its known words in the rows' casing and every row matching caselessly, and that reading is kept
    # only if it finds one (text/recase.py); so is a one-line title in Title Case, lowered first.
    lowered = {
        id(s)
        for s in files
        if kind_of(s) == LOG and (recase.lower_case_only(s.chunks) or recase.title_cased(s.chunks))
    }
    if not lowered:
        return _cut_line(files, findings, meta, flight_recorder_dirs, all_steps, config)
    again = [
        dataclasses.replace(s, chunks=recase.recased(s.chunks), caseless=True) if id(s) in lowered else s
        for s in files
    ]
    found, meta2 = _diagnose_once(again, flight_recorder_dirs, all_steps, config)
    if not _failed(found):
        return _cut_line(files, findings, meta, flight_recorder_dirs, all_steps, config)
    meta2["recased_sources"] = [s.name for s in files if id(s) in lowered]
    return found, meta2


def _cut_line(
    files: list[Source],
    findings: list[Finding],
    meta: dict[str, Any],
    flight_recorder_dirs: Sequence[str],
    all_steps: bool,
    config: Optional[Mapping[str, Any]],
) -> tuple[list[Finding], dict[str, Any]]:
    """No failure found: a single small log whose last line stops inside a word of a row's literal is read
    again with that literal completed (text/cutline.py); the reading is kept only if its failure is on
    that line."""
    if len(files) != 1 or kind_of(files[0]) != LOG:
        return findings, meta
    cut = cutline.completed(files[0].chunks)
    if cut is None:
        return findings, meta
    number, chunks = cut
    found, meta2 = _diagnose_once(
        [dataclasses.replace(files[0], chunks=chunks)], flight_recorder_dirs, all_steps, config
    )
    failed = [f for f in found if f.severity.value in ("warn", "fail")]
    if not failed or not any(e.line == number for e in failed[0].evidence):
        return findings, meta
    meta2["completed_line"] = number
    return found, meta2


def _failed(findings: list[Finding]) -> bool:
    """Whether a reading found a failure (a finding of severity warn or fail, as the root cause is chosen)."""
    return any(f.severity.value in ("warn", "fail") for f in findings)


def _diagnose_once(
    files: list[Source],
    flight_recorder_dirs: Sequence[str],
    all_steps: bool,
    config: Optional[Mapping[str, Any]],
) -> tuple[list[Finding], dict[str, Any]]:
    events: list[Event] = []
    lines: dict[str, int] = {}
    meta_sources = []
    t0 = time.perf_counter()
    # Dumps found among the logs (a whole job directory was given) go to the flight recorder.
    found_dumps = []
    found_traces: list[str] = []  # per-rank profiler traces, recognised by content
    logs: list[Source] = []
    skipped_binary = []
    skipped_reports: list[str] = []
    found_hang: list[str] = []
    for src in files:
        # A binary the user named (an ELF, an image) read as text was "[ok] no failure found", exit 0;
        # one found in a job directory is skipped and listed, below.
        if not src.listed and src.path and kind_of(src) == BINARY:
            raise SourceError(
                f"cannot read {src.name}: a binary file ({binary_kind(read_head(src.path))}), not a text log"
            )
    for src, (kind, evs, stats) in zip(files, sources_events(files, kind_of)):
        if kind == HANG:
            found_hang.append(src.path or src.name)
        elif kind == DUMP:
            found_dumps.append(src.path or src.name)
        elif kind == TRACE:
            found_traces.append(src.path or src.name)
        elif kind == BINARY:
            # checkpoints, cores, images in a job directory; by the name the user knows (an archive's
            # member is ARCHIVE:MEMBER, not the temp file it was unpacked to, gone when this ends)
            skipped_binary.append(src.name)
        elif kind == REPORT:
            skipped_reports.append(src.name)
        else:
            for e in evs:  # from its index among all files to its index among the logs
                e.source_index = len(logs)
            logs.append(src)
            events.extend(evs)
            lines[src.name] = stats.lines
            meta_sources.append(
                {
                    "name": src.name,
                    "bytes": stats.bytes,
                    "lines": stats.lines,
                    "hits": stats.hits,
                    **stats.counted,
                }
            )
    observed: list[Event] = []
    if logs:
        from pgdoctor.diagnose.lookahead import settle as settle_pending
        from pgdoctor.diagnose.lookback import look_further
        from pgdoctor.diagnose.transport import split as split_observations

        # A Slurm cancel whose window held no progress line: its log is read further up (lookback.py).
        events = look_further(events, logs)
        # A retry or an interface list whose communicator came up past the rule's window (lookahead.py).
        events = settle_pending(events, logs)
        # What NCCL said about its network is no failure: judged for the whole job, after the root cause.
        events, observed = split_observations(events)
    flight_recorder_dirs = [*flight_recorder_dirs, *found_dumps]
    meta: dict[str, Any] = {"sources": meta_sources, "scan_engine": _scan_engine(bool(logs))}
    notes = cap_notes(meta_sources)
    if notes:
        meta["notes"] = notes
    meta["jobwide"] = None  # in its place among the keys; computed beside the root-cause analysis
    if skipped_binary:
        meta["skipped_binary_files"] = skipped_binary
    if skipped_reports:
        meta["skipped_pgdoctor_reports"] = skipped_reports
    findings: list[Finding] = []
    job = None
    # Only traces, hang evidence or skipped files: no log or dump to find a root cause in, and
    # the rule catalogue, causality and triage are not even imported (start-up).
    if logs or flight_recorder_dirs:
        findings, job = _root_cause(events, logs, lines, flight_recorder_dirs, meta)
    if job:
        meta["jobwide"] = job
    else:
        del meta["jobwide"]
    if found_traces:
        # Imported here: most diagnoses hold no trace, and the analysis costs 20 ms of start-up.
        from pgdoctor.diagnose.profile.analyze import analyze_traces

        traces, trace_findings = analyze_traces(found_traces, all_steps=all_steps, config=config)
        meta["traces"] = traces
        findings = [*findings, *trace_findings]
    if found_hang:
        # A hang snapshot (of one node or several): its culprit is the root cause of the job.
        from pgdoctor.diagnose.stacks.api import diagnose_evidence, without_unread_recorders

        hang_findings, hang = diagnose_evidence(found_hang)
        # Damaged evidence files are listed as skipped, as other unreadable inputs are; with no
        # rank's evidence read there is no `hang` section (nothing read is incomplete, not "no hang").
        meta["skipped_hang_evidence"] = hang.pop("skipped", [])
        if not meta["skipped_hang_evidence"]:
            del meta["skipped_hang_evidence"]
        if hang.get("jobs"):
            meta["hang"] = hang
            findings = [*hang_findings, *without_unread_recorders(findings, hang)]
    if observed:
        from pgdoctor.diagnose.transport import judge as judge_transport

        findings = [*findings, *judge_transport(observed)]
    meta["duration_s"] = round(time.perf_counter() - t0, 3)  # the traces' analysis included
    return findings, meta


def _scan_engine(scanned: bool) -> str:
    """The log scanner's engine for the report: the one that scanned, or, when no log was read,
    the one that would (asked without building the anchors from the rule catalogue)."""
    from pgdoctor.diagnose.text import engine

    if scanned:
        from pgdoctor.diagnose.text.scan import engine_name

        return engine_name()
    return engine.available()


def _root_cause(
    events: list[Event],
    logs: list[Source],
    lines: dict[str, int],
    flight_recorder_dirs: list[str],
    meta: dict[str, Any],
) -> tuple[list[Finding], Any]:
    """The root cause and cascade of the logs and dumps, and the job-wide triage of the logs."""
    from pgdoctor.diagnose.causality import assemble, join_flight
    from pgdoctor.diagnose.flight import collectives
    from pgdoctor.diagnose.jobwide import assign_file_ranks, triage
    from pgdoctor.diagnose.text.parallel import beside

    names = [src.name for src in logs]
    by_file = assign_file_ranks(events, names)
    # Job-wide triage of a large job runs in a forked process while this one finds the root
    # cause: both only read the events (assemble's changes come after the fork), and each costs
    # about 0.3 s for 10,000 files.
    with beside(lambda: triage(events, names, by_file), len(events) >= BESIDE_EVENTS) as jobwide:
        fr_findings: list[Finding] = []
        if flight_recorder_dirs:
            rep = dump.read_dumps(flight_recorder_dirs)
            fr_findings = collectives.analyze(rep, ",".join(flight_recorder_dirs))
            meta["flight_recorder"] = {
                "dumps": [{"path": d.path, "rank": d.rank} for d in rep.dumps],
                "skipped": rep.skipped,
            }
        # Dumps and logs of the same job are read together: the dump says which collective, the
        # logs say why a rank was late.
        findings = join_flight(assemble(events, lines), fr_findings)
        return findings, jobwide()


def diagnose_sources(
    sources: Iterable[tuple[str, str]], flight_recorder_dirs: Sequence[str] = ()
) -> list[Finding]:
    """Findings for logs already in memory as (name, text) pairs; root cause first."""
    with _fewer_collections():
        findings, _ = _diagnose(text_sources(sources), flight_recorder_dirs)
    return findings


def diagnose_paths(
    paths: Sequence[str],
    flight_recorder_dirs: Sequence[str] = (),
    all_steps: bool = False,
    config: Optional[Mapping[str, Any]] = None,
) -> Report:
    """A Report (command "diagnose", no snapshot) for log files, directories, '-' or gzip files.
    `config`: thresholds by config key (the `traces.*` ones of RUN406-RUN409), defaults when not
    given. Raises reader.SourceError / flight.DumpError for a path that does not exist."""
    with _fewer_collections():
        return _report(paths, flight_recorder_dirs, all_steps, config)


def _report(
    paths: Sequence[str],
    flight_recorder_dirs: Sequence[str],
    all_steps: bool,
    config: Optional[Mapping[str, Any]],
) -> Report:
    unreadable: list[str] = []
    unpacked: list[archives.Unpacked] = []  # tar and zip archives' members, in temp directories
    try:
        findings, meta = _diagnose(
            open_sources(paths, skipped=unreadable, unpacked=unpacked, never_log=binary_head),
            flight_recorder_dirs,
            all_steps,
            config,
        )
    finally:
        for u in unpacked:
            archives.remove(u.directory)
    if unpacked:
        findings, meta = _archived(findings, meta, unpacked)
    # Top-level `traces` in --json: per-rank breakdown and the straggler (docs/output-formats.md).
    extra = ReportExtra(traces=meta.pop("traces")) if "traces" in meta else ReportExtra()
    if (
        "hang" in meta
    ):  # the roll-call of a saved hang snapshot: the `hang` section, as `pgdoctor hang` gives it
        extra["hang"] = meta.pop("hang")
    unreadable += meta.pop("skipped_hang_evidence", [])
    if unreadable:
        meta["skipped_unreadable_files"] = unreadable
    meta["host"] = socket.gethostname()
    meta["paths"] = list(paths)
    meta["flight_recorder_dirs"] = list(flight_recorder_dirs)
    return Report(
        command="diagnose",
        snapshot=None,
        findings=tuple(findings),
        meta=meta,
        extra=extra,
        incomplete_reasons=_nothing_read(meta, extra),
    )


def _archived(
    findings: list[Finding], meta: dict[str, Any], unpacked: list[archives.Unpacked]
) -> tuple[list[Finding], dict[str, Any]]:
    """The archives' binary members (never unpacked) among the binary files skipped, a note for an
    archive that held logs and binaries, and every unpacked file named by its ARCHIVE:MEMBER."""
    binary = [name for u in unpacked for name, _ in u.binary]
    if binary:
        meta["skipped_binary_files"] = binary + meta.get("skipped_binary_files", [])
    notes = [n for n in (u.note() for u in unpacked) if n]
    if notes:
        meta["notes"] = meta.get("notes", []) + notes
    return (
        [Finding.from_json(archives.renamed(f.to_json(), unpacked)) for f in findings],
        archives.renamed(meta, unpacked),
    )


def _nothing_read(meta: Mapping[str, Any], extra: Mapping[str, Any]) -> tuple[str, ...]:
    """Every input skipped, none read: not "no failure found" (exit 0) but incomplete (exit 3)."""
    traces = extra.get("traces") or {}
    fr = meta.get("flight_recorder") or {}
    if meta.get("sources") or traces.get("ranks") or fr.get("dumps") or extra.get("hang"):
        return ()
    skipped = [
        *meta.get("skipped_unreadable_files", []),
        *meta.get("skipped_binary_files", []),  # a directory of checkpoints and cores only
        *meta.get("skipped_pgdoctor_reports", []),
        *traces.get("skipped", []),
        *fr.get("skipped", []),
    ]
    if skipped:
        return (f"no input could be read: {len(skipped)} skipped",)
    # an empty job directory (the logs were never copied) is not a job without failure
    named = meta.get("paths") or meta.get("flight_recorder_dirs")
    return ("no input could be read: the directories named hold no file",) if named else ()
