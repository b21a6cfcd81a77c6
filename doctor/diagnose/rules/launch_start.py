"""rendezvous, before it: the scheduler or launcher could not start the job's processes at all, or their
start-up never completed, so no rank ever reached init_process_group (RUN304; the timeouts are RUN221).
A launcher that ran but could not find the program it was to start (slurmstepd's "execve(): python: No
such file or directory", hydra's "execvp error on file python (No such file or directory)", mpirun's "unable
to find the specified executable file") is the environment's: RUN389 (driver_env), like a shell's "not found".

Formats. Slurm's srun (src/srun, src/api/step_launch.c, 17.x-24.x): "srun: error: Unable to create step for
job 1234: More processors requested than permitted" (also "Requested node configuration is not available",
"Memory required by task is not available", "Invalid generic resource (gres) specification"), "srun: error:
Task launch for StepId=1234.0 failed on node node-3: Invalid node name specified" (older "Task launch for
1234.0 failed on node ..."), "srun: error: Unable to allocate resources: Requested node configuration is not
available" (srun asking for the job's allocation itself), "srun: error: Application launch failed: ...",
slurmstepd's "execve(): ./train.sh: Permission denied". Open MPI's help texts (help-orterun.txt, PRRTE's
help-prterun.txt, 2.x-5.x), wrapped after their first line: "mpirun was unable to launch the specified
application as it could not access or execute an executable:", "mpirun was unable to find the specified
executable file, and therefore did not launch the job.", "mpirun was unable to start the specified application
as it encountered an error:", "There are not enough slots available in the system to satisfy the 8 slots that
were requested by the application:", "A sequential map was requested, but not enough node entries were given
...", "Your job has requested more processes than the ppr for this topology can support:", "A request was made
to bind to that would result in binding more processes than cpus on a resource:"; MPICH hydra's
"HYDU_create_process (utils/launch/launch.c:74): execvp error on file python (No such file or directory)"
(Intel MPI 2019+'s i_hydra: "HYD_spawn (../../../../../src/pm/i_hydra/libhydra/spawn/intel/hydra_spawn.c:151):
execvp error on file ...").
Horovod's horovodrun (runner/launch.py, 0.16-0.28): "ssh not successful for host node-2:" before ssh's own
words (RUN303, the remote launch), and its start timeout "Timed out waiting for all tasks to start. Please
check connectivity between servers. You may need to increase the --start-timeout parameter if you have too
many servers." (RUN221). Ray Train 2.x's "WorkerGroupStartupTimeoutError: The worker group startup timed out
after 30.0 seconds waiting for 8 workers." (RUN221). Kubeflow's PyTorchJob init container (and PAI-DLC's)
loops "nslookup <master>" / "waiting for master" until the master's name resolves: busybox's "nslookup: can't
resolve 'job-master-0'" or bind's "** server can't find job-master-0: NXDOMAIN" followed by the launcher's
failure is the store host that never got a name (RUN222); the same lines followed by the run are its normal
wait.

DeepSpeed's runner reading its hostfile (launcher/runner.py fetch_hostfile, 0.3-0.16): "Hostfile is not
formatted correctly, unable to proceed with training." (later "training/inference"), "Hostfile contains
duplicate hosts, ...", "ValueError: host worker-1 is already defined", and 0.10+'s "Hostfile contains a bad
entry: worker-1 slot=8, unable to proceed with launching", "Hostfile contains multiple entries for worker-1,
...", "Hostfile is empty or not formatted correctly, unable to proceed with launching."; ColossalAI's "Error:
Hostfile is not formatted correctly, expected <hostname>:<slot>, but found ...": the launcher never started a
rank (RUN304).

slurmstepd's execve() of the batch script itself ("execve(): /var/spool/slurmd/job00089/slurm_script: No such
file or directory", the copy slurmd writes to its spool or tmp directory) is the node's slurmd failing (its
spool directory cleaned, full or mounted noexec): no launch of the job's programs, and nothing of the
distributed stack, so the row owns the line and says nothing.

A step created after srun's retries ("step creation temporarily disabled, retrying", then "Step created"), a
step that fails because the job was already being cancelled ("Job/step already completing or completed") and
the init container's loop that the run goes past are not failures.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.interrupted_waits import before_hand_stop
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_SRUN = lazy_re.compile(
    r"Unable to create step for job (?P<job>\d+)\s*:\s*(?P<why>.*)|"
    r"Task launch for (?:StepId=)?(?P<step>[\w.+]+) failed on node (?P<node>[\w.-]+)\s*:\s*(?P<why2>.*)|"
    r"Application launch failed\s*:\s*(?P<why3>.*)|"
    r"(?P<alloc>Unable to allocate resources)\s*:\s*(?P<why5>.*)|"
    r"execve\(\): (?P<exe>[^:]+): (?P<why4>No such file or directory|Permission denied)|"
    # srun's own search of the PATH before the launch (src/srun/opt.c, --test-only / --bcast): "srun: fatal:
    # Can not execute python"
    r"srun: fatal: (?P<noexec>Can not execute) (?P<exe2>\S+)"
)
_MPI = lazy_re.compile(
    r"(?P<tool>mpirun|mpiexec|orterun|prterun|prun) was unable to (?P<verb>launch|find|start) the specified "
    r"(?:application|executable)|"
    r"There are not enough slots available in the system to satisfy the (?P<slots>\d+)|"
    r"(?P<map>A sequential map was requested, but not enough node entries|"
    r"Your job has requested more processes than the ppr for|"
    r"A request was made to bind to that would result in binding more)|"
    r"(?:HYDU_create_process|HYD_spawn) \([^)]*\): execvp error on file (?P<exe>\S+)(?: \((?P<why>[^)]*)\))?"
)
_HOSTFILE = lazy_re.compile(
    r"Hostfile (?P<what>is not formatted correctly|contains duplicate hosts|contains a bad entry|"
    r"contains multiple entries for|is empty or not formatted correctly)(?P<rest>[^\n]*)"
)


def _hostfile(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    rest = m.group("rest").strip(" :,.")
    entry = re.match(r"(?:expected \S+, but found |)(?P<e>[^,]+)", rest)
    facts: dict[str, Any] = {"launcher": "hostfile", "error": f"hostfile {m.group('what')}"}
    if entry and m.group("what") in ("contains a bad entry", "contains multiple entries for"):
        facts["entry"] = entry.group("e").strip()
    return [
        row.event(
            hit,
            f"the launcher rejected its hostfile (it {m.group('what')}"
            + (f": {facts['entry']}" if "entry" in facts else "")
            + "): one '<host> slots=<n>' line per host, each host once; no rank started",
            facts,
            dedupe=(row.code, "hostfile"),
        )
    ]


# One line each in horovodrun's output; a flattened paste keeps ssh's words on the same line after it.
_HVD_SSH = lazy_re.compile(r"ssh not successful for host (?P<host>[^\s:]+?)[.:]?(?:\s+(?P<said>\S.*))?$")
_HVD_TIMEOUT = lazy_re.compile(
    r"Timed out waiting for (?P<activity>[^.]+)\. Please check (?:connectivity between servers|that you have "
    r"enough resources)"
)
_RAY_START = lazy_re.compile(
    r"(?:WorkerGroupStartupTimeoutError: )?The worker group startup timed out after "
    r"(?P<s>\d+(?:\.\d+)?) seconds waiting for (?P<n>\d+) workers"
)
_NSLOOKUP = lazy_re.compile(
    r"nslookup: can't resolve '(?P<host>[^']+)'|\*\* server can't find (?P<host2>[^\s:]+): NXDOMAIN"
)
# What follows an unresolved master when the job failed on it: the launcher's traceback or error.
_FAILED_AFTER = lazy_re.compile(
    r"Traceback \(most recent call last\)|Error\b|error:|exit(?:ed)? (?:code|status) [1-9]"
)
# The name resolved after all: the resolver's answer, or the run's own lines.
_RESOLVED = lazy_re.compile(
    r"^Name:\s+\S|^Address(?: 1)?:\s+\d|Rendezvous complete|Init COMPLETE|\bstep\b|\bloss\b"
)
# srun's step that fails only because the job is ending (a Ctrl-C, scancel, the time limit).
_ENDING = lazy_re.compile(r"already completing or completed|Job/step already", re.I)
# Slurm's credential of the step, signed by slurmctld and checked by the node's slurmd
# (src/common/slurm_errno.c: ESLURMD_CREDENTIAL_EXPIRED "Job credential expired",
# ESLURMD_INVALID_JOB_CREDENTIAL "Invalid job credential", ESLURMD_CREDENTIAL_REPLAYED "Job credential
# replayed", ESLURM_AUTH_CRED_INVALID "Invalid authentication credential"): the clocks of controller and node
# apart, a node rebooted or munge.key different - the scheduler's authentication (RUN374, driver_env), not the
# job's launch. "Job credential revoked" is a step of a job being cancelled (the _ENDING case).
_CREDENTIAL = lazy_re.compile(
    r"Job credential expired|Invalid job credential|Job credential replayed|"
    r"Invalid authentication credential|Protocol authentication error",
    re.I,
)
_REVOKED = lazy_re.compile(r"credential revoked", re.I)


# Open MPI's help block (help-orterun.txt / help-prterun.txt "orterun:executable-not-found", 1.x-5.x) ends
# with "Node: <host>" and "Executable: <what it took for the program>" a few lines below its first line.
_EXECUTABLE = lazy_re.compile(r"\bExecutable:\s+(\S+)")
# What a launcher took for the program that is the command line's slip, not the environment's lack: a Python
# script (its basename: "train.py", "/opt/app/train_hvd.py") or an option ("--np").
_COMMAND_LINE_SLIP = lazy_re.compile(r"\.py$|^-")


def _not_found(row: Signature, hit: Hit, facts: dict[str, Any], who: str) -> list[Event]:
    """The launcher ran but the program it was to start is not on the node (slurmstepd's execve ENOENT,
    hydra's execvp ENOENT, mpirun's "unable to find the specified executable"): the environment the step runs
    in (its PATH, its container image, an unactivated venv or module) lacks it; RUN389's, like a shell's "not
    found"."""
    exe = facts.get("executable")
    if exe and _COMMAND_LINE_SLIP.search(str(exe)):
        # a Python script named as the program (the command line left out `python` before it) or an option
        # taken for one (a misspelt flag, Open MPI's own NOTE says): the user's command line, no tool missing
        # from the environment; the row owns the line and says nothing
        return []
    facts["problem"] = "executable_not_found"
    what = f"{who} could not find {exe or 'the program it was to start'} on the node"
    return [
        row.event(
            hit,
            what + " (not on the PATH of the step's environment or in its container image); no rank started",
            facts,
            code=C.LAUNCHER_NOT_FOUND.code,
            dedupe=(C.LAUNCHER_NOT_FOUND.code, "launch", exe),
        )
    ]


def _srun(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    why = (
        m.group("why") or m.group("why2") or m.group("why3") or m.group("why4") or m.group("why5") or ""
    ).strip()
    why = clip(why, 100)
    if _ENDING.search(why) or _REVOKED.search(why):
        return []  # the job was already ending: the cancel or limit is the story, not the launch
    facts: dict[str, Any] = {"launcher": "srun", "error": why}
    if m.group("node"):
        facts["host"] = m.group("node")
    if _CREDENTIAL.search(why):
        facts["reason"] = "slurm_credential"
        return [
            row.event(
                hit,
                f"Slurm refused the step's credential ({why}): the clocks of the controller and "
                f"{facts.get('host', 'the node')} are apart, or MUNGE / slurmd on it is unhealthy (after a "
                "reboot); no rank started",
                facts,
                code=C.SLURM_AUTH_FAILED.code,
                dedupe=(C.SLURM_AUTH_FAILED.code,),
            )
        ]
    if m.group("job"):
        facts["job"] = m.group("job")
        what = (
            f"srun could not create the job step ({why}): it does not fit the job's allocation or is invalid"
        )
    elif m.group("node"):
        facts["host"] = m.group("node")
        facts["step"] = m.group("step")
        what = f"srun could not launch the tasks of step {m.group('step')} on {m.group('node')} ({why})"
    elif m.group("alloc"):
        what = (
            f"srun could not get an allocation ({why}): the request does not fit the partition or the account"
        )
    elif m.group("noexec"):
        facts["executable"] = m.group("exe2")
        return _not_found(row, hit, facts, "srun")
    elif m.group("exe"):
        if m.group("exe").strip().endswith("/slurm_script"):
            return []  # slurmd's own copy of the batch script: a node fault, not the job's launch
        facts["executable"] = m.group("exe").strip()
        if m.group("why4") == "No such file or directory":
            return _not_found(row, hit, facts, "slurmstepd")
        what = f"slurmstepd could not execute {facts['executable']} ({why}): not executable on the node"
    else:
        what = f"srun's application launch failed ({why})"
    return [row.event(hit, what + "; no rank started", facts, dedupe=(row.code, "srun"))]


def _help_block(hit: Hit) -> str:
    """The dozen lines after the hit, joined: the rest of a launcher's help block."""
    return "\n".join(ln.text.strip() for ln in hit.after(12, same_rank=False))


def _mpi(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"launcher": m.group("tool") or ("hydra" if m.group("exe") else "mpirun")}
    nxt = " ".join(ln.text.strip() for ln in hit.after(4, same_rank=False))
    if m.group("slots"):
        facts["slots"] = int(m.group("slots"))
        what = (
            f"mpirun could not place {m.group('slots')} processes: there are not enough slots (the "
            "hostfile's slots= or the allocation holds fewer; use --oversubscribe or more hosts)"
        )
    elif m.group("map"):
        facts["error"] = m.group("map")
        what = (
            f"mpirun could not map the processes onto the hosts it was given ({m.group('map')}...): more "
            "processes than the hosts, slots or cores allow"
        )
    elif m.group("exe"):
        facts["executable"] = m.group("exe")
        facts["error"] = (m.group("why") or "").strip()
        if facts["error"] == "No such file or directory":
            return _not_found(row, hit, facts, "MPICH's hydra")
        what = f"MPICH's hydra could not execute {m.group('exe')} ({facts['error'] or 'execvp failed'})"
    elif m.group("verb") == "find":
        facts["error"] = "executable not found"
        exe = _EXECUTABLE.search(_help_block(hit))  # what Open MPI's block took for the program
        if exe:
            facts["executable"] = exe.group(1)
        return _not_found(row, hit, facts, facts["launcher"])
    elif "could not access" in hit.text or "could not access" in nxt:
        what = (
            f"{facts['launcher']} could not find or execute the program it was asked to start: not on the "
            "PATH of a non-interactive shell on every node, or not executable"
        )
    else:
        what = f"{facts['launcher']} could not start the application: the processes failed at their launch"
    return [row.event(hit, what + "; no rank started", facts, dedupe=(row.code, "mpi"))]


def _hvd_ssh(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    host = m.group("host")
    said = (m.group("said") or "").strip() or next(
        (ln.text.strip() for ln in hit.after(3, same_rank=False) if ln.text.strip()), ""
    )
    return [
        row.event(
            hit,
            f"horovodrun's ssh check could not reach {host}"
            + (f" ({clip(said, 80)})" if said else "")
            + ": set up passwordless ssh to every host, or launch with the scheduler",
            {"launcher": "horovodrun", "host": host, "error": clip(said, 100)},
            dedupe=(row.code, host),
        )
    ]


def _hvd_timeout(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    activity = m.group("activity").strip()
    return [
        row.event(
            hit,
            f"horovodrun timed out waiting for {activity}: some hosts' task servers never reported back "
            "(ssh, the network between the hosts, or too short a --start-timeout)",
            {"launcher": "horovodrun", "problem": "start_timeout", "activity": activity},
            dedupe=(row.code, "horovod_start"),
        )
    ]


def _ray_start(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    n, s = int(m.group("n")), float(m.group("s"))
    return [
        row.event(
            hit,
            f"Ray Train's worker group did not start: {n} workers were not all scheduled within {s:g} s "
            "(the cluster lacks the resources asked for, a node went away, or autoscaling is slower)",
            {"launcher": "ray_train", "problem": "worker_group_start", "workers": n, "timeout_s": s},
            dedupe=(row.code, "ray_start"),
        )
    ]


def _nslookup(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    host = m.group("host") or m.group("host2")
    if host in ("(null)", ""):
        return []  # the resolver's own line for its server, not the master's name
    after = hit.after(60, same_rank=False)
    later = [ln.text for ln in after if host not in ln.text or "Name:" in ln.text]
    if any(_RESOLVED.search(t) for t in later):
        return []  # the name resolved and the run started: the init container's normal wait
    if not any(_FAILED_AFTER.search(t) for t in later):
        return []  # nothing failed after it in the paste
    return [
        row.event(
            hit,
            f"the master's host name {host} never resolved (the init container waited for it, then the "
            "launcher failed): the master pod/service is not up or its DNS name is wrong, so no rank could "
            "reach the store",
            {"host": host, "problem": "master_unresolved", "error": "name does not resolve"},
            code=C.STORE_UNREACHABLE.code,
            dedupe=(C.STORE_UNREACHABLE.code, "master_unresolved"),
        )
    ]


# torchrun / torch.distributed.launch (run.py, launch.py 1.x-2.x) started for several nodes with the store's
# address on the loopback: "--nnodes 2 --node-rank 1 --master-addr 127.0.0.1" (also "--nnodes=2:4",
# "--master_addr=localhost", "--rdzv-endpoint 127.0.0.1:29500"). On node 1 the agent looks for node 0's store
# on its own host, where none runs; node 0's store is out of the other nodes' reach. Then the launcher's own
# banner ("Setting OMP_NUM_THREADS environment variable for each process ...") and nothing: the agents wait
# for the rendezvous until its timeout (DeepSeek-V3#487).
_NNODES = lazy_re.compile(r"--nnodes[= ]+['\"]?(\d+)")
LOOPBACK_STORE = lazy_re.compile(
    r"--(?:master-addr|master_addr|rdzv-endpoint|rdzv_endpoint)[= ]+['\"]?"
    r"(127\.\d+\.\d+\.\d+|localhost|::1|\[::1\])(?![\w.])"
)
_NODE_RANK = lazy_re.compile(r"--node[-_]rank[= ]+['\"]?(\d+)")
# What the launcher prints before any rank runs: its banner (W-level records of run.py / launch.py, the
# asterisk rules), a deprecation notice of launch.py, a fence of the paste.
_LAUNCHER_BANNER = lazy_re.compile(
    r"^\s*$|torch/distributed/(?:run|launch)\.py:\d+\]|^\W*\*{5,}\W*$|OMP_NUM_THREADS|^\s*`+\s*$|"
    r"FutureWarning: The module torch\.distributed\.launch is deprecated"
)


def loopback_store(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    nn = _NNODES.search(hit.text)
    if not nn or int(nn.group(1)) < 2:
        return None
    # a person's Ctrl-C after the banner (and its echo) ends the wait the same way (interrupted_waits.py)
    after, by_hand = before_hand_stop(hit.after(24, same_rank=False))
    if (
        len(after) >= 24
        or not (after or by_hand)
        or not all(_LAUNCHER_BANNER.search(ln.text) for ln in after)
    ):
        return None  # the run goes on (or its failure is said): not a launch that only waited
    nr = _NODE_RANK.search(hit.text)
    node = int(nr.group(1)) if nr else None
    facts: dict[str, Any] = {
        "nnodes": int(nn.group(1)),
        "master_addr": m.group(1),
        "problem": "loopback_store",
    }
    if node is not None:
        facts["node_rank"] = node
    why = (
        f"on node {node} the agent looks for node 0's store on its own host, where none runs"
        if node
        else "the other nodes cannot reach a store on this host's loopback address"
    )
    return [
        row.event(
            hit,
            f"torchrun was started for {nn.group(1)} nodes with the store at {m.group(1)}, a loopback "
            f"address: {why}, so the rendezvous waits until its timeout (the log ends at the launcher's "
            "banner); give every node node 0's reachable address (and start every node)",
            facts,
            tier=1,
            dedupe=(row.code, "loopback_store"),
        )
    ]


# torchrun (run.py config_from_args, 1.10-2.x) warns "master_addr is only used for static rdzv_backend and
# when rdzv_endpoint is not specified." whenever --rdzv-backend is not static and no --rdzv-endpoint is given:
# every --standalone run prints it. After a launch for several nodes that names --master-addr and a dynamic
# backend (c10d, etcd) without --rdzv-endpoint, it says the address was dropped: the endpoint defaults to
# localhost:29400
# (elastic/rendezvous/utils.py parse_rendezvous_endpoint), so each node meets only itself and waits out the
# rendezvous timeout. Read where what follows is the launcher's banner, its own traceback or nothing (a rank's
# output after it means the agents met).
_DROPPED_ADDR = lazy_re.compile(r"master_addr is only used for static rdzv_backend and when rdzv_endpoint")
_LAUNCH_CMD = lazy_re.compile(
    r"\b(?:torchrun|torch\.distributed\.(?:run|launch))\b.*--nnodes[= ]+['\"]?(\d+)"
)
_DYNAMIC = lazy_re.compile(r"--rdzv[-_]backend[= ]+['\"]?(c10d|etcd|etcd-v2)\b")
_HAS_ENDPOINT = lazy_re.compile(r"--rdzv[-_]endpoint|--standalone")
_AGENT_ECHO = lazy_re.compile(
    r'^\s*(?:Traceback \(most recent call last\)|File "[^"]*(?:torchrun|torch/distributed/)[^"]*"|\S+Error: |'
    r"torch\.distributed\.elastic\.rendezvous\.api\.\w+:|(?:sys\.exit|return|run|elastic_launch|result)\b)|"
    # run.py's own records (2.x: "[2024-03-12 08:22:45,549] torch.distributed.run: [WARNING] ****"; 1.x:
    # "WARNING:torch.distributed.run:")
    r"torch\.distributed\.run: \[WARNING\]|^WARNING:torch\.distributed\.run:"
)


def _dropped_addr(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    # the command's own line, or the warning joined to it (a command longer than a terminal's width is read
    # as wrapped, its next line as its rest)
    texts = [hit.text[: m.start()], *(ln.text for ln in reversed(hit.before(12, same_rank=False)))]
    cmd = next((cm for t in texts if (cm := _LAUNCH_CMD.search(t))), None)
    if cmd is None or int(cmd.group(1)) < 2 or "master" not in cmd.string:
        return []
    backend = _DYNAMIC.search(cmd.string)
    if backend is None or _HAS_ENDPOINT.search(cmd.string):
        return []
    after, _ = before_hand_stop(hit.after(24, same_rank=False))
    if len(after) >= 24 or not all(
        _LAUNCHER_BANNER.search(ln.text) or _AGENT_ECHO.search(ln.text) for ln in after
    ):
        return []  # the run goes on: its own output says what happened
    n = int(cmd.group(1))
    return [
        row.event(
            hit,
            f"torchrun was started for {n} nodes with --rdzv-backend={backend.group(1)} and --master-addr "
            "but no "
            "--rdzv-endpoint: the master address is ignored and each node's agent meets at its own "
            "localhost:29400, so no node sees the others and the rendezvous times out; give every node "
            "--rdzv-endpoint=<node 0's address>:<port> (or use --rdzv-backend=static with --master-addr)",
            {"problem": "rdzv_endpoint_missing", "nnodes": n, "rdzv_backend": backend.group(1)},
            tier=1,
            dedupe=(row.code, "rdzv_endpoint_missing"),
        )
    ]


# Listed in nccl_transport.py, before its observation of the command line's node count, which owns the
# warning when a long command line is read as wrapped onto it.
DROPPED_ADDR_ROW = Signature(
    "multi-node dynamic rendezvous without its endpoint",
    _DROPPED_ADDR,
    _dropped_addr,
    C.RENDEZVOUS_CONFIG.code,
    tier=1,
    anchors=(b"master_addr is only used for static rdzv_backend",),
    words=("master_addr is only used for static rdzv_backend",),
)

L = C.LAUNCH_FAILED.code
SIGNATURES = (
    Signature(
        "srun step or task launch failed",
        _SRUN,
        _srun,
        L,
        anchors=(
            b"Unable to create step for job",
            b"Task launch for",
            b"Application launch failed",
            b"execve()",
            b"Unable to allocate resources",
            b"Can not execute",
        ),
        worth=(
            rb"Can not execute",
            rb"Unable to create step for job",
            rb"Task launch for \S+ failed on node",
            rb"Application launch failed",
            rb"execve\(\): ",
            rb"Unable to allocate resources",
        ),
        words=(
            "unable to create step",
            "task launch for",
            "application launch failed",
            "execve():",
            "unable to allocate resources",
            "can not execute",
        ),
    ),
    Signature(
        "mpi launcher could not start the application",
        _MPI,
        _mpi,
        L,
        anchors=(
            b"was unable to launch the specified",
            b"was unable to find the specified",
            b"was unable to start the specified",
            b"not enough slots available",
            b"execvp error on file",
            b"A sequential map was requested",
            b"requested more processes than the ppr",
            b"would result in binding more",
        ),
        worth=(
            rb"was unable to (?:launch|find|start) the specified",
            rb"not enough slots available in the system",
            rb"A sequential map was requested",
            rb"requested more processes than the ppr",
            rb"would result in binding more",
            rb"execvp error on file",
        ),
        words=(
            "the specified",
            "not enough slots available",
            "execvp error on file",
            "a sequential map was requested",
            "more processes than the ppr",
            "would result in binding more",
        ),
    ),
    Signature(
        "launcher hostfile rejected",
        _HOSTFILE,
        _hostfile,
        L,
        anchors=(b"Hostfile is ", b"Hostfile contains "),
        worth=(rb"Hostfile (?:is|contains) ",),
        words=("hostfile is ", "hostfile contains "),
    ),
    Signature(
        "horovodrun ssh check",
        _HVD_SSH,
        _hvd_ssh,
        C.REMOTE_LAUNCH_FAILED.code,
        anchors=(b"ssh not successful for host",),
        worth=(rb"ssh not successful for host",),
        words=("ssh not successful for host",),
    ),
    Signature(
        "horovodrun start timeout",
        _HVD_TIMEOUT,
        _hvd_timeout,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=1,
        anchors=(b"Timed out waiting for",),
        worth=(rb"Timed out waiting for [^.]+\. Please check",),
        words=("timed out waiting for",),
    ),
    Signature(
        "ray train worker group start-up timeout",
        _RAY_START,
        _ray_start,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=1,
        anchors=(b"worker group startup timed out",),
        worth=(rb"worker group startup timed out",),
        words=("worker group startup timed out",),
    ),
    Signature(
        "master name unresolved by the init container",
        _NSLOOKUP,
        _nslookup,
        C.STORE_UNREACHABLE.code,
        tier=1,
        anchors=(b"nslookup: can't resolve", b"server can't find"),
        worth=(rb"nslookup: can't resolve", rb"server can't find \S+: NXDOMAIN"),
        words=("nslookup: can't resolve", "server can't find"),
    ),
)
parse = gated_reader(SIGNATURES)
