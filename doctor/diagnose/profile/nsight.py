"""Nsight Systems SQLite exports (`nsys export --type sqlite`, or the .sqlite `nsys stats`
leaves) -> the same per-process collections as a Kineto trace, so the breakdown, straggler and
findings of doctor/diagnose/profile apply unchanged.

Read: CUPTI_ACTIVITY_KIND_KERNEL / MEMCPY / MEMSET (GPU intervals; NCCL kernels by name),
CUPTI_ACTIVITY_KIND_RUNTIME (launch calls, by correlation id), NVTX_EVENTS (push/pop and
start/end ranges: pgdoctor's `step n=K`, `fwd`, `comm.*`, ... and any user or framework range)
and StringIds. Times are nanoseconds in the export and microseconds (Kineto's unit) here.

Schema variants: the export metadata table is EXPORT_META_DATA (2022.x) or META_DATA_EXPORT
(later); NVTX text is inline (`text`) or registered (`textId` into StringIds); kernel names are
`demangledName`/`shortName` ids; the process is `globalPid` (kernels) or the top bits of
`globalTid` (runtime, NVTX), and some exports have neither (one process). A CPU-only report has no
CUPTI table at all. Rows are read through cursors, never fetched whole: GPU events are folded
into running unions in SQLite's sort order (_GpuStream), CPU ranges swept in it (_CpuSweep), and
only steps, collectives and data-loading ranges are held, so memory grows with the steps, not
with the events (see collect).
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import re
import sqlite3
from collections.abc import Iterator
from typing import Any, Callable, Optional

from pgdoctor.diagnose.profile.intervals import CpuTotals, GpuTotals, Running
from pgdoctor.diagnose.profile.names import COMM, COMPUTE, MEMORY, cpu_kind, is_launch, is_step, kernel_kind
from pgdoctor.diagnose.profile.reader import SQLITE_MAGIC, TraceError

META_TABLES = ("EXPORT_META_DATA", "META_DATA_EXPORT")
KERNEL, MEMCPY, MEMSET = (
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
)
RUNTIME, NVTX = "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"
NVTX_RANGE_TYPES = (59, 60)  # ENUM_NSYS_EVENT_TYPE: NvtxPushPopRange, NvtxStartEndRange
DOMAIN_CREATE = 75  # NvtxDomainCreate: its text names the domain of that process's domainId
KNOWN_SCHEMA_MAJOR = 3
_RANK_IN_NAME = re.compile(r"rank[_-]?(\d+)", re.IGNORECASE)


def is_sqlite(head: bytes) -> bool:
    return head.startswith(SQLITE_MAGIC)


def _connect(path: str) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def _tables(con: sqlite3.Connection) -> set[str]:
    return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _columns(con: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in con.execute(f"PRAGMA table_info({table})")}


def check_export(con: sqlite3.Connection) -> dict[str, str]:
    """The export's metadata; TraceError (one line) when the file is not an Nsight export or
    comes from a schema this reader does not know."""
    tables = _tables(con)
    meta: dict[str, str] = {}
    for t in META_TABLES:
        if t in tables:
            meta = {str(k): str(v) for k, v in con.execute(f"SELECT name, value FROM {t}")}
            break
    if "StringIds" not in tables or not ({KERNEL, NVTX} & tables):
        raise TraceError(
            "an SQLite database without Nsight Systems tables (StringIds with NVTX_EVENTS or "
            "CUPTI_ACTIVITY_KIND_KERNEL): not an nsys export"
        )
    major = meta.get("EXPORT_SCHEMA_VERSION_MAJOR") or meta.get("EXPORT_SCHEMA_VERSION", "").split(".")[0]
    if major.isdigit() and int(major) > KNOWN_SCHEMA_MAJOR:
        raise TraceError(
            f"Nsight export schema {meta.get('EXPORT_SCHEMA_VERSION', major)} "
            f"({meta.get('EXPORT_PRODUCT_VERSION', 'unknown nsys')}) is newer than this reader "
            f"knows ({KNOWN_SCHEMA_MAJOR}.x)"
        )
    return meta


# Nanoseconds from the session's start; 2^62 is 146 years either way, and no difference of two
# such times overflows SQLite's 64-bit integers.
_MAX_NS = 1 << 62


def timed(alias: str = "") -> str:
    """The SQL condition every row read for its times meets, the export's counterpart of the
    trace reader's finite-times test (rank._collect): start and end are integers (SQLite keeps
    whatever a column was given: text, a blob, 1e308), -2^62 < start <= end < 2^62 (a launch
    call just before the session's start is negative). A range that
    ends before it starts emptied the analysed window (IndexError); text divided by 1000 was a
    TypeError; both skipped the whole export."""
    s, e = f"{alias}start", f"{alias}end"
    types = f"typeof({s}) = 'integer' AND typeof({e}) = 'integer'"
    return f"({types} AND -{_MAX_NS} < {s} AND {s} <= {e} AND {e} < {_MAX_NS})"


def _pid_of_tid(expr: str) -> str:
    return _id_bits(expr, 24)


def _id_bits(expr: str, shift: int) -> str:
    """The process (shift 24) or thread (0) number a globalPid/globalTid holds, as SQL. A NULL
    is 0, the one process of an export without the column: a NULL pid sorted against an int
    (TypeError) and skipped the whole export."""
    return f"ifnull((({expr}) >> {shift}) & 16777215, 0)"


@contextlib.contextmanager
def collect(path: str, new: Callable[[], Any]) -> Iterator[list[tuple[int, Any]]]:
    """One collection (made by `new`, filled like rank._collect fills it) per process that has
    kernels or NVTX ranges, ordered by pid, while the export is open. Memory stays flat as the
    export grows: only NVTX steps, data-loading and collective ranges are held; a process's GPU
    events and CPU ranges are counted here and streamed sorted from SQLite when its breakdown is
    asked for (`gpu_source`, `cpu_source`: _GpuStream, _CpuSweep)."""
    try:
        con = _connect(path)
        tables = _tables(con)
    except sqlite3.Error as exc:
        raise TraceError(f"cannot read as SQLite: {exc}") from None
    try:
        meta = check_export(con)
        t0_us = 0.0  # the session's start on the wall clock: aligns exports of different ranks
        if "TARGET_INFO_SESSION_START_TIME" in tables:
            row = con.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()
            # An integer, as `timed` requires of every time: text or a blob is no start.
            t0_us = row[0] / 1000.0 if row and type(row[0]) is int and 0 < row[0] < _MAX_NS else 0.0
        by_pid: dict[int, Any] = {}

        def of(pid: int) -> Any:
            c = by_pid.get(pid)
            if c is None:
                c = by_pid[pid] = new()
                c.meta["nsys"] = meta
                c.meta["t0_us"] = t0_us
                c.meta["comm_gpu"], c.meta["comm_cpu"] = [], []
            return c

        names = _Names(con)
        stream = _GpuStream(con, tables, names)
        for pid, rows in con.execute(f"SELECT pid, count(*) FROM ({stream.union}) GROUP BY pid"):
            c = of(pid)
            c.events += rows
            c.gpu_rows = rows
            c.gpu_source = functools.partial(stream.totals, pid, c)
        if RUNTIME in tables and by_pid:
            cols = _columns(con, RUNTIME)
            pid_expr = _pid_of_tid("globalTid") if "globalTid" in cols else "0"
            # A process without kernels: its runtime calls explain nothing here.
            for pid, rows in con.execute(f"SELECT {pid_expr} AS p, count(*) FROM {RUNTIME} GROUP BY p"):
                if pid in by_pid:
                    by_pid[pid].events += rows
        if NVTX in tables:
            _nvtx(con, tables, of, set(by_pid))
        yield sorted(by_pid.items())
    except sqlite3.Error as exc:
        raise TraceError(f"cannot read the Nsight export: {exc}") from None
    finally:
        con.close()


class _Names:
    """StringIds values by id, looked up once each."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con
        self.cache: dict[Any, str] = {}

    def __call__(self, sid: Any) -> str:
        if sid is None:
            return ""
        got = self.cache.get(sid)
        if got is None:
            row = self.con.execute("SELECT value FROM StringIds WHERE id = ?", (sid,)).fetchone()
            got = self.cache[sid] = str(row[0]) if row else ""
        return got


class _GpuStream:
    """A process's kernels, memcpys and memsets, sorted by SQLite and folded into running
    unions (intervals.Running): the totals of rank._gpu_totals without holding the events. Each
    event comes with its launch call (the last runtime row of its correlation id in the same
    process), which decides whether it belongs to the analysed steps and whether it is short."""

    def __init__(self, con: sqlite3.Connection, tables: set[str], name: Callable[[Any], str]) -> None:
        self.con, self.name = con, name
        parts = []
        for tag, table in enumerate((KERNEL, MEMCPY, MEMSET)):
            if table not in tables:
                continue
            cols = _columns(con, table)
            pid_expr = _id_bits("globalPid", 24) if "globalPid" in cols else "0"
            name_col = next((n for n in ("demangledName", "shortName") if n in cols), None)
            corr = "correlationId" if "correlationId" in cols else "-1"
            nid = name_col if tag == 0 and name_col else "NULL"
            parts.append(
                f"SELECT start, end, {min(tag, 1)} AS mem, {nid} AS nid, {corr} AS cid, {pid_expr} AS pid "
                f"FROM {table} WHERE {timed()}"
            )
        self.union = " UNION ALL ".join(parts) or "SELECT 0 AS pid WHERE 0"
        self.runtime = ""
        self.launch_ids: set[Any] = set()
        if RUNTIME in tables:
            cols = _columns(con, RUNTIME)
            pid_expr = _pid_of_tid("globalTid") if "globalTid" in cols else "0"
            # The last row of a correlation id wins, as a dict filled in table order would keep it.
            self.runtime = (
                f"SELECT correlationId AS rcid, start AS rs, end AS re, nameId AS rn, max(rowid) "
                f"FROM {RUNTIME} WHERE {pid_expr} = :pid AND {timed()} GROUP BY correlationId"
            )
            self.launch_ids = {
                nid
                for (nid,) in con.execute(f"SELECT DISTINCT nameId FROM {RUNTIME}")
                if is_launch(name(nid))
            }
        self.kinds: dict[Any, int] = {}

    def totals(self, pid: int, c: Any, cut: Optional[float], last_end: Optional[float]) -> GpuTotals:
        got = self._fold(pid, c, cut, last_end, arrivals=True)
        if got.kernels == 0 and (cut is not None or last_end is not None):
            # nothing launched in the analysed steps: all of them, as rank._gpu_totals does
            got = self._fold(pid, c, None, None, arrivals=False)
        return got

    def _fold(
        self, pid: int, c: Any, cut: Optional[float], last_end: Optional[float], arrivals: bool
    ) -> GpuTotals:
        """Kept: launched before the cut (the last step's start), else by the last step's end
        with --all-steps, else every event; an event without a launch call only in the last case."""
        busy, compute, comm, memory, either = (Running() for _ in range(5))
        # Bound once: this loop runs per GPU event.
        busy_add, compute_add, comm_add, memory_add, either_add = (
            busy.add,
            compute.add,
            comm.add,
            memory.add,
            either.add,
        )
        lo, hi = float("inf"), float("-inf")
        kept = launched = short = 0
        # NCCL kernels' starts only where arrivals are asked for (steps on a wall clock).
        comm_gpu = c.meta["comm_gpu"] if arrivals and c.steps and c.meta.get("t0_us") else []
        kinds, name, launch_ids = self.kinds, self.name, self.launch_ids
        join = f"LEFT JOIN ({self.runtime}) r ON r.rcid = g.cid" if self.runtime else ""
        rcols = "r.rs, r.re, r.rn" if self.runtime else "NULL, NULL, NULL"
        sql = (
            f"SELECT g.start, g.end, g.mem, g.nid, {rcols} FROM ({self.union}) g {join} "
            f"WHERE g.pid = :pid ORDER BY g.start, g.end"
        )
        for start, end, mem, nid, rs, re_, rn in self.con.execute(sql, {"pid": pid}):
            if mem:
                kind = MEMORY
            else:
                kind = kinds.get(nid, -1)
                if kind == -1:
                    kind = kinds[nid] = kernel_kind(name(nid))
            ts, te = start / 1000.0, end / 1000.0
            if kind == COMM:
                comm_gpu.append(ts)
            if cut is not None:
                if rs is None or not rs / 1000.0 < cut:
                    continue
            elif last_end is not None and (rs is None or not rs / 1000.0 <= last_end):
                continue
            kept += 1
            if ts < lo:
                lo = ts
            if te > hi:
                hi = te
            busy_add(ts, te)
            if kind == COMPUTE:
                compute_add(ts, te)
                either_add(ts, te)
                if rs is not None and rn in launch_ids:
                    launched += 1
                    if te - ts < (re_ - rs) / 1000.0:
                        short += 1
            elif kind == COMM:
                comm_add(ts, te)
                either_add(ts, te)
            elif kind == MEMORY:
                memory_add(ts, te)
        busy.close()
        # |comm and compute| = |comm| + |compute| - |comm or compute|: no list of either union.
        compute_t, comm_t, either_t = compute.close().total, comm.close().total, either.close().total
        return GpuTotals(
            busy=busy.total,
            compute=compute_t,
            comm=comm_t,
            memory=memory.close().total,
            overlap=max(compute_t + comm_t - either_t, 0.0) if comm_t and compute_t else 0.0,
            # Only zero-length GPU events leave the union empty: their own span is the window.
            window=(busy.first, busy.last) if busy.first is not None and busy.last is not None else (lo, hi),
            kernels=kept,
            launched=launched,
            short=short,
        )


def _max_params(con: sqlite3.Connection) -> int:
    """How many keys one statement may take as parameters: the linked SQLite's limit (32766
    since 3.32, 999 before); past it the ranges are filtered here instead of in SQLite."""
    getlimit = getattr(con, "getlimit", None)  # Python 3.11 on
    limit = getattr(sqlite3, "SQLITE_LIMIT_VARIABLE_NUMBER", None)
    if getlimit is not None and limit is not None:
        return int(getlimit(limit))
    return 999


def closed_ranges(con: sqlite3.Connection, tables: set[str]) -> str:
    """The SQL condition of an NVTX range (the NVTX table as `e`) that ended. A range still open
    when the session stopped (a hung rank stopped inside it) has no end, or, as Nsight closes the
    open ranges at the session's stop, ends exactly there: on the events' clock (which starts at
    the trace's start) ANALYSIS_DETAILS' stopTime - startTime, or stopTime itself. Such a range
    is left out, as one with no end is: the rank never got out of it, and it is not a step or
    collective that ended."""
    cond = "e.end IS NOT NULL"
    if "ANALYSIS_DETAILS" not in tables:
        return cond
    with contextlib.suppress(sqlite3.Error, TypeError, ValueError):
        row = con.execute("SELECT startTime, stopTime FROM ANALYSIS_DETAILS").fetchone()
        if row and row[0] is not None and row[1] is not None:
            start, stop = int(row[0]), int(row[1])
            return f"{cond} AND e.end NOT IN ({stop - start}, {stop})"
    return cond


def _nvtx(con: sqlite3.Connection, tables: set[str], of: Callable[[int], Any], gpu: set[int]) -> None:
    """NVTX ranges. Every process keeps its steps and collective ranges (steps, arrivals), one
    with GPU activity its data-loading ranges too (data_ms); the CPU breakdown of a process
    without GPU activity sweeps its ranges in SQLite's order when asked (_CpuSweep), from the
    per-thread sums counted here.

    A range is classified by its text before the first comma: PyTorch's emit_nvtx ranges are
    "aten::mul, op_id = 322567", one distinct message per op, and what a range is (a step, a
    collective, data loading) is in its name. SQLite cuts and counts the keys (one pass of C),
    Python classifies each distinct key once, and only the ranges kept come back as rows."""
    cols = _columns(con, NVTX)
    if "textId" in cols:
        msg = f"coalesce({'e.text' if 'text' in cols else 'NULL'}, s.value, '')"
        join = "LEFT JOIN StringIds s ON s.id = e.textId"
    else:
        msg, join = ("coalesce(e.text, '')" if "text" in cols else "''"), ""
    key = (  # as text, whatever the column held: the keys come back as the parameters go in
        f"CAST(CASE WHEN instr({msg}, ',') > 0 THEN substr({msg}, 1, instr({msg}, ',') - 1) "
        f"ELSE {msg} END AS TEXT)"
    )
    pid_expr = _pid_of_tid("e.globalTid") if "globalTid" in cols else "0"
    tid_expr = _id_bits("e.globalTid", 0) if "globalTid" in cols else "0"
    ended = f"{closed_ranges(con, tables)} AND {timed('e.')}"
    ranges = (
        f"SELECT e.start AS start, e.end AS end, {pid_expr} AS pid, {tid_expr} AS tid, {key} AS k, "
        f"e.rowid AS rid FROM {NVTX} e {join} WHERE e.eventType IN {NVTX_RANGE_TYPES} AND {ended}"
    )
    kinds: dict[str, tuple[bool, int]] = {}
    base = f"FROM {NVTX} e WHERE e.eventType IN {NVTX_RANGE_TYPES} AND {ended}"
    if {p for (p,) in con.execute(f"SELECT DISTINCT {pid_expr} {base}")} <= gpu:
        # Every process has GPU activity: the keys and a count per process are all it takes
        # (a DISTINCT and a GROUP BY of integers cost SQLite a third of one GROUP BY of keys).
        for (k,) in con.execute(f"SELECT DISTINCT k FROM ({ranges})"):
            kinds.setdefault(str(k), (is_step(str(k)), cpu_kind(str(k))))
        for pid, n in con.execute(f"SELECT {pid_expr} AS p, count(*) {base} GROUP BY p"):
            c = of(pid)
            c.events += n
            c.pids[pid] += n
    else:
        _threads(con, of, gpu, ranges, kinds)
    wanted = sorted(k for k, (step, kind) in kinds.items() if step or kind in (COMM, MEMORY))
    where, params = "", []
    if len(wanted) <= _max_params(con):
        where, params = f" WHERE k IN ({', '.join('?' * len(wanted)) or 'NULL'})", wanted
    for start, end, pid, tid, k in con.execute(
        f"SELECT start, end, pid, tid, k FROM ({ranges}){where}", params
    ):
        step, kind = kinds[str(k)]
        c = of(pid)
        ts, te = start / 1000.0, end / 1000.0
        if step:
            c.steps.append((ts, te, tid))
        elif kind == COMM:
            c.meta["comm_cpu"].append((ts, tid, te))  # te: collectives per step (rank.py)
        elif kind == MEMORY and pid in gpu:
            c.cpu[tid].append((ts, te, kind))


def _threads(
    con: sqlite3.Connection,
    of: Callable[[int], Any],
    gpu: set[int],
    ranges: str,
    kinds: dict[str, tuple[bool, int]],
) -> None:
    """Keys, counts, and per thread of a process without GPU activity the time in its non-step
    ranges and their bounds (which pick the step thread and its window); such a process's CPU
    breakdown is then swept from the export (_CpuSweep)."""
    # (pid, tid) -> [first row, time in ranges (ns), first start, last end] of its non-step ranges
    threads: dict[tuple[int, Any], list[Any]] = {}
    for pid, tid, k, n, busy, first, last, rid in con.execute(
        f"SELECT pid, tid, k, count(*), total(end - start), min(start), max(end), min(rid) "
        f"FROM ({ranges}) GROUP BY pid, tid, k"
    ):
        k = str(k)
        if k not in kinds:
            kinds[k] = (is_step(k), cpu_kind(k))
        c = of(pid)
        c.events += n
        c.pids[pid] += n
        if pid in gpu or kinds[k][0]:
            continue
        got = threads.setdefault((pid, tid), [rid, 0, first, last])
        got[0], got[1] = min(got[0], rid), got[1] + busy
        got[2], got[3] = min(got[2], first), max(got[3], last)
    # Threads in the order of their first range, as a dict filled row by row would hold them.
    for (pid, tid), (_, busy, first, last) in sorted(threads.items(), key=lambda kv: kv[1][0]):
        c = of(pid)
        c.cpu_threads[tid] = (busy / 1000.0, first / 1000.0, last / 1000.0)
        if c.cpu_source is None:
            c.cpu_source = functools.partial(_CpuSweep(con, ranges, kinds).totals, pid)


class _CpuSweep:
    """The CPU totals of rank._cpu_totals for a process whose ranges stay in the export: the
    starts and ends of its non-empty ranges, sorted by SQLite, are swept once, with a count of
    open ranges per class (the step thread's compute, data loading and collectives, and other
    threads' collectives); each stretch between two of them is added, as far as it lies in the
    analysed window, to what is open there."""

    def __init__(self, con: sqlite3.Connection, ranges: str, kinds: dict[str, tuple[bool, int]]) -> None:
        self.con, self.ranges, self.kinds = con, ranges, kinds

    def totals(self, pid: int, main: Any, window: list[tuple[float, float]]) -> CpuTotals:
        kinds = self.kinds
        sql = (
            f"WITH r AS ({self.ranges}) SELECT t, d, tid, k FROM ("
            f"SELECT start AS t, 1 AS d, tid, k FROM r WHERE pid = :pid AND end > start UNION ALL "
            f"SELECT end AS t, -1 AS d, tid, k FROM r WHERE pid = :pid AND end > start) ORDER BY t"
        )
        open_ = [0, 0, 0, 0]  # the step thread's COMPUTE, COMM, MEMORY; other threads' COMM
        compute = data = comm = exposed = overlap = 0.0
        prev = None
        w = 0
        for t, d, tid, k in self.con.execute(sql, {"pid": pid}):
            step, kind = kinds[str(k)]
            if step:
                continue
            if tid == main:
                slot = 0 if kind == COMPUTE else 1 if kind == COMM else 2 if kind == MEMORY else -1
            else:
                slot = 3 if kind == COMM else -1
            if slot < 0:
                continue
            t /= 1000.0
            if prev is not None and t > prev and any(open_):
                # The stretch [prev, t) inside the window: the window's spans are sorted and
                # disjoint, and the stretches come in order, so one pointer walks them.
                while w < len(window) and window[w][1] <= prev:
                    w += 1
                inside, j = 0.0, w
                while j < len(window) and window[j][0] < t:
                    inside += min(t, window[j][1]) - max(prev, window[j][0])
                    j += 1
                if inside > 0:
                    comm_main = open_[1] > 0
                    is_data = open_[2] > 0 and not comm_main
                    is_compute = open_[0] > 0 and not comm_main and not is_data
                    if is_compute:
                        compute += inside
                    elif is_data:
                        data += inside
                    if comm_main or open_[3] > 0:
                        comm += inside
                        if is_compute:
                            overlap += inside
                        elif not is_data:
                            exposed += inside
            open_[slot] += d
            prev = t
        return CpuTotals(compute=compute, data=data, comm=comm, exposed=exposed, overlap=overlap)


def arrivals(c: Any, steps: list[tuple[float, float, Any]]) -> list[list[float]]:
    """Per analysed step, the wall-clock starts (us) of its collectives in order: the step
    thread's communication NVTX ranges, else the NCCL kernels."""
    tids = {t for _, _, t in steps}
    cpu = sorted(ts for ts, tid, _ in c.meta.get("comm_cpu", ()) if tid in tids)
    starts = cpu or sorted(c.meta.get("comm_gpu", ()))
    t0 = c.meta.get("t0_us", 0.0)
    out = []
    for lo, hi, _ in steps:  # by bisection: a scan of every start per step was quadratic
        # (a 16,000-step export spent 22 s here)
        out.append(
            [t0 + ts for ts in starts[bisect.bisect_left(starts, lo) : bisect.bisect_left(starts, hi)]]
        )
    return out


def rank_in_name(path: str) -> Optional[int]:
    m = _RANK_IN_NAME.search(path.rsplit("/", 1)[-1])
    return int(m.group(1)) if m else None


def totals(path: str) -> dict[str, dict[str, tuple[int, int]]]:
    """Per-name totals of an export, as `nsys stats` reports them: {"kernels": {demangled name:
    (total ns, instances)}, "ranges": {"domain:message" or "message": (total ns, instances)}}
    (push/pop and start/end ranges; `nvtxsum` / `nvtx_sum`, `gpukernsum` / `cuda_gpu_kern_sum`)."""
    con = _connect(path)
    try:
        check_export(con)
        tables = _tables(con)
        out: dict[str, dict[str, tuple[int, int]]] = {"kernels": {}, "ranges": {}}
        if KERNEL in tables:
            cols = _columns(con, KERNEL)
            name_col = next((n for n in ("demangledName", "shortName") if n in cols), None)
            if name_col:
                for name, total, n in con.execute(
                    f"SELECT s.value, sum(k.end - k.start), count(*) FROM {KERNEL} k "
                    f"JOIN StringIds s ON s.id = k.{name_col} WHERE {timed('k.')} GROUP BY s.value"
                ):
                    out["kernels"][str(name)] = (int(total), int(n))
        if NVTX in tables:
            cols = _columns(con, NVTX)
            text = "e.text" if "text" in cols else "NULL"
            join = "LEFT JOIN StringIds s ON s.id = e.textId" if "textId" in cols else ""
            value = "s.value" if join else "NULL"
            pid = _pid_of_tid("e.globalTid") if "globalTid" in cols else "0"
            dom = "e.domainId" if "domainId" in cols else "0"
            # A range of a named domain is "domain:message", as nvtxsum names it.
            domains: dict[tuple[int, int], str] = {}
            if "domainId" in cols:
                for p, d, name in con.execute(
                    f"SELECT {pid}, e.domainId, e.text FROM {NVTX} e WHERE e.eventType = {DOMAIN_CREATE}"
                ):
                    domains[(p, d)] = str(name)
            ranges = out["ranges"]
            for msg, p, d, total, n in con.execute(
                f"SELECT coalesce({text}, {value}) AS msg, {pid} AS p, {dom} AS d, sum(e.end - e.start), "
                f"count(*) "
                f"FROM {NVTX} e {join} WHERE e.eventType IN {NVTX_RANGE_TYPES} AND {timed('e.')} "
                f"GROUP BY msg, p, d"
            ):
                key = f"{domains[(p, d)]}:{msg}" if d and (p, d) in domains else str(msg)
                t0, n0 = ranges.get(key, (0, 0))
                ranges[key] = (t0 + int(total), n0 + int(n))
        return out
    except sqlite3.Error as exc:
        raise TraceError(f"cannot read the Nsight export: {exc}") from None
    finally:
        con.close()
