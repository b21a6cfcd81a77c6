"""Numbers read from inputs never drive work: a rank, world size or pid from a file name, a dump's
pg_config, an all_gather's sizes, a watchdog line or a launcher's teardown lines is bounded where
it is parsed (knowledge/ranks.py), and spans are walked pair by pair, never as range(a, b)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from pgdoctor.diagnose.api import diagnose_paths, diagnose_sources
from pgdoctor.diagnose.flight.dump import read_dumps
from pgdoctor.knowledge.ranks import MAX_PID, MAX_RANK, bounded, span_gaps


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=10**40), max_size=30), st.integers(min_value=0, max_value=50)
)
def test_span_gaps_is_the_set_difference_without_walking_the_span(values: list[int], limit: int) -> None:
    gaps = span_gaps(values, limit)
    if not values:
        assert gaps == []
        return
    lo, hi = min(values), max(values)
    missing = hi - lo + 1 - len(set(values))
    if missing > limit:
        assert gaps is None
    else:
        assert gaps == sorted(set(range(lo, hi + 1)) - set(values))


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.integers(min_value=-(10**50), max_value=10**50),
        st.booleans(),
        st.floats(allow_nan=True),
        st.text(max_size=60),
        st.none(),
        st.just("9" * 5000),
    )
)
def test_bounded_admits_only_plain_numbers_in_range(value: object) -> None:
    r = bounded(value)
    if r is not None:
        assert type(r) is int and 0 <= r <= MAX_RANK
        assert not isinstance(value, (bool, float))
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_RANK:
        assert r == value


def _dump(
    ranks: str = "[0, 1]", in_sizes: object = None, out_sizes: object = None, op: str = "nccl:all_reduce"
):
    return {
        "version": "2.4",
        "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": ranks}},
        "pg_status": {},
        "entries": [
            {
                "record_id": 0,
                "pg_id": 0,
                "process_group": ["0", "default_pg"],
                "collective_seq_id": 1,
                "p2p_seq_id": 0,
                "profiling_name": op,
                "input_sizes": in_sizes or [[4]],
                "input_dtypes": ["Float"],
                "output_sizes": out_sizes or [[4]],
                "output_dtypes": ["Float"],
                "state": "started",
                "timeout_ms": 1000,
                "is_p2p": False,
                "frames": [],
            }
        ],
    }


def test_a_timestamp_in_a_dump_name_is_no_rank(tmp_path: Path) -> None:
    (tmp_path / "nccl_trace_20240101123456.json").write_text(json.dumps(_dump()))
    (tmp_path / "nccl_trace_0.json").write_text(json.dumps(_dump()))
    rep = read_dumps([str(tmp_path)])
    assert [d.rank for d in rep.dumps] == [0]
    assert any("20240101123456" in s and "not a rank" in s for s in rep.skipped), rep.skipped
    t0 = time.monotonic()
    findings = diagnose_paths([], flight_recorder_dirs=[str(tmp_path)]).findings
    assert time.monotonic() - t0 < 10
    assert findings  # rank 1 of pg_config left no dump: a finding, not a loop


def test_a_world_claimed_by_pg_config_or_gather_sizes_is_bounded(tmp_path: Path) -> None:
    huge = 10**30
    (tmp_path / "rank0.json").write_text(json.dumps(_dump(ranks=f"[0, 1, {huge}, 99999999999]")))
    (tmp_path / "rank1.json").write_text(
        json.dumps(_dump(ranks="[0, 1]", op="nccl:all_gather", in_sizes=[[1]], out_sizes=[[huge]]))
    )
    t0 = time.monotonic()
    findings = diagnose_paths([], flight_recorder_dirs=[str(tmp_path)]).findings
    assert time.monotonic() - t0 < 10
    for f in findings:
        assert f.facts.get("world_size", 0) <= MAX_RANK + 1


def test_watchdog_ranks_and_teardown_pids_far_apart_cost_nothing() -> None:
    wd = (
        "[rank{r}]:[E ProcessGroupNCCL.cpp:563] [Rank {r}] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=4013, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600009 "
        "milliseconds before timing out.\n"
    )
    log = wd.format(r=0) + wd.format(r=3) + wd.format(r=10**29) + wd.format(r=MAX_RANK * 1000)
    td = "".join(
        f"WARNING:torch.distributed.elastic.multiprocessing.api:Sending process {p} closing signal SIGTERM\n"
        for p in (1, 3, 10**30, MAX_PID + 1)
    )
    t0 = time.monotonic()
    findings = diagnose_sources([("wd.log", log)])
    teardown = diagnose_sources([("td.log", td)])
    assert time.monotonic() - t0 < 10
    assert findings and {r for f in findings for r in f.facts.get("ranks", [])} <= {0, 3}
    stopped = [f for f in teardown if "stopped_pids" in f.facts]
    assert stopped and stopped[0].facts["stopped_pids"] == [1, 3]
    assert stopped[0].facts.get("pid") == 2  # the one pid that got no SIGTERM died first
