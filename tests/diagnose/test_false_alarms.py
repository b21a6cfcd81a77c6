"""False alarms at their mechanism: lines of a healthy run, or of a job that failed for a reason that is
not distributed, must give no failure class; the same family with the evidence of a distributed job (or
of the device) still does.

Sticky CUDA faults (cudart's 700 illegal address, 714-718): the program's kernel made the access far
more often than the device failed. In a job of several processes (NCCL, c10d, a rank prefix, a
launcher, an engine's workers) the corpus' labels count it as the GPU's class; in one process with
nothing distributed around it (a JIT-compiled XLA fusion, a custom op, a diverged step in the caching
allocator) it is that program's bug; after a device-side assertion it is the assertion's consequence
wherever it surfaces (torch, the watchdog, NCCL). "Nothing distributed" is judged on the whole log
(lookahead.py reads past the rule's window) and on the set of files read together. 719 "unspecified
launch failure" (a kernel killed or crashed, what an Xid 13/43 or a driver reset leaves) is kept in
every shape.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.helpers.diagnose_root import failure_findings, root_finding
from tests.helpers.healthy_logs import ENV_DUMP, NOISE

_WATCHDOG = (
    "[rank1]:[E115 15:39:38.894064351 ProcessGroupNCCL.cpp:1899] [PG ID 0 PG GUID 0(default_pg) Rank 1] "
    "Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was "
    "encountered"
)
_ASSERT = (
    "../aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [68,0,0], thread: [32,0,0] "
    'Assertion `index >= -sizes[i] && index < sizes[i] && "index out of bounds"` failed.'
)
_BOILER = (
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
    "might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."
)

# (name, log): a program's own fault, no failure class (a process_crash of the program's traceback is
# the most a decoy may get; these give none at all).
PROGRAM_FAULTS = [
    (
        "jax xla fusion",
        "INTERNAL: Failed to execute XLA Runtime executable: run time error: custom call "
        "'xla.gpu.func.launch' failed: Failed to launch CUDA kernel: fusion_1560 with block dimensions: "
        "160x1x1 and grid dimensions: 1x1x1: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was "
        "encountered.",
    ),
    (
        "thc caching allocator (torch 1.x)",
        "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCCachingHostAllocator.cpp line=278 error=77 : an "
        "illegal memory access was encountered\n"
        "terminate called after throwing an instance of 'c10::Error'\n"
        "  what():  CUDA error: an illegal memory access was encountered (insert_events at "
        "/pytorch/c10/cuda/CUDACachingAllocator.cpp:771)\n"
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string const&) + 0x46 (0x7f0eb3f60536 in "
        "/miniconda/lib/python3.7/site-packages/torch/lib/libc10.so)",
    ),
    (
        "bare terminate",
        "RuntimeError: CUDA error: an illegal memory access was encountered\n"
        "terminate called without an active exception",
    ),
    (
        "cupy driver error",
        "cupy_backends.cuda.api.driver.CUDADriverError: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory "
        "access was encountered",
    ),
    ("misaligned, one process", "RuntimeError: CUDA error: misaligned address\n" + _BOILER),
    ("enum name only", "cudaErrorIllegalAddress returned by cudaStreamSynchronize"),
    ("device assert then watchdog", _ASSERT + "\n" + _WATCHDOG),
    (
        "device assert then nccl",
        _ASSERT + "\nnode1:123:456 [0] init.cc:204 NCCL WARN Cuda failure 'an illegal memory access was "
        "encountered'",
    ),
    (
        "device assert triggered then illegal access",
        "RuntimeError: CUDA error: device-side assert triggered\n"
        + _BOILER
        + "\n[rank0]:[E ProcessGroupNCCL.cpp:1414] [PG 0 Rank 0] Process group watchdog thread terminated "
        "with exception: CUDA error: an illegal memory access was encountered",
    ),
    (
        "nvprof's own error",
        "Cuda failure common.cu:510 'an illegal memory access was encountered'\n"
        "==102728== Error: Internal profiling error 4054:1.\n======== Error: CUDA profiling error.",
    ),
]

# (name, log): the same family in a distributed job, or a kernel crash: the GPU class (RUN244).
DISTRIBUTED_FAULTS = [
    ("watchdog", _WATCHDOG + "\n" + _BOILER),
    (
        "nccl warn",
        "node1:123:456 [0] init.cc:204 NCCL WARN Cuda failure 'an illegal memory access was encountered'",
    ),
    (
        "ray worker",
        "(RayWorkerVllm pid=7046) RuntimeError: CUDA error: an illegal memory access was encountered",
    ),
    (
        "vllm worker logger",
        "ERROR 04-15 00:31:11 worker_base.py:574]     self.launch(*args, **kwargs)\n"
        "ERROR 04-15 00:31:11 worker_base.py:574] RuntimeError: Triton Error [CUDA]: an illegal memory "
        "access was encountered",
    ),
    (
        "lightning ddp",
        "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2\n"
        "RuntimeError: CUDA error: an illegal memory access was encountered",
    ),
    ("launch failure, one process", "RuntimeError: CUDA error: unspecified launch failure\n" + _BOILER),
    (
        "launch failure, tensorflow",
        "2019-02-19 13:19:11.936586: E tensorflow/stream_executor/cuda/cuda_driver.cc:1011] could not "
        "synchronize on CUDA context: CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure ::",
    ),
]


@pytest.mark.parametrize("name,log", PROGRAM_FAULTS, ids=[c[0] for c in PROGRAM_FAULTS])
def test_a_programs_own_cuda_fault_is_no_failure_class(name: str, log: str) -> None:
    assert failure_findings(log) == [], (name, [f.code for f in failure_findings(log)])


@pytest.mark.parametrize("name,log", DISTRIBUTED_FAULTS, ids=[c[0] for c in DISTRIBUTED_FAULTS])
def test_a_cuda_fault_of_a_distributed_job_is_the_gpus(name: str, log: str) -> None:
    root = root_finding(log)
    assert root is not None and root.code == "RUN244", (name, root)


# (name, log): a fault only code produces (716 misaligned address, 715 illegal instruction; cudart's
# documentation of 714-718), raised by a distributed job's own call rather than the NCCL watchdog: the
# program's kernel (RUN332, process_crash), not the GPU (v10g-other_ambiguous-003, a decoy).
CODE_FAULTS = [
    ("srun label", "0: RuntimeError: CUDA error: misaligned address"),
    (
        "torch.distributed frames",
        "Traceback (most recent call last):\n"
        '  File "/x/torch/distributed/distributed_c10d.py", line 2050, in all_reduce\n'
        "    work = group.allreduce([tensor], opts)\n"
        "RuntimeError: CUDA error: misaligned address",
    ),
    (
        "rank prefix at synchronize",
        "[rank0]:     return torch._C._cuda_synchronize()\n"
        "[rank0]: RuntimeError: CUDA error: misaligned address",
    ),
    (
        "illegal instruction, rank",
        "[rank3]: RuntimeError: CUDA error: an illegal instruction was encountered",
    ),
]


@pytest.mark.parametrize("name,log", CODE_FAULTS, ids=[c[0] for c in CODE_FAULTS])
def test_a_code_only_fault_of_a_distributed_job_is_the_programs(name: str, log: str) -> None:
    root = root_finding(log)
    assert root is not None and root.code == "RUN332" and root.category == "process_crash", (name, root)


def test_an_xid_beside_a_programs_fault_still_names_the_device() -> None:
    log = (
        "[ 1234.5] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.\n"
        "RuntimeError: CUDA error: an illegal memory access was encountered"
    )
    root = root_finding(log)
    assert root is not None and root.category == "gpu_hardware", root


# Healthy output whose words a loose row reads as a failure: settings named ERROR / TIMEOUT / DEBUG, a
# config dump's "timeout" and "oom" keys, a progress bar's "killed" and "oom" fields, a download or a
# logger that will retry, a loss scaler skipping a step, c10d's echo of its options, NCCL's echo of its
# settings, a driver-shutdown warning at exit (tests/helpers/healthy_logs.py has them in a whole run).
HEALTHY_WORDS = [
    ("settings dump", "\n".join(ENV_DUMP)),
    *((f"noise {k}", line) for k, line in enumerate(NOISE)),
    (
        "c10d options",
        "[I ProcessGroupNCCL.cpp:835] [Rank 0] ProcessGroupNCCL initialization options:"
        "NCCL_ASYNC_ERROR_HANDLING: "
        "1, NCCL_DESYNC_DEBUG: 0, NCCL_ENABLE_TIMING: 0, NCCL_BLOCKING_WAIT: 0, TIMEOUT(ms): 1800000, "
        "USE_HIGH_PRIORITY_STREAM: 0, TORCH_DISTRIBUTED_DEBUG: OFF, NCCL_DEBUG: INFO",
    ),
    (
        "trainer args",
        "TrainingArguments(\nddp_timeout=1800,\nlog_level=passive,\nskip_memory_metrics=True,\n)",
    ),
    (
        "config dict",
        "config: {'timeout': 1800, 'max_error_rate': 0.01, 'oom_retry': False, 'kill_on_nan': True, "
        "'fail_fast': False, 'nccl_debug': 'WARN', 'abort_on_error': False}",
    ),
    (
        "progress bar fields",
        "Epoch 0:  50%|█████     | 10/20 [00:10<00:10,  1.02it/s, loss=1.8, oom_skipped=0, killed_samples=0]",
    ),
    # A command line pasted alone: its flags name the OOM killer as settings, not as what happened.
    ("docker oom flag", "docker run --oom-kill-disable --gpus all -it nvcr.io/nvidia/pytorch:24.01-py3"),
    ("docker oom score flag", "docker run --oom-score-adj 500 --gpus all --shm-size 16g img python train.py"),
    (
        "store attempt, then the run",
        "[W socket.cpp:663] [c10d] The client socket has failed to connect to [gpu-node-01]:29500 "
        "(errno: 99 - Cannot assign requested address).\n"
        "[I ProcessGroupNCCL.cpp:842] [Rank 3] NCCL watchdog thread started!",
    ),
]


@pytest.mark.parametrize("name,log", HEALTHY_WORDS, ids=[c[0] for c in HEALTHY_WORDS])
def test_healthy_lines_with_failure_words_give_no_failure(name: str, log: str) -> None:
    assert failure_findings(log) == [], (name, [(f.code, f.message) for f in failure_findings(log)])


def test_the_same_lines_before_a_real_failure_leave_it_found() -> None:
    log = "\n".join(line for _n, line in HEALTHY_WORDS) + (
        "\n[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 2 has a "
        "total capacity of 79.15 GiB of which 1.06 GiB is free.\n"
    )
    root = root_finding(log)
    assert root is not None and root.code == "RUN101" and root.facts.get("rank") == 2, root


_FILLER = "".join(f"step {k} loss {2.0 - k / 100:.2f}\n" for k in range(80))
_BARE = "RuntimeError: CUDA error: an illegal memory access was encountered\n"


def test_a_job_shown_far_from_the_fault_makes_it_the_jobs() -> None:
    # The evidence of several processes is past the rule's window: the whole log decides.
    start = (
        "gpu-node-01:4242:4242 [0] NCCL INFO comm 0x55d5c8a0 rank 0 nranks 16 cudaDev 0 busId 7000 - "
        "Init COMPLETE\n"
    )
    root = root_finding(start + _FILLER + _BARE)
    assert root is not None and root.code == "RUN244", root
    vllm = "ERROR 04-15 00:31:11 worker_base.py:574] Error executing method 'execute_model'.\n"
    root = root_finding(vllm + _FILLER + _BARE)
    assert root is not None and root.code == "RUN244", root
    assert failure_findings(_FILLER + _BARE + _FILLER) == []


def test_ranks_logs_read_together_make_a_bare_fault_the_jobs() -> None:
    from pgdoctor.diagnose.api import diagnose_sources

    found = diagnose_sources([("rank_0.log", _FILLER), ("rank_1.log", _FILLER + _BARE)])
    codes = [f.code for f in found if f.severity.value in ("warn", "fail")]
    assert codes[:1] == ["RUN244"], codes


def test_a_short_ranks_file_read_with_another_keeps_its_fault() -> None:
    from pgdoctor.diagnose.api import diagnose_sources

    found = diagnose_sources([("rank_0.log", "step 1 loss 2.0\n"), ("rank_1.log", _BARE)])
    codes = [f.code for f in found if f.severity.value in ("warn", "fail")]
    assert codes[:1] == ["RUN244"], codes


def test_a_single_process_fault_piped_on_stdin_is_no_failure() -> None:
    # Standard input cannot be read twice: a window that holds the whole paste decides alone.
    out = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "diagnose", "-", "--format", "json"],
        input=PROGRAM_FAULTS[0][1] + "\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    findings = json.loads(out.stdout)["findings"]
    assert [f["code"] for f in findings if f["severity"] in ("warn", "fail")] == [], out.stderr


def test_a_store_attempt_that_connected_far_below_is_no_failure() -> None:
    attempt = (
        "[W socket.cpp:601] [c10d] The client socket has failed to connect to [node-1]:29500 "
        "(errno: 113 - No route to host).\n"
    )
    connected = (
        "[I socket.cpp:787] [c10d] The client socket has connected to [node-1]:29500 on [node-2]:51234.\n"
    )
    assert failure_findings(attempt + _FILLER + connected + _FILLER) == []
    root = root_finding(attempt + _FILLER)
    assert root is not None and root.category == "rendezvous", root
