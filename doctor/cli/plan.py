"""`pgdoctor plan`: memory and communication per GPU for every dp x tp x pp x ZeRO layout."""

from __future__ import annotations

import os
import sys
from typing import Optional

import click

from pgdoctor.cli import FiniteFloat, NamedPath
from pgdoctor.engine.errors import UserError
from pgdoctor.knowledge.gpus import GPUS
from pgdoctor.knowledge.interconnects import DEFAULT_INTER, DEFAULT_INTRA, PRESETS
from pgdoctor.model import Report, Severity, exit_code
from pgdoctor.plan.comm import SCHEDULES
from pgdoctor.plan.finetune import BASE_WEIGHTS
from pgdoctor.plan.layouts import DEFAULT_TFLOPS
from pgdoctor.plan.memory import OPTIMIZERS, PRECISIONS, RECOMPUTE
from pgdoctor.plan.offload import DEVICES, OFFLOADS


def _read_text(path: str, what: str) -> str:
    from pgdoctor.probes.files import InputError, read_text_input

    try:
        return read_text_input(path, what)
    except InputError as exc:
        raise UserError(str(exc)) from None


# Shapes and counts past any real cluster or model are typos (or attacks): a layer count of
# 10**20 made the planner spin. Each integer option is bounded by this.
MAX_COUNT = 1 << 20
# The planner walks layers one by one (stages, gathered buffers); the deepest real models have
# a few hundred.
MAX_LAYERS = 4096


@click.command("plan")
@click.option("--params", default=None, metavar="COUNT", help="Parameter count: 7B, 1.3B, 125M.")
@click.option(
    "--model",
    "model_path",
    type=NamedPath(dir_okay=False),
    default=None,
    help="A Hugging Face config.json instead of --params.",
)
@click.option(
    "--layers",
    type=click.IntRange(min=1, max=MAX_LAYERS),
    default=None,
    help="Override the number of layers.",
)
@click.option(
    "--hidden", type=click.IntRange(min=1, max=MAX_COUNT), default=None, help="Override the hidden size."
)
@click.option(
    "--heads", type=click.IntRange(min=1, max=MAX_COUNT), default=None, help="Override the attention heads."
)
@click.option(
    "--vocab", type=click.IntRange(min=1, max=MAX_COUNT), default=None, help="Override the vocabulary size."
)
@click.option(
    "--kv-heads",
    type=click.IntRange(min=1, max=MAX_COUNT),
    default=None,
    help="Key/value heads (grouped-query attention).",
)
@click.option(
    "--gpu",
    type=click.Choice(sorted(GPUS)),
    default=None,
    help="GPU preset: memory, achieved TFLOP/s and links (each overridable).",
)
@click.option(
    "--gpus-per-node",
    type=click.IntRange(min=1, max=1024),
    default=8,
    show_default=True,
    help="GPUs sharing the intra-node link (an NVLink domain).",
)
@click.option("--nodes", type=click.IntRange(min=1, max=65536), default=1, show_default=True)
@click.option(
    "--gpu-memory",
    default=None,
    metavar="SIZE",
    help="Memory per GPU: 80GiB, 80GB, 24GiB [default: the --gpu preset's].",
)
@click.option("--precision", type=click.Choice(sorted(PRECISIONS)), default="bf16-mixed", show_default=True)
@click.option("--optimizer", type=click.Choice(sorted(OPTIMIZERS)), default="adamw", show_default=True)
@click.option(
    "--seq-len",
    type=click.IntRange(min=1, max=MAX_COUNT),
    default=None,
    help="Tokens per sequence [default: the config's maximum up to 8192, else 2048].",
)
@click.option(
    "--micro-batch",
    type=click.IntRange(min=1, max=MAX_COUNT),
    default=None,
    help="Sequences per micro-batch [default: searched over 1, 2, 4, 8 with --global-batch, else 1].",
)
@click.option(
    "--global-batch",
    type=click.IntRange(min=1, max=MAX_COUNT),
    default=None,
    help="Sequences per optimizer step (gradient accumulation follows).",
)
@click.option(
    "--recompute",
    type=click.Choice([*RECOMPUTE, "search"]),
    default="search",
    show_default=True,
    help="Activation checkpointing; search tries none, selective and full for every layout.",
)
@click.option(
    "--headroom",
    default="5%",
    show_default=True,
    metavar="PCT",
    help="Free GPU memory a layout needs to be recommended.",
)
@click.option(
    "--trainable", default=None, metavar="PCT", help="Fine-tuning: share of parameters that train (0.5%)."
)
@click.option(
    "--lora-rank",
    type=click.IntRange(min=1, max=MAX_COUNT),
    default=None,
    help="Fine-tuning with LoRA adapters of rank R.",
)
@click.option(
    "--lora-targets",
    default=None,
    metavar="LIST",
    help="Projections with adapters: attn, mlp, all, or q,k,v,o,gate,up,down [default: attn,mlp].",
)
@click.option(
    "--base-weights",
    type=click.Choice(BASE_WEIGHTS),
    default="16bit",
    show_default=True,
    help="Storage of the frozen base under LoRA (nf4: QLoRA).",
)
@click.option(
    "--offload",
    type=click.Choice(OFFLOADS),
    default="none",
    show_default=True,
    help="ZeRO-Offload / ZeRO-Infinity / FSDP CPU offload of the optimizer (and parameters).",
)
@click.option("--offload-device", type=click.Choice(DEVICES), default="cpu", show_default=True)
@click.option(
    "--host-memory", default=None, metavar="SIZE", help="Host memory per node, checked when offloading."
)
@click.option(
    "--pcie", default=None, metavar="PRESET", help="GPU-host link [default: the --gpu preset's, else pcie5]."
)
@click.option(
    "--cpu-optimizer-rate",
    type=FiniteFloat(min=1.0, max=1e15),
    default=1e9,
    show_default=True,
    metavar="PARAMS/S",
    help="Offload: parameters the host's optimizer step updates per second per node.",
)
@click.option(
    "--nvme-bandwidth",
    default="25",
    show_default=True,
    metavar="GB/s",
    help="NVMe read/write bandwidth per node (--offload-device nvme).",
)
@click.option(
    "--no-flash-attention", is_flag=True, help="Attention stores the s x s scores (eager attention)."
)
@click.option(
    "--interconnect",
    default=None,
    metavar="PRESET",
    help=f"Link between GPUs of a node: {', '.join(PRESETS)} [default: the --gpu preset's, else "
    f"{DEFAULT_INTRA}].",
)
@click.option(
    "--inter-node",
    default=DEFAULT_INTER,
    show_default=True,
    metavar="PRESET",
    help="Link between nodes, per NIC (same presets).",
)
@click.option(
    "--nics-per-node",
    type=click.IntRange(min=1, max=MAX_COUNT),
    default=1,
    show_default=True,
    help="NICs a node uses for collectives (8 on rail-optimised DGX/HGX).",
)
@click.option("--bandwidth-intra", default=None, metavar="GB/s", help="Measured intra-node busbw.")
@click.option("--bandwidth-inter", default=None, metavar="GB/s", help="Measured inter-node busbw per NIC.")
@click.option(
    "--from",
    "from_path",
    type=NamedPath(dir_okay=False),
    default=None,
    help="Measured bandwidth (and TFLOP/s) from a pgdoctor snapshot or a `bench scaling --json` result.",
)
@click.option(
    "--tp",
    type=click.IntRange(min=1, max=MAX_COUNT),
    default=None,
    help="Only layouts with this tensor parallelism.",
)
@click.option(
    "--pp",
    type=click.IntRange(min=1, max=MAX_COUNT),
    default=None,
    help="Only layouts with this pipeline depth.",
)
@click.option("--zero", type=click.IntRange(0, 3), default=None, help="Only layouts with this ZeRO stage.")
@click.option(
    "--no-sequence-parallel",
    is_flag=True,
    help="Tensor parallelism without sequence parallelism (norms and dropouts replicated).",
)
@click.option(
    "--schedule",
    type=click.Choice(SCHEDULES),
    default="1f1b",
    show_default=True,
    help="Pipeline schedule: 1F1B, interleaved 1F1B (--virtual-stages), zero-bubble ZB-H1/ZB-H2.",
)
@click.option(
    "--virtual-stages",
    type=click.IntRange(min=1, max=MAX_COUNT),
    default=2,
    show_default=True,
    help="Model chunks per pipeline stage for --schedule interleaved.",
)
@click.option(
    "--cp",
    type=click.IntRange(min=1, max=MAX_COUNT),
    default=None,
    help="Context parallelism (ring attention) [default: searched from 16K tokens per sequence].",
)
@click.option(
    "--ep",
    type=click.IntRange(min=1, max=MAX_COUNT),
    default=None,
    help="Mixture of experts: only layouts with this expert parallelism.",
)
@click.option(
    "--capacity-factor",
    type=FiniteFloat(min=0.01),
    default=1.0,
    show_default=True,
    help="Mixture of experts: tokens an expert accepts, relative to an even split.",
)
@click.option(
    "--tflops",
    type=FiniteFloat(min=1e-6),
    default=None,
    help=f"Achieved (not peak) TFLOP/s per GPU [default: 40% of the --gpu preset's peak, else "
    f"{DEFAULT_TFLOPS:g}].",
)
@click.option(
    "--overhead",
    default="2GiB",
    show_default=True,
    metavar="SIZE",
    help="Fixed memory per GPU: CUDA context, NCCL buffers, allocator slack.",
)
@click.option("--ddp-bucket-view", is_flag=True, help="The job uses DDP(gradient_as_bucket_view=True).")
@click.option(
    "--largest-model",
    is_flag=True,
    help="Instead of --params: the largest LLaMA-style model each layout fits (ZeRO paper, Table 2).",
)
@click.option(
    "--top", type=click.IntRange(min=1, max=MAX_COUNT), default=10, show_default=True, help="Rows shown."
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
@click.option("--fail-on", type=click.Choice(["warn", "fail"]), default="fail", show_default=True)
@click.option("--exit-zero", is_flag=True, help="Always exit 0.")
def plan_cmd(
    params: Optional[str],
    model_path: Optional[str],
    layers: Optional[int],
    hidden: Optional[int],
    heads: Optional[int],
    vocab: Optional[int],
    kv_heads: Optional[int],
    gpu: Optional[str],
    gpus_per_node: int,
    nodes: int,
    gpu_memory: Optional[str],
    precision: str,
    optimizer: str,
    seq_len: Optional[int],
    micro_batch: Optional[int],
    global_batch: Optional[int],
    recompute: str,
    headroom: str,
    trainable: Optional[str],
    lora_rank: Optional[int],
    lora_targets: Optional[str],
    base_weights: str,
    offload: str,
    offload_device: str,
    host_memory: Optional[str],
    pcie: Optional[str],
    cpu_optimizer_rate: float,
    nvme_bandwidth: str,
    no_flash_attention: bool,
    interconnect: Optional[str],
    inter_node: str,
    nics_per_node: int,
    bandwidth_intra: Optional[str],
    bandwidth_inter: Optional[str],
    from_path: Optional[str],
    tp: Optional[int],
    pp: Optional[int],
    zero: Optional[int],
    no_sequence_parallel: bool,
    schedule: str,
    virtual_stages: int,
    cp: Optional[int],
    ep: Optional[int],
    capacity_factor: float,
    tflops: Optional[float],
    overhead: str,
    ddp_bucket_view: bool,
    largest_model: bool,
    top: int,
    as_json: bool,
    fail_on: str,
    exit_zero: bool,
) -> None:
    """Predict memory and communication time per GPU for dp x tp x pp x ZeRO layouts."""
    from pgdoctor.plan.options import ModelSource, PlanError, PlanOptions
    from pgdoctor.plan.run import largest, run_plan

    config_text = None
    if model_path is not None and params is None:
        from pgdoctor.probes.files import read_text_input

        try:
            config_text = read_text_input(model_path, "model config", 16 << 20)
        except ValueError as exc:  # InputError is a ValueError
            raise UserError(str(exc)) from None
    measured_text = _read_text(from_path, "snapshot or bench scaling result") if from_path else None
    try:
        options = PlanOptions(
            model=ModelSource(
                params=params,
                config_path=model_path,
                config_text=config_text,
                layers=layers,
                hidden=hidden,
                heads=heads,
                vocab=vocab,
                kv_heads=kv_heads,
            ),
            gpu=gpu,
            gpus_per_node=gpus_per_node,
            nodes=nodes,
            gpu_memory=gpu_memory,
            precision=precision,
            optimizer=optimizer,
            seq_len=seq_len,
            micro_batch=micro_batch,
            global_batch=global_batch,
            recompute=recompute,
            headroom=headroom,
            trainable=trainable,
            lora_rank=lora_rank,
            lora_targets=lora_targets,
            base_weights=base_weights,
            offload=offload,
            offload_device=offload_device,
            host_memory=host_memory,
            pcie=pcie,
            cpu_optimizer_rate=cpu_optimizer_rate,
            nvme_bandwidth=nvme_bandwidth,
            flash_attention=not no_flash_attention,
            interconnect=interconnect,
            inter_node=inter_node,
            nics_per_node=nics_per_node,
            bandwidth_intra=bandwidth_intra,
            bandwidth_inter=bandwidth_inter,
            measured_text=measured_text,
            measured_path=from_path,
            tp=tp,
            pp=pp,
            zero=zero,
            sequence_parallel=not no_sequence_parallel,
            schedule=schedule,
            virtual_stages=virtual_stages,
            cp=cp,
            ep=ep,
            capacity_factor=capacity_factor,
            tflops=tflops,
            overhead=overhead,
            ddp_bucket_view=ddp_bucket_view,
            largest_model=largest_model,
        )
        if largest_model:
            found = largest(options)
            if as_json:
                from pgdoctor.model import numbers

                click.echo(numbers.dumps(found.to_json(), indent=1))  # never NaN or Infinity
            else:
                from pgdoctor.plan.console import print_largest

                print_largest(found, top, sys.stdout)
            return
        result = run_plan(options)
    except PlanError as exc:
        raise UserError(str(exc)) from None
    report = Report(
        command="plan",
        snapshot=None,
        findings=tuple(result.findings),
        meta={"host": "", "from": from_path},
        extra={"plan": result.to_json()},
        fail_on=Severity(fail_on),
    )
    from pgdoctor.render import get_renderer

    if as_json:
        get_renderer("json")(report, sys.stdout, False)
    else:
        from pgdoctor.plan.console import print_plan

        print_plan(result, top, sys.stdout)
        color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
        get_renderer("console")(report, sys.stdout, color)
    raise click.exceptions.Exit(exit_code(report, exit_zero))
