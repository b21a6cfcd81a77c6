"""The evidence of one live rank, as `pgdoctor hang` reads it and as `--save` writes it
(`hang-rank<R>.json`, one file per rank, so the directories of several nodes merge by listing
them together). Plain data: the samples of the rank's main-thread stack (innermost frame
first), its CPU time at each sample, the /proc facts, which evidence tiers worked and why the
others did not, its DataLoader workers. The verdict is computed from this again wherever it is
read, so `diagnose DIR` gives the answer `hang` gave.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from pgdoctor.knowledge.dist_calls import COLLECTIVE_CALLS, SETUP_CALLS, WAIT_CALLS

# The first key of every saved file: how diagnose tells this evidence from a log or a dump.
MAGIC = "pgdoctor_hang_evidence"
VERSION = 1
FILE_RE = re.compile(r"hang-rank(\d+)(?:-pid\d+)?\.json$")


@dataclass(frozen=True)
class Frame:
    file: str
    line: int
    function: str

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "function": self.function}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Frame:
        return cls(str(d.get("file", "")), int(d.get("line", 0) or 0), str(d.get("function", "")))

    def where(self) -> str:
        return f"{short_path(self.file)}:{self.line}"


@dataclass(frozen=True)
class Worker:
    """A DataLoader worker (or any child process carrying its rank's RANK): never a rank."""

    pid: int
    stack: tuple[Frame, ...] = ()
    state: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"pid": self.pid, "state": self.state, "stack": [f.to_json() for f in self.stack]}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Worker:
        return cls(
            int(d.get("pid", 0)),
            tuple(Frame.from_json(f) for f in d.get("stack", ())),
            str(d.get("state", "")),
        )


@dataclass
class RankEvidence:
    rank: int
    pid: int
    host: str = ""
    job: str = ""  # the job's key: TORCHELASTIC_RUN_ID, else MASTER_ADDR:MASTER_PORT
    world_size: Optional[int] = None
    local_rank: Optional[int] = None
    rank_source: str = "environ"  # environ | cmdline
    samples: list[list[Frame]] = field(default_factory=list)  # main-thread stacks, innermost first
    sample_times_s: list[float] = field(default_factory=list)  # monotonic time of each /proc read
    cpu_s: list[float] = field(default_factory=list)  # the process's CPU time at each read
    state: str = ""  # /proc/PID/stat state letter at the last read
    wchan: str = ""
    threads: int = 0
    tiers: dict[str, str] = field(default_factory=dict)  # tier -> "ok" or why not
    problems: list[dict[str, str]] = field(default_factory=list)  # {"tier", "cause", "fix"}
    workers: list[Worker] = field(default_factory=list)
    ranges: list[str] = field(default_factory=list)  # open pgdoctor.range ranges (socket tier)
    seq: Optional[int] = None  # SeqNum of the collective it has not completed (its flight recorder)
    # The global ranks of the process group of the first collective it has not completed (its
    # recorder and its socket's group table): the ranks it can be waiting for. None: unknown.
    wait_group: Optional[list[int]] = None
    # Seconds the job showed no step evidence before this snapshot (`pgdoctor run`): then CPU time
    # is not progress (a spin), only a moving frame is. None for a plain `hang`.
    quiet_s: Optional[float] = None
    # The GPU tier (NVML): {"device", "sm_util", "sm_source", "device_util"}; empty without a GPU.
    gpu: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            MAGIC: VERSION,
            "rank": self.rank,
            "pid": self.pid,
            "host": self.host,
            "job": self.job,
            "world_size": self.world_size,
            "local_rank": self.local_rank,
            "rank_source": self.rank_source,
            "stack": [f.to_json() for f in (self.samples[-1] if self.samples else [])],
            "samples": [[f.to_json() for f in s] for s in self.samples],
            "sample_times_s": self.sample_times_s,
            "cpu_s": self.cpu_s,
            "state": self.state,
            "wchan": self.wchan,
            "threads": self.threads,
            "tiers": dict(self.tiers),
            "problems": list(self.problems),
            "workers": [w.to_json() for w in self.workers],
            "ranges": list(self.ranges),
            "seq": self.seq,
            "wait_group": self.wait_group,
            "quiet_s": self.quiet_s,
            "gpu": dict(self.gpu),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> RankEvidence:
        def opt_int(v: Any) -> Optional[int]:
            return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

        return cls(
            rank=int(d["rank"]),
            pid=int(d.get("pid", 0)),
            host=str(d.get("host", "")),
            job=str(d.get("job", "")),
            world_size=opt_int(d.get("world_size")),
            local_rank=opt_int(d.get("local_rank")),
            rank_source=str(d.get("rank_source", "environ")),
            samples=[[Frame.from_json(f) for f in s] for s in d.get("samples", ())],
            sample_times_s=[float(t) for t in d.get("sample_times_s", ())],
            cpu_s=[float(c) for c in d.get("cpu_s", ())],
            state=str(d.get("state", "")),
            wchan=str(d.get("wchan", "")),
            threads=int(d.get("threads", 0) or 0),
            tiers={str(k): str(v) for k, v in dict(d.get("tiers", {})).items()},
            problems=[{str(k): str(v) for k, v in p.items()} for p in d.get("problems", ())],
            workers=[Worker.from_json(w) for w in d.get("workers", ())],
            ranges=[str(r) for r in d.get("ranges", ())],
            seq=opt_int(d.get("seq")),
            wait_group=[int(r) for r in d["wait_group"] if isinstance(r, int) and not isinstance(r, bool)]
            if isinstance(d.get("wait_group"), list)
            else None,
            quiet_s=float(d["quiet_s"])
            if isinstance(d.get("quiet_s"), (int, float)) and not isinstance(d.get("quiet_s"), bool)
            else None,
            gpu=dict(d["gpu"]) if isinstance(d.get("gpu"), dict) else {},
        )

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1)


# SM utilisation at or above BUSY_SM: a kernel runs; at or below IDLE_SM: the GPU waits for the host.
BUSY_SM = 50
IDLE_SM = 5


def gpu_phrase(gpu: Mapping[str, Any]) -> str:
    """One phrase for a rank's GPU tier ('' when unknown): a kernel spinning or a host-side hold."""
    sm = gpu.get("sm_util")
    if not isinstance(sm, int) or isinstance(sm, bool):
        return ""
    whole = " (whole device)" if gpu.get("sm_source") == "device" else ""
    where = f"GPU {gpu.get('device')} at {sm}% SM{whole}"
    if sm >= BUSY_SM:
        return f"{where}: a kernel runs (it spins if the rank waits)"
    if sm <= IDLE_SM:
        return f"{where}: the GPU is idle, the rank is held on the host"
    return where


def pending_seq(flight_recorder: Any) -> Optional[int]:
    """The SeqNum of the first collective of the default group this rank has not finished, from
    its flight-recorder JSON (None when it holds none)."""
    entries = flight_recorder.get("entries") if isinstance(flight_recorder, Mapping) else None
    # gloo leaves every entry "scheduled" and marks finished ones retired; NCCL says completed.
    for e in entries if isinstance(entries, list) else ():
        if (
            isinstance(e, Mapping)
            and not e.get("is_p2p")
            and e.get("state") != "completed"
            and not e.get("retired")
            and isinstance(e.get("collective_seq_id"), int)
            and str(e.get("pg_id", 0)) == "0"
        ):
            return int(e["collective_seq_id"])
    return None


def pending_group(flight_recorder: Any, groups: Any) -> Optional[list[int]]:
    """The global ranks of the group of the first collective this rank has not finished (any
    group, p2p aside), from its flight-recorder JSON and its socket's {group name: ranks}."""
    entries = flight_recorder.get("entries") if isinstance(flight_recorder, Mapping) else None
    if not isinstance(groups, Mapping) or not isinstance(entries, list):
        return None
    for e in entries:
        if not isinstance(e, Mapping) or e.get("is_p2p") or e.get("state") == "completed" or e.get("retired"):
            continue
        pg = e.get("process_group")
        members = groups.get(str(pg[0])) if isinstance(pg, list) and pg else None
        if isinstance(members, list) and all(isinstance(r, int) for r in members):
            return sorted(members)
        return None
    return None


def looks_like_evidence(head: bytes) -> bool:
    return head.lstrip()[:1] == b"{" and f'"{MAGIC}"'.encode() in head[:200]


def load_evidence(path: str) -> RankEvidence:
    """The evidence of one rank; ValueError ("PATH: reason") for a file that cannot be read, is
    cut or not JSON, or holds another schema, so its readers can list it as skipped."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise ValueError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text, not hang evidence") from None
    except json.JSONDecodeError as exc:
        # The decoder reached the end of the text (a string or object left open): a cut file.
        cut = exc.pos >= len(exc.doc.rstrip()) or exc.msg.startswith("Unterminated string")
        what = "cut short" if cut else "not JSON"
        raise ValueError(f"{path}: hang evidence {what} ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise ValueError(f"{path}: JSON nested too deeply to be hang evidence") from None
    if not isinstance(data, dict) or MAGIC not in data:
        raise ValueError(f"{path}: not the evidence of a rank written by pgdoctor hang --save")
    version = data[MAGIC]
    if not isinstance(version, int) or isinstance(version, bool) or version != VERSION:
        raise ValueError(
            f"{path}: hang evidence of another schema ({MAGIC} {version!r}; this pgdoctor reads {VERSION})"
        )
    try:
        return RankEvidence.from_json(data)
    except (AttributeError, TypeError, KeyError, ValueError, OverflowError) as exc:
        # A field of another type than --save writes ("workers": "x", "problems": [5]) reached a
        # .get or .items deep in from_json, an internal error: the file is damaged, as one that is
        # not JSON is, and its readers skip it the same way.
        raise ValueError(f"{path}: a damaged field ({type(exc).__name__}: {exc})") from None


# --- frames -------------------------------------------------------------------------------

_LIBRARY = re.compile(
    r"[/\\](?:site|dist)-packages[/\\]|[/\\]lib[/\\]python\d\.\d+[/\\]|^<frozen |^<string>$"
)
_TORCH_DIST = re.compile(r"[/\\]torch[/\\](?:distributed|nn[/\\]parallel)[/\\]")
# Functions of torch.distributed that block until peers arrive: a rank in one of them waits.
COLLECTIVES = COLLECTIVE_CALLS | WAIT_CALLS | SETUP_CALLS


def short_path(path: str) -> str:
    """The file as people name it: `torch/distributed/distributed_c10d.py`, `train.py`."""
    m = re.search(r"(?:site|dist)-packages[/\\](.*)$", path)
    if m:
        return m.group(1)
    return path.rsplit("/", 1)[-1]


def is_user_frame(f: Frame) -> bool:
    return bool(f.file) and not _LIBRARY.search(f.file)


def user_frame(stack: Sequence[Frame]) -> Optional[Frame]:
    """The innermost frame of the job's own code (not the standard library, not a package)."""
    return next((f for f in stack if is_user_frame(f)), None)


def collective_of(stack: Sequence[Frame]) -> str:
    """The torch.distributed call a stack waits in ('' when none): the outermost such frame, so
    `all_reduce` rather than the `wait` it calls."""
    found = ""
    for f in stack:
        if _TORCH_DIST.search(f.file) and f.function in COLLECTIVES:
            found = f.function
    return found
