"""`pgdoctor verify ENTRY`: is the distributed run the same training as one process?"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from pgdoctor.engine.errors import UserError

STRATEGY_CHOICES = ("ddp", "fsdp", "pp", "tp")


def progress(msg: str) -> None:
    click.echo(f"pgdoctor: {msg}", err=True)


def verify_report(result: Any, entry: str) -> Any:
    from pgdoctor.model import Report, sorted_findings

    return Report(
        command="verify",
        snapshot=None,
        findings=tuple(sorted_findings(result.findings)),
        meta={
            "host": os.uname().nodename,
            "entry": entry,
            "strategy": result.strategy,
            "wall_s": round(result.wall_s, 3),
        },
        extra={"verify": result.to_json()},
    )


def _summary(result: Any) -> str:
    v = result.to_json()
    head = "equivalent" if v["equivalent"] else "NOT equivalent"
    line = (
        f"{head}: {v['strategy']} on {v['world_size']} ranks against one process, {v['steps']} steps; "
        f"max abs diff {v['max_abs_diff']:.3g}, max rel diff {v['max_rel_diff']:.3g}"
    )
    if v["first_divergent"] and v["first_divergent"]["param"]:
        line += f"; first divergent {v['first_divergent']['param']} at step {v['first_divergent']['step']}"
    if v["cause"]:
        line += f"; cause: {v['cause']}"
    return line + f"\ntolerance: {v['tolerance']}"


@click.command()
@click.argument("entry")
@click.option("--nproc", type=click.IntRange(1, 64), default=2, show_default=True, help="Ranks on this host.")
@click.option(
    "--steps", type=click.IntRange(1, 1000), default=3, show_default=True, help="Optimizer steps compared."
)
@click.option(
    "--strategy",
    type=click.Choice(STRATEGY_CHOICES),
    default="ddp",
    show_default=True,
    help="ddp, fsdp (fully_shard), pp (one stage per rank), tp (column/row-parallel linear layers).",
)
@click.option("--backend", type=click.Choice(["gloo", "nccl"]), default="gloo", show_default=True)
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(min=5.0),
    default=120.0,
    show_default=True,
    help="Bound on each run in seconds; every process is killed by then.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
def verify(
    entry: str, nproc: int, steps: int, strategy: str, backend: str, timeout_s: float, as_json: bool
) -> None:
    """Check that N ranks train ENTRY exactly as one process does, and name the bug if not.

    \b
    ENTRY is path/to/file.py:NAME or package.module:NAME; NAME() returns
    {"model", "loss", "data", optional "optimizer", "stages", "tp"}.
    Exit 0 equivalent, 1 not (a VER finding names the cause), 2 the entry is
    unusable or raised (its traceback is shown).
    """
    import pgdoctor.verify as api
    from pgdoctor.verify.entry import EntryError, check

    if backend == "nccl" and strategy in ("pp", "tp"):
        raise UserError("--backend nccl runs --strategy ddp and fsdp; pp and tp are checked over gloo")
    if strategy == "pp" and nproc < 2:
        raise UserError("--strategy pp needs --nproc 2 or more (one stage per rank)")
    try:  # a bad spec is the one line of a usage error, before the progress line
        check(entry)
    except EntryError as exc:
        raise UserError(exc.text()) from None
    progress(
        f"verify {entry}: {strategy} on {nproc} rank(s) ({backend}) against one process, {steps} step(s)"
    )
    try:
        result = api.verify(
            entry, nproc=nproc, steps=steps, strategy=strategy, backend=backend, timeout_s=timeout_s
        )
    except EntryError as exc:
        raise UserError(exc.text()) from None
    report = verify_report(result, entry)
    from pgdoctor.model import exit_code

    if as_json:
        from pgdoctor.cli import emit_json

        emit_json(report.to_json())
    else:
        from pgdoctor.render.console import render

        click.echo(_summary(result))
        if result.findings:
            click.echo()
            render(report, sys.stdout, sys.stdout.isatty() and "NO_COLOR" not in os.environ, details=False)
        else:
            click.echo(report.verdict.summary())
    raise click.exceptions.Exit(exit_code(report))
