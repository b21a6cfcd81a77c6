"""stack_fit: driver_env as the frameworks around the collective layer word it: a build without the
collective backend the job asks for, GPUs of different models in one replicated program, and a rank that
died on a fatal signal inside a library of the stack (MPI, cuBLAS) or a library that failed on its own (PMIx),
rather than in the job's own code.

Formats, read at their sources:
- Ray's collective library (python/ray/util/collective/collective.py, 1.x-2.x): "NCCL seems unavailable.
  Please install Cupy following the guide at: https://docs.cupy.dev/en/stable/install.html." (an import
  of cupy's NCCL failed), 2.4x's HCCL group "HCCL seems unavailable. Please install torch_npu ...", alpa's
  copy; LMDeploy TurboMind (src/turbomind/comm/device_comm.cc): "[TM][FATAL] comm/device_comm.cc(28): Check
  failed: 0 Unknown communication backend: nccl" (a build without USE_NCCL, e.g. the Windows wheel);
  c10d's ProcessGroup::getBackend (torch 2.x): "No backend type associated with device type xpu" for an
  accelerator whose backend (XCCL, HCCL, ...) this torch has not registered (oneccl_bindings_for_pytorch
  or torch_npu not imported, or not built): device types other than cpu and cuda (a cpu tensor on an
  NCCL group is the caller's mistake: rules/c10d_usage.py); DeepSpeed's comm layer (deepspeed/comm/
  comm.py, 0.6+): "DeepSpeed backend not set, please initialize it using init_process_group()" (code
  written for DeepSpeed <= 0.5 that never calls deepspeed.init_distributed()); c10d's GlooDeviceFactory
  (1.x-2.x): "makeDeviceForHostname(): unsupported gloo device" / "makeDeviceForInterface(): ..." (no Gloo
  transport of the GLOO_DEVICE_TRANSPORT name in this build: the Windows 2.8 wheels); CuPy without NCCL as
  ChainerMN 5-7 and cupyx.distributed word it: "NCCL is not available. Please confirm that NCCL is enabled
  in CuPy." and cupyx's bare "RuntimeError: NCCL is not available" (RUN334; the wordings that name NCCL's
  version, "PureNcclCommunicator requires NCCL 2.0+, ..." and Chainer's "NCCL is not enabled.
  MultiprocessParallelUpdater requires NCCL.", are RUN195's, driver_env too); Caffe built without USE_NCCL:
  "Multi-GPU execution not available - rebuild with USE_NCCL" (tools/caffe.cpp), pycaffe's "type object
  'NCCL' has no attribute 'new_uid'" (RUN334).
- XLA's PjRt / local client (xla/pjrt, xla/python/local_client.cc): "executable is built for device CUDA:0
  of type \"TITAN V\"; cannot run it on device CUDA:1 of type \"Quadro K2200\"": one replicated program over
  GPUs of different models; the other replicas then wait at the all-reduce rendezvous (RUN335).
- A fatal signal whose first frame below the handler is an MPI entry point (UCX's handler "Caught signal
  11 (Segmentation fault: ...)" then "==== backtrace" with " 1 0x.. PMPI_Comm_rank()  .../ompi/...",
  glog's "PC: @ 0x.. MPI_Init" / "*** SIGSEGV (@0x0) received by PID N"): the MPI installation (HPC-X,
  Open MPI, mpi4py built for another libmpi) crashed before any collective (RUN336).
- SIGFPE (an integer divide by zero in native code) in a training process: UCX's "Caught signal 8
  (Floating point exception: integer divide by zero)", torchrun's "Signal 8 (SIGFPE) received by PID N",
  faulthandler's "Fatal Python error: Floating point exception", the shell's "Floating point exception
  (core dumped)", glog's "*** SIGFPE (@0x..) received by PID N", c10's "SIGFPE(8), PID: N, Thread",
  torch.distributed.launch's "died with <Signals.SIGFPE: 8>", the kernel's "trap divide error ... in
  libcublasLt.so". Python never raises it; the published family is cuBLAS 12.1 (torch cu121 wheels) on
  H20/H800-class Hopper GPUs, fixed by a newer nvidia-cublas-cu12 (RUN336). A DataLoader worker's SIGFPE
  is rules/workers.py's; a SIGFPE whose handler names another frame (not cuBLAS) is that code's crash.
- PMIx's data store (src/mca/common/dstore/dstore_segment.c, dstore_base.c, PMIx 3.x under Open MPI 4.0):
  "PMIX ERROR: OUT-OF-RESOURCE in file .../dstore_segment.c at line 207" on every rank, then "An error
  occurred in MPI_Init_thread": PMIX_MCA_gds=hash is the threads' workaround (RUN336).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_RAY_UNAVAILABLE = lazy_re.compile(
    r"\b(?P<b>NCCL|HCCL|GLOO) seems unavailable\. Please install (?P<pkg>[\w-]+)"
)
_UNKNOWN_BACKEND = lazy_re.compile(r"Unknown communication backend: (?P<b>[A-Za-z0-9_-]+)")
# Accelerate's PartialState (accelerate/state.py 0.2x-1.x): "ValueError: Your assigned backend nccl is not
# avaliable, please use gloo" (its own spelling): the backend asked for (Accelerator(backend=...),
# InitProcessGroupKwargs) is not the one it found usable here (no GPU / no NCCL build: it falls back to gloo).
_ACC_BACKEND = lazy_re.compile(
    r"Your assigned backend (?P<b>[A-Za-z0-9_:,-]+) is not (?:avaliable|available), "
    r"please use (?P<use>[\w:,-]+)"
)
# Caffe built without USE_NCCL (BVLC caffe 1.0, NVCaffe): the command line tool's train() "F0101
# 22:55:26.495918 8615 caffe.cpp:254] Multi-GPU execution not available - rebuild with USE_NCCL"
# (parallel.cpp's P2PSync says the same), and pycaffe's NCCL class (python/caffe/_caffe.cpp) whose
# "new_uid" and "bcast" are defined only #ifdef USE_NCCL: "AttributeError: type object 'NCCL' has no
# attribute 'new_uid'", "'NCCL' object has no attribute 'bcast'" (py-R-FCN-multiGPU, py-faster-rcnn's
# multi-GPU train scripts).
# NVCaffe's P2PSync / P2PManager (src/caffe/parallel.cpp) say it in their own words: 0.15-0.16 "USE_NCCL := 1
# must be specified for multi-GPU", 0.17 "USE_NCCL must be specified for multi-GPU mode"; a retyped title
# adds an "is" ("Multi-GPU execution is not available - rebuild with USE_NCCL"). The source line itself
# (`LOG(FATAL) << "..."`, a question about the code) is no failure.
_CAFFE_NO_NCCL = lazy_re.compile(
    r"Multi-GPU execution not available - ?(?:rebuild with USE_NCCL|$)|"
    r"Multi-GPU execution is not available - ?(?:rebuild with USE_NCCL|$)|"
    r"USE_NCCL(?: := 1)? must be specified for multi-GPU(?: mode)?|"
    r"(?:type object|'NCCL' object) (?:'NCCL' )?has no attribute '(?P<attr>new_uid|bcast)'"
)
_NO_BACKEND_TYPE = lazy_re.compile(r"No backend type associated with device type (?P<dev>\w+)")
# c10d's GlooDeviceFactory (torch/csrc/distributed/c10d/GlooDeviceFactory.cpp, 1.x-2.x): the registry has no
# transport by the name GLOO_DEVICE_TRANSPORT gives (TCP on Linux, UV on Windows / macOS): a torch build
# without it (the Windows 2.8 wheels' libuv transport) or a name this build does not register.
_GLOO_NO_DEVICE = lazy_re.compile(r"makeDeviceFor(?P<for>Hostname|Interface)\(\): unsupported gloo device")
# CuPy without its NCCL binding, read by ChainerMN (chainermn/communicators/non_cuda_aware_communicator.py,
# 5.x-7.8) and cupyx.distributed
# (_init.py, 12-13: the bare "NCCL is not available" ending a RuntimeError); CuPy's own placeholder for a
# binding it was built without (cupy/cuda/__init__.py _UnavailableModule('cupy.cuda.nccl'), 8-13) read by
# direct callers: "AttributeError: '_UnavailableModule' object has no attribute 'NcclCommunicator'".
_CUPY_NO_NCCL = lazy_re.compile(
    r"NCCL is not available\. Please confirm that NCCL is enabled in CuPy|"
    r"PureNcclCommunicator requires NCCL 2\.0\+, but NCCL is not available|"
    r"RuntimeError: NCCL is not available\s*$|"
    r"'_UnavailableModule' object has no attribute '(?:NcclCommunicator|get_unique_id|get_(?:build_)?version|"
    r"group(?:Start|End)|NCCL_\w+)'"
)
_DS_NOT_SET = lazy_re.compile(r"DeepSpeed backend not set, please initiali[sz]e it using init_process_group")
_XLA_MIXED = lazy_re.compile(
    r"executable is built for device (?P<a>\S+) of type \\?\"(?P<ta>[^\"\\]+)\\?\"; cannot run it on "
    r"device (?P<b>\S+) of type \\?\"(?P<tb>[^\"\\]+)"
)
# The signal lines whose next frames say where the process died.
_SIGNAL_LINE = lazy_re.compile(
    r"Caught signal (?P<num>\d+) \((?P<sig>Segmentation fault|Bus error|Floating point exception|"
    r"Illegal instruction)|\*\*\* (?P<name>SIG(?:SEGV|BUS|FPE|ILL)) \(@0x[0-9a-fA-F]+\) received by PID "
    r"(?P<pid>\d+)|PC: @\s+0x[0-9a-fA-F]+\s+(?P<pc>P?MPI_\w+)"
)
# A frame of UCX's backtrace (" 1 0x000000000006c4e4 PMPI_Comm_rank()  /path:41") or glog's ("@ 0x7f.. fn"),
# and of UCX 1.1x's backtrace without debug info (" 4  /usr/lib/libucp.so.0(ucp_worker_query+0x39) [0x7f..]";
# a frame with no symbol, "libucs.so.0(+0x3c274)", is no frame to read).
_FRAME = lazy_re.compile(
    r"^\s*(?:\d+\s+0x[0-9a-fA-F]+\s+|@\s+0x[0-9a-fA-F]+\s+)(?P<fn>[\w:~<>.()?]+?)(?:\(\))?(?:\s|$)|"
    r"^\s*\d+\s+\S+\((?P<fn2>[A-Za-z_][\w:~<>.]*)\+0x[0-9a-fA-F]+\)\s+\[0x"
)
_HANDLER_FRAME = lazy_re.compile(
    r"^(?:__sigaction|ucs_\w+|__restore_rt|killpg|raise|gsignal|abort|\(unknown\)|\?\?\?|__GI_\w+|"
    r"_L_unlock_\d+|__funlockfile)$"
)
_MPI_FN = lazy_re.compile(r"^P?MPI_[A-Z]\w*$|^(?:ompi|opal|orte|pmix|mca|MPIR|MPID|PMPI)_\w+")
# UCX's own entry points (ucp: the protocol layer, uct: the transports), under Open MPI, NIXL, UCC or Dask.
_UCX_FN = lazy_re.compile(r"^(?:ucp|uct)_\w+$")
# UCX's record of a transport it could not open just before (ucp_worker.c "uct_iface_open(ud_verbs/erdma_0:1)
# failed: Input/output error", ib_iface.c "erdma_0: iface 0x.. failed to create UD QP ...").
_UCX_OPEN_FAILED = lazy_re.compile(
    r"UCX\s+ERROR\s+(?:uct_iface_open\((?P<tl>[^)]*)\) failed|(?P<dev>\w+): iface 0x[0-9a-f]+ failed)"
)
_SIGFPE = lazy_re.compile(
    r"Caught signal 8 \(Floating point exception|Signal 8 \(SIGFPE\) received by PID (?P<pid>\d+)|"
    r"Fatal Python error: Floating point exception|"
    r"(?:^|\s)(?:(?P<pid2>\d+)\s+)?Floating point exception\s+\(core dumped\)|"
    r"\*\*\* SIGFPE \(@0x[0-9a-fA-F]+\) received by PID (?P<pid3>\d+)|"
    r"\bSIGFPE\(8\), PID: (?P<pid4>\d+)|died with <Signals\.SIGFPE: 8>|"
    r"\btrap divide error\b.*? in (?P<lib>lib[\w.+-]+)"
)
# Slurm's pyxis plugin (pyxis_slurmstepd.c): "pyxis: container start failed with error code: 1" then
# "pyxis: printing enroot log file:" and enroot's hook output (10-shadow.sh, 98-nvidia.sh's
# nvidia-container-cli errors); "pyxis: couldn't start container". Image imports ("failed to import docker
# image") are not this.
_PYXIS = lazy_re.compile(
    r"pyxis: (?:container start failed with error code: (?P<rc>\d+)|couldn't start container)"
)
# XGBoost asked for a GPU it cannot see: src/learner.cc 1.x LOG(WARNING) "No visible GPU is found, setting
# `gpu_id` to -1", 2.x context.cc "No visible GPU is found, setting device to CPU."; a CPU-only build asked
# for one: "XGBoost version not compiled with GPU support."
_XGB_NO_GPU = lazy_re.compile(
    r"No visible GPU is found, setting (?:`?gpu_id`? to -1|device to CPU)|"
    r"XGBoost version not compiled with GPU support"
)
# PMIx's shared-memory data store (gds/ds12, ds21: src/mca/common/dstore/dstore_segment.c, dstore_base.c)
# failing to create its segments, as Open MPI 4.0.x with PMIx 3.x prints it on every rank before MPI_Init
# fails: "PMIX ERROR: OUT-OF-RESOURCE in file ../../../../../../src/mca/common/dstore/dstore_segment.c at
# line 207" (a known PMIx bug under some kernels and containers; PMIX_MCA_gds=hash avoids the component).
_PMIX_DSTORE = lazy_re.compile(
    r"PMIX ERROR: OUT-OF-RESOURCE in file \S*(?P<file>dstore_\w+\.c|gds_ds\w*\.c) at line (?P<line>\d+)"
)
_DATALOADER = lazy_re.compile(r"DataLoader|data_loader|worker \(pid", re.I)
_CUBLAS = lazy_re.compile(r"libcublas\w*|cublas\w*", re.I)
_HOPPER_CHINA = lazy_re.compile(r"\bH(?:20|800|100|200)\b")


def _ray_unavailable(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    b, pkg = m.group("b"), m.group("pkg")
    return [
        row.event(
            hit,
            f"{hit.who()}: Ray's collective library cannot use {b}: its binding ({pkg}) could not be "
            f"imported in this environment, so a {b} collective group cannot be made (install {pkg} for "
            "this CUDA / CANN, or use a backend the environment has)",
            {"backend": b.lower(), "package": pkg, "reason": "backend_binding_missing", "framework": "ray"},
            dedupe=(row.code, "ray", b),
        )
    ]


def _unknown_backend(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    b = m.group("b")
    return [
        row.event(
            hit,
            f"{hit.who()}: this build has no '{b}' communication backend (compiled without it, e.g. the "
            "Windows build of TurboMind has no NCCL): use a build with it, or a backend it has, or run "
            "without tensor parallelism",
            {"backend": b, "reason": "backend_not_built"},
            dedupe=(row.code, "unknown", b),
        )
    ]


def _caffe_no_nccl(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if '<< "' in hit.text[: m.start()]:
        return []  # the LOG(FATAL) source line quoted
    return [
        row.event(
            hit,
            f"{hit.who()}: this Caffe was built without NCCL ({m.group(0).strip()}), so it cannot train on "
            "several GPUs: rebuild it with USE_NCCL=1 (Makefile.config) or -DUSE_NCCL=ON (CMake) against an "
            "installed NCCL, then reinstall pycaffe",
            {"backend": "nccl", "framework": "caffe", "reason": "backend_not_built"},
            dedupe=(row.code, "caffe"),
        )
    ]


def _acc_backend(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    b, use = m.group("b"), m.group("use")
    return [
        row.event(
            hit,
            f"{hit.who()}: Accelerate cannot use the '{b}' backend it was given here and would use '{use}' "
            "(this process sees no GPU, or this PyTorch has no NCCL): run it where the GPUs are visible "
            "(CUDA_VISIBLE_DEVICES, the launcher's GPU request) or leave the backend to Accelerate",
            {"backend": b, "usable_backend": use, "reason": "backend_not_available"},
            dedupe=(row.code, "accelerate", b),
        )
    ]


def _gloo_no_device(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: this PyTorch build has no Gloo transport for the device it was asked for "
            f"(makeDeviceFor{m.group('for')}: GLOO_DEVICE_TRANSPORT names a transport the build lacks; the "
            "Windows 2.8 wheels lack libuv): use a PyTorch build that has it (2.7.x on Windows), unset "
            "GLOO_DEVICE_TRANSPORT, or run under Linux / WSL",
            {"backend": "gloo", "reason": "gloo_transport_not_built"},
            dedupe=(row.code, "gloo"),
        )
    ]


def _cupy_no_nccl(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: CuPy has no NCCL binding here (installed without NCCL, or for another CUDA), so "
            "ChainerMN / cupyx cannot create a NCCL communicator: install the CuPy wheel for this CUDA with "
            "NCCL (cupy-cudaXXx and the matching nvidia-nccl), check cupy.cuda.nccl.available",
            {"backend": "nccl", "library": "cupy", "reason": "backend_not_built"},
            dedupe=(row.code, "cupy"),
        )
    ]


def _no_backend_type(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    dev = m.group("dev")
    if dev in ("cpu", "cuda", "meta"):
        return None  # a tensor on the wrong device for the group: the caller's (c10d_usage)
    return [
        row.event(
            hit,
            f"{hit.who()}: the process group has no backend for '{dev}' devices: the collective library "
            f"for {dev} (XCCL / oneCCL bindings for xpu, HCCL through torch_npu for npu, HCCL for hpu) is "
            "not registered in this environment (not installed, not imported before init_process_group, or "
            "a torch built without it)",
            {"device_type": dev, "reason": "backend_not_registered"},
            dedupe=(row.code, "device_type", dev),
        )
    ]


def _ds_not_set(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: DeepSpeed's communication backend was never initialised (the code predates "
            "DeepSpeed 0.6's deepspeed.comm and does not call deepspeed.init_distributed()): call it after "
            "torch.distributed.init_process_group, or pin the DeepSpeed the code was written for",
            {"reason": "deepspeed_comm_not_initialised", "framework": "deepspeed"},
            dedupe=(row.code, "deepspeed"),
        )
    ]


def _xla_mixed(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: one replicated XLA program was compiled for {m.group('a')} ({m.group('ta')}) and "
            f"cannot run on {m.group('b')} ({m.group('tb')}): the job spans GPUs of different models; "
            "restrict CUDA_VISIBLE_DEVICES to GPUs of one model",
            {
                "reason": "mixed_gpu_models",
                "device": m.group("a"),
                "device_type": m.group("ta"),
                "other_device": m.group("b"),
                "other_device_type": m.group("tb"),
                "framework": "xla",
            },
            dedupe=(row.code, "xla"),
        )
    ]


def _pyxis(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"reason": "container_start_failed", "runtime": "pyxis/enroot"}
    if m.group("rc"):
        facts["exit_code"] = int(m.group("rc"))
    return [
        row.event(
            hit,
            f"{hit.who()}: Slurm's pyxis could not start the job's container (enroot failed"
            + (f" with code {m.group('rc')}" if m.group("rc") else "")
            + "): the enroot log lines after it name the hook that failed (the NVIDIA hook's "
            "nvidia-container-cli on that node, a hook script, the image)",
            facts,
            dedupe=(row.code, "pyxis"),
        )
    ]


def _xgb_no_gpu(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    built = "not compiled" in m.group(0)
    return [
        row.event(
            hit,
            f"{hit.who()}: XGBoost "
            + (
                "was built without GPU support but the job asks for a GPU: install the CUDA build"
                if built
                else "finds no visible GPU and falls back to the CPU: the worker has no GPU assigned (Ray / "
                "Dask resources, CUDA_VISIBLE_DEVICES) or no driver in its container"
            ),
            {"reason": "cpu_build_of_xgboost" if built else "no_visible_device", "framework": "xgboost"},
            tier=None if built else 1,
            dedupe=(row.code, "xgboost"),
        )
    ]


def _pmix_dstore(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: PMIx's shared-memory data store could not create its segments "
            f"({m.group('file')}: OUT-OF-RESOURCE), so MPI_Init fails on every rank: a known PMIx 3 / Open "
            "MPI 4.0 fault; run with PMIX_MCA_gds=hash (or upgrade Open MPI / PMIx, or give the container a "
            "larger /dev/shm)",
            {
                "reason": "pmix_dstore",
                "library": "pmix",
                "file": m.group("file"),
                "line": int(m.group("line")),
            },
            dedupe=(row.code, "pmix_dstore"),
        )
    ]


def _first_frame(hit: Hit) -> Optional[str]:
    for ln in hit.after(10, same_rank=False):
        f = _FRAME.match(ln.text)
        if not f:
            continue
        fn = f.group("fn") or f.group("fn2")
        if _HANDLER_FRAME.match(fn):
            continue
        return fn
    return None


def _ucx_crash(row: Signature, hit: Hit, sig: str, fn: str) -> list[Event]:
    facts: dict[str, Any] = {"signal": sig, "frame": fn, "reason": "crash_in_ucx", "library": "ucx"}
    opened = next(
        (o for ln in reversed(hit.before(12, same_rank=False)) if (o := _UCX_OPEN_FAILED.search(ln.text))),
        None,
    )
    why = "UCX crashed inside itself"
    if opened:
        facts["ucx_transport"] = opened.group("tl") or opened.group("dev")
        why = (
            f"UCX could not open its transport {facts['ucx_transport']} (the NIC or its driver does not "
            "support what UCX asks of it) and then crashed using it"
        )
    return [
        row.event(
            hit,
            f"{hit.who()} died on {sig} inside UCX ({fn}): {why}; restrict UCX to transports and devices "
            "that work here (UCX_TLS, UCX_NET_DEVICES; ucx_info -d lists them) or use a UCX built for this "
            "NIC",
            facts,
            dedupe=(row.code, hit.rank, "ucx"),
        )
    ]


def _mpi_crash(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    fn = m.group("pc") or _first_frame(hit)
    if not fn or not (_MPI_FN.match(fn) or _UCX_FN.match(fn)):
        return None
    sig = m.group("name") or {"Segmentation fault": "SIGSEGV", "Bus error": "SIGBUS"}.get(
        m.group("sig") or "", "SIGSEGV"
    )
    if m.group("sig") == "Floating point exception":
        sig = "SIGFPE"
    if _UCX_FN.match(fn):
        return _ucx_crash(row, hit, sig, fn)
    if m.group("pc"):
        nxt = next((_SIGNAL_LINE.search(ln.text) for ln in hit.after(3, same_rank=False)), None)
        if nxt and nxt.group("name"):
            sig = nxt.group("name")
    facts: dict[str, Any] = {"signal": sig, "frame": fn, "reason": "crash_in_mpi", "library": "mpi"}
    if m.group("pid"):
        facts["pid"] = int(m.group("pid"))
    return [
        row.event(
            hit,
            f"{hit.who()} died on {sig} inside the MPI library ({fn}), before any collective: the MPI "
            "installation is broken or mixed (mpi4py / Horovod / the launcher built against another libmpi, "
            "HPC-X and the system Open MPI both on the path); run a two-rank MPI hello world with the same "
            "mpirun",
            facts,
            dedupe=(row.code, hit.rank, "mpi"),
        )
    ]


def _sigfpe(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if _DATALOADER.search(hit.text) or "SignalInfo:" in hit.text:
        return None  # a DataLoader worker's (workers.py); Paddle's own handler record stays process_crash's
    facts: dict[str, Any] = {"signal": "SIGFPE", "reason": "integer_divide_in_native_code"}
    pid = m.group("pid") or m.group("pid2") or m.group("pid3") or m.group("pid4")
    if pid:
        facts["pid"] = int(pid)
    lib = m.group("lib")
    near = [ln.text for ln in (*hit.before(12, same_rank=False), hit.line, *hit.after(16, same_rank=False))]
    cublas = (
        lib
        if lib and _CUBLAS.search(lib)
        else next((c.group(0) for c in map(_CUBLAS.search, near) if c), None)
    )
    if lib:
        facts["library"] = lib
    elif cublas:
        facts["library"] = cublas
    # The frame the signal came from, where the handler printed one (UCX, glog): a SIGFPE in a frame of
    # another library or of the program (ArrayFire's evalNodes on bad data, a custom kernel's host code)
    # is that code's crash, not the stack's.
    frame = None if lib else _first_frame(hit)
    if frame and not _CUBLAS.search(frame):
        return None
    if frame:
        facts["frame"] = frame
    gpu = next((g.group(0) for g in map(_HOPPER_CHINA.search, near) if g), None)
    if gpu:
        facts["gpu_model"] = gpu
    return [
        row.event(
            hit,
            f"{hit.who()} died on SIGFPE (an integer divide by zero in native code, which Python never "
            "raises): most often the cuBLAS of a cu121 PyTorch build on H20/H800-class GPUs; install a newer "
            "cuBLAS (pip install -U nvidia-cublas-cu12) or a PyTorch built for CUDA >= 12.4",
            facts,
            dedupe=(row.code, hit.rank, "SIGFPE"),
        )
    ]


SIGNATURES = (
    Signature(
        "ray collective backend unavailable",
        _RAY_UNAVAILABLE,
        _ray_unavailable,
        C.COLLECTIVE_BACKEND_MISSING.code,
        anchors=(b"seems unavailable. Please install",),
        worth=(rb"seems unavailable\. Please install",),
        words=("seems unavailable. please install",),
    ),
    Signature(
        "communication backend not built",
        _UNKNOWN_BACKEND,
        _unknown_backend,
        C.COLLECTIVE_BACKEND_MISSING.code,
        anchors=(b"Unknown communication backend: ",),
        worth=(rb"Unknown communication backend: ",),
        words=("unknown communication backend",),
    ),
    Signature(
        "caffe built without nccl",
        _CAFFE_NO_NCCL,
        _caffe_no_nccl,
        C.COLLECTIVE_BACKEND_MISSING.code,
        anchors=(
            b"Multi-GPU execution not available",
            b"Multi-GPU execution is not available",
            b"must be specified for multi-GPU",
            b"has no attribute 'new_uid'",
            b"has no attribute 'bcast'",
        ),
        worth=(
            rb"Multi-GPU execution (?:is )?not available",
            rb"must be specified for multi-GPU",
            rb"NCCL' has no attribute 'new_uid'",
            rb"'NCCL' object has no attribute 'bcast'",
        ),
        words=(
            "multi-gpu execution not available",
            "multi-gpu execution is not available",
            "must be specified for multi-gpu",
            "no attribute 'new_uid'",
            "no attribute 'bcast'",
        ),
        examples=(
            "F0101 22:55:26.495918  8615 caffe.cpp:254] Multi-GPU execution not available - rebuild "
            "with USE_NCCL",
            "F0428 11:32:07.443701  8682 parallel.cpp:155] USE_NCCL := 1 must be specified for multi-GPU",
            "F0301 10:02:11.120034  4410 parallel.cpp:391] USE_NCCL must be specified for multi-GPU mode",
            "AttributeError: type object 'NCCL' has no attribute 'new_uid'",
            "AttributeError: 'NCCL' object has no attribute 'bcast'",
        ),
    ),
    Signature(
        "accelerate's assigned backend not available",
        _ACC_BACKEND,
        _acc_backend,
        C.COLLECTIVE_BACKEND_MISSING.code,
        anchors=(b"Your assigned backend ",),
        worth=(rb"Your assigned backend \S+ is not ava",),
        words=("your assigned backend",),
    ),
    Signature(
        "no backend for an accelerator's device type",
        _NO_BACKEND_TYPE,
        _no_backend_type,
        C.COLLECTIVE_BACKEND_MISSING.code,
        anchors=(b"No backend type associated with device type",),
        worth=(rb"No backend type associated with device type",),
        words=("no backend type associated with device type",),
    ),
    Signature(
        "gloo transport not built",
        _GLOO_NO_DEVICE,
        _gloo_no_device,
        C.COLLECTIVE_BACKEND_MISSING.code,
        anchors=(b"(): unsupported gloo device",),
        words=("unsupported gloo device",),
    ),
    Signature(
        "cupy without nccl",
        _CUPY_NO_NCCL,
        _cupy_no_nccl,
        C.COLLECTIVE_BACKEND_MISSING.code,
        anchors=(b"NCCL is not available", b"'_UnavailableModule' object has no attribute"),
        worth=(
            rb"NCCL is not available\. Please confirm|PureNcclCommunicator requires NCCL|"
            rb"RuntimeError: NCCL is not available\s*$",
            rb"'_UnavailableModule' object has no attribute '(?:Nccl|get_|group|NCCL_)",
        ),
        words=("nccl is not available", "_unavailablemodule"),
    ),
    Signature(
        "deepspeed comm backend not set",
        _DS_NOT_SET,
        _ds_not_set,
        C.COLLECTIVE_BACKEND_MISSING.code,
        anchors=(b"DeepSpeed backend not set",),
        worth=(rb"DeepSpeed backend not set",),
        words=("deepspeed backend not set",),
    ),
    Signature(
        "xla executable for another gpu model",
        _XLA_MIXED,
        _xla_mixed,
        C.MIXED_GPU_MODELS.code,
        anchors=(b"executable is built for device",),
        worth=(rb"executable is built for device",),
        words=("executable is built for device",),
    ),
    Signature(
        "pyxis container start failed",
        _PYXIS,
        _pyxis,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"pyxis: ",),
        worth=(rb"pyxis: (?:container start failed|couldn't start container)",),
        words=("pyxis:",),
    ),
    Signature(
        "xgboost without a visible gpu",
        _XGB_NO_GPU,
        _xgb_no_gpu,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"No visible GPU is found", b"not compiled with GPU support"),
        worth=(rb"No visible GPU is found", rb"not compiled with GPU support"),
        words=("no visible gpu is found", "not compiled with gpu support"),
    ),
    Signature(
        "pmix data store out of resource",
        _PMIX_DSTORE,
        _pmix_dstore,
        C.STACK_LIBRARY_CRASH.code,
        anchors=(b"PMIX ERROR: OUT-OF-RESOURCE",),
        worth=(rb"PMIX ERROR: OUT-OF-RESOURCE",),
        words=("pmix error: out-of-resource",),
    ),
    Signature(
        "fatal signal inside mpi",
        _SIGNAL_LINE,
        _mpi_crash,
        C.STACK_LIBRARY_CRASH.code,
        anchors=(b"Caught signal", b") received by PID", b"PC: @"),
        worth=(rb"Caught signal \d+", rb"\) received by PID", rb"PC: @\s+0x"),
        words=("caught signal", "received by pid", "pc: @"),
    ),
    Signature(
        "sigfpe in native code",
        _SIGFPE,
        _sigfpe,
        C.STACK_LIBRARY_CRASH.code,
        anchors=(b"Floating point exception", b"SIGFPE", b"divide error"),
        worth=(rb"Floating point exception", rb"SIGFPE", rb"divide error"),
        words=("floating point exception", "sigfpe", "divide error"),
        anchor_from="'Signal 8 (SIGFPE)' / 'Caught signal 8 (Floating point exception' in the line",
        examples=(
            "Caught signal 8 (Floating point exception: integer divide by zero)",
            "traceback : Signal 8 (SIGFPE) received by PID 52782",
        ),
    ),
)

parse = gated_reader(SIGNATURES)
