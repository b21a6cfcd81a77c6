"""The GPU acceptance run (docs/gpu.md): `bash scripts/gpu-acceptance.sh [--dry-run] [--out DIR]`.

Real run: links pgdoctor from this tree into a private folder (no pip, no network), installs the
carried wheels there, records where it runs (GPU, driver, torch, CUDA, NCCL), then runs the six
steps of steps.py, each command under its own timeout. Each step's folder becomes one
stepN-NAME.tar.gz in the output folder as soon as the step ends, beside summary.json (rewritten
after every step) and log.txt: at most 8 files, none over 16 MiB, so a run cut short still leaves
what it did. Exit 0 when every step passed, 1 otherwise, 2 on a usage error, 130 on Ctrl-C.

--dry-run checks here, without a GPU: the scripts parse, every pgdoctor command of the steps parses
against this tree's CLI, the children import, the carried wheels are there and install on
CPython 3.12 manylinux x86_64, and the timeouts fit the 8-minute budget.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

from scripts.gpu_acceptance import procs, tree, wheels
from scripts.gpu_acceptance.steps import BUDGET_S, SETUP_S, STEPS, Step, total_s

ROOT = Path(__file__).resolve().parents[2]
MAX_FILE = 16 * 1024 * 1024
MAX_FILES = 8


def _env(site: Path) -> dict[str, str]:
    env = dict(os.environ)
    # The private site first, then the tree (for this package and the test suite's writers).
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env["PATH"] = os.pathsep.join([str(site / "bin"), env.get("PATH", "")])
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _setup(work: Path, wheel_dir: str, log: Any) -> tuple[dict[str, str], dict[str, Any]]:
    site = work / "site"
    site.mkdir(parents=True)
    scripts = tree.link(ROOT, site)
    info: dict[str, Any] = {"linked": scripts}
    problems = wheels.check(wheel_dir)
    info["wheel_problems"] = problems
    for p in problems:
        log(f"setup: {p}")
    found = sorted(str(p) for p in Path(wheel_dir).glob("*.whl")) if os.path.isdir(wheel_dir) else []
    if found:
        r = procs.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "-q",
                "--no-index",
                "--no-deps",
                "--no-compile",
                "--no-cache-dir",
                "--target",
                str(site),
                *found,
            ],
            30,
            str(work),
            "pip-install",
        )
        info["pip_rc"] = r.rc
        log(f"setup: pip install of {len(found)} carried wheels: rc {r.rc} in {r.seconds} s")
    env = _env(site)
    r = procs.run(
        [sys.executable, "-m", "scripts.gpu_acceptance.versions"],
        10,
        str(work),
        "versions",
        env=env,
        cwd=str(ROOT),
    )
    try:
        info["node"] = json.loads((work / r.stdout).read_text())
    except (OSError, ValueError):
        info["node"] = f"versions failed (rc {r.rc})"
    return env, info


def _bundle(folder: Path, dest: Path) -> list[str]:
    """Tars folder into dest under MAX_FILE, leaving out the largest files until it fits; returns
    what was left out."""
    files = sorted((p for p in folder.rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)
    left: list[str] = []
    while True:
        with tarfile.open(dest, "w:gz") as tf:
            for p in files:
                tf.add(p, arcname=str(p.relative_to(folder)))
        if dest.stat().st_size <= MAX_FILE or not files:
            return left
        big = files.pop()
        left.append(f"{big.relative_to(folder)} ({big.stat().st_size} bytes)")


def _run_step(step: Step, work: Path, env: dict[str, str], log: Any) -> dict[str, Any]:
    folder = work / f"step{step.number}-{step.name}"
    folder.mkdir()
    rows = []
    t0 = time.monotonic()
    for c in step.cmds:
        argv = [a.replace("{py}", sys.executable).replace("{work}", str(folder)) for a in c.argv]
        r = procs.run(argv, c.timeout_s, str(folder), c.label, env=env, cwd=str(ROOT))
        ok = r.rc in c.ok_rcs
        status = "timeout" if r.timed_out else ("ok" if ok else f"rc {r.rc}")
        rows.append(
            {
                "label": c.label,
                "argv": argv,
                "rc": r.rc,
                "seconds": r.seconds,
                "status": status,
                "timeout_s": c.timeout_s,
                "expected_rc": list(c.ok_rcs),
            }
        )
        tail = (
            (folder / r.stdout).read_text(errors="replace").strip().splitlines()[-1:]
            if r.rc is not None
            else []
        )
        log(f"step {step.number} {c.label}: {status} in {r.seconds} s {tail[0][:200] if tail else ''}")
    out = {
        "step": step.number,
        "name": step.name,
        "what": step.what,
        "status": "ok" if all(r["status"] == "ok" for r in rows) else "failed",
        "seconds": round(time.monotonic() - t0, 1),
        "commands": rows,
    }
    return out


def real_run(out: Path, wheel_dir: str, only: Optional[set[int]]) -> int:
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="pgdoctor-gpu-acceptance-"))
    # Readable by the unprivileged user of step 5.
    work.chmod(0o755)
    log_path = out / "log.txt"
    summary: dict[str, Any] = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "steps": []}

    def log(line: str) -> None:
        print(line, flush=True)
        with open(log_path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def save() -> None:
        (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str) + "\n", encoding="utf-8")

    try:
        env, summary["setup"] = _setup(work, wheel_dir, log)
        log(f"setup: node {json.dumps(summary['setup'].get('node'), default=str)[:400]}")
        save()
        for step in STEPS:
            if only and step.number not in only:
                continue
            row = _run_step(step, work, env, log)
            row["left_out"] = _bundle(work / f"step{step.number}-{step.name}", out / step.bundle)
            summary["steps"].append(row)
            save()
    except KeyboardInterrupt:
        summary["interrupted"] = True
        save()
        log("interrupted")
        return 130
    finally:
        shutil.rmtree(work, ignore_errors=True)
    failed = [s["name"] for s in summary["steps"] if s["status"] != "ok"]
    summary["result"] = "passed" if not failed else f"failed: {', '.join(failed)}"
    save()
    log(f"gpu acceptance: {summary['result']} ({len(summary['steps'])} steps); results in {out}")
    return 0 if not failed else 1


def dry_run(wheel_dir: str) -> int:
    lines: list[tuple[bool, str]] = []
    for script in ("scripts/gpu-acceptance.sh", "scripts/gpu-wheels.sh"):
        r = subprocess.run(["bash", "-n", str(ROOT / script)], capture_output=True, text=True)
        lines.append(
            (r.returncode == 0, f"{script} parses" if r.returncode == 0 else f"{script}: {r.stderr.strip()}")
        )
    for p in wheels.check(wheel_dir) or []:
        lines.append((False, p))
    if not any(not ok for ok, text in lines if "wheel" in text or wheel_dir in text):
        lines.append(
            (
                True,
                f"{wheel_dir}: {', '.join(f'{k}=={v}' for k, v in wheels.REQUIRED.items())} "
                f"for CPython 3.12 manylinux x86_64",
            )
        )
    total = total_s()
    per = ", ".join(f"{s.number} {s.name} {s.timeout_s:.0f}" for s in STEPS)
    lines.append((total <= BUDGET_S, f"timeouts: setup {SETUP_S}, {per}: {total:.0f} s of {BUDGET_S} s"))
    nfiles = len(STEPS) + 2
    lines.append((nfiles <= MAX_FILES, f"output: {nfiles} files (at most {MAX_FILES})"))
    with tempfile.TemporaryDirectory(prefix="gpu-acceptance-dry-") as tmp:
        site = Path(tmp) / "site"
        site.mkdir()
        tree.link(ROOT, site)
        r = subprocess.run(
            [sys.executable, "-m", "scripts.gpu_acceptance.parse_check"],
            capture_output=True,
            text=True,
            env=_env(site),
            cwd=str(ROOT),
            timeout=120,
        )
        found = [ln for ln in r.stdout.splitlines() if ln.strip()]
        if r.returncode == 0:
            n = sum(len(s.cmds) for s in STEPS)
            lines.append((True, f"steps: {n} commands of {len(STEPS)} steps parse against this tree's CLI"))
        else:
            lines += [(False, ln) for ln in found] or [
                (False, f"parse check failed: {r.stderr.strip()[-400:]}")
            ]
    for ok, text in lines:
        print(f"[{'ok' if ok else 'x'}] {text}", file=sys.stdout if ok else sys.stderr)
    bad = sum(1 for ok, _ in lines if not ok)
    print(f"dry run: {'ready' if not bad else f'{bad} problem(s)'}")
    return 0 if not bad else 1


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="gpu-acceptance.sh", description=__doc__.split("\n\n")[0])
    ap.add_argument("--dry-run", action="store_true", help="check here, without a GPU, that the run is ready")
    ap.add_argument("--out", help="output folder (default: $OUT, else ./gpu-acceptance-out)")
    ap.add_argument(
        "--wheels",
        default=os.environ.get("PGDOCTOR_GPU_WHEELS", str(ROOT / wheels.DEFAULT_DIR)),
        help="folder of carried wheels (default: .gpu-wheels)",
    )
    ap.add_argument("--only", help="comma-separated step numbers to run (default: all)")
    try:
        a = ap.parse_args(argv)
        only = {int(x) for x in a.only.split(",")} if a.only else None
    except SystemExit as exc:
        return 2 if exc.code else 0
    except ValueError:
        print(f"gpu-acceptance: --only takes step numbers 1-{len(STEPS)}, not {a.only!r}", file=sys.stderr)
        return 2
    if only and not only <= {s.number for s in STEPS}:
        print(f"gpu-acceptance: --only takes step numbers 1-{len(STEPS)}, not {a.only!r}", file=sys.stderr)
        return 2
    if a.dry_run:
        return dry_run(a.wheels)
    out = Path(a.out or os.environ.get("OUT") or "gpu-acceptance-out").resolve()
    return real_run(out, a.wheels, only)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
