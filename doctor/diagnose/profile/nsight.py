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
CUPTI table at all. Rows are read through cursors, never fetched whole.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any, Callable, Optional

from pgdoctor.diagnose.profile.names import COMM, MEMORY, cpu_kind, is_launch, is_step, kernel_kind
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


def _pid_of_tid(expr: str) -> str:
    return f"(({expr}) >> 24) & 16777215"


def collect(path: str, new: Callable[[], Any]) -> list[tuple[int, Any]]:
    """One collection (made by `new`, filled like rank._collect fills it) per process that has
    kernels or NVTX ranges, ordered by pid."""
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
            t0_us = row[0] / 1000.0 if row and row[0] else 0.0
        by_pid: dict[int, Any] = {}

        def of(pid: int) -> Any:
            c = by_pid.get(pid)
            if c is None:
                c = by_pid[pid] = new()
                c.meta["nsys"] = meta
                c.meta["t0_us"] = t0_us
                c.meta["comm_gpu"], c.meta["comm_cpu"] = [], []
            return c

        names: dict[int, str] = {}

        def name(sid: Any) -> str:
            if sid is None:
                return ""
            got = names.get(sid)
            if got is None:
                row = con.execute("SELECT value FROM StringIds WHERE id = ?", (sid,)).fetchone()
                got = names[sid] = str(row[0]) if row else ""
            return got

        kinds: dict[str, int] = {}
        for table in (KERNEL, MEMCPY, MEMSET):
            if table not in tables:
                continue
            cols = _columns(con, table)
            pid_expr = "globalPid >> 24 & 16777215" if "globalPid" in cols else "0"
            name_col = next((n for n in ("demangledName", "shortName") if n in cols), None)
            corr = "correlationId" if "correlationId" in cols else "-1"
            sel = f"SELECT start, end, {corr}, {pid_expr}, {name_col or 'NULL'} FROM {table}"
            for start, end, cid, pid, nid in con.execute(sel):
                if table == KERNEL:
                    kname = name(nid)
                    kind = kinds.get(kname)
                    if kind is None:
                        kind = kinds[kname] = kernel_kind(kname)
                else:
                    kind = MEMORY
                c = of(pid)
                c.events += 1
                c.gpu.append((start / 1000.0, end / 1000.0, kind, cid if cid is not None else -1))
                if kind == COMM:
                    c.meta["comm_gpu"].append(start / 1000.0)
        if RUNTIME in tables:
            cols = _columns(con, RUNTIME)
            pid_expr = _pid_of_tid("globalTid") if "globalTid" in cols else "0"
            launch: dict[int, bool] = {}
            for start, end, cid, pid, nid in con.execute(
                f"SELECT start, end, correlationId, {pid_expr}, nameId FROM {RUNTIME}"
            ):
                if pid not in by_pid:
                    continue  # a process without kernels: its runtime calls explain nothing here
                c = by_pid[pid]
                c.events += 1
                c.corr_ts[cid] = start / 1000.0
                is_l = launch.get(nid)
                if is_l is None:
                    is_l = launch[nid] = is_launch(name(nid))
                if is_l:
                    c.launch_dur[cid] = (end - start) / 1000.0
        if NVTX in tables:
            _nvtx(con, of, name)
        return sorted(by_pid.items())
    except sqlite3.Error as exc:
        raise TraceError(f"cannot read the Nsight export: {exc}") from None
    finally:
        con.close()


def _nvtx(con: sqlite3.Connection, of: Callable[[int], Any], name: Callable[[Any], str]) -> None:
    cols = _columns(con, NVTX)
    text = "text" if "text" in cols else "NULL"
    text_id = "textId" if "textId" in cols else "NULL"
    pid_expr = _pid_of_tid("globalTid") if "globalTid" in cols else "0"
    tid_expr = "globalTid & 16777215" if "globalTid" in cols else "0"
    kinds: dict[str, tuple[bool, int]] = {}
    sel = (
        f"SELECT start, end, {text}, {text_id}, {pid_expr}, {tid_expr} FROM {NVTX} "
        f"WHERE eventType IN {NVTX_RANGE_TYPES} AND end IS NOT NULL"
    )
    for start, end, txt, tid_text, pid, tid in con.execute(sel):
        msg = txt if txt is not None else name(tid_text)
        # Classified by the text before its first comma: PyTorch's emit_nvtx ranges are
        # "aten::mul, op_id = 322567", one distinct message per op, and what a range is (a
        # step, a collective, data loading) is in its name.
        key = msg.partition(",")[0]
        known = kinds.get(key)
        if known is None:
            known = kinds[key] = (is_step(key), cpu_kind(key))
        c = of(pid)
        c.events += 1
        c.pids[pid] += 1
        ts, te = start / 1000.0, end / 1000.0
        if known[0]:
            c.steps.append((ts, te, tid))
        else:
            c.cpu[tid].append((ts, te, known[1]))
            if known[1] == COMM:
                c.meta["comm_cpu"].append((ts, tid))


def arrivals(c: Any, steps: list[tuple[float, float, Any]]) -> list[list[float]]:
    """Per analysed step, the wall-clock starts (us) of its collectives in order: the step
    thread's communication NVTX ranges, else the NCCL kernels."""
    tids = {t for _, _, t in steps}
    cpu = sorted(ts for ts, tid in c.meta.get("comm_cpu", ()) if tid in tids)
    starts = cpu or sorted(c.meta.get("comm_gpu", ()))
    t0 = c.meta.get("t0_us", 0.0)
    out = []
    for lo, hi, _ in steps:
        out.append([t0 + ts for ts in starts if lo <= ts < hi])
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
                    f"JOIN StringIds s ON s.id = k.{name_col} GROUP BY s.value"
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
                f"FROM {NVTX} e {join} WHERE e.eventType IN {NVTX_RANGE_TYPES} AND e.end IS NOT NULL "
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
