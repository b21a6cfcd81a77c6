"""Every code has a playbook with every section, every playbook names a registered code, every
code has a bad and a good fixture, and every snapshot fixture pair fires exactly as it should."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgdoctor.checks import load_all
from pgdoctor.checks.base import CODES
from pgdoctor.engine.config import load_config
from pgdoctor.engine.runner import run_checks
from pgdoctor.model import Snapshot
from pgdoctor.playbooks import SECTIONS, all_playbooks
from tests.helpers.paths import FIXTURES

load_all()
PLAYBOOKS = {pb.code: pb for pb in all_playbooks()}
CODE_DIR = FIXTURES / "codes"


@pytest.mark.parametrize("code", sorted(CODES))
def test_every_code_has_a_complete_playbook(code: str) -> None:
    pb = PLAYBOOKS.get(code)
    assert pb is not None, f"{code} has no playbook in playbooks/"
    c = CODES[code]
    assert pb.filename == f"{code}-{c.slug}.md"
    # The registry (register_code) is the one source of a code's metadata; the front matter repeats it for
    # readers of the Markdown and must say the same, title included.
    assert (pb.meta["slug"], pb.meta["title"], pb.meta["severity"], pb.meta["category"]) == (
        c.slug,
        c.title,
        c.severity.value,
        c.category,
    )
    missing = [s for s in SECTIONS if not pb.sections.get(s)]
    assert not missing, f"{pb.filename} lacks sections {missing}"
    assert "pgdoctor" in pb.sections["Verify"], "Verify must name the pgdoctor command that comes back clean"
    assert "```" in pb.sections["How to confirm"], "How to confirm must give exact commands"


def test_every_playbook_names_a_registered_code() -> None:
    orphans = sorted(set(PLAYBOOKS) - set(CODES))
    assert not orphans, f"playbooks without a registered code: {orphans}"


@pytest.mark.parametrize("code", sorted(CODES))
def test_every_code_has_bad_and_good_fixtures(code: str) -> None:
    names = (
        {p.name.split(".")[0] for p in (CODE_DIR / code).glob("*")} if (CODE_DIR / code).is_dir() else set()
    )
    assert {"bad", "good"} <= names, f"tests/fixtures/codes/{code}/ needs a bad.* and a good.* fixture"


def _snapshot_pairs() -> list[str]:
    return sorted(p.parent.name for p in CODE_DIR.glob("*/bad.json"))


def _codes_found(path: Path) -> set[str]:
    cfg = path.with_suffix(".toml")
    config = load_config(str(cfg) if cfg.exists() else None)
    findings, _ = run_checks(Snapshot.loads(path.read_text()), config)
    return {f.code for f in findings}


@pytest.mark.parametrize("code", _snapshot_pairs())
def test_snapshot_fixture_fires_on_bad_and_not_on_good(code: str) -> None:
    assert code in _codes_found(CODE_DIR / code / "bad.json")
    assert code not in _codes_found(CODE_DIR / code / "good.json")


def _verify_pairs() -> list[str]:
    return sorted(p.parent.name for p in CODE_DIR.glob("VER1*/bad.py"))


@pytest.mark.parametrize("code", _verify_pairs())
def test_verify_fixture_entries_keep_the_entry_contract(code: str) -> None:
    """VER1xx fixtures are entries (file.py:build) that tests/verify/test_verify.py runs on real ranks:
    bad must produce the code, good must be equivalent. Here: both load and honour the contract."""
    pytest.importorskip("torch")
    from pgdoctor.verify.entry import call, load

    for name in ("bad", "good"):
        entry = f"{CODE_DIR / code / name}.py:build"
        spec = call(load(entry), entry)
        assert {"model", "loss", "data"} <= set(spec)


@pytest.mark.parametrize("code", sorted(p.parent.name for p in CODE_DIR.glob("VER2*/bad.scaling.json")))
def test_scaling_fixture_fires_on_bad_and_not_on_good(code: str) -> None:
    import json

    from pgdoctor.verify.scaling import Row, analyse, findings

    def found(name: str) -> set[str]:
        doc = json.loads((CODE_DIR / code / f"{name}.scaling.json").read_text())
        rows = analyse(
            [Row(**{**r, "exposed_s": 0.0}) for r in doc["rows"]], doc["grad_bytes"], doc["strong"]
        )
        return {f.code for f in findings(rows)}

    assert code in found("bad")
    assert code not in found("good")


def test_explain_renders_every_playbook() -> None:
    import io

    from click.testing import CliRunner
    from rich.console import Console

    from pgdoctor.cli import cli
    from pgdoctor.cli.info import render_playbook

    runner = CliRunner()
    for i, (code, c) in enumerate(sorted(CODES.items())):
        pb = PLAYBOOKS[code]
        # Every playbook rendered once, asked by its code or (every other one) by its slug: the lookup is
        # one for all codes, and asking twice was a third of this test's 17 s.
        name = c.slug if i % 2 else code
        result = runner.invoke(cli, ["explain", name])
        assert result.exit_code == 0, (name, result.output)
        assert "## Fix" in result.output and c.slug in result.output
        # Not a terminal: the header line replaces the YAML front matter.
        assert result.output.startswith(f"{code} {c.slug} ") and "\n---\n" not in result.output
        raw = runner.invoke(cli, ["explain", code, "--raw"])
        assert raw.exit_code == 0 and raw.stdout_bytes == pb.source()
        out = io.StringIO()
        render_playbook(pb, Console(file=out, width=100, force_terminal=True))
        assert "Fix" in out.getvalue() and f"code: {code}" not in out.getvalue()
