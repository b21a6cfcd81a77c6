"""The real gloo jobs of the fourth frozen flight-recorder set (tests/fixtures/fr_unseen3/gloo_*).

    python -m tests.helpers.fr_unseen3_gloo [NAME ...]   runs the jobs (4 ranks each) and writes
                                                        each one's dumps and expected.json
    python tests/helpers/fr_unseen3_gloo.py SCENARIO OUT  one rank of a job (RANK etc. set)

torch 2.13 records gloo collectives when TORCH_FR_BUFFER_SIZE is set. Each rank writes the pickle
(_dump_fr_trace) and the JSON (_dump_fr_trace_json) when its job ends, hung ranks after gloo's own
timeout (3 s here). A rank stuck in its own code sleeps past that timeout, then gives up. Every
job runs under a deadline, and run_children kills what is left of it.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import sys
import time
from typing import Any

HERE = os.path.abspath(__file__)


def _warm(dist: Any, torch: Any) -> Any:
    t = torch.ones(256)
    for _ in range(3):
        dist.all_reduce(t)  # seq 1-3
    dist.broadcast(t, 0)  # seq 4
    return t


def _stuck(timeout: float) -> None:
    time.sleep(timeout + 1.5)
    raise RuntimeError("gave up waiting in its own code")


def sc_tp_subgroup_skip(rank: int, dist: Any, torch: Any, timeout: float) -> None:
    """TP groups [0,1] ("1") and [2,3] ("2"); rank 3 never enters step 2's TP all_reduce."""
    g1 = dist.new_group([0, 1])
    g2 = dist.new_group([2, 3])
    tp = g1 if rank < 2 else g2
    for step in range(3):
        if rank == 3 and step == 2:
            _stuck(timeout)
        dist.all_reduce(torch.ones(128), group=tp)
        dist.all_reduce(torch.ones(512))


def sc_alltoall_single_uneven(rank: int, dist: Any, torch: Any, timeout: float) -> None:
    """all_to_all_single: rank 1 sends 20 elements to each peer, every rank expects 16."""
    _warm(dist, torch)
    out = torch.zeros(64)
    if rank == 1:
        dist.all_to_all_single(out, torch.ones(80), [16] * 4, [20] * 4)
    else:
        dist.all_to_all_single(out, torch.ones(64), [16] * 4, [16] * 4)
    dist.all_reduce(out)


def sc_ran_ahead_eval(rank: int, dist: Any, torch: Any, timeout: float) -> None:
    """Rank 0 has one batch fewer: after 2 steps it goes on to the evaluation's all_gather while the
    others all_reduce their third step's gradients (seq 7)."""
    t = _warm(dist, torch)
    for _ in range(2 if rank == 0 else 3):
        dist.all_reduce(t)
    dist.all_gather([torch.zeros(256) for _ in range(4)], t)


def sc_dtype_world(rank: int, dist: Any, torch: Any, timeout: float) -> None:
    """Rank 2 all_reduces a float64 tensor at seq 5, the others float32."""
    _warm(dist, torch)
    dist.all_reduce(torch.ones(256, dtype=torch.float64 if rank == 2 else torch.float32))
    dist.all_reduce(torch.ones(8))


def sc_clean_wrapped(rank: int, dist: Any, torch: Any, timeout: float) -> None:
    """A clean job whose 16-entry rings wrap at different record ids (ranks 0 and 2 also use an
    auxiliary group)."""
    aux = dist.new_group([0, 2])
    t = torch.ones(64)
    for step in range(40):
        dist.all_reduce(t)
        if rank in (0, 2) and step < 20:
            dist.all_reduce(torch.ones(4), group=aux)
    dist.barrier()


def sc_same_ranks_two_groups(rank: int, dist: Any, torch: Any, timeout: float) -> None:
    """Group "1" has the same four ranks as the world; rank 2 issues step 2's world all_gather
    before group 1's all_reduce, the others the other way round."""
    g = dist.new_group([0, 1, 2, 3])
    for step in range(4):
        first, second = (
            (lambda: dist.all_reduce(torch.ones(32), group=g)),
            (lambda: dist.all_gather([torch.zeros(16) for _ in range(4)], torch.ones(16))),
        )
        if rank == 2 and step == 2:
            first, second = second, first
        first()
        second()


# name -> expected (written from the scenario, before pgdoctor read any of its dumps)
EXPECTED: dict[str, dict[str, Any]] = {
    "tp_subgroup_skip": {
        "code": "RUN281",
        "ranks": [3],
        "pg": "2",
        "seq": 3,
        "op": "all_reduce",
        "class": "missing",
        "why": "rank 3 never enters step 2's all_reduce in TP group [2,3]",
    },
    "alltoall_single_uneven": {
        "code": "RUN284",
        "ranks": [1],
        "pg": "0",
        "seq": 5,
        "op": "all_to_all",
        "class": "total_numel",
        "why": "rank 1's input is 80 where all expect 64",
    },
    "ran_ahead_eval": {
        "code": "RUN282",
        "ranks": [0],
        "pg": "0",
        "seq": 7,
        "op": "all_reduce",
        "class": "op_type",
        "why": "rank 0 all_gathers at seq 7 where the others all_reduce",
    },
    "dtype_world": {
        "code": "RUN285",
        "ranks": [2],
        "pg": "0",
        "seq": 5,
        "op": "all_reduce",
        "class": "input_dtype",
        "also": [["RUN290", [1]]],
        "why": "rank 2 reduces float64, the others float32 (rank 1 aborted in gloo and left no dump)",
    },
    "clean_wrapped": {
        "code": None,
        "ranks": [],
        "pg": None,
        "seq": None,
        "op": None,
        "class": None,
        "why": "clean; 16-entry rings wrapped at different record ids",
    },
    "same_ranks_two_groups": {
        "code": "RUN281",
        "ranks": [2],
        "pg": "1",
        "seq": 3,
        "op": "all_reduce",
        "class": "missing",
        "also": [["RUN281", [0, 1, 3]]],
        "why": "rank 2 swapped the order of two groups with the same ranks",
    },
}


def rank_main() -> None:
    scenario, out = sys.argv[1], sys.argv[2]
    import torch
    import torch.distributed as dist

    rank = int(os.environ["RANK"])
    timeout = float(os.environ.get("FR_TIMEOUT_S", "3"))
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=timeout))
    failed = False
    try:
        globals()[f"sc_{scenario}"](rank, dist, torch, timeout)
    except RuntimeError as exc:
        failed = True
        print(f"[rank{rank}]: RuntimeError: {exc}", file=sys.stderr, flush=True)
    c10d = torch._C._distributed_c10d
    with open(os.path.join(out, f"rank{rank}.pkl"), "wb") as fh:
        fh.write(c10d._dump_fr_trace())
    data = c10d._dump_fr_trace_json()
    with open(os.path.join(out, f"rank{rank}.json"), "wb" if isinstance(data, bytes) else "w") as fh:
        fh.write(data)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(1 if failed else 0)  # a gloo group whose peers timed out can block teardown


def run_job(name: str, dest: str, world: int = 4, buffer_size: int = 200) -> None:
    from pgdoctor.probes.processes import run_children
    from tests.helpers.fr_lab import rank_envs

    if name == "clean_wrapped":
        buffer_size = 16
    os.makedirs(dest, exist_ok=True)
    envs = rank_envs(world, buffer_size, 3.0)
    run_children([[sys.executable, HERE, name, dest]] * world, envs, 90.0)
    with open(os.path.join(dest, "expected.json"), "w") as fh:
        json.dump({"also": [], **EXPECTED[name]}, fh, indent=1, sort_keys=True)
        fh.write("\n")


def main() -> None:
    from tests.helpers.fr_unseen3 import OUT

    for name in sys.argv[1:] or list(EXPECTED):
        dest = os.path.join(OUT, f"gloo_{name}")
        shutil.rmtree(dest, ignore_errors=True)
        run_job(name, dest)


if __name__ == "__main__":
    if (
        len(sys.argv) == 3
        and not sys.argv[1].startswith("-")
        and sys.argv[1] in EXPECTED
        and "RANK" in os.environ
    ):
        rank_main()
    else:
        main()
