"""The environment's versions and builds, said by a library's status or a launcher's argument parser: the
program is fine, the installed stack is older, newer or other than it needs.

Read at the sources:
- cuRAND's status (curand.h, every CUDA since 3.2: curandStatus_t): CURAND_STATUS_VERSION_MISMATCH (100: the
  header the program was built with and the libcurand loaded differ), CURAND_STATUS_DOUBLE_PRECISION_REQUIRED
  (106: the GPU has no double precision the generator needs) and CURAND_STATUS_ARCH_MISMATCH (204: the GPU's
  architecture does not support the requested feature: a Fermi or older board under a newer cuRAND). Printed
  by name (CuPy's "cupy_backends.cuda.libs.curand.CURANDError: CURAND_STATUS_ARCH_MISMATCH", the CUDA
  samples' and many projects' CURAND_CALL macros) or by number (NCCL 1.x's test utilities "CuRAND error 204 at
  test/include/test_utilities.h:112", "curand error: 100", "CURAND failure, status 204"); hipRAND's
  HIPRAND_STATUS_* (the same names and numbers) and rocRAND's ROCRAND_STATUS_* by name. 100 is RUN296 (a
  companion library of another CUDA), 106 and 204 RUN265 (the GPU is not supported by this build). The other
  statuses (101 not initialised, 102 allocation failed, 201 launch failure, 202 pre-existing failure, 203
  initialisation failed, 999 internal) name no environment and are not read; nor are "-lcurand", the package
  names ("nvidia-curand-cu12==10.3.2.106") or "CURAND_STATUS_SUCCESS".
- A launcher's argparse rejecting the flags of a newer launcher ("<prog>: error: unrecognized arguments:
  ..."): torch.distributed.launch before 1.9 (prog "launch.py") knows none of the elastic agent's flags
  (--rdzv_backend, --rdzv_endpoint, --rdzv_id, --rdzv_conf, --standalone, --max_restarts, --monitor_interval,
  --start_method, --role, --redirects, --tee, --log_dir, --local_addr, --run_path): the PyTorch installed is
  older than the command line (or the guide) written for torchrun. torchrun / torch.distributed.run
  ("torchrun", "run.py") of 1.10-2.2 does not know 2.3+'s --local-ranks-filter and --logs-specs (nor later
  --virtual-local-rank, --numa-binding). RUN650. The dash spellings of old flags ("--nproc-per-node") are left
  silent (a released paste of it is labelled ambiguous), and so is a user's script rejecting torchrun's
  "--local_rank" / "--local-rank" ("train.py: error: unrecognized arguments: --local-rank=0": the script's
  parser, not the launcher's version).
- MXNet's tools/launch.py (1.x), whose tracker is the dmlc-core submodule: "Can't load dmlc_tracker package.
  Perhaps you need to run" / "git submodule update --init --recursive", then "ImportError: No module named
  dmlc_tracker" (Python 2) or "ModuleNotFoundError: No module named 'dmlc_tracker'": the launcher's own
  package is not there (a source tree cloned without --recursive, a pip install without the tools): RUN389. A
  stack through dmlc_tracker/ssh.py (the tracker running) is not read.
- Dask distributed's get_worker() (distributed/worker.py) since 2023.4 (dask/distributed#7580) returns only
  the worker of a running task and raises "ValueError: No worker found" elsewhere, also inside a function run
  with Client.run: the RAPIDS libraries that called it there (raft_dask/common/comms.py's get_ucx and
  _func_init_all, cugraph/dask/comms/comms.py's get_handle, cuml's comms, dask_cuda) fail when the installed
  distributed is newer than they are (NVIDIA/raft#1365 moved them to Client.run's dask_worker argument). Read
  when a library frame of site-/dist-packages (not distributed's own) calls get_worker right above the
  exception: RUN652. The user's own script calling get_worker() outside a task is a usage bug (not read).
- A thread's title (one short line in a person's words, vocabulary's _title) that names a failure of NCCL or
  of the multi-GPU job on WSL ("Unhandled NCCL error when running on WSL2 with CUDA", "DDP with NCCL backend
  fails under WSL2"): WSL2's GPU driver (the Windows driver exposed through /usr/lib/wsl/lib) has no CUDA IPC
  / P2P between GPUs, a partial NVML and a small /dev/shm, so NCCL's multi-GPU transports fail there (RUN651).
  What failed and how stand within a few words in one clause (vocabulary's _near); an OOM, a question ("How to
  run NCCL on WSL2?") or a title without a failure ("NCCL works on WSL2 now") is not read.
- torch's dispatcher finding no CUDA kernel for an extension's operator (aten/src/ATen/core/dispatch/
  OperatorEntry.cpp reportError): 1.4-1.5 "Could not run 'torchvision::nms' with arguments from the
  'CUDATensorId' backend. 'torchvision::nms' is only available for these backends: [CPUTensorId, ...]", 1.6+
  "... from the 'CUDA' backend. ...", 1.8+ adding "This could be because the operator doesn't exist for this
  backend, or was omitted during the selective/custom build process". An extension's namespace (torchvision,
  torchaudio, fbgemm, mmcv, detectron2, a custom op library) with the GPU's key means the installed wheel was
  built without CUDA kernels or for another torch/CUDA than the one loaded (a CPU wheel of torchvision beside
  a CUDA torch; fbgemm-gpu of another nightly): RUN265. aten::, prim:: and quantized:: operators (torch's
  own, missing for a backend it does not implement: a usage question) and the other keys (CPU, Meta, Sparse*,
  Autograd*) are not read.
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.vocabulary import _near, _title
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_CURAND = lazy_re.compile(
    r"\b(?P<lib>CU|HIP|ROC)RAND_STATUS_(?P<name>ARCH_MISMATCH|VERSION_MISMATCH|DOUBLE_PRECISION_REQUIRED)\b|"
    r"(?i:\bcurand[ _]?(?:error|failure|failed|status)\w*)[ :=(,]{0,3}(?i:status|code)?[ :=(]{0,3}"
    r"(?P<num>100|106|204)\b"
)
_CURAND_WHY = {
    "100": (
        "VERSION_MISMATCH",
        C.CUDA_TOOLKIT_MISMATCH.code,
        "the cuRAND headers the program was built with and the libcurand it loaded are of different CUDA "
        "versions (two CUDA toolkits on the library path, or a wheel built for another CUDA)",
    ),
    "106": (
        "DOUBLE_PRECISION_REQUIRED",
        C.ARCH_UNSUPPORTED.code,
        "the GPU has no double precision, which this generator needs",
    ),
    "204": (
        "ARCH_MISMATCH",
        C.ARCH_UNSUPPORTED.code,
        "the GPU's architecture does not support what cuRAND was asked for (a board older than this CUDA "
        "library supports: run on a newer GPU, or use the CUDA / library release that still supports it)",
    ),
}
_NAME_NUM = {v[0]: k for k, v in _CURAND_WHY.items()}


def _curand(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    num = m.group("num") or _NAME_NUM[m.group("name")]
    name, code, why = _CURAND_WHY[num]
    lib = (m.group("lib") or "CU").lower() + "rand"
    return [
        row.event(
            hit,
            f"{hit.who()}: {lib} failed with {lib.upper()}_STATUS_{name} ({num}): {why}",
            {"library": lib, "status": f"{lib.upper()}_STATUS_{name}", "status_code": int(num)},
            code=code,
            dedupe=(code, "curand", num),
        )
    ]


# torch.distributed.launch (< 1.9) does not know the elastic agent's flags; torchrun 1.10-2.2 not 2.3+'s
_ELASTIC = (
    r"rdzv_backend|rdzv_endpoint|rdzv_id|rdzv_conf|standalone|max_restarts|monitor_interval|start_method|"
    r"role|redirects|tee|log_dir|local_addr|run_path"
)
_NEW_TORCHRUN = r"local[-_]ranks[-_]filter|logs[-_]specs|virtual[-_]local[-_]rank|numa[-_]binding"
_FLAGS = lazy_re.compile(
    r"(?:^|\s)(?:[\w./\\-]{0,200}[/\\])?(?P<prog>launch\.py|run\.py|torchrun(?:\.exe)?): error: "
    r"unrecognized arguments: (?P<args>.{1,400})"
)
_OLD_LAUNCH = lazy_re.compile(r"(?:^|\s)--(?P<flag>" + _ELASTIC + "|" + _NEW_TORCHRUN + r")(?=[=\s]|$)")
_OLD_TORCHRUN = lazy_re.compile(r"(?:^|\s)--(?P<flag>" + _NEW_TORCHRUN + r")(?=[=\s]|$)")


def _flags(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    prog, args = m.group("prog"), m.group("args")
    old = (_OLD_LAUNCH if prog == "launch.py" else _OLD_TORCHRUN).search(args)
    if not old:
        return None  # a flag the launcher never had, or the dash spelling of an old one: not a version
    flag = "--" + old.group("flag")
    if prog == "launch.py":
        why = (
            "torch.distributed.launch before PyTorch 1.9 has no elastic agent, so it does not know the "
            "rendezvous flags the command (or the guide it came from) passes"
        )
    else:
        why = "torchrun before PyTorch 2.3 does not know this flag"
    return [
        row.event(
            hit,
            f"{hit.who()}: the launcher ({prog}) rejected {flag}: {why}; the installed PyTorch is older than "
            "the command line: upgrade PyTorch, or drop the flag and launch the way this version does",
            {"launcher": prog, "flag": flag, "reason": "launcher_older_than_flag"},
            dedupe=(row.code, prog, flag),
        )
    ]


_DMLC = lazy_re.compile(
    r"Can't load dmlc_tracker package|No module named '?dmlc_tracker\b(?!\.)",
)


def _dmlc(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: MXNet's launcher could not import its tracker (dmlc_tracker, the dmlc-core "
            "submodule): the source tree was cloned without its submodules (git submodule update --init "
            "--recursive) or the tools were not installed with this MXNet",
            {"command": "dmlc_tracker", "reason": "launcher_package_missing", "framework": "mxnet"},
            dedupe=(row.code, "dmlc_tracker"),
        )
    ]


_NO_WORKER = lazy_re.compile(r"\bValueError: No worker found\b")
_GET_WORKER = lazy_re.compile(r"distributed[/\\]worker\.py\"?, line \d+, in get_worker\b")
_LIB_FRAME = lazy_re.compile(
    r"(?:site|dist)-packages[/\\](?P<lib>(?!distributed[/\\])[A-Za-z_]\w*)[/\\]\S*\.py\"?, "
    r"line \d+, in (?P<fn>\w+)"
)


def _no_worker(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    above = [ln.text for ln in hit.before(8) if ln.text.strip()]
    at = next((i for i in range(len(above) - 1, -1, -1) if _GET_WORKER.search(above[i])), None)
    if at is None:
        return None
    caller = next((_LIB_FRAME.search(t) for t in reversed(above[:at]) if "line " in t and "File " in t), None)
    if caller is None:
        return None  # the user's own code asked for a worker outside a task: not a version
    lib = caller.group("lib")
    return [
        row.event(
            hit,
            f"{hit.who()}: {lib}'s {caller.group('fn')} asked dask for its worker with get_worker(), which "
            "distributed 2023.4+ answers only inside a task (not in Client.run): the installed distributed "
            f"is newer than this {lib}; install the dask / distributed versions {lib} pins (or a {lib} that "
            "takes Client.run's dask_worker argument)",
            {"library": lib, "function": caller.group("fn"), "reason": "dask_distributed_newer_than_library"},
            dedupe=(row.code, lib),
        )
    ]


_WSL = lazy_re.compile(r"(?i)\bwsl ?2?\b")
_WSL_FAILS = _near(
    r"\bnccl\w*|\brccl\b|\bddp\b|\bdistributed\b|\bmulti-?gpus?\b|\bmulti-?node\b|\ball_?reduce\b|"
    r"\bprocess ?group\b|\binit_process_group\b",
    r"\berrors?\b|\bfail(?:s|ed|ure|ing)?\b|\bcrash(?:es|ed|ing)?\b|\bexception\b|\bunhandled\b",
)
_OOM_WORDS = lazy_re.compile(r"(?i)out of memory|\boom\b")


def _wsl(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _title(hit) or _OOM_WORDS.search(hit.text):
        return None
    failed = _WSL_FAILS.search(hit.text)
    if not failed:
        return None
    return [
        row.event(
            hit,
            f'the report names a failure of NCCL or the multi-GPU job on WSL ("{failed.group(0)}"): '
            "WSL2's GPU driver has no CUDA IPC / peer-to-peer between GPUs, a partial NVML and a small "
            "/dev/shm; set NCCL_P2P_DISABLE=1 (and NCCL_SHM_DISABLE=1), use the gloo backend, or run on "
            "native Linux",
            {"platform": "wsl", "inferred_from": "title", "read_as": "title"},
            dedupe=(row.code, "wsl"),
        )
    ]


# an extension operator with no kernel under the GPU's dispatch key (ROCm builds dispatch HIP tensors as CUDA)
_NO_CUDA_KERNEL = lazy_re.compile(
    r"Could not run '(?P<op>(?!aten::|prim::|_?quantized::)(?P<ns>\w+)::\w+(?:\.\w+)?)' with arguments "
    r"from the '(?P<key>CUDA|CUDATensorId|HIP)' backend"
)


def _no_cuda_kernel(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    op, ns = m.group("op"), m.group("ns")
    return [
        row.event(
            hit,
            f"the installed {ns} has no CUDA kernel for {op}: the wheel was built without CUDA or for "
            f"another torch / CUDA than the one loaded; reinstall {ns} from the index of this torch's exact "
            "version and CUDA (pip list | grep -i torch; "
            "python -c 'import torch; print(torch.version.cuda)')",
            {
                "reason": "extension_without_cuda_kernel",
                "op": op,
                "library": ns,
                "dispatch_key": m.group("key"),
            },
            dedupe=(row.code, "no_cuda_kernel", ns),
        )
    ]


SIGNATURES = (
    Signature(
        "extension operator without a cuda kernel",
        _NO_CUDA_KERNEL,
        _no_cuda_kernel,
        C.ARCH_UNSUPPORTED.code,
        anchors=(b"with arguments from the '",),
        worth=(rb"Could not run '\w+::\w+(?:\.\w+)?' with arguments from the '(?:CUDA|CUDATensorId|HIP)'",),
        words=("with arguments from the",),
    ),
    Signature(
        "curand status of the environment",
        _CURAND,
        _curand,
        C.ARCH_UNSUPPORTED.code,
        anchors=(b"RAND_STATUS_", b"CuRAND", b"CURAND", b"cuRAND", b"curand"),
        worth=(
            rb"(?:CU|HIP|ROC)RAND_STATUS_(?:ARCH_MISMATCH|VERSION_MISMATCH|DOUBLE_PRECISION_REQUIRED)",
            rb"(?i:curand[ _]?(?:error|failure|failed|status))",
        ),
        words=("curand", "hiprand_status_", "rocrand_status_"),
    ),
    Signature(
        "launcher older than its flags",
        _FLAGS,
        _flags,
        C.LAUNCHER_OLDER_THAN_FLAG.code,
        anchors=(b": error: unrecognized arguments: ",),
        words=("unrecognized arguments",),
    ),
    Signature(
        "mxnet launcher without dmlc_tracker",
        _DMLC,
        _dmlc,
        C.LAUNCHER_NOT_FOUND.code,
        anchors=(b"Can't load dmlc_tracker package", b"No module named"),
        worth=(rb"Can't load dmlc_tracker package", rb"No module named '?dmlc_tracker"),
        words=("dmlc_tracker",),
    ),
    Signature(
        "dask get_worker outside a task, called by a library",
        _NO_WORKER,
        _no_worker,
        C.DASK_DISTRIBUTED_SKEW.code,
        anchors=(b"ValueError: No worker found",),
        words=("no worker found",),
    ),
    Signature(
        "title: nccl or the multi-gpu job fails on wsl",
        _WSL,
        _wsl,
        C.NCCL_ON_WSL.code,
        anchors=(b"WSL", b"wsl", b"Wsl"),
        worth=(rb"(?i:\bwsl)",),
        words=("wsl",),
        anchor_from="the platform's name in its usual spellings (case aside)",
        examples=("Unhandled NCCL error when running on WSL2 with CUDA (tested w/o apex)",),
    ),
)
parse = gated_reader(SIGNATURES)
