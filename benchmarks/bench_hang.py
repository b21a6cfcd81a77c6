"""Prints the wall time of `pgdoctor hang` (the whole CLI, 3 samples 0.5 s apart, py-spy) on
  - 4 ranks: a real 4-rank gloo job under `python -m torch.distributed.run --standalone`, rank 2
    sleeping in another module while ranks 0,1,3 wait in all_reduce (bar: 5 s);
  - 64 ranks: 64 small real Python processes (not a gloo job: 64 torch ranks do not fit on 2
    cores) carrying the rank environment of one job (RANK, WORLD_SIZE=64, MASTER_*,
    TORCHELASTIC_RUN_ID), 63 waiting in one function and rank 17 in another (bar: 15 s).
The 4-rank job is also timed with every default tier (socket, torch, py-spy, pystack, nvml: no
socket, no torch server and no GPU there, so those tiers only look), and a 4-rank job that serves
torch's worker server per rank is timed with `--tiers proc,torch` (no ptrace).
Each case also checks that the verdict names the right rank. Run from the repository root:
    python benchmarks/bench_hang.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers.hang_lab import kill_tree, torchrun_job  # noqa: E402

SLEEPER = """import sys, time
def wait_in_all_reduce():
    time.sleep(600)
def stuck_elsewhere():
    time.sleep(600)
(stuck_elsewhere if sys.argv[1] == "17" else wait_in_all_reduce)()
"""


def hang(*pids: int, tiers: str = "proc,py-spy") -> tuple[float, dict]:
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "hang", "--json", "--tiers", tiers, *map(str, pids)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return time.perf_counter() - t0, json.loads(p.stdout)


def culprits(report: dict) -> list[int]:
    return [r for j in report["hang"]["jobs"] for r in j["culprits"]]


def main() -> None:
    with torchrun_job("sleep", [2]) as job:
        job.wait_ready(4, timeout_s=120)
        wall, report = hang(job.pid)
        print(
            f"hang, 4 gloo ranks (torchrun):      {wall:6.2f} s wall  culprits {culprits(report)}  bar 5 s  "
            f"{'OK' if wall < 5 and culprits(report) == [2] else 'OVER'}"
        )
        wall, report = hang(job.pid, tiers="proc,socket,torch,py-spy,pystack,nvml")
        print(
            f"hang, 4 gloo ranks, default tiers:  {wall:6.2f} s wall  culprits {culprits(report)}  bar 5 s  "
            f"{'OK' if wall < 5 and culprits(report) == [2] else 'OVER'}"
        )
    with (
        tempfile.TemporaryDirectory() as ws,
        torchrun_job("sleep", [2], env={"TORCH_WORKER_SERVER_SOCKET": f"{ws}/ws"}) as job,
    ):
        job.wait_ready(4, timeout_s=120)
        wall, report = hang(job.pid, tiers="proc,torch")
        print(
            f"hang, 4 gloo ranks, torch server: {wall:6.2f} s wall  culprits {culprits(report)}  "
            f"bar 5 s  {'OK' if wall < 5 and culprits(report) == [2] else 'OVER'}"
        )
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "rank.py"
        script.write_text(SLEEPER)
        procs = []
        try:
            for r in range(64):
                env = {
                    **os.environ,
                    "RANK": str(r),
                    "LOCAL_RANK": str(r),
                    "WORLD_SIZE": "64",
                    "MASTER_ADDR": "127.0.0.1",
                    "MASTER_PORT": "29999",
                    "TORCHELASTIC_RUN_ID": "bench64",
                }
                procs.append(
                    subprocess.Popen([sys.executable, str(script), str(r)], env=env, start_new_session=True)
                )
            time.sleep(2.0)
            wall, report = hang(*(p.pid for p in procs))
            # 63 ranks in one function, one in another: no collective, so the largest group is not
            # "waiting" and the verdict has no culprit; the bench measures the wall time, and checks
            # the roll-call's groups.
            groups = report["hang"]["jobs"][0]["groups"]
            sizes = sorted(len(g["ranks"]) for g in groups)
            print(
                f"hang, 64 python processes (rank env): {wall:6.2f} s wall  groups {sizes}  bar 15 s  "
                f"{'OK' if wall < 15 and sizes == [1, 63] else 'OVER'}"
            )
        finally:
            for p in procs:
                kill_tree(p.pid)
                p.wait()


if __name__ == "__main__":
    main()
