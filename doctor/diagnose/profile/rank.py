"""One rank's trace -> its time breakdown, in one streaming pass; only the summary is kept.

GPU traces (any kernel, memcpy or memset event) follow Holistic Trace Analysis: the analysed
window runs from the first to the last kept GPU event; compute = union of compute kernels,
non-compute = union of all GPU events minus compute (communication, memory, other), idle =
window minus the union of all GPU events; overlap = share of the communication union during
which compute kernels run. With two or more ProfilerSteps the kernels launched from the last
step on are left out (`all_steps` keeps them), as HTA does.

CPU traces use the thread that runs the steps: compute = its ranges other than collectives
and data loading, data = its DataLoader ranges, communication = collectives on any thread (the
backend's own threads run gloo's all-reduces) not hidden behind that thread's compute, idle =
the rest of the analysed steps.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from pgdoctor.diagnose.profile import intervals as iv
from pgdoctor.diagnose.profile.names import (
    COMM,
    COMPUTE,
    GPU_CATEGORIES,
    MEMORY,
    cpu_kind,
    is_launch,
    is_step,
    kernel_kind,
)
from pgdoctor.diagnose.profile.reader import TraceError, open_text, scan
from pgdoctor.knowledge.ranks import MAX_RANK, bounded

MAX_STEP_SPANS = 64  # steps kept for the report's timeline
_MAX_US = 1e18  # microseconds: a trace's times are finite and within 30,000 years
_YEAR_2000_US = 946_684_800e6  # no profiler wrote a trace before this on the wall clock


class MergedTrace(TraceError):
    """One file holds several ranks (pgdoctor's merged Perfetto trace): not one rank's trace."""


@dataclass
class _Collect:
    """What one pass keeps: GPU event intervals, steps, launch calls, CPU ranges."""

    gpu: list[tuple[float, float, int, int]] = field(default_factory=list)  # ts, end, kind, correlation
    steps: list[tuple[float, float, Any]] = field(default_factory=list)  # ts, end, tid
    corr_ts: dict[int, float] = field(default_factory=dict)
    launch_dur: dict[int, float] = field(default_factory=dict)
    cpu: dict[Any, list[tuple[float, float, int]]] = field(default_factory=lambda: defaultdict(list))
    meta: dict[str, Any] = field(default_factory=dict)
    pids: Counter[Any] = field(default_factory=Counter)
    rank_tracks: int = 0  # process tracks named "rank N": a trace merged from several ranks
    events: int = 0
    # Where the GPU events are not held in `gpu` (an Nsight export streams them from its tables):
    # (cut, last step's end) -> the totals of the events kept; `gpu_rows` counts them.
    gpu_source: Optional[Callable[[Optional[float], Optional[float]], iv.GpuTotals]] = None
    gpu_rows: int = 0
    # Likewise for CPU ranges: (step thread, analysed window) -> their totals, and per thread the
    # time in its ranges and their first start and last end (which pick the step thread and, with
    # no steps, its window).
    cpu_source: Optional[Callable[[Any, iv.Spans], iv.CpuTotals]] = None
    cpu_threads: dict[Any, tuple[float, float, float]] = field(default_factory=dict)


def _collect(path: str, gpu_trace: bool = False) -> _Collect:
    c = _Collect()
    kinds: dict[str, int] = {}
    # name -> (is a step, CPU kind); a trace repeats a few thousand names a million times.
    cpu_names: dict[str, tuple[bool, int]] = {}
    gpu, corr_ts, launch_dur, cpu, pids, steps = c.gpu, c.corr_ts, c.launch_dur, c.cpu, c.pids, c.steps
    cpu_cats = (None, "cpu_op", "user_annotation", "python_function")
    for what, item in scan(path, gpu_only=gpu_trace):
        if what == "meta":
            c.meta[item[0]] = item[1]
            continue
        c.events += 1
        if item.get("ph") != "X":
            if item.get("ph") == "M" and item.get("name") == "process_name":
                args = item.get("args")
                if isinstance(args, dict) and str(args.get("name", "")).startswith("rank "):
                    c.rank_tracks += 1
            continue
        try:
            raw = item["ts"]
            ts = float(raw)
            end = ts + float(item.get("dur", 0.0))
        except (KeyError, TypeError, ValueError):
            continue
        # One comparison drops NaN and infinity (1e400 in the JSON), a negative duration and
        # times past 30,000 years; `true` is no time. Every sum and share below stays finite.
        if not -_MAX_US <= ts <= end <= _MAX_US or type(raw) is bool:
            continue
        name = item.get("name", "")
        if type(name) is not str:
            name = str(name)
        cat = item.get("cat")
        if type(cat) is not str:  # a list is unhashable (the set tests below): no category
            cat = None
        args = item.get("args")
        corr = args.get("correlation") if type(args) is dict else None
        if cat in GPU_CATEGORIES:
            kind = kinds.get(name)
            if kind is None:
                kind = kinds[name] = kernel_kind(name)
            gpu.append((ts, end, kind, corr if type(corr) is int else -1))
            continue
        if cat == "gpu_user_annotation":
            continue
        tid = track(item.get("tid"))
        pids[track(item.get("pid"))] += 1
        if type(corr) is int:
            corr_ts[corr] = ts
            if cat == "cuda_runtime" or cat == "cuda_driver":
                if is_launch(name):
                    launch_dur[corr] = end - ts
                continue
        known = cpu_names.get(name)
        if known is None:
            known = cpu_names[name] = (is_step(name), cpu_kind(name))
        if known[0]:
            steps.append((ts, end, tid))
        elif cat in cpu_cats and not name.startswith("PyTorch Profiler"):
            cpu[tid].append((ts, end, known[1]))
    return c


def track(v: Any) -> str:
    """A trace's pid or tid as the one type the analysis keys and sorts by: Kineto writes numbers,
    other writers strings ("7" is thread 7); a list or an object (unhashable) or a float is no
    track id: "". Steps on tids 7 and "7" at one time compared int with str in a sort."""
    return str(v) if type(v) is int or type(v) is str else ""


def _rank_of(c: _Collect, position: int, path: str) -> tuple[int, str]:
    info = c.meta.get("distributedInfo")
    # Every source of a rank is bounded (knowledge.ranks.bounded): true, 1e400 or 10**30 is no rank.
    if isinstance(info, dict) and (r := bounded(info.get("rank"))) is not None:
        return r, "distributedInfo"
    base = path.rsplit("/", 1)[-1]
    if base.startswith("rank") and base.endswith(".events.jsonl"):
        r = bounded(base[4 : -len(".events.jsonl")])
        if r is not None:
            return r, "file name"
    if len(c.pids) == 1:
        pid = bounded(next(iter(c.pids)))
        if pid is not None and base.endswith(".events.jsonl"):
            return pid, "pid"
    return position, "position"


def _pct(part: float, whole: float) -> float:
    return round(100.0 * part / whole, 2) if whole > 0 else 0.0


def _analysed_steps(
    c: _Collect, all_steps: bool
) -> tuple[list[tuple[float, float, Any]], Optional[float], bool]:
    """The steps analysed, the cut (launches at or after it are left out), whether one was dropped."""
    steps = sorted(set(c.steps))
    if len(steps) >= 2 and not all_steps:
        return steps[:-1], steps[-1][0], True
    return steps, None, False


def _has_gpu(path: str) -> bool:
    """Kineto lists the devices in the header; a CPU-only profile has `"deviceProperties": []`."""
    with open_text(path) as f:
        head = f.read(16384)
    at = head.find('"deviceProperties"')
    return at >= 0 and head[head.find("[", at) + 1 :].lstrip()[:1] == "{"


def summarize(path: str, position: int, all_steps: bool = False) -> dict[str, Any]:
    # On a GPU host most CPU ops are not read at all; a trace that turns out to hold no GPU event
    # (a CPU-only profile on a GPU host) is read again in full.
    gpu_host = not path.endswith(".jsonl") and _has_gpu(path)
    c = _collect(path, gpu_trace=gpu_host)
    if gpu_host and not c.gpu:
        c = _collect(path)
    rank, rank_from = _rank_of(c, position, path)
    return summary_of(c, path, rank, rank_from, all_steps)


def summarize_nsight(path: str, position: int, all_steps: bool = False) -> list[dict[str, Any]]:
    """One summary per process of an Nsight Systems export that has kernels or NVTX ranges. A
    file with one such process takes its rank from its name (`rank3`, `..._rank_3`) or its
    position; several processes in one report are ranks in pid order."""
    from pgdoctor.diagnose.profile import nsight

    named = nsight.rank_in_name(path)
    out = []
    with nsight.collect(path, _Collect) as procs:  # open while the GPU events are streamed
        if not procs:
            raise TraceError("an Nsight export without kernels or NVTX ranges: nothing to analyse")
        for i, (pid, c) in enumerate(procs):
            if len(procs) == 1:
                rank, rank_from = (named, "file name") if named is not None else (position, "position")
                s = summary_of(c, path, rank, rank_from, all_steps)
            else:
                s = {**summary_of(c, path, i, "process order", all_steps), "pid": pid}
            steps = _analysed_steps(c, all_steps)[0]
            if steps and c.meta.get("t0_us"):  # wall-clock times: comparable across ranks and files
                s["_arrivals"] = nsight.arrivals(c, steps)
            out.append(s)
    return out


def summary_of(c: _Collect, path: str, rank: int, rank_from: str, all_steps: bool) -> dict[str, Any]:
    steps, cut, dropped = _analysed_steps(c, all_steps)
    has_gpu = bool(c.gpu or c.gpu_rows)
    if not has_gpu and not c.steps and not any(c.cpu.values()) and not c.cpu_threads:
        raise TraceError("no complete (ph X) events: nothing to analyse")
    if c.rank_tracks >= 2:
        raise MergedTrace(
            f"holds {c.rank_tracks} ranks merged into one trace (python -m pgdoctor.trace); "
            "give the per-rank rank<N>.events.jsonl files instead"
        )
    out: dict[str, Any] = {
        "file": path,
        "rank_from": rank_from,
        "events": c.events,
        "steps_in_trace": len(set(c.steps)),
        "last_step_left_out": dropped,
    }
    info = c.meta.get("distributedInfo")
    if isinstance(info, dict):
        out["world_size"] = bounded(info.get("world_size"), MAX_RANK + 1)
        out["backend"] = str(info.get("backend"))[:64] if info.get("backend") is not None else None
    out.update(_gpu(c, steps, cut, all_steps) if has_gpu else _cpu(c, steps))
    out["steps"] = len(steps)
    if dropped:  # the step left out: its length tells a rank that waited on a stopped peer
        last = sorted(set(c.steps))[-1]
        out["last_step_ms"] = round((last[1] - last[0]) / 1000.0, 3)
    clock = _wall_clock(c)
    if clock is not None:
        out["_clock_us"] = clock
    return {"rank": rank, **out}


def _wall_clock(c: _Collect) -> Optional[tuple[float, float]]:
    """The trace's first and last event on the wall clock (microseconds): Kineto's `ts` counts
    from `baseTimeNanoseconds` (older traces hold epoch microseconds and no base). Runs and early
    stops are told by it (runs.py). An Nsight export: its CPU ranges' first start and last end
    per thread from the session's start (`t0_us`); its GPU events are not held here."""
    if c.gpu_source is not None or c.cpu_source is not None:
        t0 = c.meta.get("t0_us") or 0.0
        if not c.cpu_threads or t0 < _YEAR_2000_US:
            return None
        return (
            t0 + min(f for _, f, _ in c.cpu_threads.values()),
            t0 + max(e for _, _, e in c.cpu_threads.values()),
        )
    starts = [s for s, _, _ in c.steps] + [g[0] for g in c.gpu] + [r[0] for rs in c.cpu.values() for r in rs]
    ends = [e for _, e, _ in c.steps] + [g[1] for g in c.gpu] + [r[1] for rs in c.cpu.values() for r in rs]
    if not starts:
        return None
    base = c.meta.get("baseTimeNanoseconds")
    base_us = 0.0
    if isinstance(base, (int, float)) and not isinstance(base, bool) and 0 <= base < _MAX_US * 1000:
        base_us = float(base) / 1000.0
    first = min(starts) + base_us
    if first < _YEAR_2000_US:  # times from zero (a hand-made or converted trace): no wall clock
        return None
    return (first, max(ends) + base_us)


def _step_stats(steps: list[tuple[float, float, Any]], window: tuple[float, float]) -> dict[str, Any]:
    if steps:
        durs = [e - s for s, e, _ in steps]
        step_ms = sum(durs) / len(durs) / 1000.0
    else:
        step_ms = (window[1] - window[0]) / 1000.0
    spans = [[round(s / 1000.0, 3), round((e - s) / 1000.0, 3)] for s, e, _ in steps[:MAX_STEP_SPANS]]
    return {
        "step_ms": round(step_ms, 3),
        "step_spans_ms": spans,
        "window_start_ms": round(window[0] / 1000.0, 3),
    }


def _gpu(
    c: _Collect, steps: list[tuple[float, float, Any]], cut: Optional[float], all_steps: bool
) -> dict[str, Any]:
    last_end = max(e for _, e, _ in steps) if all_steps and steps else None
    t = c.gpu_source(cut, last_end) if c.gpu_source is not None else _gpu_totals(c, cut, last_end)
    span = t.window[1] - t.window[0]
    idle_t = span - t.busy
    n = max(len(steps), 1)
    data = _cpu_data_ms(c, t.window)
    return {
        "kind": "gpu",
        "compute_pct": _pct(t.compute, span),
        "non_compute_pct": _pct(t.busy - t.compute, span),
        "idle_pct": _pct(idle_t, span),
        "comm_comp_overlap_pct": _pct(t.overlap, t.comm) if t.comm > 0 else None,
        "comm_pct": _pct(t.comm, span),
        "memory_pct": _pct(t.memory, span),
        "exposed_comm_pct": _pct(t.comm - t.overlap, span),
        "compute_ms": round(t.compute / n / 1000.0, 3),
        "comm_ms": round(t.comm / n / 1000.0, 3),
        "exposed_comm_ms": round((t.comm - t.overlap) / n / 1000.0, 3),
        "idle_ms": round(idle_t / n / 1000.0, 3),
        "data_ms": round(data / n / 1000.0, 3),
        "window_ms": round(span / 1000.0, 3),
        "kernels": t.kernels,
        "short_kernel_pct": _pct(t.short, t.launched) if t.launched else None,
        "wait_ms": round(t.comm / n / 1000.0, 3),
        **_step_stats(steps, t.window),
    }


def _gpu_totals(c: _Collect, cut: Optional[float], last_end: Optional[float]) -> iv.GpuTotals:
    """The GPU totals of the events held in `c.gpu` (a Kineto trace, read whole)."""
    kept = c.gpu
    if cut is not None:
        kept = [g for g in c.gpu if c.corr_ts.get(g[3], cut) < cut]
    elif last_end is not None:
        kept = [g for g in c.gpu if g[3] in c.corr_ts and c.corr_ts[g[3]] <= last_end]
    if not kept:
        kept = c.gpu
    busy = iv.union((s, e) for s, e, _, _ in kept)
    compute = iv.union((s, e) for s, e, k, _ in kept if k == COMPUTE)
    comm = iv.union((s, e) for s, e, k, _ in kept if k == COMM)
    memory = iv.union((s, e) for s, e, k, _ in kept if k == MEMORY)
    # Only zero-length GPU events leave the union empty: their own span is the window.
    window = (busy[0][0], busy[-1][1]) if busy else (min(g[0] for g in kept), max(g[1] for g in kept))
    # Kernels shorter on the GPU than their launch call on the CPU: the CPU cannot keep the GPU fed.
    launched = [(e - s, c.launch_dur[k]) for s, e, kind, k in kept if kind == COMPUTE and k in c.launch_dur]
    return iv.GpuTotals(
        busy=iv.total(busy),
        compute=iv.total(compute),
        comm=iv.total(comm),
        memory=iv.total(memory),
        overlap=iv.total(iv.intersect(comm, compute)),
        window=window,
        kernels=len(kept),
        launched=len(launched),
        short=sum(1 for gpu_us, cpu_us in launched if gpu_us < cpu_us),
    )


def _cpu_data_ms(c: _Collect, window: tuple[float, float]) -> float:
    spans = [(s, e) for ranges in c.cpu.values() for s, e, k in ranges if k == MEMORY]
    return iv.total(iv.clip(iv.union(spans), *window))


def _main_thread(c: _Collect) -> Any:
    if c.steps:
        return Counter(t for _, _, t in c.steps).most_common(1)[0][0]
    if c.cpu_source is not None:
        busy = {tid: b for tid, (b, _, _) in c.cpu_threads.items()}
    else:
        busy = {tid: sum(e - s for s, e, _ in r) for tid, r in c.cpu.items()}
    return max(busy, key=lambda t: busy[t]) if busy else None


def _cpu(c: _Collect, steps: list[tuple[float, float, Any]]) -> dict[str, Any]:
    tid = _main_thread(c)
    if c.cpu_source is not None:
        bounds = c.cpu_threads.get(tid)
        first_last = (bounds[1], bounds[2]) if bounds else None
    else:
        main = c.cpu.get(tid, [])
        first_last = (min(s for s, _, _ in main), max(e for _, e, _ in main)) if main else None
    # Steps of no length (every `dur` 0 or false) leave no window: the thread's ranges are it, as
    # with no steps (an empty window was an IndexError that skipped the trace).
    window_spans = iv.union((s, e) for s, e, _ in steps) if steps else []
    if not window_spans and first_last:
        window_spans = [first_last]
    if not window_spans:
        return {
            "kind": "cpu",
            "compute_pct": 0.0,
            "non_compute_pct": 0.0,
            "idle_pct": 0.0,
            "comm_comp_overlap_pct": None,
            "step_ms": 0.0,
            "wait_ms": 0.0,
            "compute_ms": 0.0,
            "data_ms": 0.0,
            "comm_ms": 0.0,
            "idle_ms": 0.0,
            "note": "no CPU ranges",
        }
    window = (window_spans[0][0], window_spans[-1][1])
    span = iv.total(window_spans)
    t = c.cpu_source(tid, window_spans) if c.cpu_source is not None else _cpu_totals(c, tid, window_spans)
    idle_t = max(span - t.compute - t.data - t.exposed, 0.0)
    n = max(len(steps), 1)
    return {
        "kind": "cpu",
        "compute_pct": _pct(t.compute, span),
        "non_compute_pct": _pct(t.data + t.exposed, span),
        "idle_pct": _pct(idle_t, span),
        "comm_comp_overlap_pct": _pct(t.overlap, t.comm) if t.comm > 0 else None,
        "comm_pct": _pct(t.exposed, span),
        "data_pct": _pct(t.data, span),
        "exposed_comm_pct": _pct(t.exposed, span),
        "compute_ms": round(t.compute / n / 1000.0, 3),
        "data_ms": round(t.data / n / 1000.0, 3),
        "comm_ms": round(t.comm / n / 1000.0, 3),
        "exposed_comm_ms": round(t.exposed / n / 1000.0, 3),
        "idle_ms": round(idle_t / n / 1000.0, 3),
        "window_ms": round(span / 1000.0, 3),
        "wait_ms": round(_cpu_wait(t, span) / n / 1000.0, 3),
        **_collective_calls(c, tid, window_spans, n),
        **_step_stats(steps, window),
    }


def _collective_calls(c: _Collect, tid: Any, window_spans: iv.Spans, n: int) -> dict[str, Any]:
    """How many collectives the step thread issues per step (its communication ranges, nested
    ones such as record_param_comms around c10d::allreduce_ counted once). Many small ones are a
    cost of their own: each pays the backend's fixed latency. An Nsight export keeps its
    communication ranges aside (`comm_cpu`: start, thread, end) for the arrival skew."""
    if c.cpu_source is not None:
        mine = [(s, e) for s, t, e in c.meta.get("comm_cpu", ()) if t == tid]
    else:
        mine = [(s, e) for s, e, k in c.cpu.get(tid, []) if k == COMM]
    calls = iv.intersect(iv.union(mine), window_spans)
    return {"collectives_per_step": round(len(calls) / n, 1)} if calls else {}


def _cpu_wait(t: iv.CpuTotals, span: float) -> float:
    """What the step thread waits for the others: the collectives in flight while it neither
    computes nor loads data. Its time outside every profiled op with no collective in flight
    (Python code, a sleep, I/O outside the DataLoader) is its own work, not waiting: counting it
    as waiting hid a rank stalled on the host behind the ranks that wait for it in the
    all-reduce. A trace without collectives keeps the old reading (all time outside its work)."""
    if t.comm > 0:
        return t.exposed
    return max(span - t.compute - t.data, 0.0)


def _cpu_totals(c: _Collect, tid: Any, window_spans: iv.Spans) -> iv.CpuTotals:
    """The CPU totals of the ranges held in `c.cpu` (a Kineto trace, read whole)."""
    main = c.cpu.get(tid, [])
    comm_main = iv.union((s, e) for s, e, k in main if k == COMM)
    data = iv.subtract(iv.union((s, e) for s, e, k in main if k == MEMORY), comm_main)
    compute = iv.subtract(iv.subtract(iv.union((s, e) for s, e, k in main if k == COMPUTE), comm_main), data)
    compute = iv.intersect(compute, window_spans)
    data = iv.intersect(data, window_spans)
    comm_any = iv.union(
        [*comm_main, *((s, e) for t, r in c.cpu.items() if t != tid for s, e, k in r if k == COMM)]
    )
    comm_any = iv.intersect(comm_any, window_spans)
    comm_exposed = iv.subtract(iv.subtract(comm_any, compute), data)
    return iv.CpuTotals(
        compute=iv.total(compute),
        data=iv.total(data),
        comm=iv.total(comm_any),
        exposed=iv.total(comm_exposed),
        overlap=iv.total(iv.intersect(comm_any, compute)),
    )
