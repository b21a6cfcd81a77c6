"""model/lazy_re: patterns compiled at first use, a process-wide caseless reading, tables found by a captured
word in any casing."""

from __future__ import annotations

import re

import pytest

from pgdoctor.model import lazy_re


def test_a_deferred_pattern_matches_caselessly_only_inside_the_block() -> None:
    rx = lazy_re.compile(r"Watchdog caught collective operation timeout")
    line = "[rank0]: watchdog caught collective operation timeout: worknccl(seqnum=5)"
    assert rx.search(line) is None  # compiled and its methods bound before the block
    with lazy_re.caseless():
        assert lazy_re.is_caseless()
        assert rx.search(line) is not None
        with lazy_re.caseless():  # nested: still caseless, and the outer block ends it
            assert rx.search(line) is not None
        assert rx.search(line) is not None
    assert not lazy_re.is_caseless()
    assert rx.search(line) is None


def test_the_block_ends_on_an_exception_too() -> None:
    rx = lazy_re.compile(r"NCCL WARN")
    with pytest.raises(RuntimeError), lazy_re.caseless():
        assert rx.search("nccl warn") is not None
        raise RuntimeError("a row failed")
    assert not lazy_re.is_caseless()
    assert rx.search("nccl warn") is None


def test_a_pattern_is_the_same_key_inside_and_outside_the_block() -> None:
    rx = lazy_re.compile(r"SeqNum=(\d+)")
    table = {rx: "seq"}
    with lazy_re.caseless():
        assert table[rx] == "seq"
    assert rx == lazy_re.compile(r"SeqNum=(\d+)")
    assert rx != lazy_re.compile(r"SeqNum=(\d+)", re.M)


def test_by_text_finds_a_captured_word_lower_cased() -> None:
    signals = lazy_re.ByText({"Segmentation fault": "SIGSEGV", "Bus error": "SIGBUS"})
    assert signals["Segmentation fault"] == "SIGSEGV"
    assert signals["segmentation fault"] == "SIGSEGV"
    assert signals.get("bus error") == "SIGBUS"
    assert signals.get("Killed") is None and signals.get("killed", "x") == "x"
    with pytest.raises(KeyError):
        signals["Aborted"]
