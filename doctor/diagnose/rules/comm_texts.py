"""Communication-stack texts outside NCCL's and torch's own: shared memory that does not fit /dev/shm, a
NCCL net plugin's data-path timeout, NVSHMEM's bootstrap, XLA's lost NCCL communicator, TensorFlow's TPU
master that never answered, and the Kubernetes API an MPIJob's launcher cannot reach.

Read at their sources:
- UCX's shared-memory (mm) transports, uct/sm/mm/base/mm_iface.c and mm/posix/mm_posix.c (UCX 1.x):
  "mm_iface failed to allocate receive FIFO" and "Not enough memory to write total of 4292720 bytes. Please
  check that /dev/shm or the directory you specified has more available memory." (ENOSPC of its write),
  behind "[1700000000.123456] [node1:123:0]  mm_posix.c:195  UCX  ERROR " or quoted bare. Open MPI's
  help-opal-shmem-mmap.txt (1.6-5.x): "It appears as if there is not enough space for <file> (the
  shared-memory backing file). It is likely that your MPI job will now either abort or experience
  performance degradation." with "Space Requested: N B" / "Space Available: N B" (the text wraps over
  lines). All three: /dev/shm smaller than the segments (RUN360).
- Google's GPUDirect-TCPX NCCL net plugin (nccl-plugin-gpudirecttcpx, net_tcpx.cc tcpxCommProgress):
  "tcpxResult_t tcpxCommProgress(tcpxComm*):1231 NCCL WARN 0x..:0x.., nic 0, enp12s0,
  172.16.0.11<39187><-172.16.0.95<46723> rx rx ctrl timeout cnt 7331502, nanos 10000000585", also behind
  "[ncclNet:2] ", and quoted with the address pair elided ("nic 3, enp6s0, ... rx rx ctrl timeout") (RUN361).
- NVSHMEM's host init (src/host/init/init.cu / init.cpp, nvshmem_api.h / nvshmemx_api.h, 2.x-3.x), its
  NZ_ERROR/NONZERO_EXIT records "<file>:<line>: non-zero status: <n> <message>": "bootstrap_loader_init
  returned error", "bootstrap_init failed", "nvshmem_bootstrap failed", the exit line "nvshmemx_api.h:63:
  non-zero status: 7: Connection timed out, exiting..." (strerror of errno) and "aborting due to error in
  nvshmemi_init_thread" (RUN362).
- XLA's GPU runtime collectives (xla/service/gpu/runtime/collectives.cc, jaxlib 0.4.1-0.4.1x): "custom call
  'xla.gpu.all_gather' failed: Failed to get NCCL comm." - the communicator's creation failed and XLA
  kept none of NCCL's status (RUN363, tier 1: NCCL's own WARN lines, when the log has them, say why).
- TensorFlow's TPU system metadata query (tensorflow/python/tpu/tpu_system_metadata.py, TF 1.13-2.x):
  "Failed to connect to the Tensorflow master. The TPU worker may not be ready (still scheduling) or the
  Tensorflow master address is incorrect: got (grpc://10.240.1.2:8470)." logged with "Retrying (5/288)."
  and finally raised as ValueError; "Found TPU system:" later says it answered (RUN222).
- client-go's reflector (k8s.io/client-go/tools/cache/reflector.go) in an MPIJob launcher's kubectl-delivery
  init container or an operator: "Failed to list *v1.Pod: Get https://10.43.0.1:443/api/v1/...: dial tcp
  10.43.0.1:443: connect: connection refused" (klog 1.x), "failed to list *v1.Pod: Get \"https://...\": dial
  tcp ...: i/o timeout" (later, behind "Failed to watch *v1.Pod: "), or "pods is forbidden": the launcher
  cannot reach or may not use the Kubernetes API, so the ranks are never started (RUN304, tier 1).
- A collective library's own watchdog that names the call in camelCase and its limit in C's %f: "Timeout: A
  call to 'allGather' has taken over 300.000000 seconds. Terminating the distributed job." (quoted in
  torchmetrics #938, where rank 0 alone ran a metric's all_gather; its source is not public code we could
  read, so the line is matched as quoted, the op required to be a collective's): one collective that the
  other ranks never joined (RUN151).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge import nccl_version
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_UCX_SHM = lazy_re.compile(
    r"mm_iface failed to allocate receive FIFO|"
    r"Not enough memory to write total of (?P<bytes>\d+) bytes|"
    r"mm_iface\.c:\d+ +UCX +ERROR +failed to get the first receive descriptor|"
    # SysV segments (UCX_MM sysv, mm_sysv.c via sys.c): the IPC namespace's shmmax/shmall, or /dev/shm's size
    r"shmget\(size=(?P<sysv>\d+) flags=\w+\) for \w+ failed: No space left on device|"
    # uct_mem.c: "failed to allocate %zu bytes using md %s for %s: %s" with a shared-memory md (posix, sysv)
    r"failed to allocate (?P<md>\d+) bytes using md (?:posix|sysv)\b"
)
_OMPI_SHM = lazy_re.compile(r"It appears as if there is not enough space for\b(?P<rest>.*)")
_SPACE = lazy_re.compile(r"Space (Requested|Available):\s*(\d+)\s*B\b")


def _ucx_shm(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {
        "library": "ucx",
        "likely_cause": "shared_memory",
        "error": clip(hit.text.strip(), 300),
    }
    if m.group("bytes") or m.group("sysv") or m.group("md"):
        facts["bytes"] = int(m.group("bytes") or m.group("sysv") or m.group("md"))
    what = "its receive FIFO" if "FIFO" in m.group(0) else f"{facts.get('bytes', '?')} bytes"
    if "descriptor" in m.group(0):
        what = "its first receive descriptor"
    return [
        row.event(
            hit,
            f"{hit.who()}: UCX's shared-memory transport could not allocate {what} in /dev/shm: /dev/shm is "
            "too small for the ranks of this node (a container or pod without a larger /dev/shm)",
            facts,
            dedupe=(row.code, "ucx"),
        )
    ]


def _ompi_shm(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    near = [hit.text, *(ln.text for ln in hit.after(8, same_rank=False))]
    if not any("shared-memory backing" in t for t in near[:4]):
        return None
    facts: dict[str, Any] = {"library": "open_mpi", "likely_cause": "shared_memory"}
    path = re.search(r"(/\S+)", " ".join(near[:3]))
    if path:
        facts["file"] = path.group(1)
    for t in near:
        s = _SPACE.search(t)
        if s:
            facts["space_" + s.group(1).lower() + "_bytes"] = int(s.group(2))
    return [
        row.event(
            hit,
            f"{hit.who()}: Open MPI's shared-memory backing file does not fit in its directory"
            + (f" ({facts['file']})" if "file" in facts else "")
            + ": enlarge /dev/shm (or the session directory's file system)",
            facts,
            dedupe=(row.code, "ompi"),
        )
    ]


_TCPX = lazy_re.compile(
    r"\bnic (?P<nic>\d+), (?P<ifname>[\w.:-]+), (?:(?P<local>\S+?)<-(?P<peer>\S+?)|\.\.\.|…) (?:rx |tx )?"
    r"(?P<dir>rx|tx) (?P<what>ctrl|data) timeout cnt (?P<cnt>\d+)(?:, nanos (?P<nanos>\d+))?"
)


def _tcpx(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {
        "plugin": "gpudirect-tcpx",
        "nic": int(m.group("nic")),
        "interface": m.group("ifname"),
        "timeouts": int(m.group("cnt")),
    }
    if m.group("peer"):  # (a quoted line may elide the pair of addresses: "nic 3, enp6s0, ... rx rx ctrl")
        facts.update(local=m.group("local"), peer=m.group("peer"))
    if m.group("nanos"):
        facts["timeout_s"] = round(int(m.group("nanos")) / 1e9, 3)
    return [
        row.event(
            hit,
            f"{hit.who()}: the GPUDirect-TCPX plugin timed out waiting for {m.group('what')} messages on "
            f"{m.group('ifname')} (nic {m.group('nic')}) from {m.group('peer') or 'its peer'} "
            f"({m.group('cnt')} timeouts): "
            "check the receive-datapath manager and the plugin's NIC settings on both nodes",
            facts,
            dedupe=(row.code,),
        )
    ]


# "<file>:<line>: non-zero status: <n> <message>" and the exit line's ": <strerror>, exiting...".
_NVSHMEM = lazy_re.compile(
    # (?<!\S): this branch's leftmost match starts where its run of non-space characters does
    r"(?<!\S)(?P<file>\S*(?:nvshmem\w*|init|bootstrap\w*)\.(?:cu|cpp|c|h)):(?P<line>\d+): "
    r"non-zero status: (?P<st>-?\d+)"
    r"(?::? (?P<msg>[^\n]*?))?\s*$"
    r"|aborting due to error in nvshmemi_init\w*"
    # "init.cu:nvshmemi_check_state_and_init:1080: nvshmem initialization failed, exiting"
    r"|(?P<generic>nvshmem initialization failed)"
    # the UID bootstrap's own records: "bootstrap_uid.cpp:bootstrap_net_init:160: No socket interface found"
    r"|(?P<bfile>bootstrap_\w+\.cpp):(?P<bfn>\w+):\d+: (?P<bmsg>[^\n]+?)\s*$"
)
_SOCKET_ERR = lazy_re.compile(
    r"Connection (?:timed out|refused|reset)|No route to host|Network is unreachable|"
    r"Name or service not known",
    re.I,
)


def _nvshmem(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("bfile"):
        msg = m.group("bmsg").strip()
        return [
            row.event(
                hit,
                f"{hit.who()}: NVSHMEM's bootstrap failed in {m.group('bfn')} ({clip(msg, 120)})",
                {
                    "library": "nvshmem",
                    "where": f"{m.group('bfile')}:{m.group('bfn')}",
                    "error": clip(msg, 200),
                },
                dedupe=(row.code,),
            )
        ]
    if m.group("file") is None:
        if any(
            _NVSHMEM.search(ln.text) and "non-zero status" in ln.text for ln in hit.before(8, same_rank=False)
        ):
            return []  # the records above it say why
        return [
            row.event(
                hit,
                f"{hit.who()}: NVSHMEM's initialisation failed (nvshmemi_init_thread); its bootstrap "
                "between the processes is the usual cause",
                {"library": "nvshmem"},
                tier=1,
                dedupe=(row.code,),
            )
        ]
    path = m.group("file")
    msg = (m.group("msg") or "").strip().removesuffix("exiting...").strip().rstrip(",").strip()
    nvshmem_file = "nvshmem" in path.lower() or "bootstrap" in (path + msg).lower()
    if not nvshmem_file and not any(
        "nvshmem" in ln.text.lower()
        for ln in [*hit.before(6, same_rank=False), *hit.after(6, same_rank=False)]
    ):
        return None
    facts: dict[str, Any] = {
        "library": "nvshmem",
        "status": int(m.group("st")),
        "where": f"{path}:{m.group('line')}",
    }
    if msg:
        facts["error"] = clip(msg, 200)
    if _SOCKET_ERR.search(msg):
        said = f"its bootstrap could not reach a peer ({msg})"
    elif "bootstrap" in msg.lower():
        said = f"its bootstrap failed ({msg})"
    else:
        return None  # another init step (a CUDA or transport error): its own rows read it
    return [
        row.event(
            hit,
            f"{hit.who()}: NVSHMEM could not initialise: {said}",
            facts,
            dedupe=(row.code,),
        )
    ]


_XLA_COMM = lazy_re.compile(
    r"(?:custom call '(?P<op>[\w.]+)' failed: )?Failed to get NCCL (?:comm(?:unicator)?|clique)\b"
)


def _xla_comm(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "xla"}
    if m.group("op"):
        facts["op"] = m.group("op")
    ver = next((v for v in (nccl_version.find(ln.text) for ln in hit.before(24, False)) if v), None)
    if ver:
        facts.update(ver.facts())
    return [
        row.event(
            hit,
            f"{hit.who()}: XLA could not create the NCCL communicator"
            + (f" of {facts['op']}" if "op" in facts else "")
            + " and kept none of NCCL's reason: rerun with NCCL_DEBUG=INFO (InfiniBand or the interface NCCL "
            "picked is the usual cause across nodes)",
            facts,
            dedupe=(row.code,),
        )
    ]


# TF 1.x before 1.13 ended the sentence at "incorrect:" with no address.
_TF_MASTER = lazy_re.compile(
    r"Failed to connect to the Tensorflow master\. The TPU worker may not be ready"
    r"(?:.{0,80}?got \((?P<addr>[^)\s]*)\))?"
)
_TPU_UP = lazy_re.compile(r"Found TPU system|Initializing the TPU system|TPU system metadata: ")


def _tf_master(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if any(_TPU_UP.search(ln.text) for ln in hit.after(48, same_rank=False)):
        return []  # a retry that then reached the master
    addr = m.group("addr")
    facts: dict[str, Any] = {"problem": "tpu_master_unreachable"}
    if addr:
        facts["master_addr"] = addr
    retry = next(
        (r for r in (re.search(r"Retrying \((\d+)/(\d+)\)", ln.text) for ln in hit.after(4, False)) if r),
        None,
    )
    if retry:
        facts["retry"] = int(retry.group(1))
        facts["retries_max"] = int(retry.group(2))
    return [
        row.event(
            hit,
            f"{hit.who()}: TensorFlow could not reach the TPU's master at {addr or '?'}: the TPU is not "
            "ready (still scheduling, preempted) or the address (--tpu, TPU_NAME, zone, project) is wrong, "
            "or a firewall blocks its gRPC port",
            facts,
            dedupe=(row.code, "tf_master"),
        )
    ]


_K8S_LIST = lazy_re.compile(
    r"[Ff]ailed to (?:list|watch) \*v1\.(?P<kind>\w+): (?:failed to list \*v1\.\w+: )?"
    r"(?:Get \"?(?P<url>https?://[^\s\"]+)\"?: )?(?P<err>.*?(?:dial tcp (?P<api>[^\s:]+:\d+)|"
    r"is forbidden|Unauthorized|i/o timeout|connection refused|no route to host|TLS handshake timeout).*)$"
)


def _k8s_list(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = m.group("err")
    facts: dict[str, Any] = {"launcher": "kubernetes", "resource": m.group("kind"), "error": clip(err, 200)}
    if m.group("api"):
        facts["api_server"] = m.group("api")
    forbidden = "forbidden" in err or "Unauthorized" in err
    why = (
        "its service account may not list them (RBAC)"
        if forbidden
        else f"the API server {facts.get('api_server', '')} is unreachable from the pod".replace("  ", " ")
        + " (a sidecar such as Istio's proxy not up yet for an init container, a network policy)"
    )
    return [
        row.event(
            hit,
            "a Kubernetes client in the job (an MPIJob launcher's kubectl-delivery, an operator) could not "
            f"list the {m.group('kind')}s it waits for: {why}",
            facts,
            dedupe=(row.code, "k8s_list"),
        )
    ]


_CALL_TIMEOUT = lazy_re.compile(
    r"A call to '(?P<op>\w+)' has taken over (?P<secs>\d+(?:\.\d+)?) seconds\.?(?: Terminating the "
    r"distributed job)?"
)
_COLLECTIVE_OP = lazy_re.compile(
    r"^(?:all_?gather|all_?reduce|reduce_?scatter|all_?to_?all|broadcast|barrier|reduce|gather|scatter|send|"
    r"recv)\w*$",
    re.I,
)


def _call_timeout(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    op = m.group("op")
    if not _COLLECTIVE_OP.match(op):
        return None
    secs = float(m.group("secs"))
    return [
        row.event(
            hit,
            f"{hit.who()}: a call to {op} ran past {secs:g} s and the job was ended: the collective was "
            "never joined by every rank (one rank skipped it or issued another: a collective on rank 0 only, "
            "a metric's sync on one rank) or a peer hung before it",
            {"op": op, "timeout_s": secs, "reporter": "collective library watchdog"},
            dedupe=(row.code, "call_timeout"),
        )
    ]


SIGNATURES = (
    Signature(
        "collective call taken over its limit",
        _CALL_TIMEOUT,
        _call_timeout,
        C.WATCHDOG_TIMEOUT.code,
        anchors=(b"' has taken over ",),
        words=("' has taken over ",),
    ),
    Signature(
        "ucx shared memory",
        _UCX_SHM,
        _ucx_shm,
        C.SHARED_MEMORY_TOO_SMALL.code,
        anchors=(
            b"failed to allocate receive FIFO",
            b"Not enough memory to write total",
            b"failed to get the first receive descriptor",
            b"No space left on device",
            b"bytes using md ",
        ),
        worth=(
            rb"failed to allocate receive FIFO",
            rb"Not enough memory to write total",
            rb"failed to get the first receive descriptor",
            rb"No space left on device",
            rb"bytes using md ",
        ),
        words=(
            "receive fifo",
            "not enough memory to write",
            "first receive descriptor",
            "shmget(",
            "using md ",
        ),
    ),
    Signature(
        "open mpi shared memory backing file",
        _OMPI_SHM,
        _ompi_shm,
        C.SHARED_MEMORY_TOO_SMALL.code,
        tier=1,
        anchors=(b"not enough space for",),
        worth=(rb"not enough space for",),
        words=("not enough space for",),
    ),
    Signature(
        "gpudirect-tcpx ctrl timeout",
        _TCPX,
        _tcpx,
        C.NET_PLUGIN_TIMEOUT.code,
        anchors=(b" timeout cnt ",),
        worth=(rb" timeout cnt \d",),
        words=(" timeout cnt ",),
        anchor_from="the ' timeout cnt ' after the direction and kind ('rx rx ctrl timeout cnt 7331502')",
        examples=(
            "tcpxResult_t tcpxCommProgress(tcpxComm*):1231 NCCL WARN 0xadca8062b70:0xadca805d0f0, nic 0, "
            "enp12s0, 172.16.0.11<39187><-172.16.0.95<46723> rx rx ctrl timeout cnt 7331502, nanos "
            "10000000585",
        ),
    ),
    Signature(
        "nvshmem init",
        _NVSHMEM,
        _nvshmem,
        C.NVSHMEM_BOOTSTRAP.code,
        anchors=(b"non-zero status: ", b"nvshmemi_init", b"nvshmem initialization failed", b"bootstrap_"),
        worth=(
            rb"non-zero status: -?\d",
            rb"error in nvshmemi_init",
            rb"nvshmem initialization failed",
            rb"bootstrap_\w+\.cpp:",
        ),
        words=("non-zero status", "nvshmem", "bootstrap_"),
    ),
    Signature(
        "xla nccl comm",
        _XLA_COMM,
        _xla_comm,
        C.NCCL_COMM_NOT_CREATED.code,
        tier=1,
        anchors=(b"Failed to get NCCL",),
        worth=(rb"Failed to get NCCL",),
        words=("failed to get nccl",),
    ),
    Signature(
        "tensorflow tpu master",
        _TF_MASTER,
        _tf_master,
        C.STORE_UNREACHABLE.code,
        anchors=(b"Failed to connect to the Tensorflow master",),
        worth=(rb"Failed to connect to the Tensorflow master",),
        words=("tensorflow master",),
    ),
    Signature(
        "kubernetes client list",
        _K8S_LIST,
        _k8s_list,
        C.LAUNCH_FAILED.code,
        tier=1,
        anchors=(b"ailed to list *v1.", b"ailed to watch *v1."),
        worth=(rb"ailed to (?:list|watch) \*v1\.",),
        words=("to list *v1.", "to watch *v1."),
    ),
)
parse = gated_reader(SIGNATURES)
