"""A report that read no log (traces or Nsight exports alone) names the log scanner's engine
without importing the rule catalogue (engine.available()); it must be the engine a log's report
names on the same machine, under each PGDOCTOR_SCAN_ENGINE setting."""

from __future__ import annotations

import pytest

from pgdoctor.diagnose.api import diagnose_paths
from tests.helpers.paths import FIXTURES


@pytest.mark.parametrize("setting", ["re", "auto"])
def test_trace_only_report_names_the_engine_a_log_report_names(
    monkeypatch: pytest.MonkeyPatch, setting: str
) -> None:
    monkeypatch.setenv("PGDOCTOR_SCAN_ENGINE", setting)
    trace_only = diagnose_paths([str(FIXTURES / "nsys" / "healthy_1pct.sqlite")])
    with_log = diagnose_paths([str(FIXTURES / "logs" / "torchrun_real_hang.log")])
    assert not trace_only.meta["sources"] and with_log.meta["sources"]
    assert trace_only.meta["scan_engine"] == with_log.meta["scan_engine"]
    if setting == "re":
        assert trace_only.meta["scan_engine"] == "re"
