"""`pgdoctor diagnose` on Nsight Systems SQLite exports: real ones (tests/fixtures/nsys: GPU
exports of nsys-ai, recorded with nsys 2026.x; a CPU-only 2-rank pgdoctor run recorded with
Debian's nsys 2022.4), schema variants, files that are not exports, and, with the real nsys
2022.4, per-kernel and per-range totals against `nsys stats`."""

from __future__ import annotations

import csv
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from pgdoctor.diagnose.profile.nsight import totals
from tests.helpers.nsys import env_with_nsys, nsys_or_skip
from tests.helpers.paths import FIXTURES

NSYS = FIXTURES / "nsys"
EXPORTS = sorted(NSYS.glob("*.sqlite"))


def _diagnose(*paths: Path) -> dict:
    res = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "diagnose", "--json", *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode in (0, 1), res.stderr
    return json.loads(res.stdout)


def test_cpu_export_names_the_slow_rank_and_its_cause() -> None:
    out = _diagnose(NSYS / "cpu_ddp_imbalance_2ranks.sqlite")
    tr = out["traces"]
    assert sorted(tr["ranks"]) == ["0", "1"] and {r["rank_from"] for r in tr["ranks"].values()} == {
        "process order"
    }
    assert tr["straggler"]["rank"] == 1 and tr["straggler"]["cause"] == "compute"
    r0, r1 = tr["ranks"]["0"], tr["ranks"]["1"]
    assert r0["kind"] == r1["kind"] == "cpu" and r0["steps"] == r1["steps"] == 3
    assert r1["compute_ms"] > 1.5 * r0["compute_ms"]  # rank 1 does twice the work
    assert r0["wait_ms"] > 2 * r1["wait_ms"]  # and rank 0 waits for it
    assert "RUN406" in {f["code"] for f in out["findings"]}
    # Arrival of each comm.all_reduce, step by step: rank 1 comes last at most of them.
    late = tr["arrival"]
    assert late["last_rank"] == 1 and late["collectives"] == 9 and late["last_count"] >= 7
    assert late["median_skew_ms"] > 1.0


def test_per_rank_exports_are_aligned_by_their_session_start(tmp_path: Path) -> None:
    """Two files, one process each, with the same relative times: rank 1's session started
    5 ms later on the wall clock, so it arrives last at every collective."""
    for rank, start_ns in ((0, 1_000_000_000_000), (1, 1_000_005_000_000)):
        db = tmp_path / f"job_rank{rank}.sqlite"
        _inline_text_export(db, pids=(100 + rank,))
        con = sqlite3.connect(db)
        con.execute(
            "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT)"
        )
        con.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?, '', '')", (start_ns,))
        con.commit()
        con.close()
    tr = _diagnose(tmp_path)["traces"]
    assert {r: s["rank_from"] for r, s in tr["ranks"].items()} == {"0": "file name", "1": "file name"}
    assert tr["arrival"]["last_by_rank"] == {"1": 3} and tr["arrival"]["median_skew_ms"] == pytest.approx(5.0)


@pytest.mark.parametrize("name", ["h100_2gpu_1s", "mfu_2gpu_before"])
def test_gpu_exports_give_one_rank_per_process_with_a_gpu_breakdown(name: str) -> None:
    ranks = _diagnose(NSYS / f"{name}.sqlite")["traces"]["ranks"]
    assert sorted(ranks) == ["0", "1"]
    con = sqlite3.connect(NSYS / f"{name}.sqlite")
    pids = [p for (p,) in con.execute("SELECT DISTINCT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY 1")]
    assert len(pids) == 2
    for i, s in ranks.items():
        assert s["kind"] == "gpu" and s["pid"] == (pids[int(i)] >> 24) & 0xFFFFFF
        assert abs(s["compute_pct"] + s["non_compute_pct"] + s["idle_pct"] - 100.0) < 0.1
        # The analysed window is the first to the last GPU event of that process.
        lo, hi = con.execute(
            "SELECT min(start), max(end) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE globalPid = ?", (pids[int(i)],)
        ).fetchone()
        assert s["window_ms"] >= (hi - lo) / 1e6 * 0.999


def test_export_without_processes_is_one_rank_and_combines_with_a_log(tmp_path: Path) -> None:
    log = tmp_path / "rank0.log"
    log.write_text(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity of 79.10 GiB of which 1.2 GiB is free.\n"
    )
    out = _diagnose(log, NSYS / "healthy_1pct.sqlite")
    assert list(out["traces"]["ranks"]) == ["0"] and out["traces"]["ranks"]["0"]["kind"] == "gpu"
    assert any(f["code"].startswith("RUN") and "memory" in f["title"].lower() for f in out["findings"])


def _inline_text_export(
    path: Path, major: int = 3, meta_table: str = "EXPORT_META_DATA", pids: tuple[int, ...] = (100, 200)
) -> None:
    """A CPU-only export as older nsys versions wrote it: NVTX text inline, no textId column."""
    con = sqlite3.connect(path)
    con.execute(f"CREATE TABLE {meta_table} (name TEXT, value TEXT)")
    con.execute(
        f"INSERT INTO {meta_table} VALUES ('EXPORT_SCHEMA_VERSION', '{major}.0.0'), "
        f"('EXPORT_SCHEMA_VERSION_MAJOR', '{major}')"
    )
    con.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    con.execute(
        "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT, "
        "globalTid INTEGER)"
    )
    rows = []
    for pid, slow in zip(pids, (1, 3)):  # the second process computes three times longer
        gtid = (pid << 24) | pid
        for n in range(4):
            t = n * 100_000_000
            rows.append((t, t + 90_000_000, 59, f"step n={n}", gtid))
            rows.append((t + 1_000_000, t + 1_000_000 + slow * 20_000_000, 59, "fwd", gtid))
            rows.append((t + 70_000_000, t + 89_000_000, 59, "comm.all_reduce bucket=0 bytes=4", gtid))
    con.executemany("INSERT INTO NVTX_EVENTS VALUES (?, ?, ?, ?, ?)", rows)
    con.commit()
    con.close()


def test_inline_text_schema_and_its_totals(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    _inline_text_export(db)
    ranks = _diagnose(db)["traces"]["ranks"]
    assert ranks["1"]["compute_ms"] == pytest.approx(3 * ranks["0"]["compute_ms"], rel=0.01)
    t = totals(str(db))
    assert t["kernels"] == {} and t["ranges"]["fwd"] == (4 * 20_000_000 + 4 * 60_000_000, 8)


@pytest.mark.parametrize("case", ["not an export", "future schema", "truncated"])
def test_a_file_that_is_no_readable_export_is_one_line(tmp_path: Path, case: str) -> None:
    db = tmp_path / "x.sqlite"
    if case == "not an export":
        con = sqlite3.connect(db)
        con.execute("CREATE TABLE t (a)")
        con.commit()
        con.close()
        want = "not an nsys export"
    elif case == "future schema":
        _inline_text_export(db, major=4, meta_table="META_DATA_EXPORT")
        want = "newer than this reader knows"
    else:
        db.write_bytes(b"SQLite format 3\x00" + b"\x01" * 200)
        want = "cannot read"
    res = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "diagnose", str(db)], capture_output=True, text=True, timeout=60
    )
    # The only input could not be read: incomplete (exit 3), as for any input diagnose cannot use.
    assert res.returncode == 3 and "Traceback" not in res.stderr
    lines = [ln for ln in res.stdout.splitlines() if "skipped:" in ln]
    assert len(lines) == 1 and want in lines[0], res.stdout


def _stats(nsys: Path, db: Path, report: str, out: Path) -> dict[str, tuple[int, int]]:
    subprocess.run(
        [
            str(nsys),
            "stats",
            "--report",
            report,
            "--format",
            "csv",
            "--force-export=false",
            "-o",
            str(out / db.stem),
            str(db),
        ],
        check=True,
        capture_output=True,
        timeout=120,
        env=env_with_nsys(nsys, out),
    )
    got: dict[str, list[int]] = {}
    with open(out / f"{db.stem}_{report}.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            a = got.setdefault(row.get("Name") or row["Range"], [0, 0])
            a[0] += int(row["Total Time (ns)"])
            a[1] += int(row["Instances"])
    return {k: (v[0], v[1]) for k, v in got.items()}


@pytest.mark.slow
@pytest.mark.parametrize("db", EXPORTS, ids=[p.stem for p in EXPORTS])
def test_totals_agree_with_nsys_stats(db: Path, tmp_path: Path) -> None:

    nsys = nsys_or_skip()
    copy = tmp_path / db.name  # nsys stats may write beside its input
    copy.write_bytes(db.read_bytes())
    ours = totals(str(copy))
    for report, key in (("gpukernsum", "kernels"), ("nvtxsum", "ranges")):
        theirs = _stats(nsys, copy, report, tmp_path) if ours[key] else {}
        assert set(theirs) == set(ours[key]), report
        for name, (total, n) in theirs.items():
            assert ours[key][name][1] == n and abs(ours[key][name][0] - total) <= 0.01 * total, (report, name)
