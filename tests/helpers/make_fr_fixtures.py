"""Regenerate the flight-recorder fixtures from real gloo runs of tests/helpers/fr_workload.py:

    python -m tests.helpers.make_fr_fixtures [codes|scenarios [NAME...]|code-tars|all]     (default: all)

scenarios: one 4-rank gloo job per entry of tests/helpers/fr_scenarios.py GLOO, each kept as
tests/fixtures/fr/<name>.tar (rank<N>.pkl and rank<N>.json, as _dump_fr_trace() and
_dump_fr_trace_json() returned them); then the bad/good tars of RUN284-RUN290, copied from those
jobs where gloo records the fault and written by tests/helpers/fr_scenarios.py in NCCL's format where only
NCCL does (states, send/recv, coalesced groups).

codes (the 3-rank fixtures of RUN281-RUN283):

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

from tests.helpers import fr_lab, fr_scenarios

CODES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "codes")


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


def _dir_files(d: str) -> dict[str, bytes]:
    out = {}
    for n in sorted(os.listdir(d)):
        with open(os.path.join(d, n), "rb") as fh:
            out[n] = fh.read()
    return out


def scenarios(only: list[str]) -> None:
    os.makedirs(fr_scenarios.FR_DIR, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, (_, buffer_size) in fr_scenarios.GLOO.items():
            if only and name not in only:
                continue
            out = os.path.join(tmp, name)
            run = fr_lab.run(name, out, world=4, timeout_s=90, buffer_size=buffer_size, pg_timeout_s=2)
            print(name, [o.returncode for o in run.outcomes], flush=True)
            with open(os.path.join(fr_scenarios.FR_DIR, f"{name}.tar"), "wb") as fh:
                fh.write(fr_scenarios.tar_bytes(_dir_files(out)))
    code_tars()


def code_tars() -> None:
    """bad/good tars of RUN284-RUN290 from the scenario tars and the NCCL-format writers."""
    nccl = {s.name: s for s in fr_scenarios.nccl_scenarios()}

    def written(name: str) -> dict[str, bytes]:
        with tempfile.TemporaryDirectory() as d:
            nccl[name].write(d, False)
            return _dir_files(d)

    def real(name: str) -> dict[str, bytes]:
        with tarfile.open(os.path.join(fr_scenarios.FR_DIR, f"{name}.tar")) as tf:
            return {m.name: tf.extractfile(m).read() for m in tf.getmembers()}  # type: ignore[union-attr]

    plan = {
        "RUN284": (real("size_mismatch"), real("clean_legal")),
        "RUN285": (real("dtype_mismatch"), real("clean_legal")),
        "RUN286": (written("nccl_state_not_started"), written("nccl_clean_legal")),
        "RUN287": (written("nccl_p2p_unmatched"), written("nccl_batched_p2p_clean")),
        "RUN288": (written("nccl_p2p_size"), written("nccl_batched_p2p_clean")),
        "RUN289": (written("nccl_coalesced_uneven"), written("nccl_coalesced_clean")),
        "RUN290": (real("died"), real("monitored_barrier_clean")),
    }
    for code, (bad, good) in plan.items():
        _tar(os.path.join(CODES, code, "bad.tar"), bad)
        _tar(os.path.join(CODES, code, "good.tar"), good)


def main() -> None:
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    if what in ("scenarios", "all"):
        scenarios(sys.argv[2:])
    if what == "code-tars":
        code_tars()
    if what in ("codes", "all"):
        codes()


def codes() -> None:
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
