"""stack_setup families (rules/stack_setup.py) and ColossalAI's launcher (rules/remote_launch.py), read at
their sources:

- THC's set-up checks (pytorch v0.4.1 / v1.0.1 aten/src/THC/THCGeneral.cpp THCudaInit and
  THCState_getPeerToPeerAccess, torch/csrc/cuda/Module.cpp THCPModule_setDevice_wrap; Lua cutorch's
  lib/THC/THCGeneral.c), "THCudaCheck FAIL file=... line=N error=N : <cudaGetErrorString>" and
  THError's "cuda runtime error (N) : <msg> at <file>:<line>", numbers of CUDA 8-10.0: RUN262;
- the NVML stub of the CUDA toolkit (cuda/lib64/stubs/libnvidia-ml.so, its banner): RUN500;
- DeepSpeed deepspeed/launcher/runner.py main() (0.5.10, 0.9.5: "Detected CUDA_VISIBLE_DEVICES=";
  0.16.4: "Detected VISIBLE_DEVICES="): RUN530 (rules/deepspeed_texts.py);
- Kaldi src/cudamatrix/cu-device.cc SelectGpuId (5.4): RUN262;
- ColossalAI 0.3.6 colossalai/cli/launcher/multinode_runner.py run_on_host's "Error: failed to run {cmds} on
  {hostname}, is localhost: {is_local_host}, exception: {e}" (paramiko's exceptions): RUN303.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = ["", "[rank3]: ", "node7: ", "[1,0]<stderr>:"]

THC = [
    (
        "THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch-nightly_1549065344879/work/aten/src/THC/"
        "THCGeneral.cpp line=383 error=11 : invalid argument",
        {"cuda_error_number": 11, "reason": "device_init_failed", "source_file": "THCGeneral.cpp"},
    ),
    (
        "RuntimeError: cuda runtime error (11) : invalid argument at "
        "/pytorch/aten/src/THC/THCGeneral.cpp:383",
        {"cuda_error_number": 11, "source_line": 383},
    ),
    (
        "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=50 error=3 : initialization error",
        {"reason": "device_init_failed"},
    ),
    (
        "THCudaCheck FAIL file=/root/torch/extra/cutorch/lib/THC/THCGeneral.c line=20 error=17 : "
        "invalid device pointer",
        {"cuda_error_number": 17, "source_file": "THCGeneral.c"},
    ),
    (
        "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCStream.cpp line=40 error=33 : "
        "invalid resource handle",
        {"cuda_error_number": 33},
    ),
    (
        r"THCudaCheck FAIL file=..\torch\csrc\cuda\Module.cpp line=33 error=1 : invalid argument",
        {"cuda_error_number": 1, "source_file": "Module.cpp"},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line,facts", THC)
def test_thc_setup_check(prefix: str, line: str, facts: dict[str, object]) -> None:
    _check(prefix + line + "\n", "RUN262", facts)


def test_thc_setup_keeps_the_finer_readings() -> None:
    # an environment message keeps driver_env's finding; OOM and a GPU fault are not the set-up's
    _check(
        "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=74 error=35 : CUDA driver "
        "version is insufficient for CUDA runtime version\n",
        "RUN261",
    )
    root = _root(
        "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=50 error=2 : out of memory\n"
    )
    assert root is not None and root.category == "cuda_oom"
    root = _root(
        "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=50 error=77 : an illegal memory "
        "access was encountered\n"
    )
    assert root is None or root.category != "driver_env"


STUB = """!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!
WARNING:

You should always run with libnvidia-ml.so that is installed with your
NVIDIA Display Driver. By default it's installed in /usr/lib and /usr/lib64.
libnvidia-ml.so in {pkg} package is a stub library that is attached only for
build purposes (e.g. machine that you build your application doesn't have
to have Display Driver installed).
!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!
Traceback (most recent call last):
  File "train.py", line 259, in <module>
    out = model(inputs)
"""


@pytest.mark.parametrize("pkg", ["GDK", "TDK"])
def test_nvml_stub_banner(pkg: str) -> None:
    _check(STUB.format(pkg=pkg), "RUN500", {"library": "libnvidia-ml.so"})


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("var", ["CUDA_VISIBLE_DEVICES", "VISIBLE_DEVICES"])
def test_deepspeed_ignored_visible_devices(prefix: str, var: str) -> None:
    line = (
        f"Detected {var}=2,4,5,7 but ignoring it because one or several of --include/--exclude/--num_gpus/"
        "--num_nodes cl args were used. If you want to use CUDA_VISIBLE_DEVICES don't pass any of these "
        "arguments to deepspeed."
    )
    _check(prefix + line + "\n", "RUN530", {"visible_devices": "2,4,5,7"})


def test_deepspeed_respected_visible_devices_is_quiet() -> None:
    assert _root("Detected CUDA_VISIBLE_DEVICES=0,1: setting --include=localhost:0,1\n") is None


def test_deepspeed_ignored_devices_below_a_failure() -> None:
    log = (
        "Detected CUDA_VISIBLE_DEVICES=2,3 but ignoring it because one or several of --include/--exclude/"
        "--num_gpus/--num_nodes cl args were used. If you want to use CUDA_VISIBLE_DEVICES don't pass any of "
        "these arguments to deepspeed.\n"
        "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity of 79.15 GiB of which 1.02 GiB is free.\n"
    )
    root = _root(log)
    assert root is not None and root.category == "cuda_oom"


KALDI = [
    "LOG (nnet3-chain-train[5.4]:SelectGpuId():cu-device.cc:159) num-gpus=2. Device 0: all CUDA-capable "
    "devices are busy or unavailable.  Device 1: all CUDA-capable devices are busy or unavailable.  \n"
    "ERROR (nnet3-chain-train[5.4]:SelectGpuId():cu-device.cc:160) Failed to create CUDA context, no more "
    "unused GPUs?\n",
    "ERROR (nnet3-train[5.5]:SelectGpuId():cu-device.cc:160) Failed to create CUDA context, no more unused "
    "GPUs?\n",
]


@pytest.mark.parametrize("log", KALDI)
def test_kaldi_no_free_gpu(log: str) -> None:
    _check(log, "RUN262")


COLOSSAL = (
    "Error: failed to run torchrun --nproc_per_node=2 --nnodes=2 --node_rank=1 --master_addr=192.168.1.11 "
)
COLOSSAL += "--master_port=29508 pretrain.py on 192.168.1.12, is localhost: False, exception: {exc}\n"


@pytest.mark.parametrize(
    "exc",
    [
        "not a valid RSA private key file",
        "Authentication failed.",
        "[Errno None] Unable to connect to port 22 on 192.168.1.12",
        "Error reading SSH protocol banner",
        "No authentication methods available",
    ],
)
def test_colossalai_remote_launch(exc: str) -> None:
    _check(COLOSSAL.format(exc=exc), "RUN303", {"host": "192.168.1.12", "node_rank": 1})


def test_colossalai_command_failure_is_not_the_launch() -> None:
    log = COLOSSAL.format(exc="Encountered a bad command exit code!")
    root = _root(log)
    assert root is None or root.code != "RUN303"
    local = COLOSSAL.replace("False", "True").format(exc="I/O operation on closed file")
    root = _root(local)
    assert root is None or root.code != "RUN303"


def test_colossalai_host_that_does_not_resolve_is_rendezvous() -> None:
    # socket's gaierror words are the store rows' too (RUN222, same class): either names the host
    root = _root(COLOSSAL.format(exc="[Errno -2] Name or service not known"))
    assert root is not None and root.category == "rendezvous"
