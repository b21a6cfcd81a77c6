"""Fuzzing the log parser: arbitrary bytes, invalid UTF-8, mangled real failure lines and a
100 MB line never crash it and always give well-formed findings."""

from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pgdoctor.diagnose.analyze import source_events
from pgdoctor.diagnose.api import diagnose_sources
from pgdoctor.diagnose.causality import assemble
from pgdoctor.diagnose.text.reader import Source
from pgdoctor.model import Finding
from tests.helpers.paths import FIXTURES

CORPUS_LINES = [
    ln for p in sorted((FIXTURES / "logs").glob("*.log")) for ln in p.read_bytes().splitlines() if ln.strip()
][:400]
VOCAB = [
    b"Error",
    b"rror",
    b"WARN",
    b"imeout",
    b"imed out",
    b"ut of memory",
    b"SIG",
    b"Kill",
    b"VRM: Xid (",
    b"xitcode",
    b"xception",
    b"Tried to allocate ",
    b"GiB",
    b" MiB",
    b"(GPU ",
    b"[rank",
    b"]: ",
    b"\r",
    b"\n",
    b"\x1b[31m",
    b"[0m",
    b"\\n",
    b"WorkNCCL(SeqNum=",
    b"ChildFailedError",
    b"  exitcode  : -9",
    b"\xff\xfe",
    b"Root Cause",
    b"Traceback (most recent call last):",
    b'  File "x.py", line 1, in f',
    b"\xc3(",
]


def _run(data: bytes, chunk: int) -> list[Finding]:
    src = Source("fuzz", lambda: (data[i : i + chunk] for i in range(0, len(data), chunk)))
    events, stats = source_events(src, 0)
    findings = assemble(events, {"fuzz": stats.lines})
    for f in findings:
        f.to_json()  # JSON-serialisable facts and evidence
        assert f.code.startswith("RUN") and f.category
    return findings


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(st.binary(max_size=4096), st.integers(min_value=1, max_value=5000))
def test_arbitrary_bytes_never_crash(data: bytes, chunk: int) -> None:
    _run(data, chunk)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(
    st.lists(
        st.one_of(st.sampled_from(VOCAB), st.sampled_from(CORPUS_LINES), st.binary(max_size=40)), max_size=120
    ),
    st.integers(min_value=1, max_value=300),
)
def test_mangled_failure_text_never_crashes(parts: list[bytes], chunk: int) -> None:
    _run(b"".join(parts), chunk)


@settings(max_examples=60, deadline=None, database=None)
@given(st.lists(st.sampled_from(CORPUS_LINES), max_size=60), st.randoms(use_true_random=False))
def test_truncated_and_shuffled_real_lines(lines: list[bytes], rnd) -> None:  # type: ignore[no-untyped-def]
    data = b"\n".join(lines)
    cut = rnd.randrange(len(data) + 1) if data else 0
    _run(data[:cut], 4096)


@given(st.text(max_size=2000))
@settings(max_examples=60, deadline=None, database=None)
def test_text_api_with_surrogates_and_odd_unicode(text: str) -> None:
    diagnose_sources([("t.log", text + "\ud800" + "RuntimeError: CUDA error: out of memory")])


def test_100mb_line_with_failures_inside_is_fast_and_bounded() -> None:
    line = (
        b"a" * (50 << 20)
        + b"[rank3]: RuntimeError: CUDA error: an illegal memory access was encountered "
        + b"\xff" * (50 << 20)
        + b"\nstep 2\n"
    )
    t = time.perf_counter()
    findings = _run(line, 8 << 20)
    assert time.perf_counter() - t < 30
    assert [f.code for f in findings] == ["RUN244"] and findings[0].evidence[0].line == 1
    assert len(findings[0].evidence[0].text) <= 600
