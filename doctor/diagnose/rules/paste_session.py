"""Where a paste turns from the job's output to the person's own session: a shell command they typed to look
around (a prompt, or a bare `kubectl get pods` / `nvidia-smi` / `ping host`) or Python's interactive
interpreter (its banner; its `>>> ` prompt is gone before this reads the line, as the reader takes it for a
markdown quote). Rows that read "the log ends in this loop" (a wait, a connect retry) read
the lines after their hit only up to there: what follows is not the job going on.
"""

from __future__ import annotations

from pgdoctor.diagnose.event import Hit
from pgdoctor.diagnose.text.normalize import Line
from pgdoctor.model import lazy_re

SESSION = lazy_re.compile(
    r"^\s*(?:\$\s|\S+@[\w.-]+:\S*[$#]\s|\(\S+\)\s*\S*[$#]\s|"
    r"Python \d\.\d+\.\d+ \(|Type \"help\", \"copyright\"|"
    r"(?:kubectl|docker|nvidia-smi|netstat|ping|telnet|curl|nslookup|ifconfig|hostname)(?:\s+[\w./:=@-]+)*\s*$)"
)


def job_lines_after(hit: Hit, n: int, same_rank: bool = False) -> list[Line]:
    """The n lines after the hit, cut where the person's own shell or interpreter session starts."""
    out: list[Line] = []
    for ln in hit.after(n, same_rank=same_rank):
        if SESSION.search(ln.text):
            break
        out.append(ln)
    return out
