"""Each rank's clock offset, read from the collectives its dump shows completed with its peers.

Entries carry times of the rank's own wall clock (time_created_ns, time_discovered_*), and the
nodes of a job do not share one: a node whose clock runs minutes ahead makes its ranks look as if
they entered a collective minutes after their peers (RUN281 `late`), or as if their ring began
after a collective was issued. A collective that completed completed on every member at about the
same moment (NCCL completes it only with all of them in it; the watchdog discovers it within its
poll), so for every collective a rank completed with peers, its completion time minus the median
of the members' is its offset plus noise; the median of those differences is the offset. Offsets
under OFFSET_NOISE_S are left at 0: the rules that read times compare against timeouts of 60 s and
more. Gloo's entries stay `scheduled`: no completion times, no offsets, times read as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from statistics import median
from typing import Any

from pgdoctor.diagnose.flight.dump import int_of

OFFSET_NOISE_S = 5.0


def _completed_ns(raw: Mapping[str, Any]) -> int:
    if raw.get("state") != "completed":
        return 0
    return max(int_of(raw.get("time_discovered_completed_ns"), 0), 0)


def clock_offsets(by_pg: Mapping[str, Mapping[int, Mapping[int, list[Any]]]]) -> dict[int, int]:
    """rank -> how far its clock runs ahead of its peers' (ns; absent: 0). by_pg is entries.Table's:
    group -> rank -> sequence number -> entries (with `.raw`)."""
    diffs: dict[int, list[int]] = {}
    for ranks in by_pg.values():
        at: dict[int, dict[int, int]] = {}  # seq -> rank -> completion time
        for rank, by_seq in ranks.items():
            for seq, entries in by_seq.items():
                ns = max((_completed_ns(e.raw) for e in entries), default=0)
                if ns > 0:
                    at.setdefault(seq, {})[rank] = ns
        for times in at.values():
            if len(times) < 3:
                continue  # two clocks alone cannot say which one is off
            mid = median(times.values())
            for rank, ns in times.items():
                diffs.setdefault(rank, []).append(int(ns - mid))
    out = {}
    for rank, ds in diffs.items():
        off = int(median(ds))
        if abs(off) / 1e9 >= OFFSET_NOISE_S:
            out[rank] = off
    return out
