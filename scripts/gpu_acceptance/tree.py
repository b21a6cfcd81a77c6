"""pgdoctor from this tree without pip: a private site folder of symbolic links laid out as the
installed package (pyproject's package-dir mapping), and the console script beside it.

Nothing is installed into the node's Python (the node may be a user's cluster node), no build
backend runs (the image's setuptools may be older than the one pyproject names), and it takes
milliseconds. PYTHONPATH=<site> and PATH=<site>/bin make `pgdoctor` and `python -m pgdoctor...`
children find it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import tomllib


def layout(root: Path) -> dict[str, Path]:
    """Import name -> source folder of every package pyproject lists."""
    meta = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    tool = meta["tool"]["setuptools"]
    dirs: dict[str, str] = tool.get("package-dir", {})
    out = {}
    for pkg in tool["packages"]:
        # The longest mapped prefix decides (pgdoctor.checks.gpu -> checks/gpu).
        best = max((p for p in dirs if pkg == p or pkg.startswith(p + ".")), key=len, default=None)
        if best is None:
            src = root / pkg.replace(".", "/")
        else:
            src = (
                root / dirs[best] / pkg[len(best) + 1 :].replace(".", "/")
                if pkg != best
                else root / dirs[best]
            )
        out[pkg] = src
    return out


def link(root: Path, site: Path) -> list[str]:
    """Builds site/ (packages as folders of links, bin/ with the console scripts); returns the
    console script names."""
    for pkg, src in layout(root).items():
        dest = site / pkg.replace(".", "/")
        dest.mkdir(parents=True, exist_ok=True)
        for f in src.iterdir():
            if f.is_file() and not f.name.endswith((".pyc", ".pyo")) and not (dest / f.name).exists():
                os.symlink(f, dest / f.name)
    meta = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    (site / "bin").mkdir(exist_ok=True)
    names = []
    for name, target in meta["project"].get("scripts", {}).items():
        module, func = target.split(":")
        script = site / "bin" / name
        script.write_text(
            f"#!{sys.executable}\nimport sys\nfrom {module} import {func}\nsys.exit({func}())\n",
            encoding="utf-8",
        )
        script.chmod(0o755)
        names.append(name)
    return names
