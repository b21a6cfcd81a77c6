"""s27 envfam: driver_env families among the released sets' misses, each read at its source across versions.
The variants below are not in the corpus unless marked (case id).

- torch's CUDA tensor sharing (torch/multiprocessing/reductions.py reduce_tensor -> storage._share_cuda_ ->
  cudaIpcGetMemHandle, torch/csrc/generic/StorageSharing.cpp): "cuda runtime error (801) : operation not
  supported at ..StorageSharing.cpp:258" (v22H-driver_env-006), THC's "THCudaCheck FAIL file=...
  StorageSharing.cpp line=247 error=801", CUDA 9's (71), 63's "OS call failed or operation not supported on
  this OS", 1.8+'s "CUDA error: operation not supported" under the _share_cuda_ frame: RUN720 (new,
  rules/platform_env.py). The same CUDA error without the sharing frame is not RUN720.
- DeepEP's host wait for the notify kernel's counts (csrc/deep_ep.cpp, csrc/legacy/buffer.hpp): "DeepEP error:
  timeout (dispatch CPU)" (v13z-driver_env-001, the title v14e-driver_env-002, the cut "timeout (di"
  v18F-driver_env-001) and "DeepEP error: CPU recv timeout": RUN721 (new, rules/nvshmem_transport.py, tier 1
  behind a kernel's own timeout, RUN560).
- A Paddle build without the collective ops: Fluid's "ValueError: Operator \"gen_nccl_id\" has not been
  registered." (v22B-driver_env-005), C++ 1.x "Operator c_allreduce_sum has not been registered", 2.x
  "NotFoundError: Operator (c_gen_nccl_id) is not registered.": RUN263 (rules/paddle_comm.py); another op
  not registered stays silent.
- torch's dispatcher without an extension's CUDA kernel: "Could not run 'fbgemm::block_bucketize_sparse_
  features' with arguments from the 'CUDA' backend" (v22H-driver_env-005), torchvision::nms under 1.4's
  'CUDATensorId' and 1.8+'s wording: RUN265 (rules/env_versions.py); aten:: ops and other keys stay silent.
- NCCL's kernels' shared memory over the device's (src/enqueue.cc ncclInitKernelsForDevice): 2.25's INFO
  "ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856" (v19A-driver_env-004; only where no
  communicator came up), 2.26-2.28's WARN "cudaArch 1200 ncclMaxSharedMem ..." and 2.29+'s "cudaArch 1200
  dynamic smem ..." (ncclSystemError): RUN265 (rules/nccl_build.py).
- Torch7's (and PyTorch 0.x's) THC check of one op's tensors: "Assertion `THCudaTensor_checkGPU(state, 4, r_,
  t, m1, m2)' failed." (v21G-nccl_internal_or_invalid_usage-001, v22A-004, v22A-005), THCAssertSameGPU's
  "Some of weight/gradient/input tensors are located on different GPUs" (v22A-003): RUN722 (new, nccl_usage,
  rules/caffe_multigpu.py); THC's "arguments are located on different GPUs" (labelled ambiguous as often as
  not) stays unread.
- pip's console-script launcher on Windows (distlib launcher.c): "Fatal error in launcher: Unable to create
  process using '<python.exe>  <Scripts\\torchrun.exe> ...'" (the environment's Python moved or reinstalled),
  "Unable to find an appended archive." (a damaged .exe): RUN389 (rules/launch_env.py); not in the released
  sets.
- A program's own refusal of the platform's P2P (DistServe's "Error: Peer-to-peer access is unsupported on
  this platform." v22G-driver_env-004): RUN590 (rules/p2p_probes.py); vLLM's custom all-reduce note stays
  silent.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, check_root, prefixed, root_finding

SHARE_FRAMES = (
    '  File "C:\\Users\\u\\anaconda3\\lib\\site-packages\\torch\\multiprocessing\\reductions.py", line 240, '
    "in reduce_tensor\n"
    "    event_sync_required) = storage._share_cuda_()\n"
)

# (log, code, category)
FAILURES = [
    # CUDA IPC (tensor sharing) on a platform without it
    # https://github.com/AI4Finance-Foundation/ElegantRL/issues/39 (v22H-driver_env-006)
    (
        "RuntimeError: cuda runtime error (801) : operation not supported at "
        "..\\torch/csrc/generic/StorageSharing.cpp:258",
        "RUN720",
        "driver_env",
    ),
    (
        "THCudaCheck FAIL file=..\\torch/csrc/generic/StorageSharing.cpp line=253 error=801 : operation not "
        "supported",
        "RUN720",
        "driver_env",
    ),
    (
        "RuntimeError: cuda runtime error (71) : operation not supported at "
        "C:\\w\\1\\s\\windows\\pytorch\\torch/csrc/generic/StorageSharing.cpp:245",
        "RUN720",
        "driver_env",
    ),
    (
        "THCudaCheck FAIL file=c:\\anaconda2\\conda-bld\\pytorch_1502680315075\\work\\torch\\csrc\\generic\\"
        "StorageSharing.cpp line=253 error=63 : OS call failed or operation not supported on this OS",
        "RUN720",
        "driver_env",
    ),
    (
        "OS call failed or operation not supported on this OS at c:\\programdata\\miniconda3\\conda-bld\\"
        "pytorch_1524549877902\\work\\torch\\csrc\\generic\\StorageSharing.cpp:253",
        "RUN720",
        "driver_env",
    ),
    (SHARE_FRAMES + "RuntimeError: CUDA error: operation not supported", "RUN720", "driver_env"),
    # DeepEP's host wait
    # https://github.com/deepseek-ai/DeepEP/issues/553 (v13z-driver_env-001)
    ("RuntimeError: DeepEP error: timeout (dispatch CPU)", "RUN721", "driver_env"),
    # https://github.com/deepseek-ai/DeepEP/issues/707 (v14e-driver_env-002, a title)
    (
        "DeepEP v1 Normal mode, run test_internode RuntimeError: DeepEP error: timeout (dispatch CPU) when "
        "use NVSHMEM version >= 3.5.19",
        "RUN721",
        "driver_env",
    ),
    # https://github.com/NVIDIA-NeMo/Automodel/issues/3967 (v18F-driver_env-001, cut)
    (
        "  -> deep_ep/buffer.py:584: internode_dispatch\nRuntimeError: DeepEP error: timeout (di",
        "RUN721",
        "driver_env",
    ),
    ("RuntimeError: DeepEP error: CPU recv timeout", "RUN721", "driver_env"),
    (
        "Global rank: 3, num_recv_tokens: -1, num_rdma_recv_tokens: -1\n"
        "moe_recv_expert_counter[0]: -1\n"
        "RuntimeError: DeepEP error: timeout (dispatch CPU)",
        "RUN721",
        "driver_env",
    ),
    # a Paddle build without the collective ops
    # https://github.com/PaddlePaddle/PaddleClas/issues/116 (v22B-driver_env-005)
    ('ValueError: Operator "gen_nccl_id" has not been registered.', "RUN263", "driver_env"),
    (
        "NotFoundError: Operator (c_gen_nccl_id) is not registered.\n"
        "  [Hint: op_info_ptr should not be null.] (at /paddle/paddle/fluid/framework/op_info.h:140)",
        "RUN263",
        "driver_env",
    ),
    (
        "paddle.fluid.core_noavx.EnforceNotMet: Operator c_allreduce_sum has not been registered at "
        "[/paddle/paddle/fluid/framework/op_info.h:86]",
        "RUN263",
        "driver_env",
    ),
    ('ValueError: Operator "c_comm_init_all" has not been registered.', "RUN263", "driver_env"),
    # an extension without CUDA kernels for the loaded torch
    # https://github.com/pytorch/FBGEMM/issues/1847 (v22H-driver_env-005)
    (
        "NotImplementedError: Could not run 'fbgemm::block_bucketize_sparse_features' with arguments from "
        "the 'CUDA' backend",
        "RUN265",
        "driver_env",
    ),
    (
        "NotImplementedError: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend. This "
        "could be because the operator doesn't exist for this backend, or was omitted during the "
        "selective/custom build process (if using custom build).",
        "RUN265",
        "driver_env",
    ),
    (
        "RuntimeError: Could not run 'torchvision::nms' with arguments from the 'CUDATensorId' backend. "
        "'torchvision::nms' is only available for these backends: [CPUTensorId, VariableTensorId].",
        "RUN265",
        "driver_env",
    ),
    # NCCL's kernels' shared memory over the device's
    # https://github.com/NVIDIA/nccl/issues/1637 (v19A-driver_env-004)
    (
        "localhost:11344:11344 [1] NCCL INFO NCCL version 2.25.1+cuda12.2\n"
        "localhost:11344:11344 [1] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856\n"
        "localhost:11344:11344 [1] NCCL INFO NET/IB : No device found.",
        "RUN265",
        "driver_env",
    ),
    (
        "gpu01:3121:3121 [0] enqueue.cc:50 NCCL WARN cudaArch 1200 ncclMaxSharedMem 82240 exceeds device/fn "
        "maxSharedMem 79856",
        "RUN265",
        "driver_env",
    ),
    (
        "gpu01:3121:3121 [0] enqueue.cc:81 NCCL WARN cudaArch 1200 dynamic smem 82240 exceeds device/fn "
        "maxSharedMem 79856",
        "RUN265",
        "driver_env",
    ),
    # Torch7 / THC: one op's tensors on different GPUs
    # https://github.com/torch/cutorch/issues/260 (v21G-nccl_internal_or_invalid_usage-001)
    (
        "[thread 1 callback] /usr/local/share/lua/5.1/nn/Linear.lua:51: Assertion "
        "`THCudaTensor_checkGPU(state, 4, r_, t, m1, m2)' failed.  at "
        "/tmp/luarocks_cutorch-scm-1-8349/cutorch/lib/THC/THCTensorMathBlas.cu:79",
        "RUN722",
        "nccl_usage",
    ),
    # https://github.com/cmusatyalab/openface/issues/298 (v22A-nccl_internal_or_invalid_usage-003)
    (
        "/home/ubuntu/torch/install/share/lua/5.1/nn/THNN.lua:110: Assertion `THCTensor_(checkGPU)(state, 5, "
        "input, output, weight, columns, ones)' failed. Some of weight/gradient/input tensors are located on "
        "different GPUs. Please move them to a single one. at /tmp/luarocks_cunn/lib/THCUNN/generic/"
        "SpatialConvolutionMM.cu:17",
        "RUN722",
        "nccl_usage",
    ),
    (
        "RuntimeError: Assertion `THCTensor_(checkGPU)(state, 4, r_, t, m1, m2)' failed. at "
        "/pytorch/torch/lib/THC/generic/THCTensorMathBlas.cu:79",
        "RUN722",
        "nccl_usage",
    ),
    (
        "RuntimeError: Some of weight/gradient/input tensors are located on different GPUs. Please move them "
        "to a single one. at /pytorch/torch/lib/THCUNN/generic/BatchNormalization.cu:28",
        "RUN722",
        "nccl_usage",
    ),
    # pip's console-script launcher on Windows
    (
        "Fatal error in launcher: Unable to create process using '\"C:\\Users\\me\\miniconda3\\envs\\old\\"
        'python.exe"  "C:\\Users\\me\\miniconda3\\envs\\new\\Scripts\\torchrun.exe" --nproc_per_node 2 '
        "train.py': The system cannot find the file specified.",
        "RUN389",
        "driver_env",
    ),
    ("Fatal error in launcher: Unable to find an appended archive.", "RUN389", "driver_env"),
    # a program's own refusal of P2P
    # https://github.com/LLMServe/DistServe/issues/39 (v22G-driver_env-004)
    (
        "(ParaWorker pid=1955026) Error: Peer-to-peer access is unsupported on this platform.\n"
        "(ParaWorker pid=1955026) In the current version of distserve, it is necessary to use a platform "
        "that supports GPU P2P access.\n"
        "(ParaWorker pid=1955026) Exiting... ",
        "RUN590",
        "driver_env",
    ),
    ("Error: P2P access is not supported on this system", "RUN590", "driver_env"),
]

SILENT = [
    # another op not registered: a model's or a plug-in's
    'ValueError: Operator "my_custom_op" has not been registered.',
    "The c_allreduce_sum operator is not registered for CPU places in this example, see the docs.",
    # torch's own ops and other dispatch keys
    "NotImplementedError: Could not run 'aten::_foo' with arguments from the 'CUDA' backend.",
    "NotImplementedError: Could not run 'torchvision::nms' with arguments from the 'Meta' backend.",
    "NotImplementedError: Could not run 'quantized::linear_prepack' with arguments from the 'CUDA' backend.",
    "NotImplementedError: Could not run 'aten::empty.memory_format' with arguments from the 'SparseCUDA' "
    "backend.",
    # NCCL 2.25 lowered the limit and the communicator came up
    "localhost:11344:11344 [1] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856\n"
    "localhost:11344:11344 [1] NCCL INFO ncclCommInitRank comm 0xf07d5f0 rank 1 nranks 2 cudaDev 1 nvmlDev 1 "
    "busId 2000 commId 0x1 - Init COMPLETE",
    # vLLM's note that its custom all-reduce is off
    "WARNING 06-10 03:35:44 [custom_all_reduce.py:135] Custom allreduce is disabled because your platform "
    "lacks GPU P2P capability or P2P test failed. To silence this warning, specify "
    "disable_custom_all_reduce=True explicitly.",
    # a setting that names the words
    "NUM_CPU_TIMEOUT_SECS = 100  # DeepEP host wait",
    "export DEEPEP_CPU_TIMEOUT=300",
    # THC's argument check of PyTorch 0.x (released threads label it ambiguous as often as not)
    "RuntimeError: arguments are located on different GPUs at "
    "/pytorch/aten/src/THC/generic/THCTensorMathBlas.cu:253",
    # a healthy DeepEP tuning run
    "[tuning] Best dispatch (FP8): SMs 24, NVL chunk 16, RDMA chunk 8: 45.12 GB/s (RDMA), 147.36 GB/s (NVL)",
]

# Lines whose cause is another family's and must keep it with the rows above in place.
OTHERS = [
    # a DeepEP kernel's own timeout comes before the host's
    (
        "DeepEP dispatch NVL receiver timeout, channel: 6, RDMA: 0, nvl: 0, src NVL: 5, head: 315, "
        "tail: 315\n"
        "RuntimeError: DeepEP error: timeout (dispatch CPU)",
        "RUN560",
    ),
]


@pytest.mark.parametrize(("log", "code", "category"), FAILURES)
def test_each_variant_names_its_cause(log: str, code: str, category: str) -> None:
    root = root_finding(log + "\n")
    assert root is not None and root.code == code and root.category == category, (log, root)


@pytest.mark.parametrize("line", SILENT)
def test_near_misses_stay_silent(line: str) -> None:
    assert root_finding(line + "\n") is None, line


@pytest.mark.parametrize(("log", "code"), OTHERS)
def test_other_rows_keep_their_lines(log: str, code: str) -> None:
    root = root_finding(log + "\n")
    assert root is not None and root.code == code, (log, root)


def test_operation_not_supported_elsewhere_is_not_cuda_ipc() -> None:
    root = root_finding("RuntimeError: CUDA error: operation not supported\n")
    assert root is None or root.code != "RUN720", root


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
def test_cuda_ipc_behind_every_prefix(prefix: str) -> None:
    log = (
        "Traceback (most recent call last):\n"
        + SHARE_FRAMES
        + "RuntimeError: cuda runtime error (801) : operation not supported at "
        "..\\torch/csrc/generic/StorageSharing.cpp:247"
    )
    check_root(prefixed(prefix, log), "RUN720", {"reason": "cuda_ipc_unsupported", "cuda_error": 801})


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
def test_deepep_host_wait_behind_every_prefix(prefix: str) -> None:
    log = "RuntimeError: DeepEP error: timeout (dispatch CPU)"
    check_root(prefixed(prefix, log), "RUN721", {"kernel": "internode dispatch", "framework": "deepep"})


def test_nccl_smem_facts() -> None:
    log = (
        "gpu01:3121:3121 [0] enqueue.cc:50 NCCL WARN cudaArch 1200 ncclMaxSharedMem 82240 exceeds device/fn "
        "maxSharedMem 79856\n"
    )
    check_root(log, "RUN265", {"cuda_arch": 1200, "shared_mem_needed": 82240, "shared_mem_device": 79856})


def test_extension_facts() -> None:
    log = "RuntimeError: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend.\n"
    check_root(log, "RUN265", {"op": "torchvision::nms", "library": "torchvision", "dispatch_key": "CUDA"})


def test_paddle_op_facts() -> None:
    log = 'ValueError: Operator "gen_nccl_id" has not been registered.\n'
    check_root(log, "RUN263", {"op": "gen_nccl_id", "framework": "paddle"})


def test_torch7_check_facts() -> None:
    log = (
        "/home/mf/torch/install/bin/luajit: /home/mf/torch/install/share/lua/5.1/nn/Module.lua:70: Assertion "
        "`THCudaTensor_checkGPU(state, 1, self_)' failed.  at /home/mf/torch/extra/cutorch/lib/THC/"
        "THCTensorMath.cu:30\n"
    )
    check_root(
        log, "RUN722", {"check": "THCudaTensor_checkGPU(state, 1, self_)", "source": "THCTensorMath.cu:30"}
    )


def test_windows_launcher_facts() -> None:
    log = (
        'Fatal error in launcher: Unable to create process using \'"d:\\anaconda3\\envs\\llm\\python.exe"  '
        '"D:\\anaconda3\\envs\\llm\\Scripts\\accelerate.exe" launch train.py\'\n'
    )
    check_root(log, "RUN389", {"tool": "accelerate", "platform": "windows"})
