"""XGBoost's own collective (src/collective, XGBoost 2.0-3.x: the socket ring that replaced rabit, under dask,
Spark, Ray and `xgboost.collective` / `RabitTracker`): a failed operation is a `Result` whose Report()
prints one "- " line per level of the chain (src/collective/result.cc), often inside
"xgboost.core.XGBoostError: [12:00:00] .../src/collective/result.cc:78:".

Formats (src/collective/comm.cc, socket.cc, loop.cc, include/xgboost/collective/poll_utils.h; 2.0's
rabit/src/allreduce_base.cc says "Failed to connect to the tracker." the same way):
- "- Failed to connect to the tracker." then "- Failed to connect to 10.0.0.1:9091" and "- connect failed.
  system error:Connection refused" (under "Failed to bootstrap the communication group." / "Bootstrap
  failed."): the worker never reached the tracker (the rendezvous): its address is one the worker cannot
  reach (localhost, a wrong interface), the tracker is not running, or a firewall (RUN222).
- "- Bootstrap failed to connect to ring next." / "- Failed to connect to other workers.": the tracker was
  reached but the workers cannot reach each other's listening ports (RUN174).
- "- Poll timeout:1800 seconds.": a socket wait ran past the communicator's timeout (`dmlc_timeout`): while
  bootstrapping with the tracker it is the rendezvous that timed out (some worker never started, RUN221);
  in an allreduce / allgather / broadcast it is a collective that a peer never joined (RUN151).
- RabitTracker::Run's own failures (tracker.cc 2.1-3.x): "- [tracker.cc:286|12:58:58]: Failed to accept
  connection.", "Failed to initialize worker proxy.", "Invalid command received.", "Failed to inform workers
  to stop.": the tracker's side of the meeting broke (RUN222, tier 2), read only inside XGBoost's Report.
- "- Encountered EOF. The other end is likely closed.": a peer closed its socket mid-operation (it died, or
  its host did): the connection between the workers broke (RUN174, tier 1: the peer's own error is the
  cause when the log shows it).
- comm.cc's error listener "Another worker is running into error." (a WARNING, then exit(-1)): this worker
  stops because another failed; the other's error is the cause (RUN133, tier 2).
- "- Failed to bootstrap the communication group." (comm.cc) over a chain none of the rows above reads, e.g.
  tracker.cc's "Failed to recv init command from tracker.", "Failed to recv rank.", "Failed to get host names
  from peers.", "Failed to get the port from peers.", socket.cc's "Failed to get address info:Name or service
  not known" (strings of libxgboost.so, 3.2.0): the workers' bootstrap with the tracker broke off (RUN222,
  tier 2: a connect / timeout / EOF row on the same chain says more).

XGBoost-Ray's and LightGBM-Ray's elastic training (xgboost_ray/elastic.py _get_actor_alive_status, 0.1-0.1.x;
lightgbm_ray's copy) logs each check of its training actors: "Actor status: 7 alive, 1 dead (8 total)",
behind Ray's "(pid=40067, ip=10.0.0.1)" prefix. A dead one is a training actor whose process died (its
node's OOM killer, a crash, a lost node): RUN133, tier 2 (Ray's own record of the death, when the paste
holds it, says more); "N alive, 0 dead" is the healthy check.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_TRACKER = lazy_re.compile(r"Failed to connect to the tracker\.")
_RING = lazy_re.compile(r"Bootstrap failed to connect to ring next\.|Failed to connect to other workers\.")
_ADDR = lazy_re.compile(r"Failed to connect to (?P<host>[^\s:]+|\[[^\]]+\]):(?P<port>\d{2,5})\b")
_SYSERR = lazy_re.compile(r"system error:\s*(?P<why>[^\n]+)")
_POLL = lazy_re.compile(r"Poll timeout:\s*(?P<secs>\d+) seconds")
_EOF = lazy_re.compile(r"Encountered EOF\. The other end is likely closed\.")
_OTHER = lazy_re.compile(r"Another worker is running into error\.")
_BOOTSTRAP = lazy_re.compile(r"Failed to bootstrap the communication group|Bootstrap failed|the tracker\b")
_CONNECT = lazy_re.compile(r"Failed to connect to|connect to ring next|connect to other workers")


def _chain(hit: Hit, n: int = 6) -> list[str]:
    """The Report's lines after the hit (its deeper causes), up to the first line outside it."""
    out: list[str] = []
    for ln in hit.after(n, same_rank=False):
        t = ln.text.strip()
        if not t.startswith("- ") and not _ADDR.search(t) and not _SYSERR.search(t):
            break
        out.append(t)
    return out


def _connect(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "xgboost"}
    for t in [hit.text, *_chain(hit)]:
        a, e = _ADDR.search(t), _SYSERR.search(t)
        if a and "host" not in facts:
            facts |= {"host": a.group("host"), "port": int(a.group("port"))}
        if e and "error" not in facts:
            facts["error"] = clip(e.group("why").strip(), 60)
    where = f" at {facts['host']}:{facts['port']}" if "host" in facts else ""
    why = f" ({facts['error']})" if "error" in facts else ""
    if row.name.endswith("tracker"):
        facts["problem"] = "tracker_unreachable"
        what = (
            f"an XGBoost worker could not connect to the tracker{where}{why}: the tracker address must be "
            "one every worker reaches (not localhost), the tracker must be running, and its port open"
        )
    else:
        facts["problem"] = "workers_unreachable"
        what = (
            f"XGBoost workers reached the tracker but not each other{where}{why}: a firewall or the "
            "interface the workers advertise (the tracker's host_ip / the worker's hostname resolution)"
        )
    return [row.event(hit, what, facts, dedupe=(row.code, "xgboost", facts["problem"]))]


def _poll(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    before = [ln.text for ln in hit.before(8, same_rank=False)]
    near = [hit.text, *before]
    if any(_CONNECT.search(t) for t in [hit.text, *before[:3]]) and not any(
        _BOOTSTRAP.search(t) for t in near
    ):
        return []  # a connect attempt's own timeout: the connect rows read the chain
    secs = int(m.group("secs"))
    facts: dict[str, Any] = {"framework": "xgboost", "timeout_s": secs}
    if any(_BOOTSTRAP.search(t) for t in near):
        facts["problem"] = "bootstrap_timeout"
        return [
            row.event(
                hit,
                f"XGBoost's bootstrap with its tracker timed out after {secs} s: not every worker started or "
                "reached the tracker",
                facts,
                code=C.RENDEZVOUS_TIMEOUT.code,
                dedupe=(C.RENDEZVOUS_TIMEOUT.code, "xgboost"),
            )
        ]
    facts["problem"] = "collective_timeout"
    return [
        row.event(
            hit,
            f"an XGBoost collective waited {secs} s for a peer and timed out: a worker stopped or fell "
            "behind (its own log holds why)",
            facts,
            dedupe=(row.code, "xgboost"),
        )
    ]


def _eof(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "an XGBoost worker's peer closed its socket mid-operation: the peer died (its own error is the "
            "cause) or the network between them broke",
            {"framework": "xgboost", "problem": "peer_closed"},
            dedupe=(row.code, "xgboost_eof"),
        )
    ]


def _other(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "XGBoost stopped this worker because another worker failed: that worker's error is the cause",
            {"framework": "xgboost", "problem": "peer_worker_failed"},
            dedupe=(row.code, "xgboost_other"),
        )
    ]


_BOOT_FAILED = lazy_re.compile(r"Failed to bootstrap the communication group")


def _boot_failed(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    deeper = [t[2:].split("]: ", 1)[-1].strip() for t in _chain(hit) if t.startswith("- ")]
    facts: dict[str, Any] = {"framework": "xgboost", "problem": "bootstrap_failed"}
    if deeper:
        facts["error"] = clip(deeper[-1], 80)
    why = f" ({facts['error']})" if "error" in facts else ""
    return [
        row.event(
            hit,
            f"XGBoost's workers could not bootstrap their communication group with the tracker{why}: a "
            "worker lost the tracker or its peers while exchanging ranks and addresses (the "
            "tracker's host_ip must resolve and be reachable from every worker; a worker that died first "
            "is the cause)",
            facts,
            dedupe=(row.code, "xgboost_boot"),
        )
    ]


# RabitTracker::Run's own failures (src/collective/tracker.cc 2.1-3.x): the tracker's accept() on its
# listening socket failed, a worker's handshake with it failed (magic number, rank, world), or a worker sent
# a command it does not know. Generic words ("Failed to accept connection." is many servers' line), so read
# only inside XGBoost's Report: its "[tracker.cc:286|12:58:58]: " location, or a "- " line under an
# XGBoostError / result.cc.
_TRACKER_RUN = lazy_re.compile(
    r"(?P<what>Failed to accept connection|Failed to initialize worker proxy|Invalid command received|"
    r"Failed to inform workers to stop)\."
)
_REPORT_HEAD = lazy_re.compile(r"XGBoostError|result\.cc:\d+|tracker\.cc:\d+")


def _tracker_run(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    text = hit.text
    if "tracker.cc:" not in text and not (
        text.lstrip(" >").startswith("- ")
        and any(_REPORT_HEAD.search(ln.text) for ln in hit.before(4, same_rank=False))
    ):
        return None
    deeper = [t[2:].split("]: ", 1)[-1].strip() for t in _chain(hit) if t.startswith("- ")]
    facts: dict[str, Any] = {
        "framework": "xgboost",
        "problem": "tracker_failed",
        "tracker_error": m.group("what"),
    }
    if deeper:
        facts["error"] = clip(deeper[-1], 80)
    why = f" ({facts['error']})" if "error" in facts else ""
    return [
        row.event(
            hit,
            f"XGBoost's tracker failed while the workers met ({m.group('what')}{why}): a worker could not "
            "complete its handshake with the tracker, or the tracker's socket broke (the tracker's host_ip "
            "and port must be reachable from every worker; a worker that died first is the cause)",
            facts,
            dedupe=(row.code, "xgboost_tracker_run"),
        )
    ]


_RAY_ACTORS = lazy_re.compile(
    r"\bActor status: (?P<alive>\d+) alive, (?P<dead>\d+) dead \((?P<total>\d+) total\)"
)


def _ray_actors(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    dead, total = int(m.group("dead")), int(m.group("total"))
    if dead == 0:
        return []
    facts: dict[str, Any] = {"reporter": "xgboost_ray elastic", "dead_actors": dead, "actors": total}
    msg = (
        f"{dead} of {total} XGBoost-Ray training actors died (their processes ended: the node's OOM killer, "
        "a crash or a lost node; the raylet's and the dead actor's logs say which)"
    )
    return [row.event(hit, msg, facts, tier=2, dedupe=(row.code, "ray_actors"))]


SIGNATURES = (
    Signature(
        "xgboost-ray elastic actor died",
        _RAY_ACTORS,
        _ray_actors,
        C.RANK_EXITED.code,
        anchors=(b"Actor status: ",),
        worth=(rb"Actor status: \d+ alive, \d+ dead",),
        words=("actor status: ",),
    ),
    Signature(
        "xgboost bootstrap failed",
        _BOOT_FAILED,
        _boot_failed,
        C.STORE_UNREACHABLE.code,
        tier=2,
        anchors=(b"Failed to bootstrap the communication group",),
        worth=(rb"Failed to bootstrap the communication group",),
        words=("failed to bootstrap the communication group",),
    ),
    Signature(
        "xgboost tracker run failed",
        _TRACKER_RUN,
        _tracker_run,
        C.STORE_UNREACHABLE.code,
        tier=2,
        anchors=(
            b"Failed to accept connection.",
            b"Failed to initialize worker proxy.",
            b"Invalid command received.",
            b"Failed to inform workers to stop.",
        ),
        words=("failed to accept connection", "worker proxy", "invalid command received", "inform workers"),
    ),
    Signature(
        "xgboost tracker",
        _TRACKER,
        _connect,
        C.STORE_UNREACHABLE.code,
        anchors=(b"Failed to connect to the tracker",),
        worth=(rb"Failed to connect to the tracker",),
        words=("connect to the tracker",),
    ),
    Signature(
        "xgboost ring",
        _RING,
        _connect,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"connect to ring next", b"Failed to connect to other workers"),
        worth=(rb"connect to ring next", rb"Failed to connect to other workers"),
        words=("connect to ring next", "connect to other workers"),
    ),
    Signature(
        "xgboost poll timeout",
        _POLL,
        _poll,
        C.WATCHDOG_TIMEOUT.code,
        anchors=(b"Poll timeout:",),
        worth=(rb"Poll timeout:\s*\d+ seconds",),
        words=("poll timeout:",),
    ),
    Signature(
        "xgboost peer eof",
        _EOF,
        _eof,
        C.NCCL_SOCKET_ERROR.code,
        tier=1,
        anchors=(b"The other end is likely closed",),
        worth=(rb"The other end is likely closed",),
        words=("other end is likely closed",),
    ),
    Signature(
        "xgboost other worker failed",
        _OTHER,
        _other,
        C.RANK_EXITED.code,
        tier=2,
        anchors=(b"Another worker is running into error",),
        worth=(rb"Another worker is running into error",),
        words=("another worker is running into error",),
    ),
)
parse = gated_reader(SIGNATURES)
