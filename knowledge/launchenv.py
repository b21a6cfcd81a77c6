"""What the launcher (torchrun, srun, mpirun, or hand-set variables) told this process.

Pure: it reads a mapping of environment variables, never os.environ, so checks, probes and the
collective launcher share one interpretation of RANK/WORLD_SIZE/SLURM_* and tests can feed any
combination.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Optional

TORCH_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
SLURM_VARS = (
    "SLURM_PROCID",
    "SLURM_NTASKS",
    "SLURM_LOCALID",
    "SLURM_NTASKS_PER_NODE",
    "SLURM_NODELIST",
    "SLURM_JOB_NODELIST",
    "SLURM_NNODES",
    "SLURM_NODEID",
    "SLURM_JOB_ID",
    "SLURM_STEP_GPUS",
    "SLURM_GPUS_ON_NODE",
)
OMPI_VARS = (
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_LOCAL_RANK",
    "OMPI_COMM_WORLD_LOCAL_SIZE",
)
INT_VARS = (
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "MASTER_PORT",
    "SLURM_PROCID",
    "SLURM_NTASKS",
    "SLURM_LOCALID",
    "SLURM_NNODES",
    "SLURM_NODEID",
    *OMPI_VARS,
)


@dataclass(frozen=True)
class LaunchInfo:
    """The launch as this process sees it. `launcher` is torchrun | slurm | mpi | env | none."""

    launcher: str
    rank: Optional[int]
    world_size: Optional[int]
    local_rank: Optional[int]
    local_world_size: Optional[int]
    master_addr: Optional[str]
    master_port: Optional[int]
    nodes: tuple[str, ...] = ()
    malformed: dict[str, str] = field(default_factory=dict)  # var -> raw value that is not an int

    @property
    def distributed(self) -> bool:
        return self.launcher != "none"


def _int(env: Mapping[str, str], name: str, bad: dict[str, str]) -> Optional[int]:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return None
    try:
        return int(raw.strip())
    except ValueError:
        bad[name] = raw
        return None


def _ntasks_per_node(raw: Optional[str]) -> Optional[int]:
    """SLURM_NTASKS_PER_NODE may read `4` or `4(x2)`; the first count applies to node 0."""
    if not raw:
        return None
    m = re.match(r"^\s*(\d+)", raw)
    return int(m.group(1)) if m else None


def parse_launch(env: Mapping[str, str]) -> LaunchInfo:
    """Torch variables win over Slurm's (torchrun inside srun sets both); Slurm fills gaps."""
    bad: dict[str, str] = {}
    ints = {name: _int(env, name, bad) for name in INT_VARS}
    nodelist = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST") or ""
    try:
        nodes = tuple(expand_hostlist(nodelist)) if nodelist else ()
    except ValueError:
        bad["SLURM_NODELIST"] = nodelist
        nodes = ()
    if "TORCHELASTIC_RUN_ID" in env or "GROUP_RANK" in env:
        launcher = "torchrun"
    elif any(k in env for k in ("RANK", "WORLD_SIZE")):
        launcher = "env"
    elif "SLURM_PROCID" in env and "SLURM_NTASKS" in env:
        launcher = "slurm"
    elif "OMPI_COMM_WORLD_RANK" in env:
        launcher = "mpi"
    else:
        launcher = "none"

    def pick(*names: str) -> Optional[int]:
        for n in names:
            if ints.get(n) is not None:
                return ints[n]
        return None

    master_addr = env.get("MASTER_ADDR") or None
    if master_addr is None and launcher == "slurm" and nodes:
        master_addr = nodes[0]
    return LaunchInfo(
        launcher=launcher,
        rank=pick("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK"),
        world_size=pick("WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE"),
        local_rank=pick("LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK"),
        local_world_size=pick("LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE")
        or _ntasks_per_node(env.get("SLURM_NTASKS_PER_NODE")),
        master_addr=master_addr,
        master_port=ints["MASTER_PORT"],
        nodes=nodes,
        malformed=bad,
    )


def _split_top(text: str) -> list[str]:
    """Split a Slurm hostlist on commas that are outside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced ']' in hostlist {text!r}")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if depth:
        raise ValueError(f"unbalanced '[' in hostlist {text!r}")
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


# The largest machines have tens of thousands of nodes; a hostlist past this is a typo or an
# attack (`n[0-999999999]` once took a whole host's memory), refused before anything is built.
MAX_HOSTS = 1 << 17
_MAX_DIGITS = 9


def _items(group: str) -> list[tuple[int, int, int]]:
    """(lo, hi, width) of each item of one bracket group, validated and bounded."""
    out = []
    for item in group.split(","):
        item = item.strip()
        lo, _, hi = item.partition("-") if "-" in item else (item, "", item)
        if not (lo.isdigit() and hi.isdigit()) or max(len(lo), len(hi)) > _MAX_DIGITS or int(hi) < int(lo):
            raise ValueError(f"bad item {item!r} in hostlist")
        out.append((int(lo), int(hi), len(lo)))
    return out


def _expand_one(pattern: str, budget: int) -> list[str]:
    m = re.search(r"\[([^\[\]]*)\]", pattern)
    if not m:
        return [pattern]
    head, tail = pattern[: m.start()], pattern[m.end() :]
    items = _items(m.group(1))
    count = 1
    for g in re.findall(r"\[([^\[\]]*)\]", pattern):  # every group multiplies the host count
        count *= sum(hi - lo + 1 for lo, hi, _ in _items(g))
        if count > budget:
            raise ValueError(f"hostlist expands to more than {MAX_HOSTS} hosts")
    out: list[str] = []
    for lo, hi, width in items:
        for i in range(lo, hi + 1):
            out.extend(_expand_one(head + str(i).zfill(width) + tail, budget - len(out)))
    return out


def expand_hostlist(text: str) -> list[str]:
    """Expand Slurm's compressed node list: `gpu[01-03,07],login1` -> gpu01 gpu02 gpu03 gpu07 login1.
    Zero padding follows the lower bound, as scontrol does."""
    hosts: list[str] = []
    for part in _split_top(text):
        hosts.extend(_expand_one(part, MAX_HOSTS - len(hosts)))
    return hosts
