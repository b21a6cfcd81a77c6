"""A credential in a path: user:password@host right after a '/' (a log file or folder named after
its target, `logs/admin:pw@node1.log`) was printed whole in reports and error lines."""

from __future__ import annotations

import pytest

from pgdoctor.model.redact import redact_text


@pytest.mark.parametrize(
    "text",
    [
        "logs/admin:hunter2@node1.log",
        "/var/log/root:hunter2@10.0.0.5:2379.txt",
        "cannot read /x/https:/admin:hunter2@x.json: No such file",
        "//admin:hunter2@node1/path",
    ],
)
def test_a_password_after_a_slash_is_masked(text: str) -> None:
    out = redact_text(text)
    assert "hunter2" not in out and "<redacted>" in out


@pytest.mark.parametrize("text", ["torch/nn/modules/module.py:1501", "a/b:c", "git@github.com:org/repo.git"])
def test_paths_without_a_password_stay(text: str) -> None:
    assert redact_text(text) == text
