"""stack_skew: driver_env where a part of the stack says itself that it does not fit the machine or the
other parts (rule writer w1, 2026-12-07, read from the misses of v20's held-out half as families).

Formats, read at their sources:
- gloo's Linux helpers (gloo/common/linux.cc, 2017 to today, torch's third_party/gloo): to pick the GPU
  nearest its NIC (cuda_private.h findCudaDevicePointerClosestToDevice, ProcessGroupGloo's CUDA collectives)
  gloo walks /sys/bus/pci/devices and readlink()s the NIC's and the GPU's entries (pciDistance -> pciPath).
  GLOO_ENFORCE* throws gloo::EnforceNotMet "[enforce fail at <file>:<line>] <condition>. <a> vs <b>.
  <strerror>", which torch re-raises as RuntimeError or a C++ terminate prints under "what():": pciPath's
  "rv != -1. -1 vs -1. Invalid argument" (line 103 in 2017, 111 since 2019: an interface with no PCI
  device - bridge, veth, bond, VPN, loopback - has an empty bus id and the path is the directory itself),
  "No such file or directory" (no sysfs in the container), "rv < buf.size()", listDir's "dirp != nullptr" /
  "errno == 0" / "rv == 0", pciGetClass's "ifs.good()" and kernelModules' /proc/modules parse "sep !=
  std::string::npos" (RUN620, new). Silent: a build log that compiles linux.cc, gloo's other enforce sites
  (transport pairs: mismatch and network rows).
- ProcessGroupMPI (torch/csrc/distributed/c10d/ProcessGroupMPI.cpp, 1.0-2.x): checkSingleTensorHelper's
  "CUDA tensor detected and the MPI used doesn't have CUDA-aware MPI support" (MPIX_Query_cuda_support() is
  not 1, or the MPI is not Open MPI) and initMPIOnce's "Used MPI implementation doesn't have the minimum level
  of threading support: MPI_THREAD_SERIALIZED. This is required by c10d package": the MPI library torch was
  built against cannot carry what the job asks (RUN334). Silent: the caller's own mistakes there ("MPI
  process group does not support multi-GPU collectives", "input tensor has to be contiguous").
- pybind11's overload resolution (pybind11 2.x attr.h / pybind11.h): "__init__(): incompatible constructor
  arguments. The following argument types are supported:\\n    1. torch._C._distributed_c10d.TCPStore(
  host_name: str, ...)\\n\\nInvoked with: '127.0.0.1', 29500, 1, True, datetime.timedelta(0, 900); kwargs:
  multi_tenant=True" (and "...(): incompatible function arguments." for functions), over lines or in one
  line of torchelastic's error JSON. Read here: a binding of torch._C given a keyword that none of its listed
  signatures has - torch's Python files are newer than its compiled library (RUN621, new). A keyword that a
  signature lists, or only positional values, is a wrong value (rdzv_values' TCPStore row, RUN224); bindings
  of other packages stay with their owners.
- torch.utils.cpp_extension (1.x-2.x, _find_cuda_home): "No CUDA runtime is found, using CUDA_HOME='...'",
  printed on import when CUDA_HOME exists but torch.cuda.is_available() is False (CPU-only wheel, no driver,
  no visible GPU). Read as RUN262 at tier 2 only when a traceback follows it in the same paste (the job then
  failed at its GPU or distributed set-up); alone (a build host compiling extensions) it is silent.
- The same skew seen at import: torch._C._distributed_c10d (a module of every build with torch.distributed)
  lacks a name the code importing it expects: "ImportError: cannot import name '_DistributedBackendOptions'
  from 'torch._C._distributed_c10d' (/.../torch/_C/_distributed_c10d.cpython-310-x86_64-linux-gnu.so)",
  "AttributeError: module 'torch._C._distributed_c10d' has no attribute '_register_process_group'": the
  compiled library is older than torch's .py files or than a package built for a newer torch (RUN621). A
  build without torch.distributed at all (macOS < 1.12, Windows < 1.7, USE_DISTRIBUTED=0) says "module
  'torch._C' has no attribute '_distributed_c10d'", "No module named 'torch._C._distributed_c10d'" or "cannot
  import name ... (unknown location)": device_visibility's build-without-the-backend family (RUN263).
- UCX's signal handler (ucs/debug/debug.c, under Open MPI, HPC-X, NIXL) prints "Caught signal 7 (Bus error:
  ...)" and then "==== backtrace (tid: N) ====" with " 2 0x... ncclShmOpen()  .../misc/shmutils.cc:52".
  A paste that keeps the backtrace but not the signal line, whose first frame below the handler's own
  (killpg, __nss_database_lookup, ucs_*) is NCCL's segment open (ncclShmOpen 2.12+, shmOpen / shmSetup
  2.4-2.11), shows the same fault process_crash reads with the signal line: the first touch of a segment past
  the end of /dev/shm (RUN360, tier 1). With the signal line in the paste, process_crash reads it.
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_GLOO_SYSFS = lazy_re.compile(
    r"enforce fail at (?P<path>[^\]\s]*gloo/common/linux\.cc):(?P<line>\d+)\]\s*"
    r"(?P<cond>rv != -1|rv < buf\.size\(\)|dirp != nullptr|errno == 0|rv == 0|ifs\.good\(\)|"
    r"sep != std::string::npos)\.?(?P<rest>[^\n\"]*)"
)
_MPI_BUILD = lazy_re.compile(
    r"(?P<cuda>CUDA tensor detected and the MPI used doesn'?t\s+have CUDA-aware MPI support)|"
    r"(?P<thread>Used MPI implementation doesn'?t\s+have the\s+minimum level of threading support)"
)
_PYBIND_ARGS = lazy_re.compile(
    r"incompatible (?P<kind>constructor|function) arguments\. The following argument"
)
_KWARGS = lazy_re.compile(r"(?:; |Invoked with: )kwargs: (?P<kw>(?:\w+=[^,;\n\\]*(?:, )?)+)")
_C10D_NAMES = lazy_re.compile(
    r"(?P<nodist>module 'torch\._C' has no attribute '_distributed_c10d'|"
    r"No module named 'torch\._C\._distributed_c10d'|"
    r"cannot import name '\w+' from 'torch\._C\._distributed_c10d' \(unknown location\))|"
    r"cannot import name '(?P<name>\w+)' from 'torch\._C\._distributed_c10d' \(|"
    r"module 'torch\._C\._distributed_c10d' has no attribute '(?P<attr>\w+)'"
)
_NO_CUDA_RUNTIME = lazy_re.compile(r"No CUDA runtime is found, using CUDA_HOME=")
_UCX_SHM_FRAME = lazy_re.compile(r"^\s*\d+\s+0x[0-9a-fA-F]+\s+(?P<fn>ncclShm\w*|shmOpen|shmSetup)\(\)")
_UCX_FRAME = lazy_re.compile(r"^\s*\d+\s+0x[0-9a-fA-F]+\s+(?P<fn>\S+?)(?:\(\))?\s")
_UCX_HANDLER = lazy_re.compile(
    r"^(?:killpg|raise|gsignal|abort|__sigaction|__restore_rt|__nss_database_lookup|__funlockfile|"
    r"_L_unlock_\d+|ucs_\w+|\?\?\?)$"
)
_UCX_HEADER = lazy_re.compile(r"==== backtrace \(tid:\s*\d+\) ====")
_SIGNAL_SHOWN = lazy_re.compile(r"Caught signal \d+|received by PID|\bBus error\b|\bSIGBUS\b")
_TRACEBACK = lazy_re.compile(r"Traceback \(most recent call last\)|^\s*File \"[^\"]+\", line \d+, in ")


def _gloo_sysfs(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    cond = m.group("cond")
    why = m.group("rest").strip(" .")
    err = why.rsplit(".", 1)[-1].strip() if why else ""
    if " vs " in err:
        err = ""  # only the compared values, no strerror
    facts = {"source": f"linux.cc:{m.group('line')}", "check": cond}
    if err:
        facts["error"] = err
    if cond.startswith("rv != -1") or cond.startswith("rv < "):
        what = (
            "readlink() of a device under /sys/bus/pci/devices failed"
            + (f" ({err})" if err else "")
            + ": the network interface gloo uses has no PCI device (a bridge, veth, bond, VPN or "
            "loopback: its bus id is empty) or the container has no sysfs"
        )
    elif cond == "sep != std::string::npos":
        what = "/proc/modules could not be parsed (a sandbox that fakes /proc)"
    else:
        what = "listing /sys/bus/pci/devices or reading a device's class failed" + (
            f" ({err})" if err else ""
        )
    return [
        row.event(
            hit,
            f"{hit.who()}: gloo could not read the PCI topology from sysfs ({what}); set GLOO_SOCKET_IFNAME "
            "to a physical NIC, mount /sys, or run CUDA tensors on NCCL",
            facts,
            dedupe=(row.code,),
        )
    ]


def _mpi_build(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("cuda"):
        problem, what = (
            "MPI without CUDA-aware support",
            "ProcessGroupMPI was given a CUDA tensor but the MPI library is not CUDA-aware (build Open MPI "
            "with --with-cuda and torch against it, or move the tensors to the CPU / use the NCCL backend)",
        )
    else:
        problem, what = (
            "MPI without MPI_THREAD_SERIALIZED",
            "the MPI library torch was built against lacks the MPI_THREAD_SERIALIZED threading level c10d "
            "needs (an MPI built without thread support)",
        )
    return [
        row.event(
            hit, f"{hit.who()}: {what}", {"problem": problem, "backend": "mpi"}, dedupe=(row.code, problem)
        )
    ]


def _pybind_skew(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    text = " ".join([hit.text, *(ln.text for ln in hit.after(12, same_rank=False))])
    if "torch._C" not in text:
        return None
    km = _KWARGS.search(text)
    if not km:
        return None
    supported = text[: km.start()]
    names = [kv.split("=", 1)[0].strip() for kv in km.group("kw").split(", ") if "=" in kv]
    unknown = [n for n in names if not re.search(rf"\b{re.escape(n)}\s*:", supported)]
    if not unknown:
        return None  # a listed keyword with a wrong value: the caller's (rdzv_values, RUN224)
    tm = re.search(r"torch\._C\.[\w.]+", supported)
    binding = tm.group(0) if tm else "torch._C"
    return [
        row.event(
            hit,
            f"{hit.who()}: {binding} has no keyword {', '.join(unknown)} that torch's own Python passes: "
            "torch's .py files and its compiled library come from different releases (two installs mixed); "
            "reinstall one torch build",
            {"binding": binding, "unknown_kwargs": unknown},
            dedupe=(row.code, binding),
        )
    ]


def _c10d_names(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("nodist"):
        return [
            row.event(
                hit,
                f"{hit.who()}: this torch was built without torch.distributed (no "
                "torch._C._distributed_c10d: macOS < 1.12, Windows < 1.7, USE_DISTRIBUTED=0); install a "
                "build that has it",
                {"problem": "torch built without torch.distributed"},
                code=C.LIBRARY_MISSING.code,
                dedupe=(C.LIBRARY_MISSING.code, "no torch.distributed"),
            )
        ]
    name = m.group("name") or m.group("attr")
    return [
        row.event(
            hit,
            f"{hit.who()}: torch._C._distributed_c10d has no '{name}': torch's compiled library is older "
            "than the code importing from it (two torch installs mixed, or a package built for a newer "
            "torch)",
            {"binding": "torch._C._distributed_c10d", "missing_name": name},
            dedupe=(row.code, "c10d names", name),
        )
    ]


def _no_cuda_runtime(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not any(_TRACEBACK.search(ln.text) for ln in hit.after(60, same_rank=False)):
        return []  # a build host importing cpp_extension: no failure
    return [
        row.event(
            hit,
            f"{hit.who()}: torch found no usable CUDA runtime (torch.cuda.is_available() is False: a "
            "CPU-only torch, no driver or no visible GPU) and the job then failed at its GPU or distributed "
            "set-up",
            {"problem": "torch.cuda.is_available() is False"},
            tier=2,
            dedupe=(row.code, "no_cuda_runtime"),
        )
    ]


def _ucx_shm_frames(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    for ln in reversed(hit.before(8, same_rank=False)):
        if _UCX_HEADER.search(ln.text):
            break
        f = _UCX_FRAME.match(ln.text)
        if not f or not _UCX_HANDLER.match(f.group("fn")):
            return None  # a frame of other code below the handler: the fault was not in the segment open
    else:
        return None  # no backtrace header above: not UCX's block
    near = [*hit.before(60, same_rank=False), *hit.after(60, same_rank=False)]
    if any(_SIGNAL_SHOWN.search(ln.text) for ln in near):
        return None  # the signal line is shown: process_crash reads it with its frames
    fn = m.group("fn")
    return [
        row.event(
            hit,
            f"{hit.who()}: a process faulted in NCCL's shared-memory segment open ({fn}; UCX's backtrace, "
            "its signal line cut): /dev/shm is smaller than NCCL's segments (a container without --shm-size "
            "or --ipc=host)",
            {"frame": fn, "likely_cause": "shared_memory", "reporter": "ucx", "signal_line": "cut"},
            tier=1,
            dedupe=(row.code, hit.rank, "ucx shm frames"),
        )
    ]


SIGNATURES = (
    Signature(
        "gloo sysfs PCI reads",
        _GLOO_SYSFS,
        _gloo_sysfs,
        C.GLOO_SYSFS_PCI_UNREADABLE.code,
        anchors=(b"gloo/common/linux.cc",),
        worth=(rb"gloo/common/linux\.cc:\d+\]",),
        words=("linux.cc",),
        examples=(
            "RuntimeError: [enforce fail at "
            "/home/ubuntu/git/pytorch/torch/lib/gloo/gloo/common/linux.cc:103] "
            "rv != -1. -1 vs -1. Invalid argument",
        ),
    ),
    Signature(
        "ProcessGroupMPI's checks of its MPI",
        _MPI_BUILD,
        _mpi_build,
        C.COLLECTIVE_BACKEND_MISSING.code,
        anchors=(b"CUDA tensor detected and the MPI used", b"Used MPI implementation doesn"),
        words=("cuda tensor detected", "used mpi implementation"),
        examples=(
            "RuntimeError: CUDA tensor detected and the MPI used doesn't have CUDA-aware MPI support",
            "RuntimeError: Used MPI implementation doesn't have the minimum level of threading support: "
            "MPI_THREAD_SERIALIZED. This is required by c10d package",
        ),
    ),
    Signature(
        "torch binding without a keyword its Python passes",
        _PYBIND_ARGS,
        _pybind_skew,
        C.TORCH_BINDING_SKEW.code,
        anchors=(b"incompatible constructor arguments", b"incompatible function arguments"),
        worth=(rb"incompatible (?:constructor|function) arguments",),
        words=("incompatible constructor arguments", "incompatible function arguments"),
        examples=(
            "TypeError: __init__(): incompatible constructor arguments. The following argument types are "
            "supported:",
        ),
    ),
    Signature(
        "torch._C._distributed_c10d without a name its importer expects",
        _C10D_NAMES,
        _c10d_names,
        C.TORCH_BINDING_SKEW.code,
        anchors=(b"torch._C._distributed_c10d", b"module 'torch._C' has no attribute '_distributed_c10d'"),
        worth=(rb"torch\._C(?:\._distributed_c10d|' has no attribute '_distributed_c10d)",),
        words=("torch._c._distributed_c10d", "'_distributed_c10d'"),
        examples=(
            "ImportError: cannot import name '_DistributedBackendOptions' from 'torch._C._distributed_c10d' "
            "(/usr/lib/python3.10/site-packages/torch/_C/_distributed_c10d.cpython-310-x86_64-linux-gnu.so)",
            "AttributeError: module 'torch._C' has no attribute '_distributed_c10d'",
        ),
    ),
    Signature(
        "cpp_extension found no CUDA runtime",
        _NO_CUDA_RUNTIME,
        _no_cuda_runtime,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"No CUDA runtime is found, using CUDA_HOME=",),
        words=("no cuda runtime is found",),
        examples=("No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'",),
    ),
    Signature(
        "ucx backtrace in nccl's shm open, signal line cut",
        _UCX_SHM_FRAME,
        _ucx_shm_frames,
        C.SHARED_MEMORY_TOO_SMALL.code,
        anchors=(b"ncclShm", b"shmOpen()", b"shmSetup()"),
        worth=(rb"0x[0-9a-fA-F]+\s+(?:ncclShm\w*|shmOpen|shmSetup)\(\)",),
        words=("ncclshm", "shmopen()", "shmsetup()"),
        examples=(
            " 2 0x000000000006f425 ncclShmOpen()  /dvs/p4/build/sw/gpgpu/nccl/gitfusion/stable/src/misc/"
            "shmutils.cc:52",
        ),
    ),
)
parse = gated_reader(SIGNATURES)
