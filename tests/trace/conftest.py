"""The instrumented processes of this room (in-process and children) open their live socket under
the test's own temporary directory: with PGDOCTOR_LIVE_DIR unset they would make and leave
/tmp/pgdoctor-live-<uid> on the machine (the default that `pgdoctor run` and `hang` read)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _live_dir_under_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGDOCTOR_LIVE_DIR", str(tmp_path / "live"))
