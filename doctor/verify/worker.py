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
reference first on rank 0 before any process group exists (one that an earlier run of the same
entry and settings computed is taken again, _reference_of_batch), then a fresh process group (over one
TCPStore, a key prefix per run) destroyed after it, torch's seed, default dtype and grad mode
reset, and the entry's module and sys.path entries dropped. The first run that fails on a rank
ends that process, exactly as a single run does; the parent runs the rest again.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any, Optional

EXIT_TRAINING_ERROR = 1
EXIT_ENTRY_ERROR = 3
EXIT_INTERNAL_ERROR = 4  # pgdoctor's own code raised (entry.raised_by_pgdoctor): a bug, exit 4
# How often a rank looks for the reference's record while rank 0 computes it.
REFERENCE_POLL_S = 0.2


def main(argv: list[str]) -> int:
    import json

    cfg = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    import torch

    torch.set_num_threads(1)
    _bind_functional_defaults_to_no_group()
    if "batch" in cfg:
        return run_batch(cfg["batch"], rank, world, float(cfg.get("pg_timeout_s", 30)))
    rc = 0
    if cfg["role"] != "reference" and rank == 0 and cfg.get("reference_first"):
        # The one-process reference runs here, before this process joins the process group:
        # one interpreter (and one torch import) less per run on a small host.
        rc = run_role(cfg, "reference", 0, 1)
        if rc in (EXIT_ENTRY_ERROR, EXIT_INTERNAL_ERROR):
            return rc
    store = None
    if cfg["role"] != "reference":
        _wait_for_reference(cfg, rank)  # the store's server (rank 0) listens once the reference is done
        store = _store(rank, world, float(cfg.get("pg_timeout_s", 30)))
    rc = max(rc, run_role(cfg, cfg["role"], rank, world, store))
    if rc:
        # A peer may still wait in a collective with us: leave without tearing the group down.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)
    return rc


def _bind_functional_defaults_to_no_group() -> None:
    """torch.distributed.nn.functional's collectives take `group=group.WORLD` as a default argument,
    evaluated when the module is first imported: imported while a process group exists, every call
    without `group=` goes to that group. In a user's own job the entry imports it once, before or
    after the one group, and either way it is the live one. Here rank 0 runs the reference (a group of
    one) first, and a batch runs many entries, each with a group of its own: the entry's import would
    bind the defaults to a group destroyed before the next run (a rank crashed on it). Imported here,
    before any group, the defaults are None, which torch reads as the group of the moment."""
    try:
        import torch.distributed.nn.functional  # noqa: F401
    except ImportError:  # a torch built without distributed: the entry cannot use it either
        pass


def _store(rank: int, world: int, timeout_s: float) -> Any:
    """The ranks' key-value store, listening on MASTER_ADDR only (loopback for the local ranks
    pgdoctor starts), never on every interface as TCPStore's own server does."""
    from pgdoctor.probes.store import tcp_store

    return tcp_store(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world, rank == 0, timeout_s)


def run_batch(items: list[dict[str, Any]], rank: int, world: int, pg_timeout_s: float) -> int:
    import gc

    import torch
    import torch.distributed as dist

    store = _store(rank, world, pg_timeout_s)
    dtype = torch.get_default_dtype()
    keys = [_reference_key(cfg) for cfg in items]
    kept: dict[str, str] = {}  # a reference a later run of this batch takes again -> its folder
    for i, cfg in enumerate(items):
        print(f"pgdoctor-batch: run {i}: {cfg['entry']}", file=sys.stderr, flush=True)
        path, modules = list(sys.path), set(sys.modules)
        torch.set_default_dtype(dtype)
        torch.set_grad_enabled(True)
        rc = 0
        if rank == 0 and cfg.get("reference_first"):
            rc = _reference_of_batch(cfg, i, keys, kept)
        if rc not in (EXIT_ENTRY_ERROR, EXIT_INTERNAL_ERROR):
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


def _reference_key(cfg: dict[str, Any]) -> str:
    """What the one-process reference is a function of: the entry, the steps, the global batch (the
    data world), the device and train/eval mode, with torch's seed set alike before build(); not the
    strategy the ranks then run (run_reference reads no other setting)."""
    import json

    used = {k: v for k, v in cfg.items() if k not in ("out_dir", "role", "strategy")}
    return json.dumps(used, sort_keys=True)


def _reference_of_batch(cfg: dict[str, Any], i: int, keys: list[str], kept: dict[str, str]) -> int:
    """Rank 0's reference for run `i` of a batch. A run of the same entry and settings as an earlier
    one (the DDP and FSDP runs of one model) takes the reference that run computed instead of
    computing it again (for a GPT-2-sized model that was a quarter of the batch's CPU). The ranks
    delete the reference's tensor files as they compare, so a reference a later run needs is linked
    into a folder of its own as soon as it is written, before any rank can start (the ranks wait for
    rank 0 to join the process group); the folder goes with the last run that takes it."""
    import shutil

    key, out_dir = keys[i], cfg["out_dir"]
    rc = 0
    if not (key in kept and _link_reference(kept[key], out_dir)):
        rc = run_role(cfg, "reference", 0, 1)
        keep = os.path.join(os.path.dirname(out_dir), f"reference-of-{i}")
        if rc == 0 and key in keys[i + 1 :] and key not in kept:
            os.mkdir(keep)
            if _link_reference(out_dir, keep):
                kept[key] = keep
    if key in kept and key not in keys[i + 1 :]:
        shutil.rmtree(kept.pop(key), ignore_errors=True)
    return rc


def _link_reference(src: str, dst: str) -> bool:
    """The reference's tensor files hard-linked from src into dst (copied where links fail), and its
    reference.json last, as the ranks and the parent wait for that file. False where any is missing."""
    import shutil

    try:
        for name in sorted(os.listdir(src)):
            if name.startswith("reference.step") and name.endswith(".tensors"):
                try:
                    os.link(os.path.join(src, name), os.path.join(dst, name))
                except OSError:
                    shutil.copyfile(os.path.join(src, name), os.path.join(dst, name))
        tmp = os.path.join(dst, f"reference.json.tmp{os.getpid()}")
        shutil.copyfile(os.path.join(src, "reference.json"), tmp)
        os.replace(tmp, os.path.join(dst, "reference.json"))
    except OSError:
        return False
    return True


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


def _wait_for_reference(cfg: dict[str, Any], rank: int) -> None:
    """Ranks other than 0 wait for rank 0's reference to be written before they rendezvous:
    for a large model it takes longer than the process group's timeout. The parent's deadline
    bounds the wait (and rank 0's death ends it: the parent kills the peers after its grace)."""
    if rank == 0 or not cfg.get("reference_first"):
        return
    done = Path(cfg["out_dir"]) / "reference.json"
    while not done.exists():
        time.sleep(REFERENCE_POLL_S)


def _peak_rss_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


ENTRY_INIT_PG = (
    "the entry calls torch.distributed.init_process_group: pgdoctor starts the ranks' process group "
    "itself before it calls build(), and runs the one-process reference with none (where this call "
    "would wait for peers that never come); keep it in your script's main(), out of build(), data() "
    "and the model"
)


def _refuse_entry_process_groups() -> Any:
    """While the entry's code runs (import, build(), data(), forward), init_process_group raises at
    once with the reason: in the reference it would block until the deadline waiting for ranks
    that are not its own, in a rank torch refuses a second default group. Returns the undo."""
    import torch.distributed as dist
    import torch.distributed.distributed_c10d as c10d

    original = c10d.init_process_group

    def refuse(*args: Any, **kwargs: Any) -> None:
        from pgdoctor.verify.entry import Verdict

        raise Verdict(ENTRY_INIT_PG)  # the entry's call, raised here on purpose: never pgdoctor's bug

    dist.init_process_group = c10d.init_process_group = refuse  # type: ignore[assignment]

    def restore() -> None:
        dist.init_process_group = c10d.init_process_group = original  # type: ignore[assignment]

    return restore


def run_role(cfg: dict[str, Any], role: str, rank: int, world: int, store: Any = None) -> int:
    import datetime

    from pgdoctor.verify.common import error_record, write_json
    from pgdoctor.verify.entry import EntryError, call, load, raised_by_pgdoctor, user_traceback
    from pgdoctor.verify.records import new_record

    out_dir = Path(cfg["out_dir"])
    name = "reference" if role == "reference" else f"rank{rank}"
    result = new_record(role, rank, world)
    path = out_dir / f"{name}.json"
    import torch

    if role != "reference":
        import torch.distributed as dist

        _wait_for_reference(cfg, rank)
        dist.init_process_group(
            cfg.get("backend", "gloo"),
            rank=rank,
            world_size=world,
            store=store,
            timeout=datetime.timedelta(seconds=float(cfg.get("pg_timeout_s", 30))),
        )
    rc = 0
    entry_error: Optional[EntryError] = None
    restore = _refuse_entry_process_groups()
    try:
        try:
            fn = load(cfg["entry"])
            from pgdoctor.verify.common import SEED

            torch.manual_seed(SEED)
            spec = call(fn, cfg["entry"])
        except EntryError as exc:
            entry_error = exc
            spec = {}
        t0 = time.perf_counter()
        if entry_error is None:
            try:
                _train(cfg, role, spec, result, rank, world)
            except EntryError as exc:
                entry_error = exc
            except (Exception, SystemExit) as exc:
                if raised_by_pgdoctor(exc):  # pgdoctor's own bug, in the reference or a rank: exit 4
                    result["error"] = error_record(exc, len(result["steps"]), "run")
                elif role == "reference":
                    # One process, no distribution: whatever fails here is the entry's own code
                    # (an optimizer factory that raises, a data() that calls sys.exit).
                    step = len(result["steps"])
                    entry_error = EntryError(
                        f"the one-process reference failed at step {step}: {type(exc).__name__}: "
                        f"{_first_line(exc)}",
                        user_traceback(exc),
                    )
                else:
                    result["error"] = error_record(exc, len(result["steps"]), "run")
        if entry_error is not None:
            result["entry_error"] = {"message": str(entry_error), "traceback": entry_error.user_traceback}
            write_json(path, result)
            return EXIT_ENTRY_ERROR
        bug = result.get("error", {}).get("bug")
        if bug:  # a role's own handler recorded pgdoctor's exception (common.error_record)
            who = "the one-process reference" if role == "reference" else f"rank {rank} ({role})"
            result["internal_error"] = {
                "message": f"{who} raised {bug['message']}",
                "traceback": bug["traceback"],
            }
            write_json(path, result)
            print(bug["traceback"], file=sys.stderr)
            return EXIT_INTERNAL_ERROR
        result["wall_s"] = time.perf_counter() - t0
        result["peak_rss_mib"] = _peak_rss_mib()
        if "error" in result:
            print(result["error"]["traceback"], file=sys.stderr)
            rc = EXIT_TRAINING_ERROR
        write_json(path, result)
    finally:
        restore()
        if role != "reference":
            import torch.distributed as dist

            if dist.is_initialized() and rc == 0:
                try:
                    dist.destroy_process_group()
                except Exception:
                    pass
    return rc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else "(no message)"


def _train(cfg: dict[str, Any], role: str, spec: dict[str, Any], result: Any, rank: int, world: int) -> None:
    if role == "reference":
        from pgdoctor.verify.common import run_reference

        run_reference(cfg, spec, result)
    elif role in ("ddp", "fsdp"):
        from pgdoctor.verify.dataparallel import run_data_parallel

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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
