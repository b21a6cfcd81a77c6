"""Ray Train's own controller (ray/train/v2, Ray 2.43+): its report barrier that not every rank reached.

Formats (python/ray/train/v2/_internal/exceptions.py, raised by worker_group.py and printed behind the
controller actor's "(TrainController pid=5760)" prefix, often inside "ray.train.ControllerError: Training
failed due to controller error:" or the FailurePolicy's "Decision: FailureDecision.RETRY ... Error: ..."):
- WorkerGroupStartupTimeoutError ("The worker group startup timed out after 30.0 seconds waiting for 2
  workers. ...") is read by launch_start.py (RUN221).
- BroadcastCollectiveTimeoutError: "The broadcast operation timed out after 1800.00 seconds. Please make sure
  all worker ranks call `ray.train.report`." then "The following ranks have not called it: [1, 3]": the ranks
  run different code paths (report called on rank 0 only, or inside a branch), a desync (RUN201); the ranks
  it names are the ones that never called it.
Read at source in Ray 2.60 (the wheel's python/ray/train/):
- _internal/backend_executor.py (Train v1, 2.x): "Placement group creation timed out. Make sure your cluster
  either has enough resources ..." - the workers' bundles never fit the cluster: the workers never started
  (RUN221, as the v2 startup timeout); "Some workers returned results while others didn't. Make sure that
  `session.report()` are called the same number of times on all workers." - a desync (RUN201).
- v2/api/exceptions.py NCCLHangError, raised by v2/_internal/callbacks/nccl_ras.py: "N of M communicators
  have a collective mismatch and made no progress for S seconds (P polls)." - NCCL RAS saw the ranks' op
  counts diverge: a desync (RUN201), not the hardware the sentence also lists.
- v2/api/exceptions.py PreemptionError: "Training was interrupted by node preemption (preempted_ranks=[2, 3],
  drain_timed_out=False)." - the cloud reclaimed nodes: ranks lost from outside (RUN133, as external_kills'
  cloud preemption).
Ray's collective library (ray/util/collective/collective_group/nccl_collective_group.py Rendezvous, 1.2-2.x):
meet() polls for the group's named store actor, created by rank 0 ("Unable to meet other processes at the
rendezvous store." and, from 1.3, "... If you are using P2P communication, please check if tensors are put in
the correct GPU."), then get_nccl_id() polls it for the NCCL unique ID that rank 0 puts there, logging "The
NCCL ID has not been set yet for store <name>." at each poll (a healthy start prints a few), until its
timeout: "Unable to get the NCCLUniqueID from the store." (2.4x+: "... with timeout N seconds"). Rank 0 never
reached the group's creation (it failed, or the ranks, group names or world size given to
create_collective_group / init_collective_group disagree): the group never met (RUN221).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_REPORT = lazy_re.compile(
    r"The broadcast operation timed out after (?P<secs>\d+(?:\.\d+)?) seconds\. Please make sure all "
    r"worker ranks call `?ray\.train\.report"
)
_MISSING = lazy_re.compile(r"The following ranks have not called it:\s*\[(?P<ranks>[\d,\s]*)\]")


def _report(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {
        "framework": "ray train",
        "problem": "report_barrier_timeout",
        "op": "ray.train.report",
        "timeout_s": float(m.group("secs")),
    }
    for ln in [hit.line, *hit.after(3, same_rank=False)]:
        r = _MISSING.search(ln.text)
        if r:
            facts["ranks"] = [int(x) for x in re.findall(r"\d+", r.group("ranks"))]
            break
    who = f" (ranks {', '.join(map(str, facts['ranks']))} never called it)" if facts.get("ranks") else ""
    return [
        row.event(
            hit,
            f"not every Ray Train worker called ray.train.report{who}: the ranks run different code paths "
            "(report called on rank 0 only, or inside a branch); every rank must call it, with or without a "
            "checkpoint",
            facts,
            dedupe=(row.code, "ray_train_report"),
        )
    ]


_PG_TIMEOUT = lazy_re.compile(
    r"Placement group creation timed out\. Make sure your cluster either has enough resources"
    r"(?:.*?resources requested by the placement group: (?P<req>\[.*\]))?"
)


def _pg_timeout(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "ray train", "problem": "placement_group_timeout"}
    if m.group("req"):
        facts["requested"] = m.group("req")[:200]
    return [
        row.event(
            hit,
            "Ray Train's placement group for the workers was never placed: the cluster has fewer free "
            "resources (GPU / CPU per worker x num_workers) than ScalingConfig asks, or ray.init joined no "
            "cluster; the workers never started",
            facts,
            dedupe=(row.code, "ray_train_pg"),
        )
    ]


_UNEVEN = lazy_re.compile(
    r"Some workers returned results while others didn't\. Make sure that `?session\.report\(\)`? are called"
)


def _uneven(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts = {"framework": "ray train", "problem": "uneven_reports", "op": "session.report"}
    return [
        row.event(
            hit,
            "Ray Train's workers called session.report a different number of times (some ranks reported, "
            "others did not): the ranks run different code paths; every rank must report as often",
            facts,
            dedupe=(row.code, "ray_train_report"),
        )
    ]


_RAS_HANG = lazy_re.compile(
    r"(?P<n>\d+) of (?P<m>\d+) communicators have a collective mismatch and made no progress for "
    r"(?P<secs>\d+) seconds"
)


def _ras_hang(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts = {
        "framework": "ray train",
        "problem": "nccl_ras_hang",
        "communicators": int(m.group("n")),
        "timeout_s": int(m.group("secs")),
    }
    return [
        row.event(
            hit,
            f"NCCL RAS (Ray Train's NCCLHangError) found {m.group('n')} of {m.group('m')} "
            f"communicators whose ranks' collective counts disagree, with no progress for "
            f"{m.group('secs')} s: a rank took another code path, exited early or called a collective with "
            f"another shape; read the RAS report and the "
            "per-rank stacks it saved",
            facts,
            dedupe=(row.code, "ray_train_ras"),
        )
    ]


_PREEMPTED = lazy_re.compile(
    r"Training was interrupted by node preemption \(preempted_ranks=\[(?P<ranks>[\d,\s]*)\]"
)


def _preempted(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    ranks = [int(x) for x in re.findall(r"\d+", m.group("ranks"))]
    facts: dict[str, Any] = {"framework": "ray train", "reason": "preemption", "preempted": True}
    if ranks:
        facts["ranks"] = ranks
    return [
        row.event(
            hit,
            "the cloud preempted the nodes of Ray Train's workers"
            + (f" (ranks {', '.join(map(str, ranks))})" if ranks else "")
            + ": the ranks were lost from outside; spot / preemptible capacity, not the program",
            facts,
            dedupe=(row.code, "ray_train_preempt"),
        )
    ]


_RAY_COLLECTIVE = lazy_re.compile(
    r"Unable to (?P<id>get the NCCLUniqueID from the store)|"
    r"Unable to meet other processes at the rendezvous store"
)


def _ray_collective(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    stage = "nccl_unique_id" if m.group("id") else "store_actor"
    what = (
        "rank 0 never put the NCCL unique ID in the group's store"
        if m.group("id")
        else "the group's store actor, which rank 0 creates, never appeared"
    )
    return [
        row.event(
            hit,
            f"Ray's collective group (ray.util.collective, NCCL) never met: {what} - rank 0 failed before "
            "the group's creation, or the ranks, group name or world size given to create_collective_group / "
            "init_collective_group disagree",
            {"framework": "ray.util.collective", "stage": stage},
            dedupe=(row.code, "ray_collective"),
        )
    ]


SIGNATURES = (
    Signature(
        "ray collective group rendezvous",
        _RAY_COLLECTIVE,
        _ray_collective,
        C.RENDEZVOUS_TIMEOUT.code,
        anchors=(b"NCCLUniqueID from the store", b"meet other processes at the rendezvous store"),
        words=("nccluniqueid from the store", "meet other processes at the rendezvous store"),
    ),
    Signature(
        "ray train placement group timeout",
        _PG_TIMEOUT,
        _pg_timeout,
        C.RENDEZVOUS_TIMEOUT.code,
        anchors=(b"Placement group creation timed out",),
        worth=(rb"Placement group creation timed out",),
        words=("placement group creation timed out",),
    ),
    Signature(
        "ray train uneven reports",
        _UNEVEN,
        _uneven,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"Some workers returned results while others",),
        worth=(rb"Some workers returned results while others",),
        words=("some workers returned results while others",),
    ),
    Signature(
        "ray train nccl ras hang",
        _RAS_HANG,
        _ras_hang,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"have a collective mismatch and made no progress",),
        worth=(rb"have a collective mismatch and made no progress",),
        words=("have a collective mismatch and made no progress",),
    ),
    Signature(
        "ray train node preemption",
        _PREEMPTED,
        _preempted,
        C.RANK_EXITED.code,
        anchors=(b"interrupted by node preemption",),
        worth=(rb"interrupted by node preemption",),
        words=("interrupted by node preemption",),
    ),
    Signature(
        "ray train report barrier timeout",
        _REPORT,
        _report,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"Please make sure all worker ranks call",),
        worth=(rb"make sure all worker ranks call",),
        words=("make sure all worker ranks call",),
    ),
)
parse = gated_reader(SIGNATURES)
