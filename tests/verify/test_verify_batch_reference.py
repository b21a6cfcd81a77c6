"""verify_many's ranks take the reference again for a run of the same entry and settings (the DDP and
FSDP runs of one model): rank 0 computes it once, links it into a folder of its own before any rank
can delete its tensor files, gives every later run of that key the same files, and removes the folder
with the last one. Plain files here (no torch): the reference role is replaced by a writer that counts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pgdoctor.verify import worker


def _items(tmp_path: Path, runs: list[tuple[str, str, int]]) -> list[dict[str, Any]]:
    items = []
    for i, (entry, role, data_world) in enumerate(runs):
        (tmp_path / str(i)).mkdir()
        items.append(
            {
                "entry": entry,
                "role": role,
                "strategy": role,
                "steps": 2,
                "backend": "gloo",
                "data_world": data_world,
                "out_dir": str(tmp_path / str(i)),
                "reference_first": True,
            }
        )
    return items


def test_a_reference_is_computed_once_per_entry_and_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    computed: list[int] = []

    def reference(cfg: dict[str, Any], role: str, rank: int, world: int) -> int:
        assert role == "reference" and rank == 0 and world == 1
        out = Path(cfg["out_dir"])
        computed.append(int(out.name))
        for step in range(cfg["steps"]):
            (out / f"reference.step{step}.grads.tensors").write_text(f"{cfg['entry']} {step}")
        (out / "reference.json").write_text(json.dumps({"run": out.name}))
        return 0

    monkeypatch.setattr(worker, "run_role", reference)
    runs = [("a:build", "ddp", 2), ("a:build", "fsdp", 2), ("a:build", "tp", 1), ("b:build", "ddp", 2)]
    items = _items(tmp_path, [*runs, ("a:build", "fsdp", 2)])
    keys = [worker._reference_key(cfg) for cfg in items]
    kept: dict[str, str] = {}
    for i, cfg in enumerate(items):
        assert worker._reference_of_batch(cfg, i, keys, kept) == 0
        if i == 0:
            # a rank deletes each tensor file as it compares: the kept links are what later runs take
            for f in (tmp_path / "0").glob("*.tensors"):
                f.unlink()
    # tp's global batch is one rank's, and b is another entry: each its own; run 4 is run 0's again
    assert computed == [0, 2, 3]
    for i in (1, 4):
        assert json.loads((tmp_path / str(i) / "reference.json").read_text()) == {"run": "0"}
        assert (tmp_path / str(i) / "reference.step1.grads.tensors").read_text() == "a:build 1"
    assert kept == {} and not list(tmp_path.glob("reference-of-*"))  # gone with the last run of its key
