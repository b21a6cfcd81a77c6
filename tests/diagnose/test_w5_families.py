"""Families of w5's session (2026-12-07, misses of v20's released held-out half and v21's dev half labelled
nccl_internal_or_invalid_usage, nccl_system_error, gpu_hardware, and decoys), each read at its source, with a
table of variants (each asserts its class) and near misses that share their words (each asserts silence or its
own class):

- NCCL's shared-memory segments across 2.3-2.27 (include/shm.h, misc/shmutils.cc: "Unable to allocate shared
  memory (N bytes) : <strerror>", "failure in mmap of", SYSCHECK's "Call to posix_fallocate failed", "Error
  while creating shared memory segment", "failed to extend", "Could not map", 2.23's "failed to create shared
  memory file ... error <strerror> (<errno>)"), read by the errno they name: RUN171 (rules/nccl_shm.py);
- torch's / pynccl's "NCCL error: <ncclGetErrorString>" retyped with a spaced colon: its result's code
  (rules/nccl_errors.py);
- ncclGetErrorString's texts without the library named ("unhandled cuda error while training using multiple
  nodes", "remote process exited or there was a network error"): their result's code (rules/nccl_errors.py;
  "unhandled system error" alone stays generic words);
- the CUDACHECK macro of vLLM's / SGLang's custom all-reduce ("Failed: Cuda error
  .../custom_all_reduce.cuh:455 'invalid argument'"): RUN640, ahead of the engine's "Worker proc ... died
  unexpectedly" (rules/custom_allreduce.py);
- a peer's SIGTERM exit (vLLM's worker monitor "Worker VllmWorkerProcess pid 87 died, exit code: -15", the
  supervisor's teardown) after an NCCL error that a peer's death could echo: the error leads (causality.py);
- a backend or API that lacks the reduce op (SageMaker's SMDDP "RuntimeError: SMDDP does not support:
  ReduceOp", torch's functional collectives, torch_xla, oneCCL's "average operation is not supported"): RUN301
  (rules/nccl_errors.py's c10d argument check, rules/c10d_usage.py).
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, prefixed, root_finding

_H = "node1:5021:5386 [0] "


def _code(log: str) -> str | None:
    f = root_finding(log)
    return None if f is None else f.code


def _cat(log: str) -> str | None:
    f = root_finding(log)
    return None if f is None else f.category


# ---- NCCL's shared-memory segments ----------------------------------------------------------------------

# https://github.com/NVIDIA/nccl/issues/137 (NCCL 2.3 under Marian, whose SIGPROF timer interrupts
# posix_fallocate): the WARN pasted without its "host:pid:tid [dev] " prefix
SHM_23_EINTR = "WARN Unable to allocate shared memory (4214784 bytes) : Interrupted system call"

SHM_VARIANTS = [
    (SHM_23_EINTR, "interrupted_system_call"),
    (_H + "WARN Unable to allocate shared memory (4214784 bytes) : No space left on device", "shared_memory"),
    (
        _H + "NCCL WARN Unable to allocate shared memory (4214784 bytes) : Interrupted system call",
        "interrupted_system_call",
    ),
    (
        "I get `Unable to allocate shared memory (4214784 bytes) : No space left on device` in docker",
        "shared_memory",
    ),
    (_H + "WARN shm_open failed to open /nccl-shm-recv-7f3a : Permission denied", "shm_permissions"),
    (
        _H + "WARN failure in mmap of /nccl-shm-recv-7f3a (size 4214784) : Cannot allocate memory",
        "host_memory",
    ),
    (_H + "NCCL WARN Call to posix_fallocate failed : No space left on device", "shared_memory"),
    (
        _H + "include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-b7 "
        "(size 4194656)",
        "shared_memory",
    ),
    ("Error while creating shared memory segment /dev/shm/nccl-pZafXL (size 7340384)", "shared_memory"),
    (
        _H + "misc/shmutils.cc:38 NCCL WARN Error: failed to extend /dev/shm/nccl-ab12 to 9637892 bytes",
        "shared_memory",
    ),
    (
        _H + "NCCL WARN Could not map /dev/shm/nccl-ab12 size 9637892, error: Cannot allocate memory",
        "host_memory",
    ),
    (
        _H + "misc/shmutils.cc:73 NCCL WARN Error: failed to create shared memory file 0x7f21, error No such "
        "file or directory (2)",
        "no_dev_shm",
    ),
    (
        _H + "NCCL WARN Error: failed to extend /dev/shm/nccl-ab12 to 9637892 bytes, error: No space left on "
        "device (28)",
        "shared_memory",
    ),
    (
        _H + "NCCL WARN Error while creating shared memory segment /dev/shm/nccl-ab12 (size 9637888), error: "
        "Read-only file system (30)",
        "shm_permissions",
    ),
    ("failed to create shared memory file 0x7f21, error Too many open files (24)", "open_file_limit"),
]


@pytest.mark.parametrize(("line", "cause"), SHM_VARIANTS)
def test_nccl_shared_memory_family_by_errno(line: str, cause: str) -> None:
    f = root_finding(line + "\n")
    assert f is not None and f.code == "RUN171", (line, f)
    assert f.facts.get("likely_cause") == cause, f.facts


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
def test_nccl_shared_memory_behind_launcher_prefixes(prefix: str) -> None:
    assert _code(prefixed(prefix, SHM_23_EINTR)) == "RUN171"


@pytest.mark.parametrize(
    ("line", "code"),
    [
        # the teardown's cleanup noise
        (_H + "NCCL WARN munmap of shared memory failed", None),
        (_H + "NCCL WARN [Service thread] shm close failed", None),
        # the SHM transport chosen: an observation
        (_H + "NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct", None),
        (_H + "NCCL INFO NCCL_SHM_DISABLE set by environment to 0.", None),
        # the same words from another program: a person's sentence, torch's own shared-memory allocator
        ("Unable to allocate shared memory for the dataloader, falling back to pickling", None),
        (
            "RuntimeError: unable to allocate shared memory(shm) for file </torch_123_456_0>: Resource "
            "temporarily unavailable (11)",
            "RUN388",
        ),
    ],
)
def test_nccl_shared_memory_near_misses(line: str, code: str | None) -> None:
    assert _code(line + "\n") == code


# ---- "NCCL error : <text>" and ncclGetErrorString's texts alone ------------------------------------------

# https://github.com/NovaSky-AI/SkyRL/pull/789 (a PR description: the URL before it keeps the words net off)
SKYRL = (
    "Currently, weight syncing with `run_engines_locally` is broken, and the remote engine example "
    "https://github.com/NovaSky-AI/SkyRL/blob/main/skyrl-train/examples/remote_inference_engine/"
    "run_remote.sh  "
    "fails with `NCCL error : invalid argument`\n"
)
# https://github.com/facebookresearch/fairseq/issues/973 (the thread's title, all of the paste)
FAIRSEQ_TITLE = "unhandled cuda error while training using multiple nodes\n"


@pytest.mark.parametrize(
    ("log", "code"),
    [
        (SKYRL, "RUN191"),
        ("RuntimeError: NCCL error : unhandled system error\n", "RUN171"),
        ("it fails with NCCL error : remote process exited or there was a network error\n", "RUN172"),
        ("RuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=INFO for details)\n", "RUN191"),
        (FAIRSEQ_TITLE, "RUN194"),
        ("Unhandled CUDA error while training using multiple nodes\n", "RUN194"),
        ("remote process exited or there was a network error\n", "RUN172"),
        ("internal error - please report this issue to the NCCL developers\n", "RUN192"),
        # the wrappers that name the library (unchanged)
        (
            "cupy_backends.cuda.libs.nccl.NcclError: NCCL_ERROR_UNHANDLED_CUDA_ERROR: unhandled cuda error\n",
            None,
        ),
        (
            "horovod.common.exceptions.HorovodInternalError: ncclAllReduce failed: unhandled cuda error\n",
            "RUN194",
        ),
    ],
)
def test_nccl_result_texts(log: str, code: str | None) -> None:
    got = _code(log)
    if code is None:
        assert _cat(log) == "nccl_usage", (log, root_finding(log))
    else:
        assert got == code, (log, root_finding(log))


@pytest.mark.parametrize(
    "line",
    [
        "NCCL error : see the log above",
        "NCCL Error : ncclCommGetAsyncError returned 6",
        "I hit an unhandled exception in the system",
        "Unhandled error in the system tray applet",
        "error: cuda toolkit not found, unhandled",
        # "unhandled system error" is generic words without NCCL named (test_network_families3's decoys)
        "I got an unhandled system error after 3 epochs",
    ],
)
def test_nccl_result_near_misses_stay_silent(line: str) -> None:
    assert root_finding(line + "\n") is None


# ---- the custom all-reduce's CUDACHECK -----------------------------------------------------------------

# https://github.com/vllm-project/vllm/issues/42609 (DP=2 x TP=2 with expandable segments)
VLLM_42609 = """PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \\
vllm serve Qwen/Qwen3-0.6B --data-parallel-size 2 --tensor-parallel-size 2
```

```
Failed: Cuda error custom_all_reduce.cuh:455 'invalid argument'
EngineCore failed to start: Worker proc VllmWorker-* died unexpectedly
```
"""
_AR = "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:"


@pytest.mark.parametrize(
    ("log", "facts"),
    [
        (VLLM_42609, {"cuda_error": "invalid argument", "likely_cause": "expandable_segments"}),
        (_AR + "307 'invalid argument'\n", {"library": "vllm", "where": "custom_all_reduce.cuh:307"}),
        (
            "(VllmWorker rank=1 pid=4242) " + _AR + "455 'invalid argument'\n",
            {"cuda_error": "invalid argument"},
        ),
        ("[rank1]: " + _AR + "332 'invalid device pointer'\n", {"cuda_error": "invalid device pointer"}),
        (_AR + "332 'invalid resource handle'\n", {"cuda_error": "invalid resource handle"}),
        (_AR + "341 'operation not supported'\n", {"cuda_error": "operation not supported"}),
        (
            "Failed: Cuda error /sgl-workspace/sgl-kernel/csrc/allreduce/custom_all_reduce.cuh:455 'invalid "
            "argument'\n",
            {"library": "sglang"},
        ),
        ("Failed: Cuda error /src/trt_allreduce_internal.cu:120 'invalid argument'\n", {}),
        # https://github.com/vllm-project/vllm/issues/2641 (driver 530, cudaIpcOpenMemHandle; the crash glued)
        (
            "Failed: Cuda error /home/my/vllm/csrc/custom_all_reduce.cuh:417 'resource already mapped' "
            "Segmentation fault (core dumped)\n",
            {"cuda_error": "resource already mapped"},
        ),
        # TensorRT-LLM's workspace (runtime/ipcUtils.cpp, TLLM_CUDA_CHECK)
        (
            "[TensorRT-LLM][ERROR] CUDA runtime error in ::cudaIpcOpenMemHandle(reinterpret_cast<void**>("
            "&foreignBuffer), handles[nodeId], cudaIpcMemLazyEnablePeerAccess): invalid argument "
            "(/src/tensorrt_llm/cpp/tensorrt_llm/runtime/ipcUtils.cpp:92)\n",
            {"library": "tensorrt_llm", "where": "ipcUtils.cpp:92"},
        ),
        (
            "[TensorRT-LLM][ERROR] CUDA runtime error in cudaIpcGetMemHandle(&localHandle, mBufferPtr): "
            "invalid argument (/app/tensorrt_llm/cpp/tensorrt_llm/runtime/ipcUtils.cpp:70)\n",
            {"cuda_error": "invalid argument"},
        ),
    ],
)
def test_custom_allreduce_cudacheck(log: str, facts: dict[str, object]) -> None:
    f = root_finding(log)
    assert f is not None and f.code == "RUN640", (log, f)
    for k, v in facts.items():
        assert f.facts.get(k) == v, (k, f.facts)


@pytest.mark.parametrize(
    ("line", "code"),
    [
        # the macro's other errors are their own rows'
        (_AR + "307 'out of memory'", "RUN101"),
        (_AR + "307 'peer access is not supported between these two devices'", "RUN291"),
        (_AR + "307 'an illegal memory access was encountered'", None),
        # https://github.com/NVIDIA/TensorRT-LLM/issues/1498: no P2P between the GPUs is the topology's
        (
            "[TensorRT-LLM][ERROR] CUDA runtime error in cudaIpcOpenMemHandle( reinterpret_cast<void**>("
            "&foreignBuffer), handles[nodeId], cudaIpcMemLazyEnablePeerAccess): peer access is not supported "
            "between these two devices (/app/TensorRT-LLM/cpp/tensorrt_llm/runtime/ipcUtils.cpp:90)",
            "RUN291",
        ),
        # TLLM_CUDA_CHECK on a call that is no IPC
        (
            "[TensorRT-LLM][ERROR] CUDA runtime error in cudaStreamSynchronize(stream): invalid argument "
            "(/app/tensorrt_llm/cpp/tensorrt_llm/runtime/bufferManager.cpp:41)",
            None,
        ),
        # the macro in a program that is no all-reduce
        ("Failed: Cuda error sample.cu:40 'invalid argument'", None),
        # the engine's warning that it turned the custom all-reduce off: no failure
        (
            "(VllmWorkerProcess pid=281) WARNING 03-22 18:40:47 [custom_all_reduce.py:137] Custom allreduce "
            "is disabled because it's not supported on more than two PCIe-only GPUs.",
            None,
        ),
        # the worker's death alone: the exit, as before
        ("EngineCore failed to start: Worker proc VllmWorker-0 died unexpectedly", "RUN133"),
    ],
)
def test_custom_allreduce_near_misses(line: str, code: str | None) -> None:
    assert _code(line + "\n") == code


# ---- a peer's SIGTERM after an NCCL error --------------------------------------------------------------

_V = "[vllm]: (VllmWorkerProcess pid=91) ERROR 07-28 23:29:37 multiproc_worker_utils.py:226] "
# https://github.com/akash-network/awesome-akash/issues/543
VLLM_AKASH = (
    _V
    + '    raise RuntimeError(f"NCCL error: {error_str}")\n'
    + _V
    + "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)\n"
    + _V
    + "\n"
    "[vllm]: ERROR 07-28 23:29:37 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 87 died, exit "
    "code: -15\n"
    "[vllm]: INFO 07-28 23:29:37 multiproc_worker_utils.py:123] Killing local vLLM worker processes\n"
)


def test_sigterm_teardown_after_an_nccl_error_leads_with_the_error() -> None:
    f = root_finding(VLLM_AKASH)
    assert f is not None and f.code == "RUN171", f


def test_sigterm_after_a_plain_exception_is_still_the_exit() -> None:
    # only the network echo changes: a Python exception never explains a signal from outside
    log = (
        _V
        + "Traceback (most recent call last):\n"
        + _V
        + '  File "/x/worker.py", line 3, in run\n'
        + _V
        + "ValueError: bad shape\n"
        "[vllm]: ERROR 07-28 23:29:37 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 87 died, "
        "exit code: -15\n"
    )
    assert _code(log) == "RUN133"


def test_sigterm_alone_is_the_exit() -> None:
    log = (
        "ERROR 07-28 23:29:37 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 87 died, exit "
        "code: -15\n"
    )
    assert _code(log) == "RUN133"


# ---- a backend that lacks the reduce op ----------------------------------------------------------------

# https://github.com/aws/amazon-sagemaker-examples/issues/3967 (all_reduce with ReduceOp.AVG under SMDDP)
SMDDP = "`RuntimeError: SMDDP does not support: ReduceOp`\n"


@pytest.mark.parametrize(
    ("log", "code"),
    [
        (SMDDP, "RUN301"),
        ("SMDDP does not support: ReduceOp\n", "RUN301"),
        ('ErrorMessage "RuntimeError: SMDDP does not support: ReduceOp\n', "RUN301"),
        ("RuntimeError: Cannot use ReduceOp.AVG with Gloo\n", "RUN301"),
        ("RuntimeError: ProcessGroupNCCL does not support gather\n", "RUN191"),
        # the same refusal by other backends and APIs (ReduceOp.AVG): torch's functional collectives
        # (pytorch/pytorch#190007), torch_xla (pytorch/xla#7782), oneCCL (intel/torch-xpu-ops#2361)
        ("RuntimeError: all_reduce backward only supports 'sum' reduction, got 'avg'\n", "RUN301"),
        (
            "ValueError: Invalid reduce op <torch.distributed.distributed_c10d.ReduceOp object at "
            "0x7f0cb2d3b830>\n",
            "RUN301",
        ),
        (
            "[rank2]: RuntimeError: oneCCL: coll_param.cpp:455 validate: EXCEPTION: average operation is not "
            "supported for the scheduler path\n",
            "RUN301",
        ),
        ("Invalid reduce op in config, using sum\n", None),
        # near misses: SMDDP's words in a sentence
        ("SMDDP does not support multi-node training on this instance type, see the docs\n", None),
        ("Note: SMDDP supports all_reduce with ReduceOp.SUM only\n", None),
    ],
)
def test_backend_lacks_the_op(log: str, code: str | None) -> None:
    assert _code(log) == code, (log, root_finding(log))
