"""The probe's forward runs on the user's model itself, not on a deep copy of it: whatever that
forward changes (BatchNorm's running statistics, a counter buffer, plain attributes, a tensor
attribute, a rebound or new submodule or buffer, a parameter changed in place) is put back, and
the probe reads the same values a forward of a deep copy reads."""

from __future__ import annotations

import copy
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from pgdoctor.verify.common import probe_with_loss, untouched  # noqa: E402


class Meddler(torch.nn.Module):
    """A forward that changes every kind of state a module holds."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(6, 4)
        self.bn = torch.nn.BatchNorm1d(4)
        self.drop = torch.nn.Dropout(0.5)
        self.register_buffer("calls", torch.zeros((), dtype=torch.long))
        self.register_buffer("cache", torch.zeros(4))
        self.history: list[int] = [1]
        self.seen = 0
        self.notes = {"a": [1, 2]}
        self.scratch = torch.ones(3)  # a tensor attribute, neither parameter nor buffer
        self.peers = [self.lin]  # a plain list that holds a submodule
        self.handle = self.bn.register_forward_hook(_count)

    def forward(self, x: Any) -> Any:
        out = self.drop(self.bn(self.lin(x)))
        self.calls += 1
        self.cache.copy_(out.mean(0))
        self.history.append(int(self.calls))
        self.notes["a"].append(3)
        self.seen += x.shape[0]
        self.scratch.mul_(2.0)
        self.extra = "set in forward"
        self.lin.weight.mul_(0.5)  # in place, under the probe's no_grad
        self.lin.bias.data = torch.zeros(7)  # rebound to another shape
        self.lin.weight.register_hook(lambda g: g * 2)  # a gradient hook on a parameter
        self.lin.weight.requires_grad_(False)
        self.bn.running_var = torch.full((4,), 9.0)  # a buffer rebound
        self.bn.momentum = 0.9
        self.added = torch.nn.Linear(1, 1)
        self.peers.append(self.bn)
        self.handle.remove()  # the hook registered before the probe: the probe must not lose it
        self.register_forward_hook(lambda *a: None)
        return out


def _count(module: Any, args: Any, out: Any) -> None:
    module.seen_by_hook = getattr(module, "seen_by_hook", 0) + 1


def _data(rank: int, world: int, step: int) -> Any:
    g = torch.Generator().manual_seed(100 * step + rank)
    return torch.randn(5, 6, generator=g), torch.randn(5, 4, generator=g)


def _state(m: Meddler) -> dict[str, Any]:
    return {
        "tensors": {n: t.detach().clone() for n, t in [*m.named_parameters(), *m.named_buffers()]},
        "ids": {n: id(t) for n, t in [*m.named_parameters(), *m.named_buffers()]},
        "requires_grad": {n: p.requires_grad for n, p in m.named_parameters()},
        "modules": [n for n, _ in m.named_modules()],
        "attrs": (list(m.history), m.seen, copy.deepcopy(m.notes), m.bn.momentum, hasattr(m, "extra")),
        "scratch": m.scratch.clone(),
        "peers": [id(p) for p in m.peers],
    }


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    tensors = a["tensors"].keys() == b["tensors"].keys() and all(
        torch.equal(a["tensors"][n], b["tensors"][n]) for n in a["tensors"]
    )
    rest = [k for k in a if k not in ("tensors", "scratch")]
    return tensors and torch.equal(a["scratch"], b["scratch"]) and all(a[k] == b[k] for k in rest)


@pytest.mark.parametrize("train", [True, False])
def test_the_probe_leaves_a_model_whose_forward_mutates_it_as_it_was(train: bool) -> None:
    torch.manual_seed(0)
    model = Meddler().train(train)
    twin = copy.deepcopy(model)
    before = _state(model)
    spec = {"model": model, "loss": torch.nn.MSELoss(), "data": _data}
    values, ratio = probe_with_loss(model, spec, 2)
    after = _state(model)
    assert _same(before, after), (before, after)
    assert model.peers[0] is model.lin and len(model.peers) == 1 and not hasattr(model, "added")
    # The hooks as they were, and the handle of one registered before the probe still removes it.
    assert not model.lin.weight._backward_hooks and not model._forward_hooks
    assert list(model.bn._forward_hooks.values()) == [_count]
    model.handle.remove()
    assert not model.bn._forward_hooks
    # The values a forward of a deep copy reads (the probe before it ran on the model itself).
    twin_values, twin_ratio = probe_with_loss(copy.deepcopy(twin), {**spec, "model": twin}, 2)
    assert values == twin_values and ratio == twin_ratio == pytest.approx(1.0)


def test_untouched_puts_the_model_back_after_an_exception() -> None:
    model = Meddler()
    before = _state(model)
    with pytest.raises(RuntimeError), untouched(model), torch.no_grad():
        model(torch.randn(3, 6))
        raise RuntimeError("forward failed")
    assert _same(before, _state(model))
