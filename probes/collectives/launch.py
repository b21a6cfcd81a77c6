"""Where the ranks of a collective sweep come from, and how their outcomes become one result.

Two ways: inside torchrun/srun (the launcher already started every rank) this process is one
rank and runs in-process; otherwise pgdoctor spawns `--nproc` local ranks of
`python -m pgdoctor.probes.collectives.worker` through pgdoctor.probes.processes (own session, killed at the
deadline
and at exit), with the store on 127.0.0.1 and gloo on the loopback interface.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from pgdoctor.knowledge.collectives import SIZE_CONVENTION, Row, SweepSpec, latency, plateau
from pgdoctor.knowledge.launchenv import parse_launch
from pgdoctor.model import Measurement, Reason, Unavailable
from pgdoctor.probes.collectives.worker import (
    EXIT_FAULT,
    FAULT_ENV,
    GO_FILE,
    IMPORT_ALLOWANCE_S,
    READY_DIR_ENV,
    RESULT_MARK,
    SPAWNED_ENV,
    SPEC_ENV,
    ident_from_env,
    parse_faults,
    ready_file,
    run_rank,
)
from pgdoctor.probes.processes import ChildOutcome, describe_exit

ProgressFn = Callable[[int, int, str], None]  # (steps done, steps total, what)

# Variables of an outer launcher that must not leak into ranks pgdoctor spawns itself.
_LAUNCHER_VARS = (
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "GROUP_RANK",
    "ROLE_RANK",
    "ROLE_WORLD_SIZE",
    "MASTER_ADDR",
    "MASTER_PORT",
    "TORCHELASTIC_RUN_ID",
    "TORCHELASTIC_USE_AGENT_STORE",
    "TORCHELASTIC_RESTART_COUNT",
    "SLURM_PROCID",
    "SLURM_LOCALID",
    "OMPI_COMM_WORLD_RANK",
)


@dataclass
class CollRun:
    """Everything one sweep produced, on the rank that reports it."""

    launcher: str
    backend: str
    world_size: int
    rank: int
    spec: SweepSpec
    rows: list[Row] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    # Each: kind hang|crash|error, ranks (the ones that did not answer or failed), what, detail...
    problems: list[dict[str, Any]] = field(default_factory=list)
    duration_s: float = 0.0
    nodes: int = 1

    def to_measurements(self) -> list[Measurement]:
        src = f"probe:collectives:{self.launcher}"
        out = [
            Measurement("collectives.backend", self.backend, source=src),
            Measurement("collectives.world_size", self.world_size, source=src),
            Measurement("collectives.rank", self.rank, source=src),
            Measurement("collectives.launcher", self.launcher, source=src),
            Measurement("collectives.nodes", self.nodes, source=src),
            Measurement("collectives.size_convention", SIZE_CONVENTION, source="nccl-tests PERFORMANCE.md"),
            Measurement(
                "collectives.sweep",
                {
                    "ops": list(self.spec.ops),
                    "min_bytes": self.spec.min_bytes,
                    "max_bytes": self.spec.max_bytes,
                    "factor": self.spec.factor,
                    "iters": self.spec.iters,
                    "warmup": self.spec.warmup,
                    "op_timeout_s": self.spec.op_timeout_s,
                },
                source=src,
            ),
            Measurement("collectives.problems", list(self.problems), source=src),
        ]
        for key in ("device_name", "nccl_version", "torch"):
            if key in self.info:
                out.append(Measurement(f"collectives.{key}", self.info[key], source=src))
        if "host_memcpy_gbps" in self.info:
            out.append(
                Measurement(
                    "collectives.host_memcpy_gbps",
                    round(float(self.info["host_memcpy_gbps"]), 3),
                    unit="GB/s",
                    source="probe:torch.Tensor.copy_",
                )
            )
        for row in self.rows:
            out.append(
                Measurement(f"collectives.{row.op}.{row.bytes}", row.to_json(), source=f"probe:{row.op}")
            )
        for op in dict.fromkeys(r.op for r in self.rows):
            best, small = plateau(self.rows, op), latency(self.rows, op)
            if best is not None:
                out.append(
                    Measurement(
                        f"collectives.{op}.busbw_peak_gbps",
                        round(best.busbw_gbps, 6),
                        unit="GB/s",
                        source=f"probe:{op}",
                    )
                )
            if small is not None:
                out.append(
                    Measurement(
                        f"collectives.{op}.latency_us",
                        round(small.time_us, 3),
                        unit="us",
                        source=f"probe:{op}",
                    )
                )
        if self.rank != 0 and not self.rows:
            out.append(
                Measurement(
                    "collectives.rows",
                    Unavailable(Reason.NOT_REQUESTED, "results are gathered on rank 0"),
                    source=src,
                )
            )
        return out


def gpu_count() -> int:
    import torch

    return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0


def choose_backend(requested: str, gpus: int) -> str:
    """auto: NCCL where there are GPUs and a torch built with it, gloo otherwise."""
    if requested != "auto":
        return requested
    if gpus <= 0:
        return "gloo"
    import torch.distributed as dist

    return "nccl" if dist.is_nccl_available() else "gloo"


def launched(env: Mapping[str, str]) -> bool:
    """True inside torchrun/srun/an env:// launch with a world of its own."""
    info = parse_launch(env)
    return info.distributed and info.rank is not None and info.world_size is not None


def node_count(env: Mapping[str, str]) -> int:
    """Nodes of a launched world: Slurm's node list, else world size / local world size."""
    info = parse_launch(env)
    if info.nodes:
        return len(info.nodes)
    if info.world_size and info.local_world_size:
        return max(1, -(-info.world_size // info.local_world_size))
    return 1


def run_in_launcher(
    spec: SweepSpec, env: Mapping[str, str], progress: Optional[ProgressFn] = None
) -> CollRun:
    """This process is one rank of the launcher's world; rank 0 gets the gathered rows."""
    ident = ident_from_env(env)
    faults = parse_faults(env.get(FAULT_ENV, ""))
    start = time.monotonic()
    on_row = (lambda row, done, total: progress(done, total, f"{row.op} {row.bytes} B")) if progress else None
    outcome = run_rank(spec, ident, faults, on_row)
    run = CollRun(ident.launcher, spec.backend, ident.world_size, ident.rank, spec, nodes=node_count(env))
    _absorb(run, {ident.rank: outcome}, {})
    run.duration_s = time.monotonic() - start
    return run


def spawn_env(
    base: Mapping[str, str], spec: SweepSpec, rank: int, nproc: int, port: int, ready_dir: str = ""
) -> dict[str, str]:
    env = {k: v for k, v in base.items() if k not in _LAUNCHER_VARS}
    if ready_dir:
        env[READY_DIR_ENV] = ready_dir
    env.update(
        {
            "RANK": str(rank),
            "WORLD_SIZE": str(nproc),
            "LOCAL_RANK": str(rank),
            "LOCAL_WORLD_SIZE": str(nproc),
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(port),
            SPEC_ENV: spec.to_json(),
            SPAWNED_ENV: "1",
            "PYTHONUNBUFFERED": "1",
        }
    )
    # Local ranks talk over loopback only; a user's choice of interface still wins.
    env.setdefault("GLOO_SOCKET_IFNAME", "lo")
    # As torchrun does for several local ranks: one intra-op thread each, or N ranks x all cores
    # threads fight over the cores and the timings measure the scheduler.
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


class _RowLog:
    """Rank 0's progress file (`done total op bytes {row json}` a line), read incrementally by
    the parent's wait loop: the count of finished rows for the stall bound, each new row for the
    progress bar, and the rows themselves for the report of an interrupted sweep."""

    def __init__(self, path: str, progress: Optional[ProgressFn]):
        self.path, self.progress = path, progress
        self.rows: list[Row] = []
        self._offset = 0
        self._torn = b""  # a line rank 0 has not finished writing

    def poll(self) -> int:
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self._offset)
                data = fh.read()
        except OSError:
            return len(self.rows)
        self._offset += len(data)
        *lines, self._torn = (self._torn + data).split(b"\n")
        for raw in lines:
            parts = raw.decode("utf-8", "replace").split(maxsplit=4)
            if len(parts) < 5 or not (parts[0].isdigit() and parts[1].isdigit()):
                continue
            try:
                row = Row.from_json(json.loads(parts[4]))
            except (ValueError, KeyError, TypeError):
                continue
            self.rows.append(row)
            if self.progress:
                self.progress(int(parts[0]), int(parts[1]), f"{parts[2]} {parts[3]} B")
        return len(self.rows)


class _Readiness:
    """The start-up handshake, seen from the parent: which ranks have finished importing (a
    `ready.<rank>` file each), `go` once all have, and when to give up on the laggards.

    A rank gets IMPORT_ALLOWANCE_S from the start to become ready; once the first rank is ready,
    the others get twice as long again as it took (start-up skew on a loaded host) or the init
    timeout, whichever is longer, within that allowance. So a rank stuck in its imports is named
    a few seconds after its peers are ready, not after the rendezvous timeout plus the allowance."""

    def __init__(self, ready_dir: str, nproc: int, init_timeout_s: float):
        self.dir, self.nproc, self.init_timeout_s = ready_dir, nproc, init_timeout_s
        self.start = time.monotonic()
        self.ready: set[int] = set()
        self.first: Optional[float] = None
        self.went: Optional[float] = None  # when `go` was written (seconds since the start)

    def poll(self) -> bool:
        """True once every rank is ready (and `go` is written)."""
        if self.went is not None:
            return True
        for r in range(self.nproc):
            if r not in self.ready and os.path.exists(ready_file(self.dir, r)):
                self.ready.add(r)
        now = time.monotonic() - self.start
        if self.ready and self.first is None:
            self.first = now
        if len(self.ready) == self.nproc:
            with open(os.path.join(self.dir, GO_FILE), "w", encoding="utf-8"):
                pass
            self.went = now
            return True
        return False

    def late(self) -> bool:
        """True when the ranks not yet ready are past their bound."""
        if self.poll():
            return False
        now = time.monotonic() - self.start
        if self.first is not None and now > max(3 * self.first, self.first + self.init_timeout_s):
            return True
        return now > IMPORT_ALLOWANCE_S

    def missing(self) -> list[int]:
        return [] if self.went is not None else sorted(set(range(self.nproc)) - self.ready)


def backstop_s(spec: SweepSpec, world_size: int) -> float:
    """How long the parent lets ranks run in all before killing them: only reached when the
    ranks' own watch (op_timeout_s per stage) failed, so generous, but always finite."""
    stages = 2 * len(spec.steps(world_size)) + 2
    return IMPORT_ALLOWANCE_S + spec.init_timeout_s + stages * spec.op_timeout_s + 30.0


# Beyond the ranks' own stage timeouts: time for them to write their report and exit.
STALL_MARGIN_S = 5.0


def stall_s(spec: SweepSpec, first: bool = True) -> float:
    """How long the parent waits for the next finished row before it kills the ranks: the
    first row includes the init; a row is a warm-up and a timed stage, each under the ranks'
    own op_timeout_s. Stopped or wedged ranks (SIGSTOP, a stuck driver call that the ranks'
    watch cannot see) are killed after this, not after the whole sweep's backstop."""
    return (spec.init_timeout_s if first else 0.0) + 2 * spec.op_timeout_s + STALL_MARGIN_S


def run_spawned(
    spec: SweepSpec,
    nproc: int,
    env: Mapping[str, str],
    deadline_s: Optional[float] = None,
    progress: Optional[ProgressFn] = None,
) -> CollRun:
    """Start `nproc` local ranks, wait (bounded), merge what each said. The ranks first report
    ready (imports done, see _Readiness); the sweep's own clock starts at `go`."""
    from pgdoctor.probes.processes import WaitPolicy, remove_temp, run_children, temp_dir, with_free_port

    if nproc < 1:
        raise ValueError("--nproc must be at least 1")
    ready_dir = temp_dir("coll", tracked=True)
    start = time.monotonic()
    limit = backstop_s(spec, nproc)
    if deadline_s is not None:
        limit = min(limit, deadline_s)
    argv = [sys.executable, "-m", "pgdoctor.probes.collectives.worker"]
    log, ready = _RowLog("", progress), _Readiness(ready_dir, nproc, spec.init_timeout_s)
    spawned: list[int] = []  # the ports spawned on

    def spawn(port: int) -> list[ChildOutcome]:
        nonlocal log, ready
        # A second spawn (the port was taken) gets a handshake folder and row log of its own: it
        # reads nothing of the first's.
        d = ready_dir
        if spawned:
            d = os.path.join(ready_dir, f"again-{port}")
            os.mkdir(d)
        spawned.append(port)
        path = os.path.join(d, "progress")
        log, ready = _RowLog(path, progress), _Readiness(d, nproc, spec.init_timeout_s)
        # Rank 0 always writes its finished rows: the parent's stall bound counts them.
        spec_p = SweepSpec(**{**spec.__dict__, "progress_path": path})
        envs = [spawn_env(env, spec_p, r, nproc, port, d) for r in range(nproc)]
        left = limit - (time.monotonic() - start)

        def units() -> int:
            # Every rank ready is the first unit: from then on the stall bound includes the init.
            return (1 + log.poll()) if ready.poll() else 0

        # grace: once a rank has reported a hang (or died), the others get a moment to report too.
        return run_children(
            [argv] * nproc,
            envs,
            WaitPolicy(
                min(IMPORT_ALLOWANCE_S + 1.0, left),
                grace_s=3.0,
                progress=units,
                hard_timeout_s=left,
                unit_timeout_s=stall_s(spec),
                give_up=ready.late,
            ),
        )

    try:
        try:
            outcomes = with_free_port(spawn)
        except KeyboardInterrupt:
            # run_children killed the ranks; what rank 0 finished is in the progress file.
            log.poll()
            partial = CollRun("spawn", spec.backend, nproc, 0, spec, rows=log.rows)
            partial.duration_s = time.monotonic() - start
            raise SweepInterrupted(partial) from None
    finally:
        remove_temp(ready_dir)
    run = CollRun("spawn", spec.backend, nproc, 0, spec)
    results: dict[int, dict[str, Any]] = {}
    exits: dict[int, dict[str, Any]] = {}
    for o in outcomes:
        for line in o.stdout.splitlines():
            if line.startswith(RESULT_MARK):
                try:
                    results[o.index] = json.loads(line[len(RESULT_MARK) :])
                except json.JSONDecodeError:
                    pass
        exits[o.index] = {
            "returncode": o.returncode,
            "timed_out": o.timed_out,
            "stderr": _stderr_tail(o.stderr),
            "duration_s": round(o.duration_s, 3),
            "state": o.state_at_kill,
        }
    _absorb(run, results, exits, limit, ready.missing(), time.monotonic() - start)
    run.duration_s = time.monotonic() - start
    return run


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM during a spawned sweep; `run` holds the rows finished before it."""

    def __init__(self, run: CollRun):
        super().__init__()
        self.run = run


def _stderr_tail(text: str, lines: int = 6) -> str:
    """The last lines a rank wrote that are not C++ stack frames."""
    keep = [
        ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith(("frame #", "<omitting"))
    ]
    return "\n".join(keep[-lines:])


def _absorb(
    run: CollRun,
    results: Mapping[int, Mapping[str, Any]],
    exits: Mapping[int, Mapping[str, Any]],
    limit_s: Optional[float] = None,
    not_ready: Optional[list[int]] = None,
    waited_s: float = 0.0,
) -> None:
    """Merge per-rank outcomes: rows from rank 0, problems from everyone. `not_ready`: spawned
    ranks that never finished starting (the others were stopped waiting for them)."""
    if not_ready:
        dead = [r for r in not_ready if r in exits and not exits[r]["timed_out"]]
        if not dead:
            run.problems.append(
                {
                    "kind": "hang",
                    "phase": "start",
                    "what": "the rendezvous",
                    "ranks": not_ready,
                    "all_entered": False,
                    "waiting_ranks": sorted(set(range(run.world_size)) - set(not_ready)),
                    "timeout_s": round(waited_s, 1),
                    "note": "never reported ready: still starting up (importing torch) after its peers were "
                    "ready; they were stopped before the rendezvous",
                }
            )
            return
    for r in sorted(results):
        res = results[r]
        if res.get("rows") and not run.rows:
            run.rows = [Row.from_json(d) for d in res["rows"]]
        if res.get("info"):
            run.info.update(res["info"])
    hangs = [res for res in results.values() if res.get("status") == "hang"]
    if hangs:
        # The rank that got furthest waits for the others; the union of what every waiting rank
        # saw missing names the ones that never arrived.
        # A rank that could not read the store (it lives in rank 0, which may have reported and
        # exited a moment earlier) only guesses "rank 0"; reports that read every rank's stage
        # are evidence and outrank the guesses (the guess once named rank 0 beside the culprit).
        informed = [h for h in hangs if "stages" in h] or hangs
        top = max(informed, key=lambda h: h.get("stage", -1))
        at_top = [h for h in informed if h.get("stage") == top.get("stage")]
        named = sorted({m for h in at_top for m in h.get("missing_ranks", [])})
        entered = sorted(set(range(run.world_size)) - set(named))
        waiting = sorted({m for h in at_top for m in h.get("present_ranks", [])} - set(named))
        run.problems.append(
            {
                "kind": "hang",
                "phase": "init" if top.get("stage", -1) < 0 else "collective",
                "what": top.get("what", ""),
                "ranks": named or entered,
                "all_entered": not named,
                "waiting_ranks": waiting,
                "timeout_s": top.get("timeout_s"),
                "note": top.get("note", ""),
            }
        )
    for r, res in sorted(results.items()):
        if res.get("status") != "error":
            continue
        err = {"kind": "error", "ranks": [r], "what": res.get("what", ""), "detail": res.get("error", "")}
        if hangs:
            # A rank that reported the hang exits; its peers then fail with "connection closed":
            # a consequence, kept with the hang.
            run.problems[0].setdefault("consequences", []).append(err)
        else:
            run.problems.append(err)
    named_any = {m for p in run.problems for m in p["ranks"]}
    # What the surviving ranks were doing when a peer vanished: the dead rank's last stage.
    peers_what = next((str(res.get("what", "")) for res in results.values() if res.get("status") != "ok"), "")
    silent_killed = [r for r, e in sorted(exits.items()) if e["timed_out"] and r not in results]
    dead = [
        r for r, e in sorted(exits.items()) if r not in results and not e["timed_out"] and r not in named_any
    ]
    # Ranks stopped by pgdoctor before the deadline were stopped because a peer died (the grace
    # after a failure): they waited for the dead rank, a consequence of it, not a hang of their own.
    after_death = [
        r for r in silent_killed if dead and (limit_s is None or exits[r]["duration_s"] < limit_s - 0.5)
    ]
    at_deadline = [r for r in silent_killed if r not in after_death]
    if at_deadline and not hangs:
        ran = max(float(exits[r]["duration_s"]) for r in at_deadline)
        # A rank the kernel held stopped (SIGSTOP, job control, a debugger) is the cause; the
        # others waited for it, and could not report because the store lives in a rank too.
        frozen = [r for r in at_deadline if exits[r].get("state") in ("T", "t")]
        run.problems.append(
            {
                "kind": "hang",
                "phase": "unknown",
                "what": "no report from these ranks",
                "ranks": frozen or at_deadline,
                "all_entered": False,
                "waiting_ranks": [r for r in at_deadline if r not in frozen] if frozen else [],
                "timeout_s": round(ran, 1),
                "note": (
                    "stopped by the kernel (state T: SIGSTOP, job control or a debugger)"
                    if frozen
                    else "killed by pgdoctor at its deadline without a report"
                ),
            }
        )
    for r in dead:
        e = exits[r]
        code = e["returncode"]
        crash: dict[str, Any] = {
            "kind": "crash",
            "ranks": [r],
            "what": peers_what,
            "exit": f"status {code} (fault injection)" if code == EXIT_FAULT else describe_exit(code),
            "detail": e["stderr"],
            "returncode": code,
        }
        if after_death:
            crash["waiting_ranks"] = after_death
        run.problems.append(crash)
    if not results and not exits:
        run.problems.append({"kind": "error", "ranks": [], "what": "no rank ran", "detail": ""})


def run_collectives(
    spec: SweepSpec,
    env: Mapping[str, str],
    nproc: Optional[int],
    deadline_s: Optional[float] = None,
    progress: Optional[ProgressFn] = None,
) -> CollRun:
    """--nproc spawns local ranks (even inside a launcher); otherwise a launcher must be present."""
    if nproc is None:
        if not launched(env):
            raise ValueError("no launcher (torchrun/srun) detected and no --nproc given")
        return run_in_launcher(spec, env, progress)
    return run_spawned(spec, nproc, env, deadline_s, progress)
