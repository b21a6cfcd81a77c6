"""Prints what one look of `pgdoctor run`'s progress watch costs a rank, against the full answer
`pgdoctor hang` asks for: a real one-rank gloo process group with 2000 collectives in its flight
recorder (TORCH_FR_BUFFER_SIZE=2000) and pgdoctor's live socket, asked 20 times each way.

    python benchmarks/bench_live_progress.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pgdoctor.probes import live  # noqa: E402
from pgdoctor.probes.processes import free_port  # noqa: E402

RANK = """import os, sys, time, torch, torch.distributed as dist
import pgdoctor
pgdoctor.live()
dist.init_process_group("gloo", rank=0, world_size=1)
t = torch.ones(8)
for _ in range(2000):
    dist.all_reduce(t)
open(sys.argv[1], "w").write("up")
time.sleep(120)
"""


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o700)
        ready = Path(tmp) / "ready"
        env = {
            **os.environ,
            "PGDOCTOR_LIVE_DIR": tmp,
            "TORCH_FR_BUFFER_SIZE": "2000",
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(free_port()),
            "PYTHONPATH": str(ROOT),
            "OMP_NUM_THREADS": "1",
        }
        p = subprocess.Popen([sys.executable, "-c", RANK, str(ready)], env=env, start_new_session=True)
        try:
            end = time.monotonic() + 120
            while not ready.exists() and time.monotonic() < end and p.poll() is None:
                time.sleep(0.1)
            path = f"{tmp}/{p.pid}.sock"
            for request in ("progress", "full"):
                times, size = [], 0
                for _ in range(20):
                    t0 = time.perf_counter()
                    answer = live.ask(path, 10.0, request=request)
                    times.append(time.perf_counter() - t0)
                    size = len(str(answer))
                assert answer is not None and answer.get("seq") == 2000, answer and answer.get("seq")
                print(
                    f"live socket, {request:8s} answer: median {statistics.median(times) * 1000:7.2f} ms  "
                    f"max {max(times) * 1000:7.2f} ms  ~{size / 1024:7.1f} KiB  (seq {answer['seq']})"
                )
        finally:
            p.kill()
            p.wait()


if __name__ == "__main__":
    main()
