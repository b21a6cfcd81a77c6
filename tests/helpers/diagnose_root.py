"""The answer a table test of the diagnosis asks about: the warn/fail findings of one log, its
first one (the root cause the project's scorer reads), and the check that it has a code and facts.
One definition for every family table under tests/diagnose (they each had their own copy)."""

from __future__ import annotations

from typing import Any, Optional

from pgdoctor.diagnose.api import diagnose_sources
from pgdoctor.model import Finding


def failure_findings(log: str, name: str = "job.log") -> list[Finding]:
    """The findings of severity warn or fail, root cause first (info notes left out)."""
    return [f for f in diagnose_sources([(name, log)]) if f.severity.value in ("warn", "fail")]


def root_finding(log: str, name: str = "job.log") -> Optional[Finding]:
    """The first warn/fail finding, or None when the log holds no failure."""
    found = failure_findings(log, name)
    return found[0] if found else None


def root_category(log: str) -> Optional[str]:
    """The root finding's category, or None when the log holds no failure (the source sweeps' tables)."""
    f = root_finding(log)
    return None if f is None else f.category


def check_root(log: str, code: str, facts: Optional[dict[str, Any]] = None) -> None:
    """The root cause has `code` and each of `facts` with its value."""
    root = root_finding(log)
    assert root is not None and root.code == code, (log, root)
    for k, v in (facts or {}).items():
        assert root.facts.get(k) == v, (log, k, root.facts)


# The prefixes launchers and loggers put before every line of a rank's output (none, torchrun's
# --tee, torchrun's --log-dir redirect, mpirun's tag, a host tag, Python logging, a Ray actor).
# The four prefixes most family tables put before each line: none, a rank tag, a host tag, a Python logger.
LINE_PREFIXES = ["", "[rank3]: ", "node7: ", "2025-01-02 03:04:05,678 - ERROR - "]
LAUNCHER_PREFIXES = [
    "",
    "[rank1]: ",
    "[default0]:",
    "[1,0]<stderr>:",
    "node7: ",
    "2025-01-02 03:04:05,678 - ERROR - ",
    "(RayWorkerWrapper pid=1234) ",
]
TRACEBACK_HEAD = (
    'Traceback (most recent call last):\n  File "/workspace/train.py", line 41, in <module>\n    main()\n'
)


def prefixed(prefix: str, log: str) -> str:
    """Every line of `log` behind `prefix`, as a launcher writes it."""
    return "".join(prefix + ln + "\n" for ln in log.split("\n"))
