"""The rank processes of the torch.distributed jobs on this node, found through /proc.

A rank carries RANK / LOCAL_RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT / TORCHELASTIC_RUN_ID
in /proc/PID/environ (torchrun, or a script that exports them); a Python task that srun or mpirun
started directly is a rank by SLURM_PROCID / OMPI_COMM_WORLD_RANK (its job: the Slurm step). The
environ of another uid's process is unreadable: then the command line decides (`--local-rank N`
of the old launcher, or a Python child of a torchrun launcher, numbered by start order). A
process whose parent (or an ancestor) is a rank of the same job with the same RANK is that
rank's child, a DataLoader worker: attributed to the rank, never counted as one. Jobs are keyed
by TORCHELASTIC_RUN_ID (else MASTER_ADDR:MASTER_PORT), so two jobs on one node never mix.
Every read goes through a /proc root given by the caller (tests pass fixture trees).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Optional

RANK_VARS = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID")
_LAUNCHER = re.compile(r"(?:^|[/\s])(?:torchrun|torch\.distributed\.(?:run|launch))(?:\s|$)")
_LOCAL_RANK_ARG = re.compile(r"--local[-_]rank[= ](\d+)")
# The argument multiprocessing's spawn start method gives each child it starts (not its resource tracker).
_MP_CHILD = "--multiprocessing-fork"


@dataclass
class Proc:
    pid: int
    ppid: int
    uid: int
    comm: str
    state: str
    cpu_ticks: int
    start_ticks: int
    threads: int
    cmdline: tuple[str, ...]
    environ: Optional[dict[str, str]]  # None: unreadable (another uid, hidepid)
    wchan: str = ""

    @property
    def command(self) -> str:
        return " ".join(self.cmdline)


@dataclass
class Rank:
    rank: int
    proc: Proc
    job: str
    world_size: Optional[int]
    local_rank: Optional[int]
    source: str  # environ | cmdline | spawn order (a named launcher's multiprocessing children)
    workers: list[Proc] = field(default_factory=list)


class ProcFs:
    """/proc (or a fixture tree laid out like it)."""

    def __init__(self, root: str = "/proc"):
        self.root = root

    def _read(self, pid: int, name: str, limit: int = 1 << 20) -> bytes:
        with open(f"{self.root}/{pid}/{name}", "rb") as fh:
            return fh.read(limit)

    def pids(self) -> list[int]:
        try:
            return sorted(int(e) for e in os.listdir(self.root) if e.isdigit())
        except OSError:
            return []

    def read(self, pid: int) -> Optional[Proc]:
        """The process, or None when it is gone (or a zombie)."""
        try:
            stat = self._read(pid, "stat").decode("ascii", "replace")
            status = self._read(pid, "status").decode("ascii", "replace")
            cmd = self._read(pid, "cmdline")
        except OSError:
            return None
        comm = stat[stat.find("(") + 1 : stat.rfind(")")]
        rest = stat[stat.rfind(")") + 1 :].split()
        if len(rest) < 20 or rest[0] in ("Z", "X"):
            return None
        uid = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("Uid:")), -1)
        environ: Optional[dict[str, str]]
        try:
            raw = self._read(pid, "environ", 1 << 22)
            environ = dict(kv.split("=", 1) for kv in raw.decode("utf-8", "replace").split("\0") if "=" in kv)
        except OSError:
            environ = None
        try:
            wchan = self._read(pid, "wchan").decode("ascii", "replace").strip()
        except OSError:
            wchan = ""
        return Proc(
            pid=pid,
            ppid=int(rest[1]),
            uid=uid,
            comm=comm,
            state=rest[0],
            cpu_ticks=int(rest[11]) + int(rest[12]),
            start_ticks=int(rest[19]),
            threads=int(rest[17]),
            cmdline=tuple(a for a in cmd.decode("utf-8", "replace").split("\0") if a),
            environ=environ,
            wchan="" if wchan == "0" else wchan,
        )

    def read_stat(self, pid: int) -> Optional[tuple[float, str, str]]:
        """(CPU time in seconds, state letter, wchan) now; None when the process is gone."""
        try:
            stat = self._read(pid, "stat").decode("ascii", "replace")
        except OSError:
            return None
        rest = stat[stat.rfind(")") + 1 :].split()
        if len(rest) < 13 or rest[0] in ("Z", "X"):
            return None
        try:
            wchan = self._read(pid, "wchan").decode("ascii", "replace").strip()
        except OSError:
            wchan = ""
        return (int(rest[11]) + int(rest[12])) / CLOCK_TICKS, rest[0], "" if wchan == "0" else wchan


CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _int(v: Optional[str]) -> Optional[int]:
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None


def job_key(env: Mapping[str, str]) -> str:
    run_id = env.get("TORCHELASTIC_RUN_ID", "")
    if run_id and run_id != "none":
        return run_id
    return f"{env.get('MASTER_ADDR', '')}:{env.get('MASTER_PORT', '')}"


# (rank, world size, local rank, the job's key) of a task started by a scheduler, not torchrun.
SCHEDULER_RANKS = (
    (
        "SLURM_PROCID",
        "SLURM_NTASKS",
        "SLURM_LOCALID",
        lambda env: f"slurm-{env.get('SLURM_JOB_ID', '?')}.{env.get('SLURM_STEP_ID', '?')}",
    ),
    (
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE",
        "OMPI_COMM_WORLD_LOCAL_RANK",
        lambda env: (
            f"mpi-{env.get('OMPI_MCA_ess_base_jobid') or env.get('OMPI_MCA_orte_hnp_uri', '?').split(';')[0]}"
        ),
    ),
)


def is_launcher(p: Proc) -> bool:
    return bool(_LAUNCHER.search(p.command))


def _is_python(p: Proc) -> bool:
    return "python" in p.comm or (bool(p.cmdline) and "python" in os.path.basename(p.cmdline[0]))


class Table:
    """All processes of the node, read once; the rank questions asked of it."""

    def __init__(self, fs: ProcFs, procs: Iterable[Proc]):
        self.fs = fs
        self.procs = {p.pid: p for p in procs}
        self.children: dict[int, list[int]] = {}
        for p in self.procs.values():
            self.children.setdefault(p.ppid, []).append(p.pid)

    @classmethod
    def read(cls, fs: Optional[ProcFs] = None, skip: Sequence[int] = ()) -> Table:
        fs = fs or ProcFs()
        own = set(skip)
        return cls(fs, [p for pid in fs.pids() if pid not in own and (p := fs.read(pid)) is not None])

    def descendants(self, pid: int) -> list[int]:
        out, frontier = [], [pid]
        while frontier:
            nxt = [c for f in frontier for c in self.children.get(f, ())]
            out.extend(nxt)
            frontier = nxt
        return sorted(out)

    def _env_rank(self, p: Proc) -> Optional[tuple[int, str, Optional[int], Optional[int]]]:
        env = p.environ
        if env is None:
            return None
        if _int(env.get("RANK")) is not None and any(
            k in env for k in ("WORLD_SIZE", "MASTER_ADDR", "TORCHELASTIC_RUN_ID", "LOCAL_RANK")
        ):
            return int(env["RANK"]), job_key(env), _int(env.get("WORLD_SIZE")), _int(env.get("LOCAL_RANK"))
        # srun or mpirun starting Python directly: the task's Python process is the rank (the job
        # maps SLURM_PROCID / OMPI_COMM_WORLD_RANK itself). A shell or a launcher of the task
        # carries the same variables and is not a rank.
        if not _is_python(p) or is_launcher(p):
            return None
        for rank_var, size_var, local_var, key in SCHEDULER_RANKS:
            rank = _int(env.get(rank_var))
            if rank is not None:
                return rank, key(env), _int(env.get(size_var)), _int(env.get(local_var))
        return None

    def _cmdline_rank(self, p: Proc) -> Optional[tuple[int, str, Optional[int], Optional[int]]]:
        """The environment is unreadable: the command line and the launcher say what they can."""
        if p.environ is not None or not _is_python(p) or is_launcher(p):
            return None
        m = _LOCAL_RANK_ARG.search(p.command)
        parent = self.procs.get(p.ppid)
        if parent is None or not is_launcher(parent):
            return None
        if m:
            local = int(m.group(1))
        else:  # torchrun starts its local ranks in order: their start times say which is which
            siblings = sorted(
                (
                    q
                    for q in (self.procs.get(c) for c in self.children.get(parent.pid, ()))
                    if q and _is_python(q)
                ),
                key=lambda q: (q.start_ticks, q.pid),
            )
            local = [q.pid for q in siblings].index(p.pid)
        return local, f"launcher-{parent.pid}", None, local

    def ranks(self, within: Optional[Sequence[int]] = None) -> list[Rank]:
        """The ranks among `within` (default: every process), their workers attached."""
        pids = sorted(self.procs) if within is None else sorted(set(within) & set(self.procs))
        found: dict[int, Rank] = {}
        for pid in pids:
            p = self.procs[pid]
            got, source = self._env_rank(p), "environ"
            if got is None:
                got, source = self._cmdline_rank(p), "cmdline"
            if got is None:
                continue
            rank, job, ws, local = got
            found[pid] = Rank(rank, p, job, ws, local, source)
        ranks: list[Rank] = []
        for pid, r in sorted(found.items()):
            owner = self._owning_rank(pid, r, found)
            if owner is not None:
                owner.workers.append(r.proc)
            else:
                ranks.append(r)
        return ranks

    def _owning_rank(self, pid: int, r: Rank, found: Mapping[int, Rank]) -> Optional[Rank]:
        """The rank this process is a child of (a DataLoader worker inherits its RANK)."""
        ppid = self.procs[pid].ppid
        seen = set()
        while ppid in self.procs and ppid not in seen:
            seen.add(ppid)
            up = found.get(ppid)
            if up is not None and up.job == r.job and up.rank == r.rank:
                top = self._owning_rank(ppid, up, found)
                return top or up
            ppid = self.procs[ppid].ppid
        return None

    def resolve(self, pid: int) -> list[Rank]:
        """The ranks a PID names: itself when it is a rank (or a rank's worker: its rank), its
        descendant ranks when it is a launcher (torchrun, srun, mpirun, a shell). [] otherwise."""
        if pid not in self.procs:
            return []
        every = self.ranks()
        for r in every:
            if r.proc.pid == pid or any(w.pid == pid for w in r.workers):
                return [r]
        below = set(self.descendants(pid))
        found = [r for r in every if r.proc.pid in below]
        spawned = self._spawned(pid)
        # Spawned processes below a rank are its workers (a DataLoader of the spawn start method),
        # never ranks. Spawned ranks that set RANK in os.environ pass it on to what they spawn in
        # turn: those carry RANK in /proc but are the spawned ranks' workers.
        held = {r.proc.pid for r in found}
        if spawned and not any(self._ancestors(r.proc.pid) & held for r in spawned):
            return spawned
        return found

    def _ancestors(self, pid: int) -> set[int]:
        """The process and every ancestor of it in the table."""
        out: set[int] = set()
        while pid in self.procs and pid not in out:
            out.add(pid)
            pid = self.procs[pid].ppid
        return out

    def _spawned(self, pid: int) -> list[Rank]:
        """The ranks of a launcher named by PID that started them with multiprocessing's spawn
        (`torch.multiprocessing.spawn`, `mp.start_processes`): such a rank is usually given its
        rank as an argument (`init_process_group(rank=i, ...)`) or sets RANK in os.environ after
        it started, which /proc/PID/environ never shows. Only when named: a spawned child is any
        Python worker otherwise. The launcher starts process i as the i-th, so start order numbers
        them; each one's Python descendants are its own workers (its DataLoader's)."""
        spawned: list[Proc] = []
        # The named PID or the first process below it that spawned them (a job script's shell,
        # `pgdoctor run`'s guard above the Python that called mp.spawn).
        for parent in [pid, *self.descendants(pid)]:
            children = [q for q in (self.procs.get(c) for c in self.children.get(parent, ())) if q]
            spawned = sorted(
                (q for q in children if _is_python(q) and _MP_CHILD in q.cmdline),
                key=lambda q: (q.start_ticks, q.pid),
            )
            if spawned:
                pid = parent
                break
        ranks = []
        for i, q in enumerate(spawned):
            r = Rank(i, q, f"spawn-{pid}", len(spawned), i, "spawn order")
            r.workers = [self.procs[d] for d in self.descendants(q.pid) if _is_python(self.procs[d])]
            ranks.append(r)
        return ranks


def by_job(ranks: Sequence[Rank]) -> dict[str, list[Rank]]:
    out: dict[str, list[Rank]] = {}
    for r in sorted(ranks, key=lambda r: (r.job, r.rank)):
        out.setdefault(r.job, []).append(r)
    return out
