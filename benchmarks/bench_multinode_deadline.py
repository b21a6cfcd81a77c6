"""How far `check --only net --timeout 10` of a multi-node launch runs past its bound when torch
is slow to import: rank 1 whose rank 0 never answers (it gives up at 55% of --timeout) and rank 0
of WORLD_SIZE=100000 where only it arrives. Prints, per case, the wall time, the time a fresh
`import torch.distributed` takes right now (what a loaded host adds), and the margin to the
bench_hostile bound. Before the fix the import time was added on top of the rank's wait.

    python benchmarks/bench_multinode_deadline.py [--repeat N]
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

CASES = (("rank 1, no rank 0", "2", "1", 11.0), ("rank 0 of 100000, alone", "100000", "0", 12.0))


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _import_s() -> float:
    t = time.monotonic()
    subprocess.run([sys.executable, "-c", "import torch.distributed"], capture_output=True, timeout=120)
    return time.monotonic() - t


def main() -> None:
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 1
    for name, world, rank, bound in CASES:
        for _ in range(repeat):
            env = {
                **os.environ,
                "MASTER_ADDR": "127.0.0.1",
                "MASTER_PORT": str(_port()),
                "WORLD_SIZE": world,
                "RANK": rank,
            }
            argv = [sys.executable, "-m", "pgdoctor", "check", "--level", "quick", "--only", "net"]
            t = time.monotonic()
            p = subprocess.run([*argv, "--timeout", "10"], env=env, capture_output=True, timeout=120)
            took = time.monotonic() - t
            print(
                f"{name:<24} --timeout 10: {took:5.2f} s  exit {p.returncode}  "
                f"(torch import now {_import_s():.2f} s; "
                f"margin to the {bound:g} s bound {bound - took:.2f} s)"
            )


if __name__ == "__main__":
    main()
