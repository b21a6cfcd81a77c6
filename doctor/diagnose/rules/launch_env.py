"""launch_env: the environment a job is launched into, as the shell, the launchers, NVML's bindings, torch's
shared-memory allocator and the crash handlers word it when it is not the one the job needs.

Formats, read at their sources:
- A launcher or tool that is not on the PATH (RUN389): dash's "/bin/sh: 1: torchrun: not found" (Python's
  subprocess with shell=True, LLaMA-Factory's FORCE_TORCHRUN, a Makefile), bash's "bash: deepspeed: command
  not found" / "run.sh: line 5: torchrun: command not found", zsh's "zsh: command not found: accelerate",
  csh's "mpirun: Command not found.", Python's "FileNotFoundError: [Errno 2] No such file or directory:
  'torchrun'" (subprocess without a shell), env's "/usr/bin/env: 'python': No such file or directory",
  DeepSpeed's runner "launcher 'pdsh' not installed." (deepspeed/launcher/runner.py); Windows' "'torchrun'
  is not recognized as an internal or external command" (cmd.exe) and "The term 'torchrun' is not
  recognized as the name of a cmdlet" (PowerShell); fish's "fish: Unknown command: torchrun". slurmstepd's
  "execve(): torchrun: No such file or directory" is read by launch_start, the same RUN389; a build tool
  (nvcc) is optional where it is probed. Only the launchers and tools of a training job: another
  program missing (gpustat in a monitoring script) is no cause of the job's failure; Open MPI's remote
  daemon ("bash: orted: command not found") is remote_launch's.
- The console-script launcher pip puts in a Windows environment's Scripts folder (distlib's launcher.c, the
  .exe of torchrun, accelerate, deepspeed, pip): "Fatal error in launcher: Unable to create process using
  '\"C:\\...\\envs\\old\\python.exe\"  \"C:\\...\\Scripts\\torchrun.exe\" ...': The system cannot find the
  file specified." - the interpreter path written into the .exe is gone (the environment was moved, renamed
  or its Python reinstalled); "Unable to find an appended archive." - the .exe is damaged (RUN389).
- DeepSpeed's runner (deepspeed/launcher/runner.py 0.3-0.16, parse_resource_filter, _parse_hostfile): "No
  slot '4' specified on host 'localhost'" (without a hostfile the pool is the GPUs it detects: --include
  names a GPU this machine does not show, RUN264), the same for a host of the hostfile, "Hostname 'x' not
  found in hostfile", "Num nodes is >1 but no extra nodes available via hostfile", "Cannot specify
  num_nodes/gpus with include/exclude",
  "include_str and exclude_str are mutually exclusive", the MPI runners' "MPICH requires same number of
  devices per node" (also "Intel MPI", "mvapich"; multinode_runner.py) (RUN390); Accelerate's "mpirun or
  mpiexec were not found" (accelerate/utils/launch.py 0.34-1.2) is RUN389's. "Unable to find hostfile, will
  proceed with training with local resources only." is a warning, silent; a malformed hostfile ("Hostfile
  contains a bad entry", "Hostfile is not formatted correctly") is launch_start's (RUN304).
- pynvml / nvidia-ml-py (pynvml/nvml.py: one NVMLError_<Name> class per NVML_ERROR_* code, its text
  nvmlErrorString's): "pynvml.nvml.NVMLError_InvalidArgument: Invalid Argument" (a GPU index NVML does not
  have: more ranks per node than GPUs), NVMLError_NoPermission "Insufficient Permissions",
  NVMLError_FunctionNotFound (a driver older than the bindings), NVMLError_Unknown, NVMLError_Timeout,
  NVMLError_OperatingSystem, NVMLError_NotFound / GpuNotFound, NVMLError_Uninitialized; NotSupported and
  NoData are a query the GPU cannot answer (tier 1) (RUN391); NVMLError_CorruptedInforom is the board's
  (RUN348). DriverNotLoaded, LibraryNotFound (driver_stack), LibRmVersionMismatch (driver_env), GpuIsLost
  and ResetRequired (gpu_nvml) are read by their own rows.
- torch's shared-memory allocator (aten/src/ATen/MapAllocator.cpp, 1.x-2.x) when a DataLoader worker or a
  torch.multiprocessing queue cannot place a tensor in /dev/shm: "unable to write to file
  </torch_18692_1954506624_0>: No space left on device (28)", "unable to allocate shared memory(shm) for
  file </torch_...>: Resource temporarily unavailable (11)", "unable to mmap 1024 bytes from file
  </torch_...>: Cannot allocate memory (12)", "unable to open shared memory object </torch_...> in
  read-write mode: Too many open files (24)" (RUN388).
- A fatal signal whose frames are NCCL's communicator set-up (glog's "*** SIGSEGV (@0x50) received by PID N
  (TID ...) from PID M; stack trace: ***" then "@ 0x.. freeRing()", "@ 0x.. commFree()", "@ 0x..
  ncclCommInitAll"; UCX's "Caught signal 11 (Segmentation fault ...)" then "==== backtrace" with " 3 0x..
  ncclCommInitRank()"; Open MPI's "Signal: Segmentation fault (11)" then "[ 2] .../libnccl.so.2(...)"):
  the NCCL library crashed in its own initialisation (a libnccl of another CUDA or build, two NCCLs
  loaded) (RUN336). A bus error there is /dev/shm (process_crash's NCCL shm rows) and an abort follows
  NCCL's own error, so only SIGSEGV and SIGILL are read.
- glibc's abort messages (malloc/malloc.c malloc_printerr, debug/fortify_fail.c): "free(): invalid pointer",
  "double free or corruption (out)", "*** Error in `python3': ... ***", "*** stack smashing detected ***":
  native code corrupted the heap or stack and the process aborts (RUN131, SIGABRT, at the cause's tier).
  Paddle's "FatalError: `Segmentation fault` is detected" after C++ frames of NCCL's set-up is RUN336.
  (glog's and absl's banners of any other fatal signal are signal_banners'.)
- PaddlePaddle's enforce (paddle/fluid/platform/dynload/dynamic_loader.cc, phi/backends/dynload since
  2.4) with its C++ call stack: "2   paddle::platform::dynload::GetNCCLDsoHandle()" under "1
  paddle::platform::EnforceNotMet::EnforceNotMet(...)": the loader of that library threw, the library
  could not be opened (RUN263).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

# The launchers and tools a training job runs; a path before them is allowed ("/opt/conda/bin/torchrun").
_TOOLS = (
    r"torchrun|deepspeed|accelerate|mpirun|mpiexec(?:\.hydra)?|prterun|srun|jsrun|aprun|horovodrun|"
    r"python[23]?(?:\.\d+)?|pip3?|nvidia-smi|llamafactory-cli|colossalai|pdsh|ds_report|torchx|ray|"
    r"hccn_tool|npu-smi|rocm-smi|ibstat|ibv_devinfo"
)
_LAUNCHERS = r"torchrun|deepspeed|accelerate|mpirun|mpiexec|horovodrun|llamafactory-cli|colossalai|torchx"
_NOT_FOUND = lazy_re.compile(
    # dash, bash, a script's "line N:", a bare line; csh's "Command not found."
    r"(?:^|\s)(?:[\w./-]{0,200}/)?(?P<a>" + _TOOLS + r"): (?:[Cc]ommand )?not found\b|"
    r"zsh: command not found: (?:[\w./-]{0,200}/)?(?P<b>" + _TOOLS + r")\s*$|"
    # subprocess without a shell; env (slurmstepd's "execve(): python: No such file or directory" is
    # launch_start's, RUN389 there too)
    r"No such file or directory: '(?:[\w./-]{0,200}/)?(?P<c>" + _TOOLS + r")'|"
    r"env: [\"'‘]?(?P<d>" + _TOOLS + r")[\"'’]?: No such file or directory|"
    r"launcher '(?P<e>\w+)' not installed|"
    # Accelerate's MPI launch of CPU jobs (accelerate/utils/launch.py 0.2x-1.x,
    # prepare_simple_launcher_cmd_env)
    r"(?P<i>mpirun) or mpiexec were not found|"
    # submitit's SlurmExecutor and the NeMo / BigNLP launchers (shutil.which("srun") is None)
    r"Could not detect \"(?P<j>srun)\", are you indeed on a slurm cluster|"
    # Windows cmd.exe and PowerShell; fish
    r"'(?P<f>" + _TOOLS + r")' is not recognized as an internal or external command|"
    r"The term '(?P<g>" + _TOOLS + r")(?:\.exe)?' is not recognized as the name of a cmdlet|"
    r"fish: Unknown command:? '?(?P<h>" + _TOOLS + r")\b|"
    # a person's words in a thread's title or a note: "torchrun command not found error when launching on
    # multi-nodes", "Deepspeed Command Not Found" (the launchers only: "python command not found" is a shell)
    r"(?i:(?:^|[\s'\"`])(?P<k>" + _LAUNCHERS + r")['\"`]? command not found\b)"
)
_HELPER = lazy_re.compile(r"python|pip|\w+-smi$|ibstat$|ibv_devinfo$|hccn_tool$")
_DS_SLOT = lazy_re.compile(r"No slot '(?P<slot>\d+)' specified on host '(?P<host>[^']{1,200})'")
_DS_HOSTFILE = lazy_re.compile(
    r"Hostname '(?P<host>[^']{1,200})' not found in hostfile|"
    r"Num nodes is >1 but no extra nodes available via hostfile|"
    r"Cannot specify num_nodes/gpus with include/exclude|include_str and exclude_str are mutually exclusive|"
    # the MPI runners (deepspeed/launcher/multinode_runner.py 0.9-0.16: MPICH, IMPI, MVAPICH validate_args)
    r"(?:MPICH|Intel MPI|mvapich) requires same number of devices per node"
)
_NVML_NAME = lazy_re.compile(r"\bNVMLError_(?P<name>[A-Z][A-Za-z]{1,40})\b(?P<colon>:\s*(?P<msg>.{0,120}))?")
# read by their own rows (driver_stack, driver_env, gpu_nvml)
_NVML_ELSEWHERE = frozenset(
    ("DriverNotLoaded", "LibraryNotFound", "LibRmVersionMismatch", "GpuIsLost", "ResetRequired")
)
_NVML_WHY = {
    "InvalidArgument": (
        "device_not_found",
        "NVML was asked for a GPU it does not have (a device index past the GPUs of this machine: more ranks "
        "or --nproc_per_node than GPUs, or CUDA_VISIBLE_DEVICES' numbering passed to NVML)",
    ),
    "NotFound": ("device_not_found", "NVML found no such GPU (an index or UUID this machine does not have)"),
    "GpuNotFound": (
        "device_not_found",
        "NVML found no such GPU (an index or UUID this machine does not have)",
    ),
    "NoPermission": (
        "no_permission",
        "NVML refused the call for lack of permission (a container or user without access to the GPU's "
        "management interface)",
    ),
    "OperatingSystem": (
        "no_permission",
        "the operating system blocked NVML's request (a container or cgroup)",
    ),
    "FunctionNotFound": (
        "driver_too_old",
        "the driver's NVML library lacks a function the bindings call: the driver is older than the "
        "nvidia-ml-py / pynvml in use",
    ),
    "Uninitialized": ("nvml_uninitialized", "NVML was called before nvmlInit() succeeded"),
    "NotSupported": (
        "nvml_not_supported",
        "this GPU or driver does not answer that query (a GeForce, Jetson, MIG or vGPU device lacks the "
        "field: the monitoring code must catch it)",
    ),
}
_NVML_LOW = frozenset(("NotSupported", "NoData", "InsufficientSize"))
_NVML_CALL = lazy_re.compile(r"\b(nvml[A-Z]\w{2,60})\(")
_TORCH_SHM = lazy_re.compile(
    r"unable to (?P<what>write to file|allocate shared memory\(shm\) for file|mmap \d+ bytes from file|"
    r"open shared memory object) <(?P<file>[^<>\s]{0,200}torch_[^<>\s]{0,200})>(?: in read-write mode)?"
    r"(?:: (?P<err>[A-Za-z][A-Za-z ]{2,60}?)(?: \((?P<errno>\d+)\)|\.?\s*$)|"
    # torch 1.10-1.13's MapAllocator.cpp assert says it without the reason ("RuntimeError: falseINTERNAL
    # ASSERT FAILED at \"../aten/src/ATen/MapAllocator.cpp\":263, please report a bug to PyTorch. unable to
    # open shared memory object </torch_3573_1497616437> in read-write mode")
    r"(?P<bare> in read-write mode\s*$)|"
    # torch 0.1-0.4's TH allocator (torch/lib/TH/THAllocator.c) through THError, which adds the C file and
    # line instead of a reason: "unable to write to file </torch_18693_1954506624> at
    # /pytorch/torch/lib/TH/THAllocator.c:271" (a write into a full /dev/shm)
    r"(?P<th> at \S*?\bTH\w*\.c(?:pp)?:\d+))"
)
# The signal lines of the crash handlers whose frames follow them.
_SIGNAL = lazy_re.compile(
    r"\*\*\* (?P<glog>SIG(?:SEGV|ILL)) \(@0x[0-9a-fA-F]+\) received by PID (?P<pid>\d+)|"
    r"Caught signal (?P<ucx>11|4) \((?:Segmentation fault|Illegal instruction)|"
    r"Signal: (?P<opal>Segmentation fault|Illegal instruction) \((?:11|4)\)"
)
_NCCL_INIT = lazy_re.compile(
    r"\b(?P<fn>p?ncclCommInit\w{0,20}|p?ncclGetUniqueId|initTransportsRank|commAlloc|commFree|freeRing|"
    r"bootstrapInit|ncclInit|devCommSetup|ncclTopoGetSystem|ncclTopoCompute\w{0,20}|ncclProxyCreate)\b"
)
_FRAME = lazy_re.compile(r"^(?:\[[\w.-]{1,80}:\d+\]\s*)?\s*(?:@\s+0x|\d+\s+0x|\[\s*\d+\]\s|#\d+\s)")
# glibc's fatal messages before its abort() (malloc/malloc.c malloc_printerr, debug/fortify_fail.c):
# 2.26+ print the text alone ("free(): invalid pointer", "double free or corruption (out)", "malloc():
# corrupted top size", "corrupted size vs. prev_size", "munmap_chunk(): invalid pointer"), older ones
# inside "*** Error in `python3': double free or corruption (!prev): 0x000055d0c8a3e2f0 ***"; "*** stack
# smashing detected ***: terminated" (2.34+; older "... ***: python terminated"), "*** buffer overflow
# detected ***". Heap or stack corruption in native code (an extension, a library of the stack): the
# process dies on SIGABRT, and the shell's "Aborted (core dumped)" after it is this.
_GLIBC = lazy_re.compile(
    r"\*\*\* Error in [`'][^'\s]{1,200}': (?P<old>[a-z_]{3,30}(?:\(\))?:? [^:*]{3,60}?)(?::| \*\*\*)|"
    r"\*\*\* (?P<ssp>stack smashing|buffer overflow) detected \*\*\*|"
    r"(?:^|\s-\s|:\s)\s*(?P<bare>double free or corruption \((?:out|top|!prev|fasttop)\)|"
    r"free\(\): (?:invalid (?:pointer|size|next size \((?:fast|normal)\))|"
    r"double free detected in tcache 2)|"
    r"malloc\(\): (?:corrupted top size|memory corruption(?: \(fast\))?|"
    r"unaligned tcache chunk detected|invalid size \(unsorted\)|smallbin double linked list corrupted)|"
    r"corrupted size vs\. prev_size|corrupted double-linked list|munmap_chunk\(\): invalid pointer|"
    r"malloc_consolidate\(\): invalid chunk size|"
    r"realloc\(\): invalid (?:pointer|old size|next size))\s*$"
)
# PaddlePaddle's signal handler ("FatalError: `Segmentation fault` is detected by the operating
# system.") comes after its C++ traceback ("0   paddle::distributed::ProcessGroupNCCL::...", "1
# ncclCommInitRank"): frames numbered without an address.
_PADDLE_FATAL = lazy_re.compile(
    r"FatalError: `(?P<paddle>Segmentation fault|Illegal instruction)` is detected"
)
_PADDLE_FRAME = lazy_re.compile(r"^\s*\d+\s{2,}\S")
_PADDLE_DSO = lazy_re.compile(r"(?:paddle::platform|phi)::dynload::Get(?P<lib>\w{2,20}?)DsoHandle\(\)")
_ENFORCE = lazy_re.compile(r"EnforceNotMet|GetTraceBackString|C\+\+ Traceback|C\+\+ Call Stacks")
_DSO_NAMES = {
    "nccl": "libnccl.so",
    "cudnn": "libcudnn.so",
    "cublas": "libcublas.so",
    "cublaslt": "libcublasLt.so",
    "curand": "libcurand.so",
    "cusolver": "libcusolver.so",
    "cusparse": "libcusparse.so",
    "cupti": "libcupti.so",
    "cufft": "libcufft.so",
    "nvrtc": "libnvrtc.so",
    "cuda": "libcuda.so",
    "tensorrt": "libnvinfer.so",
    "warpctc": "libwarpctc.so",
    "mklml": "libmklml_intel.so",
    "nvjpeg": "libnvjpeg.so",
    "flashattn": "libflashattn.so",
}


def _not_found(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("j") and "raise " in hit.text:
        return []  # the raise statement a traceback shows; the exception's own line follows
    tool = next(g for g in m.groups() if g)
    sudo = any("sudo" in ln.text for ln in hit.before(6, same_rank=False))
    facts: dict[str, Any] = {"command": tool, "reason": "command_not_found"}
    if sudo:
        facts["sudo"] = True
    why = (
        "the driver's tools are not installed here (or the container was started without the NVIDIA runtime)"
        if tool == "nvidia-smi"
        else "it is not installed in this environment or not on the PATH of the shell that ran it (sudo's "
        "root PATH, a non-interactive ssh shell, a container or node without the conda env)"
    )
    return [
        row.event(
            hit,
            f"{hit.who()}: the command '{tool}' was not found: {why}; run it by its full path "
            "(python -m torch.distributed.run for torchrun) or activate the environment in that shell",
            facts,
            # a helper a script probes for (python before python3, nvidia-smi in a prelude) may be followed
            # by the job running anyway: behind any failure the log shows; a launcher is the job's start
            tier=1 if _HELPER.match(tool) else None,
            dedupe=(row.code, tool),
        )
    ]


def _ds_slot(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "raise " in hit.text:
        return []  # the traceback's source line; the exception's own line follows
    host, slot = m.group("host"), int(m.group("slot"))
    local = host in ("localhost", "127.0.0.1")
    facts: dict[str, Any] = {"host": host, "slot": slot, "launcher": "deepspeed"}
    if local:
        facts["reason"] = "requested_gpu_not_visible"
        return [
            row.event(
                hit,
                f"DeepSpeed's launcher was asked for GPU {slot} on {host} (--include / "
                "CUDA_VISIBLE_DEVICES), which is not among the GPUs it detects there: fewer GPUs are "
                "visible than the job names (check nvidia-smi, CUDA_VISIBLE_DEVICES, a GPU held or lost "
                "by an earlier run)",
                facts,
                code=C.DEVICE_MISMATCH.code,
                dedupe=(C.DEVICE_MISMATCH.code, "ds_slot"),
            )
        ]
    facts["reason"] = "slot_not_in_hostfile"
    return [
        row.event(
            hit,
            f"DeepSpeed's launcher was asked for slot {slot} on {host}, which its hostfile does not give "
            "that host (slots=N counts the GPUs from 0): fix the hostfile or --include",
            facts,
            dedupe=(row.code, "ds_slot"),
        )
    ]


def _ds_hostfile(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "raise " in hit.text:
        return []  # the traceback's source line; the exception's own line follows
    facts: dict[str, Any] = {"launcher": "deepspeed", "reason": "hostfile_or_filter"}
    if m.group("host"):
        facts["host"] = m.group("host")
    return [
        row.event(
            hit,
            f"DeepSpeed's launcher cannot build its resource pool: {clip(m.group(0), 100)} (the hostfile, "
            "--include / --exclude and --num_nodes / --num_gpus must name the hosts and GPU slots there are)",
            facts,
            dedupe=(row.code, "ds_hostfile"),
        )
    ]


def _nvml(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    name = m.group("name")
    if name in _NVML_ELSEWHERE:
        return None
    if not m.group("colon") and not hit.text.rstrip().endswith(m.group(0)):
        return None  # named inside a sentence ("except NVMLError_NotSupported"), not raised
    if "warn" in hit.text.lower():
        return []  # a library that caught it and went on
    facts: dict[str, Any] = {"nvml_error": name}
    if m.group("msg"):
        facts["message"] = m.group("msg").strip()
    call = next(
        (c.group(1) for c in map(_NVML_CALL.search, (ln.text for ln in hit.before(8, same_rank=False))) if c),
        None,
    )
    if call:
        facts["nvml_call"] = call
    if name == "CorruptedInforom":
        facts["reason"] = "inforom_corrupted"
        return [
            row.event(
                hit,
                f"{hit.who()}: NVML reports the GPU's InfoROM corrupted (NVMLError_CorruptedInforom): the "
                "board's configuration store is damaged; drain the GPU and have it reflashed or replaced",
                facts,
                code=C.GPU_INFOROM.code,
                dedupe=(C.GPU_INFOROM.code, "nvml"),
            )
        ]
    reason, why = _NVML_WHY.get(
        name,
        (
            "nvml_error",
            "the driver answered NVML with an error (a driver in a bad state, or a container's NVML)",
        ),
    )
    facts["reason"] = reason
    return [
        row.event(
            hit,
            f"{hit.who()}: an NVML call failed (NVMLError_{name}"
            + (f" in {call}" if call else "")
            + f"): {why}",
            facts,
            tier=1 if name in _NVML_LOW or name not in _NVML_WHY else None,
            dedupe=(row.code, name),
        )
    ]


def _torch_shm(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = (m.group("err") or "").strip() or "no reason given"
    facts: dict[str, Any] = {"file": m.group("file"), "error": err, "reason": "shared_memory"}
    if m.group("errno"):
        facts["errno"] = int(m.group("errno"))
    files = "Too many open files" in err
    if files:
        facts["reason"] = "open_files_limit"
    return [
        row.event(
            hit,
            f"{hit.who()}: torch could not place a tensor in shared memory ({m.group('what')} "
            f"<{clip(m.group('file'), 40)}>: {err}): "
            + (
                "the process hit its open-files limit (raise ulimit -n, or "
                "torch.multiprocessing.set_sharing_strategy('file_system'))"
                if files
                else "the open-files limit or a full /dev/shm (raise ulimit -n, or "
                "torch.multiprocessing.set_sharing_strategy('file_system'); --shm-size or --ipc=host)"
                if m.group("bare")
                else "/dev/shm is full or too small for the DataLoader's batches (a container's 64 MB "
                "default: --shm-size or --ipc=host, or fewer workers / smaller batches)"
            ),
            facts,
            dedupe=(row.code, facts["reason"]),
        )
    ]


def _nccl_init_crash(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.groupdict().get("paddle"):
        # the traceback above it, innermost frame last
        frames = [ln.text for ln in hit.before(30, same_rank=False) if _PADDLE_FRAME.match(ln.text)][-10:][
            ::-1
        ]
    else:
        frames = [ln.text for ln in hit.after(16, same_rank=False) if _FRAME.match(ln.text)][:10]
    found = [f.group("fn") for f in map(_NCCL_INIT.search, frames) if f]
    if not found:
        return None
    fn = found[0]
    sig = m.groupdict().get("glog") or (
        "SIGILL"
        if m.groupdict().get("ucx") == "4"
        or "Illegal" in (m.groupdict().get("opal") or m.groupdict().get("paddle") or "")
        else "SIGSEGV"
    )
    facts: dict[str, Any] = {"signal": sig, "frame": fn, "reason": "crash_in_nccl_init", "library": "nccl"}
    if found[-1] != fn:
        facts["nccl_call"] = found[-1]  # the entry point the framework called (ncclCommInitAll, ...)
    if m.groupdict().get("pid"):
        facts["pid"] = int(m.group("pid"))
    return [
        row.event(
            hit,
            f"{hit.who()} died on {sig} inside NCCL's communicator set-up ({fn}): the NCCL library itself "
            "crashed while initialising (a libnccl built for another CUDA or driver, two NCCLs loaded, a "
            "framework and NCCL of mismatched versions); check which libnccl the process loads "
            "(NCCL_DEBUG=INFO prints its version) and install the one the framework was built with",
            facts,
            dedupe=(row.code, hit.rank, "nccl_init"),
        )
    ]


def _glibc(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    what = (m.group("old") or m.group("bare") or f"{m.group('ssp')} detected").strip()
    facts: dict[str, Any] = {"signal": "SIGABRT", "reporter": "glibc", "error": what}
    facts["reason"] = "stack_corruption" if m.group("ssp") else "heap_corruption"
    return [
        row.event(
            hit,
            f"{hit.who()} was aborted by the C library ({clip(what, 60)}): native code corrupted its "
            + ("stack" if m.group("ssp") else "heap")
            + " (an extension or library of another build than the framework, or a bug in one); run it "
            "under gdb or with a matching build of the extension",
            facts,
            dedupe=(row.code, hit.rank, "glibc"),
        )
    ]


def _paddle_dso(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    near = [ln.text for ln in (*hit.before(4, same_rank=False), hit.line)]
    if not any(_ENFORCE.search(t) for t in near):
        return None  # a frame of a stack that did not throw from the loader
    lib = _DSO_NAMES.get(m.group("lib").lower(), f"lib{m.group('lib').lower()}.so")
    return [
        row.event(
            hit,
            f"Paddle's loader of {lib} threw (dynload::Get{m.group('lib')}DsoHandle on the C++ stack): the "
            "library is not installed or not on LD_LIBRARY_PATH, or is of another CUDA than this Paddle",
            {"library": lib, "reason": "dso_not_loaded", "framework": "paddle"},
            dedupe=(row.code, lib),
        )
    ]


# distlib's launcher.c (pip's console scripts on Windows): the interpreter it names is gone, or the .exe is
# damaged
_WIN_LAUNCHER = lazy_re.compile(
    r"Fatal error in launcher: (?P<what>Unable to create process using|Unable to find an appended archive)"
)
_SCRIPT_EXE = lazy_re.compile(r"[\\/]Scripts[\\/](?P<tool>[\w.-]{1,40}?)(?:\.exe)?[\"' ]")


def _win_launcher(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    tool = _SCRIPT_EXE.search(hit.text, m.end())
    facts: dict[str, Any] = {"reason": "console_script_launcher_broken", "platform": "windows"}
    if tool:
        facts["tool"] = tool.group("tool")
    name = f"{facts['tool']}.exe" if tool else "the .exe"
    why = (
        "names a Python that is no longer there (the environment was moved, renamed or its Python "
        "reinstalled)"
        if m.group("what").startswith("Unable to create")
        else "is damaged"
    )
    return [
        row.event(
            hit,
            f"the console-script launcher {name} of this Windows Python environment {why}: reinstall the "
            "package into the active environment (pip install --force-reinstall) or run it as python -m "
            "(python -m torch.distributed.run, python -m accelerate.commands.launch)",
            facts,
            dedupe=(row.code, "win_launcher"),
        )
    ]


SIGNATURES = (
    Signature(
        "windows console-script launcher broken",
        _WIN_LAUNCHER,
        _win_launcher,
        C.LAUNCHER_NOT_FOUND.code,
        anchors=(b"Fatal error in launcher: ",),
        words=("fatal error in launcher",),
    ),
    Signature(
        "launcher command not found",
        _NOT_FOUND,
        _not_found,
        C.LAUNCHER_NOT_FOUND.code,
        anchors=(
            b"not found",
            b"No such file or directory",
            b"command not found",
            b"ommand Not Found",
            b"not installed",
            b"is not recognized as",
            b"Unknown command",
            b"were not found",
            b"are you indeed on a slurm cluster",
        ),
        worth=(
            rb"not found",
            rb"ommand Not Found",
            rb"No such file or directory",
            rb"not installed",
            rb"is not recognized as",
            rb"Unknown command",
            rb"were not found",
            rb"are you indeed on a slurm cluster",
        ),
        words=(
            "not found",
            "no such file or directory",
            "not installed",
            "is not recognized as",
            "unknown command",
            "were not found",
            "are you indeed on a slurm cluster",
        ),
    ),
    Signature(
        "deepspeed slot not in pool",
        _DS_SLOT,
        _ds_slot,
        C.LAUNCHER_RESOURCES.code,
        anchors=(b"No slot '",),
        worth=(rb"No slot '\d",),
        words=("no slot '",),
    ),
    Signature(
        "deepspeed hostfile",
        _DS_HOSTFILE,
        _ds_hostfile,
        C.LAUNCHER_RESOURCES.code,
        anchors=(
            b"not found in hostfile",
            b"no extra nodes available via hostfile",
            b"with include/exclude",
            b"mutually exclusive",
            b"requires same number of devices per node",
        ),
        worth=(
            rb"not found in hostfile",
            rb"no extra nodes available via hostfile",
            rb"with include/exclude",
            rb"include_str and exclude_str",
            rb"requires same number of devices per node",
        ),
        words=("hostfile", "include/exclude", "exclude_str", "requires same number of devices per node"),
    ),
    Signature(
        "nvml error class",
        _NVML_NAME,
        _nvml,
        C.NVML_CALL_FAILED.code,
        anchors=(b"NVMLError_",),
        words=("nvmlerror_",),
    ),
    Signature(
        "torch shared memory",
        _TORCH_SHM,
        _torch_shm,
        C.DATALOADER_SHM_EXHAUSTED.code,
        anchors=(
            b"unable to write to file <",
            b"unable to allocate shared memory",
            b"unable to mmap ",
            b"unable to open shared memory object",
        ),
        words=("unable to",),
    ),
    Signature(
        "fatal signal inside nccl init",
        _SIGNAL,
        _nccl_init_crash,
        C.STACK_LIBRARY_CRASH.code,
        anchors=(b") received by PID", b"Caught signal", b"Signal: "),
        worth=(rb"\) received by PID", rb"Caught signal \d+", rb"Signal: [A-Z][a-z ]+ \(\d+\)"),
        words=("received by pid", "caught signal", "signal: "),
    ),
    Signature(
        "paddle fatal signal inside nccl init",
        _PADDLE_FATAL,
        _nccl_init_crash,
        C.STACK_LIBRARY_CRASH.code,
        anchors=(b"FatalError: `",),
        worth=(rb"FatalError: `",),
        words=("fatalerror: `",),
    ),
    Signature(
        "glibc abort message",
        _GLIBC,
        _glibc,
        C.FATAL_SIGNAL.code,
        anchors=(
            b"*** Error in ",
            b"detected ***",
            b"double free or corruption",
            b"free(): ",
            b"malloc(): ",
            b"corrupted size vs",
            b"corrupted double-linked list",
            b"munmap_chunk(): ",
            b"malloc_consolidate(): ",
            b"realloc(): ",
        ),
        words=(
            "*** error in ",
            "detected ***",
            "double free",
            "free(): ",
            "malloc(): ",
            "corrupted ",
            "munmap_chunk",
            "malloc_consolidate",
            "realloc(): ",
        ),
    ),
    Signature(
        "paddle dynload enforce",
        _PADDLE_DSO,
        _paddle_dso,
        C.LIBRARY_MISSING.code,
        anchors=(b"::dynload::Get",),
        words=("::dynload::get",),
    ),
)

parse = gated_reader(SIGNATURES)
