"""Reading the shell commands of Markdown docs, and parsing them with pgdoctor's own CLI parsers.

Every `pgdoctor ...` line in a fenced block of README.md and docs/*.md is a command: a block is
read as shell when its info string is empty or a shell; a line is a command when `pgdoctor`,
`python -m pgdoctor...` or a launcher (torchrun -m, srun, nsys, ...) running pgdoctor stands at a
command position after shlex splits it at `|`, `&&`, `||`, `;`. The output shown for a command
is the next fenced block, or the non-prompt lines of a `$ ` block. `parse` runs the real click
CLI's parsers (options, choices, ranges, callbacks, the --only/--skip names that `check`
resolves) without running anything. tests/cli/test_docs_commands.py runs what this extracts.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional
from unittest import mock

import click

ROOT = Path(__file__).resolve().parents[1]
DOC_FILES = ("README.md", *(f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md"))))

SHELL_LANGS = {"", "sh", "bash", "shell", "console", "shell-session", "zsh"}
# An explicitly tagged block after a command is its output even when it holds a command line
# (the nsys command that `repro --nsys` prints).
OUTPUT_LANGS = {"text", "output"}

# Blocks without an info string that are pictures, not shell: (file, text in the first line).
NOT_SHELL = {
    ("README.md", "model/       pgdoctor.model"): "the folder layout",
    ("docs/architecture.md", "live system"): "the data-flow diagram",
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
        adjacent = last_close >= 0 and all(not ln.strip() for ln in lines[last_close + 1 : i])
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        blocks.append(_Block(lang, i + 2, lines[i + 1 : j], adjacent))
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
            return (() if python else tuple(words[:i])), words[i + 1], words[i + 2 :]
        if launcher and _is_executable(words[i]):
            return tuple(words[:i]), "pgdoctor", words[i + 1 :]
    return None


def _mentions(words: list[str]) -> bool:
    return any(
        _is_executable(w) or (w == "-m" and i + 1 < len(words) and MODULE.fullmatch(words[i + 1]))
        for i, w in enumerate(words)
    )


def _expand(
    word: str, variables: dict[str, str], problems: Optional[list[str]] = None, where: str = ""
) -> str:
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
            text = text[m.end() :]
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
                commands[-1] = dataclasses.replace(
                    last, output=(*last.output, text), output_line=last.output_line or lineno
                )
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
                    problems.append(
                        f"{where}: pgdoctor in {' '.join(words)!r} at a place the extractor does not read"
                    )
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
            commands.append(
                DocCommand(
                    file=file,
                    line=lineno,
                    source=text,
                    entry=entry,
                    args=tuple(_expand(a, variables, problems, where) for a in args),
                    wrapper=wrapper,
                    env=tuple(env),
                    stdin_from=stdin_from,
                    stdout_to=stdout_to,
                    pos=pos,
                    op=op,
                )
            )
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
            f == file and snippet in first for (f, snippet) in NOT_SHELL
        )
        found = _block_commands(block, file, problems) if shell else []
        if block.adjacent and previous and (block.lang in OUTPUT_LANGS or (shell and not found)):
            lines = {c.line for c in previous}
            if len(lines) > 1:
                problems.append(
                    f"{file}:{block.start}: an output block after {len(lines)} command lines "
                    f"(lines {sorted(lines)}): show one command before its output"
                )
            else:
                i = commands.index(previous[-1])
                commands[i] = dataclasses.replace(
                    commands[i], output=tuple(block.lines), output_line=block.start
                )
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
