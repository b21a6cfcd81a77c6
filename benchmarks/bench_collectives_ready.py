"""How long `pgdoctor bench collectives --nproc 2 --timeout 5` takes when a rank never joins,
and what the import allowance of spawned ranks has to cover.

Prints, each measured --rounds times (the median and the worst):
- the time a fresh Python takes to `import torch.distributed` (what a spawned rank does before
  it reports ready; IMPORT_ALLOWANCE_S in probes/collectives/worker.py must cover it with room),
- the wall time of the whole command when rank 1 imports, reports ready and never joins the
  rendezvous (PGDOCTOR_COLL_FAULT=hang:1:init): before the readiness handshake about 22 s,
  because the init bound was at least 15 s whatever --timeout said,
- the same when rank 1 never finishes starting (hang:1:import),
- a healthy run of the same sweep, for scale.

    python benchmarks/bench_collectives_ready.py [--rounds 3]

Figures only; nothing is asserted (tests assert the behaviour).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

SWEEP = ["bench", "collectives", "--nproc", "2", "--backend", "gloo", "--ops", "all_reduce"]
SWEEP += ["--max-bytes", "1K", "--timeout", "5"]


def _wall(argv: list[str], fault: str = "") -> tuple[float, int]:
    env = dict(os.environ)
    if fault:
        env["PGDOCTOR_COLL_FAULT"] = fault
    t0 = time.monotonic()
    p = subprocess.run(argv, env=env, capture_output=True, timeout=120)
    return time.monotonic() - t0, p.returncode


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    rounds = ap.parse_args().rounds
    cases = [
        ("import torch.distributed (fresh python)", [sys.executable, "-c", "import torch.distributed"], ""),
        (
            "rank 1 never joins (hang:1:init), --timeout 5",
            [sys.executable, "-m", "pgdoctor", *SWEEP],
            "hang:1:init",
        ),
        (
            "rank 1 never ready (hang:1:import), --timeout 5",
            [sys.executable, "-m", "pgdoctor", *SWEEP],
            "hang:1:import",
        ),
        ("healthy sweep, --timeout 5", [sys.executable, "-m", "pgdoctor", *SWEEP], ""),
    ]
    print(f"load average {os.getloadavg()[0]:.1f}; {rounds} round(s) each")
    for name, argv, fault in cases:
        walls, codes = [], set()
        for _ in range(rounds):
            took, rc = _wall(argv, fault)
            walls.append(took)
            codes.add(rc)
        print(
            f"{name:<50} median {statistics.median(walls):5.1f} s  worst {max(walls):5.1f} s  "
            f"exit {','.join(map(str, sorted(codes)))}"
        )


if __name__ == "__main__":
    main()
