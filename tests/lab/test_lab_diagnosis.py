"""The lab's own diagnosis pieces that need no run: RUN404 over recorded per-rank results, the
enrichment of the log diagnoser's findings with lab facts, and the rank-prefixed log sources."""

from __future__ import annotations

import json

from pgdoctor.lab.diagnosis import enrich, prefixed_sources, stalled_findings
from pgdoctor.lab.launch import LabRun
from pgdoctor.lab.spec import LabSpec
from pgdoctor.model import Finding, Scope, Severity
from pgdoctor.probes.processes import ChildOutcome
from tests.helpers.paths import FIXTURES

D = FIXTURES / "codes" / "RUN404"


def test_run404_fires_on_bad_results_and_not_on_good() -> None:
    bad = stalled_findings(json.loads((D / "bad.results.json").read_text()))
    assert [f.code for f in bad] == ["RUN404"]
    f = bad[0]
    assert f.category == "collective_timeout" and f.severity is Severity.FAIL
    assert f.scope.rank == 2 and f.facts["phase"] == "backward"
    assert f.facts["ranges"][-1] == "pp.send peer=1 mb=0"
    assert f.facts["waiting_in"] == {"0": "pp.recv peer=1 mb=0", "1": "pp.recv peer=2 mb=0"}
    assert "Timed out waiting" in f.facts["first_error"]
    assert stalled_findings(json.loads((D / "good.results.json").read_text())) == []


def _run(results: list[dict]) -> LabRun:
    spec = LabSpec("oom", "ddp", 2, "/nonexistent")
    outs = tuple(ChildOutcome(i, ("x",), 1, False, 1.0, "", f"line a\nline b {i}\n") for i in range(2))
    return LabRun(spec, outs, tuple(results), 2.0)


def test_enrich_adds_the_facts_of_the_rank_in_scope_and_keeps_the_diagnosers() -> None:
    results = [
        {"rank": 0, "status": "error", "ranges": ["step n=3", "bwd"], "phase": "backward", "step": 3},
        {
            "rank": 1,
            "status": "error",
            "error_type": "RuntimeError",
            "error": "DefaultCPUAllocator: can't allocate memory",
            "ranges": ["step n=3", "fwd"],
            "phase": "forward",
            "step": 3,
            "memory": {"host_rss_bytes": 5},
            "cap": {"host_as_limit_bytes": 9},
        },
    ]
    scoped = Finding(
        "RUN122", "x", Severity.FAIL, "host_oom", "t", "m", "run", Scope(rank=1), facts={"step": "theirs"}
    )
    unscoped = Finding("RUN122", "x", Severity.FAIL, "host_oom", "t", "m", "run")
    a, b = enrich(_run(results), [scoped, unscoped])
    assert a.facts["lab_phase"] == "forward" and a.facts["lab_memory_host_rss_bytes"] == 5
    assert a.facts["lab_cap_host_as_limit_bytes"] == 9 and a.facts["step"] == "theirs"
    assert any("step n=3 > fwd" in e.text for e in a.evidence)
    # No rank from the diagnoser: the rank the lab saw fail with an allocation error.
    assert b.scope.rank == 1 and b.facts["lab_phase"] == "forward"
    assert scoped.facts == {"step": "theirs"}  # copies, the originals are untouched


def test_sources_are_prefixed_like_torchrun_output() -> None:
    srcs = dict(prefixed_sources(_run([{}, {}])))
    assert srcs["rank1.stderr"] == "[rank1]:line a\n[rank1]:line b 1\n"


def _f(code: str, category: str, rank: int, **facts: object) -> Finding:
    return Finding(
        code, code.lower(), Severity.FAIL, category, "t", "m", "run", Scope(rank=rank), facts=dict(facts)
    )


def test_root_first_puts_the_rank_that_caused_it_first_and_the_rest_as_its_cascade() -> None:
    from pgdoctor.lab.diagnosis import root_first

    # pp timeout: the peers' gloo timeouts are the log's only failures; the stalled rank is the cause.
    out = root_first(
        [_f("RUN153", "collective_timeout", 0, root_cause=True)], [_f("RUN404", "collective_timeout", 2)]
    )
    assert [(f.code, f.scope.rank) for f in out] == [("RUN404", 2), ("RUN153", 0)]
    assert out[0].facts["root_cause"] is True and out[1].facts == {"cascade_of": "RUN404"}
    # oom: the OOM leads; a peer's "connection closed" is its consequence.
    out = root_first(
        [_f("RUN122", "host_oom", 1, root_cause=True), _f("RUN174", "nccl_network", 0, cascade_of="RUN122")],
        [],
    )
    assert [f.code for f in out] == ["RUN122", "RUN174"] and out[1].facts["cascade_of"] == "RUN122"
    # A flight-recorder finding that blames the stalled rank leads (it names group, op, seq).
    out = root_first(
        [_f("RUN281", "collective_timeout", 1, root_cause=True, culprit_ranks=[1])],
        [_f("RUN404", "collective_timeout", 1)],
    )
    assert [f.code for f in out] == ["RUN281", "RUN404"]
    assert root_first([], []) == []
