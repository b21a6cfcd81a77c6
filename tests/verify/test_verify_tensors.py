"""The reference's tensor files (tensors.save / tensors.load): every dtype, shape and layout the
reference saves reads back with the same values, and a change to a loaded tensor never reaches
the file; the chunked comparison of a rank's tensor against the reference's gives what one
float64 pass over the whole tensors gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import pytest

torch = pytest.importorskip("torch")

from pgdoctor.verify import tensors  # noqa: E402
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


def _naive_diff(dist: Any, ref: Any, tol: Optional[float]) -> dict[str, Any]:
    """The comparison in one float64 pass over the whole tensors."""
    a, b = dist.reshape(-1).double(), ref.reshape(-1).double()
    ref_max = 0.0
    for lo in range(0, b.numel(), tensors.CHUNK):  # the largest |value| of a chunk with a NaN is no number
        ref_max = max(ref_max, float(b[lo : lo + tensors.CHUNK].abs().max()))
    if dist.dtype == ref.dtype and torch.equal(dist, ref):
        return {"abs": 0.0, "ref_max": ref_max}
    d = torch.nan_to_num((a - b).abs(), nan=float("inf"))
    i = int(d.argmax())
    out = {
        "abs": float(d[i]),
        "ref_max": ref_max,
        "at": list(torch.unravel_index(torch.tensor(i), ref.shape)),
    }
    out["at"] = [int(v) for v in out["at"]]
    out.update({"ref": float(ref.reshape(-1)[i]), "dist": float(dist.reshape(-1)[i])})
    if tol is not None:
        out["over"] = int((d > tol).sum())
    return out


def test_the_chunked_comparison_is_the_one_pass_comparison(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tensors, "CHUNK", 100)
    g = torch.Generator().manual_seed(0)
    ref = torch.randn(7, 50, generator=g)
    near = ref + 1e-6 * torch.randn(7, 50, generator=g)
    nan, inf = ref.clone(), ref.clone()
    nan[3, 7] = float("nan")
    inf[0, 0] = float("inf")
    ints = torch.arange(350).reshape(7, 50)
    cases = [
        (near, ref),
        (ref.clone(), ref),
        (nan, ref),
        (ref, nan),
        (inf, ref),
        (near.bfloat16(), ref),
        (ints, ints + (ints % 3 == 0)),
        (torch.zeros(7, 50), -torch.zeros(7, 50)),
    ]
    for dist, r in cases:
        for tol in (None, 1e-5):
            got, want = tensors.diff(dist, r, tol), _naive_diff(dist, r, tol)
            assert got.keys() == want.keys(), (got, want)
            for k in got:
                assert got[k] == want[k] or (got[k] != got[k] and want[k] != want[k]), (k, got, want)
    num, den = tensors.dot(ref, near)
    assert num == sum(
        float((ref.reshape(-1)[i : i + 100].double() * near.reshape(-1)[i : i + 100].double()).sum())
        for i in range(0, 350, 100)
    )
    assert den == sum(float((near.reshape(-1)[i : i + 100].double() ** 2).sum()) for i in range(0, 350, 100))
