"""Top-1 of `pgdoctor diagnose` on the dev corpora re-rendered in every paste shape.

Every dev case (real_logs_v1, real_logs_v2, new/*.jsonl, v3/dev.jsonl, v3/dev2.jsonl; never a
held-out file) is diagnosed plain and then in each shape of tests/helpers/shapes.py (URL-encoded,
HTML-escaped, hard-wrapped, JSON-escaped, prefixed, coloured, CRLF, ...). Prints per shape: top-1
right out of all cases (the scorer's rules of tests/diagnose/test_corpus.py), and how many of the
cases right plain stay right in the shape; --misses lists the cases a shape loses.

    python benchmarks/bench_shapes.py [--every N] [--shapes url_query,html] [--misses]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.diagnose.test_corpus import accepted  # noqa: E402  (the scorer's rules, one copy)
from tests.helpers.shapes import SHAPES, dev_cases, top1  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=1, help="every N-th dev case only")
    ap.add_argument("--shapes", default="", help="comma-separated shape names (default: all)")
    ap.add_argument("--misses", action="store_true", help="list the cases each shape loses")
    args = ap.parse_args()
    cases = dev_cases(args.every)
    names = [s for s in args.shapes.split(",") if s] or list(SHAPES)
    t0 = time.perf_counter()
    plain = {c["id"]: top1(c["log"], c["id"]) in accepted(c) for c in cases}
    n_plain = sum(plain.values())
    print(f"{len(cases)} dev cases; plain top-1 {n_plain}/{len(cases)} ({n_plain / len(cases):.1%})")
    worst = 1.0
    for shape in names:
        render = SHAPES[shape]
        right = kept = 0
        lost = []
        for c in cases:
            got = top1(render(c["log"]), c["id"])
            ok = got in accepted(c)
            right += ok
            if plain[c["id"]]:
                kept += ok
                if not ok:
                    lost.append(f"{c['id']} -> {got}")
        worst = min(worst, kept / max(n_plain, 1))
        print(
            f"  {shape:12s} top-1 {right:4d}/{len(cases)} ({right / len(cases):6.1%}); "
            f"kept {kept}/{n_plain} of the plain rights ({kept / max(n_plain, 1):6.1%})"
        )
        if args.misses:
            for m in lost:
                print(f"      lost {m}")
    print(f"worst shape keeps {worst:.1%} of the plain rights; {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
