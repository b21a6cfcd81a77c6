"""One redactor for every text that leaves the process, one console sink for every console line:
a secret or a terminal control sequence planted in any field of a report (finding message, facts,
evidence, metadata such as skipped-file notes and the job-wide earliest failure, extra such as
traces, incomplete reasons, a snapshot's measurement) reaches no output format, and the console
sink lets only pgdoctor's own colours through."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pgdoctor.cli.sink import ConsoleSink
from pgdoctor.model import Evidence, Finding, Measurement, ProbeResult, Report, Severity, Snapshot, Status
from pgdoctor.model.redact import console_safe
from pgdoctor.render import FORMATS, get_renderer

SECRET = "zq9SECRETvalue7731"
SHAPES = [
    "HF_TOKEN: {s}",
    "aws_secret_access_key = {s}",
    'os.environ["WANDB_API_KEY"] = "{s}"',
    "redis://:{s}@host:6379",
    "TORCHELASTIC_RDZV_ENDPOINT=etcd://root:{s}@10.0.0.5:2379",
    "MASTER_ADDR=admin:{s}@node1",
    "https://s3.example.com/x?X-Amz-Signature={s}&a=1",
    "Authorization: Bearer {s}",
    "--hf_token {s}",
    "client_secret: '{s}'",
    "hf_{s}abcdefghijklmnop",
]
CONTROLS = ["\x1b]0;PWNED\x07", "\x1b[2J", "\x1b[H", "\r", "\x9b2J", "\x07", "\x1b[1A\x1b[K", "\x1bc"]
FIELDS = [
    "message",
    "fact",
    "evidence",
    "evidence_file",
    "meta_skipped",
    "meta_jobwide",
    "meta_source",
    "extra",
    "incomplete",
    "measurement",
]


def _report(field: str, text: str) -> Report:
    def pick(name: str, default: str) -> str:
        return text if field == name else default

    m = Measurement("proc.cmdline", pick("measurement", "python train.py"))
    snap = Snapshot("h", 0.0, "0", "quick", (ProbeResult("p", "host", Status.PASSED, measurements=(m,)),))
    f = Finding(
        "RUN101",
        "cuda-oom",
        Severity.FAIL,
        "oom",
        "CUDA OOM",
        pick("message", "out of memory"),
        "run",
        evidence=(Evidence(pick("evidence", "line"), file=pick("evidence_file", "r0.log"), line=3),),
        facts={"ranks": [0, 1], "note": pick("fact", "x")},
    )
    meta: dict[str, Any] = {
        "sources": [{"name": pick("meta_source", "r0.log"), "bytes": 10, "lines": 3, "hits": 1}],
        "skipped_unreadable_files": [pick("meta_skipped", "p.log: a FIFO")],
        "jobwide": {
            "ranks": 2,
            "rank_span": "0-1",
            "groups": [],
            "earliest": {
                "rank": 0,
                "time": "12:00",
                "signature": pick("meta_jobwide", "OOM"),
                "where": pick("meta_jobwide", "a:3"),
            },
        },
    }
    extra = {"traces": {"ranks": {}, "skipped": [pick("extra", "t.json: empty")]}}
    return Report(
        "diagnose",
        snap,
        (f,),
        meta=meta,
        extra=extra,
        incomplete_reasons=(pick("incomplete", "none"),) if field == "incomplete" else (),
    )


def _renderers() -> list[tuple[str, Any]]:
    from pgdoctor.diagnose.render import render as diagnose_console

    return [(fmt, get_renderer(fmt)) for fmt in FORMATS] + [("diagnose-console", diagnose_console)]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(FIELDS), st.sampled_from(SHAPES), st.sampled_from(CONTROLS))
def test_no_secret_and_no_terminal_control_in_any_format_from_any_field(
    field: str, shape: str, ctl: str
) -> None:
    text = f"a{ctl}b " + shape.format(s=SECRET)
    report = _report(field, text)
    for fmt, render in _renderers():
        out = io.StringIO()
        render(report, out, False)
        got = out.getvalue()
        assert SECRET not in got, (fmt, field, shape)
        if fmt in ("console", "diagnose-console", "prometheus"):  # text read on a terminal
            assert ctl not in got or (ctl == "\r" and "\r\x1b[K" in got), (fmt, field, repr(ctl))
    assert SECRET not in report.snapshot.dumps() if report.snapshot else True


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x200), max_size=60))
def test_the_console_sink_keeps_only_text_and_our_own_colours(text: str) -> None:
    out = io.StringIO()
    sink = ConsoleSink(out)
    sink.write(text)
    got = out.getvalue()
    stripped = got.replace("\r\x1b[K", "")
    import re

    stripped = re.sub(r"\x1b\[[0-9;]*m", "", stripped)
    assert all(
        c in "\n\t" or c.isprintable() or not (ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0) for c in stripped
    ), repr(got)
    assert console_safe("\x1b[31mred\x1b[0m") == "\x1b[31mred\x1b[0m"
    assert console_safe("x\x1b]0;t\x07") == "x\\x1b]0;t\\x07"


def test_a_file_name_cannot_drive_the_terminal_through_the_cli(tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (job / "r\x1b]0;PWNED\x07\x1b[2J.log").write_text(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
    )
    os.mkfifo(job / "p\x1b[2J.log")
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    for argv in (["diagnose", str(job)], ["diagnose", str(tmp_path / "no\x1b[2Jsuch")]):
        p = subprocess.run(
            [sys.executable, "-m", "pgdoctor", *argv],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            env=env,
        )
        assert "\x1b" not in p.stdout + p.stderr and "\x07" not in p.stdout + p.stderr, (p.stdout, p.stderr)


@pytest.mark.parametrize("argv", [["collect", "-o", "-"], ["check", "--json"]])
def test_collect_and_check_json_mask_knob_values_and_endpoints(argv: list[str]) -> None:
    env = {
        **os.environ,
        "TORCHELASTIC_RDZV_ENDPOINT": f"root:{SECRET}@10.0.0.5:2379",
        "MASTER_ADDR": f"admin:{SECRET}@node1",
        "NCCL_DEBUG_FILE": f"/tmp/x?token={SECRET}",
        "PGDOCTOR_NOTE": f"HF_TOKEN: {SECRET}",
    }
    p = subprocess.run(
        [sys.executable, "-m", "pgdoctor", *argv, "--level", "quick", "--only", "launch,knobs"],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    assert p.returncode in (0, 1), p.stderr[-2000:]
    assert SECRET not in p.stdout + p.stderr
