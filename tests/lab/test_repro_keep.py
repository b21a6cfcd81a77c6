"""repro cites only what will exist: with --keep DIR (or --trace-dir alone) everything the run
leaves (rank logs, flight-recorder dumps, results, trace) stays in DIR, every file a finding cites
is there, and `pgdoctor diagnose DIR` finds the same root cause; without them the run's files are
removed and no finding names a path into them."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

from tests.helpers.paths import ROOT


def _pgdoctor(*args: str, tmpdir: Optional[Path] = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(tmpdir)} if tmpdir else None
    return subprocess.run(
        [sys.executable, "-m", "pgdoctor", *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
        env=env,
    )


@pytest.mark.slow
@pytest.mark.timeout(400)
@pytest.mark.parametrize("option", ["--keep", "--trace-dir"])
def test_a_kept_run_holds_every_file_it_cites_and_diagnoses_again(option: str, tmp_path: Path) -> None:
    keep = tmp_path / "run"
    res = _pgdoctor("repro", "timeout", "--json", option, str(keep))
    assert res.returncode == 1, res.stderr[-2000:]
    report = json.loads(res.stdout)
    cited = {e["file"] for f in report["findings"] for e in f["evidence"] if e.get("file")}
    assert cited, report["findings"]
    for path in cited:
        assert os.path.isabs(path) and path.startswith(str(keep)) and os.path.isfile(path), path
    assert (keep / "rank0.stderr").is_file() and list((keep / "flight_recorder").iterdir())
    again = _pgdoctor("diagnose", str(keep), "--json")
    assert again.returncode == 1, again.stderr[-2000:]
    assert json.loads(again.stdout)["findings"][0]["code"] == report["findings"][0]["code"]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_without_keep_nothing_cites_a_removed_path(tmp_path: Path) -> None:
    # A temp directory of its own: other tests' repro runs beside this one make the same names.
    res = _pgdoctor("repro", "timeout", "--json", tmpdir=tmp_path)
    assert res.returncode == 1, res.stderr[-2000:]
    report = json.loads(res.stdout)
    assert glob.glob(os.path.join(str(tmp_path), "pgdoctor-repro-*")) == []
    text = json.dumps(report["findings"])
    assert "pgdoctor-repro-" not in text
    files = {e["file"] for f in report["findings"] for e in f["evidence"] if e.get("file")}
    assert files and not any(os.path.isabs(p) for p in files), files
    assert report["meta"]["run_files"].startswith("removed")
