"""The environment `pgdoctor run` prepares so that a job leaves evidence: one row per variable,
with the value (a path under the run's private evidence directory where it names a file) and
why. A value the user set is never replaced; PYTHONPATH, a list, gets the shim directory in front
of the user's entries (and not at all when the user set PGDOCTOR_LIVE=0). docs/hang.md lists the
same rows (a test compares)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Knob:
    name: str
    value: str  # "{dir}" is the evidence directory, "{live}" the socket directory
    why: str
    prepend: bool = False  # a path list: the value goes in front of the user's entries


KNOBS: tuple[Knob, ...] = (
    Knob(
        "TORCH_FR_BUFFER_SIZE",
        "2000",
        "flight recorder on: the last 2000 collectives of each rank (torch >= 2.5; NCCL and gloo)",
    ),
    Knob("TORCH_NCCL_TRACE_BUFFER_SIZE", "2000", "the same for torch < 2.5"),
    Knob(
        "TORCH_NCCL_DUMP_ON_TIMEOUT", "1", "NCCL writes each rank's flight recorder when its watchdog fires"
    ),
    Knob(
        "TORCH_FR_DUMP_TEMP_FILE",
        "{dir}/fr-rank",
        "where those dumps go (torch appends the rank): into the run's evidence",
    ),
    Knob("TORCH_NCCL_DEBUG_INFO_TEMP_FILE", "{dir}/fr-rank", "the same for torch < 2.5"),
    Knob(
        "TORCH_FR_DEBUG_INFO_PIPE_FILE",
        "{live}/nccl-pipe-",
        "the debug-info pipe per rank in a private directory: writing to it makes the rank dump its recorder "
        "(pgdoctor hang does)",
    ),
    Knob("TORCH_NCCL_DEBUG_INFO_PIPE_FILE", "{live}/nccl-pipe-", "the same for torch < 2.8"),
    Knob(
        "PGDOCTOR_LIVE_DIR",
        "{live}",
        "the private (0700) directory of the ranks' pgdoctor sockets (pgdoctor.live() / instrument())",
    ),
    Knob(
        "PGDOCTOR_LIVE",
        "1",
        "each rank starts its pgdoctor socket at interpreter start, through the shim below, without "
        "a line of code (0: off)",
    ),
    Knob(
        "PYTHONPATH",
        "{live}/site",
        "put first: a directory holding only the sitecustomize.py shim (pgdoctor.trace.autostart) "
        "that starts the socket and then runs the sitecustomize it shadows",
        prepend=True,
    ),
    Knob("PYTHONFAULTHANDLER", "1", "a rank killed by SIGSEGV/SIGABRT prints its Python stack in the log"),
)
SHIM_DIR = "{live}/site"


def prepared(
    env: Mapping[str, str], evidence_dir: str, live_dir: str
) -> tuple[dict[str, str], list[dict[str, str]]]:
    """The job's environment and the rows applied (name, value, why); the user's values win."""
    out = dict(env)
    applied = []
    for k in KNOBS:
        value = k.value.format(dir=evidence_dir, live=live_dir)
        if k.prepend:
            if env.get("PGDOCTOR_LIVE") == "0":
                continue  # the user turned the socket off: no shim
            value = ":".join([value, *([env[k.name]] if env.get(k.name) else [])])  # Linux's separator
        elif k.name in env:
            continue
        out[k.name] = value
        applied.append({"name": k.name, "value": value, "why": k.why})
    return out, applied
