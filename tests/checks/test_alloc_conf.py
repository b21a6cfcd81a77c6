"""PYTORCH_CUDA_ALLOC_CONF (and PYTORCH_ALLOC_CONF) judged as torch's CUDAAllocatorConfig parses
it: ENV409 for what torch rejects at every rank's first CUDA allocation, nothing for what it takes."""

from __future__ import annotations

import pytest

from pgdoctor.knowledge.alloc_conf import problems


@pytest.mark.parametrize("conf", [
    "expandable_segments:True",
    "max_split_size_mb:512,garbage_collection_threshold:0.8",
    "roundup_power2_divisions:[256:1,512:2,1024:4,>:8],backend:native",
    "roundup_power2_divisions:4",
    "backend:cudaMallocAsync",
    " expandable_segments:False , pinned_num_register_threads:8 ",
])
def test_what_torch_accepts_passes(conf: str) -> None:
    assert problems(conf) == []


@pytest.mark.parametrize(("conf", "phrase"), [
    ("expandable_segment:True", "did you mean expandable_segments?"),
    ("expandable_segments:true", "must be one of True, False"),
    ("expandable_segments", "is not key:value"),
    ("max_split_size_mb:10", "must be more than 20"),
    ("max_split_size_mb:1.5", "whole number"),
    ("garbage_collection_threshold:1.0", "less than 1"),
    ("roundup_power2_divisions:3", "power of two"),
    ("roundup_power2_divisions:[256:3]", "size:divisions"),
    ("backend:async", "native, cudaMallocAsync"),
])
def test_what_torch_rejects_is_named(conf: str, phrase: str) -> None:
    found = problems(conf)
    assert len(found) == 1 and phrase in found[0], found


def test_the_check_reads_both_names_from_the_snapshot() -> None:
    from pgdoctor.checks.knobs import alloc_conf
    from pgdoctor.model import Measurement, ProbeResult, Snapshot, Status

    env = {"PYTORCH_ALLOC_CONF": "expandable_segments:yes", "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}
    snap = Snapshot(host="h", time_unix=0.0, pgdoctor_version="0", level="quick",
                    probes=(ProbeResult("environment", "launch", Status.PASSED, "", 0.0,
                                        (Measurement("env.vars", env),)),))
    (finding,) = alloc_conf(snap, {})
    assert finding.code == "ENV409" and finding.facts["variable"] == "PYTORCH_ALLOC_CONF"
