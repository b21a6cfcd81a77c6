"""One rank of a collective sweep: `python -m pgdoctor.probes.collectives.worker` (spawned by pgdoctor) or
`run_rank()` in-process (inside torchrun/srun, with the launcher's rank and world size).

Each step (op, size) runs one correctness iteration on deterministic per-rank data with an
exactly known result (float32 sums of small integers, checked element by element), then warm-up
iterations, then timed iterations, each after a barrier so one slow rank shows in its own times.
Per-rank results are gathered to rank 0 over a gloo group, so a report arrives even when NCCL is
broken. Progress (`stage/<rank>`) is kept in the rendezvous store: when a stage does not finish
within the timeout, the calling thread reads the store and names the ranks that never got there,
instead of waiting forever with them.

Fault injection (tests and drills only): PGDOCTOR_COLL_FAULT="kind:rank:arg[,...]" with kind
`corrupt` (arg: op; adds 1000 to one element of that rank's result), `hang` (arg: op, or `init`;
the rank never enters that op, or never joins the rendezvous), `slow` (arg: milliseconds added
to each timed iteration of that rank), `exit` (arg: op or `init`; the rank exits with status 17
before it), `kill` (arg: op or `init`; the rank SIGKILLs itself before it, as the kernel's OOM
killer would) or `stop` (the rank SIGSTOPs itself before it: a process that neither runs nor
dies, which only the parent's stall bound ends). The arg `import` acts before the rank reports
ready (see below): a rank stuck in its imports, as on a hung shared file system.

Readiness (spawned ranks only): importing torch costs seconds (3-5 s on a loaded 2-core host),
and ranks finish it at different times. So each spawned rank, once its imports are done, creates
`ready.<rank>` in the parent's private directory (READY_DIR_ENV) and waits for `go` there; the
parent writes `go` when every rank is ready, and only then does the rendezvous clock
(init_timeout_s) start. A rank that never becomes ready is named by the parent, from the missing
file, without any rank waiting the rendezvous timeout for it.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Callable, Optional

from pgdoctor.knowledge.collectives import Row, SweepSpec, make_row
from pgdoctor.knowledge.launchenv import parse_launch

RESULT_MARK = "PGDOCTOR-COLL-RESULT "
SPEC_ENV = "PGDOCTOR_COLL_SPEC"
FAULT_ENV = "PGDOCTOR_COLL_FAULT"
SPAWNED_ENV = "PGDOCTOR_COLL_SPAWNED"
READY_DIR_ENV = "PGDOCTOR_COLL_READY_DIR"
GO_FILE = "go"
# How long a spawned rank may take to import torch and report ready, and how long a ready rank
# waits for `go`. Measured by benchmarks/bench_collectives_ready.py: 2.5-6 s per rank on the
# shared 2-core host under load 5-7; the bound leaves room for twice that.
IMPORT_ALLOWANCE_S = 15.0
EXIT_OK, EXIT_HANG, EXIT_ERROR, EXIT_FAULT = 0, 3, 4, 17
SYNC_ITERS = 5  # barrier-separated iterations per size for per-rank times
STORE_PREFIX = "pgdoctor-coll"


@dataclass(frozen=True)
class Fault:
    kind: str
    rank: int
    arg: str


def parse_faults(text: str) -> list[Fault]:
    out = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        parts = item.split(":")
        if (
            len(parts) != 3
            or parts[0] not in ("corrupt", "hang", "slow", "exit", "kill", "stop")
            or not parts[1].isdigit()
        ):
            raise ValueError(
                f"bad {FAULT_ENV} entry {item!r} (kind:rank:arg, kind corrupt|hang|slow|exit|kill|stop)"
            )
        out.append(Fault(parts[0], int(parts[1]), parts[2]))
    return out


@dataclass(frozen=True)
class RankIdent:
    """Who this process is in the collective and where the rendezvous store lives."""

    rank: int
    world_size: int
    local_rank: int
    master_addr: str
    master_port: int
    launcher: str  # spawn | torchrun | slurm | env
    agent_store: bool = False  # torchrun's agent already serves the store at master_addr:port
    prefix: str = STORE_PREFIX


def ident_from_env(env: Mapping[str, str]) -> RankIdent:
    """The identity a launcher gave this process; ValueError names what is missing."""
    info = parse_launch(env)
    if info.malformed:
        raise ValueError(f"launcher variables are not integers: {info.malformed}")
    if info.rank is None or info.world_size is None:
        raise ValueError(
            "no rank/world size in the environment (RANK/WORLD_SIZE or SLURM_PROCID/SLURM_NTASKS)"
        )
    if not 0 <= info.rank < info.world_size:
        raise ValueError(f"rank {info.rank} is outside world size {info.world_size}")
    spawned = env.get(SPAWNED_ENV) == "1"
    port = info.master_port
    if port is None and env.get("SLURM_JOB_ID", "").isdigit():
        # Every task of a step derives the same port from the job id without talking.
        port = 20000 + int(env["SLURM_JOB_ID"]) % 10000
    addr = info.master_addr or ("127.0.0.1" if info.world_size == 1 else None)
    if addr is None or port is None:
        raise ValueError(
            "no MASTER_ADDR/MASTER_PORT (and none derivable from SLURM_JOB_NODELIST/SLURM_JOB_ID)"
        )
    prefix = STORE_PREFIX
    if "TORCHELASTIC_RUN_ID" in env:
        prefix += f"/{env['TORCHELASTIC_RUN_ID']}/{env.get('TORCHELASTIC_RESTART_COUNT', '0')}"
    elif "SLURM_JOB_ID" in env:
        prefix += f"/{env['SLURM_JOB_ID']}.{env.get('SLURM_STEP_ID', '')}"
    return RankIdent(
        rank=info.rank,
        world_size=info.world_size,
        local_rank=info.local_rank or 0,
        master_addr=addr,
        master_port=port,
        launcher="spawn" if spawned else info.launcher,
        agent_store=env.get("TORCHELASTIC_USE_AGENT_STORE") == "True" and not spawned,
        prefix=prefix,
    )


def _open_store(ident: RankIdent, timeout_s: float, client_only: bool = False) -> Any:
    """The rendezvous store. Rank 0 binds it to MASTER_ADDR itself (never the wildcard
    address, which TCPStore would use) and hands the listening socket over."""
    import torch.distributed as dist

    from pgdoctor.probes.store import tcp_store

    server = ident.rank == 0 and not ident.agent_store and not client_only
    store = tcp_store(ident.master_addr, ident.master_port, ident.world_size, server, timeout_s)
    return dist.PrefixStore(ident.prefix, store)


class _Progress:
    """Stage bookkeeping shared by the body thread and the thread that watches it."""

    def __init__(self) -> None:
        self.stage = -1  # -1 init, 2k+1 op of step k, 2k+2 gather of step k
        self.what = "init"
        self.started = time.monotonic()
        self.lock = threading.Lock()

    def enter(self, stage: int, what: str) -> None:
        with self.lock:
            self.stage, self.what, self.started = stage, what, time.monotonic()


PERIOD = 97  # the data repeats every 97 elements: cheap to build at any size, exact to check


def _pattern(torch: Any, ranks: Sequence[int], start: int, count: int, device: Any) -> Any:
    """Sum over `ranks` of each rank's data at elements start..start+count: element j of rank r
    is (7j + 13r) mod 97 + 1, small integers whose sums over any number of ranks stay exact in
    float32. Built as one period tiled, so a 256 MiB buffer costs one pass."""
    j = torch.arange(PERIOD, device=device, dtype=torch.int64)
    period = sum(((j * 7 + r * 13) % PERIOD + 1) for r in ranks).to(torch.float32)
    shift = start % PERIOD
    reps = (shift + count + PERIOD - 1) // PERIOD
    return period.repeat(max(1, reps))[shift : shift + count].contiguous()


def _expected(torch: Any, op: str, rank: int, n: int, count: int, device: Any) -> Optional[Any]:
    """What `rank` must hold after `op` over `count` elements (None: nothing defined there)."""
    c = count // n
    everyone = range(n)
    if op == "all_reduce" or (op == "reduce" and rank == 0):
        return _pattern(torch, everyone, 0, count, device)
    if op == "reduce":
        return None
    if op == "broadcast":
        return _pattern(torch, [0], 0, count, device)
    if op == "send_recv":
        return _pattern(torch, [(rank - 1) % n], 0, count, device)
    if op == "all_gather":
        return torch.cat([_pattern(torch, [s], 0, c, device) for s in everyone])
    if op == "reduce_scatter":
        return _pattern(torch, everyone, rank * c, c, device)
    if op == "all_to_all":
        return torch.cat([_pattern(torch, [s], rank * c, c, device) for s in everyone])
    raise ValueError(op)


def _buffers(torch: Any, op: str, rank: int, n: int, count: int, device: Any, data: bool) -> tuple[Any, Any]:
    """(input, output) for an op; `data` fills inputs with the pattern, else zeros (timing)."""
    in_count = count // n if op == "all_gather" else count
    out_count = count // n if op == "reduce_scatter" else count
    if data:
        src = _pattern(torch, [rank], 0, in_count, device)
    else:
        src = torch.zeros(in_count, dtype=torch.float32, device=device)
    if op in ("all_reduce", "broadcast", "reduce"):
        return src, src  # in place, as torch runs them
    return src, torch.zeros(out_count, dtype=torch.float32, device=device)


def _runner(dist: Any, op: str, rank: int, n: int, inp: Any, out: Any, pg: Any) -> Callable[[], None]:
    if op == "all_reduce":
        return lambda: dist.all_reduce(inp, group=pg)
    if op == "broadcast":
        return lambda: dist.broadcast(inp, src=0, group=pg)
    if op == "reduce":
        return lambda: dist.reduce(inp, dst=0, group=pg)
    if op == "all_gather":
        fn = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
        return lambda: fn(out, inp, group=pg)
    if op == "reduce_scatter":
        fn = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
        return lambda: fn(out, inp, group=pg)
    if op == "all_to_all":
        return lambda: dist.all_to_all_single(out, inp, group=pg)
    if op == "send_recv":

        def ring() -> None:
            ops = [
                dist.P2POp(dist.isend, inp, (rank + 1) % n, pg),
                dist.P2POp(dist.irecv, out, (rank - 1) % n, pg),
            ]
            for req in dist.batch_isend_irecv(ops):
                req.wait()

        return ring
    raise ValueError(op)


def _compare(torch: Any, got: Any, want: Any) -> Optional[dict[str, Any]]:
    if torch.equal(got, want):
        return None
    bad = torch.ne(got, want)
    wrong = int(bad.sum().item())
    if not wrong:
        return None
    first = int(bad.nonzero()[0].item())
    return {
        "wrong_elements": wrong,
        "elements": int(got.numel()),
        "first_index": first,
        "expected": float(want[first].item()),
        "got": float(got[first].item()),
    }


def gather_json(
    torch: Any, dist: Any, obj: Any, rank: int, world_size: int, group: Any
) -> Optional[list[Any]]:
    """Every rank's `obj` on rank 0 (None elsewhere), as JSON in uint8 tensors on the gloo group.

    Not dist.gather_object: its unpickling runs whatever another rank sent, and it needs numpy,
    which torch does not depend on (a fresh environment without numpy broke every sweep)."""
    payload = json.dumps(obj).encode()
    size = torch.tensor([len(payload)], dtype=torch.int64)
    sizes = [torch.zeros(1, dtype=torch.int64) for _ in range(world_size)]
    dist.all_gather(sizes, size, group=group)
    lengths = [int(s.item()) for s in sizes]
    buf = torch.zeros(max(lengths), dtype=torch.uint8)
    buf[: len(payload)] = torch.frombuffer(bytearray(payload), dtype=torch.uint8)
    bufs = [torch.zeros(max(lengths), dtype=torch.uint8) for _ in range(world_size)] if rank == 0 else None
    dist.gather(buf, bufs, dst=0, group=group)
    if bufs is None:
        return None
    return [json.loads(bytes(b[:length].tolist())) for b, length in zip(bufs, lengths)]


def _memcpy_gbps(torch: Any, nbytes: int) -> float:
    """Host memory-copy bandwidth (read + write counted once, like a copy's payload)."""
    a = torch.ones(max(1, nbytes // 4), dtype=torch.float32)
    b = torch.empty_like(a)
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        b.copy_(a)
        best = min(best, time.perf_counter() - t)
    return a.numel() * 4 / best / 1e9


def drill(faults: Sequence[Fault], rank: int, op: str) -> None:
    """Injected faults that act before the rank announces the stage, as a real straggler would."""
    kinds = {f.kind for f in faults if f.rank == rank and f.arg == op}
    if "exit" in kinds:
        os._exit(EXIT_FAULT)
    if "kill" in kinds:
        os.kill(os.getpid(), signal.SIGKILL)
    if "stop" in kinds:
        os.kill(os.getpid(), signal.SIGSTOP)
    if "hang" in kinds:
        while True:  # this rank never enters the collective
            time.sleep(3600)


class _Sweep:
    """The body of one rank; runs in its own thread so the caller can watch it."""

    def __init__(
        self,
        spec: SweepSpec,
        ident: RankIdent,
        faults: list[Fault],
        progress: _Progress,
        on_row: Optional[Callable[[Row, int, int], None]],
    ):
        self.spec, self.ident, self.faults, self.progress, self.on_row = spec, ident, faults, progress, on_row
        self.rows: list[Row] = []
        self.info: dict[str, Any] = {}
        self.store: Any = None

    def _fault(self, kind: str, op: str = "") -> Optional[Fault]:
        for f in self.faults:
            if f.kind == kind and f.rank == self.ident.rank and (not op or f.arg == op):
                return f
        return None

    def _drill(self, op: str) -> None:
        drill(self.faults, self.ident.rank, op)

    def _stage(self, stage: int, what: str) -> None:
        self.progress.enter(stage, what)
        self.store.set(f"stage/{self.ident.rank}", str(stage))

    def run(self) -> None:
        import torch
        import torch.distributed as dist

        spec, ident = self.spec, self.ident
        r, n = ident.rank, ident.world_size
        self._drill("init")
        self.store = _open_store(ident, spec.init_timeout_s)
        self.store.set(f"alive/{r}", "1")
        device: Any = torch.device("cpu")
        if spec.backend == "nccl":
            device = torch.device("cuda", ident.local_rank % max(1, torch.cuda.device_count()))
            torch.cuda.set_device(device)
        # The process group's own timeout is only a backstop: the watcher names missing ranks first.
        backstop = timedelta(seconds=spec.op_timeout_s + 60)
        dist.init_process_group(
            spec.backend, store=dist.PrefixStore("pg", self.store), rank=r, world_size=n, timeout=backstop
        )
        try:
            gather_pg = dist.new_group(backend="gloo", timeout=backstop) if spec.backend == "nccl" else None
            self._stage(0, "init")
            steps = spec.steps(n)
            for k, (op, nbytes) in enumerate(steps):
                self._drill(op)
                self._stage(2 * k + 1, f"{op} {nbytes} B")
                mine = self._step(torch, dist, op, nbytes, device, gather_pg)
                self._stage(2 * k + 2, f"gather of {op} {nbytes} B")
                gathered = gather_json(torch, dist, mine, r, n, gather_pg)
                if gathered is not None:
                    row = make_row(op, nbytes, gathered)
                    self.rows.append(row)
                    if self.on_row:
                        self.on_row(row, k + 1, len(steps))
            self._stage(2 * len(steps) + 1, "finish")
            if r == 0:
                self.info = self._describe(torch, dist, device)
            dist.barrier(group=gather_pg)
        finally:
            dist.destroy_process_group()

    def _describe(self, torch: Any, dist: Any, device: Any) -> dict[str, Any]:
        info: dict[str, Any] = {"torch": str(torch.__version__), "device": str(device)}
        if self.spec.backend == "nccl":
            info["device_name"] = torch.cuda.get_device_name(device)
            try:
                v = torch.cuda.nccl.version()
                # A tuple on current torch; older builds return NCCL_VERSION_CODE (2.18.5 = 21805).
                info["nccl_version"] = (
                    ".".join(str(x) for x in v)
                    if isinstance(v, tuple)
                    else f"{v // 10000}.{v // 100 % 100}.{v % 100}"
                )
            except Exception as exc:  # an odd build must not cost the whole sweep
                info["nccl_version_error"] = f"{type(exc).__name__}: {exc}"
        if self.spec.memcpy_probe:
            # 64 MiB whatever the sweep: smaller copies measure the caches, not memory.
            info["host_memcpy_gbps"] = _memcpy_gbps(torch, 64 << 20)
        return info

    def _iterations(self, torch: Any, dist: Any, first_s: float, gather_pg: Any) -> tuple[int, int]:
        """Warm-up and timed iterations for this size. Sizes whose single iteration would blow
        the step budget run fewer (at least 5 timed, or --iters if smaller); every rank must run
        the same count, so the slowest rank's first-iteration time decides for all."""
        spec = self.spec
        if spec.step_budget_s <= 0:
            return spec.warmup, spec.iters
        t = torch.tensor([first_s], dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=gather_pg)
        per = max(float(t.item()), 1e-9)
        iters = min(spec.iters, max(min(5, spec.iters), int(spec.step_budget_s / per)))
        warmup = min(spec.warmup, max(min(1, spec.warmup), int(spec.step_budget_s / 4 / per)))
        return warmup, iters

    def _step(
        self, torch: Any, dist: Any, op: str, nbytes: int, device: Any, gather_pg: Any
    ) -> dict[str, Any]:
        r, n = self.ident.rank, self.ident.world_size
        count = nbytes // 4
        cuda = device.type == "cuda"
        inp, out = _buffers(torch, op, r, n, count, device, data=True)
        if cuda:
            torch.cuda.synchronize(device)
        first = time.perf_counter()
        _runner(dist, op, r, n, inp, out, None)()
        if cuda:
            torch.cuda.synchronize(device)
        warmup, iters = self._iterations(torch, dist, time.perf_counter() - first, gather_pg)
        if self._fault("corrupt", op):
            out.view(-1)[out.numel() // 2] += 1000.0
        want = _expected(torch, op, r, n, count, device)
        wrong = _compare(torch, out, want) if want is not None else None
        del want
        inp, out = _buffers(torch, op, r, n, count, device, data=False)
        run = _runner(dist, op, r, n, inp, out, None)
        for _ in range(warmup):
            run()
        slow = self._fault("slow")
        delay = float(slow.arg) / 1000 if slow else 0.0
        dist.barrier(group=gather_pg)
        times = self._back_to_back(torch, run, iters, delay, device)
        sync = self._synchronised(torch, dist, run, min(iters, SYNC_ITERS), delay, device, gather_pg)
        return {"times_us": times, "sync_times_us": sync, "wrong": wrong}

    @staticmethod
    def _back_to_back(
        torch: Any, run: Callable[[], None], iters: int, delay: float, device: Any
    ) -> list[float]:
        """The headline timing, as nccl-tests runs it: iterations back to back, each timed (CUDA
        events between launches on GPU, so the launch pipeline stays full)."""
        if device.type == "cuda":
            events = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
            events[0].record()
            for i in range(iters):
                run()
                events[i + 1].record()
            events[-1].synchronize()
            return [events[i].elapsed_time(events[i + 1]) * 1000.0 + delay * 1e6 for i in range(iters)]
        times = []
        for _ in range(iters):
            t = time.perf_counter()
            run()
            if delay:
                time.sleep(delay)
            times.append((time.perf_counter() - t) * 1e6)
        return times

    @staticmethod
    def _synchronised(
        torch: Any, dist: Any, run: Callable[[], None], iters: int, delay: float, device: Any, gather_pg: Any
    ) -> list[float]:
        """Per-rank attribution: every iteration starts after a barrier, so a rank that takes
        longer for its own part shows in its own time instead of in everyone's waiting."""
        times = []
        for _ in range(iters):
            dist.barrier(group=gather_pg)
            if device.type == "cuda":
                torch.cuda.synchronize(device)
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                run()
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end) * 1000.0 + delay * 1e6)
                if delay:
                    time.sleep(delay)
            else:
                t = time.perf_counter()
                run()
                if delay:
                    time.sleep(delay)
                times.append((time.perf_counter() - t) * 1e6)
        return times


def describe_stage(spec: SweepSpec, world_size: int, stage: int) -> str:
    """The words for a stage number: -1 init, 0 ready, 2k+1 op of step k, 2k+2 its gather."""
    steps = spec.steps(world_size)
    if stage < 0:
        return "init"
    if stage == 0:
        return "the first collective"
    k = (stage - 1) // 2
    if k >= len(steps):
        return "finish"
    op, nbytes = steps[k]
    return f"{op} {nbytes} B" if stage % 2 else f"gather of {op} {nbytes} B"


def _stages(ident: RankIdent, timeout_s: float = 5.0) -> tuple[dict[int, int], str]:
    """Every rank's last announced stage (-2: never connected), read from the store through a
    connection of our own: the body thread may be blocked inside the store."""
    try:
        store = _open_store(ident, timeout_s, client_only=True)
    except Exception as exc:
        return {}, f"rendezvous store at {ident.master_addr}:{ident.master_port} unreachable: {exc}"
    out = {}
    for r in range(ident.world_size):
        try:
            if store.check([f"stage/{r}"]):
                out[r] = int(store.get(f"stage/{r}"))
            else:
                out[r] = -1 if store.check([f"alive/{r}"]) else -2
        except Exception:
            out[r] = -2
    return out, ""


def _diagnose(spec: SweepSpec, ident: RankIdent, my_stage: int) -> dict[str, Any]:
    """Who is behind. The stage the furthest rank waits in is the one that did not complete;
    the ranks that never announced it are the ones that did not answer (possibly this one)."""
    stages, note = _stages(ident)
    if not stages:
        named = [0] if ident.rank != 0 else []
        return {
            "stage": my_stage,
            "what": describe_stage(spec, ident.world_size, my_stage),
            "missing_ranks": named,
            "present_ranks": [ident.rank],
            "note": note,
        }
    # This rank's own stage counts over the store's, except when the store never heard from it
    # (-2): then its body is stuck before it even connected (the watcher thread runs on), and
    # saying "-1, init" would make it look present, so that a peer's report going missing (rank 0
    # exits and takes the store with it) left no rank named at all.
    if stages.get(ident.rank, -2) > -2 or my_stage >= 0:
        stages[ident.rank] = max(stages.get(ident.rank, -2), my_stage)
    top = max(stages.values())
    missing = sorted(r for r, st in stages.items() if st < top)
    return {
        "stage": top,
        "what": describe_stage(spec, ident.world_size, top),
        "missing_ranks": missing,
        "present_ranks": sorted(r for r, st in stages.items() if st >= top),
        "note": note,
        "stages": {str(r): st for r, st in sorted(stages.items())},
    }


def run_rank(
    spec: SweepSpec,
    ident: RankIdent,
    faults: Optional[list[Fault]] = None,
    on_row: Optional[Callable[[Row, int, int], None]] = None,
) -> dict[str, Any]:
    """Run this rank's sweep and return its outcome (JSON-able). Never waits more than the
    stage timeout for a peer: a stuck stage returns status `hang` naming the missing ranks
    (the stuck thread is a daemon and is abandoned)."""
    progress = _Progress()
    sweep = _Sweep(spec, ident, faults or [], progress, on_row)
    box: dict[str, BaseException] = {}

    def body() -> None:
        try:
            sweep.run()
        except BaseException as exc:
            box["error"] = exc

    t = threading.Thread(target=body, name=f"pgdoctor-coll-rank{ident.rank}", daemon=True)
    t.start()
    init_timeout = float(spec.init_timeout_s)
    base = {
        "rank": ident.rank,
        "world_size": ident.world_size,
        "backend": spec.backend,
        "launcher": ident.launcher,
    }
    while t.is_alive():
        t.join(0.05)
        with progress.lock:
            stage, what, started = progress.stage, progress.what, progress.started
        limit = init_timeout if stage < 0 else spec.op_timeout_s
        if t.is_alive() and time.monotonic() - started > limit:
            return (
                base
                | _diagnose(spec, ident, stage)
                | {
                    "status": "hang",
                    "timeout_s": limit,
                    "own_stage": stage,
                    "own_what": what,
                    "rows": [row.to_json() for row in sweep.rows],
                }
            )
    if "error" in box:
        exc = box["error"]
        return base | {
            "status": "error",
            "stage": progress.stage,
            "what": progress.what,
            "error": f"{type(exc).__name__}: {exc}".strip()[:2000],
            "rows": [row.to_json() for row in sweep.rows],
        }
    return base | {"status": "ok", "rows": [row.to_json() for row in sweep.rows], "info": sweep.info}


def _append_progress(path: str) -> Callable[[Row, int, int], None]:
    """One line per finished row: `done total op bytes {row json}`. The parent counts them for
    its stall bound, shows them as progress, and reports them if the sweep is interrupted."""

    def write(row: Row, done: int, total: int) -> None:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{done} {total} {row.op} {row.bytes} {json.dumps(row.to_json())}\n")

    return write


def ready_file(ready_dir: str, rank: int) -> str:
    return os.path.join(ready_dir, f"ready.{rank}")


def report_ready(ready_dir: str, rank: int, faults: Sequence[Fault]) -> bool:
    """Say "imported, about to rendezvous" and wait for the parent's `go` (every rank ready).
    False when no `go` came within the import allowance (the parent is gone or gave up)."""
    drill(faults, rank, "import")
    # Created whole by the rename: the parent never sees a name without the rank having written it.
    tmp = ready_file(ready_dir, rank) + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(str(os.getpid()))
    os.replace(tmp, ready_file(ready_dir, rank))
    go = os.path.join(ready_dir, GO_FILE)
    end = time.monotonic() + IMPORT_ALLOWANCE_S
    while not os.path.exists(go):
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def main() -> int:
    try:
        spec = SweepSpec.from_json(os.environ[SPEC_ENV])
        ident = ident_from_env(os.environ)
        faults = parse_faults(os.environ.get(FAULT_ENV, ""))
    except (KeyError, ValueError, TypeError) as exc:
        print(f"pgdoctor.probes.collectives.worker: bad invocation: {exc}", file=sys.stderr)
        return 2
    ready_dir = os.environ.get(READY_DIR_ENV, "")
    if ready_dir:
        import torch.distributed  # noqa: F401  (the import that readiness waits for)

        if not report_ready(ready_dir, ident.rank, faults):
            print("pgdoctor.probes.collectives.worker: no go from the parent", file=sys.stderr)
            return EXIT_ERROR
    on_row = _append_progress(spec.progress_path) if spec.progress_path and ident.rank == 0 else None
    outcome = run_rank(spec, ident, faults, on_row)
    sys.stdout.write(RESULT_MARK + json.dumps(outcome) + "\n")
    sys.stdout.flush()
    code = {"ok": EXIT_OK, "hang": EXIT_HANG}.get(outcome["status"], EXIT_ERROR)
    if code != EXIT_OK:
        # A peer may still hold this rank inside a collective; tearing the group down would
        # wait for it. The result is written; leave now.
        os._exit(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
