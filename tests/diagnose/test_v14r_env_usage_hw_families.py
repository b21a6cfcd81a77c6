"""Families of driver_env, NCCL usage and GPU hardware read at their sources, with look-alikes that stay
silent: ProcessGroupNCCL's no-GPU check with a retyped end (device_visibility), NCCL's numbered "Cuda
failure N" (knowledge/cuda_errors), cudawrap.cc's libcuda load (nccl_platform), oneCCL's ATL start-up
(oneccl), RDMA engines' memory registration (env_families, RUN385), habanalabs' device bring-up
(accel_hangs), NVIDIA's diagnostic table (accel_faults, RUN386), ncclGetErrorString in a title's capitals
and NCCL 1.x's WARN (nccl_errors), and collectives configured after the runtime started (tf_collectives,
RUN387). Every variant is written from the printing source, not copied from a thread."""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, check_root, prefixed, root_finding

# -- ProcessGroupNCCL's constructor check (torch 1.x-2.x), its end retyped or cut -------------------------
NO_GPU = [
    "RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!",
    "ValueError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!",
    "RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found?",
    "RuntimeError: ProcessGroupNCCL is only supported with GPU, no GPU found.",
    "RuntimeError: ProcessGroupNCCL is only supp",
]


@pytest.mark.parametrize("line", NO_GPU)
@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES[:4])
def test_no_gpu_for_nccl_with_its_end_retyped(line: str, prefix: str) -> None:
    check_root(prefixed(prefix, line), "RUN262", {"reason": "no_visible_device"})


def test_another_processgroupnccl_sentence_is_not_the_no_gpu_check() -> None:
    root = root_finding("RuntimeError: ProcessGroupNCCL is the default backend for GPUs")
    assert root is None or root.code != "RUN262"


# -- NCCL's CUDACHECK / CUCHECK with the number (2.19+): the number decides a retyped message --------------
NUMBERED = [
    ("Cuda failure 217 'peer access is not support between these two devices'", "RUN291"),
    ("Cuda failure 217 'peer access is not supported between these two devices'", "RUN291"),
    ("Cuda failure 46 'all CUDA-capable devices are busy or unavailble'", "RUN262"),
    ("Cuda failure 35 'CUDA driver version is insufficient for CUDA runtime versoin'", "RUN261"),
]


@pytest.mark.parametrize(("msg", "code"), NUMBERED)
def test_numbered_cuda_failure_is_known_by_its_number(msg: str, code: str) -> None:
    check_root(f"node1:1234:1250 [0] misc/strongstream.cc:53 NCCL WARN {msg}", code)
    wrapped = (
        "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:3699, unhandled cuda "
        "error, NCCL version 2.27.3\nncclUnhandledCudaError: Call to CUDA function failed.\n"
        f"Last error:\n{msg}"
    )
    check_root(wrapped, code)


@pytest.mark.parametrize(
    "msg",
    [
        "Cuda failure 217 'invalid argument'",  # the number of one error, the words of another
        "Cuda failure 999 'unknown error'",  # 999 says too little
        "Cuda failure 1 'invalid argument'",
    ],
)
def test_a_number_without_agreeing_words_is_not_an_environment_error(msg: str) -> None:
    root = root_finding(f"node1:1234:1250 [0] enqueue.cc:1600 NCCL WARN {msg}")
    assert root is not None and root.category != "driver_env"


# -- misc/cudawrap.cc: libcuda not loadable (2.12-2.18 without dlerror, 2.19+ with it) ---------------------
CUDAWRAP = [
    "node1:1234:1250 [0] misc/cudawrap.cc:90 NCCL WARN Failed to find CUDA library in /usr/local/cuda-12.0 "
    "(NCCL_CUDA_PATH=/usr/local/cuda-12.0)",
    "node1:1234:1250 [0] misc/cudawrap.cc:90 NCCL WARN Failed to find CUDA library in (null) "
    "(NCCL_CUDA_PATH=(null))",
    "> misc/cudawrap.cc:90 NCCL WARN Failed to find CUDA library in /opt/cuda (NCCL_CUDA_PATH=/opt/cuda)",
    "node1:1234:1250 [0] misc/cudawrap.cc:120 NCCL WARN Failed to find CUDA library libcuda.so "
    "(NCCL_CUDA_PATH='') : libcuda.so: cannot open shared object file: No such file or directory",
]


@pytest.mark.parametrize("line", CUDAWRAP)
def test_nccl_cannot_load_libcuda(line: str) -> None:
    check_root(line, "RUN263")


def test_an_info_line_about_the_cuda_library_is_silent() -> None:
    assert root_finding("node1:1234:1250 [0] NCCL INFO cudaDriverVersion 12040\nstep 10 loss 1.0\n") is None


# -- oneCCL's transport start-up (atl_ofi_helper.cpp / atl_ofi_comm.cpp, 2021.x) --------------------------
ONECCL = [
    "2024:08:21-10:41:21:( 8320) |CCL_ERROR| atl_ofi_helper.cpp:1118 atl_ofi_get_prov_list: fi_getinfo "
    "error: ret -61, providers 0",
    "  CCL_ERROR| atl_ofi_helper.cpp:1118 fi_getinfo error: ret -61, providers 0",
    "RuntimeError: oneCCL: atl_ofi_comm.cpp:232 init_transport: EXCEPTION: failed to initialize ATL",
    "oneCCL: atl_mpi_comm.cpp:120 init_transport: EXCEPTION: failed to initialize ATL",
]


@pytest.mark.parametrize("line", ONECCL)
def test_oneccl_transport_without_a_provider(line: str) -> None:
    check_root(line, "RUN294")


def test_oneccl_warnings_of_a_healthy_start_are_silent() -> None:
    log = (
        "2025:04:02-03:30:40:(4119977) |CCL_WARN| did not find MPI-launcher specific variables, switch to "
        "ATL/OFI, to force enable ATL/MPI set CCL_ATL_TRANSPORT=mpi\nstep 1 loss 2.3\n"
    )
    assert root_finding(log) is None


def test_a_provider_record_outranks_the_atl_exception() -> None:
    log = (
        "2024:08:21-10:41:21:( 8320) |CCL_ERROR| atl_ofi_helper.cpp:1118 atl_ofi_get_prov_list: fi_getinfo "
        "error: ret -61, providers 0\n"
        "RuntimeError: oneCCL: atl_ofi_comm.cpp:232 init_transport: EXCEPTION: failed to initialize ATL\n"
    )
    check_root(log, "RUN294", {"fi_errno": -61})


# -- RDMA engines outside NCCL refusing a memory registration (RUN385) ------------------------------------
RDMA = [
    (
        "[application][error] RegisterRdmaMemoryRegion failed! addr:0x7f2a40000000, size:943718400, "
        "accessFlag:15, errno:22 (Invalid argument)\nFatal Python error: Aborted\n",
        {"engine": "MoRI", "errno": 22},
    ),
    ("RegisterRdmaMemoryRegion failed! errno:14", {"engine": "MoRI", "errno": 14}),
    (
        "E0717 10:21:33.123456 4242 rdma_context.cpp:243] Failed to register memory 0x72439ffff010: "
        "Cannot allocate memory [12]",
        {"engine": "Mooncake", "errno": 12},
    ),
    (
        "[1700000000.123456] [node1:4242:0]          ib_md.c:293  UCX  ERROR "
        "ibv_reg_mr(address=0x7f0000000000, "
        "length=1048576, access=0xf) failed: Bad address",
        {"engine": "UCX"},
    ),
    (
        "[1700000000.123456] [node1:4242:0]         ucp_mm.c:70   UCX  ERROR failed to register address "
        "0x7f0000000000 (cuda) length 1048576 on md[4]=mlx5_0: Input/output error (md supports: host|cuda)",
        {"engine": "UCX", "memory_type": "cuda"},
    ),
]


@pytest.mark.parametrize(("log", "facts"), RDMA)
def test_rdma_engine_memory_registration_refused(log: str, facts: dict) -> None:
    check_root(log, "RUN385", facts)


def test_host_memory_registration_and_nccls_own_ibv_reg_mr_are_not_this_row() -> None:
    host = (
        "[1700000000.1] [node1:4242:0] ucp_mm.c:70 UCX DEBUG failed to register address 0x7f0000000000 "
        "(host) length 1048576 on md[4]=mlx5_0: Input/output error"
    )
    root = root_finding(host)
    assert root is None or root.code != "RUN385"
    nccl = (
        "node1:1:2 [0] misc/ibvwrap.cc:182 NCCL WARN Call to ibv_reg_mr_iova2 failed with error "
        "Invalid argument"
    )
    root = root_finding(nccl)
    assert root is not None and root.code != "RUN385"


# -- habanalabs (Gaudi) kernel driver: a device not usable at probe (RUN293) -------------------------------
HABANA = [
    "[   72.993087] habanalabs hl2: Failed to communicate with Device CPU (CPU-CP timeout)\n"
    "[   72.993088] habanalabs hl2: failed to initialize CPU H/W queues -5\n"
    "[   72.993204] habanalabs hl2: failed to initialize the H/W\n"
    "[   72.993269] habanalabs 0000:1a:00.0: Failed to initialize hl2. Device is NOT usable !\n",
    "[ 1203.5] habanalabs 0000:b3:00.0: Failed to initialize accel3. Device is NOT usable!",
    "kernel: habanalabs hl0: Failed to communicate with ARM CPU (ArmCP timeout)",
    "[ 9001.1] habanalabs hl5: Failed to reset! Device is NOT usable",
    "[  500.0] habanalabs hl1: Device heartbeat failed!",
]


@pytest.mark.parametrize("log", HABANA)
def test_gaudi_device_not_usable(log: str) -> None:
    check_root(log, "RUN293", {"accelerator": "gaudi"})


def test_gaudi_firmware_loaded_is_silent() -> None:
    log = (
        "[   43.051361] habanalabs hl1: Successfully loaded firmware to device\n"
        "[   44.196227] habanalabs hl3: Successfully added device to habanalabs driver\n"
    )
    assert root_finding(log) is None


# -- NVIDIA's diagnostic result table (nvvs, dcgmi diag): a hardware test failed (RUN386) ------------------
DIAG = [
    (
        "\t\tMemory GPU5 ....................................... PASS\n"
        "\t\tMemory GPU6 ....................................... FAIL\n"
        "\t\t   *** Unable to create CUDA context\n"
        "\t\t   *** Memory test initialization failed.\n",
        {"gpu": 6, "test": "Memory", "detail": "Unable to create CUDA context"},
    ),
    ("\t\tSM Stress GPU3 .................................... FAIL\n", {"gpu": 3, "test": "SM Stress"}),
    ("\t\tDiagnostic ........................................ FAIL\n", {"test": "Diagnostic"}),
    (
        "+---------------------------+------------------------------------------------+\n"
        "| Diagnostic                | Result                                         |\n"
        "+===========================+================================================+\n"
        "| GPU Memory                | Fail - GPU: 6                                  |\n"
        "| Warning                   | GPU 6 Error using CUDA API cuInit              |\n",
        {"gpu": 6, "test": "GPU Memory"},
    ),
    (
        "| Targeted Stress           | Fail - All                                     |\n",
        {"test": "Targeted Stress"},
    ),
]


@pytest.mark.parametrize(("log", "facts"), DIAG)
def test_gpu_failed_the_diagnostic(log: str, facts: dict) -> None:
    check_root(log, "RUN386", facts)


# DCGM 2.x-3.x: a second GPU's result on a row of its own; 4.x: lower-case test names, one row per GPU
CONTINUED = [
    "+-----  Hardware  ----------+------------------------------------------------+\n"
    "| GPU Memory                | Pass - GPU: 1                                  |\n"
    "|                           | Fail - GPU: 0                                  |\n"
    "| Warning                   | GPU 0 Error using CUDA API cuCtxCreate Check   |\n",
    "+-----  Hardware  ----------+------------------------------------------------+\n"
    "| memory                    | Fail                                           |\n"
    "|                           | GPU0: Pass                                     |\n"
    "|                           | GPU1: Fail                                     |\n",
    "| targeted_stress           | Fail                                           |\n",
]


@pytest.mark.parametrize("log", CONTINUED)
def test_gpu_failed_the_diagnostic_on_a_row_of_its_own(log: str) -> None:
    check_root(log, "RUN386")


def test_a_deployment_check_failed_on_its_own_row_is_not_hardware() -> None:
    log = (
        "|-----  Deployment  --------+------------------------------------------------|\n"
        "| software                  | Fail                                           |\n"
        "|                           | GPU0: Fail                                     |\n"
        "| Warning                   | GPU 0 Persistence mode is disabled             |\n"
    )
    root = root_finding(log)
    assert root is None or root.code != "RUN386"


@pytest.mark.parametrize(
    "log",
    [
        "\t\tMemory GPU0 ....................................... PASS\n"
        "\t\tMemory GPU1 ....................................... SKIP\n",
        "| GPU Memory                | Pass - All                                     |\n",
        # set-up, not hardware
        "| Persistence Mode          | Fail - GPU: 2                                  |\n",
        "Checking ........................................... FAIL\n",
    ],
)
def test_passing_or_deployment_rows_are_not_a_hardware_failure(log: str) -> None:
    root = root_finding(log)
    assert root is None or root.code != "RUN386"


# -- ncclGetErrorString in a title's capitals; NCCL 1.x's "WARN file:line" ---------------------------------
@pytest.mark.parametrize(
    ("line", "code"),
    [
        (
            "Multi-node inference: Unhandled CUDA error in ProcessGroupNCCL.cpp (called from all_reduce)",
            "RUN194",
        ),
        ("Unhandled CUDA error, NCCL version 2.10.3", "RUN194"),
        ("Unhandled System Error in ProcessGroupNCCL with 2 nodes", "RUN171"),
    ],
)
def test_nccl_error_text_in_capitals(line: str, code: str) -> None:
    check_root(line, code)


def test_unhandled_cuda_error_without_nccl_is_not_nccls() -> None:
    root = root_finding("RuntimeError: Unhandled CUDA error in my custom kernel")
    assert root is None or root.code != "RUN194"


NCCL1 = (
    "INFO NCCL debug level set to INFO\nNCCL version 1.3.4 compiled with CUDA 8.0\n"
    "INFO rank 0 using device 0 (0000:06:00.0)\nINFO rank access 0 -> 1 via P2P device mem\n"
)


@pytest.mark.parametrize(
    ("warn", "code"),
    [
        ("WARN src/reduce.cu:126 Cuda failure 'invalid resource handle'", "RUN194"),
        ("WARN src/all_reduce.cu:210 Cuda failure 'out of memory'", "RUN101"),
        (
            "WARN src/core.cu:810 Cuda failure 'CUDA driver version is insufficient for CUDA runtime "
            "version'",
            "RUN261",
        ),
    ],
)
def test_nccl1_warn_level_before_the_source(warn: str, code: str) -> None:
    check_root(NCCL1 + warn + "\n", code)


def test_nccl1_info_lines_alone_are_silent() -> None:
    assert root_finding(NCCL1) is None


# -- collectives configured after the runtime started (RUN387) ---------------------------------------------
LATE = [
    ("RuntimeError: Collective ops must be configured at program startup", {"framework": "tensorflow"}),
    ("ValueError: Collective ops are already configured.", {"reason": "configured_twice"}),
    (
        "RuntimeError: jax.distributed.initialize() must be called before any JAX computations are executed.",
        {"framework": "jax", "reason": "late"},
    ),
    ("RuntimeError: distributed.initialize should only be called once.", {"framework": "jax"}),
]


@pytest.mark.parametrize(("line", "facts"), LATE)
@pytest.mark.parametrize("prefix", ["", "[1,0]<stderr>:", "worker-0: "])
def test_collectives_configured_late(line: str, facts: dict, prefix: str) -> None:
    check_root(prefixed(prefix, line), "RUN387", facts)


def test_tf_collective_info_lines_are_silent() -> None:
    log = (
        "INFO:tensorflow:Enabled multi-worker collective ops with available devices: "
        "['/job:worker/replica:0/task:0/device:GPU:0']\n"
        "INFO:tensorflow:Collective ops configured with leader /job:worker/task:0\n"
    )
    assert root_finding(log) is None
