"""Subgroup members that never used their group, read from the gaps in a rank's local group ids.

An entry carries two ids of its group: `process_group[0]`, the group's name, the same on every
rank (`new_group` names groups "1", "2", ... from a counter every rank advances, member or not),
and `pg_id`, a number the rank gives each group it is a MEMBER of, in creation order (a rank of
groups "2" and "5" only calls them 1 and 2). Gloo's pg_config lists no ranks for subgroups, and a
member that never issued a collective in its group leaves no entry of it, so a deadlock between two
overlapping groups ([0,1,2] and [1,2,3], each entered first by a different rank) reads as two
healthy pairs. The ids close that gap: when a rank calls group "a" by id p and group "b" by id q,
it is a member of exactly q - p - 1 groups named between a and b; if that is every name between
them, it is a member of each. Nothing is inferred where the count leaves a choice, or where any
group has a name that is not such a number (hashed names of split_group and
new_group(use_local_synchronization=True) are not in creation order).
"""

from __future__ import annotations

from collections.abc import Mapping

from pgdoctor.diagnose.flight.dump import FlightReport, int_of, pg_key


def decimal(name: str) -> int | None:
    return int(name) if name.isdigit() and len(name) < 10 else None


def members_from_local_ids(rep: FlightReport) -> dict[str, set[int]]:
    """Group name -> ranks that are members by the gaps in their local ids (see the module doc)."""
    seen: dict[int, dict[int, int]] = {}  # rank -> local pg_id -> group name as a number
    for d in rep.dumps:
        ids: dict[int, int] = {}
        for e in d.data.get("entries") or ():
            if not isinstance(e, Mapping) or not isinstance(e.get("process_group"), (list, tuple)):
                continue
            name = decimal(pg_key(e))
            local = int_of(e.get("pg_id"))
            if name is None:
                return {}  # a hashed (or otherwise unordered) name: the order cannot be trusted
            if local < 0 or ids.get(local, name) != name:
                return {}  # one id for two names: not the recorder this reading knows
            ids[local] = name
        if ids:
            seen[d.rank] = ids
    if not seen or any(ids.get(0, 0) != 0 for ids in seen.values()):
        return {}  # the default group is id 0 and name "0" wherever both are recorded
    out: dict[str, set[int]] = {}
    for rank, ids in seen.items():
        used = sorted({0: 0, **ids}.items())
        if any(b <= a for (_, a), (_, b) in zip(used, used[1:])):
            return {}  # names not in the order of the ids: not new_group's counter
        for (p, a), (q, b) in zip(used, used[1:]):
            between = b - a - 1
            if q - p - 1 <= 0 or between != q - p - 1:
                continue  # no gap, or more names than unused ids: which ones is not known
            for name in range(a + 1, b):
                out.setdefault(str(name), set()).add(rank)
    return out
