"""Job-wide triage at scale: time, CPU and peak memory of `pgdoctor diagnose --json` on

1. --ranks (default 1024) per-rank logs of --mb (default 2) MiB each (`rank_N.log`): NCCL INFO
   init and channel lines and training progress, then the failure. One rank ran out of GPU
   memory; every other rank has the cascade (watchdog timeout at the same SeqNum, the watchdog's
   "last completed" line, a closed socket, torchrun's exit line). Printed: wall and CPU time,
   throughput, peak RSS, whether the root cause is the OOM rank and the job-wide group line;
2. --small (default 10000) small logs of a few KiB (`job-77-N.err`), one of them with an OOM;
3. beside them, `grep -c -E` with the scanner's anchors over the same files.

Memory is flat when the peak RSS does not grow with the number of files (try --ranks 256).

    python benchmarks/bench_jobwide.py [--ranks 1024] [--mb 2] [--small 10000] [--repeat 3] [--keep]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import tempfile
import time

from bench_diagnose import (  # this folder is on sys.path when a benchmark runs
    ere,
    measured_diagnose,
    reference_loop,
)

from pgdoctor.diagnose.text.scan import ANCHORS

INFO = (
    "{h}:{pid}:{tid} [{d}] NCCL INFO Channel {c:02d}/32 :    0   1   2   3   4   5   6   7",
    "{h}:{pid}:{tid} [{d}] NCCL INFO Channel {c:02d}/0 : {r}[{d}] -> {p}[{d}] via P2P/IPC/read",
    "{h}:{pid}:{tid} [{d}] NCCL INFO Connected all rings",
    "{h}:{pid}:{tid} [{d}] NCCL INFO comm 0x55d5c0a0{c:04x} rank {r} nranks {n} cudaDev {d} busId {d}8000 - "
    "Init COMPLETE",
    "{h}:{pid}:{tid} [{d}] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.{d}<0>",
    "[rank{r}]: step {s} | loss {l:.4f} | lr 2.9e-04 | grad_norm 0.{c:03d} | tokens/s 412345 | mem 61.3 GiB",
)


def rank_log(r: int, n: int, culprit: int, size: int, rnd: random.Random) -> bytes:
    h, pid = f"node-{r // 8}", 40000 + r
    lines = []
    total = 0
    s = 0
    while total < size:
        t = INFO[rnd.randrange(len(INFO))]
        line = t.format(
            h=h,
            pid=pid,
            tid=pid + 7,
            d=r % 8,
            c=rnd.randrange(32),
            r=r,
            p=(r + 1) % n,
            n=n,
            s=s,
            l=2.5 - s * 1e-5,
        )
        s += 1
        lines.append(line)
        total += len(line) + 1
    if r == culprit:
        lines += [
            f"[rank{r}]: Traceback (most recent call last):",
            f'[rank{r}]:   File "/workspace/train.py", line 211, in <module>',
            f"[rank{r}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.50 GiB. GPU {r % 8} "
            f"has a "
            "total capacity of 79.15 GiB of which 1.21 GiB is free. Including non-PyTorch memory, this "
            "process has "
            "77.93 GiB memory in use. Of the allocated memory 74.02 GiB is allocated by PyTorch, and 2.87 "
            "GiB is "
            "reserved by PyTorch but unallocated.",
        ]
    else:
        lines += [
            f"[rank{r}]:[E1003 10:41:{r % 60:02d}.{r:06d} ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog "
            f"caught "
            f"collective operation timeout: WorkNCCL(SeqNum=2070, OpType=ALLREDUCE, NumelIn=52428800, "
            f"NumelOut=52428800, Timeout(ms)=600000) ran for {600000 + r} milliseconds before timing out.",
            f"[rank{r}]:[E1003 10:41:{r % 60:02d}.{r + 1:06d} ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) "
            f"Rank "
            f"{r}] Exception (either an error or timeout) detected by watchdog at work: 2070, last enqueued "
            f"NCCL "
            "work: 2070, last completed NCCL work: 2069.",
            f"{h}:{pid}:{pid + 9} [{r % 8}] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by "
            f"remote peer node-{culprit // 8}<41234>",
        ]
    return ("\n".join(lines) + "\n").encode()


def generate_ranks(root: str, n: int, mb: float, culprit: int) -> None:
    os.makedirs(root, exist_ok=True)
    rnd = random.Random(5)
    size = int(mb * (1 << 20))
    body = rank_log(0, n, culprit, size, rnd)  # the padding of one rank, reused with its names changed
    pad_end = body.find(b"\n[rank0]:[E1003")
    pad = body[: pad_end + 1]
    for r in range(n):
        own = rank_log(r, n, culprit, 1, rnd)
        tail = own.split(b"\n", 1)[1]  # drop the single padding line rank_log always writes
        head = pad.replace(
            b"node-0:40000:40007 [0]", f"node-{r // 8}:{40000 + r}:{40007 + r} [{r % 8}]".encode()
        )
        with open(os.path.join(root, f"rank_{r}.log"), "wb") as fh:
            fh.write(head.replace(b"[rank0]:", f"[rank{r}]:".encode()) + tail)


def generate_small(root: str, n: int, culprit: int) -> None:
    os.makedirs(root, exist_ok=True)
    rnd = random.Random(9)
    for r in range(n):
        with open(os.path.join(root, f"job-77-{r}.err"), "wb") as fh:
            fh.write(rank_log(r, n, culprit, 3000, rnd))


def run(paths: list[str]) -> tuple[float, float, int, dict]:
    return measured_diagnose(["--timeout", "3600", *paths])


def grep(paths: list[str]) -> tuple[float, float]:
    exe = shutil.which("grep")
    if not exe:
        return float("nan"), float("nan")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    g = subprocess.run(
        [exe, "-r", "-c", "-E", ere(ANCHORS), *paths],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    if g.returncode > 1:
        raise SystemExit(f"grep failed: {g.stderr.strip()}")
    dt = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return dt, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def report(label: str, root: str, culprit: int, repeat: int = 1) -> None:
    size = sum(os.path.getsize(os.path.join(root, f)) for f in os.listdir(root))
    subprocess.run(["cat", *[os.path.join(root, f) for f in os.listdir(root)]], stdout=subprocess.DEVNULL)
    runs = sorted((run([root]) for _ in range(repeat)), key=lambda r: r[0])
    dt, cpu, rss, rep = runs[len(runs) // 2]  # the median run
    if repeat > 1:
        print(
            f"{label}: {repeat} runs, wall " + ", ".join(f"{r[0]:.2f}" for r in runs) + " s; the median run:"
        )
    root_f = rep["findings"][0] if rep["findings"] else {}
    job = rep["meta"].get("jobwide") or {}
    groups = job.get("groups", [])
    gdt, gcpu = grep([root])
    ok = root_f.get("code") == "RUN101" and (root_f.get("scope") or {}).get("rank") == culprit
    print(
        f"{label}: {len(os.listdir(root))} files, {size / 2**20:.0f} MiB: {dt:.2f} s wall "
        f"({size / 2**20 / dt:.0f} MiB/s), {cpu:.2f} s CPU, peak RSS {rss / 1024:.0f} MiB; "
        f"engine {rep['meta'].get('scan_engine')}; root cause {root_f.get('code')} rank "
        f"{(root_f.get('scope') or {}).get('rank')} ({'right' if ok else 'WRONG'})"
    )
    for g in groups[:3]:
        print(f"    ranks {g['ranks']} ({g['count']}): {g['signature']}")
    print(
        f"  grep -r -c -E (same {len(ANCHORS)} anchors): {gdt:.2f} s wall, {gcpu:.2f} s CPU "
        f"({size / 2**20 / gdt:.0f} MiB/s); pgdoctor/grep wall {dt / gdt:.1f}x"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=1024)
    ap.add_argument("--mb", type=float, default=2.0)
    ap.add_argument("--small", type=int, default=10000)
    ap.add_argument(
        "--repeat", type=int, default=3, help="runs of the small-logs case (the median is reported)"
    )
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="pgdoctor-bench-jobwide-")
    print(f"reference loop (machine speed now): {reference_loop():.2f} s")
    try:
        culprit = args.ranks * 517 // 1024
        t = time.perf_counter()
        generate_ranks(os.path.join(tmp, "ranks"), args.ranks, args.mb, culprit)
        print(f"generated {args.ranks} x {args.mb} MiB in {time.perf_counter() - t:.1f} s under {tmp}")
        report(f"{args.ranks} per-rank logs", os.path.join(tmp, "ranks"), culprit)
        if args.small:
            small_culprit = args.small // 3
            generate_small(os.path.join(tmp, "small"), args.small, small_culprit)
            report(f"{args.small} small logs", os.path.join(tmp, "small"), small_culprit, args.repeat)
            print(f"reference loop (machine speed now): {reference_loop():.2f} s")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
