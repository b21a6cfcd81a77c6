"""One process of `pgdoctor verify` / `bench scaling`: `python -m pgdoctor.verify.worker CONFIG.json`.

The reference (one process, no process group) or a rank (RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT from the environment). It loads the user's entry, trains for the configured steps
and writes what it saw as JSON (never a pickle) to `<out_dir>/<role>.json`: per step the loss,
the gradients after backward, the parameters and buffers after the optimizer step, and the
evidence the diagnosis reads (sample hashes, micro-batch sizes, parameters without gradient,
requires_grad, BatchNorm and dropout modules, a seeded probe forward). Exit status: 0 done,
1 the training raised (the error is in the file), 3 the user's entry raised or broke the contract.

Batch mode (`verify_many`, pgdoctor.verify.batch): the config's `batch` lists several runs, done
one after the other in the same processes, each as a run of its own: its own out_dir, the
reference first on rank 0 before any process group exists, then a fresh process group (over one
TCPStore, a key prefix per run) destroyed after it, torch's seed, default dtype and grad mode
reset, and the entry's module and sys.path entries dropped. The first run that fails on a rank
ends that process, exactly as a single run does; the parent runs the rest again.
"""

from __future__ import annotations

import datetime
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from pgdoctor.verify.common import SEED, error_record, run_data_parallel, run_reference, write_json
from pgdoctor.verify.entry import EntryError, call, load

EXIT_TRAINING_ERROR = 1
EXIT_ENTRY_ERROR = 3


def main(argv: list[str]) -> int:
    cfg = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    import torch

    torch.set_num_threads(1)
    if "batch" in cfg:
        return run_batch(cfg["batch"], rank, world, float(cfg.get("pg_timeout_s", 30)))
    rc = 0
    if cfg["role"] != "reference" and rank == 0 and cfg.get("reference_first"):
        # The one-process reference runs here, before this process joins the process group:
        # one interpreter (and one torch import) less per run on a small host.
        rc = run_role(cfg, "reference", 0, 1)
        if rc == EXIT_ENTRY_ERROR:
            return rc
    rc = max(rc, run_role(cfg, cfg["role"], rank, world))
    if rc:
        # A peer may still wait in a collective with us: leave without tearing the group down.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)
    return rc


def run_batch(items: list[dict[str, Any]], rank: int, world: int, pg_timeout_s: float) -> int:
    import gc

    import torch
    import torch.distributed as dist

    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world, rank == 0,
                          timeout=datetime.timedelta(seconds=pg_timeout_s))
    dtype = torch.get_default_dtype()
    for i, cfg in enumerate(items):
        print(f"pgdoctor-batch: run {i}: {cfg['entry']}", file=sys.stderr, flush=True)
        path, modules = list(sys.path), set(sys.modules)
        torch.set_default_dtype(dtype)
        torch.set_grad_enabled(True)
        rc = 0
        if rank == 0 and cfg.get("reference_first"):
            rc = run_role(cfg, "reference", 0, 1)
        if rc != EXIT_ENTRY_ERROR:
            rc = max(rc, run_role(cfg, cfg["role"], rank, world, dist.PrefixStore(f"run{i}", store)))
        if rc:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(rc)
        sys.path[:] = path
        for name in set(sys.modules) - modules:
            if _of_entry(name, getattr(sys.modules[name], "__file__", None), cfg["entry"]):
                del sys.modules[name]
        gc.collect()
    return 0


def _of_entry(name: str, file: Any, entry: str) -> bool:
    """A module the user's entry brought: the entry's own, or (for a file entry) one from its
    folder, so that the next run imports its own; never pgdoctor's or an installed package."""
    target = entry.rpartition(":")[0]
    if name.startswith("pgdoctor_entry_"):
        return True
    if not (target.endswith(".py") or os.sep in target):
        return name == target
    if name.startswith("pgdoctor") or not isinstance(file, str) or "site-packages" in file:
        return False
    return os.path.abspath(file).startswith(os.path.dirname(os.path.abspath(target)) + os.sep)


def run_role(cfg: dict[str, Any], role: str, rank: int, world: int, store: Any = None) -> int:
    out_dir = Path(cfg["out_dir"])
    name = "reference" if role == "reference" else f"rank{rank}"
    result: dict[str, Any] = {"role": role, "rank": rank, "world": world, "pid": os.getpid(), "steps": []}
    path = out_dir / f"{name}.json"
    import torch

    if role != "reference":
        import torch.distributed as dist

        dist.init_process_group(cfg.get("backend", "gloo"), rank=rank, world_size=world, store=store,
                                timeout=datetime.timedelta(seconds=float(cfg.get("pg_timeout_s", 30))))
    rc = 0
    try:
        try:
            fn = load(cfg["entry"])
            torch.manual_seed(SEED)
            spec = call(fn, cfg["entry"])
        except EntryError as exc:
            result["entry_error"] = {"message": str(exc), "traceback": exc.user_traceback}
            write_json(path, result)
            return EXIT_ENTRY_ERROR
        t0 = time.perf_counter()
        try:
            if role == "reference":
                run_reference(cfg, spec, result)
            elif role in ("ddp", "fsdp"):
                run_data_parallel(cfg, spec, result, rank, world)
            elif role == "pp":
                from pgdoctor.verify.parallel import run_pipeline

                run_pipeline(cfg, spec, result, rank, world)
            elif role == "tp":
                from pgdoctor.verify.parallel import run_tensor_parallel

                run_tensor_parallel(cfg, spec, result, rank, world)
            elif role == "scaling":
                from pgdoctor.verify.scaling_worker import run_scaling

                run_scaling(cfg, spec, result, rank, world)
            else:
                raise ValueError(f"unknown role {role!r}")
        except EntryError as exc:
            result["entry_error"] = {"message": str(exc), "traceback": exc.user_traceback}
            write_json(path, result)
            return EXIT_ENTRY_ERROR
        except Exception as exc:
            result["error"] = error_record(exc, len(result["steps"]), "run")
        result["wall_s"] = time.perf_counter() - t0
        if "error" in result:
            print(result["error"]["traceback"], file=sys.stderr)
            rc = EXIT_TRAINING_ERROR
        write_json(path, result)
    finally:
        if role != "reference":
            import torch.distributed as dist

            if dist.is_initialized() and rc == 0:
                try:
                    dist.destroy_process_group()
                except Exception:
                    pass
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
