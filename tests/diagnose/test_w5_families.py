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


# ==== w5 of 2026-12-07 (late): misses of v21's held-out half and v22's dev half labelled process_killed /
# nccl_system_error, read as families ======================================================================

# ---- strsignal() with the signal's number: macOS/BSD shells and MXNet's SIGSEGV handler -------------------

# https://github.com/horovod/horovod/issues/1533 (MXNet under mpirun: src/initialize.cc's SegfaultLogger,
# "\nSegmentation fault: %d\n\n" then dmlc's "Stack trace:" and "[bt] (N)" frames)
MXNET_SEGV = (
    '$ mpirun -np 8 python -c "import mxnet as mx; import horovod.mxnet as hvd; hvd.init()"\n\n'
    "Segmentation fault: 11\n\nStack trace:\n"
    "  [bt] (0) /home/ec2-user/anaconda3/lib/python3.7/site-packages/mxnet/libmxnet.so(+0x3a14c70) "
    "[0x7f137e617c70]\n"
    "  [bt] (1) /lib64/libc.so.6(+0x362f0) [0x7f145e91b2f0]"
)
SIGNAL_NUMBER_VARIANTS = [
    (MXNET_SEGV, "SIGSEGV"),
    # not in the corpus: Horovod's mpirun prefix, MXNet 1.x's later handler, macOS's other signals
    ("[1,3]<stderr>:Segmentation fault: 11\n[1,3]<stderr>:\n[1,3]<stderr>:Stack trace:", "SIGSEGV"),
    ("epoch 1 done\nBus error: 10", "SIGBUS"),
    ("epoch 1 done\nIllegal instruction: 4", "SIGILL"),
    ("epoch 1 done\nAbort trap: 6", "SIGABRT"),
    ("./run.sh: line 3: 4242 Segmentation fault: 11  python train.py", "SIGSEGV"),
]


@pytest.mark.parametrize(("log", "sig"), SIGNAL_NUMBER_VARIANTS)
def test_signal_with_its_number(log: str, sig: str) -> None:
    f = root_finding(log)
    assert f is not None and f.code == "RUN131" and f.facts["signal"] == sig


@pytest.mark.parametrize(
    "line",
    [
        "epoch 1\nSegmentation fault: 6",  # a number that is not the signal's
        "epoch 1\nhandled Segmentation fault: 11 in the test",
        "epoch 1\nBus error: 10 retries",
    ],
)
def test_signal_with_its_number_near_misses(line: str) -> None:
    assert root_finding(line) is None


# ---- UCX's backtrace with its "Caught signal" line cut --------------------------------------------------

# https://github.com/dmlc/dgl/issues/4244: the paste starts at the block's header
UCX_BT = (
    "==== backtrace (tid:   4304) ====\n"
    " 0 0x0000000000014420 __funlockfile()  ???:0\n"
    " 1 0x0000000004dcfed8 c10::function_ref<void (char**, long const*, long, long)>::callback_fn<>()  "
    "???:0\n"
    " 2 0x00000000011179e8 at::TensorIteratorBase::serial_for_each()  ???:0"
)
UCX_BT_VARIANTS = [
    UCX_BT,
    # not in the corpus: no padding, UCX 1.4-1.5's header without the tid and 1.4-1.7's lib(fn+0x..) frames,
    # the "[host:pid:0:tid]" prefix of the handler's lines, and an Open MPI rank's prefix
    "==== backtrace (tid:4304) ====\n 0 0x0000000000053519 ucs_debug_print_backtrace()  ???:0\n"
    " 1 0x0000000000012345 ncclProxyProgress()  ???:0",
    "==== backtrace ====\n 0  /usr/lib/libucs.so.0(ucs_handle_error+0x2a4) [0x7f3c2d6c0d44]\n"
    " 1  /usr/lib/libuct.so.0(uct_ib_iface_arm_cq+0x10) [0x7f3c2d4a0010]",
    "[node1:1234:0:1234] ==== backtrace (tid:   1234) ====\n 0 0x0000000000014420 __funlockfile()  ???:0",
    prefixed("[1,0]<stderr>:", UCX_BT),
]


@pytest.mark.parametrize("log", UCX_BT_VARIANTS)
def test_ucx_backtrace_without_its_signal_line(log: str) -> None:
    f = root_finding(log)
    assert f is not None and f.code == "RUN131" and f.facts["reporter"] == "ucx"


def test_ucx_backtrace_names_the_first_frame_past_the_handler() -> None:
    f = root_finding(UCX_BT)
    assert f is not None and str(f.facts["frame"]).startswith("c10::function_ref")


@pytest.mark.parametrize(
    "log",
    [
        "==== backtrace (tid:   4304) ====",  # the header alone
        "the docs say UCX prints ==== backtrace (tid: N) ==== on a crash\nepoch 2 loss 0.1",
    ],
)
def test_ucx_backtrace_near_misses(log: str) -> None:
    assert root_finding(log) is None


def test_ucx_backtrace_with_its_signal_line_is_read_once() -> None:
    f = root_finding(
        "[node:1:0:1] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x10)\n"
        + UCX_BT
    )
    assert f is not None and f.code == "RUN131" and f.facts["signal"] == "SIGSEGV"


# ---- the shell's lone "Killed", retyped in another case --------------------------------------------------

# https://github.com/deepinsight/insightface/issues/1271: the run's stdout under the reporter's prose
KILLED_LOWER = (
    "CUDA_VISIBLE_DEVICES='0,1,2,3' python -u train.py --network r50 --loss arcface --dataset emore\n"
    "I try to set the default.per_batch_size = 30\nthe final show the killed\n\nloading bin 0\n"
    "(12000, 3, 112, 112)\nver agedb_30\nlr_steps [100000, 160000, 220000]\ncall reset()\nkilled"
)


@pytest.mark.parametrize(
    "log",
    [KILLED_LOWER, "call reset()\nKILLED", "call reset()\nKilled: 9", prefixed("node7: ", "step 3\nkilled")],
)
def test_lone_killed_in_any_case(log: str) -> None:
    assert _code(log) == "RUN121"


@pytest.mark.parametrize("log", ["step 3\nprocess killed", "step 3\nkilled the old checkpoint writer"])
def test_lone_killed_near_misses(log: str) -> None:
    assert _code(log) is None


# ---- a framework's host allocator that failed ------------------------------------------------------------

# https://github.com/deepinsight/insightface/issues/721 (MXNet's src/storage/cpu_device_storage.h)
HOST_ALLOC_VARIANTS = [
    "cpu_device_storage Failed to allocate CPU Memory\nCUDA_VISIBLE_DEVICES='0,1,2,3' python3 -u train.py",
    # not in the corpus: MXNet's glog line, its Python exception, other programs' words
    "[12:00:01] src/storage/./cpu_device_storage.h:73: Failed to allocate CPU Memory",
    "mxnet.base.MXNetError: [07:12:44] src/storage/./cpu_device_storage.h:73: Failed to allocate CPU Memory",
    "[FATAL] Failed to allocate CPU memory: out of memory",
    "RuntimeError: Failed to allocate host memory",
]


@pytest.mark.parametrize("log", HOST_ALLOC_VARIANTS)
def test_framework_host_allocation_failed(log: str) -> None:
    assert _code(log) == "RUN122"


@pytest.mark.parametrize(
    "log",
    [
        "WARNING: Failed to allocate CPU memory pool",
        "Failed to allocate CPU memory for the cache, falling back to disk",
    ],
)
def test_framework_host_allocation_near_misses(log: str) -> None:
    assert _code(log) is None


# ---- a sentence filled to 80 columns (Ray's worker death, wrapped by the reporter's editor) ---------------

# https://github.com/stevietrouble/EfficientZero/issues/2
RAY_FILLED = (
    "2022-07-07 19:05:41,609 WARNING worker.py:1404 -- A worker died or was killed\n"
    "while executing a task by an unexpected system error. To troubleshoot the\n"
    "problem, check the logs for the dead worker.\n"
    "RayTask ID: ffffffffffffffff2aeefb9774b8f9463ffdfd8101000000\n"
    "Worker PID: 6218"
)


def test_sentence_filled_to_80_columns_is_read_whole() -> None:
    assert _code(RAY_FILLED) == "RUN133"


@pytest.mark.parametrize(
    "log",
    [
        # a logger's name or a stream's prefix on the next line is a record, not a continuation
        "distributed.worker - WARNING - Worker is at 84% memory usage. Pausing worker.  Process memory\n"
        "distributed.nanny - WARNING - Restarting worker",
        # a short line ends a sentence; the next one starts another
        "loading bin 11000\nlr_steps [100000, 160000, 220000]\ncall reset()\nkilled",
    ],
)
def test_filled_lines_near_misses(log: str) -> None:
    assert _code(log) != "RUN133"


# ---- OneFlow's OF_NCCL_CHECK, whole or cut inside the result's text ---------------------------------------

_OF = "F1028 20:39:07.626992 206314 collective_boxing_executor.cpp:452] "
OF_CHECK_VARIANTS = [
    # https://github.com/Oneflow-Inc/OneFlow-Benchmark/issues/152: a search excerpt cut inside the text
    (_OF + "Check failed: ncclGroupEnd() : unhandled s", "RUN171"),
    # not in the corpus: the whole line, 0.9+'s hint, the std::cout build, a cut of the CUDA text
    (_OF + "Check failed: ncclGroupEnd() : unhandled system error (2)", "RUN171"),
    (
        "F0101 00:00:00.000000 1 nccl_comm.cpp:88] Check failed: ncclCommInitRank(&comm, n, id, rank) : "
        "invalid usage (5). To see more detail, please run OneFlow with system variable NCCL_DEBUG=INFO",
        "RUN191",
    ),
    (
        "Check failed: ncclAllReduce(send, recv, count, GetNcclDataType(dtype), ncclSum, comm, stream) : "
        "remote process exited or there was a network error (6).",
        "RUN172",
    ),
    ("Check failed: ncclGroupEnd() : unhandled cuda er", "RUN194"),
]


@pytest.mark.parametrize(("log", "code"), OF_CHECK_VARIANTS)
def test_oneflow_nccl_check(log: str, code: str) -> None:
    assert _code(log) == code


@pytest.mark.parametrize(
    "log",
    [
        _OF + "Check failed: ncclGroupEnd() : unhandled",  # cut before the word that names the result
        _OF + "Check failed: ncclGroupEnd() : in",
        "I1028 20:39:07.626992 206314 boxing.cpp:452] Check failed: cudaGetLastError() : unhandled s",
    ],
)
def test_oneflow_nccl_check_near_misses(log: str) -> None:
    assert _code(log) is None


# ---- NCCL 2.13-2.2x's cudawrap warning, which init ignores ------------------------------------------------

# https://github.com/zai-org/VisualGLM-6B/issues/272: the WARN, then the same process's init goes on, then
# DeepSpeed's launcher kills the subprocess (no traceback): the warning is not what ended it
_NH = "hgx-023:1910570:"
CUDAWRAP = (
    _NH + "1910570 [0] misc/cudawrap.cc:90 NCCL WARN Failed to find CUDA library in (null) "
    "(NCCL_CUDA_PATH=(null))"
)


def test_cudawrap_warning_then_init_going_on_is_not_the_cause() -> None:
    log = (
        CUDAWRAP
        + "\nNCCL version 2.14.3+cuda11.7\n"
        + _NH
        + "1910995 [0] NCCL INFO NCCL_IB_DISABLE set by environment "
        "to 0.\n" + _NH + "1910995 [0] NCCL INFO Using network IB\n"
        "[2023-09-17 10:59:34,023] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 1910570"
    )
    assert _code(log) == "RUN133"


@pytest.mark.parametrize(
    "log",
    [
        CUDAWRAP,  # nothing after it: the warning is all the paste says
        CUDAWRAP + "\nhgx-023:1910571:1910996 [1] NCCL INFO Using network IB",  # another process went on
    ],
)
def test_cudawrap_warning_alone_still_names_the_library(log: str) -> None:
    assert _code(log) == "RUN263"


# ---- XGBoost-Ray's elastic actor check --------------------------------------------------------------------

# https://github.com/ray-project/ray/issues/18132
_RP = "(pid=40067, ip=172.31.118.130) 2021-08-26 14:13:17,067  INFO elastic.py:156 -- "


@pytest.mark.parametrize(
    "log",
    [
        _RP + "Actor status: 7 alive, 1 dead (8 total)",
        # not in the corpus: Ray 1.x+'s named prefix, every actor dead, no prefix (lightgbm_ray's copy)
        "(_RemoteRayXGBoostActor pid=40067) INFO elastic.py:156 -- Actor status: 0 alive, 4 dead (4 total)",
        "2021-08-26 14:13:17,067\tINFO elastic.py:160 -- Actor status: 3 alive, 1 dead (4 total)",
    ],
)
def test_ray_elastic_actor_died(log: str) -> None:
    assert _code(log) == "RUN133"


def test_ray_elastic_actors_all_alive_is_healthy() -> None:
    assert _code(_RP + "Actor status: 8 alive, 0 dead (8 total)") is None


# ---- the shells' and runtimes' other words for a crash (not in the corpus: read from their sources) -------

CRASH_WORD_VARIANTS = [
    # bash's strsignal() alone on its line (no core: ulimit -c 0, the distributions' default)
    ("epoch 1\nAborted", "SIGABRT"),
    ("epoch 1\nBus error", "SIGBUS"),
    ("epoch 1\nIllegal instruction", "SIGILL"),
    ("[1,3]<stderr>:Aborted", "SIGABRT"),
    # zsh's own table (Src/signames2.awk), foreground and job table
    ("zsh: bus error  python train.py", "SIGBUS"),
    ("zsh: abort      python train.py", "SIGABRT"),
    ("zsh: illegal hardware instruction  python train.py", "SIGILL"),
    ("zsh: floating point exception  python train.py", "SIGFPE"),
    ("[1]    1234 abort      python train.py", "SIGABRT"),
    # libstdc++'s std::terminate with nothing thrown
    ("terminate called without an active exception", "SIGABRT"),
    # Windows: faulthandler and the NTSTATUS exit codes
    ("Windows fatal exception: access violation\n\nThread 0x00001 (most recent call first):", "SIGSEGV"),
    ("Process finished with exit code -1073741819 (0xC0000005)", "SIGSEGV"),
    ("Process finished with exit code 3221225477", "SIGSEGV"),
    ("Process finished with exit code -1073741571 (0xC00000FD)", "SIGSEGV"),
    ("exited with code 0xC0000409", "SIGABRT"),
]


@pytest.mark.parametrize(("log", "sig"), CRASH_WORD_VARIANTS)
def test_crash_words(log: str, sig: str) -> None:
    f = root_finding(log)
    assert f is not None and f.code == "RUN131" and f.facts["signal"] == sig


@pytest.mark.parametrize(
    "log",
    [
        "Training aborted by user",
        "epoch 1\nAborted!",
        "Job Aborted",
        "1234 abort the run",
        "the abort button in zsh: abort is a word",
        "Windows fatal exception: code 0xe06d7363",  # faulthandler prints caught C++ exceptions too
        "Process finished with exit code 0",
        "note: 3221225477 bytes copied",
    ],
)
def test_crash_words_near_misses(log: str) -> None:
    assert root_finding(log) is None


def test_terminate_after_an_error_is_left_to_the_error() -> None:
    cuda = "RuntimeError: CUDA error: an illegal memory access was encountered"
    assert root_finding(cuda + "\nterminate called without an active exception") is None
