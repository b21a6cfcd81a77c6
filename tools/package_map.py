"""The one reader of pyproject.toml's `[tool.setuptools.package-dir]`: source folder -> import name.

setuptools installs doctor/ as `pgdoctor`, checks/ as `pgdoctor.checks`, and so on. The type check
(tools/typecheck.py) and the house's import rules (tests/helpers/architecture.py) both need that
mapping; they read it here so that adding a room to pyproject.toml is the only edit.
"""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the tests and tools run on 3.11+, users may install on 3.9
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def source_folders(root: Path = ROOT) -> dict[str, str]:
    """{folder: import name}, e.g. {"doctor": "pgdoctor", "checks": "pgdoctor.checks", ...}."""
    with open(root / "pyproject.toml", "rb") as fh:
        mapping = tomllib.load(fh)["tool"]["setuptools"]["package-dir"]
    return {folder: name for name, folder in mapping.items()}
