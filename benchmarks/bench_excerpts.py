"""How much of a diagnosis its evidence line carries alone, as a thread's title quotes it.

For every dev case that `pgdoctor diagnose` gets right (the dev corpora of tests/helpers/shapes.py; never
a held-out file), the root finding's evidence line is diagnosed on its own and in the ways titles quote a
message: behind an issue tracker's tag ("[Bug]: "), followed by the writer's words (" when training with
8 GPUs"), without the exception type before it ("RuntimeError: "), lower-cased. Prints, per excerpt, how
many keep the root finding's category. The line alone is the ceiling of the others: a record whose
meaning needs the lines around it (a table, a stack) is lost in every excerpt.

    python benchmarks/bench_excerpts.py [--every N] [--misses EXCERPT]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pgdoctor.diagnose.api import diagnose_sources  # noqa: E402
from pgdoctor.model import Finding  # noqa: E402
from tests.diagnose.test_corpus import accepted  # noqa: E402  (the scorer's rules, one copy)
from tests.helpers.shapes import dev_cases  # noqa: E402

_TYPE = re.compile(r"^\s*(?:\w+\.)*\w*(?:Error|Exception):\s*")
EXCERPTS: dict[str, Callable[[str], str]] = {
    "alone": lambda line: line,
    "tag": lambda line: "[Bug]: " + line,
    "words after": lambda line: line + " when training with 8 GPUs",
    "no type": lambda line: _TYPE.sub("", line),
    "lower case": str.lower,
}


def _root(text: str, name: str) -> Optional[Finding]:
    real = [f for f in diagnose_sources([(name, text)]) if f.severity.value in ("warn", "fail")]
    return real[0] if real else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=1, help="every N-th dev case only")
    ap.add_argument("--misses", default="", help="list the cases this excerpt loses")
    args = ap.parse_args()
    t0 = time.perf_counter()
    kept = dict.fromkeys(EXCERPTS, 0)
    lost: list[str] = []
    n = 0
    for case in dev_cases(args.every):
        if case["category"] == "other_ambiguous":
            continue
        root = _root(case["log"], case["id"])
        lines = case["log"].split("\n")
        if root is None or root.category not in accepted(case) or not root.evidence:
            continue
        no = root.evidence[0].line
        if not no or no > len(lines):
            continue
        n += 1
        line = lines[no - 1].strip()
        for name, excerpt in EXCERPTS.items():
            got = _root(excerpt(line), case["id"])
            if got is not None and got.category == root.category:
                kept[name] += 1
            elif name == args.misses:
                lost.append(f"{case['id']} {root.code} -> {got.code if got else None}: {line[:120]}")
    print(f"{n} dev cases right, with an evidence line")
    for name, k in kept.items():
        print(f"  {name:12s} keeps {k}/{n} ({k / max(n, 1):.1%})")
    for m in lost:
        print(f"      lost {m}")
    print(f"{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
