"""build_fit: software built for another CUDA, another GPU or another toolchain than this one.

Formats: torch.utils.cpp_extension's CUDA_MISMATCH_MESSAGE ("The detected CUDA version (12.1) mismatches
the version that was used to compile" / "PyTorch (11.8). ..."), CUDA_HOME missing, nvcc older than the
GPU arch an extension build asks for, torchvision's and DeepSpeed's and apex's version checks, cuDNN's
version incompatibility and CUDNN_STATUS_VERSION_MISMATCH, Ninja missing for a JIT build, an xFormers
wheel without CUDA kernels (RUN296); torch's capability check ("with CUDA capability sm_86 is not
compatible with the current PyTorch installation"), NVRTC older than the GPU, CUDNN_STATUS_ARCH_MISMATCH,
inductor's Triton check, flash-attn's, transformers' and Accelerate's bf16 GPU checks, ROCm's
hipErrorNoBinaryForGpu (RUN265); bitsandbytes' CUDA set-up (RUN263). The driver and the devices themselves
are rules/driver_env.py's.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

# torch/utils/cpp_extension.py, torchvision's _cuda_version check, DeepSpeed's op builder and apex's
# setup: a CUDA toolkit (nvcc) or a companion package built for another CUDA than this PyTorch.
_TOOLKIT = lazy_re.compile(
    # cpp_extension's CUDA_MISMATCH_MESSAGE breaks its line after "compile" (the reader may join it back
    # without a space): PyTorch's version is on the next line
    r"The detected CUDA version \(([\d.]+)\) mismatches the version that was used to compile(?:\s*PyTorch"
    r"(?: \(([\d.]+)\))?)?|"
    r"CUDA_HOME environment variable is not set|CUDA_HOME does not exist, unable to compile CUDA op|"
    # nvcc of a toolkit older than the GPU arch an extension build asks for (flash-attn, apex, DeepSpeed ops)
    r"nvcc fatal\s*: (?:Unsupported gpu architecture '(?:compute|sm)_\d+a?'|"
    r"Value '(?:sm|compute)_\d+a?' is not defined for option 'gpu-architecture')|"
    # the companions' own check, the same words in torchvision, torchaudio ("PyTorch and TorchAudio"), PyG's
    # torch_scatter / torch_sparse / torch_cluster and extensions built from their template ("Extension")
    r"PyTorch and [\w.-]+ were compiled with different CUDA (?:major )?versions|"
    r"Installed CUDA version ([\d.]+) does not match the version torch was compiled with ([\d.]+)|"
    r"Cuda extensions are being compiled with a version of Cuda that does not match|"
    r"cuDNN version incompatibility: PyTorch was compiled\s+against|"
    # torch/backends/cudnn/__init__.py 0.4-1.7 before the wording above: "cuDNN version mismatch: PyTorch was
    # compiled against 7102 but linked against 7005"
    r"cuDNN version mismatch: PyTorch was compiled against \d+ but linked against|"
    # cuDNN's sub-libraries (libcudnn_ops/cnn/adv, 8.x) of different versions loaded together
    r"CUDNN_STATUS_VERSION_MISMATCH|"
    r"(?:\w+ is )?[Nn]ot compiled with (?:GPU|CUDA) support|"
    # torch.utils.cpp_extension's JIT build without its build tool; an xFormers wheel without CUDA kernels
    r"Ninja is required to load C\+\+ extensions|xFormers wasn't buil[dt] with CUDA support|"
    # flash-attn's setup.py with an nvcc older than it supports
    r"FlashAttention is only supported on CUDA [\d.]+ and above|"
    # XLA's / TensorFlow's stream executor (cuda_dnn.cc) before "DNN library initialization failed": "Loaded
    # runtime CuDNN library: 8.6.0 but source was compiled with: 8.9.4."
    r"Loaded runtime CuDNN library: ([\d.]+) but source was compiled with: ([\d.]+?)\.?(?:\s|$)|"
    # ptxas older than what it is asked for: a GPU arch newer than its CUDA (Triton's bundled ptxas on a new
    # GPU: "ptxas fatal   : Value 'sm_120a' is not defined for option 'gpu-name'"), PTX of a newer toolchain
    # ("ptxas fatal   : Unsupported .version 8.4; current version is '8.2'")
    r"ptxas fatal\s*: (?:Value '(?:sm|compute)_\d+a?' is not defined for option 'gpu-name'|"
    r"Unsupported \.version [\d.]+; current version is)|"
    # nvcc's host-compiler check (crt/host_config.h) when the system gcc is newer than the toolkit supports
    r"unsupported GNU version! gcc versions later than \d+ are not supported"
)
# torch.utils.cpp_extension's JIT build that failed (DeepSpeed's and apex's ops, flash-attn, custom kernels):
# "RuntimeError: Error building extension 'fused_adam'". The compiler's output above says why (a toolkit that
# does not fit, gcc newer than nvcc takes, headers missing); a cause read there comes first (tier 1 here).
_BUILD_FAILED = lazy_re.compile(
    r"Error building extension '([\w.-]+)'|"
    # the build step under it (cpp_extension._run_ninja_build: "subprocess.CalledProcessError: Command
    # '['ninja', '-v']' returned non-zero exit status 1.", chained before the RuntimeError above; '-j', 'N'
    # where MAX_JOBS is set), and ninja's own last line of a failed build
    r"Command '\['ninja', '-v'(?:, '-j', '\d+')?\]' returned non-zero exit status|"
    r"^\s*ninja: build stopped: subcommand failed"
)
# DeepSpeed's op builder accepting a toolkit of another minor release of the same major (builder.py 0.6+)
_DS_ACCEPTED = lazy_re.compile(r"since the APIs are compatible, accepting this combination")
# A build that failed and a framework that goes on without it (DeepSpeed >= 0.17's "FusedAdam CUDA build
# failed (...), falling back to torch.optim.AdamW")
_FELL_BACK = lazy_re.compile(r"falling back to|fall back to")
# The JIT build's product missing when it is loaded (its build failed before, or in another rank's process):
# "ImportError: /root/.cache/torch_extensions/py310_cu124/fused_adam/fused_adam.so: cannot open shared object
# file" (DeepSpeed's ops, apex/megatron kernels). DeepSpeed >= 0.17 warns "FusedAdam CUDA build failed (...),
# falling back to torch.optim.AdamW" and goes on: a warning, silent.
_JIT_SO = lazy_re.compile(r"torch_extensions/[^/\s]+/([\w.-]+)/\1\.so: cannot open shared object file")
_WARNED = lazy_re.compile(r"\w*Warning\b|\bWARNING\b|\bwarn\(")
_TORCH_CUDA_NEXT = lazy_re.compile(r"^\s*PyTorch \(([\d.]+)\)")
# torch/cuda/__init__.py's capability check (1.x: "... with CUDA capability sm_86 is not compatible
# with the current PyTorch installation"; 2.x words it the same way behind a UserWarning).
_ARCH = lazy_re.compile(
    r"with CUDA capability (sm_\d+) is not compatible with the current PyTorch installation|"
    # NVRTC (torch's JIT fusers, CuPy) of a CUDA older than the GPU: it does not know the arch it is asked for
    r"nvrtc: error: invalid value for --gpu-architecture|"
    # cuDNN without kernels for this GPU's compute capability (an old GPU under a newer cuDNN)
    # cuBLAS likewise (CUBLAS_STATUS_ARCH_MISMATCH: a data type or math mode this GPU lacks, bf16 GEMMs on a
    # pre-Ampere GPU), as torch's "CUDA error: CUBLAS_STATUS_ARCH_MISMATCH when calling `cublasGemmEx(...)`"
    r"CU(?:DNN|BLAS)_STATUS_ARCH_MISMATCH|"
    # kernels that need a newer GPU than this one: torch.compile's Triton (inductor: "Found Tesla
    # P100-PCIE-16GB which is too old to be supported by the triton GPU compiler"), flash-attn, transformers'
    # bf16 check
    r"Found (.+?) which is too old to be supported by the triton GPU compiler|"
    r"FlashAttention only supports Ampere GPUs or newer|"
    # flash-attn's kernels for large head dims (sm80/sm90 only) and vLLM's backend check for sm70/sm75
    r"FlashAttention backward for head dim > \d+ requires A100/A800 or H100/H800|"
    r"Cannot use FlashAttention-2 backend for Volta and Turing GPUs|"
    r"Your setup doesn't support bf16/gpu|"
    # Accelerate's Accelerator and `accelerate launch` (0.2x-1.x) when is_bf16_available() is False on the
    # device it got (a pre-Ampere GPU, or none): "ValueError: bf16 mixed precision requires PyTorch >= 1.10
    # and a supported device." (0.1x's "... requires PyTorch >= 1.10" alone is the torch version's, not read)
    r"bf16 mixed precision requires PyTorch >= 1\.10 and a supported device|"
    # vLLM's dtype check: "Bfloat16 is only supported on GPUs with compute capability of at least 8.0."
    r"Bfloat16 is only supported on GPUs with compute capability of at least|"
    r"hipErrorNoBinaryForGpu: Unable to find code object for all current devices|"
    # rocBLAS (ROCm's torch) without Tensile kernels for this GPU's gfx target (an unsupported consumer or APU
    # GPU; HSA_OVERRIDE_GFX_VERSION is the usual workaround): "rocBLAS error: Cannot read
    # .../TensileLibrary.dat: No such file or directory for GPU arch : gfx1103", then rocblas_abort()
    r"rocBLAS error: Cannot read \S*TensileLibrary\S*(?:.*?for GPU arch : (gfx\w+))?"
)
# bitsandbytes' loader found no usable libbitsandbytes_cuda*.so / libcudart for the GPU it sees.
_BNB_SETUP = lazy_re.compile(r"CUDA Setup failed despite GPU being available")


def _toolkit(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group(3) and any(
        "DS_SKIP_CUDA_CHECK" in ln.text or _DS_ACCEPTED.search(ln.text)
        for ln in [hit.line, *hit.after(1, False)]
    ):
        # DeepSpeed's op builder (op_builder/builder.py 0.6-0.19) saying DS_SKIP_CUDA_CHECK=1 lets it go
        # on with the mismatch, or that the two CUDA releases are of one major whose APIs it knows to be
        # compatible ("... but since the APIs are compatible, accepting this combination"): a note of a
        # choice made, not the failure (a healthy run prints it too)
        return []
    facts: dict[str, Any] = {"reason": "cuda_toolkit_mismatch"}
    if m.group(5):
        facts.update(library="cudnn", runtime_cudnn=m.group(5), built_cudnn=m.group(6))
        return [
            row.event(
                hit,
                f"the cuDNN loaded at run time ({m.group(5)}) is older than the one this framework was built "
                f"with ({m.group(6)}): install the matching cuDNN or a build for this one",
                facts,
                dedupe=(row.code,),
            )
        ]
    found, torch_cuda = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    if m.group(1) and not torch_cuda:
        nxt = next((_TORCH_CUDA_NEXT.match(ln.text) for ln in hit.after(1, False)), None)
        torch_cuda = nxt.group(1) if nxt else None
    if found:
        facts["toolkit_cuda"] = found
    if torch_cuda:
        facts["torch_cuda"] = torch_cuda
    return [
        row.event(
            hit,
            f"the CUDA toolkit or a companion package does not fit this PyTorch's CUDA "
            f"({clip(m.group(0), 120)})",
            facts,
            dedupe=(row.code,),
        )
    ]


def _arch(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "nvrtc" in m.group(0):
        what, arch = "its NVRTC (runtime compiler) is older than this GPU's architecture", "nvrtc"
    elif "CUDNN" in m.group(0):
        what, arch = (
            "this cuDNN has no kernels for this GPU's architecture (CUDNN_STATUS_ARCH_MISMATCH)",
            "cudnn",
        )
    elif "CUBLAS" in m.group(0):
        what, arch = (
            "cuBLAS has no kernel for this data type or math mode on this GPU's architecture "
            "(CUBLAS_STATUS_ARCH_MISMATCH: bf16 or TF32 GEMMs on a GPU older than Ampere); use fp16/fp32 "
            "there or a newer GPU",
            "cublas",
        )
    elif m.group(2) or "FlashAttention" in m.group(0) or "bf16" in m.group(0) or "Bfloat16" in m.group(0):
        if _WARNED.search(hit.text):
            return []  # a library that warns and falls back (flash-attn wrappers): no failure
        arch = "triton" if m.group(2) else "flash_attn" if "FlashAttention" in m.group(0) else "bf16"
        what = (
            "bf16 needs an Ampere-or-newer GPU visible to this process (an older GPU, none visible, or a "
            "CPU-only PyTorch)"
            if arch == "bf16"
            else f"a kernel this job uses needs a newer GPU ({clip(m.group(0), 110)})"
        )
    elif "rocBLAS" in m.group(0):
        what, arch = (
            f"this ROCm's rocBLAS has no kernels for this GPU ({m.group(3) or 'its gfx target'})",
            "rocm",
        )
    else:
        what, arch = (
            f"this PyTorch carries no GPU code for this GPU ({m.group(1) or 'ROCm gfx target'})",
            (m.group(1) or "rocm"),
        )
    return [
        row.event(
            hit, f"{what}: install a build for its compute capability", {"arch": arch}, dedupe=(row.code,)
        )
    ]


def _bnb_setup(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "bitsandbytes found no CUDA library it can load for this GPU (its libbitsandbytes_cuda build or "
            "libcudart does not match the installed CUDA)",
            {"library": "bitsandbytes", "reason": "cuda_setup_failed"},
            dedupe=(row.code, "bitsandbytes"),
        )
    ]


def _build_failed(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if _WARNED.search(hit.text) or _FELL_BACK.search(hit.text):
        return []  # a framework that reports the failed build and falls back (DeepSpeed >= 0.17's FusedAdam)
    if m.group(1) is None and any(_FELL_BACK.search(ln.text) for ln in hit.after(40, False)):
        return []  # the build step's failure that the framework then reports as a fallback
    name = m.group(1) or "a JIT-built extension"
    return [
        row.event(
            hit,
            f"the C++/CUDA extension '{name}' could not be built on this machine (the compiler output "
            "above says why: usually a CUDA toolkit, nvcc or gcc that does not fit this PyTorch)",
            {"extension": name, "reason": "extension_build_failed"},
            dedupe=(row.code, "build"),
        )
    ]


# XLA's summary when cuDNN would not start (JAX and TF: "FAILED_PRECONDITION: DNN library initialization
# failed. Look at the errors above for more details."): the E-line above it names why, most often the cuDNN
# version (the "Loaded runtime CuDNN library" row, tier 0) or the memory XLA preallocated (cuda_oom's rows);
# alone it is the cuDNN of this environment (tier 2).
_DNN_INIT = lazy_re.compile(r"DNN library initialization failed")
# cuda_dnn.cc's own account under its "Could not create cudnn handle": "Memory usage: 4915200 bytes free,
# 25425608704 bytes total." Almost nothing free: the handle's workspace did not fit (XLA preallocates most of
# the GPU, or another process holds it), which is the memory, not the cuDNN.
_DNN_MEMORY = lazy_re.compile(r"Memory usage: (\d+) bytes free, (\d+) bytes total")


def _dnn_init(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    for ln in hit.before(12, same_rank=False):
        u = _DNN_MEMORY.search(ln.text)
        if u and int(u.group(2)) > 0 and int(u.group(1)) < int(u.group(2)) // 20:
            free_mib, total_mib = int(u.group(1)) >> 20, int(u.group(2)) >> 20
            return [
                row.event(
                    hit,
                    f"cuDNN could not start for lack of GPU memory: {free_mib} MiB free of {total_mib} MiB "
                    "(XLA preallocates most of the GPU, or another process holds it)",
                    {"free_mib": free_mib, "total_mib": total_mib, "reason": "dnn_init_no_memory"},
                    [ln, hit.line],
                    tier=0,
                    code=C.CUDA_OOM.code,
                    dedupe=(C.CUDA_OOM.code, "dnn_init"),
                )
            ]
    return [
        row.event(
            hit,
            "cuDNN could not be initialised for XLA (DNN library initialization failed): usually a cuDNN "
            "older than the one this jaxlib / TensorFlow was built with, or its GPU memory already taken",
            {"library": "cudnn", "reason": "dnn_init_failed"},
            tier=2,
            dedupe=(row.code, "dnn_init"),
        )
    ]


def _jit_so(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if _WARNED.search(hit.text):
        return []
    return [
        row.event(
            hit,
            f"the JIT-built extension '{m.group(1)}' is missing (its build failed on this machine: usually a "
            "CUDA toolkit, nvcc or gcc that does not fit this PyTorch)",
            {"extension": m.group(1), "reason": "extension_build_failed"},
            dedupe=(row.code, "build"),
        )
    ]


SIGNATURES = (
    Signature(
        "cuda toolkit mismatch",
        _TOOLKIT,
        _toolkit,
        C.CUDA_TOOLKIT_MISMATCH.code,
        anchors=(
            b"CUDA version",
            b"CUDA_HOME",
            b"different CUDA",
            b"version of Cuda",
            b"cuDNN version",
            b"VERSION_MISMATCH",
            b"ot compiled with",
            b"nvcc fatal",
            b"Ninja is required",
            b"xFormers wasn",
            b"FlashAttention is only supported on CUDA",
            b"CuDNN library",
            b"ptxas fatal",
            b"unsupported GNU version",
        ),
        worth=(
            rb"CUDA version",
            rb"CUDA_HOME",
            rb"different CUDA",
            rb"version of Cuda",
            rb"cuDNN version",
            rb"CUDNN_STATUS_VERSION_MISMATCH",
            rb"ot compiled with (?:GPU|CUDA)",
            rb"nvcc fatal",
            rb"Ninja is required",
            rb"xFormers wasn",
            rb"FlashAttention is only supported on CUDA",
            rb"CuDNN library",
            rb"ptxas fatal",
            rb"unsupported GNU version",
        ),
        words=(
            "cuda version",
            "cuda_home",
            "different cuda",
            "version of cuda",
            "cudnn version",
            "cudnn_status_version_mismatch",
            "not compiled with",
            "nvcc fatal",
            "ninja is required",
            "xformers wasn",
            "flashattention is only supported on cuda",
            "loaded runtime cudnn library",
            "ptxas fatal",
            "unsupported gnu version",
        ),
    ),
    Signature(
        "extension build failed",
        _BUILD_FAILED,
        _build_failed,
        C.CUDA_TOOLKIT_MISMATCH.code,
        tier=1,
        anchors=(b"Error building extension", b"'ninja', '-v'", b"ninja: build stopped"),
        worth=(rb"Error building extension", rb"'ninja', '-v'", rb"ninja: build stopped"),
        words=("error building extension", "'ninja', '-v'", "ninja: build stopped"),
    ),
    Signature(
        "xla dnn library not initialised",
        _DNN_INIT,
        _dnn_init,
        C.CUDA_TOOLKIT_MISMATCH.code,
        tier=2,
        anchors=(b"DNN library initialization",),
        worth=(rb"DNN library initialization",),
        words=("dnn library initialization failed",),
    ),
    Signature(
        "jit extension not built",
        _JIT_SO,
        _jit_so,
        C.CUDA_TOOLKIT_MISMATCH.code,
        tier=1,
        anchors=(b"shared object",),
        worth=(rb"torch_extensions/",),
        words=("torch_extensions/",),
    ),
    Signature(
        "gpu architecture not in this build",
        _ARCH,
        _arch,
        C.ARCH_UNSUPPORTED.code,
        anchors=(
            b"CUDA capability",
            b"hipErrorNoBinaryForGpu",
            b"gpu-architecture",
            b"ARCH_MISMATCH",
            b"triton GPU compiler",
            b"Ampere GPUs or newer",
            b"requires A100/A800",
            b"for Volta and Turing",
            b"support bf16/gpu",
            b"Bfloat16 is only supported",
            b"rocBLAS error",
            b"and a supported device",
        ),
        worth=(
            rb"CUDA capability",
            rb"hipErrorNoBinaryForGpu",
            rb"gpu-architecture",
            rb"ARCH_MISMATCH",
            rb"triton GPU compiler",
            rb"Ampere GPUs or newer",
            rb"requires A100/A800",
            rb"for Volta and Turing",
            rb"support bf16/gpu",
            rb"Bfloat16 is only supported",
            rb"rocBLAS error",
            rb"and a supported device",
        ),
        words=(
            "cuda capability",
            "hiperrornobinaryforgpu",
            "--gpu-architecture",
            "cudnn_status_arch_mismatch",
            "cublas_status_arch_mismatch",
            "triton gpu compiler",
            "ampere gpus or newer",
            "requires a100/a800",
            "for volta and turing",
            "support bf16/gpu",
            "bfloat16 is only supported",
            "rocblas error",
            "and a supported device",
        ),
    ),
    Signature(
        "bitsandbytes cuda setup",
        _BNB_SETUP,
        _bnb_setup,
        C.LIBRARY_MISSING.code,
        anchors=(b"CUDA Setup failed",),
        worth=(rb"CUDA Setup failed",),
        words=("cuda setup failed",),
    ),
)
# Every pattern of parse() needs one of its row's words in the line (lower case; checked before any of them).
parse = gated_reader(SIGNATURES, unless="NCCL INFO")
