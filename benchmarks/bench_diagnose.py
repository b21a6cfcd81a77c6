"""Throughput and memory of `pgdoctor diagnose` on a large NCCL_DEBUG=INFO log.

Generates a log of --size-mb (default 1024) in /tmp: 8 ranks' NCCL INFO init/channel/connection
lines, training progress lines with torchrun prefixes, and a few failures buried at 70-90 % (a
CUDA OOM on rank 3, the other ranks' watchdog timeouts, torchrun's ChildFailedError table).
Runs `pgdoctor diagnose --json` on it in a child process, once with one process and once with the
default scan workers, and prints wall and CPU throughput and the peak RSS; then the scanner alone
with each search engine (Hyperscan, CPython's re; RE2 when installed) beside `grep -c -E` with the
same patterns, and `grep -c -F` with the same literal anchors. The file is deleted afterwards.

    python benchmarks/bench_diagnose.py [--size-mb 1024] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Optional

from pgdoctor.diagnose.text.scan import ANCHORS

INFO_LINES = (
    "node-{n}:{pid}:{tid} [{d}] NCCL INFO Channel {c:02d}/32 :    0   1   2   3   4   5   6   7",
    "node-{n}:{pid}:{tid} [{d}] NCCL INFO Channel {c:02d}/0 : {r}[{d}] -> {p}[{q}] via P2P/IPC/read",
    "node-{n}:{pid}:{tid} [{d}] NCCL INFO Connected all rings",
    "node-{n}:{pid}:{tid} [{d}] NCCL INFO Connected all trees",
    "node-{n}:{pid}:{tid} [{d}] NCCL INFO threadThresholds 8/8/64 | 64/8/64 | 512 | 512",
    "node-{n}:{pid}:{tid} [{d}] NCCL INFO 32 coll channels, 0 collnet channels, 0 nvls channels, 32 p2p "
    "channels, 32 p2p channels per peer",
    "node-{n}:{pid}:{tid} [{d}] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB "
    "[3]mlx5_3:1/IB ; OOB eth0:10.0.{n}.{r}<0>",
    "node-{n}:{pid}:{tid} [{d}] NCCL INFO comm 0x55d5c0a0{c:04x} rank {r} nranks 8 cudaDev {d} nvmlDev {d} "
    "busId {d}8000 commId 0x9d3e1f2a1b2c3d4e - Init COMPLETE",
    "node-{n}:{pid}:{tid} [{d}] NCCL INFO Trees [0] {p}/-1/-1->{r}->{q} [1] {p}/-1/-1->{r}->{q}",
    "node-{n}:{pid}:{tid} [{d}] NCCL INFO P2P Chunksize set to 524288",
    "node-{n}:{pid}:{tid} [{d}] NCCL INFO Setting affinity for GPU {d} to "
    "ffff,ffffffff,00000000,0000ffff,ffffffff",
    "[rank{r}]: step {s} | loss {l:.4f} | lr 2.9e-04 | grad_norm 0.{c:03d} | tokens/s 412345 | mfu 41.2% | "
    "mem 61.3 GiB",
    "[default{d}]: [2024-10-03 10:{mm:02d}:{ss:02d},{ms:03d}] [INFO] [logging.py:96:log_dist] [Rank {r}] "
    "step={s}, skipped=0, lr=[0.00029], mom=[(0.9, 0.95)]",
)

FAILURES = [
    "[rank3]: Traceback (most recent call last):",
    '[rank3]:   File "/workspace/train.py", line 211, in <module>',
    "[rank3]:     loss = model(**batch).loss",
    "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.50 GiB. GPU 3 has a total "
    "capacity of "
    "79.15 GiB of which 1.21 GiB is free. Including non-PyTorch memory, this process has 77.93 GiB memory in "
    "use. Of the "
    "allocated memory 74.02 GiB is allocated by PyTorch, and 2.87 GiB is reserved by PyTorch but "
    "unallocated. If reserved "
    "but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
    "fragmentation.  See documentation for Memory Management  "
    "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
]
TIMEOUTS = [
    f"[rank{r}]:[E1003 10:41:0{r}.10433281{r} ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught "
    f"collective operation "
    f"timeout: WorkNCCL(SeqNum=88121, OpType=ALLREDUCE, NumelIn=52428800, NumelOut=52428800, "
    f"Timeout(ms)=600000) ran for "
    f"60003{r} milliseconds before timing out."
    for r in (0, 1, 2, 4, 5, 6, 7)
]
TAIL = """torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2024-10-03_10:31:07
  host      : node-0
  rank      : 3 (local_rank: 3)
  exitcode  : 1 (pid: 81237)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================
"""


def generate(path: str, size: int) -> None:
    rnd = random.Random(7)
    block_lines = []
    for i in range(60000):
        t = INFO_LINES[rnd.randrange(len(INFO_LINES))]
        r = rnd.randrange(8)
        block_lines.append(
            t.format(
                n=r // 8,
                pid=41000 + r,
                tid=41100 + r,
                d=r % 8,
                c=rnd.randrange(32),
                r=r,
                p=(r + 1) % 8,
                q=(r + 7) % 8,
                s=i,
                l=2.5 - i * 1e-5,
                mm=i % 60,
                ss=i % 60,
                ms=i % 1000,
            )
        )
    block = ("\n".join(block_lines) + "\n").encode()
    marks = {int(size * 0.7): FAILURES, int(size * 0.9): TIMEOUTS}
    written = 0
    with open(path, "wb") as fh:
        while written < size:
            fh.write(block)
            written += len(block)
            for at in sorted(marks):
                if written >= at:
                    fh.write(("\n".join(marks.pop(at)) + "\n").encode())
        fh.write(TAIL.encode())


def measured_diagnose(
    args: list[str], env: Optional[dict[str, str]] = None
) -> tuple[float, float, int, dict]:
    """`pgdoctor diagnose --json ARGS` in a child: wall s, CPU s, peak RSS (KiB), the report."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "diagnose", "--json", *args],
        capture_output=True,
        text=True,
        env=env,
    )
    dt = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):
        raise SystemExit(f"diagnose failed ({p.returncode}): {p.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return dt, cpu, after.ru_maxrss, json.loads(p.stdout)


def run_diagnose(path: str, workers: str) -> tuple[float, float, int, dict]:
    env = dict(os.environ)
    if workers:
        env["PGDOCTOR_SCAN_WORKERS"] = workers
    return measured_diagnose([path], env)


def reference_loop() -> float:
    """Seconds of a fixed pure-Python loop (20 million additions, best of 3): how fast this machine
    runs Python right now. On a shared machine it changes by a quarter from one minute to the
    next; printed beside a figure, it lets two runs be compared."""
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        x = 0
        for i in range(20_000_000):
            x += i
        best = min(best, time.perf_counter() - t)
    return best


def ere(anchors: tuple[bytes, ...]) -> str:
    """The anchors as one POSIX extended regular expression (`[c10d]` is a literal, not a class)."""
    return "|".join(re.sub(r"([.\[\]()*+?{}|^$\\])", r"\\\1", a.decode()) for a in anchors)


def _scan_only(path: str, engine: str) -> tuple[float, int]:
    """Seconds and windows of the scanner alone (no rules) over the file, in a child process."""
    code = (
        "import sys,time\nfrom pgdoctor.diagnose.text.reader import _file_chunks\n"
        "from pgdoctor.diagnose.text.scan import scan_chunks, engine_name\n"
        "t=time.perf_counter(); n=sum(1 for _ in scan_chunks(_file_chunks(sys.argv[1], 8 << 20)))\n"
        "print(time.perf_counter()-t, n, engine_name())"
    )
    env = dict(os.environ, PGDOCTOR_SCAN_ENGINE=engine)
    out = subprocess.run(
        [sys.executable, "-c", code, path], capture_output=True, text=True, env=env, check=True
    )
    dt, n, name = out.stdout.split()
    if name != engine and engine != "auto":
        raise SystemExit(f"engine {engine} asked, {name} used")
    return float(dt), int(n)


def _re2_alternation(path: str) -> Optional[float]:
    """RE2 with the anchors as one alternation (measured when google-re2 is installed)."""
    try:
        import re2  # type: ignore[import-not-found]
    except ImportError:
        return None
    rx = re2.compile(b"|".join(re.escape(a) for a in ANCHORS))
    t = time.perf_counter()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(8 << 20), b""):
            for _ in rx.finditer(block):
                pass
    return time.perf_counter() - t


def scan_vs_grep(path: str, size: int) -> None:
    """The scan engine chosen by measurement: each engine beside `grep -c -E` with the same
    patterns (the anchors as one alternation) on the same file."""
    grep = shutil.which("grep")
    if not grep:
        return
    t = time.perf_counter()
    g = subprocess.run(
        [grep, "-c", "-E", ere(ANCHORS), path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    if g.returncode > 1:
        raise SystemExit(f"grep failed: {g.stderr.strip()}")
    gdt = time.perf_counter() - t
    mib = size / 2**20
    print(f"grep -c -E (the {len(ANCHORS)} anchors as one alternation): {gdt:.2f} s, {mib / gdt:.0f} MiB/s")
    for engine in ("hyperscan", "re"):
        try:
            dt, n = _scan_only(path, engine)
        except (subprocess.CalledProcessError, SystemExit) as exc:
            print(f"scan engine {engine}: not available ({str(exc)[:80]})")
            continue
        print(
            f"scan engine {engine} (windows {n}): {dt:.2f} s, {mib / dt:.0f} MiB/s = {gdt / dt:.2f}x grep -E"
        )
    r2 = _re2_alternation(path)
    print(
        f"RE2 alternation, search only: {mib / r2:.0f} MiB/s = {gdt / r2:.2f}x grep -E"
        if r2
        else "RE2: google-re2 not installed (pip install google-re2 to compare)"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="pgdoctor-bench-")
    path = os.path.join(tmp, "nccl_info.log")
    try:
        t = time.perf_counter()
        generate(path, args.size_mb << 20)
        size = os.path.getsize(path)
        print(f"generated {size / 2**20:.0f} MiB in {time.perf_counter() - t:.1f} s: {path}")
        subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)  # warm the page cache
        for workers, label in (("1", "1 process"), ("", "default workers")):
            dt, cpu, rss_kb, report = run_diagnose(path, workers)
            codes = [f["code"] for f in report["findings"]]
            # Wall time depends on what else runs on the machine; CPU time of the children does not.
            print(
                f"pgdoctor diagnose ({label}): {dt:.2f} s wall, {size / 2**20 / dt:.0f} MiB/s; {cpu:.2f} s "
                f"CPU, "
                f"{size / 2**20 / cpu:.0f} MiB/s per CPU-second; peak RSS {rss_kb / 1024:.0f} MiB "
                f"(largest process); findings {codes} (root cause {codes[0] if codes else None})"
            )
        scan_vs_grep(path, size)
        grep = shutil.which("grep")
        if grep:
            argv = [grep, "-c", "-F"] + [a for kw in ANCHORS for a in ("-e", kw.decode())] + [path]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            g = subprocess.run(argv, capture_output=True, text=True)
            gdt = time.perf_counter() - t
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            gcpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            print(
                f"grep -c -F (same {len(ANCHORS)} anchors): {gdt:.2f} s wall, {size / 2**20 / gdt:.0f} "
                f"MiB/s; "
                f"{gcpu:.2f} s CPU; {g.stdout.strip()} matching lines; CPU-time ratio pgdoctor/grep "
                f"{cpu / max(gcpu, 1e-9):.1f}"
            )
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
