"""The regex code cache (doctor/diagnose/text/sre_cache.py) gives the very patterns `re.compile` gives.

The engine compares two patterns by their flags, their text and their compiled code, so `==` below is the
whole check: a pattern built from saved code is the pattern `re.compile` builds, for every deferred pattern
of the catalogue, read as the program prints it and case-insensitively (the caseless reading)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pgdoctor.diagnose import rules  # noqa: F401  (the whole catalogue: every row's patterns)
from pgdoctor.diagnose.text import normalize, scan, sre_cache  # noqa: F401  (the line reader's, the scanner's)
from pgdoctor.model import lazy_re

pytestmark = pytest.mark.skipif(not sre_cache._FILE, reason="this interpreter's `re` internals are not read")


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache folder and an empty table; the module's state is restored afterwards."""
    monkeypatch.setenv("PGDOCTOR_CACHE", str(tmp_path))
    for name, value in (("_data", None), ("_index", {}), ("_new", {}), ("_used", set()), ("_base", 0)):
        monkeypatch.setattr(sre_cache, name, value)
    return tmp_path / "sre" / sre_cache._FILE


def _reload(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """As a new process sees it: the table read from the file again. Returns the patterns whose code was
    emitted again (none, when every one was saved)."""
    for name, value in (("_data", None), ("_index", {}), ("_new", {}), ("_used", set()), ("_base", 0)):
        monkeypatch.setattr(sre_cache, name, value)
    emitted: list[Any] = []
    entry = sre_cache._entry

    def counted(pattern: Any, flags: int) -> Any:
        emitted.append(pattern)
        return entry(pattern, flags)

    monkeypatch.setattr(sre_cache, "_entry", counted)
    return emitted


def _catalogue() -> list[tuple[Any, int]]:
    return sorted({(p.pattern, p._flags) for p in list(lazy_re._LIVE)}, key=repr)


def test_every_catalogue_pattern_from_saved_code_is_the_one_re_compiles(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = _catalogue()
    assert len(keys) > 500  # the catalogue, not a handful
    for pattern, flags in keys:
        for f in (flags, flags | re.IGNORECASE):
            assert sre_cache.compile(pattern, f) == re.compile(pattern, f), pattern
    sre_cache.save()
    assert fresh.is_file()
    emitted = _reload(monkeypatch)
    for pattern, flags in keys:
        for f in (flags, flags | re.IGNORECASE):
            rx = sre_cache.compile(pattern, f)
            assert rx == re.compile(pattern, f), pattern
            plain = re.compile(pattern, f)
            assert (rx.groups, rx.groupindex) == (plain.groups, plain.groupindex)
    assert emitted == []


def test_a_saved_pattern_matches_as_the_compiled_one(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pattern = r"\[(?P<rank>\d+)\].*?(?P<op>ALLREDUCE|ALLGATHER)\b(?=.*SeqNum=(\d+))"
    sre_cache.compile(pattern, re.I)
    sre_cache.save()
    emitted = _reload(monkeypatch)
    rx = sre_cache.compile(pattern, re.I)
    assert emitted == []
    m = rx.search("[3] WorkNCCL(allreduce, SeqNum=17)")
    assert m is not None and m.group("rank", "op", 3) == ("3", "allreduce", "17")
    assert lazy_re.is_pattern(rx) and isinstance(rx, re.Pattern)


@pytest.mark.parametrize(
    "garbage",
    [
        b"",
        b"\x00garbage",
        b"\xe3\x01\x00\x00\x00",
        "not a table",
        b"pgdoctor-sre-2\n" + (10**9).to_bytes(8, "little") + b"\xfb",  # an index cut off
        b"pgdoctor-sre-2\n" + (2).to_bytes(8, "little") + b"N0" + b"\x00" * 64,  # an index that is no table
    ],
)
def test_a_file_that_is_no_table_is_built_again_and_replaced(
    fresh: Path, monkeypatch: pytest.MonkeyPatch, garbage: Any
) -> None:
    import marshal

    fresh.parent.mkdir(parents=True)
    fresh.write_bytes(garbage if isinstance(garbage, bytes) else marshal.dumps(garbage))
    assert sre_cache.compile(r"rank (\d+)") == re.compile(r"rank (\d+)")
    sre_cache.save()
    emitted = _reload(monkeypatch)
    assert sre_cache.compile(r"rank (\d+)") == re.compile(r"rank (\d+)") and emitted == []


def test_code_the_engine_refuses_is_compiled_again(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import marshal

    pattern = r"NCCL WARN (\w+)"
    entry = sre_cache._entry(pattern, 0)
    fresh.parent.mkdir(parents=True)
    # the code cut in half: not a program the engine accepts
    cut = (entry[0], entry[1][: len(entry[1]) // 2], *entry[2:])
    fresh.write_bytes(sre_cache._pack({sre_cache._key(pattern, 0): marshal.dumps(cut)}))
    emitted = _reload(monkeypatch)
    assert sre_cache.compile(pattern) == re.compile(pattern)
    assert emitted == [pattern]


def test_a_bad_pattern_raises_what_re_raises(fresh: Path) -> None:
    with pytest.raises(re.error):
        sre_cache.compile(r"rank (\d+")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_read_only_cache_is_left_alone(fresh: Path) -> None:
    fresh.parent.parent.chmod(0o500)
    try:
        assert sre_cache.compile(r"rank (\d+) of") == re.compile(r"rank (\d+) of")
        sre_cache.save()
        assert not fresh.exists()
    finally:
        fresh.parent.parent.chmod(0o700)


def test_a_cache_path_that_is_a_file_is_left_alone(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = fresh.parent.parent / "file"
    blocker.write_text("x")
    monkeypatch.setenv("PGDOCTOR_CACHE", str(blocker))  # a file where the folder should be
    assert sre_cache.compile(r"rank (\d+) on") == re.compile(r"rank (\d+) on")
    sre_cache.save()  # no exception


def test_the_cli_saves_the_code_and_the_next_run_reads_the_same(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text("[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    env = {**os.environ, "PGDOCTOR_CACHE": str(tmp_path / "cache")}
    runs = []
    for _ in range(2):
        p = subprocess.run(
            [sys.executable, "-m", "pgdoctor", "diagnose", "--json", str(log)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert p.returncode == 1, p.stderr
        runs.append([(f["code"], f["facts"]) for f in json.loads(p.stdout)["findings"]])
    saved = tmp_path / "cache" / "sre" / sre_cache._FILE
    assert saved.is_file() and saved.stat().st_size > 10_000
    assert runs[0] == runs[1] and runs[0][0][0] == "RUN101"
