"""Why a data-parallel run (DDP, FSDP) is not the training of one process: an ordered list of
small detectors over the ranks' own records, each `(Context) -> Cause or None`; the first that
answers names the cause, never a guess.

Before any comparison (what the records say whatever the numbers are):
1. the one-process reference did not train;
2. the ranks built different models (parameter names or shapes differ; under fsdp, the initial
   weights, which fully_shard does not broadcast);
3. requires_grad differs across ranks (frozen on some ranks only);
4. a rank got an empty micro-batch;
5. a loss that is NaN or infinite (the reference's, or a rank's);
6. parameters without a gradient on a rank that the reference gives one (unused parameters);
7. a rank that did not finish (crash, hang) or raised: its own error is quoted;
8. identical sample hashes on every rank (no DistributedSampler);
then, when rank 0 diverges from the reference or buffers drift across ranks:
8b. the optimizer's settings differ between the reference and a rank (lr x world size);
8c. the optimizer's step scales each rank's gradients by another factor (a clipping norm taken from
    the rank's local shards; clipping.py);
9. BatchNorm modules that are not SyncBatchNorm, named;
10. micro-batch sizes that differ across ranks at a step (with a mean loss), or the targets a mean
    loss with ignore_index counts (padding);
11. the reference's gradients are the world size times DDP's (a loss with reduction `sum`, or a
    mean divided by the world size: the loss of a batch twice over tells which);
12. the seeded probe forward differs across ranks (forward depends on the rank);
13. buffers that differ across ranks after a step;
13b. a loss over the whole batch (in-batch negatives) that each rank computes over its own
    micro-batch: the output's batch dimension besides the first, or the loss's gradient on one
    rank's rows moved by the others' (coupling.py);
14. the reference's loss at step 0 between the ranks' but not their mean: a loss weighted by a count
    of its own micro-batch (a mask applied by hand; loss_weights.py);
equivalent, the ranks' mean loss against the reference's (a loss changed in place for logging, warn);
none of these: the caller re-runs both sides in eval mode (dropout off, torch's RNG out of the
forward); equivalent then means the difference was the model's randomness.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Callable, Optional

from pgdoctor.checks.codes import run5
from pgdoctor.checks.codes import verify as codes
from pgdoctor.verify.clipping import clip_local_shards
from pgdoctor.verify.compare import close, listed, rtol
from pgdoctor.verify.context import Cause, Context, _ranks
from pgdoctor.verify.coupling import in_batch_negatives, loss_couples_samples
from pgdoctor.verify.diagnosis import Diagnosis, _first, _short, losses
from pgdoctor.verify.launch import Run, tail
from pgdoctor.verify.loss_weights import unequal_loss_weights

UNUSED_MARKERS = ("did not receive grad", "Expected to have finished reduction", "find_unused_parameters")


# -- before any comparison ---------------------------------------------------------------------


def reference_failed(ctx: Context) -> Optional[Cause]:
    if ctx.ref.get("steps") or not ctx.steps:
        return None
    o = ctx.run.outcomes[0]
    why = "was killed at the deadline" if o.timed_out else f"exited with {o.returncode}"
    return Cause(
        codes.NOT_EQUIVALENT.finding(
            f"the one-process reference {why} before training: {tail(o.stderr, 3) or 'no output'}",
            facts=ctx.facts(stderr=tail(o.stderr)),
        ),
        "reference_failed",
    )


def models_differ(ctx: Context) -> Optional[Cause]:
    shapes = {r: res["setup"].get("shapes", {}) for r, res in enumerate(ctx.ranks) if res.get("setup")}
    if len(shapes) < 2:
        return None
    every = set().union(*(set(s) for s in shapes.values()))
    odd = {}
    for n in every:
        seen = {r: s.get(n) for r, s in shapes.items()}
        if len({tuple(v) if v is not None else None for v in seen.values()}) > 1:
            odd[n] = seen
    if not odd:
        return None
    names = ctx.rank_order(list(odd))

    def says(n: str) -> str:
        missing = [r for r, v in odd[n].items() if v is None]
        have = [r for r, v in odd[n].items() if v is not None]
        if missing:
            return f"{n} on rank(s) {_ranks(have)}, missing on rank(s) {_ranks(missing)}"
        return f"{n} has shape " + "; ".join(
            f"{list(v)} on rank {r}" for r, v in odd[n].items() if v is not None
        )

    err = next(iter(ctx.errors.values()), None)
    return Cause(
        codes.MODELS_DIFFER.finding(
            f"the ranks' models differ in {len(names)} parameter(s): "
            + "; ".join(says(n) for n in names[:6])
            + (f". {ctx.strategy.upper()} raised: {err['type']}: {_short(err['message'])}" if err else "")
            + ": build() must construct the same model on every rank (nothing that depends on the rank)",
            facts=ctx.facts(
                params=names,
                per_rank={n: {str(r): v for r, v in odd[n].items()} for n in names[:50]},
                error=err and err["message"][:600],
            ),
        ),
        "models_differ",
        _first(names[0], 0),
    )


def initial_weights_differ(ctx: Context) -> Optional[Cause]:
    """fsdp: the parameters as build() made them differ across ranks (a seed taken from the rank,
    or none); fully_shard broadcasts nothing, so each rank trains its shard of another model. Read
    before the probe, which would blame the forward for what the weights do."""
    inits: dict[int, dict[str, str]] = {}
    for r, res in enumerate(ctx.ranks):
        digests = res.get("setup", {}).get("init_digests")
        if digests:
            inits[r] = digests
    if len(inits) < 2:
        return None
    base = inits[min(inits)]
    odd = ctx.rank_order([n for n in base if any(d.get(n) != base[n] for d in inits.values())])
    if not odd:
        return None
    ranks = [r for r, d in inits.items() if any(d.get(n) != base[n] for n in odd)]
    return Cause(
        codes.MODELS_DIFFER.finding(
            f"the initial weights differ across ranks in {len(odd)} parameter(s) ({', '.join(odd[:6])}) "
            f"on rank(s) {_ranks(ranks)} against rank {min(inits)}: build() initialises each rank "
            "differently (a seed that depends on the rank, or none), and fully_shard, unlike DDP, "
            "broadcasts nothing, so each rank trains its shard of another model; seed alike on every "
            "rank, or broadcast rank 0's weights before sharding (FSDP1's sync_module_states=True, or "
            "torch.distributed.broadcast of each parameter)",
            facts=ctx.facts(params=odd, ranks=ranks),
        ),
        "initial_weights_differ",
        _first(odd[0], 0),
    )


def frozen_on_some_ranks(ctx: Context) -> Optional[Cause]:
    flags = {r: res["setup"].get("requires_grad", {}) for r, res in enumerate(ctx.ranks) if res.get("setup")}
    frozen = ctx.rank_order(
        [
            n
            for n in set().union(*(set(f) for f in flags.values()))
            if len({f.get(n) for f in flags.values()}) > 1
        ]
        if flags
        else []
    )
    if not frozen:
        return None
    on = {n: [r for r, f in flags.items() if not f.get(n, True)] for n in frozen}
    err = next(iter(ctx.errors.values()), None)
    msg = (
        f"{len(frozen)} parameter(s) are frozen on some ranks only: "
        + "; ".join(f"{n} on rank(s) {_ranks(on[n])}" for n in frozen[:6])
        + (f". {ctx.strategy.upper()} raised: {err['type']}: {_short(err['message'])}" if err else "")
    )
    return Cause(
        codes.FROZEN_ON_SOME_RANKS.finding(
            msg, facts=ctx.facts(params=frozen, frozen_on=on, error=err and err["message"][:600])
        ),
        "params_frozen_on_some_ranks",
        _first(frozen[0], 0),
    )


def empty_micro_batches(ctx: Context) -> Optional[Cause]:
    empty = [
        (s, r) for r, res in enumerate(ctx.ranks) for s, b in enumerate(res.get("batches", [])) if b == 0
    ]
    if not empty:
        return None
    steps = sorted({s for s, _ in empty})
    ranks = sorted({r for _, r in empty})
    return Cause(
        codes.EMPTY_MICRO_BATCH.finding(
            f"rank(s) {_ranks(ranks)} got an empty micro-batch at step(s) {_ranks(steps)}: data(rank, "
            f"world_size, "
            "step) gives them no samples (a dataset smaller than world size x batch, or a sampler that drops "
            "the "
            "remainder unevenly); under a mean loss an empty batch's loss is NaN and poisons DDP's averaged "
            "gradients",
            facts=ctx.facts(
                empty=[{"step": s, "rank": r} for s, r in empty],
                batch_sizes=[res.get("batches", []) for res in ctx.ranks],
            ),
        ),
        "empty_micro_batch",
    )


def _nonfinite(steps: Sequence[Any]) -> Optional[int]:
    return next((rec["step"] for rec in steps if "loss" in rec and not math.isfinite(rec["loss"])), None)


def loss_not_finite(ctx: Context) -> Optional[Cause]:
    at = _nonfinite(ctx.ref.get("steps", []))
    if at is not None:
        value = ctx.ref["steps"][at]["loss"]
        return Cause(
            codes.LOSS_NOT_FINITE.finding(
                f"the one-process reference's loss is {value} at step {at}: the training is broken before "
                f"any "
                "distribution (a learning rate too high, log of 0, a division by an empty count); "
                "equivalence "
                "cannot be judged on NaN",
                facts=ctx.facts(side="reference", step=at, loss=str(value)),
            ),
            "loss_not_finite",
            _first("<loss>", at),
        )
    bad = {r: s for r, res in enumerate(ctx.ranks) if (s := _nonfinite(res.get("steps", []))) is not None}
    if not bad:
        return None
    r0 = min(bad)
    return Cause(
        codes.LOSS_NOT_FINITE.finding(
            f"the loss is NaN or infinite on rank(s) {_ranks(sorted(bad))} (first at step {bad[r0]} on rank "
            f"{r0}) "
            "while the one-process reference's loss is finite: something in that rank's micro-batch or "
            "forward",
            facts=ctx.facts(side="ranks", first_step={str(r): s for r, s in bad.items()}),
        ),
        "loss_not_finite",
        _first("<loss>", bad[r0]),
    )


def unused_parameters(ctx: Context) -> Optional[Cause]:
    unused: dict[str, list[int]] = {}
    ref_steps = ctx.ref.get("steps", [])
    for r, res in enumerate(ctx.ranks):
        for rec in res.get("steps", []):
            s = rec["step"]
            ref_grads = set(ref_steps[s].get("names", {}).get("grads", [])) if s < len(ref_steps) else set()
            for n in rec.get("no_grad", []):
                if n in ref_grads and r not in unused.setdefault(n, []):
                    unused[n].append(r)
    unused = {n: rs for n, rs in unused.items() if rs}
    if not unused:
        # The reference may skip the same parameters (a data-dependent branch that the whole
        # batch does not take): the ranks' own records still name them, and the ranks.
        for r, res in enumerate(ctx.ranks):
            for rec in res.get("steps", []):
                for n in rec.get("no_grad", []):
                    if r not in unused.setdefault(n, []):
                        unused[n].append(r)
    err = next((e for e in ctx.errors.values() if any(m in e["message"] for m in UNUSED_MARKERS)), None)
    if not unused and not err:
        return None
    names = ctx.rank_order(list(unused))
    msg = (
        "parameters get no gradient on some ranks: "
        + ("; ".join(f"{n} on rank(s) {_ranks(unused[n])}" for n in names[:6]) or "see DDP's error")
        + (f". DDP raised: {_short(err['message'])}" if err else "")
    )
    return Cause(
        codes.UNUSED_PARAMETERS.finding(
            msg, facts=ctx.facts(params=names, ranks_without_grad=unused, error=err and err["message"][:1500])
        ),
        "unused_parameters",
        _first(names[0] if names else "", 0),
    )


# What a rank raises when a peer's process went away under a collective (gloo's pair, NCCL's
# proxy): a consequence of that peer's failure, never the first failure itself.
PEER_GONE = (
    "closed by peer",
    "reset by peer",
    "Broken pipe",
    "remote process exited",
    "communicator was aborted",
)


def _failure_order(ctx: Context, rank: int) -> tuple[bool, float, int]:
    """Sort key, the first failure first: a rank's own error or death before an error that only
    says a peer went away; then by when it happened, on the one monotonic clock of the machine
    (the rank's record of its error, else when its process was seen to end). Process ends alone
    cannot order them: the launcher polls, and two ranks that end within a poll tie."""
    err = ctx.errors.get(rank)
    if err is None:
        return (False, ctx.run.rank_outcome(rank).ended_at, rank)
    follows = any(m in err["message"] for m in PEER_GONE)
    return (follows, float(err.get("at", ctx.run.rank_outcome(rank).ended_at)), rank)


def rank_failed(ctx: Context) -> Optional[Cause]:
    if ctx.finished:
        return None
    said: dict[int, str] = {
        r: f"rank {r} raised {e['type']} at step {e['step']} ({e['phase']}): {_short(e['message'])}"
        for r, e in ctx.errors.items()
    }
    for r in ctx.silent:
        o = ctx.run.rank_outcome(r)
        said[r] = (
            f"rank {r} {'was killed at the deadline' if o.timed_out else f'exited with {o.returncode}'}"
            f"{': ' + tail(o.stderr, 2) if o.stderr.strip() else ''}"
        )
    order = sorted(said, key=lambda r: _failure_order(ctx, r))
    return Cause(
        codes.NOT_EQUIVALENT.finding(
            "the distributed run did not finish; the ranks in the order they ended, the first failure first: "
            + "; ".join(said[r] for r in order),
            facts=ctx.facts(
                errors=ctx.errors, unfinished=ctx.silent, first_failed_rank=order[0] if order else None
            ),
        ),
        "rank_failed",
    )


def identical_samples(ctx: Context) -> Optional[Cause]:
    same = [
        recs
        for recs in zip(*(res["steps"] for res in ctx.ranks))
        if ctx.world > 1 and len({rec["hash"] for rec in recs}) == 1
    ]
    if not same:
        return None
    return Cause(
        codes.IDENTICAL_SAMPLES.finding(
            f"every rank trained on the same samples at {len(same)} of {ctx.steps} step(s) (sample hash "
            f"{same[0][0]['hash']} on all {ctx.world} ranks): the data is not sharded, the run does "
            f"1/{ctx.world} of "
            "the work it pays for (a DistributedSampler, or data(rank, world_size, step) that uses rank)",
            facts=ctx.facts(hashes=[[rec["hash"] for rec in s] for s in same]),
        ),
        "identical_samples",
    )


# -- once the run diverges ---------------------------------------------------------------------


def optimizer_differs(ctx: Context) -> Optional[Cause]:
    """The optimizer factory ran in the reference and in every rank; a setting that differs (an lr
    multiplied by dist.get_world_size(), the linear scaling rule) makes the ranks train another
    recipe than the one process, whatever the gradients are."""
    mine = ctx.setup.get("optimizer")
    if not mine:
        return None
    diffs: list[str] = []
    ratio: Optional[float] = None
    for r, res in enumerate(ctx.ranks):
        theirs = res.get("setup", {}).get("optimizer")
        if not theirs or theirs == mine:
            continue
        if theirs.get("type") != mine.get("type"):
            diffs.append(f"{theirs.get('type')} on rank {r} against {mine.get('type')}")
            continue
        for i, (a, b) in enumerate(zip(mine.get("groups", []), theirs.get("groups", []))):
            for k in sorted(set(a) | set(b)):
                if a.get(k) != b.get(k):
                    diffs.append(f"group {i} {k} {b.get(k)} on rank {r} against {a.get(k)}")
                    if k == "lr" and isinstance(a.get(k), (int, float)) and a[k]:
                        ratio = float(b[k]) / float(a[k])
    if not diffs:
        return None
    scaled = ratio is not None and abs(ratio - ctx.world) <= 1e-6 * ctx.world
    return Cause(
        codes.OPTIMIZER_DIFFERS.finding(
            f"{ctx.div()}. The optimizer factory gave the ranks other settings than the one process: "
            + listed(diffs, 6, "; ")
            + (
                f" ({ratio:g} x, the world size: the learning rate is scaled by the number of ranks)"
                if scaled
                else ""
            )
            + ". The ranks train another recipe than the reference, so no comparison can hold; to verify "
            "the distribution itself, build the optimizer with the same settings on both sides (the "
            "scaled learning rate as a constant), then choose the lr as a hyperparameter of the global "
            "batch",
            facts=ctx.facts(ctx.comparison, differences=diffs, lr_ratio=ratio),
        ),
        "optimizer_differs",
        ctx.first(),
    )


def batchnorm_not_synced(ctx: Context) -> Optional[Cause]:
    bn = ctx.setup.get("batchnorm", [])
    if not bn or ctx.eval_mode:
        return None
    return Cause(
        codes.BATCHNORM_NOT_SYNCED.finding(
            f"{ctx.div()}. {len(bn)} BatchNorm module(s) normalise each rank's micro-batch with its own "
            f"statistics "
            f"instead of the global batch's: {', '.join(bn[:8])}; convert with "
            "torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)",
            facts=ctx.facts(ctx.comparison, modules=bn),
        ),
        "batchnorm_not_synced",
        ctx.first(),
    )


def unequal_micro_batches(ctx: Context) -> Optional[Cause]:
    sizes = [[rec["batch"] for rec in s] for s in zip(*(res["steps"] for res in ctx.ranks))]
    at = next((i for i, s in enumerate(sizes) if len(set(s)) > 1), None)
    if at is None:
        return None
    return Cause(
        codes.UNEQUAL_MICRO_BATCHES.finding(
            f"{ctx.div()}. At step {at} the ranks' micro-batches hold {_ranks(sizes[at])} samples: DDP "
            "averages the ranks' mean losses with equal weight, so a sample on a small micro-batch counts "
            "more "
            "than one on a large one (drop_last=True, or pad and weight the loss by samples)",
            facts=ctx.facts(ctx.comparison, batch_sizes=sizes, reduction=ctx.setup.get("reduction")),
        ),
        "unequal_micro_batches",
        ctx.first(),
    )


def unequal_token_counts(ctx: Context) -> Optional[Cause]:
    """Equal micro-batches, but a mean loss with ignore_index (padding) averages over a different
    number of targets on each rank: DDP's average of the ranks' means is not the global mean."""
    counts = [[rec.get("counted") for rec in s] for s in zip(*(res["steps"] for res in ctx.ranks))]
    at = next((i for i, c in enumerate(counts) if None not in c and len(set(c)) > 1), None)
    if at is None:
        return None
    counted = [int(c) for c in counts[at] if c is not None]
    return Cause(
        codes.UNEQUAL_MICRO_BATCHES.finding(
            f"{ctx.div()}. At step {at} the loss averages over {_ranks(counted)} "
            "targets on the ranks (those not equal to its ignore_index: padding differs across ranks): DDP "
            "averages the ranks' means with equal weight, so a token on a rank with more padding counts more "
            "than one process would count it; sum the loss, all-reduce the number of counted targets, divide "
            "by it and multiply by the world size",
            facts=ctx.facts(ctx.comparison, counted_targets=counts),
        ),
        "unequal_token_counts",
        ctx.first(),
    )


def loss_reduction_sum(ctx: Context) -> Optional[Cause]:
    dots = ctx.ranks[0]["steps"][0].get("grad_dot") if ctx.ranks[0].get("steps") else None
    if not dots or dots[1] <= 0:
        return None
    ratio = dots[0] / dots[1]
    if abs(ratio - ctx.world) > 1e-3 * ctx.world:
        return None
    # A sum over samples and a mean divided by the world size give the same gradients and losses;
    # what the loss does to a batch twice as large (on the rank) tells which one the user wrote.
    doubled = ctx.ranks[0].get("loss_batch_ratio")
    reduction = ctx.setup.get("reduction")
    head = (
        f"{ctx.div()}. The reference's gradients are {ratio:.4f} x the distributed ones, "
        f"the world size {ctx.world}: "
    )
    if doubled is not None and abs(doubled - 1.0) < 1e-3:
        why = (
            "the loss is a mean over the micro-batch (a batch twice as large gives the same loss on the "
            "ranks), so the missing factor is a division by the world size on the ranks, on top of DDP's "
            "own average over ranks; drop the division (DDP's gradients are already the global mean)"
        )
        name = "loss_divided_by_world_size"
    elif doubled is not None and abs(doubled - 2.0) < 2e-3:
        why = (
            f"the loss sums over samples (reduction {reduction or 'sum'!r}: a batch twice as large gives "
            "twice the loss) and DDP averages over ranks; use reduction='mean' (or scale the loss by "
            "1/global batch)"
        )
        name = "loss_reduction_sum"
    else:
        why = (
            "the loss sums over samples, or is divided by the world size on top of DDP's average over "
            "ranks; use a mean over the micro-batch and no division by the world size"
        )
        name = "loss_reduction_sum"
    return Cause(
        codes.LOSS_REDUCTION_SUM.finding(
            head + why,
            facts=ctx.facts(ctx.comparison, grad_ratio=ratio, reduction=reduction, loss_batch_ratio=doubled),
        ),
        name,
        ctx.first(),
    )


def rank_dependent_forward(ctx: Context) -> Optional[Cause]:
    probes = [res.get("probe", []) for res in ctx.ranks]
    r = next((i for i, p in enumerate(probes) if not close(p, probes[0], ctx.dtype)), None)
    if r is None:
        return None
    return Cause(
        codes.RANK_DEPENDENT_FORWARD.finding(
            f"{ctx.div()}. The same input through the same initial weights, with torch's RNG seeded alike, "
            f"gives a "
            f"different output on rank {r} than on rank 0: the forward reads the rank (torch.distributed."
            "get_rank(), RANK, a rank-seeded generator)",
            facts=ctx.facts(ctx.comparison, differing_rank=r),
        ),
        "rank_dependent_forward",
        ctx.first(),
    )


def buffers_drift(ctx: Context) -> Optional[Cause]:
    if not ctx.drift:
        return None
    first: dict[str, tuple[int, int]] = {}
    for s, n, r in ctx.drift:
        first.setdefault(n, (s, r))
    div = ctx.div()
    return Cause(
        codes.BUFFERS_DRIFT.finding(
            (f"{div}. " if div else "")
            + "buffers differ across ranks after the optimizer step: "
            + "; ".join(f"{n} (rank {r} vs rank 0 from step {s})" for n, (s, r) in list(first.items())[:6])
            + ": each rank updates them from its own data and nothing synchronises them",
            facts=ctx.facts(ctx.comparison, buffers=sorted(first)),
        ),
        "buffers_drift",
        ctx.first() or _first(ctx.drift[0][1], ctx.drift[0][0]),
    )


def loss_value_altered(
    ctx: Context, reference: Sequence[float], distributed: Sequence[float]
) -> Optional[Cause]:
    """Gradients and parameters match, so the mean of the ranks' losses (a mean loss over equal
    micro-batches; the other cases diverge and are named above) must be the reference's loss; when
    it is not, the loss tensor was changed after the forward outside autograd (an in-place
    all-reduce on it for logging), which training does not see but every logged value does."""
    for step, (r, d) in enumerate(zip(reference, distributed)):
        if not (math.isfinite(r) and math.isfinite(d)):
            return None
        if abs(d - r) <= rtol(ctx.dtype, step) * max(1.0, abs(r)):
            continue
        ratio = d / r if r else float("inf")
        summed = abs(ratio - ctx.world) <= 1e-3 * ctx.world
        return Cause(
            run5.LOSS_VALUE_ALTERED.finding(
                f"gradients and parameters match one process's, but at step {step} the ranks' loss averages "
                f"{d:.6g} against the reference's {r:.6g} ({ratio:.4g} x)"
                + (
                    f", the world size {ctx.world}: the loss tensor is all-reduced in place with a SUM "
                    "(dist.all_reduce(loss.detach()) or loss.data for logging) and never divided"
                    if summed
                    else ": the loss tensor is changed in place after the forward, outside autograd "
                    "(an all-reduce on loss.detach() or loss.data for logging)"
                )
                + "; the training is right, every logged loss is wrong: all-reduce a copy "
                "(loss.detach().clone()) with ReduceOp.AVG",
                facts=ctx.facts(
                    ctx.comparison, step=step, loss_reference=r, loss_ranks_mean=d, loss_ratio=ratio
                ),
            ),
            None,
        )
    return None


Detector = Callable[[Context], Optional[Cause]]
# Answer whatever the numbers say (the order is the precedence: an earlier one explains the later).
BEFORE: tuple[Detector, ...] = (
    reference_failed,
    models_differ,
    initial_weights_differ,
    frozen_on_some_ranks,
    empty_micro_batches,
    loss_not_finite,
    unused_parameters,
    rank_failed,
    identical_samples,
)
# Explain a divergence of rank 0 from the reference, or buffers drifting across ranks.
ONCE_DIVERGED: tuple[Detector, ...] = (
    optimizer_differs,
    clip_local_shards,
    batchnorm_not_synced,
    unequal_micro_batches,
    unequal_token_counts,
    loss_reduction_sum,
    rank_dependent_forward,
    buffers_drift,
    in_batch_negatives,
    loss_couples_samples,
    unequal_loss_weights,
)


def diagnose_data_parallel(
    run: Run, world: int, steps: int, strategy: str, eval_mode: bool = False
) -> Diagnosis:
    ctx = Context(run, world, steps, strategy, eval_mode)
    dg = Diagnosis(tolerance=ctx.tolerance, dropout=ctx.setup.get("dropout"))
    if ctx.finished and ctx.ref.get("steps"):
        dg.losses = losses(ctx.ref, ctx.ranks)  # type: ignore[arg-type]
    dg.comparison = ctx.comparison
    cause = next((c for d in BEFORE if (c := d(ctx)) is not None), None)
    if cause is None and ctx.diverged:
        cause = next((c for d in ONCE_DIVERGED if (c := d(ctx)) is not None), None)
        if cause is None:
            dg.rerun_eval = not eval_mode
            dg.first = ctx.first()
            if eval_mode:
                dg.findings.append(
                    codes.NOT_EQUIVALENT.finding(
                        f"{ctx.div()}; in eval mode too, and none of the known causes shows (BatchNorm, sum "
                        f"loss, "
                        "unequal, empty or identical micro-batches, unused or partly frozen parameters, "
                        "different "
                        "models, rank-dependent forward, drifting buffers, a loss over in-batch "
                        "negatives, clipping factors that differ across ranks)",
                        facts=ctx.facts(ctx.comparison),
                    )
                )
            return dg
    if cause is None and ctx.finished and dg.losses:
        # Equivalent training: what the ranks report as their loss is left to check.
        altered = loss_value_altered(ctx, dg.losses["reference"], dg.losses["distributed"])
        if altered is not None:
            dg.findings.append(altered.finding)
            return dg
    if cause is not None:
        dg.findings.append(cause.finding)
        dg.cause, dg.first = cause.name, cause.first
    return dg
