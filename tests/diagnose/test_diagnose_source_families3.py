"""Message families read at their source, round 3 (continues test_diagnose_source_families2.py).

driver_env: every way torch, CUDA, NCCL, NVML, the dynamic loader and the kernel word a stack that
does not fit - torch/cuda/__init__.py and c10/cuda's lazy init, cudaGetErrorString texts of the
runtime and driver (34 stub library, 36 needs a newer driver, 222 unsupported PTX, NCCL's CUDACHECK
"Cuda failure 3 'initialization error'"), the loader's dlerror texts (cannot open, undefined symbol,
symbol version not found), torch/utils/cpp_extension.py's and its neighbours' toolkit checks,
nvidia-smi/NVML/container-runtime words, NVRM's kernel records. Each case carries the prefixes real
logs add. Loader errors quoted inside a warning (an optional part skipped, the run went on) are not
failures.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = ["", "[rank3]: ", "node7: ", "2025-01-02 03:04:05,678 - ERROR - "]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(
    ("line", "code"),
    [
        # the dynamic loader, for every library of the GPU stack
        (
            "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory",
            "RUN263",
        ),
        ("OSError: libtorch_cuda.so: cannot open shared object file: No such file or directory", "RUN263"),
        ("OSError: libcusolver.so.11: cannot open shared object file: No such file or directory", "RUN263"),
        (
            "ImportError: libnvToolsExt.so.1: cannot open shared object file: No such file or directory",
            "RUN263",
        ),
        (
            "OSError: /opt/conda/lib/python3.9/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
            "cudaGraphInstantiateWithFlags, version libcudart.so.11.0",
            "RUN263",
        ),
        (
            "ImportError: /usr/local/lib/python3.10/site-packages/"
            "flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so:"
            " undefined symbol: _ZN3c104cuda9SetDeviceEi",
            "RUN263",
        ),
        (
            "ImportError: /lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.29' not "
            "found (required by "
            "/opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_python.so)",
            "RUN263",
        ),
        # the toolkit that compiles extensions, and companion packages
        (
            "RuntimeError: The detected CUDA version (12.1) mismatches the version that was used to compile "
            "PyTorch (11.8). Please make sure to use the same CUDA versions.",
            "RUN296",
        ),
        (
            "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.",
            "RUN296",
        ),
        (
            "deepspeed.ops.op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder: Installed CUDA "
            "version 12.1 does not match the version torch was compiled with 11.8, unable to "
            "compile cuda/cpp "
            "extensions without a matching cuda version.",
            "RUN296",
        ),
        (
            "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major "
            "versions. PyTorch has CUDA Version=11.7 and torchvision has CUDA Version=12.1.",
            "RUN296",
        ),
        # the driver absent or unreachable
        (
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make "
            "sure that the "
            "latest NVIDIA driver is installed and running.",
            "RUN262",
        ),
        ("Failed to initialize NVML: Unknown Error", "RUN262"),
        ("RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.", "RUN262"),
        (
            "RuntimeError: Attempting to deserialize object on a CUDA device but "
            "torch.cuda.is_available() is "
            "False. If you are running on a CPU-only machine, please use torch.load with map_location",
            "RUN262",
        ),
        (
            'docker: Error response from daemon: could not select device driver "" with '
            "capabilities: [[gpu]].",
            "RUN262",
        ),
        ("RuntimeError: CUDA error: CUDA driver is a stub library", "RUN262"),
        (
            "RuntimeError: cuda runtime error (30) : unknown error at "
            "/pytorch/aten/src/THC/THCGeneral.cpp:51",
            "RUN262",
        ),
        # a driver that does not fit the runtime, the library or the GPU
        ("RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.", "RUN261"),
        ("RuntimeError: CUDA error: API call is not supported in the installed CUDA driver", "RUN261"),
        (
            "nvidia-container-cli: initialization error: nvml error: driver/library version "
            "mismatch: unknown",
            "RUN261",
        ),
        (
            "[ 12.3] NVRM: API mismatch: the client has the version 535.54.03, but this kernel "
            "module has the "
            "version 525.85.12.",
            "RUN261",
        ),
        (
            "[ 5.1] NVRM: The NVIDIA Tesla K80 GPU installed in this system is not supported by the NVIDIA "
            "535.54 driver release.",
            "RUN262",
        ),
        (
            "NVIDIA H100 80GB HBM3 with CUDA capability sm_90 is not compatible with the current PyTorch "
            "installation.",
            "RUN265",
        ),
        (
            "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 9, 2) but found "
            "runtime version (8, 5, 0).",
            "RUN296",
        ),
        (
            "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=47 error=30 : unknown error",
            "RUN262",
        ),
        ("RuntimeError: Not compiled with GPU support", "RUN296"),
        ("RuntimeError: nms is not compiled with GPU support", "RUN296"),
        (
            "RuntimeError: CUDA Setup failed despite GPU being available. Please run the following command",
            "RUN263",
        ),
        # ROCm builds' words for the same families
        ("RuntimeError: No HIP GPUs are available", "RUN262"),
        ('"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"', "RUN265"),
        # NCCL's CUDACHECK of the generic initialisation error
        ("node1:123:123 [0] init.cc:1400 NCCL WARN Cuda failure 3 'initialization error'", "RUN262"),
        ("node1:123:123 [0] NCCL WARN Cuda failure 'initialization error'", "RUN262"),
        ("node1:123:123 [0] init.cc:1500 NCCL WARN Cuda failure 101 'invalid device ordinal'", "RUN264"),
    ],
)
def test_driver_env_family_in_every_source_wording(prefix: str, line: str, code: str) -> None:
    root = _root(prefix + line + "\n")
    assert root is not None and root.code == code and root.category == "driver_env", (line, root)


def test_unhandled_cuda_error_with_the_initialisation_error_as_last_error_is_driver_env() -> None:
    root = _root(
        "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, "
        "unhandled cuda"
        " error, NCCL version 2.14.3\n"
        "ncclUnhandledCudaError: Call to CUDA function failed.\n"
        "Last error:\n"
        "Cuda failure 'initialization error'\n"
    )
    assert root is not None and root.category == "driver_env"


def test_toolkit_versions_are_facts() -> None:
    root = _root(
        "RuntimeError: The detected CUDA version (12.1) mismatches the version that was used to compile "
        "PyTorch (11.8). Please make sure to use the same CUDA versions.\n"
    )
    assert root.facts["toolkit_cuda"] == "12.1" and root.facts["torch_cuda"] == "11.8"


@pytest.mark.parametrize(
    "log",
    [
        # torchvision's optional image extension: a warning, and the run goes on
        "/usr/local/lib/python3.10/dist-packages/torchvision/io/image.py:13: UserWarning: "
        "Failed to load image "
        "Python extension: '/usr/local/lib/python3.10/dist-packages/torchvision/image.so: undefined symbol: "
        "_ZN3c1017RegisterOperatorsD1Ev'If you don't plan on using image functionality from "
        "`torchvision.io`, "
        "you can ignore this warning.\n  warn(\nEpoch 1: 100%| 500/500 [01:02<00:00, loss=0.41]\n",
        "UserWarning: Failed to load image Python extension: libc10_cuda.so: cannot open shared "
        "object file: No "
        'such file or directory\n  warn(f"Failed to load image Python extension: {e}")\nstep 100 loss 2.31\n',
        # NCCL probing its optional network plugin
        "node1:1234:1234 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared "
        "object file: No "
        "such file or directory No plugin found (libnccl-net.so), using internal implementation\n"
        "node1:1234:1250 [0] NCCL INFO comm 0x8a0c1f0 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n",
        # xFormers and DeepSpeed say which optional ops they skip
        # TensorFlow imported as a side dependency probes for its CUDA libraries at W level
        "2021-05-01 10:00:00.123456: W "
        "tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not "
        "load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open "
        "shared object file: "
        "No such file or directory\n2021-05-01 10:00:00.123456: I "
        "tensorflow/stream_executor/cuda/cudart_stub.cc:29]"
        " Ignore above cudart dlerror if you do not have a GPU set up on your machine.\nepoch 1 loss 0.3\n",
        "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
        "    PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.2.0+cu121)\nstep 1 loss 5.4\n",
        "[WARNING] cpu_adam cuda is missing or is incompatible with installed torch, only cpu ops can be "
        "compiled!\n[WARNING]  async_io requires the dev libaio .so object and headers but "
        "these were not found.\n",
        "/usr/local/lib/python3.8/site-packages/torch/cuda/__init__.py:497: UserWarning: Can't "
        "initialize NVML\n"
        '  warnings.warn("Can\'t initialize NVML")\nEpoch 1 100% loss=0.2\n',
    ],
)
def test_optional_parts_that_warn_are_silent(log: str) -> None:
    assert _root(log) is None


# -- desync: the flight recorder analyzer's text, TORCH_NCCL_DESYNC_DEBUG's snapshot, DDP's static graph --

_FR_HEAD = "internal record id: 5\ngroup info: 0:default_pg\ncollective: nccl:all_reduce\n"


@pytest.mark.parametrize(
    ("log", "code", "ranks"),
    [
        (
            "Collective sequence number: 5 has errors\n" + _FR_HEAD + "input sizes: [[1024]]\n"
            "output sizes: [[1024]]\nworld size: 4\nexpected ranks: {0, 1, 2, 3}\ncollective "
            "state: scheduled\n"
            "error msg: Culprit rank 2; Error type: COLLECTIVE_TYPE_MISMATCH, Expected collective type: "
            "'all_reduce' does not match found collective type: 'broadcast'\n",
            "RUN282",
            [2],
        ),
        (
            "Collective sequence number: 9 has errors\ncollective: nccl:all_gather\n"
            "error msg: Culprit rank 3; Error type: SIZE_OR_SYNTAX_MISMATCH, Expected input "
            "sizes: '[[1024]]' "
            "does not match found input sizes: '[[2048]]', Culprit rank 1; Error type: "
            "COLLECTIVE_DTYPE_MISMATCH,"
            " Expected dtypes: '{'Float'}' does not match found dtype: '{'Half'}/{'Half'}/{'Half'}'\n",
            "RUN282",
            [1, 3],
        ),
        (
            "Input/output mismatch in the collective sequence number: 7\ninternal record id: 7\n"
            "collective: nccl:all_to_all\ntotal input numel: 4096\ntotal output numel: 2048\n",
            "RUN282",
            None,
        ),
        (
            "Not all ranks joining collective, sequence number: 5\n" + _FR_HEAD + "missing ranks: {1, 3}\n",
            "RUN281",
            [1, 3],
        ),
    ],
)
def test_flight_recorder_analyzer_text_output(log: str, code: str, ranks: Any) -> None:
    root = _root(log)
    assert root is not None and root.code == code
    assert root.facts.get("ranks") == ranks


def test_analyzer_state_difference_alone_is_not_a_mismatch() -> None:
    # COLLECTIVE_STATE_MISMATCH says who is slower, not that the calls differ
    root = _root(
        "Collective sequence number: 5 has errors\n" + _FR_HEAD + "error msg: Culprit rank 1; Error type: "
        "COLLECTIVE_STATE_MISMATCH, Expected state: 'scheduled' does not match found state: 'completed'\n"
    )
    assert root is None or root.category != "collective_mismatch"


_WATCHDOG = (
    "[E ProcessGroupNCCL.cpp:475] [Rank 0] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=100, "
    "OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800456 milliseconds before timing out.\n"
    "\t - [0] Timeout at collective: ALLREDUCE, #100\n"
    "\t - To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:\n"
    "\t   - [1] joined but didn't finish collective #100 (count from 1)\n"
    "\t - Snapshot of ranks' latest states:\n"
    "\t   #100 started ranks:\n"
)


def test_desync_snapshot_with_two_collectives_at_one_sequence_number_is_a_mismatch() -> None:
    root = _root(_WATCHDOG + "\t     [0, 2, 3] started ALLREDUCE\n\t     [1] started BROADCAST\n")
    assert root is not None and root.code == "RUN201" and root.facts["seq"] == 100
    assert root.facts["ops"] == ["ALLREDUCE", "BROADCAST"]


def test_desync_snapshot_with_one_collective_stays_the_timeout() -> None:
    root = _root(_WATCHDOG + "\t     [0, 2, 3] started ALLREDUCE\n\t     [1] started ALLREDUCE\n")
    assert root is not None and root.category == "collective_timeout"


def test_ddp_static_graph_changed_is_the_reducer_family() -> None:
    root = _root(
        "[rank1]: RuntimeError: Your training graph has changed in this iteration, e.g., one "
        "parameter is used "
        "in first iteration, but then got unused in the second iteration. this is not compatible with "
        "static_graph set to True.\n"
    )
    assert root is not None and root.code == "RUN202" and root.category == "collective_mismatch"


# -- decoys: healthy runs whose logs hold the words of failures ---------------------------------------------

_DECOYS = {
    "store retry that connected": (
        "[W socket.cpp:601] [c10d] The client socket has failed to connect to [node-1]:29500 "
        "(errno: 113 - No route to host).\n"
        "[I socket.cpp:787] [c10d] The client socket has connected to [node-1]:29500 on [node-2]:51234.\n"
        "epoch 0 step 10 loss 3.21\n"
    ),
    "store retry on every address that connected": (
        "[W socket.cpp:436] [c10d] The client socket has failed to connect to any network address of "
        "(node-1, 29500).\n"
        "[I socket.cpp:787] [c10d] The client socket has connected to [node-1]:29500 on [node-2]:51234.\n"
    ),
    "exception ignored at exit": (
        "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py:2068: UserWarning: "
        "barrier(): using the device under current context.\n"
        "  warnings.warn(\n"
        "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f0c2a1b5ea0>\n"
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line '
        "1478, in __del__\n"
        "    self._shutdown_workers()\n"
        "AttributeError: '_MultiProcessingDataLoaderIter' object has no attribute '_workers_status'\n"
    ),
    "nccl init at INFO": (
        "node1:1234:1234 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
        "node1:1234:1234 [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v7 symbol.\n"
        "node1:1234:1250 [0] NCCL INFO NET/IB : No device found.\n"
        "node1:1234:1250 [0] NCCL INFO NVLS multicast support is not available on dev 0\n"
        "node1:1234:1250 [0] NCCL INFO Call to connect returned Connection refused, retrying\n"
        "node1:1234:1250 [0] NCCL INFO comm 0x8a0c1f0 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n"
    ),
    "deprecations and DDP advice": (
        "[W Utils.hpp:133] Warning: Environment variable NCCL_ASYNC_ERROR_HANDLING is deprecated; use "
        "TORCH_NCCL_ASYNC_ERROR_HANDLING instead (function getCvarInt)\n"
        "[rank0]:[W reducer.cpp:1389] Warning: find_unused_parameters=True was specified in DDP constructor, "
        "but did not find any unused parameters in the forward pass.\n"
        "[W CUDAAllocatorConfig.h:28] Warning: expandable_segments not supported on this platform (function "
        "operator())\n"
        "epoch 1 loss 0.4\n"
    ),
    "metrics named error": (
        "Epoch 3: train_loss=0.21 val_loss=0.25 train_error=0.05 val_error=0.07 mean_abs_error=0.12\n"
        "Epoch 4: train_loss=0.20 val_loss=0.24 train_error=0.04 val_error=0.06 mean_abs_error=0.11\n"
    ),
    "fp16 overflow skips": (
        "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0\n"
        "[2024-01-01] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. "
        "Attempted loss scale: 65536, reducing to 32768\n"
        "step 10 loss 3.1\n"
    ),
}


@pytest.mark.parametrize("name", sorted(_DECOYS))
def test_healthy_logs_with_failure_words_are_silent(name: str) -> None:
    assert _root(_DECOYS[name]) is None


def test_a_store_failure_that_never_connected_is_still_reported() -> None:
    root = _root(
        "[W socket.cpp:601] [c10d] The client socket has failed to connect to [node-1]:29500 "
        "(errno: 113 - No route to host).\nepoch 0 loss 1.0\n"
    )
    assert root is not None and root.category == "rendezvous"


def test_an_uncaught_exception_after_an_ignored_one_is_still_reported() -> None:
    root = _root(
        _DECOYS["exception ignored at exit"] + "Traceback (most recent call last):\n"
        '  File "train.py", line 3, in <module>\n    main()\n'
        "ValueError: labels out of range\n"
    )
    assert root is not None and root.code == "RUN132"


# -- evidence that stands alone: memory_summary(), the OOM killer's task table, stack dumps ----------------

_SUMMARY = (
    "|===========================================================================|\n"
    "|                  PyTorch CUDA memory summary, device ID 3                 |\n"
    "|---------------------------------------------------------------------------|\n"
    "|            CUDA OOMs: {ooms}            |        cudaMalloc retries: 4         |\n"
    "|===========================================================================|\n"
    "|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |\n"
    "| Allocated memory      |  38.2 GiB  |  39.1 GiB  |   1.2 TiB  |   1.2 TiB  |\n"
)


def test_memory_summary_that_counts_ooms_is_a_cuda_oom() -> None:
    root = _root(_SUMMARY.format(ooms=2))
    assert root is not None and root.code == "RUN101"
    assert root.facts["cuda_ooms"] == 2 and root.facts["device"] == 3


def test_memory_summary_without_ooms_is_silent() -> None:
    assert _root(_SUMMARY.format(ooms=0)) is None


_TASKS = (
    "[17798674.374062] [ 199244]  1000 199244     1907      677    49152        0          -998 bash\n"
    "[17798674.374095] [ 199300]  1000 199300   101975    23897   307200      501          -998 jupyter-lab\n"
    "[17798674.374495] [ 202779]  1000 202779 274650088 243385180 1957441536     7930          -998 python\n"
    "[17798674.374519] [ 202780]  1000 202780 33475461  2529507 25161728     3314          -998 python\n"
)


@pytest.mark.parametrize(
    "head",
    [
        "",
        "[17798674.374000] Tasks state (memory values in pages):\n"
        "[17798674.374001] [  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents "
        "oom_score_adj name\n",
    ],
)
def test_the_oom_killers_task_table_alone_is_a_host_oom(head: str) -> None:
    root = _root(head + _TASKS)
    assert root is not None and root.category == "host_oom"
    assert root.facts["pid"] == 202779 and root.facts["process"] == "python"


def test_one_bracketed_row_of_numbers_is_not_the_table() -> None:
    assert (
        _root("[ 202779]  1000 202779 274650088 243385180 1957441536     7930          -998 python\n") is None
    )


@pytest.mark.parametrize(
    ("log", "code"),
    [
        (
            "(gdb) thread apply all bt\n"
            'Thread 1 (Thread 0x7f3a2c1b7740 (LWP 12345) "python"):\n'
            "#0  0x00007f3a2b8e1c3d in syscall () from /lib/x86_64-linux-gnu/libc.so.6\n"
            "#1  0x00007f39e1c2a1b3 in ?? () from /usr/lib/x86_64-linux-gnu/libcuda.so.1\n"
            "#2  0x00007f3a1e2c33f1 in cudaStreamSynchronize () from /usr/lib/libcudart.so.12\n"
            "#3  0x00007f3a1c2b1a2e in c10d::ProcessGroupNCCL::WorkNCCL::synchronizeStream() () from "
            "/usr/lib/libtorch_cuda.so\n",
            "RUN297",
        ),
        (
            "Timeout (0:30:00)!\nThread 0x00007f9c6a7f8740 (most recent call first):\n"
            '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", '
            "line 2050 in "
            "all_reduce\n"
            '  File "/workspace/train.py", line 88 in train_step\n',
            "RUN297",
        ),
        (
            "(gdb) bt\n#0  0x00007ffff7bc9ad3 in futex_wait_cancelable (private=0) at futex-internal.h:183\n"
            "#1  0x00007fffe5a3c1a1 in c10d::TCPStore::doWait(c10::ArrayRef<std::string>) () "
            "from libtorch_cpu.so\n",
            "RUN221",
        ),
        (
            'Thread 1 "python" received signal SIGSEGV, Segmentation fault.\n'
            "0x00001554ff97c269 in ncclIbDeregMr (comm=0x0, mhandle=0x0) at transport/net_ib.cc:906\n",
            "RUN131",
        ),
    ],
)
def test_stack_dumps_of_stuck_or_faulting_ranks(log: str, code: str) -> None:
    root = _root(log)
    assert root is not None and root.code == code


def test_a_python_traceback_through_a_collective_is_not_a_dump() -> None:
    root = _root(
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", '
        "line 2050, in "
        "all_reduce\n    work = group.allreduce([tensor], opts)\n"
        "ValueError: labels out of range\n"
    )
    assert root is not None and root.code == "RUN132"


def test_an_error_line_outranks_the_stack_dump() -> None:
    root = _root(
        'Thread 4242 (idle): "MainThread"\n    all_reduce (torch/distributed/distributed_c10d.py:2050)\n'
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
        "of 79.15 GiB of which 1.2 GiB is free.\n"
    )
    assert root is not None and root.category == "cuda_oom"


@pytest.mark.parametrize(
    "line",
    [
        "horovod.common.exceptions.HorovodInternalError: Mismatched MPI operations: One rank "
        "did an allreduce, "
        "but another rank did an allgather.",
        "tensorflow.python.framework.errors_impl.FailedPreconditionError: Mismatched data "
        "types: One rank had "
        "type float32, but another rank had type float64.",
        "Mismatched allreduce tensor shapes: One or more rank sent tensors of different shapes "
        "for tensor loss",
        "Mismatched broadcast root ranks: One rank specified root rank 0, but another rank "
        "specified root rank 1.",
    ],
)
def test_horovod_coordinator_mismatches(line: str) -> None:
    root = _root(line + "\n")
    assert root is not None and root.category == "collective_mismatch"


@pytest.mark.parametrize(
    ("log", "fact"),
    [
        (
            "Feb 24 09:28:28 ip-172-31-92-157 nv-fabricmanager[1507]: fabric manager NVIDIA GPU "
            "driver interface "
            "version 535.183.01 don't match with driver version 535.216.01. Please update with "
            "matching NVIDIA "
            "driver package.\n",
            "535.183.01",
        ),
        (
            "Feb 24 09:28:28 host systemd[1]: nvidia-fabricmanager.service: Failed with result 'exit-code'.\n"
            "Feb 24 09:28:28 host systemd[1]: Failed to start NVIDIA fabric manager service.\n",
            None,
        ),
    ],
)
def test_fabric_manager_records_are_driver_env(log: str, fact: Any) -> None:
    root = _root(log)
    assert root is not None and root.code == "RUN262" and root.facts["reason"] == "fabric_manager"
    assert root.facts.get("fabric_manager_version") == fact


@pytest.mark.parametrize(
    ("line", "ranks"),
    [
        (
            "RuntimeError: Forward order differs across ranks: rank 0 is all-gathering 43 "
            "parameters while rank "
            "1228 is all-gathering 1 parameters",
            [0, 1228],
        ),
        ("AssertionError: Rank 1 has different values for step: 8016.0. Other ranks: 7870.0", None),
        # the pretty-printed fingerprint without its exception type on the line
        (
            "Detected mismatch between collectives on ranks. Rank 0 is running collective:\n"
            "CollectiveFingerPrint(OpType=ALLREDUCE, TensorShape=[20, 10], TensorDtypes=Float,",
            None,
        ),
    ],
)
def test_fsdp_and_wrapper_mismatch_words(line: str, ranks: Any) -> None:
    root = _root(line + "\n")
    assert root is not None and root.category == "collective_mismatch"
    if ranks:
        assert root.facts["ranks_compared"] == ranks


@pytest.mark.parametrize(
    "last",
    [
        '  File "/usr/lib/python3.10/site-packages/torch/distributed/rendezvous.py", line 245, in '
        "_env_rendezvous_handler\n    store = _cre",
        '  File "/usr/lib/python3.10/site-packages/torch/distributed/elastic/rendezvous/'
        'dynamic_rendezvous.py", '
        "line 1100, in next_rendezvous\n",
    ],
)
def test_a_traceback_cut_inside_the_rendezvous_is_a_rendezvous_failure(last: str) -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 79, in main\n    dist.init_process_group("nccl")\n'
        '  File "/usr/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 900, in '
        "init_process_group\n    store, rank, world_size = next(rendezvous_iterator)\n" + last
    )
    root = _root(log)
    assert root is not None and root.category == "rendezvous"


def test_a_traceback_cut_elsewhere_stays_a_note() -> None:
    root = _root('Traceback (most recent call last):\n  File "train.py", line 79, in main\n    step()\n')
    assert root is None
