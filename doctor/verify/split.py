"""`--strategy pp` and `--strategy tp`: the stages' (or shards') outputs, gradients and
parameters put back together and compared with the unsplit model's."""

from __future__ import annotations

from typing import Any

from pgdoctor.checks.codes import verify as codes
from pgdoctor.verify.compare import compare, tolerance_text
from pgdoctor.verify.diagnosis import Diagnosis, _short, losses, where
from pgdoctor.verify.launch import Run, tail


def _unshard(parts: list[list[float]], dim: int, shape: list[int]) -> list[float]:
    if dim == 0 or len(shape) == 1:
        return [v for p in parts for v in p]
    rows = shape[0]
    cols = [len(p) // rows for p in parts]
    out: list[float] = []
    for i in range(rows):
        for p, c in zip(parts, cols):
            out.extend(p[i * c:(i + 1) * c])
    return out


def merged_steps(run: Run, strategy: str) -> list[dict[str, Any]]:
    """One record per step with every parameter of the full model."""
    ranks = list(run.ranks)
    steps = []
    for recs in zip(*(r["steps"] for r in ranks)):
        rec: dict[str, Any] = {"grads": {}, "params": {}, "buffers": {}}
        if strategy == "pp":
            for r in recs:
                for kind in ("grads", "params", "buffers"):
                    rec[kind].update(r.get(kind, {}))
            rec["output"] = recs[-1].get("output", [])
        else:
            shards, shapes = ranks[0].get("shards", {}), ranks[0].get("shapes", {})
            for kind in ("grads", "params", "buffers"):
                for n, v in recs[0].get(kind, {}).items():
                    if n in shards:
                        rec[kind][n] = _unshard([r.get(kind, {}).get(n, []) for r in recs], shards[n], shapes.get(n, []))
                    else:
                        rec[kind][n] = v
            rec["output"] = recs[0].get("output", [])
        steps.append(rec)
    return steps


def diagnose_split(run: Run, world: int, steps: int, strategy: str) -> Diagnosis:
    ref = run.reference or {}
    setup = ref.get("setup") or {}
    dtype = setup.get("dtype", "float32")
    tol = tolerance_text(dtype, world, steps)
    dg = Diagnosis(tolerance=tol)
    code = codes.PIPELINE_SPLIT_MISMATCH if strategy == "pp" else codes.TENSOR_PARALLEL_MISMATCH
    what = "pipeline stages" if strategy == "pp" else "tensor-parallel shards"
    layout: dict[str, Any] = ({"stages": run.ranks[0].get("stages")} if strategy == "pp"
                              else {"tp_plan": run.ranks[0].get("tp_plan")}) if run.ranks and run.ranks[0] else {}
    base = {"world_size": world, "steps": steps, "strategy": strategy, "tolerance": tol, **layout}
    errors = {r: res["error"] for r, res in enumerate(run.ranks) if res.get("error")}
    short = [r for r, res in enumerate(run.ranks) if len(res.get("steps", [])) < steps and r not in errors]
    if not ref.get("steps"):
        o = run.outcomes[0]
        dg.findings.append(codes.NOT_EQUIVALENT.finding(
            f"the one-process reference did not train: {tail(o.stderr, 3) or 'no output'}", facts=base))
        dg.cause = "reference_failed"
        return dg
    if errors or short:
        lines = [f"rank {r} raised {e['type']} at step {e['step']} ({e['phase']}): {_short(e['message'])}"
                 for r, e in sorted(errors.items())]
        lines += [f"rank {r} did not finish" + (" (killed at the deadline)" if run.rank_outcome(r).timed_out else "")
                  for r in short]
        dg.findings.append(code.finding(f"the {what} did not run as the unsplit model: " + "; ".join(lines),
                                        facts=base | {"errors": errors}))
        dg.cause = "pipeline_split" if strategy == "pp" else "tensor_parallel_split"
        return dg
    mine = merged_steps(run, strategy)
    dg.losses = losses(ref, [run.ranks[-1]] if strategy == "pp" else [run.ranks[0]])
    order = setup.get("params", []) + setup.get("buffers", [])
    cmp = compare(ref["steps"], mine, order, dtype, kinds=("grads", "params", "buffers"))
    out_cmp = compare([{"output": {"<output>": s.get("output", [])}} for s in ref["steps"]],
                      [{"output": {"<output>": s.get("output", [])}} for s in mine], ["<output>"], dtype,
                      kinds=("output",))
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
    hint = ("the stages applied one after the other are not the model's forward (a skip connection or other "
            "computation in forward across a stage boundary, or stages out of order)" if strategy == "pp" else
            "an operation between a column- and a row-parallel layer mixes features (softmax, normalisation, a "
            "reshape), so it sees only this rank's shard; only elementwise operations may sit between them")
    dg.findings.append(code.finding(f"{where(cmp)}: {hint}",
                                    facts=base | {"first_divergent_param": f.name, "first_divergent_step": f.step,
                                                  "max_abs_diff": cmp.max_abs, "max_rel_diff": cmp.max_rel}))
    return dg
