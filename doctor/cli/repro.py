"""`pgdoctor repro FAULT --parallel ddp|pp|tp`: run a small real distributed job that fails
(oom, timeout) or degrades (imbalance) in exactly that way, trace it, and diagnose it."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import sys
from typing import Any, Optional

import click

from pgdoctor.cli import FiniteFloat, require_torch_importable
from pgdoctor.cli.output import checked_dir, output_options
from pgdoctor.engine.errors import UserError
from pgdoctor.lab import FAULTS, STRATEGIES
from pgdoctor.model import Report, ReportExtra, Severity, exit_code
from pgdoctor.render import FORMATS

NSYS_TRACES = "cuda,nvtx,osrt"


def nsys_command(argv: list[str], output: str) -> list[str]:
    """The Nsight Systems command that captures this repro's NVTX ranges in every rank.

    CPU sampling and context-switch tracing are off: under Nsight Systems 2022.4 in a container
    or VM, with either on, the agent often kept spinning after a multi-process job ended and wrote
    no report (measured: 15 minutes; a 2-rank run without them takes 12-35 s), and the ranges do
    not need them."""
    return [
        "nsys",
        "profile",
        "-t",
        NSYS_TRACES,
        "--sample=none",
        "--cpuctxsw=none",
        "--trace-fork-before-exec=true",
        "-o",
        output,
        "--force-overwrite=true",
        *argv,
    ]


# Device nodes of a GPU torch can use: NVIDIA's driver (nvidia*, Jetson's nvhost*), WSL2's
# paravirtual GPU (dxg), AMD's ROCm (kfd). Without any of them torch.cuda.is_available() is False.
GPU_DEVICE_NODES = ("nvidia", "nvhost", "dxg", "kfd")


def _gpu_nodes(dev_dir: str = "/dev") -> bool:
    try:
        return any(name.startswith(GPU_DEVICE_NODES) for name in os.listdir(dev_dir))
    except OSError:
        return True  # cannot tell: ask torch


def _device(choice: str) -> str:
    """The device the ranks use. Importing torch here only to learn that a machine without a GPU
    has none cost every CPU repro ~1.5 CPU-seconds (the ranks import it anyway)."""
    import importlib.util

    require_torch_importable()
    if importlib.util.find_spec("torch") is None:
        raise UserError("pgdoctor repro needs torch (pip install 'pgdoctor[torch]')")
    if choice == "cpu" or (choice == "auto" and not _gpu_nodes()):
        return "cpu"
    try:
        import torch
    except ImportError:
        raise UserError("pgdoctor repro needs torch (pip install 'pgdoctor[torch]')") from None
    if choice == "cuda" and not torch.cuda.is_available():
        raise UserError("--device cuda: torch sees no CUDA device here")
    if choice != "auto":
        return choice
    return "cuda" if torch.cuda.is_available() else "cpu"


def _progress(msg: str) -> None:
    click.echo(f"pgdoctor: {msg}", err=True)


def _rank_rows(run: Any) -> list[dict[str, Any]]:
    rows = []
    for o, res in zip(run.outcomes, run.results):
        row = {
            "rank": o.index,
            "returncode": o.returncode,
            "killed": o.timed_out,
            "duration_s": round(o.duration_s, 3),
            "status": res.get("status", "no report"),
        }
        for k in (
            "phase",
            "ranges",
            "error_type",
            "step",
            "batch",
            "memory",
            "cap",
            "setup",
            "backend",
            "fr_dump",
        ):
            if res.get(k) not in (None, "", [], {}):
                row[k] = res[k]
        rows.append(row)
    return rows


@click.command()
@click.argument("fault", type=click.Choice(FAULTS))
@click.option(
    "--parallel",
    "strategy",
    type=click.Choice(STRATEGIES),
    default="ddp",
    show_default=True,
    help="ddp: DistributedDataParallel; pp: pipeline stages; tp: Megatron-style tensor parallel.",
)
@click.option("--nproc", type=click.IntRange(2, 16), default=2, show_default=True, help="Ranks on this host.")
@click.option(
    "--factor",
    type=FiniteFloat(min=1.0),
    default=2.0,
    show_default=True,
    help="imbalance: work of the slow rank/stage/shard against the others.",
)
@click.option(
    "--rank",
    "faulty_rank",
    type=click.IntRange(min=0),
    default=None,
    help="The rank that misbehaves (default: the last).",
)
@click.option(
    "--schedule",
    type=click.Choice(["1f1b", "gpipe"]),
    default="1f1b",
    show_default=True,
    help="pp: micro-batch schedule.",
)
@click.option(
    "--microbatches",
    type=click.IntRange(1, 64),
    default=4,
    show_default=True,
    help="pp: micro-batches per step.",
)
@click.option(
    "--steps", type=click.IntRange(min=0), default=0, help="Training steps (0: the fault's default)."
)
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True)
@click.option(
    "--timeout",
    "timeout_s",
    type=FiniteFloat(min=5.0),
    default=60.0,
    show_default=True,
    help="Bound on the whole run, in seconds.",
)
@click.option(
    "--pg-timeout",
    "pg_timeout_s",
    type=FiniteFloat(min=1.0, max=600.0),
    default=5.0,
    show_default=True,
    help="Process-group timeout of the ranks (the timeout fault fires after it).",
)
@click.option(
    "--trace-dir",
    type=click.Path(file_okay=False),
    callback=checked_dir,
    default=None,
    help="Keep per-rank event files and the merged trace.json (Perfetto) here, and, without --keep, "
    "everything else the run leaves too.",
)
@click.option(
    "--keep",
    "keep_dir",
    type=click.Path(file_okay=False),
    callback=checked_dir,
    default=None,
    help="Keep everything the run leaves in DIR (rank logs, flight-recorder dumps, results) and cite it "
    "there: `pgdoctor diagnose DIR` reads it again. Without --keep or --trace-dir the run's files are "
    "removed and nothing cites them by path.",
)
@click.option(
    "--nsys",
    is_flag=True,
    help="Print the Nsight Systems command for this run (run it when nsys is on PATH).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
@click.option("--format", "fmt", type=click.Choice(sorted(FORMATS)), default=None, help="Output format.")
@output_options()
def repro(
    fault: str,
    strategy: str,
    nproc: int,
    factor: float,
    faulty_rank: Optional[int],
    schedule: str,
    microbatches: int,
    steps: int,
    device: str,
    timeout_s: float,
    pg_timeout_s: float,
    trace_dir: Optional[str],
    keep_dir: Optional[str],
    nsys: bool,
    as_json: bool,
    fmt: Optional[str],
    output: Optional[str],
) -> None:
    """Reproduce FAULT (oom, timeout, imbalance) in a small instrumented run and diagnose it.

    Exit 1 when the injected fault was found (the expected outcome), 3 when the run did not
    show it or could not be diagnosed.
    """
    if faulty_rank is not None and faulty_rank >= nproc:
        raise UserError(f"--rank {faulty_rank} is not a rank of --nproc {nproc}")
    if nsys:
        _nsys(fault, strategy, nproc, trace_dir)
        return
    from pgdoctor.cli.check import write_report
    from pgdoctor.lab.spec import LabSpec

    dev = _device(device)
    keep = keep_dir or trace_dir
    if keep:
        run_dir = _kept_dir(keep)
    else:
        from pgdoctor.probes.processes import temp_dir

        run_dir = temp_dir("repro")  # owner-locked: removed by the next start if this one is SIGKILLed
    try:
        tdir = os.path.abspath(trace_dir) if trace_dir else os.path.join(run_dir, "trace")
        try:
            spec = LabSpec(
                fault=fault,
                strategy=strategy,
                nproc=nproc,
                run_dir=run_dir,
                trace_dir=tdir,
                factor=factor,
                faulty_rank=-1 if faulty_rank is None else faulty_rank,
                steps=steps,
                device=dev,
                schedule=schedule,
                microbatches=microbatches,
                pg_timeout_s=pg_timeout_s,
                keep=bool(keep),
            )
        except ValueError as exc:
            raise UserError(str(exc)) from None
        fmt = "json" if as_json else (fmt or "console")
        # The HTML report draws the per-rank timeline; other formats point at trace.json instead.
        report = run_and_diagnose(spec, timeout_s, keep_trace=bool(keep), with_events=fmt == "html")
        if not keep:
            report = _uncited(report, run_dir)
        from pgdoctor.diagnose.render import render as console_render

        # The same root cause / cascade layout as `pgdoctor diagnose`.
        write_report(report, fmt, output, console_render if fmt == "console" else None)
        if fmt == "console" and not output:
            for reason in report.incomplete_reasons:
                click.echo(f"incomplete: {reason}")
            _print_ranks(report)
            if trace_dir:
                click.echo(f"trace: {os.path.join(tdir, 'trace.json')} (open in ui.perfetto.dev)")
            if keep:
                click.echo(
                    f"kept: {run_dir} (rank logs, flight-recorder dumps, results; pgdoctor diagnose "
                    f"{run_dir})"
                )
            else:
                click.echo("the run's files were removed; --keep DIR keeps them for pgdoctor diagnose DIR")
    finally:
        if not keep:
            from pgdoctor.probes.processes import remove_temp

            remove_temp(run_dir)  # and drop its owner lock
        else:
            from pgdoctor.lab.worker import DUMP_REQUEST

            with contextlib.suppress(OSError):  # the ranks' signal to dump, not a result
                os.remove(os.path.join(run_dir, DUMP_REQUEST))
    raise click.exceptions.Exit(exit_code(report))


# What an earlier run left in a kept directory that this run would read as its own.
_EARLIER = re.compile(r"rank\d+\.(?:stderr|stdout|json)$")


def _kept_dir(path: str) -> str:
    """The directory a kept run writes into, with what an earlier run of pgdoctor left there
    removed (its rank logs, results and flight-recorder dumps would be diagnosed as this run's);
    nothing else in it is touched."""
    from pgdoctor.lab.worker import fr_dir

    run_dir = os.path.abspath(path)
    try:
        os.makedirs(run_dir, exist_ok=True)
        for name in os.listdir(run_dir):
            if _EARLIER.match(name):
                os.remove(os.path.join(run_dir, name))
        shutil.rmtree(fr_dir(run_dir), ignore_errors=True)
    except OSError as exc:
        raise UserError(f"cannot keep the run in {path}: {exc.strerror or exc}") from None
    return run_dir


def _uncited(report: Report, run_dir: str) -> Report:
    """A report whose run directory is about to be removed: evidence in it is cited by its name
    inside the run (fr/nccl_trace_rank_0), never by a path that will not exist."""
    import dataclasses

    prefix = run_dir.rstrip(os.sep) + os.sep

    def rel(path: str) -> str:
        return path[len(prefix) :] if path.startswith(prefix) else path

    findings = tuple(
        dataclasses.replace(
            f,
            evidence=tuple(
                dataclasses.replace(e, file=rel(e.file), text=e.text.replace(prefix, "")) for e in f.evidence
            ),
            message=f.message.replace(prefix, ""),
            facts={k: (v.replace(prefix, "") if isinstance(v, str) else v) for k, v in f.facts.items()},
        )
        for f in report.findings
    )
    meta = {k: v for k, v in report.meta.items()}
    meta["run_files"] = "removed (--keep DIR keeps them)"
    return dataclasses.replace(report, findings=findings, meta=meta)


def _print_ranks(report: Report) -> None:
    """One line per rank under the findings: how it ended and where it was."""
    click.echo("\nranks:")
    for row in report.extra.get("ranks", []):
        where = " > ".join(row.get("ranges", [])) or "-"
        how = row["status"] + (" (killed by pgdoctor)" if row.get("killed") else "")
        err = f" {row['error_type']}" if row.get("error_type") else ""
        click.echo(f"  rank {row['rank']}: {how}{err}; open ranges: {where}")


def run_and_diagnose(
    spec: Any, timeout_s: float, keep_trace: bool = False, with_events: bool = False
) -> Report:
    """Launch the ranks, merge their traces, diagnose; the Report of a repro."""
    from pgdoctor.lab.diagnosis import EXPECTED_CATEGORIES, DiagnoserUnavailable, diagnose_run
    from pgdoctor.lab.launch import launch
    from pgdoctor.trace import events as trace

    _progress(
        f"{spec.fault} x {spec.strategy} on {spec.nproc} ranks ({spec.device}), "
        f"rank {spec.bad_rank} misbehaves; at most {timeout_s:.0f} s"
    )
    run = launch(spec, timeout_s)
    by_rank = trace.events_by_rank(spec.trace_dir) if os.path.isdir(spec.trace_dir) else {}
    trace_path = ""
    if by_rank and keep_trace:
        trace_path = os.path.join(spec.trace_dir, "trace.json")
        trace.merge(spec.trace_dir, trace_path)
    incomplete: list[str] = []
    try:
        findings = diagnose_run(run, by_rank)
    except DiagnoserUnavailable as exc:
        findings = []
        incomplete.append(str(exc))
    expected = EXPECTED_CATEGORIES[(spec.fault, "cuda" if spec.device == "cuda" else "cpu")]
    if not incomplete and not any(f.category == expected for f in findings):
        incomplete.append(f"the injected {spec.fault} did not show as a {expected} finding")
    if any(o.timed_out for o in run.outcomes) and run.wall_s >= timeout_s - 0.5:
        incomplete.append(f"the run reached --timeout {timeout_s:.0f} s")
    return Report(
        command="repro",
        snapshot=None,
        findings=tuple(findings),  # root cause first, as diagnose_run orders them
        incomplete_reasons=tuple(incomplete),
        meta={
            "host": os.uname().nodename,
            "fault": spec.fault,
            "strategy": spec.strategy,
            "nproc": spec.nproc,
            "device": spec.device,
            "faulty_rank": spec.bad_rank,
            "factor": spec.factor,
            "wall_s": round(run.wall_s, 3),
            "expected_category": expected,
            "trace": trace_path,
            "sources": [{"name": n, "lines": t.count("\n")} for n, t in run.sources()],
        },
        fail_on=Severity.WARN,  # the injected fault's finding is the expected outcome: exit 1
        extra=ReportExtra(
            ranks=_rank_rows(run),
            **(
                {"trace_events": trace.merge_events(by_rank)["traceEvents"]}
                if with_events and by_rank
                else {}
            ),
        ),
    )


def _nsys(fault: str, strategy: str, nproc: int, trace_dir: Optional[str]) -> None:
    args = [a for a in sys.argv[1:] if a != "--nsys"]
    if not args or args[0] != "repro":
        args = ["repro", fault, "--parallel", strategy, "--nproc", str(nproc)]
    out = os.path.join(trace_dir or ".", f"pgdoctor-repro-{fault}-{strategy}")
    cmd = nsys_command(["pgdoctor", *args], out)
    if shutil.which("nsys") is None:
        click.echo(shlex.join(cmd))
        click.echo(
            "pgdoctor: nsys is not on PATH; run the command above where Nsight Systems is installed", err=True
        )
        return
    from pgdoctor.probes.processes import run_children

    _progress("running " + shlex.join(cmd))
    (res,) = run_children([cmd], [dict(os.environ)], 600.0)
    sys.stdout.write(res.stdout)
    sys.stderr.write(res.stderr)
    raise click.exceptions.Exit(res.returncode if res.returncode is not None else 3)
