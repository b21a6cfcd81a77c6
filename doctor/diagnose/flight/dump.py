"""Flight-recorder dumps: finding, loading and reading them (entry fields, process groups).

A dump is what ProcessGroupNCCL/gloo's FlightRecorder writes per rank (pickle via
`torch._C._distributed_c10d._dump_fr_trace()`, or JSON via `_dump_fr_trace_json()`; on a
watchdog timeout the files TORCH_FR_DUMP_TEMP_FILE<rank>): {"version", "pg_config": {name:
{"name","desc","ranks"}}, "pg_status": {pg_id: {"last_enqueued_collective", ...}}, "entries":
[{"record_id", "pg_id", "process_group": (id, desc), "collective_seq_id", "p2p_seq_id",
"profiling_name": "nccl:all_reduce", "input_sizes", "input_dtypes", "output_sizes",
"output_dtypes", "state": "scheduled"|"started"|"completed", "timeout_ms", "is_p2p", "frames":
[{"name","filename","line"}]}]}. The rank is not in the dump: it comes from the file name's
trailing number, as torch names them. Pickles go through pgdoctor.diagnose.flight.safe_pickle only.
"""

from __future__ import annotations

import json
import os
import re
import stat
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pgdoctor.diagnose import walk
from pgdoctor.diagnose.flight import safe_pickle
from pgdoctor.knowledge.ranks import MAX_RANK, bounded, run_words
from pgdoctor.model import jsontext, numbers

MAX_DUMP_BYTES = 256 << 20
_RANK_IN_NAME = re.compile(r"(\d+)(?:\.[A-Za-z]+)*$")
# A directory per rank ("rank_3/fr_trace.pkl", "rank3/trace.json") when the file's own name has no
# number; a bare number ("attempt_0/3/", torchrun's log layout) is a local rank, not a rank.
_RANK_DIR = re.compile(r"(?i)rank[_-]?(\d+)$")
_TORCH_FRAME = re.compile(r"[/\\]torch[/\\](?:distributed|nn[/\\]parallel|_dynamo|utils)[/\\]")
# Decorators' wrappers between the user's call and torch's (typing_extensions' @deprecated wraps
# all_gather_into_tensor in 2.13; functools.wraps, contextlib): never where the user's code is.
_WRAPPER_FRAME = re.compile(r"(?:^|[/\\])(?:typing_extensions|functools|contextlib)\.py$")


class DumpError(ValueError):
    pass


class CutDump(DumpError):
    """A file that begins as a dump (a pickle, the recorder's JSON) or is empty, but does not read
    to the end: a rank killed while it wrote its dump, a full disk, a copy cut short. The rank
    did reach its dump, so it is not one that died before dumping."""


@dataclass
class Dump:
    path: str
    rank: int
    data: dict[str, Any]

    def __post_init__(self) -> None:
        # One place gives every entry the field types the analysis relies on: dumps come from
        # other torch versions, other tools and broken jobs.
        raw = self.data.get("entries")
        self.data = {
            **self.data,
            "entries": [clean_entry(e) for e in raw if isinstance(e, Mapping)]
            if isinstance(raw, list)
            else [],
        }
        cfg = self.data.get("pg_config")
        if isinstance(cfg, Mapping):
            # Each group's ranks parsed once, here: three readers asked for them again per group
            # (a pg_config of 2,000,000 ranks as text was parsed and bounded a dozen times: 9 s).
            self.data["pg_config"] = {name: _config_entry(entry) for name, entry in cfg.items()}


_STR_FIELDS = ("profiling_name", "state")
# Numbers that JSON writers and edited dumps sometimes carry as strings ("12", "12.0").
_INT_FIELDS = (
    "record_id",
    "pg_id",
    "collective_seq_id",
    "p2p_seq_id",
    "op_id",
    "time_created_ns",
    "timeout_ms",
    "time_discovered_started_ns",
    "time_discovered_completed_ns",
)
_BOOL_FIELDS = ("is_p2p", "retired")
_LIST_FIELDS = ("input_sizes", "output_sizes", "input_dtypes", "output_dtypes", "process_group")
_SIZE_FIELDS = ("input_sizes", "output_sizes")
# A collective's tensors hold at most this many numbers in their shapes (an all_to_all over 16,384
# ranks of 2-D tensors is 32,768), and no tensor has more than 64 dimensions: past either, the
# field is no list of shapes but a hostile one (a 13 KB pickle whose memo shares one list of 1,000
# numbers a thousand times expands into a million, read one by one: 30 s). Read as absent.
MAX_SIZE_NUMBERS = 1 << 16
MAX_DIMS = 64
# A name, state, dtype, group or frame text longer than this is clipped where the dump is read: a
# 10 MB operation name was copied into every finding, scrubbed and printed (20 s). The clip keeps
# the length and a checksum, so two different long names still differ.
MAX_FIELD_CHARS = 4096
_TRUE, _FALSE = {"true", "1", "yes", "t", "y"}, {"false", "0", "no", "f", "n", "", "none", "null"}


_P2P_NAME = re.compile(r":(?:send|recv) \d+(?:->|<-)\d+")


def clean_entry(e: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(e)
    if "is_p2p" not in out and "profiling_name" in out:
        # Recorders before version 2.0 have no is_p2p: a send/recv says it by its name.
        out["is_p2p"] = bool(_P2P_NAME.search(str(out["profiling_name"])))
    if "seq_id" in out and "collective_seq_id" not in out and "p2p_seq_id" not in out:
        # Before 2.0 one `seq_id` counted collectives and p2p ops alike.
        out["p2p_seq_id" if flag(out["is_p2p"]) else "collective_seq_id"] = out["seq_id"]
    frames = out.get("frames")
    out["frames"] = (
        [
            {k: clip(v) if isinstance(v, str) else v for k, v in f.items()}
            for f in frames
            if isinstance(f, Mapping)
        ]
        if isinstance(frames, list)
        else []
    )
    for name in _STR_FIELDS:
        if name in out:
            out[name] = clip("" if out[name] is None else str(out[name]))
    for name in _INT_FIELDS:
        if (
            name in out
            and out[name] is not None
            and not (isinstance(out[name], int) and not isinstance(out[name], bool))
        ):
            out[name] = number(out[name])
    for name in _BOOL_FIELDS:
        if name in out and not isinstance(out[name], bool):
            out[name] = flag(out[name])
    for name in _LIST_FIELDS:
        if isinstance(out.get(name), str):
            out[name] = _literal(out[name])
        if isinstance(out.get(name), str):  # a plain string (a dtype "float32")
            out[name] = clip(out[name])
        elif isinstance(out.get(name), (list, tuple)) and name not in _SIZE_FIELDS:
            out[name] = [clip(x) if isinstance(x, str) else x for x in out[name][:MAX_SIZE_NUMBERS]]
    for name in _SIZE_FIELDS:
        if isinstance(out.get(name), (list, tuple)) and not _shapes_fit(out[name]):
            out[name] = []
    return out


def clip(text: str) -> str:
    """text, or its first MAX_FIELD_CHARS characters with its length and checksum (see above)."""
    if len(text) <= MAX_FIELD_CHARS:
        return text
    crc = zlib.crc32(text.encode("utf-8", "surrogatepass"))
    return f"{text[:MAX_FIELD_CHARS]}...[{len(text)} characters, crc32 {crc:08x}]"


def _shapes_fit(shapes: Sequence[Any]) -> bool:
    """Whether a sizes field is within MAX_DIMS per shape and MAX_SIZE_NUMBERS in all, counted
    without walking further than the bound."""
    n = 0
    for s in shapes:
        if isinstance(s, (list, tuple)):
            if len(s) > MAX_DIMS:
                return False
            n += len(s)
        else:
            n += 1
        if n > MAX_SIZE_NUMBERS:
            return False
    return True


def number(v: Any) -> Any:
    """An int from an int, an integral float, or a decimal string of one ("12", "12.0"), through
    the one typed reader (model/numbers.py); anything else unchanged (true, 1e400, NaN, 2.5),
    which int_of then reads as absent."""
    got = numbers.maybe(v, integer=True, lo=-(1 << 63), hi=1 << 63, strings=True)
    return v if got is None else int(got)


def flag(v: Any) -> bool:
    """A bool from "true"/"false", "1"/"0", numbers; a string "false" must not read as true."""
    if isinstance(v, str):
        t = v.strip().lower()
        return t in _TRUE if t in _TRUE | _FALSE else bool(t)
    return bool(v)


def _literal(text: str) -> Any:
    """A list or tuple written as text ("[[4, 4]]", "('0', 'default_pg')", '["Float"]'); a plain
    string (a dtype "float32", a group name) stays as it is."""
    t = text.strip()
    if not t or t[0] not in "[(":
        return text
    try:
        return jsontext.loads(t.replace("(", "[").replace(")", "]").replace("'", '"'))
    except (jsontext.JsonInputError, ValueError):
        return text


@dataclass
class FlightReport:
    dumps: list[Dump] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    cut: dict[int, str] = field(default_factory=dict)  # rank -> why its only dump does not read


def looks_like_dump(head: bytes) -> bool:
    """A pickle, or JSON whose head (the file's first KiBs) has the flight recorder's keys: not a
    log to scan."""
    if head[:1] == b"\x80":
        return True
    head = head[:4096]
    # A dump made with includeCollectives=False has no entries: its pg_status is what it holds.
    return (
        head.lstrip()[:1] == b"{"
        and (b'"entries"' in head or b'"pg_status"' in head)
        and (b'"pg_config"' in head or b'"comm_lib_version"' in head)
    )


def load_dump(path: str) -> dict[str, Any]:
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):  # a FIFO would block the read forever
        raise DumpError(f"{path}: not a regular file")
    if st.st_size > MAX_DUMP_BYTES:
        raise DumpError(f"{path}: {st.st_size} bytes is too large for a flight-recorder dump")
    with open(path, "rb") as fh:
        raw = _uncompressed(path, fh.read(MAX_DUMP_BYTES + 1))
    if not raw.strip():
        raise CutDump(f"{path}: empty file (its rank was stopped as it began the dump?)")
    if raw[:1] == b"\x80":
        try:
            data = safe_pickle.loads(raw)
        except Exception as exc:  # a user's file: any failure to read is a skip, never a crash
            cut = isinstance(exc, EOFError) or "truncated" in str(exc)
            raise (CutDump if cut else DumpError)(f"{path}: {exc}" + (_CUT if cut else "")) from None
    else:
        try:
            data = jsontext.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise DumpError(f"{path}: neither a pickle nor JSON ({type(exc).__name__})") from None
        except jsontext.JsonInputError as exc:
            if looks_like_dump(raw[:4096]) and raw.rstrip()[-1:] != b"}":
                raise CutDump(f"{path}: the JSON ends before its last brace ({exc}){_CUT}") from None
            raise DumpError(f"{path}: not a readable JSON dump ({exc})") from None
    if not isinstance(data, dict) or not (
        isinstance(data.get("entries"), list)
        or ("entries" not in data and isinstance(data.get("pg_status"), dict))
    ):
        raise DumpError(f"{path}: not a flight-recorder dump (no entries list, no pg_status)")
    return data


_CUT = "; cut off while it was written"
# Compressed dumps (`gzip -r fr/` before copying them off the cluster), by their magic bytes.
_MAGIC = {b"\x1f\x8b": "gzip", b"BZh": "bz2", b"\xfd7zXZ\x00": "lzma"}


def _uncompressed(path: str, raw: bytes) -> bytes:
    """raw itself, or its decompressed bytes up to MAX_DUMP_BYTES (a bomb stops there)."""
    kind = next((k for magic, k in _MAGIC.items() if raw.startswith(magic)), None)
    if kind is None:
        return raw
    import bz2
    import gzip
    import io
    import lzma

    stream = io.BytesIO(raw)
    try:
        with (
            gzip.GzipFile(fileobj=stream)
            if kind == "gzip"
            else bz2.BZ2File(stream)
            if kind == "bz2"
            else lzma.LZMAFile(stream)
        ) as fh:
            out = fh.read(MAX_DUMP_BYTES + 1)
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise CutDump(f"{path}: the {kind} stream does not read to its end ({exc}){_CUT}") from None
    if len(out) > MAX_DUMP_BYTES:
        raise DumpError(f"{path}: more than {MAX_DUMP_BYTES} bytes once decompressed")
    return out


def peek(head: bytes) -> bytes:
    """The first bytes of a compressed file's content (what looks_like_dump reads), or head itself
    when it is not compressed; b"" when its head does not decompress."""
    kind = next((k for magic, k in _MAGIC.items() if head.startswith(magic)), None)
    if kind is None:
        return head
    import bz2
    import lzma
    import zlib

    try:
        if kind == "gzip":
            return zlib.decompressobj(31).decompress(head, 4096)
        if kind == "bz2":
            return bz2.BZ2Decompressor().decompress(head, 4096)
        return lzma.LZMADecompressor().decompress(head, 4096)
    except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError):
        return b""


def read_dumps(paths: Sequence[str]) -> FlightReport:
    """Every dump under these directories (or files); unreadable files are listed, not fatal."""
    files: list[str] = []
    refused: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            found, unlisted = walk.files_under(p)
            for folder, why in unlisted:
                if folder == p:
                    raise DumpError(f"cannot read flight-recorder directory {p}: {why}")
                refused.append(f"{folder}: {why}")
            files += found
        elif os.path.isfile(p):
            files.append(p)
        elif os.path.exists(p):
            raise DumpError(
                f"flight-recorder input {p} is not a directory nor a regular file (a device, FIFO or socket)"
            )
        else:
            raise DumpError(f"no such flight-recorder directory or file: {p}")
    rep = FlightReport()
    rep.skipped += refused
    used_ranks: set[int] = set()
    cut: dict[int, str] = {}
    for i, f in enumerate(files):
        number = _rank_text(f)
        try:
            data = load_dump(f)
        except (DumpError, OSError) as exc:
            rep.skipped.append(str(exc))
            if isinstance(exc, CutDump) and number and (r := bounded(number)) is not None:
                cut.setdefault(r, str(exc))
            continue
        rank = bounded(number) if number else i
        if rank is None:  # nccl_trace_20240101123456.json: a timestamp, not a rank
            rep.skipped.append(
                f"{f}: the number {(number or '')[:24]} that ends its name is not a rank "
                f"(ranks go up to {MAX_RANK}); name dumps by their rank, as torch does"
            )
            continue
        if rank in used_ranks:
            prev = next(d for d in rep.dumps if d.rank == rank)
            new, old = _newest_ns(data), _newest_ns(prev.data)
            if new != old:
                # Two traces of one rank (a restarted job's attempts side by side): the later
                # one is the run that failed last; mixing them would compare unrelated runs.
                keep, drop = (f, prev.path) if new > old else (prev.path, f)
                rep.skipped.append(f"{drop}: an older dump of rank {rank} than {keep}; the newer one is read")
                if new > old:
                    prev.path, prev.data = f, data
            elif _has_frames(data) and not _has_frames(prev.data):
                # torch writes the same trace as pickle and JSON; the JSON form has no Python
                # frames, so keep whichever of the two carries them.
                prev.path, prev.data = f, data
            continue
        used_ranks.add(rank)
        rep.dumps.append(Dump(f, rank, data))
    rep.dumps.sort(key=lambda d: d.rank)
    # A rank whose only dump is cut off reached its dump: its collectives are unknown, but it did
    # not die before dumping (a readable pickle beside a cut JSON of the same rank says it all).
    rep.cut = {r: why for r, why in cut.items() if r not in used_ranks}
    return rep


def _rank_text(path: str) -> str | None:
    """The number that names a dump's rank: its file name's, else a rank directory's above it."""
    m = _RANK_IN_NAME.search(os.path.basename(path))
    if m:
        return m.group(1)
    parent = os.path.dirname(path)
    for _ in range(2):
        d = _RANK_DIR.search(os.path.basename(parent))
        if d:
            return d.group(1)
        parent = os.path.dirname(parent)
    return None


def _newest_ns(data: Mapping[str, Any]) -> int:
    """When the dump's latest entry was created (0 when none says): tells two runs apart."""
    return max((int_of(e.get("time_created_ns"), 0) for e in data.get("entries", [])), default=0)


def _has_frames(data: Mapping[str, Any]) -> bool:
    return any(isinstance(e, Mapping) and e.get("frames") for e in data.get("entries", []))


def int_of(v: Any, default: int = -1) -> int:
    """Every integer field of a dump, typed in one place: true, 1e400 (a pickle's inf), NaN, 2.5
    and numbers past 64 bits are absent (`default`); a decimal string is its number."""
    got = numbers.maybe(v, integer=True, lo=-(1 << 63), hi=1 << 63, strings=True)
    return default if got is None else int(got)


def frames_of(entry: Mapping[str, Any], n: int = 4) -> list[str]:
    out = []
    for fr in entry.get("frames") or []:
        if not isinstance(fr, Mapping):
            continue
        fn = str(fr.get("filename", ""))
        if _TORCH_FRAME.search(fn) or _WRAPPER_FRAME.search(fn):
            continue
        out.append(f"{fn}:{fr.get('line', '?')} in {fr.get('name', '?')}")
        if len(out) >= n:
            break
    return out


def pg_key(e: Mapping[str, Any]) -> str:
    pg = e.get("process_group")
    if isinstance(pg, (list, tuple)) and pg:
        return str(pg[0])
    return str(e.get("pg_id", "0"))


def pg_desc(e: Mapping[str, Any]) -> str:
    pg = e.get("process_group")
    if isinstance(pg, (list, tuple)) and len(pg) > 1:
        return str(pg[1])
    return ""


def describe(e: Mapping[str, Any]) -> str:
    return f"{e.get('profiling_name')} sizes={e.get('input_sizes')} dtypes={e.get('input_dtypes')}"


def dump_path(rep: FlightReport, rank: int) -> str:
    return next((d.path for d in rep.dumps if d.rank == rank), "")


def config_ranks(raw: object) -> list[int]:
    """The ranks of a pg_config entry: "[0, 1]" (as the recorder writes them) or a list."""
    try:
        v = json.loads(raw) if isinstance(raw, str) else raw
    except (TypeError, ValueError, RecursionError):
        return []
    if not isinstance(v, (list, tuple)) or len(v) > MAX_RANK + 1:
        return []  # no group has more ranks than the largest world
    # A rank past MAX_RANK (or not a number) is dropped here: the world is built as a range
    # elsewhere, and an input never decides how long that range is. A plain int in range (what
    # Dump left) is taken as it is, without bounded's call.
    return [r for x in v if (r := x if type(x) is int and 0 <= x <= MAX_RANK else bounded(x)) is not None]


def _config_entry(entry: Any) -> Any:
    """A pg_config entry with its ranks parsed (config_ranks); anything else as it was."""
    if isinstance(entry, (list, tuple)):  # before 2.0: {pg_id: [ranks]}
        return config_ranks(entry)
    if isinstance(entry, Mapping) and "ranks" in entry:
        return {**entry, "ranks": config_ranks(entry["ranks"])}
    return entry


def pg_status(d: Dump) -> dict[str, tuple[int, int, int]]:
    """pg_id -> (last_enqueued, last_started, last_completed collective) of the dump's pg_status;
    -1 where a counter is absent or means nothing."""
    st = d.data.get("pg_status")
    if not isinstance(st, Mapping):
        return {}
    return {
        str(pg_id): (
            int_of(v.get("last_enqueued_collective")),
            int_of(v.get("last_started_collective")),
            int_of(v.get("last_completed_collective")),
        )
        for pg_id, v in st.items()
        if isinstance(v, Mapping)
    }


def config_entries(d: Dump) -> list[tuple[str, list[int]]]:
    cfg = d.data.get("pg_config")
    if not isinstance(cfg, Mapping):
        return []
    out = []
    for name, entry in cfg.items():
        raw = (
            entry
            if isinstance(entry, (list, tuple))
            else entry.get("ranks")
            if isinstance(entry, Mapping)
            else None
        )
        out.append((str(name), config_ranks(raw)))
    return out


def aliases(rep: FlightReport) -> dict[tuple[int, str], str]:
    """(rank, group name) -> the group's key where one name stands for several groups: split_group
    and DeviceMesh give every TP group one name (and uid) on every rank, whatever its ranks, so the
    name alone would merge them. Such a group is keyed "name|ranks" by what the rank's own
    pg_config says its ranks are."""
    sets: dict[str, set[tuple[int, ...]]] = {}
    own: dict[tuple[int, str], tuple[int, ...]] = {}
    for d in rep.dumps:
        for name, ranks in config_entries(d):
            if ranks:
                sets.setdefault(name, set()).add(tuple(sorted(set(ranks))))
                own[(d.rank, name)] = tuple(sorted(set(ranks)))
    return {
        key: f"{key[1]}|{','.join(run_words(list(ranks)))}"
        for key, ranks in own.items()
        if len(sets[key[1]]) > 1
    }


def pg_name(key: str) -> str:
    """The group's name as the recorder wrote it, from its key (see aliases)."""
    return key.split("|", 1)[0]
