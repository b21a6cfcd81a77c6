"""Three families read at their source, each in its versions' words:

- the amdgpu kernel driver's failed GPU reset (amdgpu_device.c / amdgpu_reset.c, kernels 4.x-6.x: "GPU
  mode1 reset failed", "ASIC reset failed with error, -121 for drm dev, ...", "GPU reset(2) failed",
  "BACO reset failed", "GPU Recovery Failed: -110") and a reset that came back without the GPU's memory
  ("[drm] VRAM is lost due to GPU reset!"): GPU hardware; "GPU reset succeeded" alone is a recovery;
- TensorFlow's collective implementations aborting (ring_alg.cc "Aborting RingReduce with <Status>",
  RingGather, the tree broadcaster, and BaseCollectiveExecutor::StartAbort): UNAVAILABLE is a worker or
  its connection gone (network), DEADLINE_EXCEEDED a timeout; "Out of range: End of sequence" is a
  healthy end of input and "Cancelled" a consequence, both silent;
- rccl-tests' HIPCHECK ("Test HIP failure common.cu:N 'hipErrorInvalidDevice'"), read as nccl-tests'
  CUDACHECK is: a GPU index that is not visible.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, check_root, prefixed, root_finding

DMESG = ["", "[22344.295194] ", "Jun 03 11:02:41 node12 kernel: "]

AMDGPU_FAILED = [
    ("amdgpu 0000:03:00.0: amdgpu: GPU mode1 reset failed", "gpu_reset_failed"),
    (
        "amdgpu 0000:83:00.0: amdgpu: ASIC reset failed with error, -121 for drm dev, 0000:83:00.0",
        "gpu_reset_failed",
    ),
    ("amdgpu 0000:c3:00.0: amdgpu: GPU reset(2) failed", "gpu_reset_failed"),
    ("amdgpu 0000:c3:00.0: GPU reset(5) failed", "gpu_reset_failed"),
    ("amdgpu 0000:c3:00.0: amdgpu: BACO reset failed", "gpu_reset_failed"),
    ("amdgpu 0000:c3:00.0: amdgpu: GPU Recovery Failed: -110", "gpu_reset_failed"),
    ("[drm] VRAM is lost due to GPU reset!", "vram_lost_in_reset"),
]


@pytest.mark.parametrize("prefix", DMESG)
@pytest.mark.parametrize(("line", "reason"), AMDGPU_FAILED)
def test_a_failed_amdgpu_reset_is_the_hardware(prefix: str, line: str, reason: str) -> None:
    check_root(prefix + line + "\n", "RUN295", {"reason": reason, "runtime": "rocm"})


@pytest.mark.parametrize("prefix", DMESG)
def test_a_failed_reset_under_the_job_that_died_on_it_is_hardware(prefix: str) -> None:
    log = (
        "[rank3]: RuntimeError: HIP error: an illegal memory access was encountered\n"
        + prefix
        + "amdgpu 0000:83:00.0: amdgpu: ASIC reset failed with error, -121 for drm dev, 0000:83:00.0\n"
    )
    # the runtime's error reads the kernel's record as its hardware evidence: one hardware root
    root = root_finding(log)
    assert root is not None and root.category == "gpu_hardware", root
    assert any("ASIC reset failed" in e.text for e in root.evidence) or root.code == "RUN295", root


@pytest.mark.parametrize(
    "line",
    [
        "amdgpu 0000:83:00.0: amdgpu: GPU reset succeeded, trying to resume",
        "[drm] PSP is resuming...",
        "amdgpu 0000:83:00.0: amdgpu: GPU reset(2) succeeded!",
    ],
)
def test_a_reset_that_recovered_is_no_failure(line: str) -> None:
    assert root_finding(line + "\n") is None


TF = [
    "2019-05-20 12:05:41.289749: E tensorflow/core/common_runtime/ring_reducer.cc:369] ",
    "E0520 12:05:41.289749 140066416998144 ring_alg.cc:279] ",
    "",
]
TF_ABORTS = [
    ("Aborting RingReduce with Unavailable: OS Error", "RUN174", "Unavailable"),
    ("Aborting RingGather with Unavailable: Socket closed", "RUN174", "Unavailable"),
    (
        "Aborting HierarchicalTreeBroadcast with UNAVAILABLE: Connection reset by peer",
        "RUN174",
        "UNAVAILABLE",
    ),
    ("BaseCollectiveExecutor::StartAbort Unavailable: OS Error", "RUN174", "Unavailable"),
    ("Aborting RingReduce with Deadline Exceeded: Collective has timed out", "RUN151", "Deadline Exceeded"),
    (
        "BaseCollectiveExecutor::StartAbort DEADLINE_EXCEEDED: Deadline Exceeded",
        "RUN151",
        "DEADLINE_EXCEEDED",
    ),
]


@pytest.mark.parametrize("prefix", TF)
@pytest.mark.parametrize(("line", "code", "status"), TF_ABORTS)
def test_tensorflows_collective_abort_is_read_by_its_status(
    prefix: str, line: str, code: str, status: str
) -> None:
    check_root(prefix + line + "\n", code, {"framework": "tensorflow", "status": status})


@pytest.mark.parametrize("prefix", TF)
@pytest.mark.parametrize(
    "line",
    [
        "BaseCollectiveExecutor::StartAbort Out of range: End of sequence",
        "BaseCollectiveExecutor::StartAbort Cancelled: [_Derived_]Cancelled",
        "Aborting RingReduce with Cancelled: Derived: Cancelled",
    ],
)
def test_the_end_of_input_and_a_cancelled_collective_are_silent(prefix: str, line: str) -> None:
    assert root_finding(prefix + line + "\n") is None


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
def test_rccl_tests_hip_check_names_the_invisible_device(prefix: str) -> None:
    log = prefixed(
        prefix, "node05: Test HIP failure common.cu:1129 'hipErrorInvalidDevice' while running test"
    )
    check_root(log, "RUN264")
