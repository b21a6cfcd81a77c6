"""rendezvous, one step earlier: the multi-node launcher could not start the ranks on another node, so they
never ran and never met (RUN303).

Formats: DeepSpeed's runner (launcher/runner.py, 0.3-0.16) checks every host of its hostfile with ssh before
it starts pdsh: "RuntimeError: Using hostfile at /job/hostfile but host=worker-1 was not reachable via ssh. If
you are running with a single node please remove /job/hostfile or setup passwordless ssh.", after
"subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no worker-1 hostname' returned non-zero
exit status 255." (older: "Command '['ssh 10.0.0.2 hostname -I']' returned non-zero exit status 255."; 255 is
ssh's own failure, not the command's); pdsh's "pdsh@node1: node2: ssh exited with exit code 255" and the
remote host's ssh lines it prefixes with the host ("node2: ssh: connect to host node2 port 22: Connection
refused", "ssh: Could not resolve hostname node2: Name or service not known", "Host key verification failed.",
"Permission denied (publickey)."); Open MPI's "ORTE was unable to reliably start one or more daemons." / "An
ORTE daemon has unexpectedly failed after launch and before communicating back to mpirun." (PRTE in 5.x), and
its rsh launcher's "A daemon (pid 12345) died unexpectedly with status 127 while attempting to launch so we
are aborting." ("(pid unknown) died unexpectedly on signal 1", help-plm-base.txt / orte/mca/plm/base, 1.x-4.x:
the remote orted did not run, most often its libraries are not on the remote LD_LIBRARY_PATH), and its routed
framework's "ORTE does not know how to route a message to the specified daemon located on the indicated node:"
(help-routed-base.txt; the daemons started but cannot reach each other or mpirun: no common interface, a
firewall, sshd not yet up in a container); MPICH's hydra "[mpiexec@node1] HYDU_sock_connect
(utils/sock/sock.c:145): unable to connect from "node1" to "node2" (No route to host)".

A remote login shell of the csh family answers every sh-style assignment the launcher sends with
"export: Command not found." (tcsh's and csh's own words): MXNet's tools/launch.py, dmlc-submit's ssh mode
and hand-made ssh loops send "export DMLC_ROLE=...; python ...", so the ranks there start without the job's
environment (RUN303, tier 1: a more specific failure after it outranks it).

ColossalAI's `colossalai run --host/--hostfile` (cli/launcher/multinode_runner.py, 0.1-0.4) starts every
node's torchrun through fabric (paramiko's ssh) and prints what the connection raised: "Error: failed to
run torchrun --nproc_per_node=2 --nnodes=2 --node_rank=1 ... pretrain.py on 192.168.1.12, is localhost:
False, exception: not a valid RSA private key file" (paramiko: "Authentication failed.", "[Errno None]
Unable to connect to port 22 on 10.0.0.2", "Error reading SSH protocol banner", "No authentication methods
available", "Server '...' not found in known_hosts", socket's "[Errno -2] Name or service not known"); the
nodes that did start wait at the rendezvous for it. invoke's "Encountered a bad command exit code!" is the
command's own failure (the rank ran), and a local node's exception is not ssh's: both are left to the
rank's own lines.

On Kubernetes the remote shell is `kubectl exec`: mpi-operator v1's launcher (/etc/mpi/kubexec.sh as Open
MPI's plm_rsh_agent: "/opt/kube/kubectl exec <pod> -- /bin/sh -c ... orted ...") and kube-openmpi's
"kubectl exec -it <master> -- mpiexec ..." print kubectl's own refusal (kubectl exec.go and client-go's
remotecommand, 1.x): "error: unable to upgrade connection: container not found ("mpi-master")" (the kubelet's
words: a container name the pod does not have, a sidecar taken as the default, or a pod restarted), "error:
unable to upgrade connection: pod does not exist", "Error from server (NotFound): pods "job-worker-1" not
found", "error: cannot exec into a container in a completed pod; current phase is Failed", "Error from server
(BadRequest): pod job-worker-0 does not have a host assigned" (a worker still Pending), and the launcher
without its kubectl ("/etc/mpi/kubexec.sh: line 5: /opt/kube/kubectl: No such file or directory", the
kubectl-delivery init container had not copied it). The ranks on that pod never start (RUN303), read only
beside the MPI launcher's words (kubexec, orted, mpirun / mpiexec, ORTE): a person's own kubectl exec is not
a launch.

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
# also for a host name the prefix reader does not take as one, and after a writer's words ("多机训练报错
# localhost: ssh: ...").
_PDSH_TAG = lazy_re.compile(r"(?:^|\s)[\w.-]+: ssh: ")
# kubectl exec as the remote shell of an MPI launch on Kubernetes (module docstring).
_KUBECTL = lazy_re.compile(
    r"unable to upgrade connection: "
    r"(?P<why>container not found \(\"?(?P<ctr>[^\")]+)\"?\)|pod does not exist)|"
    r"Error from server \(NotFound\): pods \"(?P<pod>[^\"]+)\" not found|"
    r"(?P<why2>cannot exec into a container in a completed pod; current phase is \w+)|"
    r"Error from server \(BadRequest\): pod (?P<pod2>\S+) (?P<why3>does not have a host assigned)|"
    r"kubexec\.sh: line \d+: (?P<kubectl>\S*kubectl): No such file or directory"
)
_KUBE_LAUNCH = lazy_re.compile(r"kubexec|\borted\b|\bmpirun\b|\bmpiexec\b|ORTE|PRTE|plm_rsh_agent|hostfile")
# A git remote over ssh says the same words; its lines are not a launch.
_GIT = lazy_re.compile(r"git@|Could not read from remote repository|git clone|fatal: ")
_ORTE = lazy_re.compile(
    r"(?P<rte>ORTE|PRTE) was unable to reliably start one or more daemons|"
    r"An? (?P<rte2>ORTE|PRTE) daemon has unexpectedly failed after launch and before"
    r"(?:\s+communicating back)?|"
    r"(?P<report>A daemon failed to report back after being spawned)"
)
# PRRTE's ssh launcher (src/mca/plm/ssh/plm_ssh_module.c, 2.x-4.x, Open MPI 5's prterun) when a daemon it
# started never called back: "A daemon failed to report back after being spawned. This could be due to several
# factors, including inability to find the daemon executable, ..." then "  Remote host:   n2" and "  Daemon
# exit status: 127". The same launch failure as ORTE's "unable to reliably start one or more daemons".
_REMOTE_HOST = lazy_re.compile(r"^\s*Remote host:\s*(?P<h>[^\s<]\S*)")
_DAEMON_STATUS = lazy_re.compile(r"^\s*Daemon exit status:\s*(?P<s>-?\d+)")
_ORTED_DIED = lazy_re.compile(
    r"A daemon \(pid (?P<pid>\w+)\) died unexpectedly (?:with status (?P<status>\d+)|on signal (?P<sig>\d+))"
)
_ORTE_ROUTE = lazy_re.compile(
    r"(?P<rte>ORTE|PRTE) does not know how to route a message to the specified daemon"
)
_TARGET = lazy_re.compile(r"target node:\s*(?P<node>\S+)")
_CSH_EXPORT = lazy_re.compile(r"(?:^|\s)export: Command not found\.?\s*$")
_HYDRA = lazy_re.compile(
    r"HYDU_sock_connect \([^)]*\): unable to connect from \"?(?P<me>[^\s\"]+)\"? to \"?(?P<host>[^\s\"]+)\"?"
    r"(?: \((?P<why>[^)]*)\))?"
)

_COLOSSAL = lazy_re.compile(
    r"failed to run (?P<cmd>.+?) on (?P<host>[^\s,]+), is localhost: False, exception: "
    r"(?P<exc>.*?)\s*$"
)


# Any of the launch failures above, for the rendezvous rows of the nodes that did start: their agents' timeout
# is this failure's echo (rendezvous.py reads it as tier 1).
LAUNCH_FAILED = lazy_re.compile(
    r"was not reachable via ssh|ssh exited with exit code 255|unable to reliably start one or more daemons|"
    r"daemon has unexpectedly failed after launch|failed to report back after being spawned|"
    r"HYDU_sock_connect|A daemon \(pid \w+\) died unexpectedly|"
    r"does not know how to route a message|is localhost: False, exception: (?!Encountered a bad command)"
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
    tagged = hit.line.host is not None or _PDSH_TAG.search(hit.text)
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


def _kubectl(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    near = [*hit.before(40, same_rank=False), hit.line, *hit.after(20, same_rank=False)]
    if not m.group("kubectl") and not any(_KUBE_LAUNCH.search(ln.text) for ln in near):
        return None  # a person's own kubectl exec, not an MPI launch
    facts: dict[str, Any] = {"launcher": "kubectl exec"}
    if m.group("kubectl"):
        facts["problem"] = "kubectl_missing"
        why = f"the launcher's {m.group('kubectl')} is not there (the kubectl-delivery init container)"
    else:
        pod = m.group("pod") or m.group("pod2")
        if pod:
            facts["pod"] = pod
        if m.group("ctr"):
            facts["container"] = m.group("ctr")
        facts["error"] = why = clip(
            (m.group("why") or m.group("why2") or m.group("why3") or "pod not found"), 80
        )
    return _event(
        row,
        hit,
        f"the MPI launcher's kubectl exec into a worker pod failed ({why}): the ranks there never started; "
        "check that every worker pod is Running with the container the launcher names (kubectl get pods, "
        "kubectl.kubernetes.io/default-container with a sidecar)",
        facts,
    )


def _orte(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    rte = m.group("rte") or m.group("rte2") or "PRTE"
    if m.group("report"):
        facts: dict[str, Any] = {"launcher": "prterun", "runtime": rte, "problem": "daemon_no_report"}
        for ln in hit.after(12, same_rank=False):
            h, st = _REMOTE_HOST.match(ln.text), _DAEMON_STATUS.match(ln.text)
            if h:
                facts["host"] = h.group("h")
            if st:
                facts["exitcode"] = int(st.group("s"))
        on = f" on {facts['host']}" if "host" in facts else ""
        said = f" (its exit status {facts['exitcode']})" if "exitcode" in facts else ""
        hint = ": prted or a library it needs was not found there" if facts.get("exitcode") == 127 else ""
        return _event(
            row,
            hit,
            f"mpirun's daemon{on} never reported back after it was spawned{said}{hint}: the remote node "
            "lacks Open MPI on the PATH / LD_LIBRARY_PATH of a non-interactive shell, or the daemon could "
            "not open a TCP connection back to mpirun's node (a firewall, an interface that does not route)",
            facts,
        )
    return _event(
        row,
        hit,
        f"mpirun ({rte}) could not start its daemons on the other nodes: ssh to them failed, the MPI install "
        "is not on their PATH / LD_LIBRARY_PATH, or they cannot connect back to mpirun's node",
        {"launcher": "mpirun", "runtime": rte},
    )


def _orted_died(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"launcher": "mpirun", "problem": "orted_died_at_launch"}
    if m.group("status"):
        facts["exitcode"] = int(m.group("status"))
    if m.group("sig"):
        facts["signal_number"] = int(m.group("sig"))
    how = f"with status {m.group('status')}" if m.group("status") else f"on signal {m.group('sig')}"
    hint = " (127: orted or a library it needs was not found there)" if m.group("status") == "127" else ""
    return _event(
        row,
        hit,
        f"mpirun's daemon on another node died {how} while it was being launched{hint}: the remote node "
        "lacks Open MPI on the PATH / LD_LIBRARY_PATH of a non-interactive shell (or ssh to it failed); use "
        "--prefix or the same install path on every node",
        facts,
    )


def _orte_route(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"launcher": "mpirun", "runtime": m.group("rte"), "problem": "daemon_unroutable"}
    for ln in hit.after(6, same_rank=False):
        t = _TARGET.search(ln.text)
        if t:
            facts["host"] = t.group("node")
            break
    at = f" on {facts['host']}" if "host" in facts else ""
    return _event(
        row,
        hit,
        f"mpirun ({m.group('rte')}) could not reach its daemon{at}: the nodes have no common routable "
        "interface or a firewall blocks them (pin it with --mca oob_tcp_if_include / btl_tcp_if_include), or "
        "the daemon there never started (sshd not up yet in a worker pod)",
        facts,
    )


def _csh_export(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "the remote login shell is csh/tcsh ('export: Command not found.'): the launcher's sh-style "
            "'export VAR=...' lines did not run, so the ranks there started without the job's environment "
            "(DMLC_*, MASTER_ADDR, ...); give the account a bash login shell or wrap the command in bash -c",
            {"launcher": "ssh", "problem": "remote_shell_not_sh", "error": "export: Command not found."},
            dedupe=(row.code, "csh_export"),
        )
    ]


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


def _colossal(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    exc = m.group("exc")
    if exc.startswith("Encountered a bad command exit code"):
        return None  # the command ran: its own lines say why it failed
    host = m.group("host")
    facts: dict[str, Any] = {"launcher": "colossalai", "host": host, "error": clip(exc, 120)}
    rank = re.search(r"--node_rank[= ](\d+)", m.group("cmd"))
    if rank:
        facts["node_rank"] = int(rank.group(1))
    return _event(
        row,
        hit,
        f"ColossalAI's launcher could not start the ranks on {host} over ssh ({clip(exc, 80)}): set up "
        "passwordless ssh from the launching node to every host (a key paramiko reads: ssh-keygen -m PEM "
        "for an OpenSSH-format key), then rerun",
        facts,
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
        "kubectl exec of an mpi launch failed",
        _KUBECTL,
        _kubectl,
        R,
        anchors=(
            b"unable to upgrade connection: ",
            b"Error from server (NotFound): pods ",
            b"cannot exec into a container in a completed pod",
            b"does not have a host assigned",
            b"kubectl: No such file or directory",
        ),
        worth=(
            rb"unable to upgrade connection: (?:container not found|pod does not exist)",
            rb"Error from server \(NotFound\): pods ",
            rb"cannot exec into a container",
            rb"does not have a host assigned",
            rb"kubexec\.sh: line",
        ),
        words=("upgrade connection", "(notfound): pods", "cannot exec into", "host assigned", "kubexec.sh"),
    ),
    Signature(
        "mpirun daemons not started",
        _ORTE,
        _orte,
        R,
        anchors=(
            b"was unable to reliably start",
            b"daemon has unexpectedly failed after launch",
            b"failed to report back after being spawned",
        ),
        worth=(
            rb"unable to reliably start",
            rb"daemon has unexpectedly failed after launch",
            rb"failed to report back after being spawned",
        ),
        words=("unable to reliably start", "unexpectedly failed after launch", "failed to report back"),
    ),
    Signature(
        "mpirun daemon died at launch",
        _ORTED_DIED,
        _orted_died,
        R,
        anchors=(b"died unexpectedly with status", b"died unexpectedly on signal"),
        worth=(rb"A daemon \(pid \w+\) died unexpectedly",),
        words=("died unexpectedly",),
    ),
    Signature(
        "mpirun daemon unroutable",
        _ORTE_ROUTE,
        _orte_route,
        R,
        anchors=(b"does not know how to route a message",),
        worth=(rb"does not know how to route a message",),
        words=("does not know how to route",),
    ),
    Signature(
        "remote csh rejects export",
        _CSH_EXPORT,
        _csh_export,
        R,
        tier=1,
        anchors=(b"export: Command not found",),
        worth=(rb"export: Command not found",),
        words=("export: command not found",),
    ),
    Signature(
        "colossalai launcher ssh",
        _COLOSSAL,
        _colossal,
        R,
        anchors=(b"is localhost: False, exception:",),
        worth=(rb"is localhost: False, exception:",),
        words=("is localhost: false",),
    ),
    Signature(
        "hydra proxy connect",
        _HYDRA,
        _hydra,
        R,
        anchors=(b"HYDU_sock_connect",),
        words=("hydu_sock_connect",),
    ),
)
parse = gated_reader(SIGNATURES)
