"""PYTORCH_CUDA_ALLOC_CONF (PYTORCH_ALLOC_CONF in newer torch): the caching allocator's options,
checked as torch's CUDAAllocatorConfig parses them (c10/cuda/CUDAAllocatorConfig.cpp, torch 2.x):
comma-separated `key:value` pairs. torch raises on an unknown key or a bad value at the first CUDA
allocation of every rank, so a typo fails the whole job after its launch instead of before it."""

from __future__ import annotations

import difflib
import re

VARIABLES = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF")
_BOOL = ("True", "False")  # torch compares the strings: "true" or "1" is rejected
_INT = re.compile(r"^\d+$")


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _roundup(value: str) -> str:
    """roundup_power2_divisions: a power of two, or [size:divisions, ..., >:divisions]."""
    if _INT.match(value):
        n = int(value)
        return "" if n == 0 or _power_of_two(n) else "must be 0 or a power of two"
    if value.startswith("[") and value.endswith("]"):
        for item in filter(None, (p.strip() for p in value[1:-1].split(","))):
            size, _, div = item.partition(":")
            if not (size == ">" or _INT.match(size)) or not _INT.match(div) or not (
                    int(div) == 0 or _power_of_two(int(div))):
                return f"{item!r} is not size:divisions (divisions 0 or a power of two)"
        return ""
    return "must be a power of two or a [size:divisions, ...] list"


def _fraction(value: str) -> str:
    try:
        f = float(value)
    except ValueError:
        return "must be a number between 0 and 1"
    return "" if 0.0 < f < 1.0 else "must be greater than 0 and less than 1"


def _max_split(value: str) -> str:
    if not _INT.match(value):
        return "must be a whole number of MiB"
    return "" if int(value) > 20 else "must be more than 20 (MiB)"


def _choice(*allowed: str):  # type: ignore[no-untyped-def]
    return lambda v: "" if v in allowed else f"must be one of {', '.join(allowed)}"


def _count(value: str) -> str:
    return "" if _INT.match(value) and _power_of_two(int(value)) else "must be a power of two"


OPTIONS = {
    "backend": _choice("native", "cudaMallocAsync"),
    "max_split_size_mb": _max_split,
    "roundup_power2_divisions": _roundup,
    "garbage_collection_threshold": _fraction,
    "expandable_segments": _choice(*_BOOL),
    "release_lock_on_cudamalloc": _choice(*_BOOL),
    "pinned_use_cuda_host_register": _choice(*_BOOL),
    "pinned_num_register_threads": _count,
    "pinned_use_background_threads": _choice(*_BOOL),
}


def problems(conf: str) -> list[str]:
    """What torch would reject in `conf`, one phrase each; [] when it would accept it."""
    out: list[str] = []
    # a [..] list may hold commas: split on commas outside brackets
    parts, depth, cur = [], 0, ""
    for ch in conf:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for part in (p.strip() for p in parts):
        if not part:
            continue
        key, sep, value = part.partition(":")
        key, value = key.strip(), value.strip()
        if not sep:
            out.append(f"{part!r} is not key:value")
        elif key not in OPTIONS:
            known = difflib.get_close_matches(key, OPTIONS, n=1, cutoff=0.75)
            out.append(f"unknown option {key!r}" + (f" (did you mean {known[0]}?)" if known else ""))
        else:
            why = OPTIONS[key](value)
            if why:
                out.append(f"{key}:{value} {why}")
    return out
