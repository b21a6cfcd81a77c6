"""Tensor comparison at model scale, inside the worker processes: a digest of a tensor's bytes,
the reference's tensors saved as their bytes and mapped back (`save`, `load`), and the exact
element comparison of one tensor against another, in chunks, done only where a cheap equality
test says the two differ.

Memory: one reference tensor file (one kind at one step) is mapped at a time (`load`) and
deleted once compared; the difference is computed CHUNK elements at a time, so a 38M-element
embedding never costs a second full-size temporary."""

from __future__ import annotations

import ctypes
import hashlib
import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Optional

from pgdoctor.verify.records import TensorDiff

CHUNK = 1 << 22  # elements per slice of the exact comparison (16 MiB of float32)


def output_tensors(out: Any) -> Iterator[Any]:
    """The tensors of a model's output (a tensor, or tuples, lists and mappings of them, Hugging
    Face's ModelOutput being an ordered mapping), depth first, in the output's order."""
    import torch

    if isinstance(out, torch.Tensor):
        yield out
        return
    items = out.values() if isinstance(out, Mapping) else out if isinstance(out, (tuple, list)) else ()
    for item in items:
        yield from output_tensors(item)


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


ALIGN = 64  # bytes: every tensor's data starts at a multiple of this in its file


def save(tensors: dict[str, Any], path: str) -> float:
    """Write the tensors (detached, on the CPU, sparse ones made dense) to one file: a JSON header
    of their names, dtypes, shapes and offsets, then each one's bytes as they lie in memory (no
    pickling, no zip, no checksum per tensor: a 124M-parameter model's tensors cost the write of
    their bytes, a third of torch.save's CPU). Returns their largest |value| (the tolerance's
    scale of that kind)."""
    out = {n: dense(t.detach().cpu()).resolve_conj().resolve_neg().contiguous() for n, t in tensors.items()}
    header: list[dict[str, Any]] = []
    at = 0
    for n, t in out.items():
        size = t.numel() * t.element_size()
        header.append(
            {"name": n, "dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape), "at": at}
        )
        at += -(-size // ALIGN) * ALIGN
    head = json.dumps(header).encode()
    start = -(-(8 + len(head)) // ALIGN) * ALIGN
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as fh:
        fh.write(len(head).to_bytes(8, "little") + head + bytes(start - 8 - len(head)))
        for t, h in zip(out.values(), header):
            fh.seek(start + h["at"])
            size = t.numel() * t.element_size()
            if size:
                fh.write(memoryview((ctypes.c_char * size).from_address(t.data_ptr())))
        fh.truncate(start + at)
    os.replace(tmp, path)
    return max((_abs_max(t) for t in out.values() if t.numel() and t.is_floating_point()), default=0.0)


def load(path: str) -> dict[str, Any]:
    """The tensors `save` wrote, mapped from the file (copy on write), not read into memory."""
    import torch

    with open(path, "rb") as fh:
        n = int.from_bytes(fh.read(8), "little")
        header = json.loads(fh.read(n))
    start = -(-(8 + n) // ALIGN) * ALIGN
    size = os.path.getsize(path)
    storage = torch.UntypedStorage.from_file(path, shared=False, nbytes=size) if size > start else None
    out = {}
    for h in header:
        dtype = getattr(torch, h["dtype"])
        t = torch.empty(0, dtype=dtype)
        if storage is not None and math.prod(h["shape"]):
            shape = h["shape"]
            stride = [math.prod(shape[i + 1 :]) for i in range(len(shape))]
            t.set_(storage, (start + h["at"]) // t.element_size(), shape, stride)  # type: ignore[arg-type]
        else:
            t = torch.empty(h["shape"], dtype=dtype)
        out[h["name"]] = t
    return out


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
    # Two float64 chunks, reused: no allocation (and no fresh pages to fault in) per chunk.
    n = a.numel()
    rbuf = torch.empty(min(n, CHUNK), dtype=torch.float64)
    abuf = None if same else torch.empty(min(n, CHUNK), dtype=torch.float64)
    for lo in range(0, n, CHUNK):
        hi = min(n, lo + CHUNK)
        ref_max = max(ref_max, _abs_max(b[lo:hi], rbuf))
        if abuf is None:
            continue
        rb = rbuf[: hi - lo].copy_(b[lo:hi])
        d = abuf[: hi - lo].copy_(a[lo:hi]).sub_(rb).abs_().nan_to_num_(nan=float("inf"))
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


def _abs_max(t: Any, buf: Any = None) -> float:
    """float(t.double().abs().max()): for floating point from the extremes, read in place (no
    |t| the size of t; exact in any float format; NaN where t holds one), else through `buf`, a
    float64 chunk."""
    if t.is_floating_point():
        lo, hi = t.aminmax()
        return max(abs(float(lo)), abs(float(hi)))
    return float(buf[: t.numel()].copy_(t).abs_().max())


def dot(ref: Any, dist: Any) -> tuple[float, float]:
    """(sum ref x dist, sum dist x dist) in float64: the pieces of the least-squares factor."""
    import torch

    a, b = ref.reshape(-1), dist.detach().cpu().reshape(-1)
    if a.shape != b.shape:
        return 0.0, 0.0
    num = den = 0.0
    size = min(a.numel(), CHUNK)
    xbuf, ybuf, pbuf = (torch.empty(size, dtype=torch.float64) for _ in range(3))
    for lo in range(0, a.numel(), CHUNK):
        m = min(a.numel() - lo, CHUNK)
        x, y, p = xbuf[:m].copy_(a[lo : lo + m]), ybuf[:m].copy_(b[lo : lo + m]), pbuf[:m]
        num += float(torch.mul(x, y, out=p).sum())
        den += float(torch.mul(y, y, out=p).sum())
    return num, den
