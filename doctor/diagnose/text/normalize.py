"""Turn the raw lines of a window into clean logical lines with their rank.

Real logs are pasted from terminals, log viewers and launchers: prefixes stack (`[rank3]:`,
`[default0]:`, `0: `, `[1,3]<stdout>:`, `node-7: `, timestamps, viewer line numbers,
`(Worker pid=123)`), ANSI colours survive (sometimes without their ESC byte), CRLF and
progress-bar carriage returns glue lines together, terminals hard-wrap long messages, and
JSON log shippers put whole tracebacks on one line with escaped newlines. Encodings of the paste
itself (percent-encoding, HTML entities, typographic spaces, a JSON record) are undone first, by
shapes.py. Patterns downstream see the message text only; the rank and time found on the way are
kept beside it.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Sequence
from typing import NamedTuple, Optional, cast

from pgdoctor.diagnose.text.shapes import decode as decode_shapes
from pgdoctor.knowledge.ranks import bounded
from pgdoctor.model import lazy_re

_ANSI = lazy_re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Z0-9]")
# The same SGR codes after a copy-paste lost the ESC byte: "[31mERROR[0m". Only colour codes
# (digits and semicolons ending in m) are removed, so "[0]" or "[rank1]" stay; the bare reset "[m" only
# where no bracketed name goes on from it ("[master]:29500", "[mlx5_0:1]", "[mynode-3]" keep their "[m").
_LOST_ESC = lazy_re.compile(r"\[\d{1,3}(?:;\d{1,3}){0,4}m|\[m(?![\w.:-]*\])")

_PREFIXES: tuple[tuple[str, re.Pattern[str]], ...] = (
    # Markdown around a paste: "> " quotes (nested too), table cells "| ts | msg |", bold or
    # inline-code markers opening the line ("**RuntimeError: ...**", "`ERROR: ...`").
    ("quote", lazy_re.compile(r"^(?:>[ \t]?)+")),
    ("table", lazy_re.compile(r"^\|[ \t]?(?=\S)")),
    ("markdown", lazy_re.compile(r"^(?:\*\*|__|`{1,3})(?=[^\s`*])")),
    ("viewer", lazy_re.compile(r"^\s*\[?\d{1,7}(?:\t|\s+\|\s?|\] )")),
    # An issue title's tag before the pasted message: "[Bug]: Killed", "[BUG] RuntimeError: ...", "Bug: ..."
    (
        "title_tag",
        lazy_re.compile(
            r"^(?i:\[(?:bug|question|usage|help|issue|misc|performance|installation)\]:?|bug:)[ \t]*"
        ),
    ),
    (
        "iso",
        lazy_re.compile(
            # Go's log and some agents write the date with slashes ("2023/10/26 12:12:18 "); a viewer may
            # drop the seconds ("2022-11-29 00:27   File ...").
            r"^\[?(?P<ts>\d{4}[-/]\d{2}[-/]\d{2}[T _]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?"
            r"(?:Z|[+-]\d{2}:?\d{2})?)\]?"
            # one blank before an indented line (kubectl --timestamps: "<ts> <line>"): the line keeps
            # its indentation ("  File ...", an NVRM continuation)
            r"(?: (?=[ \t]+[^\s\[])|\s*(?:[-|:,]\s*)?)"
        ),
    ),
    ("dmesg", lazy_re.compile(r"^\[\s*\+?\d+\.\d+\]\s*")),  # also dmesg -d's "[  +0.000316]"
    (
        "dmesg_T",
        lazy_re.compile(r"^\[[A-Z][a-z]{2} [A-Z][a-z]{2}\s+\d{1,2} \d\d:\d\d:\d\d \d{4}\]\s*"),
    ),  # dmesg -T
    # kubectl logs --prefix "[pod/trainer-0/pytorch] ", docker compose "trainer-1  | " (v1: "trainer_1  | ")
    ("kubectl", lazy_re.compile(r"^\[pod/[^\]\s]+\]\s?")),
    ("compose", lazy_re.compile(r"^[a-z][\w.-]*[-_]\d+\s+\|\s")),
    # ctime(3), as mpirun --timestamp-output prints it: "Fri Aug 11 12:31:45 2023"
    ("ctime", lazy_re.compile(r"^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\s?")),
    # syslog and journalctl: the kernel's lines or a program's with its pid ("python3[41234]: ")
    (
        "syslog",
        lazy_re.compile(
            r"^[A-Z][a-z]{2}\s+\d{1,2} \d{2}:\d{2}:\d{2} (?P<host>[\w.-]+) "
            r"(?:kernel: |[\w.@/-]{1,64}\[\d+\]: )?"
        ),
    ),
    ("rank", lazy_re.compile(r"^\[rank(?P<rank>\d+)\]:\s?")),
    ("lightning", lazy_re.compile(r"^\[rank: (?P<rank>\d+)\]\s?")),
    # Open MPI's --tag-output "[1,3]<stderr>:"; SageMaker's MPI launcher adds the rank's word and host:
    # "[1,mpirank:3,algo-2]<stdout>:"; horovodrun's own launcher (gloo) tags with the rank alone:
    # "[1]<stderr>:"
    (
        "mpi",
        lazy_re.compile(
            r"^\[(?:\d+,)?(?:mpirank:)?(?P<rank>\d+)(?:,(?P<host>[\w.-]+))?\]<std(?:out|err)>:\s?"
        ),
    ),
    ("local", lazy_re.compile(r"^\[(?:default|worker|trainer)(?P<lrank>\d+)(?:\|\d+)?\]:\s?")),
    # TorchX's local scheduler (torchx/schedulers/local_scheduler.py, `torchx run` and `torchx log`):
    # "<role>/<replica> " before the line of a torchrun-launched role, whose tee adds the local rank:
    # "dlrm_main/0 [1]:".
    ("torchx", lazy_re.compile(r"^[A-Za-z][\w.-]*/\d+ \[(?P<lrank>\d+)\]:\s?")),
    # Python logging as vLLM and others print it: "ERROR 04-22 15:53:33 worker_base.py:153] ", vLLM 0.8+
    # with the file in brackets: "ERROR 02-10 03:17:41 [multiproc_executor.py:772] ", later with its path
    # ("[v1/executor/multiproc_executor.py:932] ": the process is the file's name).
    (
        "pylog",
        lazy_re.compile(
            r"^(?:INFO|WARNING|ERROR|DEBUG|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? "
            r"\[?(?:[\w.-]+/)*(?P<proc>[\w.-]+):\d+\] "
        ),
    ),
    # A runner's tag: "<bench>.<host> [stderr] " (the host last), or any short tag before "[rank3]:".
    ("runner", lazy_re.compile(r"^(?:[\w-]+\.)*(?P<host>[A-Za-z][\w-]*) \[std(?:err|out)\] ")),
    # (not Ray's "(WorkerDict pid=7) " before "[rank0]:": the ray kind below reads it, with its pid)
    ("tag", lazy_re.compile(r"^(?!\((?:\w+ )?(?:rank=\d+ )?pid=\d)\S+(?: \S+){0,2} (?=\[rank\d+\]:)")),
    # Ray's "(RayTrainWorker pid=37396, ip=10.244.1.95) ": the node's address is the line's host. vLLM's
    # workers name their rank too ("(VllmWorker rank=1 pid=7226) "); a pasted block may be indented.
    (
        "ray",
        lazy_re.compile(
            r"^[ \t]*\((?:(?P<proc>\w+) )?(?:rank=\d+ )?pid=(?P<pid>\d{1,9})(?:, ip=(?P<host>[\d.]+))?\)"
            r"(?: (?=[ \t]+[^\s\[])|\s*)"
        ),
    ),
    ("srun", lazy_re.compile(r"^(?P<rank>\d{1,5}): ")),
    # pdsh's "host: <line>": the line keeps its indentation (an NVRM continuation, "  File ...")
    ("host", lazy_re.compile(r"^(?P<host>[a-z][a-z0-9-]*\d[a-z0-9.-]*): (?=[ \t]*\S)")),
    # torch_xla's xla_dist (and gcloud's --worker=all) before each worker's line: "10.164.0.33 [0] "
    ("xla", lazy_re.compile(r"^(?P<host>\d{1,3}(?:\.\d{1,3}){3}) \[\d{1,4}\] ")),
    # The soft ones (_SOFT_KINDS): a logging platform's level and component ("[INFO] [Driver] "), a bare
    # number tag ("[5]:"). Text of this shape may be a message of its own, so one is a prefix only where
    # the next or the previous line starts with the same one (logical_lines checks it).
    (
        "leveltag",
        lazy_re.compile(
            r"^\[(?:INFO|WARN|WARNING|ERROR|DEBUG|FATAL|CRITICAL|TRACE)\s?\] \[[A-Za-z][\w-]{0,31}\] ?"
        ),
    ),
    ("numtag", lazy_re.compile(r"^\[\d{1,4}\]:(?: (?=\S))?")),  # "[5]:  File ..." keeps its indentation
    # A GUI's or a wrapper's logger that re-logs a child's output line by line with a stamp and a quiet
    # level: "[2024-09-09 19:22:16] [INFO] File ..." (fluxgym, Gradio front-ends; the stamp is "iso"). Only
    # the levels that say nothing of a failure, so no error marker is ever stripped.
    ("quietlevel", lazy_re.compile(r"^\[(?:INFO|DEBUG)\] ?(?=[ \t]*\S)")),
)
_SOFT_KINDS = frozenset({"leveltag", "numtag", "quietlevel"})
# A literal that every match of the prefix contains. A line without it is tried against an
# alternation without that prefix: these four are the slow ones to fail ("tag" backtracks over
# the first three words of every line), 60% of the time a line spends here.
_NEEDS = (("tag", "[rank"), ("runner", " [std"), ("compose", "|"), ("host", ": "))


def _one_alternation(prefixes: tuple[tuple[str, re.Pattern[str]], ...]) -> re.Pattern[str]:
    """All prefixes as one pattern, tried in their order in one call instead of one call each
    (most lines carry no prefix at all, and each cost two dozen calls). Each prefix becomes a
    group named after its kind; its own groups get the kind as a prefix ("rank__srun"). No prefix
    matches the empty string, so the first one that matches is the one the alternation picks."""
    parts = []
    for kind, rx in prefixes:
        body = rx.pattern.removeprefix("^")
        body = re.sub(r"\(\?P<(\w+)>", rf"(?P<\1__{kind}>", body)
        parts.append(f"(?P<{kind}>{body})")
    return lazy_re.compile("|".join(parts))


_ALTERNATIONS: dict[tuple[bool, ...], re.Pattern[str]] = {}
assert [lit for _, lit in _NEEDS] == ["[rank", " [std", "|", ": "]  # spelled out in _alternation_for


def _alternation_for(text: str) -> re.Pattern[str]:
    """The alternation of the prefixes `text` may start with (at most 16, each built once)."""
    key = ("[rank" in text, " [std" in text, "|" in text, ": " in text)  # _NEEDS's literals, in order
    rx = _ALTERNATIONS.get(key)
    if rx is None:
        absent = {kind for (kind, _), present in zip(_NEEDS, key) if not present}
        rx = _ALTERNATIONS[key] = _one_alternation(tuple(p for p in _PREFIXES if p[0] not in absent))
    return rx


# Per kind, its own (group name in the alternation, field) pairs: only these are read on a match.
_KIND_GROUPS: dict[str, tuple[tuple[str, str], ...]] = {
    kind: tuple((f"{g}__{kind}", g) for g in rx.groupindex) for kind, rx in _PREFIXES
}
_MARK_END = lazy_re.compile(r"(?:\*\*|__|`{1,3}|\s\|)\s*$")
_GLOG_TS = lazy_re.compile(
    r"\[(?:rank\d+\]:\[)?[IWEF](?P<mo>\d\d)(?P<d>\d\d) (?P<t>\d\d:\d\d:\d\d(?:\.\d+)?)\b"
)
# Another rank's output glued onto this line; not a rank prefix stacked on a launcher's "...:".
_SPLIT_RANKS = lazy_re.compile(r"(?<=[^\s:\]])(?=\[(?:rank|default)\d+\]:)")
_ESCAPED_NL = lazy_re.compile(r"(?:\\r)?\\n")
# A traceback flattened onto one line by a paste (newlines lost): it is cut again before
# "Traceback (most recent call last):", before each "File ..." frame and before the exception.
_FLAT_TB = lazy_re.compile(
    r"\s*(?=Traceback \(most recent call last\):)|(?<=\S)\s+(?=File [\"/\w])|"
    r"(?<=\S)\s+(?=(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt):\s)"
)
# Records glued onto one line (the line breaks of a paste lost): cut again before each record's own
# start: a timestamp, a glog or old c10d header, NCCL's "host:pid:tid [dev]", the C++ exception's
# lines, dmesg's stamps, Python logging's "ERROR:name:", an exception's "pkg.SomeError: ". Only a
# long line with two of them is cut: one such start inside a message is its text.
_GLUED = lazy_re.compile(
    r"(?<=\S)\s+(?="
    r"\[?\d{4}-\d\d-\d\d[ T_]\d\d:\d\d:\d\d|[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ |\[[IWEF] [\w.]+:\d+\] |"
    r"[\w.-]+:\d+:\d+ \[\d+\] |terminate called after throwing |Exception raised from |what\(\): |"
    r"frame #\d+: |\[rank\d+\]:|\[\s*\d+\.\d{6}\] |"
    r"\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\] |"
    r"(?:INFO|WARNING|ERROR|CRITICAL):[\w.]+:|(?:[a-z_]\w*\.)*[A-Z]\w*(?:Error|Exception):\s)"
)
_GLUED_MIN = 160


def _unglued(text: str) -> list[str]:
    if len(text) < _GLUED_MIN:
        return [text]
    cuts = [m.start() for m in _GLUED.finditer(text)]
    if len(cuts) < 2:
        return [text]
    bounds = [0, *cuts, len(text)]
    pieces = [text[a:b].strip() for a, b in zip(bounds, bounds[1:]) if text[a:b].strip()]
    # A piece that is one prefix alone ("worker-5:", "[rank3]:") opens the record after it: pdsh's host
    # before torch's rank prefix before the exception is one record, not three; so are a platform's two
    # stamps and its level before the message ("<ts>\t<ts> [INFO] [Driver] torch.cuda.OutOfMemoryError: ...").
    out: list[str] = []
    for p in pieces:
        if out and (_LONE_PREFIX.match(out[-1]) or _prefix_alone(out[-1])):
            out[-1] = f"{out[-1]} {p}"
        else:
            out.append(p)
    return out


# The shell's report of a foreground job killed by a signal (bash's strsignal() text, on its own line in the
# terminal) glued onto the end of a progress bar that never printed its newline: "Epoch 1:  29%|█▍  |
# 9413/32393 [3:28:18<8:28:33,  1.33s/it, loss=3.23]Terminated", Keras' "1200/5000 [=====>.....] - ETA: 9:41 -
# loss: 0.51Killed". Cut again before the word, so the rows for the shell's lone line read it.
_SHELL_WORDS = (
    "Killed",
    "Terminated",
    "Segmentation fault",
    "Aborted",
    "Bus error",
    "Illegal instruction",
    "Floating point exception",
)
# Where a progress bar starts: "29%|", Keras' "1200/5000 [=====>.....]", tqdm's "9413/32393 [3:28:18<".
_BAR = lazy_re.compile(r"\d%\||\d+/\d+ \[[=>.]*\]|\d+/\d+ \[[\d:]+<")
_SHELL_ENDS = (*_SHELL_WORDS, "(core dumped)")
_CORE = " (core dumped)"


def _bar_unglued(p: str) -> list[str]:
    """The piece cut before the shell's word when a bar starts before it and a non-blank character follows
    the bar. Found from the end, where the word must be: a search for "bar, then anything, then the word
    at the end" tried every bar of a long redrawn line and scanned the rest of it from each (quadratic)."""
    end = p.rstrip()
    if not end.endswith(_SHELL_ENDS):
        return [p]
    if end.endswith(_CORE):
        end = end[: -len(_CORE)]
    word = next((w for w in _SHELL_WORDS if end.endswith(w)), None)
    if word is None:
        return [p]
    at = len(end) - len(word)
    body = p[:at].rstrip()
    # the bar must end before the last character of the text before the word (that character is the
    # one non-blank the bar is followed by)
    if not body or _BAR.search(body, 0, len(body) - 1) is None:
        return [p]
    return [p[:at].rstrip(), p[at:].strip()]


# Each prefix is taken whole, with no way back into it (a lookahead's group, matched again): "\S+:" to
# the last ":" of its run of non-space characters. Every reading of the old "(?:\S+:\s*|...)+$" ends a
# prefix there (the pid one holds no ":"), so the same pieces match; but that one tried every way to
# cut "a:b:c:...:z" into prefixes before failing: exponential (20 colons 0.1 s, 40 colons hours).
_LONE_PREFIX = lazy_re.compile(r"^(?:(?=(?P<p>\S+:|\((?:\w+ )?pid=\d+(?:, ip=[\d.]+)?\)))(?P=p)\s*)+$")


def _prefix_alone(piece: str) -> bool:
    """Prefixes and nothing after them."""
    stripped = _strip_prefixes(piece)
    return stripped is not None and not stripped[0].strip()


# Slurm's own lines ("slurmstepd: error: ...", "slurmstepd-node-1: error: ...", "srun: error: ...",
# "slurmd[node-1]: ...") are records too: a cancel line after an 80-column one is not its wrap; so is
# Megatron's " [2024-05-01 10:00:00] iteration ..." (a space before its stamp); so is the shell's report of a
# foreground job ended by a signal, alone on its line ("Terminated", "Killed", "Segmentation fault (core
# dumped)"), after two lines of one template and one length (two ranks' same warning) that look wrapped.
_RECORD_START = lazy_re.compile(
    r"^(?:\[|\d{4}[-/]\d\d[-/]\d\d|[IWEF]\d{4} |Traceback|  File |\w+(?:\.\w+)*(?:Error|Exception|Warning):|"
    r"[\w.-]+:\d+:\d+ \[\d+\]|[A-Z]+:|(?:slurmstepd|slurmd|srun)[\w\[\].-]*: | \[\d{4}-\d\d-\d\d[ T]|\s*$|"
    r"(?:Terminated|Killed|Hangup|Aborted|Segmentation fault|Bus error|Illegal instruction)"
    r"(?: \(core dumped\))?\s*$)"
)
# The first word of a filled line's continuation: a plain lower-case word ("while", "problem,"), not a
# logger's name or a stream's prefix ("distributed.worker", "stdout:").
_FILL_WORD = lazy_re.compile(r"^[a-z][a-z'-]*[,;.]?$")
_WRAP_WIDTHS = frozenset({80, 100, 120, 128, 132, 140, 150, 160, 180, 200, 220, 240, 250, 256, 300})


class Line(NamedTuple):
    """One logical line: the message text with prefixes removed, where it came from, its rank
    (global when a prefix says so), local rank, host and timestamp when the prefixes had them.
    A named tuple: a window makes thousands, and a frozen dataclass costs three times as much."""

    text: str
    no: int
    rank: Optional[int] = None
    local_rank: Optional[int] = None
    host: Optional[str] = None
    ts: Optional[tuple[str, float]] = None  # (clock kind, seconds): compare only same kinds
    # The process a prefix names: a Ray actor ("RayWorkerVllm" of "(RayWorkerVllm pid=7)") or the
    # file of a Python logger's record ("worker_base.py" of vLLM's
    # "ERROR 04-15 00:31:11 worker_base.py:574] ").
    proc: Optional[str] = None
    # The process id a Ray prefix names ("(RayWorker pid=1080651) "): Ray's report of a dead worker names it.
    pid: Optional[int] = None


# No number a log prints (ranks, pids, sequence numbers, byte counts, Xids) has this many digits;
# a longer run is noise or an attack (Python refuses int() past 4300 digits), and it becomes a
# marker here, once, so no parser downstream ever sees it.
MAX_DIGITS = 40
_LONG_NUMBER = lazy_re.compile(rf"\d{{{MAX_DIGITS + 1},}}")


# Every ASCII digit to "0", every other byte to " ": a long run of digits is then a plain
# substring search, 30 times faster than the regular expression over a window of ASCII text.
_DIGITS_AS_ZERO = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_RUN = b"0" * (MAX_DIGITS + 1)


def decode(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace")
    if len(raw) <= MAX_DIGITS or (raw.isascii() and _LONG_RUN not in raw.translate(_DIGITS_AS_ZERO)):
        return text
    return _LONG_NUMBER.sub(lambda m: f"<{len(m.group())}-digit number>", text)


def _decode_lines(raw_lines: Sequence[bytes]) -> list[str]:
    """decode() of each line, in one call for the whole window when no line holds a newline."""
    if len(raw_lines) > 1 and not any(b"\n" in raw for raw in raw_lines):
        return decode(b"\n".join(raw_lines)).split("\n")
    return [decode(raw) for raw in raw_lines]


def strip_ansi(text: str) -> str:
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "[" in text and "m" in text:
        text = _LOST_ESC.sub("", text)
    return text


def _iso_seconds(ts: str) -> Optional[float]:
    t = ts.replace("_", " ").replace(",", ".").replace("/", "-")
    if t.endswith("Z"):
        t = t[:-1] + "+00:00"
    try:
        return (
            _dt.datetime.fromisoformat(t[:26] + t[26:].lstrip("0123456789")).replace(tzinfo=None).timestamp()
        )
    except ValueError:
        return None


def _glog_seconds(m: re.Match[str]) -> Optional[float]:
    try:
        h, mi, s = m.group("t").split(":")
        base = _dt.datetime(2000, int(m.group("mo")), int(m.group("d")), int(h), int(mi))
        return base.timestamp() + float(s)
    except ValueError:
        return None


def parse_prefixes(text: str) -> tuple[str, dict[str, object]]:
    """Strip stacked prefixes from the start of a line; return the rest and what they said."""
    return _strip_prefixes(text) or (text, {})


def _strip_prefixes(text: str) -> Optional[tuple[str, dict[str, object]]]:
    """parse_prefixes, or None for a line with no prefix and no glog time (most lines: they are
    answered after one match, without the loop and its dictionary)."""
    # Chosen once: stripping prefixes only removes text, so the literals absent from the whole
    # line are absent from every rest of it.
    rx = _alternation_for(text)
    m = rx.match(text)
    line = text
    if m is None and not ("[" in text[:40] and _GLOG_TS.search(text, 0, 80)):
        return None
    info: dict[str, object] = {}
    marked = False
    pasted = 0  # characters of the paste's own prefixes that open the line (see _PASTE_KINDS)
    for i in range(8):
        if i:
            m = rx.match(text)
        if not m:
            break
        kind = m.lastgroup or ""
        if kind in _SOFT_KINDS and "soft" not in info:
            # the line as it was before it, and the prefix itself: kept only if a neighbour repeats it
            info["soft"] = (text, m.group().rstrip())
        if kind in ("table", "markdown"):
            marked = True
        if kind in _PASTE_KINDS and pasted == len(line) - len(text):
            pasted += m.end()
        for name, key in _KIND_GROUPS[kind]:
            value = m.group(name)
            if not value:
                continue
            # The innermost prefix is the most precise ([rank3]: inside a launcher's "0: ").
            if key == "rank":
                # past MAX_RANK it is no rank: analyses group and span by ranks
                info["rank"] = bounded(value)
            elif key == "lrank":
                info["local_rank"] = bounded(value)
            elif key == "host":
                info.setdefault("host", value)
            elif key == "proc":
                info.setdefault("proc", value)
            elif key == "pid":
                info.setdefault("pid", int(value))
            elif key == "ts" and "ts" not in info:
                sec = _iso_seconds(value)
                if sec is not None:
                    info["ts"] = ("iso", sec)
        text = text[m.end() :]
    if marked:  # the closing half of "**...**", "`...`" or a table row's last "|"
        text = _MARK_END.sub("", text)
    if pasted:
        info["paste"] = pasted
    if "ts" not in info and "[" in text[:40]:
        g = _GLOG_TS.search(text, 0, 80)
        if g:
            sec = _glog_seconds(g)
            if sec is not None:
                info["ts"] = ("glog", sec)
    return text, info


_REPR_OPEN = lazy_re.compile(
    r"""(.*?\b[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure)\()[bfru]?['"](?=\S)"""
)


def _unescape_json(text: str) -> list[str]:
    """A traceback inside a JSON string: split on the escaped newlines and unescape."""
    parts = _ESCAPED_NL.split(text)
    parts[0] = re.split(r'"\s*:\s*"', parts[0])[-1]
    # A wrapper exception quoting another's text, "RayTaskError: RuntimeError('Traceback ...":
    # the quoted text's first line is a line of its own, not part of the wrapper's message.
    wrapper = _REPR_OPEN.match(parts[0])
    if wrapper:
        parts[0:1] = [wrapper.group(1), parts[0][wrapper.end() :]]
    # the closing quote of a JSON value, or of a repr() inside a wrapper exception: "...')"
    parts[-1] = re.sub(r"""(?:"|')\)?\s*[,}\]]*\s*$""", "", parts[-1])
    return [
        p.replace('\\"', '"')
        .replace("\\'", "'")
        .replace("\\t", "\t")
        .replace("\\u001b", "\x1b")
        .replace("\\x1b", "\x1b")
        .replace("\\\\", "\\")
        for p in parts
    ]


def _physical_to_logical(raw: str) -> list[str]:
    # The encodings of the paste undone first (shapes.py): what follows sees the printed text.
    raw = decode_shapes(raw.rstrip("\r\n"))
    pieces: list[str]
    if "\r" in raw or "\\n" in raw or "\n" in raw:
        pieces = []
        for seg in re.split(r"\r\n?|\n", raw):
            if not seg.strip():
                continue
            # two escaped newlines, or one inside a wrapper's quote ("RuntimeError('a\\nb')")
            if "\\n" in seg and (seg.count("\\n") >= 2 or _REPR_OPEN.match(seg)):
                pieces.extend(_unescape_json(seg))
            else:
                pieces.append(seg)
    else:  # the common line: no carriage return, no escaped newline
        pieces = [raw] if raw and not raw.isspace() else []
    tb = pieces[0].find("Traceback (most recent call last):") if len(pieces) == 1 else -1
    if tb >= 0 and " File " in pieces[0][tb:]:
        pieces = [q for p in _FLAT_TB.split(pieces[0]) if p.strip() for q in _unglued(p)]
    elif len(pieces) == 1 and len(pieces[0]) >= _GLUED_MIN:
        pieces = _unglued(pieces[0])
    out: list[str] = []
    if pieces:
        pieces[-1:] = _bar_unglued(pieces[-1])
    for p in pieces:
        p = strip_ansi(p)
        # A split point is a rank prefix with a character before it: one at the start is not.
        if "]:" in p and (p.find("[rank", 1) > 0 or p.find("[default", 1) > 0):
            out.extend(_SPLIT_RANKS.split(p))
        else:
            out.append(p)
    return out or [""]


def _join_wraps(lines: list[Line], lengths: list[int], bare: list[bool], trail: list[str]) -> list[Line]:
    """Join lines a terminal hard-wrapped. A wrapped line is exactly as long as a common terminal
    width, or as long as the longest lines of the window when several share that length; its
    continuation carries no prefix of its own (no rank, host or timestamp: the terminal cut the
    text, not the logger) and does not start a new record. `lengths[k]`: the raw length of line
    k (0 when its physical line held several); `bare[k]`: it had no prefix at all (but the paste's:
    _PASTE_KINDS); `trail[k]`: the blanks stripped from its end, which go back between the halves
    ("Cuda failure " + "'out of memory'")."""
    longest = max((n for n in lengths if n >= 60), default=0)
    widths = set(_WRAP_WIDTHS)
    if longest and lengths.count(longest) >= 2:
        widths.add(longest)
    out: list[Line] = []
    i = 0

    def wrapped(k: int) -> bool:
        """Line k was cut by the terminal: it has a common width, or it is one of the window's
        longest lines and the next one goes on mid-word ("CUDA erro" + "r: unspecified ...")."""
        if lengths[k] in widths:
            return True
        nxt = lines[k + 1].text
        return (
            lengths[k] >= 100
            and lengths[k] * 10 >= longest * 9
            and bool(nxt)
            and (nxt[0].islower() or nxt[0] in ".,;:)]}")
            and lines[k].text[-1:].isalnum()
        )

    def filled(k: int) -> bool:
        """Line k was filled to 80 columns at a word's end (an editor's or a mail client's wrap, a
        logger's fill: "... -- A worker died or was killed" + "while executing a task by ..."): it ends
        in a letter, the next one begins with a plain lower-case word of a sentence that goes on (two
        words at least), and that word would not have fit on line k."""
        nxt = lines[k + 1].text
        first = nxt.split(" ", 1)[0]
        return (
            60 <= lengths[k] <= 80
            and not trail[k]
            and lines[k].text[-1:].isalpha()
            and bool(_FILL_WORD.match(first))
            and " " in nxt
            and lengths[k] + 1 + len(first) > 80
        )

    while i < len(lines):
        cur = lines[i]
        text = cur.text
        while (
            i + 1 < len(lines)
            and lines[i + 1].text
            and bare[i + 1]
            and (wrapped(i) or filled(i))
            and not _RECORD_START.match(lines[i + 1].text)
            and len(text) < 1 << 16
        ):
            text += (trail[i] or (" " if not wrapped(i) else "")) + lines[i + 1].text
            i += 1
        out.append(
            Line(text, cur.no, cur.rank, cur.local_rank, cur.host, cur.ts, cur.proc, cur.pid)
            if text is not cur.text
            else cur
        )
        i += 1
    return out


_NO_INFO: dict[str, object] = {}  # what a line without prefixes said (read, never written)
# Prefixes the paste put on every line after the terminal had cut it (a markdown quote or table, a
# log viewer's line numbers): a wrapped line's continuation carries them too, and the terminal's
# width is measured without them.
_PASTE_KINDS = frozenset({"quote", "table", "markdown", "viewer"})


# A Chinese, Japanese or Korean word glued to a Latin one ("报错ncclInternalError", "GPU0显存不足"): to
# Python's str patterns both are word characters, so every rule's \b and every "^...Error" failed on
# such a line, while the scanner's byte patterns (ASCII \b) had found it. A space between them gives the
# rules the boundary the writer's script has without one. Put in after wrapped lines are joined: the
# join measures each line as the terminal printed it.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_GLUE = lazy_re.compile(f"(?<=[{_CJK}])(?=[A-Za-z0-9_])|(?<=[A-Za-z0-9_])(?=[{_CJK}])")


def _spaced(lines: list[Line]) -> list[Line]:
    return [ln if ln.text.isascii() else ln._replace(text=_CJK_GLUE.sub(" ", ln.text)) for ln in lines]


# A bracketed date stamp cut before its closing bracket, alone on the paste's line ("[2024-09-09 19:22:1").
_CUT_STAMP = lazy_re.compile(r"^\[\d{4}-\d\d-\d\d(?:[T _][\d:.,]*)?$")


def logical_lines(raw_lines: Sequence[bytes], first_line: int) -> list[Line]:
    """Clean logical lines of a window; `no` is the physical line number each came from."""
    out: list[Line] = []
    lengths: list[int] = []
    bare: list[bool] = []
    trail: list[str] = []  # the blanks each line's text lost at its end (a wrap may cut after one)
    # out's index: (the text before the soft prefix, the prefix, whether the line is bare without it)
    soft: dict[int, tuple[str, str, bool]] = {}
    for k, raw in enumerate(_decode_lines(raw_lines)):
        no = first_line + k
        pieces = _physical_to_logical(raw)
        whole = len(pieces) == 1
        for j, piece in enumerate(pieces):
            if piece[:1] == "[" and _CUT_STAMP.match(piece):
                piece = ""  # a paste cut inside the stamp of its next record: nothing of the record is left
            text, info = _strip_prefixes(piece) or (piece, _NO_INFO)
            if info:
                out.append(
                    Line(
                        text.rstrip(),
                        no,
                        info.get("rank"),  # type: ignore[arg-type]
                        info.get("local_rank"),  # type: ignore[arg-type]
                        info.get("host"),  # type: ignore[arg-type]
                        info.get("ts"),  # type: ignore[arg-type]
                        info.get("proc"),  # type: ignore[arg-type]
                        info.get("pid"),  # type: ignore[arg-type]
                    )
                )
            else:
                out.append(Line(text.rstrip(), no))
            pasted = info.get("paste", 0) if info else 0
            assert isinstance(pasted, int)
            lengths.append(len(piece.rstrip("\r\n")) - pasted if whole else 0)
            # The first piece of a physical line that held several (escaped "\n"s split it) may still go on
            # from a line the terminal cut before it: only the pieces after it cannot.
            bare.append(
                (whole or j == 0)
                and len(text) == len(piece) - pasted
                and (not info or info.keys() == {"paste"})
            )
            trail.append(text[len(out[-1].text) :])
            if info and "soft" in info:
                before, prefix = cast(tuple[str, str], info["soft"])
                alone = (whole or j == 0) and len(before) == len(piece) - pasted
                soft[len(out) - 1] = (before, prefix, alone)
    if soft:
        _keep_repeated(soft, out, bare, trail)
    return _spaced(_join_wraps(out, lengths, bare, trail))


def _keep_repeated(
    soft: dict[int, tuple[str, str, bool]], out: list[Line], bare: list[bool], trail: list[str]
) -> None:
    """A soft prefix ("[INFO] [Driver] ", "[5]:") stays stripped only where the line before or after opens
    with the same one (a platform writes it on every line); alone it is the message's own text, put back.
    Line numbers are untouched: only the text changes."""
    for k, (before, prefix, was_bare) in soft.items():
        if any(soft.get(n, ("", ""))[1] == prefix for n in (k - 1, k + 1)):
            continue
        text = before.rstrip()
        out[k] = Line(text, out[k].no) if was_bare else out[k]._replace(text=text)
        bare[k] = was_bare
        trail[k] = before[len(text) :]


# "to rank N" names the peer (NCCL's "Proxy Call to rank 7 failed (Connect)"), not the process.
_TEXT_RANK = lazy_re.compile(r"\[(?:PG[^\]]*?)?Rank (\d+)\]|(?<!\bto )\brank[ =:](\d+)\b|\[Rank (\d+)\]")


def text_rank(text: str) -> Optional[int]:
    """A rank named inside a message, as ProcessGroupNCCL's `[Rank 3]` / `[PG 0 Rank 3]` prefixes."""
    m = _TEXT_RANK.search(text)
    if not m:
        return None
    return bounded(next(g for g in m.groups() if g is not None))
