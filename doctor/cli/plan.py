"""`pgdoctor plan`: memory and communication per GPU for every dp x tp x pp x ZeRO layout."""

from __future__ import annotations

import dataclasses
import os
import sys
from typing import Any, Optional

import click

from pgdoctor.cli import FiniteFloat
from pgdoctor.engine.errors import UserError
from pgdoctor.knowledge.gpus import GPUS, get_gpu
from pgdoctor.knowledge.interconnects import DEFAULT_INTER, DEFAULT_INTRA, PRESETS, Link, measured
from pgdoctor.knowledge.interconnects import get as get_preset
from pgdoctor.knowledge.units import parse_bytes, parse_count, parse_gbps
from pgdoctor.model import Report, Severity, exit_code
from pgdoctor.plan.comm import SCHEDULES, Fabric
from pgdoctor.plan.finetune import BASE_WEIGHTS, FineTune, parse_targets
from pgdoctor.plan.layouts import DEFAULT_TFLOPS, TIGHT_FRACTION, Layout, PlanInput, plan
from pgdoctor.plan.memory import OPTIMIZERS, PRECISIONS, RECOMPUTE, MemoryInput
from pgdoctor.plan.model import (
    ConfigFormatError,
    ModelShape,
    override_shape,
    shape_from_params,
    shape_problem,
)
from pgdoctor.plan.moe import MoeSpec
from pgdoctor.plan.offload import DEVICES, OFFLOADS

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


def _moe_config(text: str, path: str) -> Optional[tuple[ModelShape, MoeSpec]]:
    """A mixture-of-experts config.json as (attention/shared shape, experts), or None."""
    from pgdoctor.model import jsontext
    from pgdoctor.plan.moe import is_moe, moe_from_hf_config

    try:
        cfg = jsontext.loads(text)
    except jsontext.JsonInputError:
        return None  # hf_config_from_text reports it
    return moe_from_hf_config(cfg, path) if isinstance(cfg, dict) and is_moe(cfg) else None


def _shape(params: Optional[str], model: Optional[str],
           overrides: dict[str, Optional[int]]) -> tuple[ModelShape, Optional[MoeSpec]]:
    if (params is None) == (model is None):
        raise UserError("give exactly one of --params (e.g. 7B) or --model (a Hugging Face config.json)")
    if model is not None:
        from pgdoctor.probes.files import read_text_input

        try:
            text = read_text_input(model, "model config", 16 << 20)
            moe = _moe_config(text, model)
            if moe is not None:
                return override_shape(moe[0], **overrides), moe[1]
            from pgdoctor.plan.encdec import config_from_text

            return override_shape(config_from_text(text, model), **overrides), None
        except (ConfigFormatError, ValueError) as exc:  # InputError is a ValueError
            raise UserError(str(exc)) from None
    count = _positive(params, parse_count, "params")
    try:
        return shape_from_params(count, **overrides), None
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


def _fraction(text: Optional[str], what: str) -> Optional[float]:
    """`0.5%` -> 0.005; `0.005` -> 0.005."""
    if text is None:
        return None
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise UserError(f"--{what}: {text!r} is not a fraction (0.5% or 0.005)") from None
    if not 0 < value <= 1:
        raise UserError(f"--{what}: {text!r} must be above 0 and at most 100%")
    return value


def _finetune(trainable: Optional[str], lora_rank: Optional[int], lora_targets: Optional[str],
              base_weights: str) -> Optional[FineTune]:
    frac = _fraction(trainable, "trainable")
    if frac is not None and lora_rank:
        raise UserError("give --trainable or --lora-rank, not both")
    if base_weights != "16bit" and not lora_rank:
        raise UserError(f"--base-weights {base_weights} needs --lora-rank: quantized weights are frozen")
    if lora_targets is not None and not lora_rank:
        raise UserError("--lora-targets needs --lora-rank")
    if lora_rank:
        try:
            targets = parse_targets(lora_targets or "attn,mlp")
        except ValueError as exc:
            raise UserError(f"--lora-targets: {exc}") from None
        return FineTune(lora_rank=lora_rank, lora_targets=targets, base_weights=base_weights)
    return FineTune(trainable_fraction=frac) if frac is not None else None


def _calibrate(path: str, nics_per_node: int) -> Any:
    """--from: a pgdoctor snapshot or a `bench scaling --json` result (pgdoctor.plan.measured)."""
    from pgdoctor.plan.measured import calibrate
    from pgdoctor.probes.files import InputError, read_input

    try:
        return calibrate(read_input(path, "snapshot or bench scaling result").decode("utf-8"), path, nics_per_node)
    except UnicodeDecodeError:
        raise UserError(f"{path} is not a text file (a snapshot or `bench scaling --json` result)") from None
    except (InputError, ValueError, RecursionError) as exc:  # SnapshotFormatError, JsonInputError: ValueError
        raise UserError(f"{path}: {exc if not isinstance(exc, RecursionError) else 'nested too deep'}") from None


# Shapes and counts past any real cluster or model are typos (or attacks): a layer count of
# 10**20 made the planner spin. Each integer option is bounded by this.
MAX_COUNT = 1 << 20
# The planner walks layers one by one (stages, gathered buffers); the deepest real models have
# a few hundred.
MAX_LAYERS = 4096


@click.command("plan")
@click.option("--params", default=None, metavar="COUNT", help="Parameter count: 7B, 1.3B, 125M.")
@click.option("--model", "model_path", type=click.Path(dir_okay=False), default=None,
              help="A Hugging Face config.json instead of --params.")
@click.option("--layers", type=click.IntRange(min=1, max=MAX_LAYERS), default=None, help="Override the number of layers.")
@click.option("--hidden", type=click.IntRange(min=1, max=MAX_COUNT), default=None, help="Override the hidden size.")
@click.option("--heads", type=click.IntRange(min=1, max=MAX_COUNT), default=None, help="Override the attention heads.")
@click.option("--vocab", type=click.IntRange(min=1, max=MAX_COUNT), default=None, help="Override the vocabulary size.")
@click.option("--kv-heads", type=click.IntRange(min=1, max=MAX_COUNT), default=None,
              help="Key/value heads (grouped-query attention).")
@click.option("--gpu", type=click.Choice(sorted(GPUS)), default=None,
              help="GPU preset: memory, achieved TFLOP/s and links (each overridable).")
@click.option("--gpus-per-node", type=click.IntRange(min=1, max=1024), default=8, show_default=True,
              help="GPUs sharing the intra-node link (an NVLink domain).")
@click.option("--nodes", type=click.IntRange(min=1, max=65536), default=1, show_default=True)
@click.option("--gpu-memory", default=None, metavar="SIZE",
              help="Memory per GPU: 80GiB, 80GB, 24GiB [default: the --gpu preset's].")
@click.option("--precision", type=click.Choice(sorted(PRECISIONS)), default="bf16-mixed", show_default=True)
@click.option("--optimizer", type=click.Choice(sorted(OPTIMIZERS)), default="adamw", show_default=True)
@click.option("--seq-len", type=click.IntRange(min=1, max=MAX_COUNT), default=None,
              help="Tokens per sequence [default: the config's maximum up to 8192, else 2048].")
@click.option("--micro-batch", type=click.IntRange(min=1, max=MAX_COUNT), default=None,
              help="Sequences per micro-batch [default: searched over 1, 2, 4, 8 with --global-batch, else 1].")
@click.option("--global-batch", type=click.IntRange(min=1, max=MAX_COUNT), default=None,
              help="Sequences per optimizer step (gradient accumulation follows).")
@click.option("--recompute", type=click.Choice([*RECOMPUTE, "search"]), default="search", show_default=True,
              help="Activation checkpointing; search tries none, selective and full for every layout.")
@click.option("--headroom", default="5%", show_default=True, metavar="PCT",
              help="Free GPU memory a layout needs to be recommended.")
@click.option("--trainable", default=None, metavar="PCT", help="Fine-tuning: share of parameters that train (0.5%).")
@click.option("--lora-rank", type=click.IntRange(min=1, max=MAX_COUNT), default=None, help="Fine-tuning with LoRA adapters of rank R.")
@click.option("--lora-targets", default=None, metavar="LIST",
              help="Projections with adapters: attn, mlp, all, or q,k,v,o,gate,up,down [default: attn,mlp].")
@click.option("--base-weights", type=click.Choice(BASE_WEIGHTS), default="16bit", show_default=True,
              help="Storage of the frozen base under LoRA (nf4: QLoRA).")
@click.option("--offload", type=click.Choice(OFFLOADS), default="none", show_default=True,
              help="ZeRO-Offload / ZeRO-Infinity / FSDP CPU offload of the optimizer (and parameters).")
@click.option("--offload-device", type=click.Choice(DEVICES), default="cpu", show_default=True)
@click.option("--host-memory", default=None, metavar="SIZE", help="Host memory per node, checked when offloading.")
@click.option("--pcie", default=None, metavar="PRESET", help="GPU-host link [default: the --gpu preset's, else pcie5].")
@click.option("--cpu-optimizer-rate", type=FiniteFloat(min=1.0, max=1e15), default=1e9, show_default=True, metavar="PARAMS/S",
              help="Offload: parameters the host's optimizer step updates per second per node.")
@click.option("--nvme-bandwidth", default="25", show_default=True, metavar="GB/s",
              help="NVMe read/write bandwidth per node (--offload-device nvme).")
@click.option("--no-flash-attention", is_flag=True, help="Attention stores the s x s scores (eager attention).")
@click.option("--interconnect", default=None, metavar="PRESET",
              help=f"Link between GPUs of a node: {', '.join(PRESETS)} [default: the --gpu preset's, else "
                   f"{DEFAULT_INTRA}].")
@click.option("--inter-node", default=DEFAULT_INTER, show_default=True, metavar="PRESET",
              help="Link between nodes, per NIC (same presets).")
@click.option("--nics-per-node", type=click.IntRange(min=1, max=MAX_COUNT), default=1, show_default=True,
              help="NICs a node uses for collectives (8 on rail-optimised DGX/HGX).")
@click.option("--bandwidth-intra", default=None, metavar="GB/s", help="Measured intra-node busbw.")
@click.option("--bandwidth-inter", default=None, metavar="GB/s", help="Measured inter-node busbw per NIC.")
@click.option("--from", "from_path", type=click.Path(dir_okay=False), default=None,
              help="Measured bandwidth (and TFLOP/s) from a pgdoctor snapshot or a `bench scaling --json` result.")
@click.option("--tp", type=click.IntRange(min=1, max=MAX_COUNT), default=None, help="Only layouts with this tensor parallelism.")
@click.option("--pp", type=click.IntRange(min=1, max=MAX_COUNT), default=None, help="Only layouts with this pipeline depth.")
@click.option("--zero", type=click.IntRange(0, 3), default=None, help="Only layouts with this ZeRO stage.")
@click.option("--no-sequence-parallel", is_flag=True,
              help="Tensor parallelism without sequence parallelism (norms and dropouts replicated).")
@click.option("--schedule", type=click.Choice(SCHEDULES), default="1f1b", show_default=True,
              help="Pipeline schedule: 1F1B, interleaved 1F1B (--virtual-stages), zero-bubble ZB-H1/ZB-H2.")
@click.option("--virtual-stages", type=click.IntRange(min=1, max=MAX_COUNT), default=2, show_default=True,
              help="Model chunks per pipeline stage for --schedule interleaved.")
@click.option("--cp", type=click.IntRange(min=1, max=MAX_COUNT), default=None,
              help="Context parallelism (ring attention) [default: searched from 16K tokens per sequence].")
@click.option("--ep", type=click.IntRange(min=1, max=MAX_COUNT), default=None,
              help="Mixture of experts: only layouts with this expert parallelism.")
@click.option("--capacity-factor", type=FiniteFloat(min=0.01), default=1.0, show_default=True,
              help="Mixture of experts: tokens an expert accepts, relative to an even split.")
@click.option("--tflops", type=FiniteFloat(min=1e-6), default=None,
              help=f"Achieved (not peak) TFLOP/s per GPU [default: 40% of the --gpu preset's peak, else "
                   f"{DEFAULT_TFLOPS:g}].")
@click.option("--overhead", default="2GiB", show_default=True, metavar="SIZE",
              help="Fixed memory per GPU: CUDA context, NCCL buffers, allocator slack.")
@click.option("--ddp-bucket-view", is_flag=True, help="The job uses DDP(gradient_as_bucket_view=True).")
@click.option("--largest-model", is_flag=True,
              help="Instead of --params: the largest LLaMA-style model each layout fits (ZeRO paper, Table 2).")
@click.option("--top", type=click.IntRange(min=1, max=MAX_COUNT), default=10, show_default=True, help="Rows shown.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
@click.option("--fail-on", type=click.Choice(["warn", "fail"]), default="fail", show_default=True)
@click.option("--exit-zero", is_flag=True, help="Always exit 0.")
def plan_cmd(
    params: Optional[str], model_path: Optional[str], layers: Optional[int], hidden: Optional[int],
    heads: Optional[int], vocab: Optional[int], kv_heads: Optional[int], gpu: Optional[str], gpus_per_node: int,
    nodes: int, gpu_memory: Optional[str], precision: str, optimizer: str, seq_len: Optional[int],
    micro_batch: Optional[int], global_batch: Optional[int], recompute: str, headroom: str,
    trainable: Optional[str], lora_rank: Optional[int], lora_targets: Optional[str], base_weights: str,
    offload: str, offload_device: str, host_memory: Optional[str], pcie: Optional[str], cpu_optimizer_rate: float,
    nvme_bandwidth: str,
    no_flash_attention: bool, interconnect: Optional[str], inter_node: str, nics_per_node: int,
    bandwidth_intra: Optional[str], bandwidth_inter: Optional[str], from_path: Optional[str],
    tp: Optional[int], pp: Optional[int], zero: Optional[int], no_sequence_parallel: bool, schedule: str,
    virtual_stages: int,
    cp: Optional[int], ep: Optional[int], capacity_factor: float,
    tflops: Optional[float], overhead: str,
    ddp_bucket_view: bool, largest_model: bool, top: int, as_json: bool, fail_on: str, exit_zero: bool,
) -> None:
    """Predict memory and communication time per GPU for dp x tp x pp x ZeRO layouts."""
    from pgdoctor.checks import load_all
    from pgdoctor.plan.findings import plan_findings

    if largest_model:
        if params is not None or model_path is not None:
            raise UserError("--largest-model searches the parameter count: give no --params or --model")
        params = "7B"  # the probe's starting shape; the count is searched
    shape, moe = _shape(params, model_path, {"layers": layers, "hidden": hidden, "heads": heads, "vocab": vocab})
    if moe is not None:
        moe = dataclasses.replace(moe, capacity_factor=capacity_factor)
    if kv_heads is not None:
        from dataclasses import replace as _replace

        shape = _replace(shape, kv_heads=kv_heads)
    preset = get_gpu(gpu) if gpu else None
    if gpu_memory is None and preset is None:
        raise UserError("give --gpu-memory (e.g. 80GiB) or a --gpu preset")
    gpu_memory = gpu_memory or f"{preset.memory_gib}GiB" if preset else gpu_memory
    interconnect = interconnect or (preset.intra if preset else DEFAULT_INTRA)
    tflops_given, tflops = tflops, tflops or (preset.achieved_tflops(precision) if preset else DEFAULT_TFLOPS)
    if precision.startswith("fp8") and preset is not None and preset.fp8_tflops is None:
        raise UserError(f"--precision {precision}: {preset.name} has no FP8 tensor cores")
    ft = _finetune(trainable, lora_rank, lora_targets, base_weights)
    problem = shape_problem(shape)
    if problem:
        raise UserError(f"model shape: {problem}")
    seq = seq_len or min(shape.max_seq_len or 2048, 8192)
    mem_bytes = _positive(gpu_memory, parse_bytes, "gpu-memory")
    overhead_bytes = _positive(overhead, parse_bytes, "overhead")
    host_bytes = _positive(host_memory, parse_bytes, "host-memory")
    nvme_gbps = _positive(nvme_bandwidth, parse_gbps, "nvme-bandwidth")
    head = _fraction(headroom, "headroom") if headroom.strip() not in ("0", "0%") else 0.0
    pcie_link = _link(pcie or (preset.pcie if preset else "pcie5"), None, "pcie")
    intra = _link(interconnect, bandwidth_intra, "intra")
    inter = _link(inter_node, bandwidth_inter, "inter")
    notes: list[str] = []
    measured_from: list[str] = []
    if shape.shape_note:
        notes.append(shape.shape_note)
    if seq_len is None:
        notes.append(f"--seq-len not given: {seq} tokens assumed")
    if from_path:
        cal = _calibrate(from_path, nics_per_node)
        notes.extend(cal.notes)
        # Explicit --bandwidth-* and --tflops options win over the measurement.
        intra = cal.intra if cal.intra is not None and bandwidth_intra is None else intra
        inter = cal.inter if cal.inter is not None and bandwidth_inter is None else inter
        tflops = cal.tflops if cal.tflops is not None and tflops_given is None else tflops
        measured_from = [k for k, v in (("intra", intra), ("inter", inter), ("tflops", tflops))
                         if v is getattr(cal, k)]
    fabric = Fabric(gpus_per_node, nodes, intra, inter, nics_per_node)
    mi = MemoryInput(
        shape=shape, precision=PRECISIONS[precision], optimizer=OPTIMIZERS[optimizer], seq_len=seq,
        micro_batch=micro_batch or 1, recompute="none" if recompute == "search" else recompute,
        flash_attention=not no_flash_attention, overhead_bytes=overhead_bytes, ddp_bucket_view=ddp_bucket_view,
        finetune=ft, offload=offload, moe=moe, schedule=schedule, sequence_parallel=not no_sequence_parallel,
        virtual_stages=virtual_stages if schedule == "interleaved" else 1,
    )
    inp = PlanInput(
        mi, fabric, mem_bytes, global_batch, tflops, tp, pp, zero,
        recompute_options=RECOMPUTE if recompute == "search" else (),
        micro_batch_options=(1, 2, 4, 8) if micro_batch is None and global_batch is not None else (),
        headroom=TIGHT_FRACTION if head is None else head, host_memory_bytes=host_bytes, pcie=pcie_link,
        offload_device=offload_device, nvme_gbps=nvme_gbps, ep=ep, cp=cp, cpu_optimizer_rate=cpu_optimizer_rate,
    )
    if largest_model:
        _print_largest(inp, {"layers": layers, "hidden": hidden, "heads": heads, "vocab": vocab}, top, as_json)
        return
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
    findings = plan_findings(layouts, gpus_per_node, layouts[0].micro_batch, global_batch, fabric_label, fits_from)
    best = layouts[0] if layouts[0].fits else None
    from pgdoctor.plan.advice import alternatives, explain
    from pgdoctor.plan.console import bytes_per_param

    why = explain(layouts, inp) if best else alternatives(inp, fits_from)
    convention = bytes_per_param(mi)
    plan_json = {
        "model": shape.to_json() if moe is None else {**shape.to_json(), "moe": moe.to_json(),
                                                      "params": _moe_totals(shape, moe)[0],
                                                      "active_params": _moe_totals(shape, moe)[1]},
        "inputs": {
            "gpus_per_node": gpus_per_node, "nodes": nodes, "gpus": fabric.gpus, "gpu_memory_bytes": mem_bytes,
            "precision": precision, "optimizer": optimizer, "seq_len": seq, "micro_batch": micro_batch,
            "global_batch": global_batch, "recompute": recompute, "flash_attention": not no_flash_attention,
            "tflops": tflops, "overhead_bytes": overhead_bytes, "ddp_bucket_view": ddp_bucket_view,
            "nics_per_node": nics_per_node, "tp": tp, "pp": pp, "zero": zero, "gpu": gpu,
            "headroom": inp.headroom, "sequence_parallel": not no_sequence_parallel, "schedule": schedule,
            "virtual_stages": mi.virtual_stages, "finetune": ft.to_json() if ft else None, "offload": offload,
            "cpu_optimizer_rate": cpu_optimizer_rate, "measured": measured_from, "offload_device": offload_device,
            "host_memory_bytes": host_bytes, "pcie": pcie_link.to_json(),
        },
        "bytes_per_param": convention,
        "why": why,
        "interconnect": {"intra": intra.to_json(), "inter": inter.to_json()},
        "recommended": best.to_json() if best else None,
        "fits_from": ({"nodes": fits_from.gpus // gpus_per_node, **fits_from.to_json()}
                      if fits_from else None),
        "layouts": [lay.to_json() for lay in layouts],
        "assumptions": list(ASSUMPTIONS),
        "notes": notes,
    }
    report = Report(command="plan", snapshot=None, findings=tuple(findings),
                    meta={"host": "", "from": from_path}, extra={"plan": plan_json}, fail_on=Severity(fail_on))
    if as_json:
        from pgdoctor.render import get_renderer

        get_renderer("json")(report, sys.stdout, False)
    else:
        count = (f"{shape.params / 1e9:.3g}B parameters" if moe is None else
                 "{:.3g}B parameters ({:.3g}B active)".format(*(n / 1e9 for n in _moe_totals(shape, moe))))
        _print_console(report, shape, seq, fabric, layouts, top, notes, convention, why, offload != "none", count,
                       moe is not None)
    raise click.exceptions.Exit(exit_code(report, exit_zero))


def _print_largest(inp: PlanInput, overrides: dict[str, Optional[int]], top: int, as_json: bool) -> None:
    import json

    from pgdoctor.plan.largest import largest_models
    from pgdoctor.plan.layouts import candidates

    rows = largest_models(inp, candidates(inp), {k: v for k, v in overrides.items() if v})
    if as_json:
        click.echo(json.dumps({"largest_model": [r.to_json() for r in rows]}, indent=1))
        return
    click.echo(f"Largest LLaMA-style model per layout on {inp.fabric.gpus} GPUs of {inp.gpu_memory_bytes / 2**30:.1f} "
               f"GiB (seq {inp.memory.seq_len}, micro-batch {inp.memory.micro_batch}, recompute "
               f"{inp.memory.recompute}; fits: total <= GPU memory)")
    click.echo(f"{'dp':>4} {'tp':>3} {'pp':>3} {'zero':>4} {'params':>10}")
    for r in rows[:top]:
        click.echo(f"{r.dp:>4} {r.tp:>3} {r.pp:>3} {r.zero:>4} {r.params / 1e9:>9.3g}B")
    if len(rows) > top:
        click.echo(f"... and {len(rows) - top} more layouts (--top N, --json for all)")


def _moe_totals(shape: ModelShape, moe: MoeSpec) -> tuple[int, int]:
    from pgdoctor.plan.moe import active_params, total_params

    return total_params(shape, moe), active_params(shape, moe)


def _print_console(
    report: Report, shape: ModelShape, seq: int, fabric: Fabric, layouts: list[Layout], top: int, notes: list[str],
    convention: str, why: Optional[str], offload: bool, count: str, moe: bool,
) -> None:
    from pgdoctor.plan.console import render_tables
    from pgdoctor.render import get_renderer

    out = sys.stdout
    click.echo(f"model ({shape.name}): {count}, {shape.layers} layers, hidden "
               f"{shape.hidden}, {shape.heads} heads, seq {seq}")
    click.echo(f"GPUs: {fabric.nodes} node(s) x {fabric.gpus_per_node}; inside nodes {fabric.intra.name} "
               f"{fabric.intra.busbw_gbps:.3g} GB/s busbw, between nodes {fabric.inter.name} "
               f"{fabric.inter.busbw_gbps:.3g} GB/s x {fabric.nics_per_node} NIC(s)")
    click.echo(f"B/param: {convention}")
    for note in notes:
        click.echo(f"note: {note}")
    click.echo("")
    render_tables(layouts, top, out, offload, moe)
    if why:
        click.echo("")
        click.echo(why)
    color = out.isatty() and "NO_COLOR" not in os.environ
    get_renderer("console")(report, out, color)
