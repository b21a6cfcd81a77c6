"""Step 4: a real flight-recorder dump from one NCCL rank, taken twice (the debug-info pipe, which
the process group's monitor thread reads, and the in-process API), then compared field by field
with what the test suite's NCCL-format writer produces.

    python -m scripts.gpu_acceptance.fr_child WORK [--backend nccl|gloo]

Writes WORK/dumps/nccl_trace_rank_0 (pickle) and .json (in-process API), WORK/pipe/ (the pipe's
dump), WORK/fr_report.json (what happened, the dump's summary, the format differences). The last
all_reduce is held open behind torch.cuda._sleep, so the dump holds an entry that has not
completed, as a hang's would. `--backend gloo` runs the same on CPU (no pipe, no held entry), which
is how the suite tests this child without a GPU.
"""

from __future__ import annotations

import datetime
import json
import os
import pickle
import sys
import time
import traceback
from typing import Any, Callable

BUFFER = "2000"
SLEEP_CYCLES = 4_000_000_000  # about 2 s at the H200's 1.98 GHz boost clock


def _env(work: str) -> None:
    # Before torch is imported: the recorder reads these when the process group starts.
    os.makedirs(os.path.join(work, "pipe"), exist_ok=True)
    os.environ["TORCH_FR_BUFFER_SIZE"] = BUFFER
    os.environ["TORCH_NCCL_TRACE_BUFFER_SIZE"] = BUFFER  # its name before torch 2.6
    os.environ["TORCH_NCCL_DEBUG_INFO_PIPE_FILE"] = os.path.join(work, "pipe", "pipe_rank_")
    os.environ["TORCH_NCCL_DEBUG_INFO_TEMP_FILE"] = os.path.join(work, "pipe", "nccl_trace_rank_")
    os.environ["TORCH_NCCL_ENABLE_MONITORING"] = "1"


def _try(log: dict[str, Any], name: str, fn: Callable[[], Any]) -> Any:
    try:
        out = fn()
        log[name] = "ok"
        return out
    except Exception as exc:
        log[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"
        return None


def _collectives(torch: Any, dist: Any, device: str, log: dict[str, Any]) -> None:
    x = torch.ones(1024, device=device)
    for _ in range(3):
        _try(log, "all_reduce", lambda: dist.all_reduce(x))
    _try(log, "broadcast", lambda: dist.broadcast(x, 0))
    _try(
        log,
        "all_gather_into_tensor",
        lambda: dist.all_gather_into_tensor(torch.empty(1024, device=device), x),
    )
    _try(
        log, "reduce_scatter_tensor", lambda: dist.reduce_scatter_tensor(torch.empty(1024, device=device), x)
    )
    _try(log, "all_to_all_single", lambda: dist.all_to_all_single(torch.empty(1024, device=device), x))

    def coalesced() -> None:
        # As FSDP does it: several reduce_scatters in one coalesced NCCL group.
        with dist._coalescing_manager(device=torch.device(device), async_ops=True) as cm:
            for _ in range(2):
                dist.reduce_scatter_tensor(torch.empty(512, device=device), torch.ones(512, device=device))
        cm.wait()

    def mixed() -> None:
        # Ops of two kinds in one manager take the slow path: each op recorded under the group's
        # sequence number, then endCoalescing's "nccl:coalesced" marker.
        with dist._coalescing_manager(device=torch.device(device), async_ops=True) as cm:
            dist.reduce_scatter_tensor(torch.empty(512, device=device), torch.ones(512, device=device))
            dist.all_gather_into_tensor(torch.empty(512, device=device), torch.ones(512, device=device))
        cm.wait()

    if device != "cpu":
        # Gloo has no startCoalescing, and a failed coalescing manager would leave the group in
        # coalescing mode (every later collective queued, none issued).
        _try(log, "reduce_scatter_coalesced", coalesced)
        _try(log, "mixed_coalesced", mixed)
        _try(
            log,
            "all_to_all_list",
            lambda: dist.all_to_all([torch.empty(256, device=device)], [torch.ones(256, device=device)]),
        )
    sub = _try(log, "new_group", lambda: dist.new_group([0]))
    if sub is not None:
        _try(log, "subgroup_all_reduce", lambda: dist.all_reduce(x, group=sub))
    _try(log, "barrier", lambda: dist.barrier())


def _in_process(c10d: Any, log: dict[str, Any]) -> tuple[Any, Any]:
    pkl = js = None
    for name in ("_dump_nccl_trace", "_dump_fr_trace"):
        if hasattr(c10d, name):
            pkl = _try(
                log,
                f"api.{name}",
                lambda n=name: getattr(c10d, n)(
                    includeCollectives=True, includeStackTraces=True, onlyActive=False
                ),
            )
            if pkl is not None:
                break
    for name in ("_dump_nccl_trace_json", "_dump_fr_trace_json"):
        if hasattr(c10d, name):
            js = _try(
                log, f"api.{name}", lambda n=name: getattr(c10d, n)(includeCollectives=True, onlyActive=False)
            )
            if js is not None:
                break
    return pkl, js


def _through_pipe(work: str, log: dict[str, Any]) -> None:
    fifo = os.environ["TORCH_NCCL_DEBUG_INFO_PIPE_FILE"] + "0.pipe"
    target = os.environ["TORCH_NCCL_DEBUG_INFO_TEMP_FILE"] + "0"
    deadline = time.monotonic() + 5
    while not os.path.exists(fifo) and time.monotonic() < deadline:
        time.sleep(0.1)
    if not os.path.exists(fifo):
        log["pipe"] = (
            f"no pipe at {os.path.basename(fifo)} after 5 s (monitor thread off, or another variable name)"
        )
        return
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.write(fd, b"1")
        os.close(fd)
    except OSError as exc:
        log["pipe"] = f"could not write the pipe: {exc}"
        return
    t0 = time.monotonic()
    # The monitor thread looks at the pipe about once a second (its coordination interval).
    while time.monotonic() - t0 < 15:
        if os.path.exists(target) and os.path.getsize(target) > 0:
            time.sleep(0.3)  # the writer may still be writing
            log["pipe"] = f"dumped {os.path.getsize(target)} bytes after {time.monotonic() - t0:.1f} s"
            return
        time.sleep(0.2)
    log["pipe"] = f"no dump at {os.path.basename(target)} within 15 s of writing the pipe"


def reference() -> dict[str, Any]:
    """The suite's NCCL-format writer, asked for what this child did."""
    from tests.helpers.fr_scenarios import Writer

    w = Writer(0)
    for _ in range(3):
        w.add("all_reduce", [[1024]], [[1024]])
    w.add("broadcast", [[1024]], [[1024]])
    w.add("_all_gather_base", [[1024]], [[1024]])
    w.add("_reduce_scatter_base", [[1024]], [[1024]])
    w.add("all_to_all", [[1024]], [[1024]])
    # What the coalescing manager issues for reduce_scatters alone: one entry of the whole group
    # (ProcessGroupNCCL::reduce_scatter_tensor_coalesced).
    w.add("reduce_scatter_tensor_coalesced", [[512], [512]], [[512], [512]])
    w.add("_reduce_scatter_base", [[512]], [[512]], state="scheduled")
    w.add("_all_gather_base", [[512]], [[512]], state="scheduled", same_seq=True)
    w.add("coalesced", [], [], same_seq=True, marker=True)
    w.add("all_to_all", [[256]], [[256]])
    w.add("all_reduce", [[1024]], [[1024]], state="scheduled")
    return pickle.loads(w.dump({"0": ("default_pg", [0])}))


def main(argv: list[str]) -> int:
    if not argv or (len(argv) == 3 and argv[1] != "--backend") or len(argv) not in (1, 3):
        print("usage: python -m scripts.gpu_acceptance.fr_child WORK [--backend nccl|gloo]", file=sys.stderr)
        return 2
    work, backend = argv[0], (argv[2] if len(argv) == 3 else "nccl")
    _env(work)
    import torch
    import torch._C._distributed_c10d as c10d
    import torch.distributed as dist

    from scripts.gpu_acceptance.fr_format import compare, summary

    log: dict[str, Any] = {"backend": backend, "torch": torch.__version__}
    device = "cuda:0" if backend == "nccl" else "cpu"
    if backend == "nccl":
        torch.cuda.set_device(0)
    store = dist.TCPStore("127.0.0.1", 0, 1, True, timeout=datetime.timedelta(seconds=20))
    kw: dict[str, Any] = {"device_id": torch.device(device)} if backend == "nccl" else {}
    dist.init_process_group(
        backend, store=store, rank=0, world_size=1, timeout=datetime.timedelta(seconds=60), **kw
    )
    try:
        _collectives(torch, dist, device, log)
        if backend == "nccl":
            torch.cuda.synchronize()
            # Held open: the all_reduce waits on the stream behind a 2 s GPU sleep.
            torch.cuda._sleep(SLEEP_CYCLES)
        work_handle = dist.all_reduce(torch.ones(1024, device=device), async_op=True)
        pkl, js = _in_process(c10d, log)
        if backend == "nccl":
            _through_pipe(work, log)
        work_handle.wait()
    finally:
        dist.destroy_process_group()
    dumps = os.path.join(work, "dumps")
    os.makedirs(dumps, exist_ok=True)
    report: dict[str, Any] = {"log": log}
    if pkl is not None:
        with open(os.path.join(dumps, "nccl_trace_rank_0"), "wb") as fh:
            fh.write(pkl)
        real = pickle.loads(pkl)
        report["summary"] = summary(real)
        report["format_differences"] = compare(real, reference())
    if js is not None:
        with open(os.path.join(dumps, "nccl_trace_rank_0.json"), "wb") as fh:
            fh.write(js if isinstance(js, bytes) else str(js).encode())
    with open(os.path.join(work, "fr_report.json"), "w", encoding="utf-8") as fh:
        json.dump(report, fh, indent=1, default=repr)
    diffs = report.get("format_differences")
    print(
        f"{backend}: in-process dump {'taken' if pkl is not None else 'FAILED'}; pipe: "
        f"{log.get('pipe', 'n/a')}; "
        f"{'no dump to compare' if diffs is None else f'{len(diffs)} format differences with the fixtures'}"
    )
    for d in diffs or []:
        print(f"  {d}")
    return 0 if pkl is not None else 1


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Exception:
        traceback.print_exc()
        sys.exit(1)
