"""Text a person reads: no broken sentences, no Python reprs, no figure rounded to zero, no pointer
to a playbook that does not exist."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.helpers.paths import ROOT


def _pgdoctor(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("NCCL_", "PGDOCTOR_"))}
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "pgdoctor", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=full,
        cwd=ROOT,
    )


def test_an_interface_setting_that_selects_nothing_is_one_sentence_and_its_evidence_has_no_repr() -> None:
    res = _pgdoctor("check", "--level", "quick", "--only", "knobs", env={"NCCL_SOCKET_IFNAME": "nosuchif"})
    assert res.returncode == 1, res.stderr
    assert "NCCL_SOCKET_IFNAME=nosuchif selects none of this host's interfaces (it has " in res.stdout
    assert "; it this host" not in res.stdout
    evidence = next(line for line in res.stdout.splitlines() if "net.interfaces = " in line)
    assert "{'" not in evidence and "': " not in evidence and "True" not in evidence
    assert "operstate up" in evidence or "operstate unknown" in evidence


def test_readable_values() -> None:
    from pgdoctor.knowledge.readable import readable

    assert (
        readable({"eth0": {"operstate": "up", "up": True, "mtu": 1400}})
        == "eth0 (operstate up, up yes, mtu 1400)"
    )
    assert readable(["Float"]) == "Float" and readable({"0": 2070, "1": 2069}) == "0: 2070, 1: 2069"
    assert readable(list(range(1000)), 40).endswith("…")


def test_a_slow_loopback_link_is_not_printed_as_zero() -> None:
    from pgdoctor.verify.scaling import Row, prediction_note

    base = Row(1, 0.01, 0, 0, 0, 0, 0, 0, 8)
    two = Row(2, 0.02, 0, 0, 0, 0, 0, 0, 16, predicted_step_s=0.018, busbw_gbps=0.00412, latency_us=250.0)
    (note,) = prediction_note([base, two])
    assert "0.00412 GB/s" in note and "0.00 GB/s" not in note


def test_a_plugin_code_without_a_playbook_gets_no_explain_pointer_and_list_and_explain_know_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "site_checks.py").write_text(
        textwrap.dedent("""
        from pgdoctor.checks.base import check, register_code
        SITE001 = register_code("SITE001", "site-scratch-missing", "warn", "host",
                                "The site's scratch file system is not mounted", "host")

        @check("host", [SITE001], needs=["environment"])
        def scratch(snap, config):
            return [SITE001.finding("/scratch is not mounted")]
    """)
    )
    env = {"PYTHONPATH": str(tmp_path), "PGDOCTOR_PLUGINS": "site_checks"}
    res = _pgdoctor("check", "--level", "quick", "--only", "host", env=env)
    assert "SITE001" in res.stdout and "explain SITE001" not in res.stdout, res.stdout
    assert "SITE001" in _pgdoctor("list", env=env).stdout
    explained = _pgdoctor("explain", "SITE001", env=env)
    assert (
        explained.returncode == 2
        and "site plugin" in explained.stderr
        and "Traceback" not in explained.stderr
    )
