"""loader: the dynamic loader's words for the GPU training stack: a library that cannot be opened, a
symbol (or a symbol version) that a loaded library lacks.

Formats (glibc's dlerror as Python's ImportError / OSError, ctypes and the C++ loaders print it):
"libnccl.so.2: cannot open shared object file: No such file or directory"; "/x/torch/lib/libtorch_cuda.so:
undefined symbol: ncclCommRegister" (an older libnccl first on the path); "flash_attn_2_cuda.cpython-310-
x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi" (an extension built against another
torch); "/lib64/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by .../libtorch_python.so)";
vLLM's "Failed to load NCCL library from libnccl.so.2"; torch7's nccl.torch "'libnccl.so not found in library
path."; Paddle's "The third-party dynamic library (libnccl.so) that Paddle depends on is not configured
correctly."; Cray MPICH's "GPU_SUPPORT_ENABLED is requested, but GTL library is not linked". All RUN263
(RUN195 for a missing nccl* symbol,
read first by nccl_errors). Harmless probes stay silent: NCCL's optional plugins (libnccl-net.so,
-tuner, -profiler, -env, -gin: "NET/Plugin", "TUNER/Plugin", ...), a loader error quoted inside a
warning (torchvision's image extension, TensorFlow's dso_loader), and errors of libraries outside the
training stack (libffi under p11-kit, numpy's, the interpreter's): a broken Python environment
elsewhere, not the distributed job's platform.
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader, read
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

# The dynamic loader's words (dlerror) for a library of the GPU stack: NVIDIA's (libcuda, libcudart,
# libcublas, libcudnn*, libcusolver, libnvrtc, libnvidia-ml, libnvToolsExt, ...), NCCL's and torch's
# own libraries (libtorch, libtorch_cuda, libtorch_python, libc10, libc10_cuda, libcaffe2_nvrtc: an extension
# such as Horovod's mpi_lib or a custom op loaded without the torch it was built against). NCCL's probe of its
# optional net plugin (libnccl-net*.so) is harmless and excluded by the row. The MPI library of an MPI
# job (libmpi.so.40 / .12, libmpich, libmpi_cxx: mpi4py 4.x's "RuntimeError: cannot load MPI library" lists
# one such line per name it tried, src/mpi4py/_mpiabi.py; Horovod's mpi_lib the same) is the job's
# communication library as NCCL's is. The other accelerators' runtimes and collectives alike: ROCm's (HIP's
# libamdhip64, libhip*, libhsa-runtime64, RCCL, MIOpen, rocBLAS and the roc* libraries torch's ROCm wheels
# link), Ascend's (libhccl, libascendcl: torch_npu), Intel's (Level Zero's libze_loader, oneCCL's libccl).
_LIB = lazy_re.compile(
    r"(lib(?:nccl[\w-]*|cu\w*|nv[\w-]*|torch\w*|c10\w*|caffe2\w*|cudnn\w*|mpi(?:ch)?(?:_cxx)?|"
    r"rccl\w*|amdhip64|hip(?:blas|sparse|fft|rand|solver|rtc)\w*|hsa-runtime64|MIOpen\w*|"
    r"roc(?:blas|solver|rand|fft|sparse|tx64|m_smi64|profiler\w*|tracer\w*)|hccl\w*|ascendcl\w*|ze_loader|ccl)"
    r"\.so(?:\.[\d.]+)?)\s*:\s*cannot open shared object file"
)
# The loader found the library but not a symbol (or a symbol version) it needs: two parts of the stack
# built against different versions (torch vs its libnccl/libcudart/libcudnn, an extension vs torch).
# The path is tried from the start of a run of [^\s:'"] only, the bare name from a start of a run of
# [\w.+-] not after a "/": where the leftmost match of "(?:[^\s:'"]*/)?[\w.+-]+" starts anyway (a
# match after such a character extends back over it). Without these, search was quadratic in a run.
_UNDEFINED = lazy_re.compile(
    r"(?:((?:(?<![^\s:'\"])[^\s:'\"]*/|(?<![\w.+/-]))[\w.+-]+\.so(?:\.[\d.]+)?): |"
    # the exception with the library's path cut off (a paste or title keeps the type and the symbol:
    # "OSError: undefined symbol: _ZN2at6detail20computeStorageNbytes...")
    r"\b(?:ImportError|OSError): )"
    r"undefined symbol: (\S+?)(?:,|$|\s)"
)
_SYMBOL_VERSION = lazy_re.compile(
    r"version [`'‘]((?:GLIBC|GLIBCXX|CXXABI|CUDNN|libcudart)\w*[\d.]*)' not found"
    r"(?: \(required by ([^)\s]+))?"
)
# Which loader errors belong to the GPU training stack (driver_env) and which are a plain Python
# environment broken elsewhere (libffi under p11-kit, an extension of numpy or of the interpreter: no
# failure of the distributed job's platform, silent like the corpora's decoys): the library's path or
# the symbol names torch, CUDA, NCCL, cuDNN, NVIDIA's wheels or a known CUDA extension, or the symbol
# is a C++ name of torch's own namespaces (c10, at, torch, caffe2) or a CUDA/NCCL entry point.
_GPU_STACK_PATH = lazy_re.compile(
    r"torch|cuda|cudnn|cublas|cusparse|cufft|curand|cusolver|nccl|nvidia|nvrtc|nvjitlink|c10|caffe2|triton|"
    r"flash_attn|apex|deepspeed|xformers|bitsandbytes|vllm|transformer_engine|megatron|mmcv|detectron2|"
    r"causal_conv1d|selective_scan|mamba|fbgemm|torchrec|flashinfer|sgl_kernel|spconv|pytorch3d|"
    # the other stacks' own extensions (jaxlib's xla_extension, TensorFlow's pywrap, Paddle's core, MXNet's
    # libmxnet, Horovod's mpi_lib, torch_npu, Habana's and oneCCL's bindings)
    r"jaxlib|xla_extension|tensorflow|paddle|mxnet|horovod|torch_npu|habana|oneccl|"
    # ROCm's and Ascend's own libraries
    r"rocm|rccl|amdhip|miopen|hipblas|hccl|ascend",
    re.I,
)
# (c10d: torch.distributed's namespace, "_ZN4c10d23ncclGetErrorWithVersionE12ncclResult_t" in an fbgemm_gpu
# built against another torch; a mangled name whose function is an NCCL / CUDA one.)
_GPU_STACK_SYMBOL = lazy_re.compile(
    r"(?:nccl|cu[A-Z]|cublas|cudnn|cuda|nvrtc)|_ZN[KS]?\d*(?:c10d?|at|torch|caffe2)\d|"
    r"_ZN[KS]?\d+\w{1,40}?\d+(?:nccl|cuda|cublas|cudnn)"
)
# A loader of the framework's own that searched for the library and says so: torch7's nccl.torch
# ("nccl/ffi.lua:195: 'libnccl.so not found in library path."), and the same words of other wrappers
# ("libcudnn.so.8 is not found"). libcuda.so, the driver's, is driver_env's (no driver).
_NOT_FOUND = lazy_re.compile(
    r"\b(lib(?:nccl[\w-]*|cu(?!da\.so)\w*|nv[\w-]*|cudnn\w*)\.so(?:\.[\d.]+)?)'? (?:is )?not found\b"
)
# torch/__init__.py's _preload_cuda_deps (1.13-2.x, the pip wheels that take CUDA from nvidia-* packages): it
# globs each library in sys.path's nvidia/ folders and raises "ValueError: libcublas.so.*[0-9] not found in
# the system path [...]" (libnvrtc.so.*[0-9].*, libcudnn.so.*[0-9], libnccl.so.*[0-9],
# libnvJitLink.so.*[0-9]): the nvidia-* wheel is missing or of another layout than this torch expects.
_PRELOAD = lazy_re.compile(r"\b(lib[\w-]+\.so)[.*\[\]0-9-]* not found in the system path")
# Triton's driver lookup (triton/backends/nvidia/driver.py, 2.1-3.x libcuda_dirs): "AssertionError: libcuda.so
# cannot found!" when `ldconfig -p` lists no libcuda.so.1 and LD_LIBRARY_PATH holds none (a container whose
# linker cache misses the mounted driver: ldconfig or TRITON_LIBCUDA_PATH fix it); torch.compile raises it.
_TRITON_LIBCUDA = lazy_re.compile(r"(libcuda\.so) cannot found")
# cuBLAS loading its own libcublasLt and missing an entry point (libcublas and libcublasLt of two versions,
# e.g. a pip nvidia-cublas wheel beside the toolkit's): "Invalid handle. Cannot load symbol cublasLtCreate".
# cuDNN 9's own loader of its sub-libraries says it the same way ("Unable to load any of
# {libcudnn_ops.so.9.1.0, libcudnn_ops.so.9.1, libcudnn_ops.so.9, libcudnn_ops.so}" then "Invalid handle.
# Cannot load symbol cudnnCreateTensorDescriptor"; on Windows "Could not locate cudnn_ops64_9.dll"): the cuDNN
# wheel or install is incomplete or not on the library path.
_CUBLAS_SYMBOL = lazy_re.compile(r"Invalid handle\. Cannot load symbol (cu(?:blas|dnn)\w+)")
_CUDNN_SUBLIB = lazy_re.compile(
    r"Unable to load any of \{(libcudnn\w*\.so)[\d.]*|Could not locate (cudnn\w+\.dll)"
)
# Paddle's dynamic loader (paddle/fluid/platform/dynload/dynamic_loader.cc, 2.x; phi/backends/dynload since
# 2.4) when dlopen of a dependency failed: "PreconditionNotMet: The third-party dynamic library (libnccl.so)
# that Paddle depends on is not configured correctly. (error code is libnccl.so: cannot open shared object
# file ...)" with its "Suggestions: 1. Check if the third-party dynamic library (e.g. CUDA, CUDNN) is
# installed correctly ..."; on Windows "(cudnn64_8.dll) ... (error code is 126)". An optional one is logged at
# W level with the same words and Paddle goes on (silent, as the other loader warnings).
_PADDLE_DSO = lazy_re.compile(
    r"The third-party dynamic library \(([^()\s]+)\) that Paddle depends on is not configured"
)
# Cray MPICH (MPIDI_CRAY_init, 8.x) with MPICH_GPU_SUPPORT_ENABLED=1 in a program not linked with its GPU
# transport layer (libmpi_gtl_cuda / _hsa: the craype-accel-* module not loaded at build time): "MPICH
# ERROR [Rank 0] ... Abort(-1) (rank 0 in comm 0): MPIDI_CRAY_init: GPU_SUPPORT_ENABLED is requested, but GTL
# library is not linked".
# MindSpore's GPU collective (ccsrc/device/gpu/distribution/collective_init.cc, 0.x-2.x): "Loading
# libgpu_collective.so failed. Many reasons could cause this:" then "1.libgpu_collective.so is not installed.
# 2.nccl is not installed or found. 3.mpi is not installed or found" (dlopen of its NCCL/MPI wrapper failed).
_MINDSPORE_COLLECTIVE = lazy_re.compile(
    r"Loading (lib[\w-]+\.so[\d.]*) failed\. Many reasons could cause this"
)
_CRAY_GTL = lazy_re.compile(r"GPU_SUPPORT_ENABLED is requested, but GTL library is not linked")
_LOAD_FAILED = lazy_re.compile(r"Failed to load NCCL library from (\S+?)\s?\.?(?:\s|$)")
# XLA's dlopen of NCCL (xla/service/gpu nccl loader, JAX and TF): "Unable to load NCCL library. Multi-GPU
# collectives will not work.", raised through the first NCCL call ("NCCL operation ncclGetUniqueId(&id)
# failed: Unable to load NCCL library") or logged at W level when no collective needs it (then silent).
_XLA_NO_NCCL = lazy_re.compile(r"Unable to load (NCCL|RCCL) library")
# vLLM 0.4.0's pynccl.py binds the NCCL functions as module globals only when ctypes.CDLL(libnccl) succeeded
# (it logs "Failed to load NCCL library" and goes on): the first call then raises "NameError: name
# 'ncclGetVersion' is not defined" (ncclGetUniqueId, ncclCommInitRank, ...), often the only line a report
# keeps. The library could not be opened (missing, another CUDA's, VLLM_NCCL_SO_PATH wrong).
_NCCL_UNBOUND = lazy_re.compile(r"NameError: name '(nccl[A-Z]\w*)' is not defined")


# A loader error quoted inside a warning is an optional part that was skipped and the program went on
# (torchvision's "UserWarning: Failed to load image Python extension: ... undefined symbol ...",
# bitsandbytes' and xFormers' probes): not a failure. Raised, the same words are one ("ImportError:",
# "OSError:", a bare line of a traceback).
# TensorFlow's dso_loader probes at W level ("W tensorflow/.../dso_loader.cc:64] Could not load dynamic
# library 'libcudart.so.11.0'; dlerror: ...", then "Ignore above cudart dlerror if you do not have a GPU")
# when it is imported as a side dependency; XLA's and absl's W-level lines
# ("...: W external/xla/.../x.cc:90]").
_WARNED = lazy_re.compile(
    r"\w*Warning\b|\bWARNING\b|^\s*\[?W\d{4}|\bwarn\(|[Ff]ailed to load image Python extension|"
    r"(?:^|\s)W tensorflow/|(?:^|\s)W \S+\.cc:\d+\]|Could not load dynamic library '"
)


def _loader_warned(hit: Hit) -> bool:
    if _WARNED.search(hit.text):
        return True
    nxt = hit.after(1, same_rank=False)  # Python's warnings module prints "  warn(" under the message
    return bool(nxt) and nxt[0].text.strip().startswith(("warn(", "warnings.warn("))


# torch/__init__.py on Windows (_load_dll_libraries) appends to ctypes' WinError: "OSError: [WinError 126] The
# specified module could not be found. Error loading "C:\...\torch\lib\c10_cuda.dll" or one of its
# dependencies." (127 a procedure missing, 1114 a DLL's init failed, 193 not a valid Win32 application).
# 1455 "The paging file is too small" is the host's memory, not a missing library: not this row.
_WIN_DLL = lazy_re.compile(
    r"\[WinError (126|127|1114|193)\][^\n]*?Error loading \"([^\"]+\.dll)\" or one of its dependencies"
)


# CPython's ctypes on Windows (3.8+, Modules/_ctypes/callproc.c load_library): "FileNotFoundError: Could not
# find module 'C:\\...\\torch\\lib\\nccl.dll' (or one of its dependencies). Try using the full path with
# constructor syntax."; its extension loader (Python/dynload_win.c): "ImportError: DLL load failed while
# importing _C: The specified module could not be found." (3.8+; "DLL load failed: ..." before), read where
# the line or the frames above it name the GPU stack. torch.ops.load_library's "File fbgemm_gpu_py.so not
# found" (fbgemm_gpu and torchrec print it from their __init__ and go on to fail at the first op).
_CTYPES_MODULE = lazy_re.compile(r"Could not find module '([^']+)' \(or one of its dependencies\)")
_DLL_LOAD = lazy_re.compile(r"DLL load failed(?: while importing (\w+))?: ")
_FILE_NOT_FOUND = lazy_re.compile(r"^\s*File (\S+\.(?:so|dll|pyd|dylib)(?:\.[\d.]+)?) not found\.?\s*$")


def _dll(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if _loader_warned(hit):
        return []
    near = " ".join(ln.text for ln in [*hit.before(8, same_rank=False), hit.line])
    target = m.group(1) or ""
    if not (_GPU_STACK_PATH.search(target) or _GPU_STACK_PATH.search(near)):
        return []
    lib = target.replace("\\", "/").rsplit("/", 1)[-1] or "a DLL"
    return [
        row.event(
            hit,
            f"{lib} could not be loaded (it, or a library it needs, is missing or of another build)",
            {"library": lib},
            dedupe=(row.code, lib),
        )
    ]


# NCCL's optional plugins (plugin/plugin_open.cc: NET, GIN, TUNER, PROFILER, ENV; collnet in 2.x): it
# probes libnccl-<kind>.so and goes on without it ("NET/Plugin: Could not find: libnccl-net.so", "TUNER/
# Plugin: libnccl-tuner.so: cannot open shared object file ...", 2.3's "Unable to load libnccl-net.so").
_OPTIONAL_PLUGIN = lazy_re.compile(r"libnccl-(?:net|gin|tuner|profiler|env|coll)")
_PLUGIN_PROBE = lazy_re.compile(r"\b(?:NET|GIN|TUNER|PROFILER|ENV)/Plugin\b")


# Open MPI's help message when its CUDA-aware support finds no libcuda (opal/mca/common/cuda,
# help-mpi-common-cuda.txt "dlopen failed"): "The library attempted to open the following supporting CUDA
# libraries, / but each of them failed.  CUDA-aware support is disabled." then one dlerror per path, then
# "--mca opal_warn_on_missing_libcuda 0 to suppress this message". MPI goes on without it (Horovod and
# mpirun-launched jobs on CPU nodes, or GPU jobs whose collectives are NCCL's): a warning, not a failure.
_MPI_CUDA_PROBE = lazy_re.compile(r"CUDA-aware support is disabled|opal_warn_on_missing_libcuda")


def _mpi_cuda_probe(hit: Hit) -> bool:
    near = [*hit.before(8, same_rank=False), *hit.after(8, same_rank=False)]
    return any(_MPI_CUDA_PROBE.search(ln.text) for ln in near)


# vLLM (0.4.1+) logs "Failed to load NCCL library" at ERROR and goes on without its own NCCL wrapper (the
# message adds "It is expected if you are not running on NVIDIA/AMD GPUs"; torch.distributed's NCCL does
# the collectives): when the engine then sized its KV cache or served, or runs on one GPU, the line was no
# failure.
_ENGINE_WENT_ON = lazy_re.compile(
    r"# (?:GPU|CPU) blocks: \d+|Avg prompt throughput|Application startup complete|Uvicorn running on|"
    r"Processed prompts: 100%"
)


# The engine's own configuration record after it ("Initializing an LLM engine (v0.4.0) with config: ...,
# tensor_parallel_size=1, ..."): one GPU, no collective, so its NCCL wrapper is never needed.
_ONE_GPU_ENGINE = lazy_re.compile(r"\btensor_parallel_size=1\b")
_MANY_STAGES = lazy_re.compile(r"\bpipeline_parallel_size=(?:[2-9]|\d\d)")


def _engine_went_on(hit: Hit) -> bool:
    after = hit.after(400, same_rank=False)
    if any(_ENGINE_WENT_ON.search(ln.text) for ln in after):
        return True
    return any(_ONE_GPU_ENGINE.search(ln.text) and not _MANY_STAGES.search(ln.text) for ln in after)


def _library(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if _OPTIONAL_PLUGIN.search(m.group(1)) or _PLUGIN_PROBE.search(hit.text):
        return None  # NCCL probing its optional network plugin: harmless, it falls back
    if _loader_warned(hit) or _mpi_cuda_probe(hit):
        return []
    if row.pattern is _LOAD_FAILED and _engine_went_on(hit):
        return []
    return [
        row.event(
            hit,
            f"{m.group(1)} could not be loaded (not installed or not on the library path)",
            {"library": m.group(1)},
            dedupe=(row.code, m.group(1)),
        )
    ]


def _cray_gtl(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "Cray MPICH was asked for GPU buffers (MPICH_GPU_SUPPORT_ENABLED=1) but the program is not "
            "linked with its GPU transport layer (libmpi_gtl_cuda): load the craype-accel-* module and "
            "rebuild, or unset MPICH_GPU_SUPPORT_ENABLED",
            {"library": "libmpi_gtl", "reason": "gtl_not_linked"},
            dedupe=(row.code, "libmpi_gtl"),
        )
    ]


def _nccl_unbound(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"NCCL's function {m.group(1)} was never bound: the program could not load libnccl (vLLM's "
            "pynccl logs 'Failed to load NCCL library' first); install it or point VLLM_NCCL_SO_PATH at it",
            {"library": "libnccl", "symbol": m.group(1)},
            dedupe=(row.code, "libnccl"),
        )
    ]


def _cudnn_event(row: Signature, hit: Hit, lib: str) -> list[Event]:
    return [
        row.event(
            hit,
            f"cuDNN could not load its part {lib} (an incomplete cuDNN install or wheel, or another cuDNN "
            "first on the library path)",
            {"library": lib},
            dedupe=(row.code, "libcudnn"),
        )
    ]


def _cudnn_sublib(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return _cudnn_event(row, hit, m.group(1) or m.group(2))


def _cublas_symbol(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group(1).startswith("cudnn"):
        return _cudnn_event(row, hit, "libcudnn")
    return [
        row.event(
            hit,
            f"cuBLAS could not load {m.group(1)} from libcublasLt: libcublas and libcublasLt of different "
            "versions (a pip CUDA wheel beside another toolkit on the library path)",
            {"library": "libcublasLt", "symbol": m.group(1), "reason": "undefined_symbol"},
            dedupe=(row.code, "libcublasLt"),
        )
    ]


def _win_dll(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    path = m.group(2)
    if not _GPU_STACK_PATH.search(path):
        return []
    dll = path.replace("\\", "/").rsplit("/", 1)[-1]
    why = {"126": "it or a DLL it needs is missing", "127": "a procedure it needs is missing"}.get(
        m.group(1), "it could not be initialised"
    )
    return [
        row.event(
            hit,
            f"Windows could not load {dll} ({why}, WinError {m.group(1)}): a CUDA runtime or Visual C++ "
            "redistributable missing, or a torch build that does not match them",
            {"library": dll, "win_error": int(m.group(1))},
            dedupe=(row.code, dll),
        )
    ]


def _undefined(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if _loader_warned(hit):
        return []
    path = m.group(1) or ""
    if not (_GPU_STACK_PATH.search(path) or _GPU_STACK_SYMBOL.match(m.group(2))):
        return []  # another part of the Python environment: not the training stack's
    lib = path.rsplit("/", 1)[-1] or "a library"
    return [
        row.event(
            hit,
            f"{lib} was loaded but lacks the symbol {clip(m.group(2), 80)}: it was built against another "
            "version of the library or of PyTorch than the one installed (reinstall the matching build)",
            {"library": lib, "symbol": m.group(2), "reason": "undefined_symbol"},
            dedupe=(row.code, lib),
        )
    ]


def _symbol_version(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if _loader_warned(hit):
        return []
    if m.group(2) and not _GPU_STACK_PATH.search(m.group(2)):
        return []  # required by a program or library outside the training stack
    facts = {"symbol_version": m.group(1), "reason": "symbol_version_not_found"}
    if m.group(2):
        facts["required_by"] = m.group(2).rsplit("/", 1)[-1]
    return [
        row.event(
            hit,
            f"a library needs {m.group(1)}, which the system's runtime library does not provide "
            "(a wheel or extension built on a newer system, or the wrong libstdc++ first on the path)",
            facts,
            dedupe=(row.code, m.group(1)),
        )
    ]


SIGNATURES = (
    Signature(
        "library missing",
        _LIB,
        _library,
        C.LIBRARY_MISSING.code,
        anchors=(b"shared object",),
        worth=(rb"shared object",),
        words=("cannot open shared object file",),
    ),
    Signature(
        "paddle's loader of a dependency",
        _PADDLE_DSO,
        _library,
        C.LIBRARY_MISSING.code,
        anchors=(b"that Paddle depends on",),
        words=("that paddle depends on",),
    ),
    Signature(
        "mindspore collective library not loaded",
        _MINDSPORE_COLLECTIVE,
        _library,
        C.LIBRARY_MISSING.code,
        anchors=(b"Many reasons could cause this",),
        words=("many reasons could cause this",),
    ),
    Signature(
        "cray mpich gpu transport not linked",
        _CRAY_GTL,
        _cray_gtl,
        C.LIBRARY_MISSING.code,
        anchors=(b"GTL library is not linked",),
        words=("gtl library is not linked",),
    ),
    Signature(
        "windows dll not loaded",
        _WIN_DLL,
        _win_dll,
        C.LIBRARY_MISSING.code,
        anchors=(b"WinError",),
        words=("or one of its dependencies",),
    ),
    Signature(
        "windows module not found by ctypes",
        _CTYPES_MODULE,
        _dll,
        C.LIBRARY_MISSING.code,
        anchors=(b"or one of its dependencies",),
        words=("or one of its dependencies",),
    ),
    Signature(
        "windows extension dll not loaded",
        _DLL_LOAD,
        _dll,
        C.LIBRARY_MISSING.code,
        anchors=(b"DLL load failed",),
        words=("dll load failed",),
    ),
    Signature(
        "torch.ops.load_library found no file",
        _FILE_NOT_FOUND,
        _dll,
        C.LIBRARY_MISSING.code,
        anchors=(b" not found",),
        worth=(rb"File \S+\.(?:so|dll|pyd|dylib)[\d.]* not found",),
        words=("not found",),
    ),
    Signature(
        "symbol missing from a library",
        _UNDEFINED,
        _undefined,
        C.LIBRARY_MISSING.code,
        anchors=(b"undefined symbol",),
        worth=(rb"undefined symbol",),
        words=("undefined symbol",),
    ),
    Signature(
        "symbol version missing",
        _SYMBOL_VERSION,
        _symbol_version,
        C.LIBRARY_MISSING.code,
        anchors=(b"' not found",),
        worth=(rb"' not found",),
        words=("' not found",),
    ),
    Signature(
        "library not found by a framework's loader",
        _NOT_FOUND,
        _library,
        C.LIBRARY_MISSING.code,
        anchors=(b"not found",),
        worth=(rb"\.so[\d.]*'? (?:is )?not found",),
        words=("not found",),
    ),
    Signature(
        "torch's preload of a cuda wheel",
        _PRELOAD,
        _library,
        C.LIBRARY_MISSING.code,
        anchors=(b"not found in the system path",),
        worth=(rb"not found in the system path",),
        words=("not found in the system path",),
    ),
    Signature(
        "triton finds no libcuda",
        _TRITON_LIBCUDA,
        _library,
        C.LIBRARY_MISSING.code,
        anchors=(b"cannot found",),
        worth=(rb"libcuda\.so cannot found",),
        words=("libcuda.so cannot found",),
    ),
    Signature(
        "cublas symbol not loaded",
        _CUBLAS_SYMBOL,
        _cublas_symbol,
        C.LIBRARY_MISSING.code,
        anchors=(b"Cannot load symbol",),
        worth=(rb"Cannot load symbol",),
        words=("cannot load symbol",),
    ),
    Signature(
        "cudnn part not loaded",
        _CUDNN_SUBLIB,
        _cudnn_sublib,
        C.LIBRARY_MISSING.code,
        anchors=(b"Unable to load any of {", b"Could not locate cudnn"),
        worth=(rb"Unable to load any of \{libcudnn", rb"Could not locate cudnn"),
        words=("unable to load any of {libcudnn", "could not locate cudnn"),
    ),
    Signature(
        "xla nccl load",
        _XLA_NO_NCCL,
        _library,
        C.LIBRARY_MISSING.code,
        anchors=(b"load NCCL library", b"load RCCL library"),
        worth=(rb"Unable to load [NR]CCL library",),
        words=("unable to load nccl library", "unable to load rccl library"),
    ),
    Signature(
        "nccl binding never loaded",
        _NCCL_UNBOUND,
        _nccl_unbound,
        C.LIBRARY_MISSING.code,
        anchors=(b"NameError: name 'nccl",),
        worth=(rb"NameError: name 'nccl",),
        words=("nameerror: name 'nccl",),
        examples=("NameError: name 'ncclGetVersion' is not defined",),
    ),
    Signature(
        "nccl library not loaded",
        _LOAD_FAILED,
        _library,
        C.LIBRARY_MISSING.code,
        anchors=(b"ERROR",),
        worth=(rb"\bERROR\b",),
        words=("failed to load nccl library",),
        anchor_from="vLLM's 'ERROR' log level",
        examples=(
            "ERROR 04-23 10:00:00 pynccl_wrapper.py:196] Failed to load NCCL library from libnccl.so.2 .",
        ),
    ),
)
parse = gated_reader(SIGNATURES, unless="NCCL INFO")


def detail_events(hit: Hit, text: str) -> list[Event]:
    """The rows read on NCCL's "Last error:" text (its cudawrap.cc quotes dlerror: "Failed to find CUDA
    library libcuda.so (NCCL_CUDA_PATH='') : libcuda.so: cannot open shared object file")."""
    return read(hit, SIGNATURES, text) if text else []
