"""How the diagnose patterns' search time grows with the length of a line they do not match.

A pattern that starts with an unanchored `\\S+` (or `\\S*`, `[^\\s\\]]+`, `\\S.*?`, ...) makes
`re.search` try a match at every position of a long run of non-space characters and scan to its
end: quadratic in the run's length. Separator lines ("=====") and base64 blobs of real logs are
such runs, and `rules/vocabulary.py` runs every row pattern on each error-looking line.

Takes --lines random real lines (60-300 characters) of the released corpora (tests/fixtures/corpus,
held-out files excluded) and --runs random lines without spaces, repeats each 8 and 32 times, joined
with a space and with nothing, and times every row pattern (rules.MODULES' SIGNATURES, with `search`)
and every module-level pattern of the rule modules and of diagnose/text (the scanner, the normaliser;
with the methods their module calls on them: a `.match` pattern only tries the start) on them. Per
pattern: the slowest 32x line, and its time against the 8x line of the same kind (near 4 is linear,
near 16 quadratic). Prints the --top slowest, the worst ratio (over patterns whose 32x time is at
least --floor-ms: below it the ratio is timer noise) and the worst time, each naming the pattern.

    python benchmarks/bench_pattern_scaling.py [--lines 30] [--runs 12] [--seed 1] [--top 15]
"""

from __future__ import annotations

import argparse
import glob
import importlib
import inspect
import json
import pkgutil
import random
import re
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from pgdoctor.diagnose import text as text_pkg
from pgdoctor.diagnose.rules import MODULES
from pgdoctor.model import lazy_re

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "corpus"
# Halves still held out are stored as .jsonl.gz, so the *.jsonl glob below never reads them.
HELD_OUT = ("v14/heldout.jsonl",)


def corpus_lines(count: int, runs: int, seed: int) -> list[str]:
    """`count` random lines, and `runs` random lines of non-space characters only (separators,
    base64, paths): rare in a random pick, and the worst case of an unanchored `\\S+`, whose
    repetitions joined with nothing make one long run."""
    lines: set[str] = set()
    for name in sorted(glob.glob(str(CORPUS / "**" / "*.jsonl"), recursive=True)):
        if name.replace("\\", "/").endswith(HELD_OUT):
            continue
        for raw in Path(name).read_text().splitlines():
            if raw.strip():
                lines.update(x for x in json.loads(raw)["log"].split("\n") if 60 < len(x) < 300)
    unique = sorted(lines)
    solid = sorted({x.strip() for x in unique if len(x.strip().split()) == 1 and len(x.strip()) > 60})
    rng = random.Random(seed)
    return rng.sample(unique, min(count, len(unique))) + rng.sample(solid, min(runs, len(solid)))


METHODS = ("search", "match", "fullmatch", "finditer", "findall", "split")


def module_patterns(mod: ModuleType) -> list[tuple[str, Any, tuple[str, ...]]]:
    """The module's own patterns (top-level names and the items of top-level tuples and lists),
    each with the methods its module calls on it (`search` when none is seen: a row's, or passed
    on): a `.match` pattern only tries the start of its subject."""
    out = []
    short = mod.__name__.removeprefix("pgdoctor.diagnose.")
    source = inspect.getsource(mod)
    for attr, obj in vars(mod).items():
        items = obj if isinstance(obj, (tuple, list)) else (obj,)
        used = tuple(sorted(set(re.findall(rf"\b{attr}\.({'|'.join(METHODS)})\(", source)))) or ("search",)
        for i, item in enumerate(items):
            if lazy_re.is_pattern(item):
                out.append((f"{short}.{attr}" + (f"[{i}]" if items is obj else ""), item, used))
    return out


def catalogue() -> list[tuple[str, Any, tuple[str, ...]]]:
    pats: list[tuple[str, Any, tuple[str, ...]]] = []
    for mod in MODULES:
        short = mod.__name__.rsplit(".", 1)[-1]
        pats += [(f"{short} row {row.name!r}", row.pattern, ("search",)) for row in mod.SIGNATURES]
        pats += module_patterns(mod)
    for info in pkgutil.iter_modules(text_pkg.__path__):
        pats += module_patterns(importlib.import_module(f"{text_pkg.__name__}.{info.name}"))
    seen: set[int] = set()
    out = []
    for name, pat, used in pats:  # rows reuse module-level patterns: time each object once
        if id(pat) not in seen and hasattr(pat, "search"):
            seen.add(id(pat))
            out.append((name, pat, used))
    return out


def once(pat: Any, used: tuple[str, ...], subject: Any, repeat: int = 2) -> float:
    """The least of `repeat` times of the slowest of the methods called on the pattern."""
    best = float("inf")
    for _ in range(repeat):
        slowest = 0.0
        for method in used:
            t0 = time.perf_counter()
            result = getattr(pat, method)(subject)
            if method == "finditer":
                list(result)
            slowest = max(slowest, time.perf_counter() - t0)
        best = min(best, slowest)
    return best


def measure(pat: Any, used: tuple[str, ...], lines: list[str]) -> tuple[float, float, str]:
    """(slowest 32x time, its ratio to the 8x time, the line) over lines and both joins."""
    is_bytes = isinstance(pat.pattern, bytes)
    worst = (0.0, 0.0, "")
    for line in lines:
        for sep in (" ", ""):
            short, long = sep.join([line] * 8), sep.join([line] * 32)
            if is_bytes:
                short, long = short.encode(), long.encode()  # type: ignore[assignment]
            t_short, t_long = once(pat, used, short), once(pat, used, long)
            if t_long > worst[0]:
                worst = (t_long, t_long / max(t_short, 1e-7), line)
    return worst


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=30, help="random corpus lines to repeat")
    ap.add_argument("--runs", type=int, default=12, help="random lines without spaces to add")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--top", type=int, default=15, help="how many of the slowest to list")
    ap.add_argument("--floor-ms", type=float, default=1.0, help="least 32x time whose ratio counts")
    args = ap.parse_args()
    lines = corpus_lines(args.lines, args.runs, args.seed)
    pats = catalogue()
    t0 = time.perf_counter()
    results = [(name, *measure(pat, used, lines)) for name, pat, used in pats]
    total = time.perf_counter() - t0
    print(f"patterns: {len(pats)}, lines: {len(lines)} x8 and x32, with and without spaces ({total:.1f} s)")
    results.sort(key=lambda r: -r[1])
    for name, t_long, ratio, line in results[: args.top]:
        print(f"  {t_long * 1e3:9.2f} ms  x{ratio:5.1f}  {name}   [{line[:50]!r}]")
    counted = [r for r in results if r[1] * 1e3 >= args.floor_ms]
    if counted:
        name, t_long, ratio, _ = max(counted, key=lambda r: r[2])
        floor = f"32x time >= {args.floor_ms} ms"
        print(f"worst ratio (32x/8x, {floor}): x{ratio:.1f}  {name} ({t_long * 1e3:.2f} ms)")
    else:
        print(f"worst ratio: no pattern took {args.floor_ms} ms on a 32x line")
    name, t_long, ratio, _ = results[0]
    print(f"worst time: {t_long * 1e3:.2f} ms  {name} (x{ratio:.1f})")


if __name__ == "__main__":
    main()
