"""A real 3-rank gloo job whose ranks leave flight-recorder dumps (pickle and JSON) in OUT.

    python tests/fr_workload.py SCENARIO OUT   (run per rank, with RANK/WORLD_SIZE/MASTER_* set)

Scenarios: ok (every rank runs the same collectives), skip (rank 1 skips an all_reduce the others
enter, then waits), mismatch (rank 1 calls all_gather where the others call all_reduce). The
process-group timeout is short (FR_TIMEOUT_S, default 3 s) so the hung ranks fail fast with
gloo's real "Timed out waiting ...ms for recv operation to complete".
"""

from __future__ import annotations

import datetime
import os
import sys
import time


def main() -> None:
    scenario, out = sys.argv[1], sys.argv[2]
    import torch
    import torch.distributed as dist

    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    timeout = float(os.environ.get("FR_TIMEOUT_S", "3"))
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=timeout))
    t = torch.ones(256)
    for _ in range(3):
        dist.all_reduce(t)
    dist.broadcast(t, 0)
    failed = False
    try:
        if scenario == "skip":
            if rank == 1:
                time.sleep(timeout + 1.5)  # never enters the all_reduce below
            else:
                dist.all_reduce(t)
        elif scenario == "mismatch":
            if rank == 1:
                dist.all_gather([torch.zeros(256) for _ in range(world)], t)
            else:
                dist.all_reduce(t)
        else:
            dist.all_reduce(t)
            dist.barrier()
    except RuntimeError as exc:
        failed = True
        print(f"[rank{rank}]: RuntimeError: {exc}", file=sys.stderr, flush=True)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, f"rank{rank}.pkl"), "wb") as fh:
        fh.write(torch._C._distributed_c10d._dump_fr_trace())
    data = torch._C._distributed_c10d._dump_fr_trace_json()
    with open(os.path.join(out, f"rank{rank}.json"), "wb" if isinstance(data, bytes) else "w") as fh:
        fh.write(data)
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: destroying a gloo group whose peers timed out can block for
    # many seconds, and the dumps are already written.
    os._exit(1 if failed else 0)


if __name__ == "__main__":
    main()
