"""Memory exhaustion reported in a library's or an engine's own words, and a debugger's record of a crash.

- a CUDA allocation call's status printed by the library that made it (NVSHMEM's mem_heap.cpp "non-zero
  status: 2 cuMemCreate failed", 3.7's "error status: 2 (NVSHMEMX_ERROR_OUT_OF_MEMORY)", a wrapper's
  "cuMemCreate(...) failed with error CUDA_ERROR_OUT_OF_MEMORY"): GPU memory; another status (800,
  CUDA_ERROR_NOT_SUPPORTED) is not;
- cuBLAS's / cuDNN's handle creation without memory (TensorFlow's "failed to create cublas handle:
  CUBLAS_STATUS_NOT_INITIALIZED", torch's "... when calling `cublasCreate(handle)`", "Could not create cudnn
  handle: CUDNN_STATUS_INTERNAL_ERROR");
- the end of Ray's memory-monitor kill message (the OOM-prevention link, the kill-threshold advice): host
  memory; an environment dump naming RAY_memory_usage_threshold is not;
- a serving engine's KV-cache profile at or below zero (SGLang's "is larger than the profiled value
  -561981", vLLM's "Available KV cache memory: -3.55 GiB", "# GPU blocks: 0"); a positive profile is healthy;
- torch's OOM cut mid-word ("RuntimeError: CUDA ou");
- a wrapper's key=value return code of a SIGKILL death ("rc=137" in a bash xtrace, '"exitCode": 137',
  "returncode=-9"): host_oom's SIGKILL exit status, tier 1;
- gdb's core record ("Program terminated with signal SIGABRT, Aborted.") and lldb's stop on a fault or
  SIGABRT (RUN131, tier 2; gdb's live stop is process_crash's row, pinned here with them); SIGINT, SIGPIPE,
  SIGUSR1 are no crash of the program's own; systemd-coredump's journal record ("Process 5678 (python) of
  user 1000 dumped core.", "terminated abnormally with signal 6/ABRT", coredumpctl's "Signal: 11 (SEGV)").
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, check_root, prefixed, root_finding

NVSHMEM_OOM = [
    "/nvshmem/src/host/mem/mem_heap.cpp:1509: non-zero status: 2 cuMemCreate failed ",
    "/opt/nvshmem/src/host/mem/mem_heap.cpp:1201: error status: 2 (NVSHMEMX_ERROR_OUT_OF_MEMORY) "
    "cuMemCreate failed",
    "/workspace/nvshmem_src/src/host/mem/mem_heap.cpp:883: non-zero status: 2 cudaMalloc failed",
]
WRAPPED_OOM = [
    "RuntimeError: /tmp/pip-req-build-_zyqj171/include/tiny-cuda-nn/gpu_memory.h:582 "
    "cuMemCreate(&m_handles.back(), "
    "n_bytes_to_allocate, &prop, 0) failed with error CUDA_ERROR_OUT_OF_MEMORY",
    "cuMemCreate failed (status 2, CUDA_ERROR_OUT_OF_MEMORY)",
    "ERROR: cuMemAlloc failed with error 2",
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize("line", NVSHMEM_OOM)
def test_nvshmem_heap_without_gpu_memory_is_cuda_oom(prefix: str, line: str) -> None:
    check_root(prefixed(prefix, line + "\n"), "RUN101", {"reported_by": "NVSHMEM", "status": "2"})


@pytest.mark.parametrize("line", WRAPPED_OOM)
def test_a_wrappers_allocation_status_2_is_cuda_oom(line: str) -> None:
    check_root(line + "\n", "RUN101", {"likely_cause": "insufficient_memory"})


def test_the_nvshmem_paste_with_its_knock_on_errors_is_the_oom() -> None:
    log = (
        "/nvshmem/src/host/mem/mem_heap.cpp:1509: non-zero status: 2 cuMemCreate failed \n\n"
        * 4
        + "/nvshmem/src/host/mem/mem_heap.cpp:1590: non-zero status: 7 allocate_physical_memory_to_heap "
        "failed\n"
        * 4
        + "[/nvshmem/src/host/coll/barrier/barrier.cpp:21] cuda failed with an illegal memory access was "
        "encountered \n"
        * 3
        + "/nvshmem/src/modules/bootstrap/uid/ncclSocket/ncclsocket_socket.cpp:socketProgress:59: "
        "socketProgress: "
        "Connection closed by remote peer\n"
    )
    check_root(log, "RUN101", {"cuda_call": "cuMemCreate"})


@pytest.mark.parametrize(
    "line",
    [
        # a driver without VMM support: not memory
        "nvshmem: cuMemCreate failed (status 800, CUDA_ERROR_NOT_SUPPORTED)",
        "/nvshmem/src/host/mem/mem_heap.cpp:1201: error status: 7 (NVSHMEMX_ERROR_INTERNAL) cuMemCreate "
        "failed",
        "node1:1234:5678 [0] NCCL INFO cuMem support: 1",
        "node1:1234:5678 [0] NCCL INFO NVLS multicast support is available on dev 0 (cuMemCreate)",
    ],
)
def test_other_allocation_statuses_are_not_cuda_oom(line: str) -> None:
    root = root_finding(line + "\n")
    assert root is None or root.code != "RUN101", root


HANDLE = [
    "2018-07-23 17:46:40.242247: E tensorflow/stream_executor/cuda/cuda_blas.cc:459] failed to create cublas "
    "handle: CUBLAS_STATUS_NOT_INITIALIZED",
    "2021-10-12 20:59:07.607617: E tensorflow/stream_executor/cuda/cuda_blas.cc:226] failed to create cublas "
    "handle: CUBLAS_STATUS_NOT_INITIALIZED",
    "E0412 10:01:02.123456  4321 cuda_blas.cc:190] failed to create cublas handle: "
    "CUBLAS_STATUS_NOT_INITIALIZED",
    "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
    "cupy_backends.cuda.libs.cublas.CUBLASError: CUBLAS_STATUS_NOT_INITIALIZED",
    "RuntimeError: cublas runtime error : library not initialized at "
    "/pytorch/aten/src/THC/THCGeneral.cpp:216",
    "tensorflow.python.framework.errors_impl.InternalError: Blas GEMM launch failed : a.shape=(100, 784), "
    "b.shape=(784, 10), m=100, n=10, k=784",
    "2021-10-12 20:59:07.624820: E tensorflow/stream_executor/cuda/cuda_dnn.cc:374] Could not create cudnn "
    "handle: CUDNN_STATUS_INTERNAL_ERROR",
]


@pytest.mark.parametrize("prefix", ["", "[1,0]<stderr>:", "(pid=1234) "])
@pytest.mark.parametrize("line", HANDLE)
def test_a_math_library_handle_without_memory_is_cuda_oom(prefix: str, line: str) -> None:
    check_root(prefixed(prefix, (line + "\n") * 3), "RUN101", {"likely_cause": "insufficient_memory"})


@pytest.mark.parametrize(
    "line",
    [
        "2018-07-23 17:46:30.123456: I tensorflow/stream_executor/dso_loader.cc:152] successfully "
        "opened CUDA "
        "library libcublas.so.9.0 locally",
        "2020-01-01 00:00:00.000000: I tensorflow/stream_executor/platform/default/dso_loader.cc:44] "
        "Successfully "
        "opened dynamic library libcudnn.so.7",
        "2021-10-12 20:59:07.624820: I tensorflow/stream_executor/cuda/cuda_dnn.cc:369] Loaded cuDNN "
        "version 8201",
    ],
)
def test_the_libraries_loading_is_no_failure(line: str) -> None:
    assert root_finding(line + "\n") is None


RAY_TAIL = (
    "(ActorModelRayActor pid=8249) 8800\t1.18\tray::ReferenceModelRayActor\n"
    "(ActorModelRayActor pid=8249) Refer to the documentation on how to address the out of memory issue: "
    "https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html. Consider provisioning "
    "more memory "
    "on this node or reducing task parallelism by requesting more CPUs per task. Set max_restarts and "
    "max_task_retries to enable retry when the task crashes due to OOM. To adjust the kill threshold, "
    "set the "
    "environment variable `RAY_memory_usage_threshold` when starting Ray. To disable worker killing, set the "
    "environment variable `RAY_memory_monitor_refresh_ms` to zero.\n"
)


def test_the_end_of_rays_oom_kill_message_is_host_oom() -> None:
    check_root(RAY_TAIL, "RUN121", {"killer": "ray_memory_monitor"})


def test_rays_kill_threshold_advice_wrapped_alone_is_host_oom() -> None:
    check_root(
        "(raylet) To adjust the kill threshold, set the environment variable "
        "`RAY_memory_usage_threshold` when "
        "starting Ray. To disable worker killing, set the environment variable "
        "`RAY_memory_monitor_refresh_ms` "
        "to zero.\n",
        "RUN121",
    )


@pytest.mark.parametrize(
    "line",
    [
        "RAY_memory_usage_threshold=0.98",
        "export RAY_memory_monitor_refresh_ms=0",
        "2024-05-01 10:00:00,000\tINFO worker.py:1749 -- Started a local Ray instance. View the dashboard at "
        "127.0.0.1:8265",
    ],
)
def test_rays_memory_settings_are_no_kill(line: str) -> None:
    assert root_finding(line + "\n") is None


KV_EMPTY = [
    "[2025-07-02 07:41:59 DP0 TP0] max_total_tokens=131072 is larger than the profiled value -561981. "
    "Use the "
    "profiled value instead.",
    "[2026-02-11 06:45:01] max_total_tokens=20480 is larger than the profiled value -89624. Use the "
    "profiled value "
    "instead.",
    "INFO 07-02 07:41:59 [gpu_worker.py:227] Available KV cache memory: -3.55 GiB",
    "INFO 03-01 12:00:00 worker.py:267] Memory profiling takes 5.12 seconds the current vLLM instance "
    "can use "
    "total_gpu_memory (23.64GiB) x gpu_memory_utilization (0.90) = 21.28GiB model weights take 22.99GiB; "
    "non_torch_memory takes 0.09GiB; PyTorch activation peak memory takes 1.26GiB; the rest of the memory "
    "reserved for KV Cache is -3.06GiB.",
    "INFO 05-06 10:11:12 executor_base.py:110] # cuda blocks: 0, # CPU blocks: 2048",
    "INFO 01-02 03:04:05 llm_engine.py:223] # GPU blocks: 0, # CPU blocks: 512",
]


@pytest.mark.parametrize("prefix", ["", "(VllmWorkerProcess pid=77) ", "[rank1]: "])
@pytest.mark.parametrize("line", KV_EMPTY)
def test_a_kv_cache_profile_without_memory_is_cuda_oom(prefix: str, line: str) -> None:
    check_root(prefixed(prefix, line + "\n"), "RUN101", {"format": "kv_cache_profile"})


@pytest.mark.parametrize(
    "line",
    [
        "[2025-07-02 07:41:59 TP0] max_total_tokens=131072 is larger than the profiled value 50756. Use the "
        "profiled value instead.",
        "INFO 07-02 07:41:59 [gpu_worker.py:227] Available KV cache memory: 12.34 GiB",
        "INFO 03-01 12:00:00 worker.py:267] model weights take 14.99GiB; non_torch_memory takes 0.09GiB; "
        "PyTorch activation peak memory takes 1.26GiB; the rest of the memory reserved for KV Cache is "
        "4.95GiB.",
        "INFO 01-02 03:04:05 llm_engine.py:223] # GPU blocks: 2048, # CPU blocks: 512",
        "[2025-07-02 07:42:10 TP0] KV Cache is allocated. #tokens: 50756, K size: 1.20 GB, V size: 1.20 GB",
    ],
)
def test_a_kv_cache_profile_with_room_is_healthy(line: str) -> None:
    assert root_finding(line + "\n") is None


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize(
    "tail",
    [
        "RuntimeError: CUDA ou",
        "RuntimeError: CUDA out of mem",
        "OutOfMemoryError: CUDA out",
        "RuntimeError: CUDA error: ou",
        "RuntimeError: HIP out of mem",
    ],
)
def test_torchs_oom_cut_mid_word_is_cuda_oom(prefix: str, tail: str) -> None:
    log = (
        'Traceback (most recent call last):\n  File "train.py", line 225, in train\n    loss.backward()\n'
        + tail
        + "\n"
    )
    check_root(prefixed(prefix, log), "RUN101")


@pytest.mark.parametrize(
    "line",
    [
        "ValueError: CUDA output device mismatch: expected cuda:0",
        "Using CUDA output stream 0",
        "Using CUDA ou",
        "RuntimeError: CUDA error: operation not supported",
        "RuntimeError: CUDA error: out-of-bounds access in kernel",
    ],
)
def test_other_cuda_words_are_not_a_cut_oom(line: str) -> None:
    root = root_finding(line + "\n")
    assert root is None or root.code != "RUN101", root


GDB_CORE = (
    "Core was generated by `/usr/bin/python3.12 -u pretrain_gpt.py --use-mcore-models'.\n"
    "Program terminated with signal SIGABRT, Aborted.\n"
    "#0  __pthread_kill_implementation (threadid=281460850028672, signo=signo@entry=6) at "
    "./nptl/pthread_kill.c:44\n"
    "#1  0x0000ffff8e4ba83c in __GI_raise (sig=sig@entry=6) at ../sysdeps/posix/raise.c:26\n"
    "#2  0x0000ffff8e4a7134 in __GI_abort () at ../stdlib/abort.c:79\n"
    "#3  0x0000ffff30df53d0 in __gnu_cxx::__verbose_terminate_handler() () from /lib/libstdc++.so.6\n"
    "#4  0x0000ffff30df2b00 in std::terminate() () from /lib/libstdc++.so.6\n"
    "#5  0x0000ffff30e1c2a0 in gloo::transport::tcp::Address::fromPeerName(int) () from libtorch_cpu.so\n"
)


def test_gdbs_core_record_is_a_fatal_signal_with_its_frame() -> None:
    check_root(
        GDB_CORE,
        "RUN131",
        {"signal": "SIGABRT", "reporter": "gdb", "frame": "gloo::transport::tcp::Address::fromPeerName"},
    )


def test_githubs_links_in_place_of_frame_numbers_still_give_the_frame() -> None:
    log = GDB_CORE.replace("#3  ", "https://github.com/pytorch/pytorch/issues/3 ").replace(
        "#5  ", "https://github.com/pytorch/pytorch/pull/5 "
    )
    check_root(log, "RUN131", {"frame": "gloo::transport::tcp::Address::fromPeerName"})


@pytest.mark.parametrize(
    ("line", "signal"),
    [
        ("Program terminated with signal 11, Segmentation fault.", "SIGSEGV"),
        ('Thread 787 "imagenet_fake_d" received signal SIGBUS, Bus error.', "SIGBUS"),
        ("Program received signal SIGSEGV, Segmentation fault.", "SIGSEGV"),
        (
            "* thread #1, name = 'python', stop reason = signal SIGSEGV: invalid address (fault "
            "address: 0x0)",
            "SIGSEGV",
        ),
    ],
)
def test_a_debuggers_fault_record_is_a_fatal_signal(line: str, signal: str) -> None:
    check_root(line + "\n", "RUN131", {"signal": signal})


@pytest.mark.parametrize(
    "line",
    [
        'Thread 1 "python" received signal SIGINT, Interrupt.',
        "Program received signal SIGPIPE, Broken pipe.",
        "Program received signal SIGUSR1, User defined signal 1.",
        "[Inferior 1 (process 4242) exited normally]",
    ],
)
def test_a_debugger_sessions_routine_signals_are_no_crash(line: str) -> None:
    assert root_finding(line + "\n") is None


def test_a_debugger_record_stands_behind_the_error_before_it() -> None:
    log = (
        "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity)\n"
        "Program terminated with signal SIGABRT, Aborted.\n"
    )
    check_root(log, "RUN101")


@pytest.mark.parametrize(
    "line",
    [
        "+[05:25:15] rc=137",
        "+ rc=137",
        'fatal: [node3]: FAILED! => {"changed": true, "cmd": "python train.py", "rc=137"}',
        '        "exitCode": 137,',
        "Job failed: exit_code: 137",
        "<Popen: returncode=-9 args=['python', 'train.py']>",
    ],
)
def test_a_key_value_return_code_of_a_sigkill_is_the_kill(line: str) -> None:
    check_root(line + "\n", "RUN121", {"signal": "SIGKILL"})


def test_the_yarn_exit_handler_xtrace_is_the_kill() -> None:
    log = (
        "++[05:25:06] sleep 20\n+[05:25:15] exit_handler\n+[05:25:15] rc=137\n"
        "+[05:25:15] local 'handler=Yarn container exit handler'\n"
        "+[05:25:15] echo '[DEBUG] Yarn container exit handler: EXIT signal received in yarn container, "
        "performing clean up action...'\n"
    )
    check_root(log, "RUN121")


@pytest.mark.parametrize(
    "line", ["+[05:25:15] rc=0", "rc=1370", "src=137", "crc=137", "ret=-9", "exit_code=0", "layer_137=137"]
)
def test_other_return_codes_are_no_kill(line: str) -> None:
    assert root_finding(line + "\n") is None


COREDUMP = (
    "Dec 06 10:00:00 node1 systemd-coredump[12345]: Process 5678 (python) of user 1000 dumped core.\n"
    "\n"
    "                Stack trace of thread 5678:\n"
    "                #0  0x00007f6b59544f3b ncclShmOpen (libnccl.so.2 + 0x5f3b)\n"
    "                #1  0x00007f6b595436d7 ncclProxyService (libnccl.so.2 + 0x3d6d7)\n"
)


def test_systemd_coredumps_record_is_a_fatal_signal_with_its_frame() -> None:
    check_root(COREDUMP, "RUN131", {"reporter": "systemd-coredump", "pid": 5678, "frame": "ncclShmOpen"})


@pytest.mark.parametrize(
    ("line", "signal"),
    [
        (
            "systemd-coredump[991]: Process 4242 (pt_main_thread) of user 0 terminated abnormally with "
            "signal "
            "6/ABRT, processing...",
            "SIGABRT",
        ),
        ("           Signal: 11 (SEGV)", "SIGSEGV"),
    ],
)
def test_systemd_coredumps_signal_is_read(line: str, signal: str) -> None:
    check_root(line + "\n", "RUN131", {"signal": signal})


@pytest.mark.parametrize(
    "line",
    [
        "Dec 06 10:00:00 node1 systemd[1]: Started Process Core Dump (PID 12345/UID 0).",
        "systemd-coredump[991]: Process 4242 (python) of user 0 terminated abnormally with signal 3/QUIT, "
        "processing...",
        "           Signal: 15 (TERM)",
        "kernel.core_pattern = |/usr/lib/systemd/systemd-coredump %P %u %g %s %t %c %h",
    ],
)
def test_core_dump_plumbing_and_other_signals_are_no_crash(line: str) -> None:
    assert root_finding(line + "\n") is None
