"""rendezvous, one step earlier: the multi-node launcher could not start the ranks on another node, so they
never ran and never met (RUN303).

Formats: DeepSpeed's runner (launcher/runner.py, 0.3-0.16) checks every host of its hostfile with ssh before
it starts pdsh: "RuntimeError: Using hostfile at /job/hostfile but host=worker-1 was not reachable via ssh. If
you are running with a single node please remove /job/hostfile or setup passwordless ssh.", after
"subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no worker-1 hostname' returned non-zero
exit status 255." (older: "Command '['ssh 10.0.0.2 hostname -I']' returned non-zero exit status 255."; 255 is
ssh's own failure, not the command's); pdsh's "pdsh@node1: node2: ssh exited with exit code 255" and the
remote host's ssh lines it prefixes with the host ("node2: ssh: connect to host node2 port 22: Connection
refused", "ssh: Could not resolve hostname node2: Name or service not known", "Host key verification
failed.", "Permission denied (publickey)."); Open MPI's "ORTE was unable to reliably start one or more
daemons." / "An ORTE daemon has unexpectedly failed after launch and before communicating back to mpirun."
(PRTE in 5.x); MPICH's hydra "[mpiexec@node1] HYDU_sock_connect (utils/sock/sock.c:145): unable to connect
from "node1" to "node2" (No route to host)".

An ssh line alone is read only beside a launcher (or with pdsh's host prefix): the same words from a git clone
or a user's own ssh are not a training job's launch.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_DS_HOSTFILE = lazy_re.compile(
    r"Using hostfile at (?P<hostfile>\S+) but host=(?P<host>\S+) was not reachable via ssh"
)
# "Command 'ssh -o PasswordAuthentication=no h hostname'" / "Command '['ssh h hostname -I']'"
_SSH_CMD = lazy_re.compile(
    r"Command '\[?'?ssh (?:-\S+ (?:\S+=\S+ )?)*(?P<host>[^\s'\]]+)[^']*'?\]?' "
    r"returned non-zero exit status 255"
)
_PDSH = lazy_re.compile(r"pdsh@(?P<me>[\w.-]+): (?P<host>[\w.-]+): ssh exited with exit code (?P<code>\d+)")
_SSH = lazy_re.compile(
    r"ssh: connect to host (?P<host>\S+) port (?P<port>\d+): (?P<why>[^\n]+)|"
    r"ssh: Could not resolve hostname (?P<host2>[^\s:]+): (?P<why2>[^\n]+)|"
    r"(?P<why3>Host key verification failed|Permission denied \(publickey[^)]*\))"
)
# What runs ssh for a training job: its launchers and their words.
_LAUNCHER = lazy_re.compile(
    r"deepspeed|pdsh|mpirun|mpiexec|ORTE|PRTE|prterun|hydra|HYD|horovodrun|hostfile|hostname -I|torchrun|"
    r"ssh exited with exit code|PasswordAuthentication",
    re.I,
)
# pdsh's own tag before a remote host's ssh line ("localhost: ssh: connect to host localhost port 22: ..."),
# also for a host name the prefix reader does not take as one.
_PDSH_TAG = lazy_re.compile(r"^\s*[\w.-]+: ssh: ")
# A git remote over ssh says the same words; its lines are not a launch.
_GIT = lazy_re.compile(r"git@|Could not read from remote repository|git clone|fatal: ")
_ORTE = lazy_re.compile(
    r"(?P<rte>ORTE|PRTE) was unable to reliably start one or more daemons|"
    r"An? (?P<rte2>ORTE|PRTE) daemon has unexpectedly failed after launch and before communicating back"
)
_HYDRA = lazy_re.compile(
    r"HYDU_sock_connect \([^)]*\): unable to connect from \"?(?P<me>[^\s\"]+)\"? to \"?(?P<host>[^\s\"]+)\"?"
    r"(?: \((?P<why>[^)]*)\))?"
)


# Any of the launch failures above, for the rendezvous rows of the nodes that did start: their agents' timeout
# is this failure's echo (rendezvous.py reads it as tier 1).
LAUNCH_FAILED = lazy_re.compile(
    r"was not reachable via ssh|ssh exited with exit code 255|unable to reliably start one or more daemons|"
    r"daemon has unexpectedly failed after launch|HYDU_sock_connect"
)


def _event(row: Signature, hit: Hit, what: str, facts: dict[str, Any]) -> list[Event]:
    return [row.event(hit, what, facts, dedupe=(row.code, facts.get("host") or facts.get("launcher")))]


def _ds_hostfile(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    host = m.group("host")
    return _event(
        row,
        hit,
        f"DeepSpeed's launcher could not reach host {host} of its hostfile over ssh: set up passwordless ssh "
        "to every host (and the same ssh port), fix the host names, or drop the hostfile on a single node",
        {"launcher": "deepspeed", "host": host, "hostfile": m.group("hostfile")},
    )


def _ssh_cmd(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    host = m.group("host")
    return _event(
        row,
        hit,
        f"the launcher's ssh to {host} failed (exit status 255 is ssh's own failure: the host refused, is "
        "unreachable, does not resolve, or does not accept the key)",
        {"launcher": "ssh", "host": host, "exitcode": 255},
    )


# The ranks had started (their own records before the line): an ssh session that ends with 255 then is a
# connection dropped mid-run (the node died or was rebooted), the echo of what ended it.
_STARTED = lazy_re.compile(
    r"init_distributed|Initializing TorchBackend|NCCL INFO|Init COMPLETE|Rendezvous complete|[Ee]poch\b|"
    r"\bstep\b|\bloss\b"
)


def _pdsh(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("code") != "255":
        return None  # the remote command's own exit code: the rank's failure, read elsewhere
    host = m.group("host")
    facts: dict[str, Any] = {"launcher": "pdsh", "host": host, "exitcode": 255}
    if any(_STARTED.search(ln.text) for ln in hit.before(400, same_rank=False)):
        facts["during_run"] = True
        return [
            row.event(
                hit,
                f"pdsh lost its ssh session to {host} (exit code 255) after the ranks had started: the node "
                "went away or its connection dropped; what ended it says more",
                facts,
                tier=2,
                dedupe=(row.code, host),
            )
        ]
    return _event(
        row, hit, f"pdsh could not start the ranks on {host}: its ssh failed (exit code 255)", facts
    )


def _ssh(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    near = [*hit.before(40, same_rank=False), hit.line, *hit.after(40, same_rank=False)]
    if any(_GIT.search(ln.text) for ln in near):
        return None
    tagged = hit.line.host is not None or _PDSH_TAG.match(hit.text)
    if not tagged and not any(_LAUNCHER.search(ln.text) for ln in near):
        return None
    host = m.group("host") or m.group("host2") or hit.line.host
    why = clip((m.group("why") or m.group("why2") or m.group("why3") or "").strip().rstrip("."), 80)
    facts: dict[str, Any] = {"launcher": "ssh", "error": why}
    if host:
        facts["host"] = host
    if m.group("port"):
        facts["ssh_port"] = int(m.group("port"))
    at = f" {host}" if host else " another node"
    if any(_STARTED.search(ln.text) for ln in hit.before(400, same_rank=False)):
        facts["during_run"] = True  # the ranks had started: a later ssh of the job, not its launch
        msg = f"an ssh of the job to{at} failed ({why}) after the ranks had started"
        return [row.event(hit, msg, facts, tier=2, dedupe=(row.code, host))]
    return _event(row, hit, f"the launcher's ssh to{at} failed ({why}): its ranks there never started", facts)


def _orte(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    rte = m.group("rte") or m.group("rte2")
    return _event(
        row,
        hit,
        f"mpirun ({rte}) could not start its daemons on the other nodes: ssh to them failed, the MPI install "
        "is not on their PATH / LD_LIBRARY_PATH, or they cannot connect back to mpirun's node",
        {"launcher": "mpirun", "runtime": rte},
    )


def _hydra(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    host = m.group("host")
    why = (m.group("why") or "").strip()
    return _event(
        row,
        hit,
        f"MPICH's hydra launcher could not connect from {m.group('me')} to {host}"
        + (f" ({why})" if why else "")
        + ": its proxy there never started the ranks",
        {"launcher": "hydra", "host": host, "error": why},
    )


R = C.REMOTE_LAUNCH_FAILED.code
SIGNATURES = (
    Signature(
        "deepspeed hostfile host not reachable",
        _DS_HOSTFILE,
        _ds_hostfile,
        R,
        anchors=(b"rror", b"was not reachable via ssh"),
        worth=(rb"was not reachable via ssh",),
        words=("not reachable via ssh",),
    ),
    Signature(
        "launcher's ssh command failed",
        _SSH_CMD,
        _ssh_cmd,
        R,
        anchors=(b"rror", b"returned non-zero exit status"),
        worth=(rb"returned non-zero exit status 255",),
        words=("ssh",),
        anchor_from="the 'Error' of 'CalledProcessError: '",
        examples=(
            "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no worker-1 hostname' "
            "returned non-zero exit status 255.",
        ),
    ),
    Signature(
        "pdsh ssh exit",
        _PDSH,
        _pdsh,
        R,
        anchors=(b"ssh exited with exit code",),
        worth=(rb"ssh exited with exit code",),
        words=("ssh exited",),
    ),
    Signature(
        "ssh failure beside a launcher",
        _SSH,
        _ssh,
        R,
        anchors=(
            b"ssh: connect to host",
            b"ssh: Could not resolve hostname",
            b"Host key verification failed",
            b"Permission denied (publickey",
        ),
        worth=(
            rb"ssh: connect to host",
            rb"ssh: Could not resolve",
            rb"Host key verification failed",
            rb"Permission denied \(publickey",
        ),
        words=("ssh:", "host key verification failed", "permission denied (publickey"),
    ),
    Signature(
        "mpirun daemons not started",
        _ORTE,
        _orte,
        R,
        anchors=(b"was unable to reliably start", b"daemon has unexpectedly failed after launch"),
        worth=(rb"unable to reliably start", rb"daemon has unexpectedly failed after launch"),
        words=("unable to reliably start", "unexpectedly failed after launch"),
    ),
    Signature(
        "hydra proxy connect",
        _HYDRA,
        _hydra,
        R,
        anchors=(b"HYDU_sock_connect",),
        worth=(rb"HYDU_sock_connect",),
        words=("hydu_sock_connect",),
    ),
)
parse = gated_reader(SIGNATURES)
