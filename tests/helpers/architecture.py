"""The house's rules, as data and as a checker that test_architecture.py runs on the tree.

A room is a folder of the data flow (docs/architecture.md draws them). ARROWS says, one row per
room, which other rooms its modules may import; imports inside a room are free, but no file
cycle is allowed anywhere, and no room cycle follows from the table. Every import counts,
also the ones inside functions (lazy imports are arrows too; they only move the cost).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from tools.package_map import source_folders

# Source folder -> import name: pyproject's package-dir mapping, read in one place.
SOURCES: dict[str, str] = source_folders()

# Room -> the rooms it may import. "pgdoctor" is the package root: its __init__ holds only the
# version and the lazy public API (strings, not imports), so importing it costs nothing;
# "pgdoctor.__main__" is `python -m pgdoctor`.
ARROWS: dict[str, frozenset[str]] = {
    "pgdoctor.model": frozenset(),
    "pgdoctor.knowledge": frozenset({"pgdoctor.model"}),
    "pgdoctor.probes": frozenset({"pgdoctor.model", "pgdoctor.knowledge"}),
    "pgdoctor.checks": frozenset({"pgdoctor.model", "pgdoctor.knowledge"}),
    "pgdoctor.playbooks": frozenset(),
    "pgdoctor.trace": frozenset(),
    "pgdoctor.engine": frozenset(
        {"pgdoctor", "pgdoctor.model", "pgdoctor.knowledge", "pgdoctor.probes", "pgdoctor.checks"}
    ),
    "pgdoctor.diagnose": frozenset({"pgdoctor.model", "pgdoctor.knowledge", "pgdoctor.checks"}),
    "pgdoctor.plan": frozenset({"pgdoctor.model", "pgdoctor.knowledge", "pgdoctor.checks"}),
    "pgdoctor.lab": frozenset(
        {
            "pgdoctor.model",
            "pgdoctor.knowledge",
            "pgdoctor.probes",
            "pgdoctor.checks",
            "pgdoctor.diagnose",
            "pgdoctor.trace",
        }
    ),
    # verify/bench scaling: the ranks are child processes (probes.processes), the scaling run is
    # timed with the instrumentation ranges (trace) and predicted with the planner's formulas (plan).
    "pgdoctor.verify": frozenset(
        {
            "pgdoctor.model",
            "pgdoctor.knowledge",
            "pgdoctor.probes",
            "pgdoctor.checks",
            "pgdoctor.plan",
            "pgdoctor.trace",
        }
    ),
    # hang/run: ranks and stacks are read by probes (ranks, stacks, live), judged by the pure
    # roll-call in diagnose.stacks, their flight recorders by diagnose.flight.
    "pgdoctor.hang": frozenset(
        {"pgdoctor.model", "pgdoctor.knowledge", "pgdoctor.probes", "pgdoctor.checks", "pgdoctor.diagnose"}
    ),
    "pgdoctor.render": frozenset({"pgdoctor", "pgdoctor.model", "pgdoctor.knowledge", "pgdoctor.playbooks"}),
    "pgdoctor.cli": frozenset(
        {
            "pgdoctor",
            "pgdoctor.model",
            "pgdoctor.knowledge",
            "pgdoctor.probes",
            "pgdoctor.checks",
            "pgdoctor.playbooks",
            "pgdoctor.engine",
            "pgdoctor.diagnose",
            "pgdoctor.plan",
            "pgdoctor.lab",
            "pgdoctor.render",
            "pgdoctor.trace",
            "pgdoctor.verify",
            "pgdoctor.hang",
        }
    ),
    "pgdoctor": frozenset(),
    "pgdoctor.__main__": frozenset({"pgdoctor.cli"}),
}

# What the pure rooms must never import, whatever the table says: they judge and know, and
# touching the system (or importing torch/pynvml) is the probes' job.
SYSTEM_MODULES = frozenset(
    {"os", "subprocess", "socket", "shutil", "torch", "pynvml", "ctypes", "multiprocessing"}
)
PURE_ROOMS = frozenset({"pgdoctor.model", "pgdoctor.knowledge", "pgdoctor.checks"})

# 600 lines in the old hand-packed style; the formatter (one argument per line once a call
# passes 110 columns) grew the same code by a quarter, so the limit grew with it.
MAX_LINES = 700


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    is_package: bool


def modules(root: Path, sources: Mapping[str, str] = SOURCES) -> dict[str, Module]:
    """Every module of the tree under its import name. A folder mapped to its own import name
    (model/ -> pgdoctor.model) wins over the same path under doctor/."""
    out: dict[str, Module] = {}
    for folder, package in sources.items():
        base = root / folder
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base).with_suffix("").parts
            is_package = rel[-1] == "__init__"
            parts = rel[:-1] if is_package else rel
            name = ".".join((package, *parts))
            out[name] = Module(name, path, is_package)
    return out


def imports_of(mod: Module, known: Mapping[str, Module]) -> set[str]:
    """The project modules `mod` imports (absolute and relative), resolved to module names:
    `from a.b import c` is a.b.c when that is a module, else a.b."""
    tree = ast.parse(mod.path.read_text(), str(mod.path))
    here = mod.name.split(".") if mod.is_package else mod.name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for a in node.names:
                sub = f"{target}.{a.name}"
                found.add(sub if sub in known else target)
    out = set()
    for name in found:
        # `import pgdoctor.a.b` also names pgdoctor.a; the nearest known module is the edge.
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name and name != mod.name:
            out.add(name)
    return out


def third_party_of(mod: Module) -> set[str]:
    tree = ast.parse(mod.path.read_text(), str(mod.path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names


def room_of(name: str, arrows: Mapping[str, frozenset[str]] = ARROWS) -> str:
    """The longest room name that is `name` or a package above it."""
    best = ""
    for room in arrows:
        if (name == room or name.startswith(room + ".")) and len(room) > len(best):
            best = room
    return best


def graph(root: Path, sources: Mapping[str, str] = SOURCES) -> dict[str, set[str]]:
    known = modules(root, sources)
    return {name: imports_of(mod, known) for name, mod in known.items()}


def arrow_violations(
    edges: Mapping[str, Iterable[str]], arrows: Mapping[str, frozenset[str]] = ARROWS
) -> list[str]:
    bad = []
    for src, targets in sorted(edges.items()):
        a = room_of(src, arrows)
        if not a:
            bad.append(f"{src}: in no room of the table")
            continue
        for dst in sorted(targets):
            b = room_of(dst, arrows)
            if b != a and b not in arrows[a]:
                bad.append(f"{src} imports {dst}: {a} may not import {b or '(no room)'}")
    return bad


def cycles(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def room_edges(
    edges: Mapping[str, Iterable[str]], arrows: Mapping[str, frozenset[str]] = ARROWS
) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {room: set() for room in arrows}
    for src, targets in edges.items():
        a = room_of(src, arrows)
        for dst in targets:
            b = room_of(dst, arrows)
            if a and b and a != b:
                out[a].add(b)
    return out


def impure_imports(root: Path, sources: Mapping[str, str] = SOURCES) -> list[str]:
    bad = []
    for name, mod in sorted(modules(root, sources).items()):
        if room_of(name) in PURE_ROOMS:
            hit = third_party_of(mod) & SYSTEM_MODULES
            if hit:
                bad.append(f"{name} imports {sorted(hit)}")
    return bad


def long_modules(root: Path, sources: Mapping[str, str] = SOURCES, limit: int = MAX_LINES) -> list[str]:
    return [
        f"{mod.path.relative_to(root)}: {n} lines"
        for mod in modules(root, sources).values()
        if (n := len(mod.path.read_text().splitlines())) > limit
    ]
