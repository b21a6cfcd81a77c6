"""CUDA runtime and driver errors that say the software stack or the machine is not ready,
by number, enum name and cudaGetErrorString text, and which kind of problem each one is.

Read from the CUDA runtime's cudaError_t and the driver's CUresult (driver_types.h, cuda.h):
the same number has a runtime name (cudaErrorSystemNotReady), a driver name
(CUDA_ERROR_SYSTEM_NOT_READY) and one message; PyTorch prints "CUDA error: <message>" or, when
device discovery fails, "Error <number>: <message>". Kinds (closed set) route the finding:
  driver_too_old   the driver is older than the CUDA runtime (or forward compatibility refused)
  no_device        no usable GPU is visible or the devices are held elsewhere
  not_ready        the system is not initialised (NVSwitch systems: Fabric Manager not running)
  init_failed      the driver could not initialise the device (wedged GPU, driver state)
  arch_unsupported this PyTorch (or extension) was built without code for this GPU's architecture
  peer_access      two GPUs have no peer-to-peer path
  mps              the CUDA MPS daemon or server refused or dropped this client (805-810)
  jit_missing      the driver's PTX JIT compiler library is absent (a partial driver install)
Every message is cudart's cudaGetErrorString text, as its string table has it (CUDA 11-12).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Optional

from pgdoctor.model import lazy_re

Kind = Literal[
    "driver_too_old",
    "no_device",
    "not_ready",
    "init_failed",
    "arch_unsupported",
    "peer_access",
    "mps",
    "jit_missing",
]


@dataclass(frozen=True)
class CudaError:
    number: int
    runtime_name: str
    driver_name: str
    message: str
    kind: Kind


def _e(number: int, runtime: str, driver: str, message: str, kind: Kind) -> CudaError:
    return CudaError(number, runtime, driver, message, kind)


CUDA_ERRORS: tuple[CudaError, ...] = (
    _e(
        3, "cudaErrorInitializationError", "CUDA_ERROR_NOT_INITIALIZED", "initialization error", "init_failed"
    ),
    _e(
        35,
        "cudaErrorInsufficientDriver",
        "CUDA_ERROR_INSUFFICIENT_DRIVER",
        "CUDA driver version is insufficient for CUDA runtime version",
        "driver_too_old",
    ),
    _e(
        46,
        "cudaErrorDevicesUnavailable",
        "CUDA_ERROR_DEVICE_UNAVAILABLE",
        "all CUDA-capable devices are busy or unavailable",
        "no_device",
    ),
    # the same error's text in CUDA 11+ (exclusive-process compute mode, or another job holds it)
    _e(
        46,
        "cudaErrorDevicesUnavailable",
        "CUDA_ERROR_DEVICE_UNAVAILABLE",
        "CUDA-capable device(s) is/are busy or unavailable",
        "no_device",
    ),
    _e(
        209,
        "cudaErrorNoKernelImageForDevice",
        "CUDA_ERROR_NO_BINARY_FOR_GPU",
        "no kernel image is available for execution on the device",
        "arch_unsupported",
    ),
    # A kernel looked up by name is not in the loaded module: a library (NCCL's enqueue.cc quotes it as
    # "Cuda failure 'named symbol not found'") or an extension built without code for this GPU's arch.
    _e(
        500,
        "cudaErrorSymbolNotFound",
        "cudaErrorSymbolNotFound",
        "named symbol not found",
        "arch_unsupported",
    ),
    # 999 at initialisation, in torch's words (c10/cuda/CUDAFunctions.cpp); a bare "unknown error"
    # says too little to be classified.
    _e(
        999,
        "cudaErrorUnknown",
        "CUDA_ERROR_UNKNOWN",
        "CUDA unknown error - this may be due to an incorrectly set up environment",
        "init_failed",
    ),
    # cudaDeviceEnablePeerAccess / cudaMemcpyPeer between two GPUs that have no P2P path (PCIe ACS or
    # an IOMMU in the way, a VM without P2P, a platform that disables it); NCCL's P2P transport
    # quotes it as "Cuda failure 'peer access is not supported between these two devices'".
    _e(
        217,
        "cudaErrorPeerAccessUnsupported",
        "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
        "peer access is not supported between these two devices",
        "peer_access",
    ),
    # Mapping another GPU's memory (or an exported allocation) into this one's address space failed:
    # cudaDeviceEnablePeerAccess, NCCL's cuMem P2P buffers (allocator.cc ncclMemAlloc: "Cuda failure 205
    # 'mapping of buffer object failed'"), cuda-samples' p2pBandwidthLatencyTest. The threads' causes are
    # the platform's: BAR1 too small (Resizable / large BAR off in the BIOS), an IOMMU in the way, a
    # driver or kernel module without P2P for these boards.
    _e(
        205,
        "cudaErrorMapBufferObjectFailed",
        "CUDA_ERROR_MAP_FAILED",
        "mapping of buffer object failed",
        "peer_access",
    ),
    # More than the driver's limit of peer mappings per GPU (8 on PCIe): NCCL's allocator.cc "Cuda failure
    # 711 'peer mapping resources exhausted'", cudaDeviceEnablePeerAccess of a 10-GPU node (an X server
    # that enabled P2P between the GPUs itself used them up, NVIDIA/nccl#241).
    _e(
        711,
        "cudaErrorTooManyPeers",
        "CUDA_ERROR_TOO_MANY_PEERS",
        "peer mapping resources exhausted",
        "peer_access",
    ),
    # A kernel with no code for this GPU (CUDA < 10.1 numbered it 8: "cuda runtime error (8) : invalid device
    # function"; later toolkits say 209 "no kernel image" for most builds, 98 remains for a compiled
    # extension or an old torch built for other archs); ROCm's hipErrorInvalidDeviceFunction reads the same.
    _e(
        98,
        "cudaErrorInvalidDeviceFunction",
        "CUDA_ERROR_INVALID_DEVICE_FUNCTION",
        "invalid device function",
        "arch_unsupported",
    ),
    _e(100, "cudaErrorNoDevice", "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected", "no_device"),
    # libcuda.so is the toolkit's link-time stub (lib64/stubs on the library path), not the driver's.
    _e(34, "cudaErrorStubLibrary", "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library", "no_device"),
    # The runtime calls an entry point the installed driver does not have (runtime newer than driver);
    # the runtime-only error has no driver enum of its own.
    _e(
        36,
        "cudaErrorCallRequiresNewerDriver",
        "cudaErrorCallRequiresNewerDriver",
        "API call is not supported in the installed CUDA driver",
        "driver_too_old",
    ),
    # PTX of a newer toolkit than the driver's JIT understands (a wheel or extension built with a newer
    # CUDA than the driver supports).
    _e(
        222,
        "cudaErrorUnsupportedPtxVersion",
        "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
        "the provided PTX was compiled with an unsupported toolchain",
        "driver_too_old",
    ),
    # A kernel image the driver cannot load (CUDA_ERROR_INVALID_IMAGE): code of a newer toolchain than this
    # driver, as Triton's bundled ptxas makes it ("Triton Error [CUDA]: device kernel image is invalid" under
    # a driver older than that ptxas; TRITON_PTXAS_PATH or a newer driver fix it) or NCCL / an extension
    # built by a newer CUDA than the driver's.
    _e(
        200,
        "cudaErrorInvalidKernelImage",
        "CUDA_ERROR_INVALID_IMAGE",
        "device kernel image is invalid",
        "driver_too_old",
    ),
    # Exclusive-thread compute mode: another thread holds the device (the driver's 216 is the context's).
    _e(
        216,
        "cudaErrorDeviceAlreadyInUse",
        "CUDA_ERROR_CONTEXT_ALREADY_IN_USE",
        "exclusive-thread device already in use by a different thread",
        "no_device",
    ),
    # A vGPU (GRID) whose licence the guest driver could not check out: the device refuses work.
    _e(
        102,
        "cudaErrorDeviceNotLicensed",
        "CUDA_ERROR_DEVICE_NOT_LICENSED",
        "device doesn't have valid Grid license",
        "no_device",
    ),
    # The runtime's own start-up (its self-tests against the driver) failed.
    _e(
        127,
        "cudaErrorStartupFailure",
        "cudaErrorStartupFailure",
        "startup failure in cuda runtime",
        "init_failed",
    ),
    # An OS call of the driver failed: WSL without the GPU paravirtualisation, a sandbox (snap, gVisor)
    # that hides the device nodes; torch prints it as "Error 304: ..." from cudaGetDeviceCount().
    _e(
        304,
        "cudaErrorOperatingSystem",
        "CUDA_ERROR_OPERATING_SYSTEM",
        "OS call failed or operation not supported on this OS",
        "init_failed",
    ),
    # The driver's JIT could not compile the PTX it was given: PTX of a newer toolkit (or a newer PTX ISA
    # version) than the driver reads, as a wheel, Triton or CuPy built for a newer CUDA hands it; CuPy and
    # the driver API word it CUDA_ERROR_INVALID_PTX.
    _e(
        218,
        "cudaErrorInvalidPtx",
        "CUDA_ERROR_INVALID_PTX",
        "a PTX JIT compilation failed",
        "driver_too_old",
    ),
    # CUDA_DISABLE_PTX_JIT=1 (or the application's JIT option) with a binary that carries only PTX for this
    # GPU: no code runs on it without the JIT.
    _e(
        223,
        "cudaErrorJitCompilationDisabled",
        "CUDA_ERROR_JIT_COMPILATION_DISABLED",
        "PTX JIT compilation was disabled",
        "arch_unsupported",
    ),
    # A module's code object could not be loaded for this device: on ROCm the classic of a GPU whose gfx
    # target the build has no code for (a consumer card or an APU's iGPU seen as a second device, fixed by
    # HSA_OVERRIDE_GFX_VERSION or HIP_VISIBLE_DEVICES), as torch ("HIP error: shared object initialization
    # failed"), composable_kernel ("HIP Function Failed (...) shared object initialization failed") and
    # hipModuleLoadData (hipErrorSharedObjectInitFailed, 303) print it.
    _e(
        303,
        "cudaErrorSharedObjectInitFailed",
        "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED",
        "shared object initialization failed",
        "arch_unsupported",
    ),
    _e(
        221,
        "cudaErrorJitCompilerNotFound",
        "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
        "PTX JIT compiler library not found",
        "jit_missing",
    ),
    # Multi-Process Service: the client could not reach the control daemon or server, or was dropped.
    _e(
        805,
        "cudaErrorMpsConnectionFailed",
        "CUDA_ERROR_MPS_CONNECTION_FAILED",
        "MPS client failed to connect to the MPS control daemon or the MPS server",
        "mps",
    ),
    _e(
        806,
        "cudaErrorMpsRpcFailure",
        "CUDA_ERROR_MPS_RPC_FAILURE",
        "the remote procedural call between the MPS server and the MPS client failed",
        "mps",
    ),
    _e(
        807,
        "cudaErrorMpsServerNotReady",
        "CUDA_ERROR_MPS_SERVER_NOT_READY",
        "MPS server is not ready to accept new MPS client requests",
        "mps",
    ),
    _e(
        808,
        "cudaErrorMpsMaxClientsReached",
        "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED",
        "the hardware resources required to create MPS client have been exhausted",
        "mps",
    ),
    _e(
        809,
        "cudaErrorMpsMaxConnectionsReached",
        "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED",
        "the hardware resources required to support device connections have been exhausted",
        "mps",
    ),
    _e(
        810,
        "cudaErrorMpsClientTerminated",
        "CUDA_ERROR_MPS_CLIENT_TERMINATED",
        "the MPS client has been terminated by the server",
        "mps",
    ),
    _e(
        802,
        "cudaErrorSystemNotReady",
        "CUDA_ERROR_SYSTEM_NOT_READY",
        "system not yet initialized",
        "not_ready",
    ),
    _e(
        803,
        "cudaErrorSystemDriverMismatch",
        "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
        "system has unsupported display driver / cuda driver combination",
        "driver_too_old",
    ),
    _e(
        804,
        "cudaErrorCompatNotSupportedOnDevice",
        "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
        "forward compatibility was attempted on non supported HW",
        "driver_too_old",
    ),
)

_BY_NAME = {n: e for e in CUDA_ERRORS for n in (e.runtime_name, e.driver_name) if e.number != 999}
# ROCm's HIP runtime mirrors cudart's numbers under its own enum names, and HIP before ROCm 5 answered
# hipGetErrorString with the name itself (torch then prints "HIP error: hipErrorNoBinaryForGpu").
_HIP_NAMES = {
    "hipErrorNotInitialized": 3,
    "hipErrorInitializationError": 3,
    "hipErrorInsufficientDriver": 35,
    "hipErrorInvalidDeviceFunction": 98,
    "hipErrorNoDevice": 100,
    "hipErrorNoBinaryForGpu": 209,
    "hipErrorPeerAccessUnsupported": 217,
    "hipErrorSharedObjectInitFailed": 303,
    # hip_error.cpp (clr, ROCm 5.x-6.x): 200 "device kernel image is invalid", 216 "exclusive-thread device
    # already in use by a different thread", 304 "OS call failed or operation not supported on this OS", 500
    # "named symbol not found": cudart's numbers and texts under HIP's names
    "hipErrorInvalidImage": 200,
    "hipErrorContextAlreadyInUse": 216,
    "hipErrorOperatingSystem": 304,
    "hipErrorNotFound": 500,
}
# hipGetErrorString's texts (ROCm 5.3+, clr hip_error.cpp) where they differ from cudart's: torch prints
# "HIP error: no ROCm-capable device is detected", RCCL's CUDACHECK "Cuda failure 'no ROCm-capable device is
# detected'".
_HIP_TEXTS = {
    "no ROCm-capable device is detected": 100,
    "driver version is insufficient for runtime version": 35,
}
# cudaErrorPeerAccessUnsupported's message as threads' titles and retyped lines word it ("peer access is not
# supported between two devices", TensorRT-LLM#1499's title): the runtime's words less or other than "these";
# no healthy line says that two devices' peer access is not supported.
_RETYPED_TEXTS = {
    "peer access is not supported between two devices": 217,
    "peer access is not supported between the two devices": 217,
    "peer access not supported between these two devices": 217,
}
# Every text beside the table's own messages, each with the number whose entry it names.
_OTHER_TEXTS = {**_HIP_TEXTS, **_RETYPED_TEXTS}
_BY_NUMBER = {e.number: e for e in CUDA_ERRORS}
_BY_NAME.update({n: _BY_NUMBER[number] for n, number in _HIP_NAMES.items()})
_BY_TEXT = {e.message.lower(): e for e in CUDA_ERRORS}
_BY_TEXT.update({t.lower(): _BY_NUMBER[number] for t, number in _OTHER_TEXTS.items()})
_NAME_RE = lazy_re.compile(r"\b(" + "|".join(sorted(_BY_NAME, key=len, reverse=True)) + r")\b")
# Every message but the generic "initialization error" is distinctive wherever it stands: "CUDA
# error: system not yet initialized", "Error 802: ...", torch 0.4-1.x "cuda runtime error (35) :
# CUDA driver version is insufficient ..." (numbers changed in CUDA 10.1: 38 was no device then).
_DISTINCT_RE = lazy_re.compile(
    "|".join(
        re.escape(t)
        for t in sorted(
            {e.message for e in CUDA_ERRORS if e.message != "initialization error"} | set(_OTHER_TEXTS),
            key=len,
            reverse=True,
        )
    ),
    re.I,
)
# torch's C10_CUDA_DRIVER_CHECK says "CUDA driver error: initialization error" (cuGetErrorString of
# CUDA_ERROR_NOT_INITIALIZED), Triton's launcher "Triton Error [CUDA]: initialization error".
# NCCL's CUDACHECK quotes it as "Cuda failure 3 'initialization error'" (2.x) or "Cuda failure
# 'initialization error'" (older); nccl-tests' CUDACHECK as "Test CUDA failure common.cu:892 'initialization
# error'" (the source location between). PaddlePaddle's enforce (phi/core/enforce.h build_nvidia_error_msg,
# 2.0+) as "ExternalError: CUDA error(3), initialization error." ("OSError: (External) CUDA error(3), ...").
_GENERIC_RE = lazy_re.compile(
    r"(?:CUDA(?: driver)? error|HIP error|cuda runtime error \(\d+\)|Error \d{1,4}|with error|"
    r"Triton Error \[CUDA\])\s*:\s*"
    r"initialization error|(?:CUDA|HIP) error\(3\),\s*initialization error|"
    r"Cuda failure (?:3 )?'initialization error'|CUDA failure \S+:\d+:? 'initialization error'"
)


_DISTINCT_LOWER = tuple(
    sorted(
        {e.message.lower() for e in CUDA_ERRORS if e.message != "initialization error"}
        | {t.lower() for t in _OTHER_TEXTS}
    )
)
# What a line needs (lower case) for find_cuda_error to find anything in it.
CUDA_ERROR_WORDS = (
    "cudaerror",
    "cuda_error_",
    "hiperror",
    "initialization error",
    "getdevicecount()",
    "cuda failure ",
    "cuda error 80",
    "cuda runtime error (80",
    *_DISTINCT_LOWER,
)


# 999 (cudaErrorUnknown) where torch discovers the devices (c10/cuda/CUDAFunctions.cpp's device_count_impl:
# "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling
# NumCudaDevices() that might have already set an error? Error 999: unknown error", raised by _lazy_init,
# wrapped by DeferredCudaCallError, or warned by is_available()): no context could be made at all, the
# environment's failure (nvidia_uvm not loaded, a container without the device nodes, a driver left broken
# by a suspend or an upgrade), not a fault of a device that ran kernels.
# Any other number there that the table does not hold is the same failure of device discovery, kept with
# its own number and text (ROCm builds print hipGetDeviceCount() and the HIP enum name for the text).
_DISCOVERY_RE = lazy_re.compile(
    r"(?:cuda|hip)GetDeviceCount\(\)[^\n]*?\bError (\d{1,4}): ([^\n]+?)\s*(?:\(Triggered internally|$)"
)


def _discovery_error(number: int, message: str) -> Optional[CudaError]:
    """The error torch's device discovery reports: the table's entry where it names this number and
    message (or HIP enum name), else an initialisation failure under the number and text it printed.
    101 (invalid device ordinal: CUDA_VISIBLE_DEVICES names a device that is not there) is read by the
    device-visibility rows, as everywhere else."""
    if number == 101:
        return None
    known = _BY_NAME.get(message.strip()) or _BY_TEXT.get(message.strip().lower())
    if known is not None:
        return known
    if number == 999:
        return _BY_NUMBER[999]
    return CudaError(number, "cudaGetDeviceCount", "cudaGetDeviceCount", message.strip(), "init_failed")


# NCCL's CUDACHECK and CUCHECK (2.19+) put the number before the message: "Cuda failure 217 'peer access is
# not supported between these two devices'" (runtime and driver agree on the numbers this table holds). The
# number decides where a paste retyped the message's end ("... is not support between ..."), the message's
# first words agreeing with the table's (a number alone may be another API's code); 999 says too little.
_NUMBERED_RE = lazy_re.compile(r"[Cc]uda failure (\d{1,4}) '([^'\n]{8,})")


def _numbered(number: int, message: str) -> Optional[CudaError]:
    low = message.lower()
    for known in CUDA_ERRORS:
        if known.number == number != 999 and low.startswith(" ".join(known.message.lower().split()[:3])):
            return known
    return None


# A title or a retyped line names the error by CUDA's number alone, after the word CUDA ("CUDA Error 802 on
# all H200 multi-GPU jobs", "cuda error 803 after the driver update"). Only the numbers 802-804 (the system's
# readiness and the driver combination, CUDA 10+): the low numbers are every other API's codes too and have
# moved between CUDA releases, and 800-801 are a program's own mistakes.
_CUDA_NUMBER_RE = lazy_re.compile(r"(?i)\bcuda(?: runtime)? error\W{0,3}(80[234])\b")


def find_cuda_error(text: str) -> Optional[CudaError]:
    """The environment-kind CUDA error named in a line, by enum name or by message."""
    # Plain substring tests first: every line of a window passes through here, and the three
    # expressions (alternations without a literal start) cost 12 us a line where these cost 1.
    # Outside ASCII, case-insensitive matching is wider than str.lower(): the expression decides.
    if "GetDeviceCount()" in text:
        d = _DISCOVERY_RE.search(text)
        found = _discovery_error(int(d.group(1)), d.group(2)) if d else None
        if found is not None:
            return found
    if "cudaError" in text or "CUDA_ERROR_" in text or "hipError" in text:
        m = _NAME_RE.search(text)
        if m:
            return _BY_NAME[m.group(1)]
    if "uda failure " in text:
        n = _NUMBERED_RE.search(text)
        if n is not None:
            known = _numbered(int(n.group(1)), n.group(2))
            if known is not None:
                return known
    low = text.lower()
    if not text.isascii() or any(msg in low for msg in _DISTINCT_LOWER):
        m = _DISTINCT_RE.search(text)
        if m:
            return _BY_TEXT.get(m.group(0).lower())
    if "initialization error" in text and _GENERIC_RE.search(text):
        return _BY_TEXT["initialization error"]
    if "80" in text:
        c = _CUDA_NUMBER_RE.search(text)
        if c is not None:
            return _BY_NUMBER[int(c.group(1))]
    return None
