"""Layering rules that keep checks pure and the CLI fast."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN_IN_CHECKS = {"os", "subprocess", "torch", "pynvml", "pgdoctor.probes", "socket", "shutil"}


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def forbidden_imports(path: Path) -> set[str]:
    return {n for n in _imports(path) for f in FORBIDDEN_IN_CHECKS if n == f or n.startswith(f + ".")}


@pytest.mark.parametrize("path", sorted((ROOT / "checks").glob("*.py")), ids=lambda p: p.name)
def test_checks_import_nothing_that_touches_the_system(path: Path) -> None:
    bad = forbidden_imports(path)
    assert not bad, f"checks/{path.name} imports {sorted(bad)}: checks must be pure functions of the snapshot"


def test_checks_can_be_caught_importing(tmp_path: Path) -> None:
    """The rule above is live: a module importing os is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nimport json\nfrom pgdoctor.probes.sysfs import FsReader\nimport torch.distributed\n")
    assert forbidden_imports(bad) == {"os", "pgdoctor.probes.sysfs", "torch.distributed"}


@pytest.mark.parametrize("argv", [["--help"], ["explain", "ENV501"], ["list"], ["check", "--help"]])
def test_cli_paths_that_must_not_import_torch(argv: list[str]) -> None:
    code = (
        "import sys; from pgdoctor.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH', file=sys.stderr)\n"
        "print('PYNVML' if 'pynvml' in sys.modules else 'NO-PYNVML', file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60)
    assert "NO-TORCH" in proc.stderr, proc.stderr
    assert "NO-PYNVML" in proc.stderr, proc.stderr


def test_quick_level_check_does_not_import_torch() -> None:
    code = (
        "import sys; from pgdoctor.cli import main\n"
        "try:\n    main(['check', '--level', 'quick', '--json', '--exit-zero'])\nexcept SystemExit:\n    pass\n"
        "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH', file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "NO-TORCH" in proc.stderr, proc.stderr
