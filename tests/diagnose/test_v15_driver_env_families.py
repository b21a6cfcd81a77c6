"""driver_env families of the v15 dev misses (group r1), read at their sources:

- torch without the backend (rules/device_visibility.py): distributed_c10d's "Distributed package doesn't
  have NCCL built in" kept by its start (a title retyped "bulit", or cut after the backend), torch 0.4 THD's
  DataChannel::newChannel "the distributed NCCL backend is not available; try to recompile the THD package
  with CUDA and NCCL 2+ support" (MPI, Gloo likewise): RUN263;
- the loader (rules/loader.py): torch's own libraries missing under an extension (Horovod's mpi_lib_v2:
  "ImportError: libtorch.so: cannot open shared object file"), Paddle's dynload "The third-party dynamic
  library (libnccl.so) that Paddle depends on is not configured correctly.", Cray MPICH's "MPIDI_CRAY_init:
  GPU_SUPPORT_ENABLED is requested, but GTL library is not linked": RUN263;
- an nccl* symbol missing from the libnccl the loader found, quoted or without its exception type (a title:
  'undefined symbol: "ncclCommWindowRegister"'): RUN195;
- NVML's library missing in gpu-monitoring-tools' words (k8s device plugin <= 0.9: "Failed to initialize NVML:
  could not load NVML library."), Cray MPICH GTL_DEBUG lines naming an environment CUDA error: RUN262;
- the driver's context creation refused for memory (XLA / TF stream executor "failed call to
  cuDevicePrimaryCtxRetain: CUDA_ERROR_OUT_OF_MEMORY"): a GPU full or not granted before the job, RUN262.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = ["", "[rank1]: ", "node7: ", "[1,0]<stderr>:", "2025-01-02 03:04:05,678 - ERROR - "]

CASES = [
    # torch without the backend
    ("RuntimeError: Distributed package doesn't have NCCL built in", "RUN263", {"library": "NCCL"}),
    ("RuntimeError: Distributed package doesn't have NCCL bulit in", "RUN263", {"library": "NCCL"}),
    ("Distributed package doesn't have NCCL built in", "RUN263", {"library": "NCCL"}),
    ("RuntimeError: Distributed package doesn't have NCCL", "RUN263", {"library": "NCCL"}),
    (
        "RuntimeError: Distributed package doesn't have MPI built in. MPI is only included if you build "
        "PyTorch from source on a host that has MPI installed.",
        "RUN263",
        {"library": "MPI"},
    ),
    (
        "RuntimeError: the distributed NCCL backend is not available; try to recompile the THD package with "
        "CUDA and NCCL 2+ support at /opt/conda/conda-bld/pytorch_1533672544752/work/torch/lib/THD/"
        "process_group/General.cpp:17",
        "RUN263",
        {"library": "NCCL"},
    ),
    (
        "> RuntimeError: the distributed NCCL backend is not available; try to recompile the THD package "
        "with CUDA and NCCL 2+ support",
        "RUN263",
        {"library": "NCCL"},
    ),
    (
        "RuntimeError: the MPI backend is not available; try to recompile the THD package with MPI support",
        "RUN263",
        {"library": "MPI"},
    ),
    # libraries
    (
        "ImportError: libtorch.so: cannot open shared object file: No such file or directory",
        "RUN263",
        {"library": "libtorch.so"},
    ),
    (
        "OSError: libc10.so: cannot open shared object file: No such file or directory",
        "RUN263",
        {"library": "libc10.so"},
    ),
    (
        "ImportError: libtorch_cpu.so: cannot open shared object file: No such file or directory",
        "RUN263",
        {"library": "libtorch_cpu.so"},
    ),
    (
        "训练遇到问题：The third-party dynamic library (libnccl.so) that Paddle depends on is not configured "
        "correctly.",
        "RUN263",
        {"library": "libnccl.so"},
    ),
    (
        "PreconditionNotMet: The third-party dynamic library (libcudnn.so) that Paddle depends on is not "
        "configured correctly. (error code is /usr/local/cuda/lib64/libcudnn.so: cannot open shared object "
        "file: No such file or directory)",
        "RUN263",
        {"library": "libcudnn.so"},
    ),
    (
        "OSError: (External) The third-party dynamic library (cudnn64_8.dll) that Paddle depends on is not "
        "configured correctly. (error code is 126)",
        "RUN263",
        {"library": "cudnn64_8.dll"},
    ),
    (
        "MPICH ERROR [Rank 0] [job id 3161.0] [Tue Mar  5 10:00:00 2024] [nid001234] - Abort(-1) (rank 0 in "
        "comm 0): MPIDI_CRAY_init: GPU_SUPPORT_ENABLED is requested, but GTL library is not linked",
        "RUN263",
        {"reason": "gtl_not_linked"},
    ),
    (
        "MPIDI_CRAY_init: GPU_SUPPORT_ENABLED is requested, but GTL library is not linked",
        "RUN263",
        {"library": "libmpi_gtl"},
    ),
    # an nccl* symbol missing
    (
        '[BUG]: undefined symbol: "ncclCommWindowRegister"',
        "RUN195",
        {"missing_symbol": "ncclCommWindowRegister"},
    ),
    ("undefined symbol: ncclCommInitRankScalable", "RUN195", {"missing_symbol": "ncclCommInitRankScalable"}),
    (
        "./build/all_reduce_perf: symbol lookup error: ./build/all_reduce_perf: undefined symbol: "
        "ncclCommWindowRegister",
        "RUN195",
        {"missing_symbol": "ncclCommWindowRegister"},
    ),
    # NVML's library, Cray GTL's CUDA errors
    (
        "2022/05/13 23:09:23 Failed to initialize NVML: could not load NVML library.",
        "RUN262",
        {"nvml_error": "library_not_found"},
    ),
    ("Failed to initialize NVML: could not load NVML library", "RUN262", {"reason": "no_driver"}),
    (
        "GTL_DEBUG: [0] cudaHostRegister: no CUDA-capable device is detected",
        "RUN262",
        {"cuda_error_number": 100},
    ),
    (
        "GTL_DEBUG: [3] cudaGetDeviceCount: no CUDA-capable device is detected",
        "RUN262",
        {"reason": "no_visible_device"},
    ),
    # the context refused for memory
    (
        "2022-05-25 16:37:26.029661: W external/org_tensorflow/tensorflow/compiler/xla/service/"
        "platform_util.cc:200] unable to create StreamExecutor for CUDA:3: failed initializing "
        "StreamExecutor for CUDA device ordinal 3: INTERNAL: failed call to cuDevicePrimaryCtxRetain: "
        "CUDA_ERROR_OUT_OF_MEMORY: out of memory; total memory reported: 34089730048",
        "RUN262",
        {"reason": "context_out_of_memory", "gpu_index": 3},
    ),
    (
        "2019-03-01 10:00:00.000000: E tensorflow/core/common_runtime/direct_session.cc:158] Internal: "
        "failed initializing StreamExecutor for CUDA device ordinal 0: Internal: failed call to "
        "cuDevicePrimaryCtxRetain: CUDA_ERROR_OUT_OF_MEMORY; total memory reported: 11721506816",
        "RUN262",
        {"reason": "context_out_of_memory", "cuda_call": "cuDevicePrimaryCtxRetain"},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line,code,facts", CASES)
def test_v15_driver_env_family(prefix: str, line: str, code: str, facts: dict[str, object]) -> None:
    _check(prefix + line + "\n", code, facts)


def test_horovod_extension_without_its_torch() -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 23, in <module>\n'
        "    import horovod.torch as hvd\n"
        '  File "/env/lib/python3.7/site-packages/horovod/torch/mpi_ops.py", line 31, in <module>\n'
        "    from horovod.torch import mpi_lib_v2 as mpi_lib\n"
        "ImportError: libtorch.so: cannot open shared object file: No such file or directory\n"
    )
    _check(log, "RUN263", {"library": "libtorch.so"})


def test_k8s_device_plugin_without_nvml() -> None:
    log = (
        "2022/05/13 23:09:23 Loading NVML\n"
        "2022/05/13 23:09:23 Failed to initialize NVML: could not load NVML library.\n"
        "2022/05/13 23:09:23 If this is a GPU node, did you set the docker default runtime to 'nvidia'?\n"
    )
    _check(log, "RUN262", {"nvml_error": "library_not_found"})


# Look-alikes that must not be read as these failures.
QUIET = [
    # Paddle's optional libraries are probed at W level and it goes on
    "W1204 12:00:00.123456  1234 dynamic_loader.cc:307] The third-party dynamic library (libcupti.so) "
    "that Paddle depends on is not configured correctly. (error code is libcupti.so: cannot open shared "
    "object file)",
    # torchvision's optional image extension
    "/env/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: libc10_cuda.so: "
    "cannot open shared object file: No such file or directory",
    # healthy device-plugin and NVML starts
    "2022/05/13 23:09:23 Loading NVML\n2022/05/13 23:09:23 Starting FS watcher.\n"
    "2022/05/13 23:09:23 Starting OS watcher.",
    "torch.distributed.is_nccl_available(): False, using the gloo backend",
]


@pytest.mark.parametrize("log", QUIET)
def test_v15_driver_env_look_alikes_are_quiet(log: str) -> None:
    assert _root(log + "\n") is None


NOT_DRIVER_ENV = [
    # the job's own allocation failed: the allocator's OOM, and the driver's on an allocation
    (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity of 79.15 GiB of which 1.02 GiB is free.",
        "cuda_oom",
    ),
    (
        "E external/xla/xla/stream_executor/cuda/cuda_driver.cc:950] failed to alloc 34359738368 bytes on "
        "device: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
        "cuda_oom",
    ),
    # a library outside the GPU stack
    ("ImportError: libffi.so.7: cannot open shared object file: No such file or directory", None),
]


@pytest.mark.parametrize("log,category", NOT_DRIVER_ENV)
def test_v15_driver_env_other_classes_keep_theirs(log: str, category: object) -> None:
    root = _root(log + "\n")
    assert root is None or root.category != "driver_env", root
    if category is not None:
        assert root is not None and root.category == category, root


def test_thd_message_wrapped_by_a_terminal_after_recompile() -> None:
    log = (
        "> RuntimeError: the distributed NCCL backend is not available; try to recompile \n"
        "the THD package with CUDA and NCCL 2+ support at /opt/conda/conda-bld/pytorch_15\n"
        "33672544752/work/torch/lib/THD/process_group/General.cpp:17\n"
    )
    root = _root(log)
    assert root is not None and root.code == "RUN263", root
