"""The deadline is never swallowed: DeadlineExceeded is, like KeyboardInterrupt, no Exception, and
a handler that catches everything re-raises, hands the exception to the thread that waits for it,
or says why it may not (`# catches-interrupts: why`). Readers stay linear: a trace of a gigabyte
of blanks ends at the deadline with exit 3, never "no failure found"."""

from __future__ import annotations

import ast
import gzip
import subprocess
import sys
from pathlib import Path

from pgdoctor.engine.deadline import DeadlineExceeded
from tests.helpers.paths import ROOT

SOURCE_DIRS = ("doctor", "probes", "model", "knowledge", "checks")
PRAGMA = "# catches-interrupts:"


def _sources() -> list[Path]:
    return [p for d in SOURCE_DIRS for p in sorted((ROOT / d).rglob("*.py"))]


def _catches_everything(h: ast.ExceptHandler) -> bool:
    if h.type is None:
        return True
    names = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
    return any(isinstance(n, ast.Name) and n.id in ("BaseException", "DeadlineExceeded") for n in names)


def _reraises_or_boxes(h: ast.ExceptHandler) -> bool:
    for node in ast.walk(ast.Module(body=h.body, type_ignores=[])):
        if isinstance(node, ast.Raise) and node.exc is None:
            return True
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Subscript)
            and h.name
            and isinstance(node.value, ast.Name)
            and node.value.id == h.name
        ):
            return True  # box["error"] = exc: a worker thread's result, raised by the waiting thread
    return False


def test_the_deadline_is_no_exception() -> None:
    assert not issubclass(DeadlineExceeded, Exception)
    try:
        try:
            raise DeadlineExceeded()
        except Exception:  # what every reader's "one bad file is a skip" handler looks like
            raise AssertionError("an `except Exception` caught the deadline") from None
    except DeadlineExceeded:
        pass


def test_no_handler_swallows_the_deadline_or_an_interrupt() -> None:
    bad = []
    for path in _sources():
        text = path.read_text()
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.ExceptHandler) or not _catches_everything(node):
                continue
            rel = f"{path.relative_to(ROOT)}:{node.lineno}"
            if any(
                isinstance(n, ast.Name) and n.id == "DeadlineExceeded" for n in ast.walk(node.type or node)
            ) and not rel.startswith("doctor/cli/"):
                bad.append(f"{rel}: only the CLI turns the deadline into its exit status")
            elif (
                not _reraises_or_boxes(node)
                and PRAGMA not in lines[node.lineno - 1]
                and not any(
                    isinstance(n, ast.Name) and n.id == "DeadlineExceeded" for n in ast.walk(node.type)
                )
            ):
                bad.append(f"{rel}: catches BaseException without re-raising (or `{PRAGMA} why`)")
    assert not bad, "\n".join(bad)


def test_the_rule_sees_a_swallowing_handler(tmp_path: Path) -> None:
    tree = ast.parse("try:\n    f()\nexcept BaseException:\n    pass\n")
    h = next(n for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler))
    assert _catches_everything(h) and not _reraises_or_boxes(h)
    tree = ast.parse("try:\n    f()\nexcept BaseException as exc:\n    box['e'] = exc\n")
    h = next(n for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler))
    assert _reraises_or_boxes(h)


def test_a_gigabyte_of_blanks_in_a_trace_ends_at_the_deadline_with_exit_3(tmp_path: Path) -> None:
    # 1,000 gzip members of 1 MiB of blanks each: 1 GB to read, 1 MB on disk.
    member = gzip.compress(b" " * (1 << 20), compresslevel=9)
    path = tmp_path / "blanks.pt.trace.json.gz"
    path.write_bytes(gzip.compress(b'{"traceEvents": [') + member * 1000 + gzip.compress(b"]}"))
    p = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "diagnose", "--timeout", "1", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 3, (p.returncode, p.stdout[-500:], p.stderr[-500:])
    assert "no failure found" not in p.stdout and "Traceback" not in p.stderr
