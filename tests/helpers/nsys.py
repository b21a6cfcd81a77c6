"""The real Nsight Systems of scripts/nsys-setup.sh (Debian non-free 2022.4, unpacked into the
cache) for tests: find it or skip with the setup's reason, export a report to SQLite, and read
the NVTX ranges of an export with plain SQL (an oracle independent of pgdoctor's reader)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import pytest

from pgdoctor.diagnose.text.cache import cache_dir as pgdoctor_cache_dir
from tests.helpers.paths import ROOT


def cache_dir() -> Path:
    # no sound cache place (a missing home): a path that holds nothing, so the tests skip
    return (pgdoctor_cache_dir() or Path("/nonexistent-pgdoctor-cache")) / "nsys"


def nsys_or_skip() -> Path:
    """The nsys binary; runs the (cached, idempotent) setup once if the tree is not there."""
    nsys = cache_dir() / "tree" / "usr" / "bin" / "nsys"
    if not (cache_dir() / "tree" / ".complete").exists():
        subprocess.run(["bash", str(ROOT / "scripts" / "nsys-setup.sh")], capture_output=True, timeout=600)
    if (cache_dir() / "tree" / ".complete").exists() and nsys.exists():
        return nsys
    why = cache_dir() / "unavailable.txt"
    reason = why.read_text().strip() if why.exists() else "scripts/nsys-setup.sh did not produce it"
    pytest.skip(f"Nsight Systems (Debian non-free nsight-systems 2022.4) cannot be had here: {reason}")


def env_with_nsys(nsys: Path, tmp: Path) -> dict[str, str]:
    """nsys on PATH, and TMPDIR in the test's directory: nsys keeps its lock files (TMPDIR/nvidia)
    and, when a run is cut short, its .qdstrm there."""
    return dict(os.environ, PATH=f"{nsys.parent}{os.pathsep}{os.environ.get('PATH', '')}", TMPDIR=str(tmp))


# nsys 2022.4's CLI talks to the agent it starts over a local socket. Under loaded CI runs it lost
# that link twice, each time before any report was written, and said so in a line of its own:
# "[QuadDCommon::tag_message*] = Local Endpoint is not available." (the agent was not up in time)
# and "End of file" (the agent's end of the socket closed). Neither is pgdoctor's doing.
NSYS_AGENT_NOT_UP = "Local Endpoint is not available"
NSYS_AGENT_LOST = "End of file"
# A third start-up race, once under a machine loaded far past its two cores: the CLI's ProcessWaiter
# opened the launched process's named semaphore before it existed (sem_open: No such file or directory).
NSYS_WAITER_EARLY = ("ProcessWaiterImpl", "sem_open")


def nsys_lost_its_agent(stderr: str) -> bool:
    if all(word in stderr for word in NSYS_WAITER_EARLY):
        return True
    return any(NSYS_AGENT_NOT_UP in ln or ln.strip() == NSYS_AGENT_LOST for ln in stderr.splitlines())


def run_retrying_nsys_startup(
    cmd: list[str], report: Optional[Path] = None, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    """subprocess.run(cmd, capture_output=True, text=True, **kwargs), run once more when nsys lost
    the link to its own agent (nsys_lost_its_agent), or when `report` (the .nsys-rep the run should
    write) is not there after it: in one suite run under a full machine (three test workers on two
    cores) the profiled job ended and nsys 2022.4 wrote no report, and the same test passed alone three
    times after. Any other outcome, and a second such run, stands (export_sqlite then says what is missing).
    """
    res = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if nsys_lost_its_agent(res.stderr) or (report is not None and not report.exists()):
        res = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    return res


def export_sqlite(nsys: Path, report: Path) -> Path:
    """The report exported to SQLite by nsys itself. Exported once more when the first export fails: under
    a full machine (three test workers on two cores) nsys 2022.4's export exited 1 once in a suite run and
    passed alone every time after; a second failure fails with nsys's own words."""
    out = report.with_suffix(".sqlite")
    cmd = [str(nsys), "export", "--type", "sqlite", "--force-overwrite", "true", "-o", str(out), str(report)]
    env = env_with_nsys(nsys, report.parent)
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    if res.returncode != 0:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode == 0, f"nsys export exited {res.returncode}: {(res.stdout + res.stderr)[-3000:]}"
    return out


@dataclass(frozen=True)
class NvtxRange:
    pid: int
    tid: int
    domain: str  # "" for the global domain
    message: str
    start_ns: int  # wall clock (the session's UTC start + the event's offset)
    end_ns: int


PUSH_POP = 59  # ENUM_NSYS_EVENT_TYPE NvtxPushPopRange
DOMAIN_CREATE = 75  # NvtxDomainCreate: its text is the domain's name, its domainId the id


def nvtx_ranges(db: Path) -> list[NvtxRange]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        t0 = con.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()[0]
        # Domain ids are per process: (pid, domainId) -> name.
        domains = {
            ((g >> 24) & 0xFFFFFF, d): text
            for g, d, text in con.execute(
                "SELECT globalTid, domainId, text FROM NVTX_EVENTS WHERE eventType = ?", (DOMAIN_CREATE,)
            )
        }
        rows = con.execute(
            "SELECT e.start, e.end, e.globalTid, e.domainId, coalesce(e.text, s.value) FROM NVTX_EVENTS e "
            "LEFT JOIN StringIds s ON s.id = e.textId WHERE e.eventType = ? ORDER BY e.start",
            (PUSH_POP,),
        )
        out = []
        for start, end, gtid, dom, text in rows:
            pid, tid = (gtid >> 24) & 0xFFFFFF, gtid & 0xFFFFFF
            out.append(
                NvtxRange(
                    pid,
                    tid,
                    domains.get((pid, dom), "") if dom else "",
                    text or "",
                    t0 + start,
                    t0 + (end if end is not None else start),
                )
            )
        return out
    finally:
        con.close()


def parents(ranges: list[tuple[int, int, str]]) -> list[tuple[str, str]]:
    """(message, message of the innermost range enclosing it on the same thread) per range,
    from (start, end, message) triples of one thread."""
    out = []
    stack: list[tuple[int, int, str]] = []
    for start, end, msg in sorted(ranges, key=lambda r: (r[0], -r[1])):
        while stack and stack[-1][1] <= start:  # it ended before this one began
            stack.pop()
        out.append((msg, stack[-1][2] if stack else ""))
        stack.append((start, end, msg))
    return out


def kill_orphan_agents() -> list[int]:
    """Kill the nsys agents (`nsys --start-agent --session-name=profile-<name>-<pid>`, run from
    this cache's tree) whose `nsys profile` process <pid> is gone: the agent daemonizes, so a
    profile that timed out leaves it spinning."""
    tree = str(cache_dir() / "tree")
    killed = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if (
            len(argv) < 3
            or not argv[0].decode(errors="replace").startswith(tree)
            or b"--start-agent" not in argv
        ):
            continue
        session = next((a for a in argv if a.startswith(b"--session-name=")), b"")
        owner = session.rsplit(b"-", 1)[-1]
        if owner.isdigit() and Path(f"/proc/{owner.decode()}").exists():
            continue
        try:
            os.kill(int(proc.name), 9)
            killed.append(int(proc.name))
        except OSError:
            pass
    return killed
