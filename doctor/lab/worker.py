"""One rank of a lab run: `python -m pgdoctor.lab.worker SPEC_JSON` (RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT from the environment, as torchrun sets them).

It trains for the spec's steps inside `step n=<n>` ranges, then writes `rank<N>.json` to the
run directory: status (ok | error | hung), the exception, the ranges open where it failed and
the phase, and the memory at that moment. On a failure it prints the real traceback to stderr
(the log that the diagnosis reads), dumps its flight recorder, and asks the other ranks to dump
theirs: the lab's equivalent of NCCL's dump-on-timeout, through a file in the run directory
(all lab ranks share a host) that a watcher thread in every rank polls.
"""

from __future__ import annotations

import datetime
import json
import os
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

DUMP_REQUEST = "dump.request"
FR_SUBDIR = "flight_recorder"
FR_PREFIX = "nccl_trace_rank_"
STARTUP_S = 60.0  # torch's own dump file naming: <prefix><rank>


def result_path(run_dir: str, rank: int) -> Path:
    return Path(run_dir) / f"rank{rank}.json"


def fr_dir(run_dir: str) -> Path:
    return Path(run_dir) / FR_SUBDIR


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(data, default=str), encoding="utf-8")
    os.replace(tmp, path)


class Rank:
    def __init__(self, spec: Any, rank: int, world: int):
        self.spec, self.rank, self.world = spec, rank, world
        self.result: dict[str, Any] = {"rank": rank, "pid": os.getpid(), "status": "running", "step": -1}
        self._lock = threading.Lock()
        self._dumped = False
        self.finished = False

    def save(self, **update: Any) -> None:
        with self._lock:
            self.result.update(update)
            _write_json(result_path(self.spec.run_dir, self.rank), self.result)

    def dump_flight_recorder(self) -> str:
        """Write this rank's flight-recorder buffer (a pickle, as torch writes it) once."""
        d = fr_dir(self.spec.run_dir)
        path = d / f"{FR_PREFIX}{self.rank}"
        with self._lock:
            if self._dumped:
                return str(path)
            self._dumped = True
        try:
            import torch

            data = torch._C._distributed_c10d._dump_fr_trace()  # type: ignore[attr-defined]
        except Exception as exc:  # no recorder in this build, or not initialised
            self.save(fr_error=f"{type(exc).__name__}: {exc}")
            return ""
        d.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        return str(path)

    def watch_for_dump_request(self) -> None:
        request = Path(self.spec.run_dir) / DUMP_REQUEST

        def loop() -> None:
            from pgdoctor.lab.faults import memory_facts
            from pgdoctor.trace import instrument as ins

            while not self.finished:
                if request.exists():
                    if self.finished:
                        return
                    ranges = ins.current_ranges()
                    path = self.dump_flight_recorder()
                    if self.result.get("status") == "running":
                        # Still inside its step: this is the rank the others are waiting for.
                        self.save(
                            status="hung",
                            ranges=list(ranges),
                            phase=ins.phase_of(ranges),
                            memory=memory_facts(self.device),
                            fr_dump=path,
                        )
                    return
                time.sleep(0.05)

        threading.Thread(target=loop, name="pgdoctor-dump-watch", daemon=True).start()

    @property
    def device(self) -> str:
        if self.spec.device == "cuda":
            import torch

            return f"cuda:{self.rank % max(1, torch.cuda.device_count())}"
        return "cpu"


def _backend(spec: Any, world: int) -> str:
    if spec.device == "cuda":
        import torch

        # NCCL needs a GPU per rank; on fewer GPUs the ranks share them through gloo.
        return "nccl" if torch.cuda.device_count() >= world else "gloo"
    return "gloo"


def run(spec: Any, rank: int, world: int) -> int:
    import torch
    import torch.distributed as dist

    from pgdoctor.lab.faults import Fault, memory_facts
    from pgdoctor.probes.store import tcp_store
    from pgdoctor.trace import instrument as ins

    torch.set_num_threads(1)
    if spec.fault == "oom" and spec.device == "cpu":
        # oneDNN allocates its primitives and scratchpads with its own malloc calls; at the cap
        # one of those can fail first ("could not create a primitive"). Without it the
        # failing allocation is a tensor's, through PyTorch's DefaultCPUAllocator.
        torch.backends.mkldnn.enabled = False  # type: ignore[assignment]
    r = Rank(spec, rank, world)
    device = r.device
    if device.startswith("cuda"):
        torch.cuda.set_device(torch.device(device))
    if spec.trace_dir:
        ins.enable_trace(spec.trace_dir, rank)
    fault = Fault(spec, rank, device)
    r.save(device=device)
    try:
        # The store waits (up to STARTUP_S) until every rank has connected, so the short
        # process-group timeout that the timeout fault relies on only starts counting once all
        # ranks are up: on a busy host, importing torch alone can take longer than it.
        store = tcp_store(
            os.environ["MASTER_ADDR"],
            int(os.environ["MASTER_PORT"]),
            world,
            rank == 0,
            STARTUP_S,
            wait_for_workers=True,
        )
        dist.init_process_group(
            _backend(spec, world),
            store=store,
            rank=rank,
            world_size=world,
            timeout=datetime.timedelta(seconds=spec.pg_timeout_s),
        )
        r.watch_for_dump_request()
        run_cls = _strategy(spec.strategy)
        job = run_cls(spec, rank, world, device, fault)
        r.save(backend=dist.get_backend(), setup=job.describe())
        for n in range(spec.n_steps):
            fault.step = n
            r.save(step=n, batch=fault.batch(n))
            with ins.step(n):
                job.step(n)
            fault.after_step(n)
            if fault.cap:
                r.save(cap=fault.cap)
        ins.flush_trace()
        r.finished = True
        r.save(status="ok")
        dist.destroy_process_group()
        return 0
    except BaseException as exc:  # catches-interrupts: a lab rank records every way it ended, then exits
        ranges = ins.ranges_at_failure(exc)
        ins.reset_thread()
        traceback.print_exc()
        sys.stderr.flush()
        # Once the exception's frames are gone the failed step's tensors are freed, so even a
        # rank at its memory cap can write its report.
        memory = memory_facts(device)
        r.save(
            status="error",
            error_type=type(exc).__name__,
            error=str(exc)[:4000],
            ranges=list(ranges),
            phase=ins.phase_of(ranges),
            memory=memory,
        )
        path = r.dump_flight_recorder()
        r.save(fr_dump=path)
        try:
            (Path(spec.run_dir) / DUMP_REQUEST).touch()
        except OSError:
            pass
        ins.flush_trace()
        r.finished = True
        return 1


def _strategy(name: str) -> Any:
    if name == "ddp":
        from pgdoctor.lab.ddp import DdpRun

        return DdpRun
    if name == "pp":
        from pgdoctor.lab.pp import PpRun

        return PpRun
    from pgdoctor.lab.tp import TpRun

    return TpRun


def main(argv: list[str]) -> int:
    from pgdoctor.lab.spec import LabSpec

    if len(argv) != 2:
        print("usage: python -m pgdoctor.lab.worker SPEC_JSON", file=sys.stderr)
        return 2
    spec = LabSpec.from_json(argv[1])
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    return run(spec, rank, world)


if __name__ == "__main__":
    rc = main(sys.argv)
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: a failed rank's process group can block in its destructor
    # while peers are gone or stuck. A rank that finished cleanly under an NVTX tool exits
    # normally instead: the tool writes the ranges it still buffers at exit, and os._exit lost
    # the last step's ranges from the Nsight Systems report.
    from pgdoctor.trace.instrument import tool_attached

    if rc == 0 and tool_attached():
        sys.exit(0)
    os._exit(rc)
