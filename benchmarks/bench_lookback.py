"""What reading a log further up costs when it ends in a Slurm cancel after a stall (RUN370).

Generates a log of --size-mb (default 256) in /tmp: timestamped training steps, then 300 lines of
other output after the last step, then "slurmstepd: error: *** JOB ... CANCELLED AT ... DUE TO
TIME LIMIT ***" four hours later. The 24-line window before the cancel holds no progress line,
so diagnose/lookback.py reads the file again up to the cancel. Prints the diagnosis time of that
log and of the same log with the cancel's reason changed to PREEMPTION (never a hang: no second
read), their difference (the lookback), and its throughput. The file is deleted afterwards.

    python benchmarks/bench_lookback.py [--size-mb 256]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from pgdoctor.diagnose.api import diagnose_paths


def generate(path: str, size: int, reason: str) -> None:
    step = 0
    with open(path, "w") as fh:
        written = 0
        while written < size:
            line = (  # a step a second within 10:00-10:59 (the clock wraps on long logs)
                f"2024-05-01 10:{step // 60 % 60:02d}:{step % 60:02d},101 - INFO - "
                f"step {step} | loss {2.5 - step * 1e-7:.4f} | lr 3.0e-04 | tokens/s 41234\n"
            )
            fh.write(line)
            written += len(line)
            step += 1
        for r in range(300):
            fh.write(f"[rank{r % 64}]: prefetching shard {r:05d} of /data/tokens\n")
        fh.write(f"slurmstepd: error: *** JOB 9 ON n1 CANCELLED AT 2024-05-01T23:59:59 DUE TO {reason} ***\n")


def timed(path: str) -> tuple[float, str]:
    t0 = time.perf_counter()
    report = diagnose_paths([path])
    return time.perf_counter() - t0, report.findings[0].code if report.findings else "-"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=256)
    args = ap.parse_args()
    size = args.size_mb << 20
    fd, path = tempfile.mkstemp(suffix=".log")
    os.close(fd)
    try:
        generate(path, size, "PREEMPTION")
        plain_s, plain_code = timed(path)
        generate(path, size, "TIME LIMIT")
        hung_s, hung_code = timed(path)
        extra = max(hung_s - plain_s, 1e-9)
        mb = os.path.getsize(path) / 2**20
        print(f"log: {mb:.0f} MiB")
        print(f"preemption cancel (one read):      {plain_s:6.2f} s  root {plain_code}")
        print(f"time-limit cancel (lookback read): {hung_s:6.2f} s  root {hung_code}")
        print(f"lookback: +{extra:.2f} s ({mb / extra:.0f} MiB/s of log read again)")
    finally:
        os.unlink(path)


if __name__ == "__main__":
    main()
