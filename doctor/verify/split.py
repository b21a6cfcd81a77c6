"""`--strategy pp` and `--strategy tp`: the stages' (or shards') comparisons with the unsplit
model's tensors put together (each rank compared its own pieces in the worker), and the last
stage's output compared with the model's."""

from __future__ import annotations

from typing import Any

from pgdoctor.checks.codes import verify as codes
from pgdoctor.verify.compare import compare, compare_recorded, tolerance_text
from pgdoctor.verify.diagnosis import Diagnosis, _short, losses, where
from pgdoctor.verify.launch import Run, tail
from pgdoctor.verify.records import KINDS, StepRecord, TensorDiff


def merged_steps(run: Run, strategy: str) -> list[StepRecord]:
    """One record per step with every tensor of the full model: each rank compared its stage's
    tensors (pp) or its shards (tp, against the same slices of the reference's) in the worker;
    a tensor's difference is the largest over the ranks that hold a piece of it."""
    steps: list[StepRecord] = []
    for recs in zip(*(r["steps"] for r in run.ranks)):
        diffs: dict[str, dict[str, TensorDiff]] = {k: {} for k in KINDS}
        for rec in recs:
            for kind, named in rec.get("diffs", {}).items():
                for name, td in named.items():
                    have = diffs[kind].get(name)
                    ref_max = max(td.get("ref_max", 0.0), have.get("ref_max", 0.0) if have else 0.0)
                    if have is None or td["abs"] > have["abs"]:
                        diffs[kind][name] = {**td, "ref_max": ref_max}
                    else:
                        have["ref_max"] = ref_max
        out = recs[-1] if strategy == "pp" else recs[0]
        steps.append({"diffs": diffs, "output": out.get("output", [])})
    return steps


def diagnose_split(run: Run, world: int, steps: int, strategy: str) -> Diagnosis:
    ref = run.reference or {}
    setup = ref.get("setup") or {}
    dtype = setup.get("dtype", "float32")
    tol = tolerance_text(dtype, world, steps)
    dg = Diagnosis(tolerance=tol)
    code = codes.PIPELINE_SPLIT_MISMATCH if strategy == "pp" else codes.TENSOR_PARALLEL_MISMATCH
    what = "pipeline stages" if strategy == "pp" else "tensor-parallel shards"
    layout: dict[str, Any] = (
        (
            {"stages": run.ranks[0].get("stages")}
            if strategy == "pp"
            else {"tp_plan": run.ranks[0].get("tp_plan")}
        )
        if run.ranks and run.ranks[0]
        else {}
    )
    base = {"world_size": world, "steps": steps, "strategy": strategy, "tolerance": tol, **layout}
    errors = {r: res["error"] for r, res in enumerate(run.ranks) if res.get("error")}
    short = [r for r, res in enumerate(run.ranks) if len(res.get("steps", [])) < steps and r not in errors]
    if not ref.get("steps"):
        o = run.outcomes[0]
        dg.findings.append(
            codes.NOT_EQUIVALENT.finding(
                f"the one-process reference did not train: {tail(o.stderr, 3) or 'no output'}", facts=base
            )
        )
        dg.cause = "reference_failed"
        return dg
    if errors or short:
        lines = [
            f"rank {r} raised {e['type']} at step {e['step']} ({e['phase']}): {_short(e['message'])}"
            for r, e in sorted(errors.items())
        ]
        lines += [
            f"rank {r} did not finish"
            + (" (killed at the deadline)" if run.rank_outcome(r).timed_out else "")
            for r in short
        ]
        dg.findings.append(
            code.finding(
                f"the {what} did not run as the unsplit model: " + "; ".join(lines),
                facts=base | {"errors": errors},
            )
        )
        dg.cause = "pipeline_split" if strategy == "pp" else "tensor_parallel_split"
        return dg
    mine = merged_steps(run, strategy)
    dg.losses = losses(ref, [run.ranks[-1]] if strategy == "pp" else [run.ranks[0]])
    order = setup.get("params", []) + setup.get("buffers", [])
    cmp = compare_recorded(ref["steps"], mine, order, dtype)
    out_cmp = compare(
        [{"output": {"<output>": s.get("output", [])}} for s in ref["steps"]],
        [{"output": {"<output>": s.get("output", [])}} for s in mine],
        ["<output>"],
        dtype,
        kinds=("output",),
    )
    if out_cmp.first is not None and (cmp.first is None or out_cmp.first.step <= cmp.first.step):
        cmp.first = out_cmp.first
    cmp.max_abs, cmp.max_rel = max(cmp.max_abs, out_cmp.max_abs), max(cmp.max_rel, out_cmp.max_rel)
    dg.comparison = cmp
    if cmp.equivalent:
        return dg
    f = cmp.first
    assert f is not None
    dg.first = {"param": f.name, "step": f.step}
    dg.cause = "pipeline_split" if strategy == "pp" else "tensor_parallel_split"
    hint = (
        "the stages applied one after the other are not the model's forward (a skip connection or other "
        "computation in forward across a stage boundary, or stages out of order)"
        if strategy == "pp"
        else "an operation between a column- and a row-parallel layer mixes features (softmax, "
        "normalisation, a "
        "reshape), so it sees only this rank's shard; only elementwise operations may sit between them"
    )
    dg.findings.append(
        code.finding(
            f"{where(cmp)}: {hint}",
            facts=base
            | {
                "first_divergent_param": f.name,
                "first_divergent_step": f.step,
                "max_abs_diff": cmp.max_abs,
                "max_rel_diff": cmp.max_rel,
            },
        )
    )
    return dg
