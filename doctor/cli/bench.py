"""`pgdoctor bench collectives`: the collective sweep on its own, nccl-tests style, judged by
the same checks as `pgdoctor check`; `pgdoctor bench scaling ENTRY`: the user's model at each
world size against one process (the work is in pgdoctor.verify.scaling)."""

from __future__ import annotations

import os
import socket
import sys
import time
from typing import Any, Optional

import click

from pgdoctor.cli import FiniteFloat, NamedPath, require_torch_importable
from pgdoctor.cli.output import output_options
from pgdoctor.engine.errors import EXIT_INTERRUPTED, UserError
from pgdoctor.knowledge.ranks import MAX_LOCAL_RANKS

# Inside a launcher the ranks may start minutes apart. Spawned ranks report ready once they have
# imported torch, and their init clock starts when all are (probes/collectives/worker.py): their
# init bound is --timeout itself, after an import allowance of IMPORT_ALLOWANCE_S at most.
LAUNCHER_INIT_S = 60.0


@click.group()
def bench() -> None:
    """Measurements on their own: tables, plots and every number in --json."""


def _bytes(ctx: click.Context, param: click.Parameter, value: Optional[str]) -> Optional[int]:
    if value is None:
        return None
    from pgdoctor.knowledge.units import parse_binary_bytes as parse_bytes

    try:
        return parse_bytes(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


class _Bar:
    """A progress bar on stderr while the sweep runs (only on a terminal)."""

    def __init__(self) -> None:
        self.progress: Any = None
        self.task: Any = None
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self.progress = Progress(
                TextColumn("collectives"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.description}"),
                console=Console(file=sys.stderr),
                transient=True,
            )

    def __enter__(self) -> _Bar:
        if self.progress is not None:
            self.progress.start()
            self.task = self.progress.add_task("starting ranks", total=None)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()

    def update(self, done: int, total: int, what: str) -> None:
        if self.progress is not None:
            self.progress.update(self.task, completed=done, total=total, description=what)


@bench.command("collectives")
@click.option(
    "--ops",
    default=None,
    metavar="OP,...",
    help="all_reduce, all_gather, reduce_scatter, broadcast, all_to_all, send_recv, reduce, or all.",
)
@click.option(
    "--min-bytes", callback=_bytes, default="8", show_default=True, help="Smallest size (8, 64K, 1M...)."
)
@click.option(
    "--max-bytes", callback=_bytes, default=None, help="Largest size [default: 256M on GPU, 64M on CPU]."
)
@click.option(
    "--iters", type=click.IntRange(min=1), default=20, show_default=True, help="Timed iterations per size."
)
@click.option(
    "--warmup", type=click.IntRange(min=0), default=5, show_default=True, help="Untimed iterations per size."
)
@click.option(
    "--nproc",
    type=click.IntRange(min=1, max=MAX_LOCAL_RANKS),
    default=None,
    help="Spawn N local ranks [default: one per GPU; required without GPUs or a launcher].",
)
@click.option("--backend", type=click.Choice(["auto", "nccl", "gloo"]), default="auto", show_default=True)
@click.option(
    "--timeout",
    "timeout_s",
    type=FiniteFloat(min=0.5),
    default=30.0,
    show_default=True,
    help="A stage (init, one op at one size) longer than this is a hang naming the missing ranks.",
)
@click.option(
    "--init-timeout",
    "init_timeout_s",
    type=FiniteFloat(min=0.5),
    default=None,
    help="Bound on the process-group init [default: --timeout; at least 60 s inside a launcher, "
    "whose ranks may start minutes apart]. --nproc ranks first get up to 15 s to import torch "
    "and report ready; this bound starts when all have.",
)
@click.option(
    "--config",
    "config_path",
    type=NamedPath(dir_okay=False),
    default=None,
    help="TOML file of thresholds and expectations.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
@click.option("--fail-on", type=click.Choice(["warn", "fail"]), default="fail", show_default=True)
def collectives(
    ops: Optional[str],
    min_bytes: int,
    max_bytes: Optional[int],
    iters: int,
    warmup: int,
    nproc: Optional[int],
    backend: str,
    timeout_s: float,
    init_timeout_s: Optional[float],
    config_path: Optional[str],
    as_json: bool,
    fail_on: str,
) -> None:
    """Bandwidth, latency and correctness of collectives through this torch.distributed.

    \b
    Inside torchrun/srun every rank runs it and rank 0 reports; otherwise
    --nproc N spawns N local ranks. Sizes and busbw follow nccl-tests.
    """
    from pgdoctor.engine.config import ConfigError, load_config
    from pgdoctor.knowledge.collectives import DEFAULT_OPS, SweepSpec, parse_ops
    from pgdoctor.probes.collectives.launch import choose_backend, gpu_count, launched, run_collectives

    env = dict(os.environ)
    try:
        config = load_config(config_path)
        op_list = parse_ops(ops) if ops else DEFAULT_OPS
    except (ConfigError, ValueError) as exc:
        raise UserError(str(exc)) from None
    in_launcher = nproc is None and launched(env)
    require_torch_importable()
    try:
        gpus = gpu_count()
    except ImportError as exc:
        raise UserError(f"torch is not importable: {exc}") from None
    if nproc is None and not in_launcher:
        if gpus == 0:
            raise UserError(
                "no GPU visible and no torchrun/srun launch: pass --nproc N to run N local gloo ranks"
            )
        nproc = gpus
    chosen = choose_backend(backend, gpus)
    if chosen == "nccl" and gpus == 0:
        raise UserError("--backend nccl needs a visible GPU")
    top = max_bytes if max_bytes is not None else ((256 << 20) if chosen == "nccl" else (64 << 20))
    try:
        spec = SweepSpec(
            ops=op_list,
            min_bytes=min_bytes,
            max_bytes=top,
            iters=iters,
            warmup=warmup,
            backend=chosen,
            op_timeout_s=timeout_s,
            init_timeout_s=init_timeout_s or (max(timeout_s, LAUNCHER_INIT_S) if in_launcher else timeout_s),
        )
    except ValueError as exc:
        raise UserError(str(exc)) from None
    from pgdoctor.model import Severity, exit_code
    from pgdoctor.probes.collectives.launch import SweepInterrupted

    start = time.time()
    interrupted = False
    with _Bar() as bar:
        try:
            run = run_collectives(spec, env, nproc, progress=bar.update)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        except SweepInterrupted as stop:
            run, interrupted = stop.run, True
    why = (
        f"interrupted after {len(run.rows)} of {len(spec.steps(run.world_size))} sizes" if interrupted else ""
    )
    report = _report(run, env, config, start, chosen == "nccl", Severity(fail_on), why)
    if interrupted:
        import dataclasses

        report = dataclasses.replace(report, incomplete_reasons=(*report.incomplete_reasons, why))
    _emit(run, report, as_json)
    if interrupted:
        # What finished is printed above; the exit says the sweep did not (130, like any Ctrl-C).
        click.echo(
            f"pgdoctor: interrupted after {len(run.rows)} of {len(spec.steps(run.world_size))} sizes",
            err=True,
        )
        raise click.exceptions.Exit(EXIT_INTERRUPTED)
    code = exit_code(report)
    if run.launcher != "spawn" and any(p["kind"] == "hang" for p in run.problems):
        # This process is a rank whose sweep thread is still stuck in a collective with a peer
        # that never came; tearing the process group down at exit would wait for that peer.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    raise click.exceptions.Exit(code)


def _report(
    run: Any, env: dict[str, str], config: Any, start: float, gpu: bool, fail_on: Any, interrupted: str = ""
) -> Any:
    from pgdoctor.engine.runner import Selection, build_report, collect
    from pgdoctor.model import ProbeResult, Snapshot, Status

    # An interrupted sweep did not measure the area: its probe says so (the area is [-], not [ok]).
    probes = [
        ProbeResult(
            "collectives",
            "collectives",
            Status.UNAVAILABLE if interrupted else Status.PASSED,
            interrupted,
            run.duration_s,
            tuple(run.to_measurements()),
        )
    ]
    if gpu:
        # The expectation rests on NVLink/PCIe/NIC facts: the quick GPU and network probes give them.
        from pgdoctor.probes.base import ProbeContext

        facts = collect(ProbeContext(env=env, level="quick"), Selection(only=("gpu", "net")), timeout_s=20.0)
        probes.extend(p for p in facts.probes if p.name in ("gpu", "ib"))
    from pgdoctor import __version__

    snap = Snapshot(
        host=socket.gethostname(),
        time_unix=start,
        pgdoctor_version=__version__,
        level="bench",
        probes=tuple(probes),
    )
    return build_report(
        "bench collectives",
        snap,
        config,
        Selection(only=("collectives",)),
        meta={
            "launcher": run.launcher,
            "backend": run.backend,
            "world_size": run.world_size,
            "rank": run.rank,
            "duration_s": round(run.duration_s, 3),
            "fail_on": fail_on.value,
        },
    )


def _emit(run: Any, report: Any, as_json: bool) -> None:
    from pgdoctor.cli import emit_json
    from pgdoctor.render.collectives import render
    from pgdoctor.render.console import render as render_report

    if run.rank != 0:
        # Under a launcher every rank runs this; rank 0 holds the gathered results and reports
        # (also when it is the rank that hung: its own watch names it), so stdout stays one report.
        seen = "; ".join(f"{f.code} {f.message}" for f in report.findings) or "no findings"
        click.echo(f"pgdoctor: rank {run.rank}: {seen} (results are reported by rank 0)", err=True)
        return
    if as_json:
        emit_json(report.to_json())
        return
    color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    info = run.info
    where = ", ".join(
        str(x)
        for x in (
            info.get("device_name"),
            f"torch {info['torch']}" if "torch" in info else None,
            f"NCCL {info['nccl_version']}" if "nccl_version" in info else None,
        )
        if x
    )
    header = (
        f"pgdoctor bench collectives: {run.world_size} rank(s), {run.backend}, {run.launcher}"
        f"{' (' + where + ')' if where else ''}; iters {run.spec.iters}, warmup {run.spec.warmup}; "
        f"{run.duration_s:.1f} s"
    )
    planned: dict[str, int] = {}
    for op, _ in run.spec.steps(run.world_size):
        planned[op] = planned.get(op, 0) + 1
    render(run.rows, header, sys.stdout, color, planned)
    click.echo()
    # The tables and plot above are the full view of the sweep; the report's own plot under the
    # collectives area (what `pgdoctor check` shows instead of tables) would repeat it.
    render_report(report, sys.stdout, color, details=False)


def _sizes(ctx: click.Context, param: click.Parameter, value: str) -> list[int]:
    try:
        sizes = sorted({int(v) for v in value.split(",") if v.strip()})
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a comma-separated list of rank counts (1,2,4)") from None
    if not sizes or sizes[0] < 1 or sizes[-1] > 64:
        raise click.BadParameter("rank counts must be between 1 and 64")
    return sizes


@bench.command("scaling")
@click.argument("entry")
@click.option(
    "--nproc",
    "nprocs",
    callback=_sizes,
    default="1,2",
    show_default=True,
    metavar="N,...",
    help="World sizes to measure (1, the baseline, is always measured).",
)
@click.option(
    "--steps", type=click.IntRange(1, 1000), default=5, show_default=True, help="Timed steps per size."
)
@click.option("--backend", type=click.Choice(["gloo", "nccl"]), default="gloo", show_default=True)
@click.option(
    "--strong",
    is_flag=True,
    help="Keep the global batch (rank r trains data(r, N, step)); default: weak scaling.",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(min=5.0),
    default=180.0,
    show_default=True,
    help="Bound on each size's run in seconds.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["console", "json", "html"]),
    default="console",
    show_default=True,
    help="html: the report with the speedup plot (SVG).",
)
@output_options()
def scaling(
    entry: str,
    nprocs: list[int],
    steps: int,
    backend: str,
    strong: bool,
    timeout_s: float,
    as_json: bool,
    fmt: str,
    output: Optional[str],
) -> None:
    """Speedup and efficiency of ENTRY at each world size against one process, where the time
    goes (compute, communication, exposed), and the planner's prediction beside it."""
    from pgdoctor.model import Report, exit_code, sorted_findings
    from pgdoctor.verify.entry import EntryError, check
    from pgdoctor.verify.scaling import findings, prediction_note, run_scaling, table

    try:
        entry = check(entry)
        rows, grad_bytes = run_scaling(
            entry,
            nprocs,
            steps,
            backend,
            strong,
            timeout_s,
            progress=lambda m: click.echo(f"pgdoctor: {m}", err=True),
        )
    except EntryError as exc:
        raise UserError(exc.text()) from None
    except RuntimeError as exc:
        raise UserError(str(exc)) from None
    found = findings(rows)
    report = Report(
        command="bench scaling",
        snapshot=None,
        findings=tuple(sorted_findings(found)),
        meta={
            "host": socket.gethostname(),
            "entry": entry,
            "backend": backend,
            "mode": "strong" if strong else "weak",
            "steps": steps,
        },
        extra={
            "scaling": {
                "rows": [r.to_json() for r in rows],
                "grad_bytes": grad_bytes,
                "mode": "strong" if strong else "weak",
            }
        },
    )
    fmt = "json" if as_json else fmt
    if fmt == "json" and not output:
        from pgdoctor.cli import emit_json

        emit_json(report.to_json())
    elif fmt != "console" or output:
        from pgdoctor.cli.check import write_report

        write_report(report, fmt, output)
    else:
        from pgdoctor.render.console import render as render_report

        click.echo(
            f"pgdoctor bench scaling {entry}: {'strong' if strong else 'weak'} scaling, {backend}, "
            f"gradients {grad_bytes / 2**20:.2f} MiB; times in ms (medians; a step is the slowest rank's)"
        )
        click.echo(table(rows))
        for line in prediction_note(rows):
            click.echo(line)
        if found:
            click.echo()
            render_report(
                report, sys.stdout, sys.stdout.isatty() and "NO_COLOR" not in os.environ, details=False
            )
        else:
            click.echo(report.verdict.summary())
    raise click.exceptions.Exit(exit_code(report))
