"""Point-to-point operations in NCCL flight-recorder dumps: a send or recv that its peer never
posted, which is how pipeline-parallel jobs hang.

NCCL's recorder names p2p entries "nccl:send 1->0" / "nccl:recv 0<-1" (group ranks: this rank,
then the peer), keeps collective_seq_id at 0 and counts p2p_seq_id instead, and tracks
"scheduled" / "started" / "completed" (torch/csrc/distributed/c10d/FlightRecorder*.cpp,
test/distributed/test_c10d_nccl.py). Ring buffers drop old entries, so counts cannot be compared
across ranks; only the operations still pending are: a pending send from a to b with no pending
recv on b from a means b never posted it, and the other way round. gloo records no p2p entries.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pgdoctor.checks.codes import flight as F
from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.flight.dump import (
    FlightReport,
    aliases,
    describe,
    dump_path,
    frames_of,
    int_of,
    pg_key,
    pg_name,
)
from pgdoctor.diagnose.flight.groups import Groups
from pgdoctor.diagnose.flight.order import Fault, ranks_text
from pgdoctor.model import Evidence, lazy_re

_P2P = lazy_re.compile(r":(send|recv) (\d+)(->|<-)(\d+)")
Held = list[tuple[int, Mapping[str, Any]]]


def _pending(rep: FlightReport, g: Groups) -> dict[str, dict[tuple[str, int, int], Held]]:
    """pg -> (kind, from global rank, to global rank) -> [(rank holding it, entry)] of p2p ops not
    completed."""
    out: dict[str, dict[tuple[str, int, int], Held]] = {}
    alias = aliases(rep)
    for d in rep.dumps:
        for e in d.data["entries"]:
            if (
                not isinstance(e, Mapping)
                or not e.get("is_p2p")
                or e.get("state") not in ("scheduled", "started")
            ):
                continue
            m = _P2P.search(str(e.get("profiling_name", "")))
            if not m:
                continue
            key = alias.get((d.rank, pg_key(e)), pg_key(e))
            members = sorted(g.of(key))
            me, peer = int(m.group(2)), int(m.group(4))
            if members and key != g.world_pg:
                if peer >= len(members) or me >= len(members):
                    continue
                me, peer = members[me], members[peer]
            src, dst = (me, peer) if m.group(1) == "send" else (peer, me)
            out.setdefault(key, {}).setdefault((m.group(1), src, dst), []).append((d.rank, e))
    return out


def _ns(e: Mapping[str, Any]) -> int:
    return max(int_of(e.get("time_created_ns"), 0), 0)


def p2p_faults(rep: FlightReport, g: Groups) -> list[Fault]:
    if not any(isinstance(e, Mapping) and e.get("is_p2p") for d in rep.dumps for e in d.data["entries"]):
        return []
    out: list[Fault] = []
    for key, ops in sorted(_pending(rep, g).items()):
        for (kind, src, dst), held in sorted(ops.items()):
            if kind == "recv" and ("send", src, dst) in ops:
                continue  # reported from the send side
            other = ("recv" if kind == "send" else "send", src, dst)
            holder, e = held[0]
            peer = dst if kind == "send" else src
            if peer not in g.dumped:
                continue  # no dump of the peer: nothing to compare with (its missing dump is reported)
            base: dict[str, Any] = {
                "pg": pg_name(key),
                "seq": e.get("p2p_seq_id"),
                "op": e.get("profiling_name"),
                "input_sizes": e.get("input_sizes"),
                "input_dtypes": e.get("input_dtypes"),
                "src": src,
                "dst": dst,
                "frames": frames_of(e),
                "p2p_seq": e.get("p2p_seq_id"),
            }
            ev = [
                Evidence(f"rank {holder}: {describe(e)} state={e.get('state')}", file=dump_path(rep, holder))
            ]
            mirror = ("send", dst, src)
            if kind == "send" and other not in ops and mirror in ops and ("recv", dst, src) not in ops:
                # Each of the two waits in a send to the other and neither posted its receive: both
                # order their p2p ops alike (1F1B's send/send deadlock), neither alone is at fault.
                if src > dst:
                    continue  # said once, from the lower rank's send
                pair = [src, dst]
                oh, oe = ops[mirror][0]
                ev.append(
                    Evidence(f"rank {oh}: {describe(oe)} state={oe.get('state')}", file=dump_path(rep, oh))
                )
                facts = {**base, "kind": "p2p_deadlock", "missing_ranks": pair, "present_ranks": pair}
                msg = (
                    f"process group {pg_name(key)}: ranks {src} and {dst} each wait in a send to the other "
                    "and neither posted the matching receive (a send/send deadlock: both order their "
                    "send before their recv)"
                )
                out.append(Fault(F.FR_P2P_UNMATCHED.code, facts, pair, pair, msg, ev, 1, _ns(e)))
                continue
            if other not in ops:
                verb = "receive" if kind == "send" else "send"
                facts = {**base, "kind": "p2p_unmatched", "missing_ranks": [peer], "present_ranks": [holder]}
                msg = (
                    f"process group {pg_name(key)}: rank {holder} waits in {e.get('profiling_name')} "
                    f"(sizes {e.get('input_sizes')}) but rank {peer} never posted the matching {verb}"
                    + (f"; called at {facts['frames'][0]}" if facts["frames"] else "")
                )
                out.append(Fault(F.FR_P2P_UNMATCHED.code, facts, [peer], [holder], msg, ev, 1, _ns(e)))
                continue
            oh, oe = ops[other][0]
            ev.append(Evidence(f"rank {oh}: {describe(oe)} state={oe.get('state')}", file=dump_path(rep, oh)))
            if (e.get("input_sizes"), e.get("input_dtypes")) != (
                oe.get("input_sizes"),
                oe.get("input_dtypes"),
            ):
                facts = {
                    **base,
                    "kind": "p2p_size",
                    "odd_ranks": sorted({src, dst}),
                    "per_rank": {str(holder): describe(e), str(oh): describe(oe)},
                }
                msg = (
                    f"process group {pg_name(key)}: {kind} {src}->{dst} and its counterpart disagree: "
                    f"rank {holder} {describe(e)}; rank {oh} {describe(oe)}"
                )
                out.append(
                    Fault(F.FR_P2P_SIZE_MISMATCH.code, facts, sorted({src, dst}), [], msg, ev, 0, _ns(e))
                )
            elif {e.get("state"), oe.get("state")} == {"scheduled", "started"}:
                # One side's kernel never started (its stream is blocked behind its own work) while
                # the other side's runs and waits for it.
                late, waiting = (holder, oh) if e.get("state") == "scheduled" else (oh, holder)
                facts = {**base, "kind": "p2p_not_started", "not_started_ranks": [late]}
                msg = (
                    f"process group {pg_name(key)}: send {src}->{dst} and its recv were both posted "
                    f"({describe(e)}) but rank {late} never started its side, while rank {waiting} "
                    "waits in its own, started"
                )
                out.append(Fault(F.FR_NOT_STARTED.code, facts, [late], [waiting], msg, ev, 1, _ns(e)))
            else:
                facts = {**base, "kind": "p2p_stuck", "not_completed_ranks": sorted({holder, oh})}
                msg = (
                    f"process group {pg_name(key)}: send {src}->{dst} and its recv were both posted "
                    f"({describe(e)}) but neither completed ({ranks_text(sorted({holder, oh}))})"
                )
                out.append(
                    Fault(C.FR_NOT_COMPLETED.code, facts, sorted({holder, oh}), [], msg, ev, 1, _ns(e))
                )
    return out
