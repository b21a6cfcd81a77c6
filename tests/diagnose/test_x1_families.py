"""An excerpt that stops inside a word of its decisive line (doctor/diagnose/text/cutline.py).

Measured over every released case the rules got right (3541; the decisive line is the one the first
warn/fail finding's evidence names): the log kept up to that line, the line cut after 40 / 60 / 80 % of its
length, in the middle of its middle word, or right after it; the case survives when its first finding keeps
the right class.

    cut           before   after (completion of the cut literal)
    40 %           992      1048
    60 %          1529      1600
    80 %          2053      2165
    mid-word      1276      1377   (of 3540)
    line's end    3365      3365

The gains by the code of the uncut reading (all cut points together): RUN171 34, RUN151 27, RUN201 24,
RUN202 23, RUN222 19, RUN101 19, RUN194 16, RUN191 15, RUN174 15, RUN303 13; no case lost its class at any
cut point, and no released case changed (s18 rows.py / cmp.py: fixed 0, broke 0: every released log holds
its decisive line whole). Healthy logs (tests/helpers/healthy_logs.py, every variant) and the released
decoys cut inside every word of every line: the only cuts that the completion turns into a finding are
those whose whole line, ending the log there, already gives that finding (a c10d connect retry, a
DeepSpeed banner: a log that stops at init).

What stays silent, on purpose: a cut at a word's end (a wrap), a cut that holds fewer than 12 characters or
less than half of the literal ("out o", "Segmentat"), a cut of a path or a name with no two words of a
message ("INFO:torch.distributed.distrib"), a cut two literals complete differently, and a row that wants
more than its literal (": ", a number, a quoted name), which a cut removes.
"""

from __future__ import annotations

import pytest

from pgdoctor.diagnose.api import diagnose_sources
from pgdoctor.diagnose.text import cutline


def _first(text: str) -> str | None:
    fs = [f for f in diagnose_sources([("paste", text)]) if f.severity.value in ("warn", "fail")]
    return fs[0].code if fs else None


_WATCHDOG = (
    "[E ProcessGroupNCCL.cpp:629] [Rank 6] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
)
CUT = [
    # (the excerpt, the code its whole line gives)
    (
        "RuntimeError: The connection to the C10d st",
        "RuntimeError: The connection to the C10d store has failed",
    ),
    (
        _WATCHDOG + "ran for 600043 milliseconds before timing o",
        _WATCHDOG + "ran for 600043 milliseconds before timing out.",
    ),
]


@pytest.mark.parametrize("cut,whole", CUT)
def test_a_cut_inside_the_literal_reads_as_the_whole_line(cut: str, whole: str) -> None:
    assert _first(whole) is not None
    assert _first("step 10 loss 2.31\n" + cut) == _first(whole)
    assert _first(cut + "\n") == _first(whole)


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: The connection to the C10d ",  # a word's end: a wrap, not a cut
        "RuntimeError: The connection to the C10d",
        # (a torch OOM line cut inside "out of memory", "CUDA error: out o", is read by the cut OOM row of
        # rules/memory_reports.py on its own: no other CUDA error starts so)
        "0: Fatal Python error: Segmentat",
        "INFO:torch.distributed.distrib",  # a path: in every healthy print of the module
        "[launch.py:318:sigkill_handler] Killing subpro",
        "x NCCL INFO transport/net",
        "INFO: reading the connection to the C10d st",  # no literal of a failure row ends the line so
    ],
)
def test_near_misses_stay_silent(text: str) -> None:
    assert _first(text) is None


def test_a_healthy_line_cut_at_the_same_point_stays_silent() -> None:
    # the same words, then a cut: only a literal of the catalogue is completed, and only where the line
    # holds at least half of it
    assert cutline.completion("INFO: The connection to the server st") is None
    assert _first("INFO: The connection to the server st") is None


def test_completion_rules() -> None:
    assert cutline.completion("RuntimeError: The connection to the C10d st") == "ore has failed"
    assert cutline.completion("RuntimeError: The connection to the C10d store") is None  # a word's end
    assert cutline.completion("") is None
    assert cutline.completion("The connection to the C10d st ") is None
