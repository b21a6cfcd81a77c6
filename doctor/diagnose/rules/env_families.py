"""env_families: installs, builds and platform set-ups that a job's first collective or kernel cannot run on,
in stacks the other driver_env modules do not read (Paddle, HIP's fat binaries, PSM/PSM2, SYCL, oneCCL,
CANN, RCCL's kernel check, aws-ofi-nccl's memory registration).

Formats, read at their sources:
- A framework build without the process group the job asks for: Paddle's collective.py
  _new_process_group_impl calls core.ProcessGroupGloo.create / ProcessGroupNCCL / ProcessGroupBKCL /
  ProcessGroupCustom, and a build without it (an inference build -DON_INFER=ON, WITH_DISTRIBUTE=OFF, a CPU
  wheel asked for NCCL) raises "AttributeError: module 'paddle.fluid.libpaddle' has no attribute
  'ProcessGroupGloo'" (2.4-2.5; 2.6+ 'paddle.base.libpaddle'; <= 2.3 'paddle.fluid.core_avx' /
  'core_noavx'; the dygraph ParallelContexts 'NCCLParallelContext', 'BKCLParallelContext'); torch's own
  c10d module without it: "module 'torch._C._distributed_c10d' has no attribute 'ProcessGroupNCCL'",
  "cannot import name 'ProcessGroupNCCL' from 'torch._C._distributed_c10d'" (RUN334). (TCPStore's "use_libuv
  was requested but PyTorch was build without libuv support" is left to the store rows: the released corpus
  files it as a rendezvous failure.)
- HIP's registration of a fat binary's kernels (clr hipamd/src/hip_platform.cpp __hipRegisterFunction, ROCm
  5.x-7.x, with HIP_ENABLE_DEFERRED_LOADING=0): "Cannot retrieve Static function, error: 218"
  (hipErrorInvalidKernelFile; 209 hipErrorNoBinaryForGpu), ROCm <= 5.2 "Cannot Retrieve Static function",
  "Cannot register Static function, error: N": the library holds no usable code object for this gfx
  target (RUN265).
- PSM / PSM2 / OPX (opa-psm2 opa/opa_service.c hfi_wait_for_device, libfabric opx's copy, infinipath-psm's
  ipath_wait_for_device): "hfi_wait_for_device: The /dev/hfi1_0 device failed to appear after 15.0 seconds:
  Connection timed out", "ipath_wait_for_device: The /dev/ipath device failed to appear after 30.0
  seconds", then "PSM Could not find an InfiniPath Unit on device /dev/ipath (30s elapsed) (err=21)"
  (RUN350).
- SYCL's runtime_error (DPC++ sycl/source/detail/error_handling, plugin.hpp checkPiResult, 2022-2025):
  "Native API failed. Native API returns: -999 (Unknown PI error) -999 (Unknown PI error)", "-1
  (PI_ERROR_DEVICE_NOT_FOUND)", "-997 (Command failed to enqueue/execute)", Unified Runtime's "Native API
  returns: 20 (UR_RESULT_ERROR_DEVICE_LOST)": the GPU driver / compute runtime (RUN351); "-42
  (PI_ERROR_INVALID_BINARY)" and "UR_RESULT_ERROR_INVALID_BINARY" a binary without code for this device
  (RUN265); the out-of-memory codes (-5 PI_ERROR_OUT_OF_RESOURCES, -6 OUT_OF_HOST_MEMORY,
  UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY) are oom_layers.py's, the lost device gpu_hardware's: not read here.
- oneCCL global.cpp getenv_local_coord (2021.10+): "|CCL_ERROR| global.cpp:150 getenv_local_coord:
  condition global_data::env().ze_ipc_exchange == ccl::ze::ipc_exchange_mode::sockets failed" / "to get
  local_idx/count from ATL, set CCL_ZE_IPC_EXCHANGE=sockets explicitly", torch-ccl's "RuntimeError:
  oneCCL: global.cpp:150 getenv_local_coord: EXCEPTION: to get local_idx/count from ATL, ...", the older
  "unexpected local_proc_idx -1" (RUN352). Its "could not get local_idx/count from environment variables"
  WARN alone is a note healthy runs print: not read.
- Ascend CANN (ge / tbe_op_store_adapter.cc, CANN 6-8): "EC0010: Failed to import Python module
  [ModuleNotFoundError: No module named 'tbe.common...'].", "[AttributeError: ...]", then
  "[GraphOpt][InitializeInner][InitTbeFunc] Failed to init tbe." (RUN353), often inside torch_npu's
  "HCCL error in: ProcessGroupHCCL.cpp" block; ACL's op compiler (acl op_compile_processor.cpp OpCompile,
  ACL_REQUIRES_TRUE(isInit_, ..., "[Init][Env]init env failed!")) behind "EH9999: Inner Error!" and "build
  op model failed, result = 500001" when that set-up failed (TBE's Python dependencies missing), unless
  Python refused the compile pool in a daemonic process (the program's: not read).
- RCCL's init.cc (2.18-2.30): "NCCL WARN Missing \"iommu=pt\" from kernel command line which can lead to
  system instablity or hang!" (older builds also "Missing \"amd_iommu=on\""): a warning every init prints on
  such a host (alone it stays silent), so a cause only when RCCL's init goes on after it and the log shows no
  communicator that came up (a hang at init: RUN354, tier 1).
- glog's CHECK_EQ of an ncclResult_t (Caffe / NVCaffe util/nccl.hpp NCCL_CHECK, MXNet contrib nccl ops, TF's
  NcclManager): "Check failed: result == ncclSuccess (1 vs. 0)  unhandled cuda error": NCCL's result code
  1-7 read as its ncclGetErrorString (the NCCL codes RUN194, RUN171, RUN192, RUN191, RUN172).
- aws-ofi-nccl (nccl_ofi_net.c / nccl_ofi_rdma.c register_mr_buffers, register_rail_mr_buffer, 1.7-1.9):
  "NCCL WARN NET/OFI Unable to register memory (type = 2) for device 0. RC: -22, Error: Invalid argument":
  libfabric refused GPU memory (type 2 NCCL_PTR_CUDA, 4 DMA-BUF) that NCCL >= 2.19 registers: an EFA
  installer before 1.29.1 (its libfabric), fixed by upgrading it, FI_EFA_SET_CUDA_SYNC_MEMOPS=0 or NCCL
  2.18 (RUN292). Host memory (type = 1) that cannot be registered, "RC: 12 Cannot allocate memory", is the
  memlock limit's, not read here.
"""

from __future__ import annotations

import errno
import os
import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import UNTIL_UP, Event, Hit
from pgdoctor.diagnose.rules.nccl_detail import KIND, from_detail
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.nccl_results import NCCL1_TEXT_BY_NUMBER, TEXT_BY_NUMBER
from pgdoctor.model import lazy_re

_PG_ATTR = lazy_re.compile(
    r"module '(?P<mod>paddle\.(?:fluid|base)\.(?:libpaddle|core_avx|core_noavx|core))' has no attribute "
    r"'(?P<attr>ProcessGroup\w*|\w*ParallelContext)'|"
    r"module '(?P<tmod>torch\._C\._distributed_c10d)' has no attribute '(?P<tattr>ProcessGroup\w+)'|"
    r"cannot import name '(?P<iattr>ProcessGroup\w+)' from '(?P<imod>torch\._C\._distributed_c10d)'|"
    # the same class re-exported by torch.distributed (a Windows or macOS wheel without NCCL): backends only
    r"cannot import name '(?P<dattr>ProcessGroup(?:NCCL|Gloo|MPI|UCC|XCCL))' from "
    r"'(?P<dmod>torch\.distributed(?:\.distributed_c10d)?)'"
)
# Horovod's and BytePS's setup.py (Horovod 0.13-0.19 build_*_extension; CMake's FATAL_ERROR from 0.20 on)
# when HOROVOD_GPU_OPERATIONS / HOROVOD_GPU_ALLREDUCE=NCCL asks for GPU ops and the framework is a CPU build:
# "Horovod build with GPU support was requested, but this MXNet installation does not support CUDA." (also
# PyTorch, TensorFlow; the CMake text has no comma). Setup's "INFO: Above error indicates that this PyTorch
# installation does not support CUDA." is its probe's note, said too when the build goes on without GPU ops.
_GPU_BUILD = lazy_re.compile(
    r"(?P<tool>Horovod|BytePS) build with GPU support was requested,? but this"
    r"(?:\s+(?P<fw>PyTorch|TensorFlow|MXNet|Keras)\b|\s*$)"  # (CMake's message wraps its text at 76 columns)
)
_FRAMEWORK = lazy_re.compile(r"^\s*(PyTorch|TensorFlow|MXNet|Keras) installation")
_BACKEND_OF = lazy_re.compile(r"(?:ProcessGroup|^)(?P<b>[A-Z][A-Za-z]*?)(?:ParallelContext)?$")

_HIP_STATIC = lazy_re.compile(
    r"Cannot (?P<op>[Rr]etrieve|[Rr]egister) Static function(?:, error: (?P<err>\d+))?"
)
_HIP_ERRORS = {
    98: "hipErrorInvalidDeviceFunction",
    200: "hipErrorInvalidImage",
    209: "hipErrorNoBinaryForGpu",
    218: "hipErrorInvalidKernelFile",
}
_GFX = lazy_re.compile(r"\b(gfx[0-9a-f]{3,5}\w*)")

_PSM_DEVICE = lazy_re.compile(
    r"(?P<fn>\w*(?:hfi|ipath)\w*)_wait_for_device: The (?P<dev>/dev/\S+) device failed to appear after "
    r"(?P<secs>\d+(?:\.\d+)?) seconds|"
    r"PSM2? Could not find an? (?P<unit>InfiniPath|OPA|HFI) Unit on device (?P<dev2>/dev/\S+)"
)

_SYCL = lazy_re.compile(
    r"Native API failed\.\s*Native API returns: (?:(?P<num>-?\d+)\s*\((?P<name>[^)]*)\)|(?P<bare>\w+))"
)
_SYCL_OOM = lazy_re.compile(r"OUT_OF_(?:RESOURCES|HOST_MEMORY|DEVICE_MEMORY)|out of resources", re.I)
_SYCL_BINARY = lazy_re.compile(r"INVALID_BINARY|INVALID_KERNEL_NAME|INVALID_PROGRAM", re.I)
_SYCL_LOST = lazy_re.compile(r"DEVICE_LOST", re.I)

_CCL_COORD = lazy_re.compile(
    r"getenv_local_coord: (?:condition|EXCEPTION)|"
    r"to get local_idx/count from ATL, set CCL_ZE_IPC_EXCHANGE=sockets|"
    r"unexpected local_proc_(?:idx|count) -?\d+"
)

_CANN_IMPORT = lazy_re.compile(
    r"EC0010: Failed to import Python module \[(?:(?P<exc>\w+(?:Error|Exception)):\s*)?(?P<what>[^\]\n]*)|"
    r"\[InitTbeFunc\] Failed to init tbe|"
    r"(?P<acl>\[Init\]\[Env\]init env failed)"
)
# The Python multiprocessing refusal TBE's compile pool meets in a daemonic process (a DataLoader worker).
_DAEMONIC = lazy_re.compile(r"daemonic processes are not allowed to have children")
_NO_MODULE = lazy_re.compile(r"No module named '(?P<m>[\w.]+)'")

# RCCL's init going on after the warning (its version banner, bootstrap, plugin and transport lines): the log
# shows an init that began and then never came up.
_INIT_GOES_ON = lazy_re.compile(
    r"NCCL INFO (?:RCCL version|Bootstrap|NET/|Channel|comm 0x|Setting affinity|Hipruntime)|"
    # the version banner as RCCL 2.1x prints it on its own line, with no "NCCL INFO" before it (init.cc
    # showVersion: "RCCL version 2.16.5+hip5.6 HEAD:...")
    r"^\s*RCCL version\s*:?\s*\d+\.\d+"
)
# The kernel options, and (init.cc 2.13-2.2x) the environment variable PCIe-attached MI100/MI200 need:
# 'Missing "HSA_FORCE_FINE_GRAIN_PCIE=1" from environment which can lead to low RCCL performance, system
# instablity or hang!'
_IOMMU = lazy_re.compile(
    r"Missing \\?\"(?P<opt>iommu=pt|amd_iommu=on)\\?\" from kernel command line|"
    r"Missing \\?\"(?P<env>HSA_FORCE_FINE_GRAIN_PCIE=1)\\?\" from environment"
)
# A communicator that came up, or a test that ran to its results: the warning was then only a warning.
_CAME_UP = lazy_re.compile(
    r"Init COMPLETE|Avg bus bandwidth|Out of bounds values|ncclCommInitRank\w* .*Init COMPLETE"
)

# glog's CHECK_EQ of an ncclResult_t (Caffe / NVCaffe include/caffe/util/nccl.hpp NCCL_CHECK: "Check failed:
# result == ncclSuccess (1 vs. 0)  unhandled cuda error"; MXNet contrib's "... (2 vs. 0) ncclCommInitRank
# failed!"; TF NcclManager's "... (3 vs. 0) internal error"): the number is NCCL's result code. The checked
# value may be the call itself (Paddle 1.x platform/nccl_helper.h NCCLGroupGuard's destructor,
# CHECK_EQ(dynload::ncclGroupEnd(), ncclSuccess): "Check failed: dynload::ncclGroupEnd() == ncclSuccess (1
# vs. 0)"), or come second (Antares' CHECK_EQ(ncclSuccess, ncclGroupStart()): "Check failed: ncclSuccess ==
# ncclGroupStart() (0 vs. 1)").
_GLOG_NCCL = lazy_re.compile(
    r"Check_? failed: [\w:.>-]+(?:\([^()\n]{0,200}\))? == ncclSuccess \((?P<n>[1-9]|1[0-4]) vs\. 0\)\s*"
    r"(?::\s*)?(?P<rest>[^\n]*)|"
    r"Check_? failed: ncclSuccess == [\w:.>-]+(?:\([^()\n]{0,200}\))? \(0 vs\. (?P<n2>[1-9]|1[0-4])\)\s*"
    r"(?::\s*)?(?P<rest2>[^\n]*)"
)

_OFI_REGISTER = lazy_re.compile(
    r"NET/OFI Unable to register memory \(type = (?P<type>[24])\) for device (?P<dev>\d+)\. "
    r"RC: (?P<rc>-22|-95|-38), Error: (?P<err>[^\n]*)"
)


def _gpu_build(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    tool, fw = m.group("tool"), m.group("fw")
    if fw is None:
        nxt = _FRAMEWORK.match(" ".join(ln.text for ln in hit.after(1, False)))
        fw = nxt.group(1) if nxt else "framework"
    return [
        row.event(
            hit,
            f"{tool} was built with GPU operations, but the installed {fw} is a CPU-only build: install "
            f"{fw}'s CUDA build first (then rebuild {tool} with --no-cache-dir) or build {tool} without GPU "
            "ops",
            {"reason": "cpu_build_of_framework", "framework": fw.lower(), "library": tool.lower()},
            dedupe=(row.code, "gpu_build", fw),
        )
    ]


def _pg_attr(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    attr = m.group("attr") or m.group("tattr") or m.group("iattr") or m.group("dattr")
    module = m.group("mod") or m.group("tmod") or m.group("imod") or m.group("dmod")
    framework = "paddle" if module.startswith("paddle") else "pytorch"
    b = _BACKEND_OF.search(attr)
    backend = b.group("b").upper() if b else attr
    if backend == "GLOO":
        backend = "Gloo"
    facts: dict[str, Any] = {"framework": framework, "backend": backend, "reason": "backend_not_built"}
    remedy = (
        "install a Paddle wheel built with distributed support (the official paddlepaddle-gpu / paddlepaddle "
        "wheels), or build with -DWITH_DISTRIBUTE=ON (and -DWITH_GLOO=ON for Gloo), not an inference build"
        if framework == "paddle"
        else "install a PyTorch wheel built with it (the official CUDA wheels carry NCCL and Gloo)"
    )
    return [
        row.event(
            hit,
            f"{hit.who()}: this {framework} build has no {attr} ({module} lacks it): the {backend} process "
            f"group was not compiled in; {remedy}",
            facts,
            dedupe=(row.code, "pg_attr", attr),
        )
    ]


def _hip_static(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"runtime": "rocm", "reason": "no_code_object"}
    err = m.group("err")
    name = ""
    if err:
        facts["hip_error"] = int(err)
        name = _HIP_ERRORS.get(int(err), "")
        if name:
            facts["hip_error_name"] = name
    for ln in [*hit.before(8, same_rank=False), hit.line, *hit.after(8, same_rank=False)]:
        g = _GFX.search(ln.text)
        if g:
            facts["gfx"] = g.group(1)
            break
    what = f" (error {err}{', ' + name if name else ''})" if err else ""
    return [
        row.event(
            hit,
            f"HIP could not {m.group('op').lower()} a kernel of a loaded library for this GPU{what}: the "
            "library (RCCL, PyTorch, an extension) has no usable code object for this GPU's gfx target; "
            "install or build one for it (GPU_TARGETS / PYTORCH_ROCM_ARCH)",
            facts,
            dedupe=(row.code, "hip_static"),
        )
    ]


def _psm_device(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    dev = m.group("dev") or m.group("dev2")
    facts: dict[str, Any] = {"device": dev, "reason": "fabric_device_missing"}
    if m.group("secs"):
        facts["waited_s"] = float(m.group("secs"))
    fabric = "Omni-Path (hfi1)" if "hfi" in dev else "InfiniPath"
    facts["fabric"] = "omni-path" if "hfi" in dev else "infinipath"
    return [
        row.event(
            hit,
            f"{hit.who()}: PSM waited for {dev} and it never appeared: this host's {fabric} driver is not "
            "loaded or it has no such adapter; load the driver (modprobe hfi1) or choose the fabric the host "
            "has (FI_PROVIDER=verbs/tcp, I_MPI_FABRICS, OMPI_MCA_mtl=^psm2, -fabric ibv)",
            facts,
            dedupe=(row.code, "psm_device"),
        )
    ]


def _sycl(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    name = (m.group("name") or m.group("bare") or "").strip()
    whole = f"{m.group('num') or ''} {name}"
    if _SYCL_OOM.search(whole) or m.group("num") in ("-5", "-6") or _SYCL_LOST.search(whole):
        return None  # the memory rows' and the hardware's
    facts: dict[str, Any] = {"runtime": "sycl"}
    if m.group("num"):
        facts["native_error"] = int(m.group("num"))
    if name:
        facts["native_error_name"] = name
    if _SYCL_BINARY.search(whole) or m.group("num") == "-42":
        facts["reason"] = "no_code_for_device"
        return [
            row.event(
                hit,
                f"the SYCL runtime could not use the program's device code ({name or 'invalid binary'}): the "
                "binary was not built for this device (add its -fsycl-targets / AOT target, or the matching "
                "IPEX/PyTorch XPU build)",
                facts,
                code=C.ARCH_UNSUPPORTED.code,
                dedupe=(C.ARCH_UNSUPPORTED.code, "sycl"),
            )
        ]
    facts["reason"] = "native_api_failed"
    return [
        row.event(
            hit,
            f"{hit.who()}: the SYCL runtime's native call (Level Zero / OpenCL) failed ({whole.strip()}): "
            "the Intel GPU driver or compute runtime does not work here; check sycl-ls and a plain "
            "SYCL sample, then match the GPU driver, Level Zero loader and oneAPI runtime versions",
            facts,
            dedupe=(row.code, "sycl"),
        )
    ]


def _ccl_coord(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: oneCCL could not learn this process's local index and count on its node from the "
            "launcher's environment; set CCL_ZE_IPC_EXCHANGE=sockets (or export the local rank and size as "
            "CCL_LOCAL_RANK / CCL_LOCAL_SIZE), or launch with Intel MPI's mpiexec",
            {"library": "oneCCL", "reason": "local_coord_unknown"},
            dedupe=(row.code, "local_coord"),
        )
    ]


def _cann_import(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"accelerator": "ascend", "reason": "cann_python_import_failed"}
    what = (m.group("what") or "").strip()
    if m.group("exc"):
        facts["exception"] = m.group("exc")
    mod = _NO_MODULE.search(what)
    if mod:
        facts["module"] = mod.group("m")
    if m.group("acl"):
        near = [*hit.before(30, same_rank=False), *hit.after(12, same_rank=False)]
        if any(_DAEMONIC.search(ln.text) for ln in near):
            return None  # the compile ran in a daemonic process (the program's), not the install's
        facts["reason"] = "cann_op_compile_env_init_failed"
    detail = f" ({m.group('exc') + ': ' if m.group('exc') else ''}{what.rstrip('.')})" if what else ""
    return [
        row.event(
            hit,
            f"{hit.who()}: CANN could not import its own Python components{detail}: source set_env.sh of the "
            "installed toolkit in the job's environment, run the Python CANN was installed for, and install "
            "TBE's dependencies (pip install decorator attrs psutil scipy ...) there",
            facts,
            dedupe=(row.code, "cann_import"),
        )
    ]


def _iommu(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    after = hit.after(48, same_rank=False)
    if any(_CAME_UP.search(ln.text) for ln in after):
        return None
    if not any(_INIT_GOES_ON.search(ln.text) for ln in after):
        return None  # the warning alone: every init on such a host prints it, healthy ones too
    if m.group("env"):
        return [
            row.event(
                hit,
                "RCCL warned that HSA_FORCE_FINE_GRAIN_PCIE=1 is not set: RCCL's P2P over PCIe on AMD GPUs "
                "can hang or crawl without it; export HSA_FORCE_FINE_GRAIN_PCIE=1 in the job's environment",
                {"env": m.group("env"), "reason": "hsa_fine_grain_pcie_unset", UNTIL_UP: ""},
                dedupe=(row.code, "iommu"),
            )
        ]
    return [
        row.event(
            hit,
            f"RCCL warned that the kernel was booted without {m.group('opt')}: multi-GPU P2P on AMD GPUs can "
            "hang without it; add iommu=pt to GRUB_CMDLINE_LINUX_DEFAULT and reboot (or NCCL_P2P_DISABLE=1 "
            "to confirm)",
            # lookahead.py drops it when any communicator came up later in the file (beyond this window)
            {"kernel_option": m.group("opt"), "reason": "iommu_not_passthrough", UNTIL_UP: ""},
            dedupe=(row.code, "iommu"),
        )
    ]


def _glog_nccl(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    n = int(m.group("n") or m.group("n2"))
    rest = (m.group("rest") or m.group("rest2") or "").replace("_", " ").strip()
    # ncclGetErrorString's text after the number names the result in either numbering (a 1.x build prints
    # "(13 vs. 0)  invalid data type"); glog lines of several threads are glued, so only its start counts.
    said = next((t for t in KIND if rest.lower().startswith(t)), None)
    err = said or TEXT_BY_NUMBER.get(n) or NCCL1_TEXT_BY_NUMBER.get(n, "")
    if err not in KIND:
        return None
    base: dict[str, Any] = {"nccl_error": err, "nccl_error_text": err, "nccl_result": n}
    detail = rest or err
    if KIND[err] is C.NCCL_CUDA_ERROR and not rest[len(said or "") :].strip(" .:!"):
        # A bare "unhandled cuda error" names no CUDA error: where it was raised (the communicator's
        # creation on the stack, Paddle's NCCLContextMap) is all there is to read (from_detail's RUN313).
        detail = ""
    return from_detail(hit, detail, base, None, 0, KIND[err])


def _ofi_register(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    kind = "GPU (CUDA)" if m.group("type") == "2" else "DMA-BUF"
    return [
        row.event(
            hit,
            f"aws-ofi-nccl could not register {kind} memory with libfabric for device {m.group('dev')} (RC "
            f"{m.group('rc')}, {m.group('err').strip()}): the EFA installer's libfabric is older than this "
            "NCCL needs (NCCL >= 2.19 wants EFA installer >= 1.29.1); upgrade it, or set "
            "FI_EFA_SET_CUDA_SYNC_MEMOPS=0, or pin NCCL 2.18",
            {
                "plugin": "aws-ofi-nccl",
                "memory_type": int(m.group("type")),
                "device": int(m.group("dev")),
                "rc": int(m.group("rc")),
                "reason": "ofi_gpu_memory_registration",
            },
            dedupe=(row.code, "ofi_register"),
        )
    ]


# RDMA engines outside NCCL registering a buffer with the NIC (ibv_reg_mr) and refused, in the engine's own
# record: MoRI (application/context, "RegisterRdmaMemoryRegion failed! addr:0x.., size:.., accessFlag:15,
# errno:22 (Invalid argument)", then std::abort: the "Fatal Python error: Aborted" after it is this),
# Mooncake's transfer engine (rdma_context.cpp, glog: "E0717 rdma_context.cpp:243] Failed to register memory
# 0x7243..: Cannot allocate memory [12]"), UCX (uct_ib_md.c "ibv_reg_mr(address=0x.., length=..,
# access=0xf) failed: Bad address"; ucp_mm.c "failed to register address 0x.. (cuda) length .. on
# md[4]=mlx5_0: Input/output error", read for device memory types only). EFAULT / EINVAL on device memory:
# no peer-memory module (nvidia_peermem, amdgpu's) or a NIC without DMA-BUF for it; ENOMEM: the
# locked-memory limit (ulimit -l, a container's memlock). NCCL's own "Call to ibv_reg_mr failed" is
# nccl_transport's (a network error there). perftest (ib_write_bw & co., perftest_resources.c create_mr /
# create_single_mr, 4.x-25.x) says "Couldn't allocate MR" (newer "Couldn't allocate MR with error=14"), then
# "failed to create mr", "Failed to create MR": with --use_cuda / --use_rocm its buffer is GPU memory
# ("allocated GPU buffer address at ..."), so the NIC needs the peer-memory module (nvidia-peermem) or
# DMA-BUF; on host memory it is the memlock limit (a pod's 64 KB default).
_RDMA_REG = lazy_re.compile(
    r"Couldn't allocate MR(?: with error=(?P<e4>\d+))?|"
    r"RegisterRdmaMemoryRegion failed!(?:[^\n]*?errno:\s*(?P<e1>\d+))?|"
    r"Failed to register memory (?:0x[0-9a-fA-F]+|\(nil\)): (?P<s2>[A-Za-z][^\[\n]*?)\s*\[(?P<e2>\d+)\]|"
    r"\bibv_reg_mr(?:_iova2)?\(address=[^)]*\) failed: (?P<s3>[A-Za-z][^\n]*?)\s*$|"
    r"failed to register address \S+ \((?P<mt>cuda|cuda-managed|rocm|rocm-managed|ze-device)\) length"
)
_RDMA_ERRNO = lazy_re.compile(r"(?:\berrno:?\s*|\[)(\d+)\b")
# The errnos a registration answers with, named by number or by strerror's words (the C library's).
_RDMA_ERRNOS = (errno.EFAULT, errno.EINVAL, errno.ENOMEM)
_RDMA_STRERROR = lazy_re.compile("|".join(re.escape(os.strerror(e)) for e in _RDMA_ERRNOS))
_RDMA_WHY: dict[Any, str] = {
    **{e: errno.errorcode[e] for e in _RDMA_ERRNOS},
    **{os.strerror(e): errno.errorcode[e] for e in _RDMA_ERRNOS},
}


# perftest's GPU buffer: the --use_cuda / --use_rocm option on its command line, or its own lines about it.
_PERFTEST_GPU = lazy_re.compile(
    r"--use_(cuda|rocm)\b|allocated GPU buffer|(CUDA|ROCm|HIP) Ctx|cuMemAlloc\(\)"
)


def _perftest_reg(hit: Hit, m: re.Match[str]) -> tuple[Any, str]:
    """perftest's errno (its "error=N", or strerror's words in the ERRNO lines it prints next) and the
    memory it registered ("cuda" / "rocm" when its buffer is on a GPU, else "")."""
    key: Any = int(m.group("e4")) if m.group("e4") else None
    after = hit.after(12, same_rank=False)
    if key is None:
        key = next((w.group(0) for ln in after if (w := _RDMA_STRERROR.search(ln.text))), None)
    window = [ln.text for ln in [*hit.before(16, same_rank=False), hit.line]]
    gpu = next((g.group(1) or g.group(2) or "cuda" for t in window if (g := _PERFTEST_GPU.search(t))), "")
    return key, gpu.lower().replace("hip", "rocm")


def _rdma_reg(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    perftest = "allocate MR" in m.group(0)
    engine = (
        "perftest"
        if perftest
        else "MoRI"
        if "RegisterRdma" in m.group(0)
        else "Mooncake"
        if m.group("e2")
        else "UCX"
    )
    facts: dict[str, Any] = {"engine": engine, "reason": "rdma_memory_registration"}
    found = _RDMA_ERRNO.search(hit.text, m.start())
    words = _RDMA_STRERROR.search(hit.text, m.start())
    key: Any = int(found.group(1)) if found else words.group(0) if words else None
    if perftest:
        key, gpu = _perftest_reg(hit, m)
        if gpu:
            facts["memory_type"] = gpu
    name = _RDMA_WHY.get(key)
    if isinstance(key, int):
        facts["errno"] = key
    if m.group("mt"):
        facts["memory_type"] = m.group("mt")
    why = (
        "the locked-memory limit is too low for it (ulimit -l / the container's memlock)"
        if name == "ENOMEM"
        else "the NIC's driver cannot pin this memory: device memory needs the peer-memory module "
        "(nvidia_peermem, amdgpu's) loaded, or DMA-BUF registration the engine and the NIC support"
    )
    return [
        row.event(
            hit,
            f"{hit.who()}: {engine} could not register a buffer with the RDMA NIC"
            + (f" ({name})" if name else "")
            + f": {why}",
            facts,
            dedupe=(row.code, engine),
        )
    ]


SIGNATURES = (
    Signature(
        "framework build without the process group",
        _PG_ATTR,
        _pg_attr,
        C.COLLECTIVE_BACKEND_MISSING.code,
        anchors=(
            b"has no attribute 'ProcessGroup",
            b"ParallelContext'",
            b"from 'torch._C._distributed_c10d'",
            b"from 'torch.distributed",
        ),
        worth=(
            rb"has no attribute '(?:ProcessGroup|\w*ParallelContext')",
            rb"cannot import name 'ProcessGroup\w+' from 'torch\.(?:_C\._distributed_c10d|distributed)",
        ),
        words=("has no attribute", "cannot import name"),
    ),
    Signature(
        "gpu ops asked of a cpu build of the framework",
        _GPU_BUILD,
        _gpu_build,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"build with GPU support was requested",),
        words=("build with gpu support was requested",),
    ),
    Signature(
        "hip static function registration failed",
        _HIP_STATIC,
        _hip_static,
        C.ARCH_UNSUPPORTED.code,
        anchors=(b"Static function",),
        worth=(rb"Cannot [Rr](?:etrieve|egister) Static function",),
        words=("static function",),
    ),
    Signature(
        "psm fabric device missing",
        _PSM_DEVICE,
        _psm_device,
        C.FABRIC_DEVICE_MISSING.code,
        anchors=(b"_wait_for_device: The ", b"Unit on device /dev/"),
        worth=(rb"_wait_for_device: The /dev/", rb"PSM2? Could not find an? \w+ Unit on device"),
        words=("_wait_for_device", "unit on device"),
    ),
    Signature(
        "sycl native api failed",
        _SYCL,
        _sycl,
        C.SYCL_RUNTIME_FAILURE.code,
        anchors=(b"Native API failed",),
        worth=(rb"Native API failed",),
        words=("native api failed",),
    ),
    Signature(
        "oneccl local coordinates unknown",
        _CCL_COORD,
        _ccl_coord,
        C.ONECCL_LOCAL_COORD.code,
        anchors=(b"getenv_local_coord", b"CCL_ZE_IPC_EXCHANGE=sockets", b"unexpected local_proc_"),
        worth=(rb"getenv_local_coord: ", rb"CCL_ZE_IPC_EXCHANGE=sockets", rb"unexpected local_proc_"),
        words=("getenv_local_coord", "ccl_ze_ipc_exchange", "unexpected local_proc_"),
    ),
    Signature(
        "cann python components import failed",
        _CANN_IMPORT,
        _cann_import,
        C.CANN_PYTHON_ENV.code,
        anchors=(b"EC0010", b"Failed to init tbe", b"init env failed"),
        worth=(
            rb"EC0010: Failed to import Python module",
            rb"\[InitTbeFunc\] Failed to init tbe",
            rb"\[Init\]\[Env\]init env failed",
        ),
        words=("ec0010", "failed to init tbe", "init env failed"),
    ),
    Signature(
        "rccl iommu not passthrough",
        _IOMMU,
        _iommu,
        C.ROCM_IOMMU_NOT_PT.code,
        tier=1,
        anchors=(b"from kernel command line", b"HSA_FORCE_FINE_GRAIN_PCIE=1"),
        worth=(
            rb"Missing \\?\"(?:amd_)?iommu=\w+\\?\" from kernel command line",
            rb"Missing \\?\"HSA_FORCE_FINE_GRAIN_PCIE=1\\?\" from environment",
        ),
        words=("from kernel command line", "hsa_force_fine_grain_pcie=1"),
        examples=(
            "node1:11143:11143 [0] /src/rccl/src/init.cpp:126 NCCL WARN Missing "
            '"HSA_FORCE_FINE_GRAIN_PCIE=1" '
            "from environment which can lead to low RCCL performance, system instablity or hang!",
        ),
    ),
    Signature(
        "glog check of an nccl result",
        _GLOG_NCCL,
        _glog_nccl,
        C.NCCL_CUDA_ERROR.code,
        anchors=(b"== ncclSuccess (", b"failed: ncclSuccess == "),
        worth=(rb"== ncclSuccess \(\d vs\. 0\)", rb"failed: ncclSuccess == "),
        words=("== ncclsuccess (", "ncclsuccess == "),
    ),
    Signature(
        "aws-ofi-nccl gpu memory registration refused",
        _OFI_REGISTER,
        _ofi_register,
        C.NCCL_PLATFORM_FEATURE.code,
        anchors=(b"Unable to register memory (type = ",),
        worth=(rb"NET/OFI Unable to register memory \(type = [24]\)",),
        words=("unable to register memory",),
    ),
    Signature(
        "rdma engine memory registration refused",
        _RDMA_REG,
        _rdma_reg,
        C.RDMA_MEMORY_REGISTRATION.code,
        anchors=(
            b"RegisterRdmaMemoryRegion failed",
            b"Failed to register memory",
            b"failed to register address",
            b"(address=",
            b"Couldn't allocate MR",
        ),
        worth=(
            rb"RegisterRdmaMemoryRegion failed|Failed to register memory (?:0x|\(nil\))|"
            rb"failed to register address \S+ \((?:cuda|rocm|ze)|ibv_reg_mr(?:_iova2)?\(address=|"
            rb"Couldn't allocate MR",
        ),
        words=(
            "couldn't allocate mr",
            "registerrdmamemoryregion failed",
            "failed to register memory",
            "failed to register address",
            "ibv_reg_mr(address=",
            "ibv_reg_mr_iova2(address=",
        ),
    ),
)
parse = gated_reader(SIGNATURES)
