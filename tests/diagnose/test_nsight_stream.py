"""The Nsight reader streams a process's GPU events and CPU ranges sorted from SQLite instead
of holding them: its breakdown must equal the one computed from the same events held whole (the
Kineto path, rank._gpu_totals), for random exports with steps (the last one left out by launch
time, or kept with --all-steps), overlapping NCCL and compute kernels, memcpys, zero-length
events, kernels without a launch call and launch calls without a kernel; and the swept CPU
breakdown of a CPU-only process (rank._cpu_totals) for ranges of every class on the step thread
and on others, with and without steps."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from pgdoctor.diagnose.profile import rank
from pgdoctor.diagnose.profile.names import cpu_kind, is_launch, is_step, kernel_kind

KERNEL_NAMES = (
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>",
    "ampere_sgemm_128x64_tn",
    "cudaStreamSynchronize_Sync_kernel",  # neither compute nor communication
)
RUNTIME_NAMES = ("cudaLaunchKernel_v7000", "cudaMemcpyAsync_v3020", "cudaStreamSynchronize")
NVTX_NAMES = ("step n=0", "fwd", "comm.all_reduce bucket=0", "data")


def _export(path: Path, seed: int) -> list[tuple]:
    """A two-process export; returns its GPU rows (pid, start, end, is_kernel, name, corr)."""
    rnd = random.Random(seed)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT)")
    con.execute("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.25.0')")
    con.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    names = [*KERNEL_NAMES, *RUNTIME_NAMES, *NVTX_NAMES]
    con.executemany("INSERT INTO StringIds VALUES (?, ?)", list(enumerate(names)))
    sid = {n: i for i, n in enumerate(names)}
    con.execute(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, correlationId INTEGER, "
        "globalPid INTEGER, demangledName INTEGER)"
    )
    con.execute(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, correlationId INTEGER, "
        "globalPid INTEGER)"
    )
    con.execute(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, correlationId INTEGER, "
        "globalTid INTEGER, nameId INTEGER)"
    )
    con.execute(
        "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, textId INTEGER, "
        "text TEXT, globalTid INTEGER)"
    )
    gpu = []
    for pid in (100, 200):
        gtid = (pid << 24) | 7
        steps = rnd.randint(0, 4)
        for n in range(steps):
            t = n * 10_000_000
            con.execute(
                "INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, ?, NULL, ?)",
                (t, t + 9_000_000, sid["step n=0"], gtid),
            )
            con.execute(
                "INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, NULL, ?, ?)",
                (t + 100_000, t + 600_000, "data", gtid),
            )
        for corr in range(1, rnd.randint(50, 300)):
            launch = rnd.randint(0, max(steps, 1) * 10_000_000)
            if rnd.random() < 0.9:  # some GPU events have no launch call in the export
                name = rnd.choice(RUNTIME_NAMES)
                dur = rnd.choice((2_000, 5_000, 20_000))
                con.execute(
                    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, ?, ?, ?)",
                    (launch, launch + dur, corr, gtid, sid[name]),
                )
            if rnd.random() < 0.1:
                continue  # a launch call without a GPU event
            start = launch + rnd.randint(0, 3_000_000)
            end = start + rnd.choice((0, 1_000, 3_000, 50_000, 400_000, 2_000_000))
            if rnd.random() < 0.8:
                name = rnd.choice(KERNEL_NAMES)
                con.execute(
                    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, ?, ?, ?)",
                    (start, end, corr, pid << 24, sid[name]),
                )
                gpu.append((pid, start, end, True, name, corr))
            else:
                con.execute(
                    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, ?, ?)",
                    (start, end, corr, pid << 24),
                )
                gpu.append((pid, start, end, False, "", corr))
    con.commit()
    con.close()
    return gpu


def _held_whole(path: Path, gpu: list[tuple], pid: int) -> rank._Collect:
    """The collection as a reader that holds every event fills it."""
    c = rank._Collect()
    con = sqlite3.connect(path)
    names = dict(con.execute("SELECT id, value FROM StringIds"))
    for start, end, corr, gtid, nid in con.execute("SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
        if gtid >> 24 == pid:
            c.corr_ts[corr] = start / 1000.0
            if is_launch(names[nid]):
                c.launch_dur[corr] = (end - start) / 1000.0
    for start, end, _, tid_text, text, gtid in con.execute("SELECT * FROM NVTX_EVENTS"):
        if gtid >> 24 != pid:
            continue
        msg = text if text is not None else names[tid_text]
        if is_step(msg):
            c.steps.append((start / 1000.0, end / 1000.0, gtid & 16777215))
        else:
            c.cpu[gtid & 16777215].append((start / 1000.0, end / 1000.0, cpu_kind(msg)))
    con.close()
    for p, start, end, is_kernel, name, corr in gpu:
        if p == pid:
            kind = kernel_kind(name) if is_kernel else rank.MEMORY
            c.gpu.append((start / 1000.0, end / 1000.0, kind, corr))
    return c


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("all_steps", [False, True])
def test_streamed_breakdown_equals_the_one_held_whole(tmp_path: Path, seed: int, all_steps: bool) -> None:
    db = tmp_path / "gpu.sqlite"
    gpu = _export(db, seed)
    streamed = rank.summarize_nsight(str(db), 0, all_steps=all_steps)
    assert [s["pid"] for s in streamed] == [100, 200]
    for i, s in enumerate(streamed):
        c = _held_whole(db, gpu, s["pid"])
        whole = rank.summary_of(c, str(db), i, "process order", all_steps)
        assert s["kind"] == whole["kind"] == "gpu"
        # The overlap is |comm| + |compute| - |either| when streamed: equal up to float rounding.
        for key in ("comm_comp_overlap_pct", "exposed_comm_pct", "exposed_comm_ms"):
            if whole[key] is None:
                assert s[key] is None
            else:
                assert s[key] == pytest.approx(whole[key], abs=0.011), key
        same = {k for k in whole if k not in ("comm_comp_overlap_pct", "exposed_comm_pct", "exposed_comm_ms")}
        assert {k: s[k] for k in same if k != "events"} == {k: whole[k] for k in same if k != "events"}
        assert whole["steps_in_trace"] >= 0 and s["kernels"] > 0


CPU_NAMES = ("fwd", "bwd", "data", "comm.all_reduce bucket=0", "gloo:all_reduce", "aten::mul, op_id = 7")


def _cpu_export(path: Path, seed: int, steps: int) -> None:
    """A CPU-only two-process export: ranges of every class on the step thread and on others,
    overlapping, zero-length and reversed ones among them."""
    rnd = random.Random(seed)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE EXPORT_META_DATA (name TEXT, value TEXT)")
    con.execute("INSERT INTO EXPORT_META_DATA VALUES ('EXPORT_SCHEMA_VERSION', '3.0.0')")
    con.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    con.execute("INSERT INTO StringIds VALUES (1, 'step n=0'), (2, 'fwd')")
    con.execute(
        "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, textId INTEGER, "
        "text TEXT, globalTid INTEGER)"
    )
    for pid in (100, 200):
        main, other = (pid << 24) | 1, (pid << 24) | 2
        for n in range(steps):
            t = n * 10_000_000
            con.execute("INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, 1, NULL, ?)", (t, t + 9_000_000, main))
        for _ in range(rnd.randint(20, 200)):
            start = rnd.randint(-1_000_000, max(steps, 1) * 10_000_000)
            end = start + rnd.choice((0, -5_000, 10_000, 300_000, 2_000_000, 6_000_000))
            name = rnd.choice(CPU_NAMES)
            tid = main if rnd.random() < 0.7 else other
            if name == "fwd" and rnd.random() < 0.5:  # registered text
                con.execute("INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, 2, NULL, ?)", (start, end, tid))
            else:
                con.execute("INSERT INTO NVTX_EVENTS VALUES (?, ?, 60, NULL, ?, ?)", (start, end, name, tid))
    con.commit()
    con.close()


def _cpu_held_whole(path: Path, pid: int) -> rank._Collect:
    c = rank._Collect()
    con = sqlite3.connect(path)
    names = dict(con.execute("SELECT id, value FROM StringIds"))
    for start, end, _, tid_text, text, gtid in con.execute("SELECT * FROM NVTX_EVENTS"):
        if gtid >> 24 != pid or end < start:
            continue  # a range that ends before it starts is no range (nsight.timed, rank._collect)
        key = (text if text is not None else names[tid_text]).partition(",")[0]
        if is_step(key):
            c.steps.append((start / 1000.0, end / 1000.0, gtid & 16777215))
        else:
            c.cpu[gtid & 16777215].append((start / 1000.0, end / 1000.0, cpu_kind(key)))
    con.close()
    return c


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("steps", [0, 1, 4])
def test_swept_cpu_breakdown_equals_the_one_held_whole(tmp_path: Path, seed: int, steps: int) -> None:
    db = tmp_path / "cpu.sqlite"
    _cpu_export(db, seed, steps)
    swept = rank.summarize_nsight(str(db), 0)
    assert [s["pid"] for s in swept] == [100, 200]
    for i, s in enumerate(swept):
        whole = rank.summary_of(_cpu_held_whole(db, s["pid"]), str(db), i, "process order", False)
        assert s["kind"] == whole["kind"] == "cpu"
        assert s.keys() - {"pid", "_arrivals"} == whole.keys()
        for key, want in whole.items():
            if isinstance(want, float) and key != "window_start_ms":
                # Summed stretch by stretch instead of span by span: equal up to float rounding.
                assert s[key] == pytest.approx(want, abs=0.011), key
            elif key != "events":
                assert s[key] == want, key
        assert s["compute_ms"] > 0 or s["data_ms"] > 0 or s["comm_ms"] > 0


def test_too_many_keys_for_sql_parameters_are_filtered_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the linked SQLite's parameter limit (999 before 3.32) the kept ranges are chosen in
    Python: the same summaries."""
    from pgdoctor.diagnose.profile import nsight

    db = tmp_path / "gpu.sqlite"
    _export(db, 3)
    _cpu_export(tmp_path / "cpu.sqlite", 3, 4)
    for path in (db, tmp_path / "cpu.sqlite"):
        in_sql = rank.summarize_nsight(str(path), 0)
        monkeypatch.setattr(nsight, "_max_params", lambda con: 0)
        assert rank.summarize_nsight(str(path), 0) == in_sql
        monkeypatch.undo()
