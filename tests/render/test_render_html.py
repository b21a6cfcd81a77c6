"""--format html: one self-contained page with findings, playbooks, GPUs, plots and timeline."""

from __future__ import annotations

import dataclasses
import io
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pgdoctor.model import Evidence, Finding, Measurement, Report, Scope, Severity
from pgdoctor.render import get_renderer
from pgdoctor.render.html import MAX_TIMELINE_EVENTS, collective_rows, trace_events
from tests.helpers.render_reports import (
    collective_measurements,
    live_report,
    rich_report,
    sweep_rows,
    with_measurements,
)


def render(report: Report) -> str:
    buf = io.StringIO()
    get_renderer("html")(report, buf, False)
    return buf.getvalue()


class Tags(HTMLParser):
    """Start tags with their attributes, and whether every non-void tag was closed."""

    VOID = frozenset(
        {"meta", "br", "circle", "line", "rect", "polyline", "path", "hr", "img", "input", "link"}
    )

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        if tag in self.VOID:
            return
        assert self.stack and self.stack[-1] == tag, (
            f"</{tag}> closes <{self.stack[-1] if self.stack else None}>"
        )
        self.stack.pop()


def parse(page: str) -> Tags:
    t = Tags()
    t.feed(page)
    t.close()
    assert t.stack == [], f"unclosed: {t.stack}"
    return t


@pytest.fixture(scope="module")
def rich() -> Report:
    return rich_report()


@pytest.fixture(scope="module")
def page(rich: Report) -> str:
    return render(rich)


def test_self_contained_nothing_loaded_from_outside(page: str) -> None:
    tags = parse(page)
    names = {t for t, _ in tags.tags}
    assert not names & {"script", "link", "img", "iframe", "object", "embed"}
    for tag, attrs in tags.tags:
        assert "src" not in attrs, tag
        assert not attrs.get("href", "#").split("#")[0], f"<{tag} href={attrs['href']}> leaves the page"
        assert not any(k.startswith("on") for k in attrs), f"event handler on <{tag}>"
    assert "url(" not in page and "@import" not in page
    assert any(
        t == "meta"
        and a.get("http-equiv") == "Content-Security-Policy"
        and "default-src 'none'" in a.get("content", "")
        for t, a in tags.tags
    )


def test_findings_with_their_playbooks(rich: Report, page: str) -> None:
    from pgdoctor.playbooks import find

    for code in {f.code for f in rich.findings}:
        assert f'data-code="{code}"' in page
    pb = find("ENV401")
    assert pb is not None
    card = page.split('data-code="ENV401"', 1)[1].split("</article>", 1)[0]
    for section in ("What it means", "How to confirm", "Fix", "Verify"):
        assert f">{section}</h4>" in card
    assert "<pre><code>" in card  # the confirm commands stay commands
    # The live finding's message and evidence are on the card.
    env401 = next(f for f in rich.findings if f.code == "ENV401")
    assert env401.message.split(";")[0].replace('"', "&quot;").replace("'", "&#x27;") in card


def test_summary_verdict_and_areas(rich: Report, page: str) -> None:
    summary = page.split('<section id="summary">', 1)[1].split("</section>", 1)[0]
    assert "FAILED" in summary
    fails = sum(1 for f in rich.findings if f.severity is Severity.FAIL)
    assert f"{fails} fail" in summary
    assert "NCCL / gloo / torch settings" in summary and "ENV401" in summary


def test_per_gpu_table(page: str) -> None:
    table = page.split('<section id="gpus">', 1)[1].split("</section>", 1)[0]
    assert re.search(r"GPU 1 <span class=\"badge fail\">fail</span>", table), "GPU 1 has GPU101"
    assert re.search(r"GPU 0(<br>|</th>)", table), "GPU 0 has no finding"
    row = table.split("<code>gpu.temp_c</code>", 1)[1].split("</tr>", 1)[0]
    assert re.findall(r"<td>([^<]*)</td>", row) == ["31 C", "38 C"]
    assert "gpu.nvlink.active" not in table  # per-link values are in the measurement list only


def test_bandwidth_plot_one_line_per_op_one_point_per_size(page: str) -> None:
    section = page.split('<section id="collectives">', 1)[1].split("</section>", 1)[0]
    rows = sweep_rows()
    assert section.count("<polyline") == 2
    assert section.count("<circle") == len(rows)
    assert 'data-op="all_reduce"' in section and 'data-op="all_gather"' in section
    assert ">16 MiB</text>" in section and ">8 B</text>" in section
    peak = max(r["busbw_gbps"] for r in rows if r["op"] == "all_reduce")
    assert f"all_reduce 16 MiB: {peak:.3f} GB/s" in section


def test_timeline_one_track_per_rank(page: str) -> None:
    section = page.split('<section id="timeline">', 1)[1].split("</section>", 1)[0]
    assert section.count('<g class="track"') == 2
    assert ">rank 0</text>" in section and ">rank 1</text>" in section
    # 3 steps x (step, fwd, bwd, comm) per rank
    assert section.count("<rect x=") - 2 == 2 * 3 * 4


def test_everything_from_the_report_is_escaped(rich: Report) -> None:
    evil = Finding(
        "ENV401",
        "socket-ifname-no-match",
        Severity.FAIL,
        "nccl_network",
        "t",
        '<script>alert("m")</script>',
        "knobs",
        Scope(nic="<b>"),
        (Evidence("<img src=x onerror=alert(1)>"),),
        {"k": "</pre><script>"},
    )
    rep = dataclasses.replace(rich, findings=(evil,))
    rep = with_measurements(
        rep, "x", "gpu", [Measurement("gpu.name", "<i>gpu</i>", scope=Scope(gpu_index=0))]
    )
    page = render(rep)
    parse(page)
    assert "<script" not in page and "<img" not in page and "<i>gpu" not in page
    assert "&lt;script&gt;alert(&quot;m&quot;)&lt;/script&gt;" in page


def test_collective_rows_are_read_defensively() -> None:
    good = sweep_rows(("all_reduce",))
    bad = [
        Measurement("collectives.all_reduce.busbw_peak_gbps", 3.5),
        Measurement("collectives.problems", [{"kind": "hang"}]),
        Measurement("collectives.x.1", {"op": "x", "bytes": "big", "busbw_gbps": 1.0}),
        Measurement("collectives.x.2", {"op": "x", "bytes": 2, "busbw_gbps": float("nan")}),
        Measurement("collectives.x.3", {"op": "", "bytes": 3, "busbw_gbps": 1.0}),
        Measurement("collectives.x.4", {"op": "x", "bytes": True, "busbw_gbps": 1.0}),
        Measurement("collectives.x.5", {"bytes": 5, "busbw_gbps": 1.0}),
        Measurement("gpu.x", {"op": "x", "bytes": 8, "busbw_gbps": 1.0}),
    ]
    rows = collective_rows([*bad, *collective_measurements(good)])
    assert [(r["op"], r["bytes"]) for r in rows] == [("all_reduce", r["bytes"]) for r in good]


def test_no_sweep_no_trace_no_gpus_means_no_such_sections() -> None:
    page = render(live_report())
    parse(page)
    for sid in ("collectives", "timeline", "gpus"):
        assert f'<section id="{sid}">' not in page
    assert '<section id="findings">' in page and 'href="#timeline"' not in page


def test_trace_events_accepts_a_whole_trace_drops_bad_events_and_caps() -> None:
    raw = [
        {"name": "process_name", "ph": "M", "pid": 3, "args": {"name": "rank 3 (node b)"}},
        {"name": "step", "ph": "X", "ts": 10.0, "dur": 5.0, "pid": 3, "tid": 1},
        {"name": "bad", "ph": "X", "ts": "soon", "dur": 5.0, "pid": 3},
        {"name": "neg", "ph": "X", "ts": 1.0, "dur": -1.0, "pid": 3},
        {"name": "nopid", "ph": "X", "ts": 1.0, "dur": 1.0},
        {"name": "begin", "ph": "B", "ts": 1.0, "pid": 3},
        "not an event",
    ]
    events, names = trace_events({"trace_events": {"traceEvents": raw}})
    assert [e["name"] for e in events] == ["step"] and names == {3: "rank 3 (node b)"}
    assert trace_events({"trace_events": "nonsense"}) == ([], {})
    many = [
        {"name": "s", "ph": "X", "ts": float(i), "dur": 0.5, "pid": i % 2}
        for i in range(MAX_TIMELINE_EVENTS + 7)
    ]
    page = render(dataclasses.replace(live_report(), extra={"trace_events": many}))
    section = page.split('<section id="timeline">', 1)[1].split("</section>", 1)[0]
    assert f"the first {MAX_TIMELINE_EVENTS} of {MAX_TIMELINE_EVENTS + 7} ranges" in section


@pytest.mark.slow
def test_a_real_gloo_sweep_is_plotted(no_leftover_children: None) -> None:
    """The reader and the plot against what the collectives probe really writes (2 gloo ranks)."""
    import os

    from pgdoctor.knowledge.collectives import SweepSpec
    from pgdoctor.probes.collectives.launch import run_collectives

    spec = SweepSpec(
        ops=("all_reduce", "broadcast"),
        min_bytes=8,
        max_bytes=1 << 16,
        factor=16,
        iters=2,
        warmup=1,
        memcpy_probe=False,
    )
    run = run_collectives(spec, dict(os.environ), 2, 90.0)
    assert not run.problems, run.problems
    measurements = run.to_measurements()
    rows = collective_rows(measurements)
    assert {(r["op"], r["bytes"]) for r in rows} == {(r.op, r.bytes) for r in run.rows} and len(rows) == 8
    page = render(with_measurements(live_report(), "collectives", "collectives", measurements))
    section = page.split('<section id="collectives">', 1)[1].split("</section>", 1)[0]
    assert section.count("<polyline") == 2 and section.count("<circle") == 8
    assert "backend gloo, world_size 2" in section


def test_evidence_of_a_measurement_names_its_key_once() -> None:
    """evidence_of() writes `key = value (source)` with the key already in the text; HTML and
    JUnit used to prefix the key again (`software.torch.version: software.torch.version = ...`)."""
    from pgdoctor.checks.base import evidence_of
    from pgdoctor.render.junit import render as junit_render

    ev = evidence_of(Measurement("software.torch.version", "2.13.0", source="importlib.metadata"))[0]
    assert ev.located() == "software.torch.version = 2.13.0 (importlib.metadata)"
    assert Evidence("NCCL_P2P_DISABLE=1", key="env.vars").located() == "env.vars: NCCL_P2P_DISABLE=1"
    assert Evidence("boom", key="k", file="rank0.log", line=7).located() == "rank0.log:7: boom"
    rep = live_report()
    html, junit = render(rep), io.StringIO()
    junit_render(rep, junit, False)
    for text in (html, junit.getvalue()):
        for key in {e.key for f in rep.findings for e in f.evidence if e.key}:
            assert f"{key}: {key}" not in text


def test_a_diagnosis_page_reads_like_the_console_root_cause_cascade_job_wide(tmp_path: Path) -> None:
    """The page attached to a ticket: Root cause first with its playbook open, the cascade grouped
    under it with theirs folded, the job-wide triage, each linked from the nav; no facts block
    saying root_cause: true."""

    from pgdoctor.diagnose.api import diagnose_paths
    from pgdoctor.render.html import render as render_html

    (tmp_path / "rank_0.log").write_text(
        "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, "
        "unhandled cuda error (run with NCCL_DEBUG=INFO for details)\n"
    )
    (tmp_path / "rank_1.log").write_text(
        "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
        "NVRM: Xid (PCI:0000:3b:00): 79, pid=1235, name=python, GPU has fallen off "
        "the bus.\n"
    )
    out = io.StringIO()
    render_html(diagnose_paths([str(tmp_path)]), out)
    page = out.getvalue()
    root, cascade, jobwide = (
        page.index('id="root-cause"'),
        page.index('id="cascade"'),
        page.index('id="jobwide"'),
    )
    assert root < cascade < jobwide
    assert page.index('data-code="RUN243"') < cascade < page.index('data-code="RUN244"') < jobwide
    assert "Cascade (2): consequences of <code>RUN243</code>" in page
    assert '<details class="playbook" open><summary>Playbook: <code>pgdoctor explain RUN243' in page
    assert '<details class="playbook"><summary>Playbook: <code>pgdoctor explain RUN244' in page
    assert "root_cause" not in page and "cascade_of" not in page
    nav = page[page.index("<nav>") : page.index("</nav>")]
    assert all(f'href="#{sid}"' in nav for sid in ("summary", "root-cause", "cascade", "jobwide"))
    assert 'id="results"' not in page  # no empty Checks and probes table
