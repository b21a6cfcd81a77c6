"""Caps never change the answer silently (issue class "silent truncation"): a log that repeats a
warning 100,500 times and then runs out of GPU memory names the OOM; past the cap of windows read
every new kind of line is still read, the rest is counted, and the report says so. The sequential
and the multi-process scanner cut the same windows and count the same, with either search engine.

The NCCL WARN lines are NCCL's own format (`host:pid:tid [dev] file:line NCCL WARN ...`)."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest

from pgdoctor.diagnose.api import diagnose_paths
from pgdoctor.diagnose.render import render
from pgdoctor.diagnose.text import budget, engine, scan
from pgdoctor.diagnose.text.parallel import scan_file

WARN = (
    "node-a:4021:{tid} [3] misc/socket.cc:49 NCCL WARN socketProgress: "
    "Connection closed by remote peer node-b<{port}>\n"
)
OOM = (
    "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total "
    "capacity "
    "of 79.15 GiB of which 1.00 GiB is free.\n"
)


def test_100500_nccl_warnings_then_an_oom_name_the_oom_and_count_every_warning(tmp_path: Path) -> None:
    # eight NCCL threads repeat the same warning: 100,500 lines, then the OOM that caused it all
    block = "".join(WARN.format(tid=4090 + t, port=41234) for t in range(8))
    log = tmp_path / "rank3.log"
    log.write_text(
        block * (100_500 // 8) + block[: len(WARN.format(tid=4090, port=41234)) * (100_500 % 8)] + OOM
    )
    rep = diagnose_paths([str(log)])
    codes = [f.code for f in rep.findings]
    assert codes[0] == "RUN101" and rep.findings[0].scope.rank == 3, codes
    warn = next(f for f in rep.findings if f.code == "RUN174")
    assert warn.facts["occurrences"] == 100_500  # counted, not read
    src = rep.meta["sources"][0]
    assert src["repeated_lines_counted"] == 100_500 - 8 * budget.REPEAT_READS
    assert src["hits"] == 8 * budget.REPEAT_READS + 1


def test_past_the_cap_new_kinds_are_read_and_the_report_says_what_was_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan, "MAX_HITS_PER_SOURCE", 50)
    lines = [WARN.format(tid=4090, port=40000 + i) for i in range(500)]  # 500 lines differing in a number
    lines.append("[rank1]: RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error\n")
    lines.append(OOM)
    log = tmp_path / "capped.log"
    log.write_text("".join(lines))
    rep = diagnose_paths([str(log)])
    codes = [f.code for f in rep.findings]
    assert {"RUN101", "RUN171"} <= set(codes), codes  # both kinds after the cap were read
    src = rep.meta["sources"][0]
    assert (src["cap_reads"], src["cap_line"], src["past_cap_read"], src["past_cap_counted"]) == (
        50,
        51,
        2,
        450,
    )
    assert rep.meta["notes"] and "50 hit lines were read in full by line 51" in rep.meta["notes"][0]
    out = io.StringIO()
    render(rep, out)
    assert "note: " in out.getvalue() and "450 repeating a kind already read were counted" in out.getvalue()


def _random_log(rnd: random.Random, giant: bool) -> bytes:
    lines = []
    for i in range(rnd.randrange(50, 800)):
        k = rnd.random()
        if k < 0.1:
            lines.append(b"")
        elif k < 0.25:
            lines.append(b"x" * rnd.randrange(1, 3000))
        elif giant and k < 0.265:  # 1.5 % of the lines: each crosses dozens of chunks and every cut
            lines.append(b"y" * rnd.randrange(1, 70000) + b" Error here " + b"z" * rnd.randrange(1, 150000))
        elif k < 0.45:
            lines.append(
                b"[rank%d]: RuntimeError: boom %d" % (i % 4, i % 7)
            )  # repeats, and kinds past the cap
        elif k < 0.5:
            lines.append(b"val_error %d" % i)
        elif k < 0.6:
            lines.append(b"10:41:%02d.%06d NCCL WARN socket closed" % (i % 60, i))  # repeats but for the time
        else:
            lines.append(b"info line %d" % i)
    return b"\n".join(lines) + (b"\n" if rnd.random() < 0.5 else b"")


def _scan(chunks: list[bytes]) -> tuple[list[scan.Window], dict[str, int], dict[int, int]]:
    st = scan.ScanStats()
    wins = list(scan.scan_chunks(iter(chunks), st))
    return wins, {**st.budget.summary(), "hits": st.hits, "lines": st.lines}, st.budget.repeats_of


@pytest.mark.parametrize("engine_name", ["re", "auto"])
def test_windows_and_counts_do_not_depend_on_chunking_processes_or_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine_name: str
) -> None:
    """Giant lines, repeats and a lowered cap included: every chunk size, 2 or 3 worker processes
    and both engines give the same windows, line numbers and counts."""
    monkeypatch.setenv("PGDOCTOR_SCAN_ENGINE", engine_name)
    monkeypatch.setattr(scan, "MAX_HITS_PER_SOURCE", 40)
    rnd = random.Random(11)
    # Two trials (a plain and a giant-line log) cover every path; the pure-re engine is 3x slower than
    # Hyperscan on the giant lines, so it runs those two only (the suite must stay under 10 minutes).
    for trial in range(2 if engine_name == "re" else 4):
        data = _random_log(rnd, giant=trial % 2 == 1)
        expect = _scan([data])
        for size in (1 << 12, 1 << 17):
            assert _scan([data[i : i + size] for i in range(0, len(data), size)]) == expect, (trial, size)
        path = tmp_path / f"t{trial}.log"
        path.write_bytes(data)
        for workers in (2, 3)[: 1 + trial % 2]:
            st = scan.ScanStats()
            wins = list(scan_file(str(path), workers, st))
            assert (
                wins,
                {**st.budget.summary(), "hits": st.hits, "lines": st.lines},
                st.budget.repeats_of,
            ) == expect


def _needs_hyperscan() -> None:
    # Skipped only where the module is missing: a pattern libhs refuses (WORTH once outgrew its 16,000-byte
    # limit for one expression) is a failure, not a skip.
    pytest.importorskip("hyperscan", reason="hyperscan is not installed: the re engine is the only one")


def test_worth_splits_into_its_alternatives_at_the_top_level_only() -> None:
    alts = engine.top_level_alternatives(rb"a|(b|c)|[|]|\||[]|]|x(?:y|z)")
    assert alts == [b"a", b"(b|c)", b"[|]", rb"\|", b"[]|]", b"x(?:y|z)"]
    assert b"|".join(engine.top_level_alternatives(scan.WORTH.pattern)) == scan.WORTH.pattern
    assert all(len(e) <= 8000 for e in engine._hs_expressions(scan.WORTH.pattern))


def test_hyperscan_and_re_find_the_same_first_anchor_of_every_line() -> None:
    hs = engine._hyperscan_finder(scan.ANCHORS)
    if hs is None:
        pytest.skip("hyperscan is not installed: the re engine is the only one")
    slow = engine._re_finder(scan.ANCHORS)
    rnd = random.Random(3)
    words = [a.decode() for a in scan.ANCHORS] + ["rrorror", "x", " ", "\n", "WARNWARN", "imeoutimeout"]
    for _ in range(200):
        buf = "".join(rnd.choice(words) for _ in range(rnd.randrange(0, 400))).encode()
        start = rnd.randrange(0, len(buf) + 1)

        def firsts(found: list[int], buf: bytes = buf) -> dict[int, int]:
            out: dict[int, int] = {}
            for p in found:
                out.setdefault(buf.rfind(b"\n", 0, p), p)
            return out

        assert firsts(hs(buf, start, len(buf))) == firsts(slow(buf, start, len(buf)))


def test_hyperscan_and_re_agree_whether_a_whole_line_is_worth_a_window() -> None:
    """WORTH on whole lines by both engines: its words at line edges (\\b against the newline),
    inside words ("val_error"), glued ("ErrorError"), the c10d record and the NCCL return chain."""
    _needs_hyperscan()
    hs = engine._hyperscan_line_test(scan.WORTH.pattern)
    assert hs is not None, "hyperscan is installed but did not compile WORTH: every scan falls back to re"
    rnd = random.Random(5)
    words = [
        "Error",
        "error",
        "val_error",
        "xerror",
        "Exception",
        "exception",
        "Interrupt",
        "NCCL WARN",
        "Timed out",
        "timed out",
        "timeout",
        "timeouts",
        "Timeout",
        "SIGKILL",
        "SIGAB",
        "Kill",
        "NVRM",
        "errno: 9",
        "errno:x",
        "ERROR",
        "ERRORS",
        "[c10d]",
        " failed",
        "transport/net.cc:515 -> 2",
        ".h:9 -> 8",
        "_",
        "x",
        " ",
        ":",
        "Virtual Memory:",
        "atchdog",
        "GPU is lost",
        "version mismatch",
        "#3  0x00007f3a in ",  # a gdb frame: WORTH's "^#" alternative, at the line's start or not
        "#0 ",
    ]
    slow = engine._re_line_test(scan.WORTH)  # what the `re` engine and the first lines use
    for _ in range(3000):
        lines = ["".join(rnd.choice(words) for _ in range(rnd.randrange(0, 6))) for _ in range(3)]
        buf = "\n".join(lines).encode()
        start = len(lines[0]) + 1
        end = start + len(lines[1])
        assert hs(buf, start, end) == slow(buf, start, end), lines[1]


def test_the_line_test_switching_to_hyperscan_midway_changes_no_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`re` answers the first lines and Hyperscan the rest (its compile is a third of a CLI run on
    a pasted log): with the switch after 5 lines, the windows equal those of `re` alone."""
    _needs_hyperscan()
    assert engine._hyperscan_line_test(scan.WORTH.pattern) is not None
    data = _random_log(random.Random(17), giant=False) + b"\n#3  0x00007f3a in c10d::WorkNCCL::wait()\n"
    monkeypatch.setenv("PGDOCTOR_SCAN_ENGINE", "re")
    expect = _scan([data])
    monkeypatch.setenv("PGDOCTOR_SCAN_ENGINE", "auto")
    monkeypatch.setattr(engine, "HYPERSCAN_LINE_TEST_AFTER", 5)
    monkeypatch.setattr(engine, "_CHOSEN", {})
    assert _scan([data]) == expect
    assert engine.line_test(scan.WORTH)[0] == "hyperscan"


def test_a_caseless_finder_finds_the_anchors_in_any_casing_in_both_engines() -> None:
    slow = engine._re_finder(scan.ANCHORS, caseless=True)
    line = b"runtimeerror: nccl error in: processgroupnccl.cpp:1191, unhandled system error\n"
    found = slow(line, 0, len(line))
    assert found and found == sorted(found)
    assert engine._re_finder(scan.ANCHORS)(line, 0, len(line)) != found  # as printed, fewer anchors match
    hs = engine._hyperscan_finder(scan.ANCHORS, caseless=True)
    if hs is not None:
        assert hs(line, 0, len(line))[:1] == found[:1]
