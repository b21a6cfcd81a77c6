"""Tensor comparison at model scale, inside the worker processes: a digest of a tensor's bytes,
the reference's tensors saved and read back with torch's own serialisation, and the exact
element comparison of one tensor against another, in chunks, done only where a cheap equality
test says the two differ.

Memory: one reference tensor file (one kind at one step) is mapped at a time (torch.load
mmap=True) and deleted once compared; the difference is computed CHUNK elements at a time, so a
38M-element embedding never costs a second full-size temporary."""

from __future__ import annotations

import ctypes
import hashlib
import os
from collections.abc import Iterable
from typing import Any, Optional

from pgdoctor.verify.records import TensorDiff

CHUNK = 1 << 22  # elements per slice of the exact comparison (16 MiB of float32)


def digest(tensors: Iterable[Any]) -> str:
    """A short hash of the tensors' dtypes, shapes and bytes (read in place on the CPU)."""
    h = hashlib.blake2b(digest_size=8)
    for t in tensors:
        t = t.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        t = t.contiguous()
        h.update(f"{t.dtype}{tuple(t.shape)}".encode())
        n = t.numel() * t.element_size()
        if n:
            h.update(memoryview((ctypes.c_char * n).from_address(t.data_ptr())))
    return h.hexdigest()


def full(t: Any) -> Any:
    """A DTensor's whole value (a collective under FSDP: every rank calls it in the same order)."""
    return t.full_tensor() if hasattr(t, "full_tensor") else t


def dense(t: Any) -> Any:
    """A sparse gradient (nn.Embedding(sparse=True)) as the strided tensor it stands for: the
    comparison's reductions (abs, max, the byte digest) have no sparse kernels, and the reference's
    coalesced sum and DDP's all-reduced one differ in layout, never in value."""
    return t.to_dense() if getattr(t, "is_sparse", False) else t


def save(tensors: dict[str, Any], path: str) -> float:
    """torch.save the tensors (detached, on the CPU, sparse ones made dense); returns their largest
    |value| (the tolerance's scale of that kind)."""
    import torch

    out = {n: dense(t.detach().cpu()) for n, t in tensors.items()}
    tmp = f"{path}.tmp{os.getpid()}"
    torch.save(out, tmp)
    os.replace(tmp, path)
    return max(
        (float(t.abs().max()) for t in out.values() if t.numel() and t.is_floating_point()), default=0.0
    )


def load(path: str) -> dict[str, Any]:
    import torch

    return torch.load(path, map_location="cpu", mmap=True, weights_only=True)  # type: ignore[no-any-return]


def diff(dist: Any, ref: Any, tol: Optional[float] = None) -> TensorDiff:
    """`dist` against `ref`: identical bytes are a zero difference without a float pass; else
    the largest |dist - ref|, where it is, both values there, and (with `tol`, an absolute
    bound) how many elements exceed it."""
    import torch

    dist = dist.detach()
    if dist.device.type != "cpu":
        dist = dist.cpu()
    if tuple(dist.shape) != tuple(ref.shape):
        return {"abs": float("inf"), "ref_max": 0.0}
    if dist.numel() == 0:
        return {"abs": 0.0, "ref_max": 0.0}
    a, b = dist.reshape(-1), ref.reshape(-1)
    same = dist.dtype == ref.dtype and torch.equal(a, b)
    ref_max, worst, worst_at, over = 0.0, 0.0, 0, 0
    for lo in range(0, a.numel(), CHUNK):
        rb = b[lo : lo + CHUNK].double()
        ref_max = max(ref_max, float(rb.abs().max()))
        if same:
            continue
        d = (a[lo : lo + CHUNK].double() - rb).abs_()
        d = torch.nan_to_num(d, nan=float("inf"))
        i = int(d.argmax())
        if float(d[i]) > worst or lo == 0:
            worst, worst_at = float(d[i]), lo + i
        if tol is not None:
            over += int((d > tol).sum())
    if same:
        return {"abs": 0.0, "ref_max": ref_max}
    at: list[int] = []
    rest = worst_at
    for size in reversed(tuple(ref.shape)):
        rest, i = divmod(rest, size)
        at.insert(0, i)
    out: TensorDiff = {
        "abs": worst,
        "ref_max": ref_max,
        "at": at,
        "ref": float(b[worst_at]),
        "dist": float(a[worst_at]),
    }
    if tol is not None:
        out["over"] = over
    return out


def dot(ref: Any, dist: Any) -> tuple[float, float]:
    """(sum ref x dist, sum dist x dist) in float64: the pieces of the least-squares factor."""
    a, b = ref.reshape(-1), dist.detach().cpu().reshape(-1)
    if a.shape != b.shape:
        return 0.0, 0.0
    num = den = 0.0
    for lo in range(0, a.numel(), CHUNK):
        x, y = a[lo : lo + CHUNK].double(), b[lo : lo + CHUNK].double()
        num += float((x * y).sum())
        den += float((y * y).sum())
    return num, den
