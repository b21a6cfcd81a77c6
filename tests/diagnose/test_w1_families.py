"""Rule writer w1's families of 2026-12-07 (misses of v20's held-out half, class driver_env), each read as a
family at its source (rules/stack_skew.py):

- gloo's sysfs reads of the PCI topology (gloo/common/linux.cc: pciPath's readlink, listDir, pciGetClass,
  kernelModules) under every wrapper that shows a gloo::EnforceNotMet (RUN620, new);
- ProcessGroupMPI's checks of the MPI library torch was built against: no CUDA-aware support, no
  MPI_THREAD_SERIALIZED (RUN334);
- a pybind11 binding of torch._C refusing a keyword that none of its listed signatures has: torch's .py files
  newer than its compiled library (RUN621, new); a listed keyword with a wrong value stays RUN224;
- torch.utils.cpp_extension's "No CUDA runtime is found, using CUDA_HOME=..." before a traceback (RUN262,
  tier 2); alone it is a build host's print and stays silent.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, check_root, root_finding

# -- gloo's sysfs reads (gloo/common/linux.cc) ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("log", "check", "error"),
    [
        # torch 0.2 (2017): pciPath's readlink at line 103, re-raised by torch as RuntimeError
        (
            "RuntimeError: [enforce fail at "
            "/home/ubuntu/git/pytorch/torch/lib/gloo/gloo/common/linux.cc:103] "
            "rv != -1. -1 vs -1. Invalid argument",
            "rv != -1",
            "Invalid argument",
        ),
        # torch 1.x-2.x: line 111, an uncaught gloo::EnforceNotMet printed by the C++ runtime
        (
            "terminate called after throwing an instance of 'gloo::EnforceNotMet'\n"
            "  what():  [enforce fail at ../third_party/gloo/gloo/common/linux.cc:111] rv != -1. -1 vs -1. "
            "No such file or directory",
            "rv != -1",
            "No such file or directory",
        ),
        # listDir of /sys/bus/pci/devices
        (
            "RuntimeError: [enforce fail at /opt/pytorch/third_party/gloo/gloo/common/linux.cc:70] dirp != "
            "nullptr. Permission denied",
            "dirp != nullptr",
            "Permission denied",
        ),
        # pciGetClass's class file, no strerror
        (
            "RuntimeError: [enforce fail at third_party/gloo/gloo/common/linux.cc:87] ifs.good(). ",
            "ifs.good()",
            None,
        ),
        # the compared values only: no strerror to report
        (
            "RuntimeError: [enforce fail at ../third_party/gloo/gloo/common/linux.cc:112] rv < buf.size(). "
            "256 vs 256",
            "rv < buf.size()",
            None,
        ),
    ],
)
def test_gloo_sysfs_reads(log: str, check: str, error: str | None) -> None:
    check_root(log + "\n", "RUN620", {"check": check, "error": error})


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
def test_gloo_sysfs_under_launcher_prefixes(prefix: str) -> None:
    line = (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/common/linux.cc:111] rv != -1. -1 vs -1. "
        "Invalid argument"
    )
    check_root(prefix + line + "\n", "RUN620")


@pytest.mark.parametrize(
    "log",
    [
        # a build log compiling the file
        "[ 42%] Building CXX object third_party/gloo/gloo/CMakeFiles/gloo.dir/common/linux.cc.o",
        "  /opt/pytorch/third_party/gloo/gloo/common/linux.cc:111:3: warning: comparison of integer "
        "expressions",
    ],
)
def test_gloo_sysfs_near_misses_silent(log: str) -> None:
    assert root_finding(log + "\n") is None


def test_gloo_other_enforce_sites_not_sysfs() -> None:
    # the transport's size check is a collective mismatch, not the sysfs walk
    log = (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/pair.cc:446] "
        "op.preamble.length "
        "<= op.nbytes. 8 vs 4\n"
    )
    root = root_finding(log)
    assert root is None or root.code != "RUN620", root


# -- ProcessGroupMPI's checks of its MPI library -------------------------------------------------------------


@pytest.mark.parametrize(
    ("log", "problem"),
    [
        (
            "RuntimeError: CUDA tensor detected and the MPI used doesn't have CUDA-aware MPI support",
            "MPI without CUDA-aware support",
        ),
        # 1.x with c10's source location
        (
            "RuntimeError: CUDA tensor detected and the MPI used doesn't have CUDA-aware MPI support "
            "(checkSingleTensorHelper at /pytorch/torch/lib/c10d/ProcessGroupMPI.cpp:55)",
            "MPI without CUDA-aware support",
        ),
        (
            "[rank1]: RuntimeError: CUDA tensor detected and the MPI used doesn't have CUDA-aware MPI "
            "support\n"
            "[rank1]: Exception raised from checkSingleTensorHelper at ../torch/csrc/distributed/c10d/"
            "ProcessGroupMPI.cpp:70 (most recent call first):",
            "MPI without CUDA-aware support",
        ),
        (
            "RuntimeError: Used MPI implementation doesn't have the minimum level of threading support: "
            "MPI_THREAD_SERIALIZED. This is required by c10d package",
            "MPI without MPI_THREAD_SERIALIZED",
        ),
    ],
)
def test_process_group_mpi_build_checks(log: str, problem: str) -> None:
    check_root(log + "\n", "RUN334", {"problem": problem, "backend": "mpi"})


@pytest.mark.parametrize(
    "log",
    [
        # the caller's own mistakes at the same checks: not the MPI build
        "RuntimeError: MPI process group does not support multi-GPU collectives",
        "RuntimeError: input tensor has to be contiguous",
        # ompi_info lines of a healthy install
        "  MPI extensions: affinity, cuda, pcollreq",
        "mca:mpi:base:param:mpi_built_with_cuda_support:value:true",
    ],
)
def test_process_group_mpi_near_misses(log: str) -> None:
    root = root_finding(log + "\n")
    assert root is None or root.code != "RUN334", root


# -- a torch._C binding without a keyword that torch's Python passes -----------------------------------------

_TCPSTORE_OLD = (
    "    1. torch._C._distributed_c10d.TCPStore(host_name: str, port: int, world_size: int, is_master: bool, "
    "timeout: datetime.timedelta = datetime.timedelta(0, 300))"
)
_TCPSTORE_NEW = (
    "    1. torch._C._distributed_c10d.TCPStore(host_name: str, port: int, world_size: Optional[int] = None, "
    "is_master: bool = False, timeout: datetime.timedelta = datetime.timedelta(seconds=300), "
    "wait_for_workers: "
    "bool = True, multi_tenant: bool = False, master_listen_fd: Optional[int] = None, use_libuv: bool = True)"
)


@pytest.mark.parametrize(
    ("log", "kwargs"),
    [
        # torchelastic's error JSON: one line with escaped newlines
        (
            'ERROR:torch.distributed.elastic.multiprocessing.errors.error_handler:{\n  "message": {\n    '
            '"message": "TypeError: __init__(): incompatible constructor arguments. The following argument '
            "types "
            "are supported:\\n    1. torch._C._distributed_c10d.TCPStore(host_name: str, port: int, "
            "world_size: "
            "int, is_master: bool, timeout: datetime.timedelta = datetime.timedelta(0, 300))\\n\\nInvoked "
            "with: "
            "'127.0.0.1', 29500, 1, True, datetime.timedelta(0, 900); kwargs: multi_tenant=True\",",
            ["multi_tenant"],
        ),
        # a plain traceback over lines
        (
            "TypeError: __init__(): incompatible constructor arguments. The following argument types are "
            "supported:\n" + _TCPSTORE_OLD + "\n\nInvoked with: '10.0.0.1', 29400, 2, False, "
            "datetime.timedelta(seconds=600); kwargs: wait_for_workers=True, multi_tenant=True",
            ["wait_for_workers", "multi_tenant"],
        ),
        # a function binding of the same module
        (
            "TypeError: _broadcast_coalesced(): incompatible function arguments. The following argument "
            "types "
            "are supported:\n    1. (process_group: torch._C._distributed_c10d.ProcessGroup, tensors: "
            "List[at::Tensor], buffer_size: int, src: int = 0) -> None\n\nInvoked with: "
            "<torch._C._distributed_c10d.ProcessGroupNCCL object at 0x7f2c>, [tensor([1.])], 262144; kwargs: "
            "src=0, async_op=True",
            ["async_op"],
        ),
    ],
)
def test_torch_binding_skew(log: str, kwargs: list[str]) -> None:
    check_root(log + "\n", "RUN621", {"unknown_kwargs": kwargs})


@pytest.mark.parametrize(
    ("log", "code"),
    [
        # a port passed as a string, no keyword: the caller's values (RUN224)
        (
            "TypeError: __init__(): incompatible constructor arguments. The following argument types are "
            "supported:\n" + _TCPSTORE_OLD + "\n\nInvoked with: '127.0.0.1', '29500', 2, True, "
            "datetime.timedelta(seconds=1800)\nTCPStore",
            "RUN224",
        ),
        # a host that is None, every keyword listed: the caller's values (RUN224)
        (
            "TypeError: __init__(): incompatible constructor arguments. The following argument types are "
            "supported:\n" + _TCPSTORE_NEW + "\n\nInvoked with: None, 29500; kwargs: world_size=2, "
            "is_master=False, multi_tenant=True",
            "RUN224",
        ),
    ],
)
def test_torch_binding_wrong_values_stay_rendezvous(log: str, code: str) -> None:
    check_root(log + "\n", code)


def test_other_packages_bindings_not_torch_skew() -> None:
    log = (
        "TypeError: __init__(): incompatible constructor arguments. The following argument types are "
        "supported:\n"
        "    1. tensorrt_llm.bindings.executor.ExecutorConfig(max_beam_width: int = 1)\n\n"
        "Invoked with: kwargs: max_beam_width=1, gather_generation_logits=True\n"
    )
    root = root_finding(log)
    assert root is None or root.code != "RUN621", root


# -- cpp_extension found no CUDA runtime, then the job failed ------------------------------------------------


def test_no_cuda_runtime_before_a_cut_traceback() -> None:
    log = (
        "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\n"
        "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\n"
        "Load config from yml file: configs/car.yml\n"
        "Traceback (most recent call last):\n"
        '  File "run.py", line 26, in <module>\n'
        "    init_dist(args.launcher, backend='nccl')\n"
        '  File "/opt/conda/lib/python3.6/site-packages/mmcv/runner/dist_utils.py", line 20, in init_dist\n'
    )
    check_root(log, "RUN262", {"problem": "torch.cuda.is_available() is False"})


@pytest.mark.parametrize(
    "log",
    [
        # a build host importing cpp_extension: no failure
        "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\nrunning build_ext\nbuilding 'fused' "
        "extension",
        "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda-11.8'\n",
    ],
)
def test_no_cuda_runtime_alone_silent(log: str) -> None:
    assert root_finding(log) is None


def test_no_cuda_runtime_behind_a_named_error() -> None:
    # the traceback names its own error: that error is the root, not the print
    log = (
        "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 9, in <module>\n'
        "    dist.init_process_group('gloo', init_method='tcp://10.0.0.1:23456', rank=0, world_size=2)\n"
        "RuntimeError: Address already in use\n"
    )
    root = root_finding(log)
    assert root is not None and root.code != "RUN262", root


# -- a wrapper's logger that re-logs a child's lines: "[<stamp>] [INFO] " (normalize.py quietlevel) ---------

_FLUXGYM = (
    "[2024-09-09 19:22:14] [INFO] W0909 19:22:14.765000 96904 E:\\pinokio\\torch\\Lib\\site-packages\\torch\\"
    "distributed\\elastic\\multiprocessing\\redirects.py:29] NOTE: Redirects are currently not supported in "
    "Windows or MacOs.\n"
    "[2024-09-09 19:22:16] [INFO] Traceback (most recent call last):\n"
    '[2024-09-09 19:22:16] [INFO] File "E:\\pinokio\\bin\\miniconda\\lib\\runpy.py", line 196, in '
    "_run_module_as_main\n"
    "[2024-09-09 19:22:16] [INFO] return _run_code(code, main_globals, None,\n"
    '[2024-09-09 19:22:16] [INFO] File "E:\\env\\lib\\site-packages\\accelerate\\commands\\launch.py", '
    "line 1097, in launch_command\n"
    "[2024-09-09 19:22:16] [INFO] multi_gpu_launcher(args)\n"
    '[2024-09-09 19:22:16] [INFO] File "E:\\env\\lib\\site-packages\\accelerate\\commands\\launch.py", '
    "line 734, in multi_gpu_launcher\n"
)


@pytest.mark.parametrize(
    "log",
    [
        _FLUXGYM,
        # the paste cut inside the next record's stamp
        _FLUXGYM + "[2024-09-09 19:22:1\n",
        # the wrapper kept the child's indentation
        _FLUXGYM.replace("[INFO] File", "[INFO]   File").replace("[INFO] return", "[INFO]     return"),
    ],
)
def test_wrapper_logger_prefix_cut_windows_launch(log: str) -> None:
    check_root(log, "RUN570", {"torchrun_note": True})


def test_wrapper_logger_prefix_keeps_the_error() -> None:
    log = (
        "[2024-09-09 19:22:16] [INFO] Traceback (most recent call last):\n"
        '[2024-09-09 19:22:16] [INFO] File "/app/train.py", line 12, in <module>\n'
        "[2024-09-09 19:22:16] [INFO] dist.init_process_group('nccl')\n"
        "[2024-09-09 19:22:16] [INFO] RuntimeError: use_libuv was requested but PyTorch was build without "
        "libuv support\n"
    )
    check_root(log, "RUN551")


@pytest.mark.parametrize(
    "log",
    [
        # a healthy run through the same wrapper
        "[2024-09-09 19:22:16] [INFO] steps:  10%|#    | 160/1600 [04:11<37:41,  1.57s/it, avr_loss=0.41]\n"
        "[2024-09-09 19:22:17] [INFO] steps:  10%|#    | 161/1600 [04:12<37:40,  1.57s/it, avr_loss=0.40]\n"
        "[2024-09-09 19:22:18] [INFO] saving checkpoint: outputs/lora-000001.safetensors\n",
        # one "[INFO]" line alone is the message's own text
        "[INFO] NCCL_DEBUG set to WARN\n",
    ],
)
def test_wrapper_logger_prefix_healthy_silent(log: str) -> None:
    assert root_finding(log) is None


# -- UCX's backtrace in NCCL's segment open, its signal line cut ------------------------------------------

_UCX_BLOCK = (
    "==== backtrace (tid:   3357) ====\n"
    " 0 0x0000000000043090 killpg()  ???:0\n"
    " 1 0x000000000018bb41 __nss_database_lookup()  ???:0\n"
    " 2 0x000000000006f425 {fn}()  /dvs/p4/build/sw/gpgpu/nccl/gitfusion/stable/src/misc/shmutils.cc:52\n"
    " 3 0x0000000000074322 shmRecvSetup()  /dvs/p4/build/sw/gpgpu/nccl/src/transport/shm.cc:110\n"
    " 4 0x00000000000556a4 ncclTransportP2pSetup()  /dvs/p4/build/sw/gpgpu/nccl/src/transport.cc:33\n"
)


@pytest.mark.parametrize("fn", ["ncclShmOpen", "shmOpen", "shmSetup"])
def test_ucx_backtrace_in_nccl_shm_open_signal_cut(fn: str) -> None:
    check_root("=================================\n" + _UCX_BLOCK.format(fn=fn), "RUN360", {"frame": fn})


def test_ucx_backtrace_with_its_signal_line_is_process_crash_reading() -> None:
    # the signal line shown: process_crash's own row reads it (same code, its facts)
    log = (
        "[node1:3357 :0:3357] Caught signal 7 (Bus error: nonexistent physical address)\n"
        + _UCX_BLOCK.format(fn="ncclShmOpen")
    )
    root = root_finding(log)
    assert root is not None and root.code == "RUN360" and root.facts.get("signal_line") != "cut", root


def test_ucx_backtrace_shm_frame_below_other_code_silent() -> None:
    # the segment open is not the faulting frame: user code below the handler faulted first
    log = (
        "==== backtrace (tid:   3357) ====\n"
        " 0 0x0000000000043090 killpg()  ???:0\n"
        " 1 0x0000000000012345 my_kernel_launch()  /src/app.cc:10\n"
        " 2 0x000000000006f425 ncclShmOpen()  /nccl/src/misc/shmutils.cc:52\n"
    )
    root = root_finding(log)
    assert root is None or root.code != "RUN360", root


# -- torch._C._distributed_c10d at import: a name missing (skew), the module missing (no torch.distributed) --


@pytest.mark.parametrize(
    ("log", "name"),
    [
        (
            "ImportError: cannot import name '_DistributedBackendOptions' from 'torch._C._distributed_c10d' "
            "(/usr/local/lib/python3.10/dist-packages/torch/_C/_distributed_c10d.cpython-310-x86_64-linux-gnu.so)",
            "_DistributedBackendOptions",
        ),
        (
            "AttributeError: module 'torch._C._distributed_c10d' has no attribute '_register_process_group'",
            "_register_process_group",
        ),
        (
            "[rank0]: ImportError: cannot import name 'FakeProcessGroup' from 'torch._C._distributed_c10d' "
            "(C:\\Python311\\Lib\\site-packages\\torch\\_C\\_distributed_c10d.pyd)",
            "FakeProcessGroup",
        ),
    ],
)
def test_c10d_name_missing_is_skew(log: str, name: str) -> None:
    check_root(log + "\n", "RUN621", {"missing_name": name})


@pytest.mark.parametrize(
    "log",
    [
        "AttributeError: module 'torch._C' has no attribute '_distributed_c10d'",
        "ModuleNotFoundError: No module named 'torch._C._distributed_c10d'; 'torch._C' is not a package",
        "ImportError: cannot import name 'ReduceOp' from 'torch._C._distributed_c10d' (unknown location)",
    ],
)
def test_build_without_torch_distributed(log: str) -> None:
    check_root(log + "\n", "RUN263", {"problem": "torch built without torch.distributed"})


@pytest.mark.parametrize(
    "log",
    [
        # the module named in healthy lines: a repr, an import in a paste of code
        "<torch._C._distributed_c10d.ProcessGroup object at 0x7f3a2c1d9e70>",
        "from torch._C._distributed_c10d import ReduceOp, _DistributedBackendOptions",
    ],
)
def test_c10d_module_named_healthy_silent(log: str) -> None:
    assert root_finding(log + "\n") is None
