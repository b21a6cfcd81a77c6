"""Per-rank event files of pgdoctor ranges, merged into one Chrome/Perfetto trace.json.

Each rank appends Chrome "complete" events (ph "X", microseconds; with tts/tdur, the thread's
CPU clock, for ranges on a rank's own threads) as JSON lines to
`<dir>/rank<N>.events.jsonl`; `merge` puts every rank's events into one trace with a process
track per rank (pid = rank), named "rank N", and one thread track per thread plus a "comm"
track for asynchronous all-reduces. Open the result in ui.perfetto.dev or chrome://tracing.

Timestamps are wall-clock microseconds (anchored once per process, advanced by the monotonic
clock), so ranks on one host line up; across hosts they are as good as the hosts' clocks.

    python -m pgdoctor.trace DIR -o trace.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import stat
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Optional

FLUSH_INTERVAL_NS = 250_000_000
_ENCODER = json.JSONEncoder(default=str)
COMM_TID = 999_999  # the track of asynchronous all-reduces (launch to completion)
EVENTS_SUFFIX = ".events.jsonl"


class EventWriter:
    """Buffers complete events and appends them to this rank's file. Thread-safe: the DDP comm
    hook's completion callbacks run on the process group's threads."""

    def __init__(self, directory: str, rank: int, flush_every: int = 512):
        self.rank = rank
        self.path = Path(directory) / f"rank{rank}{EVENTS_SUFFIX}"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._wall_us = time.time_ns() / 1000.0
        self._perf_ns = time.perf_counter_ns()
        self._buf: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._flush_every = flush_every
        self._last_flush_ns = 0

    def ts_us(self, perf_ns: int) -> float:
        return round(self._wall_us + (perf_ns - self._perf_ns) / 1000.0, 3)

    def complete(
        self,
        name: str,
        fields: Mapping[str, Any],
        t0_ns: int,
        t1_ns: int,
        depth: int = 0,
        track: str = "",
        cpu_ns: Optional[tuple[int, int]] = None,
    ) -> None:
        event: dict[str, Any] = {
            "name": name,
            "ph": "X",
            "ts": self.ts_us(t0_ns),
            "dur": round((t1_ns - t0_ns) / 1000.0, 3),
            "pid": self.rank,
            "tid": COMM_TID if track == "comm" else threading.get_native_id(),
            "args": dict(fields),
        }
        if cpu_ns is not None:
            # Chrome's thread-clock fields: CPU time of the thread, which contention on a
            # shared host does not inflate the way it inflates wall time.
            event["tts"] = round(cpu_ns[0] / 1000.0, 3)
            event["tdur"] = round((cpu_ns[1] - cpu_ns[0]) / 1000.0, 3)
        with self._lock:
            self._buf.append(event)
            full = len(self._buf) >= self._flush_every
        # Write when a top-level range (a step) closes, at most every FLUSH_INTERVAL_S: a rank
        # that is killed loses at most that much, and short steps do not pay a write each.
        if full or (depth == 0 and t1_ns - self._last_flush_ns >= FLUSH_INTERVAL_NS):
            self.flush()

    def flush(self) -> None:
        self._last_flush_ns = time.perf_counter_ns()
        with self._lock:
            events, self._buf = self._buf, []
        if events:
            # Serialised here, not per event: one encoder for the batch is several times cheaper
            # than json.dumps on every range.
            text = "\n".join(_ENCODER.encode(e) for e in events) + "\n"
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(text)


# --- reading and merging ------------------------------------------------------------------


def read_events(path: Path) -> list[dict[str, Any]]:
    """Events of one rank file; a torn last line (rank killed mid-write) is skipped."""
    events = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                ev = json.loads(line)
            except json.JSONDecodeError:
                continue
            if _well_formed(ev):
                events.append(ev)
    return events


def _number(v: Any) -> bool:
    return type(v) in (int, float) and math.isfinite(v)


def _well_formed(ev: Any) -> bool:
    """A complete event as EventWriter writes it: a str name, finite ts and dur >= 0, int tid and
    pid (when given). Anything else (a file edited or written by another tool, a torn line that
    still parses) is skipped, so merging never fails on int() or a sort of mixed types."""
    if not isinstance(ev, dict) or ev.get("ph") != "X" or type(ev.get("name")) is not str:
        return False
    if not (_number(ev.get("ts")) and _number(ev.get("dur")) and ev["dur"] >= 0):
        return False
    return type(ev.get("tid")) is int and type(ev.get("pid", 0)) is int


def rank_files(directory: str, skipped: Optional[list[str]] = None) -> list[Path]:
    """The rank files that are regular files (`skipped` gets the others, "PATH: why"): a FIFO named
    like one blocked the merge forever, and a link to /dev/zero read until memory ran out."""
    out = []
    for p in sorted(Path(directory).glob(f"rank*{EVENTS_SUFFIX}"), key=lambda p: _rank_of(p)):
        try:
            regular = stat.S_ISREG(os.stat(p).st_mode)
            why = "not a regular file (a FIFO, socket or device)"
        except OSError as exc:
            regular, why = False, exc.strerror or "cannot stat"
        if regular:
            out.append(p)
        elif skipped is not None:
            skipped.append(f"{p}: {why}")
    return out


def _rank_of(path: Path) -> int:
    stem = path.name[len("rank") : -len(EVENTS_SUFFIX)]
    return int(stem) if stem.isdigit() else 1 << 30


def events_by_rank(directory: str) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {}
    for p in rank_files(directory):
        for ev in read_events(p):
            out.setdefault(int(ev.get("pid", _rank_of(p))), []).append(ev)
    return out


def merge_events(by_rank: Mapping[int, Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """One Chrome trace: metadata naming each rank's process and thread tracks, then events."""
    meta: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    for rank in sorted(by_rank):
        meta.append(
            {"name": "process_name", "ph": "M", "pid": rank, "tid": 0, "args": {"name": f"rank {rank}"}}
        )
        meta.append(
            {"name": "process_sort_index", "ph": "M", "pid": rank, "tid": 0, "args": {"sort_index": rank}}
        )
        tids = sorted({int(e["tid"]) for e in by_rank[rank]})
        for i, tid in enumerate(t for t in tids if t != COMM_TID):
            label = "main" if i == 0 else f"thread {tid}"
            meta.append({"name": "thread_name", "ph": "M", "pid": rank, "tid": tid, "args": {"name": label}})
        if COMM_TID in tids:
            meta.append(
                {"name": "thread_name", "ph": "M", "pid": rank, "tid": COMM_TID, "args": {"name": "comm"}}
            )
        # Outer ranges first at equal start, so viewers nest them correctly.
        events.extend(dict(e) for e in sorted(by_rank[rank], key=lambda e: (e["ts"], -e["dur"])))
    return {"traceEvents": meta + events, "displayTimeUnit": "ms"}


def merge(directory: str, output: Optional[str] = None) -> dict[str, Any]:
    """Merge the rank files in `directory`; write the trace to `output` when given."""
    trace = merge_events(events_by_rank(directory))
    if output:
        _write(trace, output)
    return trace


def _write(trace: Mapping[str, Any], output: str) -> None:
    """A file is replaced whole (a temporary file beside it, renamed over it); a device or a FIFO
    (-o /dev/stdout) is written in place. Renamed over, /dev/null or /dev/full became a regular
    file for every process of the host (as root). OSError when it cannot be written."""
    if os.path.isdir(output):
        raise IsADirectoryError(21, "is a directory", output)
    if os.path.exists(output) and not stat.S_ISREG(os.stat(output).st_mode):
        with open(output, "w", encoding="utf-8") as fh:
            json.dump(trace, fh)
        return
    tmp = f"{output}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(trace, fh)
        os.replace(tmp, output)
    except BaseException:  # catches-interrupts: removes its temporary file, then re-raises
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


def trace_events(trace: Mapping[str, Any]) -> Iterable[dict[str, Any]]:
    """The complete events of a merged trace (metadata left out)."""
    return (e for e in trace.get("traceEvents", []) if e.get("ph") == "X")


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m pgdoctor.trace", description="Merge per-rank pgdoctor event files."
    )
    ap.add_argument("directory")
    ap.add_argument("-o", "--output", default=None, help="trace file (default: DIR/trace.json)")
    args = ap.parse_args(argv)
    skipped: list[str] = []
    found = rank_files(args.directory, skipped)
    for note in skipped:
        print(f"pgdoctor.trace: skipped {note}", file=sys.stderr)
    if not found:
        print(f"pgdoctor.trace: error: no rank*{EVENTS_SUFFIX} files in {args.directory}", file=sys.stderr)
        return 2
    out = args.output or str(Path(args.directory) / "trace.json")
    try:
        trace = merge(args.directory, out)
    except OSError as exc:  # a missing folder, a directory, a full disk: one line, not a traceback
        print(f"pgdoctor.trace: error: cannot write {out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    n = sum(1 for _ in trace_events(trace))
    print(f"wrote {out} ({n} events)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
