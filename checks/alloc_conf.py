"""PYTORCH_CUDA_ALLOC_CONF (and its HIP and device-generic spellings) read as torch's caching
allocator reads it, so that a typo fails here instead of at the job's first CUDA allocation.

The grammar and the accepted values follow c10/cuda/CUDAAllocatorConfig.cpp and, since torch 2.8,
c10/core/AllocatorConfig.cpp: the string is split at `,` `:` `[` `]` (spaces dropped), then read
as `key:value` pairs separated by commas. Every key torch 2.x knows is accepted; a key torch does
not know makes it raise `Unrecognized CachingAllocator option` (or `Unrecognized key ... in CUDA
allocator config`), and so does a value outside the forms below. Booleans are the literal words
`True` and `False`: torch compares strings, so `true` and `1` are errors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pgdoctor.checks.base import Config, check, register_code
from pgdoctor.checks.knobs import ENV406
from pgdoctor.model import Evidence, Finding, Snapshot

# Published as knobs.allocator_conf, beside the other environment knobs.
CHECK_GROUP = "knobs"

ENV420 = register_code(
    "ENV420",
    "alloc-conf-options-ignored",
    "warn",
    "configuration",
    "Allocator options that the cudaMallocAsync backend ignores",
    "knobs",
)

# torch reads the first of these that is set: PYTORCH_ALLOC_CONF (2.9+, any device), then the
# device spelling. All of them are validated, since a job may run under an older or newer torch.
VARIABLES = ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF")
LARGE_BUFFER_MB = 20  # kLargeBuffer: max_split_size_mb and max_non_split_rounding_mb start here
MAX_REGISTER_THREADS = 128  # pinned_max_register_threads()
BOOLEAN_KEYS = (
    "expandable_segments",
    "release_lock_on_cudamalloc",
    "release_lock_on_hipmalloc",
    "pinned_use_cuda_host_register",
    "pinned_use_hip_host_register",
    "pinned_use_background_threads",
    "graph_capture_record_stream_reuse",
)
SIZE_KEYS = ("max_split_size_mb", "max_non_split_rounding_mb")
BACKENDS = ("native", "cudaMallocAsync", "hipMallocAsync")
# Options of the native caching allocator; torch warns that cudaMallocAsync ignores them.
NATIVE_ONLY = (
    *SIZE_KEYS,
    "garbage_collection_threshold",
    "roundup_power2_divisions",
    *BOOLEAN_KEYS,
    "pinned_num_register_threads",
    "pinned_reserve_segment_size_mb",
)
KNOWN = (*NATIVE_ONLY, "backend")


@dataclass
class AllocConf:
    """What one variable says: the keys in order, and the problems torch would raise on."""

    keys: dict[str, str] = field(default_factory=dict)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (key or key=value, why)


def _tokens(text: str) -> list[str]:
    return [t for t in re.split(r"([,:\[\]])", text.replace(" ", "")) if t]


def _int(raw: str) -> int | None:
    return int(raw) if re.fullmatch(r"\d+", raw) else None


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _value_problem(key: str, raw: str) -> str:
    """Why torch rejects `raw` as the value of `key`, or ""."""
    n = _int(raw)
    if key in BOOLEAN_KEYS:
        return (
            "" if raw in ("True", "False") else "takes True or False (capitalised; torch compares the words)"
        )
    if key in SIZE_KEYS:
        if n is None:
            return "takes a whole number of MiB"
        return "" if n >= LARGE_BUFFER_MB else f"must be at least {LARGE_BUFFER_MB} (MiB)"
    if key == "garbage_collection_threshold":
        try:
            x = float(raw)
        except ValueError:
            return "takes a fraction between 0 and 1"
        return "" if 0.0 < x < 1.0 else "must lie strictly between 0.0 and 1.0"
    if key == "roundup_power2_divisions":  # the scalar form; the [..] form is read in _divisions
        return (
            ""
            if n is not None and _power_of_two(n)
            else "takes a power of 2, or a list [size_mb:divisions,...]"
        )
    if key == "pinned_num_register_threads":
        if n is None or not _power_of_two(n):
            return "takes a power of 2"
        return "" if n <= MAX_REGISTER_THREADS else f"must be at most {MAX_REGISTER_THREADS}"
    if key == "pinned_reserve_segment_size_mb":
        return "" if n is not None and n > 0 else "takes a whole number of MiB above 0"
    if key == "backend":
        return "" if raw in BACKENDS else f"is one of {', '.join(BACKENDS)}"
    return ""


def _divisions(tokens: list[str], i: int) -> tuple[int, str]:
    """Reads `[interval:div, ..., >:div]` from tokens[i] == "["; returns (index of "]", problem)."""
    i += 1
    while i < len(tokens) and tokens[i] != "]":
        interval = tokens[i]
        if i + 2 >= len(tokens) or tokens[i + 1] != ":":
            return len(tokens), "list entries are size_mb:divisions"
        div = _int(tokens[i + 2])
        if interval != ">" and not (_int(interval) is not None and _power_of_two(int(interval))):
            return len(tokens), f"interval {interval!r} is not a power of 2 (or >)"
        # 0 (no rounding for that interval) is accepted since torch 2.8; earlier ones reject it.
        if div is None or not (div == 0 or _power_of_two(div)):
            return len(tokens), f"divisions {tokens[i + 2]!r} for {interval} is not a power of 2"
        i += 3
        if i < len(tokens) and tokens[i] == ",":
            i += 1
    if i >= len(tokens):
        return i, "the list has no closing ]"
    return i, ""


def parse(text: str) -> AllocConf:
    """The variable's keys and problems, in torch's reading order (it stops at the first error;
    this goes on past a bad value so that one run names them all)."""
    conf = AllocConf()
    tokens = _tokens(text)
    i = 0
    while i < len(tokens):
        key = tokens[i]
        if key == ",":
            i += 1
            continue
        if i + 2 >= len(tokens) or tokens[i + 1] != ":" or tokens[i + 2] in (",", ":", "]"):
            conf.problems.append((key, "has no value (write key:value)"))
            i = _next_pair(tokens, i + 1)
            continue
        if key not in KNOWN:
            conf.problems.append((key, "is not an option torch's caching allocator knows"))
        elif key == "roundup_power2_divisions" and tokens[i + 2] == "[":
            end, why = _divisions(tokens, i + 2)
            conf.keys[key] = "".join(tokens[i + 2 : end + 1])
            if why:
                conf.problems.append((key, why))
            i = _next_pair(tokens, end + 1)
            continue
        else:
            conf.keys[key] = tokens[i + 2]
            why = _value_problem(key, tokens[i + 2])
            if why:
                conf.problems.append((f"{key}={tokens[i + 2]}", why))
        i = _next_pair(tokens, i + 3)
    return conf


def _next_pair(tokens: list[str], i: int) -> int:
    while i < len(tokens) and tokens[i] != ",":
        i += 1
    return i


@check("knobs", [ENV406, ENV420], needs=["environment"])
def allocator_conf(snap: Snapshot, config: Config) -> list[Finding]:
    env: dict[str, str] = snap.value("env.vars", {}) or {}
    out: list[Finding] = []
    for name in VARIABLES:
        raw = env.get(name)
        if raw is None or not raw.strip():
            continue
        conf = parse(raw)
        ev = [Evidence(f"{name}={raw}", key="env.vars")]
        for key, why in conf.problems:
            out.append(
                ENV406.finding(
                    f"{name}: {key} {why}; torch raises at the first CUDA allocation",
                    evidence=ev,
                    facts={"variable": name, "value": raw, "key": key.partition("=")[0], "why": why},
                )
            )
        ignored = [k for k in conf.keys if k in NATIVE_ONLY]
        if conf.keys.get("backend") in ("cudaMallocAsync", "hipMallocAsync") and ignored:
            out.append(
                ENV420.finding(
                    f"{name}: backend:{conf.keys['backend']} ignores {', '.join(ignored)} (torch warns and "
                    f"goes on "
                    "without them)",
                    evidence=ev,
                    facts={"variable": name, "value": raw, "ignored": ignored},
                )
            )
    return out
