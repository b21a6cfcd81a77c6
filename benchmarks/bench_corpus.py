"""Speed and top-1 of `pgdoctor diagnose` on the real-log corpora (tests/fixtures/corpus/).

For every case: the diagnosis in-process (diagnose_sources, as tests/diagnose/test_corpus.py runs it) and,
for --cli N cases per corpus (default all), `pgdoctor diagnose --json -` as a child process, as
a user or the project's scorer runs it (interpreter start-up and imports included). Prints, per
corpus and per class: cases, top-1 right (the scorer's label -> category rules), mean and worst
milliseconds in-process; then the CLI's mean seconds per case against the 0.3 s budget.

    python benchmarks/bench_corpus.py [--cli N] [FILE.jsonl ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pgdoctor.diagnose.api import diagnose_sources  # noqa: E402
from tests.diagnose.test_corpus import accepted  # noqa: E402  (the scorer's rules, one copy)

CLI_BUDGET_S = 0.3


def _cases(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _top1(findings: list[Any]) -> Any:
    real = [f for f in findings if f.severity.value in ("warn", "fail")]
    return real[0].category if real else None


def _warm_bytecode() -> None:
    """Writes the bytecode of every pgdoctor module, as `pip install` does for a user: without it, a
    shell that sets PYTHONDONTWRITEBYTECODE (or an editable install never imported with bytecode on)
    times the compilation of every module's source on every call (0.15 s more per call). An untimed
    call on an empty log is not enough: the rule modules are imported when a log reaches them."""
    import pgdoctor

    roots = {str(Path(p).resolve()) for p in pgdoctor.__spec__.submodule_search_locations or []}
    for name in ("model", "knowledge", "checks", "probes"):
        mod = __import__(f"pgdoctor.{name}", fromlist=["_"])
        roots |= {str(Path(p).resolve()) for p in mod.__path__}
    cmd = [sys.executable, "-m", "compileall", "-q", *sorted(roots)]
    subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)


def _cli_seconds(cases: list[dict[str, Any]]) -> list[float]:
    out = []
    for c in cases:
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "pgdoctor", "diagnose", "--json", "-"],
            input=c["log"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument(
        "--cli", type=int, default=-1, help="cases per corpus run through the CLI (-1: all, 0: none)"
    )
    args = ap.parse_args()
    corpus = ROOT / "tests" / "fixtures" / "corpus"
    files = args.files or [corpus / "real_logs_v1.jsonl", *sorted((corpus / "new").glob("*.jsonl"))]
    cli_all: list[float] = []
    if args.cli:
        _warm_bytecode()
    for path in files:
        cases = _cases(path)
        per: dict[str, list[Any]] = defaultdict(lambda: [0, 0, []])
        for c in cases:
            t0 = time.perf_counter()
            first = _top1(diagnose_sources([(c["id"], c["log"])]))
            ms = (time.perf_counter() - t0) * 1000
            row = per[c["category"]]
            row[0] += first in accepted(c)
            row[1] += 1
            row[2].append(ms)
        right = sum(r[0] for r in per.values())
        every = [ms for r in per.values() for ms in r[2]]
        print(
            f"{path.name}: top-1 {right}/{len(cases)} ({right / len(cases):.1%}), in-process "
            f"{statistics.mean(every):.2f} ms/case mean, {max(every):.1f} ms worst"
        )
        for k in sorted(per):
            r = per[k]
            print(
                f"  {k:32s} {r[0]:3d}/{r[1]:<3d} {statistics.mean(r[2]):6.2f} ms mean {max(r[2]):6.1f} ms "
                f"worst"
            )
        n = len(cases) if args.cli < 0 else min(args.cli, len(cases))
        if n:
            secs = _cli_seconds(cases[:n])
            cli_all += secs
            print(
                f"  CLI `pgdoctor diagnose --json -`: {statistics.mean(secs):.3f} s/case mean over {n} "
                f"cases, "
                f"{max(secs):.3f} s worst"
            )
    if cli_all:
        mean = statistics.mean(cli_all)
        print(
            f"CLI overall: {mean:.3f} s/case over {len(cli_all)} cases (budget {CLI_BUDGET_S} s): "
            f"{'within' if mean <= CLI_BUDGET_S else 'OVER'} budget"
        )


if __name__ == "__main__":
    main()
