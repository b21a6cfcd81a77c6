"""One `pgdoctor plan` run: PlanOptions -> the planner's inputs -> layouts, findings and their JSON.

Everything the command decides lives here, so that the CLI only parses flags and renders. Bad
options raise PlanError with the one line the user sees (the CLI turns it into exit 2).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Optional

from pgdoctor.knowledge.gpus import Gpu, get_gpu
from pgdoctor.knowledge.interconnects import DEFAULT_INTER, DEFAULT_INTRA, Link, measured
from pgdoctor.knowledge.interconnects import get as get_preset
from pgdoctor.knowledge.units import parse_bytes, parse_count, parse_gbps
from pgdoctor.model import Finding
from pgdoctor.plan.comm import Fabric
from pgdoctor.plan.finetune import FineTune, parse_targets
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
from pgdoctor.plan.options import ModelSource, PlanError, PlanOptions

ASSUMPTIONS = (
    "memory: ZeRO accounting (mixed-precision Adam 2+2+12 B/param) + Korthikanti et al. activations "
    "(sequence parallelism when tp>1) + fixed overhead for CUDA context, NCCL and allocator",
    "communication: ring collectives, time = bytes x bus factor / busbw + hops x latency",
    "overlap: DP/ZeRO traffic may hide behind backward (exposed only beyond it); "
    "TP and PP traffic is exposed",
    "compute: (6 or 8 with full recompute) x params x tokens + attention, at --tflops achieved per GPU",
    "placement: ranks numbered tp fastest, then dp, then pp; nodes filled in rank order",
)


@dataclass(frozen=True)
class PlanResult:
    """A planned model: the layouts best first, the findings, and what the console and JSON show."""

    options: PlanOptions
    shape: ModelShape
    moe: Optional[MoeSpec]
    seq_len: int
    fabric: Fabric
    inp: PlanInput
    finetune: Optional[FineTune]
    layouts: list[Layout]
    findings: list[Finding]
    notes: list[str]
    measured_from: list[str]
    bytes_per_param: str
    why: Optional[str]
    fits_from: Optional[Layout]

    @property
    def recommended(self) -> Optional[Layout]:
        return self.layouts[0] if self.layouts[0].fits else None

    def totals(self) -> tuple[int, int]:
        """(parameters, active parameters): equal for a dense model."""
        if self.moe is None:
            return self.shape.params, self.shape.params
        from pgdoctor.plan.moe import active_params, total_params

        return total_params(self.shape, self.moe), active_params(self.shape, self.moe)

    def count_label(self) -> str:
        if self.moe is None:
            return f"{self.shape.params / 1e9:.3g}B parameters"
        return "{:.3g}B parameters ({:.3g}B active)".format(*(n / 1e9 for n in self.totals()))

    def to_json(self) -> dict[str, Any]:
        o, fabric, inp, best = self.options, self.fabric, self.inp, self.recommended
        mi = inp.memory
        model = self.shape.to_json()
        if self.moe is not None:
            total, active = self.totals()
            model = {**model, "moe": self.moe.to_json(), "params": total, "active_params": active}
        gpus_per_node = fabric.gpus_per_node
        return {
            "model": model,
            "inputs": {
                "gpus_per_node": gpus_per_node,
                "nodes": fabric.nodes,
                "gpus": fabric.gpus,
                "gpu_memory_bytes": inp.gpu_memory_bytes,
                "precision": o.precision,
                "optimizer": o.optimizer,
                "seq_len": self.seq_len,
                "micro_batch": o.micro_batch,
                "global_batch": o.global_batch,
                "recompute": o.recompute,
                "flash_attention": o.flash_attention,
                "tflops": inp.tflops,
                "overhead_bytes": mi.overhead_bytes,
                "ddp_bucket_view": o.ddp_bucket_view,
                "nics_per_node": fabric.nics_per_node,
                "tp": o.tp,
                "pp": o.pp,
                "zero": o.zero,
                "gpu": o.gpu,
                "headroom": inp.headroom,
                "sequence_parallel": o.sequence_parallel,
                "schedule": o.schedule,
                "virtual_stages": mi.virtual_stages,
                "finetune": self.finetune.to_json() if self.finetune else None,
                "offload": o.offload,
                "cpu_optimizer_rate": o.cpu_optimizer_rate,
                "measured": self.measured_from,
                "offload_device": o.offload_device,
                "host_memory_bytes": inp.host_memory_bytes,
                "pcie": inp.pcie.to_json(),
            },
            "bytes_per_param": self.bytes_per_param,
            "why": self.why,
            "interconnect": {"intra": fabric.intra.to_json(), "inter": fabric.inter.to_json()},
            "recommended": best.to_json() if best else None,
            "fits_from": (
                {"nodes": self.fits_from.gpus // gpus_per_node, **self.fits_from.to_json()}
                if self.fits_from
                else None
            ),
            "layouts": [lay.to_json() for lay in self.layouts],
            "assumptions": list(ASSUMPTIONS),
            "notes": self.notes,
        }


@dataclass(frozen=True)
class LargestResult:
    """`--largest-model`: the largest LLaMA-style model each layout fits."""

    inp: PlanInput
    rows: list[Any]  # pgdoctor.plan.largest rows, largest first

    def to_json(self) -> dict[str, Any]:
        return {"largest_model": [r.to_json() for r in self.rows]}


def _parsed(value: Optional[str], parse: Callable[[str], Any], what: str) -> Any:
    if value is None:
        return None
    try:
        return parse(value)
    except ValueError as exc:
        raise PlanError(f"--{what}: {exc}") from None


def _moe_config(text: str, path: str) -> Optional[tuple[ModelShape, MoeSpec]]:
    """A mixture-of-experts config.json as (attention/shared shape, experts), or None."""
    from pgdoctor.model import jsontext
    from pgdoctor.plan.moe import is_moe, moe_from_hf_config

    try:
        cfg = jsontext.loads(text)
    except jsontext.JsonInputError:
        return None  # hf_config_from_text reports it
    return moe_from_hf_config(cfg, path) if isinstance(cfg, dict) and is_moe(cfg) else None


def _check_numbers(text: str) -> None:
    from pgdoctor.model import jsontext
    from pgdoctor.plan.config_numbers import check_config_numbers

    try:
        cfg = jsontext.loads(text)
    except jsontext.JsonInputError:
        return  # config_from_text reports it
    check_config_numbers(cfg)


def model_shape(src: ModelSource) -> tuple[ModelShape, Optional[MoeSpec]]:
    """The shape (and experts) of the model the options name, overrides applied."""
    overrides = src.overrides()
    if (src.params is None) == (src.config_path is None):
        raise PlanError("give exactly one of --params (e.g. 7B) or --model (a Hugging Face config.json)")
    if src.config_path is not None:
        path = src.config_path
        text = src.config_text or ""
        try:
            _check_numbers(text)
            moe = _moe_config(text, path)
            if moe is not None:
                shape, spec = override_shape(moe[0], **overrides), moe[1]
            else:
                from pgdoctor.plan.encdec import config_from_text

                shape, spec = override_shape(config_from_text(text, path), **overrides), None
        except (ConfigFormatError, ValueError) as exc:  # named by the file the user gave
            raise PlanError(str(exc) if path in str(exc) else f"--model {path}: {exc}") from None
    else:
        count = _parsed(src.params, parse_count, "params")
        try:
            shape, spec = shape_from_params(count, **overrides), None
        except (ValueError, ZeroDivisionError) as exc:
            raise PlanError(f"model shape: {exc}") from None
    if src.kv_heads is not None:
        shape = dataclasses.replace(shape, kv_heads=src.kv_heads)
    return shape, spec


def _link(preset: str, bandwidth: Optional[str], scope: str) -> Link:
    try:
        link = get_preset(preset)
    except ValueError as exc:
        raise PlanError(str(exc)) from None
    if bandwidth is not None:
        bw = _parsed(bandwidth, parse_gbps, f"bandwidth-{scope}")
        link = measured(
            f"{bw:.3g} GB/s", bw, link.latency_us, scope, f"--bandwidth-{scope} (latency of {preset})"
        )
    return link


def _fraction(text: Optional[str], what: str) -> Optional[float]:
    """`0.5%` -> 0.005; `0.005` -> 0.005."""
    if text is None:
        return None
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise PlanError(f"--{what}: {text!r} is not a fraction (0.5% or 0.005)") from None
    if not 0 < value <= 1:
        raise PlanError(f"--{what}: {text!r} must be above 0 and at most 100%")
    return value


def _finetune(o: PlanOptions) -> Optional[FineTune]:
    frac = _fraction(o.trainable, "trainable")
    if frac is not None and o.lora_rank:
        raise PlanError("give --trainable or --lora-rank, not both")
    if o.base_weights != "16bit" and not o.lora_rank:
        raise PlanError(f"--base-weights {o.base_weights} needs --lora-rank: quantized weights are frozen")
    if o.lora_targets is not None and not o.lora_rank:
        raise PlanError("--lora-targets needs --lora-rank")
    if o.lora_rank:
        try:
            targets = parse_targets(o.lora_targets or "attn,mlp")
        except ValueError as exc:
            raise PlanError(f"--lora-targets: {exc}") from None
        return FineTune(lora_rank=o.lora_rank, lora_targets=targets, base_weights=o.base_weights)
    return FineTune(trainable_fraction=frac) if frac is not None else None


def _calibrate(o: PlanOptions) -> Any:
    """The measured links and TFLOP/s of `--from` (pgdoctor.plan.measured)."""
    from pgdoctor.plan.measured import calibrate

    path = o.measured_path or "--from"
    try:
        return calibrate(o.measured_text or "", path, o.nics_per_node)
    except (ValueError, RecursionError) as exc:  # SnapshotFormatError, JsonInputError: ValueError
        raise PlanError(
            f"{path}: {exc if not isinstance(exc, RecursionError) else 'nested too deep'}"
        ) from None


def planner_input(
    o: PlanOptions,
) -> tuple[PlanInput, ModelShape, Optional[MoeSpec], Optional[FineTune], list[str], list[str]]:
    """The planner's input for these options, with the notes and the measured figures it used."""
    shape, moe = model_shape(o.model)
    if moe is not None:
        moe = dataclasses.replace(moe, capacity_factor=o.capacity_factor)
    elif o.ep is not None and o.ep > 1:  # it was silently ignored: a plan the user did not ask for
        raise PlanError(
            f"--ep {o.ep} splits experts, and this model is dense (no mixture of experts): drop --ep, "
            "or give a MoE config with --model"
        )
    preset: Optional[Gpu] = get_gpu(o.gpu) if o.gpu else None
    if o.gpu_memory is None and preset is None:
        raise PlanError("give --gpu-memory (e.g. 80GiB) or a --gpu preset")
    gpu_memory = o.gpu_memory or (f"{preset.memory_gib}GiB" if preset else None)
    interconnect = o.interconnect or (preset.intra if preset else DEFAULT_INTRA)
    tflops = o.tflops or (preset.achieved_tflops(o.precision) if preset else DEFAULT_TFLOPS)
    if o.precision.startswith("fp8") and preset is not None and preset.fp8_tflops is None:
        raise PlanError(f"--precision {o.precision}: {preset.name} has no FP8 tensor cores")
    ft = _finetune(o)
    problem = shape_problem(shape)
    if problem:
        raise PlanError(f"model shape: {problem}")
    seq = o.seq_len or min(shape.max_seq_len or 2048, 8192)
    mem_bytes = _parsed(gpu_memory, parse_bytes, "gpu-memory")
    overhead_bytes = _parsed(o.overhead, parse_bytes, "overhead")
    host_bytes = _parsed(o.host_memory, parse_bytes, "host-memory")
    nvme_gbps = _parsed(o.nvme_bandwidth, parse_gbps, "nvme-bandwidth")
    head = _fraction(o.headroom, "headroom") if o.headroom.strip() not in ("0", "0%") else 0.0
    pcie_link = _link(o.pcie or (preset.pcie if preset else "pcie5"), None, "pcie")
    intra = _link(interconnect, o.bandwidth_intra, "intra")
    inter = _link(o.inter_node or DEFAULT_INTER, o.bandwidth_inter, "inter")
    notes: list[str] = []
    measured_from: list[str] = []
    if shape.shape_note:
        notes.append(shape.shape_note)
    if o.seq_len is None:
        notes.append(f"--seq-len not given: {seq} tokens assumed")
    if o.measured_text is not None:
        cal = _calibrate(o)
        notes.extend(cal.notes)
        # Explicit --bandwidth-* and --tflops options win over the measurement.
        intra = cal.intra if cal.intra is not None and o.bandwidth_intra is None else intra
        inter = cal.inter if cal.inter is not None and o.bandwidth_inter is None else inter
        tflops = cal.tflops if cal.tflops is not None and o.tflops is None else tflops
        measured_from = [
            k for k, v in (("intra", intra), ("inter", inter), ("tflops", tflops)) if v is getattr(cal, k)
        ]
    fabric = Fabric(o.gpus_per_node, o.nodes, intra, inter, o.nics_per_node)
    mi = MemoryInput(
        shape=shape,
        precision=PRECISIONS[o.precision],
        optimizer=OPTIMIZERS[o.optimizer],
        seq_len=seq,
        micro_batch=o.micro_batch or 1,
        recompute="none" if o.recompute == "search" else o.recompute,
        flash_attention=o.flash_attention,
        overhead_bytes=overhead_bytes,
        ddp_bucket_view=o.ddp_bucket_view,
        finetune=ft,
        offload=o.offload,
        moe=moe,
        schedule=o.schedule,
        sequence_parallel=o.sequence_parallel,
        virtual_stages=o.virtual_stages if o.schedule == "interleaved" else 1,
    )
    inp = PlanInput(
        mi,
        fabric,
        mem_bytes,
        o.global_batch,
        tflops,
        o.tp,
        o.pp,
        o.zero,
        recompute_options=RECOMPUTE if o.recompute == "search" else (),
        micro_batch_options=(1, 2, 4, 8) if o.micro_batch is None and o.global_batch is not None else (),
        headroom=TIGHT_FRACTION if head is None else head,
        host_memory_bytes=host_bytes,
        pcie=pcie_link,
        offload_device=o.offload_device,
        nvme_gbps=nvme_gbps,
        ep=o.ep,
        cp=o.cp,
        cpu_optimizer_rate=o.cpu_optimizer_rate,
    )
    return inp, shape, moe, ft, notes, measured_from


def largest(o: PlanOptions) -> LargestResult:
    """`--largest-model`: the parameter count is searched, so no count or config may be given."""
    if o.model.params is not None or o.model.config_path is not None:
        raise PlanError("--largest-model searches the parameter count: give no --params or --model")
    from pgdoctor.plan.largest import largest_models
    from pgdoctor.plan.layouts import candidates

    # 7B is the probe's starting shape; the count is searched.
    o = dataclasses.replace(o, model=dataclasses.replace(o.model, params="7B"))
    inp = planner_input(o)[0]
    overrides = {k: v for k, v in o.model.overrides().items() if v}
    return LargestResult(inp, largest_models(inp, candidates(inp), overrides))


def run_plan(o: PlanOptions) -> PlanResult:
    """Plan one model: every valid layout, best first, with the findings about the best."""
    from pgdoctor.checks import load_all
    from pgdoctor.plan.advice import alternatives, explain
    from pgdoctor.plan.console import bytes_per_param
    from pgdoctor.plan.findings import plan_findings

    inp, shape, moe, ft, notes, measured_from = planner_input(o)
    fabric = inp.fabric
    layouts = plan(inp)
    if not layouts:
        raise PlanError(
            f"no valid layout of {fabric.gpus} GPUs with tp={o.tp or 'any'} pp={o.pp or 'any'} zero="
            f"{'any' if o.zero is None else o.zero} for {shape.heads} heads and {shape.layers} layers "
            "(tp must divide the heads and fit in a node or span whole nodes; ZeRO-2/3 not with pp>1)"
        )
    load_all()
    fabric_label = f"({fabric.intra.name} inside nodes, {fabric.inter.name} x{fabric.nics_per_node} between)"
    fits_from = None
    if not layouts[0].fits and o.tp is None and o.pp is None and o.zero is None:
        from pgdoctor.plan.layouts import smallest_fit

        fits_from = smallest_fit(inp)
    findings = plan_findings(
        layouts, o.gpus_per_node, layouts[0].micro_batch, o.global_batch, fabric_label, fits_from
    )
    why = explain(layouts, inp) if layouts[0].fits else alternatives(inp, fits_from)
    return PlanResult(
        o,
        shape,
        moe,
        inp.memory.seq_len,
        fabric,
        inp,
        ft,
        layouts,
        findings,
        notes,
        measured_from,
        bytes_per_param(inp.memory),
        why,
        fits_from,
    )
