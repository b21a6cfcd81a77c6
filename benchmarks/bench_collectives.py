"""pgdoctor's collective busbw beside an independent plain torch.distributed timing loop.

Runs `pgdoctor bench collectives --backend gloo --nproc N --json` (wall time printed: the bar
is under 60 s on a 2-core host), then times the same ops at the same sizes with a loop written
here from scratch (no pgdoctor code: back-to-back calls, each timed; per rank the median call and
the mean call (total / iters), averaged over ranks; nccl-tests' busbw factors), alternating the
two for --rounds rounds, and prints the best busbw per size of each side by side with their
ratio. The bar: busbw within 15% of the plain loop.

    python benchmarks/bench_collectives.py [--nproc 2] [--max-bytes 64M] [--ops all_reduce,...]

Figures only; nothing is asserted. On a shared 2-core host the small sizes are dominated by
scheduler noise, so the summary also reports the sizes >= 1 MiB (the bandwidth regime) apart.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable


def _factor(op: str, n: int) -> float:
    if op == "all_reduce":
        return 2 * (n - 1) / n
    if op in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1) / n
    return 1.0


def _make_call(dist: Any, torch: Any, op: str, count: int, rank: int, world: int) -> Callable[[], None]:
    """The plain torch.distributed call for one op on zero-filled buffers of nccl-tests' sizes."""
    one, chunk = torch.zeros(count), torch.zeros(count // world)
    if op == "all_reduce":
        return lambda: dist.all_reduce(one)
    if op == "broadcast":
        return lambda: dist.broadcast(one, 0)
    if op == "reduce":
        return lambda: dist.reduce(one, 0)
    if op == "all_gather":
        ag = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
        return lambda: ag(one, chunk)
    if op == "reduce_scatter":
        rs = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
        return lambda: rs(chunk, one)
    other = torch.zeros(count)
    if op == "all_to_all":
        return lambda: dist.all_to_all_single(other, one)

    def ring() -> None:  # send_recv: each rank sends to the next and receives from the previous
        reqs = dist.batch_isend_irecv(
            [
                dist.P2POp(dist.isend, one, (rank + 1) % world),
                dist.P2POp(dist.irecv, other, (rank - 1) % world),
            ]
        )
        for r in reqs:
            r.wait()

    return ring


def plain_rank(rank: int, world: int, port: int, plan_path: str, iters: int, warmup: int) -> None:
    """One rank of the independent loop: back-to-back calls, each timed; rank 0 prints
    {"mean"|"median": {op: {bytes: busbw}}} as JSON (mean: total/iters; median of the calls;
    each averaged over ranks)."""
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    with open(plan_path) as fh:
        plan = json.load(fh)
    results: dict[str, dict[str, float]] = {}
    for op, nbytes in plan:
        call = _make_call(dist, torch, op, nbytes // 4, rank, world)
        for _ in range(warmup):
            call()
        dist.barrier()
        calls = []
        t0 = time.perf_counter()
        for _ in range(iters):
            c = time.perf_counter()
            call()
            calls.append(time.perf_counter() - c)
        mean_call = (time.perf_counter() - t0) / iters
        everyone: list = [None] * world
        dist.all_gather_object(everyone, (mean_call, statistics.median(calls)))
        for stat, k in (("mean", 0), ("median", 1)):
            per = statistics.fmean(e[k] for e in everyone)
            results.setdefault(stat, {}).setdefault(op, {})[str(nbytes)] = (
                nbytes / per / 1e9 * _factor(op, world)
            )
    if rank == 0:
        print(json.dumps(results))
    dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pgdoctor(a: argparse.Namespace, env: dict[str, str]) -> tuple[float, dict[str, Any]]:
    cmd = [
        sys.executable,
        "-m",
        "pgdoctor",
        "bench",
        "collectives",
        "--backend",
        "gloo",
        "--nproc",
        str(a.nproc),
        "--json",
        "--max-bytes",
        a.max_bytes,
        "--iters",
        str(a.iters),
        "--warmup",
        str(a.warmup),
    ]
    if a.ops:
        cmd += ["--ops", a.ops]
    t0 = time.monotonic()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - t0
    if out.returncode not in (0, 1):
        sys.exit(f"pgdoctor bench failed ({out.returncode}): {out.stderr[-2000:]}")
    return wall, json.loads(out.stdout)


def _plain(a: argparse.Namespace, env: dict[str, str], plan: str) -> tuple[float, dict[str, Any]]:
    port = _free_port()
    t0 = time.monotonic()
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--plain-rank",
                str(r),
                "--nproc",
                str(a.nproc),
                "--port",
                str(port),
                "--plan",
                plan,
                "--iters",
                str(a.iters),
                "--warmup",
                str(a.warmup),
            ],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for r in range(a.nproc)
    ]
    try:
        outs = [p.communicate(timeout=900)[0] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return time.monotonic() - t0, json.loads(outs[0].strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--max-bytes", default="64M")
    ap.add_argument("--ops", default=None)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument(
        "--rounds",
        type=int,
        default=2,
        help="Alternate pgdoctor and the plain loop this many times; best busbw per size of each.",
    )
    ap.add_argument("--plain-rank", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--plan", default="", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.plain_rank is not None:
        plain_rank(a.plain_rank, a.nproc, a.port, a.plan, a.iters, a.warmup)
        return

    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"), GLOO_SOCKET_IFNAME="lo")
    # Rounds alternate the two so both see the same background load; a shared host only ever
    # lowers bandwidth, so the best of the rounds is the least disturbed figure of each.
    best: dict[tuple[str, int], float] = {}
    plain_best: dict[str, dict[tuple[str, int], float]] = {"median": {}, "mean": {}}
    rows: list[dict[str, Any]] = []
    fd, plan = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        for round_no in range(1, a.rounds + 1):
            wall, report = _pgdoctor(a, env)
            rows = [
                m["value"]
                for m in report["measurements"]
                if isinstance(m["value"], dict) and "busbw_gbps" in m["value"]
            ]
            print(
                f"round {round_no}: pgdoctor bench collectives --backend gloo --nproc {a.nproc} --json: "
                f"{wall:.1f} s wall, {len(rows)} sizes, correct everywhere: "
                f"{all(r['correct'] for r in rows)}, "
                f"findings: {[f['code'] for f in report['findings']] or 'none'}"
            )
            for r in rows:
                key = (r["op"], r["bytes"])
                best[key] = max(best.get(key, 0.0), r["busbw_gbps"])
            with open(plan, "w") as out:
                json.dump([[r["op"], r["bytes"]] for r in rows], out)
            plain_wall, plain = _plain(a, env, plan)
            print(f"round {round_no}: plain torch.distributed loop: {plain_wall:.1f} s wall")
            for stat in ("median", "mean"):
                for op, by_size in plain[stat].items():
                    for nbytes, bw in by_size.items():
                        key = (op, int(nbytes))
                        plain_best[stat][key] = max(plain_best[stat].get(key, 0.0), bw)
    finally:
        os.unlink(plan)

    print(f"\nbest of {a.rounds} round(s), busbw GB/s")
    print(
        f"{'op':<15}{'size':>10}{'pgdoctor':>11}{'plain med':>11}{'ratio':>7}{'plain mean':>12}{'ratio':>7}"
    )
    ratios: dict[str, list[tuple[str, int, float]]] = {"median": [], "mean": []}
    for (op, nbytes), bw in best.items():
        line = f"{op:<15}{nbytes:>10}{bw:>11.4f}"
        for stat in ("median", "mean"):
            p = plain_best[stat][(op, nbytes)]
            ratio = bw / p if p > 0 else float("nan")
            if bw > 0:
                ratios[stat].append((op, nbytes, ratio))
            line += f"{p:>11.4f}{ratio:>7.2f}" if stat == "median" else f"{p:>12.4f}{ratio:>7.2f}"
        print(line)
    print()
    for stat in ("median", "mean"):
        for name, floor in (("all sizes", 0), ("sizes >= 1 MiB", 1 << 20)):
            xs = [x for _, b, x in ratios[stat] if b >= floor]
            if xs:
                within = sum(1 for x in xs if abs(x - 1) <= 0.15)
                print(
                    f"vs plain {stat:<6} {name:<15} median ratio {statistics.median(xs):.3f}, "
                    f"within 15%: {within}/{len(xs)}"
                )
        for op in dict.fromkeys(o for o, _, _ in ratios[stat]):
            xs = [x for o, b, x in ratios[stat] if o == op and b >= 1 << 20]
            if xs:
                print(f"    {op:<15} median ratio (>= 1 MiB) {statistics.median(xs):.3f}")


if __name__ == "__main__":
    main()
