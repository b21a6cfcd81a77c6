"""The GPU tier of `hang` (NVML, per rank SM utilisation) over the strict replay backend: a rank
at 100% SM runs a kernel (a spin when it waits), a culprit at 0% is held on the host. No GPU
here, so NVML is the one fake; the ranks are real gloo processes."""

from __future__ import annotations

import json

import pytest

from pgdoctor.diagnose.stacks.evidence import RankEvidence, gpu_phrase
from pgdoctor.hang.api import examine
from pgdoctor.probes.gpu import rank_util
from pgdoctor.probes.gpu.nvml import ReplayBackend, UnrecordedCall
from tests.helpers.hang_lab import torchrun_job
from tests.helpers.make_nvml_fixtures import HANG_PIDS, hang_pair_calls
from tests.helpers.paths import FIXTURES

RECORDING = FIXTURES / "nvml" / "h100_pcie_2gpu_hang.json"


def test_recording_is_current_and_read_per_rank() -> None:
    assert json.loads(RECORDING.read_text())["calls"] == hang_pair_calls()
    got, status = rank_util.read([*HANG_PIDS, 999], lambda: ReplayBackend.from_fixture(str(RECORDING)))
    assert status == "ok"
    assert got == {
        4101: {"device": 0, "sm_util": 100, "sm_source": "process", "device_util": 100},
        4102: {"device": 1, "sm_util": 0, "sm_source": "process", "device_util": 0},
    }


def test_unsupported_per_process_figures_fall_back_to_the_device() -> None:
    def backend() -> ReplayBackend:
        b = ReplayBackend.from_fixture(str(RECORDING))
        b.inject("nvmlDeviceGetProcessUtilization", error="NotSupported")
        return b

    got, _ = rank_util.read(list(HANG_PIDS), backend)
    assert got[4101]["sm_source"] == "device" and got[4101]["sm_util"] == 100
    assert "(whole device)" in gpu_phrase(got[4101])


def test_no_nvml_and_strictness() -> None:
    got, status = rank_util.read([1], lambda: ReplayBackend({}, init_error="DriverNotLoaded"))
    assert got == {} and status == "no GPU here (NVML: driver_not_loaded)"
    empty = ReplayBackend({"nvmlDeviceGetCount()": 1})
    empty.init()
    with pytest.raises(UnrecordedCall):  # a call the recording does not hold is a test bug, not a value
        empty.call("nvmlDeviceGetUtilizationRates", 0)
    assert gpu_phrase({}) == "" and "a kernel runs" in gpu_phrase({"device": 0, "sm_util": 97})
    ev = RankEvidence(rank=1, pid=2, gpu={"device": 1, "sm_util": 0})
    assert RankEvidence.from_json(ev.to_json()).gpu == ev.gpu


def test_gpu_tier_on_a_real_hung_job_tells_the_culprit_is_held_on_the_host(no_leftover_children) -> None:
    with torchrun_job("sleep", [1], nproc=2) as job:
        pids = job.wait_ready(2)

        def backend() -> ReplayBackend:  # the recording, with its pids mapped onto the real ranks
            return ReplayBackend(hang_pair_calls((pids[0], pids[1])))

        report = examine(pids=[job.pid], samples=2, interval_s=0.2, tiers=("py-spy", "nvml"), nvml=backend)
    fail = next(f for f in report.findings if f.severity.value == "fail")
    assert fail.code == "HNG101" and fail.facts["ranks"] == [1]
    assert "(GPU 1 at 0% SM: the GPU is idle, the rank is held on the host)" in fail.message
    assert fail.facts["gpu"] == {"1": {"device": 1, "sm_util": 0, "sm_source": "process", "device_util": 0}}
    ranks = {r["rank"]: r for r in report.extra["hang"]["jobs"][0]["ranks"]}
    assert ranks[0]["gpu"]["sm_util"] == 100 and ranks[0]["tiers"]["nvml"] == "ok"
