"""The house's rules (tests/helpers/architecture.py holds the table) and the CLI paths that must stay
cheap."""

from __future__ import annotations

import ast
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import architecture as arch

ROOT = Path(__file__).resolve().parents[2]


def test_every_import_follows_an_arrow_of_the_table() -> None:
    bad = arch.arrow_violations(arch.graph(ROOT))
    assert not bad, "imports outside tests/helpers/architecture.py's ARROWS:\n" + "\n".join(bad)


def test_the_table_has_no_room_cycle() -> None:
    assert arch.cycles({a: set(b) for a, b in arch.ARROWS.items()}) == []


def test_no_room_cycle_and_no_file_cycle() -> None:
    edges = arch.graph(ROOT)
    assert arch.cycles(arch.room_edges(edges)) == []
    assert arch.cycles(edges) == []


def test_every_module_is_in_a_room() -> None:
    names = arch.modules(ROOT)
    assert all(arch.room_of(n) for n in names), [n for n in names if not arch.room_of(n)]
    # Each folder has a purpose line.
    for folder in ["model", "knowledge", "probes", "checks", "playbooks", "doctor"]:
        for init in (ROOT / folder).rglob("__init__.py"):
            doc = ast.get_docstring(ast.parse(init.read_text()))
            assert doc, f"{init.relative_to(ROOT)} has no docstring saying what the folder holds"


def test_pure_rooms_touch_nothing_of_the_system() -> None:
    bad = arch.impure_imports(ROOT)
    assert not bad, "model/knowledge/checks must be pure:\n" + "\n".join(bad)


def test_no_module_is_longer_than_the_limit() -> None:
    assert arch.long_modules(ROOT) == []


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_the_rules_are_live(tmp_path: Path) -> None:
    """Each rule reports a tree that breaks it: an upward import, a file cycle, a room cycle, an
    impure check, a long module."""
    root = _tree(
        tmp_path,
        {
            "model/__init__.py": '"""m"""\n',
            "knowledge/__init__.py": '"""k"""\n',
            "knowledge/a.py": "from pgdoctor.knowledge import b\n",
            "knowledge/b.py": "from pgdoctor.knowledge.a import x\n",
            "checks/__init__.py": '"""c"""\n',
            "checks/rule.py": "import os\nfrom pgdoctor.engine.runner import run\nfrom . import other\n",
            "checks/other.py": "x = 1\n" * (arch.MAX_LINES + 1),
            "doctor/__init__.py": '"""d"""\n',
            "doctor/engine/__init__.py": '"""e"""\n',
            "doctor/engine/runner.py": "from pgdoctor.checks import rule\n",
        },
    )
    edges = arch.graph(root)
    assert edges["pgdoctor.checks.rule"] == {"pgdoctor.engine.runner", "pgdoctor.checks.other"}
    assert arch.arrow_violations(edges) == [
        "pgdoctor.checks.rule imports pgdoctor.engine.runner: pgdoctor.checks may not import pgdoctor.engine"
    ]
    assert arch.cycles(edges) == [
        ["pgdoctor.checks.rule", "pgdoctor.engine.runner"],
        ["pgdoctor.knowledge.a", "pgdoctor.knowledge.b"],
    ]
    assert arch.cycles(arch.room_edges(edges)) == [["pgdoctor.checks", "pgdoctor.engine"]]
    assert arch.impure_imports(root) == ["pgdoctor.checks.rule imports ['os']"]
    assert arch.long_modules(root) == [f"checks/other.py: {arch.MAX_LINES + 1} lines"]
    # A lazy import inside a function is an arrow too.
    (root / "knowledge/lazy.py").write_text("def f():\n    from pgdoctor.probes import base\n")
    assert any("pgdoctor.knowledge.lazy" in v for v in arch.arrow_violations(arch.graph(root)))


def test_pgdoctor_lists_its_public_api() -> None:
    import pgdoctor

    assert set(dir(pgdoctor)) == set(pgdoctor.__all__)
    for name in ("range", "step", "instrument", "enable_trace", "merge_trace"):
        assert name in pgdoctor.__all__
        assert getattr(pgdoctor, name) is not None
    assert callable(pgdoctor.instrument) and callable(pgdoctor.instrument.parse_message)


@pytest.mark.parametrize(
    "argv",
    [["-m", "pgdoctor", "--help"], ["-m", "pgdoctor.trace", "--help"], ["-m", "pgdoctor.probes.gpu_record"]],
)
def test_documented_module_entry_points_still_run(argv: list[str]) -> None:
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=60)
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out, out
    assert "usage" in out.lower(), out


@pytest.mark.parametrize("argv", [["--help"], ["explain", "ENV501"], ["list"], ["check", "--help"]])
def test_cli_paths_that_must_not_import_torch(argv: list[str]) -> None:
    code = (
        "import sys; from pgdoctor.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH', file=sys.stderr)\n"
        "print('PYNVML' if 'pynvml' in sys.modules else 'NO-PYNVML', file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60)
    assert "NO-TORCH" in proc.stderr, proc.stderr
    assert "NO-PYNVML" in proc.stderr, proc.stderr


def test_quick_level_check_does_not_import_torch() -> None:
    code = (
        "import sys; from pgdoctor.cli import main\n"
        "try:\n    main(['check', '--level', 'quick', '--json', '--exit-zero'])\nexcept SystemExit:\n    "
        "pass\n"
        "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH', file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "NO-TORCH" in proc.stderr, proc.stderr


@pytest.mark.parametrize("fmt", ["--json", "--format=console"])
def test_diagnose_of_traces_alone_does_not_import_the_log_rules(fmt: str) -> None:
    """The rule catalogue (hundreds of compiled patterns), the scanner, causality and the check
    engine were most of `diagnose`'s start-up on an Nsight export: read only for logs and dumps."""
    export = ROOT / "tests/fixtures/nsys/healthy_1pct.sqlite"
    code = (
        "import sys; from pgdoctor.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "heavy = ('pgdoctor.diagnose.rules', 'pgdoctor.diagnose.text.scan', 'pgdoctor.diagnose.causality', "
        "'pgdoctor.engine.runner', 'pgdoctor.cli.check', 'torch', 'numpy')\n"
        "print('IMPORTED', [m for m in heavy if m in sys.modules], file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "diagnose", fmt, str(export)], capture_output=True, text=True, timeout=60
    )
    assert "IMPORTED []" in proc.stderr, proc.stderr
    assert "traces" in proc.stdout or "rank" in proc.stdout, proc.stdout


def test_every_package_of_the_tree_is_in_the_distribution() -> None:
    """A subpackage missing from pyproject's list works in an editable install and is absent from
    a real one (`pip install .`)."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {name for name, mod in arch.modules(ROOT).items() if mod.is_package}
    assert found == listed, (sorted(found - listed), sorted(listed - found))


def test_the_rule_catalogue_compiles_its_patterns_at_first_use() -> None:
    """Every `pgdoctor diagnose` imports the whole catalogue but reads a log with the rows of a
    few modules: a pattern compiled at import (`re.compile`) costs every call; `lazy_re.compile`
    costs the calls that use it (model/lazy_re.py)."""
    eager = []
    for path in sorted((ROOT / "doctor" / "diagnose" / "rules").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            f = node.func if isinstance(node, ast.Call) else None
            if isinstance(f, ast.Attribute) and f.attr == "compile" and ast.unparse(f.value) == "re":
                eager.append(f"{path.name}:{node.lineno}")
            # a match's `.re` is the compiled pattern, never the deferred one: `is` is always False
            left = node.left if isinstance(node, ast.Compare) else None
            ops = node.ops if isinstance(node, ast.Compare) else []
            if (
                isinstance(left, ast.Attribute)
                and left.attr == "re"
                and any(isinstance(op, (ast.Is, ast.IsNot)) for op in ops)
            ):
                eager.append(f"{path.name}:{node.lineno} (m.re is: use ==)")
    assert not eager, f"use lazy_re.compile, not re.compile: {eager}"


def test_a_deferred_pattern_behaves_as_the_compiled_one() -> None:
    from pgdoctor.model import lazy_re

    rx = lazy_re.compile(r"rank (\d+)", re.I)
    assert rx.pattern == r"rank (\d+)" and "_rx" not in vars(rx)  # nothing compiled yet
    assert rx.flags == re.compile(r"rank (\d+)", re.I).flags
    assert rx.search("RANK 3 failed").group(1) == "3"
    assert [m.group(1) for m in rx.finditer("rank 1, rank 2")] == ["1", "2"]
    assert rx.sub("r", "rank 7") == "r" and rx.groups == 1
    assert rx == re.compile(r"rank (\d+)", re.I) and lazy_re.is_pattern(rx)
    assert pickle.loads(pickle.dumps(rx)).search("rank 9")
