"""rendezvous under MPI: MPI_Init could not make its world because the process manager's key-value
exchange (PMI / PMI2 / PMIx, the MPI launcher's rendezvous store) failed.

Formats: MPICH and its derivatives (Intel MPI, MVAPICH) print the error stack of the failed init, one record
per function, the last one saying which PMI call failed: "Abort(3712399) on node 0 (rank 0 in comm 0): Fatal
error in PMPI_Init: Other MPI error, error stack: ... MPIR_pmi_kvs_get(227).......: PMI_KVS_Get returned -1"
(4.x), "pmi1_barrier(120)...................: PMI_Barrier returned -1" (4.1+, under "Fatal error in
internal_Init_thread"); Open MPI's PMIx client with no server to talk to (a rank started without mpirun, or
srun without --mpi=pmix): "OPAL ERROR: Unreachable in file pmix3x_client.c at line 112" (4.x's external PMIx
component: "ext3x_client.c", "ext2x_client.c") then "*** An error
occurred in MPI_Init", and "PMIX ERROR: UNREACHABLE in file ...". Open MPI's own start-up help texts
(help-mpi-runtime.txt, help-orte-runtime.txt, 1.x-4.x; PRRTE's in 5.x): "It looks like MPI_INIT failed for
some reason; your parallel process is likely to abort." (5.x "MPI runtime init", also "orte_init",
"opal_init": OPAL, the local layer under the runtime, is the node's install or environment, RUN502),
hard-wrapped, then the step that failed and its status: "ompi_rte_init failed" / "orte_ess_init
failed" / "opal_pmix_base_select failed" with "--> Returned "(null)" (-43) instead of "Success" (0)" is the
rank's runtime that could not join its launcher (a rank started without mpirun, or by srun without the PMI
this Open MPI was built for: RUN304), and "  PML add procs failed" with "--> Returned "Unreachable" (-12)" is
ranks that no transport could connect (RUN174), as help-mca-bml-r2.txt's "At least one pair of MPI processes
are unable to reach each other for MPI communications." and 2.x+'s "MPI_INIT has failed because at least one
MPI process is unreachable from another." say directly (the BTL list it tried follows: "BTLs attempted: self
sm"). ess/slurm's "The application appears to have been direct launched using "srun", but OMPI was not built
with SLURM's PMI support and therefore cannot execute." (older "... with SLURM support") says why: this Open
MPI install has no PMI that srun offers (RUN552, driver_env: the install does not fit the cluster's
launcher). Slurm's PMIx plugin timing out the fence that MPI_Init's exchange is
(src/plugins/mpi/pmix/pmixp_coll_ring.c, pmixp_coll_tree.c, 17.11+): "srun: error: mpi/pmix_v3:
pmixp_coll_ring_reset_if_to: node-1 [0]: pmixp_coll_ring.c:742: 0x7f...: collective timeout seq=0" - some rank
never reached it (RUN221, tier 1). The runtime daemon's own server for its ranks' PMIx requests timing one out
(Open MPI 2.x-4.x orted's help-orted.txt, PRRTE's help-prted.txt for 5.x, [timedout]): "A request has timed
out and will therefore fail:" then "  Operation:  DMDX: prted/pmix/pmix_server.c:861" (the direct modex: one
rank's connection data that its owner never gave; also FENCE, LOOKUP, PUBLISH, CONNECT) and the advice on
pmix_server_max_wait / pmix_base_exchange_timeout; mpirun's aggregation of it from the other daemons
"[host:pid] 3 more processes have sent help message help-prted.txt / timedout" (help-orted.txt before 5.x)
says the same (RUN221). An MPI_Init failure whose stack names another layer (the fabric's provider, a kernel
module) is not this family.

The PMI client of the MPI library saying at once that it found no process manager to talk to: Open MPI's
PMI-1 / PMI-2 components for a direct launch (opal/mca/pmix/s1 and s2, help-pmix-base.txt, 1.8-4.x):
"PMI2_Init failed to intialize.  Return code: 14" (the source's spelling; "PMI_Init failed to intialize." for
PMI-1), printed between dashed rules and followed by ess/slurm's "direct launched using srun" text - srun's
--mpi plugin (none, pmix) offers no PMI-2 this build can use (RUN552, as that text). MPICH's simple PMI
(src/pmi/simple/simple_pmi.c PMII_singinit, MPICH2 1.x-4.x, also Intel MPI's and MVAPICH's copies): a rank
that found no PMI_FD / PMI_PORT took itself for a singleton, then needed the process manager and tried to
start mpiexec itself: "PMII_singinit: execv failed: No such file or directory" (perror) and, through
PMIU_printf with the rank unknown, "[unset]:   This singleton init program attempted to access some feature"
/ "for which process manager support was required, e.g. spawn or universe_size." / "But the necessary mpiexec
is not in your path." (1.0.x: "But, the necessary ..."), then "[unset]: write_line error; fd=-1
buf=:cmd=get kvsname=singinit_kvs_943014_0 ..." (4.1+: "PMIU_write error"): every rank is a world of one.
The ranks were started outside the process manager this MPI expects (srun without --mpi=pmi2, python run
directly, another MPI's mpirun): the meeting of MPI_Init never had a store (RUN222, as the other PMI calls
above)."""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_PMI = lazy_re.compile(
    r"(?P<call>PMI2?_\w+|PMIx_\w+) (?:returned|failed)\b[^\n]*|"
    r"(?:OPAL|PMIX) ERROR: (?:Unreachable|UNREACHABLE) in file (?P<file>\S*(?:pmix|ext\dx)\S*)"
)
# The init that failed, in the stack's first record or Open MPI's banner.
_INIT = lazy_re.compile(r"\b(?:P?MPI_Init\w*|internal_Init_thread|MPIR_Init_thread|MPI_INIT)\b")


def _pmi(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    near = [*hit.before(16, same_rank=False), hit.line, *hit.after(6, same_rank=False)]
    if not any(_INIT.search(ln.text) for ln in near):
        return None  # a PMI call of a running job (a spawn, a finalize) is not the init's rendezvous
    what = m.group("call") or "the PMIx client"
    return [
        row.event(
            hit,
            f"MPI_Init failed in its process manager's key-value exchange ({what}): the ranks could not "
            "share their addresses, so they were started without the MPI launcher's process manager "
            "(mpirun/mpiexec, or srun with the --mpi plugin this MPI library expects) or it could not reach "
            "the other nodes",
            {"problem": "mpi_pmi", "pmi_call": what},
            dedupe=(row.code, "pmi"),
        )
    ]


_OMPI_INIT = lazy_re.compile(
    r"It looks like (?P<what>MPI_INIT|MPI runtime init|orte_init|opal_init|pmix_init) failed for some reason"
)
# PMIx's help-pmix-runtime.txt / help-pmix-mca-base.txt (3.x-5.x, also in Open MPI's and Slurm's copies): the
# component the client could not open, printed above its "pmix_init failed" ("Framework: psec", "Component:
# munge"): a plugin of the PMIx library that the node or the container does not have (libmunge missing in an
# enroot/pyxis image, PMIX_MCA_psec naming a module this PMIx was not built with).
_PMIX_COMPONENT = lazy_re.compile(r"^\s*(?P<k>Framework|Component):\s*(?P<v>\S+)")
# Tried from the start of a run of [\w:() ] only, skipping its leading ":() ": the step is still the
# run's first word character up to " failed" at the end (the leftmost match), found in linear time.
_OMPI_STEP = lazy_re.compile(r"(?<![\w:() ])[:() ]*(?P<step>\w[\w:() ]*?) failed\s*$")
_OMPI_RET = lazy_re.compile(r'-->\s*Returned (?:"(?P<ret>[^"]*)"(?: \((?P<num>-?\d+)\))?|value (?P<val>\S+))')
_UNREACH = lazy_re.compile(
    r"At least one pair of MPI processes are unable to reach each other|"
    r"MPI_INIT has failed because at least one MPI process is unreachable"
)
_BTLS = lazy_re.compile(r"BTLs attempted:\s*(?P<btls>\S.*)$")
# Open MPI's s1/s2 help text; MPICH's simple PMI turning a rank into a singleton (module docstring).
_PMI_INIT_HELP = lazy_re.compile(
    r"(?<![\w.])(?P<call>PMI2?_Init) failed to in(?:i)?tiali[sz]e\.?\s+Return code: (?P<rc>-?\d+)"
)
_SINGINIT = lazy_re.compile(
    r"PMII_singinit: execv failed(?:: (?P<why>[^\n]+))?|"
    r"This singleton init program attempted to access some feature|"
    r"(?:write_line|PMIU_write) error; fd=-1 buf=:cmd=\w+ kvsname=singinit_kvs_"
)
_DIRECT = lazy_re.compile(r"The application appears to have been direct launched using \"?srun\"?")
_PMIX_FENCE = lazy_re.compile(
    r"mpi/pmix\w*: (?P<fn>pmixp_coll_\w+): (?P<node>[\w.-]+) \[\d+\]: \S+: (?:\S+: )?collective timeout"
)
# Open MPI's errors-are-fatal banner (ompi/errhandler/errhandler_predefined.c, 1.x-5.x) when the init itself
# failed: "*** An error occurred in MPI_Init_thread" / "*** on a NULL communicator" /
# "*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort," (MPI_Init, MPI_Init_thread;
# 4.x+ also "*** reported by
# process [..]"). No communicator exists yet: the rank could not join its launcher's world (started without
# mpirun, srun without the PMI this Open MPI expects, a peer that never came up). Its help text, when shown,
# is read by the rows above; this is the banner alone.
_OMPI_FATAL_INIT = lazy_re.compile(r"An error occurred in (?P<fn>MPI_Init(?:_thread)?)\b")
_NULL_COMM = lazy_re.compile(r"on a NULL communicator")


def _ompi_fatal_init(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    near = [hit.line, *hit.after(3, same_rank=False)]
    if not any(_NULL_COMM.search(ln.text) for ln in near):
        return None
    if _PMI.search(hit.text, 0, m.start()):
        return None  # the process manager's failure glued before it says why: the PMI row reads the line
    if any(_PMI.search(ln.text) for ln in hit.before(6, same_rank=False)):
        return []  # the process manager's failure just above says why: its row (RUN222) is the finding
    return [
        row.event(
            hit,
            f"{m.group('fn')} failed before any communicator existed (Open MPI's errors-are-fatal banner "
            "on a NULL communicator): the rank could not join its launcher's world; start it with "
            "mpirun/mpiexec "
            "or srun --mpi=<the PMI this Open MPI was built with>, and read the rank's earlier lines for the "
            "step that failed",
            {"problem": "mpi_init_failed", "mpi_call": m.group("fn")},
            dedupe=(row.code, "mpi_init_fatal"),
        )
    ]


_UNREACHABLE_MSG = (
    "the MPI ranks cannot reach each other over any transport Open MPI loaded (its BTL/MTL list lacks "
    "one that spans the nodes, tcp is excluded or pinned to a wrong interface, or the fabric's plugin did "
    "not load); check `ompi_info`, --mca btl / btl_tcp_if_include"
)


def _ompi_init(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    step = ret = ""
    for ln in hit.after(14, same_rank=False):
        s = _OMPI_STEP.search(ln.text)
        if s and not step:
            step = s.group("step").strip()
        r = _OMPI_RET.search(ln.text)
        if r and not ret:
            ret = r.group("ret") if r.group("ret") is not None else (r.group("val") or "")
            break
    facts: dict[str, Any] = {"launcher": "mpirun", "problem": "mpi_init_failed", "init": m.group("what")}
    if step:
        facts["step"] = step
    if ret:
        facts["returned"] = ret
    if "add procs" in step.lower() and "unreachable" in ret.lower():
        facts["problem"] = "mpi_peers_unreachable"
        return [
            row.event(
                hit,
                f"MPI_Init failed ({step}: {ret}): {_UNREACHABLE_MSG}",
                facts,
                code=C.NCCL_SOCKET_ERROR.code,
                dedupe=(C.NCCL_SOCKET_ERROR.code, "mpi_unreachable"),
            )
        ]
    if m.group("what") == "pmix_init":
        return _pmix_init(row, hit, facts, step, ret)
    if m.group("what") == "opal_init":
        # help-opal-runtime.txt: OPAL, the layer under the runtime, could not start on this node (its MCA
        # components, the shared-memory backing, the session directory, hwloc): before any launcher or peer
        # is involved, the MPI install or the node's environment (a Jetson / container without what it needs)
        facts["problem"] = "opal_init_failed"
        return [
            row.event(
                hit,
                "Open MPI's local layer (opal_init) failed"
                + (f" ({step}" + (f": {ret}" if ret else "") + ")" if step else "")
                + ": the MPI install or this node's environment is broken (missing components, /dev/shm or "
                "TMPDIR unusable, an install of another build); check ompi_info and the session directory, "
                "or drop the MPI launcher (torchpack) on a single device",
                facts,
                code=C.MPI_LOCAL_INIT_FAILED.code,
                dedupe=(C.MPI_LOCAL_INIT_FAILED.code,),
            )
        ]
    runtime = m.group("what") != "MPI_INIT" or any(w in step.lower() for w in ("rte", "ess", "pmix", "pmi"))
    what = (
        f"Open MPI's {m.group('what')} failed"
        + (f" ({step}" + (f": {ret}" if ret else "") + ")" if step else "")
        + (
            ": the rank's runtime could not join its launcher (started without mpirun/mpiexec, or by srun "
            "without the PMI this Open MPI was built for: use mpirun, or srun --mpi=pmix / pmi2)"
            if runtime
            else ": the rank could not complete MPI's start-up; the step it names says where"
        )
    )
    return [row.event(hit, what, facts, tier=None if runtime else 1, dedupe=(row.code, "ompi_init"))]


def _pmix_init(row: Signature, hit: Hit, facts: dict[str, Any], step: str, ret: str) -> list[Event]:
    for ln in hit.before(24, same_rank=False):
        c = _PMIX_COMPONENT.search(ln.text)
        if c:
            facts[c.group("k").lower()] = c.group("v")
    facts["launcher"] = "pmix"
    comp = "/".join(facts[k] for k in ("framework", "component") if k in facts)
    what = (
        "PMIx's own start-up (pmix_init) failed"
        + (f" at {step}" + (f" ({ret})" if ret else "") if step else "")
        + (f": its {comp} component could not be opened" if comp else "")
        + ", so no rank could join the launcher's key-value exchange: the PMIx plugins on this node or in "
        "the container do not match the launcher's (a container without the munge library: install it or set "
        "PMIX_MCA_psec=native; srun --mpi=pmix with a PMIx the image's MPI was not built against)"
    )
    return [row.event(hit, what, facts, dedupe=(row.code, "ompi_init"))]


def _unreachable(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"problem": "mpi_peers_unreachable", "transport": "open_mpi"}
    for ln in hit.after(16, same_rank=False):
        b = _BTLS.search(ln.text)
        if b:
            facts["btls"] = b.group("btls").strip()
            break
    tried = f" (BTLs tried: {facts['btls']})" if "btls" in facts else ""
    return [
        row.event(
            hit,
            f"Open MPI found no transport between some pair of ranks{tried}: {_UNREACHABLE_MSG}",
            facts,
            dedupe=(row.code, "mpi_unreachable"),
        )
    ]


def _direct(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "the ranks were started by srun, but this Open MPI has no PMI support for Slurm, so MPI_Init "
            "cannot run: launch with mpirun inside the allocation, or srun --mpi=pmix with an Open MPI "
            "built with it",
            {"launcher": "srun", "problem": "mpi_without_slurm_pmi"},
            dedupe=(row.code, "ompi_init"),
        )
    ]


def _pmi_init_help(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    call, rc = m.group("call"), int(m.group("rc"))
    return [
        row.event(
            hit,
            f"Open MPI's {call} found no process manager of that PMI (return code {rc}): the ranks were "
            "started directly (srun, or without mpirun) and the launch offers no PMI this Open MPI can use; "
            "launch with mpirun inside the allocation, or srun --mpi=pmi2 / --mpi=pmix as "
            "`srun --mpi=list` and `ompi_info | grep -i pmi` agree",
            {"launcher": "srun", "problem": "mpi_without_slurm_pmi", "pmi_call": call, "return_code": rc},
            dedupe=(row.code, "ompi_init"),
        )
    ]


def _singinit(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"problem": "mpi_singleton", "mpi": "mpich"}
    if m.group("why"):
        facts["execv_error"] = m.group("why").strip()
    return [
        row.event(
            hit,
            "MPICH's PMI found no process manager, so each rank started as its own world of one (a "
            "singleton) and could not start mpiexec itself: the ranks were started outside the process "
            "manager this MPI expects; launch with this MPI's mpiexec / mpirun, or srun --mpi=pmi2 (or the "
            "PMI this MPICH was built with)",
            facts,
            dedupe=(row.code, "pmi"),
        )
    ]


def _pmix_fence(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"Slurm's PMIx exchange (the fence of MPI_Init) timed out on {m.group('node')}: some rank of the "
            "step never reached it (it did not start, hung before MPI_Init, or its node cannot reach the "
            "others)",
            {"launcher": "srun", "problem": "pmix_fence_timeout", "host": m.group("node")},
            dedupe=(row.code, "pmix_fence"),
        )
    ]


# The daemon's help text [timedout] (orted/pmix/pmix_server*.c, prted/pmix/pmix_server*.c), or mpirun's count
# of it from the other daemons.
_RTE_TIMEDOUT = lazy_re.compile(
    r"A request has timed out and will therefore fail|"
    r"sent help message help-(?P<who>orted|prted)\.txt / timedout"
)
_RTE_OPERATION = lazy_re.compile(r"^\s*Operation:\s+(?P<op>\S.*?)\s*$")


def _rte_timedout(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"launcher": "open mpi" if m.group("who") != "prted" else "prrte"}
    ops = (_RTE_OPERATION.search(ln.text) for ln in hit.after(4, same_rank=False))
    op = next((o for o in ops if o), None)
    if op:
        facts["operation"] = op.group("op")[:160]
    kind = (op.group("op").split(":", 1)[0].strip() if op else "").upper()
    what = {
        "DMDX": "a rank's connection data (the direct modex) that its owner never gave",
        "FENCE": "the exchange (fence) every rank must reach",
    }.get(kind, "a request of the ranks' key-value exchange")
    msg = (
        f"MPI's runtime daemon timed out {what}"
        + (f" ({facts['operation']})" if op else "")
        + ": a rank that died or hung in start-up, or a runtime (PMIx) fault; see pmix_server_max_wait"
    )
    return [row.event(hit, msg, facts, dedupe=(row.code, "rte_timedout"))]


SIGNATURES = (
    Signature(
        "mpi runtime request timed out",
        _RTE_TIMEDOUT,
        _rte_timedout,
        C.RENDEZVOUS_TIMEOUT.code,
        anchors=(b"timed out and will therefore fail", b"/ timedout"),
        worth=(rb"timed out and will therefore fail", rb"help-(?:orted|prted)\.txt / timedout"),
        words=("will therefore fail", "/ timedout"),
    ),
    Signature(
        "open mpi start-up failed",
        _OMPI_INIT,
        _ompi_init,
        C.LAUNCH_FAILED.code,
        anchors=(b"failed for some reason",),
        worth=(rb"It looks like [\w ]+ failed for some reason",),
        words=("failed for some reason",),
    ),
    Signature(
        "open mpi ranks unreachable",
        _UNREACH,
        _unreachable,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"unable to reach each other", b"MPI process is unreachable"),
        worth=(rb"unable to reach each other", rb"MPI process is unreachable"),
        words=("unable to reach each other", "mpi process is unreachable"),
    ),
    Signature(
        "open mpi fatal error in mpi_init",
        _OMPI_FATAL_INIT,
        _ompi_fatal_init,
        C.LAUNCH_FAILED.code,
        anchors=(b"An error occurred in MPI_Init",),
        worth=(rb"An error occurred in MPI_Init",),
        words=("an error occurred in mpi_init",),
    ),
    Signature(
        "open mpi direct launch without pmi",
        _DIRECT,
        _direct,
        C.MPI_WITHOUT_SLURM_PMI.code,
        anchors=(b"direct launched using",),
        worth=(rb"direct launched using",),
        words=("direct launched using",),
    ),
    Signature(
        "open mpi pmi component init failed",
        _PMI_INIT_HELP,
        _pmi_init_help,
        C.MPI_WITHOUT_SLURM_PMI.code,
        anchors=(b"_Init failed to in",),
        worth=(rb"PMI2?_Init failed to in",),
        words=("_init failed to in",),
    ),
    Signature(
        "mpich pmi singleton",
        _SINGINIT,
        _singinit,
        C.STORE_UNREACHABLE.code,
        anchors=(b"PMII_singinit: execv failed", b"This singleton init program", b"kvsname=singinit_kvs_"),
        words=("pmii_singinit", "singleton init program", "singinit_kvs"),
    ),
    Signature(
        "slurm pmix fence timeout",
        _PMIX_FENCE,
        _pmix_fence,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=1,
        anchors=(b"collective timeout",),
        worth=(rb"pmixp_coll_\w+: .*collective timeout",),
        words=("collective timeout",),
    ),
    Signature(
        "mpi init process-manager exchange",
        _PMI,
        _pmi,
        C.STORE_UNREACHABLE.code,
        anchors=(b"PMI", b"pmix", b"ERROR: Unreachable in file", b"ERROR: UNREACHABLE in file"),
        worth=(
            rb"PMI2?_\w+ (?:returned|failed)",
            rb"PMIx_\w+ (?:returned|failed)",
            rb"ERROR: Unreachable",
            rb"ERROR: UNREACHABLE",
        ),
        words=("pmi", "error: unreachable in file"),
    ),
)
parse = gated_reader(SIGNATURES)
