"""--format html: one self-contained page to attach to a ticket or open on an air-gapped cluster.

No script, no external stylesheet, font or image: styles are inline, charts are inline SVG,
and a Content-Security-Policy forbids loading anything else, so the page looks the same
wherever it is opened. Sections: summary (the report's verdict, which is the exit code's, and one
line per area), the root cause with its playbook and its cascade grouped under it, the job-wide
triage of a diagnosis, other findings with their playbooks, a per-GPU table, bus bandwidth versus message size
from the collective sweep, and,
for repro runs, the per-rank timeline of `report.extra["trace_events"]`; then every check,
probe and measurement.
"""

from __future__ import annotations

import datetime
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any, Optional, TextIO

from pgdoctor import __version__
from pgdoctor.knowledge.areas import area_title
from pgdoctor.knowledge.jobwide_words import header as jobwide_header
from pgdoctor.knowledge.jobwide_words import lines as jobwide_lines
from pgdoctor.knowledge.readable import readable
from pgdoctor.knowledge.units import human_bytes
from pgdoctor.model import Finding, Measurement, Report, Severity, Unavailable, sorted_findings
from pgdoctor.render import report_areas
from pgdoctor.render.console import area_status
from pgdoctor.render.markdown import to_html
from pgdoctor.render.scaling import section as scaling_section
from pgdoctor.render.svg import bandwidth_plot, timeline
from pgdoctor.render.trace_svg import section as traces_section

# A repro trace can hold hundreds of thousands of ranges; past this the page gets slow to open,
# and the full trace is in trace.json for Perfetto anyway.
MAX_TIMELINE_EVENTS = 5000

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1100px;
padding:0 16px 40px;color:#1d1d1f}
h1{font-size:22px;margin:20px 0 4px}\
h2{font-size:18px;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}\
th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;
vertical-align:top}th{background:#f4f4f6}\
code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
pre{background:#f6f8fa;padding:8px;overflow-x:auto;white-space:pre-wrap}
.meta{color:#555}\
.badge{display:inline-block;border-radius:3px;padding:0 6px;color:#fff;font-weight:600;font-size:12px}
.fail{background:#c62828}.warn{background:#ef8f00}.info{background:#1565c0}.ok{background:#2e7d32}\
.none{background:#888}
.verdict{font-size:16px;font-weight:600}\
.finding{border:1px solid #ddd;border-left:6px solid #888;padding:6px 12px;
margin:12px 0}.finding.sev-fail{border-left-color:#c62828}.finding.sev-warn{border-left-color:#ef8f00}
.finding.sev-info{border-left-color:#1565c0}.finding h3{font-size:15px;margin:4px 0}
.unavailable{color:#999;font-style:italic}.bad{background:#fdecea}\
.playbook{background:#fcfcfd;border-top:1px dashed #ccc;
margin-top:8px}.cascade{margin-left:24px}.facts th{font-weight:600}\
.playbook h4{font-size:14px;margin:10px 0 2px}.url{color:#555}nav a{margin-right:12px}
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def _fmt(value: Any, unit: str = "") -> str:
    """A measurement value as HTML: unavailable values keep their reason, floats are rounded."""
    if isinstance(value, Unavailable):
        return f'<span class="unavailable">{escape(str(value))}</span>'
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, float):
        text = f"{value:.4g}" if math.isfinite(value) else str(value)
    elif isinstance(value, (dict, list)):
        text = readable(value, 160)
    else:
        text = str(value)
    return escape(text + (f" {unit}" if unit and not isinstance(value, (dict, list, bool)) else ""))


def _summary(report: Report) -> list[str]:
    counts = {s: sum(1 for f in report.findings if f.severity is s) for s in Severity}
    verdict = report.verdict  # the exit code's own verdict: the page cannot say otherwise
    cls = {"failed": "fail", "incomplete": "warn", "passed": "ok"}[verdict.status]
    parts = ", ".join(f"{n} {s.value}" for s, n in sorted(counts.items(), key=lambda kv: -kv[0].rank))
    out = [
        '<section id="summary"><h2>Summary</h2>',
        f'<p class="verdict" data-verdict="{verdict.status}"><span class="badge {cls}">{verdict.word}</span> '
        f"{escape(verdict.summary().split(': ', 1)[-1])}</p>",
        f'<p class="meta">findings: {escape(parts)}; exit code {verdict.exit_code}</p>',
    ]
    if report.incomplete_reasons:
        out.append(
            "<p>Incomplete:</p><ul>"
            + "".join(f"<li>{escape(r)}</li>" for r in report.incomplete_reasons)
            + "</ul>"
        )
    areas = report_areas(report)
    if areas:
        out.append("<table><tr><th>area</th><th>status</th><th>findings</th><th>detail</th></tr>")
        for area in areas:
            key, detail = area_status(area, report)
            label = {"ok": "ok", "info": "ok", "warn": "warn", "fail": "fail", "none": "not run"}[key]
            codes = sorted({f.code for f in report.findings if f.area == area})
            out.append(
                f'<tr><td>{escape(area_title(area))}</td><td><span class="badge {key}">{label}</span></td>'
                f"<td>{escape(', '.join(codes))}</td><td>{escape(detail)}</td></tr>"
            )
        out.append("</table>")
    out.append("</section>")
    return out


def _playbook(code: str) -> str:
    from pgdoctor.playbooks import PlaybookError, find

    try:
        pb = find(code)
    except (PlaybookError, OSError) as exc:
        return f'<p class="unavailable">playbook for {escape(code)} unreadable: {escape(str(exc))}</p>'
    if pb is None:
        return f'<p class="unavailable">no playbook for {escape(code)}</p>'
    return to_html(pb.body)


# Structure, shown by the page's layout (Root cause, Cascade), not repeated as a fact.
_STRUCTURE_FACTS = ("root_cause", "cascade_of")


def _facts(f: Finding) -> str:
    rows = [
        (k, v) for k, v in sorted(f.facts.items()) if k not in _STRUCTURE_FACTS and v not in (None, "", [])
    ]
    if not rows:
        return ""
    return (
        '<table class="facts">'
        + "".join(f"<tr><th>{escape(k)}</th><td>{_fmt(v)}</td></tr>" for k, v in rows)
        + "</table>"
    )


def _instance(f: Finding) -> str:
    scope = f' <span class="meta">({escape(f.scope.label())})</span>' if f.scope.label() else ""
    parts = [f"<li>{escape(f.message)}{scope}"]
    if f.evidence:
        parts.append("<pre>" + escape("\n".join(e.located() for e in f.evidence)) + "</pre>")
    parts.append(_facts(f))
    parts.append("</li>")
    return "".join(parts)


def _cards(findings: Sequence[Finding], playbook_open: bool = True, sort: bool = True) -> list[str]:
    """One card per code with every place it was seen, and its playbook once."""
    by_code: dict[str, list[Finding]] = defaultdict(list)
    for f in sorted_findings(findings) if sort else findings:
        by_code[f.code].append(f)
    out = []
    for code, group in by_code.items():
        f = group[0]
        sev = f.severity.value
        where = f" &middot; {len(group)} places" if len(group) > 1 else ""
        out.append(
            f'<article class="finding sev-{sev}" id="finding-{escape(code)}" data-code="{escape(code)}">'
        )
        out.append(
            f'<h3><span class="badge {sev}">{sev}</span> <code>{escape(code)}</code> {escape(f.title)}</h3>'
        )
        out.append(
            f'<p class="meta">{escape(f.slug)} &middot; {escape(f.category)} &middot; '
            f"{escape(area_title(f.area))}{where}</p>"
        )
        out.append("<ul>" + "".join(_instance(g) for g in group) + "</ul>")
        is_open = " open" if playbook_open and f.severity is not Severity.INFO else ""
        out.append(
            f'<details class="playbook"{is_open}><summary>Playbook: <code>pgdoctor explain {escape(code)}'
            f"</code></summary>{_playbook(code)}</details>"
        )
        out.append("</article>")
    return out


def _findings(report: Report) -> list[str]:
    """Root cause first with its playbook open, its cascade grouped under it (as the console
    prints them), the job-wide triage, then any other finding."""
    verdict = report.verdict
    out: list[str] = []
    rest = [f for f in report.findings if f is not verdict.root and f not in verdict.cascade]
    if verdict.root is not None:
        root = verdict.root
        out += ['<section id="root-cause"><h2>Root cause</h2>', *_cards([root])]
        if verdict.cascade:
            out.append(
                f'<section id="cascade" class="cascade"><h3>Cascade ({len(verdict.cascade)}): consequences '
                f"of "
                f"<code>{escape(root.code)}</code></h3>"
            )
            out += _cards(verdict.cascade, playbook_open=False, sort=False)
            out.append("</section>")
        out.append("</section>")
    out += _jobwide(report)
    if rest or verdict.root is None:
        title = "Other findings" if verdict.root is not None else "Findings"
        out.append(f'<section id="findings"><h2>{title}</h2>')
        out += _cards(rest) if rest else ["<p>No findings.</p>"]
        out.append("</section>")
    return out


def _jobwide(report: Report) -> list[str]:
    job = report.meta.get("jobwide")
    if not isinstance(job, Mapping) or not job.get("groups"):
        return []
    dumps = (report.meta.get("flight_recorder") or {}).get("dumps") or []
    dump_ranks = len({d.get("rank") for d in dumps if isinstance(d, Mapping)})
    root = report.verdict.root
    cls = {"warn": ' class="bad"', "fail": ' class="bad"', "dim": ' class="meta"'}
    out = ['<section id="jobwide"><h2>Job-wide</h2>', f"<p>{escape(jobwide_header(job, dump_ranks))}</p><ul>"]
    out += [
        f"<li{cls.get(style, '')}>{escape(text)}</li>"
        for style, text in jobwide_lines(job, root.scope.rank if root is not None else None)
    ]
    out.append("</ul></section>")
    return out


def _gpu_table(measurements: Sequence[Measurement], findings: Sequence[Finding]) -> list[str]:
    """Keys down, GPUs across: eight GPUs fit a page, forty keys would not. Per-link values
    (NVLink) stay in the measurement list below: one cell cannot hold eighteen links."""
    per_gpu = [m for m in measurements if m.scope.gpu_index is not None and m.scope.link is None]
    if not per_gpu:
        return []
    gpus = sorted({int(m.scope.gpu_index) for m in per_gpu if m.scope.gpu_index is not None})
    keys = list(dict.fromkeys(m.key for m in per_gpu))
    cell: dict[tuple[str, int], Measurement] = {}
    uuids: dict[int, str] = {}
    for m in per_gpu:
        idx = int(m.scope.gpu_index)  # type: ignore[arg-type]
        cell.setdefault((m.key, idx), m)
        if m.scope.gpu_uuid:
            uuids.setdefault(idx, m.scope.gpu_uuid)
    worst: dict[int, Severity] = {}
    for f in findings:
        if f.scope.gpu_index is not None:
            i = int(f.scope.gpu_index)
            if i not in worst or f.severity.rank > worst[i].rank:
                worst[i] = f.severity
    head = "".join(
        f'<th class="gpu">GPU {i}'
        + (f' <span class="badge {worst[i].value}">{worst[i].value}</span>' if i in worst else "")
        + (f"<br><code>{escape(uuids[i])}</code>" if i in uuids else "")
        + "</th>"
        for i in gpus
    )
    out = [
        '<section id="gpus"><h2>GPUs</h2>',
        f'<table class="gpu-table"><tr><th>measurement</th>{head}</tr>',
    ]
    for key in keys:
        cells = []
        for i in gpus:
            found = cell.get((key, i))
            cells.append("<td></td>" if found is None else f"<td>{_fmt(found.value, found.unit)}</td>")
        out.append(f"<tr><td><code>{escape(key)}</code></td>{''.join(cells)}</tr>")
    out.append("</table></section>")
    return out


def _finite(v: Any) -> Optional[float]:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def collective_rows(measurements: Sequence[Measurement]) -> list[dict[str, Any]]:
    """The sweep's rows (`collectives.<op>.<bytes>` = {op, bytes, busbw_gbps, ...}); anything
    else under `collectives.` (peaks, settings, problems) or a row missing a field is not a point."""
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    for m in measurements:
        v = m.value
        if not m.key.startswith("collectives.") or not isinstance(v, Mapping):
            continue
        op, nbytes, busbw = v.get("op"), _finite(v.get("bytes")), _finite(v.get("busbw_gbps"))
        if not isinstance(op, str) or not op or nbytes is None or nbytes <= 0 or busbw is None or busbw < 0:
            continue
        rows.setdefault((op, int(nbytes)), dict(v, bytes=int(nbytes), busbw_gbps=busbw))
    return [rows[k] for k in sorted(rows)]


def _collectives(measurements: Sequence[Measurement]) -> list[str]:
    rows = collective_rows(measurements)
    if not rows:
        return []
    series: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for r in rows:
        series[r["op"]].append((r["bytes"], r["busbw_gbps"]))
    meta = {
        m.key: m.value for m in measurements if m.key in ("collectives.backend", "collectives.world_size")
    }
    about = ", ".join(f"{k.split('.', 1)[1]} {v}" for k, v in meta.items() if not isinstance(v, Unavailable))
    out = ['<section id="collectives"><h2>Collectives: bus bandwidth versus message size</h2>']
    if about:
        out.append(f'<p class="meta">{escape(about)}; bus bandwidth as nccl-tests computes it</p>')
    out.append(bandwidth_plot(series))
    out.append(
        "<details><summary>Sweep rows</summary><table><tr><th>op</th><th>size</th><th>time (us)</th>"
        "<th>algbw (GB/s)</th><th>busbw (GB/s)</th><th>correct</th></tr>"
    )
    for r in rows:
        correct = r.get("correct")
        cls = ' class="bad"' if correct is False else ""
        out.append(
            f"<tr{cls}><td>{escape(r['op'])}</td><td>{escape(human_bytes(r['bytes']))}</td>"
            f"<td>{_fmt(r.get('time_us', ''))}</td><td>{_fmt(r.get('algbw_gbps', ''))}</td>"
            f"<td>{_fmt(r['busbw_gbps'])}</td><td>{_fmt(correct if correct is not None else '')}</td></tr>"
        )
    out.append("</table></details></section>")
    return out


def trace_events(extra: Mapping[str, Any]) -> tuple[list[dict[str, Any]], dict[Any, str]]:
    """Complete events and track names from `extra["trace_events"]`: a list of Chrome trace
    events, or a whole trace ({"traceEvents": [...]}). Malformed events are dropped."""
    raw = extra.get("trace_events")
    if isinstance(raw, Mapping):
        raw = raw.get("traceEvents")
    if not isinstance(raw, list):
        return [], {}
    events, names = [], {}
    for e in raw:
        if not isinstance(e, Mapping) or "pid" not in e:
            continue
        if e.get("ph") == "M" and e.get("name") == "process_name" and isinstance(e.get("args"), Mapping):
            names[e["pid"]] = str(e["args"].get("name", ""))
        ts, dur = _finite(e.get("ts")), _finite(e.get("dur"))
        if e.get("ph") == "X" and "name" in e and ts is not None and dur is not None and dur >= 0:
            tid = e.get("tid", 0)
            events.append(
                {
                    "name": str(e["name"]),
                    "ts": ts,
                    "dur": dur,
                    "pid": e["pid"],
                    "tid": tid if isinstance(tid, (int, str)) else str(tid),
                }
            )
    return events, names


def _timeline(report: Report) -> list[str]:
    events, names = trace_events(report.extra)
    if not events:
        return []
    total = len(events)
    events = sorted(events, key=lambda e: e["ts"])[:MAX_TIMELINE_EVENTS]
    ranks = len({e["pid"] for e in events})
    note = f" (the first {len(events)} of {total} ranges)" if total > len(events) else ""
    return [
        '<section id="timeline"><h2>Per-rank timeline</h2>',
        f'<p class="meta">{ranks} ranks, {len(events)} ranges{note}; hover a range for its duration.</p>',
        timeline(events, names),
        "</section>",
    ]


def _results(report: Report) -> list[str]:
    if not report.results_json():  # repro, bench scaling, diagnose: no checks or probes ran
        return []
    out = [
        '<section id="results"><h2>Checks and probes</h2><table><tr><th>kind</th><th>name</th><th>area</th>'
        "<th>status</th><th>reason</th><th>time (s)</th></tr>"
    ]
    for r in report.results_json():
        out.append(
            f"<tr><td>{escape(r['kind'])}</td><td>{escape(r['name'])}</td><td>{escape(r['area'])}</td>"
            f"<td>{escape(r['status'])}</td><td>{escape(r['reason'])}</td><td>{r['duration_s']:.3f}</td></tr>"
        )
    out.append("</table></section>")
    return out


def _measurements(measurements: Sequence[Measurement]) -> list[str]:
    if not measurements:
        return []
    out = [
        f'<section id="measurements"><h2>Measurements</h2><details><summary>All {len(measurements)} '
        "measurements</summary><table><tr><th>key</th><th>scope</th><th>value</th><th>source</th></tr>"
    ]
    for m in measurements:
        out.append(
            f"<tr><td><code>{escape(m.key)}</code></td><td>{escape(m.scope.label())}</td>"
            f"<td>{_fmt(m.value, m.unit)}</td><td>{escape(m.source)}</td></tr>"
        )
    out.append("</table></details></section>")
    return out


def render(report: Report, out: TextIO, color: bool = False) -> None:
    snap = report.snapshot
    host = snap.host if snap else str(report.meta.get("host", ""))
    measurements = list(snap.measurements()) if snap else []
    when = ""
    if snap:
        when = datetime.datetime.fromtimestamp(snap.time_unix, datetime.timezone.utc).strftime(
            "%Y-%m-%d %H:%M:%S UTC"
        )
    title = f"pgdoctor {report.command}" + (f" on {host}" if host else "")
    facts = [f"pgdoctor {__version__}"] + ([f"probed {when}", f"level {snap.level}"] if snap else [])
    if report.meta.get("from"):
        facts.append(f"replay of {report.meta['from']} (nothing probed now)")
    body = [f"<h1>{escape(title)}</h1>", f'<p class="meta">{" &middot; ".join(escape(f) for f in facts)}</p>']
    parts = [
        ("summary", "Summary", _summary(report)),
        ("findings", "Findings", _findings(report)),
        ("gpus", "GPUs", _gpu_table(measurements, report.findings)),
        ("collectives", "Collectives", _collectives(measurements)),
        ("timeline", "Timeline", _timeline(report)),
        ("scaling", "Scaling", scaling_section(report.extra)),
        ("traces", "Traces", traces_section(report.extra)),
        ("results", "Checks", _results(report)),
        ("measurements", "Measurements", _measurements(measurements)),
    ]
    sections = [line for _, _, lines in parts for line in lines]
    # One link per section the page has, the diagnosis's own (root cause, cascade, job-wide) included.
    labels = {
        "summary": "Summary",
        "root-cause": "Root cause",
        "cascade": "Cascade",
        "jobwide": "Job-wide",
        "findings": "Other findings" if report.verdict.root is not None else "Findings",
    }
    labels.update({sid: label for sid, label, _ in parts if sid not in labels})
    present = [sid for sid in labels if any(f'id="{sid}"' in line for line in sections)]
    body.append("<nav>" + "".join(f'<a href="#{sid}">{labels[sid]}</a>' for sid in present) + "</nav>")
    out.write('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n')
    out.write(f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n')
    out.write(f"<title>{escape(title)}</title>\n<style>{CSS}</style></head>\n<body>\n")
    out.write("\n".join(body + sections))
    out.write("\n</body></html>\n")
