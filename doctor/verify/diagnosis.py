"""Why a data-parallel run (DDP, FSDP) is not the training of one process: targeted evidence
from the ranks' own records, in a fixed order, never a guess.

1. a rank that did not finish (crash, hang) or raised: DDP's own error is quoted;
2. requires_grad differs across ranks (frozen on some ranks only);
3. parameters without a gradient on a rank that the reference gives one (unused parameters);
4. identical sample hashes on every rank (no DistributedSampler), whatever the numbers say;
then, when the comparison with the reference diverges:
5. BatchNorm modules that are not SyncBatchNorm, named;
6. micro-batch sizes that differ across ranks at a step (with a mean loss);
7. the reference's gradients are the world size times DDP's (a loss with reduction `sum`);
8. the seeded probe forward differs across ranks (forward depends on the rank);
9. buffers that differ across ranks after a step;
10. none of these: the caller re-runs both sides in eval mode (dropout off, torch's RNG out
    of the forward); equivalent then means the difference was the model's randomness.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from pgdoctor.checks.codes import verify as codes
from pgdoctor.model import Finding
from pgdoctor.verify.compare import Comparison, close, compare, grad_ratio, tolerance_text
from pgdoctor.verify.launch import Run, tail

UNUSED_MARKERS = ("did not receive grad", "Expected to have finished reduction", "find_unused_parameters")


@dataclass
class Diagnosis:
    findings: list[Finding] = field(default_factory=list)
    cause: Optional[str] = None
    first: Optional[dict[str, Any]] = None
    comparison: Optional[Comparison] = None
    tolerance: str = ""
    rerun_eval: bool = False  # nothing explains the divergence: try without randomness
    losses: dict[str, list[float]] = field(default_factory=dict)  # reference, distributed (mean over ranks)


def losses(ref: dict[str, Any], ranks: Sequence[dict[str, Any]]) -> dict[str, list[float]]:
    dist = [[rec["loss"] for rec in r.get("steps", []) if "loss" in rec] for r in ranks]
    dist = [d for d in dist if d]
    per_step = [sum(v) / len(v) for v in zip(*dist)] if dist else []
    return {"reference": [rec["loss"] for rec in ref.get("steps", [])], "distributed": per_step}


def _first(name: str, step: int) -> dict[str, Any]:
    return {"param": name, "step": step}


def where(cmp: Comparison) -> str:
    f = cmp.first
    if f is None:
        return ""
    what = {"grads": "gradient", "params": "parameter after the optimizer step", "buffers": "buffer",
            "output": "output"}.get(f.kind, f.kind)
    if f.abs_diff == float("inf"):
        return f"first divergent: {f.name} ({what}) at step {f.step}: present on one side only"
    return (f"first divergent: {f.name} ({what}) at step {f.step}: max abs diff {f.abs_diff:.3g}, "
            f"max rel diff {f.rel_diff:.3g}")


def _facts(cmp: Optional[Comparison], world: int, steps: int, tol: str, **more: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"world_size": world, "steps": steps, "tolerance": tol}
    if cmp is not None and cmp.first is not None:
        out.update(first_divergent_param=cmp.first.name, first_divergent_step=cmp.first.step,
                   first_divergent_kind=cmp.first.kind)
    if cmp is not None:
        out.update(max_abs_diff=cmp.max_abs, max_rel_diff=cmp.max_rel)
    return out | more


def diagnose_data_parallel(run: Run, world: int, steps: int, strategy: str, eval_mode: bool = False) -> Diagnosis:
    ref = run.reference or {}
    ranks = list(run.ranks)
    setup: dict[str, Any] = ref.get("setup") or next((r["setup"] for r in ranks if r.get("setup")), {})
    dtype = setup.get("dtype", "float32")
    order = setup.get("params", []) + setup.get("buffers", [])
    tol = tolerance_text(dtype, world, steps)
    dg = Diagnosis(tolerance=tol)
    facts = lambda cmp=None, **k: _facts(cmp, world, steps, tol, strategy=strategy, **k)  # noqa: E731

    # 1. Processes that did not finish.
    if not ref.get("steps") and steps:
        o = run.outcomes[0]
        why = "was killed at the deadline" if o.timed_out else f"exited with {o.returncode}"
        dg.findings.append(codes.NOT_EQUIVALENT.finding(
            f"the one-process reference {why} before training: {tail(o.stderr, 3) or 'no output'}",
            facts=facts(stderr=tail(o.stderr))))
        dg.cause = "reference_failed"
        return dg
    errors = {r: res["error"] for r, res in enumerate(ranks) if res.get("error")}
    silent = [r for r, res in enumerate(ranks) if not res or (len(res.get("steps", [])) < steps and r not in errors)]

    # 2. Frozen on some ranks only.
    flags = [res.get("setup", {}).get("requires_grad", {}) for res in ranks if res.get("setup")]
    frozen = sorted({n for f in flags for n in f if len({g.get(n) for g in flags}) > 1},
                    key=lambda n: order.index(n) if n in order else len(order))
    if frozen:
        on = {n: [r for r, res in enumerate(ranks) if not res.get("setup", {}).get("requires_grad", {}).get(n, True)]
              for n in frozen}
        ddp = next(iter(errors.values()), None)
        msg = (f"{len(frozen)} parameter(s) are frozen on some ranks only: "
               + "; ".join(f"{n} on rank(s) {', '.join(map(str, on[n]))}" for n in frozen[:6])
               + (f". {strategy.upper()} raised: {ddp['type']}: {_short(ddp['message'])}" if ddp else ""))
        dg.findings.append(codes.FROZEN_ON_SOME_RANKS.finding(msg, facts=facts(params=frozen, frozen_on=on,
                                                                               error=ddp and ddp["message"][:600])))
        dg.cause, dg.first = "params_frozen_on_some_ranks", _first(frozen[0], 0)
        return dg

    # 3. Unused parameters (DDP's error, or a rank without a gradient the reference has).
    unused: dict[str, list[int]] = {}
    for r, res in enumerate(ranks):
        for rec in res.get("steps", []):
            ref_grads = ref["steps"][rec["step"]].get("grads", {}) if rec["step"] < len(ref["steps"]) else {}
            for n in rec.get("no_grad", []):
                if n in ref_grads and r not in unused.setdefault(n, []):
                    unused[n].append(r)
    unused = {n: rs for n, rs in unused.items() if rs}
    ddp_err = next((e for e in errors.values() if any(m in e["message"] for m in UNUSED_MARKERS)), None)
    if unused or ddp_err:
        names = sorted(unused, key=lambda n: order.index(n) if n in order else len(order))
        msg = ("parameters get no gradient on some ranks: "
               + ("; ".join(f"{n} on rank(s) {', '.join(map(str, unused[n]))}" for n in names[:6]) or "see DDP's error")
               + (f". DDP raised: {_short(ddp_err['message'])}" if ddp_err else ""))
        dg.findings.append(codes.UNUSED_PARAMETERS.finding(
            msg, facts=facts(params=names, ranks_without_grad=unused, error=ddp_err and ddp_err["message"][:1500])))
        dg.cause, dg.first = "unused_parameters", _first(names[0] if names else "", 0)
        return dg
    if errors or silent:
        lines = [f"rank {r} raised {e['type']} at step {e['step']} ({e['phase']}): {_short(e['message'])}"
                 for r, e in sorted(errors.items())]
        for r in silent:
            o = run.rank_outcome(r)
            lines.append(f"rank {r} {'was killed at the deadline' if o.timed_out else f'exited with {o.returncode}'}"
                         f"{': ' + tail(o.stderr, 2) if o.stderr.strip() else ''}")
        dg.findings.append(codes.NOT_EQUIVALENT.finding("the distributed run did not finish: " + "; ".join(lines),
                                                        facts=facts(errors=errors, unfinished=silent)))
        dg.cause = "rank_failed"
        return dg

    # 4. Identical samples on every rank.
    same = [rec_steps for rec_steps in zip(*(res["steps"] for res in ranks))
            if world > 1 and len({rec["hash"] for rec in rec_steps}) == 1]
    if same:
        dg.findings.append(codes.IDENTICAL_SAMPLES.finding(
            f"every rank trained on the same samples at {len(same)} of {steps} step(s) (sample hash "
            f"{same[0][0]['hash']} on all {world} ranks): the data is not sharded, the run does 1/{world} of "
            "the work it pays for (a DistributedSampler, or data(rank, world_size, step) that uses rank)",
            facts=facts(hashes=[[rec["hash"] for rec in s] for s in same])))
        dg.cause, dg.first = "identical_samples", None

    # Compare rank 0 against the reference; and the ranks against each other.
    dg.losses = losses(ref, ranks)
    cmp = compare(ref["steps"], ranks[0]["steps"], order, dtype)
    dg.comparison = cmp
    drift = _cross_rank(ranks, "buffers", dtype)
    if cmp.equivalent and not drift:
        return dg
    if dg.cause:
        return dg
    f = cmp.first
    first = _first(f.name, f.step) if f else None
    div = where(cmp) if f else ""

    bn = setup.get("batchnorm", [])
    sizes = [[rec["batch"] for rec in s] for s in zip(*(res["steps"] for res in ranks))]
    ratio = grad_ratio(ref["steps"][0].get("grads", {}), ranks[0]["steps"][0].get("grads", {})) if ref["steps"] else None
    probes = [res.get("probe", []) for res in ranks]
    if bn and not eval_mode:
        dg.findings.append(codes.BATCHNORM_NOT_SYNCED.finding(
            f"{div}. {len(bn)} BatchNorm module(s) normalise each rank's micro-batch with its own statistics "
            f"instead of the global batch's: {', '.join(bn[:8])}; convert with "
            "torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)", facts=facts(cmp, modules=bn)))
        dg.cause = "batchnorm_not_synced"
    elif any(len(set(s)) > 1 for s in sizes):
        at = next(i for i, s in enumerate(sizes) if len(set(s)) > 1)
        dg.findings.append(codes.UNEQUAL_MICRO_BATCHES.finding(
            f"{div}. At step {at} the ranks' micro-batches hold {', '.join(map(str, sizes[at]))} samples: DDP "
            "averages the ranks' mean losses with equal weight, so a sample on a small micro-batch counts more "
            "than one on a large one (drop_last=True, or pad and weight the loss by samples)",
            facts=facts(cmp, batch_sizes=sizes, reduction=setup.get("reduction"))))
        dg.cause = "unequal_micro_batches"
    elif ratio is not None and abs(ratio - world) <= 1e-3 * world:
        dg.findings.append(codes.LOSS_REDUCTION_SUM.finding(
            f"{div}. The reference's gradients are {ratio:.4f} x the distributed ones, the world size {world}: "
            f"the loss sums over samples (reduction {setup.get('reduction') or 'sum'!r}) and DDP averages "
            "over ranks; use reduction='mean' (or scale the loss by 1/global batch)",
            facts=facts(cmp, grad_ratio=ratio, reduction=setup.get("reduction"))))
        dg.cause = "loss_reduction_sum"
    elif any(not close(p, probes[0], dtype) for p in probes[1:]):
        r = next(i for i, p in enumerate(probes) if not close(p, probes[0], dtype))
        dg.findings.append(codes.RANK_DEPENDENT_FORWARD.finding(
            f"{div}. The same input through the same initial weights, with torch's RNG seeded alike, gives a "
            f"different output on rank {r} than on rank 0: the forward reads the rank (torch.distributed."
            "get_rank(), RANK, a rank-seeded generator)", facts=facts(cmp, differing_rank=r)))
        dg.cause = "rank_dependent_forward"
    elif drift:
        dg.findings.append(codes.BUFFERS_DRIFT.finding(
            (f"{div}. " if div else "") + "buffers differ across ranks after the optimizer step: "
            + "; ".join(f"{n} (rank {r} vs rank 0 from step {s})" for n, (s, r) in _first_drift(drift)[:6])
            + ": each rank updates them from its own data and nothing synchronises them",
            facts=facts(cmp, buffers=sorted({n for _, n, _ in drift}))))
        dg.cause = "buffers_drift"
        first = first or _first(drift[0][1], drift[0][0])
    else:
        dg.rerun_eval = not eval_mode
        if eval_mode:
            dg.findings.append(codes.NOT_EQUIVALENT.finding(
                f"{div}; in eval mode too, and none of the known causes shows (BatchNorm, sum loss, unequal or "
                "identical micro-batches, unused or partly frozen parameters, rank-dependent forward, drifting "
                "buffers)", facts=facts(cmp)))
        dg.cause = None
    dg.first = first
    return dg


def _cross_rank(ranks: Sequence[dict[str, Any]], kind: str, dtype: str) -> list[tuple[int, str, int]]:
    out = []
    for s, recs in enumerate(zip(*(res["steps"] for res in ranks))):
        base = recs[0].get(kind, {})
        for r, rec in enumerate(recs[1:], start=1):
            for n, v in rec.get(kind, {}).items():
                if n in base and not close(v, base[n], dtype, s):
                    out.append((s, n, r))
    return out


def _first_drift(drift: Sequence[tuple[int, str, int]]) -> list[tuple[str, tuple[int, int]]]:
    first: dict[str, tuple[int, int]] = {}
    for s, n, r in drift:
        first.setdefault(n, (s, r))
    return list(first.items())


def _short(text: str, n: int = 400) -> str:
    first = " ".join(text.split())
    return first if len(first) <= n else first[: n - 3] + "..."
