"""Step 1's recorder: every NVML call of the gpu probe against the live NVML, written as a replay
fixture (tests/fixtures/nvml format), then replayed through the strict fake, which must give the
very same measurements (a call the probe makes that the recording lacks raises there).

    python -m scripts.gpu_acceptance.nvml_step WORK [--from FIXTURE]
        -> WORK/nvml_<gpu>.json, WORK/nvml_replay.json

--from records a replay of FIXTURE instead of the live NVML: how the suite tests this recorder
without a GPU (a recording of a recording must replay to the same measurements).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
from typing import Any


def _row(m: Any) -> tuple[str, str, str]:
    return (
        m.key,
        json.dumps(dataclasses.asdict(m.scope), sort_keys=True),
        json.dumps(m.value, sort_keys=True, default=repr),
    )


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 3) or (len(argv) == 3 and argv[1] != "--from"):
        print("usage: python -m scripts.gpu_acceptance.nvml_step WORK [--from FIXTURE]", file=sys.stderr)
        return 2
    work = argv[0]
    from pgdoctor.probes.base import ProbeContext
    from pgdoctor.probes.gpu.health import read_all
    from pgdoctor.probes.gpu.nvml import LiveBackend, NvmlError, RecordingBackend, ReplayBackend
    from scripts.gpu_acceptance.versions import node, source_line

    info = node()
    inner = ReplayBackend.from_fixture(argv[2]) if len(argv) == 3 else LiveBackend()
    rec = RecordingBackend(inner)
    try:
        rec.init()
    except NvmlError as exc:
        print(f"NVML did not start: {exc.reason.value}: {exc.detail}", file=sys.stderr)
        return 3
    ctx = ProbeContext(env=dict(os.environ))
    try:
        live = read_all(rec, ctx)
    finally:
        rec.shutdown()
    fixture = rec.fixture(source_line(info))
    names = sorted({str(m.value) for m in live if m.key == "gpu.name"})
    gpu = re.sub(r"[^a-z0-9]+", "_", (names[0] if names else "gpu").lower()).strip("_") or "gpu"
    path = os.path.join(work, f"nvml_{gpu}.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(fixture, fh, indent=1)
        fh.write("\n")
    replay = ReplayBackend.from_fixture(path)
    replay.init()
    try:
        again = read_all(replay, ctx)
    except LookupError as exc:  # UnrecordedCall: the recorder missed a call the probe makes
        print(f"replay failed: {exc}", file=sys.stderr)
        return 1
    a, b = sorted(map(_row, live)), sorted(map(_row, again))
    diff = sorted(set(a) ^ set(b))
    unavailable = sorted({m.key for m in live if type(m.value).__name__ == "Unavailable"})
    report = {
        "fixture": os.path.basename(path),
        "calls": len(rec.calls),
        "measurements": len(live),
        "replay_identical": not diff,
        "replay_differences": diff[:50],
        "unavailable_keys": unavailable,
    }
    with open(os.path.join(work, "nvml_replay.json"), "w", encoding="utf-8") as fh:
        json.dump(report, fh, indent=1)
    print(
        f"recorded {len(rec.calls)} NVML calls into {path}; replay "
        f"{'identical' if not diff else f'differs in {len(diff)} rows'}; {len(unavailable)} keys unavailable"
    )
    return 0 if not diff else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
