"""Regenerate the flight-recorder code fixtures (tests/fixtures/codes/RUN28x/*.tar) from real
3-rank gloo runs of tests/fr_workload.py:

    python tests/make_fr_fixtures.py

RUN281 bad: rank 1 skipped an all_reduce (real dumps); RUN282 bad: rank 1 ran all_gather where the
others ran all_reduce (real dumps); good: every rank ran the same collectives (real dumps).
RUN283 bad cannot come from gloo on a CPU (gloo records no started/completed state): it is the
real "ok" dumps with the last collective rewritten in NCCL's format (profiling_name
"nccl:all_reduce", state "started" on rank 2, "completed" elsewhere, pg_status
last_completed_collective one lower on rank 2), as ProcessGroupNCCL's FlightRecorder writes them.
"""

from __future__ import annotations

import io
import os
import pickle
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fr_lab

CODES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "codes")


def _tar(dest: str, files: dict[str, bytes]) -> None:
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with tarfile.open(dest, "w") as tf:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0
            tf.addfile(info, io.BytesIO(data))


def _pickles(d: str) -> dict[str, bytes]:
    out = {}
    for n in sorted(os.listdir(d)):
        if n.endswith(".pkl"):
            with open(os.path.join(d, n), "rb") as fh:
                out[f"nccl_trace_{n.replace('.pkl', '')}"] = fh.read()
    return out


def _as_nccl_stall(dumps: dict[str, bytes]) -> dict[str, bytes]:
    out = {}
    for name, raw in dumps.items():
        d = pickle.loads(raw)  # our own recorded files, not user input
        last = d["entries"][-1]
        seq = last["collective_seq_id"]
        for e in d["entries"]:
            e["profiling_name"] = e["profiling_name"].replace("gloo:", "nccl:")
            e["state"] = "completed"
        if name.endswith("rank2"):
            last["state"] = "started"
            for st in d["pg_status"].values():
                st["last_completed_collective"] = seq - 1
        out[name] = pickle.dumps(d, protocol=2)
    return out


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        runs = {sc: fr_lab.run(sc, os.path.join(tmp, sc)) for sc in ("ok", "skip", "mismatch")}
        ok = _pickles(runs["ok"].out)
        _tar(os.path.join(CODES, "RUN281", "bad.tar"), _pickles(runs["skip"].out))
        _tar(os.path.join(CODES, "RUN282", "bad.tar"), _pickles(runs["mismatch"].out))
        _tar(os.path.join(CODES, "RUN283", "bad.tar"), _as_nccl_stall(ok))
        for code in ("RUN281", "RUN282", "RUN283"):
            _tar(os.path.join(CODES, code, "good.tar"), ok)
        logs = os.path.join(os.path.dirname(CODES), "logs")
        for sc in ("skip", "mismatch"):
            with open(os.path.join(logs, f"gloo_{sc}_3ranks_real.log"), "w") as fh:
                for r in range(3):
                    fh.write(runs[sc].log_text(r))


if __name__ == "__main__":
    main()
