"""The shapes in which users paste a log, as functions: each re-renders a log's text the way a
tool, a terminal or a forum would have shown it (URL-encoded in a search link, HTML-escaped by a
web page, hard-wrapped at 80 columns, one JSON string, a prefix on every line, colours, CRLF, ...).

Used by tests/diagnose/test_paste_shapes.py and benchmarks/bench_shapes.py to measure whether a
diagnosis survives the shape: every dev case of the corpora is rendered in each shape and must get
the same class it gets plain. The renderings are mechanical and deterministic (no randomness), so
a figure is reproducible.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Callable
from typing import Any, Optional

from pgdoctor.diagnose.api import diagnose_sources
from tests.helpers.diagnosed import diagnosed
from tests.helpers.paths import FIXTURES

CORPUS = FIXTURES / "corpus"
# The dev corpora: read while rules were written. A held-out file is never among them.
DEV = [
    CORPUS / "real_logs_v1.jsonl",
    CORPUS / "real_logs_v2.jsonl",
    *sorted((CORPUS / "new").glob("*.jsonl")),
    CORPUS / "v3" / "dev.jsonl",
    CORPUS / "v3" / "dev2.jsonl",
]


def dev_cases(every: int = 1) -> list[dict[str, Any]]:
    """The dev cases of every dev corpus (every `every`-th one)."""
    out = []
    for path in DEV:
        assert "heldout" not in path.name
        out += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return out[::every]


def top1(log: str, name: str, released: bool = False) -> Optional[str]:
    """The category of the first warn or fail finding, as the corpus scorer reads it. `released`: the
    log is a corpus case's own text, whose answer is kept for the worker (tests/helpers/diagnosed.py)."""
    findings = diagnosed(name, log) if released else diagnose_sources([(name, log)])
    real = [f for f in findings if f.severity.value in ("warn", "fail")]
    return real[0].category if real else None


def _per_line(fn: Callable[[int, str], str]) -> Callable[[str], str]:
    def render(log: str) -> str:
        return "\n".join(fn(i, line) for i, line in enumerate(log.split("\n")))

    return render


def url_lines(log: str) -> str:
    """Each line percent-encoded (%20, %3A, %27 ...), the line breaks kept: a paste of an
    encoded query string line by line."""
    return "\n".join(urllib.parse.quote(line, safe="") for line in log.split("\n"))


def url_query(log: str) -> str:
    """The whole log as the query of a search link: '+' for spaces, %0A for line breaks, on one line."""
    return "https://github.com/search?type=issues&q=" + urllib.parse.quote_plus(log)


def html_escaped(log: str) -> str:
    """As a web page's source or a mail client shows it: &amp; &lt; &gt; &quot; &#39;."""
    return (
        log.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#39;")
    )


def _hard_wrap(width: int) -> Callable[[str], str]:
    def render(log: str) -> str:
        out = []
        for line in log.split("\n"):
            while len(line) > width:
                out.append(line[:width])
                line = line[width:]
            out.append(line)
        return "\n".join(out)

    render.__doc__ = f"Hard-wrapped by a terminal {width} columns wide: words and numbers cut anywhere."
    return render


wrap80 = _hard_wrap(80)
wrap120 = _hard_wrap(120)


def json_value(log: str) -> str:
    """The whole log as one JSON string value on one line (\\n, \\", \\t escaped), as an elastic
    error file or a structured logger writes it."""
    return json.dumps({"level": "error", "message": log})


def json_lines(log: str) -> str:
    """One JSON record per line, as Ray's or a log shipper's structured logs."""
    return "\n".join(
        json.dumps({"ts": f"2024-05-01T10:00:00.{i * 37 % 1000000:06d}Z", "msg": line})
        for i, line in enumerate(log.split("\n"))
    )


def python_repr(log: str) -> str:
    """A wrapper exception that quotes the original's text with repr(): escaped quotes and \\n."""
    return f"ray.exceptions.RayTaskError: RuntimeError({log!r})"


def flattened(log: str) -> str:
    """The line breaks lost: every record glued on one line with spaces."""
    return " ".join(line for line in log.split("\n"))


def quoted(log: str) -> str:
    """A markdown quote: '> ' before every line."""
    return "\n".join("> " + line for line in log.split("\n"))


def fenced(log: str) -> str:
    """A markdown code fence around the log."""
    return "```text\n" + log + "\n```"


rank_prefix = _per_line(lambda i, line: f"[rank3]: {line}")
default_prefix = _per_line(lambda i, line: f"[default0]:{line}")
ray_prefix = _per_line(lambda i, line: f"(RayWorkerWrapper pid=48213, ip=10.0.0.7) {line}")
host_prefix = _per_line(lambda i, line: f"gpu004: {line}")
srun_prefix = _per_line(lambda i, line: f"238: {line}")
# docker-compose v1's service tag; journalctl's line of a program; SageMaker's MPI launcher's tag.
compose_prefix = _per_line(lambda i, line: f"trainer_1  | {line}")
journald_prefix = _per_line(lambda i, line: f"Dec 04 12:00:{i % 60:02d} gpu-node-3 python3[41234]: {line}")
sagemaker_prefix = _per_line(lambda i, line: f"[1,mpirank:3,algo-2]<stderr>:{line}")
time_prefix = _per_line(lambda i, line: f"2024-05-01T10:00:00.{i * 37 % 1000000:06d}Z {line}")
kubectl_prefix = _per_line(lambda i, line: f"[pod/trainer-worker-0/pytorch] {line}")


def ansi(log: str) -> str:
    """Colours of a logger that paints each level: every line red, bold words, reset at the end."""
    return "\n".join(f"\x1b[1;31m{line}\x1b[0m" if line else line for line in log.split("\n"))


def crlf(log: str) -> str:
    return log.replace("\n", "\r\n")


def tqdm(log: str) -> str:
    """A progress bar redrawn with carriage returns on the same line before the log goes on."""
    bar = "".join(
        f"\r{p:3d}%|{'#' * (p // 10):10s}| {p}/100 [00:{p // 4:02d}<00:25, 4.1it/s]" for p in (5, 6, 7)
    )
    return bar + "\r" + log


def nbsp(log: str) -> str:
    """Every space a non-breaking space, as a copy from a rendered web page gives it."""
    return log.replace(" ", "\u00a0")


def cjk_glued(log: str) -> str:
    """A Chinese writer's words glued before the paste's first line, no space between ("多机多卡训练报错
    RuntimeError: ..." without the space), as issue titles and bodies of the Chinese ecosystem write it."""
    lines = log.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None:
        lines[first] = "多机多卡训练报错" + lines[first].lstrip()
    return "\n".join(lines)


def actions_links(log: str) -> str:
    """A GitHub Actions log copied from its web viewer into an issue: the viewer's line anchors wrapped
    around digits of the text as Markdown links ("23[57](https://github.com/o/r/runs/7454288162?
    check_suite_focus=true#step:6:58) Killed"), on the first number of every line."""
    out = []
    for k, line in enumerate(log.split("\n")):
        link = f"(https://github.com/o/r/runs/7454288162?check_suite_focus=true#step:6:{k + 1})"
        out.append(re.sub(r"(\d)(\d)(?!\d)", rf"\1[\2]{link}", line, count=1))
    return "\n".join(out)


SHAPES: dict[str, Callable[[str], str]] = {
    "actions_links": actions_links,
    "url_lines": url_lines,
    "url_query": url_query,
    "html": html_escaped,
    "wrap80": wrap80,
    "wrap120": wrap120,
    "json_value": json_value,
    "json_lines": json_lines,
    "repr": python_repr,
    "flattened": flattened,
    "quote": quoted,
    "fence": fenced,
    "rank": rank_prefix,
    "default": default_prefix,
    "ray": ray_prefix,
    "host": host_prefix,
    "srun": srun_prefix,
    "compose": compose_prefix,
    "journald": journald_prefix,
    "sagemaker": sagemaker_prefix,
    "timestamp": time_prefix,
    "kubectl": kubectl_prefix,
    "ansi": ansi,
    "crlf": crlf,
    "tqdm": tqdm,
    "nbsp": nbsp,
    "cjk_glued": cjk_glued,
    # two at once, in the order they happen: the terminal cuts, then the page quotes or escapes
    "wrap80+quote": lambda log: quoted(wrap80(log)),
    "wrap80+html": lambda log: html_escaped(wrap80(log)),
    "rank+json_lines": lambda log: json_lines(rank_prefix(log)),
}
