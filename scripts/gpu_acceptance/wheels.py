"""The wheels a GPU node needs beside its CUDA image, and the check that a folder holds them.

One source for the names and versions: scripts/gpu-wheels.sh downloads what `--requirements`
prints, and the acceptance run (and its dry run) checks the folder with `check()`.
"""

from __future__ import annotations

import os
import re
import sys
import zipfile

# What pgdoctor uses that a CUDA image with torch, nvidia-ml-py, click and rich usually lacks:
# nvtx (pgdoctor.range), hyperscan (diagnose's anchor search), py-spy and pystack (the stack tiers
# of `pgdoctor hang`). Pinned, so a node runs what was tested here.
REQUIRED = {"nvtx": "0.2.17", "hyperscan": "0.9.1", "py-spy": "0.4.3", "pystack": "1.7.2"}
PYTHON = (3, 12)
DEFAULT_DIR = ".gpu-wheels"

# name-version(-build)?-python-abi-platform.whl (PEP 427); names are normalised with "_".
_WHEEL = re.compile(
    r"^(?P<name>[^-]+)-(?P<version>[^-]+)(?:-\d[^-]*)?-(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<plat>[^-]+)\.whl$"
)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def python_ok(py: str, abi: str, version: tuple[int, int] = PYTHON) -> bool:
    """True when a wheel's python/abi tags install on CPython `version`."""
    cp = f"cp{version[0]}{version[1]}"
    for tag in py.split("."):
        if tag == cp:
            return True
        if tag in (f"py{version[0]}", "py2.py3") and abi == "none":
            return True
        m = re.fullmatch(r"cp(\d)(\d+)", tag)
        # An abi3 wheel built for an older CPython 3 installs on newer ones.
        if m and abi == "abi3" and (int(m.group(1)), int(m.group(2))) <= version:
            return True
    return False


def platform_ok(plat: str) -> bool:
    """manylinux x86_64 (any glibc tag pip accepts on a current distribution), or pure Python."""
    return all(p == "any" or (p.startswith("manylinux") and p.endswith("_x86_64")) for p in plat.split("."))


def _inside(path: str) -> list[str]:
    """The wheel's own WHEEL file must carry a tag that installs here (a renamed file does not)."""
    name = os.path.basename(path)
    try:
        with zipfile.ZipFile(path) as zf:
            meta = [n for n in zf.namelist() if n.endswith(".dist-info/WHEEL") and n.count("/") == 1]
            if not meta:
                return [f"{name}: no .dist-info/WHEEL inside (not a wheel)"]
            text = zf.read(meta[0]).decode("utf-8", "replace")
    except (OSError, zipfile.BadZipFile) as exc:
        return [f"{name}: unreadable as a wheel ({exc})"]
    tags = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Tag:")]
    for tag in tags:
        parts = tag.split("-")
        if len(parts) == 3 and python_ok(parts[0], parts[1]) and platform_ok(parts[2]):
            return []
    return [
        f"{name}: its WHEEL tags ({', '.join(tags) or 'none'}) do not install on CPython 3.12 manylinux "
        f"x86_64"
    ]


def check(folder: str) -> list[str]:
    """Problems with `folder` as the carried wheels, one line each; empty when it is complete."""
    if not os.path.isdir(folder):
        return [
            f"wheels folder {folder} is absent: run `bash scripts/gpu-wheels.sh` where pip can "
            f"reach PyPI, then carry {folder} with the tree"
        ]
    found: dict[str, list[str]] = {}
    problems = []
    for fname in sorted(os.listdir(folder)):
        if not fname.endswith(".whl"):
            continue
        m = _WHEEL.match(fname)
        if not m:
            problems.append(f"{fname}: not a wheel file name (name-version-python-abi-platform.whl)")
            continue
        name = _norm(m.group("name"))
        if name not in REQUIRED:
            problems.append(f"{fname}: not one of the carried packages ({', '.join(REQUIRED)})")
            continue
        found.setdefault(name, []).append(fname)
        if m.group("version") != REQUIRED[name]:
            problems.append(f"{fname}: version {m.group('version')}, the run is pinned to {REQUIRED[name]}")
        if not python_ok(m.group("py"), m.group("abi")):
            problems.append(
                f"{fname}: does not install on CPython {PYTHON[0]}.{PYTHON[1]} "
                f"(tags {m.group('py')}-{m.group('abi')})"
            )
        if not platform_ok(m.group("plat")):
            problems.append(f"{fname}: platform {m.group('plat')} is not manylinux x86_64")
        problems += _inside(os.path.join(folder, fname))
    for name in REQUIRED:
        files = found.get(name, [])
        if not files:
            problems.append(f"{folder}: no wheel of {name}=={REQUIRED[name]}")
        elif len(files) > 1:
            # Two versions of one package stop a whole `pip install` of the folder.
            problems.append(f"{folder}: {len(files)} wheels of {name} ({', '.join(files)}); keep one")
    return problems


def main(argv: list[str]) -> int:
    if argv == ["--requirements"]:
        for name, version in REQUIRED.items():
            print(f"{name}=={version}")
        return 0
    if len(argv) == 2 and argv[0] == "--check":
        problems = check(argv[1])
        for p in problems:
            print(f"gpu-wheels: {p}", file=sys.stderr)
        if not problems:
            print(
                f"gpu-wheels: {argv[1]} holds {', '.join(REQUIRED)} for CPython 3.12 manylinux x86_64",
                file=sys.stderr,
            )
        return 1 if problems else 0
    print("usage: wheels.py --requirements | --check DIR", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
