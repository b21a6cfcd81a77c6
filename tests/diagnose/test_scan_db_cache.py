"""The compiled anchor database kept in the user's cache (text/engine.py, text/cache.py): a second start
loads it instead of compiling, a file that does not load is compiled again and replaced, and a cache
that cannot be written changes nothing but the start-up time. The answers are the same every way."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pgdoctor.diagnose.text import engine
from pgdoctor.diagnose.text.cache import cache_dir, write_cached
from pgdoctor.diagnose.text.scan import ANCHORS

hyperscan = pytest.importorskip("hyperscan")
LINE = b"node1:12:12 [0] NCCL WARN Call to connect returned Connection refused\nplain line\n"


def _files(root: Path) -> list[Path]:
    return sorted((root / "scan").glob("anchors-*.hsdb"))


def _lines(positions: list[int]) -> list[int]:
    """The lines the anchors were found on: what the scan reads. The two engines agree on these, not on
    every position: where two anchors overlap ("to connect", "t return"), re's leftmost scan reports the
    first and Hyperscan both."""
    return sorted({LINE.count(b"\n", 0, p) for p in positions})


def _positions() -> list[int]:
    find = engine._hyperscan_finder(ANCHORS)
    assert find is not None
    return _lines(find(LINE, 0, len(LINE)))


def test_the_second_start_loads_what_the_first_compiled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGDOCTOR_CACHE", str(tmp_path))
    assert cache_dir() == tmp_path
    want = _lines(engine._re_finder(ANCHORS)(LINE, 0, len(LINE)))
    assert _positions() == want
    (saved,) = _files(tmp_path)
    compiled = []
    real = hyperscan.Database

    def counted(*a: object, **k: object) -> object:
        compiled.append(1)
        return real(*a, **k)

    monkeypatch.setattr(hyperscan, "Database", counted)
    assert _positions() == want and not compiled  # loaded, not compiled
    assert _files(tmp_path) == [saved]


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty"])
def test_a_damaged_file_is_compiled_again_and_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    monkeypatch.setenv("PGDOCTOR_CACHE", str(tmp_path))
    want = _positions()
    (saved,) = _files(tmp_path)
    good = saved.read_bytes()
    data = bytearray(good)
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":
        data[len(data) // 2] ^= 0xFF
    else:
        data = bytearray()
    saved.write_bytes(bytes(data))
    assert _positions() == want
    assert saved.read_bytes() == good


def test_a_cache_that_cannot_be_written_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("PGDOCTOR_CACHE", str(blocker))  # mkdir under a file fails
    assert _positions() == _lines(engine._re_finder(ANCHORS)(LINE, 0, len(LINE)))
    assert blocker.read_text() == "not a directory"


def test_old_files_do_not_pile_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGDOCTOR_CACHE", str(tmp_path))
    for i in range(7):
        write_cached("scan", f"anchors-{i}.hsdb", b"x")
        os.utime(tmp_path / "scan" / f"anchors-{i}.hsdb", (1000 + i, 1000 + i))
    write_cached("scan", "anchors-new.hsdb", b"y")
    names = sorted(p.name for p in (tmp_path / "scan").iterdir())
    assert names == ["anchors-4.hsdb", "anchors-5.hsdb", "anchors-6.hsdb", "anchors-new.hsdb"]


def test_the_default_place_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PGDOCTOR_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "pgdoctor"
