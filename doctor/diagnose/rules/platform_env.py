"""platform_env: driver_env as the platform around the job words it - the scheduler that cannot
authenticate the job's request, a POSIX-only launcher or module on native Windows, and NVSHMEM without the
GPUDirect RDMA kernel module.

Formats, read at their sources:
- Slurm's MUNGE authentication (src/plugins/auth/munge/auth_munge.c and slurm_protocol_api.c, 17.x-23.x),
  as srun / sbatch / salloc print it: "srun: error: Munge encode failed: Failed to access
  \"/var/run/munge/munge.socket.2\": No such file or directory" (munged not running on this machine; the
  other encode errors "Socket communication error", "Munged communication error"), "If munged is up, restart
  with --num-threads=10", "slurm_send_node_msg: auth_g_create: REQUEST_RESOURCE_ALLOCATION has authentication
  error" (older "auth_g_verify: ... has authentication error: ..."), the decode side "Munge decode failed:
  Invalid credential" / "Unauthorized credential for client UID=..." (munge.key differs between hosts),
  "Expired credential" / "Rewound credential" (clocks apart), and the client's summary "Unable to allocate
  resources: Protocol authentication error" / "Batch job submission failed: Protocol authentication error"
  (slurm_errno SLURM_PROTOCOL_AUTHENTICATION_ERROR). No job step starts (RUN374). The job credential a
  node's slurmd checks at a step's launch (src/common/slurm_errno.c ESLURMD_INVALID_JOB_CREDENTIAL
  "Invalid job credential", ESLURMD_CREDENTIAL_EXPIRED "Job credential expired", ..._REPLAYED), as srun
  prints it: "srun: error: Task launch for StepId=1234.0 failed on node node-3: Invalid job credential"
  (older "Task launch for 1234.0 ...", "Application launch failed: Invalid job credential"): signed with
  MUNGE by the controller, so a key or clock apart on that node (RUN374, read before `launch_start`'s task
  launch row).
- A POSIX-only piece on native Windows (the Python docs' availability notes: "Unix"): a launcher exec'ing a
  shell ("FileNotFoundError: [Errno 2] No such file or directory: '/bin/sh'" under a traceback whose frames
  are C:\\... paths, e.g. torchpack's drunner os.execve('/bin/sh', ...)); a Unix-only module ("No module named
  'fcntl'" / 'resource' / 'pwd' / 'grp' / 'termios' / 'posix' / '_posixsubprocess'); a POSIX signal or
  process call ("module 'signal' has no attribute 'SIGKILL'" / 'SIGUSR1' / 'SIGHUP' / 'SIGALRM', "module
  'os' has no attribute 'setsid'" / 'fork' / 'getuid' / 'killpg' / 'getpgid' / 'sched_getaffinity'); the
  multiprocessing start methods Windows lacks ("ValueError: cannot find context for 'fork'" /
  'forkserver', Lib/multiprocessing/context.py) and "module 'socket' has no attribute 'AF_UNIX'" (RUN375).
  The /bin/sh row needs a Windows path near it: a Linux image without a shell is another story.
- NVSHMEM's IB transports (src/modules/transport/ibrc/ibrc.cpp nvshmemt_init, 2.x-3.x; ibdevx / ibgda share
  the check): "ibrc.cpp:nvshmemt_init:1851: neither nv_peer_mem, or nvidia_peermem detected. Skipping
  transport." - the GPUDirect RDMA kernel module is not loaded, so NVSHMEM (DeepEP's internode kernels)
  cannot register GPU memory with the NIC (RUN385, tier 1: a later error that says more comes first).
- Transformer Engine's multicast query (transformer_engine/common/util/cuda_runtime.cpp supports_multicast,
  1.x; tex.device_supports_multicast() from initialize_ub, the tp-comm-overlap set-up of Megatron and NeMo):
  "RuntimeError: .../transformer_engine/common/util/cuda_runtime.cpp:118 in function operator(): CUDA Error:
  invalid argument": cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED) on a driver older than
  CUDA 12.1, which does not know the attribute (TE built with CUDA >= 12.1; newer TE checks
  cudaDriverGetVersion first). The only call in that file that answers "invalid argument"; a paste cut
  inside the message ("CUDA Error: inv") needs the device_supports_multicast frame above it (RUN261).
- TensorRT-LLM's peer-access check before its custom all-reduce (tensorrt_llm/_ipc_utils.py set_peer_access,
  0.6-0.1x): "RuntimeError: Can't enable access between nodes 0 and 1" - cudaDeviceCanAccessPeer answered 0
  for two GPUs of the tensor-parallel group (PCIe GPUs behind a host bridge, ACS / IOMMU, a VM, GeForce
  cards): the engine was built with the custom all-reduce (use_custom_all_reduce) that needs P2P (RUN291,
  the code of CUDA's own cudaErrorPeerAccessUnsupported).
- torch's CUDA tensor sharing (torch/multiprocessing/reductions.py reduce_tensor -> storage._share_cuda_() ->
  cudaIpcGetMemHandle in torch/csrc/generic/StorageSharing.cpp, 0.3-1.x; c10's CUDA check in 1.8+): CUDA IPC
  does not exist on native Windows (nor under WSL), so a DataLoader worker, an mp.Process argument or a
  Queue that carries a CUDA tensor fails: "RuntimeError: cuda runtime error (801) : operation not supported
  at ..\\torch/csrc/generic/StorageSharing.cpp:247" (CUDA 10.1+ numbering), "(71) : operation not supported"
  (CUDA 9-10.0), THC's own line "THCudaCheck FAIL file=..\\torch/csrc/generic/StorageSharing.cpp line=253
  error=63 : OS call failed or operation not supported on this OS" (63, later 304), the same text before
  " at ...StorageSharing.cpp:253" alone (0.2-0.4), and 1.8+'s "RuntimeError: CUDA error: operation not
  supported" right under the storage._share_cuda_() frame (RUN720). The same errors anywhere else (a kernel,
  cudaMallocAsync, cuMem) are not this row's.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_MUNGE = lazy_re.compile(
    r"Munge (?P<dir>encode|decode) failed: (?P<why>[^\n]*?)\s*$|"
    r"auth_g_(?:create|verify): (?P<rpc>[A-Z_]+) has authentication error|"
    r"\bProtocol authentication error\b|"
    r"If munged is up, restart with --num-threads|"
    r"(?P<cred>Invalid job credential|Job credential expired|Job credential replayed)"
)
_MUNGE_WHY = lazy_re.compile(r"Munge (?:encode|decode) failed: ([^\n]*?)\s*$")
_MUNGE_SOCKET = lazy_re.compile(r"munge\.socket|Socket communication error|Munged communication error")
_MUNGE_KEY = lazy_re.compile(r"Invalid credential|Unauthorized credential")
_MUNGE_CLOCK = lazy_re.compile(r"Expired credential|Rewound credential|Job credential expired")
_CRED_NODE = lazy_re.compile(r"failed on node ([\w.-]+):")  # srun's "Task launch for ... failed on node X:"
_SLURM_TOOL = lazy_re.compile(r"\b(srun|sbatch|salloc|scontrol|squeue|sinfo|slurmd|slurmctld|slurmstepd)\b")

_NO_SHELL = lazy_re.compile(
    r"FileNotFoundError: \[Errno 2\] No such file or directory: '(?P<sh>/bin/(?:ba|z|da)?sh|/usr/bin/env)'"
)
_WINDOWS_PATH = lazy_re.compile(r"(?:^|[\s\"'(])[A-Za-z]:\\\\?[\w.$ -]+\\")
_POSIX_MODULE = lazy_re.compile(
    r"(?:ModuleNotFoundError|ImportError): No module named '(?P<mod>fcntl|resource|pwd|grp|termios|posix|"
    r"_posixsubprocess)'"
)
_POSIX_ATTR = lazy_re.compile(
    r"AttributeError: module '(?P<mod>signal|os)' has no attribute '(?P<attr>"
    r"SIG(?:KILL|USR1|USR2|HUP|ALRM|QUIT|CHLD|PIPE|CONT|STOP|TSTP|TTIN|TTOU)|"
    r"setsid|fork|forkpty|getuid|geteuid|getpgid|killpg|setpgrp|getpgrp|setpgid|sched_getaffinity|"
    r"sched_setaffinity|wait3|wait4|WNOHANG|getloadavg)'"
)

# multiprocessing's start methods (Lib/multiprocessing/context.py): "ValueError: cannot find context for
# 'fork'" ('forkserver'): only 'spawn' exists on Windows; and socket.AF_UNIX, which Windows' Python does not
# define ("module 'socket' has no attribute 'AF_UNIX'").
_POSIX_CONTEXT = lazy_re.compile(
    r"ValueError: cannot find context for '(?P<ctx>fork|forkserver)'|"
    r"AttributeError: module 'socket' has no attribute '(?P<sock>AF_UNIX)'"
)

_NVSHMEM_PEERMEM = lazy_re.compile(
    r"(?:transport/(?P<t>\w+)/\w+\.cpp:\S*\s*)?neither nv_peer_mem,? or nvidia_peermem detected"
)


def _near(hit: Hit, n: int = 12) -> list[str]:
    return [ln.text for ln in (*hit.before(n, same_rank=False), hit.line, *hit.after(n, same_rank=False))]


def _munge(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    near = _near(hit)
    joined = "\n".join(near)
    # "Protocol authentication error" or the thread hint alone: Slurm's words, but only with a Slurm tool or
    # MUNGE in sight
    if (
        not m.group("dir")
        and not m.group("rpc")
        and not m.group("cred")
        and "munge" not in joined.lower()
        and not _SLURM_TOOL.search(joined)
    ):
        return None
    facts: dict[str, Any] = {"scheduler": "slurm", "auth": "munge"}
    why = next((w.group(1) for w in map(_MUNGE_WHY.search, near) if w), None)
    if why:
        facts["munge_error"] = why[:160]
    if m.group("rpc"):
        facts["rpc"] = m.group("rpc")
    if m.group("cred"):
        facts["job_credential"] = m.group("cred")
        node = _CRED_NODE.search(hit.text)
        if node:
            facts["host"] = node.group(1)
    if m.group("cred") == "Invalid job credential" and not _MUNGE_SOCKET.search(joined):
        facts["reason"] = "job_credential_rejected"
        cause = (
            "a node's slurmd rejected the job credential the controller signed: the MUNGE key (or "
            "slurm.key) differs on that node, or its clock is apart"
        )
    elif _MUNGE_SOCKET.search(joined):
        facts["reason"] = "munged_unreachable"
        cause = "the MUNGE daemon (munged) is not running or its socket is absent on this machine"
    elif _MUNGE_KEY.search(joined):
        facts["reason"] = "munge_key_mismatch"
        cause = "the MUNGE key differs between this host and the controller (/etc/munge/munge.key)"
    elif _MUNGE_CLOCK.search(joined):
        facts["reason"] = "clock_skew"
        cause = "the clocks of this host and the controller are apart (MUNGE credentials expire)"
    else:
        facts["reason"] = "slurm_authentication"
        cause = "munged down, a munge.key that differs between hosts, or clocks apart"
    tool = _SLURM_TOOL.search(joined)
    return [
        row.event(
            hit,
            f"{tool.group(1) if tool else 'Slurm'} could not authenticate its request to the controller "
            f"(MUNGE): {cause}; no job step was allocated. Check `systemctl status munge` and `munge -n | "
            "unmunge` on this host (and `munge -n | ssh <controller> unmunge`); a machine without Slurm "
            "runs the non-Slurm launcher instead",
            facts,
            dedupe=(row.code,),
        )
    ]


def _no_shell(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not any(_WINDOWS_PATH.search(t) for t in _near(hit, 30)):
        return None  # a Linux image without a shell: not this family
    return [
        row.event(
            hit,
            f"{hit.who()}: the launcher execs {m.group('sh')}, which native Windows does not have: it is "
            "POSIX-only; run the job under Linux or WSL2 (or the framework's Windows launcher)",
            {"platform": "windows", "missing": m.group("sh"), "reason": "posix_only"},
            dedupe=(row.code,),
        )
    ]


def _posix_module(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    mod = m.group("mod")
    return [
        row.event(
            hit,
            f"{hit.who()}: Python has no '{mod}' module on this platform: it exists only on Unix, so this "
            "code runs on native Windows where it cannot; run it under Linux or WSL2",
            {"platform": "windows", "missing_module": mod, "reason": "posix_only"},
            dedupe=(row.code,),
        )
    ]


def _posix_attr(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    name = f"{m.group('mod')}.{m.group('attr')}"
    return [
        row.event(
            hit,
            f"{hit.who()}: {name} does not exist on this platform (a POSIX signal or process call, absent on "
            "native Windows): the launcher or library is POSIX-only; run it under Linux or WSL2",
            {"platform": "windows", "missing_attribute": name, "reason": "posix_only"},
            dedupe=(row.code,),
        )
    ]


def _posix_context(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    what = f"multiprocessing's '{m.group('ctx')}' start method" if m.group("ctx") else "socket.AF_UNIX"
    return [
        row.event(
            hit,
            f"{hit.who()}: {what} does not exist on native Windows (only 'spawn' processes / no Unix "
            "sockets): the launcher or library is POSIX-only; run it under Linux or WSL2",
            {
                "platform": "windows",
                "missing_attribute": m.group("ctx") or "socket.AF_UNIX",
                "reason": "posix_only",
            },
            dedupe=(row.code,),
        )
    ]


def _nvshmem_peermem(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"engine": "NVSHMEM", "reason": "gpudirect_rdma_module_missing"}
    if m.group("t"):
        facts["transport"] = m.group("t")
    return [
        row.event(
            hit,
            f"{hit.who()}: NVSHMEM found no GPUDirect RDMA kernel module (nvidia_peermem / nv_peer_mem) and "
            "skipped its InfiniBand transport, so GPU memory cannot be registered with the NIC: `modprobe "
            "nvidia_peermem` on every node (or a DMA-BUF capable kernel and NIC driver)",
            facts,
            dedupe=(row.code, "nvshmem"),
        )
    ]


_TE_MULTICAST = lazy_re.compile(
    r"transformer_engine/common/util/cuda_runtime\.cpp:(?P<line>\d+) in function operator\(\): "
    r"CUDA (?:Driver )?Error: (?P<msg>inv[a-z ]*)"
)
_TE_MULTICAST_FRAME = lazy_re.compile(r"\bdevice_supports_multicast\(|\bsupports_multicast\b")


def _te_multicast(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    msg = m.group("msg").rstrip()
    if not "invalid argument".startswith(msg):
        return None
    if msg != "invalid argument" and not any(
        _TE_MULTICAST_FRAME.search(ln.text) for ln in hit.before(12, same_rank=False)
    ):
        return None  # a cut message with no multicast frame above it: another call of that file
    return [
        row.event(
            hit,
            f"{hit.who()}: Transformer Engine's multicast query (device_supports_multicast) failed with "
            "'invalid argument': the NVIDIA driver is older than CUDA 12.1 and does not know the multicast "
            "attribute; update the driver (>= 530, 535+ for NVLink SHARP) or use a TE release that checks "
            "the driver's version first, or run without --tp-comm-overlap",
            {
                "library": "transformer_engine",
                "cuda_call": "cuDeviceGetAttribute",
                "reason": "driver_too_old",
            },
            dedupe=(row.code, "te_multicast"),
        )
    ]


_TRTLLM_PEER = lazy_re.compile(r"Can't enable access between nodes (?P<a>\d+) and (?P<b>\d+)")


def _trtllm_peer(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    a, b = int(m.group("a")), int(m.group("b"))
    return [
        row.event(
            hit,
            f"{hit.who()}: TensorRT-LLM found no peer-to-peer access between GPUs {a} and {b} "
            "(cudaDeviceCanAccessPeer = 0: PCIe GPUs behind a host bridge, ACS / IOMMU, a VM, or GeForce "
            "cards), which its custom all-reduce needs: rebuild the engine without it "
            "(--use_custom_all_reduce disable) or run where the GPUs have P2P (nvidia-smi topo -p2p r)",
            {"reason": "peer_access_unsupported", "gpus": [a, b], "library": "tensorrt_llm"},
            dedupe=(row.code, "trtllm_peer"),
        )
    ]


# torch's CUDA IPC at StorageSharing.cpp: "cuda runtime error (801) : operation not supported at ...", THC's
# "THCudaCheck FAIL file=...StorageSharing.cpp line=253 error=63 : OS call failed ...", the bare text before
# " at ...StorageSharing.cpp"; 1.8+'s c10 check "CUDA error: operation not supported" (or 304's text) under
# the _share_cuda_ frame.
_IPC_TEXT = (
    r"(?P<what>operation not supported(?: on this OS)?|OS call failed or operation not supported on this OS)"
)
_CUDA_IPC = lazy_re.compile(
    r"(?:cuda runtime error \((?P<n>801|71|63|304)\) : )?" + _IPC_TEXT + r" at \S*StorageSharing\.cpp|"
    r"THCudaCheck FAIL file=\S*StorageSharing\.cpp line=\d+ error=(?P<n2>801|71|63|304) : |"
    r"\bCUDA error: (?P<what2>operation not supported|OS call failed or operation not supported on this OS)\b"
)
_SHARE_FRAME = lazy_re.compile(r"_share_cuda_\(|\breduce_tensor\b|\bcudaIpc(?:Get|Open)MemHandle\b")


def _cuda_ipc(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("what2") and not any(_SHARE_FRAME.search(ln.text) for ln in hit.before(6, same_rank=False)):
        return None  # the same CUDA error elsewhere (a kernel, an allocator): not the tensor sharing
    number = m.group("n") or m.group("n2")
    facts: dict[str, Any] = {"reason": "cuda_ipc_unsupported", "api": "cudaIpcGetMemHandle"}
    if number:
        facts["cuda_error"] = int(number)
    return [
        row.event(
            hit,
            f"{hit.who()}: a CUDA tensor could not be shared with another process (CUDA IPC, "
            "storage._share_cuda_: operation not supported): native Windows and WSL have no CUDA IPC; keep "
            "CUDA tensors out of DataLoader workers / mp.Process arguments / queues (num_workers=0 or move "
            "to the GPU after the loader, share CPU tensors) or run on Linux",
            facts,
            dedupe=(row.code, "cuda_ipc"),
        )
    ]


SIGNATURES = (
    Signature(
        "cuda ipc unsupported",
        _CUDA_IPC,
        _cuda_ipc,
        C.CUDA_IPC_UNSUPPORTED.code,
        anchors=(
            b"StorageSharing.cpp",
            b"CUDA error: operation not supported",
            b"CUDA error: OS call failed",
        ),
        words=("storagesharing.cpp", "cuda error: operation not supported", "cuda error: os call failed"),
        examples=(
            "RuntimeError: cuda runtime error (801) : operation not supported at "
            "..\\torch/csrc/generic/StorageSharing.cpp:258",
        ),
    ),
    Signature(
        "slurm munge authentication failed",
        _MUNGE,
        _munge,
        C.SLURM_AUTH_FAILED.code,
        anchors=(
            b"Munge encode failed",
            b"Munge decode failed",
            b"has authentication error",
            b"Protocol authentication error",
            b"If munged is up",
            b"Invalid job credential",
            b"Job credential expired",
            b"Job credential replayed",
        ),
        words=("munge", "has authentication error", "protocol authentication error", "job credential"),
    ),
    Signature(
        "posix shell missing on windows",
        _NO_SHELL,
        _no_shell,
        C.POSIX_ONLY_ON_WINDOWS.code,
        anchors=(b"No such file or directory: '/",),
        worth=(rb"FileNotFoundError: \[Errno 2\] No such file or directory: '/(?:bin|usr/bin)/",),
        words=("no such file or directory",),
    ),
    Signature(
        "posix-only module on windows",
        _POSIX_MODULE,
        _posix_module,
        C.POSIX_ONLY_ON_WINDOWS.code,
        anchors=(b"No module named '",),
        worth=(rb"No module named '(?:fcntl|resource|pwd|grp|termios|posix|_posixsubprocess)'",),
        words=("no module named",),
    ),
    Signature(
        "posix signal or call missing on windows",
        _POSIX_ATTR,
        _posix_attr,
        C.POSIX_ONLY_ON_WINDOWS.code,
        anchors=(b"has no attribute '",),
        worth=(rb"module '(?:signal|os)' has no attribute '",),
        words=("has no attribute",),
    ),
    Signature(
        "fork context or unix sockets missing on windows",
        _POSIX_CONTEXT,
        _posix_context,
        C.POSIX_ONLY_ON_WINDOWS.code,
        anchors=(b"cannot find context for '", b"has no attribute 'AF_UNIX'"),
        worth=(rb"cannot find context for 'fork", rb"has no attribute 'AF_UNIX'"),
        words=("cannot find context for", "af_unix"),
    ),
    Signature(
        "transformer engine multicast query on an old driver",
        _TE_MULTICAST,
        _te_multicast,
        C.DRIVER_TOO_OLD.code,
        anchors=(b"util/cuda_runtime.cpp:",),
        worth=(rb"util/cuda_runtime\.cpp:\d+ in function operator\(\): CUDA (?:Driver )?Error: inv",),
        words=("cuda_runtime.cpp",),
    ),
    Signature(
        "tensorrt-llm peer access check",
        _TRTLLM_PEER,
        _trtllm_peer,
        C.PEER_ACCESS_UNSUPPORTED.code,
        anchors=(b"Can't enable access between nodes",),
        words=("can't enable access between nodes",),
    ),
    Signature(
        "nvshmem without gpudirect rdma module",
        _NVSHMEM_PEERMEM,
        _nvshmem_peermem,
        C.RDMA_MEMORY_REGISTRATION.code,
        tier=1,
        anchors=(b"nvidia_peermem detected",),
        words=("nvidia_peermem detected",),
    ),
)
parse = gated_reader(SIGNATURES)
