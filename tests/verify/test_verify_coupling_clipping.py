"""The evidence of VER118 (a loss over the whole batch computed on each rank's micro-batch) and
VER119 (clipping by a norm of each rank's local shards), without ranks: what a process measures
of its own step (step_evidence.py), and the detectors (coupling.py, clipping.py) over records as
the ranks write them. The real runs are the u2 set's (contrastive_in_batch, clip_local_shards_fsdp)
and the VER118 / VER119 fixtures of test_verify.py's matrix."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("torch")

import torch
from torch import nn

from pgdoctor.verify.clipping import clip_local_shards
from pgdoctor.verify.common import output_shape
from pgdoctor.verify.context import Context
from pgdoctor.verify.coupling import in_batch_negatives, loss_couples_samples
from pgdoctor.verify.detectors import ONCE_DIVERGED
from pgdoctor.verify.launch import Run
from pgdoctor.verify.step_evidence import ScaledInStep, grad_scale, loss_coupling


def _ctx(ref_step0: dict[str, Any], rank_step0: list[dict[str, Any]], strategy: str = "ddp") -> Context:
    ref = {
        "role": "reference",
        "setup": {"dtype": "float32"},
        "steps": [{"step": 0, "loss": 1.0, **ref_step0}],
    }
    ranks = tuple(
        {"role": strategy, "rank": r, "steps": [{"step": 0, "loss": 1.0, "batch": 8, **rec}]}
        for r, rec in enumerate(rank_step0)
    )
    return Context(Run(ref, ranks, (), 0.0), len(ranks), 1, strategy, False)  # type: ignore[arg-type]


# -- VER118, in_batch_negatives: the output's batch dimension besides the first ------------------


def test_pairwise_logits_of_the_micro_batch_are_in_batch_negatives() -> None:
    ctx = _ctx({"output_shape": [16, 16]}, [{"output_shape": [8, 8]}, {"output_shape": [8, 8]}])
    cause = in_batch_negatives(ctx)
    assert cause is not None and cause.name == "in_batch_negatives"
    assert cause.finding.code == "VER118" and cause.finding.facts["batch_dims"] == [1]
    assert "7 negatives on a rank against 15" in cause.finding.message


@pytest.mark.parametrize(
    ("ref", "rank"),
    [
        ([16, 4], [8, 4]),  # per-sample outputs
        ([16, 16, 5], [8, 16, 5]),  # a sequence as long as the global batch: it does not follow the batch
        ([16], [8]),  # one value per sample
    ],
)
def test_outputs_per_sample_are_not_in_batch_negatives(ref: list[int], rank: list[int]) -> None:
    assert in_batch_negatives(_ctx({"output_shape": ref}, [{"output_shape": rank}] * 2)) is None


# -- VER118, loss_couples_samples: the loss reads the other samples' outputs ---------------------

ROWS = [0.5] * 12


@pytest.mark.parametrize(
    ("coupling", "rows", "named"), [(0.4, ROWS, True), (1e-7, ROWS, False), (0.4, [0.9] * 12, False)]
)
def test_a_loss_that_reads_the_other_rows_is_named_only_with_the_rows_per_sample(
    coupling: float, rows: list[float], named: bool
) -> None:
    ctx = _ctx(
        {"loss_coupling": coupling, "output_parts": [ROWS, ROWS]},
        [{"output_part": rows}, {"output_part": ROWS}],
    )
    cause = loss_couples_samples(ctx)
    assert (cause is not None) is named
    if cause is not None:
        assert cause.name == "loss_couples_samples" and cause.finding.facts["loss_coupling"] == 0.4


def _info_nce(out: Any, _: Any) -> Any:
    za, zb = out
    logits = za @ zb.T / 0.1
    labels = torch.arange(za.shape[0])
    return (nn.functional.cross_entropy(logits, labels) + nn.functional.cross_entropy(logits.T, labels)) / 2


def test_loss_coupling_is_zero_for_per_sample_losses_and_not_for_in_batch_negatives() -> None:
    g = torch.Generator().manual_seed(0)
    z = nn.functional.normalize(torch.randn(12, 4, generator=g), dim=-1)
    y = torch.randn(12, 4, generator=g)
    mask = (torch.arange(12) % 3 != 0).float()[:, None]
    sizes = [6, 6]
    assert loss_coupling(_info_nce, (z, z.flip(0)), y, sizes) > 0.01
    assert loss_coupling(nn.MSELoss(), z, y, sizes) == 0.0
    assert loss_coupling(lambda o, t: nn.functional.mse_loss(o, t, reduction="sum"), z, y, sizes) == 0.0
    # divided by a statistic or a count of the targets: weights, not coupling (VER107's evidence)
    assert loss_coupling(lambda o, t: ((o - t) ** 2).mean() / t.var(), z, y, sizes) == 0.0
    assert loss_coupling(lambda o, t: ((o - t) ** 2 * mask).sum() / mask.sum(), z, y, sizes) == 0.0
    # a statistic of the outputs over the batch couples them
    assert loss_coupling(lambda o, t: ((o - t) ** 2).mean() / o.var(), z, y, sizes) > 0.01
    # a loss computed in forward (HF style) does not depend on the output it is given: no evidence
    assert loss_coupling(lambda o, t: torch.tensor(1.0), z, y, sizes) is None
    assert loss_coupling(nn.MSELoss(), z, y, [12]) is None


def test_output_shape_is_the_compared_tensors() -> None:
    assert output_shape({"logits": torch.zeros(3, 5), "x": torch.zeros(2)}) == [3, 5]
    assert output_shape("no tensor") == []


# -- VER119: the factor the optimizer's step scaled each rank's gradients by --------------------


class _Clip(torch.optim.SGD):
    def __init__(self, params: Any, how: str) -> None:
        super().__init__(list(params), lr=0.1)
        self.how = how

    @torch.no_grad()
    def step(self, closure: Any = None) -> Any:
        grads = [p.grad for g in self.param_groups for p in g["params"]]
        if self.how == "global":
            torch.nn.utils.clip_grad_norm_([p for g in self.param_groups for p in g["params"]], 0.01)
        elif self.how == "first_only":
            grads[0].mul_(0.5)
        return super().step(closure)


@pytest.mark.parametrize("how", ["global", "none", "first_only"])
def test_grad_scale_is_the_one_factor_of_the_step(how: str) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = _Clip(model.parameters(), how)
    nn.functional.mse_loss(model(torch.randn(5, 4) * 5), torch.randn(5, 2)).backward()
    norm = float(torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()])))
    rec: dict[str, Any] = {}
    scaled = ScaledInStep(model)
    opt.step()
    scaled.record(rec)
    if how == "global":
        assert rec["grad_scale"] == pytest.approx(0.01 / (norm + 1e-6), rel=1e-5)
    elif how == "none":
        assert rec["grad_scale"] == pytest.approx(1.0, abs=1e-12)
    else:
        assert "grad_scale" not in rec  # some gradients rewritten: no single factor, never clipping


def test_grad_scale_needs_every_gradient_kept() -> None:
    assert grad_scale([1.0, 2.0], [0.5, None]) is None
    assert grad_scale([0.0, 2.0], [0.0, 1.0]) == pytest.approx(0.5)
    assert grad_scale([None, None], [None, None]) is None


@pytest.mark.parametrize(
    ("scales", "named"), [([0.0296, 0.0203], True), ([0.0167, 0.0167], False), ([0.02, None], False)]
)
def test_clip_factors_that_differ_across_ranks_are_named(scales: list[Any], named: bool) -> None:
    rank_recs = [{} if s is None else {"grad_scale": s} for s in scales]
    cause = clip_local_shards(_ctx({"grad_scale": 0.0167}, rank_recs, "fsdp"))
    assert (cause is not None) is named
    if cause is not None:
        assert cause.finding.code == "VER119" and cause.name == "clip_local_shards"
        assert cause.finding.facts["grad_scale_reference"] == 0.0167
        assert "to_local()" in cause.finding.message and "clip_grad_norm_" in cause.finding.message


def test_the_order_reads_clipping_first_and_coupling_before_a_weighted_mean() -> None:
    names = [d.__name__ for d in ONCE_DIVERGED]
    assert names.index("clip_local_shards") == names.index("optimizer_differs") + 1
    assert (
        names.index("in_batch_negatives")
        < names.index("loss_couples_samples")
        < names.index("unequal_loss_weights")
    )


def test_the_coupling_test_leaves_torch_rng_as_it_was() -> None:
    z = torch.randn(8, 3)
    torch.manual_seed(7)
    expected = torch.rand(3)
    torch.manual_seed(7)
    loss_coupling(lambda o, t: (o * torch.rand_like(o)).mean(), z, z, [4, 4])
    assert torch.equal(torch.rand(3), expected)
