"""w6: driver_env of v21's dev half, each miss read as its family (the program that prints it, across
versions).

- Caffe built without NCCL, in every wording of the check (BVLC caffe.cpp "Multi-GPU execution not available
  - rebuild with USE_NCCL" and its retyped "is not available"; NVCaffe parallel.cpp 0.15-0.16 "USE_NCCL := 1
  must be specified for multi-GPU", 0.17 "USE_NCCL must be specified for multi-GPU mode"): RUN334;
- torch's "device >= 0 && device < num_gpus INTERNAL ASSERT FAILED" quoted in a title without its exception
  type (the MIG case): RUN264;
- SageMaker model parallel's WorkerSizeError "The number of node-local MPI processes N cannot be larger than
  the device count M": RUN264 (rules/node_devices.py);
- a framework's own RDMA transport without a device (OneFlow's "Check failed: num_device > 0 (0 vs. 0) No IB
  device found", TensorFlow verbs' "Check failed: dev_list No InfiniBand device found", Gloo's "No ibverbs
  devices present"): RUN645 (new, rules/node_devices.py); NCCL's INFO "NET/IB : No device found." and the
  warnings that fall back to Ethernet stay silent;
- Open MPI's own crash handler whose first frame below the trampoline and glibc is Open MPI's library
  (rules/mpi_signal_frames.py): RUN336, "device_buffer_to_mpi" when the signal code is "Invalid permissions"
  inside an MPI call (a GPU buffer handed to an MPI without CUDA support); a first frame elsewhere (libtorch,
  python) is not read there;
- torch 0.1-0.4's TH shared-memory allocator ("unable to write to file </torch_...> at
  .../THAllocator.c:271"): RUN388 like its 1.x-2.x wordings.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, check_root, prefixed, root_finding

# (line, code, category)
FAILURES = [
    # Caffe without NCCL
    (
        "F0101 22:55:26.495918  8615 caffe.cpp:254] Multi-GPU execution not available - rebuild with "
        "USE_NCCL",
        "RUN334",
        "driver_env",
    ),
    (
        "F1124  ****** 2876 caffe.cpp: 254 Multi-GPU execution is not available - rebuild with USE_NCCL",
        "RUN334",
        "driver_env",
    ),
    (
        "F0428 11:32:07.443701  8682 parallel.cpp:155] USE_NCCL := 1 must be specified for multi-GPU",
        "RUN334",
        "driver_env",
    ),
    (
        "F0301 10:02:11.120034  4410 parallel.cpp:391] USE_NCCL must be specified for multi-GPU mode",
        "RUN334",
        "driver_env",
    ),
    # torch's device index assert, with and without its type
    (
        '"device >= 0 && device < num_gpus INTERNAL ASSERT FAILED" with torch 2.5.0.dev20240705+cu121 on '
        "2 GPU NVIDIA-A100-SXM4-80GB-MIG-3g.40gb",
        "RUN264",
        "driver_env",
    ),
    (
        'RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at "../c10/cuda/'
        'CUDACachingAllocator.cpp":1123, please report a bug to PyTorch.',
        "RUN264",
        "driver_env",
    ),
    (
        'RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at "../aten/src/ATen/cuda/'
        'CUDAContext.cpp":50, please report a bug to PyTorch. device=1, num_gpus=',
        "RUN264",
        "driver_env",
    ),
    # SageMaker model parallel: more processes per node than GPUs
    (
        "[1,2]<stderr>:RuntimeError: The number of node-local MPI processes 8cannot be larger than the "
        "device count 4",
        "RUN264",
        "driver_env",
    ),
    (
        "smdistributed.modelparallel.backend.exceptions.WorkerSizeError: The number of node-local MPI "
        "processes 8 cannot be larger than the device count 4",
        "RUN264",
        "driver_env",
    ),
    # a framework's own RDMA transport without a device
    (
        "F0706 10:11:12.131415  2871 ibverbs_comm_network.cpp:125] Check failed: num_device > 0 (0 vs. 0) "
        "No IB device found",
        "RUN645",
        "driver_env",
    ),
    (
        "运行tools/train.sh脚本报错：Check failed: num_device > 0 (0 vs. 0) No IB device found",
        "RUN645",
        "driver_env",
    ),
    (
        "F1012 08:40:03.512000 11721 rdma.cc:251] Check failed: dev_list No InfiniBand device found",
        "RUN645",
        "driver_env",
    ),
    (
        "RuntimeError: [/pytorch/third_party/gloo/gloo/transport/ibverbs/device.cc:55] No ibverbs devices "
        "present",
        "RUN645",
        "driver_env",
    ),
    # torch 0.x's TH shared-memory allocator
    (
        "Error : RuntimeError: unable to write to file </torch_18693_1954506624> at "
        "/pytorch/torch/lib/TH/THAllocator.c:271",
        "RUN388",
        "process_crash",
    ),
]

# Lines that share the words and are no failure of these families.
SILENT = [
    'LOG(FATAL) << "USE_NCCL must be specified for multi-GPU mode";',
    "#ifndef USE_NCCL",
    'f"The number of node-local MPI processes {self.lib.smp_local_size()}"',
    "node1:123:456 [0] NCCL INFO NET/IB : No device found.",
    "Warning: No infiniband device found!  Falling back to ethernet.",
    "2024-01-01 10:00:00 WARNING No IB device found for GPU 0",
    "logging.warning(f'No IB device found for GPU {gpu_id}')",
    "num_device > 0",
]


@pytest.mark.parametrize(("line", "code", "category"), FAILURES)
def test_each_variant_names_its_cause(line: str, code: str, category: str) -> None:
    root = root_finding(line + "\n")
    assert root is not None and root.code == code and root.category == category, (line, root)


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
def test_rdma_check_behind_every_prefix(prefix: str) -> None:
    line = (
        "F0706 10:11:12.131415  2871 ibverbs_comm_network.cpp:125] Check failed: num_device > 0 (0 vs. 0) "
        "No IB device found\n"
    )
    check_root(prefixed(prefix, line), "RUN645", {"framework": "oneflow", "device_count": 0})


@pytest.mark.parametrize("line", SILENT)
def test_near_misses_stay_silent(line: str) -> None:
    assert root_finding(line + "\n") is None, line


def test_smdistributed_numbers_are_facts() -> None:
    check_root(
        "WorkerSizeError: The number of node-local MPI processes 8 cannot be larger than the device "
        "count 4\n",
        "RUN264",
        {"framework": "smdistributed", "local_processes": 8, "device_count": 4},
    )


_OMPI_HEAD = (
    "[nelson-lab0:04968] *** Process received signal ***\n"
    "[nelson-lab0:04968] Signal: Segmentation fault (11)\n"
    "[nelson-lab0:04968] Signal code: {code}\n"
    "[nelson-lab0:04968] Failing at address: 0x2c0d820000\n"
    "[nelson-lab0:04968] [ 0] /lib/x86_64-linux-gnu/libpthread.so.0(+0x11390)[0x7f60496ad390]\n"
)
_OMPI_IN_MPI = (
    "[nelson-lab0:04968] [ 1] /lib/x86_64-linux-gnu/libc.so.6(+0x14d566)[0x7f6049420566]\n"
    "[nelson-lab0:04968] [ 2] /usr/lib/libopen-pal.so.13(+0x2fcb7)[0x7f600f328cb7]\n"
    "[nelson-lab0:04968] [ 3] /usr/lib/libmpi.so.12(ompi_datatype_sndrcv+0x54c)[0x7f600fa6d6bc]\n"
    "[nelson-lab0:04968] [ 4] /usr/lib/libmpi.so.12(MPI_Alltoall+0x16c)[0x7f600fa6f67c]\n"
    "[nelson-lab0:04968] [ 5] /usr/local/lib/python2.7/dist-packages/mpi4py/MPI.so(+0x8dd99)"
    "[0x7f600fd82d99]\n"
    "[nelson-lab0:04968] [ 6] python(PyEval_EvalFrameEx+0x68a)[0x4c468a]\n"
)
_OMPI_IN_TORCH = (
    "[nelson-lab0:04968] [ 1] /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_cpu.so(+0x1a2b3c)"
    "[0x7f6049420566]\n"
    "[nelson-lab0:04968] [ 2] /usr/lib/libmpi.so.40(MPI_Allreduce+0x16c)[0x7f600fa6f67c]\n"
    "[nelson-lab0:04968] [ 3] python(PyEval_EvalFrameEx+0x68a)[0x4c468a]\n"
)


def test_open_mpi_handler_gpu_buffer_in_an_mpi_call() -> None:
    log = _OMPI_HEAD.format(code="Invalid permissions (2)") + _OMPI_IN_MPI
    check_root(
        log,
        "RUN336",
        {"reason": "device_buffer_to_mpi", "mpi_call": "MPI_Alltoall", "frame": "ompi_datatype_sndrcv"},
    )


def test_open_mpi_handler_unmapped_address_in_mpi_is_the_installation() -> None:
    log = _OMPI_HEAD.format(code="Address not mapped (1)") + _OMPI_IN_MPI
    check_root(log, "RUN336", {"reason": "crash_in_mpi", "library": "mpi"})


def test_open_mpi_handler_first_frame_elsewhere_is_not_an_mpi_crash() -> None:
    root = root_finding(_OMPI_HEAD.format(code="Invalid permissions (2)") + _OMPI_IN_TORCH)
    assert root is None or root.facts.get("library") != "mpi", root


def test_open_mpi_handler_without_frames_is_not_read_as_mpi() -> None:
    root = root_finding(_OMPI_HEAD.format(code="Address not mapped (1)"))
    assert root is None or root.facts.get("library") != "mpi", root
