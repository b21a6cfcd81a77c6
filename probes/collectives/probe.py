"""Collective bandwidth, latency and correctness through the job's own torch.distributed.

None at --level quick; a short sweep (every 8th size, few iterations) at standard; the full
doubling sweep at full. Inside torchrun/srun this process is one rank of the launcher's world;
otherwise it spawns `--nproc` local ranks (default: one per visible GPU; on a host without GPUs
only when --nproc is given). A hang or a dead rank is a measurement (collectives.problems),
not a probe failure, so the checks can name the ranks.
"""

from __future__ import annotations

from pgdoctor.model import Measurement, Reason
from pgdoctor.probes.base import ProbeContext, ProbeUnavailable, probe

# Time the probe leaves itself to merge and report after the ranks' deadline.
_MARGIN_S = 5.0


@probe("collectives", area="collectives", level="standard", timeout_s=900.0)
def collectives(ctx: ProbeContext) -> list[Measurement]:
    from pgdoctor.knowledge.collectives import SweepSpec, preset
    from pgdoctor.probes.collectives.launch import choose_backend, gpu_count, launched, run_collectives

    nproc = ctx.options.get("nproc")
    requested = str(ctx.options.get("backend") or "auto")
    in_launcher = nproc is None and launched(ctx.env)
    from pgdoctor.probes.torch_import import import_distributed

    import_distributed(ctx.env)  # ProbeUnavailable with the reason when torch cannot be imported
    gpus = gpu_count()
    if nproc is None and not in_launcher:
        if gpus == 0:
            raise ProbeUnavailable(
                Reason.NOT_REQUESTED, "no GPU visible and no launcher; --nproc N runs N local gloo ranks"
            )
        nproc = gpus
    backend = choose_backend(requested, gpus)
    if backend == "nccl" and gpus == 0:
        raise ProbeUnavailable(Reason.NOT_PRESENT, "--backend nccl needs a visible GPU")
    base = preset(ctx.level, backend == "nccl")
    if base is None:
        raise ProbeUnavailable(Reason.NOT_REQUESTED, f"no collective sweep at --level {ctx.level}")
    op_timeout = float(ctx.options.get("collective_timeout_s") or base.op_timeout_s)
    spec = SweepSpec(
        **{
            **base.__dict__,
            "backend": backend,
            "op_timeout_s": op_timeout,
            "init_timeout_s": max(op_timeout, base.init_timeout_s),
        }
    )
    budget = ctx.options.get("timeout_s")
    deadline = max(1.0, float(budget) - _MARGIN_S) if budget else None
    try:
        run = run_collectives(spec, ctx.env, nproc, deadline)
    except ValueError as exc:
        raise ProbeUnavailable(Reason.ERROR, str(exc)) from None
    return run.to_measurements()
