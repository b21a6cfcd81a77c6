"""Docs as tests: every `pgdoctor ...` line in a fenced block of README.md and docs/*.md.

Every such command is parsed by the real click CLI (options, choices, ranges, callbacks, and the
--only/--skip names that `check` resolves), so a doc cannot show an option or a value the CLI
lacks. The commands a CPU-only host runs in seconds are then run in a sandbox directory, and
where the docs show the output (the next fenced block, or the non-prompt lines of a `$ ` block)
the shown lines must appear in the real output, in order. The others are listed below with
the reason they are only parsed; the multi-process ones that do run on a CPU are marked slow.

A fenced block is read as shell when its info string is empty or a shell; a line is a command
when `pgdoctor`, `python -m pgdoctor...` or a launcher (torchrun -m, srun, nsys, ...) running
pgdoctor stands at a command position after shlex splits it at `|`, `&&`, `||`, `;`.
Absolute paths of the docs (/shared/fr/, /tmp/job) are re-rooted into the sandbox, and the
files the docs name are staged there from tests/fixtures (STAGE), so the doc lines run as
written.
"""

from __future__ import annotations

import argparse
import dataclasses
import glob
import gzip
import importlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional
from unittest import mock

import click
import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
LOGS = FIXTURES / "logs"
DOC_FILES = ("README.md", *(f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md"))))

# Every doc command here takes 0.2-2.5 s; a minute means it waits for something that is not there.
RUN_TIMEOUT_S = 60.0
SLOW_TIMEOUT_S = 240.0

SHELL_LANGS = {"", "sh", "bash", "shell", "console", "shell-session", "zsh"}
# An explicitly tagged block after a command is its output even when it holds a command line
# (the nsys command that `repro --nsys` prints).
OUTPUT_LANGS = {"text", "output"}

# Blocks without an info string that are pictures, not shell: (file, text in the first line).
NOT_SHELL = {
    ("README.md", "model/       pgdoctor.model"): "the folder layout",
    ("docs/architecture.md", "live system"): "the data-flow diagram",
}

# Commands that are only parsed, by their text (`DocCommand.text`), with the reason.
# The whole suite has 10 minutes on 2 cores: multi-process commands that another test already
# runs the same way are parsed here, not run twice.
NOT_RUN = {
    "pgdoctor bench collectives": "one rank per visible GPU: on a host without GPUs it is a usage error by design",
    "pgdoctor bench collectives --backend gloo --nproc 2 --json":
        "the default sweep, 26-40 s (tests/probes/test_collectives_procs.py runs bench --json with smaller sizes)",
    "pgdoctor repro oom --parallel ddp --nproc 2": "2 DDP ranks, 6-16 s (tests/lab/test_lab.py runs oom x ddp)",
    "pgdoctor verify pgdoctor.verify.examples:mlp --strategy pp --nproc 2":
        "5-10 s (tests/verify/test_verify.py checks pp splits, right and wrong)",
    "pgdoctor verify pgdoctor.verify.examples:mlp --strategy tp --nproc 2 --steps 2":
        "5-10 s (tests/verify/test_verify.py checks tp splits, right and wrong)",
    "pgdoctor bench scaling pgdoctor.verify.examples:small_mlp --nproc 1,2 --steps 3":
        "8-15 s (tests/verify/test_verify.py runs bench scaling and its prediction)",
    "pgdoctor repro timeout --parallel pp --nproc 3 --json":
        "3 ranks until the 5 s process-group timeout: 10-18 s on 2 cores (tests/lab/test_lab.py runs the lab)",
    "pgdoctor repro imbalance --parallel tp --nproc 4 --factor 3 --trace-dir /tmp/tp":
        "4 training ranks: 6-18 s on 2 cores (tests/lab/test_lab_imbalance.py, tests/lab/test_lab.py)",
    "pgdoctor repro imbalance --parallel pp --nproc 4 --schedule gpipe --microbatches 8":
        "4 training ranks: 6-18 s on 2 cores (tests/lab/test_lab_imbalance.py, tests/lab/test_lab.py)",
}
LAUNCHER_REASONS = {
    "torchrun": "ranks started by torchrun's agent: the docs' lines want 8 GPUs or several nodes",
    "srun": "needs a Slurm allocation",
    "mpirun": "needs an MPI launch",
    "nsys": "needs Nsight Systems",
}
# Commands that run on a CPU host but spawn torch ranks for many seconds: a slow test runs them.
SLOW_RUN = {
    "pgdoctor verify pgdoctor.verify.examples:mlp --nproc 2": "the reference and 2 gloo ranks: 5-10 s",
    "pgdoctor verify pgdoctor.verify.examples:mlp_sum_loss --nproc 2 --json": "the reference and 2 gloo ranks: 5-10 s",
}

# What each subcommand may exit with when it runs as documented here (2, a usage error, never).
EXIT_CODES = {
    ("check",): {0, 1, 3},
    ("collect",): {0},
    ("diagnose",): {1},  # every staged input below holds a failure
    ("plan",): {0, 1},
    ("topo",): {0},
    ("repro",): {1},  # the injected fault was found: a repro's expected outcome (--nsys: 0)
    ("bench", "collectives"): {0, 1, 3},
    ("bench", "scaling"): {0},  # its findings (VER201, VER202) are warnings
    ("verify",): {0, 1},  # 1: the documented example with a sum loss is not equivalent
    ("list",): {0},
    ("explain",): {0},
    ("python -m pgdoctor.trace",): {0},
}

# Entry points other than the click CLI that the docs run with `python -m`.
ARGPARSE_ENTRIES = {"pgdoctor.trace": "pgdoctor.trace.events:main"}

LAUNCHERS = {"torchrun", "srun", "mpirun", "mpiexec", "nsys", "timeout", "env", "sudo", "time", "nohup"}
SHELL_KEYWORDS = {"{", "}", "!", "then", "do", "else", "elif", "if", "while", "until", "exec"}
OPERATORS = {";", "&&", "||", "|", "|&", "&", "(", ")", "()", ";;"}
REDIRECT = re.compile(r"[<>&]*[<>][<>&|]*")
FD_MARK = re.compile(r"__fd(\d+)__")
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.S)
PYTHON = re.compile(r"(?:.*/)?python(?:\d+(?:\.\d+)*)?")
MODULE = re.compile(r"pgdoctor(?:\.[A-Za-z_]\w*)*")
VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+)|([$?#!]))")
SPECIAL_VARIABLES = {"$": "12345", "?": "0", "#": "0", "!": "12346"}
FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([^`\s]*)")
PROMPT = re.compile(r"^\s*\$ ")
LAUNCH_VARIABLE = re.compile(
    r"(RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|GROUP_RANK|ROLE_RANK|MASTER_ADDR|MASTER_PORT|"
    r"TORCHELASTIC_\w+|SLURM_\w+|OMPI_\w+|PMI_\w+|PMIX_\w+|PGDOCTOR_\w+|COLUMNS|LINES)"
)


@dataclass(frozen=True)
class DocCommand:
    file: str
    line: int
    source: str  # the doc's logical line, continuations joined
    entry: str  # "pgdoctor" (the click CLI) or the module of `python -m`
    args: tuple[str, ...]
    wrapper: tuple[str, ...] = ()  # the launcher's words before pgdoctor
    env: tuple[tuple[str, str], ...] = ()
    stdin_from: Optional[str] = None  # the command piped into it, or "< FILE"
    stdout_to: Optional[str] = None
    pos: int = 0  # among the pgdoctor commands of its line
    op: str = ""  # the shell operator before it
    output: tuple[str, ...] = ()
    output_line: int = 0

    @property
    def text(self) -> str:
        head = "pgdoctor" if self.entry == "pgdoctor" else f"python -m {self.entry}"
        return " ".join([head, *map(shlex.quote, self.args)])

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}" + (f"#{self.pos + 1}" if self.pos else "")


@dataclass
class Extraction:
    commands: list[DocCommand]
    problems: list[str]  # lines the extractor cannot read unambiguously: each fails a test


@dataclass
class _Block:
    lang: str
    start: int  # line number of its first content line
    lines: list[str]
    adjacent: bool  # only blank lines since the previous block closed


def _blocks(text: str) -> list[_Block]:
    blocks: list[_Block] = []
    lines = text.split("\n")
    i, last_close = 0, -2
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m.group(1), m.group(2).lower()
        adjacent = last_close >= 0 and all(not ln.strip() for ln in lines[last_close + 1:i])
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        blocks.append(_Block(lang, i + 2, lines[i + 1:j], adjacent))
        last_close, i = j, j + 1
    return blocks


def _prelex(line: str) -> str:
    """Drop a comment (shlex would also cut `a#b`, which bash does not) and mark the descriptor
    of `2>` (shlex would make the 2 an argument)."""
    out: list[str] = []
    quote: Optional[str] = None
    i = 0
    while i < len(line):
        c = line[i]
        at_word_start = i == 0 or line[i - 1].isspace() or line[i - 1] in ";|&("
        if quote:
            if c == quote:
                quote = None
            elif c == "\\" and quote == '"' and i + 1 < len(line):
                out.append(c)
                i += 1
                c = line[i]
        elif c in "'\"":
            quote = c
        elif c == "\\" and i + 1 < len(line):
            out.append(c)
            i += 1
            c = line[i]
        elif c == "#" and at_word_start:
            break
        elif c.isdigit() and at_word_start:
            m = re.match(r"\d+(?=[<>])", line[i:])
            if m:
                out.append(f" __fd{m.group(0)}__ ")
                i += m.end()
                continue
        out.append(c)
        i += 1
    return "".join(out)


def _tokens(line: str) -> list[str]:
    lex = shlex.shlex(_prelex(line), posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    lex.commenters = ""
    return list(lex)


def _simple_commands(tokens: list[str]) -> list[tuple[str, list[str], list[tuple[int, str, str]]]]:
    """[(operator before it, words, [(fd, redirection, target)])] of one logical line."""
    out: list[tuple[str, list[str], list[tuple[int, str, str]]]] = []
    op = ""
    words: list[str] = []
    redirs: list[tuple[int, str, str]] = []
    fd: Optional[int] = None
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        mark = FD_MARK.fullmatch(tok)
        if mark:
            fd = int(mark.group(1))
        elif tok in OPERATORS:
            out.append((op, words, redirs))
            op, words, redirs = tok, [], []
        elif REDIRECT.fullmatch(tok):
            target = tokens[i + 1] if i + 1 < len(tokens) else ""
            redirs.append((fd if fd is not None else (0 if tok.startswith("<") else 1), tok, target))
            fd = None
            i += 1
        else:
            words.append(tok)
        i += 1
    out.append((op, words, redirs))
    return [c for c in out if c[1] or c[2]]


def _is_executable(word: str) -> bool:
    return word == "pgdoctor" or word.endswith("/pgdoctor")


def _locate(words: list[str]) -> Optional[tuple[tuple[str, ...], str, list[str]]]:
    """(launcher words, entry, arguments) of a pgdoctor call, or None."""
    if _is_executable(words[0]):
        return (), "pgdoctor", words[1:]
    python = PYTHON.fullmatch(words[0]) is not None
    launcher = words[0].rsplit("/", 1)[-1] in LAUNCHERS
    if not (python or launcher):
        return None
    for i in range(1, len(words)):
        if words[i] == "-m" and i + 1 < len(words) and MODULE.fullmatch(words[i + 1]):
            return (() if python else tuple(words[:i])), words[i + 1], words[i + 2:]
        if launcher and _is_executable(words[i]):
            return tuple(words[:i]), "pgdoctor", words[i + 1:]
    return None


def _mentions(words: list[str]) -> bool:
    return any(_is_executable(w) or (w == "-m" and i + 1 < len(words) and MODULE.fullmatch(words[i + 1]))
               for i, w in enumerate(words))


def _expand(word: str, variables: dict[str, str], problems: Optional[list[str]] = None, where: str = "") -> str:
    """Variables set earlier in the block take their value. Without `problems` (a launcher's
    words, an environment value) an unknown one stays as written; in a pgdoctor argument it is
    a problem, since what pgdoctor would parse is then unknown."""
    def value(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        if name is None:
            return SPECIAL_VARIABLES[m.group(3)]
        if name in variables:
            return variables[name]
        if problems is not None:
            problems.append(f"{where}: ${name} in a pgdoctor argument has no value in its block")
        return m.group(0)

    return VARIABLE.sub(value, word)


def _logical_lines(block: _Block) -> list[tuple[int, str, bool]]:
    """(line number, text, is a command) with continuations joined; in a block with `$ `
    prompts, only prompt lines are commands and the others are output."""
    prompted = any(PROMPT.match(ln) for ln in block.lines)
    out: list[tuple[int, str, bool]] = []
    i = 0
    while i < len(block.lines):
        lineno, text = block.start + i, block.lines[i].rstrip()
        m = PROMPT.match(text)
        if prompted and not m:
            out.append((lineno, text, False))
            i += 1
            continue
        if m:
            text = text[m.end():]
        while text.endswith("\\") and i + 1 < len(block.lines):
            i += 1
            nxt = block.lines[i].rstrip()
            text = text[:-1] + " " + (re.sub(r"^\s*> ", "", nxt) if prompted else nxt.strip())
        out.append((lineno, text, True))
        i += 1
    return out


def _block_commands(block: _Block, file: str, problems: list[str]) -> list[DocCommand]:
    commands: list[DocCommand] = []
    variables: dict[str, str] = {}
    for lineno, text, is_command in _logical_lines(block):
        where = f"{file}:{lineno}"
        if not is_command:
            if commands:
                last = commands[-1]
                commands[-1] = dataclasses.replace(last, output=(*last.output, text),
                                                   output_line=last.output_line or lineno)
            continue
        try:
            parts = _simple_commands(_tokens(text))
        except ValueError as exc:
            if "pgdoctor" in text:
                problems.append(f"{where}: shlex cannot split {text!r}: {exc}")
            continue
        previous: list[str] = []
        pos = 0
        for op, words, redirs in parts:
            while words and words[0] in SHELL_KEYWORDS:
                words = words[1:]
            env: list[tuple[str, str]] = []
            while words and ASSIGNMENT.fullmatch(words[0]):
                name, _, value = words.pop(0).partition("=")
                env.append((name, _expand(value, variables)))
            if not words:
                variables.update(env)
                continue
            found = _locate(words)
            if found is None:
                if _mentions(words):
                    problems.append(f"{where}: pgdoctor in {' '.join(words)!r} at a place the extractor does not read")
                previous = words
                continue
            wrapper, entry, args = found
            stdin_from = " ".join(previous) if op in ("|", "|&") and previous else None
            stdout_to = None
            for fd, redir, target in redirs:
                if fd == 0 and redir == "<":
                    stdin_from = f"< {target}"
                elif fd == 1 and redir in (">", ">>", ">|") and not target.startswith("&"):
                    stdout_to = _expand(target, variables, problems, where)
            commands.append(DocCommand(
                file=file, line=lineno, source=text, entry=entry,
                args=tuple(_expand(a, variables, problems, where) for a in args),
                wrapper=wrapper, env=tuple(env), stdin_from=stdin_from, stdout_to=stdout_to, pos=pos, op=op,
            ))
            pos += 1
            previous = words
    return commands


def extract(text: str, file: str) -> Extraction:
    """The pgdoctor commands of one Markdown file, with the output the file shows for them."""
    commands: list[DocCommand] = []
    problems: list[str] = []
    previous: list[DocCommand] = []  # the commands of the block before, if it had any
    for block in _blocks(text):
        first = next((ln for ln in block.lines if ln.strip()), "")
        shell = block.lang in SHELL_LANGS and not any(
            f == file and snippet in first for (f, snippet) in NOT_SHELL)
        found = _block_commands(block, file, problems) if shell else []
        if block.adjacent and previous and (block.lang in OUTPUT_LANGS or (shell and not found)):
            lines = {c.line for c in previous}
            if len(lines) > 1:
                problems.append(f"{file}:{block.start}: an output block after {len(lines)} command lines "
                                f"(lines {sorted(lines)}): show one command before its output")
            else:
                i = commands.index(previous[-1])
                commands[i] = dataclasses.replace(commands[i], output=tuple(block.lines), output_line=block.start)
            previous = []
            continue
        commands.extend(found)
        previous = found
    return Extraction(commands, problems)


def extract_docs() -> Extraction:
    commands: list[DocCommand] = []
    problems: list[str] = []
    for rel in DOC_FILES:
        ex = extract((ROOT / rel).read_text(encoding="utf-8"), rel)
        commands += ex.commands
        problems += ex.problems
    return Extraction(commands, problems)


DOCS = extract_docs()
COMMANDS = DOCS.commands
BY_LINE: dict[tuple[str, int], list[DocCommand]] = {}
for _c in COMMANDS:
    BY_LINE.setdefault((_c.file, _c.line), []).append(_c)


# --- parsing with the CLI's own parsers -----------------------------------------------------


class Rejected(Exception):
    """An argparse entry point refused its arguments."""


def _unparsed(ctx: click.Context) -> list[str]:
    protected = ctx.__dict__.get("_protected_args")  # click >= 8.2; before, a public attribute
    if protected is None:
        protected = ctx.protected_args
    return [*protected, *ctx.args]


def _parse_click(args: Sequence[str]) -> tuple[tuple[str, ...], dict[str, Any]]:
    from pgdoctor.cli import cli

    cmd: click.Command = cli
    name, rest = "pgdoctor", list(args)
    parent: Optional[click.Context] = None
    path: list[str] = []
    while True:
        try:
            ctx = cmd.make_context(name, rest, parent=parent, resilient_parsing=False)
        except click.exceptions.Exit as exc:  # --help / --version: a valid line that exits at once
            if exc.exit_code:
                raise
            return tuple(path), {"eager_exit": True}
        if not isinstance(cmd, click.Group):
            return tuple(path), dict(ctx.params)
        sub_name, sub, rest = cmd.resolve_command(ctx, _unparsed(ctx))
        assert sub is not None and sub_name is not None
        path.append(sub_name)
        name, cmd, parent = sub_name, sub, ctx


def _parse_argparse(target: str, args: Sequence[str]) -> dict[str, Any]:
    module, attr = target.split(":")
    main = getattr(importlib.import_module(module), attr)

    class Parsed(Exception):
        pass

    real = argparse.ArgumentParser.parse_args

    def parse_only(self: argparse.ArgumentParser, a: Any = None, ns: Any = None) -> Any:
        raise Parsed(real(self, a, ns))

    with mock.patch.object(argparse.ArgumentParser, "parse_args", parse_only):
        try:
            main(list(args))
        except Parsed as done:
            return vars(done.args[0])
        except SystemExit as exc:
            raise Rejected(f"{target} refused {list(args)} (exit {exc.code})") from None
    raise AssertionError(f"{target} returned without parsing its arguments")


def parse(entry: str, args: Sequence[str]) -> tuple[tuple[str, ...], dict[str, Any]]:
    """(command path, parameters) as pgdoctor parses them, without running anything; raises
    what the CLI raises for an unknown command, option or value."""
    if entry == "pgdoctor":
        path, params = _parse_click(args)
        if path in (("check",), ("collect",)) and not params.get("eager_exit"):
            # --only/--skip names are resolved when the command starts, not by click: ask the same code.
            from pgdoctor.cli.check import parse_selection

            parse_selection(params.get("only"), params.get("skip"))
        return path, params
    if entry in ARGPARSE_ENTRIES:
        return (f"python -m {entry}",), _parse_argparse(ARGPARSE_ENTRIES[entry], args)
    raise AssertionError(f"python -m {entry}: not an entry point this test knows (ARGPARSE_ENTRIES)")


# --- the sandbox: doc paths re-rooted, files staged from the fixtures --------------------------


def _reroot(word: str, sandbox: Path) -> str:
    m = re.fullmatch(r"(--?[\w-]+=)?(/.*)", word)
    if not m:
        return word
    path = m.group(2)
    return (m.group(1) or "") + str(sandbox / "root" / path.lstrip("/")) + ("/" if path.endswith("/") else "")


def _place(word: str, sandbox: Path) -> Path:
    return Path(_reroot(word, sandbox)) if word.startswith("/") else sandbox / word


def _copy(*sources: Path) -> Callable[[Path], None]:
    def stage(dest: Path) -> None:
        for src in sources:
            if src.is_dir():
                shutil.copytree(src, dest, dirs_exist_ok=True)
            elif len(sources) > 1:
                dest.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dest / src.name)
            else:
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dest)
    return stage


def _untar(archive: Path) -> Callable[[Path], None]:
    def stage(dest: Path) -> None:
        dest.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive) as tf:
            for member in tf.getmembers():
                data = tf.extractfile(member)
                # the fixture archives hold the dumps side by side; anything else is not one of them
                assert data is not None and "/" not in member.name, member.name
                (dest / member.name).write_bytes(data.read())
    return stage


def _gzip_beside(src: Path) -> Callable[[Path], None]:
    """For a glob such as logs/*.log.gz: one gzipped log in the glob's directory."""
    def stage(pattern: Path) -> None:
        pattern.parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(pattern.parent / f"{src.name}.gz", "wb") as fh:
            fh.write(src.read_bytes())
    return stage


_RANK_EVENTS = """
import sys, pgdoctor
for rank in (0, 1):
    pgdoctor.enable_trace(sys.argv[1], rank)
    with pgdoctor.step(0):
        with pgdoctor.range("fwd"):
            pass
"""


def _rank_event_files(dest: Path) -> None:
    """What PGDOCTOR_TRACE_DIR leaves after a 2-rank job, written by the library itself."""
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-c", _RANK_EVENTS, str(dest)], check=True, timeout=RUN_TIMEOUT_S,
                   env=_hermetic_env())


# The files the docs' commands read, by the word the docs write.
STAGE: dict[str, Callable[[Path], None]] = {
    "slurm-4242.out": _copy(LOGS / "torch20_oom_rank3_then_timeouts.log"),
    "/shared/torchrun-logs/": _copy(LOGS / "per_rank_dir"),
    "/shared/fr/": _untar(FIXTURES / "codes" / "RUN281" / "bad.tar"),
    # a job directory: torch.profiler traces of 4 gloo ranks and a log with a gloo timeout
    "/shared/job/": _copy(FIXTURES / "traces" / "cpu_compute_rank2_4rank", LOGS / "gloo_skip_3ranks_real.log"),
    "logs/*.log.gz": _gzip_beside(LOGS / "gloo_skip_3ranks_real.log"),  # the same run as the RUN281 dumps
    "logs/": _copy(LOGS / "torchrun_real_sigkill.log", LOGS / "slurm_oom_kill.log"),
    "/tmp/job": _rank_event_files,
    "mixtral-8x7b/config.json": _copy(FIXTURES / "configs" / "mixtral-8x7b.json"),
    "t5-large/config.json": _copy(FIXTURES / "configs" / "t5-large.json"),
    "bench-scaling.json": _copy(FIXTURES / "configs" / "bench-scaling.json"),  # `bench scaling --json` output
}
# What the docs pipe into a command, by the command before the pipe.
STDIN = {"kubectl logs trainer-0": LOGS / "k8s_json_escaped_oom.log"}


def _hermetic_env() -> dict[str, str]:
    """This test's own launcher (Slurm, torchrun) must not turn a doc command into a rank of it;
    nsys is hidden so that `repro --nsys` prints its command instead of profiling."""
    env = {k: v for k, v in os.environ.items() if not LAUNCH_VARIABLE.fullmatch(k)}
    dirs = env.get("PATH", "").split(os.pathsep)
    env["PATH"] = os.pathsep.join(d for d in dirs if d and not os.path.exists(os.path.join(d, "nsys")))
    env["NO_COLOR"] = "1"
    return env


def materialize(cmd: DocCommand, sandbox: Path, stage: bool) -> list[str]:
    """The command's arguments inside the sandbox; with `stage`, the files it reads are there."""
    if stage:
        for word in cmd.args:
            if word in STAGE:
                STAGE[word](_place(word, sandbox))
    args = []
    for word in cmd.args:
        new = _reroot(word, sandbox)
        if new != word:
            Path(new.split("=", 1)[-1] if word.startswith("-") else new).parent.mkdir(parents=True, exist_ok=True)
        if stage and any(ch in new for ch in "*?["):
            # bash expands a glob that matches and leaves one that does not
            matches = sorted(glob.glob(new if os.path.isabs(new) else str(sandbox / new)))
            if matches:
                args += [os.path.relpath(m, sandbox) if not os.path.isabs(new) else m for m in matches]
                continue
        args.append(new)
    return args


# --- running ------------------------------------------------------------------------------


@dataclass
class Run:
    cmd: DocCommand
    argv: list[str]
    sandbox: Path
    path: tuple[str, ...]
    params: dict[str, Any]
    rc: int
    stdout: str
    stderr: str

    def explain(self) -> str:
        return (f"{self.cmd.id}: {self.cmd.source}\n  ran {shlex.join(self.argv)} in {self.sandbox}\n"
                f"  exit {self.rc}\n--- stdout\n{self.stdout[-3000:]}\n--- stderr\n{self.stderr[-3000:]}")


class DocRunner:
    """Runs each doc command once, in one sandbox per doc line, after the pgdoctor commands
    before it on that line (`collect -o node.json && check --from node.json`)."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.runs: dict[str, Run] = {}

    def sandbox(self, cmd: DocCommand) -> Path:
        d = self.base / f"{cmd.file.replace('/', '_')}-{cmd.line}"
        d.mkdir(parents=True, exist_ok=True)
        return d

    def run(self, cmd: DocCommand, timeout_s: float = RUN_TIMEOUT_S) -> Run:
        if cmd.id in self.runs:
            return self.runs[cmd.id]
        if cmd.pos:
            before = self.run(BY_LINE[(cmd.file, cmd.line)][cmd.pos - 1], timeout_s)
            if cmd.op == "&&" and before.rc != 0:
                pytest.fail(f"the command before it on the line failed, so the shell would stop:\n{before.explain()}")
            if cmd.op == "||" and before.rc == 0:
                pytest.skip("the command before it succeeded, so the shell does not run it")
        sandbox = self.sandbox(cmd)
        args = materialize(cmd, sandbox, stage=True)
        path, params = parse(cmd.entry, args)
        env = _hermetic_env()
        env.update({k: _reroot(v, sandbox) for k, v in cmd.env})
        stdin = b""
        if cmd.stdin_from is not None:
            assert cmd.stdin_from in STDIN, f"{cmd.id}: give STDIN a fixture for {cmd.stdin_from!r}"
            stdin = STDIN[cmd.stdin_from].read_bytes()
        argv = [sys.executable, "-m", cmd.entry, *args]
        try:
            proc = subprocess.run(argv, cwd=sandbox, env=env, input=stdin, capture_output=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{cmd.id}: {cmd.text} ran past {timeout_s:.0f} s; if it needs that long, "
                        "list it in NOT_RUN or SLOW_RUN with the reason")
        run = Run(cmd, argv, sandbox, path, params, proc.returncode,
                  proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))
        if cmd.stdout_to:
            _place(cmd.stdout_to, sandbox).write_text(run.stdout, encoding="utf-8")
        self.runs[cmd.id] = run
        return run


@pytest.fixture(scope="session")
def doc_runner(tmp_path_factory: pytest.TempPathFactory) -> DocRunner:
    return DocRunner(tmp_path_factory.mktemp("docs-commands"))


def not_run_reason(cmd: DocCommand) -> Optional[str]:
    if cmd.wrapper:
        launcher = cmd.wrapper[0].rsplit("/", 1)[-1]
        return LAUNCHER_REASONS.get(launcher, f"needs the launcher {launcher}")
    if {"RANK", "WORLD_SIZE"} & {k for k, _ in cmd.env}:
        return "one rank of a multi-node run (RANK/WORLD_SIZE): it waits for its peers on other nodes"
    return NOT_RUN.get(cmd.text) or SLOW_RUN.get(cmd.text)


# --- comparing shown output ----------------------------------------------------------------


def _norm(line: str) -> str:
    return " ".join(line.split())


def _shown_pattern(shown: str) -> re.Pattern[str]:
    """`...` in a shown line stands for text the docs leave out; the rest must be there as
    written, whitespace aside, from the line's start to its end."""
    return re.compile(".*".join(re.escape(part.strip()) for part in shown.split("...")))


def first_missing_line(shown: Sequence[str], real: str) -> Optional[str]:
    """None when every shown line is a line of `real`, in the same order; else the first one that is not."""
    lines = [_norm(ln) for ln in real.splitlines() if ln.strip()]
    cursor = 0
    for raw in shown:
        line = _norm(raw)
        if not line or line == "...":
            continue
        pattern = _shown_pattern(line)
        for j in range(cursor, len(lines)):
            if pattern.fullmatch(lines[j]):
                cursor = j + 1
                break
        else:
            return line
    return None


# --- checks of what a run wrote ------------------------------------------------------------


def _report_text(run: Run) -> tuple[str, str]:
    """(format, text of the report), wherever the command wrote it."""
    params = run.params
    if run.path == ("python -m pgdoctor.trace",):
        fmt, out = "json", params["output"] or os.path.join(params["directory"], "trace.json")
    elif run.path == ("collect",):
        fmt, out = "json", params["output"]  # the snapshot
    else:
        fmt, out = ("json" if params.get("as_json") else params.get("fmt") or "console"), params.get("output")
    if out and out != "-":
        assert run.stdout == "", f"-o {out}: nothing else goes to stdout\n{run.explain()}"
        target = Path(out) if os.path.isabs(out) else run.sandbox / out
        assert target.is_file(), f"-o {out} was not written\n{run.explain()}"
        return fmt, target.read_text(encoding="utf-8")
    return fmt, run.stdout


def _check_report(run: Run) -> None:
    fmt, text = _report_text(run)
    name = " ".join(run.path)
    if fmt == "json":
        obj = json.loads(text)  # exactly one JSON object, nothing around it
        assert isinstance(obj, dict)
        if run.path == ("check",):
            assert {"schema_version", "findings", "results", "measurements"} <= set(obj), sorted(obj)
        elif run.path == ("diagnose",):
            assert obj["findings"], obj
        elif run.path == ("verify",):
            assert {"schema_version", "findings", "verify"} <= set(obj) and obj["verify"]["world_size"], obj
        elif run.path == ("python -m pgdoctor.trace",):
            assert obj["traceEvents"], obj
        elif run.path == ("bench", "collectives"):
            values = {m["key"]: m.get("value") for m in obj["measurements"]}
            assert values["collectives.problems"] == [], values["collectives.problems"]
            if run.params["backend"] != "auto":
                assert values["collectives.backend"] == run.params["backend"]
            if run.params["nproc"]:
                assert values["collectives.world_size"] == run.params["nproc"]
    elif fmt == "junit":
        root = ET.fromstring(text)
        assert root.tag == "testsuites" and root.get("name") == f"pgdoctor {name}", (root.tag, root.attrib)
    elif fmt == "prometheus":
        for severity in ("info", "warn", "fail"):
            assert re.search(rf'^pgdoctor_findings\{{[^}}]*severity="{severity}"[^}}]*\}} \d+', text, re.M), text
        assert re.search(r"^pgdoctor_last_run_timestamp_seconds\{", text, re.M), text
    elif fmt == "html":
        assert text.lstrip().lower().startswith("<!doctype html"), text[:200]
        assert "default-src 'none'" in text and "<script" not in text.lower()
    else:
        assert text.strip(), run.explain()


def _gpu_only_claim(run: Run) -> bool:
    """docs/gpu.md: `check --only gpu` is "GPU area only; exit 3 if it cannot be measured"."""
    unmeasured = re.search(r"^\[-\] GPU health", run.stdout, re.M) is not None
    return run.rc == 3 if unmeasured else run.rc in (0, 1)


# Claims that the docs make about one command, beyond its output.
CLAIMS: dict[str, Callable[[Run], bool]] = {"pgdoctor check --only gpu": _gpu_only_claim}


def check_run(run: Run) -> None:
    cmd = run.cmd
    assert "Traceback (most recent call last)" not in run.stderr, run.explain()
    expected = {0} if run.params.get("eager_exit") or run.params.get("nsys") else EXIT_CODES.get(run.path)
    assert expected is not None, f"{cmd.id}: add the exit codes of {run.path} to EXIT_CODES"
    assert run.rc in expected, f"exit {run.rc}, expected one of {sorted(expected)}\n{run.explain()}"
    if run.params.get("nsys"):
        assert run.stdout.startswith("nsys profile "), run.explain()
    elif not run.params.get("eager_exit"):
        _check_report(run)
    if cmd.text in CLAIMS:
        assert CLAIMS[cmd.text](run), f"{cmd.id}: the doc's claim about it does not hold\n{run.explain()}"
    if cmd.output:
        missing = first_missing_line(cmd.output, run.stdout)
        assert missing is None, (f"{cmd.file}:{cmd.output_line} shows a line that `{cmd.text}` does not print "
                                 f"(or not in that order):\n  {missing}\n{run.explain()}")


# --- the tests ------------------------------------------------------------------------------


def _param(cmd: DocCommand) -> Any:
    return pytest.param(cmd, id=f"{cmd.id} {cmd.text}")


QUICK = [c for c in COMMANDS if not_run_reason(c) is None]
SLOW = [c for c in COMMANDS if c.text in SLOW_RUN and not c.wrapper]


def test_the_docs_read_cleanly() -> None:
    assert DOCS.problems == []


def test_the_extractor_finds_the_documented_commands() -> None:
    texts = {(c.file, c.text) for c in COMMANDS}
    assert ("docs/plan.md", "pgdoctor plan --params 7B --gpus-per-node 8 --nodes 1 --gpu-memory 80GiB "
            "--precision bf16-mixed --optimizer adamw --seq-len 4096 --micro-batch 1 --interconnect nvlink4") in texts
    assert ("README.md", "pgdoctor check") in texts  # after `python3 -m pip install . &&`
    assert ("README.md", "pgdoctor check --json") in texts
    (job,) = [c for c in COMMANDS if c.file == "README.md" and c.text == "pgdoctor check --json"]
    assert job.stdout_to == "preflight.json"
    (piped,) = [c for c in COMMANDS if c.stdin_from]
    assert piped.stdin_from == "kubectl logs trainer-0" and piped.args == ("diagnose", "-")
    chained = BY_LINE[("docs/gpu.md", 11)]
    assert [c.text for c in chained] == ["pgdoctor collect -o node.json", "pgdoctor check --from node.json"]
    assert chained[1].op == "&&"
    (torchrun,) = [c for c in COMMANDS if c.file == "docs/net.md" and c.wrapper[:1] == ("torchrun",)]
    assert torchrun.args == ("check", "--only", "net", "--json") and "--master-port=29500" in torchrun.wrapper
    (prom,) = [c for c in COMMANDS if c.file == "docs/output-formats.md" and "prometheus" in c.args and
               "quick" in c.args]
    assert prom.args[-1] == "/var/lib/node_exporter/textfile/pgdoctor.prom.12345"
    assert any(c.entry == "pgdoctor.trace" for c in COMMANDS)
    # every doc file with a fenced pgdoctor line is read, and nothing else is mistaken for one
    assert {c.file for c in COMMANDS} >= {"README.md", "docs/collectives.md", "docs/diagnose.md", "docs/gpu.md",
                                          "docs/lab.md", "docs/net.md", "docs/output-formats.md", "docs/plan.md"}
    assert not any(c.file == "docs/architecture.md" for c in COMMANDS)
    assert len(COMMANDS) >= 40


SAMPLE = """\
Intro text with `pgdoctor list` inline, which is prose.

```
pgdoctor plan --params 7B \\
    --gpu-memory 80GiB   # sizes#with hashes stay
dir=/var/tmp/out
MASTER_PORT=1 srun -N 2 pgdoctor check --only net -o "$dir/r.$$" 2>&1 | tee log
kubectl logs x | pgdoctor diagnose - 2> err.txt > found.json || echo none
python3 -m pgdoctor.trace /tmp/job -o /tmp/job/t.json; python -m pytest -q
pgdoctor plan --params 7B --gpu-memory 80GiB --top 3 > top.txt
```

```python
pgdoctor.range("x")
```

```console
$ pgdoctor list --area run
RUN101 fail cuda_oom ...
$ pgdoctor explain RUN101
```
"""


def test_the_extractor_reads_shell_as_the_shell_would() -> None:
    ex = extract(SAMPLE, "sample.md")
    assert ex.problems == []
    plan, check, diag, trace, top, listing, explain = ex.commands
    assert (plan.line, plan.args) == (4, ("plan", "--params", "7B", "--gpu-memory", "80GiB"))
    assert check.wrapper == ("srun", "-N", "2") and check.env == (("MASTER_PORT", "1"),)
    assert check.args == ("check", "--only", "net", "-o", "/var/tmp/out/r.12345") and check.stdout_to is None
    assert (diag.args, diag.stdin_from, diag.stdout_to) == (("diagnose", "-"), "kubectl logs x", "found.json")
    assert (trace.entry, trace.args) == ("pgdoctor.trace", ("/tmp/job", "-o", "/tmp/job/t.json"))
    assert top.args[-2:] == ("--top", "3") and top.stdout_to == "top.txt"  # `3 >` is an argument, `2>` is not
    assert listing.output == ("RUN101 fail cuda_oom ...",) and (listing.line, listing.output_line) == (18, 19)
    assert explain.args == ("explain", "RUN101") and explain.output == ()


def test_the_extractor_reports_what_it_cannot_read() -> None:
    doc = ("```\npgdoctor check --only gpu\npgdoctor check --only net\n```\n\n```\n[ok] GPU\n```\n\n"
           "```\npgdoctor check -o $OUT/r.json\nls | xargs pgdoctor diagnose\n```\n")
    problems = extract(doc, "bad.md").problems
    assert len(problems) == 3, problems
    assert "after 2 command lines" in problems[0]
    assert "$OUT" in problems[1] and "xargs" in problems[2]


def test_the_cli_rejects_what_it_does_not_have() -> None:
    with pytest.raises(click.NoSuchOption):
        parse("pgdoctor", ["check", "--no-such-option"])
    with pytest.raises(click.BadParameter):
        parse("pgdoctor", ["check", "--level", "fastest"])
    with pytest.raises(click.UsageError, match="No such command"):
        parse("pgdoctor", ["no-such-command"])
    with pytest.raises(click.NoSuchOption):
        parse("pgdoctor", ["bench", "collectives", "--nprocs", "2"])
    with pytest.raises(click.ClickException, match="unknown area or code"):
        parse("pgdoctor", ["check", "--only", "gpus"])
    with pytest.raises(Rejected):
        parse("pgdoctor.trace", ["/tmp/job", "--no-such-option"])
    with pytest.raises(AssertionError, match="not an entry point"):
        parse("pgdoctor.nosuch", [])
    # a doc line goes through the same path as the real docs
    (bad,) = extract("```\npgdoctor plan --params 7B --gpu-memory 80GiB --zero 4\n```\n", "bad.md").commands
    with pytest.raises(click.BadParameter):
        parse(bad.entry, bad.args)
    assert parse("pgdoctor", ["plan", "--params", "7B", "--gpu-memory", "80GiB", "--zero", "3"])[0] == ("plan",)


def test_the_output_comparison_can_fail() -> None:
    real = "Layouts that fit\n*    8   1   1     1  57.2  22.8\n... and 11 more that fit (--top N)\n\n1 fail.\n"
    assert first_missing_line(["Layouts that fit", "* 8 1 1 1 57.2 22.8", "... and 11 more that fit ...",
                               "1 fail."], real) is None
    assert first_missing_line(["* 8 1 1 1 57.2 22.9"], real) == "* 8 1 1 1 57.2 22.9"
    assert first_missing_line(["fail."], real) == "fail."  # a line matches whole, not a suffix of one
    assert first_missing_line(["1 fail.", "Layouts that fit"], real) == "Layouts that fit"  # order counts


def test_every_table_entry_is_used() -> None:
    texts = {c.text for c in COMMANDS}
    assert set(NOT_RUN) - texts == set() and set(SLOW_RUN) - texts == set()
    words = {w for c in COMMANDS for w in c.args} | {c.stdout_to for c in COMMANDS}
    assert set(STAGE) - words == set()
    assert set(STDIN) - {c.stdin_from for c in COMMANDS} == set()


@pytest.mark.parametrize("cmd", [_param(c) for c in COMMANDS])
def test_docs_command_parses(cmd: DocCommand, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # -o checks its directory while parsing
    path, _ = parse(cmd.entry, materialize(cmd, tmp_path, stage=False))
    assert path, cmd


@pytest.mark.parametrize("cmd", [_param(c) for c in QUICK])
def test_docs_command_runs(cmd: DocCommand, doc_runner: DocRunner) -> None:
    check_run(doc_runner.run(cmd))


@pytest.mark.slow
@pytest.mark.parametrize("cmd", [_param(c) for c in SLOW])
def test_docs_multiprocess_command_runs(cmd: DocCommand, doc_runner: DocRunner) -> None:
    check_run(doc_runner.run(cmd, SLOW_TIMEOUT_S))
