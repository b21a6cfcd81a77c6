"""PYTORCH_CUDA_ALLOC_CONF is read with torch's grammar: every key of torch 2.x in its accepted
forms passes, each unknown key or bad value is one ENV406 naming the key, and native-only
options beside backend:cudaMallocAsync are ENV420."""

from __future__ import annotations

import pytest

from pgdoctor.checks.alloc_conf import allocator_conf, parse
from pgdoctor.engine.config import config_from_mapping
from pgdoctor.model import Measurement, ProbeResult, Snapshot, Status


def _findings(env: dict[str, str]) -> list:
    probe = ProbeResult("environment", "launch", Status.PASSED, measurements=(Measurement("env.vars", env),))
    return allocator_conf(Snapshot("h", 0.0, "0", "quick", (probe,)), config_from_mapping({}))


@pytest.mark.parametrize(
    "value",
    [
        "expandable_segments:True",
        "expandable_segments:False,max_split_size_mb:512",
        "max_split_size_mb:20, garbage_collection_threshold:0.6",
        "roundup_power2_divisions:4",
        "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]",
        "roundup_power2_divisions:[>:0]",
        "backend:native,release_lock_on_cudamalloc:True",
        "backend:cudaMallocAsync",
        "pinned_use_cuda_host_register:True,pinned_num_register_threads:8",
        "pinned_use_hip_host_register:False,pinned_reserve_segment_size_mb:64",
        "max_non_split_rounding_mb:1024,pinned_use_background_threads:True",
    ],
)
def test_forms_torch_accepts_give_no_finding(value: str) -> None:
    assert parse(value).problems == []
    assert _findings({"PYTORCH_CUDA_ALLOC_CONF": value}) == []


@pytest.mark.parametrize(
    "value,key",
    [
        ("expandable_segments:true", "expandable_segments"),
        ("expandable_segments:1", "expandable_segments"),
        ("expandable_segment:True", "expandable_segment"),
        ("max_split_size_mb:10", "max_split_size_mb"),
        ("max_split_size_mb:512MB", "max_split_size_mb"),
        ("garbage_collection_threshold:1.0", "garbage_collection_threshold"),
        ("garbage_collection_threshold:high", "garbage_collection_threshold"),
        ("roundup_power2_divisions:3", "roundup_power2_divisions"),
        ("roundup_power2_divisions:[256:3,>:8]", "roundup_power2_divisions"),
        ("roundup_power2_divisions:[300:2]", "roundup_power2_divisions"),
        ("roundup_power2_divisions:[256:2", "roundup_power2_divisions"),
        ("pinned_num_register_threads:6", "pinned_num_register_threads"),
        ("pinned_num_register_threads:256", "pinned_num_register_threads"),
        ("pinned_reserve_segment_size_mb:0", "pinned_reserve_segment_size_mb"),
        ("backend:cudaMalloc", "backend"),
        ("max_split_size_mb", "max_split_size_mb"),
    ],
)
def test_each_bad_key_or_value_is_one_finding_that_names_the_key(value: str, key: str) -> None:
    found = _findings({"PYTORCH_CUDA_ALLOC_CONF": value})
    assert [f.code for f in found] == ["ENV406"]
    assert found[0].facts["key"] == key
    assert key in found[0].message and "PYTORCH_CUDA_ALLOC_CONF" in found[0].message
    assert found[0].evidence[0].text == f"PYTORCH_CUDA_ALLOC_CONF={value}"


def test_every_problem_of_one_value_is_named_not_only_the_first() -> None:
    found = _findings({"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:true,max_split_size_mb:8,foo:1"})
    assert sorted(f.facts["key"] for f in found) == ["expandable_segments", "foo", "max_split_size_mb"]


def test_hip_and_generic_spellings_are_judged_too() -> None:
    found = _findings({"PYTORCH_HIP_ALLOC_CONF": "expandable_segments:yes", "PYTORCH_ALLOC_CONF": "bogus:1"})
    assert sorted(f.facts["variable"] for f in found) == ["PYTORCH_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF"]


def test_native_options_beside_the_async_backend_are_named_as_ignored() -> None:
    found = _findings(
        {"PYTORCH_CUDA_ALLOC_CONF": "backend:cudaMallocAsync,expandable_segments:True,max_split_size_mb:512"}
    )
    assert [f.code for f in found] == ["ENV420"]
    assert found[0].facts["ignored"] == ["expandable_segments", "max_split_size_mb"]
    assert _findings({"PYTORCH_CUDA_ALLOC_CONF": "backend:native,expandable_segments:True"}) == []
