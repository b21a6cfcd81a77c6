"""The one-process reference as a rank sees it: the scales it recorded per step and kind
(reference.json) and the tensor files it saved (records.tensor_file), read one at a time with
torch's own serialisation (mapped, not copied) and compared tensor by tensor (tensors.diff)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any, Callable, Optional

from pgdoctor.verify.compare import rtol
from pgdoctor.verify.entry import EntryError
from pgdoctor.verify.records import StepRecord, TensorDiff, tensor_file
from pgdoctor.verify.tensors import diff, dot, load


class Reference:
    """A rank's view of the reference saved in its run directory: its scales per step and kind,
    and its tensor files (under ddp/fsdp rank 0 alone reads each, once, and deletes it)."""

    def __init__(self, out_dir: str):
        with open(os.path.join(out_dir, "reference.json"), encoding="utf-8") as fh:
            rec = json.load(fh)
        self.out_dir = out_dir
        self.dtype = rec.get("setup", {}).get("dtype", "float32")
        self.scales = [s.get("scale", {}) for s in rec.get("steps", [])]
        self.hashes = [s.get("hashes", []) for s in rec.get("steps", [])]

    def check_samples(self, rank: int, world: int, step: int, digest: str) -> None:
        """The contract the whole comparison rests on: data(rank, world, step) is a function of its
        arguments, so the reference rebuilds each rank's micro-batch. A rank whose samples differ
        from the reference's for the same call ends the run as the entry's error: any comparison
        after it would blame the model (a rank-dependent forward, an unexplained divergence)."""
        known = self.hashes[step] if step < len(self.hashes) else []
        if rank >= len(known) or known[rank] == digest:
            return
        raise EntryError(
            f"data({rank}, {world}, {step}) gave other samples on rank {rank} than in the one-process "
            "reference, with the same arguments and torch's RNG seeded alike: data() depends on "
            "something besides its arguments (the rank or world size read from RANK / LOCAL_RANK / "
            "WORLD_SIZE or torch.distributed, a loader or generator whose state advances per call, an "
            "unseeded NumPy or random draw), so the reference cannot rebuild the global batch; make "
            "data a function of (rank, world, step)"
        )

    @classmethod
    def of(cls, cfg: dict[str, Any]) -> Optional[Reference]:
        """The reference of this run when it ran first and saved its tensors, else None."""
        if not cfg.get("reference_first") or not os.path.exists(
            os.path.join(cfg["out_dir"], "reference.json")
        ):
            return None
        return cls(cfg["out_dir"])

    def compare(
        self,
        step: int,
        kind: str,
        tensors: Iterator[tuple[str, Any]],
        rec: StepRecord,
        delete: bool = True,
        part: Optional[Callable[[str, Any], Any]] = None,
    ) -> None:
        """Each (name, tensor) against the reference's of that step and kind, into
        rec["diffs"][kind]; `part(name, ref)` is the piece of the reference tensor this rank
        holds (a tensor-parallel shard). The file is deleted afterwards unless other ranks read
        it too (`delete=False`: the run directory goes at the end)."""
        path = tensor_file(self.out_dir, step, kind)
        ref = load(path) if os.path.exists(path) else {}
        scale = self.scales[step].get(kind, 0.0) if step < len(self.scales) else 0.0
        tol = rtol(self.dtype, step) * scale
        out: dict[str, TensorDiff] = {}
        num = den = 0.0
        for name, t in tensors:
            r = ref.get(name)
            if r is not None and part is not None:
                r = part(name, r)
            if r is None:
                out[name] = {"abs": float("inf"), "ref_max": 0.0}
                continue
            out[name] = diff(t, r, tol)
            if kind == "grads":
                n, d = dot(r, t)
                num, den = num + n, den + d
        rec.setdefault("diffs", {})[kind] = out
        if kind == "grads":
            rec["grad_dot"] = [num, den]
        del ref
        if delete:
            try:
                os.unlink(path)
            except OSError:
                pass
