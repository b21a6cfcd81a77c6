"""GPU failures worded by the libraries around PyTorch, read at their sources.

- TransformerEngine userbuffers (common/comm_gemm_overlap/userbuffers/userbuffers-host.cpp, TE 1.x-2.x): no
  CUDA Multicast for TP comm+GEMM overlap (RUN292).
- accelerate/state.py (0.2x-1.x): RTX 4000 series without P2P/IB (RUN291).
- C-extension CUDA_CHECK printers: bitsandbytes csrc/ops.cuh "Error %s at line %d in file %s" with
  cudaGetErrorString's "out of memory"; spconv 1.x (and mmdet3d's vendored copy) "cuda execution failed with
  error 2" (cudaErrorMemoryAllocation) (RUN101 cuda_oom).
Decoys with neighbouring words stay silent.
"""

from __future__ import annotations

import pytest

from pgdoctor.checks.codes import run as C
from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = ["", "[rank0]: ", "node7: ", "2025-01-02 03:04:05,678 - ERROR - "]

CASES = [
    (
        "AssertionError: CUDA device, driver and/or toolkit version does not support comm+GEMM overlap with "
        "CUDA Multicast. Launch app with UB_SKIPMC=1 to try CUDA IPC instead.",
        C.NCCL_PLATFORM_FEATURE.code,
    ),
    (
        "RuntimeError: CUDA device, driver and/or toolkit version does not support comm+GEMM overlap with "
        "CUDA Multicast. Launch app with UB_SKIPMC=1 to try CUDA IPC instead.",
        C.NCCL_PLATFORM_FEATURE.code,
    ),
    (
        "NotImplementedError: Using RTX 4000 series doesn't support faster communication broadband via "
        'P2P or IB. Please set `NCCL_P2P_DISABLE="1"` and `NCCL_IB_DISABLE="1" or use `accelerate launch` '
        "which will "
        "do this automatically.",
        C.PEER_ACCESS_UNSUPPORTED.code,
    ),
    (
        "Error out of memory at line 380 in file /mmfs1/gscratch/zlab/timdettmers/git/bitsandbytes/csrc/"
        "pythonInterface.c",
        C.CUDA_OOM.code,
    ),
    ("Error out of memory at line 124 in file /src/csrc/ops.cu", C.CUDA_OOM.code),
    ("`mmdet3d/ops/spconv/src/indice_cuda.cu 124`\n`cuda execution failed with error 2`", C.CUDA_OOM.code),
    ("spconv/src/indice_cuda.cu 124\ncuda execution failed with error 2", C.CUDA_OOM.code),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("log,code", CASES)
def test_family_root(prefix: str, log: str, code: str) -> None:
    f = _root("\n".join(prefix + ln for ln in log.split("\n")))
    assert f is not None and f.code == code, (log, f)


DECOYS = [
    "cuda execution failed with error 700",  # spconv with another CUDA error: not memory
    "INFO: tp_comm_overlap disabled; UB_SKIPMC not set",
    "Error rate at line 12 in file results.csv is 0.3",
]


@pytest.mark.parametrize("log", DECOYS)
def test_decoys_not_these_codes(log: str) -> None:
    f = _root(log)
    assert f is None or f.code not in (C.CUDA_OOM.code, C.NCCL_PLATFORM_FEATURE.code), (log, f)


# Open MPI's errors-are-fatal banner on a NULL communicator (ompi/errhandler/errhandler_predefined.c, 1.x-5.x)
# and nvidia-smi's "GPU is lost. Reboot the system to recover this GPU" quoted in prose.
MORE = [
    (
        "*** An error occurred in MPI_Init_thread\n*** on a NULL communicator\n*** MPI_ERRORS_ARE_FATAL "
        "(processes in this communicator will now abort,\n***    and potentially your MPI job)",
        C.LAUNCH_FAILED.code,
    ),
    (
        "*** An error occurred in MPI_Init\n*** on a NULL communicator\n*** Unknown error\n"
        "*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,",
        C.LAUNCH_FAILED.code,
    ),
    (
        "everytime the gpu crashes an show an error like `GPU is lost. Please reboot to recover the gpu`.",
        C.GPU_OFF_BUS.code,
    ),
]


@pytest.mark.parametrize("log,code", MORE)
def test_more_roots(log: str, code: str) -> None:
    f = _root(log)
    assert f is not None and f.code == code, (log, f)


def test_mpi_error_in_recv_is_not_init() -> None:
    f = _root(
        "*** An error occurred in MPI_Recv\n*** reported by process [1,0]\n*** on communicator MPI_COMM_WORLD"
    )
    assert f is None or f.code != C.LAUNCH_FAILED.code


# DCGM's dcgmi nvlink --link-status table (dcgmi/Nvlink.cpp, DCGM 2.x-4.x): D is a link down (RUN346);
# U, X (disabled) and _ (not supported) are not.
DCGMI = """dcgmi nvlink --link-status
+----------------------+
|  NvLink Link Status  |
+----------------------+
GPUs:
    gpuId 0:
        U U U U U U U U U U U U
    gpuId 1:
        U U D D U U U U U U U U
NvSwitches:
    No NvSwitches found.

Key: Up=U, Down=D, Disabled=X, Not Supported=_"""


def test_dcgmi_nvlink_down() -> None:
    f = _root(DCGMI)
    assert f is not None and f.code == C.GPU_NVLINK_DOWN.code, f
    assert f.facts["gpus_down"] == [1] and f.facts["links_down"] == 2


@pytest.mark.parametrize("row", ["U U U U U U U U U U U U", "X X X X _ _ _ _ _ _ _ _", "_ _ _ _"])
def test_dcgmi_nvlink_healthy_silent(row: str) -> None:
    log = DCGMI.replace("U U D D U U U U U U U U", row)
    f = _root(log)
    assert f is None or f.code != C.GPU_NVLINK_DOWN.code, f
