"""What reading the rest of a log costs when rows wait for a communicator to come up (lookahead.py).

Writes a healthy NCCL INFO log of a job on sockets beside docker bridges (tests/helpers/healthy_logs.py,
--nodes x 8 GPUs, so every rank's interface list is a pending RUN174 event) followed by --size-mb of
training lines, then diagnoses it twice: as written (every pending event cleared by its process's
"Init COMPLETE", found by reading the rest of the file) and with the lookahead turned off (the
pending events stay); then the same with one process that never comes up (its event waits to the
end of the file, which is read whole). Prints the times, the differences and the throughput. The file
is deleted afterwards.

    PYTHONPATH=. python benchmarks/bench_lookahead.py [--nodes 2] [--size-mb 64]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import pgdoctor.diagnose.lookahead as lookahead
from pgdoctor.diagnose.api import diagnose_paths
from tests.helpers.healthy_logs import healthy_log

_UP = ("Init COMPLETE", "Connected all rings", "Connected all trees")


def generate(path: str, nodes: int, size: int, stuck: bool = False) -> None:
    """`stuck`: one process never prints its up-markers, so its event waits to the end of the file."""
    log = healthy_log("2.21.5", nodes=nodes, socket_ifaces=("eth0", "docker0", "br-05ab815fa14e"))
    if stuck:
        first = next(ln for ln in log.splitlines() if "NET/Socket : Using" in ln)
        proc = ":".join(first.split(":")[:2]) + ":"
        log = "".join(
            ln for ln in log.splitlines(keepends=True) if not (proc in ln and any(u in ln for u in _UP))
        )
    with open(path, "w") as fh:
        fh.write(log)
        written, step = 0, 0
        while written < size:
            line = f"step {step} | loss {2.5 - step * 1e-7:.4f} | lr 3.0e-04 | tokens/s 41234\n"
            fh.write(line)
            written += len(line)
            step += 1


def timed(path: str, runs: int = 3) -> tuple[float, list[str]]:
    """The best of `runs` diagnoses (the first also pays for compiling the rules and a cold cache)."""
    best, codes = float("inf"), []
    for _ in range(runs):
        t0 = time.perf_counter()
        report = diagnose_paths([path])
        best = min(best, time.perf_counter() - t0)
        codes = [f.code for f in report.findings if f.severity.value != "info"]
    return best, codes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=2)
    ap.add_argument("--size-mb", type=int, default=64)
    args = ap.parse_args()
    fd, path = tempfile.mkstemp(suffix=".log")
    os.close(fd)
    settle = lookahead.settle
    try:
        generate(path, args.nodes, args.size_mb << 20)
        with_s, with_codes = timed(path)
        lookahead.settle = lambda events, sources: events  # type: ignore[assignment]
        without_s, without_codes = timed(path)
        lookahead.settle = settle  # type: ignore[assignment]
        generate(path, args.nodes, args.size_mb << 20, stuck=True)
        stuck_s, stuck_codes = timed(path)
        lookahead.settle = lambda events, sources: events  # type: ignore[assignment]
        stuck_without_s, _ = timed(path)
        lookahead.settle = settle  # type: ignore[assignment]
        mb = os.path.getsize(path) / 2**20
        print(f"log: {mb:.0f} MiB, {args.nodes} nodes x 8 GPUs on sockets beside docker bridges")
        print(
            f"healthy: with the lookahead {with_s:.2f} s -> {with_codes}; "
            f"without {without_s:.2f} s -> {without_codes}"
        )
        print(f"healthy: the lookahead stops at the last Init COMPLETE: +{with_s - without_s:.2f} s")
        extra = max(stuck_s - stuck_without_s, 1e-9)
        print(
            f"one process never up: {stuck_s:.2f} s -> {stuck_codes}; the whole rest of the log read: "
            f"+{extra:.2f} s ({mb / extra:.0f} MiB/s)"
        )
    finally:
        lookahead.settle = settle  # type: ignore[assignment]
        os.unlink(path)


if __name__ == "__main__":
    main()
