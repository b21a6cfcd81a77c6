"""Step 5's hang tiers: a CUDA rank blocked behind the GPU, read by `pgdoctor hang` and by the
stack tools it uses (py-spy, pystack), as root and as an unprivileged user.

    python -m scripts.gpu_acceptance.hang_step WORK        -> WORK/hang_report.json, WORK/*.out
    python -m scripts.gpu_acceptance.hang_step --rank      (the blocked rank itself)

`pgdoctor hang` is new: where this tree has no such command, its rows say "not available in this
tree" and the stack tools still run (they show what the tiers can read on this node).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any, Callable, Optional

NOBODY = 65534
HANG_ARGV = ("pgdoctor", "hang", "{pid}", "--json", "--timeout", "7")
TOOLS: dict[str, tuple[tuple[str, ...], float]] = {
    "pgdoctor-hang": (HANG_ARGV, 8.0),
    "py-spy": (("py-spy", "dump", "--json", "--pid", "{pid}"), 5.0),
    "pystack": (("pystack", "remote", "{pid}"), 5.0),
}


def pgdoctor_commands() -> list[tuple[str, ...]]:
    """For the dry run's parse check (only where the tree has the command)."""
    return [HANG_ARGV]


def hang_available() -> bool:
    from pgdoctor.cli import LAZY_COMMANDS

    return "hang" in LAZY_COMMANDS


def rank() -> int:
    """Blocks its main thread in a CUDA synchronize behind a long GPU sleep, as a rank stuck in a
    collective does, after saying it is ready."""
    import torch

    torch.cuda.set_device(0)
    torch.ones(1, device="cuda")
    torch.cuda.synchronize()
    print("ready", flush=True)
    for _ in range(20):
        torch.cuda._sleep(2_000_000_000)
        torch.cuda.synchronize()
    return 0


def _as(uid: Optional[int]) -> Optional[Callable[[], None]]:
    if uid is None:
        return None

    def drop() -> None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)

    return drop


def _run(argv: list[str], timeout: float, uid: Optional[int]) -> dict[str, Any]:
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, preexec_fn=_as(uid))
        return {
            "argv": argv,
            "rc": p.returncode,
            "seconds": round(time.monotonic() - t0, 2),
            "stdout": p.stdout[-20000:],
            "stderr": p.stderr[-4000:],
        }
    except subprocess.TimeoutExpired:
        return {"argv": argv, "rc": None, "seconds": timeout, "stderr": f"timed out after {timeout} s"}
    except OSError as exc:
        return {"argv": argv, "rc": 127, "stderr": str(exc)}


def _as_user(uid: Optional[int], available: bool) -> dict[str, Any]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "scripts.gpu_acceptance.hang_step", "--rank"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        preexec_fn=_as(uid),
        start_new_session=True,
    )
    out: dict[str, Any] = {"rank_pid": proc.pid}
    try:
        assert proc.stdout is not None
        ready = proc.stdout.readline().strip() == "ready"
        out["rank_ready"] = ready
        if ready:
            time.sleep(1.0)  # inside the synchronize
            for name, (argv, timeout) in TOOLS.items():
                if name == "pgdoctor-hang" and not available:
                    out[name] = "not available in this tree"
                    continue
                out[name] = _run([a.replace("{pid}", str(proc.pid)) for a in argv], timeout, uid)
    finally:
        proc.kill()
        proc.wait()
    return out


def main(argv: list[str]) -> int:
    if argv == ["--rank"]:
        return rank()
    if len(argv) != 1:
        print("usage: python -m scripts.gpu_acceptance.hang_step WORK | --rank", file=sys.stderr)
        return 2
    available = hang_available()
    report: dict[str, Any] = {"pgdoctor_hang": "available" if available else "not available in this tree"}
    root = os.geteuid() == 0
    report["root"] = _as_user(None, available) if root else "not run: this run is not root"
    report["unprivileged"] = _as_user(NOBODY if root else None, available)
    with open(os.path.join(argv[0], "hang_report.json"), "w", encoding="utf-8") as fh:
        json.dump(report, fh, indent=1)
    for who in ("root", "unprivileged"):
        r = report[who]
        if isinstance(r, dict):
            rows = {k: (v if isinstance(v, str) else f"rc {v.get('rc')}") for k, v in r.items() if k in TOOLS}
            print(f"{who}: rank ready {r.get('rank_ready')}; {rows}")
    print(f"pgdoctor hang: {report['pgdoctor_hang']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
