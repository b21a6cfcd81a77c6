"""pgdoctor's flight-recorder analysis against torch's own analyzer (torchfrtrace, the logic of
torch.distributed.flight_recorder.fr_trace from the installed torch) on the same dumps:

    python benchmarks/bench_frtrace.py [-v]
    python benchmarks/bench_frtrace.py --unseen3   the frozen set tests/fixtures/fr_unseen3/, scored
                                                   against each folder's expected.json

Scenarios and their ground truth are tests/helpers/fr_scenarios.py: real 4-rank gloo dumps
(tests/fixtures/fr/*.tar) and dumps written in NCCL's recorder format (states, send/recv,
coalesced groups), 3 to 1024 ranks. Each is written as torch names the files
(nccl_trace_rank_<N>, pickles) and given to both. Prints scenario -> truth -> pgdoctor ->
torchfrtrace, whether each is right, and totals.

torchfrtrace is run as `fr_trace` runs it (read_dir, build_db with --allow-incomplete-ranks so that
a missing dump is analysed, not refused), with two workarounds that leave torch's files alone:
without the optional `tabulate` package its utils.py raises NameError on batched send/recv, so
it gets the no-op fallback its builder.py already has; and torch 2.13's gloo dumps key pg_config by the empty
name and list ranks '[]' once a
new_group exists, which makes build_db raise KeyError; each dump's pg_config is rebuilt from the
groups its entries name, with the members every dump's entries show. Its answer is the first
collective it marks failed (or with missing ranks), and its "missed FR dumps from ranks" message
for a dump that is missing. It is run with the dumps in rank order and again in reverse order:
its culprit depends on which rank it reads first.
"""

from __future__ import annotations

import ast
import logging
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from pgdoctor.diagnose.api import diagnose_paths
from tests.helpers import fr_scenarios as S

# torchfrtrace's kinds -> the pgdoctor codes that name the same fault.
FAMILY = {
    "missing": {"RUN281", "RUN287", "RUN289"},
    "COLLECTIVE_TYPE_MISMATCH": {"RUN282"},
    "SIZE_OR_SYNTAX_MISMATCH": {"RUN284", "RUN288", "RUN289"},
    "COLLECTIVE_DTYPE_MISMATCH": {"RUN285"},
    "COLLECTIVE_STATE_MISMATCH": {"RUN286", "RUN283"},
    "no_dump": {"RUN290"},
}


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def _fix_pg_config(details: dict[str, dict[str, Any]]) -> None:
    """The workaround: pg_config from the groups the entries name (torch 2.13 gloo writes '' / '[]')."""
    members: dict[str, set[int]] = {}
    descs: dict[str, str] = {}
    world: set[int] = set()
    for d in details.values():
        for name, cfg in d["pg_config"].items():
            ranks = ast.literal_eval(cfg.get("ranks") or "[]")
            if name == "" and ranks:
                world.update(ranks)
        for e in d["entries"]:
            pg, desc = e["process_group"]
            members.setdefault(pg, set()).add(d["rank"])
            descs.setdefault(pg, desc)
    if not any(name == "" for d in details.values() for name in d["pg_config"]):
        return
    for pg, desc in descs.items():
        if desc == "default_pg":
            members[pg] |= world | {d["rank"] for d in details.values()}
    for d in details.values():
        d["pg_config"] = {
            pg: {"name": pg, "desc": descs[pg], "ranks": str(sorted(m))} for pg, m in members.items()
        }


def _tabulate_fallback() -> None:
    """torch's utils.py prints coalesced-group tables with `tabulate` and, unlike builder.py, has
    no fallback when the package is missing (NameError); give it builder's no-op one."""
    from torch.distributed.flight_recorder.components import utils

    if not hasattr(utils, "tabulate"):
        utils.tabulate = lambda data, headers=None: data  # type: ignore[attr-defined]


def torchfrtrace(d: str, reverse: bool) -> tuple[str, list[tuple[str, tuple[int, ...]]]]:
    """(verdict text, [(kind, culprit ranks)] in the order torch reports them)."""
    _tabulate_fallback()
    from torch.distributed.flight_recorder.components.builder import build_db
    from torch.distributed.flight_recorder.components.config_manager import JobConfig
    from torch.distributed.flight_recorder.components.loader import read_dir

    cap = _Capture()
    log = logging.getLogger("Flight Recorder")
    args = JobConfig().parse_args([d, "--allow-incomplete-ranks", "--prefix", "nccl_trace_rank_"])
    try:
        details, version = read_dir(args)
        details = dict(sorted(details.items(), key=lambda kv: int(kv[1]["rank"]), reverse=reverse))
        _fix_pg_config(details)
        old = log.handlers[:]
        log.handlers = [cap]
        try:
            db = build_db(details, args, version)
        finally:
            log.handlers = old
    except Exception as exc:  # torch's analyzer asserts on what it does not expect
        return f"crash: {type(exc).__name__}: {str(exc)[:60]}", []
    found: list[tuple[str, tuple[int, ...]]] = []
    for c in db.collectives:
        if c.missing_ranks:
            found.append(("missing", tuple(sorted(c.missing_ranks))))
        elif not c.pass_check and c.mismatch_collectives:
            kinds = {
                m.type_of_mismatch.state.name for m in c.mismatch_collectives.values() if m.type_of_mismatch
            }
            found.append(
                (min(kinds) if kinds else "SIZE_OR_SYNTAX_MISMATCH", tuple(sorted(c.mismatch_collectives)))
            )
        elif not c.pass_check:
            found.append(("SIZE_OR_SYNTAX_MISMATCH", ()))
    for line in cap.lines:
        if "missed FR dumps from ranks" in line:
            ranks = tuple(sorted(ast.literal_eval(line.split("ranks (", 1)[1].split(")", 1)[0])))
            found.append(("no_dump", ranks))
    if not found:
        return "clean", found
    k, r = found[0]
    return f"{k} {list(r) if len(r) <= 6 else f'[{r[0]}..{r[-1]}] ({len(r)})'}", found


def torch_right(found: Sequence[tuple[str, tuple[int, ...]]], t: S.Truth) -> bool:
    if t.code is None:
        return not found
    if not found:
        return False
    kind, ranks = found[0]
    if t.code not in FAMILY.get(kind, set()) or ranks != t.ranks:
        return False
    return all(any(code in FAMILY.get(k, set()) and r == rs for k, r in found[1:]) for code, rs in t.also)


def unseen3() -> int:
    """torchfrtrace on fr_unseen3 (pickles only: its loader reads no JSON), right only when it is
    right with the dumps read in both orders; pgdoctor's figure is tests/diagnose/test_fr_unseen3.py's."""
    import json
    import re
    import shutil

    from tests.helpers.paths import FIXTURES

    root = os.path.join(FIXTURES, "fr_unseen3")
    names = sorted(n for n in os.listdir(root) if os.path.isdir(os.path.join(root, n)))
    right = 0
    for name in names:
        src = os.path.join(root, name)
        with open(os.path.join(src, "expected.json")) as fh:
            e = json.load(fh)
        truth = S.Truth(e["code"], tuple(e["ranks"]), also=tuple((c, tuple(r)) for c, r in e.get("also", [])))
        with tempfile.TemporaryDirectory() as d:
            for f in os.listdir(src):
                m = re.search(r"(\d+)(\.pkl)?$", f)
                if m and not f.endswith(".json"):
                    shutil.copy(os.path.join(src, f), os.path.join(d, f"nccl_trace_rank_{m.group(1)}"))
            answers = [torchfrtrace(d, reverse) for reverse in (False, True)]
        ok = all(torch_right(found, truth) for _, found in answers)
        right += ok
        print(
            f"{'ok   ' if ok else 'WRONG'} {name:30} {e['code']} {e['ranks']}: "
            f"{answers[0][0]} | {answers[1][0]}"
        )
    print(f"\ntorchfrtrace right in both file orders: {right}/{len(names)}")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    if "--unseen3" in (argv or sys.argv[1:]):
        return unseen3()
    verbose = "-v" in (argv or sys.argv[1:])
    rows = []
    totals = {"pgdoctor": 0, "torchfrtrace": 0, "torch order-stable": 0}
    t_pg = t_torch = 0.0
    for sc in S.all_scenarios():
        with tempfile.TemporaryDirectory() as d:
            sc.write(d, False)
            t0 = time.perf_counter()
            findings = diagnose_paths([], [d]).findings
            t1 = time.perf_counter()
            tv, found = torchfrtrace(d, reverse=False)
            t2 = time.perf_counter()
            tv_rev, _ = torchfrtrace(d, reverse=True)
        t_pg += t1 - t0
        t_torch += t2 - t1
        ok_pg, why = S.judge(findings, sc.truth)
        ok_t = torch_right(found, sc.truth)
        stable = tv == tv_rev
        totals["pgdoctor"] += ok_pg
        totals["torchfrtrace"] += ok_t
        totals["torch order-stable"] += stable
        rows.append(
            (
                sc.name,
                sc.source,
                sc.world,
                S.truth_text(sc.truth),
                S.verdict(findings),
                "ok" if ok_pg else "WRONG",
                tv if stable else f"{tv} | reversed: {tv_rev}",
                "ok" if ok_t else "WRONG",
            )
        )
        if verbose and not ok_pg:
            print(f"  {sc.name}: {why}", file=sys.stderr)
    head = ("scenario", "dumps", "ranks", "truth", "pgdoctor", "", "torchfrtrace", "")
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    for r in [head, *rows]:
        print("  ".join(str(v).ljust(w) for v, w in zip(r, widths)).rstrip())
    n = len(rows)
    print(
        f"\nright: pgdoctor {totals['pgdoctor']}/{n}, torchfrtrace {totals['torchfrtrace']}/{n}; "
        f"torchfrtrace gives the same answer with the dumps read in reverse order on "
        f"{totals['torch order-stable']}/{n}"
    )
    print(
        f"analysis time over all scenarios: pgdoctor {t_pg:.1f} s, torchfrtrace {t_torch:.1f} s (one order)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
