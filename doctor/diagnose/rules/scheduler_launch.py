"""scheduler_launch: a job scheduler's or an MPI launcher's refusal to start the ranks, in the words its own
source prints, where the launch rows (`launch_start`, `mpi_bootstrap`) had no row.

Formats, read at their sources:
- Open MPI's launcher run as root (orte/tools/orterun and orte/orted help text, 1.x-4.x; PRRTE 5.x
  src/mca/schizo/base/schizo_base_stubs.c prte_schizo_base_root_error_msg: "%s has detected an attempt to
  run as root." with the tool's basename, mpirun / prterun / prte): it exits(1) before any rank (RUN392).
- Slurm's option check (src/common/slurm_opt.c _validate_memory_options / _validate_tres_per_task,
  20.11-25.x),
  fatal() so printed "srun: fatal: ..." / "sbatch: fatal: ...": the environment's variables that exclude each
  other, "SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are mutually exclusive.",
  "SLURM_GPUS_PER_TASK is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU", and an option
  against an inherited variable "--gpus-per-task is mutually exclusive with --ntasks-per-gpu and
  SLURM_NTASKS_PER_GPU": an srun inside an allocation inherits the outer job's SLURM_* (RUN395). The options
  alone ("--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.", "--gpus-per-node and --gres=gpu
  are mutually exclusive.") are the command line's: RUN304 (no step).
- srun's MPI plugin (src/interfaces/mpi.c 23.02+: "MPI: Cannot create context for %s", "MPI: Unable to load
  any plugin", "unable to resolve MPI plugin offset from plugin_id=%u. This error usually results from a job
  being submitted against an MPI plugin which was not compiled into slurmd"; src/common/mpi.c 17.x-22.05:
  "cannot create mpi context for mpi/pmix_v3", after src/common/plugin.c's "Couldn't find the specified plugin
  name for mpi/pmix_v3 looking at all files", and srun's "Invalid MPI type 'pmix', --mpi=list for acceptable
  types"): the --mpi / SLURM_MPI_TYPE / MpiDefault names a PMI this Slurm was not built with (RUN304, the same
  launch without a usable PMI as Open MPI's "direct launched using srun" in `mpi_bootstrap`).
- srun's CPU binding outside the step ("CPU binding outside of job step allocation, allocated CPUs are:
  0x..."; src/plugins/task/affinity, --cpu-bind=map_cpu/mask_cpu naming CPUs the step does not hold): RUN304.
- Slurm's PMI servers failing the key-value exchange MPI_Init is (tier 1: a rank that died is what the
  exchange lost, and its own error leads): PMIx (src/plugins/mpi/pmix, PMIXP_ERROR: "slurmstepd: error:
  mpi/pmix_v3: pmixp_p2p_send: node-1 [1]: pmixp_utils.c:467: send failed, rc=1001, exceeded the retry
  limit", "mpi/pmix_v4: _errhandler: node-1 [0]: pmixp_client_v2.c:211: Error handler invoked: status = -25,
  source = [slurm.pmix.1234.0:1]"), PMI2 (src/plugins/mpi/pmi2: "mpi/pmi2: failed to send temp kvs to
  compute nodes", "invalid kvs seq from node ...", "failed to read PMI1 request"), PMI1 (src/api/pmi_server.c:
  "PMK_KVS_Barrier duplicate request from task 0", "PMK_KVS_Barrier task count inconsistent") (RUN304). Its
  fence timeout ("collective timeout") is `mpi_bootstrap`'s. Only error-level lines: srun -v prints
  "debug: mpi/pmix_v4: ..." on a healthy launch.
- Intel MPI 2019-2021's i_hydra (src/pm/i_hydra/libhydra/demux/hydra_demux_poll.c check_exit_codes) when its
  bootstrap (ssh, or slurm/pbs) could not start the proxy on a host: "[mpiexec@node1] check_exit_codes
  (../../../../../src/pm/i_hydra/libhydra/demux/hydra_demux_poll.c:117): unable to run bstrap_proxy on node2
  (pid 23425, exit code 256)", 2021.x "[mpiexec@node1] Error: Unable to run bstrap_proxy on node2 (pid 1234,
  exit code 65280)" then "Possible reasons: 1. Host is unavailable ..." (RUN303, the remote launch).
- Open MPI's verbs BTLs at init (help-mpi-btl-openib.txt [init-fail-no-mem], 1.x-4.x; help-mpi-btl-usnic.txt):
  "The OpenFabrics (openib) BTL failed to initialize while trying to allocate some locked memory.  This
  typically can indicate that the memlock limits are set too low." (usNIC: "... while trying to register some
  memory"), wrapped after "trying to": the locked-memory limit (ulimit -l) of the ranks (RUN385).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_ROOT = lazy_re.compile(
    r"(?P<tool>mpirun|mpiexec|orterun|prterun|prte|prun|oshrun|orted|prted) has detected an attempt to run "
    r"as root"
)

_SLURM_ENV = lazy_re.compile(
    r"(?P<vars>SLURM_\w+(?:, SLURM_\w+)*,? and SLURM_\w+) are mutually exclusive|"
    r"(?P<var>SLURM_\w+|--[\w-]+) is mutually exclusive with (?P<with>[^\n]*?\bSLURM_\w+)|"
    r"(?P<tool>srun|sbatch|salloc): fatal: (?P<opts>--[\w=,-]+(?:,? (?:and )?--[\w=,-]+)+) "
    r"are mutually exclusive"
)

_SRUN_MPI = lazy_re.compile(
    r"Couldn't find the specified plugin name for mpi/(?P<p1>[\w.-]+)|"
    r"cannot create mpi context for (?:mpi/)?(?P<p2>[\w.-]+)|"
    r"MPI: Cannot create context for (?:mpi/)?(?P<p3>[\w.-]+)|"
    r"[Ii]nvalid MPI type '?(?P<p4>[\w.-]+)'?,? --mpi=list|"
    r"(?P<none>MPI: Unable to load any plugin)|"
    r"(?P<offset>unable to resolve MPI plugin offset from plugin_id)"
)

_CPU_BIND = lazy_re.compile(
    r"CPU binding outside of job step allocation(?:, allocated CPUs are: (?P<cpus>\S+?)\.?$)?"
)

_BSTRAP = lazy_re.compile(
    r"[Uu]nable to run (?P<what>bstrap_proxy|hydra_bstrap_proxy) on (?P<host>[^\s(]+) \(pid (?P<pid>\d+), "
    r"exit code (?P<code>\d+)\)"
)
_OPENIB_MEMLOCK = lazy_re.compile(
    r"The (?P<btl>OpenFabrics \(openib\)|usNIC) BTL failed to initialize while trying to"
    r"(?:\s+(?:allocate some locked|register some)\s+memory)?"
)

_SLURM_PMI = lazy_re.compile(
    r"error:\s+mpi/(?P<pmi>pmix\w*): (?P<fn>\w+): (?P<node>[\w.-]+) \[\d+\]: \S+?:\d+: (?P<msg>[^\n]+)|"
    r"mpi/(?P<pmi2>pmi2): (?P<msg2>failed to send temp kvs[^\n]*|invalid kvs seq[^\n]*|"
    r"failed to (?:read|unpack) [^\n]*|unpack kvs error[^\n]*|unable to find [^\n]*)|"
    r"(?P<pmi1>PMK_KVS_Barrier) (?P<msg1>duplicate request[^\n]*|task count[^\n]*)"
)
# PMIXP_ERROR lines that are a fence's timeout (mpi_bootstrap's row) or not the exchange's fault.
_PMI_NOT_OURS = lazy_re.compile(r"collective timeout")


def _root(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    tool = m.group("tool")
    return [
        row.event(
            hit,
            f"{tool} refused to run as root and exited before starting any rank: add --allow-run-as-root, or "
            "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 (a container's root user), or "
            "run as a normal user",
            {"launcher": tool, "reason": "run_as_root"},
            dedupe=(row.code,),
        )
    ]


def _slurm_env(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("opts"):
        # options of the command line alone: the job script's own srun/sbatch line, no step made
        return [
            row.event(
                hit,
                f"{m.group('tool')} refused its options ({m.group('opts')} are mutually exclusive): give one "
                "of them; no step was created and no rank started",
                {"launcher": m.group("tool"), "error": clip(m.group(0), 120)},
                code=C.LAUNCH_FAILED.code,
                dedupe=(C.LAUNCH_FAILED.code, "slurm_opts"),
            )
        ]
    names = re.findall(r"SLURM_\w+", m.group(0))
    facts: dict[str, Any] = {"scheduler": "slurm", "variables": names, "reason": "inherited_slurm_env"}
    return [
        row.event(
            hit,
            f"Slurm refused the step: {', '.join(names)} exclude each other (or the option given) - the srun "
            "or sbatch inherited them from the outer allocation's environment; unset the one you do not mean "
            f"(e.g. `unset {names[-1]}`) before srun, or pass only one memory/GPU option",
            facts,
            dedupe=(row.code,),
        )
    ]


def _srun_mpi(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    plugin = m.group("p1") or m.group("p2") or m.group("p3") or m.group("p4")
    facts: dict[str, Any] = {"launcher": "srun", "reason": "mpi_plugin_missing"}
    if plugin:
        facts["mpi_plugin"] = plugin
    named = f"the MPI plugin {plugin}" if plugin else "its MPI plugin"
    return [
        row.event(
            hit,
            f"srun could not load {named} (--mpi, SLURM_MPI_TYPE or MpiDefault): this Slurm (srun or the "
            "nodes' slurmd) was not built with it; `srun --mpi=list` shows the ones it has - use one of them "
            "(pmix, pmi2) that the MPI/launcher was built for; no rank started",
            facts,
            dedupe=(row.code, "srun_mpi"),
        )
    ]


def _cpu_bind(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"launcher": "srun", "reason": "cpu_bind_outside_step"}
    if m.group("cpus"):
        facts["allocated_cpus"] = m.group("cpus")
    return [
        row.event(
            hit,
            "srun's CPU binding names CPUs outside the step's allocation (--cpu-bind=map_cpu/mask_cpu or an "
            "inherited SLURM_CPU_BIND): bind within the step's CPUs or let Slurm bind (--cpu-bind=cores)",
            facts,
            dedupe=(row.code, "cpu_bind"),
        )
    ]


def _bstrap(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    code = int(m.group("code"))
    status = code >> 8 if code > 255 else code  # a wait() status: 65280 is exit 255, ssh's own failure
    facts: dict[str, Any] = {"launcher": "intel_mpi_hydra", "host": m.group("host"), "exit_status": status}
    return [
        row.event(
            hit,
            f"Intel MPI's mpiexec could not start its bootstrap proxy on {m.group('host')} (exit {status}"
            + (": ssh itself failed" if status == 255 else "")
            + "): the host is down or unreachable by passwordless ssh (or I_MPI_HYDRA_BOOTSTRAP), or "
            "hydra_bstrap_proxy is not on that host's PATH; no rank started there",
            facts,
            dedupe=(row.code, "bstrap", m.group("host")),
        )
    ]


def _openib_memlock(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    nxt = " ".join(ln.text.strip() for ln in (hit.line, *hit.after(3, same_rank=False)))
    if "memory" not in nxt:
        return None
    limit = re.search(r"Memlock limit:\s*(\S+)", " ".join(ln.text for ln in hit.after(16, same_rank=False)))
    facts: dict[str, Any] = {"engine": "openmpi_" + ("openib" if "openib" in m.group("btl") else "usnic")}
    facts["reason"] = "memlock_limit"
    if limit:
        facts["memlock_limit"] = limit.group(1)
    return [
        row.event(
            hit,
            f"Open MPI's {m.group('btl')} BTL could not lock memory for the NIC: the ranks' locked-memory "
            f"limit is too low{' (' + limit.group(1) + ')' if limit else ''}; set `ulimit -l unlimited` "
            "(limits.conf memlock, the container's --ulimit memlock=-1, slurmd's LimitMEMLOCK=infinity)",
            facts,
            dedupe=(row.code, "openib_memlock"),
        )
    ]


def _slurm_pmi(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    msg = (m.group("msg") or m.group("msg2") or m.group("msg1") or "").strip()
    if _PMI_NOT_OURS.search(msg):
        return None
    pmi = m.group("pmi") or m.group("pmi2") or "pmi1"
    facts: dict[str, Any] = {"launcher": "srun", "pmi": pmi, "error": clip(msg, 120)}
    if m.group("node"):
        facts["host"] = m.group("node")
    status = re.search(r"status = (-?\d+)", msg)
    if status:
        facts["status"] = int(status.group(1))
    return [
        row.event(
            hit,
            f"Slurm's {pmi} server failed the key-value exchange of MPI_Init ({clip(msg, 100)}): a rank that "
            "exited or a slurmstepd that cannot reach its peers; read the ranks' own errors first, then "
            "check `srun --mpi=list` against the MPI's build and the nodes' connectivity",
            facts,
            dedupe=(row.code, "slurm_pmi"),
        )
    ]


SIGNATURES = (
    Signature(
        "mpirun refuses to run as root",
        _ROOT,
        _root,
        C.MPIRUN_AS_ROOT.code,
        anchors=(b"has detected an attempt to run as root",),
        words=("has detected an attempt to run as root",),
    ),
    Signature(
        "slurm inherited environment conflict",
        _SLURM_ENV,
        _slurm_env,
        C.SLURM_ENV_CONFLICT.code,
        anchors=(b"are mutually exclusive", b"is mutually exclusive with"),
        worth=(
            rb"SLURM_\w+.* are mutually exclusive",
            rb"is mutually exclusive with .*SLURM_",
            rb": fatal: --",
        ),
        words=("mutually exclusive",),
    ),
    Signature(
        "srun mpi plugin missing",
        _SRUN_MPI,
        _srun_mpi,
        C.LAUNCH_FAILED.code,
        anchors=(
            b"Couldn't find the specified plugin name for mpi/",
            b"create mpi context for",
            b"MPI: Cannot create context for",
            b"--mpi=list",
            b"MPI: Unable to load any plugin",
            b"unable to resolve MPI plugin offset",
        ),
        words=(
            "specified plugin name for mpi/",
            "create mpi context for",
            "cannot create context for",
            "--mpi=list",
            "unable to load any plugin",
            "resolve mpi plugin offset",
        ),
    ),
    Signature(
        "srun cpu binding outside the step",
        _CPU_BIND,
        _cpu_bind,
        C.LAUNCH_FAILED.code,
        anchors=(b"CPU binding outside of job step allocation",),
        words=("cpu binding outside of job step allocation",),
    ),
    Signature(
        "intel mpi bootstrap proxy failed",
        _BSTRAP,
        _bstrap,
        C.REMOTE_LAUNCH_FAILED.code,
        anchors=(b"nable to run bstrap_proxy on", b"nable to run hydra_bstrap_proxy on"),
        words=("to run bstrap_proxy on", "to run hydra_bstrap_proxy on"),
    ),
    Signature(
        "open mpi verbs btl memlock",
        _OPENIB_MEMLOCK,
        _openib_memlock,
        C.RDMA_MEMORY_REGISTRATION.code,
        anchors=(b"BTL failed to initialize while trying to",),
        words=("btl failed to initialize while trying to",),
    ),
    Signature(
        "slurm pmi exchange failed",
        _SLURM_PMI,
        _slurm_pmi,
        C.LAUNCH_FAILED.code,
        tier=1,
        anchors=(b"mpi/pmix", b"mpi/pmi2: ", b"PMK_KVS_Barrier "),
        worth=(
            rb"error:\s+mpi/pmix\w*: \w+: \S+ \[\d+\]: ",
            rb"mpi/pmi2: (?:failed|invalid|unpack|unable)",
            rb"PMK_KVS_Barrier (?:duplicate|task count)",
        ),
        words=("mpi/pmix", "mpi/pmi2", "pmk_kvs_barrier"),
    ),
)
parse = gated_reader(SIGNATURES)
