"""Run mypy over the source folders under their import names.

The folders are mapped to packages by setuptools (doctor/ is `pgdoctor`, checks/ is
`pgdoctor.checks`, ...), which mypy cannot see: it would type-check `doctor.model` and never
resolve `pgdoctor.model`. So this builds a throw-away tree of symlinks laid out as the installed
package and points mypy at it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from package_map import source_folders  # tools/ is this script's folder, first on sys.path

ROOT = Path(__file__).resolve().parents[1]
# Package path in the throw-away tree -> source folder, from pyproject.toml (tools/package_map.py).
MAPPING = {name.replace(".", "/"): folder for folder, name in source_folders(ROOT).items()}


def build(tree: Path) -> None:
    for target, source in MAPPING.items():
        dest = tree / target
        dest.mkdir(parents=True, exist_ok=True)
        for path in (ROOT / source).rglob("*.py"):
            rel = path.relative_to(ROOT / source)
            out = dest / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            if not out.exists():
                os.symlink(path, out)


def main() -> int:
    tree = Path(tempfile.mkdtemp(prefix="pgdoctor-typecheck-"))
    try:
        build(tree)
        cmd = [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            "-p",
            "pgdoctor",
            *sys.argv[1:],
        ]
        return subprocess.call(cmd, cwd=tree)
    finally:
        shutil.rmtree(tree, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
