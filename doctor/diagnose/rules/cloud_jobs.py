"""cloud_jobs: the platform around a GPU job - the container runtime that could not give it its GPUs, the
Kubernetes scheduler and kubelet that could not place or keep its pods, and the managed training services
(SageMaker, Vertex AI, Azure ML, AWS Batch) whose failure record is all a user pastes.

Formats, read at their sources:
- NVIDIA Container Toolkit / libnvidia-container (src/cli/configure.c, 1.x): "nvidia-container-cli: permission
  error: capability change failed: operation not permitted" (rootless / an unprivileged LXC); "requirement
  error: unsatisfied condition: driver>=470, ..." (the image's NVIDIA_REQUIRE_* wants a newer driver: RUN261),
  "... unsatisfied condition: brand = tesla" / "arch >= 7.0" (the image refuses this GPU); the hook
  (cmd/nvidia-container-runtime-hook/hook_config.go, main.go): "invoking the NVIDIA Container Runtime Hook
  directly (e.g. specifying the docker --gpus flag) is not supported. Please use the NVIDIA Container Runtime
  (e.g. specify the --runtime=nvidia flag) instead", "couldn't find binary nvidia-container-cli in PATH";
  crun's "error executing hook `/usr/bin/nvidia-container-toolkit` (exit code: 1)"; CDI (podman, Docker 25+,
  containerd): "unresolvable CDI devices nvidia.com/gpu=all" (no spec: `nvidia-ctk cdi generate`); Docker's
  "could not select device driver \"\" with capabilities: [[compute utility]]" (any capability list; [[gpu]]
  is driver_env's), "unknown or invalid runtime name: nvidia"; containerd / CRI-O under a RuntimeClass "no
  runtime for \"nvidia\" is configured", "RuntimeHandler \"nvidia\" not supported"; the k8s device plugin
  (cmd/nvidia-device-plugin, 0.12+): "Incompatible strategy detected auto", "If this is a GPU node, did you
  configure the NVIDIA Container Toolkit?", "Incompatible platform detected". All RUN262 (the playbook's
  container section): the container never got its GPUs.
- Kubernetes: the scheduler's FailedScheduling "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."
  (pkg/scheduler/framework/plugins/noderesources/fit.go "Insufficient %v"; amd.com/gpu, nvidia.com/mig-*,
  habana.ai/gaudi, aws.amazon.com/neuron*, vpc.amazonaws.com/efa, rdma/*) and Ray's autoscaler "No available
  node types can fulfill resource request {'GPU': 8.0}" (RUN390: the pool has no such slot); kubectl
  describe's "Last State: Terminated / Reason: Error / Exit Code: 1" (137 is host_oom's, 139/134/...
  process_crash's; here any other status: RUN133 tier 1, SIGTERM's 143 tier 2), kubectl get pods'
  CrashLoopBackOff / Error status, the kubelet's "Back-off restarting failed container", the job controller's
  "Job has reached the specified backoff limit" (RUN133, tier 2: the container's own output says why).
- SageMaker (sagemaker-training-toolkit 3.x-4.x errors.py _CalledProcessError.__str__, process.py
  check_error): "ExecuteUserScriptError:\\nExitCode 1\\nErrorMessage \"...\"\\nCommand \"...\"" (ExtraInfo
  "OutOfMemory: Process killed by SIGKILL (signal 9)" for 137, host_oom's), flattened on one line by the SDK's
  "UnexpectedStatusException: ... Reason: AlgorithmError: ExecuteUserScriptError: ExitCode 1 ..." or in the
  old sagemaker-containers shape "Command \"...\", exit code: 1"; the embedded ErrorMessage is read by its own
  rows and wins. The service's "ClientError: Please use an instance type with more memory, or reduce the size
  of ... data processed on an instance." (RUN121).
- Vertex AI / Cloud ML Engine: "The replica workerpool0-0 exited with a non-zero status of 139(SIGSEGV)." /
  "... of 1. Termination reason: Error." (the "ran out-of-memory" form is worker_losses'); AWS Batch / ECS
  "OutOfMemoryError: Container killed due to memory usage" (RUN121); Azure ML "User process '...' exited with
  status code 1" and "Submitted script failed with a non-zero exit code" (RUN133 tier 1 / the signal's).
- torch/utils/data/dataloader.py (1.x-2.x): "Too many open files. Communication with the workers is no longer
  possible. Please increase the limit using `ulimit -n` ..." (the file_descriptor sharing strategy: RUN388),
  and multiprocessing's "RuntimeError: received 0 items of ancdata" under the same limit.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_FATAL = {139: "SIGSEGV", 134: "SIGABRT", 135: "SIGBUS", 132: "SIGILL", 136: "SIGFPE"}
_SIGNUM = {"SIGSEGV": 139, "SIGABRT": 134, "SIGBUS": 135, "SIGILL": 132, "SIGFPE": 136, "SIGKILL": 137}

# --- the container runtime
_RUNTIME = lazy_re.compile(
    r"could not select device driver \"(?P<drv>[^\"]*)\" with capabilities: \[\[(?P<caps>[^\]]*)\]\]|"
    r"unknown or invalid runtime name: (?P<rt>nvidia\S*)|"
    r"no runtime for \"(?P<cri>nvidia[^\"]*)\" is configured|"
    r"RuntimeHandler \"(?P<rh>nvidia[^\"]*)\" not supported|"
    r"(?P<hook>invoking the NVIDIA Container Runtime Hook directly)|"
    r"(?P<nocli>couldn't find binary nvidia-container-cli)|"
    r"error executing hook `(?P<crun>[^`]*nvidia-container[^`]*)`|"
    r"nvidia-container-cli(?:\.real)?: permission error: (?P<perm>.+?)(?:: unknown\.?)?$|"
    r"cannot stat [`'\"]?(?P<node>/dev/nvidia[\w-]*)|"
    r"unresolvable CDI devices? (?P<cdi>[\w./-]+=[\w,.:-]+)|"
    r"(?P<plugin>Incompatible (?:strategy|platform) detected|did you configure the NVIDIA Container Toolkit)"
)
_REQUIREMENT = lazy_re.compile(
    r"nvidia-container-cli(?:\.real)?: requirement error: unsatisfied condition: "
    r"(?P<cond>[^,:\n]+?)\s*(?:[,:]|$)"
)
_DRIVER_REQ = lazy_re.compile(r"^driver\s*>=?\s*([\d.]+)$")


def _runtime(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    g = m.groupdict()
    if g["caps"] is not None:
        what, reason = (
            f"Docker has no device driver for the capabilities [[{g['caps']}]]: the NVIDIA Container Toolkit "
            "is not installed or Docker was not restarted after it was",
            "no_container_gpu_driver",
        )
    elif g["rt"] or g["cri"] or g["rh"]:
        name = g["rt"] or g["cri"] or g["rh"]
        what, reason = (
            f"the container engine has no runtime named {name} (`nvidia-ctk runtime configure` was not run "
            "for this engine, or it was not restarted; a RuntimeClass naming a handler the node lacks)",
            "runtime_not_configured",
        )
    elif g["hook"]:
        what, reason = (
            "the NVIDIA hook was invoked directly (docker --gpus with the toolkit in CSV/CDI mode): use "
            "--runtime=nvidia",
            "hook_invoked_directly",
        )
    elif g["nocli"]:
        what, reason = "nvidia-container-cli is not installed on the host", "container_cli_missing"
    elif g["crun"]:
        what, reason = f"the OCI runtime's NVIDIA hook ({g['crun']}) failed", "container_hook_failed"
    elif g["perm"]:
        what, reason = (
            f"nvidia-container-cli lacks the privileges it needs ({clip(g['perm'], 100)}): a rootless or "
            "unprivileged container engine (set no-cgroups = true, or use CDI)",
            "container_cli_permission",
        )
    elif g["node"]:
        what, reason = (
            f"the container spec names {g['node']}, which the host does not have (the NVIDIA driver is not "
            "loaded there, or a CDI spec generated for another driver)",
            "device_node_missing",
        )
    elif g["cdi"]:
        what, reason = (
            f"no CDI spec defines {g['cdi']} (`nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`)",
            "cdi_spec_missing",
        )
    else:
        what, reason = (
            "the NVIDIA device plugin finds no GPU on its node (the container runtime gives it no NVML: the "
            "NVIDIA Container Toolkit missing or not the default runtime)",
            "device_plugin_no_gpu",
        )
    return [
        row.event(
            hit,
            f"the container could not be given the GPUs: {what}",
            {"reason": reason, "detail": clip(m.group(0), 200)},
            tier=1 if g["crun"] else 0,
            dedupe=(row.code, "container", reason),
        )
    ]


def _requirement(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    cond = m.group("cond").strip()
    if cond.startswith("cuda"):
        return None  # driver_stack's row (it runs first; this is the net under it)
    drv = _DRIVER_REQ.match(cond)
    if drv:
        return [
            row.event(
                hit,
                f"the container requires NVIDIA driver >= {drv.group(1)} and the host's is older "
                "(nvidia-container-cli refused to start it): update the driver or use an older image",
                {"reason": "container_driver_requirement", "required_driver": drv.group(1)},
                code=C.DRIVER_TOO_OLD.code,
                dedupe=(C.DRIVER_TOO_OLD.code, "container"),
            )
        ]
    return [
        row.event(
            hit,
            f"the image's requirement '{cond}' (NVIDIA_REQUIRE_*) does not hold for this host's GPU: "
            "nvidia-container-cli refused to start it (use an image built for this GPU, or "
            "NVIDIA_DISABLE_REQUIRE=1 if the requirement is wrong)",
            {"reason": "container_requirement", "condition": clip(cond, 80)},
            dedupe=(row.code, "container"),
        )
    ]


# --- Kubernetes and Ray: no slot for the job's accelerators
_SCHED = lazy_re.compile(
    r"\d+/(?P<nodes>\d+) nodes are available:[^\n]*?\b(?P<n>\d+) Insufficient "
    r"(?P<res>nvidia\.com/[\w.-]*[\w-]|"
    r"amd\.com/gpu|habana\.ai/gaudi\w*|aws\.amazon\.com/neuron\w*|google\.com/tpu|vpc\.amazonaws\.com/efa|"
    r"rdma/[\w-]+|gpu\.intel\.com/\w+)|"
    r"No available node types can fulfill resource request (?P<ray>\{[^}\n]*\})"
)


def _sched(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("ray"):
        what = f"Ray's autoscaler has no node type that can give {m.group('ray')}"
        facts: dict[str, Any] = {"reason": "no_node_fits", "scheduler": "ray", "request": m.group("ray")}
    else:
        what = (
            f"no node can give the pod its {m.group('res')} ({m.group('n')} of {m.group('nodes')} nodes have "
            "too few free)"
        )
        facts = {"reason": "insufficient_resource", "scheduler": "kubernetes", "resource": m.group("res")}
    return [
        row.event(
            hit,
            f"the job was never placed: {what}; check `kubectl describe node | grep -A8 Allocatable` and the "
            "device plugin's pods, or ask for fewer",
            facts,
            dedupe=(row.code, "sched"),
        )
    ]


# --- Kubernetes: a container's end, as kubectl describe / get pods print it
_K8S_EXIT = lazy_re.compile(r"^\s*Exit Code:\s+(?P<st>\d+)\s*$")
_K8S_REASON = lazy_re.compile(r"^\s*Reason:\s+(\w+)")
_K8S_STATUS = lazy_re.compile(
    r"(?<![\w/])\d+/\d+\s+(?P<status>CrashLoopBackOff|Error|Init:Error|Init:CrashLoopBackOff|"
    r"ContainerCannotRun|RunContainerError|StartError)\s+\d+|"
    r"\bBack-off restarting failed container\b|\bJob has reached the specified backoff limit\b"
)


def _status_event(
    row: Signature, hit: Hit, st: int, what: str, facts: dict[str, Any], tier: int = 1
) -> list[Event]:
    if st == 0:
        return []  # "exited with a non-zero status of 0": a clean end that a platform words oddly
    facts = {"exit_code": st, **facts}
    if st in _FATAL:
        facts["signal"] = _FATAL[st]
        return [
            row.event(
                hit,
                f"{what} died on {_FATAL[st]} (exit status {st})",
                facts,
                code=C.FATAL_SIGNAL.code,
                tier=1,
                dedupe=(C.FATAL_SIGNAL.code, "platform", st),
            )
        ]
    if st in (137, 247):
        facts["signal"] = "SIGKILL"
        return [
            row.event(
                hit,
                f"{what} was killed by SIGKILL (exit status {st}): most often the memory limit's OOM killer",
                facts,
                code=C.HOST_OOM_KILLED.code,
                tier=1,
                dedupe=(C.HOST_OOM_KILLED.code, "platform"),
            )
        ]
    if st == 143:
        facts["signal"] = "SIGTERM"
        tier = 2
    return [
        row.event(
            hit,
            f"{what} exited with status {st}"
            + (" (SIGTERM: stopped from outside)" if st == 143 else "")
            + "; its own output says why",
            facts,
            tier=tier,
            dedupe=(row.code, "platform", st),
        )
    ]


def _k8s_exit(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    st = int(m.group("st"))
    prev = [ln.text for ln in hit.before(4, same_rank=False)]
    if st == 0 or not (any("Terminated" in t for t in prev) or (prev and _K8S_REASON.search(prev[-1]))):
        return None
    reason = next((r.group(1) for r in map(_K8S_REASON.search, reversed(prev)) if r), None)
    facts: dict[str, Any] = {"platform": "kubernetes"}
    if reason:
        facts["k8s_reason"] = reason
    return _status_event(row, hit, st, "the pod's container", facts)


def _k8s_status(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "Kubernetes keeps restarting or has given up on the job's container "
            f"({clip(hit.text.strip(), 100)}): "
            "`kubectl describe pod` (Last State, Exit Code) and `kubectl logs --previous` say why",
            {"platform": "kubernetes", "status": m.group("status") or "backoff"},
            tier=2,
            dedupe=(row.code, "k8s_status"),
        )
    ]


# --- managed training services
# The service's FailureReason names the record's class after "AlgorithmError: ": ExecuteUserScriptError, or
# another _CalledProcessError (or a library's error raised in the same shape, the smdistributed launcher's
# "AlgorithmError: SMDDPError:\nExitCode 134"); the "ExitCode N" after it is what _sm_script reads.
_SM_SCRIPT = lazy_re.compile(r"\bExecuteUserScriptError\b|\bAlgorithmError: \w+(?:Error|Exception):")
_SM_EXIT = lazy_re.compile(r"\bExitCode:? (?P<st>-?\d+)|, exit code: (?P<old>-?\d+)")
_SM_OOM = lazy_re.compile(
    r"ClientError: Please use an instance type with more memory, or reduce the size of "
    r"(?:training |job )?data"
)
_VERTEX = lazy_re.compile(
    r"The replica (?P<replica>\S+(?: \d+)?) exited with a non-zero status of (?P<st>\d+)"
    r"(?:\s*\((?P<sig>SIG[A-Z]+)\))?"
)
_ECS_OOM = lazy_re.compile(r"OutOfMemoryError: Container killed due to memory usage")
_AZURE = lazy_re.compile(
    r"User process '(?P<proc>[^']+)' exited with status code (?P<st>\d+)|"
    r"(?P<script>Submitted script failed with a non-zero exit code)"
)
_FD_LIMIT = lazy_re.compile(
    r"Too many open files\. Communication with the workers is no longer possible|"
    # multiprocessing/reduction.py recvfds (the file_descriptor sharing strategy's fd passing between the
    # DataLoader's workers and the main process) when the sender could not pass them: the same fd limit
    r"\breceived 0 items of ancdata\b|"
    r"No space left on device: '(?P<shm>/dev/shm/[^']*)'"
)


def _sm_script(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    texts = [hit.text, *(ln.text for ln in hit.after(6, same_rank=False))]
    st = None
    for t in texts:
        e = _SM_EXIT.search(t)
        if e:
            st = int(e.group("st") or e.group("old"))
            break
    if st is None:
        return None
    if st < 0:
        st = 128 - st
    return _status_event(row, hit, st, "SageMaker's training script", {"platform": "sagemaker"})


def _sm_oom(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "SageMaker stopped the job: the instance ran out of host memory (use an instance type with more "
            "memory, fewer DataLoader workers, or smaller shards per instance)",
            {"platform": "sagemaker", "reason": "instance_memory"},
            dedupe=(row.code, "platform"),
        )
    ]


def _vertex(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    st = int(m.group("st"))
    if m.group("sig") in _SIGNUM and st < 128:
        st = _SIGNUM[m.group("sig")]
    return _status_event(row, hit, st, f"Vertex AI replica {m.group('replica')}", {"platform": "vertex_ai"})


def _ecs_oom(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "the container was killed for its memory (AWS Batch / ECS: over the job definition's memory): "
            "raise the memory of the job definition or use less host memory",
            {"platform": "aws_batch", "reason": "container_memory_limit", "signal": "SIGKILL"},
            dedupe=(row.code, "platform"),
        )
    ]


def _azure(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("script"):
        return [
            row.event(
                hit,
                "Azure ML: the submitted script exited with a non-zero code; its own log (user_logs/"
                "std_log.txt) says why",
                {"platform": "azure_ml"},
                tier=1,
                dedupe=(row.code, "platform"),
            )
        ]
    return _status_event(
        row, hit, int(m.group("st")), f"Azure ML's user process {m.group('proc')}", {"platform": "azure_ml"}
    )


def _fd_limit(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: /dev/shm is full (writing {m.group('shm')}): enlarge it (docker --shm-size / "
            "--ipc=host, a memory-backed emptyDir on /dev/shm in Kubernetes) or use fewer workers"
            if m.group("shm")
            else f"{hit.who()}: the DataLoader's workers ran out of file descriptors passing tensors "
            "(file_descriptor sharing strategy): `ulimit -n 65536` or "
            "torch.multiprocessing.set_sharing_strategy('file_system')",
            {"reason": "dev_shm_full", "path": m.group("shm")}
            if m.group("shm")
            else {"process": "dataloader_worker", "reason": "fd_limit"},
            dedupe=(row.code, "fd_limit"),
        )
    ]


SIGNATURES = (
    Signature(
        "container runtime without the nvidia gpus",
        _RUNTIME,
        _runtime,
        C.NO_CUDA_DEVICE.code,
        anchors=(
            b"could not select device driver",
            b"invalid runtime name: nvidia",
            b'no runtime for "nvidia',
            b'RuntimeHandler "nvidia',
            b"Container Runtime Hook directly",
            b"binary nvidia-container-cli",
            b"error executing hook",
            b"permission error:",
            b"unresolvable CDI device",
            b"/dev/nvidia",
            b"Incompatible strategy detected",
            b"Incompatible platform detected",
            b"did you configure the NVIDIA Container Toolkit",
        ),
        worth=(
            re.escape(b"could not select device driver"),
            re.escape(b"invalid runtime name: nvidia"),
            re.escape(b'no runtime for "nvidia'),
            re.escape(b'RuntimeHandler "nvidia'),
            re.escape(b"Container Runtime Hook directly"),
            re.escape(b"binary nvidia-container-cli"),
            re.escape(b"error executing hook"),
            re.escape(b"permission error:"),
            re.escape(b"unresolvable CDI device"),
            rb"cannot stat [`'\"]?/dev/nvidia",
            re.escape(b"Incompatible strategy detected"),
            re.escape(b"Incompatible platform detected"),
            re.escape(b"did you configure the NVIDIA Container Toolkit"),
        ),
        words=(
            "could not select device driver",
            "invalid runtime name: nvidia",
            'no runtime for "nvidia',
            'runtimehandler "nvidia',
            "container runtime hook directly",
            "binary nvidia-container-cli",
            "error executing hook",
            "permission error:",
            "unresolvable cdi device",
            "cannot stat",
            "incompatible strategy detected",
            "incompatible platform detected",
            "did you configure the nvidia container toolkit",
        ),
    ),
    Signature(
        "container requirement not met",
        _REQUIREMENT,
        _requirement,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"unsatisfied condition",),
        words=("unsatisfied condition",),
    ),
    Signature(
        "no node for the job's accelerators",
        _SCHED,
        _sched,
        C.LAUNCHER_RESOURCES.code,
        anchors=(b"nodes are available:", b"fulfill resource request"),
        worth=(rb"nodes are available:[^\n]*Insufficient", rb"fulfill resource request"),
        words=("nodes are available:", "fulfill resource request"),
    ),
    Signature(
        "kubectl describe: container terminated",
        _K8S_EXIT,
        _k8s_exit,
        C.RANK_EXITED.code,
        anchors=(b"Exit Code:",),
        worth=(rb"Exit Code:\s+\d",),
        words=("exit code:",),
    ),
    Signature(
        "kubernetes restart back-off",
        _K8S_STATUS,
        _k8s_status,
        C.RANK_EXITED.code,
        anchors=(
            b"CrashLoopBackOff",
            b"Error",
            b"ContainerCannotRun",
            b"RunContainerError",
            b"StartError",
            b"Back-off restarting failed container",
            b"specified backoff limit",
        ),
        worth=(
            rb"\d+/\d+\s+(?:CrashLoopBackOff|Error|Init:|ContainerCannotRun|RunContainerError|StartError)",
            rb"Back-off restarting failed container",
            rb"specified backoff limit",
        ),
        words=(
            "crashloopbackoff",
            "error",
            "containercannotrun",
            "runcontainererror",
            "starterror",
            "back-off restarting",
            "backoff limit",
        ),
    ),
    Signature(
        "sagemaker user script failed",
        _SM_SCRIPT,
        _sm_script,
        C.RANK_EXITED.code,
        anchors=(b"ExecuteUserScriptError", b"AlgorithmError: "),
        words=("executeuserscripterror", "algorithmerror: "),
    ),
    Signature(
        "sagemaker instance memory",
        _SM_OOM,
        _sm_oom,
        C.HOST_OOM_KILLED.code,
        anchors=(b"instance type with more memory",),
        words=("instance type with more memory",),
    ),
    Signature(
        "vertex ai replica exited",
        _VERTEX,
        _vertex,
        C.RANK_EXITED.code,
        anchors=(b"exited with a non-zero status of",),
        words=("exited with a non-zero status of",),
    ),
    Signature(
        "aws batch container memory",
        _ECS_OOM,
        _ecs_oom,
        C.HOST_OOM_KILLED.code,
        anchors=(b"Container killed due to memory usage",),
        words=("container killed due to memory usage",),
    ),
    Signature(
        "azure ml user process exited",
        _AZURE,
        _azure,
        C.RANK_EXITED.code,
        anchors=(b"exited with status code", b"failed with a non-zero exit code"),
        worth=(rb"User process '[^']+' exited with status code", rb"failed with a non-zero exit code"),
        words=("exited with status code", "failed with a non-zero exit code"),
    ),
    Signature(
        "dataloader file descriptor limit",
        _FD_LIMIT,
        _fd_limit,
        C.DATALOADER_SHM_EXHAUSTED.code,
        anchors=(
            b"Communication with the workers is no longer possible",
            b"No space left on device: '/dev/shm",
            b"items of ancdata",
        ),
        words=(
            "communication with the workers is no longer possible",
            "no space left on device: '/dev/shm",
            "received 0 items of ancdata",
        ),
    ),
)
parse = gated_reader(SIGNATURES)
