"""Rule writer r3's families (2026-12-06), each read at its source, with a near-miss per row:

- the NVSwitch SXid record's second line, "Severity 1 Engine instance 12 Sub-engine instance 00"
  (open-gpu-kernel-modules error_nvswitch.c _nvswitch_dump_error_entry; NVSWITCH_ERROR_SEVERITY_FATAL = 1),
  pasted without its first line (rules/accel_faults.py, RUN347);
- RCCL's init warnings (init.cc) followed by the version banner printed on its own line ("RCCL version
  2.16.5+hip5.6 HEAD:...") and its 'Missing "HSA_FORCE_FINE_GRAIN_PCIE=1" from environment' sibling
  (rules/env_families.py, RUN354);
- Caffe built without USE_NCCL: tools/caffe.cpp "Multi-GPU execution not available - rebuild with USE_NCCL",
  pycaffe's NCCL class without new_uid / bcast (python/caffe/_caffe.cpp) (rules/stack_fit.py, RUN334);
- Composer's _validate_precision on the CPU device it fell back to: "Precision.AMP_BF16 is not supported for
  CPU training." (rules/device_visibility.py, RUN262);
- Transformer Engine's supports_multicast (common/util/cuda_runtime.cpp) on a driver older than CUDA 12.1:
  "CUDA Error: invalid argument" (rules/platform_env.py, RUN261);
- NCCL 2.3-2.6's "Min Comp Cap N" under a banner "+cudaX.Y" whose CUDA has no code for capability N
  (rules/nccl_build.py, RUN265).

Rule writer r3's families of 2026-12-07 (misses of v20's dev half and v19's released held-out half):

- the BMC's System Event Log as ipmitool prints it (lib/ipmi_sel.c): a threshold crossed upward / downward,
  a failed part (uncorrectable ECC, PCI SERR, IERR, thermal trip, a power supply's failure)
  (rules/bmc_events.py, RUN600, new);
- Caffe's multi-GPU invariants (BVLC parallel.cpp apply_buffers, NVCaffe / BVLC syncedmem.cpp device check)
  (rules/caffe_multigpu.py, RUN601, new);
- gloo's uv transport UV_ASSERT abort ("[.../gloo/transport/uv/libuv.h:596] uv_accept: invalid argument"),
  and the tcp pair's error quoted without its bracket or with 2017's ": " before strerror
  (rules/gloo_errors.py, RUN174);
- NCCL <= 2.3's socket WARN "Call to write failed" / "Call to recv failed", and "Connection reset  by peer"
  with two spaces (rules/nccl_detail.py SOCKET, RUN174);
- nvidia-smi's "Unable to determine the device handle for GPU1: 0000:02:00.0: Unknown Error" (the index
  before the bus id), which also explains nvidia-container-cli's "nvml error: unknown error" beside it
  (rules/gpu_nvml.py, causality.py; RUN243);
- an Xid quoted without "NVRM: Xid (PCI:...): " but with the unit's mnemonic after it ("Xid 149,
  NETIR_LINK_DOWN Fatal XC0 i0 Link 14") (rules/gpu_hardware.py, RUN241);
- the GPUDirect-TCPX plugin's ctrl timeout with the address pair elided ("nic 3, enp6s0, ... rx rx ctrl
  timeout cnt 21311883") (rules/comm_texts.py, RUN361);
- the MPICHECK macro of NCCL's MPI example, copied by TensorRT-LLM and test programs: "Failed: MPI error
  <file>:<line> '<n>'" with an invalid-argument class 1-6 (rules/mpi_check_macro.py, RUN602, new);
- NCCL 2.0-2.3's one-interface-a-line "NET : Using interface lo:127.0.0.1<0>" in a paste of two hosts that
  ends before the communicator came up (rules/net_texts.py virtual_iface, RUN174).
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root, failure_findings, prefixed, root_finding

# -- NVSwitch SXid, the record's severity line --------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "[38889.018130] nvidia-nvswitch0: SXid (PCI:0000:c3:00.0): 12033, Severity 1 Engine instance 00 "
        "Sub-engine instance 00",
        "192.168.11.119: kern:     err: [2026-04-22T21:25:20.466440686Z]: nvidia-nvswitch1: SXid "
        "(PCI:0000:aa:00.0): 24007, Severity 1 Engine instance 12 Sub-engine instance 00",
        "kernel: nvidia-nvswitch3: SXid (PCI:0000:86:00.0): 22013, Severity 1 Engine instance 05 Sub-engine "
        "instance 01",
    ],
)
def test_sxid_severity_line_alone_is_a_fatal_sxid(line: str) -> None:
    check_root(line + "\n", "RUN347", {"severity": "fatal"})


def test_sxid_first_and_second_line_are_one_finding() -> None:
    log = (
        "nvidia-nvswitch1: SXid (PCI:0000:aa:00.0): 24007, Fatal, Link 30 sourcetrack timeout error\n"
        "nvidia-nvswitch1: SXid (PCI:0000:aa:00.0): 24007, Severity 1 Engine instance 30 "
        "Sub-engine instance 00\n"
        "nvidia-nvswitch1: SXid (PCI:0000:aa:00.0): 24007, Data {0x10000000, 0x10008100, 0x10000000}\n"
    )
    found = [f for f in failure_findings(log) if f.code == "RUN347"]
    assert len(found) == 1 and found[0].facts.get("nvlink") == 30, found


@pytest.mark.parametrize(
    "line",
    [
        # severity 0: non-fatal, corrected by the switch
        "nvidia-nvswitch0: SXid (PCI:0000:c3:00.0): 20009, Severity 0 Engine instance 28 "
        "Sub-engine instance 00",
        # the third line says nothing of the severity
        "nvidia-nvswitch1: SXid (PCI:0000:aa:00.0): 24007, Data {0x10000000, 0x10008100, 0x10000000, 0x0}",
        "nvidia-nvswitch0: SXid (PCI:0000:c3:00.0): 20009, Non-fatal, Link 28 RX Short Error Rate",
    ],
)
def test_sxid_near_misses_stay_silent(line: str) -> None:
    assert root_finding(line + "\n") is None


# -- RCCL's init warnings ----------------------------------------------------------------------------------

_RCCL_WARNS = (
    "g1064:11143:11143 [0] NCCL INFO Bootstrap : Using bond0:10.64.4.21<0>\n"
    'g1064:11143:11143 [0] /src/extlibs/rccl/build/src/init.cpp:120 NCCL WARN Missing "amd_iommu=on" from '
    "kernel command line which can lead to system instablity or hang!\n"
    'g1064:11143:11143 [0] /src/extlibs/rccl/build/src/init.cpp:122 NCCL WARN Missing "iommu=pt" from '
    "kernel command line which can lead to system instablity or hang!\n"
)
_UP = "g1064:11143:11200 [0] NCCL INFO comm 0x5581d0 rank 0 nranks 8 cudaDev 0 busId 29000 - Init COMPLETE\n"
_HSA_WARN = (
    "g1064:11143:11143 [0] /src/extlibs/rccl/build/src/init.cpp:126 NCCL WARN Missing "
    '"HSA_FORCE_FINE_GRAIN_PCIE=1" from environment which can lead to low RCCL performance, system '
    "instablity or hang!\n"
)


def test_rccl_warning_then_bare_version_banner() -> None:
    check_root(
        _RCCL_WARNS + "RCCL version 2.16.5+hip5.6 HEAD:a5a1d6e\n", "RUN354", {"kernel_option": "amd_iommu=on"}
    )


def test_rccl_hsa_fine_grain_warning_then_init_goes_on() -> None:
    log = _HSA_WARN + "RCCL version 2.18.3+hip6.0 HEAD:bb2d7c9\n"
    check_root(log, "RUN354", {"env": "HSA_FORCE_FINE_GRAIN_PCIE=1"})


@pytest.mark.parametrize(
    "log",
    [
        _HSA_WARN,  # the warning alone: every init on such a host prints it
        _RCCL_WARNS + "RCCL version 2.16.5+hip5.6 HEAD:a5a1d6e\n" + _UP,
        _HSA_WARN + "RCCL version 2.18.3+hip6.0 HEAD:bb2d7c9\n" + _UP,
        "echo 'RCCL version 2.16.5 is installed'\n",
    ],
)
def test_rccl_near_misses_stay_silent(log: str) -> None:
    assert root_finding(log) is None


# -- Caffe built without NCCL ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "log",
    [
        "F0101 22:55:26.495918  8615 caffe.cpp:254] Multi-GPU execution not available - rebuild "
        "with USE_NCCL\n"
        "*** Check failure stack trace: ***\n",
        "F0920 17:05:47.221035 23925 caffe.cpp:254] Multi-GPU execution not available -\n"
        "rebuild with USE_NCCL\n",
        "Traceback (most recent call last):\n"
        '  File "./tools/train_net_multi_gpu.py", line 109, in <module>\n'
        "    uid = caffe.NCCL.new_uid()\n"
        "AttributeError: type object 'NCCL' has no attribute 'new_uid'\n",
        "AttributeError: 'NCCL' object has no attribute 'bcast'\n",
    ],
)
def test_caffe_without_nccl(log: str) -> None:
    check_root(log, "RUN334", {"framework": "caffe", "reason": "backend_not_built"})


@pytest.mark.parametrize(
    "log",
    [
        "I0101 22:55:26.495918  8615 caffe.cpp:248] Starting Optimization\n"
        "I0101 22:55:26.495918  8615 caffe.cpp:252] Using GPUs 0, 1\n",
        "AttributeError: type object 'Config' has no attribute 'new_uids'\n",
        "AttributeError: 'Tensor' object has no attribute 'bcast_to'\n",
    ],
)
def test_caffe_near_misses_are_not_a_missing_backend(log: str) -> None:
    root = root_finding(log)
    assert root is None or root.code != "RUN334", root


# -- Composer on the CPU device ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "ValueError: Precision.AMP_BF16 is not supported for CPU training.",
        "ValueError: Precision.AMP_FP16 is not supported for CPU training.",
        "[rank0]: ValueError: Precision.AMP_FP8 is not supported for CPU training.",
    ],
)
def test_composer_precision_on_cpu(line: str) -> None:
    check_root(line + "\n", "RUN262", {"reason": "no_visible_device"})


@pytest.mark.parametrize(
    "log",
    [
        "UserWarning: FSDP is not applicable for single-GPU training. Reverting to DDP.\n",
        "INFO composer.trainer.trainer: Using precision Precision.AMP_BF16\n",
        "Precision.FP32 is supported for CPU training; AMP needs a GPU (see the docs)\n",
    ],
)
def test_composer_near_misses_stay_silent(log: str) -> None:
    assert root_finding(log) is None


# -- Transformer Engine's multicast query on an old driver -----------------------------------------------

_TE_FRAMES = (
    "Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.12/dist-packages/transformer_engine/pytorch/module/base.py", line 137, '
    "in initialize_ub\n"
    "    if not tex.device_supports_multicast():\n"
    "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
)


@pytest.mark.parametrize(
    "log",
    [
        _TE_FRAMES
        + "RuntimeError: /tmp/pip-req-build-iq_flo47/transformer_engine/common/util/cuda_runtime.cpp:118 "
        "in function operator(): CUDA Error: invalid argument\n",
        _TE_FRAMES
        + "RuntimeError: /tmp/pip-req-build-iq_flo47/transformer_engine/common/util/cuda_runtime.cpp:118 "
        "in function operator(): CUDA Error: inv\n",
        "RuntimeError: /workspace/TransformerEngine/transformer_engine/common/util/cuda_runtime.cpp:110 in "
        "function operator(): CUDA Error: invalid argument\n",
    ],
)
def test_te_multicast_query_on_an_old_driver(log: str) -> None:
    check_root(prefixed("[rank1]: ", log), "RUN261", {"reason": "driver_too_old"})


@pytest.mark.parametrize(
    "log",
    [
        # another call of that file, another error
        "RuntimeError: /opt/te/transformer_engine/common/util/cuda_runtime.cpp:57 in function operator(): "
        "CUDA Error: invalid device ordinal\n",
        # a cut message with no multicast frame above it
        "RuntimeError: /opt/te/transformer_engine/common/util/cuda_runtime.cpp:57 in function operator(): "
        "CUDA Error: in\n",
    ],
)
def test_te_near_misses_are_not_an_old_driver(log: str) -> None:
    root = root_finding(log)
    assert root is None or root.code != "RUN261", root


# -- NCCL built with a CUDA older than the GPUs ----------------------------------------------------------

_NCCL_INIT = (
    "node01:1297856:1297856 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>\n"
    "NCCL version {v}\n"
    "node01:1297856:1297856 [0] NCCL INFO nranks 8\n"
    "node01:1297856:1297856 [7] NCCL INFO Using 256 threads, Min Comp Cap {cc}, Trees disabled\n"
    "node01:1297856:1297856 [0] NCCL INFO Ring 00 : 0[0] -> 1[1] via direct shared memory\n"
)


@pytest.mark.parametrize(
    ("version", "cc"), [("2.4.8+cuda10.2", 8), ("2.6.4+cuda10.1", 8), ("2.5.6+cuda11.0", 9)]
)
def test_nccl_built_for_an_older_cuda_than_the_gpu(version: str, cc: int) -> None:
    check_root(_NCCL_INIT.format(v=version, cc=cc), "RUN265", {"compute_capability": cc})


@pytest.mark.parametrize(
    "log",
    [
        _NCCL_INIT.format(v="2.7.8+cuda11.0", cc=8),
        _NCCL_INIT.format(v="2.4.8+cuda10.1", cc=6),
        _NCCL_INIT.format(v="2.4.8+cuda10.2", cc=7),
        # no banner: the CUDA NCCL was built with is unknown
        "node01:1:1 [7] NCCL INFO Using 256 threads, Min Comp Cap 8, Trees disabled\n",
        # the communicator came up: a PTX the driver compiled
        _NCCL_INIT.format(v="2.4.8+cuda10.2", cc=8)
        + "node01:1297856:1297856 [0] NCCL INFO comm 0x7f3 rank 0 nranks 8 cudaDev 0 nvmlDev 0 - "
        "Init COMPLETE\n",
    ],
)
def test_nccl_build_near_misses_stay_silent(log: str) -> None:
    root = root_finding(log)
    assert root is None or root.code != "RUN265", root


# -- TensorRT-LLM's peer-access check ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "log",
    [
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.10/dist-packages/tensorrt_llm/_ipc_utils.py", line 41, in '
        "set_peer_access\n"
        "    raise RuntimeError(\n"
        "RuntimeError: Can't enable access between nodes 0 and 1\n",
        "[1,1]<stderr>:RuntimeError: Can't enable access between nodes 1 and 0\n",
    ],
)
def test_trtllm_peer_access_check(log: str) -> None:
    check_root(log, "RUN291", {"reason": "peer_access_unsupported", "library": "tensorrt_llm"})


@pytest.mark.parametrize(
    "log",
    [
        "We can't enable access between nodes without opening the firewall first\n",
        "[TensorRT-LLM][INFO] Peer access enabled between GPUs 0 and 1\n",
    ],
)
def test_trtllm_peer_near_misses_stay_silent(log: str) -> None:
    assert root_finding(log) is None


# -- nvidia-smi's table: the Volatile Uncorr. ECC cell ------------------------------------------------------

_SMI_OLD = (
    "+-----------------------------------------------------------------------------+\n"
    "| NVIDIA-SMI 450.51.05    Driver Version: 450.51.05    CUDA Version: 11.0     |\n"
    "|-------------------------------+----------------------+----------------------+\n"
    "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
    "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n"
    "|===============================+======================+======================|\n"
    "|   0  Tesla V100S-PCI...  Off  | 00000000:00:07.0 Off |                    {ecc} |\n"
    "| N/A   50C    P0   219W / 250W |   4617MiB / 32510MiB |    100%      Default |\n"
)
_SMI_NEW = (
    "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
    "|   3  NVIDIA A100-SXM4-80GB          On  |   00000000:4E:00.0 Off |                    {ecc} |\n"
    "| N/A   34C    P0             62W /  400W |       4MiB /  81920MiB |      0%      Default |\n"
)


@pytest.mark.parametrize(("table", "ecc"), [(_SMI_OLD, 2), (_SMI_NEW, 1), (_SMI_NEW, 16)])
def test_smi_table_uncorrectable_ecc(table: str, ecc: int) -> None:
    check_root(table.format(ecc=ecc), "RUN242", {"uncorrectable_ecc": ecc})


@pytest.mark.parametrize(
    "log",
    [
        _SMI_OLD.format(ecc=0),
        _SMI_NEW.format(ecc=0),
        _SMI_NEW.replace("{ecc}", "N/A"),
        "|   0  NVIDIA GeForce RTX 4090 WDDM  |   00000000:01:00.0  On |                  N/A |\n",
    ],
)
def test_smi_table_near_misses_stay_silent(log: str) -> None:
    assert root_finding(log) is None


# -- Accelerate's bf16 check -------------------------------------------------------------------------------


def test_accelerate_bf16_needs_a_supported_device() -> None:
    log = "ValueError: bf16 mixed precision requires PyTorch >= 1.10 and a supported device.\n"
    check_root(prefixed("[rank0]: ", log), "RUN265", {"arch": "bf16"})


@pytest.mark.parametrize(
    "log",
    [
        # 0.1x's version check: the torch version's, not the device's
        "ValueError: bf16 mixed precision requires PyTorch >= 1.10\n",
        "UserWarning: bf16 mixed precision requires PyTorch >= 1.10 and a supported device; using fp32\n",
    ],
)
def test_accelerate_bf16_near_misses_stay_silent(log: str) -> None:
    root = root_finding(log)
    assert root is None or root.code != "RUN265", root


# -- 2026-12-07: the BMC's System Event Log (ipmitool sel list / elist) --------------------------------------


@pytest.mark.parametrize(
    ("line", "event"),
    [
        (
            "   1 | 04/09/2024 | 10:15:02 | Temperature #0x30 | Upper Critical going high | Asserted",
            "Upper Critical going high",
        ),
        ("Temperature sensor #0x10 | Upper Non-critical going high", "Upper Non-critical going high"),
        (
            "  a3 | 10/08/2019 | 11:02:22 | Temperature CPU1 Temp | Upper Critical going high | Asserted | "
            "Reading 95 > Threshold 93 degrees C",
            "Upper Critical going high",
        ),
        (
            "  2c | 01/12/2025 | 03:14:07 | Fan FAN3 | Lower Critical going low | Asserted",
            "Lower Critical going low",
        ),
        (
            "12 | Mar-02-2025 | 22:41:10 | CPU1 Temp        | Temperature | Upper Critical - going high ; "
            "Sensor Reading = 95.00 C ; Threshold = 93.00 C",
            "Upper Critical - going high",
        ),
        ("  17 | 03/02/2025 | 22:41:10 | Memory #0x87 | Uncorrectable ECC | Asserted", "Uncorrectable ECC"),
        ("  18 | 03/02/2025 | 22:41:11 | Critical Interrupt #0x3c | PCI SERR | Asserted", "PCI SERR"),
        (
            "   9 | 11/20/2024 | 07:05:33 | Power Supply #0x51 | Failure detected | Asserted",
            "Failure detected",
        ),
    ],
)
def test_ipmi_sel_hardware_event(line: str, event: str) -> None:
    check_root(line + "\n", "RUN600", {"sel_event": event})


@pytest.mark.parametrize(
    "line",
    [
        # the condition cleared, or the reading coming back
        "   2 | 04/09/2024 | 10:25:02 | Temperature #0x30 | Upper Critical going high | Deasserted",
        "   3 | 04/09/2024 | 10:26:40 | Temperature #0x30 | Upper Non-critical going low | Asserted",
        "   4 | 04/09/2024 | 10:26:41 | Voltage #0x61 | Lower Non-critical going high | Asserted",
        # housekeeping and corrected errors
        "   1 | 12/17/2019 | 02:57:25 | Event Logging Disabled #0x72 | Log area reset/cleared | Asserted",
        "  11 | 02/06/2020 | 18:30:50 | Power Supply #0xfb | Power Supply AC lost | Asserted",
        "  17 | 03/02/2025 | 22:41:10 | Memory #0x87 | Correctable ECC | Asserted",
        "   9 | 11/20/2024 | 07:05:33 | Drive Slot #0x51 | Failure detected | Asserted",
        # ipmitool sensor / sdr tables, and the words in prose
        "CPU Temp         | 45.000     | degrees C  | ok    | 0.000     | 0.000     | 0.000     | 85.000",
        "Power Supply 1   | 06h | ok  | 10.1 | 95 Watts, Presence detected",
        "alert rule: Upper Critical going high on the inlet temperature pages the on-call",
    ],
)
def test_ipmi_sel_near_misses_stay_silent(line: str) -> None:
    assert root_finding(line + "\n") is None


# -- 2026-12-07: Caffe's multi-GPU invariants ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "source"),
    [
        (
            "F0321 13:50:58.896466   271 parallel.cpp:55] Check failed: total_size == (ptr == buffer ? 1 : "
            "ptr - buffer) (118335438 vs. 117426126)",
            "parallel.cpp",
        ),
        (
            "F1123 09:52:47.834031 15880 syncedmem.cpp:178] Check failed: Caffe::current_device() == "
            "gpu_device_ (0 vs. 1) ",
            "syncedmem.cpp",
        ),
        (
            "F0602 11:03:12.000412  4411 syncedmem.cpp:293] Check failed: device == device_ (1 vs. 0)",
            "syncedmem.cpp",
        ),
    ],
)
def test_caffe_multi_gpu_invariant(line: str, source: str) -> None:
    log = (
        line + "\n*** Check failure stack trace: ***\n    @     0x7fb6d90315cd  google::LogMessage::Fail()\n"
    )
    check_root(log, "RUN601", {"source": source})


@pytest.mark.parametrize(
    "line",
    [
        # a CUDA or NCCL call's check in the same file: the rows of those errors
        "F0707 18:28:31.445760 14913 parallel.cpp:130] Check failed: error == cudaSuccess (10 vs. 0)  "
        "invalid device ordinal",
        # another check, and the expression in prose
        "F0101 00:00:00.000000  1 syncedmem.cpp:56] Check failed: error == cudaSuccess (2 vs. 0)  out of "
        "memory",
        "CHECK_EQ(total_size, (ptr == buffer ? 1 : ptr - buffer)) guards the buffer layout in parallel.cpp",
    ],
)
def test_caffe_multi_gpu_near_misses(line: str) -> None:
    root = root_finding(line + "\n")
    assert root is None or root.code != "RUN601", root


# -- 2026-12-07: gloo's uv transport abort, and the pair's error quoted without its bracket ----------------


@pytest.mark.parametrize(
    "log",
    [
        "(RayTrainWorker pid=7315) [/Users/runner/work/pytorch/pytorch/pytorch/third_party/gloo/gloo/"
        "transport/uv/libuv.h:596] uv_accept: invalid argument\n"
        "(RayTrainWorker pid=7315) *** SIGABRT received at time=1734086759 ***\n",
        "[C:/actions-runner/_work/pytorch/pytorch/third_party/gloo/gloo/transport/uv/libuv.h:582] uv_bind: "
        "address already in use\n",
        'Random big probability issue, in MPI training over TCP : "gloo/transport/tcp/pair.cc:536] : '
        'Connection refused"\n',
    ],
)
def test_gloo_transport_socket_failure_variants(log: str) -> None:
    check_root(log, "RUN174", {"backend": "gloo"})


@pytest.mark.parametrize(
    "log",
    [
        # UV_ASSERT of the event loop's own set-up, not a socket call
        "[/pytorch/third_party/gloo/gloo/transport/uv/libuv.h:226] uv_loop_init: too many open files\n",
        # a timeout said by the pair is the timeout row's
        "[../third_party/gloo/gloo/transport/tcp/pair.cc:598] Read timeout [10.0.0.2]:5678\n",
        # a source path in a build log
        "building gloo/transport/uv/libuv.h: ok\n",
    ],
)
def test_gloo_transport_near_misses(log: str) -> None:
    root = root_finding(log)
    assert root is None or root.code != "RUN174", root


# -- 2026-12-07: NCCL <= 2.3's socket WARN lines -------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "worker0-0d9gnb:15:91 [3] include/socket.h 398 NCCL WARN Call to **write** failed : "
        "Connection reset  by peer.",
        "worker0-0d9gnb:15:91 [3] include/socket.h 398 NCCL WARN Call to recv failed : Connection reset  by "
        "peer.",
        "node1:15:91 [3] include/socket.h 398 NCCL WARN Call to write failed : Broken pipe",
    ],
)
def test_old_nccl_socket_call_failed(line: str) -> None:
    check_root(line + "\n", "RUN174")


def test_old_nccl_socket_words_in_a_healthy_line_stay_silent() -> None:
    log = "node1:15:15 [0] NCCL INFO Call to write the topology file done\n"
    assert root_finding(log) is None


# -- 2026-12-07: nvidia-smi's lost GPU with its index, an Xid quoted with its mnemonic, TCPX elided ---------


def test_nvidia_smi_lost_gpu_with_index_outranks_the_container_cli() -> None:
    log = (
        "docker: Error response from daemon: failed to create task for container: failed to create shim "
        "task: OCI runtime create failed: runc create failed: unable to start container process: error "
        "during container init: error running prestart hook #0: exit status 1, stdout: , stderr: "
        "Auto-detected mode as 'legacy'\n"
        "nvidia-container-cli: detection error: nvml error: unknown error: unknown\n"
        "(base) root@host:~# nvidia-smi\n"
        "Unable to determine the device handle for GPU1: 0000:02:00.0: Unknown Error\n"
    )
    check_root(log, "RUN243", {"pci_bus_id": "0000:02:00.0"})


def test_nvidia_smi_other_errors_with_an_index_stay_silent() -> None:
    log = "Unable to determine the device handle for GPU1: 0000:02:00.0: Insufficient Permissions\n"
    root = root_finding(log)
    assert root is None or root.code != "RUN243", root


@pytest.mark.parametrize(
    ("line", "xid"),
    [
        ("Xid 149, NETIR_LINK_DOWN Fatal XC0 i0 Link 14", 149),
        ("we saw XID 145, RLW_REMAP on node s9 before the hang", 145),
    ],
)
def test_xid_quoted_with_its_mnemonic(line: str, xid: int) -> None:
    check_root(line + "\n", "RUN241", {"xid": xid})


@pytest.mark.parametrize(
    "line",
    [
        "what does Xid 149, NETIR_LINK_DOWN mean?",
        "Xid 149, 150 and 151 are listed in the catalogue",
        "Xid 13, Graphics Exception in the user's kernel",
    ],
)
def test_xid_without_a_driver_record_stays_silent(line: str) -> None:
    root = root_finding(line + "\n")
    assert root is None or root.code != "RUN241", root


def test_tcpx_ctrl_timeout_with_the_addresses_elided() -> None:
    log = (
        "tcpxResult_t tcpxCommProgress(tcpxComm*):1126 NCCL WARN 0x..., nic 3, enp6s0, ... rx rx ctrl "
        "timeout cnt 21311883, nanos 10000000217\n"
    )
    check_root(log, "RUN361", {"nic": 3, "interface": "enp6s0"})


# -- 2026-12-07: the MPICHECK macro of NCCL's MPI example (TensorRT-LLM, tests, benchmarks) ----------------


@pytest.mark.parametrize(
    ("line", "cls"),
    [
        (
            "  what():  [TensorRT-LLM][ERROR] Assertion failed: Failed: MPI error /home/jenkins/agent/"
            "workspace/LLM/main/L0_PostMerge/tensorrt_llm/cpp/tensorrt_llm/common/mpiUtils.cpp:211 '6' "
            "(/home/jenkins/agent/workspace/LLM/main/L0_PostMerge/tensorrt_llm/cpp/tensorrt_llm/common/mpiUtils.cpp:211)",
            "MPI_ERR_RANK",
        ),
        ("Failed: MPI error test_allreduce.cu:88 '5'", "MPI_ERR_COMM"),
        ("[1,0]<stdout>:Failed: MPI error nccl_bench.cu:131 '2'", "MPI_ERR_COUNT"),
    ],
)
def test_mpicheck_invalid_argument_classes(line: str, cls: str) -> None:
    check_root(line + "\n", "RUN602", {"mpi_error": cls})


@pytest.mark.parametrize(
    "line",
    [
        # classes whose numbers differ between MPICH and Open MPI
        "Failed: MPI error test_allreduce.cu:88 '15'",
        "Failed: MPI error test_allreduce.cu:88 '17'",
        # the macro's siblings for CUDA
        "Failed: Cuda error test_allreduce.cu:52 'out of memory'",
        # the macro's source in a paste of the code
        "printf(\"Failed: MPI error %s:%d '%d'\\n\", __FILE__, __LINE__, e);",
    ],
)
def test_mpicheck_near_misses(line: str) -> None:
    root = root_finding(line + "\n")
    assert root is None or root.code != "RUN602", root


# -- 2026-12-07: NCCL 2.0-2.3's interface lines, "NET : Using interface lo:127.0.0.1<0>" --------------------

_OLD_IFACES = (
    "{h}:4879:5139 [0] NCCL INFO comm 0x7f19bc4046d0 rank {r} nranks 4\n"
    "{h}:4879:5139 [0] NCCL INFO NET : Using interface lo:127.0.0.1<0>\n"
    "{h}:4879:5139 [0] NCCL INFO NET : Using interface eth0:{ip}<0>\n"
    "{h}:4879:5139 [0] NCCL INFO NET/Socket : 2 interfaces found\n"
)


def test_old_nccl_loopback_interface_across_hosts() -> None:
    log = _OLD_IFACES.format(h="51ca79e04561", r=2, ip="3.5.6.12") + _OLD_IFACES.format(
        h="e53b7da88fea", r=0, ip="3.10.11.7"
    )
    check_root(log, "RUN174", {"loopback_interfaces": ["lo"]})


def test_old_nccl_loopback_interface_near_misses() -> None:
    # every rank on one host: loopback reaches them all
    one_host = _OLD_IFACES.format(h="node1", r=0, ip="10.0.0.1") + _OLD_IFACES.format(
        h="node1", r=1, ip="10.0.0.1"
    )
    assert root_finding(one_host) is None
    # the communicator came up afterwards
    up = (
        _OLD_IFACES.format(h="a1", r=0, ip="10.0.0.1")
        + _OLD_IFACES.format(h="b2", r=1, ip="10.0.0.2")
        + "a1:4879:5139 [0] NCCL INFO comm 0x7f19bc4046d0 rank 0 nranks 2 - Init COMPLETE\n"
        + "b2:4879:5139 [0] NCCL INFO comm 0x7f19bc4046d0 rank 1 nranks 2 - Init COMPLETE\n"
    )
    assert root_finding(up) is None
    # only the real interface named
    eth = (
        "a1:1:2 [0] NCCL INFO NET : Using interface eth0:10.0.0.1<0>\n"
        "b2:1:2 [0] NCCL INFO NET : Using interface eth0:10.0.0.2<0>\n"
    )
    assert root_finding(eth) is None
