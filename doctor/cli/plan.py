"""`pgdoctor plan`: memory and communication per GPU for every dp x tp x pp x ZeRO layout."""

from __future__ import annotations

import os
import sys
from typing import Any, Optional

import click

from pgdoctor.engine.errors import UserError
from pgdoctor.knowledge.interconnects import DEFAULT_INTER, DEFAULT_INTRA, PRESETS, Link, measured
from pgdoctor.knowledge.interconnects import get as get_preset
from pgdoctor.knowledge.units import fmt_seconds_fixed, parse_bytes, parse_count, parse_gbps, seconds_decimals
from pgdoctor.model import Report, Severity, exit_code
from pgdoctor.plan.comm import Fabric
from pgdoctor.plan.layouts import DEFAULT_TFLOPS, Layout, PlanInput, plan
from pgdoctor.plan.memory import OPTIMIZERS, PRECISIONS, RECOMPUTE, MemoryInput
from pgdoctor.plan.model import (
    ConfigFormatError,
    ModelShape,
    load_hf_config,
    override_shape,
    shape_from_params,
    shape_problem,
)

ASSUMPTIONS = (
    "memory: ZeRO accounting (mixed-precision Adam 2+2+12 B/param) + Korthikanti et al. activations "
    "(sequence parallelism when tp>1) + fixed overhead for CUDA context, NCCL and allocator",
    "communication: ring collectives, time = bytes x bus factor / busbw + hops x latency",
    "overlap: DP/ZeRO traffic may hide behind backward (exposed only beyond it); TP and PP traffic is exposed",
    "compute: (6 or 8 with full recompute) x params x tokens + attention, at --tflops achieved per GPU",
    "placement: ranks numbered tp fastest, then dp, then pp; nodes filled in rank order",
)


def _positive(value: Optional[str], parse: Any, what: str) -> Any:
    if value is None:
        return None
    try:
        return parse(value)
    except ValueError as exc:
        raise UserError(f"--{what}: {exc}") from None


def _shape(params: Optional[str], model: Optional[str], overrides: dict[str, Optional[int]]) -> ModelShape:
    if (params is None) == (model is None):
        raise UserError("give exactly one of --params (e.g. 7B) or --model (a Hugging Face config.json)")
    if model is not None:
        try:
            return override_shape(load_hf_config(model), **overrides)
        except (ConfigFormatError, ValueError) as exc:
            raise UserError(str(exc)) from None
    count = _positive(params, parse_count, "params")
    try:
        return shape_from_params(count, **overrides)
    except (ValueError, ZeroDivisionError) as exc:
        raise UserError(f"model shape: {exc}") from None


def _link(preset: str, bandwidth: Optional[str], scope: str) -> Link:
    try:
        link = get_preset(preset)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if bandwidth is not None:
        bw = _positive(bandwidth, parse_gbps, f"bandwidth-{scope}")
        link = measured(f"{bw:.3g} GB/s", bw, link.latency_us, scope, f"--bandwidth-{scope} (latency of {preset})")
    return link


def _from_snapshot(path: str, nics_per_node: int) -> tuple[Optional[Link], Optional[Link], tuple[str, ...]]:
    from dataclasses import replace

    from pgdoctor.cli.check import _load_snapshot
    from pgdoctor.plan.measured import links_from_snapshot

    got = links_from_snapshot(_load_snapshot(path))
    inter = got.inter
    notes = list(got.notes)
    if inter is not None and nics_per_node > 1:
        # A run across nodes measured all of a node's NICs together; the planner multiplies
        # the per-NIC figure by --nics-per-node, so it is divided here.
        inter = replace(inter, busbw_gbps=inter.busbw_gbps / nics_per_node, line_gbps=inter.line_gbps / nics_per_node)
        notes.append(f"inter-node busbw divided over {nics_per_node} NICs per node")
    return got.intra, inter, tuple(notes)


def _gib(n: float) -> str:
    return f"{n / 2**30:.1f}"


def _render_table(layouts: list[Layout], top: int, out: Any) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(file=out, force_terminal=False, no_color=True, highlight=False, width=160)
    fitting = [lay for lay in layouts if lay.fits]
    shown = fitting[:top]
    # One precision for every time cell, set by the smallest one shown, so a column never mixes
    # units (0.0737 over 10ms) and values line up digit for digit.
    places = seconds_decimals([t for lay in shown
                               for t in (lay.traffic.dp_s, lay.traffic.tp_s, lay.traffic.pp_s, lay.step_s)])

    def secs(t: float) -> str:
        return fmt_seconds_fixed(t, places)

    table = Table(title="Layouts that fit (best first); memory per GPU in GiB, times per step in seconds",
                  title_justify="left", box=None, pad_edge=False)
    for col in ("#", "dp", "tp", "pp", "zero", "m", "params", "grads", "optim", "acts", "buffers",
                "total", "free", "dp comm", "tp comm", "pp comm", "bubble", "step", "compute%"):
        table.add_column(col, justify="right" if col not in ("#",) else "left")
    for i, lay in enumerate(shown, 1):
        mem = lay.memory
        tr = lay.traffic
        table.add_row(
            "*" if i == 1 else str(i), str(lay.dp), str(lay.tp), str(lay.pp), str(lay.zero),
            str(lay.micro_batches) + ("?" if lay.micro_batches_assumed else ""),
            _gib(mem.states.params), _gib(mem.states.grads), _gib(mem.states.master + mem.states.optimizer),
            _gib(mem.activations), _gib(mem.buffers + mem.overhead), _gib(mem.total),
            _gib(lay.headroom_bytes) + ("!" if lay.tight else ""),
            secs(tr.dp_s), secs(tr.tp_s), secs(tr.pp_s), f"{lay.bubble:.0%}", secs(lay.step_s),
            f"{lay.compute_fraction:.0%}",
        )
    if shown:
        console.print(table)
        if len(fitting) > top:
            console.print(f"... and {len(fitting) - top} more that fit (--top N, --json for all)")
        console.print("m: micro-batches per step (? = assumed); optim: fp32 master + optimizer state; "
                      "free!: under 5% free")
        console.print("buffers: DDP buckets or ZeRO-3's gathered layer, plus the fixed overhead; "
                      "dp comm may overlap backward, tp/pp comm does not")
    misfits = [lay for lay in layouts if not lay.fits]
    if not misfits:
        return
    # Closest first; room for fewer rows when some fit, since those are the answer then.
    rows = misfits[: max(3, top - len(shown))] if shown else misfits[:top]
    bad = Table(title=f"Layouts that do not fit ({len(misfits)}, closest first); GiB per GPU",
                title_justify="left", box=None, pad_edge=False)
    for col in ("dp", "tp", "pp", "zero", "params", "grads", "optim", "acts", "buffers", "total", "over by"):
        bad.add_column(col, justify="right")
    for lay in rows:
        mem = lay.memory
        bad.add_row(
            str(lay.dp), str(lay.tp), str(lay.pp), str(lay.zero), _gib(mem.states.params), _gib(mem.states.grads),
            _gib(mem.states.master + mem.states.optimizer), _gib(mem.activations), _gib(mem.buffers + mem.overhead),
            _gib(mem.total), _gib(-lay.headroom_bytes),
        )
    if shown:
        console.print("")
    console.print(bad)
    if len(misfits) > len(rows):
        console.print(f"... and {len(misfits) - len(rows)} more that do not fit")


@click.command("plan")
@click.option("--params", default=None, metavar="COUNT", help="Parameter count: 7B, 1.3B, 125M.")
@click.option("--model", "model_path", type=click.Path(dir_okay=False), default=None,
              help="A Hugging Face config.json instead of --params.")
@click.option("--layers", type=click.IntRange(min=1), default=None, help="Override the number of layers.")
@click.option("--hidden", type=click.IntRange(min=1), default=None, help="Override the hidden size.")
@click.option("--heads", type=click.IntRange(min=1), default=None, help="Override the attention heads.")
@click.option("--vocab", type=click.IntRange(min=1), default=None, help="Override the vocabulary size.")
@click.option("--gpus-per-node", type=click.IntRange(min=1), default=8, show_default=True,
              help="GPUs sharing the intra-node link (an NVLink domain).")
@click.option("--nodes", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--gpu-memory", required=True, metavar="SIZE", help="Memory per GPU: 80GiB, 80GB, 24GiB.")
@click.option("--precision", type=click.Choice(sorted(PRECISIONS)), default="bf16-mixed", show_default=True)
@click.option("--optimizer", type=click.Choice(sorted(OPTIMIZERS)), default="adamw", show_default=True)
@click.option("--seq-len", type=click.IntRange(min=1), default=None,
              help="Tokens per sequence [default: the config's maximum up to 8192, else 2048].")
@click.option("--micro-batch", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--global-batch", type=click.IntRange(min=1), default=None, help="Sequences per optimizer step.")
@click.option("--recompute", type=click.Choice(RECOMPUTE), default="none", show_default=True,
              help="Activation checkpointing.")
@click.option("--no-flash-attention", is_flag=True, help="Attention stores the s x s scores (eager attention).")
@click.option("--interconnect", default=DEFAULT_INTRA, show_default=True, metavar="PRESET",
              help=f"Link between GPUs of a node: {', '.join(PRESETS)}.")
@click.option("--inter-node", default=DEFAULT_INTER, show_default=True, metavar="PRESET",
              help="Link between nodes, per NIC (same presets).")
@click.option("--nics-per-node", type=click.IntRange(min=1), default=1, show_default=True,
              help="NICs a node uses for collectives (8 on rail-optimised DGX/HGX).")
@click.option("--bandwidth-intra", default=None, metavar="GB/s", help="Measured intra-node busbw.")
@click.option("--bandwidth-inter", default=None, metavar="GB/s", help="Measured inter-node busbw per NIC.")
@click.option("--from", "from_path", type=click.Path(dir_okay=False), default=None,
              help="Take measured bandwidth from a pgdoctor snapshot (collective probes).")
@click.option("--tp", type=click.IntRange(min=1), default=None, help="Only layouts with this tensor parallelism.")
@click.option("--pp", type=click.IntRange(min=1), default=None, help="Only layouts with this pipeline depth.")
@click.option("--zero", type=click.IntRange(0, 3), default=None, help="Only layouts with this ZeRO stage.")
@click.option("--tflops", type=click.FloatRange(min=1e-6), default=DEFAULT_TFLOPS, show_default=True,
              help="Achieved (not peak) TFLOP/s per GPU, for compute time.")
@click.option("--overhead", default="2GiB", show_default=True, metavar="SIZE",
              help="Fixed memory per GPU: CUDA context, NCCL buffers, allocator slack.")
@click.option("--ddp-bucket-view", is_flag=True, help="The job uses DDP(gradient_as_bucket_view=True).")
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True, help="Rows shown.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
@click.option("--fail-on", type=click.Choice(["warn", "fail"]), default="fail", show_default=True)
@click.option("--exit-zero", is_flag=True, help="Always exit 0.")
def plan_cmd(
    params: Optional[str], model_path: Optional[str], layers: Optional[int], hidden: Optional[int],
    heads: Optional[int], vocab: Optional[int], gpus_per_node: int, nodes: int, gpu_memory: str,
    precision: str, optimizer: str, seq_len: Optional[int], micro_batch: int, global_batch: Optional[int],
    recompute: str, no_flash_attention: bool, interconnect: str, inter_node: str, nics_per_node: int,
    bandwidth_intra: Optional[str], bandwidth_inter: Optional[str], from_path: Optional[str],
    tp: Optional[int], pp: Optional[int], zero: Optional[int], tflops: float, overhead: str,
    ddp_bucket_view: bool, top: int, as_json: bool, fail_on: str, exit_zero: bool,
) -> None:
    """Predict memory and communication time per GPU for dp x tp x pp x ZeRO layouts."""
    from pgdoctor.checks import load_all
    from pgdoctor.plan.findings import plan_findings

    shape = _shape(params, model_path, {"layers": layers, "hidden": hidden, "heads": heads, "vocab": vocab})
    problem = shape_problem(shape)
    if problem:
        raise UserError(f"model shape: {problem}")
    seq = seq_len or min(shape.max_seq_len or 2048, 8192)
    mem_bytes = _positive(gpu_memory, parse_bytes, "gpu-memory")
    overhead_bytes = _positive(overhead, parse_bytes, "overhead")
    intra = _link(interconnect, bandwidth_intra, "intra")
    inter = _link(inter_node, bandwidth_inter, "inter")
    notes: list[str] = []
    if shape.shape_note:
        notes.append(shape.shape_note)
    if seq_len is None:
        notes.append(f"--seq-len not given: {seq} tokens assumed")
    if from_path:
        m_intra, m_inter, snap_notes = _from_snapshot(from_path, nics_per_node)
        notes.extend(snap_notes)
        # Explicit --bandwidth-* options win over the snapshot.
        if m_intra is not None and bandwidth_intra is None:
            intra = m_intra
        if m_inter is not None and bandwidth_inter is None:
            inter = m_inter
    fabric = Fabric(gpus_per_node, nodes, intra, inter, nics_per_node)
    mi = MemoryInput(
        shape=shape, precision=PRECISIONS[precision], optimizer=OPTIMIZERS[optimizer], seq_len=seq,
        micro_batch=micro_batch, recompute=recompute, flash_attention=not no_flash_attention,
        overhead_bytes=overhead_bytes, ddp_bucket_view=ddp_bucket_view,
    )
    inp = PlanInput(mi, fabric, mem_bytes, global_batch, tflops, tp, pp, zero)
    layouts = plan(inp)
    if not layouts:
        raise UserError(
            f"no valid layout of {fabric.gpus} GPUs with tp={tp or 'any'} pp={pp or 'any'} zero="
            f"{'any' if zero is None else zero} for {shape.heads} heads and {shape.layers} layers "
            "(tp must divide the heads and fit in a node or span whole nodes; ZeRO-2/3 not with pp>1)"
        )
    load_all()
    fabric_label = f"({intra.name} inside nodes, {inter.name} x{nics_per_node} between)"
    fits_from = None
    if not layouts[0].fits and tp is None and pp is None and zero is None:
        from pgdoctor.plan.layouts import smallest_fit

        fits_from = smallest_fit(inp)
    findings = plan_findings(layouts, gpus_per_node, micro_batch, global_batch, fabric_label, fits_from)
    best = layouts[0] if layouts[0].fits else None
    plan_json = {
        "model": shape.to_json(),
        "inputs": {
            "gpus_per_node": gpus_per_node, "nodes": nodes, "gpus": fabric.gpus, "gpu_memory_bytes": mem_bytes,
            "precision": precision, "optimizer": optimizer, "seq_len": seq, "micro_batch": micro_batch,
            "global_batch": global_batch, "recompute": recompute, "flash_attention": not no_flash_attention,
            "tflops": tflops, "overhead_bytes": overhead_bytes, "ddp_bucket_view": ddp_bucket_view,
            "nics_per_node": nics_per_node, "tp": tp, "pp": pp, "zero": zero,
        },
        "interconnect": {"intra": intra.to_json(), "inter": inter.to_json()},
        "recommended": best.to_json() if best else None,
        "fits_from": ({"nodes": fits_from.dp * fits_from.tp * fits_from.pp // gpus_per_node, **fits_from.to_json()}
                      if fits_from else None),
        "layouts": [lay.to_json() for lay in layouts],
        "assumptions": list(ASSUMPTIONS),
        "notes": notes,
    }
    report = Report(command="plan", snapshot=None, findings=tuple(findings),
                    meta={"host": "", "from": from_path}, extra={"plan": plan_json})
    if as_json:
        from pgdoctor.render import get_renderer

        get_renderer("json")(report, sys.stdout, False)
    else:
        _print_console(report, shape, seq, fabric, layouts, top, notes)
    raise click.exceptions.Exit(exit_code(report, Severity(fail_on), exit_zero))


def _print_console(
    report: Report, shape: ModelShape, seq: int, fabric: Fabric, layouts: list[Layout], top: int, notes: list[str]
) -> None:
    from pgdoctor.render import get_renderer

    out = sys.stdout
    click.echo(f"model ({shape.name}): {shape.params / 1e9:.3g}B parameters, {shape.layers} layers, hidden "
               f"{shape.hidden}, {shape.heads} heads, seq {seq}")
    click.echo(f"GPUs: {fabric.nodes} node(s) x {fabric.gpus_per_node}; inside nodes {fabric.intra.name} "
               f"{fabric.intra.busbw_gbps:.3g} GB/s busbw, between nodes {fabric.inter.name} "
               f"{fabric.inter.busbw_gbps:.3g} GB/s x {fabric.nics_per_node} NIC(s)")
    for note in notes:
        click.echo(f"note: {note}")
    click.echo("")
    _render_table(layouts, top, out)
    color = out.isatty() and "NO_COLOR" not in os.environ
    get_renderer("console")(report, out, color)
