"""The shapes a known message is pasted in (tests/helpers/shapes.py) must not change its diagnosis.

Every dev case of the corpora (never a held-out file) is diagnosed plain and in a third of the shapes
(the shapes take every third case in turn, so each case meets 10 of the 30): of the cases right plain,
each shape keeps at least its floor, and no decoy becomes a finding in any shape it meets. Every case in
every shape took 159 s of the suite, halves about 50 CPU-s, thirds about 35; each third of every shape
was above its floor when the thirds were chosen (2026-12-07).
The floors are the figures benchmarks/bench_shapes.py printed when the text layer learned the
shapes (text/shapes.py, normalize.py), a little below, so that a regression of one shape shows.
"""

from __future__ import annotations

import urllib.parse
from typing import Optional

import pytest

from pgdoctor.diagnose.api import diagnose_sources
from pgdoctor.diagnose.text import shapes as text_shapes
from tests.diagnose.test_corpus import accepted
from tests.helpers.diagnosed import CORPUS_GROUP
from tests.helpers.shapes import SHAPES, dev_cases, top1

pytestmark = pytest.mark.xdist_group(CORPUS_GROUP)  # the plain answers are test_corpus's, on its worker

FLOOR = 0.985
# Shapes that lose more: the line breaks gone, a record glued to the next one; two shapes at once
# (a wrap inside a quote re-wraps lines the poster's terminal had wrapped already); see the benchmark.
FLOORS = {"flattened": 0.975, "wrap80+quote": 0.98, "wrap80+html": 0.98, "rank+json_lines": 0.98}

CASES = dev_cases()


@pytest.fixture(scope="module")
def plain_rights() -> dict[str, bool]:
    return {c["id"]: top1(c["log"], c["id"], released=True) in accepted(c) for c in CASES}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_third_of_the_dev_cases_keep_their_class(shape: str, plain_rights: dict[str, bool]) -> None:
    render = SHAPES[shape]
    third = CASES[sorted(SHAPES).index(shape) % 3 :: 3]
    lost: list[str] = []
    decoys_lost: list[str] = []
    right = 0
    for c in third:
        if not plain_rights[c["id"]]:
            continue
        shaped = render(c["log"])
        got = top1(shaped, c["id"], released=shaped == c["log"])  # a shape that left it as it was
        if got in accepted(c):
            right += 1
            continue
        lost.append(f"{c['id']} -> {got}")
        if c["category"] == "other_ambiguous":
            decoys_lost.append(c["id"])
    kept = right / sum(plain_rights[c["id"]] for c in third)
    assert not decoys_lost, f"{shape}: decoys that became findings: {decoys_lost}"
    assert kept >= FLOORS.get(shape, FLOOR), f"{shape}: kept {kept:.1%}; lost {lost}"


def _root(text: str) -> tuple[Optional[str], int]:
    findings = diagnose_sources([("paste.log", text)])
    real = [f for f in findings if f.severity.value in ("warn", "fail")]
    return (real[0].code, real[0].evidence[0].line) if real else (None, 0)


OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB. GPU 0 has a total capacity of "
    "14.75 GiB of which 1.66 GiB is free."
)


@pytest.mark.parametrize(
    "line",
    [
        "https://www.google.com/search?q=" + urllib.parse.quote_plus(OOM) + "&hl=en",
        urllib.parse.quote(OOM),
        OOM.replace(" ", "\u00a0"),
        '{"level": "error", "ts": 1714557600.1, "msg": "' + OOM + '"}',
        "RuntimeError(" + repr("Traceback (most recent call last):\n  File 'x.py', line 3\n" + OOM) + ")",
    ],
)
def test_an_encoded_line_is_read_and_its_evidence_keeps_its_line_number(line: str) -> None:
    text = "loading shards\nstep 1 loss 2.0\n" + line + "\nstep 2 loss 1.9\n"
    assert _root(text) == ("RUN101", 3)


def test_html_escaped_nccl_warn_keeps_its_arrow_and_quotes() -> None:
    text = (
        "node1:123:456 [0] misc/socket.cc:484 NCCL WARN Net : Connection closed by remote peer "
        "node2&lt;43210&gt;\nnode1:123:456 [0] NCCL INFO transport/net_socket.cc:473 -&gt; 6\n"
        "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, remote process exited or there was a "
        "network error, NCCL version 2.18.1\nncclRemoteError: A call failed possibly due to a network "
        "error or a remote process exiting prematurely.\nLast error:\nNet : Connection closed by remote "
        "peer node2&lt;43210&gt;\n"
    )
    plain = _root(text.replace("&lt;", "<").replace("&gt;", ">"))
    assert plain[0] is not None and _root(text) == plain


def test_a_wrapped_line_cut_after_a_blank_is_joined_with_it() -> None:
    text = (
        "host:1:2 [0] enqueue.cc:1085 NCCL WARN Cuda failure ".rjust(80, " ")
        + "\n'out of memory'\nRuntimeError: NCCL error: unhandled cuda error\n"
    )
    assert _root(text)[0] == "RUN101"


@pytest.mark.parametrize(
    "line",
    [
        " 45%|####5     | 45/100 [00:10<00:12,  4.50it/s]",
        "loss 0.5%, lr 3e-4, grad 100%",
        "see https://example.com/a%20b for details",  # one escape: not an encoded line
        '{"step": 10, "loss": 1.5}',
        "AT&T Bell Labs & co;",
        '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}",  # deeper than the JSON parser recurses
        "RuntimeError: boom, see https://github.com/search?q=nccl+boom for the thread",
    ],
)
def test_lines_in_no_encoded_shape_are_left_as_they_are(line: str) -> None:
    assert text_shapes.decode(line) == line


def test_decode_undoes_each_encoding() -> None:
    assert text_shapes.decode("a%20b%3A%20c") == "a b: c"
    assert text_shapes.decode("Error%3A+CUDA+out%0Aof") == "Error: CUDA out\nof"
    assert text_shapes.decode("-&gt; 2 &quot;x&quot; &#39;y&#39;") == "-> 2 \"x\" 'y'"
    assert text_shapes.decode("it\u2019s\u00a0a\u200btest") == "it's atest"
    # one link alone on its line, however many parameters it has; a long one is read in one pass
    assert text_shapes.decode("<https://x.org/s?type=1&q=NCCL+WARN%3A+x&p=2>") == "NCCL WARN: x"
    assert text_shapes.decode("https://x.org/s?" + "&a=b" * 20000 + "&q=a%20b") == "a b"
    nested = '{"message": {"message": "RuntimeError: boom", "extraInfo": {"py_callstack": "Traceback"}}}'
    assert text_shapes.decode(nested) == "RuntimeError: boom\nTraceback"


@pytest.mark.parametrize(
    ("glued", "code"),
    [
        ("多机多卡微调报错ncclInternalError", "RUN192"),  # a real title (v12h), the error glued to the words
        ("训练时报错RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB", "RUN101"),
        ("多机多卡训练报错 localhost: ssh: connect to host localhost port 22: Connection refused", "RUN303"),
    ],
)
def test_a_message_glued_to_chinese_words_is_read_as_the_message(glued: str, code: str) -> None:
    assert _root(glued)[0] == code


@pytest.mark.parametrize(
    ("title", "code"),
    [
        ("[Bug]: Killed", "RUN121"),
        ("[BUG] KeyError: 'RANK'", "RUN224"),
        ("[Usage]: RuntimeError: Socket Timeout", "RUN222"),
        ("Bug: torch.distributed.elastic.rendezvous.api.RendezvousClosedError", "RUN221"),
    ],
)
def test_an_issue_titles_tag_before_the_message_is_read_as_a_prefix(title: str, code: str) -> None:
    # rows that read a message from the line's start ("Killed" alone, "KeyError: 'RANK'") lost it behind
    # the tag: 26 of 2184 right cases, with "[Bug]: " before their evidence line alone
    assert _root(title)[0] == code
