"""The compute micro-probe's decisions that do not need a GPU: which GPUs it may load, how torch
devices map to NVML indices, how rates are taken, and that it is unavailable on a CPU torch."""

from __future__ import annotations

import types

import pytest

from pgdoctor.model import Measurement, Reason, Scope
from pgdoctor.probes.base import PROBES, ProbeContext, ProbeUnavailable
from pgdoctor.probes.gpu.compute import best_rate, busy_gpus, gpu_compute, nvml_index_by_uuid, torch_uuid


def _previous() -> list[Measurement]:
    return [
        Measurement("gpu.own_pids", [100]),
        Measurement("gpu.uuid", "GPU-aaa", scope=Scope(gpu_index=0, gpu_uuid="GPU-aaa")),
        Measurement("gpu.uuid", "GPU-bbb", scope=Scope(gpu_index=1, gpu_uuid="GPU-bbb")),
        Measurement(
            "gpu.processes", [{"pid": 100, "name": "pgdoctor", "used_bytes": 1}], scope=Scope(gpu_index=0)
        ),
        Measurement(
            "gpu.processes", [{"pid": 7, "name": "python", "used_bytes": 1 << 30}], scope=Scope(gpu_index=1)
        ),
    ]


def test_busy_gpus_ignores_pgdoctor_itself() -> None:
    assert busy_gpus(_previous(), [100]) == {1: [7]}


def test_torch_devices_map_to_nvml_indices_by_uuid() -> None:
    assert nvml_index_by_uuid(_previous()) == {"GPU-aaa": 0, "GPU-bbb": 1}
    assert torch_uuid(types.SimpleNamespace(uuid="bbb")) == "GPU-bbb"
    assert torch_uuid(types.SimpleNamespace(uuid="GPU-bbb")) == "GPU-bbb"
    assert torch_uuid(types.SimpleNamespace()) is None


def test_best_rate_takes_the_fastest_repeat() -> None:
    assert best_rate(100.0, [2.0, 1.0, 4.0]) == 100.0
    assert best_rate(100.0, [0.0, 2.0]) == 50.0


def test_compute_probe_runs_only_at_full_level_after_the_gpu_probe() -> None:
    spec = PROBES["gpu_compute"]
    assert (spec.level, spec.after) == ("full", ("gpu",))
    assert PROBES["gpu"].level == "quick"


def test_compute_probe_is_unavailable_on_a_cpu_torch() -> None:
    with pytest.raises(ProbeUnavailable) as err:
        gpu_compute(ProbeContext(env={}, level="full", previous=_previous()))
    assert err.value.reason is Reason.NOT_PRESENT
