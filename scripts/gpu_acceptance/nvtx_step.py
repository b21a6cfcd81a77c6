"""Step 6: pgdoctor.range under Nsight Compute, the one NVIDIA tool on the node.

    python -m scripts.gpu_acceptance.nvtx_step WORK     -> WORK/nvtx_report.json, WORK/ncu-*.txt
    python -m scripts.gpu_acceptance.nvtx_step --program (the profiled program)

ncu profiles only the kernels inside the NVTX ranges named by --nvtx-include, so the count of
kernels it profiles with `pgdoctor@fwd/` (inside pgdoctor.range("fwd")) and with a range that does
not exist (none) shows whether pgdoctor's ranges reach an NVIDIA tool. What ncu cannot show is in
the report: ncu sees no timeline, so the nesting and timing of ranges (what Nsight Systems shows)
are not checked here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from typing import Any

RUNS = {"fwd": "pgdoctor@fwd/", "absent": "pgdoctor@no-such-range/"}


def program() -> int:
    import torch

    import pgdoctor
    from pgdoctor.trace import instrument

    x = torch.randn(512, 512, device="cuda")
    with pgdoctor.range("fwd"):
        y = x @ x
    with pgdoctor.range("bwd"):
        z = (y * 2).sum()
    torch.cuda.synchronize()
    print(json.dumps({"nvtx_enabled": instrument.nvtx_enabled(), "z": float(z)}))
    return 0


def _kernels(csv_text: str) -> int:
    """Profiled kernels in ncu's --csv --page raw output: one data row per kernel after the header
    and units rows; ncu's own lines start with ==."""
    rows = [line for line in csv_text.splitlines() if line.startswith('"')]
    return max(0, len(rows) - 2)


def main(argv: list[str]) -> int:
    if argv == ["--program"]:
        return program()
    if len(argv) != 1:
        print("usage: python -m scripts.gpu_acceptance.nvtx_step WORK | --program", file=sys.stderr)
        return 2
    work = argv[0]
    ncu = shutil.which("ncu") or next((p for p in ("/usr/local/cuda/bin/ncu",) if os.path.exists(p)), None)
    report: dict[str, Any] = {"ncu": ncu, "not_shown": "range nesting and timing (a timeline tool's job)"}
    if ncu is None:
        report["result"] = "ncu not found: NVTX not checked under an NVIDIA tool"
    else:
        for name, pattern in RUNS.items():
            argv_ = [
                ncu,
                "--clock-control",
                "none",
                "--nvtx",
                "--nvtx-include",
                pattern,
                "--csv",
                "--page",
                "raw",
                "--metrics",
                "gpu__time_duration.sum",
                sys.executable,
                "-m",
                "scripts.gpu_acceptance.nvtx_step",
                "--program",
            ]
            try:
                p = subprocess.run(argv_, capture_output=True, text=True, timeout=25)
                text = p.stdout + p.stderr
                with open(os.path.join(work, f"ncu-{name}.txt"), "w", encoding="utf-8") as fh:
                    fh.write(text)
                report[name] = {
                    "rc": p.returncode,
                    "kernels": _kernels(p.stdout),
                    "program": next((ln for ln in p.stdout.splitlines() if ln.startswith("{")), None),
                }
            except subprocess.TimeoutExpired:
                report[name] = {"rc": None, "error": "ncu timed out after 25 s"}
        fwd, absent = report.get("fwd", {}), report.get("absent", {})
        ok = fwd.get("kernels", 0) >= 1 and absent.get("kernels", -1) == 0
        report["result"] = (
            "ncu profiled kernels inside pgdoctor@fwd and none for an absent range: the ranges reach the tool"
            if ok
            else "the ranges were not seen as expected (see ncu-*.txt)"
        )
    with open(os.path.join(work, "nvtx_report.json"), "w", encoding="utf-8") as fh:
        json.dump(report, fh, indent=1)
    print(report["result"])
    return 0 if ncu is not None and "reach the tool" in report["result"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
