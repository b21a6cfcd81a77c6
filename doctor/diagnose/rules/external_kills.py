"""Jobs ended from outside: a batch scheduler's or a platform's record that it preempted the job, lost
its node, or ended it at a limit other than memory (memory limits are host_oom: `userspace_oom`,
`host_oom`). Slurm's own cancel line is read by `workers` (and `stalled_cancel` first, for a hang).

Formats, read at their source:
- PBS Pro and Torque (the MOM's kill message, then the job's mail/epilogue): "=>> PBS: job killed:
  walltime 86420 exceeded limit 86400", "PBS: job killed: ncpus 5.02 exceeded limit 4", "PBS: job killed:
  node 1 (gpu-2-17) requested job terminate, 'EOF' (code 1099) - received SISTER_EOF attempting to
  communicate with sister MOM's" (a sister node died); Torque/Moab mail: "job preempted (node failure)",
  "Job exceeded its walltime limit. Job was aborted", "Aborted by PBS Server", "Job deleted at request of
  root@host" (qdel).
- IBM LSF's job report, one TERM_ reason ("TERM_RUNLIMIT: job killed after reaching LSF run time limit.",
  "TERM_PREEMPT: job killed after preemption.", "TERM_OWNER: job killed by owner.", "TERM_LOAD: job killed
  after load exceeds threshold.", ...), then "Exited with exit code 140.".
- Slurm beyond its cancel line: "srun: error: Node failure on gpu-node-01" (srun, a node of the step
  died), "*** JOB 123 STEPD TERMINATED ON node-1 AT ... DUE TO JOB NOT ENDING WITH SIGNALS ***"
  (slurmstepd, processes that outlived the kill), srun's own words when the step was ended by a signal ("srun:
  forcing job termination", "srun: Force Terminated StepId=12.0", "srun: error: Timed out waiting for job step
  to complete": consequences, tier 2) or lost a node's slurmstepd ("aborting, io error with slurmstepd on node
  3": tier 1), submitit's "Caught signal SIGUSR2 on host: this job is
  preempted.".
- Kubernetes (kubelet eviction manager, node shutdown manager, critical-pod admission, the scheduler's
  preemption): "The node was low on resource: ephemeral-storage." (memory: host_oom), "Pod was terminated in
  response to imminent node shutdown.", "Preempted in order to admit critical pod", "Preempted by pod 3f2a
  on node gpu-7", "...: preempting to accommodate a higher priority pod", the eviction manager's local
  storage limits ("Usage of EmptyDir volume \"dshm\" exceeds the limit \"64Gi\".", "Pod ephemeral local
  storage usage exceeds the total limit of containers 10Gi.", "Container trainer exceeded its local
  ephemeral storage limit \"10Gi\"."), the Job controller's "Job was active longer than specified deadline".
- HTCondor: "Job was evicted." (its job event log), "Job has gone over cgroup memory limit of 2048
  megabytes." (the starter's hold reason: host_oom).
- Clouds and their job managers: GCE's "Instance was preempted.", AWS's "EC2 Spot Instance Interruption
  Warning" / a node termination handler's "spot interruption notice", AWS Batch's "Host EC2 (instance
  i-0abc) terminated.", SkyPilot's managed-job controller "Cluster is preempted or failed (status: INIT).
  Recovering..." (older: "Cluster is preempted. Recovering..."), Taskcluster's worker-runner and
  generic-worker polling the instance metadata for a spot/preemptible reclaim ("GCP Metadata Service says
  termination is imminent", "EC2 Metadata Service says termination is imminent").

A preemption or a lost node is a cause (tier 0): the peers' dropped connections and timeouts that follow
are its echo. A time limit, an owner's or an administrator's kill is a consequence (tier 2): why the job
ran so long or was killed is elsewhere (a hang, `stalled_cancel`). A cloud job manager that recovers a
preempted cluster is tier 1: what failed after the recovery, if anything, leads.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

CAUSE, SYMPTOM, CONSEQUENCE = 0, 1, 2

_PBS = lazy_re.compile(
    r"PBS: job killed: (?P<limit>walltime|ncpus|cput|pcput|file) (?P<used>[\d.:]+) exceeded limit|"
    r"PBS: job killed: node (?P<node>\d+) \((?P<host>[^)\s]+)\) requested job terminate|"
    r"Job exceeded its (?P<wall>walltime) limit\. Job was aborted|"
    r"(?P<aborted>Aborted by PBS Server)|"
    r"(?P<qdel>Job deleted at request of) (?P<who>\S+)"
)


def _pbs(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"reporter": "pbs"}
    if m.group("node"):
        facts.update(reason="node failure", host=m.group("host"), node_index=int(m.group("node")))
        return [
            row.event(
                hit,
                f"PBS killed the job: sister node {m.group('host')} stopped answering (its MOM hung up): "
                "the node failed or rebooted",
                facts,
                tier=CAUSE,
                dedupe=(row.code, "pbs", "node"),
            )
        ]
    if m.group("limit") or m.group("wall"):
        limit = m.group("limit") or "walltime"
        facts.update(reason=f"{limit} limit")
        msg = f"PBS killed the job at its {limit} limit"
    elif m.group("aborted"):
        facts.update(reason="aborted by server")
        msg = "the PBS server aborted the job (an administrator or a node it lost; the server log says which)"
    else:
        facts.update(reason="qdel", by=m.group("who"))
        msg = f"the job was deleted (qdel) at the request of {clip(m.group('who'), 60)}"
    return [row.event(hit, msg, facts, tier=CONSEQUENCE, dedupe=(row.code, "pbs"))]


# Torque/Moab's mail, submitit's signal handler: "job preempted (node failure)", "this job is preempted";
# the line's own start or a prefix's end before it, never a sentence that only mentions preempted jobs.
_PREEMPTED = lazy_re.compile(
    r"(?:^\s*|[:\]>|-] ?|\bthis )job (?:is |was )?preempted\b(?: \((?P<why>[^)]+)\))?", re.IGNORECASE
)


def _preempted(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    why = (m.group("why") or "").strip()
    facts: dict[str, Any] = {"reason": "preemption", "preempted": True}
    if why:
        facts["preemption_reason"] = why
    return [
        row.event(
            hit,
            "the scheduler preempted the job"
            + (f" ({clip(why, 60)})" if why else "")
            + ": its processes were ended from outside, not by a failure of their own",
            facts,
            dedupe=(row.code, "preempted"),
        )
    ]


# LSF's TERM_ reasons (lsb.events / the job report), grouped by who ended the job.
_LSF = lazy_re.compile(r"\b(TERM_[A-Z_]+): job (?:killed|exited|removed|requeued)\b")
_LSF_OUTSIDE = {"TERM_PREEMPT", "TERM_LOAD", "TERM_RC_RECLAIM", "TERM_MC_RECALL", "TERM_ORPHAN_SYSTEM"}
_LSF_LIMIT = {
    "TERM_RUNLIMIT": "run time limit",
    "TERM_CPULIMIT": "CPU time limit",
    "TERM_DEADLINE": "deadline",
    "TERM_WINDOW": "queue run window",
    "TERM_PROCESSLIMIT": "process limit",
    "TERM_THREADLIMIT": "thread limit",
}


def _lsf(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    term = m.group(1)
    if term in ("TERM_MEMLIMIT", "TERM_SWAP"):
        return None  # memory: userspace_oom's
    facts: dict[str, Any] = {"reporter": "lsf", "lsf_reason": term}
    tail = clip(hit.text[m.start() :].split(".")[0].strip() + ".", 100)  # its own sentence
    if term in _LSF_OUTSIDE:
        facts.update(reason="preemption" if term == "TERM_PREEMPT" else term[5:].lower(), preempted=True)
        return [
            row.event(
                hit,
                f"LSF ended the job from outside ({tail}): not a failure of the job itself",
                facts,
                tier=CAUSE,
                dedupe=(row.code, "lsf"),
            )
        ]
    facts["reason"] = _LSF_LIMIT.get(term, term[5:].lower().replace("_", " "))
    return [row.event(hit, f"LSF ended the job: {tail}", facts, tier=CONSEQUENCE, dedupe=(row.code, "lsf"))]


# srun's own words when the step ended by a signal (src/srun/signals.c, src/api/step_launch.c, allocate.c):
# "srun: forcing job termination" (srun got SIGTERM/SIGHUP: a scancel, the time limit), "srun: Force
# Terminated StepId=12.0" / "job step 12.0" (a task ended on SIGTERM/SIGKILL), "srun: error: Timed out waiting
# for job step to complete" (tasks that outlived the step's abort, killed again); and srun losing a node's
# slurmstepd mid-step ("step_launch_notify_io_failure: aborting, io error with slurmstepd on node 3": the node
# died, rebooted or dropped off the network, as a node failure).
_SLURM = lazy_re.compile(
    r"aborting, (?P<io>io error with slurmstepd) on node (?P<nodeid>\d+)|"
    r"srun: (?P<force>Force Terminated|forcing job termination)\b|"
    r"srun: error: (?P<stuck>Timed out waiting for job step to complete)|"
    r"srun: error: Node failure on (?P<host>[\w.\-\[\],]+)|"
    r"\*\*\* (?:JOB|STEP) (?P<id>\S+) STEPD TERMINATED ON (?P<on>\S+) AT \S+ "
    r"DUE TO (?P<why>[A-Z][A-Z ]+[A-Z])"
)


# What says more than srun's own words about a step's end, near them: slurmstepd's cancel line (its reason),
# srun's record of each task's end, a lost node.
_STEP_END_SAID = lazy_re.compile(r"CANCELLED AT|STEPD TERMINATED|Node failure on|srun: error: \S+: tasks? \d")


def _slurm(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("force") or m.group("stuck"):
        near = [*hit.before(12, same_rank=False), *hit.after(12, same_rank=False)]
        if any(_STEP_END_SAID.search(ln.text) for ln in near):
            return []  # owned: the cancel line or the tasks' own records tell it (workers.py, launcher.py)
        why = "tasks outlived the step's abort" if m.group("stuck") else "a signal"
        msg = (
            f"srun ended the step's tasks ({why}): they were killed from outside; why is elsewhere in the log"
        )
        facts0: dict[str, Any] = {"reporter": "srun", "reason": "step killed", "signal": "SIGKILL"}
        return [row.event(hit, msg, facts0, tier=CONSEQUENCE, dedupe=(row.code, "srun_killed"))]
    if m.group("io"):
        facts1: dict[str, Any] = {
            "reporter": "srun",
            "reason": "node lost",
            "node_index": int(m.group("nodeid")),
        }
        msg = f"srun lost the slurmstepd of node {m.group('nodeid')} mid-step (the node died or dropped off)"
        return [
            row.event(
                hit, msg + ": its ranks died with it", facts1, tier=SYMPTOM, dedupe=(row.code, "srun_io")
            )
        ]
    if m.group("host"):
        facts: dict[str, Any] = {"reporter": "slurm", "reason": "node failure", "host": m.group("host")}
        return [
            row.event(
                hit,
                f"Slurm lost node {m.group('host')} during the step (node failure): its ranks died with it",
                facts,
                tier=CAUSE,
                dedupe=(row.code, "slurm_node", m.group("host")),
            )
        ]
    facts = {
        "reporter": "slurm",
        "slurm_id": m.group("id"),
        "host": m.group("on"),
        "reason": "stepd terminated",
    }
    return [
        row.event(
            hit,
            f"slurmstepd on {m.group('on')} gave up on processes that outlived the kill "
            f"({m.group('why').lower()}): a process stuck in the kernel (D state), after the job was ended",
            facts,
            tier=CONSEQUENCE,
            dedupe=(row.code, "slurm_stepd"),
        )
    ]


_K8S = lazy_re.compile(
    r"The node was low on resource: (?P<res>ephemeral-storage|nodefs\S*|imagefs\S*|pids?|inodes?)|"
    # the eviction manager's condition message (helpers.go nodeConditionMessageFmt; admission refusals too)
    r"The node had condition: \[(?P<cond>[^\]]*)\]|"
    r"Pod was terminated in response to imminent (?P<shutdown>node shutdown)|"
    r"(?P<critical>Preempted in order to admit critical pod)|"
    r"Preempted by (?:pod )?(?P<by>\S+) on node (?P<node>\S+)|"
    r"(?P<prio>preempting to accommodate a higher priority pod)|"
    # the eviction manager's local-storage limits (eviction_manager.go): an emptyDir (often the /dev/shm
    # of a training pod), the pod's or a container's ephemeral storage
    r"Usage of EmptyDir volume \"?(?P<emptydir>[^\"\s]+)\"? exceeds the limit|"
    r"(?P<podeph>Pod ephemeral local storage usage exceeds the total limit)|"
    r"Container (?P<ceph>\S+) exceeded its local ephemeral storage limit|"
    # the Job controller's activeDeadlineSeconds (reason DeadlineExceeded)
    r"(?P<deadline>Job was active longer than specified deadline)"
)


def _k8s(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"reporter": "kubernetes"}
    if m.group("deadline"):
        facts.update(reason="time limit")
        msg = "Kubernetes ended the Job at its activeDeadlineSeconds (DeadlineExceeded)"
        return [row.event(hit, msg, facts, tier=CONSEQUENCE, dedupe=(row.code, "k8s"))]
    if m.group("cond") is not None:
        cond = m.group("cond").strip()
        facts.update(reason="eviction", node_condition=cond)
        msg = f"Kubernetes evicted (or refused) the pod: its node had condition {cond}"
        if "MemoryPressure" in cond:
            facts["killer"] = "kubelet_eviction"
            msg += " (the node ran low on memory)"
            return [
                row.event(
                    hit, msg, facts, code=C.HOST_OOM_KILLED.code, dedupe=(C.HOST_OOM_KILLED.code, "k8s")
                )
            ]
        return [row.event(hit, msg, facts, dedupe=(row.code, "k8s"))]
    if m.group("emptydir") or m.group("podeph") or m.group("ceph"):
        facts.update(reason="eviction", resource="ephemeral-storage")
        if m.group("emptydir"):
            facts["volume"] = m.group("emptydir")
        what = f"emptyDir volume {m.group('emptydir')}" if m.group("emptydir") else "ephemeral storage"
        msg = f"Kubernetes evicted the pod: its {what} went over its limit"
    elif m.group("res"):
        res = m.group("res").rstrip(".")
        facts.update(reason="eviction", resource=res)
        msg = f"Kubernetes evicted the pod: the node ran low on {res}"
    elif m.group("shutdown"):
        facts.update(reason="node shutdown")
        msg = "Kubernetes ended the pod because its node was shutting down (spot reclaim, maintenance)"
    else:
        facts.update(reason="preemption", preempted=True)
        if m.group("node"):
            facts["host"] = m.group("node").rstrip(".,")
        msg = "Kubernetes preempted the pod for a pod of higher priority"
    return [row.event(hit, msg, facts, dedupe=(row.code, "k8s"))]


_CLOUD = lazy_re.compile(
    r"(?P<gce>Instance was preempted)|"
    r"(?P<aws>EC2 Spot Instance Interruption Warning|[Ss]pot (?:[Ii]nstance )?[Ii]nterruption [Nn]otice)|"
    r"Host EC2 \(instance (?P<inst>[\w-]+)\) terminated|"
    r"(?P<sky>[Cc]luster is preempted)(?: or failed)?(?: \(status: (?P<status>\w+)\))?\. Recovering|"
    r"(?P<meta>GCP|EC2|AWS|Azure) Metadata Service says termination is imminent"
)


def _cloud(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"reason": "preemption", "preempted": True}
    tier = CAUSE
    if m.group("gce"):
        facts["reporter"] = "gce"
        msg = "the cloud preempted the VM (a spot/preemptible instance was reclaimed)"
    elif m.group("aws"):
        facts["reporter"] = "aws"
        msg = "AWS reclaimed the spot instance (interruption notice): the job's node went away"
    elif m.group("inst"):
        facts.update(reporter="aws_batch", reason="node lost", instance=m.group("inst"))
        msg = (
            f"AWS Batch lost the job's host (instance {m.group('inst')} terminated): spot reclaim or failure"
        )
    elif m.group("meta"):
        cloud = m.group("meta")
        facts["reporter"] = f"taskcluster worker ({cloud} metadata)"
        msg = (
            f"the worker polled the {cloud} metadata service and was told the VM is about to be terminated "
            "(a spot/preemptible instance reclaimed): the job's node went away under it"
        )
    else:
        facts["reporter"] = "skypilot"
        if m.group("status"):
            facts["cluster_status"] = m.group("status")
        msg = "SkyPilot found the job's cluster preempted or failed and began to recover it"
        tier = SYMPTOM  # a recovery follows: what failed after it, if anything, leads
    return [row.event(hit, msg, facts, tier=tier, dedupe=(row.code, "cloud"))]


# HTCondor: the job event log's "Job was evicted." (004: a preempted or vacated slot), and the starter's
# hold reason for a job over its memory request: "Error from slot1_1@node7: Job has gone over cgroup memory
# limit of 2048 megabytes. Last measured usage: 2100 megabytes." (older: "...gone over memory limit of").
_CONDOR = lazy_re.compile(
    r"(?P<evicted>Job was evicted)\b|Job has gone over (?:cgroup )?memory limit of (?P<limit>\d+) megabytes"
)


def _condor(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("limit"):
        facts: dict[str, Any] = {"killer": "htcondor_memory_limit", "limit_mb": int(m.group("limit"))}
        return [
            row.event(
                hit,
                f"HTCondor held the job: it went over its memory limit of {m.group('limit')} MB "
                "(request_memory)",
                facts,
                code=C.HOST_OOM_KILLED.code,
                dedupe=(C.HOST_OOM_KILLED.code, "condor"),
            )
        ]
    facts = {"reporter": "htcondor", "reason": "preemption", "preempted": True}
    msg = "HTCondor evicted the job from its slot (preempted or vacated): ended from outside"
    return [row.event(hit, msg, facts, dedupe=(row.code, "condor"))]


# The shell's job-control report of a child ended by SIGTERM (bash/sh: strsignal(SIGTERM)): "run.sh: line
# 12: 45678 Terminated              python train.py", the job table's "[1]+  Terminated   python train.py"
# (the "[1]" may be read as a rank prefix and cut), a lone "Terminated" for a foreground job (text/normalize
# cuts it off a progress bar it was glued to), zsh's "zsh: terminated  python train.py". Someone sent the
# signal: the scheduler at a time limit or a preemption, the user, a launcher stopping the survivors of a
# failure; a consequence (tier 2) behind anything else the log says. SIGKILL's "Killed" is host_oom's.
_SHELL_TERM = lazy_re.compile(
    r"line \d+: +(?P<pid>\d+) +Terminated\s+(?P<cmd>\S.*)$|"
    r"^(?:\[\d+\][+-]?|[+-]) +Terminated\s+(?P<job>\S.*)$|^Terminated$|^\s*Terminated {3,}(?P<tab>\S.*)$|"
    r"^zsh: terminated +(?P<zcmd>\S.*)$"
)


def _shell_term(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    cmd = (m.group("cmd") or m.group("job") or m.group("tab") or m.group("zcmd") or "").strip()[:200]
    facts: dict[str, Any] = {"signal": "SIGTERM", "reporter": "shell", "reason": "terminated"}
    if cmd:
        facts["command"] = cmd
    if m.group("pid"):
        facts["pid"] = int(m.group("pid"))
    msg = (
        "the shell reports the command was Terminated (SIGTERM"
        + (f": {clip(cmd, 80)}" if cmd else "")
        + "): it was stopped from outside (a scheduler's time limit or preemption, a user, a launcher "
        "stopping the other ranks)"
    )
    return [row.event(hit, msg, facts, tier=CONSEQUENCE, dedupe=(row.code, "shell_term"))]


# TensorFlow's TPU session support (tensorflow/python/tpu/session_support.py, 1.x-2.x): GracefulShutdownHook
# pings every TPU worker's heartbeat after each step and logs "ShutdownHook: lame workers found:
# HeartbeatManager(/job:worker/replica:0/task:0/device:CPU:0)" for those whose health is not OK (a
# preempted, restarted or crashed TPU host), then checkpoints and shuts them down (exit code 42); the
# ResetComputation hook then raises CoordinatorResetError "Resetting session loop due to worker shutdown.".
# Its preemption watcher (tensorflow/python/tpu/preempted_hook.py): "TPU node %s reached an unrecoverable
# state %s, terminating the session now." (1.15-2.1), "TPUPollingThread found TPU %s in state %s" before its
# os._exit(1) (2.2+; the older thread logged every poll "... in state READY, and health HEALTHY.": not this).
_TPU_LOST = lazy_re.compile(
    r"ShutdownHook: lame workers found: (?:HeartbeatManager\((?P<devs>[^)]*)\))?|"
    r"TPU node (?P<node>\S+) reached an unrecoverable state (?P<state>\w+)|"
    r"TPUPollingThread found TPU (?P<tpu>\S+) in state (?P<pstate>(?!READY)\w+)\s*$"
)


def _tpu_lost(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"reporter": "tensorflow_tpu", "framework": "tensorflow"}
    state = m.group("state") or m.group("pstate")
    if state:
        facts.update(reason="preemption" if state == "PREEMPTED" else "tpu lost", tpu_state=state)
        facts["tpu"] = (m.group("node") or m.group("tpu") or "").strip("b'\",")
        if state == "PREEMPTED":
            facts["preempted"] = True
        msg = f"the Cloud TPU {facts['tpu']} left service (state {state}): the session was ended from outside"
        return [row.event(hit, msg, facts, dedupe=(row.code, "tpu_lost"))]
    devs = [d for d in (m.group("devs") or "").split(",") if d]
    facts["reason"] = "worker heartbeat lost"
    if devs:
        facts["lame_workers"] = devs
        tasks = sorted({int(t) for t in re.findall(r"/task:(\d+)", m.group("devs"))})
        if tasks:
            facts["tasks"] = tasks
    msg = (
        "TensorFlow's TPU shutdown hook found lame workers (a TPU host failed its heartbeat: preempted, "
        "restarted or crashed)" + (f": {clip(', '.join(devs), 120)}" if devs else "")
    )
    return [row.event(hit, msg, facts, tier=SYMPTOM, dedupe=(row.code, "lame_workers"))]


X = C.RANK_EXITED.code
SIGNATURES = (
    Signature(
        "pbs job killed",
        _PBS,
        _pbs,
        X,
        anchors=(b"PBS", b"walltime limit", b"Job deleted at request"),
        worth=(rb"PBS", rb"walltime limit", rb"Job deleted at request"),
        words=("pbs", "walltime limit", "job deleted at request"),
    ),
    Signature(
        "job preempted",
        _PREEMPTED,
        _preempted,
        X,
        anchors=(b"preempted", b"PREEMPTED", b"Preempted"),
        worth=(rb"[Pp]reempted", rb"PREEMPTED"),
        words=("preempted",),
        anchor_from="the 'preempted' of the line, in any case",
        examples=("job preempted (node failure)", "Caught signal SIGUSR2 on gpu-3: this job is preempted."),
    ),
    Signature(
        "lsf term",
        _LSF,
        _lsf,
        X,
        anchors=(b"TERM_",),
        worth=(rb"TERM_[A-Z]",),
        words=("term_",),
    ),
    Signature(
        "slurm node failure",
        _SLURM,
        _slurm,
        X,
        anchors=(
            b"Node failure on",
            b"STEPD TERMINATED",
            b"Force Terminated",
            b"forcing job termination",
            b"waiting for job step to complete",
            b"io error with slurmstepd",
        ),
        worth=(
            rb"Node failure on",
            rb"STEPD TERMINATED",
            rb"Force Terminated",
            rb"forcing job termination",
            rb"waiting for job step to complete",
            rb"io error with slurmstepd",
        ),
        words=(
            "node failure on",
            "stepd terminated",
            "force terminated",
            "job termination",
            "job step to complete",
            "io error with slurmstepd",
        ),
    ),
    Signature(
        "kubernetes eviction or preemption",
        _K8S,
        _k8s,
        X,
        anchors=(
            b"low on resource",
            b"imminent node shutdown",
            b"Preempted ",
            b"preempting to accommodate",
            b"exceeds the limit",
            b"exceeds the total limit",
            b"ephemeral storage limit",
            b"longer than specified deadline",
            b"The node had condition",
        ),
        worth=(
            rb"low on resource",
            rb"imminent node shutdown",
            rb"Preempted ",
            rb"preempting to accommodate",
            rb"exceeds the (?:total )?limit",
            rb"ephemeral storage limit",
            rb"longer than specified deadline",
            rb"The node had condition",
        ),
        words=(
            "low on resource",
            "node shutdown",
            "preempted",
            "preempting",
            "exceeds the limit",
            "exceeds the total limit",
            "ephemeral storage limit",
            "specified deadline",
            "node had condition",
        ),
    ),
    Signature(
        "htcondor eviction or memory limit",
        _CONDOR,
        _condor,
        X,
        anchors=(b"Job was evicted", b"gone over"),
        worth=(rb"Job was evicted", rb"gone over"),
        words=("job was evicted", "gone over"),
    ),
    Signature(
        "cloud preemption",
        _CLOUD,
        _cloud,
        X,
        anchors=(b"was preempted", b"nterruption", b"Host EC2", b"is preempted", b"termination is imminent"),
        worth=(
            rb"was preempted",
            rb"nterruption",
            rb"Host EC2",
            rb"is preempted",
            rb"termination is imminent",
        ),
        words=("preempted", "interruption", "host ec2", "termination is imminent"),
    ),
    Signature(
        "shell terminated",
        _SHELL_TERM,
        _shell_term,
        X,
        anchors=(b"Terminated", b"zsh: terminated"),
        worth=(rb"Terminated", rb"zsh: terminated"),
        words=("terminated",),
    ),
    Signature(
        "tensorflow tpu worker lost",
        _TPU_LOST,
        _tpu_lost,
        X,
        anchors=(b"lame workers found", b"reached an unrecoverable state", b"TPUPollingThread found TPU"),
        worth=(rb"lame workers found", rb"reached an unrecoverable state", rb"TPUPollingThread found TPU"),
        words=("lame workers", "unrecoverable state", "tpupollingthread"),
    ),
)

parse = gated_reader(SIGNATURES)
