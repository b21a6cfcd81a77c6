"""The suite's own temp directory (tests/conftest.py) is removed however the session ends: a CI or
`timeout` limit stops pytest with SIGTERM, which by default killed the controller before its
pytest_unconfigure and left /tmp/pgdoctor-tests-* behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _suite_dirs(where: Path) -> list[Path]:
    return sorted(where.glob("pgdoctor-tests-*"))


def test_sigterm_ends_the_session_and_removes_its_temp_dir(tmp_path: Path) -> None:
    (tmp_path / "test_sleeps.py").write_text("import time\n\n\ndef test_sleeps():\n    time.sleep(120)\n")
    env = {
        k: v for k, v in os.environ.items() if k != "PGDOCTOR_TEST_CHILD_TMPDIR"
    }  # a controller, not a worker
    env["TMPDIR"] = str(tmp_path)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest", "-n", "0"]
    proc = subprocess.Popen(
        [*cmd, str(tmp_path / "test_sleeps.py")],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not _suite_dirs(tmp_path) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert _suite_dirs(tmp_path), "the session never made its temp dir"
        time.sleep(1.0)  # into the sleeping test
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert _suite_dirs(tmp_path) == []
