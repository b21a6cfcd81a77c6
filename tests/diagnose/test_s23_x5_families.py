"""x5 of 2026-12-07 (late): real pastes of the cuda_oom, process_killed and gpu_hardware classes found in
public threads and run through the rules; the rules already read almost all of them (see the report). The
families below were silent, each read as its family (the program that prints it, across versions and
wrappers). The variants are not in any thread unless marked with its URL.

- RM's robust-channel recovery for a critical error (open-gpu-kernel-modules, kernel_rc / GSP's
  kgspRcAndNotifyAllChannels): "NVRM: kgspRcAndNotifyAllChannels_IMPL: RC all channels for critical error
  79." (https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1151), the krc spelling of newer drivers,
  other critical errors (119 GSP); read as the Xid it names (rules/accel_faults.py): RUN243 for 79, the Xid
  table's code otherwise. A question about the record and the GPU identity line stay silent.
- nv.c's older off-the-bus record "NVRM: GPU at 0000:02:00.0 has fallen off the bus." (drivers 295-470; an
  Ubuntu forums thread of 2012, "Kernel crashes related to nvidia"): RUN243 like today's "NVRM: GPU
  0000:02:00.0: GPU has fallen off the bus."; "NVRM: GPU at 0000:01:00.0 has software scheduler DISABLED"
  (a healthy vGPU line) stays silent.
- A title that says the run was killed, in a person's words without the signal (rules/killed_titles.py):
  "Process keeps getting killed" (https://github.com/InternLandMark/LandMark/issues/65), "Program killed
  unexpectedly" (https://github.com/MrGiovanni/DiffTumor/issues/10), '"Killed" in training'
  (https://github.com/jaewon-lee-b/lte/issues/22), '"Killed" error in the training process'
  (https://github.com/InternLandMark/LandMark/issues/61), "Killed!!" (https://github.com/zju3dv/LoFTR/issues/267),
  "自动被killed且无任何报错信息" (https://github.com/hiyouga/LlamaFactory/issues/6687),
  "训练时内存逐渐变大，最后被kill掉了" (https://github.com/hpcaitech/Open-Sora/issues/173),
  "训练过程中途总是退出（killed），没任何错误提示"
  (https://github.com/PaddlePaddle/PaddleDetection/issues/2271): RUN121 at tier 1, like vocabulary's "words:
  killed"; questions, requests, a kill a person did, a process that was not or cannot be killed, and a kill
  that names another cause (timeout, CUDA memory, SIGTERM) are not read here.
- A title that says the node lost a GPU ("gpu-2-12 has lost a GPU", https://github.com/cBio/cbio-cluster/issues/39;
  "GPU lost", https://github.com/learning-at-home/hivemind/issues/509) or, in Chinese, that a card dropped off
  ("显卡掉卡", "多卡训练时显卡掉了"): RUN565 (a GPU reported failing, rules/gpu_hardware.py), title only; lost
  memory, performance or a quota, and a question, stay silent.
- A title that says "fallen off of the bus" ("GPU has fallen off of the bus",
  https://github.com/NVIDIA/open-gpu-kernel-modules/issues/507): RUN243 like "fallen off the bus";
  questions stay silent.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, check_root, prefixed, root_finding

# (log, code, category)
FAILURES = [
    # RM's robust-channel recovery for a critical error
    # https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1151
    (
        "NVRM: kgspRcAndNotifyAllChannels_IMPL: RC all channels for critical error 79.",
        "RUN243",
        "gpu_hardware",
    ),
    (
        "Jul 18 21:08:48 kernel: NVRM: krcRcAndNotifyAllChannels_IMPL: RC all channels for critical "
        "error 79.",
        "RUN243",
        "gpu_hardware",
    ),
    (
        "[  549.167346] NVRM: krcRcAndNotifyAllChannels_IMPL: RC all channels for critical error 119.",
        "RUN241",
        "gpu_hardware",
    ),
    (
        "NVRM: GPU1 krcRcAndNotifyAllChannels_IMPL: RC all channels for critical error 79.",
        "RUN243",
        "gpu_hardware",
    ),
    # nv.c's older off-the-bus record (Ubuntu forums, 2012)
    (
        "Apr 16 12:39:12 blake kernel: [12149.628762] NVRM: GPU at 0000:02:00.0 has fallen off the bus.",
        "RUN243",
        "gpu_hardware",
    ),
    ("<4>[16450.076098] NVRM: GPU at 0000:01:00.0 has fallen off the bus.", "RUN243", "gpu_hardware"),
    ("NVRM: GPU at 0000:af:00.0 has fallen off the bus.", "RUN243", "gpu_hardware"),
    # "fallen off of the bus" in a title
    # https://github.com/NVIDIA/open-gpu-kernel-modules/issues/507
    ("GPU has fallen off of the bus", "RUN243", "gpu_hardware"),
    ("GPU fell off of the bus during DDP training", "RUN243", "gpu_hardware"),
    ("[BUG] GPUs keep falling off of the bus on 8x A100 node", "RUN243", "gpu_hardware"),
]

LOST_GPU_TITLES = [
    "gpu-2-12 has lost a GPU",
    "GPU lost",
    "The node has lost 2 GPUs",
    "显卡掉卡",
    "多卡训练时显卡掉了",
]

KILLED_TITLES = [
    "Process keeps getting killed",
    "Program killed unexpectedly",
    '"Killed" in training',
    '"Killed" error in the training process',
    "Killed!!",
    "自动被killed且无任何报错信息",
    "训练时内存逐渐变大，最后被kill掉了",
    "训练过程中途总是退出（killed），没任何错误提示",
    # variants
    "Training process killed during epoch 3 on 8 GPUs",
    "Job was killed after 2 hours of training",
    "训练进程被杀死",
    "[BUG] fine-tuning keeps getting killed with deepspeed zero3 offload",
    "Worker killed",
]

SILENT = [
    # a GPU's memory, performance or quota lost, a question
    "lost GPU memory after update",
    "GPU lost performance after driver update",
    "GPU is lost?",
    "I lost the GPU quota on colab",
    # killed, but a question, a request, a person's kill, not killed, or the run killing something else
    "why train be killed?",
    "请问训练的时候总是显示已杀死是什么原因？",
    "How to kill the training process",
    "zombie processes are not killed after training",
    "I killed the process with ctrl+c",
    "Can't kill the training process",
    "kill the job",
    "The run killed it",
    "processes killed by SIGTERM",
    # the GPU identity line above a record, a healthy vGPU line of nv.c
    "NVRM: GPU at PCI:0000:06:00: GPU-0b6b7808-c002-f593-ac86-cd8e57757b94",
    "[    5.016865] NVRM: GPU at 0000:01:00.0 has software scheduler DISABLED with policy BEST_EFFORT.",
    # questions
    "What does 'RC all channels for critical error 79' mean?",
    "What does GPU has fallen off of the bus mean?",
    "How to recover a GPU that fell off of the bus?",
    # the same words of something else
    "the bus fell off of the table",
    # TensorFlow's BFC allocator warning that goes on (https://github.com/bubbliiiing/yolov4-keras/issues/43)
    "ran out of memory trying to allocate 570.66MiB. The caller indicates that this is not a failure, but "
    "may mean that there could be performance gains if more memory were available.",
]

# Lines whose cause is another class's (a title that names the kill's cause says it), or that the rules
# already read, and must stay so.
OTHERS = [
    ("Training killed by NCCL watchdog timeout", "collective_timeout"),
    ("Training killed due to CUDA out of memory", "cuda_oom"),
    # https://github.com/NVIDIA/nccl/issues/1235
    (
        "ng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes",
        "cuda_oom",
    ),
    # https://github.com/mindspore-lab/mindone/issues/820
    (
        "[ERROR] PRE_ACT(145615,fffbdf67f120,python):2025-01-12-09:48:13.703.514 [mindspore/ccsrc/backend/"
        "common/mem_reuse/mem_dynamic_allocator.cc:392] AddMemBlockAndMemBufByEagerFree] "
        "TotalUsedMemStatistics : 24725382656 plus TotalUsedByEventMemStatistics : 0 and plus alloc size : "
        "100555779072 is more than total mem size : 61079552000.",
        "cuda_oom",
    ),
    # https://github.com/huggingface/optimum-habana/issues/1469
    (
        "RuntimeError: [Rank:0] FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed for size::234881024 "
        "(224)MB",
        "cuda_oom",
    ),
    # https://github.com/vllm-project/vllm/issues/10439
    (
        "vllm-1  | ERROR 11-18 18:07:28 engine.py:366] ValueError: No available memory for the cache blocks. "
        "Try increasing `gpu_memory_utilization` when initializing the engine.",
        "cuda_oom",
    ),
    # https://github.com/nextflow-io/nextflow/issues/5932
    (
        "slurmstepd: error: Detected 1 oom_kill event in StepId=11300781.0. Some of the step tasks have been "
        "OOM Killed.",
        "host_oom",
    ),
    # https://github.com/deepspeedai/DeepSpeed/issues/4890
    ("[ERROR] [launch.py:321:sigkill_handler [xxx] exits with return code = -9", "host_oom"),
    # https://github.com/hiyouga/LlamaFactory/issues/2206
    ("  traceback : Signal 7 (SIGBUS) received by PID 16615", "process_crash"),
    # https://github.com/nagadit/DeepFaceLab_Linux/issues/89
    (
        "Internal: failed call to cuDevicePrimaryCtxRetain: CUDA_ERROR_ECC_UNCORRECTABLE: uncorrectable ECC "
        "error encountered",
        "gpu_hardware",
    ),
    # a GPU identity line and then the record: still the GPU off the bus
    (
        "NVRM: GPU at PCI:0000:06:00: GPU-0b6b7808-c002-f593-ac86-cd8e57757b94\n"
        "NVRM: Xid (PCI:0000:06:00): 79, GPU has fallen off the bus.",
        "gpu_hardware",
    ),
]


@pytest.mark.parametrize(("log", "code", "category"), FAILURES)
def test_each_variant_names_its_cause(log: str, code: str, category: str) -> None:
    root = root_finding(log + "\n")
    assert root is not None and root.code == code and root.category == category, (log, root)


@pytest.mark.parametrize("title", LOST_GPU_TITLES)
def test_a_lost_gpu_title_names_the_device(title: str) -> None:
    root = root_finding(title + "\n")
    assert root is not None and root.code == "RUN565" and root.category == "gpu_hardware", (title, root)


@pytest.mark.parametrize("title", KILLED_TITLES)
def test_a_killed_title_names_the_kill(title: str) -> None:
    root = root_finding(title + "\n")
    assert root is not None and root.code == "RUN121" and root.facts.get("read_as") == "title", (title, root)


@pytest.mark.parametrize("line", SILENT)
def test_near_misses_stay_silent(line: str) -> None:
    assert root_finding(line + "\n") is None, line


@pytest.mark.parametrize(("line", "category"), OTHERS)
def test_other_lines_keep_their_class(line: str, category: str) -> None:
    root = root_finding(line + "\n")
    assert (root.category if root else None) == category, (line, root)


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
def test_rc_record_behind_every_prefix(prefix: str) -> None:
    check_root(
        prefixed(prefix, "NVRM: krcRcAndNotifyAllChannels_IMPL: RC all channels for critical error 79."),
        "RUN243",
        {"xid": 79, "xid_from": "rc recovery"},
    )


def test_rc_record_under_a_launch_failure() -> None:
    """The driver's recovery record above the program's own error: the GPU left the bus, not the kernel."""
    log = (
        "NVRM: GPU at PCI:0000:06:00: GPU-0b6b7808-c002-f593-ac86-cd8e57757b94\n"
        "NVRM: kgspRcAndNotifyAllChannels_IMPL: RC all channels for critical error 79.\n"
        "NVRM: _threadNodeCheckTimeout: API_GPU_ATTACHED_SANITY_CHECK failed!\n"
        "[rank0]: RuntimeError: CUDA error: unspecified launch failure\n"
    )
    root = root_finding(log)
    assert root is not None and root.code == "RUN243", root
