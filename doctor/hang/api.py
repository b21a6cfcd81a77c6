"""One `hang` examination: find the ranks, collect their evidence within the deadline, judge,
report, and save the evidence where asked.

    examine(pids=(), samples=3, interval_s=0.5, timeout_s=30, save_dir=None) -> Report
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import time
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Optional

from pgdoctor.diagnose.flight import collectives, dump
from pgdoctor.diagnose.stacks.api import without_unread_recorders
from pgdoctor.diagnose.stacks.evidence import RankEvidence
from pgdoctor.diagnose.stacks.report import hang_json
from pgdoctor.diagnose.stacks.verdict import analyze, findings_of
from pgdoctor.hang.collect import TIERS, Collector
from pgdoctor.model import Finding, Report
from pgdoctor.probes.gpu.nvml import LiveBackend, NvmlBackend
from pgdoctor.probes.ranks import ProcFs, Rank, Table


class NotARank(ValueError):
    """A PID given on the command line is neither a rank nor a launcher of ranks (a usage error)."""


def find_ranks(pids: Sequence[int] = (), fs: Optional[ProcFs] = None) -> list[Rank]:
    fs = fs or ProcFs()
    table = Table.read(fs, skip=[os.getpid()])
    if not pids:
        return table.ranks()
    found: dict[int, Rank] = {}
    for pid in pids:
        if pid not in table.procs:
            raise NotARank(f"no process {pid} on this node")
        got = table.resolve(pid)
        if not got:
            raise NotARank(
                f"PID {pid} ({table.procs[pid].comm}) is neither a rank of a torch.distributed job "
                "nor a launcher whose descendants are ranks"
            )
        for r in got:
            found[r.proc.pid] = r
    return sorted(found.values(), key=lambda r: (r.job, r.rank))


def evidence_name(ev: RankEvidence, ranks_per_job: Mapping[int, int]) -> str:
    """hang-rank<R>.json; with two jobs on the node holding the same rank, the pid disambiguates."""
    return (
        f"hang-rank{ev.rank}.json"
        if ranks_per_job.get(ev.rank, 0) <= 1
        else f"hang-rank{ev.rank}-pid{ev.pid}.json"
    )


def save(directory: str, evidence: Sequence[RankEvidence], flight: Mapping[int, Any]) -> list[str]:
    """The evidence as files `pgdoctor diagnose DIR` reads: one per rank, and each rank's flight
    recorder (fr-rank<R>.json, named as torch names its dumps: the rank is the trailing number)."""
    os.makedirs(directory, exist_ok=True)
    count: dict[int, int] = {}
    for ev in evidence:
        count[ev.rank] = count.get(ev.rank, 0) + 1
    written = []
    for ev in evidence:
        path = os.path.join(directory, evidence_name(ev, count))
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(ev.dumps())
        written.append(path)
    for rank, data in flight.items():
        path = os.path.join(directory, f"fr-rank{rank}.json")
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        written.append(path)
    return written


def _flight_findings(flight: Mapping[int, Any], save_dir: Optional[str]) -> list[Finding]:
    """The ranks' flight recorders through diagnose's analysis (read from files, as it reads dumps)."""
    if not flight:
        return []
    where = save_dir or tempfile.mkdtemp(prefix="pgdoctor-hang-fr-")
    try:
        paths = [os.path.join(where, f"fr-rank{r}.json") for r in flight]
        if save_dir is None:
            for r, data in flight.items():
                with open(os.path.join(where, f"fr-rank{r}.json"), "w", encoding="utf-8") as fh:
                    json.dump(data, fh)
        rep = dump.read_dumps(paths)
        return collectives.analyze(rep, "live flight recorder")
    except (dump.DumpError, OSError):
        return []
    finally:
        if save_dir is None:
            shutil.rmtree(where, ignore_errors=True)


def examine(
    pids: Sequence[int] = (),
    samples: int = 3,
    interval_s: float = 0.5,
    timeout_s: float = 30.0,
    save_dir: Optional[str] = None,
    fs: Optional[ProcFs] = None,
    ranks: Optional[Sequence[Rank]] = None,
    tiers: Sequence[str] = TIERS,
    quiet_s: Optional[float] = None,
    nvml: Callable[[], NvmlBackend] = LiveBackend,
) -> Report:
    """`quiet_s`: seconds the caller (`pgdoctor run`) saw no step evidence; recorded with each
    rank's evidence, it makes the verdict count only a moving frame as progress. `nvml`: the
    NVML backend of the GPU tier (a replay of a recording in tests)."""
    t0 = time.monotonic()
    deadline = t0 + timeout_s
    ranks = list(ranks) if ranks is not None else find_ranks(pids, fs)
    host = socket.gethostname()
    collector = Collector(ranks, host, fs, tiers=tiers, nvml=nvml)
    # The last 10% of the budget (at most 2 s) is kept for judging and writing.
    evidence = collector.run(samples, interval_s, deadline - min(2.0, timeout_s * 0.1))
    for ev in evidence:
        ev.quiet_s = quiet_s
    if save_dir is not None:
        save(save_dir, evidence, collector.flight)
    return judge(evidence, collector.flight, save_dir, host, time.monotonic() - t0, samples)


def judge(
    evidence: Sequence[RankEvidence],
    flight: Mapping[int, Any],
    save_dir: Optional[str],
    host: str,
    duration_s: float,
    samples: int,
) -> Report:
    verdicts = analyze(evidence)
    section = hang_json(verdicts, evidence)
    findings = findings_of(verdicts) + without_unread_recorders(_flight_findings(flight, save_dir), section)
    incomplete = []
    if not evidence:
        incomplete.append("no rank process of a torch.distributed job found on this node")
    for v in verdicts:
        if v.unknown and not v.culprits:
            incomplete.append(f"job {v.job}: stacks unavailable for ranks {v.unknown} and no culprit named")
    meta = {
        "host": host,
        "duration_s": round(duration_s, 3),
        "samples": samples,
        "ranks": len(evidence),
        "saved_to": save_dir,
    }
    return Report(
        command="hang",
        snapshot=None,
        findings=tuple(findings),
        incomplete_reasons=tuple(incomplete),
        meta=meta,
        extra={"hang": section},
    )
