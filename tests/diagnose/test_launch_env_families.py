"""Families of v15's held-out misses (group s14r1), read at their sources, every variant with a decoy:
Open MPI's signal handler with its "[host:pid] " prefix dropped (opal/util/stacktrace.c, 1.x-5.x);
MPICH Hydra's BAD TERMINATION frame without a PID line (1.x-3.0) and its EXIT STRING line alone
(hydra/ui/mpich/mpiexec.c: "APPLICATION TERMINATED WITH THE EXIT STRING: %s (signal %d)", 3.1+ "YOUR ...");
PaddlePaddle's DataLoader signal handlers (paddle/fluid/imperative/data_loader.cc, 2.x); torch's shared-memory
allocator (aten/src/ATen/MapAllocator.cpp, RUN388); a launcher not on the PATH (dash, bash, zsh, csh,
subprocess, env, DeepSpeed's runner: RUN389); DeepSpeed's runner's resource pool
(deepspeed/launcher/runner.py parse_resource_filter / _parse_hostfile: RUN390, RUN264 on localhost);
pynvml's NVMLError_* classes (pynvml/nvml.py: RUN391; the names other rows own keep their codes); a loader's
bare "undefined symbol" line of an extension built against another torch (c10d symbols, fbgemm_gpu);
a SIGSEGV whose frames are NCCL's communicator set-up (glog, UCX, Open MPI handlers: RUN336) and Paddle's
enforce thrown from dynload::Get*DsoHandle (RUN263)."""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, check_root, failure_findings, prefixed


def _root(log: str) -> tuple[str, str]:
    found = failure_findings(log)
    assert found, log
    return found[0].code, found[0].category


OPAL = [
    # the prefix dropped, the blank before it kept (as pasted in bevfusion#157)
    " *** Process received signal ***\n Signal: Segmentation fault (11)\n Signal code: Address not "
    "mapped (1)\n"
    "Failing at address: 0xfffffee8",
    "*** Process received signal ***\nSignal: Bus error (7)\nSignal code: Non-existant physical address (2)",
    "[node1:12345] *** Process received signal ***\n[node1:12345] Signal: Segmentation fault (11)\n"
    "[node1:12345] Signal code: Address not mapped (1)\n[node1:12345] Failing at address: 0x10\n"
    "[node1:12345] *** End of error message ***",
    "[gpu2:04121] *** Process received signal ***\n[gpu2:04121] Signal: Aborted (6)",
    "mpirun noticed that process rank 3 with PID 1234 on node n1 exited on signal 11 (Segmentation fault).",
    "prterun noticed that process rank 1 with PID 2345 on node n2 exited on signal 7 (Bus error).",
]


@pytest.mark.parametrize("log", OPAL)
def test_open_mpi_signal_reports(log: str) -> None:
    assert _root(log) == ("RUN131", "process_crash")


def test_open_mpi_signal_line_without_its_header_stays_silent() -> None:
    assert not failure_findings("Signal: Segmentation fault (11) is what the docs call SIGSEGV")


HYDRA_BANNER = "=" * 83
HYDRA = [
    # MPICH 1.x-3.0: no PID line; EXIT CODE 135 (128+7), the signal in the EXIT STRING (openai/mlsh#17)
    (
        f"{HYDRA_BANNER}\n=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   EXIT CODE: 135\n"
        "=   CLEANING UP REMAINING PROCESSES\n=   YOU CAN IGNORE THE BELOW CLEANUP MESSAGES\n"
        f"{HYDRA_BANNER}\nAPPLICATION TERMINATED WITH THE EXIT STRING: Bus error (signal 7)",
        "SIGBUS",
    ),
    # 3.1-3.2: a PID line, "YOUR APPLICATION ..."
    (
        f"{HYDRA_BANNER}\n=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   PID 5279 RUNNING AT "
        "bc33b37a853f\n=   EXIT CODE: 11\n=   CLEANING UP REMAINING PROCESSES\n"
        f"=   YOU CAN IGNORE THE BELOW CLEANUP MESSAGES\n{HYDRA_BANNER}\nYOUR APPLICATION TERMINATED "
        f"WITH THE "
        "EXIT STRING: Segmentation fault (signal 11)\nThis typically refers to a problem with your "
        "application.",
        "SIGSEGV",
    ),
    # 3.3+: RANK and KILLED BY SIGNAL
    (
        f"{HYDRA_BANNER}\n=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   RANK 3 PID 5279 "
        f"RUNNING AT "
        f"node2\n=   KILLED BY SIGNAL: 7 (Bus error)\n{HYDRA_BANNER}",
        "SIGBUS",
    ),
    # the EXIT STRING line alone; macOS strsignal words
    ("YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Bus error (signal 7)", "SIGBUS"),
    ("APPLICATION TERMINATED WITH THE EXIT STRING: Segmentation fault: 11 (signal 11)", "SIGSEGV"),
]


@pytest.mark.parametrize(("log", "sig"), HYDRA)
def test_hydra_bad_termination(log: str, sig: str) -> None:
    check_root(log, "RUN131", {"signal": sig, "reporter": "mpiexec (Hydra)"})


# MVAPICH2's mpispawn (src/pm/mpirun/mpispawn.c child_handler)
@pytest.mark.parametrize(
    ("log", "code", "exitcode"),
    [
        (
            "[gpu1:mpispawn_0][child_handler] MPI process (rank: 3, pid: 23456) terminated with signal 11 -> "
            "abort job",
            "RUN131",
            -11,
        ),
        (
            "[gpu1:mpispawn_0][child_handler] MPI process (rank: 0, pid: 4567) terminated with signal 9 -> "
            "abort job",
            "RUN121",
            -9,
        ),
        (
            "[gpu1:mpispawn_0][child_handler] MPI process (rank: 0, pid: 4567) exited with status 1",
            "RUN133",
            1,
        ),
    ],
)
def test_mvapich2_mpispawn(log: str, code: str, exitcode: int) -> None:
    check_root(log, code, {"exitcode": exitcode, "reporter": "mvapich2 mpispawn"})


def test_hydra_sigkill_is_host_memory() -> None:
    log = (
        "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   EXIT CODE: 9\n"
        "=   CLEANING UP REMAINING PROCESSES\nAPPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)"
    )
    assert _root(log) == ("RUN121", "host_oom")


DATALOADER = [
    (
        "ERROR: Unexpected BUS error encountered in DataLoader worker. This might be caused by insufficient "
        "shared memory (shm), please check whether use_shared_memory is set and storage space in /dev/shm is "
        "enough",
        "SIGBUS",
    ),
    ("ERROR: Unexpected segmentation fault encountered in DataLoader workers.", "SIGSEGV"),
    ("ERROR: Unexpected floating-point exception encountered in DataLoader worker.", "SIGFPE"),
    (
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared "
        "memory (shm).",
        "SIGBUS",
    ),
    ("RuntimeError: DataLoader worker (pid 3855) is killed by signal: Bus error.", "SIGBUS"),
]


@pytest.mark.parametrize(("log", "sig"), DATALOADER)
def test_dataloader_worker_signals_of_every_framework(log: str, sig: str) -> None:
    check_root(log, "RUN131", {"signal": sig})


TORCH_SHM = [
    ("RuntimeError: unable to write to file </torch_18692_1954506624_0>: No space left on device (28)", 28),
    (
        "RuntimeError: unable to allocate shared memory(shm) for file </torch_3262_2085932128>: Resource "
        "temporarily unavailable (11)",
        11,
    ),
    ("RuntimeError: unable to mmap 1024 bytes from file </torch_123_456>: Cannot allocate memory (12)", 12),
    (
        "RuntimeError: unable to open shared memory object </torch_3262_2085932128> in read-write mode: Too "
        "many open files (24)",
        24,
    ),
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize(("log", "errno"), TORCH_SHM)
def test_torch_shared_memory_allocator(prefix: str, log: str, errno: int) -> None:
    root = failure_findings(prefixed(prefix, log))
    assert root and root[0].code == "RUN388" and root[0].facts["errno"] == errno, (log, root)


def test_a_file_of_the_program_not_torchs_shm_stays_silent() -> None:
    assert not failure_findings("could not open file </data/train_0001.bin>, skipping")


NOT_FOUND = [
    ("/bin/sh: 1: torchrun: not found", "torchrun"),
    ("sh: 1: deepspeed: not found", "deepspeed"),
    ("bash: deepspeed: command not found", "deepspeed"),
    ("/bin/bash: accelerate: command not found", "accelerate"),
    ("train.sh: line 5: torchrun: command not found", "torchrun"),
    ("run.sh: 12: mpirun: not found", "mpirun"),
    ("zsh: command not found: accelerate", "accelerate"),
    ("mpirun: Command not found.", "mpirun"),
    ("torchrun: command not found", "torchrun"),
    ("FileNotFoundError: [Errno 2] No such file or directory: 'torchrun'", "torchrun"),
    ("FileNotFoundError: [Errno 2] No such file or directory: 'deepspeed'", "deepspeed"),
    ("/usr/bin/env: 'python': No such file or directory", "python"),
    ("/usr/bin/env: ‘python3’: No such file or directory", "python3"),
    ("RuntimeError: launcher 'pdsh' not installed.", "pdsh"),
    ("bash: line 1: srun: command not found", "srun"),
    ("/bin/sh: 1: nvidia-smi: not found", "nvidia-smi"),
    # Windows cmd.exe and PowerShell, fish
    ("'torchrun' is not recognized as an internal or external command,", "torchrun"),
    (
        "torchrun : The term 'torchrun' is not recognized as the name of a cmdlet, function, script file, or "
        "operable program.",
        "torchrun",
    ),
    ("fish: Unknown command: torchrun", "torchrun"),
    ("fish: Unknown command 'deepspeed'", "deepspeed"),
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize(("log", "tool"), NOT_FOUND)
def test_launcher_not_found(prefix: str, log: str, tool: str) -> None:
    check_root(prefixed(prefix, log), "RUN389", {"command": tool})


@pytest.mark.parametrize(
    "log",
    [
        "/bin/sh: 1: gpustat: not found",  # a monitoring helper, not the job's launcher
        "which: no torchrun in (/usr/bin:/bin)",
        "python: can't open file 'train.py': [Errno 2] No such file or directory",
        "Checking for torchrun ... found",
    ],
)
def test_other_programs_missing_stay_silent(log: str) -> None:
    assert not [f for f in failure_findings(log) if f.code == "RUN389"], log


DEEPSPEED = [
    ("ValueError: No slot '4' specified on host 'localhost'", "RUN264", {"slot": 4, "host": "localhost"}),
    ("ValueError: No slot '3' specified on host 'worker-1'", "RUN390", {"slot": 3, "host": "worker-1"}),
    ("ValueError: Hostname 'worker-2' not found in hostfile", "RUN390", {"host": "worker-2"}),
    ("ValueError: include_str and exclude_str are mutually exclusive.", "RUN390", {}),
    ("ValueError: Num nodes is >1 but no extra nodes available via hostfile", "RUN390", {}),
    ("ValueError: Cannot specify num_nodes/gpus with include/exclude", "RUN390", {}),
]


@pytest.mark.parametrize(("log", "code", "facts"), DEEPSPEED)
def test_deepspeed_runner_resource_pool(log: str, code: str, facts: dict[str, object]) -> None:
    # the traceback's source line (an f-string) before the exception is not read as a second finding
    check_root(
        "    raise ValueError(f\"No slot '{slot}' specified on host '{hostname}'\")\n" + log, code, facts
    )


def test_deepspeed_without_hostfile_is_a_warning() -> None:
    assert not failure_findings(
        "[2024-01-01 00:00:00,000] [WARNING] [runner.py:202:fetch_hostfile] Unable to find hostfile, will "
        "proceed with training with local resources only."
    )


NVML = [
    ("pynvml.nvml.NVMLError_InvalidArgument: Invalid Argument", "RUN391", "driver_env"),
    ("pynvml.NVMLError_NoPermission: Insufficient Permissions", "RUN391", "driver_env"),
    ("pynvml.nvml.NVMLError_FunctionNotFound: Function Not Found", "RUN391", "driver_env"),
    ("pynvml.nvml.NVMLError_Unknown: Unknown Error", "RUN391", "driver_env"),
    ("pynvml.NVMLError_NotFound: Not Found", "RUN391", "driver_env"),
    ("pynvml.nvml.NVMLError_NotSupported: Not Supported", "RUN391", "driver_env"),
    ("pynvml.nvml.NVMLError_CorruptedInforom: Corrupted infoROM", "RUN348", "gpu_hardware"),
    # the names other rows own keep their codes
    ("pynvml.nvml.NVMLError_GpuIsLost: GPU is lost", "RUN243", "gpu_hardware"),
    ("pynvml.nvml.NVMLError_DriverNotLoaded: Driver Not Loaded", "RUN262", "driver_env"),
    ("pynvml.nvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found", "RUN262", "driver_env"),
]


@pytest.mark.parametrize(("log", "code", "category"), NVML)
def test_pynvml_error_classes(log: str, code: str, category: str) -> None:
    assert _root(log) == (code, category)


def test_nvml_invalid_argument_names_the_call() -> None:
    check_root(
        'File "/opt/conda/lib/python3.8/site-packages/pynvml/nvml.py", line 1655, in '
        "nvmlDeviceGetHandleByIndex\n    handle = nvmlDeviceGetHandleByIndex(index)\n"
        'File "/opt/conda/lib/python3.8/site-packages/pynvml/nvml.py", line 366, in check_return\n'
        "    raise NVMLError(ret)\npynvml.nvml.NVMLError_InvalidArgument: Invalid Argument",
        "RUN391",
        {
            "nvml_error": "InvalidArgument",
            "reason": "device_not_found",
            "nvml_call": "nvmlDeviceGetHandleByIndex",
        },
    )


@pytest.mark.parametrize(
    "log",
    [
        "WARNING: could not read power draw: pynvml.NVMLError_NotSupported: Not Supported",
        "    except pynvml.NVMLError_NotSupported as e:",
    ],
)
def test_nvml_error_caught_stays_silent(log: str) -> None:
    assert not failure_findings(log), log


UNDEFINED = [
    "/usr/local/lib/python3.10/dist-packages/fbgemm_gpu/experimental/gen_ai/"
    "fbgemm_gpu_experimental_gen_ai_py.so: "
    "undefined symbol: _ZN4c10d23ncclGetErrorWithVersionE12ncclResult_t",
    "/opt/venv/lib/python3.10/site-packages/vllm/_C.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
    "/usr/local/lib/python3.10/dist-packages/torchvision/_C.so: undefined symbol: "
    "_ZN3c106detail19maybe_wrap_dim_slowEllb",
    "/usr/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by "
    "/opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_python.so)",
    "libnccl.so.2: cannot open shared object file: No such file or directory",
]


@pytest.mark.parametrize("log", UNDEFINED)
def test_bare_loader_lines(log: str) -> None:
    assert _root(log) == ("RUN263", "driver_env")


NCCL_INIT = [
    # glog (Paddle 1.x, TensorFlow, JAX): PaddlePaddle/Paddle#18232
    (
        "PC: @                0x0 (unknown)\n"
        "*** SIGSEGV (@0x50) received by PID 12833 (TID 0x7f56686c9700) from PID 80; stack trace: ***\n"
        "    @     0x7f56682a0160 (unknown)\n    @     0x7f54bff14ea7 freeRing()\n"
        "    @     0x7f54bff09c20 commFree()\n    @     0x7f54bff10cc5 ncclCommInitAll\n"
        "    @     0x7f561a1cd190 paddle::platform::NCCLContextMap::NCCLContextMap()",
        "ncclCommInitAll",
    ),
    # UCX's handler (HPC-X, Open MPI with UCX)
    (
        "[gpu1:1234:0:1234] Caught signal 11 (Segmentation fault: address not mapped to object at "
        "address 0x10)\n"
        "==== backtrace (tid:   1234) ====\n 0 0x0000000000042520 __sigaction()  ???:0\n"
        " 1 0x00000000000584b5 initTransportsRank()  ???:0\n 2 0x00000000000584b5 "
        "ncclCommInitRankFunc()  ???:0",
        "ncclCommInitRankFunc",
    ),
    # Open MPI's handler with the frames of libnccl
    (
        "[n1:777] *** Process received signal ***\n[n1:777] Signal: Segmentation fault (11)\n"
        "[n1:777] Signal code: Address not mapped (1)\n[n1:777] [ 0] "
        "/lib/x86_64-linux-gnu/libc.so.6(+0x42520)[0x7f]\n"
        "[n1:777] [ 1] /usr/lib/x86_64-linux-gnu/libnccl.so.2(ncclGetUniqueId+0x3f)[0x7f]",
        "ncclGetUniqueId",
    ),
]


@pytest.mark.parametrize(("log", "entry"), NCCL_INIT)
def test_segfault_in_nccl_init_is_the_library(log: str, entry: str) -> None:
    root = failure_findings(log)
    assert root and root[0].code == "RUN336" and root[0].facts["library"] == "nccl", root
    assert entry in (root[0].facts.get("nccl_call"), root[0].facts["frame"])


def test_segfault_elsewhere_stays_a_crash() -> None:
    log = (
        "[gpu1:1234:0:1234] Caught signal 11 (Segmentation fault: address not mapped to object at "
        "address 0x10)\n"
        "==== backtrace (tid:   1234) ====\n 0 0x0000000000042520 __sigaction()  ???:0\n"
        " 1 0x00000000000584b5 at::native::index_put_()  ???:0"
    )
    assert _root(log) == ("RUN131", "process_crash")


def test_bus_error_in_nccl_init_is_not_read_as_the_library() -> None:
    # a SIGBUS there is /dev/shm (the corpora label it nccl_system_error: v10g-nccl_system_error-004)
    log = (
        "[8d6bf97c3bf4:3039 :0:3095] Caught signal 7 (Bus error: nonexistent physical address)\n"
        "==== backtrace (tid:   3095) ====\n 0 0x0000000000043090 killpg()  ???:0\n"
        " 4 0x0000000000059e97 ncclGetUniqueId()  ???:0"
    )
    assert not [f for f in failure_findings(log) if f.code == "RUN336"]


PADDLE_DSO = [
    (
        "C++ Call Stacks (More useful to developers):\n--------------------------------------------\n"
        "0   std::string paddle::platform::GetTraceBackString<std::string>(std::string&&, char const*, int)\n"
        "1   paddle::platform::EnforceNotMet::EnforceNotMet(paddle::platform::ErrorSummary const&, char "
        "const*, int)\n"
        "2   paddle::platform::dynload::GetNCCLDsoHandle()\n"
        "3   paddle::platform::NCCLContextMap::NCCLContextMap(std::vector<paddle::platform::Place> const&)",
        "libnccl.so",
    ),
    (
        "0   paddle::platform::EnforceNotMet::EnforceNotMet(phi::ErrorSummary const&, char const*, int)\n"
        "1   phi::dynload::GetCUDNNDsoHandle()",
        "libcudnn.so",
    ),
]


@pytest.mark.parametrize(("log", "lib"), PADDLE_DSO)
def test_paddle_dynload_enforce(log: str, lib: str) -> None:
    check_root(log, "RUN263", {"library": lib})


def test_paddle_dynload_frame_of_a_healthy_stack_stays_silent() -> None:
    assert not failure_findings("#3 0x7f paddle::platform::dynload::GetNCCLDsoHandle() called once")


# glibc's fatal messages (malloc/malloc.c malloc_printerr 2.26+, the older "*** Error in `prog': ... ***",
# debug/fortify_fail.c), then abort(): the abort is the message's.
GLIBC = [
    ("*** Error in `python3': double free or corruption (!prev): 0x000055d0c8a3e2f0 ***", "heap_corruption"),
    ("*** Error in `/usr/bin/python': free(): invalid pointer: 0x00007f1c2c0008c0 ***", "heap_corruption"),
    ("free(): invalid pointer\nAborted (core dumped)", "heap_corruption"),
    ("double free or corruption (out)\nAborted (core dumped)", "heap_corruption"),
    ("malloc(): corrupted top size", "heap_corruption"),
    ("corrupted size vs. prev_size", "heap_corruption"),
    ("munmap_chunk(): invalid pointer", "heap_corruption"),
    ("free(): double free detected in tcache 2", "heap_corruption"),
    ("*** stack smashing detected ***: terminated", "stack_corruption"),
    ("*** stack smashing detected ***: python terminated", "stack_corruption"),
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize(("log", "reason"), GLIBC)
def test_glibc_abort_messages(prefix: str, log: str, reason: str) -> None:
    check_root(prefixed(prefix, log), "RUN131", {"signal": "SIGABRT", "reason": reason})


@pytest.mark.parametrize(
    "log",
    [
        "The allocator guards against double free or corruption (see the docs)",
        "INFO: malloc(): using jemalloc",
    ],
)
def test_glibc_words_in_a_sentence_stay_silent(log: str) -> None:
    assert not failure_findings(log), log


def test_paddle_fatal_error_after_nccl_init_frames() -> None:
    log = (
        "C++ Traceback (most recent call last):\n--------------------------------------\n"
        "0   paddle::distributed::ProcessGroupNCCL::ProcessGroupNCCL()\n1   ncclCommInitRank\n"
        "2   initTransportsRank\n\n----------------------\nError Message Summary:\n----------------------\n"
        "FatalError: `Segmentation fault` is detected by the operating system.\n"
        "  [SignalInfo: *** SIGSEGV (@0x0) received by PID 1234 (TID 0x7f) from PID 0 ***]"
    )
    check_root(log, "RUN336", {"frame": "initTransportsRank", "nccl_call": "ncclCommInitRank"})


def test_paddle_fatal_error_elsewhere_stays_a_crash() -> None:
    log = (
        "C++ Traceback (most recent call last):\n--------------------------------------\n"
        "0   paddle::imperative::Tracer::TraceOp()\n1   phi::MatmulKernel\n\n"
        "FatalError: `Segmentation fault` is detected by the operating system."
    )
    assert _root(log) == ("RUN131", "process_crash")


def test_a_probed_helper_is_behind_the_jobs_own_failure() -> None:
    log = (
        "/bin/sh: 1: python: not found\nTraceback (most recent call last):\n"
        '  File "train.py", line 3, in <module>\nRuntimeError: CUDA error: out of memory\n'
    )
    assert _root(log) == ("RUN101", "cuda_oom")


# glog's / absl's failure signal handler (glog/src/signalhandler.cc, absl failure_signal_handler.cc)
GLOG = [
    (
        '*** Aborted at 1576123353 (unix time) try "date -d @1576123353" if you are using GNU date ***\n'
        "PC: @                0x0 (unknown)\n"
        "*** SIGSEGV (@0x0) received by PID 24044 (TID 0x7f6406bd7740) from PID 0; stack trace: ***\n"
        "    @     0x7f64067b55d0 (unknown)\n"
        "    @     0x7f63f2a1b2c3 xgboost::common::HistogramCuts::Build()",
        "SIGSEGV",
        "xgboost::common::HistogramCuts::Build",
    ),
    (
        "*** SIGBUS (@0x7f0000000000) received by PID 812 (TID 0x7f12) from PID 0; stack trace: ***",
        "SIGBUS",
        None,
    ),
]


@pytest.mark.parametrize(("log", "sig", "frame"), GLOG)
def test_glog_failure_signal(log: str, sig: str, frame: str) -> None:
    check_root(
        log,
        "RUN131",
        {"signal": sig, "reporter": "glog failure signal handler", **({"frame": frame} if frame else {})},
    )


def test_glog_abort_is_behind_the_error_it_ends_on() -> None:
    log = (
        "RuntimeError: CUDA error: out of memory\n"
        "*** SIGABRT received by PID 1169 (TID 1169) on cpu 32 from PID 1169; stack trace: ***"
    )
    assert _root(log) == ("RUN101", "cuda_oom")
