"""The installed Python distributions (what `pip freeze` lists, read through importlib.metadata,
never by running pip) and the CUDA, cuDNN and NCCL shared libraries the dynamic loader can find:
the directories of LD_LIBRARY_PATH, of /etc/ld.so.conf and its includes, the system's default
directories, $CUDA_HOME/lib64 and the lib folders of pip's nvidia-* wheels. Two copies of NCCL or
cuDNN, one from a wheel and one from LD_LIBRARY_PATH, is the usual story behind "works on my node".
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import pathlib
import re
from collections.abc import Iterable

from pgdoctor.model import Measurement
from pgdoctor.probes.base import ProbeContext, probe

# Library families and the file-name stem the loader looks for.
FAMILIES = {
    "cuda_driver": "libcuda.so",
    "nvml": "libnvidia-ml.so",
    "cudart": "libcudart.so",
    "cublas": "libcublas.so",
    "cudnn": "libcudnn.so",
    "nccl": "libnccl.so",
}
# Where glibc's loader looks without configuration (and the multiarch ones Debian adds).
DEFAULT_DIRS = (
    "/lib",
    "/usr/lib",
    "/lib64",
    "/usr/lib64",
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib/aarch64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
)
_VERSION = re.compile(r"\.so((?:\.\d+)+)$")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def packages(path: Iterable[str] | None = None) -> list[str]:
    """`name==version` of every distribution on sys.path (or `path`), the first of each name
    winning as it does for import, sorted case-insensitively like pip freeze. A wheel's
    `name-version.dist-info` folder says both (the wheel spec escapes `-` in either), which is 20
    times faster than parsing every METADATA file; other forms (egg-info) are read in full."""
    import sys

    seen: dict[str, str] = {}
    for entry in sys.path if path is None else path:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for folder in names:
            stem, dot, kind = folder.rpartition(".")
            if not dot or kind not in ("dist-info", "egg-info"):
                continue
            name, dash, version = stem.partition("-")
            if kind == "egg-info" or not dash or "-" in version:
                dist = importlib.metadata.PathDistribution(pathlib.Path(entry or ".", folder))
                meta = dist.metadata
                name, version = (meta["Name"] or "", dist.version) if meta else ("", "")
            if name and canonical(name) not in seen:
                seen[canonical(name)] = f"{name}=={version}"
    return [seen[k] for k in sorted(seen)]


def ld_conf_dirs(ctx: ProbeContext, path: str = "/etc/ld.so.conf", depth: int = 0) -> list[str]:
    """Directories named in ld.so.conf, following its `include` globs (ld.so.conf.d/*.conf)."""
    try:
        text = ctx.fs.read_text(path)
    except OSError:
        return []
    out: list[str] = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("include") and depth < 4:
            pattern = line.split(None, 1)[1] if " " in line else ""
            folder, _, glob = pattern.rpartition("/")
            if not folder.startswith("/"):
                folder = "/etc/" + folder
            suffix = glob.split("*")[-1] if "*" in glob else None
            for name in ctx.fs.listdir(folder):
                if (suffix is not None and name.endswith(suffix)) or name == glob:
                    out += ld_conf_dirs(ctx, f"{folder}/{name}", depth + 1)
        else:
            out.append(line)
    return out


def wheel_lib_dirs() -> list[str]:
    """lib folders of pip's nvidia-* wheels (nvidia/cudnn/lib, nvidia/nccl/lib, ...), without
    importing anything: torch's CUDA wheels load their libraries from there."""
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return []
    out = []
    for base in spec.submodule_search_locations:
        try:
            out += [os.path.join(base, d, "lib") for d in sorted(os.listdir(base))]
        except OSError:
            continue
    return out


def search_dirs(ctx: ProbeContext) -> list[tuple[str, str]]:
    """(directory, why it is searched) in the loader's order, each directory once."""
    order: list[tuple[str, str]] = []
    ld = ctx.env.get("LD_LIBRARY_PATH", "")
    order += [(d, "LD_LIBRARY_PATH") for d in ld.split(":") if d]
    order += [(d, "ld.so.conf") for d in ld_conf_dirs(ctx)]
    order += [(d, "default") for d in DEFAULT_DIRS]
    cuda_home = ctx.env.get("CUDA_HOME") or ctx.env.get("CUDA_PATH") or "/usr/local/cuda"
    order += [(f"{cuda_home.rstrip('/')}/lib64", "CUDA_HOME")]
    order += [(d, "pip wheel") for d in wheel_lib_dirs()]
    seen: set[str] = set()
    out = []
    for d, why in order:
        norm = d.rstrip("/") or "/"
        if norm not in seen:
            seen.add(norm)
            out.append((norm, why))
    return out


def find_libraries(ctx: ProbeContext, dirs: Iterable[tuple[str, str]]) -> dict[str, list[dict[str, str]]]:
    """Per family, every directory that holds it: its files and the longest version in their names."""
    found: dict[str, list[dict[str, str]]] = {f: [] for f in FAMILIES}
    listed: set[str] = set()
    for d, why in dirs:
        real = os.path.realpath(ctx.fs.path(d))  # /lib is /usr/lib on merged-/usr systems: list it once
        if real in listed:
            continue
        listed.add(real)
        names = ctx.fs.listdir(d)
        if not names:
            continue
        for family, stem in FAMILIES.items():
            files = [n for n in names if n == stem or n.startswith(stem + ".")]
            if not files:
                continue
            versions = [m.group(1)[1:] for n in files if (m := _VERSION.search(n))]
            found[family].append(
                {
                    "dir": d,
                    "via": why,
                    "files": ", ".join(files),
                    "version": max(versions, key=lambda v: (v.count("."), v)) if versions else "",
                }
            )
    return found


@probe("libraries", area="software", level="quick")
def libraries(ctx: ProbeContext) -> list[Measurement]:
    dirs = search_dirs(ctx)
    ld = [d for d in ctx.env.get("LD_LIBRARY_PATH", "").split(":") if d]
    return [
        Measurement("software.python.packages", packages(), source="importlib.metadata.distributions"),
        Measurement(
            "software.ld_library_path",
            [{"dir": d, "exists": ctx.fs.exists(d)} for d in ld],
            source="environ:LD_LIBRARY_PATH",
        ),
        Measurement(
            "software.native_libraries",
            find_libraries(ctx, dirs),
            source="listdir:LD_LIBRARY_PATH,/etc/ld.so.conf,default dirs,CUDA_HOME,nvidia wheels",
        ),
    ]
