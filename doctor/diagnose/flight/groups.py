"""Who belongs to which process group, from every dump together.

pg_config alone is not enough: torch 2.13's gloo recorder keys its only pg_config entry by the
empty name, and once a rank is a member of any `new_group`, that entry lists `ranks '[]'`; a
subgroup member that never issued a collective in its group leaves no trace of the group in its
own dump. So membership is the union of what pg_config says (where it names ranks) and which
ranks recorded entries in the group, completed from two facts:

- a rank whose gloo pg_config lists no ranks is a member of some subgroup; subgroups created
  side by side (new_subgroups, one group per TP/PP slice) have one size, so a subgroup with fewer
  known members than its siblings takes the subgroup ranks that are in no known subgroup, and
  after them the ranks that left no dump;
- the world is every rank of the default group's pg_config, every rank that dumped, and the
  group size an all_gather in the default group implies (output numel / input numel).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pgdoctor.diagnose.flight.dump import FlightReport, aliases, config_ranks, pg_status
from pgdoctor.diagnose.flight.entries import Table, numel
from pgdoctor.diagnose.flight.local_ids import members_from_local_ids
from pgdoctor.knowledge.ranks import MAX_RANK


@dataclass
class Groups:
    members: dict[str, set[int]] = field(default_factory=dict)
    world_pg: str = "0"
    world: set[int] = field(default_factory=set)
    dumped: set[int] = field(default_factory=set)
    inferred: dict[str, list[int]] = field(default_factory=dict)  # members added by inference

    @property
    def no_dump(self) -> list[int]:
        return sorted(self.world - self.dumped)

    def of(self, pg: str) -> set[int]:
        return self.members.get(pg, set())


def build(rep: FlightReport, t: Table) -> Groups:
    g = Groups(dumped={d.rank for d in rep.dumps})
    world_names = {pg for pg, d in t.desc.items() if d == "default_pg"}
    g.world_pg = min(world_names) if world_names else "0"
    in_subgroup: set[int] = set()  # ranks whose gloo pg_config says "member of some subgroup"
    alias = aliases(rep)
    for d in rep.dumps:
        cfg = d.data.get("pg_config")
        if not isinstance(cfg, Mapping):
            continue
        for name, entry in cfg.items():
            if isinstance(entry, (list, tuple)):  # before 2.0: {pg_id: [ranks]}
                entry = {"ranks": entry}
            if not isinstance(entry, Mapping):
                continue
            ranks = config_ranks(entry.get("ranks"))
            key = alias.get((d.rank, str(name)), str(name)) if str(name) else g.world_pg
            if not str(name) and not ranks:
                in_subgroup.add(d.rank)
                continue
            if ranks:
                g.members.setdefault(key, set()).update(ranks)
    configured = {k for k, m in g.members.items() if m}  # pg_config named their ranks
    for pg, by_rank in t.by_pg.items():
        g.members.setdefault(pg, set()).update(by_rank)
    for pg, by_ids in members_from_local_ids(rep).items():
        # A group whose pg_config names its ranks is read from there; and a group nobody
        # recorded an entry in has nothing to compare.
        if pg in t.by_pg and pg not in configured and not by_ids <= g.members[pg]:
            g.inferred.setdefault(pg, []).extend(sorted(by_ids - g.members[pg]))
            g.members[pg].update(by_ids)
    world = g.members.setdefault(g.world_pg, set())
    world.update(g.dumped)
    world.update(rep.cut)  # a rank whose dump is cut off is a rank of the job all the same
    world.update(range(_world_size_from_gathers(t, g.world_pg)))
    _complete_subgroups(g, in_subgroup, t, last_completed(rep))
    for pg, m in g.members.items():
        if pg != g.world_pg:
            world.update(m)
    if world:
        world.update(range(max(world) + 1))  # ranks are 0..N-1: a gap is a rank with no dump
    g.world = set(world)
    return g


def _world_size_from_gathers(t: Table, world_pg: str) -> int:
    for by_seq in t.by_pg.get(world_pg, {}).values():
        for entries in by_seq.values():
            for e in entries:
                if (
                    e.op in ("all_gather", "_all_gather_base", "all_gather_into_tensor")
                    and numel(e.in_sizes) > 0
                ):
                    n, r = divmod(numel(e.out_sizes), numel(e.in_sizes))
                    if r == 0 and 0 < n <= MAX_RANK + 1:
                        return n
    return 0


def last_completed(rep: FlightReport) -> dict[tuple[int, str], int]:
    """(rank, pg_id) -> last_completed_collective of the rank's pg_status."""
    return {(d.rank, pg_id): c[2] for d in rep.dumps for pg_id, c in pg_status(d).items()}


def _complete_subgroups(
    g: Groups, in_subgroup: set[int], t: Table, done: Mapping[tuple[int, str], int] | None = None
) -> None:
    subs = {pg: m for pg, m in g.members.items() if pg != g.world_pg}
    if not subs:
        return
    size = max(len(m) for m in subs.values())
    if size < 2:
        size = 2  # a group whose only known member waits in a collective has at least one more
    known = set().union(*subs.values())
    free = sorted(in_subgroup - known)
    world_known = g.members.get(g.world_pg, set()) | g.dumped
    for pg in sorted(subs, key=lambda p: (len(subs[p]), p)):
        need = size - len(subs[pg])
        if need <= 0:
            continue
        take = free[:need]
        free = free[need:]
        if len(take) < need:
            # Ranks of the world (pg_config, an all_gather's size) with no dump and no known group.
            absent = world_known - g.dumped - known
            if _blocked(t, subs[pg], pg, done or {}):
                # Its known members all wait in it: a rank that left no dump (a gap in the ranks
                # too) may be the one they wait for, whatever other group it was given (a rank of
                # a TP x DP job is in two subgroups, of two sizes).
                absent |= set(range(max(world_known, default=-1) + 1)) - g.dumped
            missing = sorted(absent - set(take))
            take += missing[: need - len(take)]
        if not take:
            continue
        subs[pg].update(take)
        known.update(take)
        g.inferred[pg] = take
    if free and len(subs) == 1:
        # One subgroup only (a second group over the same ranks, say): a subgroup member that
        # never used it belongs to it when it waits in a collective that the group's known
        # members never reached (they are blocked in this group; it went another way).
        pg = next(iter(subs))
        take = [r for r in free if _ahead_of(t, r, subs[pg])]
        subs[pg].update(take)
        if take:
            g.inferred.setdefault(pg, []).extend(take)
        free = [r for r in free if r not in take]
    blocked = [pg for pg in subs if _blocked(t, subs[pg], pg, done or {})]
    if free and len(blocked) == 1:
        # Every known member of one subgroup is stuck in it (its last entry, not completed), and
        # the subgroup ranks of no known group went on elsewhere: one of them is the member that
        # never issued the group's first collective (a group of another size than its siblings,
        # or the only one). With two such groups it cannot be told which.
        pg = blocked[0]
        take = [r for r in free if t.last.get(r) is None or t.last[r].pg != pg]
        subs[pg].update(take)
        if take:
            g.inferred.setdefault(pg, []).extend(take)


def _blocked(t: Table, members: set[int], pg: str, done: Mapping[tuple[int, str], int]) -> bool:
    """Every known member's last collective is in pg and, where the recorder tracks completion
    (NCCL: state and pg_status), was not completed. Gloo leaves every entry scheduled and counts a
    collective that timed out as completed, so there the last entry alone says it: a gloo job that
    ended cleanly on a subgroup collective, beside an unused subgroup, would look the same."""
    for m in members:
        last = t.last.get(m)
        if last is None or last.pg != pg:
            return False
        if t.tracks_state.get(m) and (
            last.state == "completed" or last.seq <= done.get((m, str(last.raw.get("pg_id", pg))), -1)
        ):
            return False
    return bool(members)


def _ahead_of(t: Table, rank: int, others: set[int]) -> bool:
    last = t.last.get(rank)
    if last is None:
        return False
    by_rank = t.by_pg.get(last.pg, {})
    return all(last.seq not in by_rank.get(o, {}) for o in others)
