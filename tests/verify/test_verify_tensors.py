"""The reference's tensor files (tensors.save / tensors.load): every dtype, shape and layout the
reference saves reads back with the same values, and a change to a loaded tensor never reaches
the file."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from pgdoctor.verify.tensors import dense, load, save  # noqa: E402


def test_saved_tensors_read_back_with_the_same_values(tmp_path: Path) -> None:
    tensors = {
        "matrix": torch.randn(3, 4),
        "scalar": torch.tensor(-2.5),
        "empty": torch.empty(0, 5),
        "long": torch.arange(7),
        "bool": torch.tensor([True, False, True]),
        "half": torch.randn(5).half(),
        "bf16": torch.randn(9).bfloat16(),
        "transposed": torch.randn(4, 6).t(),
        "conj": torch.randn(3, dtype=torch.complex64).conj(),
        "sparse": torch.sparse_coo_tensor([[0, 2]], [1.0, 4.0], (4,)),
        "int8": torch.tensor([1, -3], dtype=torch.int8),
    }
    path = str(tmp_path / "kind.tensors")
    scale = save(tensors, path)
    got = load(path)
    assert list(got) == list(tensors)
    for name, t in tensors.items():
        want = dense(t).resolve_conj()
        assert got[name].dtype == want.dtype and got[name].shape == want.shape, name
        assert torch.equal(got[name], want), name
    floats = [dense(t).abs().max() for t in tensors.values() if t.is_floating_point() and t.numel()]
    assert scale == float(max(floats))
    got["matrix"].add_(1.0)  # mapped copy on write: the file keeps the saved values
    assert torch.equal(load(path)["matrix"], tensors["matrix"])


def test_no_tensors_and_only_empty_ones(tmp_path: Path) -> None:
    path = str(tmp_path / "none.tensors")
    assert save({}, path) == 0.0 and load(path) == {}
    assert save({"e": torch.empty(0)}, path) == 0.0
    assert load(path)["e"].shape == (0,)
