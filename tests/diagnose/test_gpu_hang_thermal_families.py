"""GPU hang, thermal and helper-exit families, read at their sources:

- Linux xe (drivers/gpu/drm/xe/xe_guc_submit.c, xe_gt.c, xe_device.c; 6.8-6.16) and i915
  (i915_gpu_error.c, gt/intel_reset.c; 3.x-6.x) job timeouts, engine resets and failed resets; the runtimes'
  DEVICE_LOST statuses (Level Zero ze_api.h, Unified Runtime ur_api.h, Vulkan vulkan_core.h / vulkan.hpp):
  RUN355; amdgpu 6.13+'s ring timeout without "*ERROR*" (amdgpu_job.c): RUN295;
- DCGM dcgmlib/dcgm_errors.h (2.x "clock throttling", 3.2+ "clocks event") thermal and power verdicts and
  the health watch's "Detected a WARNING in health system Thermal: '...'" (DcgmHealthWatch.cpp):
  RUN356 (a power violation alone stays silent); nvidia-smi -q's Clocks Event / Throttle Reasons with a
  hardware or thermal slowdown Active: RUN356; its volatile / CUDA double-bit ECC verdicts: RUN242;
- tt-umd's TTDevice hang read ("Read 0xffffffff from PCIE" / "over PCIe ID N"), its ARC timeout and
  tt-smi's "POST_RESET failed for device N.": RUN293;
- torch/csrc/DataLoader.cpp's "DataLoader worker (pid N) exited unexpectedly with exit code N" and Paddle
  1.8-2.x's launcher (paddle/distributed/utils.py, fleet/launch_utils.py) "ABORT!!! Out of all N trainers, the
  trainer process with rank=[...] was aborted.": RUN133.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = ["", "Jul 16 07:59:02 node3 kernel: ", "[ 1218.319232] ", "[Tue Aug  4 20:51:21 2026] "]

CASES = [
    # xe 6.10+
    (
        "xe 0000:03:00.0: [drm] Tile0: GT0: Timedout job: seqno=4831999, lrc_seqno=4831999, guc_id=0, "
        "flags=0x73 in no process [-1]",
        "RUN355",
        {"driver": "xe", "pci_bus_id": "0000:03:00.0", "seqno": 4831999},
    ),
    (
        "xe 0000:00:02.0: [drm] Tile0: GT0: Timedout job: seqno=9883, lrc_seqno=9883, guc_id=3, flags=0x0 in "
        "python3 [3245]",
        "RUN355",
        {"driver": "xe", "process": "python3", "pid": 3245},
    ),
    # xe 6.8 (no lrc_seqno, no process)
    (
        "xe 0000:00:02.0: [drm] GT0: Timedout job: seqno=24496, guc_id=0, flags=0x13",
        "RUN355",
        {"driver": "xe"},
    ),
    (
        "xe 0000:3d:00.0: [drm] Tile0: GT0: Engine reset: engine_class=ccs, logical_mask: 0x1, guc_id=9, "
        "state=0x29",
        "RUN355",
        {"driver": "xe", "engine": "ccs", "pci_bus_id": "0000:3d:00.0"},
    ),
    ("xe 0000:00:02.0: [drm] GT0: Engine reset: engine_class=bcs, logical_mask: 0x2, guc_id=0", "RUN355", {}),
    ("xe 0000:03:00.0: [drm] Tile0: GT0: Kernel-submitted job timed out", "RUN355", {"driver": "xe"}),
    (
        "xe 0000:e3:00.0: [drm] Tile0: GT0: Engine memory CAT error [18]: class=bcs, logical_mask: 0x1, "
        "guc_id=18",
        "RUN355",
        {"engine": "bcs"},
    ),
    (
        "xe 0000:03:00.0: [drm] Tile0: GT0: reset failed (-ETIMEDOUT)!",
        "RUN355",
        {"reason": "gpu_reset_failed"},
    ),
    (
        "xe 0000:03:00.0: [drm] CRITICAL: Xe has declared device 0000:03:00.0 as wedged.",
        "RUN355",
        {"reason": "gpu_reset_failed", "driver": "xe"},
    ),
    # i915
    (
        "[drm] GPU HANG: ecode 7:0:0x85df3c1c, in Xorg [19819], reason: Ring hung, action: reset",
        "RUN355",
        {"driver": "i915", "process": "Xorg", "pid": 19819},
    ),
    (
        "i915 0000:00:02.0: [drm] GPU HANG: ecode 9:1:e757fefe, in python [25627]",
        "RUN355",
        {"driver": "i915", "pid": 25627},
    ),
    ("i915 0000:00:02.0: [drm] GPU HANG: ecode 12:0:00000000", "RUN355", {"driver": "i915"}),
    ("i915 0000:00:02.0: [drm] Resetting rcs0 for preemption time out", "RUN355", {"engine": "rcs0"}),
    ("i915 0000:00:02.0: [drm] Resetting chip for stopped heartbeat on rcs0", "RUN355", {"engine": "rcs0"}),
    ("i915 0000:00:02.0: [drm] Resetting chip for hang on rcs0", "RUN355", {"driver": "i915"}),
    ("drm/i915: Resetting chip after gpu hang", "RUN355", {"driver": "i915"}),
    ("i915 0000:00:02.0: [drm] python[2770] context reset due to GPU hang", "RUN355", {"driver": "i915"}),
    ("i915 0000:00:02.0: [drm] *ERROR* Failed to reset chip", "RUN355", {"reason": "gpu_reset_failed"}),
    # amdgpu 6.13+: the ring timeout through dev_err, without "*ERROR*" (amdgpu_job.c)
    (
        "amdgpu 0000:c2:00.0: ring gfx_0.0.0 timeout, signaled seq=166926, emitted seq=166928",
        "RUN295",
        {"ring": "gfx_0.0.0"},
    ),
    # runtimes
    (
        "RuntimeError: level_zero backend failed with error: 20 (UR_RESULT_ERROR_DEVICE_LOST)",
        "RUN355",
        {"driver": "sycl_ur"},
    ),
    ("terminate called after throwing ZE_RESULT_ERROR_DEVICE_LOST", "RUN355", {"driver": "level_zero"}),
    ("ggml_vulkan: vk::Queue::submit: ErrorDeviceLost", "RUN355", {"driver": "vulkan"}),
    ("VK_ERROR_DEVICE_LOST", "RUN355", {"driver": "vulkan"}),
    # DCGM
    (
        "ERROR [1514002:1514004] [[Health]] Detected a WARNING in health system Thermal: 'Detected "
        "clocks event "
        "due to thermal violation in GPU 2. Verify that the cooling on this machine is functional, including "
        "external, thermal material interface, fans, and any other components.",
        "RUN356",
        {"gpu": 2, "violation": "thermal"},
    ),
    ("Detected clock throttling due to thermal violation in GPU 0.", "RUN356", {"gpu": 0}),
    (
        "GPU X Thermal violations totaling 0.0 seconds started at 30.0 seconds into the test",
        "RUN356",
        {"violation_seconds": 0.0},
    ),
    ("There were thermal violations totaling 12.5 seconds for GPU 1", "RUN356", {"violation_seconds": 12.5}),
    (
        "Thermal violations totaling 3.0 seconds started at 4.5 seconds into the test for GPU 3",
        "RUN356",
        {"gpu": 3},
    ),
    (
        "Temperature 91 of GPU 7 exceeded user-specified maximum allowed temperature 87",
        "RUN356",
        {"temperature_c": 91, "max_temperature_c": 87},
    ),
    (
        "Temperature 96 of HBM memory 7 exceeded user-specified maximum allowed temperature 95",
        "RUN356",
        {"gpu": 7},
    ),
    (
        "Clocks are being throttled for GPU 4 because of clock throttling starting 12.0 seconds into the "
        "test. "
        "HW Slowdown is engaged",
        "RUN356",
        {"gpu": 4},
    ),
    (
        "Clocks event for GPU 4 because of clocks event starting 12.0 seconds into the test.",
        "RUN356",
        {"gpu": 4},
    ),
    # nvidia-smi -q, Clocks Event Reasons (535+) / Clocks Throttle Reasons
    ("            HW Thermal Slowdown           : Active", "RUN356", {"violation": "hw_thermal_slowdown"}),
    ("        SW Thermal Slowdown               : Active", "RUN356", {"violation": "sw_thermal_slowdown"}),
    (
        "            HW Power Brake Slowdown       : Active",
        "RUN356",
        {"violation": "hw_power_brake_slowdown"},
    ),
    ("        HW Slowdown                       : Active", "RUN356", {"violation": "hw_slowdown"}),
    ("Detected 2 volatile double-bit ECC error(s) in GPU 6.", "RUN242", {"gpu": 6, "dbe_count": 2}),
    ("CUDA APIs have indicated that a double-bit ECC error has occured on GPU 1.", "RUN242", {"gpu": 1}),
    # Tenstorrent: tt-umd's hang read (older and newer wording), its ARC wait, tt-smi's galaxy reset
    (
        "  what():  Read 0xffffffff from PCIE: you should reset the board.",
        "RUN293",
        {"accelerator": "tenstorrent", "reason": "pcie_hung"},
    ),
    ("RuntimeError: Read 0xffffffff over PCIe ID 21: the board should be reset", "RUN293", {"pcie_id": 21}),
    ("Timed out after waiting 1000 ms for ARC to respond", "RUN293", {"arc_timeout_ms": 1000}),
    (" Error: POST_RESET failed for device 23.", "RUN293", {"reason": "reset_failed", "device": "23"}),
    ("POST_RESET failed for devices: [4, 9]", "RUN293", {"device": "[4, 9]"}),
    # DataLoader and Paddle's launcher
    (
        "RuntimeError: DataLoader worker (pid 7948) exited unexpectedly with exit code 1. Details are "
        "lost due "
        "to multiprocessing. Rerunning with num_workers=0 may give better error trace.",
        "RUN133",
        {"worker_pid": 7948, "exitcode": 1},
    ),
    (
        "ERROR 2020-11-30 13:01:49,988 utils.py:413] ABORT!!! Out of all 2 trainers, the trainer process "
        "with "
        "rank=[0, 1] was aborted. Please check its log.",
        "RUN133",
        {"world_size": 2, "ranks": [0, 1]},
    ),
    (
        "ERROR 2021-03-04 10:00:00,000 launch_utils.py:327] ABORT!!! Out of all 8 trainers, the trainer "
        "process "
        "with rank=[3] was aborted. Please check its log.",
        "RUN133",
        {"rank": 3},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line,code,facts", CASES)
def test_gpu_hang_thermal_family(prefix: str, line: str, code: str, facts: dict[str, object]) -> None:
    _check(prefix + line + "\n", code, facts)


def test_xe_wrapped_job_names_process() -> None:
    log = (
        "  2026-09-13T22:23:00 xe 0000:3d:00.0: [drm] Tile0: GT0: Engine reset: engine_class=ccs, "
        "logical_mask: "
        "0x1, guc_id=9,\n  state=0x29\n  2026-09-13T22:23:00 xe 0000:3d:00.0: [drm] Tile0: GT0: Timedout "
        "job: "
        "seqno=1523, lrc_seqno=1523, guc_id=9, flags=0x20 in\n  python [2693]\n"
    )
    _check(log, "RUN355", {"engine": "ccs", "process": "python", "pid": 2693})


QUIET = [
    # the driver checking a long job, and the recovery steps after a hang: not a hang of their own
    "xe 0000:2b:00.0: [drm] Tile0: GT0: Check job timeout: seqno=1484958, lrc_seqno=1484958, guc_id=0, "
    "running_time_ms=5012, timeout_ms=5000, diff=0x12",
    "xe 0000:2b:00.0: [drm] Tile0: GT0: reset done",
    "i915 0000:00:02.0: [drm] GuC firmware i915/tgl_guc_70.bin version 70.5.1",
    # DCGM reporting healthy, and a skipped check
    "Health monitor report: Thermal: Healthy",
    "The Diagnostic test is skipped for this GPU.",
    # nvidia-smi -q on a loaded healthy GPU
    "        SW Power Cap                      : Active",
    "        HW Slowdown                       : Not Active",
    "            HW Thermal Slowdown           : Not Active",
    # nvidia-smi -q as quoted in open_clip#703 (healthy under load) and kubeflow#68 (idle)
    "        Idle                        : Active",
    "        Idle                              : Not Active",
    # a power cap reached under load: GPU Boost by design (DCGM issue 285), owned and silent
    "Detected clocks event due to power violation in GPU 5.",
    "Detected a WARNING in health system Power: 'Detected clock throttling due to power violation in GPU 5.",
]


@pytest.mark.parametrize("line", QUIET)
def test_quiet(line: str) -> None:
    assert _root(line + "\n") is None, line
