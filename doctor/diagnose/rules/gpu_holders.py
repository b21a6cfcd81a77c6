"""cuda_oom before it happens: a process that no longer runs holds a GPU's memory.

Formats: nvidia-smi's process table (every driver since 2015: "|    0   N/A  N/A      1395      C   python
25081MiB |" with the GI/CI columns of 450+, "|    0     12345      C   python     10995MiB |" before them)
pasted beside `ps` output for the same PID whose state is stopped or a zombie: `ps aux` / `ps -aux`
("thomased  1395  1.7 14.4 89506440 28604880 pts/2 Tl May25 147:37 python train.py ...", STAT T/t:
stopped or traced, Z: zombie; "<defunct>") or `ps -o pid,stat,...` ("1395 Tl python train.py"). A stopped
process (Ctrl-Z, a debugger, a job suspended by its shell) or a zombie whose CUDA context was not torn down
keeps its device memory for as long as it exists; every job placed on that GPU then runs out of memory at
sizes that fit an empty GPU (RUN103). The nvidia-smi row alone is healthy (the job's own processes); only
the pair says it.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

# "|    0   N/A  N/A      1395      C   python                          25081MiB |"
_SMI_ROW = lazy_re.compile(
    r"^\|\s+(?P<gpu>\d{1,3})\s+(?:(?:N/A|\d+)\s+(?:N/A|\d+)\s+)?(?P<pid>\d{1,9})\s+(?P<type>C\+G|M\+C|C|G|M)"
    r"\s+(?P<name>\S(?:[^|]*?\S)?)\s+(?P<mib>\d{1,9})\s?MiB\s*\|"
)
# ps aux: USER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND; ps -o pid,stat,...: PID STAT ...
_PS_AUX = lazy_re.compile(
    r"^\s*(?P<user>[\w.+-]+)\s+(?P<pid>\d{1,9})\s+\d+(?:\.\d+)?\s+\d+(?:\.\d+)?\s+\d+\s+\d+\s+\S+\s+"
    r"(?P<stat>[A-Za-z<+]+)\s+\S+\s+\S+\s+(?P<cmd>\S.*)$"
)
_PS_O = lazy_re.compile(r"^\s*(?P<pid>\d{1,9})\s+(?P<stat>[A-Za-z<+]+)\s+(?P<cmd>\S.*)$")
_STALE = lazy_re.compile(r"^[TtZ]")
MIN_MIB = 1024  # a context alone is a few hundred MiB; a stale holder worth naming holds more


def _stale_state(pid: str, hit: Hit) -> Optional[tuple[str, str]]:
    for ln in (*hit.before(24, same_rank=False), *hit.after(48, same_rank=False)):
        for rx in (_PS_AUX, _PS_O):
            p = rx.match(ln.text)
            if p and p.group("pid") == pid:
                stat, cmd = p.group("stat"), p.group("cmd")
                if _STALE.match(stat) or "<defunct>" in cmd:
                    return stat, cmd
    return None


def _holder(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    mib = int(m.group("mib"))
    if mib < MIN_MIB:
        return None
    found = _stale_state(m.group("pid"), hit)
    if found is None:
        return None
    stat, cmd = found
    state = "a zombie" if stat.startswith("Z") or "<defunct>" in cmd else "stopped"
    facts: dict[str, Any] = {
        "other_pid": int(m.group("pid")),
        "gpu": int(m.group("gpu")),
        "other_process_mib": mib,
        "process_state": stat,
        "problem": "stale_process_holds_gpu_memory",
    }
    return [
        row.event(
            hit,
            f"process {m.group('pid')} ({cmd[:60]}) is {state} (ps state {stat}) and still holds {mib} MiB "
            f"on GPU {m.group('gpu')}: jobs placed on that GPU run out of memory until it is killed",
            facts,
            dedupe=(row.code, m.group("pid")),
        )
    ]


SIGNATURES = (
    Signature(
        "stale process holds gpu memory",
        _SMI_ROW,
        _holder,
        C.CUDA_OOM_OTHER_PROCESS.code,
        anchors=(b"MiB |",),
        worth=(rb"^\|\s+\d+\s.*\d\s?MiB\s*\|",),
        words=("mib",),
        anchor_from="nvidia-smi's 'MiB |' at the end of the process row",
        examples=("|    0   N/A  N/A      1395      C   python                          25081MiB |",),
    ),
)
parse = gated_reader(SIGNATURES)
